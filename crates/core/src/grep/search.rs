//! One text searched as Mastra searches it line by line, in one pass: the
//! translated pattern (`js_regex`) cannot match across a line feed, so each
//! match found in the whole text lies in one line, and the first one found
//! from a line's start is that line's `regex.exec` match.

use super::js_regex::{is_stand_in_range, translate, units, PatternError, Translated};
use super::trigrams::{query_of, Query};

/// A compiled grep pattern and the trigram query that prunes files for it.
pub struct Matcher {
    engine: Engine,
    pub query: Query,
    /// What of U+E000-U+E7FF the pattern names (`js_regex::Translated`).
    surrogates: bool,
    private_use: bool,
    /// The pattern has back-references.
    backrefs: bool,
    /// Case-insensitive: the characters whose answer would differ from
    /// JavaScript's that this pattern can reach (`fold`).
    unlike: Vec<char>,
}

/// A text this grep cannot search exactly as JavaScript would.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unanswerable(pub String);

enum Engine {
    Automaton(regex::Regex),
    Backtracking(fancy_regex::Regex),
}

/// A matching line: 1-based line number, 0-based UTF-16 column of the match
/// (as Mastra's hook takes it), the line, and its context lines.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LineMatch {
    pub line: u32,
    pub column: u32,
    pub text: String,
    pub before: Vec<String>,
    pub after: Vec<String>,
}

/// Patterns larger than this as automata are refused (Mastra then runs
/// them in JavaScript).
const SIZE_LIMIT: usize = 64 << 20;

impl Matcher {
    /// A JavaScript regex source, with `i` when not `case_sensitive`.
    pub fn new(source: &str, case_sensitive: bool) -> Result<Matcher, PatternError> {
        let Translated { pattern, backtracking, surrogates, private_use, .. } = translate(source, !case_sensitive)?;
        let unlike =
            if case_sensitive { Vec::new() } else { super::fold::reached_by(&pattern.replacen("(?mi)", "(?m)", 1)) };
        let unsupported = |e: String| PatternError::Unsupported { pattern: source.to_string(), reason: e };
        if !backtracking {
            let re = regex::RegexBuilder::new(&pattern)
                .size_limit(SIZE_LIMIT)
                .build()
                .map_err(|e| unsupported(e.to_string()))?;
            let query =
                regex_syntax::ParserBuilder::new().build().parse(&pattern).map(|h| query_of(&h)).unwrap_or(Query::All);
            return Ok(Matcher {
                engine: Engine::Automaton(re),
                query,
                surrogates,
                private_use,
                backrefs: false,
                unlike,
            });
        }
        let re = fancy_regex::RegexBuilder::new(&pattern)
            .delegate_size_limit(SIZE_LIMIT)
            .build()
            .map_err(|e| unsupported(e.to_string()))?;
        let backrefs = source.contains('\\');
        Ok(Matcher { engine: Engine::Backtracking(re), query: Query::All, surrogates, private_use, backrefs, unlike })
    }

    /// The start of the first match at or after `at`.
    fn find_at(&self, text: &str, at: usize) -> Result<Option<usize>, Unanswerable> {
        match &self.engine {
            Engine::Automaton(re) => Ok(re.find_at(text, at).map(|m| m.start())),
            // The backtracking limit: JavaScript would go on, so no answer.
            Engine::Backtracking(re) => {
                re.find_from_pos(text, at).map(|m| m.map(|m| m.start())).map_err(|e| Unanswerable(e.to_string()))
            }
        }
    }
}

/// `text` with each character beyond U+FFFF as its two stand-ins, when it
/// has any (a 4-byte UTF-8 sequence); line feeds stay where they were.
pub fn as_units(text: &str) -> Option<String> {
    if !text.bytes().any(|b| b >= 0xF0) {
        return None;
    }
    Some(text.chars().flat_map(units).flatten().collect())
}

