//! A workspace's state and its async flows: indexing (BM25 and vectors,
//! all-or-nothing per document), rebuilding from files, and searching in
//! every mode. Algorithms are in `crates/core`; this file orchestrates them
//! with the user's embedder and vector store.

use crate::embedder::Embedder;
use crate::options::SearchOptions;
use crate::store::{Store, MAX_UPSERT};
use crate::types::*;
use futures::stream::{self, StreamExt};
use napi::bindgen_prelude::*;
use napi::threadsafe_function::{ThreadsafeFunction, ThreadsafeFunctionCallMode, UnknownReturnValue};
use parking_lot::{Mutex, RwLock};
use rustc_hash::{FxHashMap, FxHashSet};
use serde_json::{Map, Value};
use std::panic::AssertUnwindSafe;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Instant;
use workspace_search_core::index::{Analyzed, Bm25Index, NewDocument};
use workspace_search_core::index::gate::{Gate, Ticket};
use workspace_search_core::search::hybrid::{self, Fusion};
use workspace_search_core::ingest::{self, ChunkOptions, FileOutcome, Report};
use workspace_search_core::ingest::scan::{self, ScanOptions};
use workspace_search_core::search::{keyword_search, KeywordQuery, SearchHit};
use workspace_search_core::analysis::tokenizer::Tokenizer;

pub type ProgressFn = ThreadsafeFunction<ProgressEvent, UnknownReturnValue, ProgressEvent, Status, false, true>;
pub type TokenizerFn = ThreadsafeFunction<Vec<String>, Vec<Vec<String>>, Vec<String>, Status, false, true>;

pub struct Keyword {
    pub tokenizer: Arc<Tokenizer>,
    /// A user `tokenize.tokenizer`, batched by runtime.js (slow path).
    pub js: Option<TokenizerFn>,
}

/// Vector search: the embedder, the store and what this workspace wrote.
pub struct VectorSide {
    pub embedder: Embedder,
    pub store: Store,
    pub index_name: String,
    /// `createIndex` runs before upserts until one upsert has succeeded.
    pub upserted: AtomicBool,
    /// Ids written to the store, by source (a file path or a document id).
    pub written: Mutex<FxHashMap<String, Vec<String>>>,
}

pub struct Inner {
    pub id: String,
    pub keyword: Option<Keyword>,
    pub vectors: Option<VectorSide>,
    pub base_path: Option<PathBuf>,
    pub read_only: bool,
    pub auto_index_paths: Vec<String>,
    pub chunking: ChunkOptions,
    pub respect_gitignore: bool,
    pub progress: Option<ProgressFn>,
    pub index: RwLock<Bm25Index>,
    pub gate: Arc<Gate>,
    pub status: Mutex<&'static str>,
    pub destroyed: AtomicBool,
}

/// One document to write, checked.
pub struct DocArgs {
    pub id: String,
    pub content: String,
    pub metadata: Option<Map<String, Value>>,
    pub start_line_offset: Option<u32>,
}

/// What `indexMany` resolves or rejects with.
pub struct ManyOutcome {
    pub report: IndexReport,
    pub error: Option<Error>,
}

/// The default tokenizer, built once (workspaces without BM25 use it for
/// the line ranges of vector hits).
fn default_tokenizer() -> Arc<Tokenizer> {
    static DEFAULT: std::sync::OnceLock<Arc<Tokenizer>> = std::sync::OnceLock::new();
    DEFAULT.get_or_init(|| Arc::new(Tokenizer::default())).clone()
}

/// Runs CPU work off the JavaScript thread and the async runtime.
pub async fn blocking<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> Result<T> {
    napi::bindgen_prelude::spawn_blocking(move || std::panic::catch_unwind(AssertUnwindSafe(f)))
        .await
        .map_err(|e| Error::from_reason(format!("workspace-search internal error: {e}")))?
        .map_err(panic_error)
}

/// Gives the memory that a bulk build freed back to the system: mimalloc
/// keeps freed pages for reuse by each thread that used them.
fn release_memory() {
    rayon::broadcast(|_| unsafe { libmimalloc_sys::mi_collect(true) });
    unsafe { libmimalloc_sys::mi_collect(true) };
}

