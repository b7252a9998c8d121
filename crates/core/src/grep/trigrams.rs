//! The trigram index of grep (Russ Cox's Code Search): for each three-byte
//! window of a file's text (ASCII letters lowercased, so one index serves
//! both cases), the files that hold it, as delta-coded ids. A pattern
//! becomes a query over trigrams that every match must satisfy (`query_of`,
//! after codesearch's `regexp.go`); files that fail it cannot match and are
//! never read. The query only prunes: candidates are verified by the regex.

use crate::bytes::varint;
use regex_syntax::hir::{Class, Hir, HirKind};
use rustc_hash::FxHashMap;
use std::collections::BTreeSet;

/// A condition on the trigrams of a text that every match implies.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Query {
    /// No condition: every file is a candidate.
    All,
    Trigram(u32),
    And(Vec<Query>),
    Or(Vec<Query>),
}

impl Query {
    fn and(self, other: Query) -> Query {
        match (self, other) {
            (Query::All, q) | (q, Query::All) => q,
            (Query::And(mut a), Query::And(b)) => {
                a.extend(b);
                Query::And(a)
            }
            (Query::And(mut a), q) | (q, Query::And(mut a)) => {
                a.push(q);
                Query::And(a)
            }
            (a, b) => Query::And(vec![a, b]),
        }
    }

    fn or(parts: Vec<Query>) -> Query {
        if parts.is_empty() || parts.contains(&Query::All) {
            return Query::All;
        }
        if parts.len() == 1 {
            return parts.into_iter().next().expect("one");
        }
        Query::Or(parts)
    }
}

/// How many strings an exact set may hold before it becomes a query.
const MAX_EXACT: usize = 64;
/// Classes of at most this many characters are expanded into strings.
const MAX_CLASS: usize = 16;

/// What a sub-pattern tells: the exact strings it matches (when few), or
/// a condition its matches satisfy.
struct Info {
    exact: Option<BTreeSet<Vec<u8>>>,
    query: Query,
}

impl Info {
    fn exact(set: BTreeSet<Vec<u8>>) -> Info {
        Info { exact: Some(set), query: Query::All }
    }

    fn any() -> Info {
        Info { exact: None, query: Query::All }
    }

    fn empty() -> Info {
        Info::exact(BTreeSet::from([Vec::new()]))
    }

    fn into_query(self) -> Query {
        match self.exact {
            Some(set) => strings_query(&set),
            None => self.query,
        }
    }
}

/// The condition a match of `hir` satisfies.
pub fn query_of(hir: &Hir) -> Query {
    info(hir).into_query()
}

fn info(hir: &Hir) -> Info {
    match hir.kind() {
        HirKind::Empty | HirKind::Look(_) => Info::empty(),
        HirKind::Literal(l) => Info::exact(BTreeSet::from([fold(&l.0)])),
        HirKind::Class(c) => class_info(c),
        HirKind::Capture(c) => info(&c.sub),
        HirKind::Repetition(r) => {
            let sub = info(&r.sub);
            match (r.min, r.max) {
                (1, Some(1)) => sub,
                (0, Some(1)) => match sub.exact {
                    Some(mut set) if set.len() < MAX_EXACT => {
                        set.insert(Vec::new());
                        Info::exact(set)
                    }
                    _ => Info::any(),
                },
                (0, _) => Info::any(),
                _ => Info { exact: None, query: sub.into_query() },
            }
        }
        HirKind::Concat(subs) => concat_info(subs),
        HirKind::Alternation(subs) => {
            let infos: Vec<Info> = subs.iter().map(info).collect();
            // Saturating: two inexact branches must not wrap around to "few".
            let total =
                infos.iter().fold(0usize, |n, i| n.saturating_add(i.exact.as_ref().map_or(usize::MAX, BTreeSet::len)));
            if total <= MAX_EXACT {
                return Info::exact(infos.into_iter().flat_map(|i| i.exact.expect("all exact")).collect());
            }
            Info { exact: None, query: Query::or(infos.into_iter().map(Info::into_query).collect()) }
        }
    }
}