/// The lines of `text` that match, at most `max_count`, each with up to
/// `context` lines before and after (with `once`, each line given once: a
/// line between two matches is in the first one's `after` only): searched
/// as JavaScript's units (a text with characters beyond U+FFFF through
/// their stand-ins, its lines then reported as they are).
pub fn search_text(
    m: &Matcher,
    text: &str,
    max_count: Option<usize>,
    context: Context,
) -> Result<Vec<LineMatch>, Unanswerable> {
    let units = as_units(text);
    let private_use = || text.chars().any(is_stand_in_range);
    // Stand-ins and real characters of U+E000-U+E7FF could be confused: a
    // pattern's surrogate with a text's private-use character, a pattern's
    // private-use character with a text's stand-in, or a back-reference
    // across the two.
    let astral = units.is_some();
    if (m.surrogates && private_use()) || (m.private_use && astral) || (m.backrefs && astral && private_use()) {
        return Err(Unanswerable(
            "a text with characters beyond U+FFFF or of U+E000-U+E7FF, which this pattern could confuse".into(),
        ));
    }
    {
        if let Some(c) = super::fold::found_in(text, &m.unlike) {
            return Err(Unanswerable(format!(
                "a text with {c:?} (U+{:04X}), which JavaScript's case-insensitive matching treats otherwise",
                c as u32
            )));
        }
    }
    let Some(units) = units else {
        let (mut found, spans) = search_units(m, text, max_count)?;
        add_context(text, &mut found, &spans, context);
        return Ok(found);
    };
    let (mut found, spans) = search_units(m, &units, max_count)?;
    add_context(&units, &mut found, &spans, context);
    let lines: Vec<&str> = text.split('\n').collect();
    let line = |n: usize| lines.get(n).copied().unwrap_or_default().to_string();
    for f in &mut found {
        let n = f.line as usize - 1;
        f.text = line(n);
        let before = f.before.len();
        f.before = (n - before..n).map(line).collect();
        f.after = (n + 1..n + 1 + f.after.len()).map(line).collect();
    }
    Ok(found)
}

/// The context lines a search gives around each match.
#[derive(Debug, Clone, Copy, Default)]
pub struct Context {
    /// Up to this many lines before and after.
    pub lines: usize,
    /// Each line once: the lines between two matches go to the first one's
    /// `after` (a file of many matches costs its lines, not matches x
    /// `lines`; the context is never built in full and then cut).
    pub once: bool,
}

/// Where a match's line lies in the text: its first byte, and its end (its
/// '\n' or the text's end).
type Span = (usize, usize);

/// Fills in each match's `before` and `after` lines.
fn add_context(text: &str, found: &mut [LineMatch], spans: &[Span], context: Context) {
    if context.lines == 0 {
        return;
    }
    let mut given = 0usize; // the last line an earlier match's context gave
    for i in 0..found.len() {
        let line = found[i].line as usize;
        let (mut before, mut after) = (context.lines, context.lines);
        if context.once {
            before = before.min(line.saturating_sub(given + 1));
            if let Some(next) = found.get(i + 1) {
                after = after.min(next.line as usize - line - 1);
            }
        }
        let (start, end) = spans[i];
        found[i].before = lines_before(text, start, before);
        found[i].after = lines_after(text, end, after);
        given = line + found[i].after.len();
    }
}

fn search_units(
    m: &Matcher,
    text: &str,
    max_count: Option<usize>,
) -> Result<(Vec<LineMatch>, Vec<Span>), Unanswerable> {
    let (mut out, mut spans) = (Vec::new(), Vec::new());
    if let Engine::Backtracking(re) = &m.engine {
        return search_lines(re, text, max_count);
    }
    let (mut at, mut line, mut counted) = (0usize, 0u32, 0usize);
    while at <= text.len() && max_count.is_none_or(|n| out.len() < n) {
        let Some(start) = m.find_at(text, at)? else { break };
        let line_start = memchr::memrchr(b'\n', &text.as_bytes()[..start]).map_or(0, |i| i + 1);
        let line_end = memchr::memchr(b'\n', &text.as_bytes()[start..]).map_or(text.len(), |i| start + i);
        line += memchr::memchr_iter(b'\n', &text.as_bytes()[counted..line_start]).count() as u32;
        counted = line_start;
        let column = text[line_start..start].encode_utf16().count() as u32;
        let text = text[line_start..line_end].to_string();
        out.push(LineMatch { line: line + 1, column, text, before: Vec::new(), after: Vec::new() });
        spans.push((line_start, line_end));
        at = line_end + 1;
    }
    Ok((out, spans))
}

/// The backtracking engine, one line at a time: its backtracking limit is
/// then spent per line, as JavaScript spends its effort per `exec`, not
/// over a whole file.
fn search_lines(
    re: &fancy_regex::Regex,
    text: &str,
    max_count: Option<usize>,
) -> Result<(Vec<LineMatch>, Vec<Span>), Unanswerable> {
    let (mut out, mut spans) = (Vec::new(), Vec::new());
    let mut start = 0usize;
    for (i, line) in text.split('\n').enumerate() {
        if max_count.is_some_and(|n| out.len() >= n) {
            break;
        }
        if let Some(m) = re.find(line).map_err(|e| Unanswerable(e.to_string()))? {
            let column = line[..m.start()].encode_utf16().count() as u32;
            out.push(LineMatch {
                line: i as u32 + 1,
                column,
                text: line.to_string(),
                before: Vec::new(),
                after: Vec::new(),
            });
            spans.push((start, start + line.len()));
        }
        start += line.len() + 1;
    }
    Ok((out, spans))
}

