//! The engine front: a workspace's state and every flow over it, in the
//! write order (the gate), off the host's thread. Writes (`write`),
//! rebuilds from files (`rebuild`, and `incremental` with a snapshot),
//! snapshots (`persist`), searches (`query`) and git history (`history`)
//! are driven here; the host's code (the user's embedder, store, tokenizer,
//! reranker, progress) is called through the traits of `host`.

mod api_files;
mod config;
mod embedder;
mod error;
mod grep;
mod history;
pub mod host;
mod incremental;
mod lifecycle;
mod persist;
mod query;
mod rebuild;
mod reembed;
mod remote;
mod store;
#[cfg(test)]
mod tests;
mod vector_write;
mod watch;
mod watch_folders;
mod write;

pub use config::{Bm25Config, ConfigError, EngineConfig, HostParts, Place, TokenizerIdentity, VectorConfig};
pub use embedder::Embedder;
pub use error::{Error, Failure, Result, StoreFailure};
pub use grep::{GrepFailure, GrepSide, GrepStats};
pub use history::HistoryState;
pub use persist::Persist;
pub use query::{Prepared, SearchOptions};
pub use remote::{PartCache, RemoteSnapshots, StoreConfig};
pub use store::{MastraStore, Store, DEFAULT_VECTOR_STORE_TIMEOUT};
pub use watch::WatchState;
pub use write::{DocArgs, ManyOutcome};

use crate::analysis::tokenizer::Tokenizer;
use crate::index::gate::{Gate, Ticket};
use crate::index::{Bm25Index, IndexStats};
use crate::ingest::ChunkOptions;
use crate::vectors::ledger::Ledger;
use host::{Progress, ProgressSink, RerankCall, TokenizeCall};
use parking_lot::{Mutex, RwLock};
use std::panic::AssertUnwindSafe;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

pub struct Keyword {
    pub tokenizer: Arc<Tokenizer>,
    /// A user `tokenize.tokenizer`, called many texts at a time (slow path).
    pub js: Option<Arc<dyn TokenizeCall>>,
}

/// Vector search: the embedder, the store and what this workspace wrote.
pub struct VectorSide {
    pub embedder: Embedder,
    pub store: Store,
    pub index_name: String,
    /// Whether others may write the index too: any `vectorStore` given, a
    /// JavaScript store (other processes, earlier runs) or a `LocalVector`
    /// (other workspaces of this process). Stale vectors are then also
    /// deleted by `sourceFile`, the same rule for every such store; the
    /// embedded store holds only what this workspace's ledger records.
    pub shared: bool,
    /// `createIndex` runs before upserts until one upsert has succeeded.
    pub upserted: AtomicBool,
    pub ledger: Mutex<Ledger>,
    /// Sources `unindex()` removed before a persisted workspace's snapshot
    /// was loaded: their saved vectors go when it is (`install_vectors`),
    /// as the index's tombstones take their saved documents.
    pub forgotten_before_load: Mutex<Vec<String>>,
}

/// A workspace's lifecycle, as `status` reports it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lifecycle {
    Pending,
    Initializing,
    Ready,
    Error,
    Destroyed,
}

impl Lifecycle {
    pub fn as_str(self) -> &'static str {
        match self {
            Lifecycle::Pending => "pending",
            Lifecycle::Initializing => "initializing",
            Lifecycle::Ready => "ready",
            Lifecycle::Error => "error",
            Lifecycle::Destroyed => "destroyed",
        }
    }
}

