//! Vector-mode results and the hybrid merge (SPEC 6): the weighted sum of
//! the vector score clamped to [0, 1] and BM25 divided by its best match, or
//! reciprocal-rank fusion; ties broken by id in every mode.

use crate::analysis::tokenizer::Tokenizer;
use crate::search::{shift_range, SearchHit};
use crate::vectors::metadata;
use serde_json::{Map, Value};
use std::cmp::Ordering;
use std::collections::HashMap;

/// A hit from a vector store, as the store returned it.
#[derive(Debug, Clone, PartialEq)]
pub struct StoreHit {
    pub id: String,
    pub score: f64,
    pub metadata: Option<Map<String, Value>>,
}

pub use super::mode::Fusion;

/// The RRF constant: `score = 61 * (w / (60 + rank_v) + (1 - w) / (60 + rank_b))`.
const RRF_K: f64 = 60.0;

fn by_score_then_id(a: &SearchHit, b: &SearchHit) -> Ordering {
    b.score.total_cmp(&a.score).then_with(|| a.id.cmp(&b.id))
}

/// Vector hits in the store's own order: by the raw score it answered
/// (a cosine below 0, a dot product or distance past 1 all clamp to one
/// score, and would otherwise be ordered by id, against the order the
/// store chose its top k by), a score that is not a number last.
fn by_raw_score_then_id(a: &SearchHit, b: &SearchHit) -> Ordering {
    let raw = |h: &SearchHit| h.vector.filter(|v| !v.is_nan()).unwrap_or(f64::NEG_INFINITY);
    raw(b).total_cmp(&raw(a)).then_with(|| by_score_then_id(a, b))
}

/// First and last line of `content` holding one of `tokens`, tokenizing
/// each line (for documents that come only from the vector store).
pub fn line_range_of(content: &str, tokens: &[String], tokenizer: &Tokenizer) -> Option<(u32, u32)> {
    if tokens.is_empty() {
        return None;
    }
    let mut range: Option<(u32, u32)> = None;
    tokenizer.tokenize_lines(content, |t, line| {
        if line != 0 && tokens.iter().any(|q| q == t) {
            range = Some(match range {
                None => (line, line),
                Some((a, b)) => (a.min(line), b.max(line)),
            });
        }
    });
    range
}

/// The path of a store hit's document: its `sourceFile`, else its `id`
/// (as written in its metadata), else the store's id.
pub fn stored_path(hit: &StoreHit) -> Option<&str> {
    let m = hit.metadata.as_ref();
    let id = m.and_then(|m| m.get("id")).and_then(|v| v.as_str()).unwrap_or(hit.id.as_str());
    crate::index::chunk_source(id, m).or(Some(id))
}

/// A store hit as a result: `id` from `metadata.id`, `content` from
/// `metadata.text`, metadata without those and `_startLineOffset`, the
/// score clamped to [0, 1] with the raw value kept.
pub fn vector_result(hit: StoreHit, line_range: impl Fn(&str) -> Option<(u32, u32)>) -> SearchHit {
    let d = metadata::decode(hit.id, hit.metadata);
    let line_range = line_range(&d.content).map(|r| shift_range(r, d.start_line_offset));
    SearchHit {
        id: d.id,
        content: d.content.into(),
        score: if hit.score.is_nan() { 0.0 } else { hit.score.clamp(0.0, 1.0) },
        bm25: None,
        vector: Some(hit.score),
        line_range,
        line_ranges: Vec::new(),
        metadata: (!d.metadata.is_empty()).then(|| std::sync::Arc::new(d.metadata)),
        rerank: None,
    }
}

/// Vector mode: ordered by the store's raw score, ties by id, `minScore`
/// on the clamped score, each id once (a store may answer a row twice, or
/// rows another program wrote under one of our ids).
pub fn vector_results(mut hits: Vec<SearchHit>, top_k: usize, min_score: Option<f64>) -> Vec<SearchHit> {
    hits.sort_by(by_raw_score_then_id);
    let mut seen = std::collections::HashSet::new();
    hits.retain(|h| seen.insert(h.id.clone()));
    hits.retain(|h| min_score.is_none_or(|m| h.score >= m));
    hits.truncate(top_k);
    hits
}

/// Whether vector hits asked `asked` deep may have cut a tie at `top_k`:
/// the store answered in full and its last score equals the `top_k`-th
/// (the store, not the id, would have chosen which tied rows came back).
pub fn tie_at_cut(hits: &[SearchHit], top_k: usize, asked: usize) -> bool {
    if top_k == 0 || hits.len() < asked || hits.len() <= top_k {
        return false;
    }
    let mut raw: Vec<f64> = hits.iter().map(|h| h.vector.unwrap_or(f64::NAN)).collect();
    raw.sort_by(|a, b| b.total_cmp(a));
    raw[top_k - 1] == raw[raw.len() - 1]
}

