//! Turning texts into term statistics fast: terms become small integer ids
//! in a vocabulary shared by the documents one thread analyses, and each
//! distinct raw word is tokenized once (the tokens a whitespace-separated
//! word yields never depend on its neighbours), so most words cost one hash
//! look-up.

pub mod definitions;
mod highlight;
pub mod identifiers;
mod stems;
pub mod tokenizer;
pub mod word_table;
mod words;

pub use highlight::lines_holding_tokens;

use crate::per_thread::PerThread;
use definitions::Lang;
use rayon::prelude::*;
use rustc_hash::FxHashMap;
use std::sync::Arc;
use tokenizer::{SplitRule, Tokenizer};
use word_table::{pack_at, WordTable};

/// Per-document statistics of one term. Lines are 1-based; 0 means the
/// line is unknown (a custom split pattern joined lines into one token).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TermStats {
    pub tf: u32,
    pub first_line: u32,
    pub last_line: u32,
}

/// Term strings and their ids within one analysis: the names back to
/// back in one string (a code workspace has hundreds of thousands, each two
/// allocations when they were boxed one by one, and read one pointer away
/// when the index maps them to its own ids), looked up by a table of ids.
#[derive(Debug, Default, Clone)]
pub struct Vocab {
    bytes: String,
    /// Where each name ends in `bytes`.
    ends: Vec<usize>,
    /// Each term's id and its name's hash (`term_hash`): a probe reads a
    /// name only where the hashes agree, and the table grows without
    /// reading any name again (each thread's table grows to a million
    /// slots on a large tree, one rehash per doubling).
    ids: hashbrown::HashTable<(u32, u32)>,
}

fn term_hash(term: &str) -> u32 {
    xxhash_rust::xxh3::xxh3_64(term.as_bytes()) as u32
}

/// A term's hash as the table takes it: spread over 64 bits, as its slot
/// comes from the low bits and its tag from the top seven.
fn table_hash(hash: u32) -> u64 {
    u64::from(hash).wrapping_mul(0x9E37_79B9_7F4A_7C15)
}

impl Vocab {
    pub fn intern(&mut self, term: &str) -> u32 {
        let (bytes, ends) = (&self.bytes, &self.ends);
        let hash = term_hash(term);
        let same = |&(id, h): &(u32, u32)| h == hash && name_in(bytes, ends, id) == term;
        match self.ids.entry(table_hash(hash), same, |&(_, h)| table_hash(h)) {
            hashbrown::hash_table::Entry::Occupied(o) => o.get().0,
            hashbrown::hash_table::Entry::Vacant(v) => {
                let id = self.ends.len() as u32;
                v.insert((id, hash));
                self.bytes.push_str(term);
                self.ends.push(self.bytes.len());
                id
            }
        }
    }

    pub fn name(&self, id: u32) -> &str {
        name_in(&self.bytes, &self.ends, id)
    }

    pub fn len(&self) -> usize {
        self.ends.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }
}

fn name_in<'a>(bytes: &'a str, ends: &[usize], id: u32) -> &'a str {
    let id = id as usize;
    let start = if id == 0 { 0 } else { ends[id - 1] };
    &bytes[start..ends[id]]
}

/// A tokenized text: its distinct terms (ids in `vocab`) in first-occurrence
/// order with their statistics, and its length in tokens.
#[derive(Debug, Clone, Default)]
pub struct Analyzed {
    pub vocab: Arc<Vocab>,
    pub terms: Vec<(u32, TermStats)>,
    pub len: u32,
}

impl PartialEq for Analyzed {
    fn eq(&self, o: &Self) -> bool {
        self.len == o.len && self.named() == o.named()
    }
}

impl Analyzed {
    /// The terms with their names (tests, export).
    pub fn named(&self) -> Vec<(&str, TermStats)> {
        self.terms.iter().map(|&(id, s)| (self.vocab.name(id), s)).collect()
    }

    /// Tokenizes one text.
    pub fn of_text(tokenizer: &Tokenizer, text: &str) -> Analyzed {
        let mut a = Analyzer::new(tokenizer);
        let (terms, len) = a.analyze(text);
        Analyzed { vocab: Arc::new(a.vocab), terms, len }
    }

