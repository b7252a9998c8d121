//! The `Workspace` class: checks its inputs on the JavaScript thread, then
//! runs the engine of `crates/core` on worker threads.

use crate::js::*;
use crate::options::{self, Bm25Options};
use futures::FutureExt;
use napi::bindgen_prelude::*;
use napi::threadsafe_function::{ThreadsafeFunction, ThreadsafeFunctionCallMode, UnknownReturnValue};
use napi_derive::napi;
use parking_lot::{Mutex, RwLock};
use std::panic::AssertUnwindSafe;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Instant;
use workspace_search_core::bm25::{Analyzed, Bm25Index, NewDocument};
use workspace_search_core::ingest::{self, ChunkOptions, FileOutcome, Report};
use workspace_search_core::scan::{self, ScanOptions};
use workspace_search_core::search::{keyword_search, KeywordQuery, SearchHit};
use workspace_search_core::tokenizer::Tokenizer;

/// Progress of auto-indexing.
#[napi(object)]
#[derive(Clone)]
pub struct ProgressEvent {
    #[napi(ts_type = "'scan' | 'read' | 'index' | 'embed'")]
    pub phase: String,
    pub done: u32,
    pub total: u32,
    /// The file just handled, when there is one.
    pub path: Option<String>,
}

/// Lines of the content holding a query token (1-based, inclusive, file lines).
#[napi(object)]
pub struct LineRange {
    pub start: u32,
    pub end: u32,
}

/// The raw scores behind `score`.
#[napi(object)]
pub struct ScoreDetails {
    /// Raw BM25 score.
    pub bm25: Option<f64>,
    /// Raw vector-store score.
    pub vector: Option<f64>,
}

#[napi(object)]
pub struct SearchResult {
    /// Document id: the path given to `index()`, a file path, or `path#chunk-N`.
    pub id: String,
    /// The whole indexed text of the document or chunk.
    pub content: String,
    /// In [0, 1]; the best BM25 match scores 1.
    pub score: f64,
    pub line_range: Option<LineRange>,
    #[napi(ts_type = "Record<string, unknown>")]
    pub metadata: Option<serde_json::Value>,
    pub score_details: Option<ScoreDetails>,
}

#[napi(object)]
pub struct SkippedFile {
    pub path: String,
    pub reason: String,
}

#[napi(object)]
pub struct FailedFile {
    pub path: String,
    pub error: String,
}

#[napi(object)]
pub struct IndexReport {
    /// Files (or `indexMany` documents) now in the index.
    pub indexed: u32,
    /// Chunk documents that large files were split into (0 when none was).
    pub chunks: u32,
    pub skipped: Vec<SkippedFile>,
    pub failed: Vec<FailedFile>,
    pub duration_ms: f64,
}

#[napi(object)]
pub struct WorkspaceStats {
    pub documents: u32,
    /// Distinct terms in the BM25 index.
    pub terms: u32,
    /// Tokens in all documents.
    pub tokens: f64,
    pub avg_doc_length: f64,
    /// Vectors this workspace has written.
    pub vectors: u32,
    /// Approximate memory held by the index, content included.
    pub memory_bytes: f64,
}

type ProgressFn = ThreadsafeFunction<ProgressEvent, UnknownReturnValue, ProgressEvent, Status, false, true>;
type TokenizerFn = ThreadsafeFunction<Vec<String>, Vec<Vec<String>>, Vec<String>, Status, false, true>;

struct Keyword {
    tokenizer: Arc<Tokenizer>,
    /// A user `tokenize.tokenizer`, batched by runtime.js (slow path).
    js: Option<TokenizerFn>,
}

struct Inner {
    id: String,
    keyword: Option<Keyword>,
    base_path: Option<PathBuf>,
    auto_index_paths: Vec<String>,
    chunking: ChunkOptions,
    respect_gitignore: bool,
    progress: Option<ProgressFn>,
    index: RwLock<Bm25Index>,
    /// Every write takes the next number on the JavaScript thread, so the
    /// index ends as if writes had landed in call order.
    seq: AtomicU64,
    status: Mutex<&'static str>,
    destroyed: AtomicBool,
}

