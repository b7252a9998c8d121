//! Searches: bm25 mode ranked in core, vector mode through the user's
//! embedder and store, hybrid mode merged in core.

use super::error::Result;
use super::host::{RerankCall, TokenizeCall};
use super::{default_tokenizer, Engine, Keyword, VectorSide};
use crate::index::Bm25Index;
use crate::search::group;
use crate::search::history::{keyword_ranked, FILE_POOL, POOL};
use crate::search::hybrid;
use crate::search::keyword::{path_prefix, read_texts, texts_unread, under_prefix};
use crate::search::mode::hybrid_depth;
use crate::search::{KeywordQuery, Mode, SearchHit};
use crate::vectors::filter::Filter;
use std::sync::Arc;

/// Reads of a hybrid search's two halves before the last ones stand
/// (`both_halves`), and the longest wait for a write that applies.
const HYBRID_READS: u32 = 4;
const HYBRID_WAIT: std::time::Duration = std::time::Duration::from_millis(100);

/// A search as the caller asked for it (checked by the host).
#[derive(Clone)]
pub struct SearchOptions {
    pub top_k: usize,
    pub mode: Option<Mode>,
    pub min_score: Option<f64>,
    pub vector_weight: f64,
    pub fusion: crate::search::mode::Fusion,
    pub filter: Option<Filter>,
    /// The filter as given, for a store of the user's.
    pub filter_json: Option<serde_json::Value>,
    /// `pathPrefix`: only documents under this path (every mode).
    pub path_prefix: Option<String>,
    /// `group: 'file'`: one result per file (`search::group`).
    pub group_by_file: bool,
    /// The file kinds' weights for this query (set by `Engine::search_at_once`
    /// from the `fileKinds` option and the query's wording).
    pub kind_weights: Option<crate::index::kind::KindWeights>,
    /// The workspace's git history, as of this search (`gitHistory`).
    pub history: Option<std::sync::Arc<crate::search::history::FileHistory>>,
    /// The workspace's tokenizer, for the file-name signal (`search::file_name`;
    /// none with a JavaScript tokenizer).
    pub file_names: Option<std::sync::Arc<crate::analysis::tokenizer::Tokenizer>>,
}

impl Default for SearchOptions {
    /// Mastra's defaults: five results, `vectorWeight` 0.5, weighted fusion.
    fn default() -> Self {
        SearchOptions {
            top_k: 5,
            mode: None,
            min_score: None,
            vector_weight: 0.5,
            fusion: crate::search::mode::Fusion::Weighted,
            filter: None,
            filter_json: None,
            path_prefix: None,
            group_by_file: false,
            kind_weights: None,
            history: None,
            file_names: None,
        }
    }
}

/// A query's terms for the built-in tokenizer: its words, then the whole
/// identifiers it names (`analysis::identifiers`; a JavaScript tokenizer's
/// index has none).
fn keyword_tokens(tokenizer: &crate::analysis::tokenizer::Tokenizer, query: &str) -> Vec<String> {
    let mut tokens = tokenizer.tokenize(query);
    tokens.extend(crate::analysis::identifiers::terms_of_query(query));
    tokens
}

/// Query tokens and postings a search answered on the JavaScript thread
/// may read: about a millisecond. Past them it runs on a blocking thread:
/// a query of 32,000 words held the thread 230 ms on 5,000 documents.
const AT_ONCE_BYTES: usize = 4096;
const AT_ONCE_TOKENS: usize = 64;
const AT_ONCE_POSTINGS: u64 = 100_000;

/// Whether a bm25 search of `tokens` is cheap enough to answer at once.
fn cheap_at_once(index: &Bm25Index, tokens: &[String]) -> bool {
    tokens.len() <= AT_ONCE_TOKENS && index.postings_of(tokens) <= AT_ONCE_POSTINGS
}

/// Ids in one `$in` filter at most (LibSQL binds one variable per id).
const MAX_SCOPED_IDS: usize = 1000;

