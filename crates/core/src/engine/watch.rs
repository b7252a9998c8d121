//! `watch: true`: after `init()` (or `rebuildSearchIndex(paths)`), the
//! host's watcher (`host::TreeWatch`, links not followed) reports changes
//! under the directories of the paths last indexed from files. Only
//! changes count: opening or reading a file (ours or anyone's) is no event
//! here. Each burst of changes (quiet for `DEBOUNCE`) is applied in the
//! write order to the paths it names alone: the way down to each is walked
//! as `init()` walks (so `.gitignore`, `maxFileSize` and the binary rule
//! hold), every file found there is read again and compared by hash, and
//! files no longer there lose their documents. The tree is reconciled as a
//! whole only when the system says events were lost (queue overflow), when
//! a burst names too many paths, or when a watched directory comes back
//! after it was removed. What the API did (`unindex`, `clear`, `index`)
//! stays as it is until the file itself changes. A directory that cannot
//! be watched (the system's watch limit) is reported in `stats().watch`,
//! and the tree is then reconciled every `DEGRADED_RESCAN`.
//! `destroy()` drops the watcher, which stops its thread.

use super::error::Error;
use super::host::{TreeWatch, WatchRefusal, WatchSignal};
use super::watch_folders::{through_link, FolderWatches};
use super::{blocking, Engine};
use crate::index::gate::Ticket;
use crate::ingest::watch::{ancestors, covered_roots, watch_roots, Burst, WatchRoot, MAX_BURST_PATHS};
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::sync::{Arc, Weak};
use std::time::{Duration, Instant};
use tokio::sync::mpsc::{unbounded_channel, UnboundedReceiver};

/// Quiet time that ends a burst of changes (an editor's save is several events).
const DEBOUNCE: Duration = Duration::from_millis(200);
/// A burst that never goes quiet is applied after this long anyway.
const MAX_BURST: Duration = Duration::from_secs(2);
/// How often a removed watched directory is looked for again.
const LOST_POLL: Duration = Duration::from_millis(500);
/// How often the tree is reconciled while some directory cannot be watched.
const DEGRADED_RESCAN: Duration = Duration::from_secs(10);
/// The longest wait before an update the snapshot store failed is tried again.
const MAX_RETRY: Duration = Duration::from_secs(300);
/// How long after a reconcile of the tree an overflow is taken for its echo.
const OWN_WALK_ECHO: Duration = Duration::from_secs(1);
/// Warnings kept in `stats().watch.warnings` (the newest).
const MAX_WARNINGS: usize = 20;

/// The running watcher: dropping it stops the host's watch, which ends the task.
pub struct Watcher {
    watcher: Box<dyn TreeWatch>,
    /// The paths (`autoIndexPaths`, or the last `rebuildSearchIndex`'s) it watches.
    paths: Vec<String>,
    /// The folders watched for them (`watch_roots`), as they were at its start.
    roots: Vec<WatchRoot>,
    /// The system refused a watcher (`Unwatched`): the next `init()` tries again.
    refused: bool,
    /// The folders of the recursive roots, each watched alone (`None`: the
    /// host watches a root recursively).
    folders: Option<FolderWatches>,
    /// The entries' folders its roots cover (`covered_roots`), as they were
    /// at its start: one that moves (a link retargeted) starts it again.
    covered: Vec<PathBuf>,
}

impl Watcher {
    /// Watches a root: recursively, or each folder below it the walk
    /// enters. A root reached through a link is not watched one by one:
    /// its folders are those of the root where it leads (`watch_roots`
    /// gives both), and a second watch of one folder is the same watch to
    /// the system, which unwatching either would end for both.
    /// Whether each root is watched (after `FolderWatches::sync`): a root
    /// walked is one of its folders; a root watched alone (a file entry's
    /// folder), refused when the watch degraded, is tried again.
    fn every_root_watched(&mut self) -> bool {
        let Some(folders) = self.folders.as_ref() else { return false };
        let walked = |r: &WatchRoot| through_link(&r.dir) || folders.holds(&r.dir);
        let (walked_roots, alone): (Vec<&WatchRoot>, Vec<&WatchRoot>) = self.roots.iter().partition(|r| r.recursive);
        // The folders above the roots too (a root renamed away with one, a
        // `.gitignore` there), refused with the rest: tried again.
        let above = ancestors(folders.base(), &self.roots);
        // (Above them, only the limit counts: one refused for good, a folder
        // this process may not read, would keep the timer going for ever.)
        walked_roots.into_iter().all(walked)
            && alone.into_iter().all(|r| self.watcher.watch(&r.dir, false).is_ok())
            && above.iter().all(|dir| self.watcher.watch(dir, false).map_or_else(|e| !e.limit, |()| true))
    }