    /// From `(token, line)` pairs.
    pub fn from_tokens<'t>(tokens: impl IntoIterator<Item = (&'t str, u32)>) -> Analyzed {
        let mut c = Collector::default();
        let mut vocab = Vocab::default();
        for (t, line) in tokens {
            let id = vocab.intern(t);
            c.add(id, line);
        }
        let (terms, len) = c.finish();
        Analyzed { vocab: Arc::new(vocab), terms, len }
    }

    /// From a custom tokenizer's output: the tokens of the whole text and
    /// of each line on its own (as Mastra computes line ranges).
    pub fn from_whole_and_lines(whole: &[String], lines: &[Vec<String>]) -> Analyzed {
        let mut first: FxHashMap<&str, u32> = FxHashMap::default();
        let mut last: FxHashMap<&str, u32> = FxHashMap::default();
        for (i, toks) in lines.iter().enumerate() {
            for t in toks {
                first.entry(t.as_str()).or_insert(i as u32 + 1);
                last.insert(t.as_str(), i as u32 + 1);
            }
        }
        let mut a =
            Analyzed::from_tokens(whole.iter().map(|t| (t.as_str(), first.get(t.as_str()).copied().unwrap_or(0))));
        for (id, st) in &mut a.terms {
            if let Some(&l) = last.get(a.vocab.name(*id)) {
                st.last_line = l;
            }
        }
        a
    }
}

/// Counts term occurrences of one document.
#[derive(Default)]
struct Collector {
    /// Term id -> position in `terms` (u32::MAX: not in this document).
    pos: Vec<u32>,
    terms: Vec<(u32, TermStats)>,
    len: u32,
}

impl Collector {
    #[inline]
    fn prefetch(&self, id: u32) {
        if let Some(p) = self.pos.get(id as usize) {
            crate::prefetch::prefetch(p);
        }
    }

    #[inline]
    fn add(&mut self, id: u32, line: u32) {
        self.len += 1;
        if id as usize >= self.pos.len() {
            self.pos.resize(id as usize + 1024, u32::MAX);
        }
        match self.pos[id as usize] {
            p if p != u32::MAX => {
                let s = &mut self.terms[p as usize].1;
                s.tf += 1;
                if line != 0 {
                    if s.first_line == 0 {
                        s.first_line = line;
                    }
                    s.last_line = line;
                }
            }
            _ => {
                self.pos[id as usize] = self.terms.len() as u32;
                self.terms.push((id, TermStats { tf: 1, first_line: line, last_line: line }));
            }
        }
    }

    /// `n` occurrences on no line (a field's word, counted its weight times).
    fn add_n(&mut self, id: u32, n: u32) {
        self.add(id, 0);
        self.len += n - 1;
        let p = self.pos[id as usize] as usize;
        self.terms[p].1.tf += n - 1;
    }

    /// `n` occurrences on no line that the document's length leaves out (a
    /// whole identifier: the words it is made of are counted already, and
    /// a longer length would lower every other word's score).
    fn add_n_unmeasured(&mut self, id: u32, n: u32) {
        self.add_n(id, n);
        self.len -= n;
    }

    /// The document's terms, in an allocation of their exact size: the
    /// growing list stays here for the next document, so that a build of
    /// many documents does not leave one list grown by doubling (and the
    /// smaller ones it outgrew, freed between longer-lived allocations)
    /// per document.
    fn finish(&mut self) -> (Vec<(u32, TermStats)>, u32) {
        for &(id, _) in &self.terms {
            self.pos[id as usize] = u32::MAX;
        }
        let len = std::mem::take(&mut self.len);
        let terms = self.terms.to_vec();
        self.terms.clear();
        (terms, len)
    }
}

const NONE: u32 = u32::MAX;

/// Raw words longer than this are tokenized without being cached.
const MAX_CACHED_WORD: usize = 64;
/// Distinct raw words cached per analyzer.
const MAX_CACHED_WORDS: usize = 1 << 20;
/// Distinct defined names cached per analyzer (half the words' room: a
/// 50,000-file tree defines 1.2 million names, most of them again and
/// again).
const MAX_CACHED_NAMES: usize = 1 << 19;

