//! Building a `Workspace` from its checked options: the embedder, the
//! vector store (embedded, a LocalVector, or the user's), the tokenizer
//! (built in, or the user's through lib/runtime.js) and the initial state.

use crate::host::{JsProgress, JsTokenize};
use crate::js::*;
use crate::local_vector::LocalVector;
use crate::options::{self, Bm25Options};
use crate::store::JsStore;
use crate::types::ProgressEvent;
use crate::workspace::Workspace;
use napi::bindgen_prelude::*;
use parking_lot::{Mutex, RwLock};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use workspace_search_core::analysis::tokenizer::Tokenizer;
use workspace_search_core::engine::{Engine, Keyword, Lifecycle, MastraStore, Persist, Store, VectorSide};
use workspace_search_core::index::gate::Gate;
use workspace_search_core::index::Bm25Index;
use workspace_search_core::persist::{self, JsTokenizer};
use workspace_search_core::vectors::index_name;
use workspace_search_core::vectors::store::VectorStore;

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
fn default_persist_dir(base: Option<&std::path::Path>, id: Option<&str>) -> Checked<std::path::PathBuf> {
    let Some(base) = base else {
        return Err(Fail::Config {
            message: "persist: true needs a filesystem with a basePath; give persist: { dir } otherwise".into(),
            workspace_id: id.map(str::to_string),
        });
    };
    persist::default_dir(base, id).ok_or_else(|| Fail::Config {
        message: "persist: true found no cache directory on this system; give persist: { dir }".into(),
        workspace_id: id.map(str::to_string),
    })
}

