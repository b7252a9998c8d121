//! Line chunking of large files, as Mastra (contract section 5) but without
//! its redundant trailing chunk: chunking stops once a chunk reaches the
//! last line.

/// One chunk: a slice of the text and its 1-based first line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Chunk<'a> {
    pub text: &'a str,
    pub start_line: u32,
}

pub use crate::text::js_len;

pub use crate::index::chunk_id;

/// Whether a text of this size is split at all (`length > maxChars`).
pub fn needs_chunking(text: &str, max_chars: usize) -> bool {
    // A character of n bytes is one UTF-16 unit (two for n = 4): the byte
    // length is at least the length in units and at most three times it.
    text.len() > max_chars && (text.len() > 3 * max_chars || js_len(text) > max_chars)
}

/// Splits `text` into chunks of whole lines of at most `max_chars` UTF-16
/// units, consecutive chunks sharing `overlap_lines` lines. A single line
/// longer than `max_chars` becomes consecutive pieces with the same start
/// line. Call only when `needs_chunking` holds.
pub fn chunk_lines(text: &str, max_chars: usize, overlap_lines: usize) -> Vec<Chunk<'_>> {
    let max_chars = max_chars.max(1);
    // (byte start, byte end, utf16 length) of every line split on '\n'
    let ascii = text.is_ascii();
    let mut lines = Vec::new();
    let mut start = 0;
    // One vectorised scan for all the newlines (a search per line cost
    // more than the search itself on code's short lines); ASCII lines need
    // no UTF-16 count.
    let ends = memchr::memchr_iter(b'\n', text.as_bytes()).chain(std::iter::once(text.len()));
    for end in ends {
        let line = &text[start..end];
        lines.push((start, end, if ascii { line.len() } else { js_len(line) }));
        start = end + 1;
    }

    let mut chunks = Vec::new();
    let mut first = 0usize;
    while first < lines.len() {
        let mut end = first; // exclusive
        let mut size = 0usize;
        while end < lines.len() {
            let add = lines[end].2 + usize::from(end > first);
            if end > first && size + add > max_chars {
                break;
            }
            if end == first && add > max_chars {
                break;
            }
            size += add;
            end += 1;
        }
        if end == first {
            // One line longer than max_chars: fixed-size pieces.
            let (ls, le, _) = lines[first];
            for piece in split_units(&text[ls..le], max_chars) {
                chunks.push(Chunk { text: piece, start_line: first as u32 + 1 });
            }
            end = first + 1;
        } else {
            chunks.push(Chunk { text: &text[lines[first].0..lines[end - 1].1], start_line: first as u32 + 1 });
        }
        if end >= lines.len() {
            break; // Mastra would emit one more chunk here, made of lines already covered
        }
        let next = end.saturating_sub(overlap_lines);
        first = if next > first { next } else { end };
    }
    chunks
}

