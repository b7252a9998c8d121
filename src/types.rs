//! The objects the API returns, and their conversions from the engine.

use napi::bindgen_prelude::*;
use napi::{sys, JsValue};
use napi_derive::napi;
use workspace_search_core::engine::Outcome;
use workspace_search_core::search::rerank::RerankNote;
use workspace_search_core::search::SearchHit;

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

/// Where a result's `content` is a piece of a line longer than the chunks'
/// `maxChars`: whether the line goes on before it, after it.
#[napi(object)]
pub struct LineCut {
    pub start: bool,
    pub end: bool,
}

/// The raw scores behind `score`.
#[napi(object)]
pub struct ScoreDetails {
    /// Raw BM25 score.
    pub bm25: Option<f64>,
    /// Raw vector-store score.
    pub vector: Option<f64>,
    /// With `rerank`: the reranker's score of this result.
    pub rerank: Option<f64>,
    /// With `rerank`: why the first-stage order was kept (the reranker
    /// threw, timed out, or answered other than one finite number per
    /// candidate).
    pub rerank_error: Option<String>,
}

/// The shape of a result, for the TypeScript declarations; results are
/// built from `SearchResults` (below) at run time.
#[allow(dead_code)]
#[napi(object, object_from_js = false)]
pub struct SearchResult {
    /// Document id: the path given to `index()`, a file path, or `path#chunk-N`.
    pub id: String,
    /// The whole indexed text of the document or chunk.
    #[napi(ts_type = "string")]
    pub content: crate::text::Text,
    /// In [0, 1]; the best BM25 match scores 1.
    pub score: f64,
    pub line_range: Option<LineRange>,
    /// With `group: 'file'`: the range of every matching chunk of the file
    /// (`lineRange` is the best chunk's), in line order.
    pub line_ranges: Option<Vec<LineRange>>,
    /// Present where `content` is a piece of one line longer than
    /// `chunking.maxChars` (its `lineRange` is that line): which ends of
    /// the line it leaves out.
    pub line_cut: Option<LineCut>,
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
    /// Texts sent to the embedder (0 without one; texts whose vector the
    /// store already holds are not sent again).
    pub embedded: u32,
    /// Files reused from the saved index without reading them (`persist`).
    pub reused: u32,
    /// Files read again because their size or modification time changed
    /// (or they are new); those whose content is unchanged cost nothing more.
    pub reread: u32,
    /// Files whose documents were removed since the saved index (`persist`):
    /// gone, or now skipped or failing (0 without `persist`: each `init()`
    /// builds anew).
    pub removed: u32,
    /// Why the saved index could not be used or saved (`persist`): the
    /// index was then rebuilt from the files, or is kept in memory only.
    pub warnings: Vec<String>,
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
    /// With `persist`: why the last save failed (a save after writes runs
    /// in the background, so its failure is kept here); absent once a
    /// save succeeds.
    pub save_error: Option<String>,
    /// With `watch`, once watching (after `init()`): whether every watched
    /// directory is watched, and what happened.
    pub watch: Option<WatchStats>,
    /// With `gitHistory`, in a git work tree: the history in use.
    pub history: Option<HistoryStats>,
    /// After a `grep()`: its trigram index.
    pub grep: Option<GrepStats>,
    /// The embedded store's HNSW graph, when it keeps one (past 250,000 vectors).
    pub vector_graph: Option<VectorGraphStats>,
}

/// `stats().vectorGraph`, `LocalVector.describeIndex().graph`.
#[napi(object)]
pub struct VectorGraphStats {
    /// `building` (queries scan meanwhile), `ready`, or `failed` (queries scan; `error` says why).
    #[napi(ts_type = "'building' | 'ready' | 'failed'")]
    pub state: String,
    /// Vectors removed since it was built (it is built again past a quarter of them).
    pub removed: f64,
    /// Writes its thread has not yet applied (queries score their vectors meanwhile).
    pub pending: f64,
    pub error: Option<String>,
}

