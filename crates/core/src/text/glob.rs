//! Globs matched a character at a time. globset writes its regex over bytes
//! (`(?-u)`, each non-ASCII character as its UTF-8 bytes), so a `?`, a `*`
//! boundary or a class meets one byte of a name: `docs/?.md` misses
//! `docs/ü.md` and `[éü].md` matches no file. Mastra's globs (picomatch)
//! meet characters. globset still reads the glob (its syntax and its
//! errors); its regex is compiled again with Unicode on.

use std::fmt;

/// A compiled glob, matched against `/`-separated paths.
#[derive(Clone)]
pub struct Glob {
    glob: String,
    regex: regex::Regex,
}

impl Glob {
    /// Compiles what `builder` reads from its glob.
    /// Fails with a message of at most `MAX_MESSAGE` characters (globset's
    /// quotes the glob, which may be megabytes long), never panics (globset's
    /// own `compile_matcher` does past the regex size limit).
    pub fn build(builder: &globset::GlobBuilder) -> Result<Glob, String> {
        let parsed = builder.build().map_err(|e| short(e.to_string()))?;
        let regex = regex::RegexBuilder::new(&by_character(parsed.regex()))
            .dot_matches_new_line(true)
            .build()
            .map_err(|e| short(e.to_string()))?;
        Ok(Glob { glob: parsed.glob().to_string(), regex })
    }

    pub fn is_match(&self, path: &str) -> bool {
        self.regex.is_match(path)
    }

    /// The glob as written.
    pub fn glob(&self) -> &str {
        &self.glob
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
