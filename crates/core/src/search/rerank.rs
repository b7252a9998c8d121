//! The user's reranker (`rerank: async (query, candidates) => scores`),
//! applied to the first `depth` results of any mode after fusion. What it
//! answers is blended with the first stage by position, as qmd does: the
//! first stage keeps most of its say at the top of the list, where it is
//! most often right, and less further down (weights below). It fails open:
//! an error, a timeout or an answer that is not one finite number per
//! candidate keeps the first-stage order, and every result says why.

use super::SearchHit;
use std::sync::Arc;

/// Candidates handed to the reranker at most (`rerankDepth`).
pub const DEFAULT_DEPTH: usize = 40;
/// Characters of each candidate's text (a cross-encoder's context is
/// small; qmd's reranker overflowed on large and CJK chunks).
pub const MAX_TEXT_CHARS: usize = 2000;
/// How long the reranker may take (`rerankTimeoutMs`).
pub const DEFAULT_TIMEOUT_MS: u64 = 5000;

/// What a result says of the reranking.
#[derive(Debug, Clone, PartialEq)]
pub enum RerankNote {
    /// The reranker's score of this result.
    Score(f64),
    /// Why the first-stage order was kept.
    Failed(Arc<str>),
}

/// One candidate, as the reranker gets it.
#[derive(Debug, Clone, PartialEq)]
pub struct Candidate {
    pub id: String,
    /// The file it comes from (a chunk's `sourceFile`, else its id).
    pub path: String,
    pub text: String,
    pub score: f64,
}

/// The first `depth` hits as candidates, each text cut to `MAX_TEXT_CHARS`.
pub fn candidates(hits: &[SearchHit], depth: usize) -> Vec<Candidate> {
    hits.iter()
        .take(depth)
        .map(|h| Candidate {
            id: h.id.clone(),
            path: super::group::file_of(h).to_string(),
            text: cut(h.content.as_str(), MAX_TEXT_CHARS),
            score: h.score,
        })
        .collect()
}

fn cut(text: &str, chars: usize) -> String {
    match text.char_indices().nth(chars) {
        Some((i, _)) => text[..i].to_string(),
        None => text.to_string(),
    }
}

/// The reranker's answer checked: one finite number per candidate.
pub fn check(answer: Option<Vec<f64>>, candidates: usize) -> Result<Vec<f64>, String> {
    let Some(scores) = answer else { return Err("the reranker did not answer an array of numbers".into()) };
    if scores.len() != candidates {
        return Err(format!("the reranker answered {} scores for {candidates} candidates", scores.len()));
    }
    if let Some(i) = scores.iter().position(|s| !s.is_finite()) {
        return Err(format!("the reranker's score {i} is not a finite number"));
    }
    Ok(scores)
}

/// The first stage's share of a blended score at 0-based position `rank`
/// (qmd's: 0.75 for the top 3, 0.6 to 10, 0.4 beyond).
fn first_stage_weight(rank: usize) -> f64 {
    match rank {
        0..=2 => 0.75,
        3..=9 => 0.6,
        _ => 0.4,
    }
}

/// The first `scores.len()` hits re-ordered by their blend of first-stage
/// score and reranker score (min-max scaled over the candidates), the rest
/// after them as they were; scores normalised so that the best is 1 (as
/// they were where the reranker has no preference).
pub fn blend(mut hits: Vec<SearchHit>, scores: &[f64]) -> Vec<SearchHit> {
    let n = scores.len().min(hits.len());
    let (lo, hi) = scores.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), &s| (l.min(s), h.max(s)));
    // Halved first: scores as far apart as -1e308 and 1e308 span more than
    // a float holds, and every score came out NaN.
    let span = hi * 0.5 - lo * 0.5;
    // The same score for every candidate (or scores too close for a float
    // to part) is no preference: the first stage's order and scores stand
    // (scaled to 1 each, the blend's bonus by position moved lower
    // candidates up).
    if span.is_nan() || span <= 0.0 {
        for (h, &s) in hits.iter_mut().zip(scores) {
            h.rerank = Some(RerankNote::Score(s));
        }
        return hits;
    }
    let scale = |s: f64| (s * 0.5 - lo * 0.5) / span;
    let floor = hits.get(n).map_or(0.0, |h| h.score);
    let mut head: Vec<(f64, SearchHit)> = hits
        .drain(..n)
        .enumerate()
        .map(|(rank, mut h)| {
            let w = first_stage_weight(rank);
            let blended = w * h.score + (1.0 - w) * scale(scores[rank]);
            h.rerank = Some(RerankNote::Score(scores[rank]));
            (blended, h)
        })
        .collect();
    head.sort_by(|a, b| b.0.total_cmp(&a.0));
    let best = head.first().map_or(1.0, |(s, _)| *s).max(f64::MIN_POSITIVE);
    // The candidates stay above the rest: their blend is scaled into
    // [floor, 1] where `floor` is the best score left below them.
    let mut out: Vec<SearchHit> = head
        .into_iter()
        .map(|(s, mut h)| {
            h.score = floor + (1.0 - floor) * (s / best);
            h
        })
        .collect();
    out.extend(hits);
    out
}

