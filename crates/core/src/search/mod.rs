//! Search in every mode: bm25 results (`keyword`), vector results and the
//! hybrid merge (`hybrid`), and which of them runs (`mode`).

pub mod file_name;
pub mod group;
pub mod history;
pub mod hybrid;
pub mod keyword;
pub mod mode;
pub mod rerank;

pub use keyword::{keyword_search, shift_range, KeywordQuery, SearchHit};
pub use mode::{Fusion, Mode};

/// `hits` whose scores a signal changed, best first again, normalised so
/// that the best is 1 (the history's fusion, the file name's lift).
pub(crate) fn resorted(hits: &mut [SearchHit]) {
    hits.sort_by(|a, b| b.score.total_cmp(&a.score));
    let best = hits.first().map_or(1.0, |h| h.score).max(f64::MIN_POSITIVE);
    for h in hits {
        h.score /= best;
    }
}

/// A bm25 hit for tests: `id`, its text `text of <id>`, `score`.
#[cfg(test)]
pub(crate) fn test_hit(id: &str, score: f64) -> SearchHit {
    SearchHit {
        id: id.into(),
        content: format!("text of {id}").into(),
        score,
        bm25: Some(score),
        vector: None,
        line_range: None,
        line_ranges: Vec::new(),
        metadata: None,
        rerank: None,
        line_offset: None,
        line_cut: Default::default(),
    }
}
