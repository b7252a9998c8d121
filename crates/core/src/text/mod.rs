//! Document text shared between the index and the results it hands out:
//! a search returns the stored text without copying it, and the chunks of
//! a file are ranges of the file's one text (no copy of each chunk).

pub mod arena;
pub mod glob;
pub mod js_regex;

use crate::bytes::stored::StoredText;
use arena::ArenaText;
use std::fmt;
use std::ops::Deref;
use std::sync::Arc;

/// A whole text: in memory (on the heap, or in a block of texts read
/// together), or still in a snapshot file (read on first use).
pub enum Body {
    Owned(String),
    Arena(ArenaText),
    Stored(StoredText),
}

impl Body {
    pub fn text(&self) -> &str {
        match self {
            Body::Owned(s) => s,
            Body::Arena(s) => s.text(),
            Body::Stored(s) => s.text(),
        }
    }

    pub fn len(&self) -> usize {
        match self {
            Body::Owned(s) => s.len(),
            Body::Arena(s) => s.text().len(),
            Body::Stored(s) => s.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The text's xxh3 (a stored one's is known without reading it).
    pub fn hash(&self) -> u64 {
        match self {
            Body::Owned(s) => xxhash_rust::xxh3::xxh3_64(s.as_bytes()),
            Body::Arena(s) => xxhash_rust::xxh3::xxh3_64(s.text().as_bytes()),
            Body::Stored(s) => s.hash(),
        }
    }

    /// Whether the text was damaged in its snapshot and could not be read
    /// again (it reads as blanks).
    pub fn is_damaged(&self) -> bool {
        matches!(self, Body::Stored(s) if s.is_damaged())
    }

    /// Whether reading the text costs nothing (it is in memory).
    fn unread_span(&self) -> Option<(u64, usize)> {
        match self {
            Body::Stored(s) => s.unread_span(),
            _ => None,
        }
    }

    fn in_memory(&self) -> bool {
        matches!(self, Body::Owned(_) | Body::Arena(_)) || matches!(self, Body::Stored(s) if s.is_loaded())
    }
}

impl Default for Body {
    fn default() -> Self {
        Body::Owned(String::new())
    }
}

#[derive(Clone, Default)]
pub struct SharedText {
    text: Arc<Body>,
    /// The byte range of `text` this is.
    start: u32,
    end: u32,
    /// Known at creation, so each result does not scan the text again.
    ascii: bool,
}

impl SharedText {
    pub fn new(text: String) -> Self {
        SharedText::whole(Body::Owned(text))
    }

    fn whole(body: Body) -> Self {
        let ascii = body.text().is_ascii();
        let end = u32::try_from(body.len()).unwrap_or(u32::MAX);
        SharedText { text: Arc::new(body), start: 0, end, ascii }
    }

    /// `part` of this text (a sub-slice of `as_str()`), sharing its bytes.
    pub fn slice(&self, part: &str) -> SharedText {
        let base = self.as_str();
        let offset = (part.as_ptr() as usize).wrapping_sub(base.as_ptr() as usize);
        assert!(offset <= base.len() && offset + part.len() <= base.len(), "slice of another text");
        let start = self.start + offset as u32;
        SharedText {
            text: self.text.clone(),
            start,
            end: start + part.len() as u32,
            ascii: self.ascii || part.is_ascii(),
        }
    }

    /// The same range of the same bytes behind a handle allocated now
    /// (`index/repack.rs`); `moved` holds the handles made so far by their
    /// old address, so that ranges of one text keep sharing one. Only texts
    /// in arena blocks move: a text of its own is the large allocation
    /// itself (moving its handle would copy it), and a text still in a
    /// snapshot file keeps its loading state in its handle.
    pub fn rehomed(&self, moved: &mut rustc_hash::FxHashMap<usize, Arc<Body>>) -> SharedText {
        let Body::Arena(a) = &*self.text else { return self.clone() };
        let text = moved.entry(Arc::as_ptr(&self.text) as usize).or_insert_with(|| Arc::new(Body::Arena(a.clone())));
        SharedText { text: text.clone(), ..self.clone() }
    }

    /// The whole text this is a range of, and the range (for snapshots,
    /// which store each shared text once).
    pub fn parts(&self) -> (&Arc<Body>, u32, u32) {
        (&self.text, self.start, self.end)
    }