    fn watch_root(&mut self, root: &WatchRoot) -> Result<(), WatchRefusal> {
        match self.folders.as_mut().filter(|_| root.recursive) {
            Some(_) if through_link(&root.dir) => Ok(()),
            Some(folders) => folders.watch_tree(&mut *self.watcher, &root.dir),
            None => self.watcher.watch(&root.dir, root.recursive),
        }
    }
}

/// What `stats().watch` reports.
#[derive(Debug, Default, Clone)]
pub struct WatchState {
    /// Every watched directory is watched (none lost, no watch refused).
    pub live: bool,
    /// Bursts applied to the paths they named.
    pub updates: u64,
    /// Reconciles of the whole tree.
    pub rescans: u64,
    pub warnings: Vec<String>,
    /// Watched directories removed, looked for every `LOST_POLL`.
    lost: Vec<PathBuf>,
    /// A watch was refused: the tree is reconciled every `DEGRADED_RESCAN`.
    degraded: bool,
    /// A burst could not be applied (a snapshot store that failed to give
    /// the postings its write needs): when the tree is reconciled, so that
    /// what it named is not lost, and the wait before that (doubling from
    /// `DEGRADED_RESCAN` up to `MAX_RETRY` while the store keeps failing).
    retry_at: Option<Instant>,
    retry_delay: Duration,
    /// Until when a queue overflow is our own reconcile's doing: its walk
    /// opens every watched folder, two events each, which overflows the
    /// system's queue on a large tree (a reconcile for it would loop).
    own_walk_until: Option<Instant>,
    /// An overflow came while our reconcile ran or just after it: ours, or
    /// another's (a checkout still writing), whose lost events nothing else
    /// would bring back. The tree is reconciled once more when the window
    /// ends; that reconcile's own window takes overflows for its echo
    /// alone (`follow_up`), so the two never loop.
    overflow_in_echo: bool,
    /// The next reconcile is such a second one.
    next_is_follow_up: bool,
    /// The last reconcile was such a second one.
    follow_up: bool,
}

impl WatchState {
    fn warn(&mut self, message: String) {
        if self.warnings.len() == MAX_WARNINGS {
            self.warnings.remove(0);
        }
        self.warnings.push(message);
    }

    /// An update failed in the snapshot store, or left a document without
    /// its vector: the tree is reconciled later (and what is not embedded
    /// embedded), each time it fails twice as late.
    fn retry_later(&mut self, what: &str) {
        self.retry_delay = (self.retry_delay * 2).clamp(DEGRADED_RESCAN, MAX_RETRY);
        self.retry_at = Some(Instant::now() + self.retry_delay);
        let secs = self.retry_delay.as_secs();
        self.warn(format!("watch: {what}; the folder is reconciled in {secs} s"));
    }

    fn settle_live(&mut self) {
        self.live = self.lost.is_empty() && !self.degraded;
    }

    /// A watch of `dir` that failed: the system's limit makes the watch
    /// degraded (reconciled on a timer; trying again would only walk the
    /// tree again for nothing); a missing folder is looked for.
    /// A folder that is there but refused (a subfolder the process may not
    /// read stops the system's recursive watch) is degraded too: looking
    /// for it walked the whole tree every `LOST_POLL`, for ever.
    fn refused(&mut self, dir: &Path, e: &WatchRefusal) {
        if degrades(dir, e) {
            self.degraded = true;
        } else if !self.lost.iter().any(|d| d == dir) {
            self.lost.push(dir.to_path_buf());
        }
    }
}

