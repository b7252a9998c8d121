//! Top-k retrieval: block-max MaxScore over windows of `WINDOW` slots,
//! whose results equal exhaustive scoring (`exhaustive.rs`, the property
//! tests in `tests.rs`).
//!
//! Terms whose bounds together stay below the threshold are non-essential:
//! only looked up for documents the others bring. Per window, each essential
//! list is read in order, block by block; a block that cannot lift a
//! document to the threshold (with every other term at its best in the
//! window) is passed over, and the other postings add a bound from their
//! length codes into an array. Only documents whose bound reaches the
//! threshold are scored exactly, their lengths read from a window of `lens`
//! that stays in cache. Reading lists in order and scattering into a small
//! array is what keeps a cold query fast: the document-at-a-time loop this
//! replaced spent most of its time in cache misses.

use super::bm25::{Norm, QueryTerm, BOUND_SLACK};
use super::topk::TopK;
use crate::index::kind::KindWeights;
use crate::index::postings::{gallop, BlockMax, PostingSlices, BLOCK};
use crate::index::slots::Slots;
use crate::index::{Bm25Index, Document, Hit, DEAD};
use std::cmp::Ordering;

/// Slots per window: its bound array and the lengths it reads stay in the
/// first-level cache. Small in tests, so that their corpora span many
/// windows.
const WINDOW: usize = if cfg!(test) { 128 } else { 2048 };

/// Only documents this accepts are ranked (a metadata filter).
pub type Keep<'k> = Option<&'k dyn Fn(&Document) -> bool>;

/// Upper bounds of a term's score contributions, from its summaries.
#[derive(Clone, Copy)]
struct Bounds {
    norm: Norm,
    prunable: bool,
    /// Stored scores (at `ref_avgdl`) bound today's scaled by how much the
    /// average has grown: a longer average only lowers the length penalty,
    /// by that ratio at most.
    growth: f64,
}

impl Bounds {
    /// A term's (or block's) best, from its summary. Infinite when not
    /// prunable.
    fn of(&self, w: f64, max_tf: u32, min_len_per_tf: f32, max_score: f32) -> f64 {
        if self.prunable {
            w * self.norm.bound(max_tf, min_len_per_tf).min(f64::from(max_score) * self.growth) * BOUND_SLACK
        } else {
            f64::INFINITY
        }
    }

    fn block(&self, w: f64, b: &BlockMax) -> f64 {
        self.of(w, b.max_tf, b.min_len_per_tf, b.max_score)
    }

    /// A posting's best, from its frequency and length code.
    fn posting(&self, w: f64, (tf, min_len): (u32, u32)) -> f64 {
        if self.prunable {
            w * self.norm.tf_part(tf, min_len) * BOUND_SLACK
        } else {
            f64::INFINITY
        }
    }
}

/// One query term's place in its posting list.
struct Cursor<'p> {
    postings: PostingSlices<'p>,
    pos: usize,
    weight_idf: f64,
    ub: f64,
    qpos: usize,
    /// Its best in the current window.
    window_bound: f64,
    /// The block that may hold the slot looked at (non-essential terms;
    /// only moves forward) and its bound, once computed.
    shallow: usize,
    shallow_bound: Option<f64>,
}

/// The state of one top-k query.
struct MaxScore<'i> {
    index: &'i Bm25Index,
    bounds: Bounds,
    /// Ascending upper bound: the cheap terms become non-essential first.
    cursors: Vec<Cursor<'i>>,
    /// Sums of the upper bounds of the first `i + 1` cursors.
    prefix: Vec<f64>,
    /// Cursors before this one are non-essential.
    essential: usize,
    threshold: f64,
    top: TopK,
    // Per window: bounds of the documents seen, which ones, where each
    // essential list stood when the window began; per candidate, the
    // non-essential block bounds summed in visiting order, and the exact
    // parts of its score in query order.
    window: Vec<f64>,
    seen: Vec<u64>,
    starts: Vec<usize>,
    rest_prefix: Vec<f64>,
    parts: Vec<f64>,
    /// The weight of each file kind (`index::kind`), each at most 1 so
    /// that every bound above stays an upper bound; `None`: all 1.
    weights: Option<KindWeights>,
}