impl From<workspace_search_core::vectors::graph::GraphStatus> for VectorGraphStats {
    fn from(s: workspace_search_core::vectors::graph::GraphStatus) -> Self {
        use workspace_search_core::vectors::graph::GraphStatus::*;
        let (state, removed, pending, error) = match s {
            Building => ("building", 0, 0, None),
            Ready { removed, pending } => ("ready", removed, pending, None),
            Failed(e) => ("failed", 0, 0, Some(e)),
        };
        VectorGraphStats { state: state.into(), removed: removed as f64, pending: pending as f64, error }
    }
}

/// One candidate handed to the reranker (`rerank(query, candidates)`).
#[napi(object)]
pub struct RerankCandidate {
    pub id: String,
    /// The file it comes from.
    pub path: String,
    /// Its text, cut to 2,000 characters.
    pub text: String,
    /// Its first-stage score.
    pub score: f64,
}

/// `stats().history`.
#[napi(object)]
pub struct HistoryStats {
    /// The commit it was read at (`HEAD` then).
    pub head: String,
    /// Files with at least one commit message.
    pub files: u32,
    /// Approximate memory it holds.
    pub memory_bytes: f64,
}

/// `stats().grep`.
#[napi(object)]
#[derive(Clone)]
pub struct GrepStats {
    /// Files whose trigrams are kept.
    pub files: u32,
    /// Approximate memory the index holds.
    pub memory_bytes: f64,
    /// Files and folders the last grep could not read (skipped).
    pub unreadable: u32,
    /// Folders whose walk is kept and watched (0: each grep walks the disk).
    pub watched_folders: u32,
    /// The trigram index is being built in the background (after the first grep).
    pub building: bool,
    /// Files the last grep walked, and how many of them it read (the others
    /// its trigram query ruled out).
    pub last_searched: u32,
    pub last_read: u32,
}

/// `stats().watch`.
#[napi(object)]
pub struct WatchStats {
    /// Every watched directory is watched. False while a watched directory
    /// is gone (it is looked for every half second and watched again when
    /// it comes back) or after the system refused a watch (the tree is
    /// then reconciled every 10 seconds).
    pub live: bool,
    /// Bursts of changes applied to the paths they named.
    pub updates: f64,
    /// Reconciles of the whole tree (events lost, too many at once, a
    /// directory back, or the periodic one while a watch is refused).
    pub rescans: f64,
    /// What went wrong while watching, newest last (the last 20).
    pub warnings: Vec<String>,
}

/// Results as JavaScript receives them: `SLOTS` values a result, that
/// lib/results.js turns into objects. V8 builds object literals of one
/// shape much faster than Node-API sets named properties one by one (a key
/// lookup and a map transition each). Up to `MAX_ARGS` values go as the
/// arguments of one call (no array to fill: the 80 `napi_set_element`
/// calls of 10 results were a tenth of a query's time in Node); more go in one array.
pub struct SearchResults(pub Vec<SearchHit>);

const SLOTS: usize = 12;
/// Values passed as call arguments at most (V8 puts them on the stack).
const MAX_ARGS: usize = 64 * SLOTS;

impl ToNapiValue for SearchResults {
    unsafe fn to_napi_value(env: sys::napi_env, val: Self) -> Result<sys::napi_value> {
        // A panic here would abort Node.js: it becomes a thrown error.
        crate::js::guard(|| {
            let mut undefined = std::ptr::null_mut();
            check_status!(sys::napi_get_undefined(env, &mut undefined))?;
            let mut values = Vec::with_capacity(val.0.len() * SLOTS);
            for h in val.0 {
                values.extend(result_values(env, h, undefined)?);
            }
            let js_env = Env::from_raw(env);
            let mut global = std::ptr::null_mut();
            check_status!(sys::napi_get_global(env, &mut global))?;
            let mut out = std::ptr::null_mut();
            if values.len() <= MAX_ARGS {
                let make = crate::js::runtime_fn(&js_env, "resultsOf")?;
                check_status!(sys::napi_call_function(
                    env,
                    global,
                    make.raw(),
                    values.len(),
                    values.as_ptr(),
                    &mut out
                ))?;
                return Ok(out);
            }
            let mut flat = std::ptr::null_mut();
            check_status!(sys::napi_create_array_with_length(env, values.len(), &mut flat))?;
            for (i, v) in values.into_iter().enumerate() {
                check_status!(sys::napi_set_element(env, flat, i as u32, v))?;
            }
            let make = crate::js::runtime_fn(&js_env, "results")?;
            check_status!(sys::napi_call_function(env, global, make.raw(), 1, &flat, &mut out))?;
            Ok(out)
        })
    }
}

