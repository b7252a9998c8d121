//! The index's behaviours: exact statistics under replace and remove,
//! write order, bulk builds equal to one-by-one writes, carry-over after a
//! rebuild, compaction.

use super::*;
use crate::analysis::tokenizer::Tokenizer;
use std::sync::Arc;

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

/// Analyses `texts` as a bulk build of two threads does: one vocabulary
/// for the first half, another for the rest (each thread's), sharing most
/// of their terms.
fn analysed_in_two_vocabularies(t: &Tokenizer, prefix: &str, texts: &[String]) -> Vec<NewDocument> {
    let (first, second) = texts.split_at(texts.len() / 2);
    let mut docs = Vec::with_capacity(texts.len());
    for half in [first, second] {
        let mut analyzer = crate::analysis::Analyzer::new(t);
        let analyzed: Vec<_> = half.iter().map(|s| analyzer.analyze(s)).collect();
        let vocab = Arc::new(analyzer.into_vocab());
        for (s, (terms, len)) in half.iter().zip(analyzed) {
            let mut d = doc(t, &format!("{prefix}{}", docs.len()), s);
            d.analyzed = Analyzed { vocab: vocab.clone(), terms, len };
            docs.push(d);
        }
    }
    docs
}

#[test]
fn shrinking_after_a_parallel_build_keeps_every_term_and_result() {
    let t = Tokenizer::default();
    let texts: Vec<String> = (0..4000).map(|i| format!("doc word{i} shared{} common", i % 50)).collect();
    // Several vocabularies (one per thread), their terms interned before
    // any is made, in one exact growth; a later build adds more.
    let docs = analysed_in_two_vocabularies(&t, "d", &texts);
    let mut ix = Bm25Index::new(Bm25Params::default());
    ix.add_bulk(docs, 1, &mut |_| {});
    assert_eq!(ix.terms.held_bytes(), ix.terms.len() * size_of::<Term>(), "terms made in one exact growth");
    let ranked = |ix: &Bm25Index, query: &str| -> Vec<(String, u64)> {
        ix.top_k(&q(&t, query), 5, None).iter().map(|h| (h.doc.id.clone(), h.score.to_bits())).collect()
    };
    let before: Vec<_> = ["word17 shared3", "common doc", "word3999"].iter().map(|s| ranked(&ix, s)).collect();
    let names = ix.names.len();
    ix.shrink();
    assert_eq!(ix.names.len(), names);
    for term in 0..names {
        assert_eq!(ix.term_id(ix.names.get(term)), Some(term as u32));
    }
    let after: Vec<_> = ["word17 shared3", "common doc", "word3999"].iter().map(|s| ranked(&ix, s)).collect();
    assert_eq!(before, after);
    assert_eq!(ix.add_bulk(Vec::new(), 2, &mut |_| {}), 0);
    // A loaded index's dictionary stays where it is mapped through a write
    // of nothing (a warm start with nothing changed makes one).
    let mut e = crate::bytes::codec::Encoder::default();
    ix.encode(&mut e).write(&mut e);
    let backing = crate::bytes::section::Backing::mapped_copy(&e.buf);
    let mut back =
        Bm25Index::decode(&mut crate::bytes::codec::Decoder::viewing(backing.bytes(), backing.clone())).unwrap();
    assert!(back.dict.is_frozen());
    assert!(back.terms.held_if_built().is_none(), "decoded, the terms are viewed where they lie");
    assert_eq!(back.add_bulk(Vec::new(), 2, &mut |_| {}), 0);
    assert!(back.dict.is_frozen(), "an empty write leaves the dictionary frozen");
    assert!(back.terms.held_if_built().is_none(), "and the terms undecoded");
    for query in ["word17 shared3", "common doc", "word3999"] {
        assert_eq!(ranked(&back, query), ranked(&ix, query), "{query}");
    }
    // A write of old and new terms decodes them, as before.
    let later: Vec<String> = vec!["word17 shared3 common".into(), "brandnew word3999".into()];
    back.add_bulk(analysed_in_two_vocabularies(&t, "w", &later), 3, &mut |_| {});
    assert!(back.terms.held_if_built().is_some());
    assert_eq!(back.terms.len(), back.names.len());
    assert_eq!(ranked(&back, "brandnew").iter().map(|h| h.0.as_str()).collect::<Vec<_>>(), ["w1"]);
    let mut more: Vec<String> = (0..300).map(|i| format!("later word{i} shared{}", i % 7)).collect();
    more[299].push_str(" onlyhere");
    ix.add_bulk(analysed_in_two_vocabularies(&t, "e", &more), 2, &mut |_| {});
    assert_eq!(ix.terms.len(), ix.names.len());
    for term in 0..ix.names.len() {
        assert_eq!(ix.term_id(ix.names.get(term)), Some(term as u32));
    }
    assert_eq!(ranked(&ix, "onlyhere").iter().map(|h| h.0.as_str()).collect::<Vec<_>>(), ["e299"]);
    assert_eq!(ranked(&ix, "word17")[..2].iter().map(|h| h.0.as_str()).collect::<Vec<_>>(), ["d17", "e17"]);
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

/// Writes the same documents one at a time and in one bulk build into an
/// empty index (postings filled in place, bulk.rs), then the same later
/// writes to both: same statistics, results, scores and line ranges.
fn bulk_and_one_by_one(texts: &[String], later: &[(usize, Option<String>)]) -> (Bm25Index, Bm25Index) {
    let t = Tokenizer::default();
    let id = |i: usize| format!("d{:03}", i % 97); // some ids written twice
    let docs: Vec<NewDocument> = texts.iter().enumerate().map(|(i, s)| doc(&t, &id(i), s)).collect();
    let mut one = Bm25Index::new(Bm25Params::default());
    for d in docs.clone() {
        one.upsert(d, 1);
    }
    let mut bulk = Bm25Index::new(Bm25Params::default());
    bulk.add_bulk(docs, 1, &mut |_| {});
    for (seq, (i, text)) in later.iter().enumerate() {
        for ix in [&mut one, &mut bulk] {
            match text {
                Some(text) => ix.upsert(doc(&t, &id(*i), text), 2 + seq as u64),
                None => ix.remove(&id(*i), 2 + seq as u64),
            };
        }
    }
    (one, bulk)
}

fn same_results(one: &Bm25Index, bulk: &Bm25Index, queries: &[&str]) {
    let t = Tokenizer::default();
    let (a, b) = (one.stats(), bulk.stats());
    assert_eq!((a.documents, a.terms, a.tokens), (b.documents, b.terms, b.tokens));
    for query in queries {
        let qt = q(&t, query);
        let hits = |ix: &Bm25Index| -> Vec<_> {
            ix.top_k(&qt, 10, None).iter().map(|h| (h.doc.id.clone(), h.score, ix.line_range(h.slot, &qt))).collect()
        };
        assert_eq!(hits(one), hits(bulk), "{query}");
        let exhaustive: Vec<_> =
            bulk.top_k_exhaustive(&qt, 10, None).iter().map(|h| (h.doc.id.clone(), h.score)).collect();
        let pruned: Vec<_> = bulk.top_k(&qt, 10, None).iter().map(|h| (h.doc.id.clone(), h.score)).collect();
        assert_eq!(pruned, exhaustive, "{query}");
    }
}

#[test]
fn a_fresh_bulk_build_fills_postings_in_one_allocation() {
    let mut texts: Vec<String> =
        (0..300).map(|i| format!("common w{} unique{i}\nsecond line w{} rare{}", i % 7, i % 3, i / 150)).collect();
    texts[40] = "big ".repeat(300) + "common"; // a frequency past a byte
    let (one, bulk) = bulk_and_one_by_one(&texts, &[]);
    let term = |name: &str| &bulk.terms.get(bulk.term_id(name).unwrap()).postings;
    assert!(term("common").is_view() && term("w1").is_view(), "lists of many postings are views");
    assert!(term("common").is_narrow() && term("w1").is_narrow(), "slots of 300 documents fit in 16 bits");
    assert!(term("unique5").is_one(), "one posting kept in place");
    assert!(bulk.get("d001").unwrap().table.is_view(), "line tables too");
    assert_eq!(term("big").tf(0), 300);
    same_results(&one, &bulk, &["common", "w1 rare0", "big common", "unique5", "second w2"]);
    // Later writes copy a list out of the allocation and leave the rest.
    let later = [(3, Some("common new words w1".to_string())), (5, None), (40, Some("big big".into()))];
    let (one, mut bulk) = bulk_and_one_by_one(&texts, &later);
    let term = |ix: &Bm25Index, name: &str| ix.terms.get(ix.term_id(name).unwrap()).postings.is_view();
    assert!(!term(&bulk, "common") && term(&bulk, "w2"));
    same_results(&one, &bulk, &["common", "w1 rare0", "big common", "new words", "second w2"]);
    bulk.compact();
    same_results(&one, &bulk, &["common", "w1 rare0", "big common", "new words"]);
}

/// Slots are kept narrow only where every block of a list spans fewer
/// than 65,536 slots; both forms rank, look up, take writes and go through
/// a snapshot alike.
#[test]
fn narrow_and_wide_slots_rank_alike() {
    let t = Tokenizer::default();
    let n = 70_000;
    let text = |i: usize| {
        let mut s = String::from("filler");
        if i.is_multiple_of(1000) || i == n - 1 {
            s += " sparse"; // 71 postings: blocks span 32,000 slots (narrow)
        }
        if i < 3 || i > n - 3 {
            s += " apart"; // one block spanning 69,999 slots (wide)
        }
        if i.is_multiple_of(7) {
            s += if i.is_multiple_of(2) { " dense dense" } else { " dense" };
        }
        s
    };
    let docs: Vec<NewDocument> = (0..n).map(|i| doc(&t, &format!("d{i}"), &text(i))).collect();
    let mut ix = Bm25Index::new(Bm25Params::default());
    ix.add_bulk(docs, 1, &mut |_| {});
    let term = |ix: &Bm25Index, word: &str| ix.terms.get(ix.term_id(&q(&t, word)[0]).unwrap()).postings.clone();
    assert!(term(&ix, "sparse").is_narrow() && term(&ix, "dense").is_narrow());
    assert!(term(&ix, "apart").is_view() && !term(&ix, "apart").is_narrow());
    let slots: Vec<u32> = term(&ix, "apart").slices().docs.iter().collect();
    assert_eq!(slots, [0, 1, 2, 69_998, 69_999]);
    assert_eq!(term(&ix, "sparse").find(69_999), Some(70));
    assert_eq!(term(&ix, "sparse").find(69_998), None);
    let queries = ["sparse", "apart", "dense", "sparse apart dense", "filler apart"];
    let ranked = |ix: &Bm25Index| -> Vec<Vec<(String, f64)>> {
        queries
            .iter()
            .map(|query| {
                let qt = q(&t, query);
                let pruned: Vec<_> = ix.top_k(&qt, 10, None).iter().map(|h| (h.doc.id.clone(), h.score)).collect();
                let all: Vec<_> =
                    ix.top_k_exhaustive(&qt, 10, None).iter().map(|h| (h.doc.id.clone(), h.score)).collect();
                assert_eq!(pruned, all, "{query}");
                pruned
            })
            .collect()
    };
    let before = ranked(&ix);
    // Through a snapshot: the same forms and results.
    let mut e = crate::bytes::codec::Encoder::default();
    ix.encode(&mut e).write(&mut e);
    let back = Bm25Index::decode(&mut crate::bytes::codec::Decoder::new(&e.buf)).unwrap();
    assert_eq!(term(&back, "sparse").slices().docs, term(&ix, "sparse").slices().docs);
    assert_eq!(ranked(&back), before);
    // A write copies a narrow list out (wide, growing) and keeps its slots.
    ix.upsert(doc(&t, "d5", "sparse"), 2);
    assert!(!term(&ix, "sparse").is_view());
    assert_eq!(term(&ix, "sparse").len(), 72);
    assert_eq!(ix.top_k(&q(&t, "sparse"), 1, None)[0].doc.id, "d5");
}

#[test]
fn a_fresh_bulk_build_of_few_terms_leaves_threads_without_any() {
    // Term ranges per thread are split by postings: with one term, the
    // other threads' ranges are empty.
    for texts in [vec!["same".to_string(); 70], vec!["same same".into(), String::new()], vec![String::new()]] {
        let (one, bulk) = bulk_and_one_by_one(&texts, &[(0, Some("same other".into()))]);
        same_results(&one, &bulk, &["same", "other"]);
    }
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(40))]
    /// Any documents and later writes: a fresh bulk build behaves as the
    /// same documents written one at a time.
    #[test]
    fn bulk_builds_equal_one_by_one_writes(
        docs in proptest::collection::vec(proptest::collection::vec(0u8..40, 0..60), 1..250),
        later in proptest::collection::vec((0usize..97, proptest::option::of(proptest::collection::vec(0u8..40, 0..20))), 0..30),
    ) {
        let words = |d: &[u8]| d.iter().map(|w| format!("w{}", w % 40 * u8::from(w % 3 != 0))).collect::<Vec<_>>().join(" ");
        let texts: Vec<String> = docs.iter().map(|d| words(d).replacen(' ', "\n", 2)).collect();
        let later: Vec<_> = later.iter().map(|(i, t)| (*i, t.as_deref().map(words))).collect();
        let (one, bulk) = bulk_and_one_by_one(&texts, &later);
        same_results(&one, &bulk, &["w1", "w0 w5", "w7 w8 w13", "w38", "w2 w4 w10 w20"]);
    }
}

