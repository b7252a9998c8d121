//! A JavaScript `RegExp` source (no `u`/`v` flag, Annex B syntax, as
//! Mastra's grep compiles it with `g` or `gi`) rewritten as a Rust pattern
//! with the same matches on every line.
//!
//! Two rewrites make one search over a whole text equal to `regex.exec`
//! once per line: nothing may match a line feed (every class and escape
//! leaves `\n` out, and a literal `\n` never matches: a line has none), and
//! `^` / `$` become line anchors (`(?m)`), so a text is searched once and
//! each match is already confined to its line. JavaScript's ASCII `\d`,
//! `\w`, `\b` and its `\s` and `.` sets are spelled out, since Rust's are
//! Unicode's. Look-around and back-references need the backtracking engine
//! (`fancy-regex`); everything else runs on `regex`'s automata. What this
//! cannot rewrite faithfully is refused (`Unsupported`), so that a caller
//! such as Mastra's grep tool falls back to JavaScript.
//!
//! `translate_split` reads a `splitPattern` the same way for a whole text:
//! line feeds are then characters like any other (`\s` holds one), and the
//! RegExp's own flags (`i`, `m`, `s`) apply.

/// A pattern in Rust's syntax, and whether it needs backtracking.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Translated {
    pub pattern: String,
    pub backtracking: bool,
    /// The pattern names a character of U+E000-U+E7FF, the stand-ins of
    /// surrogates (`stand_in`): a text holding real ones is not searched.
    pub stand_ins: bool,
    /// The pattern names characters beyond U+FFFF or surrogates (their
    /// stand-ins), and real characters of U+E000-U+E7FF or a range ending
    /// among them: a text holding the other kind could be confused with it.
    pub surrogates: bool,
    pub private_use: bool,
}

/// JavaScript without the `u` flag sees a character beyond U+FFFF as two
/// UTF-16 units (a surrogate pair), and `.`, `[^x]` or `\S` match each half.
/// Such characters become two stand-ins, in the pattern (before it is read)
/// and in the texts it searches (`search::search_text`): surrogate
/// D800-DFFF is private-use character E000-E7FF, contiguous, so ranges and
/// classes keep their meaning, and each stand-in is one UTF-16 unit, so
/// columns stay JavaScript's.
pub fn stand_in(unit: u32) -> char {
    char::from_u32(0xE000 + (unit - 0xD800)).expect("a private-use character")
}

/// A character as JavaScript's units: itself, or its two stand-ins.
pub fn units(c: char) -> [Option<char>; 2] {
    let v = c as u32;
    if v < 0x10000 {
        return [Some(c), None];
    }
    let u = v - 0x10000;
    [Some(stand_in(0xD800 + (u >> 10))), Some(stand_in(0xDC00 + (u & 0x3FF)))]
}

/// Whether `c` is one of the stand-ins' range.
pub fn is_stand_in_range(c: char) -> bool {
    ('\u{E000}'..='\u{E7FF}').contains(&c)
}

/// Why a JavaScript pattern is not rewritten.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PatternError {
    /// Valid JavaScript that this rewrite does not reproduce exactly.
    #[error("/{pattern}/ cannot run natively: {reason}")]
    Unsupported { pattern: String, reason: String },
}

/// `[A-Za-z0-9_]`, immune to `(?i)` (JavaScript's `\w` stays ASCII under `i`).
const WORD: &str = "A-Za-z0-9_";
/// JavaScript's `\s` (WhiteSpace and LineTerminator) without the line feed.
const SPACE: &str = r"\t\x0B\x0C\r \xA0\x{1680}\x{2000}-\x{200A}\x{2028}\x{2029}\x{202F}\x{205F}\x{3000}\x{FEFF}";
/// A class that matches nothing (a line feed, or JavaScript's `[]`).
const NOTHING: &str = "[a&&b]";

