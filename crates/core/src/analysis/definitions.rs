//! The names a source file defines (functions, methods, classes, structs,
//! traits, interfaces, types, constants, macros), found line by line the
//! way ctags finds tags: a declaration keyword after the line's modifiers,
//! then a name. Zoekt takes its symbols from universal-ctags, which works
//! the same way. A tree-sitter parse was measured first (official
//! grammars, 0.25, this machine, the bench's mixed corpus): Python 6.9,
//! Rust 5.6, JavaScript 4.8, C headers 3.6 MB/s per core, against the
//! 43 MB per CPU-second `init()` analyses today: 7-12 times the cost of
//! indexing, where the budget was 15%. This pass reads only each line's
//! first words.

/// Changes when what is found changes (the snapshot fingerprint: a saved
/// index built by another version is built again).
pub const VERSION: u32 = 2;

/// The family of a file's language, by its extension.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lang {
    Rust,
    Go,
    /// JavaScript, TypeScript and their JSX forms.
    Script,
    Python,
    /// Java, Kotlin, C#, Scala, Swift: `class`/`interface` and typed methods.
    Jvm,
    /// C and C++ (headers too).
    C,
    /// Ruby, PHP, Lua, shell and the rest: the common keywords only.
    Other,
}

pub fn lang_of(path: &str) -> Option<Lang> {
    lang_of_ext(path.rsplit_once('.').map(|(_, e)| e)?)
}

/// The language of a file extension (`rs`, `TS`), if its definitions are read.
pub fn lang_of_ext(ext: &str) -> Option<Lang> {
    Some(match ext.to_ascii_lowercase().as_str() {
        "rs" => Lang::Rust,
        "go" => Lang::Go,
        "js" | "jsx" | "mjs" | "cjs" | "ts" | "tsx" | "mts" | "cts" => Lang::Script,
        "py" | "pyi" => Lang::Python,
        "java" | "kt" | "kts" | "cs" | "scala" | "swift" => Lang::Jvm,
        "c" | "h" | "cc" | "cpp" | "cxx" | "hpp" | "hh" | "hxx" | "m" | "mm" => Lang::C,
        "rb" | "php" | "lua" | "sh" | "bash" | "zsh" | "fish" | "pl" | "pm" | "ex" | "exs" | "vim" | "el" => {
            Lang::Other
        }
        _ => return None,
    })
}

/// Whether `word` may precede a declaration keyword (a `match`: one
/// length switch, where a list compared each in turn).
fn is_modifier(word: &str) -> bool {
    matches!(
        word,
        "pub"
            | "export"
            | "default"
            | "async"
            | "static"
            | "public"
            | "private"
            | "protected"
            | "internal"
            | "final"
            | "abstract"
            | "unsafe"
            | "extern"
            | "inline"
            | "virtual"
            | "override"
            | "sealed"
            | "open"
            | "data"
            | "declare"
            | "readonly"
            | "local"
            | "partial"
            | "synchronized"
            | "native"
            | "constexpr"
            | "suspend"
            | "operator"
            | "infix"
            | "tailrec"
            | "lazy"
    )
}

/// Calls `emit(name, line)` for each name `text` defines (lines 1-based).
pub fn definitions<'t>(lang: Lang, text: &'t str, mut emit: impl FnMut(&'t str, u32)) {
    let mut start = after_bom(text, 0);
    let ends = memchr::memchr_iter(b'\n', text.as_bytes()).chain(std::iter::once(text.len()));
    for (i, end) in ends.enumerate() {
        if let Some(name) = line_definition(lang, &text[start..end]) {
            emit(name, i as u32 + 1);
        }
        start = end + 1;
    }
}

/// `definitions` of a text already split into its words: `words` yields
/// each word's `(start, end, line)` in order (`words::split_words`). A
/// line that defines a name has a word on it, so the lines are found
/// from the words, not by reading the text for its line ends once more:
/// this runs over every line of every source file at `init()`, beside the
/// analysis that split it.
pub fn definitions_of_words<'t>(
    lang: Lang,
    text: &'t str,
    words: impl IntoIterator<Item = (usize, usize, u32)>,
    mut emit: impl FnMut(&'t str, u32),
) {
    // The line being read: its first word's start, its last word's end.
    let mut current: Option<(usize, usize, u32)> = None;
    for (start, end, line) in words {
        match &mut current {
            Some((_, last_end, l)) if *l == line => *last_end = end,
            _ => {
                if let Some((first, last_end, l)) = current {
                    definition_between(lang, text, first, last_end, l, &mut emit);
                }
                current = Some((start, end, line));
            }
        }
    }
    if let Some((first, last_end, l)) = current {
        definition_between(lang, text, first, last_end, l, &mut emit);
    }
}

