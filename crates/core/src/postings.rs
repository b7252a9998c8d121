//! Compact index storage. Per term: document slots, and per posting one
//! byte of frequency and one byte of length code (a lower bound on the
//! document's length), in parallel arrays (6 bytes a posting), with a
//! summary per block of 32 postings, so top-k can skip blocks and bound
//! postings without reading the documents' lengths. Per document: its
//! distinct terms with their first and last lines, as a varint table with
//! skip points (line ranges come from it, not from re-tokenizing).

/// Postings per skip block.
pub const BLOCK: usize = 32;

/// What bounds the scores inside one block: BM25's frequency part is
/// `(k1+1) / (1 + c1/tf + c2·len/tf)`, so the largest `tf` and the smallest
/// `len/tf` bound it whatever the average length is.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BlockMax {
    pub last_doc: u32,
    pub max_tf: u32,
    pub min_len_per_tf: f32,
    /// The block's largest frequency part at the index's reference average
    /// length (rounded up): exact while the average stays there, and scaled
    /// up by how much it has grown since (see `Bm25Index::top_k`).
    pub max_score: f32,
}

/// `x` as an f32 no smaller than `x`, so that bounds stored in f32 stay bounds.
pub fn f32_up(x: f64) -> f32 {
    let r = x as f32;
    if (r as f64) < x { r.next_up() } else { r }
}

/// `len / tf`, rounded down so that bounds built on it stay bounds.
pub fn len_per_tf(len: u32, tf: u32) -> f32 {
    let exact = len as f64 / tf as f64;
    let r = exact as f32;
    if r as f64 > exact { f32::from_bits(r.to_bits() - 1).max(0.0) } else { r }
}

/// A document length in one byte, rounded down (4 significant bits): a
/// bound on the score read next to the frequency, so that most postings
/// are ruled out without fetching the exact length from a scattered slot.
pub fn len_code(len: u32) -> u8 {
    if len < 16 {
        return len as u8;
    }
    let e = 31 - len.leading_zeros(); // >= 4
    let m = (len >> (e - 4)) & 15;
    (16 + (e - 4) * 16 + m).min(255) as u8
}

/// The smallest length with this code (at most any length coded so).
pub const fn len_of_code(code: u8) -> u32 {
    let c = code as u32;
    if c < 16 {
        return c;
    }
    let (e, m) = ((c - 16) / 16 + 4, (c - 16) % 16);
    (16 + m) << (e - 4)
}

static LEN_OF_CODE: [u32; 256] = {
    let mut t = [0u32; 256];
    let mut c = 0;
    while c < 256 {
        t[c] = len_of_code(c as u8);
        c += 1;
    }
    t
};

/// Frequencies from here on live in `big` (the byte holds the marker).
const TF_BIG: u16 = 255;

#[derive(Debug, Clone, Default)]
pub struct Postings {
    pub docs: Vec<u32>,
    /// Per posting: the frequency in the low byte (`TF_BIG`: see `big`), the
    /// length code (`len_code`) in the high byte.
    packed: Vec<u16>,
    /// (position, tf) of the rare frequencies that do not fit in a byte.
    big: Vec<(u32, u32)>,
    pub blocks: Vec<BlockMax>,
}

impl Postings {
    pub fn len(&self) -> usize {
        self.docs.len()
    }

    pub fn is_empty(&self) -> bool {
        self.docs.is_empty()
    }

    /// Appends a posting; `doc` must be above every slot already here.
    /// `score`: its frequency part at the reference average length.
    pub fn push(&mut self, doc: u32, tf: u32, len: u32, score: f32) {
        let i = self.docs.len();
        self.docs.push(doc);
        let code = u16::from(len_code(len)) << 8;
        if tf >= u32::from(TF_BIG) {
            self.packed.push(code | TF_BIG);
            self.big.push((i as u32, tf));
        } else {
            self.packed.push(code | tf as u16);
        }
        let ratio = len_per_tf(len, tf);
        if i.is_multiple_of(BLOCK) {
            self.blocks.push(BlockMax { last_doc: doc, max_tf: tf, min_len_per_tf: ratio, max_score: score });
        } else {
            let b = self.blocks.last_mut().expect("block");
            b.last_doc = doc;
            b.max_tf = b.max_tf.max(tf);
            b.min_len_per_tf = b.min_len_per_tf.min(ratio);
            b.max_score = b.max_score.max(score);
        }
    }

    /// The frequency at `i` and a length no larger than its document's.
    #[inline]
    pub fn tf_and_min_len(&self, i: usize) -> (u32, u32) {
        let p = self.packed[i];
        let tf = if p & 0xff != TF_BIG { u32::from(p & 0xff) } else { self.tf(i) };
        (tf, LEN_OF_CODE[usize::from(p >> 8)])
    }