impl Engine {
    /// Applies `burst` to the files of the paths watched (`paths`, asked
    /// once this call's turn has come; `None`: no longer watching), and
    /// counts it in `stats().watch` before the turn ends.
    async fn apply_burst(self: Arc<Self>, paths: impl FnOnce() -> Option<Vec<String>>, mut burst: Burst) {
        if self.destroyed.load(Ordering::SeqCst) {
            return;
        }
        let ticket = self.gate.ticket();
        if self.turn(&ticket).await.is_err() {
            return; // destroyed meanwhile
        }
        let Some(paths) = paths() else { return };
        let rescan = burst.rescan;
        let changed = burst.take_paths();
        let Some(failed) = self.clone().update_until_destroyed(&ticket, paths, rescan, changed).await else {
            return;
        };
        // A document left without its vector (the embedder failed) is
        // embedded again later; a file that cannot be read waits for its
        // next event.
        let unembedded = self.without_vectors(&failed).await;
        self.count_burst(rescan, unembedded);
        drop(ticket);
        self.save_soon_if_changed();
    }

    /// The burst's update (a rescan of `paths`, or the `changed` paths
    /// within them), unless destroyed first: the files that failed, or
    /// `None` when it did not complete (a store's failure is noted for a
    /// retry).
    async fn update_until_destroyed(
        self: Arc<Self>,
        ticket: &Ticket,
        paths: Vec<String>,
        rescan: bool,
        changed: Vec<PathBuf>,
    ) -> Option<Vec<crate::ingest::Failed>> {
        let me = self.clone();
        let work = async {
            if rescan {
                let walked = me.clone().walk(paths).await?;
                let (mut report, ..) = me.clone().reconcile(ticket, walked, true).await?;
                // Documents an earlier update could not embed (their
                // files' hashes are known: the reconcile passes them by).
                me.embed_unwritten(&mut report.failed).await?;
                Ok(report.failed)
            } else {
                me.clone().update_within(ticket, paths, changed).await
            }
        };
        let stop = self.until_destroyed();
        futures::pin_mut!(work, stop);
        // `stop` polled first: once destroyed, nothing more is written.
        match futures::future::select(stop, work).await {
            futures::future::Either::Right((Ok(failed), _)) => Some(failed),
            futures::future::Either::Right((Err(e), _)) => {
                self.note_update_failure(&e);
                None
            }
            futures::future::Either::Left(_) => None,
        }
    }

    /// A store's failure of an update: the store may be back later, so the
    /// tree is reconciled then (not a part it holds broken: that takes
    /// `rebuildSearchIndex()`).
    fn note_update_failure(&self, e: &Error) {
        let broken = self.remote().is_some_and(|r| r.parts_broken());
        if e.store_failure().is_none() || broken {
            return;
        }
        let mut state = self.watch_state.lock();
        let why = format!("an update was not applied ({})", e.reason);
        // (A degraded watch's own rescans try again: a retry would hold them up.)
        if state.degraded {
            state.warn(format!("watch: {why}; tried again at the next rescan"));
        } else {
            state.retry_later(&why);
        }
    }

    /// Counts a burst applied in `stats().watch`, and plans a retry for
    /// the documents it left without a vector (`unembedded`: why).
    fn count_burst(&self, rescan: bool, unembedded: Option<String>) {
        let mut state = self.watch_state.lock();
        if rescan {
            // What a failed update named is in the tree reconciled
            // (unless texts are still not embedded: tried again later).
            state.retry_at = None;
            if unembedded.is_none() {
                state.retry_delay = Duration::ZERO;
            }
            state.rescans += 1;
            state.own_walk_until = Some(Instant::now() + OWN_WALK_ECHO);
            state.follow_up = std::mem::take(&mut state.next_is_follow_up);
        } else {
            state.updates += 1;
        }
        // (A degraded watch's own rescans, every `DEGRADED_RESCAN`, try
        // again: a retry would hold them up.)
        match unembedded {
            Some(why) if state.degraded => state.warn(format!("watch: {why}; tried again at the next rescan")),
            Some(why) => state.retry_later(&why),
            None => {}
        }
    }
}

