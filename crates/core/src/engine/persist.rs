//! `persist`: the snapshot directory of a workspace. The first `init()`
//! takes the directory's writer lock (or reads only, when another process
//! holds it) and loads the snapshot; saves run after `init()`, a second
//! after writes, at `destroy()` and on `save()`, each off the JavaScript
//! thread, streamed to a temporary file and renamed into place.

use super::error::{Error, Result};
use super::remote::RemoteSnapshots;
use super::Store;
use super::{blocking, Engine, VectorSide};
use crate::persist::disk::{self, DirLock};
use crate::persist::intent::IntentLog;
use crate::persist::{
    fingerprint_difference, same_index, same_vectors, EmbedderIdentity, FileTable, Parts, Snapshot, SnapshotError,
    VectorParts,
};
use crate::vectors::embedding::same_embedder;
use crate::vectors::ledger::Ledger;
use crate::vectors::store::VectorIndex;
use parking_lot::Mutex;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// Embedded once per process start (without `embedderId`) to tell whether
/// the embedder is the one that made the saved vectors.
pub const CANARY: &str = "workspace-search embedder check: the quick brown fox jumps over the lazy dog";

/// Why a writer whose directory was removed (or replaced) since it took
/// its lock saves no more: another workspace may have made the directory
/// again and be its writer now.
const LOCK_LOST: &str = "the directory, or its lock file, was removed or replaced since this workspace took its \
     lock, so another workspace may write it now; this one saves no more (start it again to write there)";

/// The lock of a writer's directory made again without a snapshot (by
/// hand, or a tool that empties it): the writer goes on saving there. Not
/// where a snapshot lies, nor where another holds the lock: another
/// workspace made it and writes there.
fn relock(dir: &std::path::Path) -> Option<DirLock> {
    let snapshot = dir.join(disk::SNAPSHOT_FILE);
    if !dir.is_dir() || std::fs::symlink_metadata(snapshot).is_ok() {
        return None;
    }
    disk::lock(dir).ok()?.ok()
}

/// What taking a directory's writer lock comes to (`disk::lock`): held,
/// held by another (who), or an error.
type LockOutcome = std::io::Result<std::result::Result<DirLock, String>>;

/// How long after a write the snapshot is saved (writes in a burst share one save).
const SAVE_DELAY: Duration = Duration::from_millis(1000);
/// A background save that failed (the store or the disk failing a while)
/// is tried again this long after, then twice as late each time, up to
/// `MAX_SAVE_RETRY`, and at once (after `SAVE_DELAY`) when a write comes.
const SAVE_RETRY: Duration = Duration::from_secs(10);
const MAX_SAVE_RETRY: Duration = Duration::from_secs(300);

/// What a workspace remembers of its files: with `persist`, in a directory
/// too; with only `watch`, in memory (for the watcher's incremental
/// updates).
pub struct Persist {
    /// `None`: in memory only (`watch` without `persist`), or in a snapshot store.
    pub dir: Option<PathBuf>,
    /// `persist: { store }`: the snapshot in object storage (`engine::remote`).
    pub remote: Option<RemoteSnapshots>,
    /// The options the index depends on (`persist::fingerprint`).
    pub fingerprint: String,
    pub embedder_id: Option<String>,
    pub state: Mutex<PersistState>,
    /// One save at a time.
    saving: tokio::sync::Mutex<()>,
    /// Held by a snapshot's write to disk until it is done, also when the
    /// save that began it was dropped (a call cut short by `destroy()`):
    /// the lock is not released while a write may still rename into place.
    writing: Arc<tokio::sync::Mutex<()>>,
    /// One attempt at the directory's writer lock at a time (a second
    /// attempt of this process would find the first's lock and take this
    /// workspace for another writer).
    claiming: tokio::sync::Mutex<()>,
    /// The writer lock was tried (by `init()`, or a write before it): never again.
    lock_tried: AtomicBool,
    /// The vector-write log of a crash was looked at (once per process).
    pub recovered: AtomicBool,
    /// Writes so far.
    changes: AtomicU64,
    /// `index()` or `indexMany()` wrote (documents not from files).
    pub api_writes: AtomicBool,
    /// The snapshot loaded holds documents that are not in its file table
    /// (given to `index()` in an earlier session), until a full build from
    /// the files replaces them.
    pub loaded_api_docs: AtomicBool,
    save_queued: AtomicBool,
    /// Wakes a background save waiting to try again (`save_soon_if_changed`):
    /// a write came.
    save_wake: Arc<tokio::sync::Notify>,
    /// While a failed background save waits to try again: the count of
    /// changes it failed at (`u64::MAX`: none waits). Only a change since
    /// wakes it (a reconcile that changed nothing would have it encode the
    /// whole snapshot again every 10 s).
    retry_at_changes: AtomicU64,
    /// A background save's turn, held until its snapshot is taken.
    save_turn: Mutex<Option<crate::index::gate::Ticket>>,
}

