//! A workspace's engine from its options (checked by the host) and the
//! host's parts: its id, where its snapshot lives, its vector index's name
//! and the fingerprint of what the index depends on are decided here.

use super::host::{GrepWatchFactory, ProgressSink, RerankCall, TokenizeCall, TreeWatchFactory};
use super::remote::StoreConfig;
use super::{Embedder, Engine, Keyword, Lifecycle, Persist, RemoteSnapshots, Store, VectorSide};
use crate::analysis::tokenizer::{Tokenizer, TokenizerConfig};
use crate::index::gate::Gate;
use crate::index::id_base::IdBase;
use crate::index::kind::KindWeights;
use crate::index::{Bm25Index, Bm25Params};
use crate::ingest::ChunkOptions;
use crate::persist::{self, JsTokenizer};
use crate::vectors::index_name;
use parking_lot::{Mutex, RwLock};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// BM25 search: the tokenizer and the scoring parameters.
pub struct Bm25Config {
    pub tokenizer: TokenizerConfig,
    pub params: Bm25Params,
    /// A user tokenizer (slow path), and what a snapshot knows it by.
    pub js: Option<Arc<dyn TokenizeCall>>,
    pub js_identity: Option<TokenizerIdentity>,
}

/// What a snapshot knows a user tokenizer by (`persist::JsTokenizer`).
pub enum TokenizerIdentity {
    /// `tokenizerId`, as given.
    Id(String),
    /// What it does on `persist::TOKENIZER_PROBES` (the host ran it).
    Behaviour(String),
}

/// Vector search: the user's embedder and the store.
pub struct VectorConfig {
    pub embedder: Embedder,
    pub store: Store,
    /// The index's name (`Place::index_name`).
    pub index_name: String,
    /// A `vectorStore` was given (others may write it too).
    pub store_given: bool,
}

/// The host's parts every workspace uses.
pub struct HostParts {
    pub runtime: tokio::runtime::Handle,
    pub release_memory: fn(),
    pub grep_watches: Arc<dyn GrepWatchFactory>,
    pub tree_watches: Arc<dyn TreeWatchFactory>,
}

pub struct EngineConfig {
    pub place: Place,
    pub base_path: Option<PathBuf>,
    pub read_only: bool,
    pub auto_index_paths: Vec<String>,
    pub chunking: ChunkOptions,
    pub respect_gitignore: bool,
    pub max_file_size: u64,
    pub bm25: Option<Bm25Config>,
    pub vectors: Option<VectorConfig>,
    pub embedder_id: Option<String>,
    /// `persist: { store }`: a snapshot store and how it is used.
    pub snapshot_store: Option<StoreConfig>,
    pub watch: bool,
    pub file_kinds: KindWeights,
    pub git_history: bool,
    pub reranker: Option<Arc<dyn RerankCall>>,
    pub rerank_timeout: Duration,
    pub progress: Option<Arc<dyn ProgressSink>>,
    pub host: HostParts,
}

/// Options that cannot make a workspace.
#[derive(Debug)]
pub struct ConfigError {
    pub message: String,
    pub workspace_id: Option<String>,
}

fn generated_id() -> String {
    use std::time::{SystemTime, UNIX_EPOCH};
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let now = SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_millis() as u64).unwrap_or(0);
    let base36 = |mut n: u64, width: usize| {
        const DIGITS: &[u8] = b"0123456789abcdefghijklmnopqrstuvwxyz";
        let mut s = Vec::new();
        while n > 0 || s.len() < width {
            s.push(DIGITS[(n % 36) as usize]);
            n /= 36;
        }
        s.reverse();
        String::from_utf8(s).unwrap()
    };
    // splitmix64 over time, a counter and the pid: unique per process, no RNG crate.
    let mut x = now
        ^ COUNTER.fetch_add(1, Ordering::Relaxed).wrapping_mul(0x9E37_79B9_7F4A_7C15)
        ^ (std::process::id() as u64) << 32;
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^= x >> 31;
    format!("ws-{}-{}", base36(now, 1), base36(x % 36u64.pow(6), 6))
}