pub struct Engine {
    pub id: String,
    pub keyword: Option<Keyword>,
    pub vectors: Option<VectorSide>,
    pub base_path: Option<PathBuf>,
    pub read_only: bool,
    pub auto_index_paths: Vec<String>,
    pub chunking: ChunkOptions,
    pub respect_gitignore: bool,
    pub max_file_size: u64,
    pub progress: Option<Arc<dyn ProgressSink>>,
    pub index: RwLock<Bm25Index>,
    pub gate: Arc<Gate>,
    pub status: Mutex<Lifecycle>,
    pub destroyed: AtomicBool,
    /// How the `destroy()` that saves settled (`None` while under way;
    /// then its failure's reason, if any): a second `destroy()` settles
    /// with it, rather than clearing the index that one is saving.
    destroying: Mutex<Option<tokio::sync::watch::Receiver<Option<Option<String>>>>>,
    /// Held to mark the workspace destroyed, and by a write deciding to
    /// apply (`unless_destroyed`): each then sees the other's side.
    commits: Mutex<()>,
    /// Writes committed and applying (`unless_destroyed`): `destroy()`'s
    /// save waits for them however long they take (their calls resolve).
    applying: tokio::sync::watch::Sender<usize>,
    /// The statistics as of the last write or `stats()` call, answered by
    /// `stats()` while a bulk write holds the index (no wait on the
    /// JavaScript thread).
    pub last_stats: Mutex<IndexStats>,
    /// The last count of each prefix asked for, for `count_by_prefix`
    /// while a writer holds the index.
    pub prefix_counts: Mutex<rustc_hash::FxHashMap<String, usize>>,
    /// `clear()`s queued and not yet done (`clear_queued`): every prefix
    /// counts 0 meanwhile, as after Mastra's synchronous clear.
    pub clears_pending: std::sync::atomic::AtomicUsize,
    /// The words of the last query `highlight()` was asked for: the search
    /// tool highlights each file it shows with one query, and a long query
    /// tokenized for each held the JavaScript thread.
    pub highlight_words: Mutex<Option<(String, Arc<rustc_hash::FxHashSet<String>>)>>,
    /// Woken by `destroy()`: every pending call settles at once.
    pub shutdown: tokio::sync::Notify,
    /// `persist`: the snapshot directory and what was indexed from files.
    pub persist: Option<Persist>,
    /// `watch`: file changes under `autoIndexPaths` reach the index.
    pub watch: bool,
    /// How much each file kind counts in BM25 (`fileKinds`; core's `index::kind`).
    pub kind_weights: crate::index::kind::KindWeights,
    /// `gitHistory`: commit messages per file as a ranking signal.
    pub git_history: bool,
    pub history: Mutex<HistoryState>,
    /// `rerank`: the user's reranker over the first results of every mode.
    pub reranker: Option<Arc<dyn RerankCall>>,
    /// How long the reranker may take before the first-stage order stands.
    pub rerank_timeout: std::time::Duration,
    /// The runtime the engine's background work runs on (the host's).
    pub runtime: tokio::runtime::Handle,
    /// The running watcher (after `init()`), stopped by `destroy()`.
    pub watcher: Mutex<Option<watch::Watcher>>,
    /// What `stats().watch` reports (lock order: `watcher`, then this).
    pub watch_state: Mutex<watch::WatchState>,
    /// Where file watches come from (the host's notifications).
    pub tree_watches: Arc<dyn host::TreeWatchFactory>,
    /// `grep()`: the trigram index of `basePath`, built by the first grep.
    pub grep: GrepSide,
    /// Where grep's folder watches come from (the host's notifications).
    pub grep_watches: Arc<dyn host::GrepWatchFactory>,
    /// Gives memory a build freed back to the system (the host's allocator).
    pub release_memory: fn(),
}

/// What a write or a rebuild reports (the host's `IndexReport`).
#[derive(Debug, Default)]
pub struct Outcome {
    pub report: crate::ingest::Report,
    pub elapsed: std::time::Duration,
    /// Texts sent to the embedder.
    pub embedded: usize,
    /// With `persist`: files taken from the snapshot as they were, read
    /// again, and removed since.
    pub reused: usize,
    pub reread: usize,
    pub removed: usize,
    pub warnings: Vec<String>,
}

impl Outcome {
    fn of(report: crate::ingest::Report, started: std::time::Instant) -> Outcome {
        Outcome { report, elapsed: started.elapsed(), ..Default::default() }
    }
}

/// A pause at a named point, for tests that force an interleaving of two
/// flows (`__test__/lock-order.test.mjs`): `WORKSPACE_SEARCH_TEST_PAUSE` =
/// `point:milliseconds`, read once per process. Unset (always, outside
/// those tests) it costs one load of a cached value.
pub fn test_pause(point: &str) {
    if let Some(ms) = test_pause_at(point) {
        std::thread::sleep(std::time::Duration::from_millis(ms));
    }
}

/// `test_pause` the first time the point is reached in this process only
/// (the watcher's thread, held once while a test overflows its queue).
pub fn test_pause_once(point: &str) {
    static DONE: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
    if let Some(ms) = test_pause_at(point).filter(|_| !DONE.swap(true, std::sync::atomic::Ordering::SeqCst)) {
        std::thread::sleep(std::time::Duration::from_millis(ms));
    }
}

/// How long `WORKSPACE_SEARCH_TEST_PAUSE` pauses at `point`, if there.
fn test_pause_at(point: &str) -> Option<u64> {
    static PAUSE: std::sync::OnceLock<Option<(String, u64)>> = std::sync::OnceLock::new();
    let pause = PAUSE.get_or_init(|| {
        let v = std::env::var("WORKSPACE_SEARCH_TEST_PAUSE").ok()?;
        let (at, ms) = v.split_once(':')?;
        Some((at.to_string(), ms.parse().ok()?))
    });
    pause.as_ref().filter(|(at, _)| at == point).map(|(_, ms)| *ms)
}