#[derive(Default)]
pub struct PersistState {
    pub files: FileTable,
    /// The snapshot was looked for (at the first `init()`).
    pub loaded: bool,
    writer: Option<DirLock>,
    /// Which embedder made the vectors (known after the first `init()`).
    pub embedder: Option<EmbedderIdentity>,
    /// `changes` as of the last save.
    saved_changes: u64,
    /// `changes` when `save()` last rejected with a conflict (writes up to
    /// there were said to be unsaved).
    conflict_reported: Option<u64>,
    /// Why the last save failed (until one succeeds): `stats().saveError`.
    pub save_error: Option<String>,
    /// Where each file was found (kept while watching: `watch.rs`).
    pub located: crate::ingest::watch::Located,
    /// What a write before the first `init()` found taking the writer
    /// lock, for that `init()`'s report.
    claim_warnings: Vec<String>,
}

impl Persist {
    pub fn new(
        dir: Option<PathBuf>,
        remote: Option<RemoteSnapshots>,
        fingerprint: String,
        embedder_id: Option<String>,
    ) -> Self {
        Persist {
            dir,
            remote,
            fingerprint,
            embedder_id,
            state: Mutex::default(),
            saving: tokio::sync::Mutex::new(()),
            writing: Arc::new(tokio::sync::Mutex::new(())),
            claiming: tokio::sync::Mutex::new(()),
            lock_tried: AtomicBool::new(false),
            recovered: AtomicBool::new(false),
            changes: AtomicU64::new(0),
            api_writes: AtomicBool::new(false),
            loaded_api_docs: AtomicBool::new(false),
            save_queued: AtomicBool::new(false),
            save_wake: Arc::default(),
            retry_at_changes: AtomicU64::new(u64::MAX),
            save_turn: Default::default(),
        }
    }

    /// Gives up the directory's writer lock (at `destroy()`, after the
    /// last save), so that another workspace can write it; while a write
    /// cut short still runs in the user's store, once it has answered
    /// (the next writer undoes the log of intent, which must come after).
    /// Once no snapshot write is under way (one whose save was dropped
    /// goes on to its end).
    pub async fn writes_done(&self) {
        drop(self.writing.lock().await);
    }

    pub fn release(&self, writes: Option<&super::store::WritesInFlight>) {
        let lock = self.state.lock().writer.take();
        if let (Some(lock), Some(writes)) = (lock, writes) {
            writes.keep_until_answered(Box::new(lock));
        }
        // A snapshot store's texts part (held in memory until its texts are read).
        if let Some(remote) = &self.remote {
            remote.release();
        }
    }

    /// Whether this workspace took the directory's writer lock, and the
    /// directory was removed or replaced since (it saves no more).
    pub fn lost_lock(&self, dir: &std::path::Path) -> bool {
        let held = self.state.lock().writer.as_ref().map(DirLock::id);
        held.is_some_and(|id| !disk::still_locks(dir, id))
    }

    /// Whether this workspace holds the directory's writer lock.
    pub fn holds_lock(&self) -> bool {
        self.state.lock().writer.is_some()
    }

    /// Notes a change to save.
    pub fn changed(&self) {
        self.changes.fetch_add(1, Ordering::SeqCst);
    }
}

impl Engine {
    pub(super) fn persisted(&self) -> &Persist {
        self.persist.as_ref().expect("persist is configured")
    }

    /// Takes the writer lock and loads the snapshot, once. Returns the
    /// snapshot when it can be used, else pushes why to `warnings`. A
    /// snapshot returned is loaded once installed (`rebuild_persisted`):
    /// an install that fails leaves it to the next `init()`, and no save
    /// replaces it meanwhile.
    pub(super) async fn open_snapshot(self: &Arc<Self>, warnings: &mut Vec<String>) -> Result<Option<Snapshot>> {
        if let Some(remote) = self.remote() {
            return self.open_remote(remote, warnings).await;
        }
        let p = self.persisted();
        let Some(dir) = p.dir.clone().filter(|_| !p.state.lock().loaded) else {
            p.state.lock().loaded = true;
            return Ok(None);
        };
        let at = dir.clone();
        let _claiming = p.claiming.lock().await;
        // Tried once only: by an init() whose install failed, or a write
        // before this init(); that attempt's outcome stands.
        let locked = p.lock_tried.swap(true, Ordering::SeqCst);
        warnings.append(&mut p.state.lock().claim_warnings);
        let (lock, snapshot) = blocking(move || {
            let lock = (!locked).then(|| disk::lock(&at));
            // A directory that is not ours is neither written nor read. An
            // error of the system's (EMFILE, EACCES) says nothing of what
            // it holds: not taken for no snapshot.
            let snapshot = match disk::check_dir(&at) {
                Ok(()) => Snapshot::load(&at),
                Err(e) if disk::refused_by_system(&e) => Err(SnapshotError::Unreadable(e.to_string())),
                Err(_) => Err(SnapshotError::Missing),
            };
            (lock, snapshot)
        })
        .await?;
        let usable = matches!(&snapshot, Ok(s) if same_index(&s.fingerprint, &p.fingerprint));
        // Unreadable: not loaded, so nothing is saved over it, and the next
        // init() reads it again.
        let unreadable = matches!(&snapshot, Err(SnapshotError::Unreadable(_)));
        p.state.lock().loaded = !usable && !unreadable;
        match lock {
            // The lock is tried again with the read: the refusal may have
            // been the same one's (the directory unreadable too).
            Some(lock) if unreadable && !matches!(lock, Ok(Ok(_))) => p.lock_tried.store(false, Ordering::SeqCst),
            Some(lock) => self.note_lock(lock, &dir, warnings),
            None => {}
        }
        match snapshot {
            Err(SnapshotError::Missing) => Ok(None),
            Err(SnapshotError::Unreadable(e)) => Err(Error::from_reason(format!(
                "persist: the snapshot in {} could not be read ({e}); nothing was loaded, and nothing is saved over it until an init() reads it",
                dir.display()
            ))),
            Err(e) => {
                warnings.push(format!("persist: {e}; the index was rebuilt from the files"));
                Ok(None)
            }
            Ok(s) if !same_index(&s.fingerprint, &p.fingerprint) => {
                let why = SnapshotError::OtherOptions(fingerprint_difference(&s.fingerprint, &p.fingerprint));
                warnings.push(format!("persist: {why}; the index was rebuilt from the files"));
                self.delete_saved_vectors(&s, warnings).await;
                Ok(None)
            }
            Ok(s) => Ok(Some(s)),
        }
    }

