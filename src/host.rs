//! The user's `onProgress` and `tokenize.tokenizer` as core's
//! `ProgressSink` and `TokenizeCall`.

use crate::error::host_error;
use crate::types::ProgressEvent;
use napi::threadsafe_function::{ThreadsafeFunction, ThreadsafeFunctionCallMode, UnknownReturnValue};
use std::future::Future;
use std::pin::Pin;
use workspace_search_core::engine::host::{HostFuture, Progress, ProgressSink, TokenizeCall};

pub type ProgressFn = ThreadsafeFunction<ProgressEvent, UnknownReturnValue, ProgressEvent, napi::Status, false, true>;
pub type AnsweredFn = ThreadsafeFunction<(), UnknownReturnValue, (), napi::Status, false, true>;
pub type TokenizerFn = ThreadsafeFunction<Vec<String>, Vec<Vec<String>>, Vec<String>, napi::Status, false, true>;

/// `onProgress` behind lib/runtime.js `progressCaller`: events queued to
/// the JavaScript thread, never waited for but the last of a phase; what
/// the user's function threw comes back from `answered`.
pub struct JsProgress {
    pub call: ProgressFn,
    pub answered: AnsweredFn,
}

fn event(p: Progress<'_>) -> ProgressEvent {
    ProgressEvent {
        phase: p.phase.into(),
        done: p.done as u32,
        total: p.total as u32,
        path: p.path.map(str::to_string),
    }
}

impl ProgressSink for JsProgress {
    fn emit(&self, p: Progress<'_>) {
        self.call.call(event(p), ThreadsafeFunctionCallMode::NonBlocking);
    }

    fn finish(&self, p: Progress<'_>) -> Pin<Box<dyn Future<Output = ()> + Send + '_>> {
        let ev = event(p);
        Box::pin(async move {
            let _ = self.call.call_async_catch(ev).await;
        })
    }

    fn answered(&self) -> HostFuture<'_, ()> {
        Box::pin(async move { self.answered.call_async_catch(()).await.map(drop).map_err(host_error) })
    }
}

/// A user tokenizer, batched by lib/runtime.js (`tokenizeMany`).
pub struct JsTokenize(pub TokenizerFn);

impl TokenizeCall for JsTokenize {
    fn tokenize(&self, texts: Vec<String>) -> HostFuture<'_, Vec<Vec<String>>> {
        Box::pin(async move { self.0.call_async_catch(texts).await.map_err(host_error) })
    }
}