impl Bm25Index {
    /// The top `k` documents for the query tokens, best first, ties by id;
    /// only documents accepted by `keep` count.
    pub fn top_k(&self, tokens: &[String], k: usize, keep: Keep) -> Vec<Hit<'_>> {
        self.top_k_weighted(tokens, k, keep, None)
    }

    /// `top_k` with each document's score multiplied by its file kind's
    /// weight (`weights`, each in (0, 1]).
    pub fn top_k_weighted(
        &self,
        tokens: &[String],
        k: usize,
        keep: Keep,
        weights: Option<&KindWeights>,
    ) -> Vec<Hit<'_>> {
        let q = self.query_terms(tokens);
        if k == 0 || q.is_empty() || self.live_docs == 0 {
            return Vec::new();
        }
        let weights =
            weights.filter(|w| w.iter().any(|&x| x != 1.0)).map(|w| w.map(|x| x.clamp(f64::MIN_POSITIVE, 1.0)));
        if q.len() > super::accumulate::LONG_QUERY_TERMS {
            return self.top_k_accumulated(&q, k, keep, weights.as_ref());
        }
        let mut run = MaxScore::new(self, &q, k);
        run.weights = weights;
        while let Some(base) = run.next_window() {
            let end = base.saturating_add(WINDOW as u32);
            let (all, non_essential) = run.window_bounds(base, end);
            if all < run.threshold {
                run.skip_window(end);
                continue;
            }
            run.scan_essential(base, end, all);
            run.score_candidates(base, non_essential, keep);
            if !run.raise_essential() {
                break;
            }
        }
        let best = run.top.into_sorted(|a, b| self.ranks_before(a, b));
        self.hits(best)
    }

    /// Hits from (score, slot) pairs, best first.
    pub(crate) fn hits(&self, best: Vec<(f64, u32)>) -> Vec<Hit<'_>> {
        best.into_iter().map(|(score, slot)| Hit { doc: self.doc_at(slot), slot, score }).collect()
    }
}

impl<'i> MaxScore<'i> {
    fn new(index: &'i Bm25Index, q: &[QueryTerm], k: usize) -> Self {
        let avgdl = index.avg_doc_length();
        let growth = if index.ref_avgdl > 0.0 { (avgdl / index.ref_avgdl).max(1.0) } else { f64::INFINITY };
        let bounds = Bounds { norm: index.norm(avgdl), prunable: index.params.prunable(), growth };
        let mut cursors: Vec<Cursor> = q
            .iter()
            .map(|qt| {
                let term = index.terms.get(qt.term);
                let weight_idf = qt.weight * index.idf(qt.term);
                let ub = bounds.of(weight_idf, term.max_tf, term.min_len_per_tf, term.max_score);
                Cursor {
                    postings: term.postings.slices(),
                    pos: 0,
                    weight_idf,
                    ub,
                    qpos: qt.position,
                    window_bound: ub,
                    shallow: 0,
                    shallow_bound: None,
                }
            })
            .collect();
        cursors.sort_by(|a, b| a.ub.partial_cmp(&b.ub).unwrap_or(Ordering::Equal));
        let prefix = cursors
            .iter()
            .scan(0.0, |s, c| {
                *s += c.ub;
                Some(*s)
            })
            .collect();
        let n = q.len();
        MaxScore {
            index,
            bounds,
            cursors,
            prefix,
            essential: 0,
            threshold: f64::NEG_INFINITY,
            top: TopK::new(k),
            window: vec![0.0; WINDOW],
            seen: vec![0; WINDOW / 64],
            starts: vec![0; n],
            rest_prefix: vec![0.0; n],
            parts: vec![0.0; n],
            weights: None,
        }
    }

    /// The first slot of the next window: the smallest slot an essential
    /// list still holds.
    fn next_window(&self) -> Option<u32> {
        self.cursors[self.essential..].iter().filter_map(|c| c.postings.docs.get(c.pos)).min()
    }

