//! Per document: its distinct terms with their first and last lines, as a
//! varint table with skip points. Line ranges of results come from it (no
//! re-tokenizing), and removals read the terms a document had from it.
//!
//! Lines are bit-packed at the width the table needs (a chunk of a hundred
//! lines: 7 bits a first line), and a span (last line - first) only where
//! it is not 0 (most terms sit on one line): about 1.4 bytes an entry where
//! two varints took 2 (mixed-language code, 16 million entries at 50,000
//! files: 33 MB of lines before).

use crate::bytes::varint::put as put_varint;

/// Entries between two skip points of a table.
const TABLE_SKIP: usize = 64;

/// Bits needed for values up to `max`.
fn width(max: u32) -> u32 {
    u32::BITS - max.leading_zeros()
}

/// Values of `width` bits one after another, low bits first, into bytes
/// sized beforehand.
struct BitWriter {
    bytes: Vec<u8>,
    bits: usize,
}

impl BitWriter {
    fn with_values(count: usize, width: u32) -> Self {
        BitWriter { bytes: vec![0; (count * width as usize).div_ceil(8)], bits: 0 }
    }

    #[inline]
    fn push(&mut self, v: u32, width: u32) {
        debug_assert!(width == 32 || v >> width == 0, "{v} wider than {width} bits");
        let (mut v, mut at) = ((v as u64) << (self.bits % 8), self.bits / 8);
        while v != 0 {
            self.bytes[at] |= v as u8;
            (v, at) = (v >> 8, at + 1);
        }
        self.bits += width as usize;
    }
}

/// The `width`-bit value at bit `bit` of `bytes` (width at most 32).
#[inline]
fn bits_at(bytes: &[u8], bit: usize, width: u32) -> u32 {
    if width == 0 {
        return 0;
    }
    let at = bit / 8;
    let mut word = [0u8; 8];
    // (Past the end only in a forged table: read as zeros, never a panic.)
    let rest = bytes.get(at..).unwrap_or(&[]);
    let n = rest.len().min(8);
    word[..n].copy_from_slice(&rest[..n]);
    ((u64::from_le_bytes(word) >> (bit % 8)) & ((1u64 << width) - 1)) as u32
}

/// Set bits of `flags` before bit `i`.
fn rank(flags: &[u8], i: usize) -> usize {
    let words = flags[..i / 8].chunks_exact(8);
    let tail: usize = words.remainder().iter().map(|b| b.count_ones() as usize).sum();
    let whole: usize = words.map(|w| u64::from_le_bytes(w.try_into().expect("8 bytes")).count_ones() as usize).sum();
    whole + tail + (flags[i / 8] & ((1u8 << (i % 8)) - 1)).count_ones() as usize
}

/// One document's `(term, first line, last line)` entries as bytes, sorted
/// by term: the entry count, the byte length of the term section, the
/// number of skip points and the bit widths of first lines and spans
/// (varints); the skip points, 8 bytes each: the term of every
/// `TABLE_SKIP`-th entry and where its term starts (u32, little-endian);
/// the term deltas (varints); each entry's first line (bit-packed); one
/// bit per entry, set when its span (last - first) is not 0; those spans
/// (bit-packed). Terms apart from lines, and skip points, so that a lookup
/// decodes a few dozen term bytes, then reads its lines directly.
pub fn encode_table(entries: &mut [(u32, u32, u32)]) -> Box<[u8]> {
    entries.sort_unstable_by_key(|e| e.0);
    let span = |e: &(u32, u32, u32)| e.2.saturating_sub(e.1);
    let first_width = width(entries.iter().map(|e| e.1).max().unwrap_or(0));
    let span_width = width(entries.iter().map(span).max().unwrap_or(0));
    let (mut terms, mut skips) = (Vec::with_capacity(entries.len() * 2), Vec::new());
    let spanning = entries.iter().filter(|e| span(e) != 0).count();
    let (mut firsts, mut spans) =
        (BitWriter::with_values(entries.len(), first_width), BitWriter::with_values(spanning, span_width));
    let mut flags = vec![0u8; entries.len().div_ceil(8)];
    let mut prev = 0u32;
    for (i, e) in entries.iter().enumerate() {
        if i > 0 && i % TABLE_SKIP == 0 {
            skips.extend_from_slice(&e.0.to_le_bytes());
            skips.extend_from_slice(&(terms.len() as u32).to_le_bytes());
        }
        put_varint(&mut terms, e.0 - prev);
        prev = e.0;
        firsts.push(e.1, first_width);
        let s = span(e);
        if s != 0 {
            flags[i / 8] |= 1 << (i % 8);
            spans.push(s, span_width);
        }
    }
    let mut out =
        Vec::with_capacity(20 + skips.len() + terms.len() + firsts.bytes.len() + flags.len() + spans.bytes.len());
    for v in [entries.len() as u32, terms.len() as u32, (skips.len() / 8) as u32, first_width, span_width] {
        put_varint(&mut out, v);
    }
    for part in [&skips, &terms, &firsts.bytes, &flags, &spans.bytes] {
        out.extend_from_slice(part);
    }
    out.into_boxed_slice()
}