/// The definition on the line of `text` whose first word starts at
/// `first` and whose last word ends at `last_end`, if any. Most lines are
/// let go on those two words (`may_define`) without finding the line's
/// bounds.
fn definition_between<'t>(
    lang: Lang,
    text: &'t str,
    first: usize,
    last_end: usize,
    line: u32,
    emit: &mut impl FnMut(&'t str, u32),
) {
    if !may_define(lang, text, first, last_end) {
        return;
    }
    let b = text.as_bytes();
    let start = after_bom(text, b[..first].iter().rposition(|&c| c == b'\n').map_or(0, |i| i + 1));
    let end = b[last_end..].iter().position(|&c| c == b'\n').map_or(b.len(), |i| last_end + i);
    if let Some(name) = line_definition(lang, &text[start..end]) {
        emit(name, line);
    }
}

/// Where the line starting at `start` begins: past a byte order mark
/// that opens the text (an editor's U+FEFF hid the first line's definition).
#[inline]
fn after_bom(text: &str, start: usize) -> usize {
    if start == 0 && text.starts_with('\u{feff}') {
        '\u{feff}'.len_utf8()
    } else {
        start
    }
}

/// Whether `line_definition` may find a name on the line whose first word
/// starts at `first` and whose last word ends at `last_end` (`false` only
/// where it finds none): the line must open with a modifier, a declaration
/// keyword or `#`, or be one that `definition_on` reads as a method or a
/// typed function (ending in `{`; a C line at the top level).
///
/// Only spaces (JavaScript's `\s`) come before `first` on its line and
/// after `last_end`. Where `str::trim_start` keeps one of them (U+FEFF,
/// the one it does not count as white space) the line starts with a
/// character no name or keyword starts with, and `line_definition` finds
/// nothing; otherwise the body it reads starts at `first`, at the top
/// level exactly when nothing comes before it. At the end, a space it
/// keeps is not `{` either. A line whose first word starts with a
/// character beyond ASCII (which `str::trim_start` may take as white
/// space) is read in full, and one whose last word ends with one is taken
/// to open a block (`str::trim_end` may take it as white space too).
/// The first byte's test is `may_start_definition`'s, with `#` for
/// `#define`.
#[inline]
fn may_define(lang: Lang, text: &str, first: usize, last_end: usize) -> bool {
    let b = text.as_bytes();
    let c = b[first];
    if !c.is_ascii() {
        return true;
    }
    if !(c.is_ascii_alphabetic() || matches!(c, b'_' | b'$')) {
        return c == b'#';
    }
    let top_level = first == after_bom(text, 0) || b[first - 1] == b'\n';
    let last = b[last_end - 1];
    if shape_may_define(lang, top_level, last == b'{' || !last.is_ascii()) {
        return true;
    }
    // The line's first identifier, as `ident` reads it, or (where a letter
    // beyond ASCII continues it) its ASCII start: `ident`'s word is then no
    // modifier or keyword, and this one is taken for one at worst.
    let mut end = first + 1;
    while end < b.len() && IDENT_BYTE[usize::from(b[end])] {
        end += 1;
    }
    // ASCII bytes, so both ends are character boundaries.
    let word = &text[first..end];
    is_modifier(word) || keyword(lang, word).is_some()
}

/// Whether a line whose first word is no modifier or declaration keyword
/// can define a name by its shape (`definition_on`'s methods and typed
/// functions): a script's method is indented and opens its body; a Java-like
/// method opens its body; a C function is at the top level or opens its body.
fn shape_may_define(lang: Lang, top_level: bool, opens_block: bool) -> bool {
    match lang {
        Lang::Script => !top_level && opens_block,
        Lang::Jvm => opens_block,
        Lang::C => top_level || opens_block,
        Lang::Rust | Lang::Go | Lang::Python | Lang::Other => false,
    }
}

/// The ASCII bytes `ident` takes: letters, digits, `_` and `$`.
static IDENT_BYTE: [bool; 256] = {
    let mut table = [false; 256];
    let mut c = 0;
    while c < 128 {
        table[c] = (c as u8).is_ascii_alphanumeric() || c == b'_' as usize || c == b'$' as usize;
        c += 1;
    }
    table
};

