//! One text searched as Mastra searches it line by line, in one pass: the
//! translated pattern (`js_regex`) cannot match across a line feed, so each
//! match found in the whole text lies in one line, and the first one found
//! from a line's start is that line's `regex.exec` match.

use super::trigrams::{query_of, Query};
use crate::text::js_regex::{is_stand_in_range, translate, units, PatternError, Translated};

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

/// Why a text was not searched: no exact answer, or one past the budget.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Unsearched {
    Unanswerable(Unanswerable),
    TooLarge,
}

impl From<Unanswerable> for Unsearched {
    fn from(u: Unanswerable) -> Self {
        Unsearched::Unanswerable(u)
    }
}

/// Lines (matched and context) one grep's answer may hold over all its
/// files, and their bytes. JavaScript gets the answer as one string (V8's
/// longest is 2^29 - 24 units) and makes a string of each line:
/// `contextLines: 10000` over a file of 8,000 matching lines built 2.9 GB
/// of copies before failing untyped, and 16 million lines of context held
/// the JavaScript thread 2 s and 1.8 GB.
pub const MAX_ANSWER_LINES: usize = 1_000_000;
pub const MAX_ANSWER_BYTES: usize = 128 << 20;

/// What is left of the answer's lines and bytes for one grep, taken by
/// each file searched.
#[derive(Debug)]
pub struct AnswerBudget {
    lines: std::sync::atomic::AtomicUsize,
    bytes: std::sync::atomic::AtomicUsize,
}

impl Default for AnswerBudget {
    fn default() -> Self {
        AnswerBudget {
            lines: std::sync::atomic::AtomicUsize::new(MAX_ANSWER_LINES),
            bytes: std::sync::atomic::AtomicUsize::new(MAX_ANSWER_BYTES),
        }
    }
}

impl AnswerBudget {
    /// A budget of `lines` and `bytes` (tests; greps start with the maxima).
    pub fn new(lines: usize, bytes: usize) -> Self {
        AnswerBudget { lines: lines.into(), bytes: bytes.into() }
    }

    /// Takes `lines` and `bytes` if that many are left (a refusal fails the
    /// whole grep, so what it took of the lines does not matter).
    fn take(&self, lines: usize, bytes: usize) -> bool {
        use std::sync::atomic::Ordering::SeqCst;
        let less = |n: usize| move |left: usize| left.checked_sub(n);
        self.lines.fetch_update(SeqCst, SeqCst, less(lines)).is_ok()
            && self.bytes.fetch_update(SeqCst, SeqCst, less(bytes)).is_ok()
    }
}

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
    budget: &AnswerBudget,
) -> Result<Vec<LineMatch>, Unsearched> {
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
        )
        .into());
    }
    {
        if let Some(c) = super::fold::found_in(text, &m.unlike) {
            return Err(Unanswerable(format!(
                "a text with {c:?} (U+{:04X}), which JavaScript's case-insensitive matching treats otherwise",
                c as u32
            ))
            .into());
        }
    }
    let Some(units) = units else {
        let (mut found, spans) = search_units(m, text, max_count)?;
        add_context(text, &mut found, &spans, context, budget)?;
        return Ok(found);
    };
    let (mut found, spans) = search_units(m, &units, max_count)?;
    add_context(&units, &mut found, &spans, context, budget)?;
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

/// Fills in each match's `before` and `after` lines, once `budget` had
/// room for every line given (the matched ones too): the context sized
/// from where the lines start before any of it is copied.
fn add_context(
    text: &str,
    found: &mut [LineMatch],
    spans: &[Span],
    context: Context,
    budget: &AnswerBudget,
) -> Result<(), Unsearched> {
    if found.is_empty() {
        return Ok(());
    }
    if context.lines == 0 {
        // The matched lines alone (already copied by the search: counted, not sized again).
        let bytes = spans.iter().map(|(start, end)| end - start).sum();
        return if budget.take(found.len(), bytes) { Ok(()) } else { Err(Unsearched::TooLarge) };
    }
    let windows = context_windows(text, found, context);
    let starts: Vec<usize> =
        std::iter::once(0).chain(memchr::memchr_iter(b'\n', text.as_bytes()).map(|i| i + 1)).collect();
    // The end of 1-based line `k` (its '\n', or the text's end).
    let line_end = |k: usize| starts.get(k).map_or(text.len(), |&s| s - 1);
    let bytes: usize = found
        .iter()
        .zip(&windows)
        .map(|(f, &(before, after))| {
            let line = f.line as usize;
            line_end(line + after) - starts[line - 1 - before]
        })
        .sum();
    let lines: usize = windows.iter().map(|(before, after)| before + after + 1).sum();
    if !budget.take(lines, bytes) {
        return Err(Unsearched::TooLarge);
    }
    for ((f, &(start, end)), (before, after)) in found.iter_mut().zip(spans).zip(windows) {
        if before > 0 {
            f.before = lines_before(text, start, before);
        }
        if after > 0 {
            f.after = lines_after(text, end, after);
        }
    }
    Ok(())
}

