//! The user's embedder, single-text or batch (a function whose `batch`
//! property is strictly `true`), as core's `EmbedCall`.

use crate::error::host_error;
use crate::js::*;
use crate::shape::{Lenient, MaybePromise, Vector, Vectors};
use napi::bindgen_prelude::*;
use napi::threadsafe_function::ThreadsafeFunction;
use napi::ValueType;
use std::sync::Arc;
use workspace_search_core::engine::host::{EmbedCall, HostFuture};
use workspace_search_core::engine::{self, Embedder};
use workspace_search_core::vectors::embedding;

type SingleFn = ThreadsafeFunction<String, MaybePromise<Lenient<Vector>>, String, Status, false, true>;
type BatchFn = ThreadsafeFunction<Vec<String>, MaybePromise<Lenient<Vectors>>, Vec<String>, Status, false, true>;

enum Call {
    Single(SingleFn),
    Batch { f: BatchFn, max_batch: usize },
}

/// The user's embedder function, as core's `EmbedCall`.
struct JsEmbedder {
    call: Call,
}

/// Core's embedder over the user's function: core groups the texts, bounds
/// the calls in flight, times them out and checks every answer.
pub fn from_js(env: &Env, f: &Unknown, concurrency: usize, timeout_ms: u64) -> Checked<Embedder> {
    let func = to_function(f, "embedder")?;
    let batch: Unknown = func.get_named_property_unchecked("batch")?;
    // SAFETY: cast only once its type was checked to be a boolean.
    let is_batch = batch.get_type()? == ValueType::Boolean && unsafe { batch.cast::<bool>()? };
    let call = if is_batch {
        let raw: Unknown = func.get_named_property_unchecked("maxBatchSize")?;
        let given = match raw.get_type()? {
            // SAFETY: a number, as matched.
            ValueType::Number => Some(unsafe { raw.cast::<f64>()? }),
            _ => None,
        };
        let max_batch = embedding::batch_size(given);
        // SAFETY: `answer_caller` returns a function (over `func`, a function
        // by `to_function`); the types name what it is called with and how
        // its answer is read (checked on read).
        let typed: Function<Vec<String>, MaybePromise<Lenient<Vectors>>> =
            unsafe { answer_caller(env, &func.to_unknown(), 2)?.cast()? };
        Call::Batch { f: typed.build_threadsafe_function().weak::<true>().build()?, max_batch }
    } else {
        // SAFETY: as above, for the single-text form.
        let typed: Function<String, MaybePromise<Lenient<Vector>>> =
            unsafe { answer_caller(env, &func.to_unknown(), 1)?.cast()? };
        Call::Single(typed.build_threadsafe_function().weak::<true>().build()?)
    };
    let call = Arc::new(JsEmbedder { call });
    Ok(Embedder::new(call, concurrency, std::time::Duration::from_millis(timeout_ms)))
}

impl EmbedCall for JsEmbedder {
    /// Texts per call: `maxBatchSize` for a batch embedder, 1 otherwise.
    fn group_size(&self) -> usize {
        match &self.call {
            Call::Batch { max_batch, .. } => *max_batch,
            Call::Single(_) => 1,
        }
    }

    /// One call of the user's embedder, its answer's shape checked (core
    /// checks the count and the numbers): what it threw comes back as it
    /// was, an answer of another shape is an `EmbedderError`.
    fn embed<'a>(&'a self, texts: Vec<String>, label: &'a str) -> HostFuture<'a, Vec<Vec<f32>>> {
        Box::pin(async move {
            let invalid = |what: &str, e: String| engine::Error::embedder(format!("{what} ({label}): {e}"));
            match &self.call {
                Call::Batch { f, .. } => {
                    let answer = async { f.call_async_catch(texts).await?.settle().await };
                    let Lenient(answer) = answer.await.map_err(host_error)?;
                    let Vectors(v) = answer.map_err(|e| invalid("Batch embedder returned an invalid value", e))?;
                    Ok(v)
                }
                Call::Single(f) => {
                    let text = texts.into_iter().next().unwrap_or_default();
                    let answer = async { f.call_async_catch(text).await?.settle().await };
                    let Lenient(answer) = answer.await.map_err(host_error)?;
                    let Vector(v) = answer.map_err(|e| invalid("Embedder returned an invalid value", e))?;
                    Ok(vec![v])
                }
            }
        })
    }
}
