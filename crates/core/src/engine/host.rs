//! What the engine calls out to: the host's code (for the Node.js binding,
//! the user's JavaScript). The binding implements each trait over its
//! callbacks; core drives every flow and decides what to do with each
//! answer. A failure comes back as `Error::host`, carrying the host's value.

use super::error::Result;
use crate::search::rerank::Candidate;
use serde_json::Value;
use std::future::Future;
use std::pin::Pin;

/// A future the host answers with, on any thread.
pub type HostFuture<'a, T> = Pin<Box<dyn Future<Output = Result<T>> + Send + 'a>>;

/// The user's embedder: one call embeds one group of texts (at most
/// `group_size()`), answering one vector per text. The engine checks the
/// count and the numbers, bounds the calls in flight and times them out.
pub trait EmbedCall: Send + Sync {
    fn group_size(&self) -> usize;
    /// `label` names the group in errors the host writes itself.
    fn embed<'a>(&'a self, texts: Vec<String>, label: &'a str) -> HostFuture<'a, Vec<Vec<f32>>>;
}

/// A vector store with Mastra's `MastraVector` methods, called by name with
/// Mastra's argument object (`{ indexName, vectors, metadata, ids }`, ...).
/// Answers `None` when the store has no such method.
pub trait StoreCall: Send + Sync {
    fn call<'a>(&'a self, method: &'a str, args: Value) -> HostFuture<'a, Option<Value>>;
}

/// The user's tokenizer: many texts in one call, tokens per text.
pub trait TokenizeCall: Send + Sync {
    fn tokenize(&self, texts: Vec<String>) -> HostFuture<'_, Vec<Vec<String>>>;
}

/// The user's reranker: scores for the candidates core picked
/// (`search::rerank`), in their order. `Ok(Err(why))`: it answered, but not
/// an array of numbers.
pub trait RerankCall: Send + Sync {
    /// How many results it sees at most (`rerankDepth`).
    fn depth(&self) -> usize;
    fn scores<'a>(
        &'a self,
        query: &'a str,
        candidates: Vec<Candidate>,
    ) -> HostFuture<'a, std::result::Result<Vec<f64>, String>>;
}

/// A step of a long flow, as the user's `onProgress` sees it.
pub struct Progress<'a> {
    pub phase: &'a str,
    pub done: usize,
    pub total: usize,
    pub path: Option<&'a str>,
}

/// Where progress goes: `emit` must not wait; `finish` resolves once the
/// last event of a phase was delivered (before the caller's promise settles).
pub trait ProgressSink: Send + Sync {
    fn emit(&self, p: Progress<'_>);
    fn finish(&self, p: Progress<'_>) -> Pin<Box<dyn Future<Output = ()> + Send + '_>>;
    /// As a flow ends: the first failure of the host's callback since the
    /// last `answered` (what it threw), which the flow then rejects with.
    fn answered(&self) -> HostFuture<'_, ()> {
        Box::pin(async { Ok(()) })
    }
}

/// The host's notifications for the folders of grep's kept walk
/// (`grep::tree`): it records what changed between two greps.
pub trait GrepWatch: Send {
    /// Returns once every change made before the call is recorded (`false`
    /// when that cannot be known in time: the grep then walks the disk).
    fn sync(&mut self) -> bool;
    /// What changed since the last call.
    fn take_changes(&mut self) -> crate::grep::tree::Changes;
    /// A watch was refused (a limit): the kept walk cannot be trusted.
    fn refused(&self) -> bool;
    fn as_dir_watch(&mut self) -> &mut dyn crate::grep::tree::DirWatch;
}

/// Starts a `GrepWatch` of a folder (`None`: none can be had; every grep walks the disk).
pub trait GrepWatchFactory: Send + Sync {
    fn watch(&self, base: &std::path::Path) -> Option<Box<dyn GrepWatch>>;
}

/// What the host's file watcher tells the engine (`engine::watch`).
pub enum WatchSignal {
    Changed(std::path::PathBuf),
    /// The path was removed or renamed away (the host's watches of it and
    /// of the folders below it went with it), whatever is there now.
    Removed(std::path::PathBuf),
    /// Events were lost (the system's queue overflowed).
    Rescan,
    /// A `.gitignore` changed: what the walk takes may differ anywhere.
    Rules,
    /// A watched directory itself was removed or renamed away.
    RootLost(std::path::PathBuf),
    /// A watch could not be added (`limit`: the system's watch limit).
    Failed {
        message: String,
        limit: bool,
    },
}

/// A folder the watcher could not watch.
#[derive(Debug)]
pub struct WatchRefusal {
    pub message: String,
    /// The system's watch limit (trying again would only fail again).
    pub limit: bool,
}

/// A running watch of folders; dropping it stops it.
pub trait TreeWatch: Send {
    fn watch(&mut self, dir: &std::path::Path, recursive: bool) -> std::result::Result<(), WatchRefusal>;
    fn unwatch(&mut self, dir: &std::path::Path);
}

/// Starts a watch whose events reach the engine as signals on `signals`:
/// only changes count (not reads), for paths under the `roots` (or the
/// folders above them: their removal), never under `skip` (the snapshot's
/// folder); a `.gitignore` anywhere under `base` is `Rules`
/// (`ingest::watch::{changes_rules, concerns}` decide).
pub trait TreeWatchFactory: Send + Sync {
    fn start(
        &self,
        roots: Vec<crate::ingest::watch::WatchRoot>,
        base: std::path::PathBuf,
        skip: Option<std::path::PathBuf>,
        signals: tokio::sync::mpsc::UnboundedSender<WatchSignal>,
    ) -> std::result::Result<Box<dyn TreeWatch>, String>;