fn concat_info(subs: &[Hir]) -> Info {
    let mut query = Query::All;
    let mut current: BTreeSet<Vec<u8>> = BTreeSet::from([Vec::new()]);
    let mut exact = true;
    for sub in subs {
        let i = info(sub);
        match i.exact {
            Some(set) if current.len() * set.len() <= MAX_EXACT => current = cross(&current, &set),
            Some(set) => {
                query = query.and(strings_query(&current));
                current = set;
                exact = false;
            }
            None => {
                query = query.and(strings_query(&current)).and(i.query);
                current = BTreeSet::from([Vec::new()]);
                exact = false;
            }
        }
    }
    if exact {
        return Info::exact(current);
    }
    Info { exact: None, query: query.and(strings_query(&current)) }
}

fn cross(a: &BTreeSet<Vec<u8>>, b: &BTreeSet<Vec<u8>>) -> BTreeSet<Vec<u8>> {
    a.iter().flat_map(|x| b.iter().map(move |y| [x.as_slice(), y.as_slice()].concat())).collect()
}

fn class_info(c: &Class) -> Info {
    let mut set = BTreeSet::new();
    match c {
        Class::Unicode(u) => {
            let size: u64 = u.ranges().iter().map(|r| u64::from(r.end()) - u64::from(r.start()) + 1).sum();
            if size as usize > MAX_CLASS {
                return Info::any();
            }
            for r in u.ranges() {
                for ch in r.start()..=r.end() {
                    set.insert(fold(ch.encode_utf8(&mut [0; 4]).as_bytes()));
                }
            }
        }
        Class::Bytes(b) => {
            let size: usize = b.ranges().iter().map(|r| usize::from(r.end()) - usize::from(r.start()) + 1).sum();
            if size > MAX_CLASS {
                return Info::any();
            }
            for r in b.ranges() {
                for byte in r.start()..=r.end() {
                    set.insert(fold(&[byte]));
                }
            }
        }
    }
    // An empty class matches nothing; no file can hold a match.
    if set.is_empty() {
        return Info::any();
    }
    Info::exact(set)
}

/// Every string of `set` (one of them occurs in a match): the trigrams of
/// each, or no condition when one is shorter than three bytes.
fn strings_query(set: &BTreeSet<Vec<u8>>) -> Query {
    let mut parts = Vec::with_capacity(set.len());
    for s in set {
        if s.len() < 3 {
            return Query::All;
        }
        let grams: BTreeSet<u32> = s.windows(3).map(key).collect();
        parts.push(grams.into_iter().map(Query::Trigram).fold(Query::All, Query::and));
    }
    Query::or(parts)
}

/// ASCII letters lowercased; every other byte as it is.
fn fold(bytes: &[u8]) -> Vec<u8> {
    bytes.to_ascii_lowercase()
}

fn key(w: &[u8]) -> u32 {
    u32::from(w[0].to_ascii_lowercase()) << 16
        | u32::from(w[1].to_ascii_lowercase()) << 8
        | u32::from(w[2].to_ascii_lowercase())
}

/// The distinct trigrams of a text, sorted. A bit per possible trigram
/// (2 MB, one per thread, cleared after each text) finds the distinct ones
/// in one pass; only those are sorted (sorting every window cost 10x).
pub fn trigrams_of(text: &[u8]) -> Vec<u32> {
    thread_local! {
        static SEEN: std::cell::RefCell<Vec<u64>> = const { std::cell::RefCell::new(Vec::new()) };
    }
    if text.len() < 3 {
        return Vec::new();
    }
    SEEN.with(|seen| {
        let mut seen = seen.borrow_mut();
        if seen.is_empty() {
            seen.resize(1 << 18, 0);
        }
        let mut out = Vec::new();
        for w in text.windows(3) {
            let k = key(w);
            let (word, bit) = ((k >> 6) as usize, 1u64 << (k & 63));
            if seen[word] & bit == 0 {
                seen[word] |= bit;
                out.push(k);
            }
        }
        for &k in &out {
            seen[(k >> 6) as usize] = 0;
        }
        out.sort_unstable();
        out
    })
}

/// Files by the trigrams they hold. Ids only grow: a changed file gets a
/// new id (its old one is dead), so every posting list is appended to in
/// order and stays sorted.
#[derive(Default)]
pub struct TrigramIndex {
    postings: FxHashMap<u32, Postings>,
    live: Vec<u64>,
    next: u32,
    dead: usize,
    bytes: usize,
}