/// How a pattern is read: for grep's lines, or for a whole text.
#[derive(Clone, Copy)]
struct Reading {
    /// Each line searched on its own: nothing may match a line feed.
    lines: bool,
    /// `.` matches every character (JavaScript's `s` flag).
    dot_all: bool,
}

/// A grep pattern, matched on each line as `regex.exec` matches it.
pub fn translate(source: &str, case_insensitive: bool) -> Result<Translated, PatternError> {
    let flags = if case_insensitive { "(?mi)" } else { "(?m)" };
    translate_as(source, flags, Reading { lines: true, dot_all: false })
}

/// A `splitPattern` (a RegExp's `source` and `flags`), matched on a whole
/// text as JavaScript's `split` matches it. A pattern naming characters
/// beyond U+FFFF is refused: its halves would need the text's stand-ins;
/// so is one with the `u` or `v` flag, whose syntax (`\p{L}`, `\u{1F600}`)
/// this reading of Annex B's does not know.
pub fn translate_split(source: &str, flags: &str) -> Result<Translated, PatternError> {
    if flags.contains(['u', 'v']) {
        return Err(PatternError::Unsupported { pattern: source.to_string(), reason: "the u or v flag".into() });
    }
    let inline: String = flags.chars().filter(|f| matches!(f, 'i' | 'm')).collect();
    let prefix = if inline.is_empty() { String::new() } else { format!("(?{inline})") };
    let t = translate_as(source, &prefix, Reading { lines: false, dot_all: flags.contains('s') })?;
    if t.surrogates || t.stand_ins || t.private_use {
        return Err(PatternError::Unsupported {
            pattern: source.to_string(),
            reason: "characters beyond U+FFFF, or their surrogates".into(),
        });
    }
    Ok(t)
}

fn translate_as(source: &str, flags: &str, reading: Reading) -> Result<Translated, PatternError> {
    // JavaScript's units: a character beyond U+FFFF is two atoms.
    let chars: Vec<char> = source.chars().flat_map(units).flatten().collect();
    let stand_ins = chars.iter().copied().any(is_stand_in_range);
    let surrogates = source.chars().any(|c| c as u32 >= 0x10000);
    let private_use = source.chars().any(is_stand_in_range);
    let groups = count_groups(&chars);
    if may_refer_unset_group(&chars, groups) {
        return Err(PatternError::Unsupported {
            pattern: source.to_string(),
            reason: "a back-reference to a group that may not have matched (JavaScript matches it empty)".into(),
        });
    }
    // `\b` is `(?-u:\b)` on the automata; `fancy-regex` cannot turn
    // Unicode off inline, so a pattern found to need backtracking is read
    // again with its boundaries spelled in look-around.
    let read = |lookaround_boundaries: bool| -> Result<Translator, PatternError> {
        let mut t = Translator {
            src: source,
            chars: chars.clone(),
            at: 0,
            out: String::new(),
            backtracking: false,
            groups,
            named: false,
            stand_ins,
            surrogates,
            private_use,
            lookaround_boundaries,
            ascii_boundary: false,
            depth: 0,
            reading,
        };
        t.named = source.contains("(?<") && t.has_named_group();
        t.alternation()?;
        if t.at < t.chars.len() {
            return Err(t.unsupported("unbalanced parenthesis"));
        }
        Ok(t)
    };
    let mut t = read(false)?;
    if t.backtracking && t.ascii_boundary {
        t = read(true)?;
    }
    Ok(Translated {
        pattern: format!("{flags}{}", t.out),
        backtracking: t.backtracking,
        stand_ins: t.stand_ins,
        surrogates: t.surrogates,
        private_use: t.private_use,
    })
}

