//! The embedded vector store: named indexes of f32 vectors in contiguous
//! storage, top-k by cosine (or euclidean, dot product) scored exactly,
//! metadata filters, and the operations of Mastra's `MastraVector`. A query
//! scans the vectors' int8 codes (`quantized`) for the candidates whose
//! score, within the codes' error bound, may be among the best `k` (the
//! best `oversample x k`, where the bound shows them enough), and scores
//! those against the full vectors (a graph, when there is one, gives
//! `oversample x k` candidates instead).

use crate::bytes::section::Section;
use crate::scoring::topk::{ranks_before, sort_best_first, TopK};
use crate::vectors::filter::Filter;
use crate::vectors::graph::{Graph, GraphMetric, GraphParams, GraphStatus, Point};
use crate::vectors::quantized::{Codes, QueryCodes};
use rayon::prelude::*;
use rustc_hash::FxHashMap;
use serde_json::{Map, Value};
use std::sync::Arc;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Metric {
    Cosine,
    Euclidean,
    DotProduct,
}

impl Metric {
    pub fn parse(s: &str) -> Option<Metric> {
        match s {
            "cosine" => Some(Metric::Cosine),
            "euclidean" => Some(Metric::Euclidean),
            "dotproduct" => Some(Metric::DotProduct),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Metric::Cosine => "cosine",
            Metric::Euclidean => "euclidean",
            Metric::DotProduct => "dotproduct",
        }
    }
}

#[derive(Debug, thiserror::Error, PartialEq)]
pub enum VectorError {
    #[error("index \"{0}\" does not exist")]
    NoIndex(String),
    #[error("index \"{name}\" has dimension {expected}, got a vector of dimension {got}")]
    Dimension { name: String, expected: usize, got: usize },
    #[error("index \"{name}\" already exists with dimension {existing}, not {requested}")]
    Exists { name: String, existing: usize, requested: usize },
    #[error("{0}")]
    Invalid(String),
}

/// The longest vector an index takes (an embedder answering more is
/// refused, rather than kept at 4 bytes a component per document).
pub const MAX_DIMENSION: usize = 65_536;

/// What a query scans for its candidates.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Quantization {
    /// The f32 vectors themselves: exact, four times the bytes read.
    None,
    /// Int8 codes, then every vector whose score may be among the best `k`
    /// (within the codes' error bound) rescored exactly.
    Int8,
}

/// Whether an index keeps an HNSW graph (`graph`) to find candidates.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GraphChoice {
    /// From `AUTO_GRAPH_AT` vectors on (dropped below half of it).
    Auto,
    Always,
    Never,
}

/// How an index is scanned: a store-wide setting (`LocalVector` options).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ScanOptions {
    pub quantization: Quantization,
    /// Candidates per result wanted (at least 1): the scan's first (it
    /// takes more where the codes' error bound asks), a graph search's.
    pub oversample: usize,
    pub graph: GraphChoice,
    /// Candidates a graph search keeps (usearch's `expansion_search`).
    pub ef_search: usize,
}

/// Where an index starts keeping a graph by default: an int8 scan of this
/// many 384-dimension vectors takes about 3 ms on 2 cores (bench/vectors.mjs),
/// and the graph's build, minutes of both cores at a million, pays off.
pub const AUTO_GRAPH_AT: usize = 250_000;

/// Chosen by measurement: recall@10 0.985 on 1M x 384 clustered vectors.
pub const DEFAULT_EF_SEARCH: usize = 256;

/// More writes than this not yet in the graph (a bulk upsert it is still
/// taking in) and the scan answers: cheaper than scoring each exactly.
const MAX_PENDING_SCORED: usize = 4096;

/// A filter matching fewer than this share of a sample of the vectors is
/// answered by the scan: a graph search must walk far to find such vectors.
const SELECTIVE_FILTER: f64 = 0.02;

/// Chosen by measurement (bench/vectors.mjs) when the scan also kept this
/// many per result: the smallest that kept recall@10 at 1.0 on SciFact's
/// MiniLM vectors and on clustered 1536-dim ones (the scan is exact now;
/// 4 stays its first cut, not chosen again).
pub const DEFAULT_OVERSAMPLE: usize = 4;

impl Default for ScanOptions {
    fn default() -> Self {
        ScanOptions {
            quantization: Quantization::Int8,
            oversample: DEFAULT_OVERSAMPLE,
            graph: GraphChoice::Auto,
            ef_search: DEFAULT_EF_SEARCH,
        }
    }
}

/// One stored vector as returned by a query.
#[derive(Debug, Clone, PartialEq)]
pub struct VectorMatch {
    pub id: String,
    pub score: f64,
    pub metadata: Option<Map<String, Value>>,
    pub vector: Option<Vec<f32>>,
}

/// A graph the index holds: told to stop building when the index drops it.
#[derive(Debug)]
struct GraphHandle(Arc<Graph>);

impl Drop for GraphHandle {
    fn drop(&mut self) {
        self.0.abandon();
    }
}

#[derive(Debug)]
pub struct VectorIndex {
    dim: usize,
    metric: Metric,
    ids: Vec<String>,
    slot_of: FxHashMap<String, usize>,
    /// `dim` floats per vector, slot order; removal swaps the last slot in.
    /// (Viewed in the snapshot's mapping after a warm start; copied at
    /// the first write.)
    data: Section<f32>,
    norms: Vec<f32>,
    metadata: Vec<Option<Map<String, Value>>>,
    /// What `metadata` holds on the heap, about (`memory_bytes`), kept as
    /// it changes: a workspace's store holds each document's text there.
    metadata_bytes: usize,
    scan: ScanOptions,
    /// The vectors' codes, slot order, when `scan` quantizes.
    codes: Option<Codes>,
    graph: Option<GraphHandle>,
    /// A saved graph's bytes, decoded but not yet handed to usearch, which
    /// trusts its input (a damaged one can crash the process): restored
    /// by `restore_graph` once the snapshot's checksum is known good.
    saved_graph: Option<Vec<u8>>,
}

impl Clone for VectorIndex {
    /// A copy builds a graph of its own, if it wants one.
    fn clone(&self) -> Self {
        let mut ix = VectorIndex {
            dim: self.dim,
            metric: self.metric,
            ids: self.ids.clone(),
            slot_of: self.slot_of.clone(),
            data: self.data.clone(),
            norms: self.norms.clone(),
            metadata: self.metadata.clone(),
            metadata_bytes: self.metadata_bytes,
            scan: self.scan,
            codes: self.codes.clone(),
            graph: None,
            saved_graph: None,
        };
        ix.refresh_graph();
        ix
    }
}

/// The vector's length, summed in f64: squares of f32 components overflow
/// (2e19) or underflow (1e-23) in f32 where the length itself does not.
fn norm(v: &[f32]) -> f32 {
    v.iter().map(|&x| f64::from(x) * f64::from(x)).sum::<f64>().sqrt() as f32
}

/// Whether `v` can be scored: finite numbers, and a length within f32's
/// range (a longer one scores NaN).
fn scorable(v: &[f32]) -> bool {
    v.iter().all(|x| x.is_finite()) && norm(v).is_finite()
}

/// What refusing a vector that is not `scorable` says.
const NOT_SCORABLE: &str = "vectors must hold finite numbers, their length within f32's range";

