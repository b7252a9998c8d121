//! A burst of file changes from the host's watcher, applied in the write
//! order: to the paths it names alone, or (a rescan) to the whole tree.
//! The host watches the folders (`ingest::watch` says which) and gathers
//! the bursts; the engine decides what each does to the index.

use super::Engine;
use crate::ingest::watch::Burst;
use std::sync::atomic::Ordering;
use std::sync::Arc;

impl Engine {
    /// Applies `burst` to the files of the paths watched (`paths`, asked
    /// once this call's turn has come; `None`: no longer watching); false
    /// when nothing was applied (destroyed meanwhile, or a step failed).
    pub async fn apply_burst(self: Arc<Self>, paths: impl FnOnce() -> Option<Vec<String>>, mut burst: Burst) -> bool {
        if self.destroyed.load(Ordering::SeqCst) {
            return false;
        }
        let ticket = self.gate.ticket();
        if self.turn(&ticket).await.is_err() {
            return false; // destroyed meanwhile
        }
        let Some(paths) = paths() else { return false };
        let rescan = burst.rescan;
        let changed = burst.take_paths();
        let me = self.clone();
        let work = async {
            if rescan {
                let walked = me.clone().walk(paths).await?;
                me.clone().reconcile(&ticket, walked, true).await.map(drop)
            } else {
                me.clone().update_within(&ticket, paths, changed).await
            }
        };
        let stop = self.until_destroyed();
        futures::pin_mut!(work, stop);
        // `stop` polled first: once destroyed, nothing more is written.
        let updated = matches!(futures::future::select(stop, work).await, futures::future::Either::Right((Ok(()), _)));
        if updated {
            self.save_soon_if_changed();
        }
        updated
    }
}
