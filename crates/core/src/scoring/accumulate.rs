//! Top-k retrieval for long queries: every posting of every term added into
//! one score per document, term after term. Pruning (`maxscore`) costs each
//! candidate a look at every term, which a query of thousands of distinct
//! words (a pasted file) turns into seconds; this costs the postings read
//! and one pass over the documents they touched, whatever the query's length.

use super::maxscore::Keep;
use super::topk::TopK;
use crate::index::kind::KindWeights;
use crate::index::{Bm25Index, Hit, DEAD};

/// Distinct query terms past which a query is scored here.
pub const LONG_QUERY_TERMS: usize = 64;

impl Bm25Index {
    /// `top_k_weighted` for a long query. The same results and the same
    /// scores, to the bit: each document's parts are summed in query order,
    /// as `maxscore` sums them (a missing part adds 0, which changes no sum).
    pub(crate) fn top_k_accumulated(
        &self,
        q: &[super::bm25::QueryTerm],
        k: usize,
        keep: Keep,
        weights: Option<&KindWeights>,
    ) -> Vec<Hit<'_>> {
        let norm = self.norm(self.avg_doc_length());
        let mut scores = vec![0.0f64; self.lens.len()];
        let mut touched: Vec<u32> = Vec::new();
        let mut in_query_order: Vec<&super::bm25::QueryTerm> = q.iter().collect();
        in_query_order.sort_by_key(|qt| qt.position);
        for qt in in_query_order {
            let weight_idf = qt.weight * self.idf(qt.term);
            let postings = self.terms.get(qt.term).postings.slices();
            for (i, doc) in postings.docs.iter().enumerate() {
                let len = self.lens[doc as usize];
                if len == DEAD {
                    continue;
                }
                let score = &mut scores[doc as usize];
                if *score == 0.0 {
                    touched.push(doc);
                }
                *score += weight_idf * norm.tf_part(postings.tf(i), len);
            }
        }
        let better = |a, b| self.ranks_before(a, b);
        let mut top = TopK::new(k);
        for d in touched {
            let mut score = scores[d as usize];
            if let Some(w) = weights {
                score *= w[self.kinds[d as usize] as usize];
            }
            let item = (score, d);
            if top.admits(item, better) && keep.is_none_or(|f| f(self.doc_at(d))) {
                top.push(item, better);
            }
        }
        self.hits(top.into_sorted(better))
    }
}