/// Mastra-compatible workspace search: BM25 keyword search over files and
/// documents, run natively.
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
    // splitmix64 over time and a counter: unique per process, no RNG crate.
    let mut x = now ^ COUNTER.fetch_add(1, Ordering::Relaxed).wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ (std::process::id() as u64) << 32;
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^= x >> 31;
    let suffix = base36(x % 36u64.pow(6), 6);
    format!("ws-{}-{}", base36(now, 1), suffix)
}

/// Spawns `fut` as a promise; a panic inside becomes a rejection.
fn spawn<T, F>(env: &Env, fut: F) -> Result<PromiseRaw<'_, T>>
where
    T: 'static + Send + ToNapiValue,
    F: 'static + Send + std::future::Future<Output = Result<T>>,
{
    env.spawn_future(async move {
        match AssertUnwindSafe(fut).catch_unwind().await {
            Ok(r) => r,
            Err(panic) => Err(panic_error(panic)),
        }
    })
}

fn panic_error(panic: Box<dyn std::any::Any + Send>) -> Error {
    let msg = panic
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".into());
    Error::from_reason(format!("workspace-search internal error: {msg}"))
}

/// Runs CPU work off the JavaScript thread and the async runtime.
async fn blocking<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> Result<T> {
    napi::bindgen_prelude::spawn_blocking(move || std::panic::catch_unwind(AssertUnwindSafe(f)))
        .await
        .map_err(|e| Error::from_reason(format!("workspace-search internal error: {e}")))?
        .map_err(panic_error)
}

fn to_result(h: SearchHit) -> SearchResult {
    SearchResult {
        id: h.id,
        content: h.content,
        score: h.score,
        line_range: h.line_range.map(|(start, end)| LineRange { start, end }),
        metadata: h.metadata.map(serde_json::Value::Object),
        score_details: Some(ScoreDetails { bm25: h.bm25, vector: h.vector }),
    }
}

/// bm25-mode results for query tokens.
fn rank(index: &Bm25Index, tokens: &[String], opts: &options::SearchOptions) -> Vec<SearchResult> {
    if tokens.is_empty() {
        return Vec::new();
    }
    let q = KeywordQuery { tokens, top_k: opts.top_k, min_score: opts.min_score, filter: opts.filter.as_ref() };
    keyword_search(index, &q).into_iter().map(to_result).collect()
}

fn to_report(r: Report, started: Instant) -> IndexReport {
    IndexReport {
        indexed: r.indexed as u32,
        chunks: r.chunks as u32,
        skipped: r.skipped.into_iter().map(|(path, reason)| SkippedFile { path, reason }).collect(),
        failed: r.failed.into_iter().map(|(path, error)| FailedFile { path, error }).collect(),
        duration_ms: started.elapsed().as_secs_f64() * 1000.0,
    }
}

/// One `indexMany` item or `index()` call, checked.
struct DocArgs {
    id: String,
    content: String,
    metadata: Option<serde_json::Map<String, serde_json::Value>>,
    start_line_offset: Option<u32>,
}

/// Keeps the last document of each path (as Mastra de-duplicates), in order.
fn last_of_each_path(docs: Vec<DocArgs>) -> Vec<DocArgs> {
    let mut seen = std::collections::HashSet::new();
    let mut kept: Vec<DocArgs> = docs.into_iter().rev().filter(|d| seen.insert(d.id.clone())).collect();
    kept.reverse();
    kept
}

impl Inner {
    fn next_seq(&self) -> u64 {
        self.seq.fetch_add(1, Ordering::SeqCst) + 1
    }

    fn check_ready(&self) -> Checked<()> {
        if self.destroyed.load(Ordering::SeqCst) {
            return Err(Fail::NotReady { workspace_id: self.id.clone(), status: (*self.status.lock()).to_string() });
        }
        Ok(())
    }

    fn keyword(&self) -> Checked<&Keyword> {
        self.check_ready()?;
        self.keyword.as_ref().ok_or_else(|| Fail::NoSearch { workspace_id: self.id.clone() })
    }

    fn emit(&self, phase: &str, done: usize, total: usize, path: Option<&str>) {
        if let Some(p) = &self.progress {
            let ev = ProgressEvent { phase: phase.into(), done: done.min(total) as u32, total: total as u32, path: path.map(str::to_string) };
            p.call(ev, ThreadsafeFunctionCallMode::NonBlocking);
        }
    }