impl Engine {
    /// Why some of `failed` left documents in the index without a vector
    /// (an embedder that failed), if any did.
    async fn without_vectors(self: &Arc<Self>, failed: &[crate::ingest::Failed]) -> Option<String> {
        if failed.is_empty() || self.vectors.is_none() {
            return None;
        }
        // Vectors a removal could not delete are deleted by the retry too.
        let undeleted = failed.iter().find(|f| crate::vectors::plan::is_undeleted(&f.error)).cloned();
        let (me, failed) = (self.clone(), failed.to_vec());
        let first = self.read_index(move |index| {
            // Lock order (docs/architecture.md): the index, then the ledger.
            let ledger = me.vectors.as_ref().expect("vectors").ledger.lock();
            let unwritten = |id: &String| index.get(id).is_some() && !ledger.has_text(id);
            failed
                .into_iter()
                .find(|f| std::iter::once(f.path.clone()).chain(index.chunk_ids_of(&f.path)).any(|id| unwritten(&id)))
        });
        match first.await.ok()? {
            Some(f) => Some(format!("{} was not embedded ({})", f.path, f.error)),
            None => undeleted.map(|f| format!("{}: {}", f.path, f.error)),
        }
    }

    /// `start_watching` on a blocking thread (it walks the folders to
    /// watch, a while in a large tree); its warnings.
    pub(super) async fn start_watching_off_runtime(self: &Arc<Self>, paths: Vec<String>) -> Result<Vec<String>, Error> {
        let me = self.clone();
        blocking(move || {
            let mut warnings = Vec::new();
            me.start_watching(&paths, &mut warnings);
            warnings
        })
        .await
    }

    /// Watches `paths` (starting the watcher, or replacing one that watches
    /// other paths); a failure to watch is a warning.
    fn start_watching(self: &Arc<Self>, paths: &[String], warnings: &mut Vec<String>) {
        let mut slot = self.watcher.lock();
        if slot.as_ref().is_some_and(|w| w.paths == paths && !w.refused) || self.destroyed.load(Ordering::SeqCst) {
            return;
        }
        *slot = None; // the old watcher's task ends with it
        let Some(lexical) = self.base_path.clone() else {
            return warnings
                .push("watch: no folder to watch (no LocalFilesystem basePath); files are not followed".into());
        };
        let base = match lexical.canonicalize() {
            Ok(base) => base,
            Err(e) => {
                let message = format!("watch: basePath {} cannot be watched ({e}); files are not followed until init() or rebuildSearchIndex() runs again", lexical.display());
                return warnings.push(message);
            }
        };
        let roots = watch_roots(&base, &lexical, paths);
        let skip = self.persist.as_ref().and_then(|p| p.dir.as_deref()).and_then(canonical_to_be);
        let (tx, rx) = unbounded_channel();
        let mut state = WatchState::default();
        let mut refused = false;
        let covered = covered_roots(&base, &lexical, paths, &roots);
        let folders = self.tree_watches.per_folder().then(|| {
            let exclude = skip.clone().filter(|s| s.starts_with(&base));
            FolderWatches::new(base.clone(), exclude, self.respect_gitignore, covered.clone())
        });
        let watcher = match self.tree_watches.start(roots.clone(), base.clone(), skip, tx.clone()) {
            Ok(w) => w,
            Err(e) => {
                // No watcher at all (the system's limit of inotify instances,
                // many workspaces in one process): the degraded mode's reconcile
                // every `DEGRADED_RESCAN` follows the files instead.
                let message = format!("watch: the system refused a watcher ({e}: its limit of watchers, fs.inotify.max_user_instances on Linux, or of open files); the folder is reconciled every {} s", DEGRADED_RESCAN.as_secs());
                state.warn(message.clone());
                warnings.push(message);
                (state.degraded, refused) = (true, true);
                Box::new(Unwatched { _signals: tx })
            }
        };
        // (Nothing is watched without a watcher: no folders to walk.)
        let folders = folders.filter(|_| !refused);
        let mut w = Watcher { watcher, paths: paths.to_vec(), roots: roots.clone(), refused, folders, covered };
        for dir in ancestors(&base, &roots) {
            // Best effort: a folder above a root is watched alone, for its removal or rename.
            let _ = w.watcher.watch(&dir, false);
        }
        for r in &roots {
            if let Err(e) = w.watch_root(r) {
                let message = format!("watch: cannot watch {} ({})", r.dir.display(), e.message);
                state.warn(message.clone());
                warnings.push(message);
                state.refused(&r.dir, &e);
            }
        }
        let folders = w.folders.as_mut().filter(|_| !state.degraded);
        if let Some(e) = folders.and_then(|f| f.watch_covered(&mut *w.watcher, &roots).err()) {
            let message = format!("watch: cannot watch the folders of {paths:?} ({})", e.message);
            state.warn(message.clone());
            warnings.push(message);
            state.refused(&base, &e);
        }
        state.settle_live();
        *self.watch_state.lock() = state;
        if self.destroyed.load(Ordering::SeqCst) {
            return; // destroyed during the walk of the folders (`stop_watching`)
        }
        let me: Weak<Engine> = Arc::downgrade(self);
        self.runtime.spawn(watch_loop(me, rx, roots));
        *slot = Some(w);
    }