#[derive(Default)]
struct Postings {
    /// Gaps between ids, LEB128.
    gaps: Vec<u8>,
    last: u32,
}

impl TrigramIndex {
    /// Adds a file by its distinct trigrams; returns its id.
    pub fn add(&mut self, trigrams: &[u32]) -> u32 {
        let id = self.next;
        self.next += 1;
        for &t in trigrams {
            let p = self.postings.entry(t).or_default();
            let before = p.gaps.len();
            let gap = if p.gaps.is_empty() { id + 1 } else { id - p.last };
            varint::put(&mut p.gaps, gap);
            p.last = id;
            self.bytes += p.gaps.len() - before;
        }
        let word = id as usize / 64;
        if self.live.len() <= word {
            self.live.resize(word + 1, 0);
        }
        self.live[word] |= 1 << (id % 64);
        id
    }

    /// Marks a file's id dead (its postings stay until a rebuild).
    pub fn remove(&mut self, id: u32) {
        if let Some(w) = self.live.get_mut(id as usize / 64) {
            if *w & (1 << (id % 64)) != 0 {
                *w &= !(1 << (id % 64));
                self.dead += 1;
            }
        }
    }

    /// The id the next file gets (every id in use is below it).
    pub fn next_id(&self) -> u32 {
        self.next
    }

    /// Ids that are dead, against live ones: a caller rebuilds past a share.
    pub fn dead(&self) -> usize {
        self.dead
    }

    /// Memory held by the posting lists (their bytes and table entries).
    pub fn memory_bytes(&self) -> usize {
        self.bytes + self.postings.capacity() * (std::mem::size_of::<(u32, Postings)>() + 1) + self.live.len() * 8
    }

    /// The live files that satisfy `q`, as a bit set over ids.
    pub fn candidates(&self, q: &Query) -> Vec<u64> {
        let mut set = self.eval(q);
        for (w, l) in set.iter_mut().zip(&self.live) {
            *w &= l;
        }
        set.truncate(self.live.len());
        set
    }

    fn eval(&self, q: &Query) -> Vec<u64> {
        match q {
            Query::All => vec![u64::MAX; self.live.len()],
            Query::Trigram(t) => self.posting_set(*t),
            Query::And(parts) => {
                let mut acc = vec![u64::MAX; self.live.len()];
                // Rarest trigrams first would stop early; the sets are small
                // (one bit per file), so each part is simply intersected.
                for p in parts {
                    let s = self.eval(p);
                    for (a, b) in acc.iter_mut().zip(s) {
                        *a &= b;
                    }
                }
                acc
            }
            Query::Or(parts) => {
                let mut acc = vec![0u64; self.live.len()];
                for p in parts {
                    for (a, b) in acc.iter_mut().zip(self.eval(p)) {
                        *a |= b;
                    }
                }
                acc
            }
        }
    }

    fn posting_set(&self, t: u32) -> Vec<u64> {
        let mut set = vec![0u64; self.live.len()];
        let Some(p) = self.postings.get(&t) else { return set };
        let (mut id, mut at, mut first) = (0u32, 0usize, true);
        while at < p.gaps.len() {
            let gap = varint::get(&p.gaps, &mut at);
            id = if first { gap - 1 } else { id + gap };
            first = false;
            set[id as usize / 64] |= 1 << (id % 64);
        }
        set
    }
}

impl TrigramIndex {
    /// Writes the index (`grep::store`).
    pub fn encode(&self, e: &mut crate::bytes::codec::Encoder) {
        e.u32(self.next);
        e.u64(self.dead as u64);
        e.len(self.live.len());
        for &w in &self.live {
            e.u64(w);
        }
        let mut keys: Vec<&u32> = self.postings.keys().collect();
        keys.sort_unstable();
        e.len(keys.len());
        for k in keys {
            let p = &self.postings[k];
            e.u32(*k);
            e.u32(p.last);
            e.bytes(&p.gaps);
        }
    }

