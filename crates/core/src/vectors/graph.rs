//! An HNSW graph over an index's vectors ([usearch]), for indexes too large
//! to scan on every query. Its keys are the index's slots: when a removal
//! moves the last slot into the freed one, the graph renames that key.
//!
//! Writes never wait for the graph. Each one is logged, and the graph's own
//! thread applies the log in small batches: first it builds the graph from
//! a copy of the vectors (minutes of both cores at a million), then it
//! keeps it current. A search reads the set of slots with writes still
//! logged before it searches the graph, and the store scores those slots
//! as well, so a vector written a moment ago is found as surely as an old
//! one. Until the graph is built, queries scan (`store::VectorIndex::query`).
//! An idle graph's thread sleeps on a condition variable.
//!
//! Cosine graphs hold the store's own int8 codes (the cosine of two codes is
//! the cosine of their vectors, whatever each one's scale); dot-product and
//! euclidean graphs hold f16 copies, because a code's scale would change
//! those distances. Either way the graph only proposes candidates: the
//! store scores them again against the full vectors.
//!
//! [usearch]: https://github.com/unum-cloud/usearch

use parking_lot::{Condvar, Mutex, RwLock};
use rustc_hash::FxHashMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use usearch::{Index, IndexOptions, MetricKind, ScalarKind};

/// What the graph stores of one vector.
#[derive(Debug, Clone)]
pub enum Point {
    /// A cosine index's int8 code.
    Code(Vec<i8>),
    /// The vector, stored as f16 by the graph.
    Full(Vec<f32>),
}

/// The graph's distance, from the store's metric.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GraphMetric {
    Cosine,
    Dot,
    Euclidean,
}

/// A write to replay on a graph built from an older copy.
#[derive(Debug)]
enum Op {
    Put(u64, Point),
    Remove(u64),
    Rename { from: u64, to: u64 },
}

/// Writes not yet in the graph, and how many of them target each slot.
#[derive(Debug, Default)]
struct Log {
    ops: std::collections::VecDeque<Op>,
    slots: FxHashMap<u64, u32>,
}

impl Log {
    fn target(op: &Op) -> Option<u64> {
        match op {
            Op::Put(key, _) => Some(*key),
            Op::Rename { to, .. } => Some(*to),
            Op::Remove(_) => None,
        }
    }
}

/// A graph being built or kept current, shared with its thread.
pub struct Graph {
    /// `None` until built.
    index: RwLock<Option<Index>>,
    log: Mutex<Log>,
    wake: Condvar,
    failed: Mutex<Option<String>>,
    /// Set when the index no longer wants this graph: the thread ends.
    abandoned: AtomicBool,
    /// Removals since the build began (a graph keeps tombstones).
    removed: AtomicUsize,
    /// Writes of the turn being applied (taken out of the log).
    in_flight: AtomicUsize,
    ef_search: AtomicUsize,
    built_from: usize,
    /// Whether it holds int8 codes (else f16 copies of the vectors).
    pub codes: bool,
}

impl std::fmt::Debug for Graph {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Graph({:?})", self.status())
    }
}

/// What `stats()` reports of an index's graph.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GraphStatus {
    Building,
    /// `pending`: writes not yet in the graph (their vectors are scored by
    /// every query meanwhile).
    Ready {
        removed: usize,
        pending: usize,
    },
    Failed(String),
}

/// Writes applied per turn of the graph's thread: each turn holds the
/// graph's write lock, so queries wait at most one turn (about 10 ms at
/// 1M x 384 on 2 cores).
const TURN: usize = 64;

/// How the graph is built and searched.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GraphParams {
    /// Candidates kept while searching (usearch's `expansion_search`).
    pub ef_search: usize,
}

fn options(dim: usize, metric: GraphMetric, codes: bool, params: GraphParams) -> IndexOptions {
    let metric = match metric {
        GraphMetric::Cosine => MetricKind::Cos,
        GraphMetric::Dot => MetricKind::IP,
        GraphMetric::Euclidean => MetricKind::L2sq,
    };
    let quantization = if codes { ScalarKind::I8 } else { ScalarKind::F16 };
    // Connectivity and construction expansion at usearch's defaults (16,
    // 128): measured on 1M x 384 clustered vectors, recall@10 0.985 at
    // ef_search 256.
    IndexOptions { dimensions: dim, metric, quantization, expansion_search: params.ef_search, ..Default::default() }
}