/// A raw word's key in the word caches, by length.
#[derive(Clone, Copy)]
enum WordKey {
    Short([u64; 2]),
    Medium([u64; 4]),
    Long,
}

impl WordKey {
    /// The key of the word `text[start..end]`.
    #[inline]
    fn at(text: &str, start: usize, end: usize) -> Self {
        if let Some(k) = pack_at::<2>(text, start, end) {
            WordKey::Short(k)
        } else if let Some(k) = pack_at::<4>(text, start, end) {
            WordKey::Medium(k)
        } else {
            WordKey::Long
        }
    }
}

/// Tokenizes many texts into one vocabulary, caching raw words.
pub struct Analyzer<'t> {
    tokenizer: &'t Tokenizer,
    vocab: Vocab,
    /// Raw word -> its term ids, as a range of `word_terms` (or, for a
    /// word of one term, that term's id and 1): words of up
    /// to 15 and 31 bytes packed into integer keys (no string compare),
    /// longer ones by string.
    short_words: WordTable<2>,
    medium_words: WordTable<4>,
    words: FxHashMap<Box<str>, (u32, u32)>,
    /// The words of the text being analysed: (start, end, line, key).
    spans: Vec<(u32, u32, u32, WordKey)>,
    /// Its tokens as (term id, line), before they are counted.
    tokens: Vec<(u32, u32)>,
    /// Token before the final filter -> its term id (`NONE`: filtered out),
    /// for tokens of up to 15 bytes by packed key (most of them; the slot's
    /// count is unused), and by string for the rest (`pieces`).
    short_pieces: WordTable<2>,
    /// The same for longer tokens.
    pieces: FxHashMap<Box<str>, u32>,
    word_terms: Vec<u32>,
    /// Defined name -> its whole-identifier term and its terms, as a range
    /// of `word_terms` (`name_terms`).
    short_names: WordTable<2>,
    medium_names: WordTable<4>,
    /// The keys of the names being counted (`collect_names`).
    name_keys: Vec<WordKey>,
    collector: Collector,
    scratch: Vec<u32>,
    /// The whole identifier being built (`name_terms`).
    whole: String,
}

impl<'t> Analyzer<'t> {
    pub fn new(tokenizer: &'t Tokenizer) -> Self {
        Analyzer {
            tokenizer,
            vocab: Vocab::default(),
            short_words: WordTable::default(),
            medium_words: WordTable::default(),
            words: FxHashMap::default(),
            spans: Vec::new(),
            tokens: Vec::new(),
            short_pieces: WordTable::default(),
            pieces: FxHashMap::default(),
            word_terms: Vec::new(),
            short_names: WordTable::default(),
            medium_names: WordTable::default(),
            name_keys: Vec::new(),
            collector: Collector::default(),
            scratch: Vec::new(),
            whole: String::new(),
        }
    }

    pub fn into_vocab(self) -> Vocab {
        self.vocab
    }

    /// The distinct terms of `text` (ids in this analyzer's vocabulary) and its length.
    pub fn analyze(&mut self, text: &str) -> (Vec<(u32, TermStats)>, u32) {
        self.collect(text);
        self.collector.finish()
    }

    /// `analyze`, with the terms of the document's path (`field_terms`)
    /// and of each name it defines (`definitions`, for a source file of
    /// `lang`) counted their field's weight times each on no line: BM25F
    /// fields folded into the document's term frequencies and length, its
    /// line ranges still the content's alone; and the whole identifier of
    /// each name (`identifiers::term`) the names' weight times, left out
    /// of the length.
    pub fn analyze_with_fields(
        &mut self,
        text: &str,
        (path, path_weight): (&[u32], u32),
        (lang, names_weight): (Option<Lang>, u32),
    ) -> (Vec<(u32, TermStats)>, u32) {
        self.collect(text);
        let names = match lang {
            Some(lang) if names_weight > 0 => self.defined_names(lang, text),
            _ => Vec::new(),
        };
        self.finish_with_fields((path, path_weight), (&names, names_weight))
    }