/// Where the parts of an encoded table are.
struct TableLayout<'a> {
    entries: usize,
    skips: usize,
    skips_at: usize,
    terms_at: usize,
    first_width: u32,
    span_width: u32,
    firsts: &'a [u8],
    flags: &'a [u8],
    spans: &'a [u8],
}

fn table_layout(bytes: &[u8]) -> TableLayout<'_> {
    let mut layout = TableLayout {
        entries: 0,
        skips: 0,
        skips_at: 0,
        terms_at: 0,
        first_width: 0,
        span_width: 0,
        firsts: &[],
        flags: &[],
        spans: &[],
    };
    if bytes.is_empty() {
        return layout;
    }
    let mut pos = 0;
    let mut header = [0u32; 5];
    for h in &mut header {
        let Some(v) = crate::bytes::varint::try_get(bytes, &mut pos) else { return layout };
        *h = v;
    }
    let [entries, terms_len, skips, first_width, span_width] = header;
    let (entries, terms_len, skips) = (entries as usize, terms_len as usize, skips as usize);
    if first_width > 32 || span_width > 32 {
        return layout;
    }
    // Sizes that do not fit the bytes (a snapshot forged with a right
    // checksum): an empty table, never a slice out of bounds.
    let at = |width: usize, n: usize, from: usize| n.checked_mul(width)?.div_ceil(8).checked_add(from);
    let Some((terms_at, firsts_at)) = skips.checked_mul(8).and_then(|s| {
        let terms_at = pos.checked_add(s)?;
        Some((terms_at, terms_at.checked_add(terms_len)?))
    }) else {
        return layout;
    };
    let flags_at = at(first_width as usize, entries, firsts_at);
    let spans_at = flags_at.and_then(|f| at(1, entries, f));
    let (Some(flags_at), Some(spans_at)) = (flags_at, spans_at.filter(|&s| s <= bytes.len())) else {
        return layout;
    };
    layout.entries = entries;
    layout.skips = skips;
    layout.first_width = first_width;
    layout.span_width = span_width;
    layout.skips_at = pos;
    layout.terms_at = terms_at;
    layout.firsts = &bytes[firsts_at..flags_at];
    layout.flags = &bytes[flags_at..spans_at];
    layout.spans = &bytes[spans_at..];
    layout
}

impl TableLayout<'_> {
    /// Skip point `i`: (term, term byte offset).
    fn skip_point(&self, bytes: &[u8], i: usize) -> (u32, usize) {
        let at = self.skips_at + i * 8;
        // (Within the table's skips, as `table_layout` checked: a forged
        // one reads as a point past every term.)
        let u = |k: usize| {
            bytes.get(at + 4 * k..at + 4 * k + 4).map(|b| u32::from_le_bytes(b.try_into().expect("4 bytes")))
        };
        match (u(0), u(1)) {
            (Some(term), Some(offset)) => (term, offset as usize),
            _ => (u32::MAX, 0),
        }
    }

    fn first(&self, entry: usize) -> u32 {
        bits_at(self.firsts, entry * self.first_width as usize, self.first_width)
    }

    /// Entry `entry`'s span, the `nth` set flag (its rank) when it has one.
    fn span(&self, entry: usize, nth: usize) -> u32 {
        if self.flags[entry / 8] & (1 << (entry % 8)) == 0 {
            return 0;
        }
        bits_at(self.spans, nth * self.span_width as usize, self.span_width)
    }
}

/// The terms of an encoded table, in order.
pub fn table_terms(bytes: &[u8]) -> impl Iterator<Item = u32> + '_ {
    let layout = table_layout(bytes);
    let mut pos = layout.terms_at;
    let mut term = 0u32;
    (0..layout.entries).map(move |_| {
        term = term.wrapping_add(next_delta(bytes, &mut pos));
        term
    })
}

/// The term delta at `*pos` (advanced past it); 0 past the table's end
/// (a forged table: wrong terms, never a panic).
fn next_delta(bytes: &[u8], pos: &mut usize) -> u32 {
    crate::bytes::varint::try_get(bytes, pos).unwrap_or(0)
}