/// Where `persist: true` keeps the index (`persist::default_dir`).
fn default_persist_dir(base: Option<&std::path::Path>, id: Option<&str>) -> Result<PathBuf, ConfigError> {
    let fail = |message: &str| ConfigError { message: message.into(), workspace_id: id.map(str::to_string) };
    let Some(base) = base else {
        return Err(fail("persist: true needs a filesystem with a basePath; give persist: { dir } otherwise"));
    };
    persist::default_dir(base, id)
        .ok_or_else(|| fail("persist: true found no cache directory on this system; give persist: { dir }"))
}

/// Who a workspace is and where its snapshot lives, decided first (before
/// any of the user's code runs): its id, and its snapshot's folder.
pub struct Place {
    pub id: String,
    pub persist_dir: Option<PathBuf>,
}

impl Place {
    /// `id` as given (else, with a snapshot, one derived from its folder,
    /// so that it stays the same across starts; else a new one), and
    /// `persist` (`None` off, `Some(None)` the default folder).
    /// With a snapshot store (`store`) the id is required: it names the
    /// tenant's vector index alike on every server.
    pub fn new(
        id: Option<String>,
        base: Option<&Path>,
        persist: &Option<Option<PathBuf>>,
        store: bool,
    ) -> Result<Place, ConfigError> {
        if store && id.is_none() {
            return Err(ConfigError {
                message: "persist.store needs an id (the tenant's): every server attaching it must name its vector index alike".into(),
                workspace_id: None,
            });
        }
        let persist_dir = match persist {
            None => None,
            Some(Some(dir)) => Some(dir.clone()),
            Some(None) => Some(default_persist_dir(base, id.as_deref())?),
        };
        if let (Some(dir), Some(base)) = (&persist_dir, base) {
            if persist::holds_base(dir, base) {
                return Err(ConfigError {
                    message: format!(
                        "persist.dir ({}) is basePath or a folder that holds it: the snapshot would sit among the files it indexes; give a folder of its own (e.g. a subfolder of basePath, or persist: true)",
                        dir.display()
                    ),
                    workspace_id: id,
                });
            }
        }
        // A persisted workspace keeps its id (and so its vector index name) across starts.
        let id = match (id, &persist_dir) {
            (Some(id), _) => id,
            (None, Some(dir)) => persist::stable_id(dir),
            (None, None) => generated_id(),
        };
        Ok(Place { id, persist_dir })
    }

    /// The vector index's name: `searchIndexName`, else one from the id.
    pub fn index_name(&self, given: Option<String>) -> Result<String, ConfigError> {
        let name = given.unwrap_or_else(|| index_name::default_for(&self.id));
        index_name::validate(&name)
            .map_err(|e| ConfigError { message: e.to_string(), workspace_id: Some(self.id.clone()) })?;
        Ok(name)
    }
}

/// What a snapshot depends on (the tokenizer, BM25 parameters, chunking,
/// and where the vectors are): a snapshot made with another is rebuilt.
/// `absolute_entries`: an `autoIndexPaths` entry spells basePath, whose
/// files' path fields held basePath's own folders before 2026-12-07.
fn fingerprint_of(
    bm25: Option<&Bm25Config>,
    chunking: ChunkOptions,
    vectors: Option<&VectorSide>,
    absolute_entries: bool,
) -> String {
    let tokenizer_config = bm25.map(|b| b.tokenizer.clone());
    let params = bm25.map(|b| b.params).unwrap_or_default();
    let identity = bm25.and_then(|b| b.js_identity.as_ref()).map(|i| match i {
        TokenizerIdentity::Id(id) => JsTokenizer::Id(id),
        TokenizerIdentity::Behaviour(b) => JsTokenizer::Behaviour(b),
    });
    let vectors_desc = match vectors {
        None => "none".to_string(),
        Some(v) if v.store.is_local() => format!("{} in the embedded store", v.index_name),
        Some(v) => format!("{} in the vector store given", v.index_name),
    };
    format!(
        "{}{}{}{vectors_desc}",
        persist::fingerprint(tokenizer_config.as_ref(), params, chunking, identity),
        if absolute_entries { "; paths from basePath down" } else { "" },
        persist::VECTORS_PART
    )
}