struct Translator<'a> {
    src: &'a str,
    chars: Vec<char>,
    at: usize,
    out: String,
    backtracking: bool,
    /// Capturing groups in the whole pattern (a `\N` beyond them is not a back-reference).
    groups: usize,
    named: bool,
    stand_ins: bool,
    surrogates: bool,
    private_use: bool,
    /// Spell `\b` / `\B` with look-around (for `fancy-regex`).
    lookaround_boundaries: bool,
    /// A `(?-u:\b)` was written (the automata's spelling).
    ascii_boundary: bool,
    /// Groups open around the one read now.
    depth: usize,
    reading: Reading,
}

/// Groups nested deeper are refused, as the regex crate refuses them (its
/// `nest_limit`), before this reading's recursion can run out of stack.
const MAX_NESTING: usize = 250;

/// Capturing groups: `(` not followed by `?`, or `(?<name>`.
fn count_groups(chars: &[char]) -> usize {
    let (mut n, mut i, mut in_class) = (0, 0, false);
    while i < chars.len() {
        match chars[i] {
            '\\' => i += 1,
            '[' => in_class = true,
            ']' => in_class = false,
            '(' if !in_class => {
                let next = chars.get(i + 1);
                let named = next == Some(&'?')
                    && chars.get(i + 2) == Some(&'<')
                    && !matches!(chars.get(i + 3), Some('=' | '!'));
                if next != Some(&'?') || named {
                    n += 1;
                }
            }
            _ => {}
        }
        i += 1;
    }
    n
}

/// Whether a back-reference may refer to a group that has not matched:
/// JavaScript then matches it as empty, `fancy-regex` not at all, and no
/// line would show the miss. A group in an alternative, an optional group,
/// a negative look-around, a reference before its group closes or inside a
/// look-behind (JavaScript matches those right to left), or a named
/// reference: any of them refuses the pattern.
fn may_refer_unset_group(chars: &[char], groups: usize) -> bool {
    let has_ref = chars.windows(2).any(|w| w[0] == '\\' && (matches!(w[1], '1'..='9') || w[1] == 'k'));
    if !has_ref {
        return false;
    }
    let at = |i: usize, s: &str| s.chars().enumerate().all(|(k, c)| chars.get(i + k) == Some(&c));
    let (mut open, mut closed): (Vec<(usize, bool)>, Vec<usize>) = (Vec::new(), Vec::new());
    let (mut count, mut risky, mut in_class, mut refs) = (0usize, false, false, Vec::new());
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c == '\\' {
            let digits: String = chars[i + 1..].iter().take_while(|d| d.is_ascii_digit()).collect();
            if !in_class && !digits.is_empty() && !digits.starts_with('0') {
                let n: usize = digits.parse().unwrap_or(usize::MAX);
                refs.push((n, closed.contains(&n) && !open.iter().any(|&(_, behind)| behind)));
                i += digits.len();
            } else {
                if !in_class && chars.get(i + 1) == Some(&'k') {
                    return true;
                }
                i += 1;
            }
        } else if in_class {
            in_class = c != ']';
        } else if c == '[' {
            in_class = true;
        } else if c == '|' {
            risky = true;
        } else if c == '(' {
            risky |= at(i, "(?!") || at(i, "(?<!");
            let behind = at(i, "(?<=") || at(i, "(?<!");
            let named = at(i, "(?<") && !behind;
            let capturing = chars.get(i + 1) != Some(&'?') || named;
            count += usize::from(capturing);
            open.push((if capturing { count } else { 0 }, behind));
        } else if c == ')' {
            if let Some((n, _)) = open.pop() {
                if n > 0 {
                    closed.push(n);
                }
            }
            let next = chars.get(i + 1).copied();
            risky |= matches!(next, Some('?' | '*')) || at(i + 1, "{0,") || at(i + 1, "{0}");
        }
        i += 1;
    }
    let live: Vec<&(usize, bool)> = refs.iter().filter(|(n, _)| *n <= groups).collect();
    !live.is_empty() && (risky || live.iter().any(|(_, set)| !set))
}

