//! Building a `Workspace` from its checked options: the host's parts core's
//! engine is made of (the embedder, the vector store: embedded, a
//! LocalVector or the user's; the user's tokenizer through lib/runtime.js,
//! reranker and progress), handed to `Engine::new`, which decides the rest.

use crate::host::{JsProgress, JsTokenize};
use crate::js::*;
use crate::local_vector::LocalVector;
use crate::options::{self, Bm25Options, WorkspaceOptions};
use crate::snapshot_store::JsSnapshotStore;
use crate::store::JsStore;
use crate::types::ProgressEvent;
use crate::workspace::{TokenizeRef, Workspace};
use napi::bindgen_prelude::*;
use parking_lot::RwLock;
use std::sync::Arc;
use workspace_search_core::engine::host::{ProgressSink, RerankCall, SnapshotStoreCall, TokenizeCall};
use workspace_search_core::engine::{
    Bm25Config, ConfigError, Engine, EngineConfig, HostParts, MastraStore, PartCache, Place, Store, StoreConfig,
    TokenizerIdentity, VectorConfig,
};
use workspace_search_core::persist;
use workspace_search_core::vectors::store::VectorStore;

impl Workspace {
    pub(crate) fn build(env: &Env, options: Option<Unknown>) -> Checked<Self> {
        let o = options::workspace_options(env, options)?;
        let config_error = |ConfigError { message, workspace_id }| Fail::Config { message, workspace_id };
        // Who it is and where it keeps its snapshot, before any of the user's code runs.
        let place = Place::new(o.id.clone(), o.base_path.as_deref(), &o.persist, o.snapshot_store.is_some())
            .map_err(config_error)?;
        if o.vector_store.is_some() && o.embedder.is_none() {
            return Err(Fail::Config { message: "vectorStore requires an embedder".into(), workspace_id: None });
        }
        let vectors = match &o.embedder {
            None => None,
            Some(e) => {
                let index_name = place.index_name(o.search_index_name.clone()).map_err(config_error)?;
                let embedder = crate::embedder::from_js(env, e, o.embed_concurrency, o.embed_timeout_ms)?;
                let timeout = std::time::Duration::from_millis(o.vector_store_timeout_ms);
                let store = vector_store(env, o.vector_store.as_ref(), timeout)?;
                Some(VectorConfig { embedder, store, index_name, store_given: o.vector_store.is_some() })
            }
        };
        let snapshot_store = o.snapshot_store.as_ref().map(|s| snapshot_store_of(env, s)).transpose()?;
        let (tokenize, line_tokenizer) = match o.js_tokenizer.as_ref().map(|f| tokenize_of(env, f)).transpose()? {
            Some((call, lines)) => (Some(call), Some(lines)),
            None => (None, None),
        };
        let reranker = match &o.rerank {
            Some(f) => {
                Some(Arc::new(crate::reranker::Reranker::from_js(env, f, o.rerank_depth)?) as Arc<dyn RerankCall>)
            }
            None => None,
        };
        let progress = o.on_progress.as_ref().map(|f| progress_of(env, f)).transpose()?;
        let js_identity = match &o.bm25 {
            Some(_) => tokenizer_identity_of(env, &o)?,
            None => None,
        };
        let bm25 =
            o.bm25.map(|Bm25Options { params, tokenizer }| Bm25Config { tokenizer, params, js: tokenize, js_identity });
        let config = EngineConfig {
            place,
            base_path: o.base_path,
            read_only: o.read_only,
            auto_index_paths: o.auto_index_paths,
            chunking: o.chunking,
            respect_gitignore: o.respect_gitignore,
            max_file_size: o.max_file_size,
            bm25,
            vectors,
            embedder_id: o.embedder_id,
            snapshot_store,
            watch: o.watch,
            file_kinds: o.file_kinds,
            git_history: o.git_history,
            reranker,
            rerank_timeout: std::time::Duration::from_millis(o.rerank_timeout_ms),
            progress,
            host: host_parts(),
        };
        let engine = Arc::new(Engine::new(config));
        crate::env_cleanup::shut_down_with(env, &engine)?;
        Ok(Workspace { engine, line_tokenizer })
    }
}

/// The user's snapshot store, its timeout and local cache, as the engine calls them.
fn snapshot_store_of(env: &Env, s: &options::StoreOption) -> Checked<StoreConfig> {
    let key = JsSnapshotStore::cache_key_of(&s.store)?;
    Ok(StoreConfig {
        store: Arc::new(JsSnapshotStore::from_js(env, &s.store)?) as Arc<dyn SnapshotStoreCall>,
        timeout: std::time::Duration::from_millis(s.timeout_ms),
        cache: s.cache_dir.clone().map(|dir| PartCache { dir, max_bytes: s.cache_max_bytes, key }),
        retain: std::time::Duration::from_millis(s.retain_ms),
    })
}