    /// Whether a watch of a folder watches that folder alone, so that the
    /// engine watches each folder the index's walk enters rather than a
    /// root recursively (inotify: a recursive watch is one per folder
    /// anyway, ignored ones included).
    fn per_folder(&self) -> bool {
        false
    }
}

/// An object a snapshot store holds, with its version tag.
pub struct StoredObject {
    pub bytes: HostBytes,
    pub etag: String,
}

/// Bytes a store answered with, read where the host keeps them (the
/// binding's are a JavaScript Buffer): a large tenant's parts are tens of
/// MB, which a copy would move into fresh memory before anything unpacks
/// them.
pub struct HostBytes(Box<dyn AsRef<[u8]> + Send + Sync>);

impl HostBytes {
    pub fn new(bytes: impl AsRef<[u8]> + Send + Sync + 'static) -> HostBytes {
        HostBytes(Box::new(bytes))
    }
}

impl From<Vec<u8>> for HostBytes {
    fn from(bytes: Vec<u8>) -> HostBytes {
        HostBytes::new(bytes)
    }
}

impl std::ops::Deref for HostBytes {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        (*self.0).as_ref()
    }
}

/// When a `put` may write.
pub enum PutCondition {
    /// Only over this version (`If-Match`).
    IfMatch(String),
    /// Only where there is none yet (`If-None-Match: *`).
    IfNoneMatch,
}

/// What a `put` did.
pub enum PutOutcome {
    Written {
        etag: String,
    },
    /// Its condition did not hold: another writer was first.
    Conflict,
}

/// Object storage for snapshots (`persist: { store }`, e.g. S3): keys are
/// the engine's (`persist::remote`), below the tenant's prefix the host
/// adds. A failure is the host's error; a missing key is `None`.
pub trait SnapshotStoreCall: Send + Sync {
    fn get<'a>(&'a self, key: &'a str) -> HostFuture<'a, Option<StoredObject>>;
    /// The bytes `range` of the object (`[start, end)`). A store may answer
    /// the whole object instead: the engine takes the range out of it.
    fn get_range<'a>(&'a self, key: &'a str, range: std::ops::Range<u64>) -> HostFuture<'a, Option<StoredObject>>;
    fn put<'a>(&'a self, key: &'a str, bytes: Vec<u8>, condition: Option<PutCondition>) -> HostFuture<'a, PutOutcome>;
    /// Deletes the object (gone already is done); `false`: the store has
    /// no way to (its parts are then kept).
    fn delete<'a>(&'a self, _key: &'a str) -> HostFuture<'a, bool> {
        Box::pin(async { Ok(false) })
    }
}
