//! Core's errors as the caller gets them: the user's own thrown value handed
//! back as it was, a call cut short by `destroy()` as
//! `WorkspaceNotReadyError`, a failure of a class of its own (the snapshot
//! store's, the embedder's, the vector store's) marked for `js_error`, else
//! core's message.

use napi::bindgen_prelude::*;
use workspace_search_core::engine::{self, Engine, Failure};

/// The status a call cut short by `destroy()` carries, read back by `js_error`.
const NOT_READY: napi::Status = napi::Status::Cancelled;

/// Whether `e` is a call cut short by `destroy()`.
pub fn is_not_ready(e: &Error) -> bool {
    e.status == NOT_READY
}

/// Marks the reason of a failure with a class of its own (read back by
/// `classed_failure`). It holds a number drawn once per process: the
/// user's own error, handed back as it was, passes the same way, and one
/// whose message began with a fixed mark became one of these classes.
fn class_mark() -> &'static str {
    static MARK: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    MARK.get_or_init(|| {
        use std::hash::{BuildHasher, Hasher};
        let mut h = std::collections::hash_map::RandomState::new().build_hasher();
        h.write_u128(std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default().as_nanos());
        format!("\u{0}workspace-search-class-{:016x}:", h.finish())
    })
}

/// The JavaScript class (lib/errors.js) of each failure core names, as the mark carries it.
fn class_of(failure: Failure) -> &'static str {
    match failure {
        Failure::SnapshotConflict => "SnapshotConflictError",
        Failure::SnapshotStore => "SnapshotStoreError",
        Failure::Embedder => "EmbedderError",
        Failure::VectorStore => "VectorStoreError",
    }
}

/// Every class a mark may name (`classed_failure` reads no other).
const CLASSES: [&str; 4] = ["SnapshotConflictError", "SnapshotStoreError", "EmbedderError", "VectorStoreError"];

/// Core's error as the caller gets it.
pub fn napi_error(e: engine::Error) -> Error {
    if e.is_not_ready() {
        return Error::new(NOT_READY, e.reason);
    }
    if let Some(failure) = e.failure() {
        let mut e = e;
        let class = class_of(failure);
        // What the user's store threw travels as the JavaScript value of
        // this error (its reason marked), to become the store error's cause.
        return match e.take_cause::<Error>() {
            Some(mut thrown) => {
                thrown.reason = format!("{}{class}+cause:{}", class_mark(), e.reason);
                thrown
            }
            None => Error::from_reason(format!("{}{class}:{}", class_mark(), e.reason)),
        };
    }
    match e.into_host::<Error>() {
        Ok(thrown) => thrown,
        Err(e) => Error::from_reason(e.reason),
    }
}

/// A failure with a class of its own, marked by `napi_error`.
pub struct ClassedFailure<'a> {
    /// Its class in lib/errors.js (`SnapshotStoreError`, `EmbedderError`, ...).
    pub class: &'a str,
    /// The error carries what the user's store threw (its cause).
    pub caused: bool,
    pub message: &'a str,
}

/// A failure with a class of its own marked by `napi_error`, if `e` is one.
pub fn classed_failure(e: &Error) -> Option<ClassedFailure<'_>> {
    let rest = e.reason.strip_prefix(class_mark())?;
    let (class, message) = rest.split_once(':')?;
    let (class, caused) = match class.strip_suffix("+cause") {
        Some(class) => (class, true),
        None => (class, false),
    };
    CLASSES.contains(&class).then_some(ClassedFailure { class, caused, message })
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
