//! A workspace's first and last steps: `init()`, `save()`, `destroy()`.

use super::error::{Error, Result};
use super::{blocking, Engine, Lifecycle, Outcome};
use crate::index::gate::Ticket;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

/// How long `destroy()` waits for a write in its turn, and for writes sent
/// to a user's store that its cut-short calls left running.
const DESTROY_WAIT: Duration = Duration::from_secs(10);

impl Engine {
    /// `init()`: the status is `initializing` from this call on; the files
    /// of `autoIndexPaths` are indexed in the write order (watched after,
    /// with `watch`), then the status is `ready` or `error`.
    pub fn init(self: &Arc<Self>) -> impl Future<Output = Result<Outcome>> + Send + 'static {
        *self.status.lock() = Lifecycle::Initializing;
        let (me, ticket, paths) = (self.clone(), self.gate.ticket(), self.auto_index_paths.clone());
        async move {
            let result = me.clone().rebuild_files(ticket, paths).await;
            if let Err(e) = &result {
                me.attach_failed(e);
            }
            {
                let mut status = me.status.lock();
                if !me.destroyed.load(Ordering::SeqCst) {
                    *status = if result.is_ok() { Lifecycle::Ready } else { Lifecycle::Error };
                }
            }
            // Ready whatever `onProgress` threw: the index is built.
            me.progress_answered(result).await
        }
    }

    /// `save()`: after the writes called before it, the snapshot is written
    /// now, then grep's index beside it. Whether the snapshot was written.
    pub async fn save_now(self: Arc<Self>, ticket: Ticket) -> Result<bool> {
        self.turn_to_save(&ticket).await?;
        let saved = self.save(true).await?;
        let me = self.clone();
        blocking(move || me.save_grep())
            .await?
            .map_err(|e| Error::from_reason(format!("persist: could not save grep's index: {e}")))?;
        Ok(saved)
    }

    /// `destroy()`: every pending call settles at once; with `persist`,
    /// what changed since the last save is saved first (grep's index too),
    /// then the directory's lock is given up and the index dropped. `None`
    /// when it is done already; else what is left, to await off this thread.
    pub fn destroy(self: &Arc<Self>) -> Option<Pin<Box<dyn Future<Output = Result<()>> + Send>>> {
        let mut destroying = self.destroying.lock();
        if let Some(mut settled) = destroying.clone().filter(|s| s.borrow().is_none()) {
            // An earlier destroy() is saving: this one settles with it
            // (clearing the index now would save it empty), its failure
            // as a message (the first call has it typed). Once that one
            // is done, a later call finds nothing left to do.
            return Some(Box::pin(async move {
                match settled.wait_for(Option::is_some).await.map(|s| s.clone()) {
                    Ok(Some(Some(reason))) => Err(Error::from_reason(reason)),
                    _ => Ok(()),
                }
            }));
        }
        let saves = self.persist.is_some() && !self.destroyed.load(Ordering::SeqCst);
        // Marked destroyed first: a watcher started again meanwhile (a link
        // entry retargeted) sees it under the watcher's lock, or is stopped here.
        self.shut_down();
        self.stop_watching();
        let seq = self.gate.ticket().seq();
        let writes = self.store_writes();
        if let Some(w) = &writes {
            w.close();
        }
        if saves {
            let (settle, settled) = tokio::sync::watch::channel(None);
            *destroying = Some(settled);
            drop(destroying);
            let me = self.clone();
            let saving = async move {
                // The gate is closed: no turn to take. A write already in its
                // turn ends first (a snapshot taken while one applies could
                // hold a vector without its document).
                me.gate.quiet(DESTROY_WAIT, true).await;
                // A write that had begun to change the index resolves: its change is saved, however long it takes.
                me.committed_applied().await;
                let saved = me.save(false).await;
                let grep = me.clone();
                // Saved beside the snapshot, then dropped; a failure to save it only costs a rebuild.
                blocking(move || {
                    let _ = grep.save_grep();
                    grep.drop_grep();
                })
                .await?;
                if let Some(writes) = &writes {
                    writes.answered(DESTROY_WAIT).await;
                }
                if let Some(p) = &me.persist {
                    p.writes_done().await;
                    p.release(writes.as_deref());
                }
                me.clone().drop_all(seq).await?;
                saved.map(drop)
            };
            return Some(Box::pin(async move {
                let result = saving.await;
                settle.send_replace(Some(result.as_ref().err().map(|e| e.reason.clone())));
                result
            }));
        }
        // Nothing reaches the store after destroy() resolves, but what a
        // write that does not answer within the wait sends.
        let under_way = writes.filter(|w| w.under_way());
        if under_way.is_none() {
            if let Some(mut index) = self.index.try_write() {
                index.clear(seq);
                drop(index);
                if self.try_drop_own_vectors() {
                    return None;
                }
                let me = self.clone();
                return Some(Box::pin(async move { blocking(move || me.drop_own_vectors()).await }));
            }
        }
        // A writer holds the index (clear it once it lets go), or writes are under way.
        let me = self.clone();
        Some(Box::pin(async move {
            if let Some(writes) = under_way {
                writes.answered(DESTROY_WAIT).await;
            }
            me.drop_all(seq).await
        }))
    }

    /// The index cleared and the embedded store's vectors dropped, off this thread.
    async fn drop_all(self: Arc<Self>, seq: u64) -> Result<()> {
        blocking(move || {
            self.index.write().clear(seq);
            self.drop_own_vectors();
        })
        .await
    }

    /// The count of writes sent to a user's store and not answered yet.
    fn store_writes(&self) -> Option<Arc<super::store::WritesInFlight>> {
        match &self.vectors.as_ref()?.store {
            super::Store::Mastra(js) => Some(js.writes.clone()),
            _ => None,
        }
    }

    /// The embedded store's vectors (and its graph's thread) go with the
    /// workspace at `destroy()`; a `vectorStore` given is the caller's.
    fn own_vectors(&self) -> Option<(&parking_lot::RwLock<crate::vectors::store::VectorStore>, &str)> {
        match self.vectors.as_ref()? {
            v if v.shared => None,
            super::VectorSide { store: super::Store::Local(s), index_name, .. } => Some((s, index_name)),
            _ => None,
        }
    }

    fn drop_own_vectors(&self) {
        if let Some((store, name)) = self.own_vectors() {
            store.write().delete_index(name);
        }
    }

    /// Without waiting (the JavaScript thread): whether it is done.
    fn try_drop_own_vectors(&self) -> bool {
        match self.own_vectors() {
            None => true,
            Some((store, name)) => store.try_write().map(|mut s| s.delete_index(name)).is_some(),
        }
    }
}