/// The hits as they were, each saying why they were not reranked.
pub fn failed(mut hits: Vec<SearchHit>, why: &str) -> Vec<SearchHit> {
    let why: Arc<str> = why.into();
    for h in &mut hits {
        h.rerank = Some(RerankNote::Failed(why.clone()));
    }
    hits
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::search::test_hit as hit;

    #[test]
    fn blended_by_position_candidates_first() {
        let hits = vec![hit("a", 1.0), hit("b", 0.9), hit("c", 0.8), hit("d", 0.3)];
        let c = candidates(&hits, 3);
        assert_eq!(c.iter().map(|c| c.id.as_str()).collect::<Vec<_>>(), ["a", "b", "c"]);
        let out = blend(hits, &[0.0, 0.0, 10.0]);
        let ids: Vec<&str> = out.iter().map(|h| h.id.as_str()).collect();
        assert_eq!(ids, ["c", "a", "b", "d"], "c: 0.75*0.8 + 0.25 = 0.85 beats a's 0.75");
        assert_eq!(out[0].score, 1.0);
        assert!(out[2].score > out[3].score, "the candidates stay above the rest");
        assert_eq!(out[0].rerank, Some(RerankNote::Score(10.0)));
        assert_eq!(out[3].rerank, None);
    }

    #[test]
    fn bad_answers_are_named() {
        assert!(check(None, 2).is_err());
        assert!(check(Some(vec![1.0]), 2).unwrap_err().contains("1 scores for 2"));
        assert!(check(Some(vec![1.0, f64::NAN]), 2).unwrap_err().contains("score 1"));
        assert_eq!(check(Some(vec![1.0, 2.0]), 2), Ok(vec![1.0, 2.0]));
        let out = failed(vec![hit("a", 1.0)], "timeout");
        assert_eq!(out[0].rerank, Some(RerankNote::Failed("timeout".into())));
        assert_eq!(cut("ab\u{4e2d}cd", 3), "ab\u{4e2d}");
    }

    #[test]
    fn no_preference_keeps_the_order_and_scores_far_apart_stay_numbers() {
        let hits = vec![hit("a", 1.0), hit("b", 0.7), hit("c", 0.7), hit("d", 0.6), hit("e", 0.5)];
        let same = blend(hits.clone(), &[0.5; 5]);
        let kept: Vec<(&str, f64)> = same.iter().map(|h| (h.id.as_str(), h.score)).collect();
        assert_eq!(kept, [("a", 1.0), ("b", 0.7), ("c", 0.7), ("d", 0.6), ("e", 0.5)]);
        assert!(same.iter().all(|h| matches!(h.rerank, Some(RerankNote::Score(s)) if s == 0.5)));
        let far = blend(hits.clone(), &[-1e308, 1e308, 1e308, f64::MAX, -f64::MAX]);
        assert!(far.iter().all(|h| h.score.is_finite() && (0.0..=1.0).contains(&h.score)), "{far:?}");
        assert_eq!(far.last().unwrap().id, "e");
        let tiny = blend(hits.clone(), &[1.5e-323, 2e-323, 2e-323, 2e-323, 2e-323]);
        assert!(tiny.iter().all(|h| h.score.is_finite()), "{tiny:?}");
        // The candidate the reranker put last is no longer first (NaN sorted first).
        let three = blend(hits[..3].to_vec(), &[-1e308, 1e308, 1e308]);
        assert_eq!(three.iter().map(|h| h.id.as_str()).collect::<Vec<_>>(), ["b", "c", "a"]);
    }
}