    /// What taking the directory's writer lock came to: held (this
    /// workspace writes it, and logs what it sends to a JavaScript store),
    /// held by another (it loads but does not save, and writes nothing to
    /// a JavaScript store they share), or not to be had.
    fn note_lock(&self, lock: LockOutcome, dir: &std::path::Path, warnings: &mut Vec<String>) {
        let js_store = match &self.vectors {
            Some(VectorSide { store: Store::Mastra(js), .. }) => Some(js),
            _ => None,
        };
        match lock {
            Ok(Ok(l)) => {
                self.persisted().state.lock().writer = Some(l);
                self.open_intent_log(dir, warnings);
            }
            Ok(Err(holder)) => {
                let shared = js_store.map_or("", |_| ", nor writes to the vector store");
                warnings.push(format!(
                    "persist: {} is written by {holder}; this workspace loads it but does not save{shared}",
                    dir.display()
                ));
                if let Some(js) = js_store {
                    js.refuse_writes(format!(
                        "vectorStore: not written: {} is written by {holder}, and a workspace that only loads it writes nothing to the vector store they share (its writes would stay there unrecorded); make the change in the workspace that writes it",
                        dir.display()
                    ));
                }
            }
            Err(e) => warnings.push(format!("persist: {} cannot be used ({e}); nothing is saved", dir.display())),
        }
    }

    /// With `persist.dir` and a JavaScript vector store, a write made before
    /// the first `init()` takes the directory's writer lock first, as
    /// `init()` would: what it sends the store must be in this directory's
    /// log of intent, or, when another workspace writes the directory, not
    /// be sent at all (the write then rejects, `note_lock`).
    pub(super) async fn claim_dir_for_store_writes(&self) -> Result<()> {
        let (Some(VectorSide { store: Store::Mastra(_), .. }), Some(p)) = (&self.vectors, &self.persist) else {
            return Ok(());
        };
        if p.dir.is_none() || p.lock_tried.load(Ordering::SeqCst) {
            return Ok(());
        }
        let _claiming = p.claiming.lock().await;
        // Once only, before the first init(): a workspace that only loaded
        // the directory must never become its writer later (its index is
        // not the snapshot the writer left).
        let Some(dir) = p.dir.clone().filter(|_| !p.lock_tried.swap(true, Ordering::SeqCst)) else { return Ok(()) };
        let at = dir.clone();
        let lock = blocking(move || disk::lock(&at)).await?;
        let mut warnings = Vec::new();
        self.note_lock(lock, &dir, &mut warnings);
        // Said by the next init() (which makes no attempt of its own now).
        p.state.lock().claim_warnings = warnings;
        Ok(())
    }

    /// `open_snapshot` from a snapshot store: attached once per workspace;
    /// a store that fails fails the call (nothing is rebuilt over a
    /// snapshot that may be there); one that holds no usable snapshot is
    /// a warning, and the index is built from the files.
    async fn open_remote(&self, remote: &RemoteSnapshots, warnings: &mut Vec<String>) -> Result<Option<Snapshot>> {
        let p = self.persisted();
        if p.state.lock().loaded {
            return Ok(None);
        }
        // Until an attach succeeds, searches fail with why (`not_emptied`):
        // answering from an empty index would be a wrong answer.
        let fetched = remote.fetch().await.inspect_err(|e| remote.set_unattached(Some(e.reason.clone())))?;
        remote.set_unattached(None);
        // A snapshot to install is loaded once installed (`rebuild_persisted`):
        // until then no save may replace it with what this workspace holds.
        if !matches!(fetched, Ok(Some(ref s)) if same_index(&s.fingerprint, &p.fingerprint)) {
            Self::attached(p);
        }
        match fetched {
            Ok(None) => Ok(None),
            // (Not refused where no files are read natively: the Mastra
            // entry's own walk, through Mastra's API, indexes them after.)
            Err(e) if self.base_path.is_none() || self.auto_index_paths.is_empty() => {
                warnings.push(format!("persist.store: {e}; this workspace reads no files itself (autoIndexPaths), so its index starts empty: documents given to index() must be given again, and its saves are refused until the tenant's manifest.json is removed or repaired"));
                Ok(None)
            }
            Err(e) => {
                warnings.push(format!("persist.store: {e}; the index was rebuilt from the files"));
                Ok(None)
            }
            Ok(Some(s)) if !same_index(&s.fingerprint, &p.fingerprint) => {
                let why = SnapshotError::OtherOptions(fingerprint_difference(&s.fingerprint, &p.fingerprint));
                warnings.push(format!("persist.store: {why}; the index was rebuilt from the files"));
                remote.unusable(why.to_string());
                Ok(None)
            }
            Ok(Some(s)) => Ok(Some(s)),
        }
    }