/// Merges bm25-mode candidates (scores already divided by the best match,
/// raw values in `bm25`) with vector-mode candidates.
pub fn merge(
    bm25: Vec<SearchHit>,
    vector: Vec<SearchHit>,
    vector_weight: f64,
    fusion: Fusion,
    top_k: usize,
    min_score: Option<f64>,
) -> Vec<SearchHit> {
    let w = vector_weight;
    let rank = |list: &[SearchHit], order: fn(&SearchHit, &SearchHit) -> Ordering| -> HashMap<String, usize> {
        let mut sorted: Vec<&SearchHit> = list.iter().collect();
        sorted.sort_by(|a, b| order(a, b));
        sorted.iter().enumerate().map(|(i, h)| (h.id.clone(), i + 1)).collect()
    };
    let (bm25_rank, vector_rank) = (rank(&bm25, by_score_then_id), rank(&vector, by_raw_score_then_id));
    let mut merged: HashMap<String, (Option<SearchHit>, Option<SearchHit>)> = HashMap::new();
    for h in vector {
        let id = h.id.clone();
        merged.entry(id).or_default().1 = Some(h);
    }
    for h in bm25 {
        let id = h.id.clone();
        merged.entry(id).or_default().0 = Some(h);
    }
    let mut out: Vec<SearchHit> = merged
        .into_iter()
        .map(|(id, (b, v))| {
            let score = match fusion {
                Fusion::Weighted => {
                    w * v.as_ref().map_or(0.0, |h| h.score) + (1.0 - w) * b.as_ref().map_or(0.0, |h| h.score)
                }
                Fusion::Rrf => {
                    let part = |r: Option<&usize>, weight: f64| r.map_or(0.0, |&r| weight / (RRF_K + r as f64));
                    (RRF_K + 1.0) * (part(vector_rank.get(&id), w) + part(bm25_rank.get(&id), 1.0 - w))
                }
            };
            let bm25_raw = b.as_ref().and_then(|h| h.bm25);
            let vector_raw = v.as_ref().and_then(|h| h.vector);
            let line_range = b.as_ref().and_then(|h| h.line_range).or_else(|| v.as_ref().and_then(|h| h.line_range));
            // Content and metadata from the vector hit when there is one, as Mastra.
            let base = v.or(b).expect("one side at least");
            SearchHit {
                id,
                content: base.content,
                score: score.clamp(0.0, 1.0),
                bm25: bm25_raw,
                vector: vector_raw,
                line_range,
                line_ranges: Vec::new(),
                metadata: base.metadata,
                rerank: None,
            }
        })
        .collect();
    out.sort_by(by_score_then_id);
    out.retain(|h| min_score.is_none_or(|m| h.score >= m));
    out.truncate(top_k);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn hit(id: &str, score: f64, bm25: Option<f64>, vector: Option<f64>) -> SearchHit {
        SearchHit {
            id: id.into(),
            content: format!("content {id}").into(),
            score,
            bm25,
            vector,
            line_range: None,
            line_ranges: Vec::new(),
            metadata: None,
            rerank: None,
        }
    }

    #[test]
    fn weighted_merge() {
        let bm25 = vec![hit("a", 1.0, Some(4.0), None), hit("b", 0.5, Some(2.0), None)];
        let vector = vec![hit("b", 0.9, None, Some(0.9)), hit("c", 0.0, None, Some(-0.2))];
        let out = merge(bm25, vector, 0.5, Fusion::Weighted, 10, None);
        let got: Vec<(&str, f64)> = out.iter().map(|h| (h.id.as_str(), h.score)).collect();
        assert_eq!(got, [("b", 0.7), ("a", 0.5), ("c", 0.0)]);
        assert_eq!((out[0].bm25, out[0].vector), (Some(2.0), Some(0.9)));
        assert_eq!((out[2].bm25, out[2].vector), (None, Some(-0.2)));
        let only = merge(vec![hit("a", 1.0, Some(4.0), None)], vec![], 0.0, Fusion::Weighted, 10, Some(0.99));
        assert_eq!(only[0].score, 1.0);
    }

    #[test]
    fn rrf_merge() {
        let bm25 = vec![hit("a", 1.0, Some(4.0), None), hit("b", 0.5, Some(2.0), None)];
        let vector = vec![hit("a", 0.9, None, Some(0.9)), hit("c", 0.8, None, Some(0.8))];
        let out = merge(bm25, vector, 0.5, Fusion::Rrf, 10, None);
        assert_eq!(out[0].id, "a");
        assert!((out[0].score - 1.0).abs() < 1e-12, "first in both lists scores 1");
        let b = out.iter().find(|h| h.id == "b").unwrap().score;
        let c = out.iter().find(|h| h.id == "c").unwrap().score;
        assert!((b - 61.0 * 0.5 / 62.0).abs() < 1e-12);
        assert_eq!(b, c);
        // Equal scores: ordered by id.
        assert_eq!(out[1].id, "b");
    }

    #[test]
    fn vector_hits_as_results() {
        let t = Tokenizer::default();
        let tokens = t.tokenize("reset password");
        let h = vector_result(
            StoreHit { id: "x".into(), score: 1.2, metadata: json!({"id": "docs/a.md#chunk-1", "text": "one\nreset here", "sourceFile": "docs/a.md", "_startLineOffset": 38}).as_object().cloned() },
            |c| line_range_of(c, &tokens, &t),
        );
        assert_eq!(h.id, "docs/a.md#chunk-1");
        assert_eq!(h.score, 1.0);
        assert_eq!(h.vector, Some(1.2));
        assert_eq!(h.line_range, Some((39, 39)));
        assert_eq!(h.metadata.as_deref().cloned(), json!({"sourceFile": "docs/a.md"}).as_object().cloned());
        let bare = vector_result(StoreHit { id: "y".into(), score: -0.5, metadata: None }, |_| None);
        assert_eq!((bare.id.as_str(), bare.content.as_str(), bare.score, bare.metadata), ("y", "", 0.0, None));
        let ordered = vector_results(
            vec![hit("b", 0.5, None, Some(0.5)), hit("a", 0.5, None, Some(0.5)), hit("c", 0.9, None, Some(0.9))],
            2,
            None,
        );
        assert_eq!(ordered.iter().map(|h| h.id.as_str()).collect::<Vec<_>>(), ["c", "a"]);
    }
}