/// The user's tokenizer, called with many texts at once (lib's `tokenizeMany`):
/// for the engine, and for `highlight()` on the JavaScript thread.
fn tokenize_of(env: &Env, user_fn: &Function<Unknown, Unknown>) -> Checked<(Arc<dyn TokenizeCall>, TokenizeRef)> {
    let batched = runtime_fn(env, "tokenizeMany")?.call(user_fn.to_unknown())?;
    // SAFETY: lib's tokenizeMany returns a function (of string[] to string[][]).
    let f: Function<Vec<String>, Vec<Vec<String>>> = unsafe { batched.cast()? };
    let on_thread = f.create_ref()?;
    let f = f.build_threadsafe_function().weak::<true>().build()?;
    Ok((Arc::new(JsTokenize(f)) as Arc<dyn TokenizeCall>, on_thread))
}

/// The user's `onProgress`, through lib's `progressCaller`, which answers
/// `{ call(event), answered() }`: only their argument and return types are
/// named here.
fn progress_of(env: &Env, f: &Function<Unknown, Unknown>) -> Checked<Arc<dyn ProgressSink>> {
    let caller: Object = runtime_fn(env, "progressCaller")?.call(f.to_unknown())?.coerce_to_object()?;
    let call: Function<ProgressEvent, napi::threadsafe_function::UnknownReturnValue> =
        caller.get_named_property("call")?;
    let answered: Function<(), napi::threadsafe_function::UnknownReturnValue> =
        caller.get_named_property("answered")?;
    Ok(Arc::new(JsProgress {
        call: call.build_threadsafe_function().weak::<true>().build()?,
        answered: answered.build_threadsafe_function().weak::<true>().build()?,
    }) as Arc<dyn ProgressSink>)
}

/// The store a workspace writes: the embedded one, a `LocalVector`'s, or the user's.
fn vector_store(env: &Env, given: Option<&Unknown>, timeout: std::time::Duration) -> Checked<Store> {
    Ok(match given {
        None => Store::Local(Arc::new(RwLock::new(VectorStore::default()))),
        Some(s) if LocalVector::instance_of(env, s)? => {
            // SAFETY: `s` is a live value of this env; `from_napi_value`
            // unwraps it and fails (no undefined behaviour) where nothing is
            // wrapped: `instance_of` follows the prototype chain, which a
            // Proxy of a LocalVector or `Object.create(localVector)` passes.
            let lv: Result<ClassInstance<LocalVector>> = unsafe { ClassInstance::from_napi_value(env.raw(), s.raw()) };
            let lv = lv.map_err(|_| {
                Fail::Type(
                    "vectorStore: a LocalVector wrapped in a Proxy, or an object made from one (Object.create), \
                     holds no store; pass the LocalVector itself"
                        .into(),
                )
            })?;
            Store::Local(lv.store.clone())
        }
        Some(s) => Store::Mastra(MastraStore::new(Arc::new(JsStore::from_js(env, s)?), timeout)),
    })
}

/// What a snapshot knows the user's tokenizer by: its `tokenizerId`, else
/// (when a snapshot or the watcher needs to know) what it does, tried on
/// core's probe texts here, once, after every other option was checked:
/// its source text alone is the same for closures and bound functions that differ.
fn tokenizer_identity_of(env: &Env, o: &WorkspaceOptions) -> Checked<Option<TokenizerIdentity>> {
    let remembers = o.persist.is_some() || o.snapshot_store.is_some() || o.watch;
    Ok(match (&o.js_tokenizer, &o.tokenizer_id) {
        (_, Some(id)) => Some(TokenizerIdentity::Id(id.clone())),
        (Some(f), None) if remembers => {
            Some(TokenizerIdentity::Behaviour(tokenizer_identity(env, &f.to_unknown(), persist::TOKENIZER_PROBES)?))
        }
        _ => None,
    })
}

/// The parts of the binding every engine uses.
fn host_parts() -> HostParts {
    HostParts {
        runtime: napi::bindgen_prelude::within_runtime_if_available(tokio::runtime::Handle::current),
        release_memory: crate::release_memory,
        grep_watches: Arc::new(crate::grep::NotifyGrepWatches),
        tree_watches: Arc::new(crate::watch::NotifyTreeWatches),
    }
}