/// One result's values, in lib/results.js's order: id, content, score,
/// line range start and end, metadata, bm25 and vector scores, and the
/// metadata's key when it is a single string entry (the value then stands
/// in the metadata slot, not JSON text), a file-level result's ranges, and
/// the reranker's score (a number) or why there is none (a string), and
/// where the content is a piece of a longer line (1: cut at its start, 2:
/// at its end, 3: both).
unsafe fn result_values(
    env: sys::napi_env,
    h: SearchHit,
    undefined: sys::napi_value,
) -> Result<[sys::napi_value; SLOTS]> {
    let opt_f64 = |v: Option<f64>| v.map_or(Ok(undefined), |v| f64::to_napi_value(env, v));
    // A chunk's metadata is `{ sourceFile }`: its key and value are cheaper
    // to hand over than JSON text to write and parse.
    let (metadata, key) = match h.metadata.as_deref() {
        None => (undefined, undefined),
        Some(m) => match m.iter().next() {
            Some((k, serde_json::Value::String(v))) if m.len() == 1 => {
                (<&str>::to_napi_value(env, v.as_str())?, <&str>::to_napi_value(env, k.as_str())?)
            }
            _ => (String::to_napi_value(env, serde_json::to_string(m).unwrap_or_else(|_| "{}".into()))?, undefined),
        },
    };
    Ok([
        String::to_napi_value(env, h.id)?,
        crate::text::Text::to_napi_value(env, crate::text::Text(h.content))?,
        f64::to_napi_value(env, h.score)?,
        h.line_range.map_or(Ok(undefined), |l| u32::to_napi_value(env, l.0))?,
        h.line_range.map_or(Ok(undefined), |l| u32::to_napi_value(env, l.1))?,
        metadata,
        opt_f64(h.bm25)?,
        opt_f64(h.vector)?,
        key,
        line_ranges(env, &h.line_ranges, undefined)?,
        match &h.rerank {
            None => undefined,
            Some(RerankNote::Score(s)) => f64::to_napi_value(env, *s)?,
            Some(RerankNote::Failed(why)) => <&str>::to_napi_value(env, why)?,
        },
        match u32::from(h.line_cut.start) | u32::from(h.line_cut.end) << 1 {
            0 => undefined,
            cut => u32::to_napi_value(env, cut)?,
        },
    ])
}

/// A file-level result's ranges as flat numbers (`start,end,...`) in one
/// string, undefined for other results (lib/results.js reads it).
unsafe fn line_ranges(
    env: sys::napi_env,
    ranges: &[(u32, u32)],
    undefined: sys::napi_value,
) -> Result<sys::napi_value> {
    if ranges.is_empty() {
        return Ok(undefined);
    }
    let mut text = String::with_capacity(ranges.len() * 8);
    for (i, (s, e)) in ranges.iter().enumerate() {
        use std::fmt::Write;
        let _ = write!(text, "{}{s},{e}", if i == 0 { "" } else { "," });
    }
    String::to_napi_value(env, text)
}

pub fn to_report(o: Outcome) -> IndexReport {
    let r = o.report;
    IndexReport {
        indexed: r.indexed as u32,
        chunks: r.chunks as u32,
        skipped: r.skipped.into_iter().map(|s| SkippedFile { path: s.path, reason: s.reason.to_string() }).collect(),
        failed: r.failed.into_iter().map(|f| FailedFile { path: f.path, error: f.error }).collect(),
        duration_ms: o.elapsed.as_secs_f64() * 1000.0,
        embedded: o.embedded as u32,
        reused: o.reused as u32,
        reread: o.reread as u32,
        removed: o.removed as u32,
        warnings: o.warnings,
    }
}
