//! Search results of bm25 mode: top-k, the score normalised by the best
//! match (raw value kept), `minScore` on the normalised score, the metadata
//! filter applied inside top-k, and line ranges shifted to file lines.

use crate::index::Bm25Index;
use crate::text::SharedText;
use crate::vectors::filter::Filter;
use serde_json::{Map, Value};
use std::sync::Arc;

#[derive(Debug, Clone, PartialEq)]
pub struct SearchHit {
    pub id: String,
    pub content: SharedText,
    /// In [0, 1].
    pub score: f64,
    pub bm25: Option<f64>,
    pub vector: Option<f64>,
    /// 1-based, inclusive, in the lines of the file.
    pub line_range: Option<(u32, u32)>,
    /// File-level results (`group::by_file`): the range of every matching
    /// chunk of the file, in line order; empty otherwise.
    pub line_ranges: Vec<(u32, u32)>,
    pub metadata: Option<Arc<Map<String, Value>>>,
    /// The reranker's score, or why there is none (`search::rerank`).
    pub rerank: Option<super::rerank::RerankNote>,
    /// A vector hit's first line in its file less one (its
    /// `_startLineOffset`), kept until its line range is made.
    pub line_offset: Option<u32>,
    /// Where `content` is a piece of a line longer than the chunks' size:
    /// whether that line goes on before it, after it.
    pub line_cut: LineCut,
}

/// Whether a chunk's text starts after its first line's start, and ends
/// before its last line's end (pieces of a line longer than `maxChars`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LineCut {
    pub start: bool,
    pub end: bool,
}

/// The pieces of one long line are a file's only chunks that share their
/// first line with the chunk before or after them (whole-line chunks
/// start further down each time): a chunk is cut where its neighbour
/// starts on its line.
pub fn line_cut_of(index: &Bm25Index, doc: &crate::index::Document) -> LineCut {
    // (Chunks the engine made know their first line; a user's own chunks
    // without one are not pieces of a line.)
    let (Some((file, n)), Some(line)) = (crate::index::chunk_number(doc), doc.start_line_offset) else {
        return LineCut::default();
    };
    let same_line = |m: u32| {
        index.get(&crate::index::chunk_id(file, m as usize)).is_some_and(|d| d.start_line_offset == Some(line))
    };
    LineCut { start: n > 0 && same_line(n - 1), end: n < u32::MAX && same_line(n + 1) }
}

#[derive(Clone, Copy)]
pub struct KeywordQuery<'a> {
    pub tokens: &'a [String],
    pub top_k: usize,
    pub min_score: Option<f64>,
    pub filter: Option<&'a Filter>,
    /// Only documents whose path (a chunk's `sourceFile`, else its id)
    /// starts with this (`path_prefix`), applied inside top-k.
    pub path_prefix: Option<&'a str>,
    /// Each file kind's weight (`index::kind`); `None`: all alike.
    pub kind_weights: Option<&'a crate::index::kind::KindWeights>,
}

/// A path prefix as users write it (`/src/`, `./src`, `src`) in the form
/// document ids are compared in: no leading `./` or `/`; `.` is the whole
/// workspace (`""`).
pub fn path_prefix(prefix: &str) -> &str {
    let mut p = prefix;
    loop {
        let next = p.trim_start_matches('/').trim_start_matches("./");
        if next == p {
            return if p == "." { "" } else { p };
        }
        p = next;
    }
}

/// Whether the document path `path` lies under the normalised `prefix`, a
/// folder (or a file): `src` holds `src/a.ts` and `src` itself, not
/// `srcs/b.ts`; a chunk (`a.md#chunk-2`) lies where its file does.
pub fn under_prefix(path: &str, prefix: &str) -> bool {
    let path = path_prefix(path);
    let Some(rest) = path.strip_prefix(prefix) else { return false };
    prefix.is_empty()
        || prefix.ends_with('/')
        || rest.is_empty()
        || rest.starts_with('/')
        || crate::index::chunk_parent(path) == Some(prefix)
}

/// Whether `doc` lies under the normalised `prefix`.
fn under(doc: &crate::index::Document, prefix: &str) -> bool {
    under_prefix(doc.source_file().unwrap_or(&doc.id), prefix)
}

/// The largest `startLineOffset` accepted: shifted line numbers stay far
/// inside u32 for any text a JavaScript string can hold.
pub const MAX_START_LINE: u32 = 1_000_000_000;

/// Maps a range in a document's own lines to file lines (saturating: never
/// wraps, whatever the offset).
pub fn shift_range(range: (u32, u32), start_line_offset: Option<u32>) -> (u32, u32) {
    match start_line_offset {
        Some(o) => {
            let shift = o.saturating_sub(1);
            (range.0.saturating_add(shift), range.1.saturating_add(shift))
        }
        None => range,
    }
}

