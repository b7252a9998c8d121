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
    let line_offset = d.start_line_offset;
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
        line_offset,
        line_cut: Default::default(),
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

/// The first tier of a hybrid merge: the candidates of each half fused
/// together. Deeper tiers double it (see `merge`).
pub const FIRST_TIER: usize = super::mode::FIRST_TIER;

/// The tier a candidate at `position` (from 0) in a half's list falls in:
/// 0 within the first `FIRST_TIER`, then one more for each doubling.
fn tier_of(position: usize) -> u32 {
    let (mut tier, mut size) = (0, FIRST_TIER);
    while position >= size {
        (tier, size) = (tier + 1, size.saturating_mul(2));
    }
    tier
}

/// One candidate of the merge: its hit in each half, and its position there.
#[derive(Default)]
struct Candidate {
    bm25: Option<(usize, SearchHit)>,
    vector: Option<(usize, SearchHit)>,
}

impl Candidate {
    /// The first tier that holds it: the better of its two positions.
    fn tier(&self) -> u32 {
        let at = |side: &Option<(usize, SearchHit)>| side.as_ref().map_or(u32::MAX, |(p, _)| tier_of(*p));
        at(&self.bm25).min(at(&self.vector))
    }

    /// Its fused score as its tier sees it: a half counts only where the
    /// candidate is in that half's first tiers up to this one.
    fn score(&self, tier: u32, w: f64, fusion: Fusion) -> f64 {
        let seen = |p: &&(usize, SearchHit)| tier_of(p.0) <= tier;
        let (b, v) = (self.bm25.as_ref().filter(seen), self.vector.as_ref().filter(seen));
        match fusion {
            Fusion::Weighted => w * v.map_or(0.0, |(_, h)| h.score) + (1.0 - w) * b.map_or(0.0, |(_, h)| h.score),
            Fusion::Rrf => {
                let part = |side: Option<&(usize, SearchHit)>, weight: f64| {
                    side.map_or(0.0, |(p, _)| weight / (RRF_K + (p + 1) as f64))
                };
                (RRF_K + 1.0) * (part(v, w) + part(b, 1.0 - w))
            }
        }
    }

    /// The merged result: scores of both halves, content and metadata from
    /// the vector hit when there is one (as Mastra), unless the store kept
    /// no text (a store that answers ids and scores alone): the index's
    /// then (the result's content was empty).
    fn into_hit(self, id: String, score: f64) -> SearchHit {
        let (b, v) = (self.bm25.map(|(_, h)| h), self.vector.map(|(_, h)| h));
        let bm25_raw = b.as_ref().and_then(|h| h.bm25);
        let vector_raw = v.as_ref().and_then(|h| h.vector);
        let line_range = b.as_ref().and_then(|h| h.line_range).or_else(|| v.as_ref().and_then(|h| h.line_range));
        let line_cut = b.as_ref().map(|h| h.line_cut).unwrap_or_default();
        let v = v.filter(|v| !v.content.is_empty() || b.as_ref().is_none_or(|b| b.content.is_empty()));
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
            line_offset: base.line_offset,
            line_cut,
        }
    }
}

/// Merges bm25-mode candidates (scores already divided by the best match,
/// raw values in `bm25`) with vector-mode candidates, in tiers: the first
/// `FIRST_TIER` of each half fused, then what the first `2 x FIRST_TIER`
/// add, fused as that depth sees them, and so on, each tier placed below
/// the one before. A tier's order does not depend on how deep the halves
/// were read, so every `topK` is a prefix of a larger one (a merge of
/// halves as deep as `topK` re-ordered the first results: the search
/// tool's pages overlapped and left files out).
pub fn merge(
    bm25: Vec<SearchHit>,
    vector: Vec<SearchHit>,
    vector_weight: f64,
    fusion: Fusion,
    top_k: usize,
    min_score: Option<f64>,
) -> Vec<SearchHit> {
    if top_k == 0 {
        return Vec::new();
    }
    let candidates = candidates(bm25, vector);
    let mut scored: Vec<(u32, f64, String, Candidate)> = candidates
        .into_iter()
        .map(|(id, c)| {
            let tier = c.tier();
            (tier, c.score(tier, vector_weight, fusion), id, c)
        })
        .collect();
    scored.sort_by(|a, b| a.0.cmp(&b.0).then_with(|| b.1.total_cmp(&a.1)).then_with(|| a.2.cmp(&b.2)));
    let mut out: Vec<SearchHit> = Vec::with_capacity(scored.len().min(top_k));
    // The last score placed (kept or cut by `minScore`), and the scale of this tier.
    let (mut tier, mut last, mut scale) = (0, 1.0, 1.0);
    for (t, score, id, c) in scored {
        let mut hit = c.into_hit(id, score);
        if t != tier {
            // A deeper tier: scaled to start just below the last hit placed.
            tier = t;
            scale = if hit.score > last { last / hit.score } else { 1.0 };
        }
        if t > 0 {
            hit.score = (hit.score * scale).min(last.next_down()).max(0.0);
        }
        last = hit.score;
        if min_score.is_none_or(|m| hit.score >= m) {
            out.push(hit);
        }
        if out.len() >= top_k {
            break;
        }
    }
    out
}

