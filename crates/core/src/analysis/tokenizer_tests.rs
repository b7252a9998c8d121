//! Tests of tokenizer.rs.

use super::*;

fn toks(t: &Tokenizer, s: &str) -> Vec<String> {
    t.tokenize(s)
}

#[test]
fn mastra_basics() {
    let t = Tokenizer::new(TokenizerConfig::mastra());
    assert_eq!(toks(&t, "password-reset?"), ["password", "reset"]);
    assert_eq!(toks(&t, "don't"), ["don"]);
    assert_eq!(toks(&t, "snake_case 404 a I"), ["snake_case", "404"]);
    assert_eq!(toks(&t, "The cat IS on the mat"), ["cat", "mat"]);
    assert_eq!(toks(&t, "this not but"), ["this", "not", "but"]);
}

#[test]
fn unicode_letters_and_lowercase() {
    let t = Tokenizer::new(TokenizerConfig::mastra());
    assert_eq!(toks(&t, "Éclair Привет мир"), ["éclair", "привет", "мир"]);
    // Greek final sigma follows JavaScript's toLowerCase.
    assert_eq!(toks(&t, "ΟΔΟΣ"), ["οδος"]);
    // Without bigrams a CJK run is one token, a lone ideograph is too short.
    assert_eq!(toks(&t, "中文分词 字"), ["中文分词"]);
    // U+00A0 and U+3000 are JS whitespace; U+0085 is not.
    assert_eq!(toks(&t, "ab\u{A0}cd\u{3000}ef"), ["ab", "cd", "ef"]);
    // U+0085 is neither \s nor a letter: punctuation.
    assert_eq!(toks(&t, "ab\u{85}cd"), ["ab", "cd"]);
    // Combining marks are not letters: Mastra splits there.
    assert_eq!(toks(&t, "cafe\u{301}s"), ["cafe"]);
    // minLength counts UTF-16 units: an astral ideograph is 2 units.
    assert_eq!(toks(&t, "𠀀"), ["𠀀"]);
}

#[test]
fn defaults_stem_and_split_identifiers() {
    let t = Tokenizer::default();
    assert_eq!(toks(&t, "Running parseUserId"), ["run", "parseuserid", "pars", "user", "id"]);
}

#[test]
fn cjk_bigrams() {
    let t = Tokenizer::default();
    assert_eq!(toks(&t, "中文分词"), ["中文", "文分", "分词"]);
    assert_eq!(toks(&t, "東京タワー"), ["東京", "京タ", "タワ", "ワー"]);
    assert_eq!(toks(&t, "한국어 검색"), ["한국", "국어", "검색"]);
    // A word mixing CJK with other characters is kept whole too (Mastra's token):
    // its runs alone may all be too short (`1층`, `5月`).
    assert_eq!(toks(&t, "abc中文def"), ["abc中文def", "abc", "中文", "def"]);
    assert_eq!(toks(&t, "1층 5月 a中"), ["1층", "5月", "a中"]);
    assert_eq!(toks(&t, "字"), Vec::<String>::new());
}

#[test]
fn options() {
    let mut c = TokenizerConfig::mastra();
    c.lowercase = false;
    let t = Tokenizer::new(c);
    assert_eq!(toks(&t, "The Cat the"), ["The", "Cat"]);

    let mut c = TokenizerConfig::mastra();
    c.remove_punctuation = false;
    let t = Tokenizer::new(c);
    assert_eq!(toks(&t, "password-reset? a"), ["password-reset?"]);

    let mut c = TokenizerConfig::mastra();
    c.min_length = 4;
    c.stopwords = ["cats"].iter().map(|s| s.to_string()).collect();
    let t = Tokenizer::new(c);
    assert_eq!(toks(&t, "the big cats jumped"), ["jumped"]);

    let mut c = TokenizerConfig::mastra();
    c.split = SplitRule::from_js(",", "").unwrap();
    let t = Tokenizer::new(c.clone());
    // Punctuation becomes space before the split, as Mastra.
    assert_eq!(toks(&t, "red fox,blue whale"), ["red fox blue whale"]);
    c.remove_punctuation = false;
    let t = Tokenizer::new(c);
    assert_eq!(toks(&t, "red fox,blue whale"), ["red fox", "blue whale"]);
}

