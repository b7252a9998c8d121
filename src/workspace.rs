//! The `Workspace` class: checks its inputs on the JavaScript thread, takes
//! a place in the write order, and hands the work to engine.rs.

use crate::embedder::Embedder;
use crate::engine::{blocking, panic_error, DocArgs, Inner, Keyword, Lifecycle, ManyOutcome, VectorSide};
use crate::js::*;
use crate::local_vector::LocalVector;
use crate::options::{self, Bm25Options};
use crate::store::{JsStore, Store};
use crate::types::*;
use futures::FutureExt;
use napi::bindgen_prelude::*;
use napi_derive::napi;
use parking_lot::{Mutex, RwLock};
use std::panic::AssertUnwindSafe;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Instant;
use workspace_search_core::analysis::tokenizer::Tokenizer;
use workspace_search_core::index::gate::Gate;
use workspace_search_core::index::Bm25Index;
use workspace_search_core::search::Mode;
use workspace_search_core::vectors::index_name;
use workspace_search_core::vectors::store::VectorStore;

/// Mastra-compatible workspace search: BM25, vector and hybrid search over
/// files and documents, run natively.
#[napi]
pub struct Workspace {
    inner: Arc<Inner>,
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

/// Spawns `fut` as a promise: a panic inside becomes a rejection, and
/// `destroy()` settles it at once with `WorkspaceNotReadyError` (the work is
/// dropped: its place in the write order is released, nothing more reaches
/// the user's store).
fn spawn<'e, T, F>(env: &'e Env, inner: &Arc<Inner>, fut: F) -> Result<PromiseRaw<'e, T>>
where
    T: 'static + Send + ToNapiValue,
    F: 'static + Send + std::future::Future<Output = Result<T>>,
{
    env.spawn_future_with_callback(raced(inner.clone(), fut), |env, result| {
        result.map_err(|(e, status)| js_error(env, e, status))
    })
}

