//! Which words of a text match a query, by the analyzer's own tokens (the
//! command line highlights them): a word matches when one of its tokens is
//! one of the query's, so stemmed, folded and identifier-split matches are
//! found as the index finds them.

use super::tokenizer::{is_js_space, Tokenizer};
use rustc_hash::FxHashSet;

impl Tokenizer {
    /// Byte ranges of the whitespace-separated words of `text` that share
    /// a token with `query`, in order.
    pub fn matching_words(&self, text: &str, query: &str) -> Vec<(usize, usize)> {
        self.words_matching(text, &self.query_words(query))
    }

    /// The tokens of `query` that `words_matching` looks for.
    pub fn query_words(&self, query: &str) -> FxHashSet<String> {
        self.tokenize(query).into_iter().collect()
    }

    /// `matching_words` with the query's tokens already made.
    pub fn words_matching(&self, text: &str, wanted: &FxHashSet<String>) -> Vec<(usize, usize)> {
        if wanted.is_empty() {
            return Vec::new();
        }
        let mut out = Vec::new();
        let mut start = None;
        for (i, c) in text.char_indices().chain(std::iter::once((text.len(), ' '))) {
            match (is_js_space(c), start) {
                (false, None) => start = Some(i),
                (true, Some(s)) => {
                    let mut hit = false;
                    self.tokenize_into(&text[s..i], |t| hit |= wanted.contains(t));
                    if hit {
                        out.push((s, i));
                    }
                    start = None;
                }
                _ => {}
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use crate::analysis::tokenizer::Tokenizer;

    #[test]
    fn stemmed_folded_and_identifier_matches() {
        let t = Tokenizer::default();
        let text = "Resetting passwords: call resetPassword() now.\n重置密码";
        let words: Vec<&str> = t.matching_words(text, "reset password").iter().map(|&(a, b)| &text[a..b]).collect();
        assert_eq!(words, ["Resetting", "passwords:", "resetPassword()"]);
        let cjk: Vec<&str> = t.matching_words(text, "密码").iter().map(|&(a, b)| &text[a..b]).collect();
        assert_eq!(cjk, ["重置密码"]);
        assert!(t.matching_words(text, "the").is_empty());
    }
}