    /// Progress from many threads, at most about 100 events a phase.
    fn emit_throttled(&self, phase: &str, done: usize, total: usize, path: &str) {
        let step = (total / 100).max(1);
        if done % step == 0 && done != total {
            self.emit(phase, done, total, Some(path));
        }
    }

    /// The last event of a phase, delivered before the caller's promise settles.
    async fn emit_final(&self, phase: &str, total: usize) {
        if let Some(p) = &self.progress {
            let ev = ProgressEvent { phase: phase.into(), done: total as u32, total: total as u32, path: None };
            let _ = p.call_async(ev).await;
        }
    }

    /// Tokenizes texts with the user's JavaScript tokenizer: the whole text
    /// and each of its lines.
    async fn analyze_js(f: &TokenizerFn, text: &str) -> Result<Analyzed> {
        let mut texts = vec![text.to_string()];
        if text.contains('\n') {
            texts.extend(text.split('\n').map(str::to_string));
        }
        let mut out = f.call_async_catch(texts).await?;
        if out.len() == 1 {
            let whole = out.pop().unwrap();
            return Ok(Analyzed::from_whole_and_lines(&whole, std::slice::from_ref(&whole)));
        }
        let lines = out.split_off(1);
        Ok(Analyzed::from_whole_and_lines(&out[0], &lines))
    }

    async fn analyze(&self, text: &str) -> Result<Analyzed> {
        let kw = self.keyword.as_ref().expect("checked before");
        match &kw.js {
            Some(f) => Inner::analyze_js(f, text).await,
            None => Ok(Analyzed::of_text(&kw.tokenizer, text)),
        }
    }

    async fn query_tokens(&self, query: String) -> Result<Vec<String>> {
        let kw = self.keyword.as_ref().expect("checked before");
        match &kw.js {
            Some(f) => Ok(f.call_async_catch(vec![query]).await?.pop().unwrap_or_default()),
            None => Ok(kw.tokenizer.tokenize(&query)),
        }
    }

    /// Rebuilds the index from the files of `paths` (SPEC 7).
    async fn rebuild(self: Arc<Self>, paths: Vec<String>, seq: u64) -> Result<IndexReport> {
        let started = Instant::now();
        let (Some(kw), Some(base)) = (self.keyword.as_ref(), self.base_path.clone()) else {
            return Ok(to_report(Report::default(), started));
        };
        if paths.is_empty() {
            return Ok(to_report(Report::default(), started));
        }
        let me = self.clone();
        let builtin = kw.js.is_none().then(|| kw.tokenizer.clone());
        let (mut report, mut outcomes) = blocking(move || {
            let scanned = scan::scan(&base, &paths, ScanOptions { respect_gitignore: me.respect_gitignore });
            me.emit("scan", scanned.files.len(), scanned.files.len(), None);
            let report = Report { skipped: scanned.skipped.into_iter().map(|s| (s.path, s.reason)).collect(), ..Default::default() };
            let outcomes = ingest::ingest(&scanned.files, me.chunking, builtin.as_deref(), &|done, total, id| {
                me.emit_throttled("read", done, total, id)
            });
            (report, outcomes)
        })
        .await?;
        let total = outcomes.len();
        if total > 0 {
            self.emit("read", total, total, None);
        }
        if let Some(f) = &kw.js {
            for o in outcomes.iter_mut() {
                if let FileOutcome::Documents { docs, .. } = o {
                    for d in docs.iter_mut() {
                        d.analyzed = Inner::analyze_js(f, &d.content).await?;
                    }
                }
            }
        }
        let me = self.clone();
        let params = self.index.read().params();
        let (rebuilt, report) = blocking(move || {
            let rebuilt = ingest::build_index(params, seq, std::mem::take(&mut outcomes), &mut report, &|done, total, id| {
                me.emit_throttled("index", done, total, id)
            });
            (rebuilt, report)
        })
        .await?;
        {
            let mut index = self.index.write();
            let mut rebuilt = rebuilt;
            rebuilt.carry_over(&index, seq);
            *index = rebuilt;
        }
        if total > 0 {
            self.emit_final("index", total).await;
        }
        Ok(to_report(report, started))
    }
}