/// The store filter of a `pathPrefix` search: the ids this workspace wrote
/// under the prefix (`$in`, which every Mastra store and ours applies
/// inside its search), with the user's filter beside it (`$and`); `None`
/// when the ledger knows none (a store written by others) or too many:
/// the store is then asked for more and its hits are filtered here.
fn scoped_filter(v: &VectorSide, prefix: &str, opts: &SearchOptions) -> Option<(Filter, serde_json::Value)> {
    let ids: Vec<String> = v.ledger.lock().with_prefix("").into_iter().filter(|id| under_prefix(id, prefix)).collect();
    if ids.is_empty() || ids.len() > MAX_SCOPED_IDS {
        return None;
    }
    let mut json = serde_json::json!({ "id": { "$in": ids } });
    if let Some(user) = &opts.filter_json {
        json = serde_json::json!({ "$and": [user, json] });
    }
    let filter = Filter::parse(&json).expect("a filter of ids is valid");
    Some((filter, json))
}

/// A search prepared by `Engine::search_at_once`: answered already (on the
/// caller's thread), or left to `Engine::search` (off it).
pub enum Prepared {
    Answered(Vec<SearchHit>),
    /// Ranked; some texts are still to be read from the snapshot file (`texts_read`).
    Unread(Vec<SearchHit>),
    Later(Mode, Box<SearchOptions>),
}

impl Engine {
    /// `hits` with every text read from the snapshot file where one is still
    /// there, on a blocking thread (a read from disk), once a snapshot
    /// store's texts part is here (or this search fails, typed).
    pub async fn texts_read(&self, hits: Vec<SearchHit>) -> Result<Vec<SearchHit>> {
        if !texts_unread(&hits) {
            return Ok(hits);
        }
        self.remote_texts_for(&hits).await?;
        let (read, damaged) = super::blocking(move || {
            let asked = hits.len();
            let read = read_texts(hits);
            let damaged = read.len() < asked;
            (read, damaged)
        })
        .await?;
        match self.remote().filter(|_| damaged).and_then(|r| r.damaged_cached_text()) {
            Some(e) => Err(e),
            None => Ok(read),
        }
    }

    /// Prepares a search and answers it on this thread when it can: an empty
    /// query, or bm25 mode with the built-in tokenizer while no writer holds
    /// the index and every text is in memory. `mode`: the one asked for
    /// (already checked against what the workspace can do).
    pub fn search_at_once(self: &Arc<Self>, query: &str, mode: Mode, mut opts: SearchOptions) -> Prepared {
        opts.kind_weights = Some(crate::index::kind::for_query(&self.kind_weights, query));
        opts.history = self.history_for_search();
        opts.file_names = match &self.keyword {
            Some(Keyword { tokenizer, js: None }) => Some(tokenizer.clone()),
            _ => None,
        };
        // A query of spaces alone is as empty: nothing to match, nothing worth embedding.
        if query.trim().is_empty() || opts.top_k == 0 {
            return Prepared::Answered(Vec::new());
        }
        // The reranker answers later: every mode goes the async way.
        if self.reranker.is_some() || mode != Mode::Bm25 {
            return Prepared::Later(mode, Box::new(opts));
        }
        let Some(Keyword { tokenizer, js: None }) = &self.keyword else { return Prepared::Later(mode, Box::new(opts)) };
        if query.len() > AT_ONCE_BYTES {
            return Prepared::Later(mode, Box::new(opts)); // tokenized off this thread too
        }
        let tokens = keyword_tokens(tokenizer, query);
        if tokens.is_empty() {
            return Prepared::Answered(Vec::new());
        }
        let Some(index) = self.index.try_read() else { return Prepared::Later(mode, Box::new(opts)) };
        // Postings still on their way are fetched first, off this thread
        // (or the index dropped for unreadable ones fails the search there);
        // a long query is ranked off it too.
        if index.postings_pending() || self.index_emptied() || !cheap_at_once(&index, &tokens) {
            return Prepared::Later(mode, Box::new(opts));
        }
        let hits = Engine::bm25_results(&index, &tokens, &opts);
        let damaged = index.damaged().is_some();
        drop(index);
        if damaged {
            return Prepared::Later(mode, Box::new(opts)); // fails there, with why
        }
        if texts_unread(&hits) {
            // Texts still in the snapshot file are read off this thread.
            return Prepared::Unread(hits);
        }
        Prepared::Answered(hits)
    }