#[test]
fn documents_in_several_runs_come_back_in_order_with_their_metadata() {
    // Past one run of document records (decoded in parallel), with removed
    // slots and chunk metadata shared along a file's chunks.
    let t = Tokenizer::default();
    let mut ix = Bm25Index::new(Bm25Params::default());
    for i in 0..9000u64 {
        let mut d = doc(&t, &format!("f{}.rs#chunk-{}", i / 3, i % 3), &format!("word{i} common line{}", i % 11));
        let meta = serde_json::json!({ "sourceFile": format!("f{}.rs", i / 3) });
        d.metadata = Some(std::sync::Arc::new(meta.as_object().unwrap().clone()));
        ix.upsert(d, i + 1);
    }
    for i in (0..9000).step_by(97) {
        ix.remove(&format!("f{}.rs#chunk-{}", i / 3, i % 3), 10_000 + i as u64);
    }
    let mut e = crate::bytes::codec::Encoder::default();
    ix.encode(&mut e).write(&mut e);
    let back = Bm25Index::decode(&mut crate::bytes::codec::Decoder::new(&e.buf)).unwrap();
    assert_eq!(back.len(), ix.len());
    for i in [0usize, 1, 4095, 4096, 4097, 8191, 8192, 8999] {
        let id = format!("f{}.rs#chunk-{}", i / 3, i % 3);
        assert_eq!(
            back.get(&id).map(|d| (d.content.to_string(), d.source_file().map(str::to_string))),
            ix.get(&id).map(|d| (d.content.to_string(), d.source_file().map(str::to_string))),
            "{id}"
        );
    }
    for query in ["word4096", "common", "line7 word8999"] {
        let ids =
            |ix: &Bm25Index| ix.top_k(&q(&t, query), 20, None).iter().map(|h| h.doc.id.clone()).collect::<Vec<_>>();
        assert_eq!(ids(&back), ids(&ix), "{query}");
    }
}