/// The default tokenizer, built once (workspaces without BM25 use it for
/// the line ranges of vector hits).
fn default_tokenizer() -> Arc<Tokenizer> {
    static DEFAULT: std::sync::OnceLock<Arc<Tokenizer>> = std::sync::OnceLock::new();
    DEFAULT.get_or_init(|| Arc::new(Tokenizer::default())).clone()
}

/// Runs CPU work (or work that waits on a lock) off the host's thread and
/// the async runtime; a panic becomes an error. Called from the engine's
/// flows only, which run on the engine's runtime (its blocking pool is the
/// current one there).
pub async fn blocking<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> Result<T> {
    tokio::task::spawn_blocking(move || std::panic::catch_unwind(AssertUnwindSafe(f)))
        .await
        .map_err(|e| Error::from_reason(format!("workspace-search internal error: {e}")))?
        .map_err(Error::from_panic)
}

impl Engine {
    /// Runs `f` with the index read-locked: here when the lock is free at
    /// once, else on a blocking thread, so that an async task never waits
    /// on a bulk write holding it (a tokio worker would wait with it).
    pub async fn read_index<T: Send + 'static>(
        self: &Arc<Self>,
        f: impl FnOnce(&Bm25Index) -> T + Send + 'static,
    ) -> Result<T> {
        if let Some(index) = self.index.try_read() {
            return Ok(f(&index));
        }
        let me = self.clone();
        blocking(move || f(&me.index.read())).await
    }

    /// `read_index` for writes: a save or a long search may hold the index.
    pub async fn write_index<T: Send + 'static>(
        self: &Arc<Self>,
        f: impl FnOnce(&mut Bm25Index) -> T + Send + 'static,
    ) -> Result<T> {
        if let Some(mut index) = self.index.try_write() {
            return Ok(f(&mut index));
        }
        let me = self.clone();
        blocking(move || f(&mut me.index.write())).await
    }
}

impl Engine {
    /// Applies a write that has no vector side, unless `destroy()` came
    /// first: the call was then settled as cut short, so it must not reach
    /// the index (nor destroy()'s save). Once it applies, `committed` says
    /// so: a `destroy()` meanwhile lets the call end as it will (the binding's
    /// race), rather than reject a write its save then keeps.
    pub(super) fn unless_destroyed<T>(&self, committed: &AtomicBool, apply: impl FnOnce() -> T) -> Result<T> {
        self.applied_unless_destroyed(committed, || {
            let applied = apply();
            if let Some(p) = &self.persist {
                p.changed(); // (before the count goes down: destroy()'s save then sees it)
            }
            applied
        })
    }