fn dot(a: &[f32], b: &[f32]) -> f32 {
    // Four accumulators let the compiler vectorise the loop.
    let mut acc = [0.0f32; 4];
    let chunks = a.len() / 4 * 4;
    for i in (0..chunks).step_by(4) {
        acc[0] += a[i] * b[i];
        acc[1] += a[i + 1] * b[i + 1];
        acc[2] += a[i + 2] * b[i + 2];
        acc[3] += a[i + 3] * b[i + 3];
    }
    let mut s = acc[0] + acc[1] + acc[2] + acc[3];
    for i in chunks..a.len() {
        s += a[i] * b[i];
    }
    s
}

/// Slots scored per rayon task.
const PARALLEL_BLOCK: usize = 4096;

impl VectorIndex {
    pub fn new(dim: usize, metric: Metric) -> Self {
        Self::with_scan(dim, metric, ScanOptions::default())
    }

    pub fn with_scan(dim: usize, metric: Metric, scan: ScanOptions) -> Self {
        let mut ix = VectorIndex {
            dim,
            metric,
            ids: Vec::new(),
            slot_of: FxHashMap::default(),
            data: Section::default(),
            norms: Vec::new(),
            metadata: Vec::new(),
            metadata_bytes: 0,
            scan: ScanOptions::default(),
            codes: None,
            graph: None,
            saved_graph: None,
        };
        ix.set_scan(scan);
        ix
    }

    /// Changes how queries scan: codes are made (on all cores) or dropped.
    pub fn set_scan(&mut self, scan: ScanOptions) {
        let scan = ScanOptions { oversample: scan.oversample.max(1), ..scan };
        self.codes = match scan.quantization {
            Quantization::None => None,
            Quantization::Int8 => match self.codes.take() {
                Some(c) if self.scan.quantization == Quantization::Int8 => Some(c),
                _ => Some(Codes::of(self.dim, &self.data)),
            },
        };
        self.scan = scan;
        // A graph holds codes or vectors as quantization says; whether one
        // is wanted at all is `refresh_graph`'s question.
        let holds_codes = self.codes.is_some() && self.metric == Metric::Cosine;
        if self.graph.as_ref().is_some_and(|g| g.0.codes != holds_codes) {
            self.graph = None;
        }
        if let Some(g) = &self.graph {
            g.0.set_ef_search(scan.ef_search);
        }
        self.refresh_graph();
    }

    /// Starts, keeps, rebuilds or drops the graph as the options and the
    /// number of vectors say (after every write).
    fn refresh_graph(&mut self) {
        let n = self.ids.len();
        let wanted = match self.scan.graph {
            GraphChoice::Never => false,
            GraphChoice::Always => n > 0,
            GraphChoice::Auto if self.graph.is_some() => n >= AUTO_GRAPH_AT / 2,
            GraphChoice::Auto => n >= AUTO_GRAPH_AT,
        };
        match &self.graph {
            Some(_) if !wanted => self.graph = None,
            Some(g) if !g.0.worn(n) => {}
            None if !wanted => {}
            _ => {
                let points = (0..n).map(|s| self.point(s)).collect();
                let params = GraphParams { ef_search: self.scan.ef_search };
                self.graph = Some(GraphHandle(Graph::build(self.dim, self.graph_metric(), params, points)));
            }
        }
    }

    fn graph_metric(&self) -> GraphMetric {
        match self.metric {
            Metric::Cosine => GraphMetric::Cosine,
            Metric::DotProduct => GraphMetric::Dot,
            Metric::Euclidean => GraphMetric::Euclidean,
        }
    }

    /// What the graph holds of the vector at `slot`: its code for cosine
    /// (scale does not change a cosine), else the vector.
    fn point(&self, s: usize) -> Point {
        match &self.codes {
            Some(c) if self.metric == Metric::Cosine => Point::Code(c.signed(s)),
            _ => Point::Full(self.data[s * self.dim..(s + 1) * self.dim].to_vec()),
        }
    }

    /// The graph's state, for `stats()`.
    pub fn graph_status(&self) -> Option<GraphStatus> {
        self.graph.as_ref().map(|g| g.0.status())
    }

    pub fn scan(&self) -> ScanOptions {
        self.scan
    }

    pub fn dimension(&self) -> usize {
        self.dim
    }

    pub fn metric(&self) -> Metric {
        self.metric
    }

    pub fn len(&self) -> usize {
        self.ids.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }

    pub fn memory_bytes(&self) -> usize {
        self.data.len() * 4
            + self.norms.len() * 4
            + self.codes.as_ref().map_or(0, Codes::memory_bytes)
            + self.graph.as_ref().map_or(0, |g| g.0.memory_bytes())
            + self.ids.iter().map(|i| i.len() + 48).sum::<usize>()
            + self.metadata.len() * std::mem::size_of::<Option<Map<String, Value>>>()
            + self.metadata_bytes
    }

    /// Sets the metadata of slot `s` (`None` past the end: pushed), keeping `metadata_bytes`.
    fn put_metadata(&mut self, s: usize, m: Option<Map<String, Value>>) {
        self.metadata_bytes += meta_bytes(&m);
        match self.metadata.get_mut(s) {
            Some(old) => {
                let was = std::mem::replace(old, m);
                self.metadata_bytes = self.metadata_bytes.saturating_sub(meta_bytes(&was));
            }
            None => self.metadata.push(m),
        }
    }

    fn check_dim(&self, name: &str, v: &[f32]) -> Result<(), VectorError> {
        if v.len() != self.dim {
            return Err(VectorError::Dimension { name: name.into(), expected: self.dim, got: v.len() });
        }
        Ok(())
    }

    /// `upsert`, after removing the vectors `delete_filter` matches (Mastra's
    /// `deleteFilter`): the new vectors are checked first, so that a bad
    /// upsert deletes nothing.
    pub fn upsert_replacing(
        &mut self,
        name: &str,
        delete_filter: Option<&Filter>,
        ids: Vec<String>,
        vectors: Vec<Vec<f32>>,
        metadata: Vec<Option<Map<String, Value>>>,
    ) -> Result<(), VectorError> {
        self.check_upsert(name, &ids, &vectors, &metadata)?;
        if let Some(f) = delete_filter {
            self.remove_matching(f);
        }
        self.upsert(name, ids, vectors, metadata)
    }

    fn check_upsert(
        &self,
        name: &str,
        ids: &[String],
        vectors: &[Vec<f32>],
        metadata: &[Option<Map<String, Value>>],
    ) -> Result<(), VectorError> {
        if ids.len() != vectors.len() || metadata.len() != vectors.len() {
            return Err(VectorError::Invalid(format!(
                "upsert needs one id and one metadata per vector ({} ids, {} vectors, {} metadata)",
                ids.len(),
                vectors.len(),
                metadata.len()
            )));
        }
        for v in vectors {
            self.check_dim(name, v)?;
            if !scorable(v) {
                return Err(VectorError::Invalid(NOT_SCORABLE.into()));
            }
        }
        Ok(())
    }