/// Pieces of at most `max` UTF-16 units, never splitting a character, and
/// cut after a space or punctuation where one lies in the last quarter of
/// the piece: a word cut in two (`parseUs|erId`) is found by neither half
/// (Mastra cuts at every `max`; a long line is a minified file, or a
/// paragraph written without line breaks).
fn split_units(line: &str, max: usize) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut units = 0;
    // Where the piece may end at a word's edge: byte offset and units before it.
    let mut edge: Option<(usize, usize)> = None;
    for (i, c) in line.char_indices() {
        let w = c.len_utf16();
        if units > 0 && units + w > max {
            let cut = edge.filter(|&(_, before)| before >= max - max / 4);
            let (at, before) = cut.unwrap_or((i, units));
            out.push(&line[start..at]);
            start = at;
            units -= before;
            edge = None;
        }
        units += w;
        if !c.is_alphanumeric() && c != '_' {
            edge = Some((i + c.len_utf8(), units));
        }
    }
    if start < line.len() {
        out.push(&line[start..]);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mastra_worked_example_without_trailing_chunk() {
        let line = "x".repeat(99);
        let text = format!("{}\n", vec![line; 100].join("\n"));
        assert_eq!(text.len(), 10_000);
        assert!(needs_chunking(&text, 4000));
        let chunks = chunk_lines(&text, 4000, 3);
        let got: Vec<(u32, usize)> = chunks.iter().map(|c| (c.start_line, c.text.len())).collect();
        // Mastra: (1,3999) (38,3999) (75,2600) (99,200); the last is redundant.
        assert_eq!(got, [(1, 3999), (38, 3999), (75, 2600)]);
    }

    #[test]
    fn long_single_line() {
        let text = "y".repeat(9007);
        let got: Vec<(u32, usize)> = chunk_lines(&text, 4000, 3).iter().map(|c| (c.start_line, c.text.len())).collect();
        assert_eq!(got, [(1, 4000), (1, 4000), (1, 1007)]);
    }

    #[test]
    fn threshold() {
        assert!(!needs_chunking(&"a".repeat(4000), 4000));
        assert!(needs_chunking(&"a".repeat(4001), 4000));
        // 2000 two-unit characters are 4000 units: not chunked.
        assert!(!needs_chunking(&"𠀀".repeat(2000), 4000));
        assert!(needs_chunking(&"é".repeat(4001), 4000));
    }

    #[test]
    fn every_line_covered_and_pieces_keep_characters() {
        let text: String = (0..500).map(|i| format!("line {i} {}\n", "é".repeat(i % 37))).collect();
        let chunks = chunk_lines(&text, 300, 2);
        let total_lines = text.split('\n').count() as u32;
        let mut covered = vec![false; total_lines as usize + 1];
        for c in &chunks {
            assert!(js_len(c.text) <= 300);
            let n = c.text.split('\n').count() as u32;
            for l in c.start_line..c.start_line + n {
                covered[l as usize] = true;
            }
        }
        assert!(covered[1..].iter().all(|&x| x));
        let five = "𠀀".repeat(5);
        let pieces = split_units(&five, 3);
        assert_eq!(pieces, ["𠀀", "𠀀", "𠀀", "𠀀", "𠀀"]);
    }

    #[test]
    fn a_long_line_is_cut_between_words_where_it_can() {
        // Pieces of 16 units: "parseUserId" is not cut in two (at the size: "let a = f(x); pa|rseUserId").
        let line = "let a = f(x); parseUserId(y); z";
        assert_eq!(split_units(line, 16), ["let a = f(x); ", "parseUserId(y); ", "z"]);
        // No edge in the last quarter: cut at the size, as before.
        assert_eq!(split_units("ab cdefghijklmnop", 8), ["ab cdefg", "hijklmno", "p"]);
        // An edge in the last quarter of a piece: cut after it.
        assert_eq!(split_units("abcdefg hijklmnopq", 8), ["abcdefg ", "hijklmno", "pq"]);
    }

    #[test]
    fn long_line_in_the_middle() {
        let text = format!("a\nb\nc\nd\n{}\ne", "z".repeat(25));
        let chunks = chunk_lines(&text, 10, 3);
        let got: Vec<(u32, &str)> = chunks.iter().map(|c| (c.start_line, c.text)).collect();
        assert_eq!(got[0], (1, "a\nb\nc\nd"));
        assert!(got.contains(&(5, "zzzzzzzzzz")));
        assert_eq!(got.last().unwrap().1, "e");
    }

    proptest::proptest! {
        /// Pieces are the line in order, each within the size, none empty.
        #[test]
        fn pieces_cover_the_line(line in "[a-z é_(.𠀀]{0,200}", max in 1usize..40) {
            let pieces = split_units(&line, max);
            proptest::prop_assert_eq!(pieces.concat(), line.clone());
            for p in &pieces {
                proptest::prop_assert!(!p.is_empty() && (js_len(p) <= max || p.chars().count() == 1));
            }
        }


        /// Chunks are slices of the text, in order, covering every line.
        #[test]
        fn chunks_cover_the_text(lines in proptest::collection::vec("[a-z é]{0,30}", 1..60), max in 1usize..120, overlap in 0usize..4) {
            let text = lines.join("\n");
            if !needs_chunking(&text, max) {
                return Ok(());
            }
            let chunks = chunk_lines(&text, max, overlap);
            proptest::prop_assert!(!chunks.is_empty());
            proptest::prop_assert_eq!(chunks[0].start_line, 1);
            let mut last_line = 0;
            for c in &chunks {
                proptest::prop_assert!(text.contains(c.text));
                proptest::prop_assert!(c.start_line >= 1 && c.start_line as usize <= lines.len());
                last_line = last_line.max(c.start_line as usize + c.text.matches('\n').count());
            }
            proptest::prop_assert_eq!(last_line, lines.len());
        }
    }
}
