//! Splitting a text into whitespace-separated words (JavaScript's `\s`),
//! each with its 1-based line: the first step of every analysis.

use super::tokenizer::is_js_space;

/// Word bytes eight at a time: in `(x - LOW) | x`, masked with `HIGH`, the
/// lowest byte that is not printable ASCII (a space, a control byte, or
/// part of a non-ASCII character) sets its high bit, and no byte below it
/// does (bytes above it may).
const LOW: u64 = 0x2121_2121_2121_2121;
const HIGH: u64 = 0x8080_8080_8080_8080;

/// Calls `word(start, end, line)` for each word of `text`, in order.
pub fn split_words(text: &str, mut word: impl FnMut(usize, usize, u32)) {
    let bytes = text.as_bytes();
    let (mut i, mut line, mut start) = (0, 1u32, None);
    while i < bytes.len() {
        if let Some(chunk) = bytes.get(i..i + 8) {
            let x = u64::from_le_bytes(chunk.try_into().expect("8 bytes"));
            let run = (((x.wrapping_sub(LOW) | x) & HIGH).trailing_zeros() / 8) as usize;
            if run > 0 {
                start.get_or_insert(i);
                i += run;
                continue;
            }
        }
        let b = bytes[i];
        let (space, width) = if b < 0x80 {
            (matches!(b, b' ' | b'\t' | b'\n' | b'\r' | 0x0B | 0x0C), 1)
        } else {
            let c = text[i..].chars().next().expect("char boundary");
            (is_js_space(c), c.len_utf8())
        };
        if space {
            if let Some(s) = start.take() {
                word(s, i, line);
            }
            if b == b'\n' {
                line += 1;
            }
        } else {
            start.get_or_insert(i);
        }
        i += width;
    }
    if let Some(s) = start {
        word(s, text.len(), line);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The same, one character at a time.
    fn reference(text: &str) -> Vec<(usize, usize, u32)> {
        let (mut out, mut line, mut start) = (Vec::new(), 1u32, None);
        for (i, c) in text.char_indices() {
            if is_js_space(c) {
                if let Some(s) = start.take() {
                    out.push((s, i, line));
                }
                line += u32::from(c == '\n');
            } else {
                start.get_or_insert(i);
            }
        }
        if let Some(s) = start {
            out.push((s, text.len(), line));
        }
        out
    }

    fn split(text: &str) -> Vec<(usize, usize, u32)> {
        let mut out = Vec::new();
        split_words(text, |s, e, l| out.push((s, e, l)));
        out
    }

    #[test]
    fn words_lines_and_every_kind_of_byte() {
        let text =
            "fn main() {\n\tlet x_y = \"héllo\u{a0}wörld\";\u{7f}\u{1}ok\u{2028}重置密码 12345678901234567890\r\nend";
        assert_eq!(split(text), reference(text));
        assert_eq!(split("abcdefghijklmnop qrstuvwx"), [(0, 16, 1), (17, 25, 1)]);
        assert_eq!(split(""), []);
        assert_eq!(split("  \n \n"), []);
    }

    proptest! {
        #[test]
        fn eight_at_a_time_equals_one_at_a_time(
            parts in proptest::collection::vec(
                prop_oneof![
                    "[a-zA-Z0-9_(){};.=]{1,20}",
                    "[ \t\n\r\u{0B}\u{0C}]{1,3}",
                    "[\u{0}-\u{1f}\u{7f}]",
                    "[\u{a0}\u{2000}\u{3000}\u{feff}éü重]{1,3}",
                ],
                0..40,
            )
        ) {
            let text: String = parts.concat();
            prop_assert_eq!(split(&text), reference(&text));
        }
    }
}
