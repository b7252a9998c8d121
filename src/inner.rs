//! A `Workspace`'s state on the binding's side: core's engine (every flow
//! and decision) and what only the binding holds, the file watcher (over
//! `notify`) and grep's state. Core's errors become napi errors here, with
//! the user's own thrown value handed back as it was.

use napi::bindgen_prelude::*;
use parking_lot::Mutex;
use std::sync::Arc;
use workspace_search_core::engine::{self, Engine};

pub use engine::Lifecycle;

pub struct Inner {
    pub engine: Arc<Engine>,
    /// The running watcher (after `init()`), stopped by `destroy()`.
    pub watcher: Mutex<Option<crate::watch::Watcher>>,
    /// What `stats().watch` reports (lock order: `watcher`, then this).
    pub watch_state: Mutex<crate::watch::WatchState>,
    /// `grep()`: the trigram index of `basePath`, built by the first grep.
    pub grep: Arc<Mutex<Option<crate::grep::GrepState>>>,
    /// `stats().grep` as of the last grep or build step (a leaf lock:
    /// `stats()` never waits for a grep running).
    pub grep_stats: Arc<Mutex<Option<crate::types::GrepStats>>>,
}

impl std::ops::Deref for Inner {
    type Target = Engine;
    fn deref(&self) -> &Engine {
        &self.engine
    }
}

/// The status a call cut short by `destroy()` carries, read back by `js_error`.
const NOT_READY: napi::Status = napi::Status::Cancelled;

/// Whether `e` is a call cut short by `destroy()` (see `Inner::not_ready`).
pub fn is_not_ready(e: &Error) -> bool {
    e.status == NOT_READY
}

/// Core's error as the caller gets it: the user's own error (as thrown), a
/// call cut short by `destroy()`, or core's message.
pub fn napi_error(e: engine::Error) -> Error {
    if e.is_not_ready() {
        return Error::new(NOT_READY, e.reason);
    }
    match e.into_host::<Error>() {
        Ok(thrown) => thrown,
        Err(e) => Error::from_reason(e.reason),
    }
}

/// A failure of the user's JavaScript, carried through core untouched.
pub fn host_error(e: Error) -> engine::Error {
    engine::Error::host(e.reason.clone(), e)
}

/// Core's `blocking`, with a napi error.
pub async fn blocking<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> Result<T> {
    engine::blocking(f).await.map_err(napi_error)
}

/// A caught panic as an error that says where it came from.
pub fn panic_error(panic: Box<dyn std::any::Any + Send>) -> Error {
    napi_error(engine::Error::from_panic(panic))
}

impl Inner {
    pub fn new(engine: Engine) -> Inner {
        Inner {
            engine: Arc::new(engine),
            watcher: Mutex::new(None),
            watch_state: Mutex::default(),
            grep: Arc::default(),
            grep_stats: Arc::default(),
        }
    }

    pub fn check_ready(&self) -> crate::js::Checked<()> {
        if self.engine.is_destroyed() {
            return Err(crate::js::Fail::NotReady {
                workspace_id: self.id.clone(),
                status: self.status.lock().as_str().to_string(),
            });
        }
        Ok(())
    }

    /// The error of a call cut short by `destroy()`.
    pub fn not_ready(&self) -> Error {
        napi_error(self.engine.not_ready())
    }

    /// Marks the workspace destroyed and settles every pending call; grep's
    /// state goes with it.
    pub fn shut_down(&self) {
        self.engine.shut_down();
        // A grep still running keeps its own reference until it is done;
        // with `persist`, destroy() saves the index first, then drops it.
        if self.persist.as_ref().and_then(|p| p.dir.as_ref()).is_none() {
            if let Some(mut g) = self.grep.try_lock() {
                *g = None;
            }
        }
        *self.grep_stats.lock() = None;
    }

    /// `init()` and `rebuildSearchIndex()`: core's rebuild, then (with
    /// `watch`) the watcher on the paths indexed.
    pub async fn rebuild(
        self: Arc<Self>,
        ticket: workspace_search_core::index::gate::Ticket,
        paths: Vec<String>,
    ) -> Result<crate::types::IndexReport> {
        let persisted = self.persist.is_some();
        let mut out = self.engine.clone().rebuild(ticket, paths.clone()).await.map_err(napi_error)?;
        if persisted && self.watch {
            self.start_watching(&paths, &mut out.warnings);
        }
        Ok(crate::types::to_report(out))
    }
}