/// A call's failure, and the status to report when `destroy()` cut it short.
type Cut = (napi::Error, Option<&'static str>);

/// `fut` with panics caught, raced against `destroy()`.
async fn raced<T>(
    inner: Arc<Inner>,
    fut: impl std::future::Future<Output = Result<T>>,
) -> Result<std::result::Result<T, Cut>> {
    let work = std::pin::pin!(catch_panics(fut));
    let stop = std::pin::pin!(inner.until_destroyed());
    Ok(match futures::future::select(work, stop).await {
        futures::future::Either::Left((result, _)) => result.map_err(|e| (e, None)),
        futures::future::Either::Right(_) => Err((inner.not_ready(), Some(inner.status.lock().as_str()))),
    })
}

/// The JavaScript error a failed call rejects with: `WorkspaceNotReadyError`
/// for a call cut short by `destroy()`, else the error as it was thrown.
fn js_error(env: &Env, e: napi::Error, status: Option<&str>) -> napi::Error {
    let fail = match status {
        Some(status) if crate::engine::is_not_ready(&e) => {
            Fail::NotReady { workspace_id: e.reason.clone(), status: status.to_string() }
        }
        _ => Fail::Napi(e),
    };
    fail.throw(env)
}

/// `fut`, with a panic inside turned into an error.
async fn catch_panics<T>(fut: impl std::future::Future<Output = Result<T>>) -> Result<T> {
    match AssertUnwindSafe(fut).catch_unwind().await {
        Ok(r) => r,
        Err(panic) => Err(panic_error(panic)),
    }
}

/// Keeps the last document of each path (as Mastra de-duplicates), in order.
fn last_of_each_path(docs: Vec<DocArgs>) -> Vec<DocArgs> {
    let mut seen = rustc_hash::FxHashSet::with_capacity_and_hasher(docs.len(), Default::default());
    let keep: Vec<bool> = docs.iter().rev().map(|d| seen.insert(d.id.as_str())).collect();
    if keep.iter().all(|&k| k) {
        return docs;
    }
    docs.into_iter().zip(keep.into_iter().rev()).filter_map(|(d, k)| k.then_some(d)).collect()
}

impl Workspace {
    fn build(env: &Env, options: Option<Unknown>) -> Checked<Self> {
        let o = options::workspace_options(env, options)?;
        let id = o.id.unwrap_or_else(generated_id);
        if o.vector_store.is_some() && o.embedder.is_none() {
            return Err(Fail::Config { message: "vectorStore requires an embedder".into(), workspace_id: None });
        }
        let vectors = match &o.embedder {
            None => None,
            Some(e) => {
                let index_name = o.search_index_name.clone().unwrap_or_else(|| index_name::default_for(&id));
                index_name::validate(&index_name)
                    .map_err(|e| Fail::Config { message: e.to_string(), workspace_id: Some(id.clone()) })?;
                let embedder = Embedder::from_js(e, o.embed_concurrency, o.embed_timeout_ms)?;
                let store = match &o.vector_store {
                    // No store: the embedded one.
                    None => Store::Local(Arc::new(RwLock::new(VectorStore::default()))),
                    Some(s) if LocalVector::instance_of(env, s)? => {
                        let lv: ClassInstance<LocalVector> =
                            unsafe { ClassInstance::from_napi_value(env.raw(), s.raw())? };
                        Store::Local(lv.store.clone())
                    }
                    Some(s) => Store::Js(JsStore::from_js(env, s)?),
                };
                Some(VectorSide {
                    embedder,
                    store,
                    index_name,
                    upserted: AtomicBool::new(false),
                    ledger: Mutex::default(),
                })
            }
        };
        let (keyword, params) = match o.bm25 {
            Some(Bm25Options { params, tokenizer }) => {
                let js = match o.js_tokenizer {
                    Some(user_fn) => {
                        let batched = runtime_fn(env, "tokenizeMany")?.call(user_fn.to_unknown())?;
                        let f: Function<Vec<String>, Vec<Vec<String>>> = unsafe { batched.cast()? };
                        Some(f.build_threadsafe_function().weak::<true>().build()?)
                    }
                    None => None,
                };
                (Some(Keyword { tokenizer: Arc::new(Tokenizer::new(tokenizer)), js }), params)
            }
            None => (None, Default::default()),
        };
        let progress = match o.on_progress {
            Some(f) => {
                let f: Function<ProgressEvent, napi::threadsafe_function::UnknownReturnValue> =
                    unsafe { f.to_unknown().cast()? };
                Some(f.build_threadsafe_function().weak::<true>().build()?)
            }
            None => None,
        };
        Ok(Workspace {
            inner: Arc::new(Inner {
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
            }),
        })
    }

    /// Ready, with search configured.
    fn searchable(&self) -> Checked<()> {
        self.inner.check_ready()?;
        if !self.inner.has_search() {
            return Err(Fail::NoSearch { workspace_id: self.inner.id.clone() });
        }
        Ok(())
    }

    /// The mode to run: the one asked for, or hybrid > vector > bm25.
    fn mode(&self, asked: Option<Mode>) -> Checked<Mode> {
        Mode::select(asked, self.inner.keyword.is_some(), self.inner.vectors.is_some())
            .map_err(|e| Fail::Plain(e.to_string()))
    }
}

#[napi]
impl Workspace {
    #[napi(constructor, ts_args_type = "options?: WorkspaceOptions")]
    pub fn new(env: Env, options: Option<Unknown>) -> Result<Self> {
        guard(|| Self::build(&env, options).map_err(|f| f.throw(&env)))
    }

    /// The given id, or a generated `ws-...` one.
    #[napi(getter)]
    pub fn id(&self) -> String {
        self.inner.id.clone()
    }

    /// Where auto-indexing reads files (a `LocalFilesystem` with the given
    /// `basePath` and `readOnly`), or undefined.
    #[napi(getter)]
    pub fn filesystem(&self) -> Option<crate::filesystem::LocalFilesystem> {
        let base = self.inner.base_path.as_ref()?;
        Some(crate::filesystem::LocalFilesystem::from_parts(base.to_string_lossy().into_owned(), self.inner.read_only))
    }

    #[napi(getter, js_name = "canBM25")]
    pub fn can_bm25(&self) -> bool {
        self.inner.keyword.is_some()
    }

    #[napi(getter)]
    pub fn can_vector(&self) -> bool {
        self.inner.vectors.is_some()
    }

    #[napi(getter)]
    pub fn can_hybrid(&self) -> bool {
        self.inner.keyword.is_some() && self.inner.vectors.is_some()
    }

    #[napi(getter, ts_return_type = "'pending' | 'initializing' | 'ready' | 'error' | 'destroyed'")]
    pub fn status(&self) -> String {
        self.inner.status.lock().as_str().to_string()
    }

    /// Indexes `autoIndexPaths` (when search and a filesystem are configured).
    #[napi(ts_return_type = "Promise<IndexReport>")]
    pub fn init<'e>(&self, env: &'e Env) -> Result<PromiseRaw<'e, IndexReport>> {
        guard(|| {
            if let Err(f) = self.inner.check_ready() {
                return rejected(env, f);
            }
            *self.inner.status.lock() = Lifecycle::Initializing;
            let inner = self.inner.clone();
            let paths = inner.auto_index_paths.clone();
            let ticket = inner.gate.ticket();
            spawn(env, &self.inner, async move {
                let result = inner.clone().rebuild(ticket, paths).await;
                let mut status = inner.status.lock();
                if !inner.destroyed.load(Ordering::SeqCst) {
                    *status = if result.is_ok() { Lifecycle::Ready } else { Lifecycle::Error };
                }
                result
            })
        })
    }

    /// Builds the index anew from the files of `paths` (default
    /// `autoIndexPaths`); documents added with `index()` are dropped, as Mastra.
    #[napi(ts_args_type = "paths?: string[]", ts_return_type = "Promise<IndexReport>")]
    pub fn rebuild_search_index<'e>(
        &self,
        env: &'e Env,
        paths: Option<Unknown>,
    ) -> Result<PromiseRaw<'e, IndexReport>> {
        guard(|| {
            let checked = (|| -> Checked<Vec<String>> {
                self.inner.check_ready()?;
                match paths.filter(|p| !is_nullish(p)) {
                    Some(p) => to_string_array(&p, "paths"),
                    None => Ok(self.inner.auto_index_paths.clone()),
                }
            })();
            match checked {
                Err(f) => rejected(env, f),
                Ok(paths) => {
                    let ticket = self.inner.gate.ticket();
                    spawn(env, &self.inner, self.inner.clone().rebuild(ticket, paths))
                }
            }
        })
    }

    /// Adds or replaces one document; its id is `path`, verbatim. A failure
    /// (embedder, store) leaves the previous version in place.
    #[napi(ts_args_type = "path: string, content: string, options?: IndexOptions", ts_return_type = "Promise<void>")]
    pub fn index<'e>(
        &self,
        env: &'e Env,
        path: Unknown,
        content: Unknown,
        options: Option<Unknown>,
    ) -> Result<PromiseRaw<'e, ()>> {
        guard(|| {
            let checked = (|| -> Checked<DocArgs> {
                self.searchable()?;
                let id = options::doc_path(&path, "path")?;
                let content = to_string(&content, "content")?;
                let (metadata, start_line_offset) = options::index_options(env, options, "index() options")?;
                Ok(DocArgs { id, content, metadata, start_line_offset })
            })();
            match checked {
                Err(f) => rejected(env, f),
                Ok(doc) => {
                    let ticket = self.inner.gate.ticket();
                    spawn(env, &self.inner, self.inner.clone().index_one(ticket, doc))
                }
            }
        })
    }

    /// Adds or replaces many documents in one call, batching the embedder
    /// across them.
    #[napi(ts_args_type = "docs: IndexManyDocument[]", ts_return_type = "Promise<IndexReport>")]
    pub fn index_many<'e>(&self, env: &'e Env, docs: Unknown) -> Result<PromiseRaw<'e, IndexReport>> {
        guard(|| {
            let started = Instant::now();
            let checked = (|| -> Checked<Vec<DocArgs>> {
                self.searchable()?;
                // Checked and split in JavaScript: two string arrays cross the
                // boundary far cheaper than one object per document.
                let split: Object = runtime_fn(env, "splitDocs")?.call(docs)?.coerce_to_object()?;
                let paths: Vec<String> = split.get_named_property("paths")?;
                let contents: Vec<String> = split.get_named_property("contents")?;
                let extras: Vec<u32> = split.get_named_property("extras")?;
                let mut out: Vec<DocArgs> = paths
                    .into_iter()
                    .zip(contents)
                    .map(|(id, content)| DocArgs { id, content, metadata: None, start_line_offset: None })
                    .collect();
                if !extras.is_empty() {
                    // splitDocs checked that `docs` is an array.
                    let items: Object = unsafe { docs.cast()? };
                    for i in extras {
                        let at = format!("docs[{i}]");
                        let o = to_object(&items.get_element::<Unknown>(i)?, &at)?;
                        let (metadata, start_line_offset) = options::doc_fields(env, &o, &at)?;
                        out[i as usize].metadata = metadata;
                        out[i as usize].start_line_offset = start_line_offset;
                    }
                }
                Ok(last_of_each_path(out))
            })();
            let docs = match checked {
                Err(f) => return rejected(env, f),
                Ok(d) => d,
            };
            let ticket = self.inner.gate.ticket();
            let inner = self.inner.clone();
            let fut = raced(inner.clone(), inner.index_many(ticket, docs, started));
            // The first failure rejects, as its own Error object carrying the report.
            env.spawn_future_with_callback(fut, |env, outcome| match outcome {
                Err((e, status)) => Err(js_error(env, e, status)),
                Ok(ManyOutcome { error: None, report }) => Ok(report),
                Ok(ManyOutcome { error: Some(e), report }) => {
                    let value = Fail::Napi(e).into_js(env)?;
                    if let Ok(mut obj) = unsafe { value.cast::<Object>() } {
                        obj.set_named_property("report", report)?;
                    }
                    Err(napi::Error::from(value))
                }
            })
        })
    }

    /// Removes a document, and the chunks of a file indexed under that path,
    /// from every index. Resolves whether anything was removed.
    #[napi(ts_args_type = "path: string", ts_return_type = "Promise<boolean>")]
    pub fn unindex<'e>(&self, env: &'e Env, path: Unknown) -> Result<PromiseRaw<'e, bool>> {
        guard(|| {
            let checked = (|| -> Checked<String> {
                self.searchable()?;
                options::doc_path(&path, "path")
            })();
            match checked {
                Err(f) => rejected(env, f),
                Ok(id) => {
                    let ticket = self.inner.gate.ticket();
                    spawn(env, &self.inner, self.inner.clone().unindex(ticket, id))
                }
            }
        })
    }

    /// Documents whose id starts with `prefix` (synchronous; Mastra's
    /// `SearchEngine.countByPrefix`, which its Workspace calls on every
    /// search to hide skill documents).
    #[napi(ts_args_type = "prefix: string")]
    pub fn count_by_prefix(&self, env: Env, prefix: Unknown) -> Result<u32> {
        guard(|| {
            let checked = (|| -> Checked<String> {
                self.searchable()?;
                to_string(&prefix, "prefix")
            })();
            let prefix = checked.map_err(|f| f.throw(&env))?;
            Ok(self.inner.count_by_prefix(&prefix) as u32)
        })
    }

    /// The words of `text` that match `query` by this workspace's own
    /// tokens (stemmed, folded, identifier parts), as `[start, end)` offsets
    /// in JavaScript string units: what the command line highlights.
    #[napi(ts_args_type = "query: string, text: string", ts_return_type = "Array<[number, number]>")]
    pub fn highlight(&self, env: Env, query: Unknown, text: Unknown) -> Result<Vec<Vec<u32>>> {
        guard(|| {
            let checked = (|| -> Checked<(String, String)> {
                self.inner.check_ready()?;
                Ok((to_string(&query, "query")?, to_string(&text, "text")?))
            })();
            let (query, text) = checked.map_err(|f| f.throw(&env))?;
            let ranges = self.inner.line_tokenizer().matching_words(&text, &query);
            // Byte offsets to UTF-16 units, in one pass over the text.
            let (mut units, mut at) = (0u32, 0usize);
            let mut to_units = |byte: usize| {
                units += text[at..byte].encode_utf16().count() as u32;
                at = byte;
                units
            };
            Ok(ranges.into_iter().map(|(a, b)| vec![to_units(a), to_units(b)]).collect())
        })
    }

    /// Removes every document whose id starts with `prefix` from every
    /// index; resolves how many were removed.
    #[napi(ts_args_type = "prefix: string", ts_return_type = "Promise<number>")]
    pub fn remove_by_prefix<'e>(&self, env: &'e Env, prefix: Unknown) -> Result<PromiseRaw<'e, u32>> {
        guard(|| {
            let checked = (|| -> Checked<String> {
                self.searchable()?;
                to_string(&prefix, "prefix")
            })();
            match checked {
                Err(f) => rejected(env, f),
                Ok(prefix) => {
                    let ticket = self.inner.gate.ticket();
                    spawn(env, &self.inner, self.inner.clone().remove_by_prefix(ticket, prefix))
                }
            }
        })
    }

    /// Removes every document of this workspace from every index, its
    /// vectors in the vector store included (by id).
    #[napi(ts_return_type = "Promise<void>")]
    pub fn clear<'e>(&self, env: &'e Env) -> Result<PromiseRaw<'e, ()>> {
        guard(|| {
            if let Err(f) = self.inner.check_ready() {
                return rejected(env, f);
            }
            let ticket = self.inner.gate.ticket();
            spawn(env, &self.inner, self.inner.clone().clear(ticket))
        })
    }

    /// Ranked results for `query`.
    #[napi(ts_args_type = "query: string, options?: SearchOptions", ts_return_type = "Promise<SearchResult[]>")]
    pub fn search<'e>(
        &self,
        env: &'e Env,
        query: Unknown,
        options: Option<Unknown>,
    ) -> Result<PromiseRaw<'e, SearchResults>> {
        guard(|| {
            let checked = (|| -> Checked<(String, options::SearchOptions, Mode)> {
                self.searchable()?;
                let query = to_string(&query, "query")?;
                let opts = options::search_options(env, options)?;
                let mode = self.mode(opts.mode)?;
                Ok((query, opts, mode))
            })();
            let (query, opts, mode) = match checked {
                Err(f) => return rejected(env, f),
                Ok(x) => x,
            };
            if query.is_empty() || opts.top_k == 0 {
                return PromiseRaw::resolve(env, SearchResults(Vec::new()));
            }
            if mode != Mode::Bm25 {
                return spawn(env, &self.inner, self.inner.clone().search_vectors(query, mode, opts));
            }
            let kw = self.inner.keyword.as_ref().expect("mode checked");
            if kw.js.is_none() {
                // Fast path: tokenize and rank right here unless a writer holds
                // the index; results come back as an already settled promise.
                let tokens = kw.tokenizer.tokenize(&query);
                if tokens.is_empty() {
                    return PromiseRaw::resolve(env, SearchResults(Vec::new()));
                }
                if let Some(index) = self.inner.index.try_read() {
                    let results =
                        std::panic::catch_unwind(AssertUnwindSafe(|| Inner::bm25_results(&index, &tokens, &opts)));
                    drop(index);
                    return match results {
                        Ok(r) => PromiseRaw::resolve(env, r),
                        Err(p) => rejected(env, Fail::Napi(panic_error(p))),
                    };
                }
            }
            let inner = self.inner.clone();
            spawn(env, &self.inner, async move {
                let tokens = inner.query_tokens(&query).await?;
                Ok(Inner::bm25_results(&inner.index.read(), &tokens, &opts))
            })
        })
    }

    /// Index statistics (synchronous; during a bulk write, as they were
    /// before it).
    #[napi]
    pub fn stats(&self, env: Env) -> Result<WorkspaceStats> {
        guard(|| {
            self.inner.check_ready().map_err(|f| f.throw(&env))?;
            let s = self.inner.index_stats();
            let (vectors, vector_bytes) = match &self.inner.vectors {
                Some(v) => {
                    (v.count(), if let crate::store::Store::Local(s) = &v.store { s.read().memory_bytes() } else { 0 })
                }
                None => (0, 0),
            };
            Ok(WorkspaceStats {
                documents: s.documents as u32,
                terms: s.terms as u32,
                tokens: s.tokens as f64,
                avg_doc_length: s.avg_doc_length,
                vectors: vectors as u32,
                memory_bytes: (s.memory_bytes + vector_bytes) as f64,
            })
        })
    }

    /// Drops the in-process index (the user's vector store is left as it
    /// is); every later call but the capability getters, `status` and
    /// `destroy()` rejects with `WorkspaceNotReadyError`.
    #[napi(ts_return_type = "Promise<void>")]
    pub fn destroy<'e>(&self, env: &'e Env) -> Result<PromiseRaw<'e, ()>> {
        guard(|| {
            self.inner.shut_down();
            let seq = self.inner.gate.ticket().seq();
            if let Some(mut index) = self.inner.index.try_write() {
                index.clear(seq);
                return PromiseRaw::resolve(env, ());
            }
            // A writer holds the index: clear it once it lets go, off this thread.
            let inner = self.inner.clone();
            env.spawn_future(catch_panics(blocking(move || inner.index.write().clear(seq))))
        })
    }
}