    /// A search `search_at_once` left for later.
    pub async fn search(self: Arc<Self>, query: String, mode: Mode, opts: SearchOptions) -> Result<Vec<SearchHit>> {
        if self.reranker.is_some() {
            return self.search_reranked(query, mode, opts).await;
        }
        if mode != Mode::Bm25 {
            return self.search_vectors(query, mode, opts).await;
        }
        self.search_bm25(&query, opts).await
    }

    pub async fn query_tokens(&self, query: &str) -> Result<Vec<String>> {
        match &self.keyword {
            Some(Keyword { js: Some(f), .. }) => {
                Ok(f.tokenize(vec![query.to_string()]).await?.pop().unwrap_or_default())
            }
            Some(Keyword { tokenizer, js: None }) => Ok(keyword_tokens(tokenizer, query)),
            // Line ranges of vector hits use the default tokenizer, as Mastra.
            None => Ok(default_tokenizer().tokenize(query)),
        }
    }

    /// The tokenizer of line ranges and highlights: the workspace's own, or
    /// the default one (no BM25, or a JavaScript tokenizer).
    pub fn line_tokenizer(&self) -> std::sync::Arc<crate::analysis::tokenizer::Tokenizer> {
        match &self.keyword {
            Some(Keyword { tokenizer, .. }) => tokenizer.clone(),
            None => default_tokenizer(),
        }
    }

    /// bm25-mode results (query without tokens: none).
    pub fn bm25_results(index: &Bm25Index, tokens: &[String], opts: &SearchOptions) -> Vec<SearchHit> {
        if tokens.is_empty() {
            return Vec::new();
        }
        let search = |top_k| {
            let q = KeywordQuery {
                tokens,
                top_k,
                min_score: opts.min_score,
                filter: opts.filter.as_ref(),
                path_prefix: opts.path_prefix.as_deref(),
                kind_weights: opts.kind_weights.as_ref(),
            };
            let pool = if opts.group_by_file { FILE_POOL } else { POOL };
            keyword_ranked(index, &q, opts.history.as_deref(), opts.file_names.as_deref(), pool)
        };
        if opts.group_by_file {
            return group::grouped(opts.top_k, search, |files| Self::chunks_of(index, tokens, opts, files));
        }
        search(opts.top_k)
    }

    /// The lines each document of `files` that matches the query spans
    /// (for their ranges): the chunks, and a document indexed under the
    /// file's own path beside them (`index()` of that path before the file
    /// is read again), looked up by id, not searched for.
    fn chunks_of(
        index: &Bm25Index,
        tokens: &[String],
        opts: &SearchOptions,
        files: &[String],
    ) -> Vec<(String, (u32, u32))> {
        let wanted = index.distinct_term_ids(tokens);
        let prefix = opts.path_prefix.as_deref().map(path_prefix).unwrap_or("");
        // As `keyword_search` keeps hits and `group::file_of` places them:
        // the file's own or a chunk of it, under the prefix, through the
        // filter, its text not damaged.
        let kept = |doc: &crate::index::Document, file: &str| {
            (doc.id == file || doc.source_file() == Some(file))
                && under_prefix(&doc.id, prefix)
                && opts.filter.as_ref().is_none_or(|f| f.matches_document(&doc.id, doc.metadata.as_deref()))
                && !doc.content.is_damaged()
        };
        let mut out = Vec::new();
        for file in files {
            for (doc, range) in index.file_docs_holding(file, &wanted) {
                if kept(doc, file) {
                    out.push((file.clone(), crate::search::keyword::shift_range(range, doc.start_line_offset)));
                }
            }
        }
        out
    }

    /// bm25-mode hits, ranked in Rust (off this task when a write holds the index).
    async fn keyword_hits(
        self: &Arc<Self>,
        tokens: &[String],
        top_k: usize,
        opts: &SearchOptions,
    ) -> Result<Vec<SearchHit>> {
        if tokens.is_empty() || self.keyword.is_none() {
            return Ok(Vec::new());
        }
        self.remote_postings_for(tokens).await?;
        let (tokens, opts, me) = (tokens.to_vec(), opts.clone(), self.clone());
        self.read_index(move |index| {
            me.not_emptied()?;
            let q = KeywordQuery {
                tokens: &tokens,
                top_k,
                min_score: None,
                filter: opts.filter.as_ref(),
                path_prefix: opts.path_prefix.as_deref(),
                kind_weights: opts.kind_weights.as_ref(),
            };
            // (The pools bm25 mode re-ranks: file-level results fold chunk hits.)
            let pool = if opts.group_by_file { FILE_POOL } else { POOL };
            undamaged(index, keyword_ranked(index, &q, opts.history.as_deref(), opts.file_names.as_deref(), pool))
        })
        .await?
    }

