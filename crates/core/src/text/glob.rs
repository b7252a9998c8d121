//! Globs matched a character at a time. globset writes its regex over bytes
//! (`(?-u)`, each non-ASCII character as its UTF-8 bytes), so a `?`, a `*`
//! boundary or a class meets one byte of a name: `docs/?.md` misses
//! `docs/ü.md` and `[éü].md` matches no file. Mastra's globs (picomatch)
//! meet characters. globset still reads the glob (its syntax and its
//! errors); its regex is compiled again with Unicode on.

use std::fmt;

/// A git pattern (`.gitignore`, `.gitattributes`) for globset: git reads
/// `{` and `}` as themselves (`*.py{}`, `{a,b}.md` name such files), globset
/// as alternatives (ripgrep#1221); each is escaped unless it already is.
pub fn literal_braces(pattern: &str) -> std::borrow::Cow<'_, str> {
    if !pattern.contains(['{', '}']) {
        return pattern.into();
    }
    let chars: Vec<char> = pattern.chars().collect();
    let mut out = String::with_capacity(pattern.len() + 4);
    let mut i = 0;
    while i < chars.len() {
        // (A class's members are themselves already: `[{]`.)
        if let Some(end) = verbatim_end(&chars, i) {
            out.extend(&chars[i..end]);
            i = end;
            continue;
        }
        if matches!(chars[i], '{' | '}') {
            out.push('\\');
        }
        out.push(chars[i]);
        i += 1;
    }
    out.into()
}

/// A glob's braces as picomatch (Mastra's globs) reads them, for globset:
/// a list (`{a,b}`, `{,a}` with `empty_alternates`) stays one, a range
/// (`{1..3}`, `{a..c}`) becomes picomatch's class, and a brace with no
/// comma (`{md}`) is itself (globset read `*.{md}` as `*.md`); one never
/// closed is left to globset, which refuses it. Escapes and classes (`[{]`)
/// are copied as they are.
pub fn picomatch_braces(glob: &str) -> String {
    if !glob.contains(['{', '}']) {
        return glob.to_string();
    }
    let chars: Vec<char> = glob.chars().collect();
    let mut out = String::with_capacity(glob.len() + 8);
    braces_into(&chars, &mut out);
    out
}

/// Classes as picomatch reads them: one of plain characters (`[slug]`, no
/// `-*+?.^${}(|)[]`) matches a member or its own text, so
/// `app/[slug]/*.tsx` finds `app/[slug]/page.tsx` (Next.js's folders) as
/// well as `app/s/page.tsx`. Written as an alternation, outside braces
/// only (globset nests none). Run over `picomatch_braces`' output.
pub fn picomatch_classes(glob: &str) -> String {
    if !glob.contains('[') {
        return glob.to_string();
    }
    let chars: Vec<char> = glob.chars().collect();
    let mut out = String::with_capacity(glob.len() + 16);
    let (mut i, mut depth) = (0, 0usize);
    while i < chars.len() {
        match chars[i] {
            '\\' => {
                let end = (i + 2).min(chars.len());
                out.extend(&chars[i..end]);
                i = end;
                continue;
            }
            '[' => {
                let Some(end) = class_end(&chars, i) else {
                    out.push('[');
                    i += 1;
                    continue;
                };
                let inner = &chars[i + 1..end];
                let plain = !inner.is_empty() && !inner.iter().any(|c| "-*+?.^${}(|)[]\\/,".contains(*c));
                if depth == 0 && plain {
                    let inner: String = inner.iter().collect();
                    out.push_str(&format!("{{[{inner}],\\[{inner}\\]}}"));
                } else {
                    out.extend(&chars[i..=end]);
                }
                i = end + 1;
                continue;
            }
            '{' => depth += 1,
            '}' => depth = depth.saturating_sub(1),
            _ => {}
        }
        out.push(chars[i]);
        i += 1;
    }
    out
}

fn braces_into(chars: &[char], out: &mut String) {
    let mut i = 0;
    while i < chars.len() {
        if let Some(end) = verbatim_end(chars, i) {
            out.extend(&chars[i..end]);
            i = end;
            continue;
        }
        match chars[i] {
            '{' => match brace_end(chars, i) {
                Some(end) => {
                    brace_group(&chars[i + 1..end], out);
                    i = end + 1;
                }
                None => {
                    out.push('{'); // (never closed: globset refuses it, a typo the caller hears of)
                    i += 1;
                }
            },
            '}' => {
                out.push_str("\\}");
                i += 1;
            }
            c => {
                out.push(c);
                i += 1;
            }
        }
    }
}

