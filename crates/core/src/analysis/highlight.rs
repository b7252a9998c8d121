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

/// With a tokenizer of the user's (its tokens of the query, and of each
/// line of `text` split at `\n`): byte ranges, in order, of each query token
/// where its text is found in a line whose tokens hold it (ASCII case
/// folded), or of the whole line where none is found. The index finds a
/// result's `lineRange` so (each line tokenized alone, as Mastra's), and
/// what is shown must agree with it: the built-in words matched where the
/// user's tokenizer kept other tokens (case, one-letter words), and the
/// search tool numbered the lines it showed from the wrong one.
pub fn lines_holding_tokens(text: &str, query_tokens: &[String], line_tokens: &[Vec<String>]) -> Vec<(usize, usize)> {
    let wanted: FxHashSet<&str> = query_tokens.iter().map(String::as_str).collect();
    let (mut spans, mut at) = (Vec::new(), 0usize);
    for (line, tokens) in text.split('\n').zip(line_tokens) {
        let mut matched: Vec<&str> = tokens.iter().map(String::as_str).filter(|t| wanted.contains(t)).collect();
        matched.sort_unstable();
        matched.dedup();
        // Each token where its text is found (so that lines are ranked by
        // the query's tokens they hold), else the whole line. ASCII folding
        // keeps byte offsets.
        let folded = line.to_ascii_lowercase();
        let found: Vec<(usize, usize)> = matched
            .iter()
            .filter(|t| !t.is_empty())
            .filter_map(|t| folded.find(&t.to_ascii_lowercase()).map(|i| (at + i, at + i + t.len())))
            .collect();
        match (matched.is_empty(), found.is_empty()) {
            (true, _) => {}
            (false, true) => spans.push((at, at + line.len())),
            (false, false) => spans.extend(found),
        }
        at += line.len() + 1;
    }
    spans.sort_unstable();
    spans
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

    #[test]
    fn lines_holding_a_users_tokens() {
        use super::lines_holding_tokens;
        let toks =
            |s: &str| s.split(|c: char| !c.is_alphanumeric()).filter(|t| !t.is_empty()).map(String::from).collect();
        let text = "Foo pass\nnothing\npassword pass é x\nX";
        let lines: Vec<Vec<String>> = text.split('\n').map(toks).collect();
        let query: Vec<String> = vec!["pass".into(), "x".into(), "X".into()];
        let spans = lines_holding_tokens(text, &query, &lines);
        let words: Vec<&str> = spans.iter().map(|&(a, b)| &text[a..b]).collect();
        // Each token once per line, where its text is first found; line 2
        // not at all.
        assert_eq!(words, ["pass", "pass", "x", "X"]);
        assert!(spans.windows(2).all(|w| w[0] <= w[1]));
        // A token the line holds but whose text it does not: the whole line.
        let spaced = vec![vec!["c++".to_string()]];
        assert_eq!(lines_holding_tokens("c + +", &["c++".into()], &spaced), [(0, 5)]);
    }
}
