//! Scoring every matching document: the reference that `top_k` must equal
//! (property tests), kept simple on purpose.

use super::maxscore::Keep;
use super::topk::TopK;
use crate::index::{Bm25Index, Hit, DEAD};
use rustc_hash::FxHashMap;

impl Bm25Index {
    /// Scores every matching document (the reference for `top_k`).
    pub fn top_k_exhaustive(&self, tokens: &[String], k: usize, keep: Keep) -> Vec<Hit<'_>> {
        self.top_k_exhaustive_weighted(tokens, k, keep, &crate::index::kind::FLAT)
    }

    /// `top_k_exhaustive` with kind weights (the reference for `top_k_weighted`).
    pub fn top_k_exhaustive_weighted(
        &self,
        tokens: &[String],
        k: usize,
        keep: Keep,
        weights: &crate::index::kind::KindWeights,
    ) -> Vec<Hit<'_>> {
        let q = self.query_terms(tokens);
        let norm = self.norm(self.avg_doc_length());
        let mut scores: FxHashMap<u32, Vec<f64>> = FxHashMap::default();
        for qt in &q {
            let wi = qt.weight * self.idf(qt.term);
            let postings = &self.terms.get(qt.term).postings;
            for (i, doc) in postings.slices().docs.iter().enumerate() {
                let len = self.lens[doc as usize];
                if len != DEAD {
                    scores.entry(doc).or_insert_with(|| vec![0.0; q.len()])[qt.position] =
                        wi * norm.tf_part(postings.tf(i), len);
                }
            }
        }
        let better = |a, b| self.ranks_before(a, b);
        let mut top = TopK::new(k);
        for (d, parts) in scores {
            let sum: f64 = parts.iter().sum();
            let w = weights[self.kinds[d as usize] as usize];
            let item = (if w == 1.0 { sum } else { sum * w }, d);
            if keep.is_none_or(|f| f(self.doc_at(d))) && top.admits(item, better) {
                top.push(item, better);
            }
        }
        self.hits(top.into_sorted(better))
    }
}