    /// Each term's best within `[base, end)`, from the blocks it spans;
    /// returns the sum over all terms and over the non-essential ones.
    fn window_bounds(&mut self, base: u32, end: u32) -> (f64, f64) {
        let bounds = self.bounds;
        for c in self.cursors.iter_mut() {
            c.window_bound = if bounds.prunable {
                window_bound(c.postings, c.pos, base, end, |b| bounds.block(c.weight_idf, b))
            } else {
                f64::INFINITY
            };
        }
        let all = self.cursors.iter().map(|c| c.window_bound).sum();
        let non_essential = self.cursors[..self.essential].iter().map(|c| c.window_bound).sum();
        (all, non_essential)
    }

    /// Moves every essential list past the window.
    fn skip_window(&mut self, end: u32) {
        for c in self.cursors[self.essential..].iter_mut() {
            c.pos = c.postings.advance(c.pos, end);
        }
    }

    /// Reads the essential lists through the window, adding each posting's
    /// bound to its document's entry, and skipping blocks that cannot lift
    /// a document to the threshold whatever the other terms add.
    fn scan_essential(&mut self, base: u32, end: u32, all: f64) {
        let (bounds, threshold) = (self.bounds, self.threshold);
        for (e, c) in self.cursors[self.essential..].iter_mut().enumerate() {
            self.starts[e] = c.pos;
            let others = all - c.window_bound;
            let (blocks, docs) = (c.postings.blocks, c.postings.docs);
            while c.pos < docs.len() && docs.at(c.pos) < end {
                let block_end = ((c.pos / BLOCK) + 1) * BLOCK;
                let stop = block_end.min(docs.len());
                if bounds.block(c.weight_idf, &blocks[c.pos / BLOCK]) + others < threshold {
                    c.pos = if blocks[c.pos / BLOCK].last_doc < end {
                        stop
                    } else {
                        docs.partition_point(c.pos, stop, |d| d < end)
                    };
                    continue;
                }
                let (window, seen, postings) = (&mut self.window, &mut self.seen, c.postings);
                let mut add = |slot: u32, pos: usize| {
                    let i = (slot - base) as usize;
                    window[i] += bounds.posting(c.weight_idf, postings.tf_and_min_len(pos));
                    seen[i / 64] |= 1 << (i % 64);
                };
                // The slots' form is matched once a block, not once a posting.
                match docs {
                    Slots::Wide(slots) => {
                        while c.pos < stop && slots[c.pos] < end {
                            add(slots[c.pos], c.pos);
                            c.pos += 1;
                        }
                    }
                    Slots::Narrow { back, blocks } => {
                        let last = blocks[c.pos / BLOCK].last_doc;
                        while c.pos < stop && last - u32::from(back[c.pos]) < end {
                            add(last - u32::from(back[c.pos]), c.pos);
                            c.pos += 1;
                        }
                    }
                }
            }
        }
    }

    /// The documents seen in the window, in slot order: each is scored
    /// exactly once its bound (plus the non-essential terms at their best)
    /// reaches the threshold.
    fn score_candidates(&mut self, base: u32, non_essential: f64, keep: Keep) {
        let mut ptrs = self.starts.clone();
        for word in 0..self.seen.len() {
            let mut bits = std::mem::take(&mut self.seen[word]);
            while bits != 0 {
                let i = word * 64 + bits.trailing_zeros() as usize;
                bits &= bits - 1;
                let bound = std::mem::take(&mut self.window[i]);
                if bound + non_essential < self.threshold {
                    continue;
                }
                self.consider(base + i as u32, bound, &mut ptrs, keep);
            }
        }
    }

    /// One candidate `d` whose essential terms add up to at most `bound`.
    fn consider(&mut self, d: u32, bound: f64, ptrs: &mut [usize], keep: Keep) {
        if self.essential > 0 && bound + self.shallow_bounds(d) < self.threshold {
            return;
        }
        if !self.probe_non_essential(d, bound) {
            return;
        }
        let len = self.index.lens[d as usize];
        if len == DEAD {
            return;
        }
        let mut score = self.exact_score(d, len, ptrs);
        if let Some(w) = &self.weights {
            score *= w[self.index.kinds[d as usize] as usize];
        }
        let index = self.index;
        let better = |a, b| index.ranks_before(a, b);
        if !self.top.admits((score, d), better) {
            return;
        }
        if let Some(keep) = keep {
            if !keep(index.doc_at(d)) {
                return;
            }
        }
        self.top.push((score, d), better);
        if let (true, Some((worst, _))) = (self.top.is_full() && self.bounds.prunable, self.top.worst()) {
            self.threshold = worst;
        }
    }