    /// The query's embedding.
    async fn query_vector(v: &VectorSide, query: &str) -> Result<Vec<f32>> {
        let mut q = v.embedder.embed_group(vec![query.to_string()], "query").await?;
        Ok(q.pop().unwrap_or_default())
    }

    /// vector-mode hits: the store queried with the query's embedding.
    async fn vector_hits(
        &self,
        v: &VectorSide,
        vector: Vec<f32>,
        top_k: usize,
        opts: &SearchOptions,
    ) -> Result<Vec<SearchHit>> {
        let prefix = opts.path_prefix.as_deref().map(path_prefix).filter(|p| !p.is_empty());
        let scoped = prefix.and_then(|p| scoped_filter(v, p, opts));
        let filter = match &scoped {
            Some((f, json)) => Some((f, json)),
            None => opts.filter.as_ref().zip(opts.filter_json.as_ref()),
        };
        // Without a filter of ids, more hits are asked for and filtered
        // below, deeper while the store answered in full and too few were
        // under the prefix (a shallower ask that kept fewer than `top_k`
        // made a larger `topK` see other hits first).
        let unscoped = prefix.filter(|_| scoped.is_none());
        let (first, most) = (top_k.saturating_mul(8).max(200), top_k.saturating_mul(64).max(group::MAX_VECTOR_DEPTH));
        let mut depth = if unscoped.is_some() { first } else { top_k };
        let hits = loop {
            let mut hits = v.store.query(&v.index_name, vector.clone(), depth, filter).await?;
            let (full, answered) = (hits.len() >= depth, hits.len());
            // Vectors whose deletion failed are still in the store: never results.
            {
                let ledger = v.ledger.lock();
                if ledger.has_undeleted() {
                    hits.retain(|h| !ledger.is_undeleted(&h.id));
                }
            }
            if let Some(p) = unscoped {
                hits.retain(|h| hybrid::stored_path(h).is_some_and(|path| under_prefix(path, p)));
            }
            // (Nothing left out: the store's answer, as deep as it goes.)
            if hits.len() >= top_k || !full || depth >= most || hits.len() == answered {
                hits.truncate(top_k);
                break hits;
            }
            depth = depth.saturating_mul(2).min(most);
        };
        // Line ranges come later, for the hits kept (`with_line_ranges`).
        Ok(hits.into_iter().map(|h| hybrid::vector_result(h, |_| None)).collect())
    }

    /// The line range of each vector hit kept that has none (one the
    /// keyword half did not find): its text tokenized line by line, which
    /// for every candidate of a 200-deep half cost more than the rest of
    /// the search.
    async fn with_line_ranges(&self, mut hits: Vec<SearchHit>, tokens: &[String]) -> Result<Vec<SearchHit>> {
        let tokenizer = match &self.keyword {
            Some(Keyword { tokenizer, js: None }) => tokenizer.clone(),
            Some(Keyword { js: Some(f), .. }) => return js_line_ranges(f.as_ref(), hits, tokens).await,
            None => default_tokenizer(),
        };
        for h in hits.iter_mut().filter(|h| h.line_range.is_none() && h.vector.is_some()) {
            h.line_range = hybrid::line_range_of(&h.content, tokens, &tokenizer)
                .map(|r| crate::search::shift_range(r, h.line_offset));
        }
        Ok(hits)
    }