    /// After a burst: an entry that is a link to a folder inside `basePath`
    /// is watched where it leads (a watch does not follow links), so a link
    /// retargeted (`ln -s v2 docs.tmp && mv -T docs.tmp docs`), or an entry
    /// that came as a link, moves the folders to watch. The watcher is then
    /// started again over them (its counts kept) and the tree reconciled;
    /// true when it was (the caller's task, the old watcher's, ends).
    async fn follow_moved_roots(self: &Arc<Self>) -> bool {
        let Some(lexical) = self.base_path.clone() else { return false };
        let Ok(base) = lexical.canonicalize() else { return false };
        // In the write order: an init() or rebuildSearchIndex(paths) that
        // starts its own watcher is not undone by this one.
        let ticket = self.gate.ticket();
        if ticket.turn_without_writes().await.is_err() {
            return false;
        }
        let Some((paths, roots, covered)) =
            self.watcher.lock().as_ref().map(|w| (w.paths.clone(), w.roots.clone(), w.covered.clone()))
        else {
            return false;
        };
        // Only a folder to watch that was not, and is there (a file entry
        // removed changes its root too, to the missing file: the watcher
        // already follows that, and its folder when it comes back); also
        // where a root covers it (`['.', 'vendor-link']` retargeted into a
        // folder `.gitignore` leaves out: it was never watched there).
        let now = watch_roots(&base, &lexical, &paths);
        let covered_now = covered_roots(&base, &lexical, &paths, &now);
        let new_root = now.iter().any(|r| !roots.contains(r) && r.dir.is_dir());
        if !new_root && !covered_now.iter().any(|c| !covered.contains(c) && c.is_dir()) {
            return false;
        }
        let before = self.watch_state.lock().clone();
        *self.watcher.lock() = None;
        if self.start_watching_off_runtime(paths).await.is_err() {
            return false;
        }
        {
            let mut state = self.watch_state.lock();
            (state.updates, state.rescans) = (before.updates, before.rescans);
            let warnings = std::mem::replace(&mut state.warnings, before.warnings);
            for w in warnings {
                state.warn(w);
            }
        }
        drop(ticket);
        let mut rescan = Burst::default();
        rescan.rescan();
        let me = self.clone();
        let paths = move || me.watcher.lock().as_ref().map(|w| w.paths.clone());
        self.clone().apply_burst(paths, rescan).await;
        true
    }

    /// The paths the watcher watches, if there is one.
    pub(super) fn watched_paths(&self) -> Option<Vec<String>> {
        self.watcher.lock().as_ref().map(|w| w.paths.clone())
    }

    /// Stops the watcher (at `destroy()`, on the JavaScript thread). A walk
    /// of the folders to watch may hold its slot a while: this does not
    /// wait for it; the walk's holder drops the watcher when it is done,
    /// seeing the workspace destroyed (marked before this call).
    pub(super) fn stop_watching(&self) {
        let Some(mut slot) = self.watcher.try_lock() else { return };
        let watcher = slot.take();
        drop(slot);
        drop(watcher);
    }