    /// The non-essential terms at their best in the blocks that would hold
    /// `d` (their summaries only), summed in visiting order into
    /// `rest_prefix`; returns the total.
    fn shallow_bounds(&mut self, d: u32) -> f64 {
        let bounds = self.bounds;
        let mut sum = 0.0;
        for (j, c) in self.cursors[..self.essential].iter_mut().enumerate() {
            let blocks = c.postings.blocks;
            let at = gallop(blocks, c.shallow, |b| b.last_doc < d);
            if at != c.shallow || c.shallow_bound.is_none() {
                c.shallow = at;
                c.shallow_bound = Some(blocks.get(at).map_or(0.0, |b| bounds.block(c.weight_idf, b)));
            }
            sum += c.shallow_bound.unwrap_or(0.0);
            self.rest_prefix[j] = sum;
        }
        sum
    }

    /// Looks `d` up in the non-essential lists, bounded by their length
    /// codes: the exact length (a likely cache miss) is read only for
    /// documents that may still make it. Whether `d` still may.
    fn probe_non_essential(&mut self, d: u32, bound: f64) -> bool {
        let mut reach = bound;
        for j in (0..self.essential).rev() {
            if reach + self.rest_prefix[j] < self.threshold {
                return false;
            }
            let c = &mut self.cursors[j];
            // `d` can only be in block `shallow` (found from the summaries):
            // search its 32 slots, not the list.
            let docs = c.postings.docs;
            let from = c.pos.max(c.shallow * BLOCK).min(docs.len());
            let to = ((c.shallow + 1) * BLOCK).min(docs.len()).max(from);
            c.pos = docs.partition_point(from, to, |x| x < d);
            if docs.get(c.pos) == Some(d) {
                reach += self.bounds.posting(c.weight_idf, c.postings.tf_and_min_len(c.pos));
            }
        }
        reach >= self.threshold
    }

    /// `d`'s exact score. The reported score sums in query order, so it
    /// does not depend on which terms pruning visited first.
    fn exact_score(&mut self, d: u32, len: u32, ptrs: &mut [usize]) -> f64 {
        let norm = self.bounds.norm;
        self.parts.iter_mut().for_each(|p| *p = 0.0);
        for (e, c) in self.cursors[self.essential..].iter().enumerate() {
            let docs = c.postings.docs;
            let p = &mut ptrs[e];
            while *p < c.pos && docs.at(*p) < d {
                *p += 1;
            }
            if *p < c.pos && docs.at(*p) == d {
                self.parts[c.qpos] = c.weight_idf * norm.tf_part(c.postings.tf(*p), len);
            }
        }
        for c in &self.cursors[..self.essential] {
            if c.postings.docs.get(c.pos) == Some(d) {
                self.parts[c.qpos] = c.weight_idf * norm.tf_part(c.postings.tf(c.pos), len);
            }
        }
        self.parts.iter().sum()
    }

    /// The threshold only rises: terms that cannot reach it together become
    /// non-essential for the next windows. False once none is essential.
    fn raise_essential(&mut self) -> bool {
        while self.essential < self.cursors.len() && self.prefix[self.essential] < self.threshold {
            self.essential += 1;
        }
        self.essential < self.cursors.len()
    }
}

/// The largest block bound among the blocks of `postings` from position
/// `pos` on that hold slots in `[base, end)`; 0 if none does.
fn window_bound(postings: PostingSlices<'_>, pos: usize, base: u32, end: u32, bound: impl Fn(&BlockMax) -> f64) -> f64 {
    let blocks = postings.blocks;
    let mut b = gallop(blocks, pos / BLOCK, |x| x.last_doc < base);
    let mut best = 0.0f64;
    while b < blocks.len() {
        best = best.max(bound(&blocks[b]));
        // The next block starts past this one's last slot.
        if u64::from(blocks[b].last_doc) + 1 >= u64::from(end) {
            break;
        }
        b += 1;
    }
    best
}