/// The inside of one `{...}`, as a list, a range's list, or itself.
fn brace_group(inner: &[char], out: &mut String) {
    let parts = split_top(inner);
    if parts.len() > 1 {
        out.push('{');
        for (n, part) in parts.iter().enumerate() {
            if n > 0 {
                out.push(',');
            }
            braces_into(part, out);
        }
        out.push('}');
    } else if let Some(class) = range_class(&inner.iter().collect::<String>()) {
        out.push_str(&class);
    } else {
        out.push_str("\\{");
        braces_into(inner, out);
        out.push_str("\\}");
    }
}

/// A range as picomatch 4 writes it: its two ends sorted, as a class
/// (`{1..3}` is `[1-3]`, `{a..B}` is `[B-a]`, `{1..10}` is `[1-10]`: one
/// character, `1` or `0`, as in Mastra). Ends of letters, digits and a
/// leading `-` only; anything else is no range.
fn range_class(text: &str) -> Option<String> {
    let (from, to) = text.split_once("..")?;
    let plain = |s: &str| !s.is_empty() && s.trim_start_matches('-').chars().all(|c| c.is_ascii_alphanumeric());
    if !plain(from) || !plain(to) {
        return None;
    }
    let (lo, hi) = if from <= to { (from, to) } else { (to, from) };
    Some(format!("[{lo}-{hi}]"))
}

/// Where what starts at `i` and is copied as it is ends (exclusive): an
/// escape (`\\{`) or a class (`[{]`; an unclosed `[` alone).
fn verbatim_end(chars: &[char], i: usize) -> Option<usize> {
    match chars[i] {
        '\\' => Some((i + 2).min(chars.len())),
        '[' => Some(class_end(chars, i).unwrap_or(i) + 1),
        _ => None,
    }
}

/// Where the `}` closing the `{` at `open` is (escapes, classes and nested braces passed over).
fn brace_end(chars: &[char], open: usize) -> Option<usize> {
    let mut depth = 0;
    let mut i = open;
    while i < chars.len() {
        match chars[i] {
            '\\' => i += 1,
            '[' => i = class_end(chars, i).unwrap_or(i),
            '{' => depth += 1,
            '}' => {
                depth -= 1;
                if depth == 0 {
                    return Some(i);
                }
            }
            _ => {}
        }
        i += 1;
    }
    None
}

/// Where the `]` closing the class at `open` is (a `]` first, or after `!`/`^`, is a member).
fn class_end(chars: &[char], open: usize) -> Option<usize> {
    let mut i = open + 1;
    if matches!(chars.get(i), Some('!' | '^')) {
        i += 1;
    }
    if chars.get(i) == Some(&']') {
        i += 1;
    }
    while i < chars.len() {
        match chars[i] {
            '\\' => i += 1,
            ']' => return Some(i),
            _ => {}
        }
        i += 1;
    }
    None
}

/// `inner` split at its commas outside nested braces, classes and escapes.
fn split_top(inner: &[char]) -> Vec<&[char]> {
    let mut parts = Vec::new();
    let (mut depth, mut start, mut i) = (0, 0, 0);
    while i < inner.len() {
        match inner[i] {
            '\\' => i += 1,
            '[' => i = class_end(inner, i).unwrap_or(i),
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(&inner[start..i]);
                start = i + 1;
            }
            _ => {}
        }
        i += 1;
    }
    parts.push(&inner[start.min(inner.len())..]);
    parts
}

/// A compiled glob, matched against `/`-separated paths.
#[derive(Clone)]
pub struct Glob {
    glob: String,
    regex: regex::Regex,
    /// A path that is this text matches whatever its glob says (`also_literally`).
    literal: Option<String>,
}

impl Glob {
    /// Compiles what `builder` reads from its glob.
    /// Fails with a message of at most `MAX_MESSAGE` characters (globset's
    /// quotes the glob, which may be megabytes long), never panics (globset's
    /// own `compile_matcher` does past the regex size limit).
    pub fn build(builder: &globset::GlobBuilder) -> Result<Glob, String> {
        Glob::compiled(builder, false)
    }

    /// `build`, where `x/**` names the folder `x` too, as picomatch reads it
    /// (globset, and git, only what is inside).
    pub fn build_picomatch(builder: &globset::GlobBuilder) -> Result<Glob, String> {
        Glob::compiled(builder, true)
    }