    /// A snapshot store's workspace holds what it attached: saves may
    /// write, and an error that said writes waited for an attach is over.
    pub(super) fn attached(p: &Persist) {
        let mut state = p.state.lock();
        state.loaded = true;
        state.save_error = None;
    }

    /// An `init()` of a snapshot store's workspace failed before anything
    /// was loaded (the store, or a check after the fetch: the postings'
    /// fetch, the embedder's): searches fail with why, and writes made
    /// meanwhile make `save()` and `destroy()` say they are not saved yet.
    pub(super) fn attach_failed(&self, e: &Error) {
        let Some(remote) = self.remote() else { return };
        if !self.persisted().state.lock().loaded && remote.unattached().is_none() {
            remote.set_unattached(Some(e.reason.clone()));
        }
    }

    /// The writer of a directory writes down what it sends to a store that
    /// outlives the process (`persist::intent`).
    fn open_intent_log(&self, dir: &std::path::Path, warnings: &mut Vec<String>) {
        let Some(VectorSide { store: Store::Mastra(js), .. }) = &self.vectors else { return };
        match IntentLog::open(dir) {
            Ok(log) => {
                let _ = js.intent.set(Arc::new(log));
            }
            Err(e) => warnings.push(format!(
                "persist: {} cannot hold the log of vector writes ({e}); a crash may leave vectors the next start does not know",
                dir.display()
            )),
        }
    }

    fn intent_log(&self) -> Option<&Arc<IntentLog>> {
        match &self.vectors {
            Some(VectorSide { store: Store::Mastra(js), .. }) => js.intent.get(),
            _ => None,
        }
    }

    /// At a start, after the snapshot is in place: what a killed process
    /// sent to the store after its last save is deleted from the store and
    /// forgotten by the ledger; files among it are then read and embedded
    /// again by the reconcile, documents given to `index()` are embedded
    /// again from the index here (how many: counted in `embedded`). The log
    /// is trimmed by the next save. Runs once per process, at the first `init()`: later calls find
    /// this process's own writes in the log, not a crash's.
    pub(super) async fn recover_intents(self: &Arc<Self>, warnings: &mut Vec<String>) -> usize {
        let (Some(v), Some(log)) = (&self.vectors, self.intent_log()) else { return 0 };
        if self.persisted().recovered.swap(true, Ordering::SeqCst) {
            return 0;
        }
        // Held while it runs (no save trims it meanwhile), and for good if it fails.
        let hold = log.hold_all();
        let intents = match log.read_left() {
            Ok(i) if !i.is_empty() => i,
            Ok(_) => {
                log.release_left();
                hold.answered();
                return 0;
            }
            Err(e) => {
                warnings.push(format!("persist: the log of vector writes cannot be read ({e})"));
                return 0;
            }
        };
        let mut doubted = intents.ids.clone();
        doubted.extend(intents.sources.iter().cloned());
        let (sources, by_hand) = self.sources_in_doubt(v, &doubted).await;
        // Without a keyword index nothing could write an `index()` document
        // again: those are left in the store as they are.
        let undoable: Vec<String> =
            sources.into_iter().filter(|s| self.keyword.is_some() || !by_hand.contains(s)).collect();
        let mut ids: Vec<String> =
            doubted.iter().filter(|id| self.keyword.is_some() || !by_hand.contains(id)).cloned().collect();
        for s in &undoable {
            ids.extend(v.ledger.lock().removal(s).0);
        }
        ids.sort();
        ids.dedup();
        // Each once: a source named by many records (recoveries before this
        // one logged theirs too) was a call to the store, and a record, each.
        let mut sources_to_delete: Vec<&String> = intents.sources.iter().chain(&undoable).collect();
        sources_to_delete.sort();
        sources_to_delete.dedup();
        if let Err(e) = Self::delete_in_doubt(v, &ids, &sources_to_delete).await {
            // The log stays held: no save trims it, the next start tries again.
            warnings.push(format!("persist: vectors written before a crash could not be removed ({})", e.reason));
            return 0;
        }
        {
            let mut ledger = v.ledger.lock();
            for s in &undoable {
                ledger.forget(s);
            }
            ledger.drop_texts(&ids);
        }
        let mut embedded = 0;
        if self.keyword.is_some() {
            let (written, failed) = self.rewrite_from_index(v, &by_hand).await;
            embedded = written;
            for (source, reason) in &failed {
                warnings.push(format!("persist: {source} could not be embedded again after a crash ({reason})"));
            }
            if !failed.is_empty() {
                // The log stays held: no save trims it, the next start embeds
                // them again (their vectors are gone: none is recorded).
                return embedded;
            }
        }
        log.release_left();
        hold.answered();
        // Only a save trims the log: with nothing else changed, none came,
        // and each start undid it again, its own records added (it doubled).
        self.persisted().changed();
        embedded
    }