    /// Adds or replaces vectors (all checked before any is written).
    pub fn upsert(
        &mut self,
        name: &str,
        ids: Vec<String>,
        vectors: Vec<Vec<f32>>,
        metadata: Vec<Option<Map<String, Value>>>,
    ) -> Result<(), VectorError> {
        self.check_upsert(name, &ids, &vectors, &metadata)?;
        let mut written = Vec::with_capacity(ids.len());
        for ((id, v), m) in ids.into_iter().zip(vectors).zip(metadata) {
            match self.slot_of.get(&id) {
                Some(&s) => {
                    self.set_vector(s, &v);
                    self.put_metadata(s, m);
                    written.push(s);
                }
                None => {
                    written.push(self.ids.len());
                    self.slot_of.insert(id.clone(), self.ids.len());
                    self.ids.push(id);
                    self.norms.push(norm(&v));
                    if let Some(c) = &mut self.codes {
                        c.push(&v);
                    }
                    self.data.to_mut().extend_from_slice(&v);
                    self.put_metadata(usize::MAX, m);
                }
            }
        }
        if let Some(g) = &self.graph {
            written.sort_unstable();
            written.dedup();
            g.0.put_many(written.into_iter().map(|s| (s, self.point(s))).collect());
        }
        self.refresh_graph();
        Ok(())
    }

    fn set_vector(&mut self, s: usize, v: &[f32]) {
        self.data.to_mut()[s * self.dim..(s + 1) * self.dim].copy_from_slice(v);
        self.norms[s] = norm(v);
        if let Some(c) = &mut self.codes {
            c.set(s, v);
        }
    }

    /// Replaces the vector and/or the metadata of one id.
    pub fn update(
        &mut self,
        name: &str,
        id: &str,
        vector: Option<Vec<f32>>,
        metadata: Option<Map<String, Value>>,
    ) -> Result<bool, VectorError> {
        let Some(&s) = self.slot_of.get(id) else { return Ok(false) };
        if let Some(v) = vector {
            self.check_dim(name, &v)?;
            if !scorable(&v) {
                return Err(VectorError::Invalid(NOT_SCORABLE.into()));
            }
            self.set_vector(s, &v);
            if let Some(g) = &self.graph {
                g.0.put(s, self.point(s));
            }
        }
        if let Some(m) = metadata {
            self.put_metadata(s, Some(m));
        }
        Ok(true)
    }

    pub fn remove(&mut self, id: &str) -> bool {
        let Some(s) = self.slot_of.remove(id) else { return false };
        let last = self.ids.len() - 1;
        if let Some(g) = &self.graph {
            g.0.swap_remove(s, last);
        }
        if s != last {
            let moved = self.ids[last].clone();
            self.slot_of.insert(moved, s);
            let (head, tail) = self.data.to_mut().split_at_mut(last * self.dim);
            head[s * self.dim..(s + 1) * self.dim].copy_from_slice(&tail[..self.dim]);
        }
        if let Some(c) = &mut self.codes {
            c.swap_remove(s);
        }
        self.ids.swap_remove(s);
        self.norms.swap_remove(s);
        let gone = self.metadata.swap_remove(s);
        self.metadata_bytes = self.metadata_bytes.saturating_sub(meta_bytes(&gone));
        self.data.to_mut().truncate(last * self.dim);
        self.refresh_graph();
        true
    }

    /// Removes every vector whose metadata matches; returns how many.
    pub fn remove_matching(&mut self, filter: &Filter) -> usize {
        let doomed: Vec<String> = (0..self.ids.len())
            .filter(|&s| filter.matches(self.metadata[s].as_ref()))
            .map(|s| self.ids[s].clone())
            .collect();
        doomed.iter().filter(|id| self.remove(id)).count()
    }

    fn score(&self, q: &[f32], qnorm: f32, s: usize) -> f64 {
        let v = &self.data[s * self.dim..(s + 1) * self.dim];
        match self.metric {
            Metric::Cosine => {
                let d = qnorm * self.norms[s];
                if d == 0.0 {
                    0.0
                } else {
                    (dot(q, v) / d) as f64
                }
            }
            Metric::DotProduct => dot(q, v) as f64,
            Metric::Euclidean => {
                let dist: f32 = q.iter().zip(v).map(|(a, b)| (a - b) * (a - b)).sum::<f32>().sqrt();
                1.0 / (1.0 + dist as f64)
            }
        }
    }

    /// What the int8 scan ranks by: the metric's order, from the codes'
    /// approximate dot product and the exact norms.
    /// (In f64: in f32, |v|^2 or the dot product of large vectors overflows
    /// to an infinity, which the scan would take for a filtered-out slot.)
    fn approximate_score(&self, codes: &Codes, q: &QueryCodes, qnorm: f32, s: usize) -> f64 {
        let d = codes.dot(q, s);
        let norm = self.norms[s] as f64;
        match self.metric {
            Metric::Cosine => {
                let n = qnorm as f64 * norm;
                if n == 0.0 {
                    0.0
                } else {
                    d / n
                }
            }
            Metric::DotProduct => d,
            // -(|v|^2 - 2 q.v) orders as -|q - v|^2 (|q| is the same for all).
            Metric::Euclidean => 2.0 * d - norm * norm,
        }
    }

    /// Top `k` by exact score, ties by id, among vectors the filter
    /// accepts. With codes, the candidates are those the codes' scores and
    /// their error bounds leave in; the filter is applied while scanning,
    /// never after.
    pub fn query(
        &self,
        name: &str,
        q: &[f32],
        k: usize,
        filter: Option<&Filter>,
        include_vector: bool,
    ) -> Result<Vec<VectorMatch>, VectorError> {
        self.check_dim(name, q)?;
        if k == 0 || self.ids.is_empty() {
            return Ok(Vec::new());
        }
        let qnorm = norm(q);
        // A cosine's query taken at unit length: the dot of two long vectors
        // (components about 1e20) overflows f32, of two short ones underflows,
        // where neither length does.
        let unit: Vec<f32>;
        let (q, qnorm) = if self.metric == Metric::Cosine && qnorm > 0.0 && qnorm.is_finite() {
            unit = q.iter().map(|&x| (f64::from(x) / f64::from(qnorm)) as f32).collect();
            (&unit[..], 1.0)
        } else {
            (q, qnorm)
        };
        let filter = filter.filter(|f| !f.is_empty());
        let top = self.graph_top(q, qnorm, k, filter).unwrap_or_else(|| self.scan_top(q, qnorm, k, filter));
        Ok(top
            .into_iter()
            .map(|(score, slot)| {
                let s = slot as usize;
                VectorMatch {
                    id: self.ids[s].clone(),
                    score,
                    metadata: self.metadata[s].clone(),
                    vector: include_vector.then(|| self.data[s * self.dim..(s + 1) * self.dim].to_vec()),
                }
            })
            .collect())
    }

    /// The graph's `oversample x k` candidates and the slots written since
    /// the graph last caught up, rescored; `None` when there is no graph
    /// built, the filter is too selective for one, or it found fewer than
    /// `k` (the scan answers then).
    fn graph_top(&self, q: &[f32], qnorm: f32, k: usize, filter: Option<&Filter>) -> Option<Vec<(f64, u32)>> {
        let graph = &self.graph.as_ref()?.0;
        if filter.is_some_and(|f| self.is_selective(f)) {
            return None;
        }
        let query = self.point_of_query(q);
        let n = self.ids.len();
        let accept = |s: usize| s < n && filter.is_none_or(|f| f.matches(self.metadata[s].as_ref()));
        let wanted = k.saturating_mul(self.scan.oversample);
        if wanted >= n / 2 {
            return None; // the scan is as cheap, and bounded
        }
        let (mut found, pending) =
            graph.search(&query, wanted, filter.is_some().then_some(&accept as &dyn Fn(usize) -> bool))?;
        if pending.len() > MAX_PENDING_SCORED {
            return None;
        }
        found.extend(pending);
        found.sort_unstable();
        found.dedup();
        found.retain(|&s| accept(s));
        if found.len() < k.min(n) {
            return None;
        }
        Some(self.rescored(found.into_iter().map(|s| s as u32), q, qnorm, k))
    }