    fn compiled(builder: &globset::GlobBuilder, folder_too: bool) -> Result<Glob, String> {
        let parsed = builder.build().map_err(|e| short(e.to_string()))?;
        let mut pattern = by_character(parsed.regex());
        if folder_too && parsed.glob().ends_with("/**") {
            if let Some(stem) = pattern.strip_suffix("/.*$") {
                pattern = format!("{stem}(?:/.*)?$");
            }
        }
        let regex =
            regex::RegexBuilder::new(&pattern).dot_matches_new_line(true).build().map_err(|e| short(e.to_string()))?;
        Ok(Glob { glob: parsed.glob().to_string(), regex, literal: None })
    }

    /// Also matches the path spelled exactly as `text`: picomatch tries a
    /// glob as a plain path first, so `app/[id]/page.tsx` names that file.
    pub fn also_literally(mut self, text: &str) -> Glob {
        self.literal = Some(text.to_string());
        self
    }

    pub fn is_match(&self, path: &str) -> bool {
        self.literal.as_deref() == Some(path) || self.regex.is_match(path)
    }

    /// The glob as the caller wrote it (`also_literally`'s text), else as
    /// given to the builder.
    pub fn glob(&self) -> &str {
        self.literal.as_deref().unwrap_or(&self.glob)
    }
}

impl fmt::Debug for Glob {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Glob({:?})", self.glob)
    }
}

const MAX_MESSAGE: usize = 300;

fn short(message: String) -> String {
    match message.char_indices().nth(MAX_MESSAGE) {
        Some((at, _)) => format!("{}…", &message[..at]),
        None => message,
    }
}

/// globset's byte regex as a Unicode one: without its leading `(?-u)`, and
/// each run of `\xHH` escapes (which globset writes only for the bytes of a
/// non-ASCII character) read back into that character.
fn by_character(byte_regex: &str) -> String {
    let body = byte_regex.strip_prefix("(?-u)").unwrap_or(byte_regex);
    let mut out = String::with_capacity(body.len());
    let mut bytes: Vec<u8> = Vec::new();
    let mut chars = body.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\\' && chars.peek() == Some(&'x') {
            chars.next();
            let hex: String = chars.by_ref().take(2).collect();
            bytes.push(u8::from_str_radix(&hex, 16).unwrap_or(b'?'));
            continue;
        }
        flush_character(&mut bytes, &mut out);
        out.push(c);
        if c == '\\' {
            // An escaped character (`\\`, `\.`) is copied whole.
            out.extend(chars.next());
        }
    }
    flush_character(&mut bytes, &mut out);
    out
}