pub fn keyword_search(index: &Bm25Index, q: &KeywordQuery) -> Vec<SearchHit> {
    let filter = q.filter.filter(|f| !f.is_empty());
    let prefix = q.path_prefix.map(path_prefix).filter(|p| !p.is_empty());
    let keep = (filter.is_some() || prefix.is_some()).then_some(|d: &crate::index::Document| {
        filter.is_none_or(|f| f.matches_document(&d.id, d.metadata.as_deref())) && prefix.is_none_or(|p| under(d, p))
    });
    let keep = keep.as_ref().map(|k| k as &dyn Fn(&crate::index::Document) -> bool);
    let hits = index.top_k_weighted(q.tokens, q.top_k, keep, q.kind_weights);
    let Some(best) = hits.first().map(|h| h.score) else { return Vec::new() };
    let wanted = index.distinct_term_ids(q.tokens);
    for h in &hits {
        h.doc.prefetch();
    }
    hits.into_iter()
        .map(|h| (h, if best > 0.0 { h.score / best } else { 0.0 }))
        .filter(|(_, score)| q.min_score.is_none_or(|m| *score >= m))
        // A text damaged in its snapshot and not readable again from its
        // file is left out, never shown blank (`bytes::stored`); one not
        // read yet is read, and checked, by `read_texts`, where the caller
        // may read from disk.
        .filter(|(h, _)| !h.doc.content.is_damaged())
        .map(|(h, score)| SearchHit {
            id: h.doc.id.clone(),
            content: h.doc.content.clone(),
            score,
            bm25: Some(h.score),
            vector: None,
            line_range: index.line_range_of_terms(h.slot, &wanted).map(|r| shift_range(r, h.doc.start_line_offset)),
            line_ranges: Vec::new(),
            metadata: h.doc.metadata.clone(),
            rerank: None,
            line_offset: None,
            line_cut: line_cut_of(index, h.doc),
        })
        .collect()
}

/// Whether any hit's text is still in its snapshot file (reading it is a
/// read from disk: the engine does not do that on the host's thread).
pub fn texts_unread(hits: &[SearchHit]) -> bool {
    hits.iter().any(|h| !h.content.in_memory())
}

/// Reads every hit's text that is still in its snapshot file, and leaves
/// out those found damaged (never shown blank).
pub fn read_texts(mut hits: Vec<SearchHit>) -> Vec<SearchHit> {
    if !texts_unread(&hits) {
        return hits;
    }
    hits.retain(|h| {
        let _ = h.content.as_str(); // read and checked now
        !h.content.is_damaged()
    });
    hits
}

#[cfg(test)]
mod tests {
    #[test]
    fn shifted_ranges_never_wrap() {
        assert_eq!(super::shift_range((2, 3), Some(10)), (11, 12));
        assert_eq!(super::shift_range((2, 3), None), (2, 3));
        assert_eq!(super::shift_range((2, 3), Some(u32::MAX)), (u32::MAX, u32::MAX));
        assert_eq!(super::shift_range((2, 3), Some(0)), (2, 3));
    }

    use super::*;
    use crate::analysis::tokenizer::Tokenizer;
    use crate::index::{Analyzed, Bm25Params, NewDocument};
    use serde_json::json;

    #[test]
    fn normalised_filtered_shifted() {
        let t = Tokenizer::default();
        let mut ix = Bm25Index::new(Bm25Params::default());
        let add = |ix: &mut Bm25Index, id: &str, text: &str, meta: Value, off: Option<u32>, seq| {
            ix.upsert(
                NewDocument {
                    id: id.into(),
                    content: text.into(),
                    metadata: meta.as_object().cloned().map(Arc::new),
                    start_line_offset: off,
                    analyzed: Analyzed::of_text(&t, text),
                },
                seq,
            );
        };
        add(&mut ix, "a", "reset password\nreset", json!({"k": "x"}), None, 1);
        add(&mut ix, "b", "one\ntwo\npassword", json!({"k": "y"}), Some(10), 2);
        add(&mut ix, "c", "unrelated", json!(null), None, 3);
        let tokens = t.tokenize("password reset");
        let hits = keyword_search(
            &ix,
            &KeywordQuery {
                tokens: &tokens,
                top_k: 5,
                min_score: None,
                filter: None,
                path_prefix: None,
                kind_weights: None,
            },
        );
        assert_eq!(hits.len(), 2);
        assert_eq!(hits[0].id, "a");
        assert_eq!(hits[0].score, 1.0);
        assert!(hits[1].score > 0.0 && hits[1].score < 1.0);
        assert_eq!(hits[1].score, hits[1].bm25.unwrap() / hits[0].bm25.unwrap());
        assert_eq!(hits[0].line_range, Some((1, 2)));
        assert_eq!(hits[1].line_range, Some((12, 12)));
        let only_b = keyword_search(
            &ix,
            &KeywordQuery {
                tokens: &tokens,
                top_k: 5,
                min_score: Some(0.99),
                filter: None,
                path_prefix: None,
                kind_weights: None,
            },
        );
        assert_eq!(only_b.len(), 1);
        let f = Filter::parse(&json!({"k": "y"})).unwrap();
        let filtered = keyword_search(
            &ix,
            &KeywordQuery {
                tokens: &tokens,
                top_k: 5,
                min_score: None,
                filter: Some(&f),
                path_prefix: None,
                kind_weights: None,
            },
        );
        assert_eq!(filtered.iter().map(|h| h.id.as_str()).collect::<Vec<_>>(), ["b"]);
        assert_eq!(filtered[0].score, 1.0);
    }
}