    /// Of the ids a crash left in doubt: the sources the ledger knows among
    /// them (whole sources are in doubt: every id of theirs goes), and the
    /// documents among those and the ids that came from `index()`, not from
    /// files (sorted), which only the index can write again.
    async fn sources_in_doubt(self: &Arc<Self>, v: &VectorSide, doubted: &[String]) -> (Vec<String>, Vec<String>) {
        // `index()` documents in doubt that the ledger no longer knows (an
        // earlier recovery deleted their vectors, then failed to write them
        // again): written again all the same.
        let wanted = doubted.to_vec();
        let given: Vec<String> = self
            .read_index(move |index| {
                let given = |id: &&String| index.get(id).is_some_and(|d| d.source_file().is_none());
                wanted.iter().filter(given).cloned().collect()
            })
            .await
            .unwrap_or_default();
        // Lock order (docs/architecture.md): the file state, then the ledger.
        let state = self.persisted().state.lock();
        let ledger = v.ledger.lock();
        let sources = ledger.sources_with(doubted);
        let mut by_hand: Vec<String> =
            sources.iter().filter(|s| state.files.get(s).is_none()).chain(&given).cloned().collect();
        by_hand.sort();
        by_hand.dedup();
        (sources, by_hand)
    }

    /// Deletes from the store the ids, and (from a store that is not the
    /// embedded one) every row of the sources, a crash left in doubt.
    async fn delete_in_doubt(v: &VectorSide, ids: &[String], sources: &[&String]) -> Result<()> {
        v.store.delete_ids(&v.index_name, ids).await?;
        if !v.store.is_local() {
            for source in sources {
                v.store.delete_source(&v.index_name, source).await?;
            }
        }
        Ok(())
    }

    /// Which embedder this process has: `embedderId`, or the canary's
    /// vector (one embedder call per process start; its failure is the
    /// error).
    pub(super) async fn embedder_identity(&self, v: &VectorSide) -> Result<EmbedderIdentity> {
        let p = self.persisted();
        if let Some(known) = p.state.lock().embedder.clone() {
            return Ok(known);
        }
        let identity = match &p.embedder_id {
            Some(id) => EmbedderIdentity { id: Some(id.clone()), canary: Vec::new() },
            None => {
                let mut vs = v.embedder.embed_all(vec![CANARY.to_string()]).await?;
                EmbedderIdentity { id: None, canary: vs.pop().unwrap_or_default() }
            }
        };
        p.state.lock().embedder = Some(identity.clone());
        Ok(identity)
    }

    /// Before a rebuild from the files over a snapshot made with other
    /// options: the vectors it says were written to this user's store are
    /// deleted, by this workspace's writer. The rebuild writes those of
    /// the files there now; a file deleted meanwhile, or a document given
    /// to `index()` (the rebuild drops it), kept its vector in the store,
    /// found by every vector and hybrid search from then on.
    async fn delete_saved_vectors(&self, saved: &Snapshot, warnings: &mut Vec<String>) {
        let Some(v) = &self.vectors else { return };
        let Some(state) = &saved.vectors else { return };
        let writer = self.persisted().state.lock().writer.is_some();
        if v.store.is_local() || !writer || !same_vectors(&saved.fingerprint, &self.persisted().fingerprint) {
            return;
        }
        let ids = state.ledger.all_ids();
        if let Err(e) = v.store.delete_ids_if_held(&v.index_name, &ids).await {
            warnings.push(format!("persist: the {} vectors the snapshot wrote could not be deleted from the vector store ({}); those of files deleted since may still be found", ids.len(), e.reason));
        }
    }