/// basePath as ids spell it: as given, and canonical where it exists
/// (read again at each `init()`: `Engine::id_base`).
pub(super) fn id_base_of(base: Option<&Path>) -> IdBase {
    let Some(base) = base else { return IdBase::default() };
    match base.canonicalize() {
        Ok(canonical) => IdBase::of(&[base, &canonical]),
        Err(_) => IdBase::of(&[base]),
    }
}

/// An empty index reading its documents' paths from basePath (`base`)
/// down (`.gitattributes` is read at `init()`).
fn index_under(params: Bm25Params, base: IdBase) -> Bm25Index {
    let mut index = Bm25Index::new(params);
    index.set_path_rules(base, None);
    index
}

impl Engine {
    pub fn new(c: EngineConfig) -> Engine {
        let Place { id, persist_dir } = c.place;
        let vectors = c.vectors.map(|v| VectorSide {
            embedder: v.embedder,
            store: v.store,
            index_name: v.index_name,
            shared: v.store_given,
            upserted: AtomicBool::new(false),
            ledger: Mutex::default(),
            forgotten_before_load: Mutex::default(),
        });
        let params = c.bm25.as_ref().map(|b| b.params).unwrap_or_default();
        let id_base = id_base_of(c.base_path.as_deref());
        let persist = match (persist_dir, c.watch, c.snapshot_store) {
            (None, false, None) => None,
            (dir, _, store) => {
                let absolute_entries = c.auto_index_paths.iter().any(|e| id_base.spells_base(e));
                let fingerprint = fingerprint_of(c.bm25.as_ref(), c.chunking, vectors.as_ref(), absolute_entries);
                let remote = store.map(|s| RemoteSnapshots::new(s, id.clone()));
                Some(Persist::new(dir, remote, fingerprint, c.embedder_id))
            }
        };
        let keyword = c.bm25.map(|b| Keyword { tokenizer: Arc::new(Tokenizer::new(b.tokenizer)), js: b.js });
        let index = index_under(params, id_base);
        Engine {
            id,
            keyword,
            vectors,
            base_path: c.base_path,
            read_only: c.read_only,
            auto_index_paths: c.auto_index_paths,
            chunking: c.chunking,
            respect_gitignore: c.respect_gitignore,
            max_file_size: c.max_file_size,
            progress: c.progress,
            index: RwLock::new(index),
            gate: Arc::new(Gate::default()),
            status: Mutex::new(Lifecycle::Pending),
            destroyed: AtomicBool::new(false),
            destroying: Mutex::default(),
            commits: Default::default(),
            applying: tokio::sync::watch::Sender::new(0),
            last_stats: Mutex::default(),
            prefix_counts: Mutex::default(),
            clears_pending: Default::default(),
            highlight_words: Mutex::default(),
            shutdown: tokio::sync::Notify::new(),
            persist,
            watch: c.watch,
            kind_weights: c.file_kinds,
            git_history: c.git_history,
            history: Mutex::default(),
            reranker: c.reranker,
            rerank_timeout: c.rerank_timeout,
            runtime: c.host.runtime,
            grep: Default::default(),
            grep_watches: c.host.grep_watches,
            watcher: Mutex::new(None),
            watch_state: Mutex::default(),
            tree_watches: c.host.tree_watches,
            release_memory: c.host.release_memory,
        }
    }
}
