//! Where case-insensitive matching differs between the two sides. The
//! native engines fold case by Unicode's simple case folding; JavaScript
//! without the `u` flag compares `Canonicalize(c)`: `c.toUpperCase()` when
//! that is one character and does not turn a non-ASCII character into an
//! ASCII one, else `c` itself. A character is "unlike" when the characters
//! it matches are not the same on both sides (the Kelvin sign, the long s,
//! `ẞ`, Greek letters with iota subscript, ...). A text that holds one is
//! not searched by a case-insensitive pattern: no answer rather than a
//! wrong one. (A pattern's own non-ASCII letters can still fold wider
//! natively; Mastra's capability checks each match in JavaScript.)

use regex_syntax::hir::{ClassUnicode, ClassUnicodeRange};
use rustc_hash::{FxHashMap, FxHashSet};
use std::sync::OnceLock;

/// JavaScript's `Canonicalize` without the `u` flag (ECMA-262 22.2.2.7.3).
fn canonicalize(c: char) -> char {
    let mut upper = c.to_uppercase();
    match (upper.next(), upper.next()) {
        (Some(u), None) if !(c as u32 >= 128 && (u as u32) < 128) => u,
        _ => c,
    }
}

/// The characters of the BMP whose case-insensitive matches differ.
fn unlike() -> &'static FxHashSet<char> {
    static UNLIKE: OnceLock<FxHashSet<char>> = OnceLock::new();
    UNLIKE.get_or_init(|| {
        let bmp = || (0u32..0x10000).filter_map(char::from_u32);
        let mut js: FxHashMap<char, Vec<char>> = FxHashMap::default();
        for c in bmp() {
            js.entry(canonicalize(c)).or_default().push(c);
        }
        let orbit = |c: char| -> Vec<char> {
            let mut class = ClassUnicode::new([ClassUnicodeRange::new(c, c)]);
            class.case_fold_simple();
            class.iter().flat_map(|r| r.start()..=r.end()).collect()
        };
        let mut out = FxHashSet::default();
        for c in bmp() {
            let native = orbit(c);
            let theirs = &js[&canonicalize(c)];
            let same = native.len() == theirs.len() && native.iter().all(|n| theirs.contains(n));
            if same || c.is_ascii() {
                continue;
            }
            // JavaScript splits the orbit into classes: the one of its first
            // character is what texts hold (k and K, not the Kelvin sign);
            // a character of another class, or one the native side leaves
            // out of a class JavaScript has, can change an answer.
            let main = &js[&canonicalize(native[0])];
            let missing = theirs.iter().any(|t| !native.contains(t));
            if missing || !main.contains(&c) {
                out.insert(c);
            }
        }
        out
    })
}

/// The characters above that a case-insensitive pattern (its Rust form,
/// before folding) can reach: those whose native orbit holds a character
/// the pattern names. A pattern that cannot be read (look-around) reaches
/// them all.
pub fn reached_by(pattern_unfolded: &str) -> Vec<char> {
    let parsed =
        regex_syntax::parse(pattern_unfolded).ok().or_else(|| regex_syntax::parse(&plain_of(pattern_unfolded)).ok());
    let Some(hir) = parsed else {
        // Sorted, as `found_in` searches it (a set's order is not).
        let mut all: Vec<char> = unlike().iter().copied().collect();
        all.sort_unstable();
        return all;
    };
    let mut named = ClassUnicode::empty();
    collect(&hir, &mut named);
    let mut out: Vec<char> = unlike()
        .iter()
        .copied()
        .filter(|&c| {
            let mut orbit = ClassUnicode::new([ClassUnicodeRange::new(c, c)]);
            orbit.case_fold_simple();
            orbit.intersect(&named);
            orbit.iter().next().is_some()
        })
        .collect();
    out.sort_unstable();
    out
}