    /// After a walk of the folders under the watcher's lock: the watcher
    /// is dropped if `destroy()` came meanwhile (`stop_watching`).
    fn drop_if_destroyed(&self, slot: &mut Option<Watcher>) {
        if self.destroyed.load(Ordering::SeqCst) {
            drop(slot.take());
        }
    }

    /// Notes a signal that came at `at` in `burst` and the watch state.
    /// (Lock order: the watcher, then its state.)
    fn note(&self, signal: WatchSignal, at: Instant, burst: &mut Burst) {
        let mut refusal = None;
        let mut slot = self.watcher.lock();
        if let Some(w) = slot.as_mut() {
            match &signal {
                WatchSignal::RootLost(root) => {
                    w.watcher.unwatch(root);
                    if let Some(folders) = w.folders.as_mut() {
                        folders.forget(&mut *w.watcher, root);
                    }
                }
                WatchSignal::Changed(p) | WatchSignal::Removed(p) => {
                    if let Some(folders) = w.folders.as_mut() {
                        let removed = matches!(signal, WatchSignal::Removed(_));
                        refusal = folders.changed(&mut *w.watcher, &w.roots, p, removed).err().map(|e| (p.clone(), e));
                    }
                }
                _ => {}
            }
        }
        self.drop_if_destroyed(&mut slot);
        drop(slot);
        let mut state = self.watch_state.lock();
        if let Some((dir, e)) = refusal.filter(|_| !state.degraded) {
            state.warn(format!("watch: cannot watch {} ({})", dir.display(), e.message));
            state.refused(&dir, &e);
            burst.rescan();
        }
        match signal {
            WatchSignal::Changed(p) | WatchSignal::Removed(p) => burst.add(p),
            WatchSignal::Rescan if state.own_walk_until.is_some_and(|t| at < t) => {
                state.overflow_in_echo |= !state.follow_up;
            }
            WatchSignal::Rescan | WatchSignal::Rules => burst.rescan(),
            WatchSignal::RootLost(root) => {
                if !state.lost.contains(&root) {
                    state.warn(format!("watch: {} was removed; watching for it to come back", root.display()));
                    state.lost.push(root.clone());
                }
                burst.add(root);
            }
            WatchSignal::Failed { message, limit } => {
                state.warn(format!("watch: {message}"));
                if limit {
                    state.degraded = true;
                    burst.rescan();
                }
            }
        }
        state.settle_live();
    }

    /// Watches again the lost roots that exist again; each comes back
    /// with a reconcile of the tree (what happened meanwhile is unknown).
    fn recover_lost(&self, roots: &[WatchRoot], burst: &mut Burst) {
        let mut guard = self.watcher.lock();
        let Some(w) = guard.as_mut() else { return };
        let mut state = self.watch_state.lock();
        let base = self.base_path.as_ref().and_then(|b| b.canonicalize().ok());
        let mut back = Vec::new();
        let mut refused = Vec::new();
        for dir in &state.lost {
            let Some(root) = roots.iter().find(|r| &r.dir == dir) else { continue };
            if !dir.exists() {
                continue;
            }
            for above in base.as_ref().map(|b| ancestors(b, std::slice::from_ref(root))).unwrap_or_default() {
                let _ = w.watcher.watch(&above, false);
            }
            // An entry missing at the start is watched as a folder; one that
            // comes back as a file is watched through its folder (above).
            let watched = match dir.is_dir() {
                true => w.watch_root(root),
                false => dir.parent().map_or(Ok(()), |parent| w.watcher.watch(parent, false)),
            };
            match watched {
                Ok(()) => back.push(dir.clone()),
                Err(e) if degrades(dir, &e) => refused.push((dir.clone(), e)),
                Err(_) => {}
            }
        }
        for (dir, e) in refused {
            // Watched in part: reconciled now and on the timer, not tried again.
            state.lost.retain(|d| d != &dir);
            state.warn(format!("watch: cannot watch {} ({})", dir.display(), e.message));
            state.refused(&dir, &e);
            burst.rescan();
        }
        if !back.is_empty() {
            state.lost.retain(|d| !back.contains(d));
            for d in back {
                state.warn(format!("watch: {} is back and watched again", d.display()));
            }
            burst.rescan();
        }
        state.settle_live();
        drop(state);
        self.drop_if_destroyed(&mut guard);
    }

