//! Scores against hand-computed BM25, ties, and pruned top-k equal to
//! exhaustive scoring (property tests, with windows of 128 slots so that
//! small corpora span many).

use crate::analysis::tokenizer::{Tokenizer, TokenizerConfig};
use crate::index::tests::{doc, q};
use crate::index::{Bm25Index, Bm25Params, Document};
use proptest::prelude::*;

#[test]
fn hand_computed_scores() {
    let t = Tokenizer::new(TokenizerConfig::mastra());
    let mut ix = Bm25Index::new(Bm25Params::default());
    ix.upsert(doc(&t, "a", "password reset guide"), 1);
    ix.upsert(doc(&t, "b", "reset your router"), 2);
    ix.upsert(doc(&t, "c", "cooking pasta at home tonight"), 3);
    // N=3, lengths 3,3,4 (your/router/at: "at" is a stopword -> c has 4 tokens)
    assert_eq!(ix.stats().tokens, 3 + 3 + 4);
    let avgdl = 10.0 / 3.0;
    let (k1, b) = (1.5, 0.75);
    let idf = |df: f64| ((3.0 - df + 0.5) / (df + 0.5) + 1.0_f64).ln();
    let part = |tf: f64, len: f64| tf * (k1 + 1.0) / (tf + k1 * (1.0 - b + b * len / avgdl));
    let hits = ix.top_k(&q(&t, "password reset"), 10, None);
    assert_eq!(hits.iter().map(|h| h.doc.id.as_str()).collect::<Vec<_>>(), ["a", "b"]);
    let expect_a = idf(1.0) * part(1.0, 3.0) + idf(2.0) * part(1.0, 3.0);
    let expect_b = idf(2.0) * part(1.0, 3.0);
    assert!((hits[0].score - expect_a).abs() < 1e-12);
    assert!((hits[1].score - expect_b).abs() < 1e-12);
    // Repeated query tokens count twice (Mastra).
    let twice = ix.top_k(&q(&t, "reset reset"), 10, None);
    assert!((twice[0].score - 2.0 * expect_b).abs() < 1e-12);
}

#[test]
fn ties_broken_by_id_and_lines() {
    let t = Tokenizer::default();
    let mut ix = Bm25Index::new(Bm25Params::default());
    ix.upsert(doc(&t, "z", "same words"), 1);
    ix.upsert(doc(&t, "m", "same words"), 2);
    ix.upsert(doc(&t, "a", "same words"), 3);
    let ids: Vec<_> = ix.top_k(&q(&t, "words"), 2, None).iter().map(|h| h.doc.id.clone()).collect();
    assert_eq!(ids, ["a", "m"]);
    ix.upsert(doc(&t, "l", "intro\nalpha here\nnothing\nbeta there\nend alpha"), 4);
    let slot = ix.top_k(&q(&t, "beta"), 1, None)[0].slot;
    assert_eq!(ix.line_range(slot, &q(&t, "beta")), Some((4, 4)));
    assert_eq!(ix.line_range(slot, &q(&t, "alpha beta")), Some((2, 5)));
    assert_eq!(ix.line_range(slot, &q(&t, "missing")), None);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(150))]
    /// MaxScore returns exactly what exhaustive scoring returns.
    #[test]
    fn pruning_equals_exhaustive(
        docs in prop::collection::vec(prop::collection::vec(0u8..12, 0..25), 1..60),
        removals in prop::collection::vec(0usize..60, 0..20),
        query in prop::collection::vec(0u8..14, 1..5),
        k in 1usize..12,
        b in 0.0f64..=1.0,
        k1 in prop_oneof![Just(0.0f64), Just(1.2f64), 0.01f64..3.0],
    ) {
        let t = Tokenizer::default();
        let mut ix = Bm25Index::new(Bm25Params { k1, b });
        let word = |w: u8| format!("w{w}");
        for (i, d) in docs.iter().enumerate() {
            let text: Vec<String> = d.iter().map(|&w| word(w)).collect();
            ix.upsert(doc(&t, &format!("d{:02}", i % 40), &text.join(" ")), i as u64);
        }
        for (j, r) in removals.iter().enumerate() {
            ix.remove(&format!("d{:02}", r), 1000 + j as u64);
        }
        let qt: Vec<String> = query.iter().map(|&w| word(w)).collect();
        let odd = |d: &Document| d.id.ends_with(['1', '3', '5', '7', '9']);
        for keep in [None, Some(&odd as &dyn Fn(&Document) -> bool)] {
            let fast: Vec<_> = ix.top_k(&qt, k, keep).iter().map(|h| (h.doc.id.clone(), h.score)).collect();
            let slow: Vec<_> = ix.top_k_exhaustive(&qt, k, keep).iter().map(|h| (h.doc.id.clone(), h.score)).collect();
            prop_assert_eq!(fast, slow);
        }
    }

    /// The same with posting lists long enough for block skipping.
    #[test]
    fn block_skipping_equals_exhaustive(
        seed in 0u64..u64::MAX,
        n in 300usize..1500,
        removals in 0usize..200,
        query in prop::collection::vec(0u8..10, 1..4),
        k in 1usize..8,
    ) {
        let t = Tokenizer::default();
        let mut ix = Bm25Index::new(Bm25Params::default());
        let mut x = seed | 1;
        let mut next = move || { x ^= x << 13; x ^= x >> 7; x ^= x << 17; x };
        for i in 0..n {
            // Skewed frequencies and lengths so that blocks differ.
            let len = 1 + next() % 40;
            let words: Vec<String> = (0..len).map(|_| { let r = next() % 100; format!("w{}", if r < 50 { 0 } else if r < 75 { 1 } else { r % 10 }) }).collect();
            ix.upsert(doc(&t, &format!("d{i:05}"), &words.join(" ")), i as u64);
        }
        for j in 0..removals {
            ix.remove(&format!("d{:05}", next() as usize % n), (n + j) as u64);
        }
        let qt: Vec<String> = query.iter().map(|w| format!("w{w}")).collect();
        let fast: Vec<_> = ix.top_k(&qt, k, None).iter().map(|h| (h.doc.id.clone(), h.score)).collect();
        let slow: Vec<_> = ix.top_k_exhaustive(&qt, k, None).iter().map(|h| (h.doc.id.clone(), h.score)).collect();
        prop_assert_eq!(fast, slow);
    }
}