    /// Puts a loaded snapshot's vector side in place; false when the
    /// embedder changed (then every text is embedded again, once), or the
    /// store no longer holds the index they were written to.
    pub(super) async fn install_vectors(
        &self,
        v: &VectorSide,
        saved: crate::persist::VectorState,
        warnings: &mut Vec<String>,
    ) -> Result<bool> {
        // Not known (the embedder threw: init() rejects with what it
        // threw), nothing is loaded: reusing the vectors could mix two
        // embedders', and dropping them with the documents would lose
        // those given to `index()` (a save would then replace them).
        let now = self.embedder_identity(v).await?;
        let same = same_embedder(&saved.embedder, &now);
        if !same {
            warnings
                .push("persist: the embedder changed since the index was saved; every text is embedded again".into());
        }
        // Another store given (its index never made there), or the index
        // dropped: none of the saved vectors is there, and the ledger
        // would have every text taken for embedded.
        let gone =
            !v.store.is_local() && saved.ledger.count() > 0 && v.store.holds_index(&v.index_name).await == Some(false);
        if gone {
            warnings.push(format!("persist: the vector store holds no index {} (another store, or the index was dropped), where the saved vectors were written; every text is embedded again", v.index_name));
        }
        let same = same && !gone;
        let (mut ledger, mut local) = saved.adopt(same, v.store.is_local());
        if gone {
            ledger.clear();
        }
        Self::forget_saved(v, &mut ledger, local.as_mut());
        if let (Store::Local(store), Some(mut ix)) = (&v.store, local) {
            // Vectors written before this first init() stay, over the saved ones.
            let mut store = store.write();
            if let Ok(current) = store.index(&v.index_name) {
                ix.absorb(current);
            }
            store.put_index(&v.index_name, ix);
            v.upserted.store(true, Ordering::SeqCst);
        }
        ledger.absorb(std::mem::take(&mut *v.ledger.lock()));
        *v.ledger.lock() = ledger;
        Ok(same)
    }

    /// Takes from the saved vectors (`ledger`, and the embedded store's
    /// `local` index) the sources `unindex()` removed before they were
    /// loaded; a user's store lost their ids then. A file of chunks keeps
    /// them, as the index does (its removal names the file, not the chunks
    /// the snapshot holds), and `init()` finds the file as it finds others.
    fn forget_saved(v: &VectorSide, ledger: &mut Ledger, mut local: Option<&mut VectorIndex>) {
        let forgotten = std::mem::take(&mut *v.forgotten_before_load.lock());
        for source in &forgotten {
            if ledger.get(source).is_some_and(|ids| ids.iter().any(|id| id != source)) {
                continue;
            }
            if let Some(ix) = local.as_deref_mut() {
                for id in ledger.removal(source).0 {
                    ix.remove(&id);
                }
            }
            ledger.forget(source);
        }
    }

    /// Saves the snapshot if anything changed since the last save (and this
    /// workspace holds the directory's writer lock).
    pub async fn save(self: &Arc<Self>, force: bool) -> Result<bool> {
        if self.persist.as_ref().is_some_and(|p| p.remote.is_some()) {
            return self.save_remote(force).await;
        }
        let Some((p, dir)) = self.persist.as_ref().and_then(|p| Some((p, p.dir.clone()?))) else { return Ok(false) };
        let _one = p.saving.lock().await;
        let changes = p.changes.load(Ordering::SeqCst);
        let held = {
            let state = p.state.lock();
            if state.writer.is_none() || !state.loaded || (!force && state.saved_changes == changes) {
                return Ok(false);
            }
            state.writer.as_ref().and_then(DirLock::id)
        };
        if !self.lock_still_ours(&dir, held).await? {
            let e = format!("persist: could not save to {}: {LOCK_LOST}", dir.display());
            p.state.lock().save_error = Some(e.clone());
            return Err(Error::store(e));
        }
        // What the log holds now is covered by this save once it is on disk.
        let mark = self.intent_log().map(|l| l.mark());
        let me = self.clone();
        let to = dir.clone();
        let writing = p.writing.clone().lock_owned().await;
        let written = blocking(move || {
            let _writing = writing;
            me.write_snapshot(&to)
        })
        .await?
        .map_err(|e| format!("persist: could not save to {}: {e}", dir.display()));
        if let (Ok(()), Some(log), Some(mark)) = (&written, self.intent_log(), mark) {
            let _ = log.trim(mark);
        }
        let mut state = p.state.lock();
        match written {
            Ok(()) => (state.saved_changes, state.save_error) = (changes, None),
            Err(e) => state.save_error = Some(e),
        }
        // (`SnapshotStoreError`: the directory is this workspace's store.)
        state.save_error.clone().map_or(Ok(true), |e| Err(Error::store(e)))
    }

    /// Whether the directory's lock file is still the one this writer took
    /// (`held`: its id), or could be taken again: the directory made again
    /// without a snapshot, and no log of intent open (it would go on in the
    /// removed one). When not, a JavaScript store's writes are refused from
    /// then on: they would go unrecorded by any log a later start reads.
    /// The file system's calls run off this task, no lock of ours held.
    async fn lock_still_ours(&self, dir: &std::path::Path, held: Option<(u64, u64)>) -> Result<bool> {
        let (to, logged) = (dir.to_path_buf(), self.intent_log().is_some());
        let relocked = blocking(move || match disk::still_locks(&to, held) {
            true => Ok(None),
            false if logged => Err(()),
            false => relock(&to).map(Some).ok_or(()),
        })
        .await?;
        let p = self.persisted();
        match relocked {
            Ok(None) => Ok(true),
            Ok(Some(lock)) => {
                let mut state = p.state.lock();
                // Not if the writer let go meanwhile (destroy()): the new lock goes with `lock`.
                let still = state.writer.is_some() && state.writer.as_ref().and_then(DirLock::id) == held;
                if still {
                    state.writer = Some(lock);
                }
                Ok(still)
            }
            Err(()) => {
                if let Some(VectorSide { store: Store::Mastra(js), .. }) = &self.vectors {
                    js.refuse_writes(format!("vectorStore: not written: {}: {LOCK_LOST}", dir.display()));
                }
                Ok(false)
            }
        }
    }

