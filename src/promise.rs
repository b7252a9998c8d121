//! How a call of the API becomes a promise: panics caught, raced against
//! `destroy()` (which settles it with `WorkspaceNotReadyError`), and a
//! failure turned into the JavaScript error the caller gets.

use crate::error::{classed_failure, is_not_ready, napi_error, panic_error};
use crate::js::Fail;
use futures::FutureExt;
use napi::bindgen_prelude::*;
use std::panic::AssertUnwindSafe;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use workspace_search_core::engine::{Engine, Lifecycle};

/// Spawns `fut` as a promise: a panic inside becomes a rejection, and
/// `destroy()` settles it at once with `WorkspaceNotReadyError` (the work is
/// dropped: its place in the write order is released, nothing more reaches
/// the user's store).
pub fn spawn<'e, T, F>(env: &'e Env, engine: &Arc<Engine>, fut: F) -> Result<PromiseRaw<'e, T>>
where
    T: 'static + Send + ToNapiValue,
    F: 'static + Send + std::future::Future<Output = Result<T>>,
{
    spawn_write(env, engine, None, fut)
}

/// `spawn` for a write whose ticket says when it has begun to change the
/// index (`committed`): `destroy()` does not cut it short from then on.
pub fn spawn_write<'e, T, F>(
    env: &'e Env,
    engine: &Arc<Engine>,
    committed: Option<Arc<AtomicBool>>,
    fut: F,
) -> Result<PromiseRaw<'e, T>>
where
    T: 'static + Send + ToNapiValue,
    F: 'static + Send + std::future::Future<Output = Result<T>>,
{
    let id = engine.id.clone();
    env.spawn_future_with_callback(raced(engine.clone(), committed, fut), move |env, result| {
        result.map_err(|(e, status)| js_error(env, e, status, &id))
    })
}

/// A call's failure, and the status to report when `destroy()` cut it short.
pub type Cut = (napi::Error, Option<&'static str>);

/// `fut` with panics caught, raced against `destroy()`.
pub async fn raced<T>(
    engine: Arc<Engine>,
    committed: Option<Arc<AtomicBool>>,
    fut: impl std::future::Future<Output = Result<T>>,
) -> Result<std::result::Result<T, Cut>> {
    let work = std::pin::pin!(catch_panics(fut));
    let stop = std::pin::pin!(engine.until_destroyed());
    // `stop` is polled first: once destroy() has run the work is never polled
    // again, so an embedder or store answer that arrives later cannot carry
    // it on to its next store call (or to resolving); but a write that had
    // begun to change the index ends as it does (destroy()'s save keeps it).
    let result = match futures::future::select(stop, work).await {
        futures::future::Either::Left((_, work)) if committed.as_ref().is_some_and(|c| c.load(Ordering::SeqCst)) => {
            work.await
        }
        futures::future::Either::Left(_) => {
            return Ok(Err((napi_error(engine.not_ready()), Some(engine.status.lock().as_str()))))
        }
        futures::future::Either::Right((result, _)) => result,
    };
    Ok({
        // Refused its turn by the closed gate: cut short by destroy() too;
        // else refused before the first init() (a persisted workspace's
        // removal by prefix or clear()): the status it has.
        result.map_err(|e| {
            // (`destroy()` closes the gate before it marks the workspace destroyed.)
            let status = is_not_ready(&e).then(|| match engine.is_destroyed() || engine.gate.is_closed() {
                true => Lifecycle::Destroyed.as_str(),
                false => engine.status.lock().as_str(),
            });
            (e, status)
        })
    })
}

/// The JavaScript error a failed call rejects with: `WorkspaceNotReadyError`
/// for a call cut short by `destroy()`, else `failure`'s.
pub fn js_error(env: &Env, e: napi::Error, status: Option<&str>, workspace_id: &str) -> napi::Error {
    let fail = match status {
        Some(status) if is_not_ready(&e) => {
            Fail::NotReady { workspace_id: e.reason.clone(), status: status.to_string() }
        }
        _ => failure(e, workspace_id),
    };
    fail.throw(env)
}

/// A failure of a class of its own (the snapshot store's, the embedder's,
/// the vector store's) as that class, else the error as it was thrown.
pub fn failure(e: napi::Error, workspace_id: &str) -> Fail {
    match classed_failure(&e) {
        Some(failure) => Fail::Classed {
            class: failure.class.to_string(),
            message: failure.message.to_string(),
            workspace_id: workspace_id.to_string(),
            cause: None,
        }
        .caused_by(failure.caused.then_some(e)),
        None => Fail::Napi(e),
    }
}

/// `fut`, with a panic inside turned into an error.
pub async fn catch_panics<T>(fut: impl std::future::Future<Output = Result<T>>) -> Result<T> {
    match AssertUnwindSafe(fut).catch_unwind().await {
        Ok(r) => r,
        Err(panic) => Err(panic_error(panic)),
    }
}