pub fn panic_error(panic: Box<dyn std::any::Any + Send>) -> Error {
    let msg = panic
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".into());
    Error::from_reason(format!("workspace-search internal error: {msg}"))
}

/// The metadata stored beside a vector: `{ id, text, ...metadata }`, plus
/// `_startLineOffset` for chunks and `startLineOffset` documents (as Mastra).
fn store_metadata(doc: &NewDocument) -> Map<String, Value> {
    let mut m = Map::new();
    m.insert("id".into(), Value::String(doc.id.clone()));
    m.insert("text".into(), Value::String(doc.content.to_string()));
    if let Some(meta) = &doc.metadata {
        m.extend(meta.clone());
    }
    if let Some(o) = doc.start_line_offset {
        m.insert("_startLineOffset".into(), o.into());
    }
    m
}

impl VectorSide {
    /// Writes one unit (at most `MAX_UPSERT` documents) to the store.
    async fn upsert(&self, docs: &[&NewDocument], vectors: Vec<Vec<f32>>) -> Result<()> {
        if !self.upserted.load(Ordering::SeqCst) {
            if let Some(dim) = vectors.first().map(Vec::len) {
                // Errors ignored, as Mastra: the index usually exists already.
                let _ = self.store.create_index(&self.index_name, dim).await;
            }
        }
        let ids = docs.iter().map(|d| d.id.clone()).collect();
        let metadata = docs.iter().map(|d| store_metadata(d)).collect();
        self.store.upsert(&self.index_name, ids, vectors, metadata).await?;
        self.upserted.store(true, Ordering::SeqCst);
        Ok(())
    }

    fn record(&self, source: &str, ids: impl IntoIterator<Item = String>) {
        let mut w = self.written.lock();
        let entry = w.entry(source.to_string()).or_default();
        for id in ids {
            if !entry.contains(&id) {
                entry.push(id);
            }
        }
    }

    pub fn count(&self) -> usize {
        self.written.lock().values().map(Vec::len).sum()
    }

    /// Removes what this workspace wrote for `source` (and, for a store
    /// that outlives the process, its chunks by `sourceFile`).
    async fn forget(&self, source: &str) -> Result<bool> {
        let mut ids = self.written.lock().remove(source).unwrap_or_default();
        let known = !ids.is_empty();
        if !ids.contains(&source.to_string()) {
            ids.push(source.to_string());
        }
        self.store.delete_ids(&self.index_name, &ids).await?;
        if !self.store.is_local() {
            let _ = self.store.delete_source(&self.index_name, source).await;
        }
        Ok(known)
    }
}

impl Inner {
    pub fn check_ready(&self) -> crate::js::Checked<()> {
        if self.destroyed.load(Ordering::SeqCst) {
            return Err(crate::js::Fail::NotReady { workspace_id: self.id.clone(), status: (*self.status.lock()).to_string() });
        }
        Ok(())
    }

