//! `watch: true`: after `init()`, a watcher (the `notify` crate with its
//! full debouncer, without its file-id cache) reports changes under the
//! directories of `autoIndexPaths`; each burst of changes runs an
//! incremental update in the write order (stat the tree, read what
//! changed, as `init()` does, so `.gitignore`, `maxFileSize` and the binary
//! rule hold), then a save. `destroy()` drops the watcher, which stops its
//! thread and releases its handles.

use super::Inner;
use notify_debouncer_full::notify::{RecommendedWatcher, RecursiveMode};
use notify_debouncer_full::{new_debouncer_opt, DebounceEventResult, Debouncer, NoCache};
use std::sync::{Arc, Weak};
use std::time::Duration;
use workspace_search_core::ingest::watch::{concerns, watch_roots};

/// Quiet time that ends a burst of changes (an editor's save is several events).
const DEBOUNCE: Duration = Duration::from_millis(200);

pub struct Watcher {
    _debouncer: Debouncer<RecommendedWatcher, NoCache>,
}

impl Inner {
    /// Starts the watcher once; a failure to watch is a warning.
    pub(super) fn start_watching(self: &Arc<Self>, warnings: &mut Vec<String>) {
        let mut slot = self.watcher.lock();
        if slot.is_some() || self.destroyed.load(std::sync::atomic::Ordering::SeqCst) {
            return;
        }
        let Some(base) = self.base_path.clone().and_then(|b| b.canonicalize().ok()) else { return };
        let roots = watch_roots(&base, &self.auto_index_paths);
        let skip = self.persist.as_ref().and_then(|p| p.dir.clone()).and_then(|d| d.canonicalize().ok());
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<()>();
        let handler_roots = roots.clone();
        let handler = move |result: DebounceEventResult| {
            let Ok(events) = result else { return };
            let relevant =
                events.iter().flat_map(|e| e.paths.iter()).any(|p| concerns(p, &handler_roots, skip.as_deref()));
            if relevant {
                let _ = tx.send(());
            }
        };
        let config = notify_debouncer_full::notify::Config::default();
        let mut debouncer = match new_debouncer_opt(DEBOUNCE, None, handler, NoCache, config) {
            Ok(d) => d,
            Err(e) => return warnings.push(format!("watch: cannot watch files ({e})")),
        };
        for r in &roots {
            let mode = if r.recursive { RecursiveMode::Recursive } else { RecursiveMode::NonRecursive };
            if let Err(e) = debouncer.watch(&r.dir, mode) {
                warnings.push(format!("watch: cannot watch {} ({e})", r.dir.display()));
            }
        }
        let me: Weak<Inner> = Arc::downgrade(self);
        napi::bindgen_prelude::spawn(async move {
            // Ends when the watcher is dropped (its sender goes with it).
            while rx.recv().await.is_some() {
                while rx.try_recv().is_ok() {}
                let Some(inner) = me.upgrade() else { break };
                inner.refresh().await;
            }
        });
        *slot = Some(Watcher { _debouncer: debouncer });
    }

    /// One incremental update after changes, in the write order.
    async fn refresh(self: Arc<Self>) {
        if self.destroyed.load(std::sync::atomic::Ordering::SeqCst) {
            return;
        }
        let ticket = self.gate.ticket();
        ticket.turn().await;
        let paths = self.auto_index_paths.clone();
        let updated = {
            let me = self.clone();
            let ticket = &ticket;
            let work = async move { me.clone().reconcile(ticket, me.walk(paths).await?).await };
            let stop = self.until_destroyed();
            futures::pin_mut!(work, stop);
            matches!(futures::future::select(work, stop).await, futures::future::Either::Left((Ok(_), _)))
        };
        drop(ticket);
        if updated {
            self.save_soon_if_changed();
        }
    }

    /// Stops the watcher (at `destroy()`).
    pub fn stop_watching(&self) {
        let watcher = self.watcher.lock().take();
        drop(watcher);
    }
}
