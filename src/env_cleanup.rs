//! Workspaces whose JavaScript environment goes away while they live (a
//! Worker terminated with a call of the user's in flight: an embedder or a
//! store write that will never answer, and whose task holds the engine). A
//! cleanup hook per environment shuts each one down as `destroy()` does, so
//! its watcher, threads and persist lock are not kept for the life of the
//! process. (At the main environment's exit too: what a save started then
//! does not finish is what a kill leaves, which snapshots are safe from.)

use napi::Env;
use std::cell::RefCell;
use std::sync::{Arc, Weak};
use workspace_search_core::engine::Engine;

/// The engines made on this thread's environment (each environment, the
/// main one or a Worker's, runs on a thread of its own), held weakly; the
/// dead are pruned as the list doubles.
#[derive(Default)]
struct Made {
    engines: Vec<Weak<Engine>>,
    prune_at: usize,
}

thread_local! {
    /// `None` until this environment's hook is added.
    static MADE: RefCell<Option<Made>> = const { RefCell::new(None) };
}

/// Has `engine` shut down when `env` is torn down.
pub fn shut_down_with(env: &Env, engine: &Arc<Engine>) -> napi::Result<()> {
    MADE.with(|made| {
        let mut made = made.borrow_mut();
        if made.is_none() {
            env.add_env_cleanup_hook((), |()| shut_down_all())?;
        }
        let made = made.get_or_insert_with(Made::default);
        if made.engines.len() >= made.prune_at {
            made.engines.retain(|e| e.strong_count() > 0);
            made.prune_at = (made.engines.len() * 2).max(64);
        }
        made.engines.push(Arc::downgrade(engine));
        Ok(())
    })
}

/// The environment is going: every engine made on it that is still alive
/// is destroyed, its rest (a save, the lock given up) run on its runtime.
fn shut_down_all() {
    let engines = MADE.with(|made| made.borrow_mut().take()).map(|m| m.engines).unwrap_or_default();
    for engine in engines.iter().filter_map(Weak::upgrade) {
        if let Some(rest) = engine.destroy() {
            engine.runtime.spawn(async move { drop(rest.await) });
        }
    }
}