    /// Before a reconcile of the tree: the folders watched one by one are
    /// brought in step with the tree (events were lost, or a `.gitignore`
    /// changed which folders the walk enters).
    fn sync_folder_watches(&self) {
        let mut guard = self.watcher.lock();
        let Some(w) = guard.as_mut() else { return };
        let Some(folders) = w.folders.as_mut() else { return };
        let refused = folders.sync(&mut *w.watcher, &w.roots).err();
        let degraded = self.watch_state.lock().degraded;
        // Every folder the walk enters is watched now (watches were freed,
        // or the limit raised), and every root: the timer's reconciles end.
        // They went on until the next init(), every 10 s, for ever.
        let whole = degraded && refused.is_none() && w.every_root_watched();
        self.drop_if_destroyed(&mut guard);
        drop(guard);
        let mut state = self.watch_state.lock();
        if let Some(e) = refused.filter(|_| !state.degraded) {
            state.warn(format!("watch: cannot watch every folder ({})", e.message));
            state.degraded = true;
        } else if whole && state.degraded {
            state.warn("watch: every folder is watched again; the timer's reconciles end".into());
            state.degraded = false;
        }
        state.settle_live();
    }

    /// `stats().watch`, while watching.
    pub fn watch_stats(&self) -> Option<WatchState> {
        // (Held a while by a walk of the folders to watch: a watcher is there.)
        if let Some(slot) = self.watcher.try_lock() {
            slot.as_ref()?;
        }
        Some(self.watch_state.lock().clone())
    }
}

/// Whether a refused watch of `dir` makes the watch degraded (reconciled
/// on a timer) rather than `dir` looked for: the system's limit, or a
/// folder that is there (a subfolder the process may not read stops the
/// system's recursive watch).
fn degrades(dir: &Path, e: &WatchRefusal) -> bool {
    e.limit || dir.is_dir()
}

/// The watch of a workspace the system refused a watcher: nothing is
/// watched, and the signals' channel stays open while it lives (the loop
/// runs on the degraded mode's timer until it is dropped).
struct Unwatched {
    _signals: tokio::sync::mpsc::UnboundedSender<WatchSignal>,
}

impl TreeWatch for Unwatched {
    fn watch(&mut self, _dir: &Path, _recursive: bool) -> Result<(), WatchRefusal> {
        Ok(())
    }

    fn unwatch(&mut self, _dir: &Path) {}
}

/// `path` made canonical, or, before it exists (the persist directory
/// before the first save makes it), its nearest existing ancestor made
/// canonical with the rest of it joined on.
fn canonical_to_be(path: &Path) -> Option<PathBuf> {
    // (A relative one is the process's working directory's, as `persist` takes it.)
    let path = std::path::absolute(path).ok()?;
    let mut missing = Vec::new();
    let mut at = path.as_path();
    loop {
        if let Ok(found) = at.canonicalize() {
            return Some(missing.iter().rev().fold(found, |p, part| p.join(part)));
        }
        missing.push(at.file_name()?);
        at = at.parent()?;
    }
}

/// Waits for the next signal, or for `tick` to pass (`None`: the watcher is gone).
async fn next(rx: &mut UnboundedReceiver<WatchSignal>, tick: Option<Duration>) -> Option<Option<WatchSignal>> {
    match tick {
        Some(d) => match tokio::time::timeout(d, rx.recv()).await {
            Ok(got) => got.map(Some),
            Err(_) => Some(None),
        },
        None => rx.recv().await.map(Some),
    }
}

/// The signals of a burst, as they came: past `MAX_BURST_PATHS` changed
/// paths (or `MAX_BURST_SIGNALS` change signals: a file written is several),
/// the changes are dropped and the burst is a rescan (a burst of paths
/// becomes one past that many anyway), so a storm of events is not held.
/// Removals are all kept: the watches the system dropped are forgotten
/// (a folder made again with the same inode is watched again).
#[derive(Default)]
struct Gathered {
    kept: Vec<(WatchSignal, Instant)>,
    /// The paths changed, each once (1,500 files written once were 4,500
    /// signals: a rescan where the documents say 4,096 paths).
    paths: rustc_hash::FxHashSet<std::path::PathBuf>,
    changes: usize,
    overflowed: bool,
}