    pub fn has_search(&self) -> bool {
        self.keyword.is_some() || self.vectors.is_some()
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
        if done.is_multiple_of(step) && done != total {
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

    /// Tokenizes a text with the user's JavaScript tokenizer: the whole
    /// text and each of its lines.
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

    /// BM25 analysis of documents (empty without BM25).
    async fn analyze_docs(&self, docs: Vec<DocArgs>) -> Result<Vec<NewDocument>> {
        let new = |d: DocArgs, analyzed| NewDocument { id: d.id, content: d.content.into(), metadata: d.metadata, start_line_offset: d.start_line_offset, analyzed };
        match &self.keyword {
            None => Ok(docs.into_iter().map(|d| new(d, Analyzed::default())).collect()),
            Some(Keyword { js: Some(f), .. }) => {
                let mut out = Vec::with_capacity(docs.len());
                for d in docs {
                    let a = Inner::analyze_js(f, &d.content).await?;
                    out.push(new(d, a));
                }
                Ok(out)
            }
            Some(Keyword { tokenizer, js: None }) => {
                let tokenizer = tokenizer.clone();
                if docs.len() == 1 && docs[0].content.len() < 64 * 1024 {
                    let d = docs.into_iter().next().unwrap();
                    let a = Analyzed::of_text(&tokenizer, &d.content);
                    return Ok(vec![new(d, a)]);
                }
                blocking(move || {
                    let analyzed = workspace_search_core::analysis::analyze_all(&tokenizer, &docs, |d| d.content.as_str());
                    use rayon::prelude::*;
                    // In parallel: each text is checked for ASCII on the way.
                    docs.into_par_iter().zip(analyzed).map(|(d, a)| new(d, a)).collect()
                })
                .await
            }
        }
    }

    pub async fn query_tokens(&self, query: &str) -> Result<Vec<String>> {
        match &self.keyword {
            Some(Keyword { js: Some(f), .. }) => Ok(f.call_async_catch(vec![query.to_string()]).await?.pop().unwrap_or_default()),
            Some(Keyword { tokenizer, js: None }) => Ok(tokenizer.tokenize(query)),
            // Line ranges of vector hits use the default tokenizer, as Mastra.
            None => Ok(default_tokenizer().tokenize(query)),
        }
    }

    /// `index()`: embed (when vectors are configured), then in call order
    /// write the vector and the BM25 entry; a failure changes nothing.
    pub async fn index_one(self: Arc<Self>, ticket: Ticket, doc: DocArgs) -> Result<()> {
        let mut docs = self.analyze_docs(vec![doc]).await?;
        let doc = docs.pop().expect("one document");
        let vector = match &self.vectors {
            Some(v) => Some(v.embedder.embed_group(vec![doc.content.to_string()], "index()").await?),
            None => None,
        };
        ticket.turn().await;
        if let (Some(v), Some(vectors)) = (&self.vectors, vector) {
            v.upsert(&[&doc], vectors).await?;
            v.record(&doc.id, [doc.id.clone()]);
        }
        if self.keyword.is_some() {
            self.index.write().upsert(doc, ticket.seq());
        }
        Ok(())
    }

    /// `indexMany()`: embedding groups run concurrently; then, in call
    /// order, units of at most 100 documents are written, each one all or
    /// nothing. Failures are reported and the first one rejects.
    pub async fn index_many(self: Arc<Self>, ticket: Ticket, docs: Vec<DocArgs>, started: Instant) -> Result<ManyOutcome> {
        let docs = self.analyze_docs(docs).await?;
        let mut report = Report::default();
        let mut first_error: Option<Error> = None;
        let Some(v) = &self.vectors else {
            ticket.turn().await;
            report.indexed = docs.len();
            let large = docs.len() >= 10_000;
            self.index.write().add_bulk(docs, ticket.seq(), &mut |_| {});
            if large {
                let _ = blocking(release_memory).await;
            }
            return Ok(ManyOutcome { report: to_report(report, started), error: None });
        };
        let size = v.embedder.group_size().max(1);
        let groups = v.embedder.embed_groups(docs.iter().map(|d| d.content.to_string()).collect()).await;
        // Embeddings per document, or the message of its group's failure.
        let mut per_doc: Vec<std::result::Result<Vec<f32>, String>> = Vec::with_capacity(docs.len());
        for g in groups {
            match g {
                Ok(vs) => per_doc.extend(vs.into_iter().map(Ok)),
                Err(e) => {
                    let msg = e.reason.clone();
                    let n = size.min(docs.len() - per_doc.len());
                    per_doc.extend((0..n).map(|_| Err(msg.clone())));
                    first_error.get_or_insert(e);
                }
            }
        }
        ticket.turn().await;
        let mut iter = docs.into_iter().zip(per_doc).peekable();
        while iter.peek().is_some() {
            let unit: Vec<(NewDocument, std::result::Result<Vec<f32>, String>)> = iter.by_ref().take(MAX_UPSERT).collect();
            let failed = unit.iter().find_map(|(_, r)| r.as_ref().err().cloned());
            let outcome = match failed {
                Some(msg) => Err(msg),
                None => {
                    let refs: Vec<&NewDocument> = unit.iter().map(|(d, _)| d).collect();
                    let vectors = unit.iter().map(|(_, r)| r.clone().unwrap()).collect();
                    v.upsert(&refs, vectors).await.map_err(|e| {
                        let msg = e.reason.clone();
                        first_error.get_or_insert(e);
                        msg
                    })
                }
            };
            match outcome {
                Ok(()) => {
                    let mut index = self.index.write();
                    let mut writer = index.writer();
                    for (d, _) in unit {
                        v.record(&d.id, [d.id.clone()]);
                        if self.keyword.is_some() {
                            writer.upsert(d, ticket.seq());
                        }
                        report.indexed += 1;
                    }
                }
                Err(msg) => report.failed.extend(unit.into_iter().map(|(d, _)| (d.id, msg.clone()))),
            }
        }
        Ok(ManyOutcome { report: to_report(report, started), error: first_error })
    }

    pub async fn unindex(self: Arc<Self>, ticket: Ticket, id: String) -> Result<bool> {
        ticket.turn().await;
        let mut removed = self.index.write().remove_with_chunks(&id, ticket.seq());
        if let Some(v) = &self.vectors {
            removed |= v.forget(&id).await?;
        }
        Ok(removed)
    }

    pub async fn clear(self: Arc<Self>, ticket: Ticket) -> Result<()> {
        ticket.turn().await;
        if let Some(v) = &self.vectors {
            let ids: Vec<String> = v.written.lock().values().flatten().cloned().collect();
            v.store.delete_ids(&v.index_name, &ids).await?;
            v.written.lock().clear();
        }
        self.index.write().clear(ticket.seq());
        Ok(())
    }

    /// Rebuilds both indexes from the files of `paths` (SPEC 7 and 8).
    pub async fn rebuild(self: Arc<Self>, ticket: Ticket, paths: Vec<String>) -> Result<IndexReport> {
        let started = Instant::now();
        let Some(base) = self.base_path.clone().filter(|_| self.has_search() && !paths.is_empty()) else {
            return Ok(to_report(Report::default(), started));
        };
        // Reading and tokenizing change nothing, so they run before our turn.
        let me = self.clone();
        let builtin = match &self.keyword {
            Some(Keyword { tokenizer, js: None }) => Some(tokenizer.clone()),
            _ => None,
        };
        let (mut report, mut outcomes) = blocking(move || {
            let scanned = scan::scan(&base, &paths, ScanOptions { respect_gitignore: me.respect_gitignore });
            me.emit("scan", scanned.files.len(), scanned.files.len(), None);
            let report = Report { skipped: scanned.skipped.into_iter().map(|s| (s.path, s.reason)).collect(), ..Default::default() };
            let outcomes = ingest::ingest(&scanned.files, me.chunking, builtin.as_deref(), &|done, total, id| me.emit_throttled("read", done, total, id));
            (report, outcomes)
        })
        .await?;
        let total = outcomes.len();
        if total > 0 {
            self.emit("read", total, total, None);
        }
        if let Some(Keyword { js: Some(f), .. }) = &self.keyword {
            for o in outcomes.iter_mut() {
                if let FileOutcome::Documents { docs, .. } = o {
                    for d in docs.iter_mut() {
                        d.analyzed = Inner::analyze_js(f, &d.content).await?;
                    }
                }
            }
        }
        ticket.turn().await;
        if let Some(v) = &self.vectors {
            self.rebuild_vectors(v, &mut outcomes).await;
        }
        let me = self.clone();
        let params = self.index.read().params();
        let seq = ticket.seq();
        let (rebuilt, report) = blocking(move || {
            let rebuilt = ingest::build_index(params, seq, std::mem::take(&mut outcomes), &mut report, &|done, total, id| me.emit_throttled("index", done, total, id));
            drop(outcomes);
            release_memory();
            (rebuilt, report)
        })
        .await?;
        if self.keyword.is_some() {
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

    /// Embeds and writes the documents of every file; a file whose
    /// embedding or upsert fails becomes `Failed` (absent from both indexes).
    /// Vectors of files that are gone are deleted.
    async fn rebuild_vectors(&self, v: &VectorSide, outcomes: &mut [FileOutcome]) {
        // Documents of all files in order, and each file's run of them.
        let mut texts = Vec::new();
        let mut runs: Vec<(usize, std::ops::Range<usize>)> = Vec::new();
        for (i, o) in outcomes.iter().enumerate() {
            if let FileOutcome::Documents { docs, .. } = o {
                let start = texts.len();
                texts.extend(docs.iter().map(|d| d.content.to_string()));
                runs.push((i, start..texts.len()));
            }
        }
        let total = texts.len();
        let size = v.embedder.group_size().max(1);
        let mut embedded: Vec<Option<Vec<f32>>> = Vec::with_capacity(total);
        for g in v.embedder.embed_groups(texts).await {
            let n = size.min(total - embedded.len());
            match g {
                Ok(vs) => embedded.extend(vs.into_iter().map(Some)),
                Err(_) => embedded.extend((0..n).map(|_| None)),
            }
            self.emit("embed", embedded.len(), total, None);
        }
        let docs_of = |o: &FileOutcome| -> Vec<NewDocument> {
            match o {
                FileOutcome::Documents { docs, .. } => docs.clone(),
                _ => Vec::new(),
            }
        };
        // A failed group is retried file by file, to find the files at fault.
        let mut file_error: FxHashMap<usize, String> = FxHashMap::default();
        for (file, range) in &runs {
            if embedded[range.clone()].iter().all(Option::is_some) {
                continue;
            }
            let file_texts: Vec<String> = docs_of(&outcomes[*file]).into_iter().map(|d| d.content.to_string()).collect();
            match v.embedder.embed_all(file_texts).await {
                Ok(vs) => {
                    for (slot, vec) in embedded[range.clone()].iter_mut().zip(vs) {
                        *slot = Some(vec);
                    }
                }
                Err(e) => {
                    file_error.insert(*file, e.reason);
                }
            }
        }
        // Vectors of sources no longer here (files gone, `index()` documents).
        let present: FxHashSet<String> = outcomes
            .iter()
            .filter_map(|o| match o {
                FileOutcome::Documents { id, .. } => Some(id.clone()),
                _ => None,
            })
            .collect();
        let gone: Vec<String> = v.written.lock().keys().filter(|s| !present.contains(*s)).cloned().collect();
        for source in gone {
            let _ = v.forget(&source).await;
        }
        // Stale vectors of files still here: chunks that no longer exist, or,
        // for a file this process never wrote, whatever an earlier process
        // wrote (Mastra's per-file deleteVector and deleteVectors by sourceFile).
        let mut deletes = Vec::new();
        for o in outcomes.iter() {
            let FileOutcome::Documents { id, docs, .. } = o else { continue };
            match v.written.lock().get(id) {
                Some(before) => {
                    let stale: Vec<String> = before.iter().filter(|b| !docs.iter().any(|d| &d.id == *b)).cloned().collect();
                    if !stale.is_empty() {
                        deletes.push((id.clone(), Some(stale)));
                    }
                }
                None if !v.store.is_local() => deletes.push((id.clone(), None)),
                None => {}
            }
        }
        stream::iter(deletes)
            .for_each_concurrent(8, |(id, stale)| async move {
                let ids = stale.unwrap_or_else(|| vec![id.clone()]);
                let _ = v.store.delete_ids(&v.index_name, &ids).await;
                if ids == [id.clone()] {
                    let _ = v.store.delete_source(&v.index_name, &id).await;
                }
            })
            .await;
        // Upserts in units of at most 100 documents, whole files where they fit.
        let counts: Vec<(usize, usize)> = runs.iter().filter(|(f, _)| !file_error.contains_key(f)).map(|(f, r)| (*f, r.len())).collect();
        let units = workspace_search_core::vectors::plan::write_units(&counts, MAX_UPSERT);
        let start_of: FxHashMap<usize, usize> = runs.iter().map(|(f, r)| (*f, r.start)).collect();
        for unit in units {
            let docs: Vec<&NewDocument> = unit
                .iter()
                .map(|&(f, j)| match &outcomes[f] {
                    FileOutcome::Documents { docs, .. } => &docs[j],
                    _ => unreachable!("only files with documents are embedded"),
                })
                .collect();
            let vectors: Vec<Vec<f32>> = unit.iter().map(|&(f, j)| embedded[start_of[&f] + j].clone().expect("embedded")).collect();
            if let Err(e) = v.upsert(&docs, vectors).await {
                for &(f, _) in &unit {
                    file_error.entry(f).or_insert_with(|| e.reason.clone());
                }
            }
        }
        // Record the files written; fail the others and drop their partial writes.
        for (i, o) in outcomes.iter_mut().enumerate() {
            let FileOutcome::Documents { id, docs, .. } = o else { continue };
            let ids: Vec<String> = docs.iter().map(|d| d.id.clone()).collect();
            match file_error.get(&i) {
                None => {
                    v.written.lock().insert(id.clone(), ids);
                }
                Some(err) => {
                    let _ = v.store.delete_ids(&v.index_name, &ids).await;
                    v.written.lock().remove(id.as_str());
                    *o = FileOutcome::Failed { id: id.clone(), error: err.clone() };
                }
            }
        }
    }

    /// bm25-mode results (query without tokens: none).
    pub fn bm25_results(index: &Bm25Index, tokens: &[String], opts: &SearchOptions) -> SearchResults {
        if tokens.is_empty() {
            return SearchResults(Vec::new());
        }
        let q = KeywordQuery { tokens, top_k: opts.top_k, min_score: opts.min_score, filter: opts.filter.as_ref() };
        SearchResults(keyword_search(index, &q))
    }

    /// bm25-mode hits, ranked in Rust.
    pub fn keyword_hits(&self, tokens: &[String], top_k: usize, opts: &SearchOptions) -> Vec<SearchHit> {
        if tokens.is_empty() || self.keyword.is_none() {
            return Vec::new();
        }
        let index = self.index.read();
        keyword_search(&index, &KeywordQuery { tokens, top_k, min_score: None, filter: opts.filter.as_ref() })
    }

    /// vector-mode hits: the query embedded, the store queried.
    async fn vector_hits(&self, v: &VectorSide, query: &str, tokens: &[String], top_k: usize, opts: &SearchOptions) -> Result<Vec<SearchHit>> {
        let mut q = v.embedder.embed_group(vec![query.to_string()], "query").await?;
        let vector = q.pop().unwrap_or_default();
        let filter = opts.filter.as_ref().zip(opts.filter_json.as_ref());
        let hits = v.store.query(&v.index_name, vector, top_k, filter).await?;
        let line_tokenizer = match &self.keyword {
            Some(Keyword { tokenizer, js: None }) => Some(tokenizer.clone()),
            Some(_) => None,
            None => Some(default_tokenizer()),
        };
        Ok(hits
            .into_iter()
            .map(|h| hybrid::vector_result(h, |content| line_tokenizer.as_ref().and_then(|t| hybrid::line_range_of(content, tokens, t))))
            .collect())
    }

    /// Search in vector or hybrid mode.
    pub async fn search_vectors(self: Arc<Self>, query: String, mode: &'static str, opts: SearchOptions) -> Result<SearchResults> {
        let v = self.vectors.as_ref().expect("checked");
        let tokens = self.query_tokens(&query).await?;
        let results = if mode == "vector" {
            let hits = self.vector_hits(v, &query, &tokens, opts.top_k, &opts).await?;
            hybrid::vector_results(hits, opts.top_k, opts.min_score)
        } else {
            // Candidates per half: 100 at least (eval/tune.mjs: deeper lists
            // fuse better; SPEC asks for min(2 * topK, 50) at least).
            let depth = (2 * opts.top_k).max(100);
            let keyword = self.keyword_hits(&tokens, depth, &opts);
            let vector = self.vector_hits(v, &query, &tokens, depth, &opts).await?;
            let fusion = if opts.fusion == "rrf" { Fusion::Rrf } else { Fusion::Weighted };
            hybrid::merge(keyword, vector, opts.vector_weight, fusion, opts.top_k, opts.min_score)
        };
        Ok(SearchResults(results))
    }
}