/// Each id of either half once, with its position in its half's own order
/// (bm25 by score, vector by the store's raw score; ties by id). An id a
/// store answered twice keeps its first row, as vector mode does (the later
/// one, found only in a deeper read, moved it to a later tier).
fn candidates(mut bm25: Vec<SearchHit>, mut vector: Vec<SearchHit>) -> HashMap<String, Candidate> {
    bm25.sort_by(by_score_then_id);
    vector.sort_by(by_raw_score_then_id);
    let mut merged: HashMap<String, Candidate> = HashMap::new();
    for (p, h) in vector.into_iter().enumerate() {
        let id = h.id.clone();
        merged.entry(id).or_default().vector.get_or_insert((p, h));
    }
    for (p, h) in bm25.into_iter().enumerate() {
        let id = h.id.clone();
        merged.entry(id).or_default().bm25.get_or_insert((p, h));
    }
    merged
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
            line_offset: None,
            line_cut: Default::default(),
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

    /// Both halves of 1,000 candidates (half of them shared), in pseudo-random order.
    fn halves(seed: u64) -> (Vec<SearchHit>, Vec<SearchHit>) {
        let mut x = seed;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x % 10_000) as f64 / 10_000.0
        };
        let bm25 = (0..1000).map(|i| hit(&format!("d{i}"), next(), Some(1.0), None)).collect();
        let vector = (500..1500)
            .map(|i| {
                let s = next();
                hit(&format!("d{i}"), s, None, Some(s))
            })
            .collect();
        (bm25, vector)
    }

    /// The first `n` of a half, in its own order (what a search as deep returns).
    fn first(mut hits: Vec<SearchHit>, n: usize, order: fn(&SearchHit, &SearchHit) -> Ordering) -> Vec<SearchHit> {
        hits.sort_by(order);
        hits.truncate(n);
        hits
    }

    #[test]
    fn every_top_k_is_a_prefix_of_a_larger_one() {
        for (seed, fusion) in [(7, Fusion::Weighted), (11, Fusion::Rrf), (13, Fusion::Weighted)] {
            let (bm25, vector) = halves(seed);
            let run = |top_k: usize| {
                let depth = super::super::mode::hybrid_depth(top_k);
                let b = first(bm25.clone(), depth, by_score_then_id);
                let v = first(vector.clone(), depth, by_raw_score_then_id);
                merge(b, v, 0.5, fusion, top_k, None)
            };
            let all = run(1500);
            assert_eq!(all.len(), 1500);
            assert!(all.windows(2).all(|w| w[0].score >= w[1].score));
            for top_k in [1, 10, 50, 101, 199, 200, 201, 399, 400, 401, 799, 801, 1000] {
                let ids: Vec<String> = run(top_k).into_iter().map(|h| h.id).collect();
                let want: Vec<String> = all[..top_k].iter().map(|h| h.id.clone()).collect();
                assert_eq!(ids, want, "topK {top_k}, seed {seed}");
            }
        }
    }

    #[test]
    fn a_deeper_tier_follows_below_the_one_before() {
        // "late" is 250th in both halves: at 400 deep it scores more than
        // "solo", first of the vector half only, but it comes after it.
        let mut bm25: Vec<SearchHit> =
            (0..300).map(|i| hit(&format!("b{i:03}"), 1.0 - i as f64 / 1000.0, Some(1.0), None)).collect();
        let mut vector: Vec<SearchHit> = (0..300)
            .map(|i| hit(&format!("v{i:03}"), 0.5 - i as f64 / 1000.0, None, Some(0.5 - i as f64 / 1000.0)))
            .collect();
        bm25[250] = hit("late", 0.75, Some(1.0), None);
        vector[250] = hit("late", 0.25, None, Some(0.25));
        let out = merge(bm25, vector, 0.5, Fusion::Weighted, 1000, None);
        let at = |id: &str| out.iter().position(|h| h.id == id).unwrap();
        assert!(at("late") >= 400, "tier 1 after the 400 of tier 0: {}", at("late"));
        assert!(out[at("late")].score < out[399].score);
        assert_eq!(out.len(), 2 * 300 - 1);
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
