//! The BM25 formula: parameters, idf, the term-frequency part with one
//! query's constants folded, and the bounds pruning relies on.

use crate::index::Bm25Index;

pub use crate::index::Bm25Params;

/// Bounds are inflated this much so that float rounding never makes a
/// bound smaller than a score it should cover.
pub(crate) const BOUND_SLACK: f64 = 1.0 + 1e-9;

/// BM25's term-frequency part, `tf·(k1+1) / (tf + k1·(1 − b + b·len/avgdl))`,
/// with the constants of one query folded.
#[derive(Clone, Copy)]
pub(crate) struct Norm {
    c1: f64,
    c2: f64,
    k1p1: f64,
}

impl Norm {
    #[inline]
    pub fn tf_part(&self, tf: u32, len: u32) -> f64 {
        let tf = tf as f64;
        tf * self.k1p1 / (tf + self.c1 + self.c2 * len as f64)
    }

    /// The largest `tf_part` of postings with frequencies up to `max_tf` and
    /// `len/tf` of at least `min_len_per_tf` (needs k1 >= 0, 0 <= b <= 1).
    pub fn bound(&self, max_tf: u32, min_len_per_tf: f32) -> f64 {
        self.k1p1 / (1.0 + self.c1 / max_tf as f64 + self.c2 * min_len_per_tf as f64)
    }
}

/// A distinct query term known to the index: its id, how often the query
/// repeats it, and its position among the query's distinct terms.
#[derive(Debug, Clone, Copy)]
pub(crate) struct QueryTerm {
    pub term: u32,
    pub weight: f64,
    pub position: usize,
}

impl Bm25Index {
    /// Distinct query terms known to the index, with their repeat counts
    /// (Mastra sums over query tokens including repeats).
    pub(crate) fn query_terms(&self, tokens: &[String]) -> Vec<QueryTerm> {
        let mut out: Vec<QueryTerm> = Vec::new();
        // Each term's place in `out` (a long query repeats its words).
        let mut at: rustc_hash::FxHashMap<u32, usize> = rustc_hash::FxHashMap::default();
        for tok in tokens {
            let Some(t) = self.term_id(tok) else { continue };
            if self.terms.df(t) == 0 {
                continue;
            }
            match at.get(&t) {
                Some(&i) => out[i].weight += 1.0,
                None => {
                    let position = out.len();
                    at.insert(t, position);
                    out.push(QueryTerm { term: t, weight: 1.0, position });
                }
            }
        }
        out
    }

    pub(crate) fn idf(&self, t: u32) -> f64 {
        let n = self.live_docs as f64;
        let df = self.terms.df(t) as f64;
        ((n - df + 0.5) / (df + 0.5) + 1.0).ln()
    }

    /// The length normalisation of scores at average length `avgdl`.
    pub(crate) fn norm(&self, avgdl: f64) -> Norm {
        let Bm25Params { k1, b } = self.params;
        Norm { c1: k1 * (1.0 - b), c2: k1 * b / avgdl, k1p1: k1 + 1.0 }
    }

    /// Whether `a` ranks before `b` (score, then id).
    pub(crate) fn ranks_before(&self, a: (f64, u32), b: (f64, u32)) -> bool {
        super::topk::ranks_before(a, b, |slot| crate::index::id_at(&self.docs, slot))
    }
}