#[napi]
impl Workspace {
    #[napi(constructor, ts_args_type = "options?: WorkspaceOptions")]
    pub fn new(env: Env, options: Option<Unknown>) -> Result<Self> {
        Self::build(&env, options).map_err(|f| f.throw(&env))
    }

    fn build(env: &Env, options: Option<Unknown>) -> Checked<Self> {
        let o = options::workspace_options(env, options)?;
        let id = o.id.unwrap_or_else(generated_id);
        if o.vector_store.is_some() && o.embedder.is_none() {
            return Err(Fail::Config { message: "vectorStore requires an embedder".into(), workspace_id: None });
        }
        if o.vector_store.is_some() || o.embedder.is_some() {
            return Err(Fail::Plain("vector search (embedder, vectorStore) is not available in this version of workspace-search yet; use bm25".into()));
        }
        let _ = (&o.search_index_name, o.embed_concurrency);
        let runtime_tokenize = runtime_fn(env, "tokenizeMany")?;
        let (keyword, params) = match o.bm25 {
            Some(Bm25Options { params, tokenizer }) => {
                let js = match o.js_tokenizer {
                    Some(user_fn) => {
                        let batched = runtime_tokenize.call(user_fn.to_unknown())?;
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
                let f: Function<ProgressEvent, UnknownReturnValue> = unsafe { f.to_unknown().cast()? };
                Some(f.build_threadsafe_function().weak::<true>().build()?)
            }
            None => None,
        };
        Ok(Workspace {
            inner: Arc::new(Inner {
                id,
                keyword,
                base_path: o.base_path,
                auto_index_paths: o.auto_index_paths,
                chunking: o.chunking,
                respect_gitignore: o.respect_gitignore,
                progress,
                index: RwLock::new(Bm25Index::new(params)),
                seq: AtomicU64::new(0),
                status: Mutex::new("pending"),
                destroyed: AtomicBool::new(false),
            }),
        })
    }

    /// The given id, or a generated `ws-...` one.
    #[napi(getter)]
    pub fn id(&self) -> String {
        self.inner.id.clone()
    }

    #[napi(getter, js_name = "canBM25")]
    pub fn can_bm25(&self) -> bool {
        self.inner.keyword.is_some()
    }

    #[napi(getter)]
    pub fn can_vector(&self) -> bool {
        false
    }

    #[napi(getter)]
    pub fn can_hybrid(&self) -> bool {
        false
    }

    #[napi(getter, ts_return_type = "'pending' | 'initializing' | 'ready' | 'error' | 'destroyed'")]
    pub fn status(&self) -> String {
        (*self.inner.status.lock()).to_string()
    }

    /// Indexes `autoIndexPaths` (when BM25 and a filesystem are configured).
    #[napi(ts_return_type = "Promise<IndexReport>")]
    pub fn init<'e>(&self, env: &'e Env) -> Result<PromiseRaw<'e, IndexReport>> {
        if let Err(f) = self.inner.check_ready() {
            return rejected(env, f);
        }
        *self.inner.status.lock() = "initializing";
        let inner = self.inner.clone();
        let paths = inner.auto_index_paths.clone();
        let seq = inner.next_seq();
        spawn(env, async move {
            let result = inner.clone().rebuild(paths, seq).await;
            let mut status = inner.status.lock();
            if !inner.destroyed.load(Ordering::SeqCst) {
                *status = if result.is_ok() { "ready" } else { "error" };
            }
            result
        })
    }