/// How many lines each match gets before and after it: up to
/// `context.lines`, as many as the text has; with `once`, none given twice.
fn context_windows(text: &str, found: &[LineMatch], context: Context) -> Vec<(usize, usize)> {
    let lines = memchr::memchr_iter(b'\n', text.as_bytes()).count() + 1;
    let mut given = 0usize; // the last line an earlier match's context gave
    let mut out = Vec::with_capacity(found.len());
    for (i, f) in found.iter().enumerate() {
        let line = f.line as usize;
        let (mut before, mut after) = (context.lines.min(line - 1), context.lines.min(lines - line));
        if context.once {
            before = before.min(line.saturating_sub(given + 1));
            if let Some(next) = found.get(i + 1) {
                after = after.min(next.line as usize - line - 1);
            }
        }
        out.push((before, after));
        given = line + after;
    }
    out
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
        search_text(&m, text, None, Context::default(), &AnswerBudget::default())
            .unwrap()
            .into_iter()
            .map(|l| (l.line, l.column))
            .collect()
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
        let got = search_text(&m, text, None, Context { lines: 2, once: true }, &AnswerBudget::default()).unwrap();
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
                let full = search_text(
                    &m,
                    &text,
                    None,
                    Context { lines: lines_of_context, once: false },
                    &AnswerBudget::default(),
                )
                .unwrap();
                let once = search_text(
                    &m,
                    &text,
                    None,
                    Context { lines: lines_of_context, once: true },
                    &AnswerBudget::default(),
                )
                .unwrap();
                assert_eq!(view(once), view(cut(full)), "{text:?} /{pattern}/ {lines_of_context}");
            }
        }
    }

    #[test]
    fn an_answer_past_its_budget_is_refused_before_its_lines_are_copied() {
        let m = Matcher::new("x", true).unwrap();
        let text = "x\na\nx\nb\nx"; // 3 matches; with 1 line of context: 2 + 3 + 2 lines
        let ctx = Context { lines: 1, once: false };
        assert!(search_text(&m, text, None, ctx, &AnswerBudget::new(7, 100)).is_ok());
        assert_eq!(search_text(&m, text, None, ctx, &AnswerBudget::new(6, 100)), Err(Unsearched::TooLarge));
        // Bytes: "x\na" 3, "a\nx\nb" 5, "b\nx" 3.
        assert!(search_text(&m, text, None, ctx, &AnswerBudget::new(100, 11)).is_ok());
        assert_eq!(search_text(&m, text, None, ctx, &AnswerBudget::new(100, 10)), Err(Unsearched::TooLarge));
        // Once: each line given once, 5 lines.
        let once = Context { lines: 1, once: true };
        assert!(search_text(&m, text, None, once, &AnswerBudget::new(5, 100)).is_ok());
        assert_eq!(search_text(&m, text, None, once, &AnswerBudget::new(4, 100)), Err(Unsearched::TooLarge));
        // One budget, taken by each text searched.
        let shared = AnswerBudget::new(7, 100);
        assert!(search_text(&m, "x", None, ctx, &shared).is_ok());
        assert!(search_text(&m, "x\nx", None, ctx, &shared).is_ok());
        assert_eq!(search_text(&m, "x\nx\nx", None, ctx, &shared), Err(Unsearched::TooLarge));
    }

    #[test]
    fn context_and_max_count() {
        let m = Matcher::new("x", true).unwrap();
        let got =
            search_text(&m, "a\nx\nb\nc\nx", Some(1), Context { lines: 1, once: false }, &AnswerBudget::default())
                .unwrap();
        assert_eq!(got.len(), 1);
        assert_eq!((got[0].before.clone(), got[0].after.clone()), (vec!["a".to_string()], vec!["b".to_string()]));
    }
}