    /// Vector hits whose store kept no text (one that answers ids and
    /// scores alone) take the index's, where it holds the document: their
    /// content was empty. Read here (`texts_read`: from the snapshot off the
    /// runtime, a store's by range), as their line ranges need them.
    async fn with_index_texts(self: &Arc<Self>, hits: Vec<SearchHit>) -> Result<Vec<SearchHit>> {
        let bare = |h: &SearchHit| h.bm25.is_none() && h.content.is_empty();
        if self.keyword.is_none() || !hits.iter().any(bare) {
            return Ok(hits);
        }
        let filled = self
            .read_index(move |index| {
                let mut hits = hits;
                for h in hits.iter_mut().filter(|h| bare(h)) {
                    if let Some(doc) = index.get(&h.id) {
                        h.content = doc.content.clone();
                        h.line_offset = doc.start_line_offset;
                        h.metadata = h.metadata.take().or_else(|| doc.metadata.clone());
                    }
                }
                hits
            })
            .await?;
        self.texts_read(filled).await
    }

    /// Which vector hits (none of the keyword half's: theirs are known) are
    /// pieces of a long line, as the index knows its chunks.
    async fn with_line_cuts(self: &Arc<Self>, hits: Vec<SearchHit>) -> Result<Vec<SearchHit>> {
        if self.keyword.is_none() || !hits.iter().any(|h| h.bm25.is_none()) {
            return Ok(hits);
        }
        self.read_index(move |index| {
            let mut hits = hits;
            for h in hits.iter_mut().filter(|h| h.bm25.is_none()) {
                if let Some(doc) = index.get(&h.id) {
                    h.line_cut = crate::search::keyword::line_cut_of(index, doc);
                }
            }
            hits
        })
        .await
    }

    /// A hybrid search's two halves, read with no write applied between
    /// them: the index and the store are two systems, and a write applied
    /// between the two reads (its vector written, its BM25 text not yet, or
    /// read in one half only) would mix the state before it with the state
    /// after it. Read again while one did (`Gate::applied`), waiting for a
    /// write that applies to end; past `HYBRID_READS` tries (a long write,
    /// such as `init()`'s), the last reads stand.
    async fn both_halves(
        self: &Arc<Self>,
        v: &VectorSide,
        vector: Vec<f32>,
        tokens: &[String],
        depth: usize,
        opts: &SearchOptions,
    ) -> Result<(Vec<SearchHit>, Vec<SearchHit>)> {
        let mut tries = 1;
        loop {
            let before = self.gate.applied();
            let keyword = self.keyword_hits(tokens, depth, opts).await?;
            let hits = self.vector_first(v, &vector, depth, opts).await?;
            let clean = before.is_multiple_of(2) && self.gate.applied() == before;
            if clean || tries == HYBRID_READS {
                return Ok((keyword, hits));
            }
            tries += 1;
            self.gate.quiet(HYBRID_WAIT, false).await;
        }
    }

    /// bm25-mode results off the JavaScript thread (a JavaScript tokenizer,
    /// the index held by a writer, or a reranker to call), texts read.
    async fn search_bm25(self: &Arc<Self>, query: &str, opts: SearchOptions) -> Result<Vec<SearchHit>> {
        let tokens = self.query_tokens(query).await?;
        self.remote_postings_for(&tokens).await?;
        let me = self.clone();
        let hits = self
            .read_index(move |index| {
                me.not_emptied()?;
                undamaged(index, Engine::bm25_results(index, &tokens, &opts))
            })
            .await??;
        self.texts_read(hits).await
    }

    /// Search with the user's reranker: the first stage asked for at least
    /// `rerankDepth` results, the first of them reranked, then cut to `topK`.
    async fn search_reranked(
        self: Arc<Self>,
        query: String,
        mode: Mode,
        mut opts: SearchOptions,
    ) -> Result<Vec<SearchHit>> {
        let reranker = self.reranker.clone().expect("checked");
        let (top_k, min_score) = (opts.top_k, opts.min_score);
        // One hit past the candidates, whatever `top_k`: its score is the
        // floor the blend scales them to (without it, 0), so a result's score,
        // and what `minScore` then keeps, does not depend on `top_k`.
        opts.top_k = top_k.max(reranker.depth().saturating_add(1));
        let hits = if mode == Mode::Bm25 {
            self.search_bm25(&query, opts).await?
        } else {
            self.clone().search_vectors(query.clone(), mode, opts).await?
        };
        let mut hits = rerank(reranker.as_ref(), self.rerank_timeout, &query, hits).await;
        // `minScore` compares against the score returned: the blend, once reranked.
        hits.retain(|h| min_score.is_none_or(|m| h.score >= m));
        hits.truncate(top_k);
        Ok(hits)
    }