    /// Reads what `encode` wrote; every id checked against `next`.
    pub fn decode(d: &mut crate::bytes::codec::Decoder) -> Result<TrigramIndex, crate::bytes::SnapshotError> {
        let bad = || crate::bytes::SnapshotError::Corrupt("grep: a posting past the last id".into());
        let next = d.u32("grep next id")?;
        let dead = d.u64("grep dead ids")? as usize;
        let words = d.len(8, "grep live ids")?;
        if words != (next as usize).div_ceil(64) {
            return Err(bad());
        }
        let live = (0..words).map(|_| d.u64("grep live word")).collect::<Result<Vec<u64>, _>>()?;
        let n = d.len(12, "grep trigrams")?;
        let mut index = TrigramIndex { live, next, dead, ..Default::default() };
        for _ in 0..n {
            let (key, last) = (d.u32("grep trigram")?, d.u32("grep last id")?);
            let gaps = d.bytes("grep postings")?.to_vec();
            if last >= next || !postings_valid(&gaps, last) {
                return Err(bad());
            }
            index.bytes += gaps.len();
            index.postings.insert(key, Postings { gaps, last });
        }
        Ok(index)
    }
}

/// Whether `gaps` decode to increasing ids ending at `last` (so that no id
/// read back from a damaged file can index past the live set).
fn postings_valid(gaps: &[u8], last: u32) -> bool {
    let (mut id, mut at, mut first) = (0u64, 0usize, true);
    while at < gaps.len() {
        // The first gap is the id + 1, the others the distance to the last: none is 0.
        let Some(gap) = varint::try_get(gaps, &mut at).filter(|&g| g > 0) else { return false };
        id = if first { u64::from(gap) - 1 } else { id + u64::from(gap) };
        first = false;
    }
    !first && id == u64::from(last)
}

/// Whether bit `id` is set.
pub fn has(set: &[u64], id: u32) -> bool {
    set.get(id as usize / 64).is_some_and(|w| w & (1 << (id % 64)) != 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn q(pattern: &str) -> Query {
        query_of(&regex_syntax::parse(pattern).unwrap())
    }

    fn matching(pattern: &str, texts: &[&str]) -> Vec<usize> {
        let mut index = TrigramIndex::default();
        for t in texts {
            index.add(&trigrams_of(t.as_bytes()));
        }
        let set = index.candidates(&q(pattern));
        (0..texts.len()).filter(|&i| has(&set, i as u32)).collect()
    }

    #[test]
    fn literals_alternations_and_classes_prune() {
        let texts = ["fn parse_user_id()", "struct Parser", "let x = 1", "PARSE everything"];
        // The index folds case; the regex decides.
        assert_eq!(matching("parse", &texts), [0, 1, 3]);
        assert_eq!(matching("(?i)STRUCT p", &texts), [1]);
        assert_eq!(matching("Parse|let", &texts), [0, 1, 2, 3]);
        assert_eq!(matching("user_i[dD]", &texts), [0]);
        assert_eq!(matching(r"pars\w+_id", &texts), [0]);
        // Nothing to go on: every file.
        assert_eq!(matching(r"\w+", &texts), [0, 1, 2, 3]);
        // Several branches without exact strings (their count once wrapped around).
        assert_eq!(matching(r"struct\s+\w+|let\s+\w+|TODO|FIXME", &texts), [1, 2]);
    }

    #[test]
    fn a_removed_file_is_no_candidate() {
        let mut index = TrigramIndex::default();
        let a = index.add(&trigrams_of(b"hello"));
        let b = index.add(&trigrams_of(b"hello"));
        index.remove(a);
        let set = index.candidates(&q("hello"));
        assert!(!has(&set, a) && has(&set, b));
    }

    proptest::proptest! {
        /// Pruning never drops a file the regex matches.
        #[test]
        fn never_prunes_a_match(texts in proptest::collection::vec("[abcAB _\n]{0,40}", 1..8), pieces in proptest::collection::vec(proptest::sample::select(vec!["a", "b", "ab", "abc", "[ab]c", "a+b", "(?i:ab)", "a.c", "ca?b", "(?:ab|c)", "A", "b*"]), 1..5)) {
            let pattern = pieces.concat();
            let re = regex::Regex::new(&pattern).unwrap();
            let mut index = TrigramIndex::default();
            for t in &texts {
                index.add(&trigrams_of(t.as_bytes()));
            }
            let set = index.candidates(&q(&pattern));
            for (i, t) in texts.iter().enumerate() {
                if re.is_match(t) {
                    proptest::prop_assert!(has(&set, i as u32), "{pattern} matches {t:?}");
                }
            }
        }
    }
}