    /// `analyze_with_fields` with the defined names given.
    #[cfg(test)]
    fn analyze_with_names(
        &mut self,
        text: &str,
        path: (&[u32], u32),
        names: (&[&str], u32),
    ) -> (Vec<(u32, TermStats)>, u32) {
        self.collect(text);
        self.finish_with_fields(path, names)
    }

    /// Counts the fields into the document `collect` counted, and finishes it.
    fn finish_with_fields(
        &mut self,
        (path, path_weight): (&[u32], u32),
        (names, names_weight): (&[&str], u32),
    ) -> (Vec<(u32, TermStats)>, u32) {
        if path_weight > 0 {
            for &id in path {
                self.collector.add_n(id, path_weight);
            }
        }
        if names_weight > 0 {
            self.collect_names(names, names_weight);
        }
        self.collector.finish()
    }

    /// The names `text` defines: found from the words `collect(text)` has
    /// just split it into (a split pattern of the user's own leaves no
    /// words: then by reading its lines).
    fn defined_names<'a>(&self, lang: Lang, text: &'a str) -> Vec<&'a str> {
        let mut names = Vec::new();
        if let SplitRule::Pattern(_) = self.tokenizer.config().split {
            definitions::definitions(lang, text, |name, _| names.push(name));
        } else {
            debug_assert!(self.spans.last().is_none_or(|w| w.1 as usize <= text.len()), "the words of `text`");
            let words = self.spans.iter().map(|&(s, e, line, _)| (s as usize, e as usize, line));
            definitions::definitions_of_words(lang, text, words, |name, _| names.push(name));
        }
        names
    }

    /// The terms of a field's text (a file's path), in order, ids in this
    /// analyzer's vocabulary: computed once for all the documents of a
    /// file, and kept out of the raw-word cache (a path is seen once per
    /// file).
    pub fn field_terms(&mut self, field: &str, out: &mut Vec<u32>) {
        out.clear();
        if let SplitRule::Pattern(_) = self.tokenizer.config().split {
            let vocab = &mut self.vocab;
            self.tokenizer.tokenize_into(field, |t| out.push(vocab.intern(t)));
            return;
        }
        words::split_words(field, |s, e, _| {
            self.tokenize_word(&field[s..e]);
            out.extend_from_slice(&self.scratch);
        });
    }

    /// Counts each term of each of `names` `weight` times, and its whole
    /// identifier `weight` times outside the length, all on no line.
    fn collect_names(&mut self, names: &[&str], weight: u32) {
        if let SplitRule::Pattern(_) = self.tokenizer.config().split {
            return self.collect_names_uncached(names, weight);
        }
        // Keys first, then their look-ups, each slot requested a few names
        // ahead (the table outgrows the CPU's caches on a large tree).
        let mut keys = std::mem::take(&mut self.name_keys);
        keys.clear();
        keys.extend(names.iter().map(|name| WordKey::at(name, 0, name.len())));
        const AHEAD: usize = 4;
        for (k, (name, &key)) in names.iter().zip(&keys).enumerate() {
            match keys.get(k + AHEAD) {
                Some(&WordKey::Short(key)) => self.short_names.prefetch(key),
                Some(&WordKey::Medium(key)) => self.medium_names.prefetch(key),
                _ => {}
            }
            let (from, n, cached) = self.name_terms(name, key);
            let (whole, terms) = (self.word_terms[from], from + 1..from + n);
            for k in terms {
                self.collector.add_n(self.word_terms[k], weight);
            }
            if whole != NONE {
                self.collector.add_n_unmeasured(whole, weight);
            }
            if !cached {
                self.word_terms.truncate(from);
            }
        }
        self.name_keys = keys;
    }

    /// `collect_names` for a tokenizer with a split pattern of its own: each
    /// name through the tokenizer (a name alone, where the names were once
    /// joined by spaces, which a pattern need not split at), no cache.
    fn collect_names_uncached(&mut self, names: &[&str], weight: u32) {
        let mut terms = Vec::new();
        for name in names {
            self.field_terms(name, &mut terms);
            for &id in &terms {
                self.collector.add_n(id, weight);
            }
            if identifiers::term_into(name, &mut self.whole) {
                let id = self.vocab.intern(&self.whole);
                self.collector.add_n_unmeasured(id, weight);
            }
        }
    }

    /// Where `name`'s whole-identifier term (`NONE`: it has none) and then
    /// its terms are in `word_terms`, and whether they stay there (cached
    /// by name). A defined name is rarely a raw word of the content (that
    /// is `parse(x)`, `parse<T>`), so it has a cache of its own: most
    /// names are defined again and again (`new`, `__init__`, `toString`).
    fn name_terms(&mut self, name: &str, key: WordKey) -> (usize, usize, bool) {
        let hit = match key {
            WordKey::Short(k) => self.short_names.get(k),
            WordKey::Medium(k) => self.medium_names.get(k),
            WordKey::Long => None,
        };
        if let Some((from, n)) = hit {
            return (from as usize, n as usize, true);
        }
        debug_assert!(!name.chars().any(tokenizer::is_js_space), "a defined name is one word");
        let from = self.word_terms.len();
        let whole = if identifiers::term_into(name, &mut self.whole) { self.vocab.intern(&self.whole) } else { NONE };
        self.tokenize_word(name);
        self.word_terms.push(whole);
        self.word_terms.extend_from_slice(&self.scratch);
        let n = self.word_terms.len() - from;
        let room = self.short_names.len() + self.medium_names.len() < MAX_CACHED_NAMES;
        match key {
            WordKey::Short(k) if room => self.short_names.insert(k, from as u32, n as u32),
            WordKey::Medium(k) if room => self.medium_names.insert(k, from as u32, n as u32),
            _ => return (from, n, false),
        }
        (from, n, true)
    }

    /// Counts the terms of `text` into the collector (not finished).
    fn collect(&mut self, text: &str) {
        if let SplitRule::Pattern(_) = self.tokenizer.config().split {
            let (vocab, collector) = (&mut self.vocab, &mut self.collector);
            self.tokenizer.tokenize_lines(text, |t, line| collector.add(vocab.intern(t), line));
            return;
        }
        // Words first, then their look-ups, each cache slot requested a few
        // words ahead of its use.
        let mut spans = std::mem::take(&mut self.spans);
        spans.clear();
        words::split_words(text, |s, e, line| spans.push((s as u32, e as u32, line, WordKey::at(text, s, e))));
        const AHEAD: usize = 8;
        for k in 0..spans.len() {
            match spans.get(k + AHEAD) {
                Some(&(_, _, _, WordKey::Short(key))) => self.short_words.prefetch(key),
                Some(&(_, _, _, WordKey::Medium(key))) => self.medium_words.prefetch(key),
                _ => {}
            }
            let (s, e, line, key) = spans[k];
            self.word(&text[s as usize..e as usize], key, line);
        }
        self.spans = spans;
        // Then counted, each term's counter requested ahead too.
        let tokens = std::mem::take(&mut self.tokens);
        for k in 0..tokens.len() {
            if let Some(&(id, _)) = tokens.get(k + AHEAD) {
                self.collector.prefetch(id);
            }
            self.collector.add(tokens[k].0, tokens[k].1);
        }
        self.tokens = tokens;
        self.tokens.clear();
    }

    #[inline]
    fn word(&mut self, word: &str, key: WordKey, line: u32) {
        if let Some((from, n)) = self.cached_word(word, key) {
            if n == 1 {
                // The usual case: the term id itself, no second look-up.
                self.tokens.push((from, line));
            } else {
                for k in from..from + n {
                    self.tokens.push((self.word_terms[k as usize], line));
                }
            }
            return;
        }
        self.tokenize_word(word);
        for &id in self.scratch.iter() {
            self.tokens.push((id, line));
        }
        self.cache_word(word, key);
    }

    /// The range of `word_terms` (or, for a word of one term, that term's
    /// id and 1) cached for a raw word.
    #[inline(always)]
    fn cached_word(&self, word: &str, key: WordKey) -> Option<(u32, u32)> {
        match key {
            WordKey::Short(k) => self.short_words.get(k),
            WordKey::Medium(k) => self.medium_words.get(k),
            WordKey::Long => self.words.get(word).copied(),
        }
    }

    /// Caches `scratch` as the terms of a raw word, while there is room.
    fn cache_word(&mut self, word: &str, key: WordKey) {
        if word.len() > MAX_CACHED_WORD
            || self.short_words.len() + self.medium_words.len() + self.words.len() >= MAX_CACHED_WORDS
        {
            return;
        }
        // One term: its id in place of the range start.
        let range = if let [id] = self.scratch[..] {
            (id, 1)
        } else {
            let from = self.word_terms.len() as u32;
            self.word_terms.extend_from_slice(&self.scratch);
            (from, self.scratch.len() as u32)
        };
        match key {
            WordKey::Short(k) => self.short_words.insert(k, range.0, range.1),
            WordKey::Medium(k) => self.medium_words.insert(k, range.0, range.1),
            WordKey::Long => {
                self.words.insert(word.into(), range);
            }
        }
    }

    /// The term ids of one raw word (no whitespace in it) into `scratch`,
    /// through the cache of its pieces.
    fn tokenize_word(&mut self, word: &str) {
        let (vocab, scratch, tokenizer) = (&mut self.vocab, &mut self.scratch, self.tokenizer);
        let (short_pieces, pieces) = (&mut self.short_pieces, &mut self.pieces);
        scratch.clear();
        tokenizer.word_pieces(word, &mut |p| {
            let key = word_table::pack::<2>(p);
            let cached = match key {
                Some(key) => short_pieces.get(key).map(|(id, _)| id),
                None => pieces.get(p).copied(),
            };
            let id = cached.unwrap_or_else(|| {
                let mut id = NONE;
                tokenizer.final_filter(p, &mut |t| id = vocab.intern(t));
                if short_pieces.len() + pieces.len() < MAX_CACHED_WORDS {
                    match key {
                        Some(key) => short_pieces.insert(key, id, 1),
                        None => {
                            pieces.insert(p.into(), id);
                        }
                    }
                }
                id
            });
            if id != NONE {
                scratch.push(id);
            }
        });
    }
}