    /// The query as the graph holds vectors (`point`).
    fn point_of_query(&self, q: &[f32]) -> Point {
        match &self.codes {
            Some(_) if self.metric == Metric::Cosine => Point::Code(QueryCodes::new(q).signed().to_vec()),
            _ => Point::Full(q.to_vec()),
        }
    }

    /// Whether few enough vectors match for a scan to beat a graph search:
    /// judged on an even sample of slots.
    fn is_selective(&self, f: &Filter) -> bool {
        let n = self.ids.len();
        let step = (n / 1024).max(1);
        let sample = (0..n).step_by(step);
        let total = sample.len();
        let matching = (0..n).step_by(step).filter(|&s| f.matches(self.metadata[s].as_ref())).count();
        (matching as f64) < SELECTIVE_FILTER * total as f64
    }

    /// Every vector the filter accepts: its code's approximate score, then
    /// the best `oversample x k` rescored, when the codes' error bounds
    /// show that no other vector can be among the best `k`; else every
    /// vector that may be (`may_rank`). Or the exact scores throughout.
    /// The answer is the exact top `k` either way.
    fn scan_top(&self, q: &[f32], qnorm: f32, k: usize, filter: Option<&Filter>) -> Vec<(f64, u32)> {
        match &self.codes {
            Some(codes) if self.ids.len() > k => {
                let (_, slots) = self.candidates(codes, q, qnorm, k, filter);
                self.rescored(slots.into_iter(), q, qnorm, k)
            }
            _ => self.best(k, filter, |s| self.score(q, qnorm, s)),
        }
    }

    /// The slots the int8 scan rescores for the best `k`: the codes' best
    /// `oversample x k` where their error bounds show them enough (`true`),
    /// else every vector that may rank.
    fn candidates(&self, codes: &Codes, q: &[f32], qnorm: f32, k: usize, filter: Option<&Filter>) -> (bool, Vec<u32>) {
        let qc = QueryCodes::new(q);
        let approx = self.approximate_scores(codes, &qc, qnorm, filter);
        let wanted = k.saturating_mul(self.scan.oversample);
        let mut first = self.best(wanted, None, |s| approx[s]);
        first.retain(|&(a, _)| a > f64::NEG_INFINITY);
        let error = |s: usize| self.approximation_error(codes, &qc, qnorm, s);
        let widest = self.widest_error(codes, &qc, qnorm);
        match floor_unless_shown(&first, wanted, k, widest, error) {
            None => (true, first.iter().map(|&(_, s)| s).collect()),
            Some(floor) => (false, may_rank(&approx, floor, widest, error)),
        }
    }

    /// At least the largest `approximation_error` of any vector, from the
    /// largest scales and norms (the bound grows with both): one pass over
    /// two floats a vector, not over the codes.
    fn widest_error(&self, codes: &Codes, qc: &QueryCodes, qnorm: f32) -> f64 {
        let most = |xs: &mut dyn Iterator<Item = f32>| xs.fold(0.0f32, f32::max);
        match self.metric {
            Metric::Cosine if qnorm == 0.0 => 0.0,
            // The cosine's error is error_bound(scale / norm, 1) / qnorm.
            Metric::Cosine => {
                let ratio =
                    most(&mut codes.scales().iter().zip(&self.norms).map(|(&s, &n)| if n > 0.0 { s / n } else { 0.0 }));
                qc.error_bound(ratio, 1.0, qnorm) / qnorm as f64
            }
            Metric::DotProduct | Metric::Euclidean => {
                let e = qc.error_bound(
                    most(&mut codes.scales().iter().copied()),
                    most(&mut self.norms.iter().copied()),
                    qnorm,
                );
                if self.metric == Metric::Euclidean {
                    2.0 * e
                } else {
                    e
                }
            }
        }
    }

    /// How far the approximate score of the vector at `slot` can be from
    /// its exact score, in the metric's order (`approximate_score`).
    #[inline]
    fn approximation_error(&self, codes: &Codes, qc: &QueryCodes, qnorm: f32, s: usize) -> f64 {
        let dot_error = qc.error_bound(codes.scales()[s], self.norms[s], qnorm);
        match self.metric {
            Metric::Cosine if qnorm as f64 * self.norms[s] as f64 == 0.0 => 0.0,
            Metric::Cosine => dot_error / (qnorm as f64 * self.norms[s] as f64),
            Metric::DotProduct => dot_error,
            Metric::Euclidean => 2.0 * dot_error,
        }
    }

    /// Each slot's approximate score (`f64::NEG_INFINITY` where the filter
    /// rejects it): on all cores once the index is large enough to pay.
    fn approximate_scores(&self, codes: &Codes, qc: &QueryCodes, qnorm: f32, filter: Option<&Filter>) -> Vec<f64> {
        let score = |s: usize| match filter {
            Some(f) if !f.matches(self.metadata[s].as_ref()) => f64::NEG_INFINITY,
            _ => self.approximate_score(codes, qc, qnorm, s),
        };
        let n = self.ids.len();
        let mut out = vec![0.0; n];
        if n * self.dim >= 256 * 1024 {
            out.par_chunks_mut(PARALLEL_BLOCK).enumerate().for_each(|(b, block)| {
                for (i, o) in block.iter_mut().enumerate() {
                    *o = score(b * PARALLEL_BLOCK + i);
                }
            });
        } else {
            out.iter_mut().enumerate().for_each(|(s, o)| *o = score(s));
        }
        out
    }

    /// The best `k` of `slots` by exact score, ties by id.
    fn rescored(&self, slots: impl Iterator<Item = u32>, q: &[f32], qnorm: f32, k: usize) -> Vec<(f64, u32)> {
        let mut scored: Vec<(f64, u32)> = slots.map(|s| (self.score(q, qnorm, s as usize), s)).collect();
        sort_best_first(&mut scored, |a, b| self.ranks_before(a, b));
        scored.truncate(k);
        scored
    }

    fn ranks_before(&self, a: (f64, u32), b: (f64, u32)) -> bool {
        ranks_before(a, b, |slot| self.ids[slot as usize].as_str())
    }

    /// The best `k` slots by `score`, best first, ties by id: blocks of
    /// slots on all cores once the index is large enough to pay for it.
    fn best(&self, k: usize, filter: Option<&Filter>, score: impl Fn(usize) -> f64 + Sync) -> Vec<(f64, u32)> {
        let better = |a, b| self.ranks_before(a, b);
        let top_of = |range: std::ops::Range<usize>| {
            let mut top = TopK::new(k);
            for s in range {
                if filter.is_some_and(|f| !f.matches(self.metadata[s].as_ref())) {
                    continue;
                }
                let cand = (score(s), s as u32);
                if top.admits(cand, better) {
                    top.push(cand, better);
                }
            }
            top.into_sorted(better)
        };
        let n = self.ids.len();
        let mut all: Vec<(f64, u32)> = if n * self.dim >= 256 * 1024 {
            (0..n.div_ceil(PARALLEL_BLOCK))
                .into_par_iter()
                .map(|b| top_of(b * PARALLEL_BLOCK..((b + 1) * PARALLEL_BLOCK).min(n)))
                .reduce(Vec::new, |mut a, b| {
                    a.extend(b);
                    a
                })
        } else {
            top_of(0..n)
        };
        sort_best_first(&mut all, better);
        all.truncate(k);
        all
    }
}