/// Search and add contexts: every rayon thread, and the threads that query
/// (the JavaScript thread, the blocking pool's); a search finding none free
/// fails, and the store scans instead.
fn threads() -> usize {
    let hardware = std::thread::available_parallelism().map_or(1, |n| n.get());
    rayon::current_num_threads().max(hardware) + 16
}

/// Adds without reserving: concurrent adds are safe in usearch, growing its capacity is not.
fn add(index: &Index, key: u64, p: &Point) -> Result<(), String> {
    match p {
        Point::Code(c) => index.add(key, c),
        Point::Full(v) => index.add(key, v),
    }
    .map_err(|e| e.to_string())
}

fn apply(index: &Index, op: &Op) -> Result<(), String> {
    match op {
        Op::Put(key, p) => put_all(index, vec![(*key, p)]),
        Op::Remove(key) => index.remove(*key).map(drop).map_err(|e| e.to_string()),
        Op::Rename { from, to } => index.rename(*from, *to).map(drop).map_err(|e| e.to_string()),
    }
}

/// Applies logged writes in order; each run of puts at once: its removals
/// one by one, then its adds on all cores.
fn replay(index: &Index, ops: &[Op]) -> Result<(), String> {
    let mut puts: Vec<(u64, &Point)> = Vec::new();
    for op in ops {
        match op {
            Op::Put(key, p) => puts.push((*key, p)),
            other => {
                put_all(index, std::mem::take(&mut puts))?;
                apply(index, other)?;
            }
        }
    }
    put_all(index, puts)
}

fn put_all(index: &Index, mut puts: Vec<(u64, &Point)>) -> Result<(), String> {
    use rayon::prelude::*;
    if puts.is_empty() {
        return Ok(());
    }
    // The last put of a key wins.
    puts.reverse();
    let mut seen = rustc_hash::FxHashSet::default();
    puts.retain(|(k, _)| seen.insert(*k));
    for (k, _) in &puts {
        if index.contains(*k) {
            index.remove(*k).map_err(|e| e.to_string())?;
        }
    }
    // (`size()` leaves out freed slots, which adds reuse.)
    let needed = index.size() + puts.len();
    if needed > index.capacity() {
        index.reserve_capacity_and_threads(needed.max(index.capacity() * 2), threads()).map_err(|e| e.to_string())?;
    }
    puts.par_iter().try_for_each(|(k, p)| add(index, *k, p))
}

impl Graph {
    /// Starts building a graph of `points` (slot order, all codes or all
    /// full vectors) on a thread of its own, which then keeps it current.
    pub fn build(dim: usize, metric: GraphMetric, params: GraphParams, points: Vec<Point>) -> Arc<Graph> {
        let graph = Arc::new(Graph {
            index: RwLock::new(None),
            log: Mutex::new(Log::default()),
            wake: Condvar::new(),
            failed: Mutex::new(None),
            abandoned: AtomicBool::new(false),
            removed: AtomicUsize::new(0),
            in_flight: AtomicUsize::new(0),
            ef_search: AtomicUsize::new(params.ef_search),
            built_from: points.len(),
            codes: matches!(points.first(), Some(Point::Code(_))),
        });
        let worker = graph.clone();
        let spawned = std::thread::Builder::new().name("ws-vector-graph".into()).spawn(move || {
            let outcome = Self::construct(dim, metric, params, &points, &worker.abandoned).and_then(|index| {
                drop(points);
                let mut slot = worker.index.write();
                index.change_expansion_search(worker.ef_search.load(Ordering::Relaxed));
                *slot = Some(index);
                drop(slot);
                worker.keep_current()
            });
            if let Err(e) = outcome {
                *worker.failed.lock() = Some(e);
            }
        });
        if let Err(e) = spawned {
            *graph.failed.lock() = Some(format!("could not start the graph's thread: {e}"));
        }
        graph
    }