    /// Search in vector or hybrid mode.
    async fn search_vectors(self: Arc<Self>, query: String, mode: Mode, opts: SearchOptions) -> Result<Vec<SearchHit>> {
        let v = self.vectors.as_ref().expect("checked");
        let tokens = self.query_tokens(&query).await?;
        let vector = Self::query_vector(v, &query).await?;
        if !opts.group_by_file {
            let results = match mode {
                Mode::Vector => self.vector_ties_by_id(v, &vector, &opts).await?,
                _ => self.ranked_vectors(v, &vector, &tokens, mode, opts.top_k, &opts).await?,
            };
            let results = self.with_line_ranges(self.with_index_texts(results).await?, &tokens).await?;
            return self.texts_read(self.with_line_cuts(results).await?).await;
        }
        // File-level results fold chunks: asked deeper while the hits fill
        // the depth and fewer files than wanted came of them (as `grouped`),
        // no deeper than a store is asked for (hybrid reads each half in
        // tiers up to twice the depth), nor once every file written is among them. A
        // deeper ask that fails keeps what the one before found.
        let most = if mode == Mode::Vector { group::MAX_VECTOR_DEPTH } else { group::MAX_VECTOR_DEPTH / 2 };
        // (A store only others wrote to: as many files as it holds.)
        let files_written = Some(v.ledger.lock().sources()).filter(|&n| n > 0).unwrap_or(usize::MAX);
        let mut depth = group::first_depth(opts.top_k).min(most.max(opts.top_k));
        let mut results = self.ranked_vectors(v, &vector, &tokens, mode, depth, &opts).await?;
        while results.len() >= depth && depth < most {
            let files = group::files_of(&results);
            // Of them, those this workspace wrote (not another writer's, nor vectors left over).
            let written = {
                let ledger = v.ledger.lock();
                files.iter().filter(|f| ledger.get(f).is_some()).count()
            };
            if files.len() >= opts.top_k || written >= files_written {
                break;
            }
            depth = depth.saturating_mul(2).min(most);
            match self.ranked_vectors(v, &vector, &tokens, mode, depth, &opts).await {
                Ok(deeper) => results = deeper,
                Err(_) => break,
            }
        }
        // Line ranges of the last depth's hits only (each depth's cost them
        // all again: with a JavaScript tokenizer, every line of every hit
        // went to it on its thread, at each depth). Folded before the texts
        // are read: only each file's best chunk is shown.
        let results = self.with_line_ranges(self.with_index_texts(results).await?, &tokens).await?;
        self.texts_read(group::by_file(self.with_line_cuts(results).await?, opts.top_k)).await
    }

    /// Vector mode's first `topK`, ties by id (`vector_first`).
    async fn vector_ties_by_id(&self, v: &VectorSide, vector: &[f32], opts: &SearchOptions) -> Result<Vec<SearchHit>> {
        let hits = self.vector_first(v, vector, opts.top_k, opts).await?;
        Ok(hybrid::vector_results(hits, opts.top_k, opts.min_score))
    }

    /// The first `top_k` vector hits by raw score, then id, each id once:
    /// the store asked for one hit more, and deeper while a tie straddles
    /// the cut (to 16 x `top_k` or `top_k` + 100), so that the id, not the
    /// store (LibSQL and DuckDB answer the last written first), picks which
    /// tied hits come back (in vector mode, and in hybrid's vector half,
    /// whose first tiers must not depend on how deep it was read).
    async fn vector_first(
        &self,
        v: &VectorSide,
        vector: &[f32],
        top_k: usize,
        opts: &SearchOptions,
    ) -> Result<Vec<SearchHit>> {
        let most = top_k.saturating_mul(16).max(top_k.saturating_add(100)).min(group::MAX_VECTOR_DEPTH).max(top_k);
        let mut depth = top_k.saturating_add(1).min(most);
        loop {
            let hits = self.vector_hits(v, vector.to_vec(), depth, opts).await?;
            if depth >= most || !hybrid::tie_at_cut(&hits, top_k, depth) {
                return Ok(hybrid::vector_results(hits, top_k, None));
            }
            depth = depth.saturating_mul(2).min(most);
        }
    }

