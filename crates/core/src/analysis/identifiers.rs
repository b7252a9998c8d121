//! Whole identifiers as terms of their own. Identifier splitting makes
//! `parseUserId` the words `parse`, `user`, `id`, which every file that
//! parses a user's id holds; the file that *defines* `parseUserId` is then
//! one of many. So each name a document defines that is made of two words
//! or more (`parseUserId`, `parse_user_id`, `ERR_CODE_42`) is also indexed
//! whole, lowercased and without `_`, under a prefix the default
//! tokenizer's words never have (`ident:parseuserid`; a word of a text
//! split by another rule could equal one, and would then count as one),
//! counted as the definitions field is; and a query's identifiers are
//! looked up the same way beside its words. The spellings of one name meet
//! (`parse_user_id` finds `parseUserId`), a plain word (`router`) adds
//! nothing, and where no file defines the identifier the term matches
//! nothing and scores stay as they were.

use super::tokenizer::split_ascii_identifier;

/// What sets a whole-identifier term apart from a tokenizer's words (which
/// never hold a `:` with the default split rule and punctuation removed).
const PREFIX: &str = "ident:";

/// The whole-identifier term of `name`: `None` unless it is an ASCII
/// identifier of two words or more with a letter in it.
pub fn term(name: &str) -> Option<String> {
    let mut out = String::new();
    term_into(name, &mut out).then_some(out)
}

/// `term` into `out` (cleared first, its allocation kept): whether `name`
/// has one.
pub fn term_into(name: &str, out: &mut String) -> bool {
    out.clear();
    let ascii_ident = name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_');
    if name.is_empty() || !ascii_ident || !may_join(name) || !name.bytes().any(|b| b.is_ascii_alphabetic()) {
        return false;
    }
    // Two parts or more (more than the array holds: `None`, many).
    let mut parts = [""; 8];
    if split_ascii_identifier(name, &mut parts).is_some_and(|n| n < 2) {
        return false;
    }
    // The parts, lowercased, one after another: the name without its `_`.
    out.push_str(PREFIX);
    out.extend(name.bytes().filter(|&b| b != b'_').map(|b| char::from(b.to_ascii_lowercase())));
    true
}

/// Whether `name` (ASCII) can be two words: a `_`, a digit or a capital
/// after its first letter. Most names are one lowercase word; they are let
/// go before they are split.
fn may_join(name: &str) -> bool {
    name.bytes().skip(1).any(|b| b == b'_' || b.is_ascii_digit() || b.is_ascii_uppercase())
}

/// The whole-identifier terms of a query: its runs of letters, digits and
/// `_` (so `Foo::bar`, `user.id`, `swap-pane` give their pieces; a run
/// with a letter outside ASCII gives none). A repeated identifier counts
/// twice, as a repeated word does.
pub fn terms_of_query(query: &str) -> Vec<String> {
    query.split(|c: char| !(c.is_alphanumeric() || c == '_')).filter_map(term).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spellings_of_one_name_meet() {
        assert_eq!(term("parseUserId").as_deref(), Some("ident:parseuserid"));
        assert_eq!(term("parse_user_id"), term("parseUserId"));
        assert_eq!(term("ParseUserID"), term("parseUserId"));
        assert_eq!(term("ERR_CODE_42").as_deref(), Some("ident:errcode42"));
        assert_eq!(term("utf8").as_deref(), Some("ident:utf8"));
    }

    #[test]
    fn plain_words_and_others_are_not_identifiers() {
        for name in ["router", "Router", "ID", "_", "__init__", "42", "1_000", "café_au_lait", "a-b", ""] {
            assert_eq!(term(name), None, "{name}");
        }
    }

    #[test]
    fn a_query_gives_its_identifiers() {
        assert_eq!(
            terms_of_query("Fix parseUserId (and parse_user_id) in Foo::barBaz, user.id and swap-pane"),
            ["ident:parseuserid", "ident:parseuserid", "ident:barbaz"]
        );
        assert!(terms_of_query("parseÜserId").is_empty(), "no piece of a word with a letter outside ASCII");
        assert!(terms_of_query("how do I install it").is_empty());
    }
}