    #[inline]
    pub fn tf(&self, i: usize) -> u32 {
        let t = self.packed[i] & 0xff;
        if t != TF_BIG {
            return u32::from(t);
        }
        let k = self.big.partition_point(|&(p, _)| p < i as u32);
        self.big[k].1
    }

    /// The first position at or after `from` whose slot is at least
    /// `target`.
    #[inline]
    pub fn advance(&self, from: usize, target: u32) -> usize {
        gallop(&self.docs, from, |&d| d < target)
    }

    /// The position of `doc`, if it has a posting here.
    pub fn find(&self, doc: u32) -> Option<usize> {
        self.docs.binary_search(&doc).ok()
    }

    /// Keeps the postings whose slot maps to a new slot (compaction).
    /// `score_of(tf, len)`: the frequency part at the reference average.
    pub fn remap(&self, new_slot: impl Fn(u32) -> Option<u32>, len_of: impl Fn(u32) -> u32, score_of: impl Fn(u32, u32) -> f32) -> Postings {
        let mut out = Postings::default();
        for (i, &d) in self.docs.iter().enumerate() {
            if let Some(s) = new_slot(d) {
                let (tf, len) = (self.tf(i), len_of(s));
                out.push(s, tf, len, score_of(tf, len));
            }
        }
        out
    }

    /// Room for exactly `n` more postings.
    pub fn reserve_exact(&mut self, n: usize) {
        self.docs.reserve_exact(n);
        self.packed.reserve_exact(n);
        let blocks = (self.docs.len() + n).div_ceil(BLOCK);
        self.blocks.reserve_exact(blocks.saturating_sub(self.blocks.len()));
    }

    pub fn shrink_to_fit(&mut self) {
        self.docs.shrink_to_fit();
        self.packed.shrink_to_fit();
        self.big.shrink_to_fit();
        self.blocks.shrink_to_fit();
    }

    pub fn bytes(&self) -> usize {
        self.docs.capacity() * 4 + self.packed.capacity() * 2 + self.big.capacity() * 8 + self.blocks.capacity() * std::mem::size_of::<BlockMax>()
    }
}

/// The first position at or after `from` where `before` turns false
/// (`before` must be true then false along `items`): galloping, since the
/// position sought is usually close to `from`.
#[inline]
pub fn gallop<T>(items: &[T], from: usize, before: impl Fn(&T) -> bool) -> usize {
    if from >= items.len() || !before(&items[from]) {
        return from;
    }
    let mut step = 1;
    let mut lo = from;
    let mut hi = from + 1;
    while hi < items.len() && before(&items[hi]) {
        lo = hi;
        step *= 2;
        hi = (hi + step).min(items.len());
    }
    lo + 1 + items[lo + 1..hi.min(items.len())].partition_point(before)
}

fn put_varint(out: &mut Vec<u8>, mut v: u32) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

#[inline]
fn get_varint(bytes: &[u8], pos: &mut usize) -> u32 {
    let mut v = 0u32;
    let mut shift = 0;
    loop {
        let b = bytes[*pos];
        *pos += 1;
        v |= ((b & 0x7F) as u32) << shift;
        if b < 0x80 {
            return v;
        }
        shift += 7;
    }
}

/// Entries between two skip points of a table.
const TABLE_SKIP: usize = 64;

/// One document's `(term, first line, last line)` entries as bytes, sorted
/// by term: the entry count, the byte length of the term section and the
/// number of skip points (varints); the skip points, 12 bytes each: the
/// term of every `TABLE_SKIP`-th entry and where its term and its lines
/// start (u32, little-endian); the term deltas; each entry's first line and
/// line span (varints). Terms apart from lines, and skip points, so that a
/// lookup decodes a few dozen term bytes, not the whole table.
pub fn encode_table(entries: &mut [(u32, u32, u32)]) -> Box<[u8]> {
    entries.sort_unstable_by_key(|e| e.0);
    let (mut terms, mut lines, mut skips) = (Vec::with_capacity(entries.len() * 2), Vec::with_capacity(entries.len() * 3), Vec::new());
    let mut prev = 0u32;
    for (i, &(t, first, last)) in entries.iter().enumerate() {
        if i > 0 && i % TABLE_SKIP == 0 {
            for v in [t, terms.len() as u32, lines.len() as u32] {
                skips.extend_from_slice(&v.to_le_bytes());
            }
        }
        put_varint(&mut terms, t - prev);
        prev = t;
        put_varint(&mut lines, first);
        put_varint(&mut lines, last.saturating_sub(first));
    }
    let mut out = Vec::with_capacity(15 + skips.len() + terms.len() + lines.len());
    put_varint(&mut out, entries.len() as u32);
    put_varint(&mut out, terms.len() as u32);
    put_varint(&mut out, (skips.len() / 12) as u32);
    out.extend_from_slice(&skips);
    out.extend_from_slice(&terms);
    out.extend_from_slice(&lines);
    out.into_boxed_slice()
}