    /// Builds the index anew from the files of `paths` (default
    /// `autoIndexPaths`); documents added with `index()` are dropped, as Mastra.
    #[napi(ts_args_type = "paths?: string[]", ts_return_type = "Promise<IndexReport>")]
    pub fn rebuild_search_index<'e>(&self, env: &'e Env, paths: Option<Unknown>) -> Result<PromiseRaw<'e, IndexReport>> {
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
                let seq = self.inner.next_seq();
                spawn(env, self.inner.clone().rebuild(paths, seq))
            }
        }
    }

    /// Adds or replaces one document; its id is `path`, verbatim.
    #[napi(ts_args_type = "path: string, content: string, options?: IndexOptions", ts_return_type = "Promise<void>")]
    pub fn index<'e>(&self, env: &'e Env, path: Unknown, content: Unknown, options: Option<Unknown>) -> Result<PromiseRaw<'e, ()>> {
        let checked = (|| -> Checked<DocArgs> {
            self.inner.keyword()?;
            let id = options::doc_path(&path, "path")?;
            let content = to_string(&content, "content")?;
            let (metadata, start_line_offset) = options::index_options(env, options, "index() options")?;
            Ok(DocArgs { id, content, metadata, start_line_offset })
        })();
        let doc = match checked {
            Err(f) => return rejected(env, f),
            Ok(d) => d,
        };
        let seq = self.inner.next_seq();
        let inner = self.inner.clone();
        spawn(env, async move {
            let analyzed = inner.analyze(&doc.content).await?;
            let new = NewDocument { id: doc.id, content: doc.content, metadata: doc.metadata, start_line_offset: doc.start_line_offset, analyzed };
            inner.index.write().upsert(new, seq);
            Ok(())
        })
    }

    /// Adds or replaces many documents in one call.
    #[napi(ts_args_type = "docs: IndexManyDocument[]", ts_return_type = "Promise<IndexReport>")]
    pub fn index_many<'e>(&self, env: &'e Env, docs: Unknown) -> Result<PromiseRaw<'e, IndexReport>> {
        let started = Instant::now();
        let checked = (|| -> Checked<Vec<DocArgs>> {
            self.inner.keyword()?;
            let items = to_array(&docs, "docs")?;
            let mut out = Vec::with_capacity(items.len());
            for (i, item) in items.iter().enumerate() {
                let at = format!("docs[{i}]");
                let o = to_object(item, &at)?;
                check_keys(&o, &["path", "content", "type", "mimeType", "metadata", "startLineOffset"], &[], &at)?;
                let id = match prop(&o, "path")? {
                    Some(p) => options::doc_path(&p, &format!("{at}.path"))?,
                    None => return Err(Fail::Type(format!("{at}.path must be a non-empty string"))),
                };
                let content = match prop(&o, "content")? {
                    Some(c) => to_string(&c, &format!("{at}.content"))?,
                    None => return Err(Fail::Type(format!("{at}.content must be a string"))),
                };
                let (metadata, start_line_offset) = options::doc_fields(env, &o, &at)?;
                out.push(DocArgs { id, content, metadata, start_line_offset });
            }
            Ok(out)
        })();
        let docs = match checked {
            Err(f) => return rejected(env, f),
            Ok(d) => last_of_each_path(d),
        };
        let first_seq = self.inner.seq.fetch_add(docs.len() as u64, Ordering::SeqCst) + 1;
        let inner = self.inner.clone();
        spawn(env, async move {
            let kw = inner.keyword.as_ref().expect("checked");
            let mut prepared = Vec::with_capacity(docs.len());
            match &kw.js {
                Some(f) => {
                    for d in docs {
                        let analyzed = Inner::analyze_js(f, &d.content).await?;
                        prepared.push(NewDocument { id: d.id, content: d.content, metadata: d.metadata, start_line_offset: d.start_line_offset, analyzed });
                    }
                }
                None => {
                    let tokenizer = kw.tokenizer.clone();
                    prepared = blocking(move || {
                        use rayon::prelude::*;
                        docs.into_par_iter()
                            .map(|d| {
                                let analyzed = Analyzed::of_text(&tokenizer, &d.content);
                                NewDocument { id: d.id, content: d.content, metadata: d.metadata, start_line_offset: d.start_line_offset, analyzed }
                            })
                            .collect()
                    })
                    .await?;
                }
            }
            let mut report = Report::default();
            let mut index = inner.index.write();
            for (i, doc) in prepared.into_iter().enumerate() {
                if index.upsert(doc, first_seq + i as u64) {
                    report.indexed += 1;
                }
            }
            drop(index);
            Ok(to_report(report, started))
        })
    }

    /// Removes a document, and the chunks of a file indexed under that path.
    /// Resolves whether anything was removed.
    #[napi(ts_args_type = "path: string", ts_return_type = "Promise<boolean>")]
    pub fn unindex<'e>(&self, env: &'e Env, path: Unknown) -> Result<PromiseRaw<'e, bool>> {
        let checked = (|| -> Checked<String> {
            self.inner.keyword()?;
            options::doc_path(&path, "path")
        })();
        match checked {
            Err(f) => rejected(env, f),
            Ok(id) => {
                let seq = self.inner.next_seq();
                let removed = self.inner.index.write().remove_with_chunks(&id, seq);
                PromiseRaw::resolve(env, removed)
            }
        }
    }

    /// Removes every document of this workspace.
    #[napi(ts_return_type = "Promise<void>")]
    pub fn clear<'e>(&self, env: &'e Env) -> Result<PromiseRaw<'e, ()>> {
        if let Err(f) = self.inner.check_ready() {
            return rejected(env, f);
        }
        let seq = self.inner.next_seq();
        self.inner.index.write().clear(seq);
        PromiseRaw::resolve(env, ())
    }

    /// Ranked results for `query`.
    #[napi(ts_args_type = "query: string, options?: SearchOptions", ts_return_type = "Promise<SearchResult[]>")]
    pub fn search<'e>(&self, env: &'e Env, query: Unknown, options: Option<Unknown>) -> Result<PromiseRaw<'e, Vec<SearchResult>>> {
        let checked = (|| -> Checked<(String, options::SearchOptions)> {
            self.inner.check_ready()?;
            if self.inner.keyword.is_none() {
                return Err(Fail::NoSearch { workspace_id: self.inner.id.clone() });
            }
            let query = to_string(&query, "query")?;
            let opts = options::search_options(env, options)?;
            match opts.mode.as_deref() {
                Some("vector") => return Err(Fail::Plain("Vector search requires vector configuration.".into())),
                Some("hybrid") => return Err(Fail::Plain("Hybrid search requires both vector and BM25 configuration.".into())),
                _ => {}
            }
            Ok((query, opts))
        })();
        let (query, opts) = match checked {
            Err(f) => return rejected(env, f),
            Ok(x) => x,
        };
        if query.is_empty() || opts.top_k == 0 {
            return PromiseRaw::resolve(env, Vec::new());
        }
        let kw = self.inner.keyword.as_ref().expect("checked");
        if kw.js.is_none() {
            // Fast path: tokenize and rank right here unless a writer holds
            // the index; results come back as an already settled promise.
            let tokens = kw.tokenizer.tokenize(&query);
            if tokens.is_empty() {
                return PromiseRaw::resolve(env, Vec::new());
            }
            if let Some(index) = self.inner.index.try_read() {
                let results = std::panic::catch_unwind(AssertUnwindSafe(|| rank(&index, &tokens, &opts)));
                drop(index);
                return match results {
                    Ok(r) => PromiseRaw::resolve(env, r),
                    Err(p) => rejected(env, Fail::Napi(panic_error(p))),
                };
            }
        }
        let inner = self.inner.clone();
        spawn(env, async move {
            let tokens = inner.query_tokens(query).await?;
            Ok(rank(&inner.index.read(), &tokens, &opts))
        })
    }

    /// Index statistics (synchronous).
    #[napi]
    pub fn stats(&self, env: Env) -> Result<WorkspaceStats> {
        self.inner.check_ready().map_err(|f| f.throw(&env))?;
        let s = self.inner.index.read().stats();
        Ok(WorkspaceStats {
            documents: s.documents as u32,
            terms: s.terms as u32,
            tokens: s.tokens as f64,
            avg_doc_length: s.avg_doc_length,
            vectors: 0,
            memory_bytes: s.memory_bytes as f64,
        })
    }

    /// Drops the index; every later call but the capability getters,
    /// `status` and `destroy()` rejects with `WorkspaceNotReadyError`.
    #[napi(ts_return_type = "Promise<void>")]
    pub fn destroy<'e>(&self, env: &'e Env) -> Result<PromiseRaw<'e, ()>> {
        self.inner.destroyed.store(true, Ordering::SeqCst);
        *self.inner.status.lock() = "destroyed";
        let seq = self.inner.next_seq();
        self.inner.index.write().clear(seq);
        PromiseRaw::resolve(env, ())
    }
}