/// `None` when the codes' best `wanted` (`first`, best first) hold the
/// exact best `k`: all the filter accepts, or no vector outside them
/// (approximate score at most the last's) can reach, within `widest` (the
/// largest `error`), the k-th best lower bound among them. Else that
/// bound: no k-th best exact score is below it.
fn floor_unless_shown(
    first: &[(f64, u32)],
    wanted: usize,
    k: usize,
    widest: f64,
    error: impl Fn(usize) -> f64,
) -> Option<f64> {
    let &(last, _) = first.last().filter(|_| first.len() >= wanted.max(k).max(1))?;
    let mut lows: Vec<f64> = first.iter().map(|&(a, s)| a - error(s as usize)).collect();
    let (_, floor, _) = lows.select_nth_unstable_by(k.max(1) - 1, |a, b| b.total_cmp(a));
    (last + widest >= *floor).then_some(*floor)
}

/// The slots whose approximate score, within its `error`, reaches `floor`
/// (ties kept: rescoring orders them by id); `widest`, the largest error,
/// rules most out at once.
fn may_rank(approx: &[f64], floor: f64, widest: f64, error: impl Fn(usize) -> f64) -> Vec<u32> {
    (0..approx.len())
        .filter(|&s| approx[s] + widest >= floor && approx[s] + error(s) >= floor)
        .map(|s| s as u32)
        .collect()
}

impl VectorIndex {
    /// For snapshots (`persist`).
    pub fn encode(&self, e: &mut crate::bytes::codec::Encoder) {
        e.len(self.dim);
        e.str(self.metric.name());
        e.len(self.ids.len());
        for (id, m) in self.ids.iter().zip(&self.metadata) {
            e.str(id);
            let json = m.as_ref().map(|m| serde_json::to_string(m).unwrap_or_default());
            e.opt_str(json.as_deref());
        }
        e.pad4();
        e.f32s(&self.data);
        match &self.codes {
            Some(c) => {
                e.u8(1);
                c.encode(e);
            }
            None => e.u8(0),
        }
        match self.graph.as_ref().and_then(|g| g.0.saved()) {
            Some(bytes) => {
                e.u8(1);
                e.bytes(&bytes);
            }
            None => e.u8(0),
        }
    }

    pub fn decode(d: &mut crate::bytes::codec::Decoder) -> Result<VectorIndex, crate::bytes::SnapshotError> {
        use crate::bytes::SnapshotError::Corrupt;
        let dim = d.len(0, "a vector dimension")?;
        let metric = Metric::parse(d.str("a metric")?).ok_or_else(|| Corrupt("a metric".into()))?;
        let mut ix = VectorIndex::new(dim, metric);
        let n = d.len(9, "vectors")?;
        for _ in 0..n {
            let id = d.string("a vector id")?;
            let meta = match d.opt_string("vector metadata")? {
                None => None,
                Some(j) => Some(serde_json::from_str(&j).map_err(|_| Corrupt("vector metadata".into()))?),
            };
            if ix.slot_of.insert(id.clone(), ix.ids.len()).is_some() {
                return Err(Corrupt("a vector id twice".into()));
            }
            ix.ids.push(id);
            ix.put_metadata(usize::MAX, meta);
        }
        d.pad4("vectors")?;
        ix.data = d.section("vectors")?;
        if dim == 0 || ix.data.len() != n * dim || ix.data.par_iter().any(|x| !x.is_finite()) {
            return Err(Corrupt("vectors".into()));
        }
        ix.norms = ix.data.par_chunks_exact(dim).map(norm).collect();
        let saved_codes = match d.u8("the codes flag")? {
            0 => None,
            _ => {
                d.pad4("vector codes")?;
                let bytes = d.section("vector codes")?;
                d.pad4("vector scales")?;
                Some(
                    Codes::from_parts(dim, n, bytes, d.section("vector scales")?)
                        .ok_or_else(|| Corrupt("vector codes".into()))?,
                )
            }
        };
        // Made again only if the snapshot had none (`set_scan` drops them if unwanted).
        ix.codes = ix.codes.is_some().then(|| saved_codes.unwrap_or_else(|| Codes::of(dim, &ix.data)));
        if d.u8("the graph flag")? != 0 {
            // Copied: the checksum may still be being summed beside this.
            ix.saved_graph = Some(d.bytes("the graph")?.to_vec());
        }
        Ok(ix)
    }

    /// Hands the saved graph to usearch: call only once the bytes it was
    /// decoded from are known good (their checksum, or the part's content
    /// hash). A graph that does not fit is built again (never used wrong).
    /// Codes or f16 copies, either kind: `set_scan` drops one that does not
    /// fit the store's options.
    pub fn restore_graph(&mut self) {
        if let Some(bytes) = self.saved_graph.take() {
            let (n, metric, ef) = (self.ids.len(), self.graph_metric(), self.scan.ef_search);
            self.graph = Graph::restore(&bytes, self.dim, metric, n, ef).map(GraphHandle);
        }
    }
}

impl VectorIndex {
    /// Takes in the vectors of `newer` (same dimension), replacing those of
    /// the same ids: a loaded index absorbing the writes made before it was
    /// loaded. An index of another dimension is left out.
    pub fn absorb(&mut self, newer: &VectorIndex) {
        if newer.dim != self.dim {
            return;
        }
        for (s, id) in newer.ids.iter().enumerate() {
            let v = newer.data[s * newer.dim..(s + 1) * newer.dim].to_vec();
            // Checked when first written: same dimension, finite numbers.
            let _ = self.upsert("", vec![id.clone()], vec![v], vec![newer.metadata[s].clone()]);
        }
    }
}

/// Named indexes: what `LocalVector` holds.
#[derive(Debug, Default, Clone)]
pub struct VectorStore {
    indexes: FxHashMap<String, VectorIndex>,
    scan: ScanOptions,
}

impl VectorStore {
    pub fn with_scan(scan: ScanOptions) -> Self {
        VectorStore { indexes: FxHashMap::default(), scan }
    }

    pub fn scan(&self) -> ScanOptions {
        self.scan
    }

    /// Creates an index; an existing one of the same dimension is kept.
    pub fn create_index(&mut self, name: &str, dim: usize, metric: Metric) -> Result<(), VectorError> {
        if dim == 0 {
            return Err(VectorError::Invalid("dimension must be a positive integer".into()));
        }
        if dim > MAX_DIMENSION {
            return Err(VectorError::Invalid(format!("dimension must be at most {MAX_DIMENSION}, got {dim}")));
        }
        match self.indexes.get(name) {
            Some(ix) if ix.dim == dim => Ok(()),
            Some(ix) => Err(VectorError::Exists { name: name.into(), existing: ix.dim, requested: dim }),
            None => {
                self.indexes.insert(name.to_string(), VectorIndex::with_scan(dim, metric, self.scan));
                Ok(())
            }
        }
    }

    pub fn index(&self, name: &str) -> Result<&VectorIndex, VectorError> {
        self.indexes.get(name).ok_or_else(|| VectorError::NoIndex(name.into()))
    }