/// A chunk of `file` (its `sourceFile` metadata) with id `file#chunk-<number>`.
fn chunk(t: &Tokenizer, file: &str, number: &str, text: &str) -> NewDocument {
    let mut d = doc(t, &format!("{file}#chunk-{number}"), text);
    let meta = serde_json::json!({ "sourceFile": file });
    d.metadata = Some(Arc::new(meta.as_object().unwrap().clone()));
    d
}

#[test]
fn a_files_chunks_are_found_past_any_gap_in_their_numbers() {
    // index() took chunk 1 for a document of the user's own and unindex()
    // removed chunks 0 and 3: the walk that stopped at the first gap left
    // chunks 2, 4 and 9 behind at the file's removal.
    let t = Tokenizer::default();
    let mut ix = Bm25Index::new(Bm25Params::default());
    for n in ["0", "1", "2", "3", "4", "9", "007", "99999999999"] {
        ix.upsert(chunk(&t, "big.md", n, "needle"), 1);
    }
    ix.upsert(doc(&t, "big.md#chunk-1", "the user's own"), 2);
    ix.remove("big.md#chunk-0", 3);
    ix.remove("big.md#chunk-3", 4);
    ix.upsert(chunk(&t, "other.md", "0", "needle"), 5);
    let expected = ["2", "4", "007", "9", "99999999999"].map(|n| format!("big.md#chunk-{n}"));
    assert_eq!(ix.chunk_ids_of("big.md"), expected);
    assert!(ix.holds_file("big.md"));
    let lines: Vec<_> = ix.file_docs_holding("big.md", &[]).into_iter().map(|(d, _)| d.id.clone()).collect();
    assert!(lines.is_empty(), "no term wanted, no chunk holds it");
    // The same after a snapshot's round trip.
    let mut e = crate::bytes::codec::Encoder::default();
    ix.encode(&mut e).write(&mut e);
    let mut back = Bm25Index::decode(&mut crate::bytes::codec::Decoder::new(&e.buf)).unwrap();
    assert_eq!(back.chunk_ids_of("big.md"), expected);
    for ix in [&mut ix, &mut back] {
        assert!(ix.remove_with_chunks("big.md", 10));
        assert_eq!(ix.chunk_ids_of("big.md"), Vec::<String>::new());
        assert!(!ix.holds_file("big.md"));
        let mut left: Vec<_> = ix.documents().map(|d| d.id.clone()).collect();
        left.sort();
        assert_eq!(left, ["big.md#chunk-1", "other.md#chunk-0"]);
    }
}