/// Change signals a burst holds at most, however few their paths.
const MAX_BURST_SIGNALS: usize = 4 * MAX_BURST_PATHS;

impl Gathered {
    fn push(&mut self, signal: WatchSignal) {
        if let WatchSignal::Changed(path) = &signal {
            if self.overflowed {
                return;
            }
            self.changes += 1;
            if !self.paths.contains(path) {
                self.paths.insert(path.clone());
            }
            if self.paths.len() > MAX_BURST_PATHS || self.changes > MAX_BURST_SIGNALS {
                self.overflowed = true;
                return;
            }
        }
        self.kept.push((signal, Instant::now()));
    }
}

/// The watcher's task: gathers each burst and applies it; ends when the
/// watcher is dropped (its sender goes with it) or the workspace is gone.
/// With nothing lost or refused it sleeps until an event comes.
async fn watch_loop(me: Weak<Engine>, mut rx: UnboundedReceiver<WatchSignal>, roots: Vec<WatchRoot>) {
    let mut burst = Burst::default();
    let mut last_rescan = Instant::now();
    loop {
        let tick = match me.upgrade() {
            Some(inner) => {
                let state = inner.watch_state.lock();
                if !state.lost.is_empty() {
                    Some(LOST_POLL)
                } else if let (true, Some(until)) = (state.overflow_in_echo, state.own_walk_until) {
                    Some(until.saturating_duration_since(Instant::now()))
                } else if state.degraded && state.retry_at.is_none() {
                    Some(DEGRADED_RESCAN.saturating_sub(last_rescan.elapsed()))
                } else {
                    state.retry_at.map(|at| at.saturating_duration_since(Instant::now()))
                }
            }
            None => return,
        };
        let Some(first) = next(&mut rx, tick).await else { return };
        let mut signals = Gathered::default();
        if let Some(signal) = first {
            signals.push(signal);
            let began = Instant::now();
            while began.elapsed() < MAX_BURST {
                match tokio::time::timeout(DEBOUNCE, rx.recv()).await {
                    Ok(Some(signal)) => signals.push(signal),
                    Ok(None) => return,
                    Err(_) => break,
                }
            }
        }
        let Some(inner) = me.upgrade() else { return };
        // Noting walks the folders made or moved in (20,000 take half a
        // second): off the runtime, whose few workers answer every
        // workspace's calls. They are still watched before the burst
        // walks them, so nothing written into them is missed.
        let (noting, lost_roots) = (inner.clone(), roots.clone());
        let noted = blocking(move || {
            if signals.overflowed {
                burst.rescan(); // (its sync watches the folders made, before the walk)
            }
            for (signal, at) in signals.kept {
                noting.note(signal, at, &mut burst);
            }
            noting.recover_lost(&lost_roots, &mut burst);
            burst
        });
        let Ok(noted) = noted.await else { return };
        burst = noted;
        {
            let mut state = inner.watch_state.lock();
            let retry = state.retry_at.is_some_and(|at| Instant::now() >= at);
            let degraded = state.degraded && state.retry_at.is_none();
            if retry || (degraded && last_rescan.elapsed() >= DEGRADED_RESCAN) {
                state.retry_at = state.retry_at.filter(|_| !retry);
                burst.rescan();
            }
            let window_over = state.own_walk_until.is_none_or(|t| Instant::now() >= t);
            if state.overflow_in_echo && window_over {
                state.overflow_in_echo = false;
                state.next_is_follow_up = true;
                burst.rescan();
            }
        }
        if burst.rescan {
            last_rescan = Instant::now();
            let syncing = inner.clone();
            if blocking(move || syncing.sync_folder_watches()).await.is_err() {
                return;
            }
        }
        if !burst.is_empty() {
            let me = inner.clone();
            let paths = move || me.watcher.lock().as_ref().map(|w| w.paths.clone());
            inner.clone().apply_burst(paths, std::mem::take(&mut burst)).await;
            if inner.follow_moved_roots().await {
                return;
            }
        }
    }
}
