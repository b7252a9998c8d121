//! Per document: its distinct terms with their first and last lines, as a
//! varint table with skip points. Line ranges of results come from it (no
//! re-tokenizing), and removals read the terms a document had from it.

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
    let (mut terms, mut lines, mut skips) =
        (Vec::with_capacity(entries.len() * 2), Vec::with_capacity(entries.len() * 3), Vec::new());
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
                let want =
                    e.iter().filter(|x| wanted.contains(&x.0) && x.1 != 0).fold(None, |r: Option<(u32, u32)>, x| {
                        Some(r.map_or((x.1, x.2), |(a, b)| (a.min(x.1), b.max(x.2))))
                    });
                assert_eq!(lines_of_terms(&bytes, &wanted), want);
            }
        }
    }
}