    /// The text `parts` gave; `None` for a range that is not one of `text`.
    /// `ascii`: known (as saved); a text still in its file is then not read
    /// (`as_str` never trusts the range to fall on character boundaries).
    pub fn from_parts(text: Arc<Body>, start: u32, end: u32, ascii: Option<bool>) -> Option<SharedText> {
        if start > end || end as usize > text.len() {
            return None;
        }
        let ascii = match (ascii, &*text) {
            (Some(a), Body::Stored(_)) => a,
            _ => text.text().get(start as usize..end as usize)?.is_ascii(),
        };
        Some(SharedText { text, start, end, ascii })
    }

    pub fn as_str(&self) -> &str {
        // `get`: a range is never trusted to fall on character boundaries
        // (a stored text is checked only when read).
        self.text.text().get(self.start as usize..self.end as usize).unwrap_or("")
    }

    /// Whether the text is a damaged stored one (read it first: `as_str`).
    pub fn is_damaged(&self) -> bool {
        self.text.is_damaged()
    }

    /// Length in bytes (without reading a text still in its file).
    pub fn len(&self) -> usize {
        (self.end - self.start) as usize
    }

    pub fn is_empty(&self) -> bool {
        self.start == self.end
    }

    pub fn is_ascii(&self) -> bool {
        self.ascii
    }

    /// Requests the cache lines a reader of this text touches first.
    pub fn prefetch(&self) {
        crate::prefetch::prefetch(Arc::as_ptr(&self.text));
        if self.text.in_memory() {
            crate::prefetch::prefetch(self.as_str().as_ptr());
        }
    }

    /// Whether the text is in memory (not one still to be read from its
    /// snapshot file: reading that is a positional read from disk).
    pub fn in_memory(&self) -> bool {
        self.text.in_memory()
    }

    /// Where a text still in its snapshot lies there (offset, length).
    pub fn unread_span(&self) -> Option<(u64, usize)> {
        self.text.unread_span()
    }

    /// Whether both share one allocation.
    pub fn shares_with(&self, other: &SharedText) -> bool {
        Arc::ptr_eq(&self.text, &other.text)
    }
}

impl Deref for SharedText {
    type Target = str;
    fn deref(&self) -> &str {
        self.as_str()
    }
}

impl PartialEq for SharedText {
    fn eq(&self, other: &SharedText) -> bool {
        self.as_str() == other.as_str()
    }
}

impl Eq for SharedText {}

impl From<String> for SharedText {
    fn from(s: String) -> Self {
        SharedText::new(s)
    }
}

impl From<ArenaText> for SharedText {
    fn from(t: ArenaText) -> Self {
        SharedText::whole(Body::Arena(t))
    }
}

impl From<&str> for SharedText {
    fn from(s: &str) -> Self {
        SharedText::new(s.to_string())
    }
}

impl PartialEq<str> for SharedText {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == other
    }
}

impl PartialEq<&str> for SharedText {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

impl fmt::Debug for SharedText {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}

/// Length in UTF-16 code units, the unit of JavaScript's `length`.
pub fn js_len(s: &str) -> usize {
    if s.is_ascii() {
        return s.len();
    }
    // By bytes, in runs whose count fits a byte, which the compiler
    // vectorises (decoding characters one by one was 3% of a build of
    // prose): every character starts with a byte that is not a
    // continuation byte (10xxxxxx), and those of four bytes (11110xxx),
    // beyond U+FFFF, take two units.
    s.as_bytes()
        .chunks(127)
        .map(|run| run.iter().fold(0u8, |n, &b| n + u8::from(b & 0xC0 != 0x80) + u8::from(b >= 0xF0)) as usize)
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    proptest::proptest! {
        /// The byte count is the count over characters.
        #[test]
        fn js_len_counts_utf16_units(s in "\\PC{0,60}") {
            proptest::prop_assert_eq!(js_len(&s), s.chars().map(char::len_utf16).sum::<usize>());
        }
    }

    #[test]
    fn clones_share_the_text_and_know_if_it_is_ascii() {
        let a = SharedText::from("plain text");
        let b = a.clone();
        assert!(a.shares_with(&b));
        assert!(a.is_ascii());
        assert_eq!(a, "plain text");
        assert!(!SharedText::from("café").is_ascii());
        let whole = SharedText::from("café au lait\nsecond line");
        let line = whole.slice(&whole.as_str()[whole.find('\n').unwrap() + 1..]);
        assert_eq!(line, "second line");
        assert!(line.is_ascii() && line.shares_with(&whole));
        let part = line.slice(&line.as_str()[7..]);
        assert_eq!(part, "line");
    }
}
