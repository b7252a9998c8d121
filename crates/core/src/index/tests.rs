//! The index's behaviours: exact statistics under replace and remove,
//! write order, bulk builds equal to one-by-one writes, carry-over after a
//! rebuild, compaction.

use super::*;
use crate::analysis::tokenizer::Tokenizer;

pub(crate) fn doc(t: &Tokenizer, id: &str, text: &str) -> NewDocument {
    NewDocument {
        id: id.into(),
        content: text.into(),
        metadata: None,
        start_line_offset: None,
        analyzed: Analyzed::of_text(t, text),
    }
}

pub(crate) fn q(t: &Tokenizer, s: &str) -> Vec<String> {
    t.tokenize(s)
}

#[test]
fn replace_and_remove_keep_exact_statistics() {
    let t = Tokenizer::default();
    let mut ix = Bm25Index::new(Bm25Params::default());
    ix.upsert(doc(&t, "a", "alpha beta"), 1);
    ix.upsert(doc(&t, "b", "beta gamma delta"), 2);
    ix.upsert(doc(&t, "a", "gamma"), 3);
    assert!(ix.remove("b", 4));
    assert!(!ix.remove("zzz", 5));
    let mut fresh = Bm25Index::new(Bm25Params::default());
    fresh.upsert(doc(&t, "a", "gamma"), 1);
    assert_eq!(ix.stats().documents, 1);
    assert_eq!(ix.stats().terms, 1);
    assert_eq!(ix.stats().tokens, 1);
    let s1 = ix.top_k(&q(&t, "gamma"), 5, None)[0].score;
    let s2 = fresh.top_k(&q(&t, "gamma"), 5, None)[0].score;
    assert_eq!(s1, s2);
    assert!(ix.top_k(&q(&t, "beta"), 5, None).is_empty());
}

#[test]
fn sequence_numbers_order_writes() {
    let t = Tokenizer::default();
    let mut ix = Bm25Index::new(Bm25Params::default());
    assert!(ix.upsert(doc(&t, "a", "new text"), 5));
    assert!(!ix.upsert(doc(&t, "a", "old text"), 3));
    assert_eq!(ix.get("a").unwrap().content, "new text");
    assert!(ix.remove("a", 7));
    assert!(!ix.upsert(doc(&t, "a", "older"), 6));
    assert!(ix.get("a").is_none());
    ix.clear(10);
    assert!(!ix.upsert(doc(&t, "b", "before clear"), 9));
    assert!(ix.upsert(doc(&t, "b", "after clear"), 11));
}

#[test]
fn bulk_add_equals_one_by_one() {
    let t = Tokenizer::default();
    let texts: Vec<String> =
        (0..3000).map(|i| format!("doc {i} alpha{} beta{}\nline two gamma{}", i % 13, i % 7, i % 3)).collect();
    let mut docs: Vec<NewDocument> = texts.iter().enumerate().map(|(i, s)| doc(&t, &format!("d{i}"), s)).collect();
    // A parallel analysis: several vocabularies, as rebuilds have.
    let analyzed = crate::analysis::analyze_all(&t, &texts, |s| s.as_str());
    for (d, a) in docs.iter_mut().zip(analyzed) {
        d.analyzed = a;
    }
    // Documents replaced within the same bulk write.
    docs.push(doc(&t, "d10", "replaced in the same write alpha3"));
    docs.push(doc(&t, "d2999", "the last one replaced too"));
    let mut one = Bm25Index::new(Bm25Params::default());
    one.upsert(doc(&t, "d5", "old version"), 1);
    let mut bulk = one.clone();
    for d in docs.clone() {
        one.upsert(d, 2);
    }
    let mut seen = 0;
    assert_eq!(bulk.add_bulk(docs, 2, &mut |n| seen = n), 3002);
    assert_eq!(seen, 3002);
    assert_eq!(one.stats().documents, bulk.stats().documents);
    assert_eq!(one.stats().terms, bulk.stats().terms);
    assert_eq!(one.stats().tokens, bulk.stats().tokens);
    assert_eq!(bulk.get("d10").unwrap().content, "replaced in the same write alpha3");
    for query in ["alpha3 beta4", "gamma1", "doc 17", "old version", "line", "replaced", "last"] {
        let a: Vec<_> = one.top_k(&q(&t, query), 10, None).iter().map(|h| (h.doc.id.clone(), h.score)).collect();
        let b: Vec<_> = bulk.top_k(&q(&t, query), 10, None).iter().map(|h| (h.doc.id.clone(), h.score)).collect();
        assert_eq!(a, b, "{query}");
        if let Some(h) = bulk.top_k(&q(&t, query), 1, None).first() {
            assert_eq!(
                bulk.line_range(h.slot, &q(&t, query)),
                one.line_range(one.top_k(&q(&t, query), 1, None)[0].slot, &q(&t, query))
            );
        }
    }
}

#[test]
fn carry_over_keeps_newer_writes() {
    let t = Tokenizer::default();
    let mut old = Bm25Index::new(Bm25Params::default());
    old.upsert(doc(&t, "before", "old doc"), 1);
    old.upsert(doc(&t, "late", "late write alpha"), 6);
    old.upsert(doc(&t, "gone", "removed later"), 2);
    old.remove("gone", 7);
    let mut rebuilt = Bm25Index::new(Bm25Params::default());
    rebuilt.clear(5);
    rebuilt.upsert(doc(&t, "file", "from disk alpha"), 5);
    rebuilt.upsert(doc(&t, "gone", "on disk too"), 5);
    rebuilt.carry_over(&old, 5);
    let ids: Vec<_> = rebuilt.documents().map(|d| d.id.clone()).collect();
    assert_eq!(ids, ["file", "late"]);
    let hits = rebuilt.top_k(&q(&t, "alpha"), 5, None);
    assert_eq!(hits.len(), 2);
    let slot = hits.iter().find(|h| h.doc.id == "late").unwrap().slot;
    assert_eq!(rebuilt.line_range(slot, &q(&t, "alpha")), Some((1, 1)));
}

#[test]
fn compaction_keeps_results() {
    let t = Tokenizer::default();
    let mut ix = Bm25Index::new(Bm25Params::default());
    for i in 0..3000u64 {
        ix.upsert(doc(&t, &format!("d{i}"), &format!("common w{} w{}", i % 17, i % 5)), i);
    }
    for i in 0..2500u64 {
        ix.remove(&format!("d{i}"), 10_000 + i);
    }
    let before: Vec<_> = ix.top_k(&q(&t, "common w3"), 20, None).iter().map(|h| (h.doc.id.clone(), h.score)).collect();
    ix.compact();
    let after: Vec<_> = ix.top_k(&q(&t, "common w3"), 20, None).iter().map(|h| (h.doc.id.clone(), h.score)).collect();
    assert_eq!(before, after);
    assert_eq!(ix.stats().documents, 500);
}