    pub fn index_mut(&mut self, name: &str) -> Result<&mut VectorIndex, VectorError> {
        self.indexes.get_mut(name).ok_or_else(|| VectorError::NoIndex(name.into()))
    }

    pub fn list(&self) -> Vec<String> {
        let mut names: Vec<String> = self.indexes.keys().cloned().collect();
        names.sort();
        names
    }

    pub fn delete_index(&mut self, name: &str) -> bool {
        self.indexes.remove(name).is_some()
    }

    pub fn memory_bytes(&self) -> usize {
        self.indexes.values().map(VectorIndex::memory_bytes).sum()
    }

    /// Puts a whole index in place (loaded from a snapshot).
    pub fn put_index(&mut self, name: &str, mut index: VectorIndex) {
        index.set_scan(self.scan);
        self.indexes.insert(name.to_string(), index);
    }
}

/// What a vector's metadata holds on the heap, about (`memory_bytes`).
fn meta_bytes(m: &Option<Map<String, Value>>) -> usize {
    m.as_ref().map_or(0, crate::bytes::json_size::map_bytes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn meta(v: Value) -> Option<Map<String, Value>> {
        v.as_object().cloned()
    }

    #[test]
    fn memory_counts_metadata_as_it_changes() {
        let mut ix = VectorIndex::new(2, Metric::Cosine);
        let bare = ix.memory_bytes();
        let text = |n: usize| meta(json!({ "text": "x".repeat(n) }));
        ix.upsert(
            "ix",
            vec!["a".into(), "b".into()],
            vec![vec![1.0, 0.0], vec![0.0, 1.0]],
            vec![text(5000), text(5000)],
        )
        .unwrap();
        let two = ix.memory_bytes();
        assert!(two >= bare + 10_000, "{bare} -> {two}");
        ix.upsert("ix", vec!["a".into()], vec![vec![1.0, 1.0]], vec![text(100)]).unwrap();
        assert!(ix.memory_bytes() <= two - 4_900);
        ix.update("ix", "b", None, text(10)).unwrap();
        assert!(ix.remove("a") && ix.remove("b"));
        assert_eq!(ix.metadata_bytes, 0);
        let mut e = crate::bytes::codec::Encoder::default();
        ix.upsert("ix", vec!["c".into()], vec![vec![1.0, 0.0]], vec![text(3000)]).unwrap();
        ix.encode(&mut e);
        let back = VectorIndex::decode(&mut crate::bytes::codec::Decoder::new(&e.buf)).unwrap();
        assert_eq!(back.metadata_bytes, ix.metadata_bytes);
        assert!(back.metadata_bytes >= 3000);
    }

    #[test]
    fn cosine_top_k_ties_filters_updates() {
        let mut s = VectorStore::default();
        s.create_index("ix", 3, Metric::Cosine).unwrap();
        assert!(s.create_index("ix", 3, Metric::Cosine).is_ok());
        assert!(matches!(s.create_index("ix", 4, Metric::Cosine), Err(VectorError::Exists { .. })));
        let ix = s.index_mut("ix").unwrap();
        ix.upsert(
            "ix",
            vec!["a".into(), "b".into(), "c".into(), "d".into()],
            vec![vec![1.0, 0.0, 0.0], vec![0.0, 1.0, 0.0], vec![2.0, 0.0, 0.0], vec![-1.0, 0.0, 0.0]],
            vec![meta(json!({"k": 1})), meta(json!({"k": 2})), None, meta(json!({"k": 1}))],
        )
        .unwrap();
        let r = ix.query("ix", &[1.0, 0.0, 0.0], 3, None, false).unwrap();
        assert_eq!(
            r.iter().map(|m| (m.id.as_str(), m.score)).collect::<Vec<_>>(),
            [("a", 1.0), ("c", 1.0), ("b", 0.0)]
        );
        let f = Filter::parse(&json!({"k": 1})).unwrap();
        let r = ix.query("ix", &[1.0, 0.0, 0.0], 5, Some(&f), true).unwrap();
        assert_eq!(r.iter().map(|m| m.id.as_str()).collect::<Vec<_>>(), ["a", "d"]);
        assert_eq!(r[1].score, -1.0);
        assert_eq!(r[0].vector.as_deref(), Some(&[1.0, 0.0, 0.0][..]));
        assert!(ix.update("ix", "b", Some(vec![1.0, 1.0, 0.0]), None).unwrap());
        assert!(ix.remove("a"));
        assert!(!ix.remove("a"));
        assert_eq!(ix.len(), 3);
        let r = ix.query("ix", &[1.0, 0.0, 0.0], 1, None, false).unwrap();
        assert_eq!(r[0].id, "c");
        assert_eq!(ix.remove_matching(&f), 1);
        assert!(matches!(ix.query("ix", &[1.0], 1, None, false), Err(VectorError::Dimension { .. })));
        assert!(matches!(
            ix.upsert("ix", vec!["x".into()], vec![vec![f32::NAN, 0.0, 0.0]], vec![None]),
            Err(VectorError::Invalid(_))
        ));
    }

    #[test]
    fn cosine_of_long_and_short_vectors() {
        // Lengths within f32's range whose squares or products are not.
        for scale in [1e20f32, 1e-22, 1e-30] {
            let mut s = VectorStore::default();
            s.create_index("ix", 3, Metric::Cosine).unwrap();
            let ix = s.index_mut("ix").unwrap();
            let (a, b) = (vec![scale, 2.0 * scale, 0.0], vec![0.0, 0.0, scale]);
            ix.upsert("ix", vec!["a".into(), "b".into()], vec![a.clone(), b], vec![None, None]).unwrap();
            let r = ix.query("ix", &a, 2, None, false).unwrap();
            assert_eq!(r[0].id, "a", "{scale}");
            assert!((r[0].score - 1.0).abs() < 1e-6, "{scale}: {}", r[0].score);
            assert!(r[1].score.abs() < 1e-6, "{scale}: {}", r[1].score);
        }
    }

    #[test]
    fn parallel_scan_equals_serial() {
        let dim = 64;
        let n = 5000;
        let mut ix = VectorIndex::new(dim, Metric::Cosine);
        let mut x = 12345u64;
        let mut rnd = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x % 1000) as f32 / 1000.0 - 0.5
        };
        let vectors: Vec<Vec<f32>> = (0..n).map(|_| (0..dim).map(|_| rnd()).collect()).collect();
        let ids: Vec<String> = (0..n).map(|i| format!("v{i:05}")).collect();
        ix.upsert("ix", ids, vectors.clone(), vec![None; n]).unwrap();
        let q: Vec<f32> = (0..dim).map(|_| rnd()).collect();
        let got = ix.query("ix", &q, 10, None, false).unwrap();
        let mut expect: Vec<(f64, String)> = (0..n).map(|i| (ix.score(&q, norm(&q), i), format!("v{i:05}"))).collect();
        expect.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
        assert_eq!(
            got.iter().map(|m| m.id.clone()).collect::<Vec<_>>(),
            expect[..10].iter().map(|e| e.1.clone()).collect::<Vec<_>>()
        );
    }

    /// A seeded set, with exact duplicates when larger than 100 (ties broken by id).
    fn random_set(n: usize, dim: usize, seed: u64) -> (Vec<String>, Vec<Vec<f32>>) {
        let mut x = seed;
        let mut rnd = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x % 2001) as f32 / 1000.0 - 1.0
        };
        let mut vectors: Vec<Vec<f32>> = (0..n).map(|_| (0..dim).map(|_| rnd()).collect()).collect();
        for i in (0..n).step_by(97).filter(|_| n > 100) {
            vectors[i] = vectors[(i + 13) % n].clone();
        }
        ((0..n).map(|i| format!("v{:05}", (i * 7919) % n)).collect(), vectors)
    }

    fn both(metric: Metric, oversample: usize) -> (VectorIndex, VectorIndex) {
        let never = ScanOptions { graph: GraphChoice::Never, ..ScanOptions::default() };
        let exact = ScanOptions { quantization: Quantization::None, oversample: 1, ..never };
        let int8 = ScanOptions { quantization: Quantization::Int8, oversample, ..never };
        (VectorIndex::with_scan(48, metric, exact), VectorIndex::with_scan(48, metric, int8))
    }

    fn same_answers(a: &VectorIndex, b: &VectorIndex, queries: &[Vec<f32>], filter: Option<&Filter>) {
        for q in queries {
            let x = a.query("ix", q, 10, filter, false).unwrap();
            let y = b.query("ix", q, 10, filter, false).unwrap();
            assert_eq!(x, y);
        }
    }

    #[test]
    fn int8_scan_answers_as_the_exact_scan_for_every_metric() {
        let (ids, vectors) = random_set(3000, 48, 7);
        let meta: Vec<_> = (0..3000).map(|i| meta(json!({ "even": i % 2 == 0 }))).collect();
        let (_, queries) = random_set(20, 48, 11);
        let even = Filter::parse(&json!({ "even": true })).unwrap();
        for metric in [Metric::Cosine, Metric::DotProduct, Metric::Euclidean] {
            let (mut exact, mut int8) = both(metric, DEFAULT_OVERSAMPLE);
            exact.upsert("ix", ids.clone(), vectors.clone(), meta.clone()).unwrap();
            int8.upsert("ix", ids.clone(), vectors.clone(), meta.clone()).unwrap();
            same_answers(&exact, &int8, &queries, None);
            same_answers(&exact, &int8, &queries, Some(&even));
            // Duplicates tie: both keep the smaller id.
            let dup = exact.query("ix", &vectors[0], 2, None, false).unwrap();
            assert_eq!(dup, int8.query("ix", &vectors[0], 2, None, false).unwrap());
            assert_eq!(dup[0].score, dup[1].score, "{metric:?}");
        }
    }

    /// Vectors sharing a few large components (as some embedding models'
    /// do) quantize their other components to a few levels: the codes'
    /// order is then far from the exact one, and only their error bound
    /// keeps every true neighbour among the rescored candidates.
    #[test]
    fn int8_scan_is_exact_when_a_few_large_components_flatten_the_codes() {
        let (ids, mut vectors) = random_set(4000, 48, 17);
        let (_, mut queries) = random_set(20, 48, 19);
        for v in vectors.iter_mut().chain(queries.iter_mut()) {
            for x in v.iter_mut() {
                *x = 0.2 + 0.05 * *x;
            }
            v[3] = 6.0;
            v[17] = -4.0;
        }
        for metric in [Metric::Cosine, Metric::DotProduct, Metric::Euclidean] {
            let (mut exact, mut int8) = both(metric, 1);
            exact.upsert("ix", ids.clone(), vectors.clone(), vec![None; 4000]).unwrap();
            int8.upsert("ix", ids.clone(), vectors.clone(), vec![None; 4000]).unwrap();
            same_answers(&exact, &int8, &queries, None);
        }
    }

    /// The candidates one query rescores for the best `k` (`VectorIndex::candidates`).
    fn candidates(ix: &VectorIndex, q: &[f32], k: usize) -> (bool, usize) {
        let qnorm = q.iter().map(|x| x * x).sum::<f32>().sqrt();
        let (shown, slots) = ix.candidates(ix.codes.as_ref().unwrap(), q, qnorm, k, None);
        (shown, slots.len())
    }

    /// Where the codes are fine, their best 4 x k are shown to hold the best
    /// k, and even from the best k alone the bound leaves few candidates.
    #[test]
    fn the_codes_best_are_shown_enough_where_the_codes_are_fine() {
        let (ids, vectors) = random_set(4000, 48, 31);
        let (_, queries) = random_set(20, 48, 37);
        for metric in [Metric::Cosine, Metric::DotProduct, Metric::Euclidean] {
            let (_, mut int8) = both(metric, DEFAULT_OVERSAMPLE);
            int8.upsert("ix", ids.clone(), vectors.clone(), vec![None; 4000]).unwrap();
            let shown = queries.iter().filter(|q| candidates(&int8, q, 10).0).count();
            assert!(shown >= 15, "{metric:?}: {shown} of 20");
            // From the codes' best 10 alone (an oversample of 1).
            int8.scan.oversample = 1;
            let total: usize = queries.iter().map(|q| candidates(&int8, q, 10).1).sum();
            assert!(total < 20 * 40, "{metric:?}: {} candidates per query from the best 10", total / 20);
        }
    }

    #[test]
    fn codes_follow_upserts_updates_and_removes() {
        let (ids, vectors) = random_set(2000, 48, 3);
        let (_, queries) = random_set(10, 48, 5);
        let (mut exact, mut int8) = both(Metric::Cosine, DEFAULT_OVERSAMPLE);
        let mut removed = Vec::new();
        for ix in [&mut exact, &mut int8] {
            ix.upsert("ix", ids.clone(), vectors.clone(), vec![None; 2000]).unwrap();
            // Each query's best vector goes away; another takes its place.
            for (n, q) in queries.iter().enumerate() {
                let best = ix.query("ix", q, 1, None, false).unwrap().remove(0).id;
                assert!(ix.remove(&best));
                removed.push(best);
                let twin: Vec<f32> = q.iter().map(|x| x * 2.0).collect();
                assert!(ix.update("ix", &ids[n * 7], Some(twin), None).unwrap());
                ix.upsert("ix", vec![format!("new{n}")], vec![q.iter().map(|x| -x).collect()], vec![None]).unwrap();
            }
        }
        for (n, q) in queries.iter().enumerate() {
            let top = int8.query("ix", q, 10, None, false).unwrap();
            assert_eq!(top[0].id, ids[n * 7]);
            assert!(top.iter().all(|m| m.id != format!("new{n}") && !removed.contains(&m.id)));
        }
        same_answers(&exact, &int8, &queries, None);
        // The codes are rebuilt when quantization is turned on later.
        exact.set_scan(int8.scan());
        same_answers(&exact, &int8, &queries, None);
    }

    /// A graph is approximate: recall@10 of at least 0.95 against the exact
    /// scan, and every score it gives is the exact one.
    fn close_answers(exact: &VectorIndex, graph: &VectorIndex, queries: &[Vec<f32>], filter: Option<&Filter>) {
        let mut hits = 0;
        for q in queries {
            let x = exact.query("ix", q, 10, filter, false).unwrap();
            let y = graph.query("ix", q, 10, filter, false).unwrap();
            for m in &y {
                if let Some(e) = x.iter().find(|e| e.id == m.id) {
                    assert_eq!(e.score, m.score);
                    hits += 1;
                }
            }
        }
        assert!(
            hits as f64 >= 0.95 * 10.0 * queries.len() as f64,
            "recall@10 {}",
            hits as f64 / (10.0 * queries.len() as f64)
        );
    }

    fn graph_ready(ix: &VectorIndex) {
        let t = std::time::Instant::now();
        while ix.graph_status() == Some(GraphStatus::Building) {
            assert!(t.elapsed().as_secs() < 60, "the graph is still building");
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        assert!(matches!(ix.graph_status(), Some(GraphStatus::Ready { .. })), "{:?}", ix.graph_status());
    }

    #[test]
    fn a_graph_answers_as_the_scan_on_a_small_set_through_writes_made_while_it_builds() {
        let (ids, vectors) = random_set(3000, 48, 21);
        let meta: Vec<_> = (0..3000).map(|i| meta(json!({ "third": i % 3 == 0, "rare": i % 100 == 0 }))).collect();
        let (_, queries) = random_set(20, 48, 23);
        let third = Filter::parse(&json!({ "third": true })).unwrap();
        let rare = Filter::parse(&json!({ "rare": true })).unwrap();
        for metric in [Metric::Cosine, Metric::DotProduct, Metric::Euclidean] {
            let (mut exact, mut graph) = both(metric, DEFAULT_OVERSAMPLE);
            graph.set_scan(ScanOptions { graph: GraphChoice::Always, ..graph.scan() });
            for ix in [&mut exact, &mut graph] {
                ix.upsert("ix", ids[..2000].to_vec(), vectors[..2000].to_vec(), meta[..2000].to_vec()).unwrap();
                // Written while the graph may still be building: logged, replayed.
                ix.upsert("ix", ids[2000..].to_vec(), vectors[2000..].to_vec(), meta[2000..].to_vec()).unwrap();
                for id in &ids[..300] {
                    ix.remove(id);
                }
                ix.update("ix", &ids[400], Some(queries[0].clone()), None).unwrap();
            }
            graph_ready(&graph);
            let q = &queries[0];
            assert!(graph.graph_top(q, norm(q), 10, None).is_some(), "the graph answers");
            assert!(graph.graph_top(q, norm(q), 10, Some(&third)).is_some(), "the graph answers a broad filter");
            assert!(graph.graph_top(q, norm(q), 10, Some(&rare)).is_none(), "the scan answers a selective one");
            assert_eq!(graph.query("ix", q, 1, None, false).unwrap()[0].id, ids[400]);
            close_answers(&exact, &graph, &queries, None);
            close_answers(&exact, &graph, &queries, Some(&third));
            close_answers(&exact, &graph, &queries, Some(&rare));
            // Written once it is ready: the graph changes with the vectors.
            for ix in [&mut exact, &mut graph] {
                for id in &ids[300..600] {
                    ix.remove(id);
                }
                ix.upsert("ix", vec!["fresh".into()], vec![queries[1].clone()], vec![None]).unwrap();
            }
            assert_eq!(graph.query("ix", &queries[1], 1, None, false).unwrap()[0].id, "fresh");
            close_answers(&exact, &graph, &queries, None);
            // Once its thread has applied them, the graph itself has them.
            let t = std::time::Instant::now();
            while !matches!(graph.graph_status(), Some(GraphStatus::Ready { pending: 0, .. })) {
                assert!(t.elapsed().as_secs() < 60, "{:?}", graph.graph_status());
                std::thread::sleep(std::time::Duration::from_millis(5));
            }
            close_answers(&exact, &graph, &queries, None);
            let q = &queries[1];
            let (found, pending) = graph.graph.as_ref().unwrap().0.search(&graph.point_of_query(q), 40, None).unwrap();
            assert!(pending.is_empty());
            assert!(found.contains(&graph.slot_of["fresh"]), "the graph found the new vector itself");
            assert!(matches!(graph.graph_status(), Some(GraphStatus::Ready { removed: 600, .. })));
        }
    }

    #[test]
    fn a_snapshot_keeps_the_graph_and_a_graph_that_does_not_fit_is_built_again() {
        use crate::bytes::codec::{Decoder, Encoder};
        let (ids, vectors) = random_set(2000, 48, 31);
        let (_, queries) = random_set(10, 48, 37);
        let always = ScanOptions { graph: GraphChoice::Always, ..ScanOptions::default() };
        let mut ix = VectorIndex::with_scan(48, Metric::Cosine, always);
        ix.upsert("ix", ids, vectors, vec![None; 2000]).unwrap();
        graph_ready(&ix);
        let mut e = Encoder::default();
        ix.encode(&mut e);
        // Loaded from a mapping: vectors and codes are viewed there, not copied.
        let backing = crate::bytes::section::Backing::mapped_copy(&e.buf);
        let mut back = VectorIndex::decode(&mut Decoder::viewing(backing.bytes(), backing.clone())).unwrap();
        assert!(back.data.is_view() && back.codes.as_ref().unwrap().is_view(), "mapped, not read");
        assert_eq!(back.graph_status(), None, "not handed to usearch before the bytes are known good");
        back.restore_graph();
        assert!(matches!(back.graph_status(), Some(GraphStatus::Ready { .. })), "restored, not rebuilt");
        back.set_scan(always);
        for q in &queries {
            assert_eq!(back.query("ix", q, 10, None, false).unwrap(), ix.query("ix", q, 10, None, false).unwrap());
            assert!(back.graph_top(q, norm(q), 10, None).is_some());
        }
        // The same bytes read as a dot-product index's: not that kind of
        // graph ("dotproduct" keeps what follows 4-aligned, as "cosine" did).
        let mut e2 = Encoder::default();
        e2.len(48);
        e2.str("dotproduct");
        let tail = &e.buf[8 + 8 + "cosine".len()..];
        e2.raw(tail);
        let mut other = VectorIndex::decode(&mut Decoder::new(&e2.buf)).unwrap();
        other.restore_graph();
        assert_eq!(other.graph_status(), None, "left to refresh_graph to build anew");
    }

    #[test]
    fn a_viewed_index_is_copied_at_its_first_write_and_answers_the_same() {
        use crate::bytes::codec::{Decoder, Encoder};
        let (ids, vectors) = random_set(500, 48, 41);
        let (_, queries) = random_set(5, 48, 43);
        let never = ScanOptions { graph: GraphChoice::Never, ..ScanOptions::default() };
        let mut ix = VectorIndex::with_scan(48, Metric::Cosine, never);
        ix.upsert("ix", ids.clone(), vectors, vec![None; 500]).unwrap();
        let mut e = Encoder::default();
        ix.encode(&mut e);
        let backing = crate::bytes::section::Backing::mapped_copy(&e.buf);
        let mut back = VectorIndex::decode(&mut Decoder::viewing(backing.bytes(), backing.clone())).unwrap();
        back.set_scan(never);
        for ix in [&mut ix, &mut back] {
            ix.remove(&ids[3]);
            ix.update("ix", &ids[9], Some(queries[0].clone()), None).unwrap();
        }
        assert!(!back.data.is_view(), "copied at the first write");
        same_answers(&ix, &back, &queries, None);
        // A vector too small for a scale of its own still saves and loads.
        let mut tiny = vec![0.0f32; 48];
        tiny[0] = 1e-44;
        ix.upsert("ix", vec!["tiny".into()], vec![tiny], vec![None]).unwrap();
        let mut e = Encoder::default();
        ix.encode(&mut e);
        assert_eq!(VectorIndex::decode(&mut Decoder::new(&e.buf)).unwrap().len(), ix.len());
    }
}