    /// `unless_destroyed` for a change that tells the snapshot itself
    /// whether it must be saved (a rebuild; a reconcile that found nothing
    /// changed must not rewrite it).
    pub(super) fn applied_unless_destroyed<T>(&self, committed: &AtomicBool, apply: impl FnOnce() -> T) -> Result<T> {
        {
            let _deciding = self.commits.lock();
            if self.is_destroyed() {
                return Err(self.not_ready());
            }
            committed.store(true, Ordering::SeqCst);
            self.applying.send_modify(|n| *n += 1);
        }
        // Counted down however `apply` ends (a panic included).
        struct Applied<'a>(&'a tokio::sync::watch::Sender<usize>);
        impl Drop for Applied<'_> {
            fn drop(&mut self) {
                self.0.send_modify(|n| *n -= 1);
            }
        }
        let _applied = Applied(&self.applying);
        Ok(apply())
    }

    /// Resolves once no committed write is applying (`destroy()`'s save
    /// must hold what such a write's resolved call promised).
    pub(super) async fn committed_applied(&self) {
        let mut applying = self.applying.subscribe();
        let _ = applying.wait_for(|&n| n == 0).await;
    }

    pub fn is_destroyed(&self) -> bool {
        self.destroyed.load(Ordering::SeqCst)
    }

    /// The index's statistics, or the last known ones while a writer holds
    /// the index.
    pub fn index_stats(&self) -> IndexStats {
        match self.index.try_read() {
            Some(index) => {
                let s = index.stats();
                *self.last_stats.lock() = s;
                s
            }
            None => *self.last_stats.lock(),
        }
    }

    /// Records the statistics before a long write takes the index (call
    /// off the JavaScript thread).
    fn remember_stats(&self) {
        let s = self.index.read().stats();
        *self.last_stats.lock() = s;
    }

    /// Documents whose id starts with `prefix` (synchronous, as Mastra's):
    /// tracked by the index after the first call, so O(1) from then on; the
    /// last known count while a writer holds the index.
    pub fn count_by_prefix(&self, prefix: &str) -> usize {
        if self.clears_pending.load(std::sync::atomic::Ordering::SeqCst) > 0 {
            return 0; // (writes queued after the clear land after it)
        }
        let counted = if self.keyword.is_none() {
            self.vectors.as_ref().map(|v| v.ledger.lock().count_prefix(prefix))
        } else if let Some(index) = self.index.try_read().filter(|ix| ix.tracks_prefix(prefix)) {
            Some(index.count_prefix(prefix))
        } else {
            self.index.try_write().map(|mut index| {
                index.track_prefix(prefix);
                index.count_prefix(prefix)
            })
        };
        let mut known = self.prefix_counts.lock();
        match counted {
            Some(n) => {
                // As many as the index tracks (each kept string is the caller's prefix).
                if known.len() >= crate::index::prefix::TRACKED && !known.contains_key(prefix) {
                    if let Some(k) = known.keys().next().cloned() {
                        known.remove(&k);
                    }
                }
                known.insert(prefix.to_string(), n);
                n
            }
            None => known.get(prefix).copied().unwrap_or(0),
        }
    }

    /// Byte ranges of the words of `text` that share a token with `query`
    /// (`Tokenizer::matching_words`), the query's tokens kept for the next call.
    pub fn highlight(&self, text: &str, query: &str) -> Vec<(usize, usize)> {
        let tokenizer = self.line_tokenizer();
        let words = {
            let mut last = self.highlight_words.lock();
            match &*last {
                Some((q, words)) if q == query => words.clone(),
                _ => {
                    let words = Arc::new(tokenizer.query_words(query));
                    *last = Some((query.to_string(), words.clone()));
                    words
                }
            }
        };
        tokenizer.words_matching(text, &words)
    }

    /// Marks the workspace destroyed and settles every pending call.
    pub fn shut_down(&self) {
        // The gate first: a call cut short below lets go of its place in the
        // write order, and the write after it must not take that turn.
        self.gate.close();
        {
            let _deciding = self.commits.lock();
            self.destroyed.store(true, Ordering::SeqCst);
        }
        *self.status.lock() = Lifecycle::Destroyed;
        self.shutdown.notify_waiters();
        // The history goes with the index (a read still running drops its answer).
        self.history.lock().current = None;
        self.shut_down_grep();
    }

    /// Resolves once the workspace is destroyed.
    pub async fn until_destroyed(&self) {
        loop {
            let woken = self.shutdown.notified();
            if self.destroyed.load(Ordering::SeqCst) {
                return;
            }
            woken.await;
        }
    }

    /// The error of a call cut short by `destroy()`; the binding turns it
    /// into a `WorkspaceNotReadyError` (`is_not_ready`).
    pub fn not_ready(&self) -> Error {
        Error::not_ready(&self.id)
    }

    /// Waits for `ticket`'s turn in the write order. After `destroy()` none
    /// comes (the gate is closed): the call is cut short before it writes
    /// anything, to the index or to the store.
    pub async fn turn(&self, ticket: &Ticket) -> Result<()> {
        ticket.turn().await.map_err(|_| self.not_ready())
    }

    /// A turn for a save: it writes neither the index nor the store (a
    /// hybrid search need not read again for it).
    pub async fn turn_to_save(&self, ticket: &Ticket) -> Result<()> {
        ticket.turn_without_writes().await.map_err(|_| self.not_ready())
    }

    /// A write's turn, once any postings it may change are here (a snapshot
    /// store's large index keeps them with the texts): a write that may
    /// touch any term of the index.
    pub async fn turn_to_change(self: &Arc<Self>, ticket: &Ticket) -> Result<()> {
        self.turn(ticket).await?;
        self.remote_postings_whole().await
    }

    pub fn has_search(&self) -> bool {
        self.keyword.is_some() || self.vectors.is_some()
    }

    fn emit(&self, phase: &str, done: usize, total: usize, path: Option<&str>) {
        if let Some(p) = &self.progress {
            p.emit(Progress { phase, done: done.min(total), total, path });
        }
    }

    /// Progress from many threads, at most about 100 events a phase.
    fn emit_throttled(&self, phase: &str, done: usize, total: usize, path: &str) {
        let step = (total / 100).max(1);
        if done.is_multiple_of(step) && done != total {
            self.emit(phase, done, total, Some(path));
        }
    }

    /// The last event of a phase, delivered before the caller's promise settles.
    async fn emit_final(&self, phase: &str, total: usize) {
        if let Some(p) = &self.progress {
            p.finish(Progress { phase, done: total, total, path: None }).await;
        }
    }
}