impl Workspace {
    pub(crate) fn build(env: &Env, options: Option<Unknown>) -> Checked<Self> {
        let o = options::workspace_options(env, options)?;
        let explicit_id = o.id.clone();
        let persist_dir = match &o.persist {
            None => None,
            Some(Some(dir)) => Some(dir.clone()),
            Some(None) => Some(default_persist_dir(o.base_path.as_deref(), explicit_id.as_deref())?),
        };
        if let (Some(dir), Some(base)) = (&persist_dir, &o.base_path) {
            if persist::holds_base(dir, base) {
                return Err(Fail::Config {
                    message: format!(
                        "persist.dir ({}) is basePath or a folder that holds it: the snapshot would sit among the files it indexes; give a folder of its own (e.g. a subfolder of basePath, or persist: true)",
                        dir.display()
                    ),
                    workspace_id: explicit_id.clone(),
                });
            }
        }
        // A persisted workspace keeps its id (and so its vector index name) across starts.
        let id = match (o.id, &persist_dir) {
            (Some(id), _) => id,
            (None, Some(dir)) => persist::stable_id(dir),
            (None, None) => generated_id(),
        };
        if o.vector_store.is_some() && o.embedder.is_none() {
            return Err(Fail::Config { message: "vectorStore requires an embedder".into(), workspace_id: None });
        }
        let vectors = match &o.embedder {
            None => None,
            Some(e) => {
                let index_name = o.search_index_name.clone().unwrap_or_else(|| index_name::default_for(&id));
                index_name::validate(&index_name)
                    .map_err(|e| Fail::Config { message: e.to_string(), workspace_id: Some(id.clone()) })?;
                let embedder = crate::embedder::from_js(e, o.embed_concurrency, o.embed_timeout_ms)?;
                let store = match &o.vector_store {
                    // No store: the embedded one.
                    None => Store::Local(Arc::new(RwLock::new(VectorStore::default()))),
                    Some(s) if LocalVector::instance_of(env, s)? => {
                        // SAFETY: `instance_of` just checked that `s` wraps a LocalVector.
                        let lv: ClassInstance<LocalVector> =
                            unsafe { ClassInstance::from_napi_value(env.raw(), s.raw())? };
                        Store::Local(lv.store.clone())
                    }
                    Some(s) => Store::Mastra(MastraStore::new(Arc::new(JsStore::from_js(env, s)?))),
                };
                Some(VectorSide {
                    embedder,
                    store,
                    index_name,
                    shared: o.vector_store.is_some(),
                    upserted: AtomicBool::new(false),
                    ledger: Mutex::default(),
                })
            }
        };
        let tokenizer_config = o.bm25.as_ref().map(|b| b.tokenizer.clone());
        let (keyword, params) = match o.bm25 {
            Some(Bm25Options { params, tokenizer }) => {
                let js = match o.js_tokenizer {
                    Some(user_fn) => {
                        let batched = runtime_fn(env, "tokenizeMany")?.call(user_fn.to_unknown())?;
                        // SAFETY: lib's tokenizeMany returns a function (of string[] to string[][]).
                        let f: Function<Vec<String>, Vec<Vec<String>>> = unsafe { batched.cast()? };
                        let f = f.build_threadsafe_function().weak::<true>().build()?;
                        Some(Arc::new(JsTokenize(f)) as Arc<dyn workspace_search_core::engine::host::TokenizeCall>)
                    }
                    None => None,
                };
                (Some(Keyword { tokenizer: Arc::new(Tokenizer::new(tokenizer)), js }), params)
            }
            None => (None, Default::default()),
        };
        let reranker = match &o.rerank {
            Some(f) => Some(Arc::new(crate::reranker::Reranker::from_js(f, o.rerank_depth)?)
                as Arc<dyn workspace_search_core::engine::host::RerankCall>),
            None => None,
        };
        let progress = match o.on_progress {
            Some(f) => {
                // SAFETY: `f` is a function (checked when the options were read);
                // only its argument and return types are named here.
                let f: Function<ProgressEvent, napi::threadsafe_function::UnknownReturnValue> =
                    unsafe { f.to_unknown().cast()? };
                let f = f.build_threadsafe_function().weak::<true>().build()?;
                Some(Arc::new(JsProgress(f)) as Arc<dyn workspace_search_core::engine::host::ProgressSink>)
            }
            None => None,
        };
        let persist = match (persist_dir, o.watch) {
            (None, false) => None,
            (dir, _) => {
                // A user tokenizer is known by its tokenizerId, else by what it
                // does (tried on core's probe texts here, once): its source text
                // alone is the same for closures and bound functions that differ.
                let behaviour = match (o.js_tokenizer, &o.tokenizer_id) {
                    (Some(f), None) => Some(tokenizer_identity(env, &f.to_unknown(), persist::TOKENIZER_PROBES)?),
                    _ => None,
                };
                let js_tokenizer = match (&o.tokenizer_id, &behaviour) {
                    (Some(id), _) => Some(JsTokenizer::Id(id)),
                    (None, Some(b)) => Some(JsTokenizer::Behaviour(b)),
                    (None, None) => None,
                };
                let vectors_desc = match &vectors {
                    None => "none".to_string(),
                    Some(v) if v.store.is_local() => format!("{} in the embedded store", v.index_name),
                    Some(v) => format!("{} in the vector store given", v.index_name),
                };
                let fingerprint = format!(
                    "{}; vectors: {vectors_desc}",
                    persist::fingerprint(tokenizer_config.as_ref(), params, o.chunking, js_tokenizer)
                );
                Some(Persist::new(dir, fingerprint, o.embedder_id.clone()))
            }
        };
        let runtime = napi::bindgen_prelude::within_runtime_if_available(tokio::runtime::Handle::current);
        let engine = Engine {
            id,
            keyword,
            vectors,
            base_path: o.base_path,
            read_only: o.read_only,
            auto_index_paths: o.auto_index_paths,
            chunking: o.chunking,
            respect_gitignore: o.respect_gitignore,
            max_file_size: o.max_file_size,
            progress,
            index: RwLock::new(Bm25Index::new(params)),
            gate: Arc::new(Gate::default()),
            status: Mutex::new(Lifecycle::Pending),
            destroyed: AtomicBool::new(false),
            last_stats: Mutex::default(),
            prefix_counts: Mutex::default(),
            shutdown: tokio::sync::Notify::new(),
            persist,
            watch: o.watch,
            kind_weights: o.file_kinds,
            git_history: o.git_history,
            history: Mutex::default(),
            reranker,
            rerank_timeout: std::time::Duration::from_millis(o.rerank_timeout_ms),
            runtime,
            grep: Default::default(),
            grep_watches: Arc::new(crate::grep::NotifyGrepWatches),
            watcher: Mutex::new(None),
            watch_state: Mutex::default(),
            tree_watches: Arc::new(crate::watch::NotifyTreeWatches),
            release_memory: crate::release_memory,
        };
        Ok(Workspace { engine: Arc::new(engine) })
    }
}