#[test]
fn folding_identifiers_stemming() {
    let mut c = TokenizerConfig::mastra();
    c.fold_diacritics = true;
    let t = Tokenizer::new(c);
    assert_eq!(toks(&t, "Café naïve cafe\u{301}"), ["cafe", "naive", "cafe"]);
    // Hangul syllables decompose into letters, not marks; kana's voicing marks make other words.
    assert_eq!(toks(&t, "국경 구경 ガス カス"), ["국경", "구경", "ガス", "カス"]);
    let t = Tokenizer::new(TokenizerConfig { fold_diacritics: true, ..TokenizerConfig::default() });
    assert_eq!(toks(&t, "국경 구경"), ["국경", "구경"]);

    let mut c = TokenizerConfig::mastra();
    c.split_identifiers = true;
    let t = Tokenizer::new(c);
    assert_eq!(toks(&t, "parseUserId"), ["parseuserid", "parse", "user", "id"]);
    assert_eq!(toks(&t, "parse_user_id"), ["parse_user_id", "parse", "user", "id"]);
    assert_eq!(toks(&t, "HTTPServer2"), ["httpserver2", "http", "server"]);
    assert_eq!(split_identifier("HTTPServer2"), ["HTTP", "Server", "2"]);
    assert_eq!(toks(&t, "plain"), ["plain"]);

    let mut c = TokenizerConfig::mastra();
    c.stem_english = true;
    let t = Tokenizer::new(c);
    assert_eq!(toks(&t, "running connections"), ["run", "connect"]);
    // Words with letters outside ASCII are not stemmed as English.
    assert_eq!(toks(&t, "häuser überraschungen"), ["häuser", "überraschungen"]);
    assert_eq!(toks(&t, "бегущие собаки"), ["бегущие", "собаки"]);
    assert_eq!(toks(&t, "canciones célebres"), ["cancion", "célebres"]);
    let t = Tokenizer::default();
    assert_eq!(toks(&t, "学习中文 läuft connections"), ["学习", "习中", "中文", "läuft", "connect"]);
}

#[test]
fn lines() {
    let t = Tokenizer::default();
    let mut got = Vec::new();
    t.tokenize_lines("alpha beta\n\ngamma\r\nalpha", |tok, l| got.push((tok.to_string(), l)));
    assert_eq!(got, [("alpha".into(), 1), ("beta".into(), 1), ("gamma".into(), 3), ("alpha".into(), 4)]);
}

/// A `splitPattern` means what it means in JavaScript: `\s` holds U+FEFF
/// (Mastra's own `/\s+/` written out), `\w`, `\W`, `\d` and `\b` are
/// ASCII, `[^]` is any character, a line feed is a character.
#[test]
fn split_patterns_read_as_javascript_reads_them() {
    let split = |source: &str, flags: &str, text: &str| {
        let config = TokenizerConfig {
            split: SplitRule::from_js(source, flags).expect("compiles"),
            remove_punctuation: false,
            min_length: 1,
            ..TokenizerConfig::mastra()
        };
        toks(&Tokenizer::new(config), text)
    };
    assert_eq!(split("\\s+", "", "alpha\u{FEFF}beta gamma\ndelta"), ["alpha", "beta", "gamma", "delta"]);
    assert_eq!(split("\\W+", "", "café naïve"), ["caf", "na", "ve"]);
    assert_eq!(split("\\d", "", "a\u{663}b a3b"), ["a\u{663}b a", "b"]);
    assert_eq!(split("\\b", "", "ab-é"), ["ab", "-é"]);
    assert_eq!(split("\\n", "", "one two\nthree"), ["one two", "three"]);
    assert_eq!(split("x[^]", "", "cxyd cx\nd"), ["c", "d c", "d"]);
    assert_eq!(split("a.b", "s", "1a\nb2"), ["1", "2"]);
    assert_eq!(split("a.b", "", "1a\nb2"), ["1a\nb2"]);
    assert_eq!(split("X", "i", "cxd"), ["c", "d"]);
    // A pattern the rewrite refuses (a group modifier, a character beyond U+FFFF) is read as Rust reads it.
    assert_eq!(split("(?i:x)", "", "cXd"), ["c", "d"]);
    assert_eq!(split("\u{1F600}", "", "c\u{1F600}d"), ["c", "d"]);
    // The u flag's syntax (`\p{L}`) is Rust's too.
    assert_eq!(split("[^\\p{L}]+", "u", "hello, world! café"), ["hello", "world", "café"]);
    assert_eq!(split("\\P{L}+", "v", "alpha1beta"), ["alpha", "beta"]);
}