/// The name one line (no `\n` in it) defines, if any. A line that cannot
/// hold a definition is let go on its first byte.
fn line_definition(lang: Lang, raw: &str) -> Option<&str> {
    let body = trim_start(raw);
    if body.is_empty() || body.len() > 400 || !may_start_definition(body) {
        return None;
    }
    definition_on(lang, body, body.len() == raw.len())
}

/// `s.trim_start()` for a line (no `\n` in it), over ASCII bytes first
/// (`str::trim_start` decodes each character).
fn trim_start(s: &str) -> &str {
    let spaces = s.bytes().take_while(|b| matches!(b, b' ' | b'\t' | b'\r' | b'\x0b' | b'\x0c')).count();
    let rest = &s[spaces..];
    if rest.as_bytes().first().is_some_and(|b| !b.is_ascii()) {
        rest.trim_start()
    } else {
        rest
    }
}

/// Whether `body` (a trimmed line, not empty) can define a name: a
/// definition starts with a word (a modifier, a keyword, a type or the
/// name) or `#define`; `ident` takes nothing else (a comment of Python or
/// shell, `//`, `*`, `}` or a digit defines nothing).
fn may_start_definition(body: &str) -> bool {
    let first = body.as_bytes()[0];
    first.is_ascii_alphabetic() || matches!(first, b'_' | b'$') || !first.is_ascii() || body.starts_with("#define")
}

/// The first identifier of `s` (after spaces), if `s` starts with one.
fn ident(s: &str) -> Option<(&str, &str)> {
    let s = trim_start(s);
    let b = s.as_bytes();
    let mut end = b.iter().position(|&c| !IDENT_BYTE[usize::from(c)]).unwrap_or(b.len());
    if b.get(end).is_some_and(|c| !c.is_ascii()) {
        // A name with letters beyond ASCII: found again by characters.
        end = s.find(|c: char| !(c.is_alphanumeric() || c == '_' || c == '$')).unwrap_or(s.len());
    }
    (end > 0 && !b[0].is_ascii_digit()).then(|| (&s[..end], &s[end..]))
}

/// `s` without its leading modifiers (`pub(crate) async unsafe ...`),
/// and its first word with what follows (`None`: it starts with no word).
/// The word is found once here, not again by the caller.
fn strip_modifiers(mut s: &str) -> (&str, Option<(&str, &str)>) {
    loop {
        let Some((word, rest)) = ident(s) else { return (s, None) };
        if !is_modifier(word) {
            return (s.trim_start(), Some((word, rest)));
        }
        let rest = rest.trim_start();
        // `pub(crate)`, `extern "C"`
        s = match rest.as_bytes().first() {
            Some(b'(') if word == "pub" => rest.find(')').map_or(rest, |e| &rest[e + 1..]),
            Some(b'"') if word == "extern" => rest[1..].find('"').map_or(rest, |e| &rest[e + 2..]),
            _ => rest,
        };
    }
}

/// What a declaration keyword declares.
#[derive(Clone, Copy)]
enum Keyword {
    /// The name follows: `class Foo`, `fn foo`.
    Name,
    /// The name follows at the top level only (Go's `const`, `var`).
    TopLevel,
    /// ... or exported (a script's `const`, `let`, `var`).
    TopLevelOrExported,
    /// `func (r *T) Name(` or `func Name(`.
    GoFunc,
    /// `typedef ... name;`
    Typedef,
}

/// What `word` declares in `lang`, if it is one of its declaration keywords.
fn keyword(lang: Lang, word: &str) -> Option<Keyword> {
    Some(match (lang, word) {
        (_, "class" | "interface" | "struct" | "enum" | "trait" | "union" | "module" | "namespace" | "record") => {
            Keyword::Name
        }
        (Lang::Rust, "fn" | "type" | "mod" | "const" | "static" | "macro_rules") => Keyword::Name,
        (Lang::Go, "func") => Keyword::GoFunc,
        (Lang::Go, "type") => Keyword::Name,
        (Lang::Go, "const" | "var") => Keyword::TopLevel,
        (Lang::Script, "type") => Keyword::Name,
        (Lang::Script, "const" | "let" | "var") => Keyword::TopLevelOrExported,
        (Lang::Python | Lang::Other, "def") => Keyword::Name,
        (Lang::Other | Lang::Script, "function") => Keyword::Name,
        (Lang::Jvm, "fun" | "func" | "object" | "typealias") => Keyword::Name,
        (Lang::C, "typedef") => Keyword::Typedef,
        _ => return None,
    })
}