impl Translator<'_> {
    fn unsupported(&self, reason: &str) -> PatternError {
        PatternError::Unsupported { pattern: self.src.to_string(), reason: reason.to_string() }
    }

    fn has_named_group(&self) -> bool {
        self.chars.windows(3).any(|w| w[0] == '(' && w[1] == '?' && w[2] == '<')
    }

    fn peek(&self) -> Option<char> {
        self.chars.get(self.at).copied()
    }

    fn alternation(&mut self) -> Result<(), PatternError> {
        loop {
            self.sequence()?;
            if self.peek() == Some('|') {
                self.at += 1;
                self.out.push('|');
            } else {
                return Ok(());
            }
        }
    }

    fn sequence(&mut self) -> Result<(), PatternError> {
        while let Some(c) = self.peek() {
            match c {
                '|' | ')' => return Ok(()),
                '(' => self.group()?,
                '[' => self.class()?,
                '\\' => self.escape()?,
                '.' => {
                    self.at += 1;
                    self.out.push_str(if self.reading.dot_all { "(?s:.)" } else { r"[^\n\r\x{2028}\x{2029}]" });
                }
                '^' | '$' => {
                    self.at += 1;
                    self.out.push(c);
                }
                '*' | '+' | '?' => {
                    self.at += 1;
                    self.out.push(c);
                    self.lazy();
                }
                '{' => self.brace(),
                _ => {
                    self.at += 1;
                    self.literal(c);
                }
            }
        }
        Ok(())
    }

    /// A `?` after a quantifier (lazy) is kept.
    fn lazy(&mut self) {
        if self.peek() == Some('?') {
            self.at += 1;
            self.out.push('?');
        }
    }

    /// `{n}`, `{n,}`, `{n,m}` are quantifiers; any other `{` is a literal (Annex B).
    fn brace(&mut self) {
        let rest: String = self.chars[self.at..].iter().take_while(|&&c| c != '}').collect();
        let closed = self.chars.get(self.at + rest.chars().count()) == Some(&'}');
        let body = &rest[1..];
        let (lo, hi) = body.split_once(',').unwrap_or((body, body));
        let number = |s: &str| !s.is_empty() && s.chars().all(|c| c.is_ascii_digit());
        if closed && number(lo) && (hi.is_empty() || number(hi)) {
            self.at += rest.chars().count() + 1;
            self.out.push_str(&rest);
            self.out.push('}');
            self.lazy();
        } else {
            self.at += 1;
            self.out.push_str(r"\{");
        }
    }

    fn literal(&mut self, c: char) {
        match c {
            '\n' if self.reading.lines => self.out.push_str(NOTHING),
            _ => self.out.push_str(&regex_syntax_escape(c)),
        }
    }

    /// A line feed to leave out of a negated set (`[^...\n]`), when lines
    /// are read.
    fn no_line_feed(&self) -> &'static str {
        if self.reading.lines {
            r"\n"
        } else {
            ""
        }
    }

    fn group(&mut self) -> Result<(), PatternError> {
        let rest: String = self.chars[self.at..].iter().take(4).collect();
        let (open, backtracking) = if rest.starts_with("(?:") {
            ("(?:", false)
        } else if rest.starts_with("(?=") || rest.starts_with("(?!") {
            (&rest[..3], true)
        } else if rest.starts_with("(?<=") || rest.starts_with("(?<!") {
            (&rest[..4], true)
        } else if rest.starts_with("(?<") {
            ("(?<", false)
        } else if rest.starts_with("(?") {
            return Err(self.unsupported("group modifiers"));
        } else {
            ("(", false)
        };
        self.at += open.chars().count();
        self.out.push_str(open);
        self.backtracking |= backtracking;
        if open == "(?<" {
            let name: String = self.chars[self.at..].iter().take_while(|&&c| c != '>').collect();
            if name.is_empty()
                || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '$')
                || name.contains('$')
            {
                return Err(self.unsupported("a group name outside [A-Za-z0-9_]"));
            }
            self.at += name.chars().count() + 1;
            self.out.push_str(&name);
            self.out.push('>');
        }
        if self.depth == MAX_NESTING {
            return Err(self.unsupported(&format!("groups nested more than {MAX_NESTING} deep")));
        }
        self.depth += 1;
        self.alternation()?;
        self.depth -= 1;
        if self.peek() != Some(')') {
            return Err(self.unsupported("unbalanced parenthesis"));
        }
        self.at += 1;
        self.out.push(')');
        Ok(())
    }

    fn escape(&mut self) -> Result<(), PatternError> {
        self.at += 1;
        let Some(c) = self.peek() else { return Err(self.unsupported("a trailing backslash")) };
        self.at += 1;
        match c {
            'd' => self.out.push_str("(?-i:[0-9])"),
            'D' => self.out.push_str(&format!("(?-i:[^0-9{}])", self.no_line_feed())),
            'w' => self.out.push_str(&format!("(?-i:[{WORD}])")),
            'W' => self.out.push_str(&format!("(?-i:[^{WORD}{}])", self.no_line_feed())),
            // (A whole text's `\s` holds its line feeds, and `\S` none.)
            's' if self.reading.lines => self.out.push_str(&format!("[{SPACE}]")),
            's' => self.out.push_str(&format!(r"[{SPACE}\n]")),
            'S' => self.out.push_str(&format!(r"[^{SPACE}\n]")),
            'b' | 'B' => self.boundary(c == 'b'),
            'k' if self.named => {
                let name: String = self.chars[self.at..].iter().take_while(|&&c| c != '>').collect();
                if !name.starts_with('<') {
                    return Err(self.unsupported(r"\k without a group name"));
                }
                self.at += name.chars().count() + 1;
                self.out.push_str(&format!(r"\k{name}>"));
                self.backtracking = true;
            }
            '1'..='9' => self.backreference(c)?,
            _ => match self.escaped_char(c)? {
                '\n' if self.reading.lines => self.out.push_str(NOTHING),
                ch => self.out.push_str(&regex_syntax_escape(ch)),
            },
        }
        Ok(())
    }

    /// `\1`..: a back-reference when that many groups exist; Annex B's
    /// octal reading otherwise is refused.
    fn backreference(&mut self, first: char) -> Result<(), PatternError> {
        let mut digits = first.to_string();
        while let Some(d) = self.peek().filter(char::is_ascii_digit) {
            digits.push(d);
            self.at += 1;
        }
        let n: usize = digits.parse().unwrap_or(usize::MAX);
        if n > self.groups {
            return Err(self.unsupported("an octal escape or a reference to a missing group"));
        }
        self.out.push_str(&format!(r"\{n}"));
        self.backtracking = true;
        Ok(())
    }

    /// `\b` / `\B` at ASCII word edges, as JavaScript tells them.
    fn boundary(&mut self, word: bool) {
        if !self.lookaround_boundaries {
            self.ascii_boundary = true;
            self.out.push_str(if word { r"(?-u:\b)" } else { r"(?-u:\B)" });
            return;
        }
        let w = format!("(?-i:[{WORD}])");
        self.out.push_str(&if word {
            format!("(?:(?<={w})(?!{w})|(?<!{w})(?={w}))")
        } else {
            format!("(?:(?<={w})(?={w})|(?<!{w})(?!{w}))")
        });
    }

    /// One escaped character (outside or inside a class): the control and
    /// code escapes, or the character itself (an identity escape).
    fn escaped_char(&mut self, c: char) -> Result<char, PatternError> {
        Ok(match c {
            'n' => '\n',
            'r' => '\r',
            't' => '\t',
            'v' => '\x0B',
            'f' => '\x0C',
            '0' if !self.peek().is_some_and(|d| d.is_ascii_digit()) => '\0',
            '0' => return Err(self.unsupported("an octal escape")),
            'x' => self.hex(2).unwrap_or('x'),
            'u' => self.hex(4).unwrap_or('u'),
            'c' => match self.peek().filter(char::is_ascii_alphabetic) {
                Some(l) => {
                    self.at += 1;
                    char::from(l as u8 % 32)
                }
                None => return Err(self.unsupported(r"\c without a letter")),
            },
            _ => c,
        })
    }

    /// `count` hex digits after the escape, as one character (a surrogate
    /// as its stand-in); `None` when they are not there (Annex B: `\x`
    /// alone is `x`).
    fn hex(&mut self, count: usize) -> Option<char> {
        let digits: String = self.chars.get(self.at..self.at + count)?.iter().collect();
        let v = u32::from_str_radix(&digits, 16).ok().filter(|_| digits.chars().all(|c| c.is_ascii_hexdigit()))?;
        let ch = match v {
            0xD800..=0xDFFF => stand_in(v),
            _ => char::from_u32(v)?,
        };
        self.stand_ins |= is_stand_in_range(ch);
        self.surrogates |= (0xD800..=0xDFFF).contains(&v);
        self.private_use |= (0xE000..=0xE7FF).contains(&v);
        self.at += count;
        Some(ch)
    }

    /// `[...]`: each item spelled for Rust, a line feed left out.
    fn class(&mut self) -> Result<(), PatternError> {
        self.at += 1;
        let negated = self.peek() == Some('^');
        if negated {
            self.at += 1;
        }
        let mut items = String::new();
        let mut first = true;
        loop {
            let Some(c) = self.peek() else { return Err(self.unsupported("an unterminated class")) };
            if c == ']' {
                self.at += 1;
                break;
            }
            let lo = self.class_atom(&mut items, first)?;
            first = false;
            let Some(lo) = lo else { continue };
            // A range `a-z` (a `-` before `]` is a literal).
            if self.peek() == Some('-') && self.chars.get(self.at + 1).is_some_and(|&n| n != ']') {
                let save = self.at;
                self.at += 1;
                let mut scratch = String::new();
                match self.class_atom(&mut scratch, false)? {
                    Some(hi) if hi >= lo => {
                        // A range ending among the stand-ins covers part of them.
                        self.private_use |= is_stand_in_range(lo) || is_stand_in_range(hi);
                        items.push_str(&format!("{}-{}", class_escape(lo), class_escape(hi)));
                        continue;
                    }
                    Some(_) => return Err(self.unsupported("a class range out of order")),
                    // `[a-\d]`: Annex B reads `-` literally.
                    None => {
                        self.at = save;
                    }
                }
            }
            items.push_str(&class_escape(lo));
        }
        self.out.push_str(&match (negated, items.is_empty(), self.reading.lines) {
            (false, true, _) => NOTHING.to_string(),
            (true, true, true) => r"[^\n]".to_string(),
            (true, true, false) => "(?s:.)".to_string(),
            (false, false, true) => format!(r"[{items}&&[^\n]]"),
            (false, false, false) => format!("[{items}]"),
            (true, false, _) => format!("[^{items}{}]", self.no_line_feed()),
        });
        Ok(())
    }

    /// One item of a class: a character (returned, for ranges), or a set
    /// escape written into `items` (returns `None`).
    fn class_atom(&mut self, items: &mut String, _first: bool) -> Result<Option<char>, PatternError> {
        let c = self.chars[self.at];
        self.at += 1;
        if c != '\\' {
            return Ok(Some(c));
        }
        let Some(e) = self.peek() else { return Err(self.unsupported("a trailing backslash")) };
        self.at += 1;
        let set = match e {
            'd' => "0-9".to_string(),
            'w' => WORD.to_string(),
            's' => format!(r"{SPACE}\n"),
            'D' => r"[^0-9]".to_string(),
            'W' => format!("[^{WORD}]"),
            'S' => format!(r"[^{SPACE}\n]"),
            'b' => return Ok(Some('\x08')),
            '1'..='9' => return Err(self.unsupported("an octal escape in a class")),
            _ => return self.escaped_char(e).map(Some),
        };
        items.push_str(&set);
        Ok(None)
    }
}