/// With a `splitPattern`, a token's occurrences span its first to its last
/// line, as the whitespace rule's do (they stopped at its first line).
#[test]
fn pattern_lines_reach_the_last_line() {
    let config =
        TokenizerConfig { split: SplitRule::from_js("\\s+", "").expect("compiles"), ..TokenizerConfig::mastra() };
    let t = Tokenizer::new(config);
    let mut got = Vec::new();
    t.tokenize_lines("intro\nword here\nother\nword and word\nend", |tok, l| {
        if tok == "word" {
            got.push(l)
        }
    });
    assert_eq!(got, [2, 2, 4]);
    let tokens = ["word".to_string()];
    assert_eq!(crate::search::hybrid::line_range_of("a\nword\nb\nword", &tokens, &t), Some((2, 4)));
}

proptest::proptest! {
    /// The byte-wise split of ASCII words is the char-wise one.
    #[test]
    fn ascii_identifiers_split_as_any(raw in "[a-zA-Z0-9_.-]{0,40}") {
        let mut parts = [""; 16];
        if let Some(n) = super::split_ascii_identifier(&raw, &mut parts) {
            proptest::prop_assert_eq!(&parts[..n], &split_identifier(&raw)[..]);
        } else {
            proptest::prop_assert!(split_identifier(&raw).len() > 16);
        }
        let mut buf = [0u8; 64];
        let lower = raw.to_lowercase();
        proptest::prop_assert_eq!(super::ascii_lowercase_in(&raw, &mut buf), Some(lower.as_str()));
    }

    /// Runs of word characters by bytes are `str::split`'s non-empty pieces.
    #[test]
    fn word_runs_split_as_str(text in "[a-zA-Z0-9_.(){}:;, -]{0,30}|\\PC{0,20}") {
        let mut runs = Vec::new();
        super::word_runs(&text, |r| runs.push(r));
        let split: Vec<&str> = text.split(|c: char| !super::is_word_char(c)).filter(|p| !p.is_empty()).collect();
        proptest::prop_assert_eq!(runs, split);
    }

    /// Any text, any configuration: no panic, no empty token, lines
    /// within the text's line count.
    #[test]
    fn any_text_tokenizes(text in "\\PC{0,200}", lines in 0usize..4, mastra in proptest::bool::ANY, fold in proptest::bool::ANY) {
        let text = format!("{text}{}", "\n".repeat(lines));
        let mut c = if mastra { TokenizerConfig::mastra() } else { TokenizerConfig::default() };
        c.fold_diacritics = fold;
        let t = Tokenizer::new(c);
        let max_line = text.split('\n').count() as u32;
        t.tokenize_lines(&text, |tok, line| {
            assert!(!tok.is_empty());
            assert!(line <= max_line);
        });
        let split = Tokenizer::new(TokenizerConfig { split: SplitRule::from_js("(?<=a)|[,;]", "i").unwrap(), ..TokenizerConfig::default() });
        let _ = split.tokenize(&text);
    }
}
