//! The `Workspace` class: checks its inputs on the JavaScript thread, takes
//! a place in the write order, and hands the work to core's engine (built
//! in construct.rs; calls become promises in promise.rs).

use crate::error::{check_ready, napi_error, panic_error};
use crate::js::*;
use crate::options;
use crate::promise::{catch_panics, js_error, raced, spawn, spawn_write};
use crate::types::*;
use napi::bindgen_prelude::*;
use napi_derive::napi;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::time::Instant;
use workspace_search_core::engine::{DocArgs, Engine, ManyOutcome, Prepared};
use workspace_search_core::search::Mode;

/// Mastra-compatible workspace search: BM25, vector and hybrid search over
/// files and documents, run natively.
#[napi]
pub struct Workspace {
    pub(crate) engine: Arc<Engine>,
    /// The user's `tokenize.tokenizer` (batched), for `highlight()`.
    pub(crate) line_tokenizer: Option<TokenizeRef>,
}

/// The user's tokenizer as lib's `tokenizeMany` batches it, held for calls
/// on the JavaScript thread.
pub(crate) type TokenizeRef = FunctionRef<Vec<String>, Vec<Vec<String>>>;

/// With the user's tokenizer: the query and each line of `text` tokenized
/// by it in one call, the lines matched as the index finds `lineRange`
/// (`analysis::lines_holding_tokens`); byte ranges.
fn js_line_spans(
    tokenize: &Function<Vec<String>, Vec<Vec<String>>>,
    query: &str,
    text: &str,
) -> Result<Vec<(usize, usize)>> {
    let texts = std::iter::once(query).chain(text.split('\n')).map(str::to_string).collect();
    let mut tokens = tokenize.call(texts)?;
    let query_tokens = if tokens.is_empty() { Vec::new() } else { tokens.remove(0) };
    Ok(workspace_search_core::analysis::lines_holding_tokens(text, &query_tokens, &tokens))
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
    /// Ready, with search configured.
    fn searchable(&self) -> Checked<()> {
        check_ready(&self.engine)?;
        if !self.engine.has_search() {
            return Err(Fail::NoSearch { workspace_id: self.engine.id.clone() });
        }
        Ok(())
    }

    /// The mode to run: the one asked for, or hybrid > vector > bm25.
    fn mode(&self, asked: Option<Mode>) -> Checked<Mode> {
        Mode::select(asked, self.engine.keyword.is_some(), self.engine.vectors.is_some())
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
        self.engine.id.clone()
    }

    /// Where auto-indexing reads files (a `LocalFilesystem` with the given
    /// `basePath` and `readOnly`), or undefined.
    #[napi(getter)]
    pub fn filesystem(&self) -> Option<crate::filesystem::LocalFilesystem> {
        let base = self.engine.base_path.as_ref()?;
        Some(crate::filesystem::LocalFilesystem::from_parts(base.to_string_lossy().into_owned(), self.engine.read_only))
    }

    #[napi(getter, js_name = "canBM25")]
    pub fn can_bm25(&self) -> bool {
        self.engine.keyword.is_some()
    }

    #[napi(getter)]
    pub fn can_vector(&self) -> bool {
        self.engine.vectors.is_some()
    }

    #[napi(getter)]
    pub fn can_hybrid(&self) -> bool {
        self.engine.keyword.is_some() && self.engine.vectors.is_some()
    }

    #[napi(getter, ts_return_type = "'pending' | 'initializing' | 'ready' | 'error' | 'destroyed'")]
    pub fn status(&self) -> String {
        self.engine.status.lock().as_str().to_string()
    }

    /// Indexes `autoIndexPaths` (when search and a filesystem are configured).
    #[napi(ts_return_type = "Promise<IndexReport>")]
    pub fn init<'e>(&self, env: &'e Env) -> Result<PromiseRaw<'e, IndexReport>> {
        guard(|| {
            if let Err(f) = check_ready(&self.engine) {
                return rejected(env, f);
            }
            let init = self.engine.init();
            spawn(env, &self.engine, async move { init.await.map(to_report).map_err(napi_error) })
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
                check_ready(&self.engine)?;
                match paths.filter(|p| !is_nullish(p)) {
                    Some(p) => to_name_array(&p, "paths"),
                    None => Ok(self.engine.auto_index_paths.clone()),
                }
            })();
            match checked {
                Err(f) => rejected(env, f),
                Ok(paths) => {
                    let ticket = self.engine.gate.ticket();
                    // (Once the rebuilt index is in place, destroy() lets the call resolve.)
                    let (engine, committed) = (self.engine.clone(), Some(ticket.committed()));
                    spawn_write(env, &self.engine, committed, async move {
                        engine.rebuild(ticket, paths).await.map(to_report).map_err(napi_error)
                    })
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
                    let ticket = self.engine.gate.ticket();
                    let (engine, committed) = (self.engine.clone(), Some(ticket.committed()));
                    spawn_write(env, &self.engine, committed, async move {
                        engine.index_one(ticket, doc).await.map_err(napi_error)
                    })
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
                    // SAFETY: splitDocs checked that `docs` is an array (an object).
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
            let ticket = self.engine.gate.ticket();
            let (engine, id, committed) = (self.engine.clone(), self.engine.id.clone(), Some(ticket.committed()));
            let write = engine.clone().index_many(ticket, docs, started);
            let fut = raced(engine, committed, async move { write.await.map_err(napi_error) });
            // The first failure rejects, as its own Error object carrying the report.
            env.spawn_future_with_callback(fut, move |env, outcome| match outcome {
                Err((e, status)) => Err(js_error(env, e, status, &id)),
                Ok(ManyOutcome { error: None, report }) => Ok(to_report(report)),
                Ok(ManyOutcome { error: Some(e), report }) => {
                    let value = crate::promise::failure(napi_error(e), &id).into_js(env)?;
                    // Only an object can carry the report: a string, number
                    // or null the embedder threw is handed back as it is.
                    if matches!(value.get_type()?, ValueType::Object | ValueType::Function) {
                        // In JavaScript: an error that refuses the property (frozen, a Proxy) carries none.
                        crate::js::attach_report(env, value, to_report(report))?;
                    }
                    Err(napi::Error::from_unknown_without_coercion(value))
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
                    let ticket = self.engine.gate.ticket();
                    let engine = self.engine.clone();
                    spawn(env, &self.engine, async move { engine.unindex(ticket, id).await.map_err(napi_error) })
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
                to_name(&prefix, "prefix")
            })();
            let prefix = checked.map_err(|f| f.throw(&env))?;
            Ok(self.engine.count_by_prefix(&prefix) as u32)
        })
    }

    /// The words of `text` that match `query` by this workspace's own
    /// tokens (stemmed, folded, identifier parts), as `[start, end)` offsets
    /// in JavaScript string units: what the command line highlights. With
    /// a `tokenize.tokenizer`, the lines whose tokens hold the query's.
    #[napi(ts_args_type = "query: string, text: string", ts_return_type = "Array<[number, number]>")]
    pub fn highlight(&self, env: Env, query: Unknown, text: Unknown) -> Result<Vec<Vec<u32>>> {
        guard(|| {
            let checked = (|| -> Checked<(String, String)> {
                check_ready(&self.engine)?;
                Ok((to_string(&query, "query")?, to_string(&text, "text")?))
            })();
            let (query, text) = checked.map_err(|f| f.throw(&env))?;
            let ranges = match &self.line_tokenizer {
                Some(tokenize) => js_line_spans(&tokenize.borrow_back(&env)?, &query, &text)?,
                None => self.engine.highlight(&text, &query),
            };
            // Byte offsets to UTF-16 units, in one pass over the text (a
            // span that starts inside the one before, two tokens of one
            // word, counts again from the start).
            let (mut units, mut at) = (0u32, 0usize);
            let mut to_units = |byte: usize| {
                if byte < at {
                    (units, at) = (0, 0);
                }
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
                to_name(&prefix, "prefix")
            })();
            match checked {
                Err(f) => rejected(env, f),
                Ok(prefix) => {
                    let ticket = self.engine.gate.ticket();
                    let engine = self.engine.clone();
                    spawn(env, &self.engine, async move {
                        engine.remove_by_prefix(ticket, prefix).await.map_err(napi_error)
                    })
                }
            }
        })
    }

    /// Removes every document of this workspace from every index, its
    /// vectors in the vector store included (by id).
    #[napi(ts_return_type = "Promise<void>")]
    pub fn clear<'e>(&self, env: &'e Env) -> Result<PromiseRaw<'e, ()>> {
        guard(|| {
            if let Err(f) = check_ready(&self.engine) {
                return rejected(env, f);
            }
            let clear = self.engine.clear_queued();
            spawn(env, &self.engine, async move { clear.await.map_err(napi_error) })
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
                let store_has_text = self.engine.vectors.is_some();
                if mode != Mode::Vector && store_has_text && opts.filter.as_ref().is_some_and(|f| f.reads("text")) {
                    // The store matches its own copy of each text; BM25 hits
                    // are not read to match it, so one half would ignore it.
                    let name = if mode == Mode::Hybrid { "hybrid" } else { "bm25" };
                    return Err(Fail::Type(format!(
                        "filter on `text` applies in vector mode only, not in {name} mode"
                    )));
                }
                Ok((query, opts, mode))
            })();
            let (query, opts, mode) = match checked {
                Err(f) => return rejected(env, f),
                Ok(x) => x,
            };
            let engine = self.engine.clone();
            let prepared = std::panic::catch_unwind(AssertUnwindSafe(|| engine.search_at_once(&query, mode, opts)));
            match prepared {
                Ok(Prepared::Answered(hits)) => PromiseRaw::resolve(env, SearchResults(hits)),
                Ok(Prepared::Unread(hits)) => spawn(env, &self.engine, async move {
                    engine.texts_read(hits).await.map(SearchResults).map_err(napi_error)
                }),
                Ok(Prepared::Later(mode, opts)) => spawn(env, &self.engine, async move {
                    engine.search(query, mode, *opts).await.map(SearchResults).map_err(napi_error)
                }),
                Err(p) => rejected(env, Fail::Napi(panic_error(p))),
            }
        })
    }

    /// Index statistics (synchronous; during a bulk write, as they were
    /// before it).
    #[napi]
    pub fn stats(&self, env: Env) -> Result<WorkspaceStats> {
        guard(|| {
            check_ready(&self.engine).map_err(|f| f.throw(&env))?;
            let s = self.engine.index_stats();
            let (vectors, vector_bytes, vector_graph) = match &self.engine.vectors {
                Some(v) => match &v.store {
                    workspace_search_core::engine::Store::Local(s) => {
                        let s = s.read();
                        let graph = s.index(&v.index_name).ok().and_then(|ix| ix.graph_status());
                        (v.count(), s.memory_bytes(), graph.map(Into::into))
                    }
                    _ => (v.count(), 0, None),
                },
                None => (0, 0, None),
            };
            Ok(WorkspaceStats {
                documents: s.documents as u32,
                terms: s.terms as u32,
                tokens: s.tokens as f64,
                avg_doc_length: s.avg_doc_length,
                vectors: vectors as u32,
                memory_bytes: (s.memory_bytes + vector_bytes) as f64,
                save_error: self.engine.persist.as_ref().and_then(|p| p.state.lock().save_error.clone()),
                watch: self.engine.watch_stats().map(|w| crate::types::WatchStats {
                    live: w.live,
                    updates: w.updates as f64,
                    rescans: w.rescans as f64,
                    warnings: w.warnings,
                }),
                history: self.engine.history.lock().current.as_ref().map(|h| crate::types::HistoryStats {
                    head: h.head.clone(),
                    files: h.files() as u32,
                    memory_bytes: h.memory_bytes() as f64,
                }),
                // As of the last grep or build step: a grep running holds its state.
                grep: self.engine.grep.stats().map(|g| crate::types::GrepStats {
                    files: g.files as u32,
                    memory_bytes: g.memory_bytes as f64,
                    unreadable: g.unreadable as u32,
                    watched_folders: g.watched_folders as u32,
                    building: g.building,
                    last_searched: g.last_searched as u32,
                    last_read: g.last_read as u32,
                }),
                vector_graph,
            })
        })
    }

    /// With `persist`: writes the snapshot now (after the writes called
    /// before it). Resolves `true` when it was written, `false` when there
    /// is nothing to save to (no `persist`, or another process writes the
    /// directory, or `init()` has not run yet).
    #[napi(ts_return_type = "Promise<boolean>")]
    pub fn save<'e>(&self, env: &'e Env) -> Result<PromiseRaw<'e, bool>> {
        guard(|| {
            if let Err(f) = check_ready(&self.engine) {
                return rejected(env, f);
            }
            let ticket = self.engine.gate.ticket();
            let engine = self.engine.clone();
            spawn(env, &self.engine, async move { engine.save_now(ticket).await.map_err(napi_error) })
        })
    }

    /// Drops the in-process index (the user's vector store is left as it
    /// is); every later call but the capability getters, `status` and
    /// `destroy()` rejects with `WorkspaceNotReadyError`. With `persist`,
    /// what changed since the last save is saved first; the watcher stops.
    #[napi(ts_return_type = "Promise<void>")]
    pub fn destroy<'e>(&self, env: &'e Env) -> Result<PromiseRaw<'e, ()>> {
        guard(|| match self.engine.destroy() {
            None => PromiseRaw::resolve(env, ()),
            Some(rest) => {
                let id = self.engine.id.clone();
                let rest = catch_panics(async move { rest.await.map_err(napi_error) });
                // The failure reaches the callback, which names it (a snapshot store's, typed).
                env.spawn_future_with_callback(async move { Ok(rest.await) }, move |env, r| {
                    r.map_err(|e| js_error(env, e, None, &id))
                })
            }
        })
    }
}