/// Up to `n` lines ending just before the line that starts at `start`.
fn lines_before(text: &str, start: usize, n: usize) -> Vec<String> {
    let mut out = Vec::new();
    let mut end = start;
    while out.len() < n && end > 0 {
        let line_end = end - 1; // the '\n' before
        let line_start = memchr::memrchr(b'\n', &text.as_bytes()[..line_end]).map_or(0, |i| i + 1);
        out.push(text[line_start..line_end].to_string());
        end = line_start;
    }
    out.reverse();
    out
}

/// Up to `n` lines after the line that ends at `end` (at its '\n' or the text's end).
fn lines_after(text: &str, end: usize, n: usize) -> Vec<String> {
    let mut out = Vec::new();
    let mut at = end;
    while out.len() < n && at < text.len() {
        let line_start = at + 1;
        let line_end = memchr::memchr(b'\n', &text.as_bytes()[line_start..]).map_or(text.len(), |i| line_start + i);
        out.push(text[line_start..line_end].to_string());
        at = line_end;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn grep(pattern: &str, text: &str) -> Vec<(u32, u32)> {
        let m = Matcher::new(pattern, true).unwrap();
        search_text(&m, text, None, Context::default()).unwrap().into_iter().map(|l| (l.line, l.column)).collect()
    }

    #[test]
    fn one_match_per_line_with_utf16_columns() {
        assert_eq!(grep("b", "abab\nxb\nnone"), [(1, 1), (2, 1)]);
        assert_eq!(grep("x", "😀x"), [(1, 2)]);
        // JavaScript's units: `.` is half of an emoji.
        assert_eq!(grep("^..$", "😀\na"), [(1, 0)]);
        assert_eq!(grep("😀{2}", "😀😀"), []);
        assert_eq!(grep("^b", "ab\nb"), [(2, 0)]);
        assert_eq!(grep(r"a\sb", "a\nb\na b"), [(3, 0)]);
        assert_eq!(grep("x*", "a\n"), [(1, 0), (2, 0)]);
        assert_eq!(grep("(a)\\1", "aa\nab"), [(1, 0)]);
        assert_eq!(grep("a$", "a\r\na"), [(2, 0)]);
    }

    #[test]
    fn shared_context_gives_each_line_once() {
        let m = Matcher::new("x", true).unwrap();
        let text = "a\nx\nb\nx\nc\nd\ne\nx\nf";
        let got = search_text(&m, text, None, Context { lines: 2, once: true }).unwrap();
        let lines: Vec<(Vec<String>, u32, Vec<String>)> =
            got.into_iter().map(|l| (l.before, l.line, l.after)).collect();
        let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        assert_eq!(lines, [(s(&["a"]), 2, s(&["b"])), (s(&[]), 4, s(&["c", "d"])), (s(&["e"]), 8, s(&["f"]))]);
    }

    #[test]
    fn context_once_is_the_full_context_with_each_line_kept_once() {
        // The full windows, cut as the context was cut before it was built
        // once: a line between two matches in the first one's `after` only.
        fn cut(mut matches: Vec<LineMatch>) -> Vec<LineMatch> {
            for k in 1..matches.len() {
                let (earlier, later) = matches.split_at_mut(k);
                let (prev, cur) = (&mut earlier[k - 1], &mut later[0]);
                prev.after.truncate((cur.line - prev.line).saturating_sub(1) as usize);
                let covered = prev.line as usize + prev.after.len();
                let first = cur.line as usize - cur.before.len();
                let drop = (covered + 1).saturating_sub(first).min(cur.before.len());
                cur.before.drain(..drop);
            }
            matches
        }
        let view = |v: Vec<LineMatch>| v.into_iter().map(|l| (l.before, l.line, l.text, l.after)).collect::<Vec<_>>();
        let mut seed = 7u64;
        for round in 0..300 {
            let lines: Vec<String> = (0..1 + round % 40)
                .map(|_| {
                    seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                    ["x", "a", "b 😀", "", "x x"][(seed >> 33) as usize % 5].to_string()
                })
                .collect();
            let text = lines.join("\n");
            for (pattern, lines_of_context) in [("x", 0), ("x", 1), ("x", 3), ("b", 7), ("^$", 2)] {
                let m = Matcher::new(pattern, true).unwrap();
                let full = search_text(&m, &text, None, Context { lines: lines_of_context, once: false }).unwrap();
                let once = search_text(&m, &text, None, Context { lines: lines_of_context, once: true }).unwrap();
                assert_eq!(view(once), view(cut(full)), "{text:?} /{pattern}/ {lines_of_context}");
            }
        }
    }

    #[test]
    fn context_and_max_count() {
        let m = Matcher::new("x", true).unwrap();
        let got = search_text(&m, "a\nx\nb\nc\nx", Some(1), Context { lines: 1, once: false }).unwrap();
        assert_eq!(got.len(), 1);
        assert_eq!((got[0].before.clone(), got[0].after.clone()), (vec!["a".to_string()], vec!["b".to_string()]));
    }
}