struct TableLayout {
    entries: usize,
    skips: usize,
    skips_at: usize,
    terms_at: usize,
    lines_at: usize,
}

fn table_layout(bytes: &[u8]) -> TableLayout {
    if bytes.is_empty() {
        return TableLayout { entries: 0, skips: 0, skips_at: 0, terms_at: 0, lines_at: 0 };
    }
    let mut pos = 0;
    let entries = get_varint(bytes, &mut pos) as usize;
    let terms_len = get_varint(bytes, &mut pos) as usize;
    let skips = get_varint(bytes, &mut pos) as usize;
    let terms_at = pos + skips * 12;
    TableLayout { entries, skips, skips_at: pos, terms_at, lines_at: terms_at + terms_len }
}

/// Skip point `i`: (term, term byte offset, line byte offset).
fn skip_point(bytes: &[u8], layout: &TableLayout, i: usize) -> (u32, usize, usize) {
    let at = layout.skips_at + i * 12;
    let u = |k: usize| u32::from_le_bytes(bytes[at + 4 * k..at + 4 * k + 4].try_into().expect("4 bytes"));
    (u(0), u(1) as usize, u(2) as usize)
}

/// The terms of an encoded table, in order.
pub fn table_terms(bytes: &[u8]) -> impl Iterator<Item = u32> + '_ {
    let layout = table_layout(bytes);
    let mut pos = layout.terms_at;
    let mut term = 0u32;
    (0..layout.entries).map(move |_| {
        term += get_varint(bytes, &mut pos);
        term
    })
}

/// The entries of an encoded table, in term order.
pub fn decode_table(bytes: &[u8]) -> impl Iterator<Item = (u32, u32, u32)> + '_ {
    let mut lines = table_layout(bytes).lines_at;
    table_terms(bytes).map(move |t| {
        let first = get_varint(bytes, &mut lines);
        let span = get_varint(bytes, &mut lines);
        (t, first, first + span)
    })
}

/// The first and last line over the entries of `wanted` terms with a line
/// (first line not 0); `None` when none has one.
pub fn lines_of_terms(bytes: &[u8], wanted: &[u32]) -> Option<(u32, u32)> {
    let layout = table_layout(bytes);
    let mut range: Option<(u32, u32)> = None;
    for &w in wanted {
        // The last skip point at or before `w`, then entries from there.
        let mut skip = 0;
        while skip < layout.skips && skip_point(bytes, &layout, skip).0 <= w {
            skip += 1;
        }
        let (mut entry, mut term, mut pos, mut lines) = match skip {
            0 => (0, 0u32, layout.terms_at, layout.lines_at),
            s => {
                let (t, tp, lp) = skip_point(bytes, &layout, s - 1);
                // The delta stored at the skip point is read again below.
                let mut p = layout.terms_at + tp;
                let delta = get_varint(bytes, &mut p);
                (s * TABLE_SKIP, t - delta, layout.terms_at + tp, layout.lines_at + lp)
            }
        };
        let first_entry = entry;
        while entry < layout.entries {
            term += get_varint(bytes, &mut pos);
            if term > w {
                break;
            }
            if term == w {
                lines = skip_varints(bytes, lines, 2 * (entry - first_entry));
                let first = get_varint(bytes, &mut lines);
                let last = first + get_varint(bytes, &mut lines);
                if first != 0 {
                    range = Some(range.map_or((first, last), |(a, b)| (a.min(first), b.max(last))));
                }
                break;
            }
            entry += 1;
        }
    }
    range
}