    fn construct(
        dim: usize,
        metric: GraphMetric,
        params: GraphParams,
        points: &[Point],
        abandoned: &AtomicBool,
    ) -> Result<Index, String> {
        use rayon::prelude::*;
        let codes = matches!(points.first(), Some(Point::Code(_)));
        let index = Index::new(&options(dim, metric, codes, params)).map_err(|e| e.to_string())?;
        index.reserve_capacity_and_threads(points.len().max(1024), threads()).map_err(|e| e.to_string())?;
        points.par_iter().enumerate().try_for_each(|(slot, p)| {
            if abandoned.load(Ordering::Relaxed) {
                return Err("abandoned".to_string());
            }
            add(&index, slot as u64, p)
        })?;
        Ok(index)
    }

    /// The graph's thread once built: applies the log a turn at a time,
    /// and sleeps while it is empty. A turn is taken, applied and counted
    /// off under the graph's write lock, so that whoever holds its read
    /// lock sees no turn half done (`saved`).
    fn keep_current(&self) -> Result<(), String> {
        loop {
            {
                let mut log = self.log.lock();
                while log.ops.is_empty() && !self.abandoned.load(Ordering::Relaxed) {
                    self.wake.wait(&mut log);
                }
            }
            if self.abandoned.load(Ordering::Relaxed) {
                return Ok(());
            }
            let index = self.index.write();
            let turn: Vec<Op> = {
                let mut log = self.log.lock();
                let n = log.ops.len().min(TURN);
                self.in_flight.store(n, Ordering::Relaxed);
                log.ops.drain(..n).collect()
            };
            if let Some(index) = &*index {
                if let Err(e) = replay(index, &turn) {
                    // Marked failed before the write lock goes: a save must
                    // never see this half-applied turn as current.
                    *self.failed.lock() = Some(e.clone());
                    return Err(e);
                }
            }
            // Only now are those slots' vectors in the graph.
            let mut log = self.log.lock();
            for key in turn.iter().filter_map(Log::target) {
                if let Some(n) = log.slots.get_mut(&key) {
                    *n -= 1;
                    if *n == 0 {
                        log.slots.remove(&key);
                    }
                }
            }
            self.in_flight.store(0, Ordering::Relaxed);
        }
    }

    /// Tells the thread to end (the index dropped or replaced this graph).
    pub fn abandon(&self) {
        self.abandoned.store(true, Ordering::Relaxed);
        let _log = self.log.lock();
        self.wake.notify_all();
    }

    fn write(&self, ops: impl IntoIterator<Item = Op>) {
        if self.failed.lock().is_some() {
            return; // nothing will apply it (queries scan)
        }
        let mut log = self.log.lock();
        for op in ops {
            if let Some(key) = Log::target(&op) {
                *log.slots.entry(key).or_insert(0) += 1;
            }
            log.ops.push_back(op);
        }
        self.wake.notify_one();
    }

    /// Vectors new or changed at these slots.
    pub fn put_many(&self, points: Vec<(usize, Point)>) {
        self.write(points.into_iter().map(|(s, p)| Op::Put(s as u64, p)));
    }

    /// The vector at `slot` is new or changed.
    pub fn put(&self, slot: usize, p: Point) {
        self.write([Op::Put(slot as u64, p)]);
    }

    /// The vector at `slot` is gone, and the one at `last` moved there.
    pub fn swap_remove(&self, slot: usize, last: usize) {
        self.removed.fetch_add(1, Ordering::Relaxed);
        let rename = (slot != last).then_some(Op::Rename { from: last as u64, to: slot as u64 });
        self.write(std::iter::once(Op::Remove(slot as u64)).chain(rename));
    }

    /// Changes how many candidates a search keeps (waits for searches).
    pub fn set_ef_search(&self, ef: usize) {
        let index = self.index.write();
        self.ef_search.store(ef, Ordering::Relaxed);
        if let Some(index) = &*index {
            index.change_expansion_search(ef);
        }
    }

    pub fn status(&self) -> GraphStatus {
        if let Some(e) = &*self.failed.lock() {
            return GraphStatus::Failed(e.clone());
        }
        if self.index.read().is_none() {
            return GraphStatus::Building;
        }
        let pending = self.log.lock().ops.len() + self.in_flight.load(Ordering::Relaxed);
        GraphStatus::Ready { removed: self.removed.load(Ordering::Relaxed), pending }
    }