/// A document replaced again and again (one `upsert`, a writer's, or a
/// bulk write of the same ids) is compacted away: its dead slots and
/// postings piled up for good, and every search walked them.
#[test]
fn replacing_the_same_documents_stays_bounded() {
    let t = Tokenizer::default();
    let mut ix = Bm25Index::new(Bm25Params::default());
    ix.upsert(doc(&t, "other", "unrelated words here"), 0);
    let mut seq = 1;
    for round in 0..20_000u64 {
        seq += 1;
        match round % 3 {
            0 => {
                ix.upsert(doc(&t, "same", "renewal call moved to friday"), seq);
            }
            1 => {
                ix.writer().upsert(doc(&t, "same", "renewal call moved to friday"), seq);
            }
            _ => {
                ix.add_bulk(
                    vec![doc(&t, "same", "renewal call moved to friday"), doc(&t, "two", "x")],
                    seq,
                    &mut |_| {},
                );
            }
        }
        assert!(ix.docs.len() <= 2 * 4096 + 8, "round {round}: {} slots for {} documents", ix.docs.len(), ix.len());
        assert!(ix.dead_postings <= 4096 + 64, "round {round}: {} dead postings", ix.dead_postings);
    }
    assert_eq!(ix.len(), 3);
    let hits = ix.top_k(&q(&t, "renewal friday"), 5, None);
    assert_eq!(hits.len(), 1);
    assert_eq!(hits[0].doc.id, "same");
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(6))]
    /// Replacements and removals of a few ids, thousands of times, by each
    /// write path (each compacts as dead slots and postings pile up): the
    /// same statistics and results as the live documents written afresh.
    #[test]
    fn replacements_compacted_answer_as_a_fresh_index(
        ops in proptest::collection::vec((0u8..4, 0usize..9, proptest::collection::vec(0u8..30, 0..12)), 6000..7000),
    ) {
        let t = Tokenizer::default();
        let words = |d: &[u8]| d.iter().map(|w| format!("w{w}")).collect::<Vec<_>>().join(" ");
        let mut ix = Bm25Index::new(Bm25Params::default());
        let mut live: std::collections::BTreeMap<String, String> = Default::default();
        for (seq, (kind, id, text)) in ops.iter().enumerate() {
            let (seq, id, text) = (seq as u64 + 1, format!("d{id}"), words(text).replacen(' ', "\n", 1));
            match kind {
                0 => {
                    ix.upsert(doc(&t, &id, &text), seq);
                }
                1 => {
                    // Documents sharing vocabularies, as a parallel read makes them.
                    let texts = [text.clone(), format!("{text} w3"), "w4 w5".to_string(), format!("w6 {text}")];
                    let mut w = ix.writer();
                    w.upsert(doc(&t, &id, &text), seq);
                    for d in analysed_in_two_vocabularies(&t, "shared", &texts) {
                        live.insert(d.id.clone(), d.content.to_string());
                        w.upsert(d, seq);
                    }
                }
                2 => {
                    ix.add_bulk(vec![doc(&t, &id, &text), doc(&t, "d-bulk", "w1 w2")], seq, &mut |_| {});
                    live.insert("d-bulk".into(), "w1 w2".into());
                }
                _ => {
                    ix.remove(&id, seq);
                    live.remove(&id);
                    continue;
                }
            }
            live.insert(id, text);
        }
        proptest::prop_assert!(ix.docs.len() <= 2 * 4096 + 16, "{} slots", ix.docs.len());
        let mut fresh = Bm25Index::new(Bm25Params::default());
        for (seq, (id, text)) in live.iter().enumerate() {
            fresh.upsert(doc(&t, id, text), seq as u64 + 1);
        }
        same_results(&fresh, &ix, &["w1", "w0 w5", "w7 w8 w13", "w29", "w2 w4 w10 w20"]);
    }
}