/// One character as a Rust literal.
fn regex_syntax_escape(c: char) -> String {
    if c.is_ascii_punctuation() || c == ' ' || c == '#' {
        if r"\.+*?()|[]{}^$#&-~".contains(c) {
            return format!(r"\{c}");
        }
        return c.to_string();
    }
    if c.is_control() || c.is_whitespace() {
        return format!(r"\x{{{:X}}}", c as u32);
    }
    c.to_string()
}

/// One character inside a Rust class.
fn class_escape(c: char) -> String {
    if r"\[]^-&~".contains(c) || c.is_control() || c.is_whitespace() {
        return format!(r"\x{{{:X}}}", c as u32);
    }
    c.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(s: &str) -> String {
        translate(s, false).unwrap().pattern
    }

    #[test]
    fn spells_out_javascript_classes_without_line_feeds() {
        assert_eq!(t(r"\d+"), "(?m)(?-i:[0-9])+");
        assert_eq!(t(r"a.b"), r"(?m)a[^\n\r\x{2028}\x{2029}]b");
        assert_eq!(t(r"[^a]"), r"(?m)[^a\n]");
        assert_eq!(t(r"[]"), "(?m)[a&&b]");
        assert_eq!(t(r"[^]"), r"(?m)[^\n]");
        assert_eq!(t(r"a\nb"), "(?m)a[a&&b]b");
    }

    #[test]
    fn groups_nested_too_deep_are_refused_not_read_until_the_stack_runs_out() {
        let nested = |n: usize| format!("{}a{}", "(?:".repeat(n), ")".repeat(n));
        assert!(translate(&nested(MAX_NESTING), false).is_ok());
        for n in [MAX_NESTING + 1, 100_000] {
            let e = translate(&nested(n), false).unwrap_err().to_string();
            assert!(e.ends_with("cannot run natively: groups nested more than 250 deep"), "{n}: {e}");
        }
    }

    #[test]
    fn annex_b_braces_and_escapes_are_literals() {
        assert_eq!(t(r"a{2,3}"), "(?m)a{2,3}");
        assert_eq!(t(r"a{x}"), r"(?m)a\{x\}");
        assert_eq!(t(r"\x41\u00e9\/"), "(?m)Aé/");
        // Beyond U+FFFF: two units, as JavaScript reads them, written or escaped.
        assert_eq!(t(r"\uD83D\uDE00"), t("😀"));
        assert_eq!(t("😀"), "(?m)\u{E03D}\u{E600}");
        assert!(translate("😀", false).unwrap().stand_ins && !translate("a", false).unwrap().stand_ins);
    }

    #[test]
    fn look_around_and_back_references_backtrack() {
        assert!(translate(r"(a)\1", false).unwrap().backtracking);
        assert!(translate(r"foo(?=bar)", false).unwrap().backtracking);
        assert!(!translate(r"(?:a|b)+", false).unwrap().backtracking);
        assert!(translate(r"\2(a)", false).is_err());
        // JavaScript matches a reference to an unset group as empty.
        for p in [r"(q)?zz\1", r"(a)|\1", r"(?<=(o)\1)b", r"(?<q>z)\k<q>", r"(?!(a))\1"] {
            assert!(translate(p, false).is_err(), "{p}");
        }
        assert!(translate(r"(\w)\1", false).is_ok());
        // A literal backslash and 1 is no back-reference: `\b` stays the automata's.
        let t = translate(r"\\1\bx", false).unwrap();
        assert!(!t.backtracking && t.pattern.contains(r"(?-u:\b)"), "{}", t.pattern);
        let t = translate(r"\bx(?=y)", false).unwrap();
        assert!(t.backtracking && !t.pattern.contains("(?-u:"), "{}", t.pattern);
        assert!(translate(r"(?i:a)", false).is_err());
    }
}