fn definition_on(lang: Lang, body: &str, top_level: bool) -> Option<&str> {
    if let Some(rest) = body.strip_prefix("#define") {
        return ident(rest).map(|(n, _)| n);
    }
    let (s, first) = strip_modifiers(body);
    let (word, rest) = first?;
    let keyword = match keyword(lang, word) {
        Some(Keyword::Name) => true,
        Some(Keyword::TopLevel) => top_level,
        Some(Keyword::TopLevelOrExported) => top_level || body.starts_with("export"),
        Some(Keyword::GoFunc) => return go_func(rest),
        Some(Keyword::Typedef) => return typedef_name(rest),
        None => false,
    };
    if keyword {
        let rest = rest.trim_start_matches(['!', '*']);
        let (name, after) = ident(rest.trim_start_matches(['*', '&', ' ']))?;
        if matches!(name, "extends" | "implements" | "where") {
            return None;
        }
        // C and C++ name a type where they use it (`struct sk_buff *skb`,
        // a parameter `struct device *dev,`, `class Foo;`): a definition
        // has its body, a base list or nothing after the name.
        let after = after.trim();
        if lang == Lang::C && !(after.is_empty() || after.starts_with(['{', ':'])) {
            return None;
        }
        // `const fs = require('fs')` binds a module, it defines nothing.
        if lang == Lang::Script && after.trim_start_matches([':', ' ']).starts_with('=') {
            let value = after.trim_start_matches(|c: char| c != '=').trim_start_matches('=').trim_start();
            if value.starts_with("require(") || value.starts_with("await import(") {
                return None;
            }
        }
        return Some(name);
    }
    if !shape_may_define(lang, top_level, s.trim_end().ends_with('{')) {
        return None;
    }
    match lang {
        Lang::Script => method_name(s),
        Lang::Jvm | Lang::C => typed_function(s),
        _ => None,
    }
}

/// `func (r *T) Name(` or `func Name(`.
fn go_func(rest: &str) -> Option<&str> {
    let rest = rest.trim_start();
    let rest = if rest.starts_with('(') { &rest[rest.find(')')? + 1..] } else { rest };
    ident(rest).map(|(n, _)| n)
}

/// Where the name that ends `head` starts: just after the last character
/// that cannot be part of it (found by characters: the one before may be
/// `©` or a no-break space, several bytes long).
fn last_name_start(head: &str, part_of_name: impl Fn(char) -> bool) -> Option<usize> {
    head.char_indices().rev().find(|&(_, c)| !part_of_name(c)).map(|(i, c)| i + c.len_utf8())
}

/// `typedef struct x { ... } name;` on one line, or `typedef int name;`.
fn typedef_name(rest: &str) -> Option<&str> {
    let head = rest.trim_end().strip_suffix(';')?;
    let start = last_name_start(head, |c| c.is_alphanumeric() || c == '_')?;
    let name = &head[start..];
    (!name.is_empty()).then_some(name)
}

const CONTROL: &[&str] = &[
    "if", "for", "while", "switch", "catch", "return", "else", "do", "try", "with", "new", "throw", "await", "yield",
    "delete", "typeof", "case", "sizeof", "super", "this",
];

/// A method in a class body: `name(args) {` (not a call, not a control
/// statement; its shape, indented and opening a body, `shape_may_define`
/// checked).
fn method_name(s: &str) -> Option<&str> {
    let s = s.strip_prefix("get ").or_else(|| s.strip_prefix("set ")).unwrap_or(s);
    let (name, rest) = ident(s)?;
    let opens_body = rest.starts_with('(') && !CONTROL.contains(&name);
    opens_body.then_some(name)
}