    /// Whether so many vectors were removed since the build that the graph
    /// should be built again (its tombstones slow and thin out searches).
    pub fn worn(&self, live: usize) -> bool {
        let removed = self.removed.load(Ordering::Relaxed);
        removed > 10_000 && removed * 4 > live.max(self.built_from)
    }

    /// The graph's bytes for a snapshot, once built and current (waiting
    /// up to 5 s for its thread to apply the log: the caller holds writes
    /// off, so the log only shrinks). `None`: the loader builds it again.
    pub fn saved(&self) -> Option<Vec<u8>> {
        let t = std::time::Instant::now();
        loop {
            let guard = self.index.read();
            if self.failed.lock().is_some() || self.abandoned.load(Ordering::Relaxed) {
                return None;
            }
            let index = guard.as_ref()?;
            // Under the read lock no turn is half done: an empty log is current.
            if self.log.lock().ops.is_empty() {
                let mut bytes = vec![0u8; index.serialized_length()];
                return index.save_to_buffer(&mut bytes).ok().map(|()| bytes);
            }
            if t.elapsed().as_secs() >= 5 {
                return None;
            }
            drop(guard); // (the graph's thread needs the write lock to go on)
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
    }

    /// A graph saved by `saved`, kept current from now on; `None` when
    /// usearch refuses the bytes or they are not a graph of `len` points
    /// of this kind (the caller builds one instead).
    pub fn restore(bytes: &[u8], dim: usize, metric: GraphMetric, len: usize, ef: usize) -> Option<Arc<Graph>> {
        let index = Index::restore_from_buffer(bytes).ok()?;
        let expected = options(dim, metric, true, GraphParams { ef_search: ef });
        let index_codes = index.scalar_kind() == ScalarKind::I8;
        let fits = index.dimensions() == dim
            && index.size() == len
            && index.metric_kind() == expected.metric
            && (index_codes || index.scalar_kind() == ScalarKind::F16);
        if !fits {
            return None;
        }
        index.change_expansion_search(ef);
        index.reserve_capacity_and_threads(index.capacity(), threads()).ok()?;
        let graph = Arc::new(Graph {
            index: RwLock::new(Some(index)),
            log: Mutex::new(Log::default()),
            wake: Condvar::new(),
            failed: Mutex::new(None),
            abandoned: AtomicBool::new(false),
            removed: AtomicUsize::new(0),
            in_flight: AtomicUsize::new(0),
            ef_search: AtomicUsize::new(ef),
            built_from: len,
            codes: index_codes,
        });
        let worker = graph.clone();
        std::thread::Builder::new()
            .name("ws-vector-graph".into())
            .spawn(move || {
                if let Err(e) = worker.keep_current() {
                    *worker.failed.lock() = Some(e);
                }
            })
            .ok()?;
        Some(graph)
    }

    pub fn memory_bytes(&self) -> usize {
        self.index.read().as_ref().map_or(0, Index::memory_usage)
    }

    /// The graph's `count` nearest slots to the query among those `accept`
    /// takes, and the slots with writes not yet in the graph (to be scored
    /// too); `None` while it is not built, or has failed (the caller scans).
    pub fn search(
        &self,
        query: &Point,
        count: usize,
        accept: Option<&dyn Fn(usize) -> bool>,
    ) -> Option<(Vec<usize>, Vec<usize>)> {
        // (Each lock on a statement of its own: `failed` is never held while
        // taking `index`, the order `saved` takes them in.)
        let failed = self.failed.lock().is_some();
        let built = self.index.read().is_some();
        if failed || !built {
            return None;
        }
        // Pending slots first: a write applied after this read is in the graph
        // before the search below can take the read lock.
        let pending: Vec<usize> = self.log.lock().slots.keys().map(|&k| k as usize).collect();
        let index = self.index.read();
        let index = index.as_ref()?;
        let found = match (query, accept) {
            (Point::Code(q), None) => index.search(q, count),
            (Point::Full(q), None) => index.search(q, count),
            (Point::Code(q), Some(f)) => index.filtered_search(q, count, |k| f(k as usize)),
            (Point::Full(q), Some(f)) => index.filtered_search(q, count, |k| f(k as usize)),
        };
        // A failed search is answered by the scan instead (never an error:
        // the scan is exact).
        let found = found.ok()?.keys.into_iter().map(|k| k as usize).collect();
        Some((found, pending))
    }
}