    /// The first `top_k` vector-mode or hybrid results, texts not read yet
    /// and line ranges not found (`with_line_ranges`, for the hits kept).
    async fn ranked_vectors(
        self: &Arc<Self>,
        v: &VectorSide,
        vector: &[f32],
        tokens: &[String],
        mode: Mode,
        top_k: usize,
        opts: &SearchOptions,
    ) -> Result<Vec<SearchHit>> {
        if mode == Mode::Vector {
            let hits = self.vector_hits(v, vector.to_vec(), top_k, opts).await?;
            return Ok(hybrid::vector_results(hits, top_k, opts.min_score));
        }
        let (keyword, vector) = self.both_halves(v, vector.to_vec(), tokens, hybrid_depth(top_k), opts).await?;
        let merged = hybrid::merge(keyword, vector, opts.vector_weight, opts.fusion, top_k, opts.min_score);
        Ok(merged)
    }
}

/// `hits` reranked (the first `depth` of them), or as they were with the
/// reason on each when the reranker fails, answers late or answers wrong.
async fn rerank(
    reranker: &dyn RerankCall,
    timeout: std::time::Duration,
    query: &str,
    hits: Vec<SearchHit>,
) -> Vec<SearchHit> {
    let candidates = crate::search::rerank::candidates(&hits, reranker.depth());
    if candidates.is_empty() {
        return hits;
    }
    let n = candidates.len();
    let ms = timeout.as_millis();
    let why = match tokio::time::timeout(timeout, reranker.scores(query, candidates)).await {
        Err(_) => format!("the reranker did not answer within {ms} ms"),
        Ok(Err(e)) => format!("the reranker failed: {}", if e.reason.is_empty() { "no message" } else { &e.reason }),
        Ok(Ok(Err(e))) => format!("the reranker did not answer an array of numbers ({e})"),
        Ok(Ok(Ok(scores))) => match crate::search::rerank::check(Some(scores), n) {
            Ok(scores) => return crate::search::rerank::blend(hits, &scores),
            Err(why) => why,
        },
    };
    crate::search::rerank::failed(hits, &why)
}

/// `hits`, unless the search found the loaded snapshot's postings damaged
/// (it then left them out): an error that says so, until a rebuild.
fn undamaged(index: &Bm25Index, hits: Vec<SearchHit>) -> Result<Vec<SearchHit>> {
    match index.damaged() {
        None => Ok(hits),
        Some(why) => Err(super::Error::from_reason(format!(
            "the saved index is damaged ({why}): rebuildSearchIndex() builds it again from the files"
        ))),
    }
}

/// `with_line_ranges` through the user's tokenizer, as Mastra's
/// `findLineRange` tokenizes each line: the lines of every hit without a
/// range in one call (they had none at all with a JavaScript tokenizer).
async fn js_line_ranges(f: &dyn TokenizeCall, mut hits: Vec<SearchHit>, tokens: &[String]) -> Result<Vec<SearchHit>> {
    let wanted: Vec<usize> =
        (0..hits.len()).filter(|&i| hits[i].line_range.is_none() && hits[i].vector.is_some()).collect();
    if tokens.is_empty() || wanted.is_empty() {
        return Ok(hits);
    }
    let mut lines = Vec::new();
    let counts: Vec<usize> = wanted
        .iter()
        .map(|&i| {
            let before = lines.len();
            lines.extend(hits[i].content.split('\n').map(str::to_string));
            lines.len() - before
        })
        .collect();
    let mut tokenized = f.tokenize(lines).await?.into_iter();
    for (i, count) in wanted.into_iter().zip(counts) {
        let h = &mut hits[i];
        let mut range: Option<(u32, u32)> = None;
        for (line, line_tokens) in (1..).zip(tokenized.by_ref().take(count)) {
            if line_tokens.iter().any(|t| tokens.contains(t)) {
                range = Some(range.map_or((line, line), |(start, _)| (start, line)));
            }
        }
        h.line_range = range.map(|r| crate::search::shift_range(r, h.line_offset));
    }
    Ok(hits)
}