/// One analyzer per rayon thread, so that each thread's caches and
/// vocabulary serve all the texts it handles in a parallel run.
pub struct ThreadAnalyzers<'t>(PerThread<Analyzer<'t>>);

impl<'t> ThreadAnalyzers<'t> {
    pub fn new(tokenizer: &'t Tokenizer) -> Self {
        ThreadAnalyzers(PerThread::new(|| Analyzer::new(tokenizer)))
    }

    /// Runs `f` with the calling thread's analyzer; returns its slot.
    pub fn with<R>(&self, f: impl FnOnce(&mut Analyzer<'t>) -> R) -> (usize, R) {
        self.0.with(f)
    }

    /// The vocabulary of each slot.
    pub fn into_vocabs(self) -> Vec<Arc<Vocab>> {
        self.0.into_inner().map(|a| Arc::new(a.into_vocab())).collect()
    }
}

/// Analyzes texts in parallel; the texts each thread handles share one
/// vocabulary. Results keep the order of `items`.
pub fn analyze_all<T: Sync>(tokenizer: &Tokenizer, items: &[T], text_of: impl Fn(&T) -> &str + Sync) -> Vec<Analyzed> {
    let analyzers = ThreadAnalyzers::new(tokenizer);
    type Piece = (usize, Vec<(Vec<(u32, TermStats)>, u32)>);
    let pieces: Vec<Piece> = items
        .par_chunks(256.max(items.len() / (rayon::current_num_threads() * 8).max(1)))
        .map(|chunk| analyzers.with(|a| chunk.iter().map(|it| a.analyze(text_of(it))).collect()))
        .collect();
    let vocabs = analyzers.into_vocabs();
    pieces
        .into_iter()
        .flat_map(|(slot, raw)| {
            let vocab = vocabs[slot].clone();
            raw.into_iter().map(move |(terms, len)| Analyzed { vocab: vocab.clone(), terms, len })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::tokenizer::TokenizerConfig;

    /// The cached analyzer gives what the plain tokenizer gives.
    #[test]
    fn same_as_tokenizer() {
        let texts = [
            "Hello, World! hello world\nparseUserId café 中文分词\n\nThe running Runners ran.",
            "line one\r\nline two two\u{3000}three\u{A0}four",
            "",
            "self.fooBar(baz_qux); a->b x::y<Z> \"quoted\" don't HTTPServer2.parseURL(v1_2) fooBar.baz",
            "__init__ (fooBar) [the,and] e.g. a.b.c.d.e.f.g.h.i.j.k.l.m.n.o.p.q.r.s.t.u.v.w.x.y.z 42.0f ..., Ünïcode.ß",
        ];
        for config in [TokenizerConfig::default(), TokenizerConfig::mastra()] {
            let t = Tokenizer::new(config);
            let mut a = Analyzer::new(&t);
            for _ in 0..2 {
                for text in texts {
                    let (terms, len) = a.analyze(text);
                    let fast: Vec<(String, TermStats)> =
                        terms.iter().map(|&(id, s)| (a.vocab.name(id).to_string(), s)).collect();
                    let mut plain = Vec::new();
                    t.tokenize_lines(text, |tok, line| plain.push((tok.to_string(), line)));
                    let slow: Vec<(String, TermStats)> =
                        Analyzed::from_tokens(plain.iter().map(|(s, l)| (s.as_str(), *l)))
                            .named()
                            .into_iter()
                            .map(|(s, st)| (s.to_string(), st))
                            .collect();
                    assert_eq!(fast, slow, "{text}");
                    assert_eq!(len as usize, plain.len());
                }
            }
        }
    }

    /// A field's words count their weight in the frequencies and the
    /// length; a whole identifier counts its weight in the frequencies only.
    #[test]
    fn whole_identifiers_count_outside_the_length() {
        let t = Tokenizer::default();
        let mut a = Analyzer::new(&t);
        let mut path = Vec::new();
        a.field_terms("src/parse_user_id.rs", &mut path);
        let (plain, plain_len) = a.analyze_with_names("fn parse_user_id() {}", (&path, 10), (&[], 10));
        let (terms, len) = a.analyze_with_names("fn parse_user_id() {}", (&path, 10), (&["parse_user_id", "run"], 10));
        assert_eq!(len, plain_len + 50, "the length adds the names' words, not the whole identifier");
        let names_only = a.analyze_with_names("", (&[], 0), (&["parse_user_id"], 10)).1;
        assert!(
            names_only > 0 && names_only.is_multiple_of(10),
            "a name's words count 10 each, the whole identifier nothing"
        );
        let named = |terms: &[(u32, TermStats)]| -> Vec<(String, u32, u32)> {
            terms.iter().map(|&(id, s)| (a.vocab.name(id).to_string(), s.tf, s.first_line)).collect()
        };
        let whole = named(&terms).into_iter().find(|(n, _, _)| n == "ident:parseuserid");
        assert_eq!(whole, Some(("ident:parseuserid".to_string(), 10, 0)), "weight times, on no line");
        assert_eq!(named(&terms).len(), named(&plain).len() + 2, "`run` and the whole identifier");
        assert_eq!(a.analyze_with_names("parse", (&[], 0), (&["parseUserId"], 0)).0.len(), 1, "weight 0: none");
    }

    /// Names counted through their own cache give each name's tokens and
    /// whole identifier, for hits and misses alike (short, medium and long
    /// keys), and so does the uncached way of a split pattern.
    #[test]
    fn names_cache_changes_nothing() {
        let names = [
            "parseUserId",
            "new",
            "parseUserId",
            "HTTPServer2",
            "parseUserIdFromHeader",
            "parseUserIdFromHeader",
            "a_very_long_function_name_for_the_long_key",
            "x",
        ];
        let pattern = TokenizerConfig { split: SplitRule::from_js("[;]", "").unwrap(), ..TokenizerConfig::default() };
        for config in [TokenizerConfig::default(), TokenizerConfig::mastra(), pattern] {
            let t = Tokenizer::new(config);
            let mut a = Analyzer::new(&t);
            for _ in 0..2 {
                let (terms, len) = a.analyze_with_names("", (&[], 0), (&names, 4));
                let mut got: Vec<(String, u32)> =
                    terms.iter().map(|&(id, s)| (a.vocab.name(id).to_string(), s.tf)).collect();
                got.sort();
                let mut want: Vec<(String, u32)> = Vec::new();
                let mut want_len = 0;
                for name in names {
                    t.tokenize_into(name, |tok| {
                        want_len += 4;
                        want.push((tok.to_string(), 4));
                    });
                    if let Some(w) = identifiers::term(name) {
                        want.push((w, 4));
                    }
                }
                let mut merged: std::collections::BTreeMap<String, u32> = Default::default();
                for (n, tf) in want {
                    *merged.entry(n).or_default() += tf;
                }
                assert_eq!(got, merged.into_iter().collect::<Vec<_>>());
                assert_eq!(len, want_len);
                let path = "src/router/trie-router/routerV2.ts other;word";
                let mut ids = Vec::new();
                a.field_terms(path, &mut ids);
                let got: Vec<&str> = ids.iter().map(|&id| a.vocab.name(id)).collect();
                assert_eq!(got, t.tokenize(path), "a path's terms are its tokens, in order");
            }
        }
    }

    /// The names found from the words a text was split into count as the
    /// names its lines define, with either split rule; and where the text
    /// before held other words (the analyzer's words of the last text).
    #[test]
    fn names_from_words_are_the_lines_names() {
        let text = "pub struct Walker;\n  impl Walker {\n\tpub fn run_all(&self) {}\n}\n\u{feff}fn hidden() {}\nconst MAX_DEPTH: u32 = 3;";
        let pattern = TokenizerConfig { split: SplitRule::from_js("[;]", "").unwrap(), ..TokenizerConfig::default() };
        for config in [TokenizerConfig::default(), TokenizerConfig::mastra(), pattern] {
            let t = Tokenizer::new(config);
            let mut a = Analyzer::new(&t);
            let mut names = Vec::new();
            definitions::definitions(Lang::Rust, text, |n, _| names.push(n));
            assert_eq!(names, ["Walker", "run_all", "MAX_DEPTH"]);
            for before in ["", "fn other_words_before() {}\nstruct Before;"] {
                a.analyze(before);
                let by_words = a.analyze_with_fields(text, (&[], 0), (Some(Lang::Rust), 10));
                let given = a.analyze_with_names(text, (&[], 0), (&names, 10));
                assert_eq!(by_words, given);
                assert_eq!(a.analyze_with_fields(text, (&[], 0), (None, 10)), a.analyze(text), "no language: no names");
            }
        }
    }

    proptest::proptest! {
        /// The names the analyzer finds from its own words count as those
        /// the line scan finds, for code-like texts of each language.
        #[test]
        fn names_from_words_on_any_text(text in "([ \t\u{feff}\u{85}]{0,2}(pub fn |fn |def |class |function |public void |int |export const |[a-z_$]{1,6}|\\(\\) \\{|[;{}()=:]| ){1,6}[\r\n]{1,2}){0,10}") {
            let t = Tokenizer::default();
            let mut a = Analyzer::new(&t);
            for lang in [Lang::Rust, Lang::Go, Lang::Script, Lang::Python, Lang::Jvm, Lang::C, Lang::Other] {
                let mut names = Vec::new();
                definitions::definitions(lang, &text, |n, _| names.push(n));
                let by_words = a.analyze_with_fields(&text, (&[], 0), (Some(lang), 10));
                proptest::prop_assert_eq!(by_words, a.analyze_with_names(&text, (&[], 0), (&names, 10)));
            }
        }
    }

    #[test]
    fn parallel_keeps_order() {
        let t = Tokenizer::default();
        let texts: Vec<String> = (0..2000).map(|i| format!("doc {i} word{} shared", i % 7)).collect();
        let all = analyze_all(&t, &texts, |s| s.as_str());
        assert_eq!(all.len(), 2000);
        for (i, a) in all.iter().enumerate() {
            assert_eq!(a, &Analyzed::of_text(&t, &texts[i]));
        }
    }
}