/// The entries of an encoded table, in term order.
pub fn decode_table(bytes: &[u8]) -> impl Iterator<Item = (u32, u32, u32)> + '_ {
    let layout = table_layout(bytes);
    let mut spans_seen = 0;
    table_terms(bytes).enumerate().map(move |(i, t)| {
        let first = layout.first(i);
        let span = layout.span(i, spans_seen);
        spans_seen += (span != 0) as usize;
        (t, first, first.saturating_add(span))
    })
}

/// The first and last line over the entries of `wanted` terms with a line
/// (first line not 0); `None` when none has one.
pub fn lines_of_terms(bytes: &[u8], wanted: &[u32]) -> Option<(u32, u32)> {
    let layout = table_layout(bytes);
    let mut range: Option<(u32, u32)> = None;
    for &w in wanted {
        let Some(entry) = find_entry(bytes, &layout, w) else { continue };
        let first = layout.first(entry);
        if first != 0 {
            let last = first.saturating_add(layout.span(entry, rank(layout.flags, entry)));
            range = Some(range.map_or((first, last), |(a, b)| (a.min(first), b.max(last))));
        }
    }
    range
}

/// The entry of term `w`, if the table has it: from the last skip point at
/// or before `w`, term deltas decoded until `w` or past it.
fn find_entry(bytes: &[u8], layout: &TableLayout, w: u32) -> Option<usize> {
    let mut skip = 0;
    while skip < layout.skips && layout.skip_point(bytes, skip).0 <= w {
        skip += 1;
    }
    let (mut entry, mut term, mut pos) = match skip {
        0 => (0, 0u32, layout.terms_at),
        s => {
            let (t, tp) = layout.skip_point(bytes, s - 1);
            // The delta stored at the skip point is read again below.
            let mut p = layout.terms_at + tp;
            let delta = next_delta(bytes, &mut p);
            (s * TABLE_SKIP, t.wrapping_sub(delta), layout.terms_at + tp)
        }
    };
    while entry < layout.entries {
        term = term.wrapping_add(next_delta(bytes, &mut pos));
        if term >= w {
            return (term == w).then_some(entry);
        }
        entry += 1;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    proptest::proptest! {
        /// Bytes that are no table (a snapshot forged with a right
        /// checksum): every reader answers something, never panics.
        #[test]
        fn any_bytes_read_without_a_panic(bytes in proptest::collection::vec(proptest::num::u8::ANY, 0..64)) {
            let _ = decode_table(&bytes).count();
            let _ = table_terms(&bytes).count();
            let _ = lines_of_terms(&bytes, &[0, 1, 2, 7, 300, u32::MAX]);
        }
    }

    #[test]
    fn forged_headers_and_deltas_read_without_a_panic() {
        for bytes in [&[0x80u8][..], &[1, 0, 0, 0, 0, 0x80], &[3, 1, 1, 0, 0, 0xff, 0xff], &[2, 0, 0, 40, 40, 0xff]] {
            let _ = decode_table(bytes).count();
            let _ = lines_of_terms(bytes, &[0, 1, 5]);
        }
    }

    #[test]
    fn tables_round_trip() {
        let mut e = vec![(900, 3, 9), (5, 1, 1), (70_000, 0, 0), (6, 200, 100_000)];
        let bytes = encode_table(&mut e);
        let back: Vec<_> = decode_table(&bytes).collect();
        assert_eq!(back, [(5, 1, 1), (6, 200, 100_000), (900, 3, 9), (70_000, 0, 0)]);
        assert!(bytes.len() < 4 * 8);
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
            let back: Vec<_> = decode_table(&bytes).map(|(t, a, b)| (t, a, if a == 0 { 0 } else { b })).collect();
            assert_eq!(back, e, "round trip");
            assert!(table_terms(&bytes).eq(e.iter().map(|x| x.0)));
            for _ in 0..5 {
                let mut wanted = Vec::new();
                for _ in 0..1 + next(4) {
                    let known = next(2) == 0 && !terms.is_empty();
                    wanted.push(if known { terms[next(terms.len() as u64) as usize] } else { next(1 << 20) as u32 });
                }
                let want =
                    e.iter().filter(|x| wanted.contains(&x.0) && x.1 != 0).fold(None, |r: Option<(u32, u32)>, x| {
                        Some(r.map_or((x.1, x.2), |(a, b)| (a.min(x.1), b.max(x.2))))
                    });
                assert_eq!(lines_of_terms(&bytes, &wanted), want);
            }
        }
    }
}