/// `pattern` without what Rust's syntax lacks: look-arounds become plain
/// groups, back-references go. It names every character the pattern
/// names (a back-reference matches what its group did), which is all
/// `reached_by` needs.
fn plain_of(pattern: &str) -> String {
    let mut out = String::with_capacity(pattern.len());
    let mut rest = pattern;
    while let Some(c) = rest.chars().next() {
        if let Some(after) = ["(?=", "(?!", "(?<=", "(?<!"].iter().find_map(|l| rest.strip_prefix(l)) {
            out.push_str("(?:");
            rest = after;
        } else if let Some(after) = rest.strip_prefix('\\') {
            match after.chars().next() {
                Some('1'..='9') => rest = after.trim_start_matches(|d: char| d.is_ascii_digit()),
                Some('k') if after[1..].starts_with('<') => {
                    rest = after.find('>').map_or("", |end| &after[end + 1..]);
                }
                Some(next) => {
                    out.push('\\');
                    out.push(next);
                    rest = &after[next.len_utf8()..];
                }
                None => rest = after,
            }
        } else {
            out.push(c);
            rest = &rest[c.len_utf8()..];
        }
    }
    out
}

/// Every character a pattern names, literally or in a class.
fn collect(hir: &regex_syntax::hir::Hir, named: &mut ClassUnicode) {
    use regex_syntax::hir::{Class, HirKind};
    match hir.kind() {
        HirKind::Literal(l) => {
            for c in String::from_utf8_lossy(&l.0).chars() {
                named.push(ClassUnicodeRange::new(c, c));
            }
        }
        HirKind::Class(Class::Unicode(u)) => named.union(u),
        HirKind::Class(Class::Bytes(b)) => {
            for r in b.iter() {
                named.push(ClassUnicodeRange::new(char::from(r.start()), char::from(r.end())));
            }
        }
        HirKind::Repetition(r) => collect(&r.sub, named),
        HirKind::Capture(c) => collect(&c.sub, named),
        HirKind::Concat(subs) | HirKind::Alternation(subs) => subs.iter().for_each(|s| collect(s, named)),
        HirKind::Empty | HirKind::Look(_) => {}
    }
}

/// The first character of `text` among `reached` (sorted).
pub fn found_in(text: &str, reached: &[char]) -> Option<char> {
    // ASCII text has none: a pass over its bytes is enough.
    if reached.is_empty() || text.is_ascii() {
        return None;
    }
    text.chars().find(|c| reached.binary_search(c).is_ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_known_differences_are_found() {
        for c in ['\u{212A}', '\u{017F}', '\u{1E9E}', '\u{212B}', '\u{2126}'] {
            assert!(unlike().contains(&c), "{c:?}");
        }
        // `k` matches `K` on both sides (the Kelvin sign in a text is what differs).
        assert!(!unlike().contains(&'k') && !unlike().contains(&'K'));
        for c in ['a', 'é', 'Σ', 'ж', '1', '_'] {
            assert!(!unlike().contains(&c), "{c:?}");
        }
        // Only a pattern that names a character of its orbit reaches the Kelvin sign.
        assert_eq!(reached_by("(?m)kelvin"), ['\u{212A}']);
        assert_eq!(reached_by("(?m)[a-z]+").len(), 2);
        assert!(reached_by("(?m)todo|foo|bar").is_empty());
        assert_eq!(found_in("temperature 3\u{212A}", &reached_by("(?m)k")), Some('\u{212A}'));
        assert_eq!(found_in("plain ascii", &reached_by("(?m)k")), None);
    }

    #[test]
    fn look_arounds_and_back_references_reach_what_they_name() {
        assert_eq!(plain_of(r"f(o)\1 (?=k)(?<!a)\\1\k<n>x"), r"f(o) (?:k)(?:a)\\1x");
        assert_eq!(reached_by(r"(?m)k(?=1)"), ['\u{212A}']);
        assert!(reached_by(r"(?m)f(o)\1 ").is_empty());
        assert!(reached_by(r"(?m)(?<=s)x").contains(&'\u{017F}'), "s reaches the long s");
    }

    #[test]
    fn a_pattern_that_cannot_be_read_reaches_every_one_in_order() {
        // Not Rust syntax, even without look-arounds and back-references
        // (an open class): every character above is reached, and
        // `found_in` (a binary search) finds each of them in a text.
        let all = reached_by("(?m)[k1");
        assert!(all.windows(2).all(|w| w[0] < w[1]), "sorted");
        assert_eq!(all.len(), unlike().len());
        for c in ['\u{212A}', '\u{017F}', '\u{1E9E}', '\u{212B}', '\u{2126}'] {
            assert_eq!(found_in(&format!("temperature 3{c}1"), &all), Some(c), "{c:?}");
        }
    }
}