/// The position after `count` more varints from `pos`: ends are the bytes
/// below 0x80, counted eight at a time.
fn skip_varints(bytes: &[u8], mut pos: usize, mut count: usize) -> usize {
    while let Some(chunk) = bytes.get(pos..pos + 8) {
        let word = u64::from_le_bytes(chunk.try_into().expect("8 bytes"));
        let ends = (!word & 0x8080_8080_8080_8080).count_ones() as usize;
        // Whole chunk only while more ends are needed past it (a varint
        // cut at its end is one still to skip).
        if ends >= count {
            break;
        }
        count -= ends;
        pos += 8;
    }
    while count > 0 {
        if bytes[pos] < 0x80 {
            count -= 1;
        }
        pos += 1;
    }
    pos
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn length_codes_round_down_and_keep_order() {
        let mut last = 0;
        for len in (0..5000).chain([65_535, 1 << 20, 507_904, 507_903, u32::MAX]) {
            let (code, min) = (len_code(len), len_of_code(len_code(len)));
            assert!(min <= len, "{len} -> {min}");
            assert!(len < 16 || (len - min) as f64 <= len as f64 / 16.0 || code == 255, "{len} -> {min}");
            if len < 5000 {
                assert!(code >= last);
                last = code;
            }
        }
        assert_eq!(len_of_code(len_code(700)), 672);
    }

    #[test]
    fn postings_blocks_and_big_frequencies() {
        let mut p = Postings::default();
        for d in 0..300u32 {
            p.push(d * 2, if d == 7 { 100_000 } else { d % 5 + 1 }, d + 10, d as f32);
        }
        assert_eq!(p.len(), 300);
        assert_eq!(p.tf(7), 100_000);
        assert_eq!(p.tf_and_min_len(7), (100_000, 17));
        assert_eq!(p.tf(300 - 1), 299 % 5 + 1);
        assert_eq!(p.tf(8), 4);
        assert_eq!(p.blocks.len(), 300usize.div_ceil(BLOCK));
        assert_eq!(p.blocks[0].last_doc, 2 * (BLOCK as u32 - 1));
        assert_eq!(p.blocks[0].max_tf, 100_000);
        assert!(p.blocks[0].min_len_per_tf <= 17.0 / 100_000.0);
        assert!(len_per_tf(10, 3) as f64 <= 10.0 / 3.0);
        assert_eq!(p.blocks[0].max_score, (BLOCK - 1) as f32);
        assert!(f32_up(0.1) as f64 >= 0.1 && f32_up(0.1) == 0.1f32.max(f32_up(0.1)));
        assert_eq!(p.blocks.last().unwrap().last_doc, 598);
        assert_eq!(p.find(14), Some(7));
        for from in [0, 3, 100, 299, 300] {
            for target in [0, 1, 14, 15, 301, 598, 599, 10_000] {
                let expect = from.min(300) + p.docs[from.min(300)..].partition_point(|&d| d < target);
                assert_eq!(p.advance(from, target), expect, "{from} {target}");
            }
        }
        assert_eq!(p.find(15), None);
        let q = p.remap(|d| (d % 4 == 0).then_some(d / 4), |s| s, |tf, _| tf as f32);
        assert_eq!(q.len(), 150);
        assert_eq!(q.tf(0), 1);
    }

    #[test]
    fn tables_round_trip() {
        let mut e = vec![(900, 3, 9), (5, 1, 1), (70_000, 0, 0), (6, 200, 100_000)];
        let bytes = encode_table(&mut e);
        let back: Vec<_> = decode_table(&bytes).collect();
        assert_eq!(back, [(5, 1, 1), (6, 200, 100_000), (900, 3, 9), (70_000, 0, 0)]);
        assert!(bytes.len() < 4 * 12);
        assert_eq!(table_terms(&bytes).collect::<Vec<_>>(), [5, 6, 900, 70_000]);
        assert!(decode_table(&encode_table(&mut [])).next().is_none());
    }

    #[test]
    fn line_lookups_equal_a_full_decode() {
        let mut x = 88172645463325252u64;
        let mut next = move |m: u64| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x % m
        };
        for round in 0..300 {
            let n = next(400) as u32;
            let mut terms: Vec<u32> = (0..n).map(|_| next(if round % 2 == 0 { 500 } else { 1 << 20 }) as u32).collect();
            terms.sort_unstable();
            terms.dedup();
            // Lines of all sizes, some entries without a line (0).
            let mut e: Vec<(u32, u32, u32)> = terms
                .iter()
                .map(|&t| {
                    let big = next(2) == 0;
                    let first = if next(5) == 0 { 0 } else { next(if big { 70_000 } else { 100 }) as u32 + 1 };
                    (t, first, if first == 0 { 0 } else { first + next(300) as u32 })
                })
                .collect();
            let bytes = encode_table(&mut e);
            for _ in 0..5 {
                let mut wanted = Vec::new();
                for _ in 0..1 + next(4) {
                    let known = next(2) == 0 && !terms.is_empty();
                    wanted.push(if known { terms[next(terms.len() as u64) as usize] } else { next(1 << 20) as u32 });
                }
                let want = e.iter().filter(|x| wanted.contains(&x.0) && x.1 != 0).fold(None, |r: Option<(u32, u32)>, x| Some(r.map_or((x.1, x.2), |(a, b)| (a.min(x.1), b.max(x.2)))));
                assert_eq!(lines_of_terms(&bytes, &wanted), want);
            }
        }
    }
}