    /// Streams the snapshot to a temporary file under the index's read lock
    /// (and the embedded store's), then (locks released) syncs it and
    /// renames it into place. The file state and the ledger are copied
    /// under their locks first and released at once: async code takes
    /// those two briefly, and must not wait for a whole encode.
    fn write_snapshot(&self, dir: &std::path::Path) -> std::io::Result<()> {
        self.with_parts(|parts| disk::begin(dir, |e| parts.encode(e)))?.commit()
    }

    /// The snapshot's framed bytes in memory, encoded as `write_snapshot`
    /// encodes (for a snapshot store).
    pub(super) fn frame_snapshot(&self) -> std::io::Result<Vec<u8>> {
        self.with_parts(|parts| {
            // (Asked under the index's read lock: exact.) An index dropped to
            // be built again is never saved half built.
            if self.index_emptied() {
                return Err(std::io::Error::other("the index is being built again"));
            }
            disk::frame(|e| parts.encode(e))
        })
    }

    /// Runs `f` over the snapshot's parts, under the index's read lock
    /// (and the embedded store's).
    fn with_parts<T>(&self, f: impl FnOnce(&Parts) -> T) -> T {
        let p = self.persisted();
        {
            // Lock order (docs/architecture.md): index, file state, ledger, store.
            let index = self.index.read();
            super::test_pause("save-holds-index");
            let (files, embedder, ledger) = {
                let state = p.state.lock();
                let ledger = self.vectors.as_ref().map(|v| v.ledger.lock().clone());
                (state.files.clone(), state.embedder.clone().unwrap_or_default(), ledger)
            };
            let local = match &self.vectors {
                Some(VectorSide { store: Store::Local(s), .. }) => Some(s.read()),
                _ => None,
            };
            let vectors = match (&self.vectors, &ledger) {
                (Some(v), Some(ledger)) => Some(VectorParts {
                    embedder: &embedder,
                    ledger,
                    local: local.as_ref().and_then(|s| s.index(&v.index_name).ok()),
                }),
                _ => None,
            };
            let parts = Parts { fingerprint: &p.fingerprint, index: &index, files: &files, vectors };
            let out = f(&parts);
            // Taken: a background save's turn ends here, before the file is
            // synced or the bytes uploaded (writes wait for the capture only).
            p.save_turn.lock().take();
            out
        }
    }

    /// Whether every document came from the files of `autoIndexPaths`
    /// (none from `index()` in the snapshot loaded or since).
    pub(super) fn indexes_files_only(&self) -> bool {
        let api = self
            .persist
            .as_ref()
            .is_some_and(|p| p.api_writes.load(Ordering::SeqCst) || p.loaded_api_docs.load(Ordering::SeqCst));
        self.indexes_files() && !api
    }

    /// Whether this workspace reads files (a `basePath` and `autoIndexPaths`).
    pub(super) fn indexes_files(&self) -> bool {
        self.base_path.is_some() && !self.auto_index_paths.is_empty()
    }

    /// `save` to the snapshot store: the part, then the manifest.
    async fn save_remote(self: &Arc<Self>, force: bool) -> Result<bool> {
        let p = self.persisted();
        let remote = p.remote.as_ref().expect("a snapshot store");
        let _one = p.saving.lock().await;
        let changes = p.changes.load(Ordering::SeqCst);
        if let Some(answer) = self.no_remote_save(remote, changes, force) {
            return answer;
        }
        // A snapshot is written with its texts: those of the one attached
        // first (and its postings, when a large index keeps them there).
        let ready = match self.remote_postings_whole().await {
            Ok(()) => remote.texts_ready(self.indexes_files_only()).await,
            Err(e) => Err(e),
        };
        let framed = match ready {
            Ok(()) => self.framed_snapshot().await,
            Err(e) => Err(e),
        };
        let written = match framed {
            // A snapshot it could not use is replaced only when it all came from files.
            Ok(bytes) => remote.write(bytes, self.indexes_files_only()).await,
            Err(e) => Err(e),
        };
        let mut state = p.state.lock();
        match written {
            Ok(()) => {
                (state.saved_changes, state.save_error) = (changes, None);
                Ok(true)
            }
            Err(e) => {
                if force && e.store_failure() == Some(super::StoreFailure::Conflict) {
                    state.conflict_reported = Some(changes);
                }
                state.save_error = Some(e.reason.clone());
                Err(e)
            }
        }
    }

