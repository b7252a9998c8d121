//! Core's errors as the caller gets them: the user's own thrown value handed
//! back as it was, a call cut short by `destroy()` as
//! `WorkspaceNotReadyError`, else core's message.

use napi::bindgen_prelude::*;
use workspace_search_core::engine::{self, Engine, StoreFailure};

/// The status a call cut short by `destroy()` carries, read back by `js_error`.
const NOT_READY: napi::Status = napi::Status::Cancelled;

/// Whether `e` is a call cut short by `destroy()`.
pub fn is_not_ready(e: &Error) -> bool {
    e.status == NOT_READY
}

/// Marks the reason of a snapshot store's failure (read back by `snapshot_failure`).
const SNAPSHOT_MARK: &str = "\u{0}snapshot-store:";

/// Core's error as the caller gets it.
pub fn napi_error(e: engine::Error) -> Error {
    if e.is_not_ready() {
        return Error::new(NOT_READY, e.reason);
    }
    if let Some(kind) = e.store_failure() {
        let mut e = e;
        let tag = if kind == StoreFailure::Conflict { "conflict" } else { "store" };
        // What the user's store threw travels as the JavaScript value of
        // this error (its reason marked), to become the store error's cause.
        return match e.take_cause::<Error>() {
            Some(mut thrown) => {
                thrown.reason = format!("{SNAPSHOT_MARK}{tag}+cause:{}", e.reason);
                thrown
            }
            None => Error::from_reason(format!("{SNAPSHOT_MARK}{tag}:{}", e.reason)),
        };
    }
    match e.into_host::<Error>() {
        Ok(thrown) => thrown,
        Err(e) => Error::from_reason(e.reason),
    }
}

/// A snapshot store's failure marked by `napi_error`.
pub struct SnapshotFailure<'a> {
    pub conflict: bool,
    /// The error carries what the user's store threw (its cause).
    pub caused: bool,
    pub message: &'a str,
}

/// A snapshot store's failure marked by `napi_error`, if `e` is one.
pub fn snapshot_failure(e: &Error) -> Option<SnapshotFailure<'_>> {
    let rest = e.reason.strip_prefix(SNAPSHOT_MARK)?;
    let (tag, message) = rest.split_once(':')?;
    let (tag, caused) = match tag.strip_suffix("+cause") {
        Some(tag) => (tag, true),
        None => (tag, false),
    };
    Some(SnapshotFailure { conflict: tag == "conflict", caused, message })
}

/// A failure of the user's JavaScript, carried through core untouched.
pub fn host_error(e: Error) -> engine::Error {
    // (napi-rs finds no text in a thrown `null`, Symbol or BigInt: reports would say nothing.)
    let reason = match e.reason.as_str() {
        "" => "it threw a value with no message".to_string(),
        reason => reason.to_string(),
    };
    engine::Error::host(reason, e)
}

/// A caught panic as an error that says where it came from.
pub fn panic_error(panic: Box<dyn std::any::Any + Send>) -> Error {
    napi_error(engine::Error::from_panic(panic))
}

/// A call on a destroyed workspace, refused on the JavaScript thread.
pub fn check_ready(engine: &Engine) -> crate::js::Checked<()> {
    if engine.is_destroyed() {
        return Err(crate::js::Fail::NotReady {
            workspace_id: engine.id.clone(),
            status: engine.status.lock().as_str().to_string(),
        });
    }
    Ok(())
}