/// An index of documents of every file kind (by their paths: `kind` picks
/// one of five), each of the words `w<n>`, then the `removals`-th removed.
fn of_every_kind<W: std::fmt::Display>(docs: &[(Vec<W>, usize)], removals: &[usize]) -> Bm25Index {
    let t = Tokenizer::default();
    let mut ix = Bm25Index::new(Bm25Params::default());
    let paths = ["src/x{}.rs", "test/x{}.rs", "docs/x{}.md", "conf/x{}.json", "vendor/x{}.js"];
    for (i, (words, kind)) in docs.iter().enumerate() {
        let text: Vec<String> = words.iter().map(|w| format!("w{w}")).collect();
        let id = paths[*kind].replace("{}", &i.to_string());
        ix.upsert(doc(&t, &id, &text.join(" ")), i as u64);
    }
    let ids: Vec<String> = ix.documents().map(|d| d.id.clone()).collect();
    for (j, r) in removals.iter().enumerate() {
        if let Some(id) = ids.get(*r) {
            ix.remove(id, 10_000 + j as u64);
        }
    }
    ix
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(100))]
    /// With file-kind weights (each in (0, 1]), pruned top-k still equals
    /// exhaustive scoring: documents of every kind, by their paths.
    #[test]
    fn weighted_pruning_equals_exhaustive(
        docs in prop::collection::vec((prop::collection::vec(0u8..10, 1..30), 0usize..5), 1..400),
        removals in prop::collection::vec(0usize..400, 0..30),
        query in prop::collection::vec(0u8..12, 1..4),
        k in 1usize..10,
        weights in prop::array::uniform5(0.05f64..=1.0),
    ) {
        let ix = of_every_kind(&docs, &removals);
        let qt: Vec<String> = query.iter().map(|w| format!("w{w}")).collect();
        let fast: Vec<_> = ix.top_k_weighted(&qt, k, None, Some(&weights)).iter().map(|h| (h.doc.id.clone(), h.score)).collect();
        let slow: Vec<_> = ix.top_k_exhaustive_weighted(&qt, k, None, &weights).iter().map(|h| (h.doc.id.clone(), h.score)).collect();
        prop_assert_eq!(fast, slow);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(60))]
    /// A long query (past `LONG_QUERY_TERMS` distinct terms, words repeated)
    /// is scored term at a time: still exactly exhaustive scoring, scores to
    /// the bit, with kind weights, a filter and removed documents.
    #[test]
    fn long_queries_equal_exhaustive(
        docs in prop::collection::vec((prop::collection::vec(0u16..300, 1..30), 0usize..5), 150..300),
        removals in prop::collection::vec(0usize..300, 0..30),
        query in prop::collection::vec(0u16..320, 120..250),
        k in 1usize..20,
        weights in prop::array::uniform5(0.05f64..=1.0),
    ) {
        let ix = of_every_kind(&docs, &removals);
        let qt: Vec<String> = query.iter().map(|w| format!("w{w}")).collect();
        // Past the distinct terms at which a query is scored term at a time.
        prop_assume!(ix.query_terms(&qt).len() > super::accumulate::LONG_QUERY_TERMS);
        let odd = |d: &Document| d.id.ends_with(['1', '3', '5', '7', '9']);
        for keep in [None, Some(&odd as &dyn Fn(&Document) -> bool)] {
            let fast: Vec<_> = ix.top_k_weighted(&qt, k, keep, Some(&weights)).iter().map(|h| (h.doc.id.clone(), h.score.to_bits())).collect();
            let slow: Vec<_> = ix.top_k_exhaustive_weighted(&qt, k, keep, &weights).iter().map(|h| (h.doc.id.clone(), h.score.to_bits())).collect();
            prop_assert_eq!(fast, slow);
            let flat: Vec<_> = ix.top_k(&qt, k, keep).iter().map(|h| (h.doc.id.clone(), h.score.to_bits())).collect();
            let flat_slow: Vec<_> = ix.top_k_exhaustive(&qt, k, keep).iter().map(|h| (h.doc.id.clone(), h.score.to_bits())).collect();
            prop_assert_eq!(flat, flat_slow);
        }
    }
}