    /// Why a save to the store writes nothing, if it does not: nothing
    /// attached, nothing changed, an index dropped to be built again, or
    /// a conflict; each with what `save()` answers.
    fn no_remote_save(&self, remote: &RemoteSnapshots, changes: u64, force: bool) -> Option<Result<bool>> {
        let p = self.persisted();
        let mut state = p.state.lock();
        if !state.loaded {
            // Writes made after an attach failed are not saved: `save()`
            // and `destroy()` say so (they resolved as if saved).
            let why = remote.unattached().filter(|_| state.saved_changes != changes);
            return Some(match why {
                Some(why) => {
                    let e = Error::store(format!(
                        "{why}: writes made since are not saved yet (the tenant is not attached; they are kept, and saved once an init() attaches)"
                    ));
                    state.save_error = Some(e.reason.clone());
                    Err(e)
                }
                None => Ok(false),
            });
        }
        if !force && state.saved_changes == changes {
            return Some(Ok(false));
        }
        // An index dropped to be built again is not saved over the
        // tenant's snapshot (the rebuild saves it whole); writes not
        // saved yet say so.
        if self.index_emptied() {
            return Some(if state.saved_changes == changes { Ok(false) } else { self.not_emptied().map(|()| false) });
        }
        // After a conflict nothing may be written: a save in the
        // background or at `destroy()` says writes went unsaved (but
        // those `save()` already rejected for).
        if !force && remote.conflicted() {
            if state.conflict_reported == Some(changes) {
                return Some(Ok(false));
            }
            return Some(Err(Error::conflict(
                "persist.store: writes made after another workspace saved this snapshot first are not saved; attach again (init() on a new Workspace) and write them there",
            )));
        }
        None
    }

    /// After a write: a save a second later (writes meanwhile share it).
    pub fn save_soon(self: &Arc<Self>) {
        if let Some(p) = &self.persist {
            p.changed();
        }
        self.save_soon_if_changed();
    }

    /// A save a second later, if anything changed since the last one.
    pub fn save_soon_if_changed(self: &Arc<Self>) {
        let Some(p) = &self.persist else { return };
        if (p.dir.is_none() && p.remote.is_none()) || p.changes.load(Ordering::SeqCst) == p.state.lock().saved_changes {
            return;
        }
        if p.save_queued.swap(true, Ordering::SeqCst) {
            // A save waiting to try again goes now, if this is a change since it failed.
            let failed_at = p.retry_at_changes.load(Ordering::SeqCst);
            if failed_at != u64::MAX && p.changes.load(Ordering::SeqCst) != failed_at {
                p.save_wake.notify_one();
            }
            return;
        }
        let (mut engine, wake) = (self.clone(), p.save_wake.clone());
        self.runtime.spawn(async move {
            let mut retry = SAVE_RETRY;
            loop {
                // (Held while it saves: the save after a write is made even
                // if the workspace is let go without destroy().)
                tokio::time::sleep(SAVE_DELAY).await;
                let p = engine.persisted();
                p.save_queued.store(false, Ordering::SeqCst);
                if !engine.background_save().await {
                    return;
                }
                // Failed, with writes left unsaved: tried again, unless
                // another save was queued meanwhile. Until 2026-12-08 they
                // waited for the next write, save() or destroy(), however
                // soon the store was back.
                if p.save_queued.swap(true, Ordering::SeqCst) {
                    return;
                }
                p.retry_at_changes.store(p.changes.load(Ordering::SeqCst), Ordering::SeqCst);
                // Weak while it waits: a workspace let go meanwhile is not kept.
                let me = Arc::downgrade(&engine);
                drop(engine);
                let _woken = tokio::time::timeout(retry, wake.notified()).await;
                let Some(again) = me.upgrade() else { return };
                engine = again;
                engine.persisted().retry_at_changes.store(u64::MAX, Ordering::SeqCst);
                retry = (retry * 2).min(MAX_SAVE_RETRY);
            }
        });
    }

    /// One save in the background; whether to try again: it failed (not
    /// for a conflict, after which nothing is written), the workspace is
    /// attached and not destroyed, and writes are left unsaved.
    async fn background_save(self: &Arc<Self>) -> bool {
        // In a turn of its own while the snapshot is taken (`with_parts`
        // gives it up then): a write applies to the store before the
        // index, so a snapshot taken while one applies could hold a
        // vector without its document, or lose one.
        let ticket = self.gate.ticket();
        if self.turn_to_save(&ticket).await.is_err() || self.destroyed.load(Ordering::SeqCst) {
            return false;
        }
        let p = self.persisted();
        *p.save_turn.lock() = Some(ticket);
        let saved = self.save(false).await;
        p.save_turn.lock().take();
        let Err(e) = saved else { return false };
        let state = p.state.lock();
        e.store_failure() != Some(super::StoreFailure::Conflict)
            && state.loaded
            && p.changes.load(Ordering::SeqCst) != state.saved_changes
            && !self.destroyed.load(Ordering::SeqCst)
    }
}

/// Whether every document of `index` is a file of `files` (or a chunk of
/// one): none was given to `index()`.
pub(super) fn all_from_files(index: &crate::index::Bm25Index, files: &FileTable) -> bool {
    index.documents().all(|d| files.get(d.source_file().unwrap_or(&d.id)).is_some())
}