fn flush_character(bytes: &mut Vec<u8>, out: &mut String) {
    if !bytes.is_empty() {
        out.push_str(&regex::escape(&String::from_utf8_lossy(bytes)));
        bytes.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn glob(pattern: &str) -> Glob {
        Glob::build(globset::GlobBuilder::new(pattern).literal_separator(true).backslash_escape(true)).unwrap()
    }

    #[test]
    fn wildcards_and_classes_meet_characters() {
        assert!(glob("docs/?.md").is_match("docs/ü.md"));
        assert!(!glob("docs/?.md").is_match("docs/üü.md"));
        assert!(glob("docs/??.md").is_match("docs/日本.md"));
        assert!(glob("[éü].md").is_match("ü.md"));
        assert!(!glob("[éü].md").is_match("a.md"));
        assert!(glob("[!ü].md").is_match("é.md"));
        assert!(!glob("[!ü].md").is_match("ü.md"));
        assert!(glob("[à-ü].md").is_match("é.md"));
        assert!(glob("über/*.md").is_match("über/ß.md"));
        assert!(!glob("über/*.md").is_match("uber/a.md"));
        assert!(!glob("*.md").is_match("a/b.md"), "a separator stays literal");
        assert!(glob("**/*.md").is_match("a/b/ü.md"));
    }

    fn picomatch(pattern: &str) -> Glob {
        let text = picomatch_classes(&picomatch_braces(pattern));
        let builder = globset::GlobBuilder::new(&text)
            .literal_separator(true)
            .empty_alternates(true)
            .backslash_escape(true)
            .clone();
        Glob::build_picomatch(&builder).unwrap().also_literally(pattern)
    }

    #[test]
    fn a_class_of_plain_characters_also_matches_its_own_text_as_picomatch_reads_it() {
        // From a grep hunt: Next.js's route folders, given to grep as a glob.
        let slug = picomatch("app/[slug]/*.tsx");
        assert!(slug.is_match("app/[slug]/page.tsx") && slug.is_match("app/s/page.tsx"));
        assert!(!slug.is_match("app/x/page.tsx"));
        let two = picomatch("app/[id]/[x]/*.tsx");
        assert!(two.is_match("app/[id]/x/p.tsx") && two.is_match("app/i/[x]/p.tsx"));
        assert!(picomatch("src/a[1].ts").is_match("src/a1.ts") && picomatch("src/a[1].ts").is_match("src/a[1].ts"));
        assert!(picomatch("a/[!b]/c").is_match("a/[!b]/c"));
        // A range or a class with picomatch's special characters is a class only.
        assert!(!picomatch("app/[a-z]/*.tsx").is_match("app/[a-z]/page.tsx"));
        assert!(!picomatch("app/[...slug]/*.tsx").is_match("app/[...slug]/x.tsx"));
        assert!(picomatch("app/[...slug]/x.tsx").is_match("app/[...slug]/x.tsx"), "the whole path as written");
        assert_eq!(picomatch_classes(r"\[a]{b,[c]}[x,y]"), r"\[a]{b,[c]}[x,y]");
    }

    #[test]
    fn braces_as_picomatch_reads_them() {
        assert_eq!(picomatch_braces("docs/{a..c}.md"), "docs/[a-c].md");
        assert_eq!(picomatch_braces("v{3..1}"), "v[1-3]");
        assert_eq!(picomatch_braces("v{1..10}"), "v[1-10]");
        assert_eq!(picomatch_braces("v{0..-9223372036854775808}"), "v[-9223372036854775808-0]");
        assert_eq!(picomatch_braces("{a..b*}"), r"\{a..b*\}");
        assert_eq!(picomatch_braces("*.{md}"), r"*.\{md\}");
        assert_eq!(picomatch_braces("{a,{b..c}}x"), "{a,[b-c]}x");
        assert_eq!(picomatch_braces("[{]{a"), "[{]{a");
        assert_eq!(picomatch_braces(r"\{a,b}"), r"\{a,b\}");
        assert!(picomatch("docs/{,a}b.md").is_match("docs/b.md") && picomatch("docs/{,a}b.md").is_match("docs/ab.md"));
        assert!(!picomatch("docs/*.{md}").is_match("docs/a.md") && picomatch("docs/*.{md}").is_match("docs/a.{md}"));
        assert!(picomatch("docs/{a..c}.md").is_match("docs/b.md"));
        assert!(picomatch("docs/[x].md").is_match("docs/[x].md") && picomatch("docs/[x].md").is_match("docs/x.md"));
        assert!(picomatch("**/sub/**").is_match("docs/sub") && picomatch("**/sub/**").is_match("docs/sub/a.md"));
        assert!(!picomatch("**/sub/**").is_match("docs/subway"));
    }

    #[test]
    fn git_patterns_keep_their_braces() {
        assert_eq!(literal_braces("*.py{}"), r"*.py\{\}");
        assert_eq!(literal_braces(r"a\{b,c}"), r"a\{b,c\}");
        assert_eq!(literal_braces(r"a\\{b}"), r"a\\\{b\}");
        assert_eq!(literal_braces("plain/*.md"), "plain/*.md");
        assert_eq!(literal_braces("[{]x{"), r"[{]x\{");
        assert!(glob(&literal_braces("{a,b}.md")).is_match("{a,b}.md"));
        assert!(!glob(&literal_braces("{a,b}.md")).is_match("a.md"));
    }

    #[test]
    fn escapes_stay_what_they_were() {
        assert!(glob(r"a\*b").is_match("a*b"));
        assert!(!glob(r"a\*b").is_match("axb"));
        assert!(glob(r"\\x41").is_match(r"\x41"), "a backslash before x is not a byte escape");
        assert!(glob("a.b").is_match("a.b") && !glob("a.b").is_match("axb"));
        assert_eq!(glob("docs/?.md").glob(), "docs/?.md");
        assert!(Glob::build(&globset::GlobBuilder::new("a[")).is_err());
        // Past the regex size limit: an error, short, not a panic.
        let huge = "*".repeat(100_000);
        let e = Glob::build(&globset::GlobBuilder::new(&huge)).unwrap_err();
        assert!(e.chars().count() <= 301, "{e}");
        let e = Glob::build(&globset::GlobBuilder::new(&format!("{}[", "a".repeat(5000)))).unwrap_err();
        assert!(e.starts_with("error parsing glob") && e.chars().count() <= 301, "{e}");
    }
}
