//! A file's own name as a ranking signal: the share of the words of its
//! name (folders and extension left out, identifier-split, analysed as the
//! query is) that the query holds, `FILE_NAME_WEIGHT` times, added to each
//! hit's score (content, history fused, best 1), normalised again. The
//! path field already counts every path word in BM25, where a long file's
//! many words drown them; a task that names most of a file's name ("Fix
//! the tree builder's stack" for `TreeBuilder.java`) points at that file.
//!
//! Measured file level, source only (the default workspace, nDCG@10):
//! weights 0 / 0.1 / 0.2 / 0.3 / 0.5 give codeloc-dev 0.769 / 0.767 /
//! 0.765 / 0.762 / 0.743, a held-out set of httpx, jsoup and fmt 0.738 /
//! 0.741 / 0.748 / 0.743 / 0.732, and one of click, gson, spdlog and cobra
//! 0.709 / 0.722 / 0.731 / 0.730 / 0.720 (docs/ranking.md).

use super::SearchHit;
use crate::analysis::tokenizer::{split_identifier, Tokenizer};
use rustc_hash::{FxHashMap, FxHashSet};

pub const FILE_NAME_WEIGHT: f64 = 0.2;

/// `hits` (best first, best 1) with each file's name share added, best
/// first again, normalised so that the best is 1. Documents whose path
/// has no extension are left as they are (an id with a dot, `user.name`,
/// counts as a file named `user`).
pub fn lift(mut hits: Vec<SearchHit>, tokens: &[String], tokenizer: &Tokenizer) -> Vec<SearchHit> {
    let mut shares = Shares::new(tokens, tokenizer);
    let mut moved = false;
    for h in &mut hits {
        let share = shares.of(super::group::file_of(h));
        if share > 0.0 {
            h.score += FILE_NAME_WEIGHT * share;
            moved = true;
        }
    }
    if !moved {
        return hits;
    }
    super::resorted(&mut hits);
    hits
}

/// Each file's name share for one query, worked out once per file.
struct Shares<'a> {
    query: FxHashSet<&'a str>,
    tokens: &'a [String],
    tokenizer: &'a Tokenizer,
    known: FxHashMap<String, f64>,
}

impl<'a> Shares<'a> {
    fn new(tokens: &'a [String], tokenizer: &'a Tokenizer) -> Self {
        Shares { query: tokens.iter().map(String::as_str).collect(), tokens, tokenizer, known: FxHashMap::default() }
    }

    fn of(&mut self, file: &str) -> f64 {
        if let Some(&s) = self.known.get(file) {
            return s;
        }
        let s = if may_name(file, self.tokens) { name_share(file, &self.query, self.tokenizer) } else { 0.0 };
        self.known.insert(file.to_string(), s);
        s
    }
}

/// Whether `path`'s file name may hold a word of the query: it holds the
/// first four letters of one of its tokens of three or more (a stem, as
/// `reply` gives `repli`, starts as its word does), ASCII case aside. A
/// cheap test before the words are analysed. It misses capitals outside
/// ASCII and folded diacritics (`café.rs` for `cafe`): such a name is not
/// lifted.
fn may_name(path: &str, tokens: &[String]) -> bool {
    let Some(stem) = name_stem(path) else { return false };
    let stem = stem.to_ascii_lowercase();
    tokens.iter().filter(|t| t.chars().count() >= 3).any(|t| {
        let head = t.char_indices().nth(4).map_or(t.as_str(), |(i, _)| &t[..i]);
        // A short stem may end in the `i` of a `y` (`copy`, `copi`).
        let head = if t.len() <= 4 { head.strip_suffix('i').unwrap_or(head) } else { head };
        stem.contains(head)
    })
}

/// `path`'s file name without its folders and extension; none for a path
/// without an extension (an id, not a file).
fn name_stem(path: &str) -> Option<&str> {
    let name = path.rsplit(['/', '\\']).next().unwrap_or(path);
    name.split_once('.').map(|(stem, _)| stem)
}

/// The share of the words of `path`'s file name that are in `query`.
fn name_share(path: &str, query: &FxHashSet<&str>, tokenizer: &Tokenizer) -> f64 {
    let Some(stem) = name_stem(path) else { return 0.0 };
    let words: Vec<String> = stem
        .split(|c: char| !c.is_alphanumeric())
        .flat_map(split_identifier)
        // Short pieces and numbers name little ("v2", "io").
        .filter(|w| w.chars().count() >= 3 && !w.chars().all(|c| c.is_ascii_digit()))
        .filter_map(|w| tokenizer.tokenize(w).into_iter().next())
        .collect();
    if words.is_empty() {
        return 0.0;
    }
    words.iter().filter(|w| query.contains(w.as_str())).count() as f64 / words.len() as f64
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::search::test_hit as hit;

    #[test]
    fn a_file_the_query_names_is_lifted() {
        let t = Tokenizer::default();
        let tokens = t.tokenize("Fix the tree builder's stack handling");
        let hits =
            vec![hit("src/parser/Tokeniser.java", 1.0), hit("src/parser/TreeBuilder.java", 0.9), hit("notes", 0.85)];
        let out = lift(hits, &tokens, &t);
        let ids: Vec<&str> = out.iter().map(|h| h.id.as_str()).collect();
        assert_eq!(ids, ["src/parser/TreeBuilder.java", "src/parser/Tokeniser.java", "notes"]);
        assert_eq!(out[0].score, 1.0);
        assert_eq!(out[0].bm25, Some(0.9), "the content score stays");
        // Half of a name: half the lift; no extension, or no word of it: none.
        let q: FxHashSet<&str> = tokens.iter().map(String::as_str).collect();
        assert_eq!(name_share("a/TreeWalker.rs", &q, &t), 0.5);
        assert_eq!(name_share("tree_builder", &q, &t), 0.0);
        assert_eq!(name_share("src/io.rs", &q, &t), 0.0);
        let copy: Vec<String> = t.tokenize("copy the body");
        assert!(may_name("src/copy.rs", &copy) && may_name("lib/Body.java", &copy), "{copy:?}");
        assert!(!may_name("src/tree.rs", &copy));
        assert_eq!(name_share("src\\tree-builder.test.ts", &q, &t), 1.0);
        // Nothing named: the hits as they were.
        let same = lift(vec![hit("a.rs", 1.0), hit("b.rs", 0.5)], &t.tokenize("unrelated words"), &t);
        assert_eq!(same.iter().map(|h| h.score).collect::<Vec<_>>(), [1.0, 0.5]);
    }
}