/// `Type name(args) {` (Java-like methods; C functions at the top level,
/// where a line ending in `;` is a declaration, not a definition; the rest
/// of its shape `shape_may_define` checked).
fn typed_function(s: &str) -> Option<&str> {
    if s.trim_end().ends_with([';', ',']) {
        return None;
    }
    let paren = memchr::memchr(b'(', s.as_bytes())?;
    let head = s[..paren].trim_end();
    if head.contains('=') || head.contains('.') {
        return None;
    }
    let start = last_name_start(head, |c| c.is_alphanumeric() || c == '_' || c == ':' || c == '~')?;
    let name = head[start..].rsplit("::").next()?;
    let before = head[..start].trim_end();
    let typed = !before.is_empty() && !CONTROL.contains(&name) && !before.ends_with(['(', ',', '!', '|', '&', '+']);
    let first = ident(before).map(|(w, _)| w);
    let not_statement = first.is_none_or(|w| !CONTROL.contains(&w));
    (typed && not_statement && !name.is_empty()).then_some(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn defs(path: &str, text: &str) -> Vec<(String, u32)> {
        let mut out = Vec::new();
        definitions(lang_of(path).unwrap(), text, |n, l| out.push((n.to_string(), l)));
        out
    }
    fn names(path: &str, text: &str) -> Vec<String> {
        defs(path, text).into_iter().map(|(n, _)| n).collect()
    }

    #[test]
    fn a_byte_order_mark_does_not_hide_the_first_line() {
        for lang in [Lang::Script, Lang::Rust, Lang::Python] {
            let src = match lang {
                Lang::Rust => "\u{feff}pub fn bom_defined_fn() {}\nfn second() {}\n",
                Lang::Python => "\u{feff}def bom_defined_fn():\n    pass\n",
                _ => "\u{feff}export function bomDefinedFn() {}\nfunction second() {}\n",
            };
            let mut lines = Vec::new();
            definitions(lang, src, |name, line| lines.push((name.to_string(), line)));
            assert!(lines.first().is_some_and(|(n, l)| n.starts_with("bom") && *l == 1), "{lang:?}: {lines:?}");
            let mut words = Vec::new();
            crate::analysis::words::split_words(src, |start, end, line| words.push((start, end, line)));
            let mut by_words = Vec::new();
            definitions_of_words(lang, src, words, |name, line| by_words.push((name.to_string(), line)));
            assert_eq!(by_words, lines, "{lang:?}");
        }
    }

    #[test]
    fn any_text_without_a_panic() {
        // Multi-byte characters where a name's start is looked for.
        for text in ["int\u{a0}main(void)\n{", "Copyright \u{a9}2019 (MIT)", "x\u{2014}y(z) {", "typedef int \u{d7};"] {
            for path in ["a.c", "A.java", "a.ts", "a.rs", "a.go", "a.py", "a.rb"] {
                definitions(lang_of(path).unwrap(), text, |_, _| {});
            }
        }
    }

    proptest::proptest! {
        #[test]
        fn arbitrary_lines(text in "\\PC{0,200}") {
            for path in ["a.c", "A.java", "a.ts", "a.rs", "a.go", "a.py", "a.rb"] {
                definitions(lang_of(path).unwrap(), &text, |_, _| {});
            }
        }

        /// The line scan's shortcuts (ASCII trimming, the first-byte test)
        /// find what the plain per-character loop finds.
        #[test]
        fn shortcuts_change_nothing(text in "([ \t\r\x0b\x0c\u{85}\u{a0}\u{2028}\u{3000}]{0,3}(#define|#include|# x|pub fn|fn|def|class|struct|int|static|export const|typedef|//|\\*|}|[a-zA-Z_$]|\\PC){0,6}[ (){};\r\n]{0,3}){0,12}") {
            for path in ["a.c", "A.java", "a.ts", "a.rs", "a.go", "a.py", "a.rb"] {
                let lang = lang_of(path).unwrap();
                let mut fast = Vec::new();
                definitions(lang, &text, |n, l| fast.push((n.to_string(), l)));
                let mut plain = Vec::new();
                for (i, raw) in text.split('\n').enumerate() {
                    let body = raw.trim_start();
                    if body.is_empty() || body.len() > 400 {
                        continue;
                    }
                    if let Some(n) = definition_on(lang, body, body.len() == raw.len()) {
                        plain.push((n.to_string(), i as u32 + 1));
                    }
                }
                proptest::prop_assert_eq!(fast, plain, "{}", path);
            }
        }

        #[test]
        fn trim_start_is_strs(line in "[ \t\r\x0b\x0c\x1c\u{85}\u{a0}\u{2028}\u{3000}a#]{0,8}\\PC{0,4}") {
            proptest::prop_assert_eq!(trim_start(&line), line.trim_start());
        }
    }

    proptest::proptest! {
        // Enough cases to meet each kind of line the shortcut lets go.
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(3000))]

        /// Lines found from the words find what the line scan finds.
        #[test]
        fn words_find_what_lines_find(text in "([ \t\r\x0b\x0c\u{85}\u{a0}\u{2028}\u{3000}\u{feff}]{0,3}(#define|#include|# x|pub fn|fn|def|class|struct|int|static|export const|export default|const|let|var|typedef|func|function|type|fun|object|get |async|int |void |public void f\\(\\) \\{|inline int |\\$[a-z]{1,3}|[a-z]{1,4}\\(\\) \\{|[a-z]{1,4} [a-z]{1,4}\\([a-z]*\\)|\u{e9}t\u{e9}|//|\\*|}| |[a-zA-Z_$]|\\PC){0,6}[ (){};=\r\n\u{feff}\u{85}]{0,3}){0,12}") {
            for path in ["a.c", "A.java", "a.ts", "a.rs", "a.go", "a.py", "a.rb"] {
                let lang = lang_of(path).unwrap();
                let mut by_lines = Vec::new();
                definitions(lang, &text, |n, l| by_lines.push((n, l)));
                let mut words = Vec::new();
                super::super::words::split_words(&text, |s, e, l| words.push((s, e, l)));
                let mut by_words = Vec::new();
                definitions_of_words(lang, &text, words, |n, l| by_words.push((n, l)));
                proptest::prop_assert_eq!(by_words, by_lines, "{}", path);
            }
        }
    }

    #[test]
    fn rust() {
        let src = "pub(crate) async fn parse_user_id() {}\nstruct Walker;\nimpl Walker {\n    pub fn run(&self) {\n        let x = call(1);\n    }\n}\npub const MAX_DEPTH: u32 = 3;\nmacro_rules! ensure {\npub trait Sink {}\npub(super) enum Kind {}\ntype Id = u32;\nextern \"C\" fn hook() {}";
        assert_eq!(
            names("a.rs", src),
            ["parse_user_id", "Walker", "run", "MAX_DEPTH", "ensure", "Sink", "Kind", "Id", "hook"]
        );
        assert_eq!(defs("a.rs", src)[2], ("run".to_string(), 4));
    }

    #[test]
    fn go() {
        let src = "package fzf\nfunc (t *Terminal) printPrompt() {\nfunc NewReader(x int) *Reader {\ntype Reader struct {\nconst maxLines = 3\n\tvar inner = 1\n\tfoo(1)";
        assert_eq!(names("x.go", src), ["printPrompt", "NewReader", "Reader", "maxLines"]);
    }

    #[test]
    fn scripts() {
        let src = "export default async function ky(input) {\nexport class HTTPError extends Error {\n  constructor(response) {\n    if (x) {\n    this.retry(1);\n  }\n  get name() {\n}\nexport const parseUserId = (s) => s\ninterface Options {\nexport type Hooks = {\n  const inner = 1\nfunction* gen() {}";
        assert_eq!(
            names("a.ts", src),
            ["ky", "HTTPError", "constructor", "name", "parseUserId", "Options", "Hooks", "gen"]
        );
    }

    #[test]
    fn python_jvm_c_and_others() {
        assert_eq!(
            names("a.py", "class Walker(Base):\n    def walk(self):\n        async def inner():\n    x = walk()"),
            ["Walker", "walk", "inner"]
        );
        let java = "public final class Router {\n  private static List<String> matchRoute(String p) {\n    return helper(p);\n    if (x) {\n  }\n  public interface Handler {}";
        assert_eq!(names("R.java", java), ["Router", "matchRoute", "Handler"]);
        let c = "#define ERR_CODE_42 42\nstatic int parse_args(int argc, char **argv)\n{\nint declared(void);\ntypedef struct node node_t;\nstruct list {\n    return foo(x);\nnamespace fs {\nvoid Walker::run() {\n    struct sk_buff *skb = get();\n    struct device *dev,\nclass Forward;\nclass Shape : public Base {\nstruct point\n";
        assert_eq!(names("a.c", c), ["ERR_CODE_42", "parse_args", "node_t", "list", "fs", "run", "Shape", "point"]);
        assert_eq!(names("a.js", "const fs = require('fs')\nconst parser = require('./parser')\nconst MAX = 3\nexport const api = createApi()"), ["MAX", "api"]);
        assert_eq!(names("a.rb", "module Http\n  def get_user\n  class Client"), ["Http", "get_user", "Client"]);
        assert_eq!(lang_of("README.md"), None);
        assert_eq!(lang_of("Makefile"), None);
    }
}
