//! Texts read in a large ingest, back to back in blocks mapped from the
//! system instead of one heap allocation each. Each file's text was an
//! allocation of its own size, placed by the allocator between the short-
//! lived term lists of the same thread: once those were freed, their pages
//! stayed half used, and the rounding of every text to a size class added
//! to it (a 50,000-file code workspace held ~90 MB more for the same texts).
//! A block is given back whole when its last text goes. `indexMany`
//! copies its texts into them the same way (`share`).

use std::io::Read;
use std::ptr::NonNull;
use std::sync::Arc;

/// Bytes per block (a larger text gets a block of its own size). Pages of a
/// block never written are never backed by memory.
const BLOCK_BYTES: usize = 4 << 20;

/// Below this many files an ingest keeps each text on the heap: a few
/// changed files should not each hold pages of a mapping of their own.
pub const ARENA_AT_FILES: usize = 256;

/// One mapped block: written only by the `TextArena` that made it, below
/// `ArenaText`s only after it wrote them, and never after.
struct Block {
    start: NonNull<u8>,
    len: usize,
    _map: memmap2::MmapMut,
}

// SAFETY: the bytes a text covers are written once, before the text exists,
// and never again; the arena writing the rest is the block's only writer
// (see `TextArena::reserve`). The mapping itself is Send and Sync.
unsafe impl Send for Block {}
// SAFETY: as above.
unsafe impl Sync for Block {}

/// A text in a block (checked UTF-8 when it was committed).
#[derive(Clone)]
pub struct ArenaText {
    block: Arc<Block>,
    start: usize,
    len: usize,
}

impl ArenaText {
    pub fn text(&self) -> &str {
        debug_assert!(self.start + self.len <= self.block.len);
        // SAFETY: the range lies inside the block, which the Arc keeps
        // mapped; it was written before this text was made and is never
        // written again; `commit` checked it is UTF-8.
        unsafe {
            let bytes = std::slice::from_raw_parts(self.block.start.as_ptr().add(self.start), self.len);
            std::str::from_utf8_unchecked(bytes)
        }
    }
}

/// Where one thread writes the texts it reads.
#[derive(Default)]
pub struct TextArena {
    block: Option<Arc<Block>>,
    used: usize,
}

impl TextArena {
    /// Room for `len` bytes, zeroed (a fresh mapping) and not yet part of
    /// any text; `None` if the system gives no mapping.
    fn reserve(&mut self, len: usize) -> Option<&mut [u8]> {
        let room = self.block.as_ref().map_or(0, |b| b.len - self.used);
        if room < len || self.block.is_none() {
            let size = BLOCK_BYTES.max(len);
            let mut map = memmap2::MmapMut::map_anon(size).ok()?;
            let start = NonNull::new(map.as_mut_ptr())?;
            self.block = Some(Arc::new(Block { start, len: size, _map: map }));
            self.used = 0;
        }
        let block = self.block.as_ref()?;
        // SAFETY: `used..used + len` lies inside the block (checked above)
        // and no text covers it (texts end at or before `used`); `&mut self`
        // makes this the only slice of it until the next call.
        Some(unsafe { std::slice::from_raw_parts_mut(block.start.as_ptr().add(self.used), len) })
    }

    /// The `len` bytes last reserved, which the caller checked are UTF-8,
    /// as a text.
    fn commit(&mut self, len: usize) -> ArenaText {
        let block = self.block.clone().expect("a block was reserved in");
        let text = ArenaText { block, start: self.used, len };
        self.used += len;
        text
    }

    /// A copy of `text` in the arena (`None`: the system gave no mapping).
    pub fn copy(&mut self, text: &str) -> Option<ArenaText> {
        self.reserve(text.len())?.copy_from_slice(text.as_bytes());
        Some(self.commit(text.len()))
    }

    /// Reads all of `reader`, which should hold `len` bytes, into the
    /// arena, unless its first `probe` bytes hold a NUL. What it declines
    /// (another count than `len`, not UTF-8, no mapping) leaves the
    /// reservation free and hands back the bytes read so far.
    pub fn read(&mut self, reader: &mut impl Read, len: usize, probe: usize) -> std::io::Result<Taken> {
        let Some(room) = self.reserve(len) else { return Ok(Taken::Declined(Vec::new())) };
        let first = probe.min(len);
        let got = fill(reader, &mut room[..first])?;
        if room[..got].contains(&0) {
            return Ok(Taken::Binary);
        }
        let got = if got == first { first + fill(reader, &mut room[first..])? } else { got };
        let mut extra = [0u8; 1];
        if got < len || reader.read(&mut extra)? > 0 {
            // Shorter or longer than its size said: the caller reads it the
            // plain way, from what was read here on.
            let mut bytes = room[..got].to_vec();
            bytes.extend_from_slice(&extra[..usize::from(got == len)]);
            return Ok(Taken::Declined(bytes));
        }
        if std::str::from_utf8(room).is_err() {
            return Ok(Taken::Declined(room.to_vec()));
        }
        Ok(Taken::Text(self.commit(len)))
    }
}

/// What `TextArena::read` did.
pub enum Taken {
    Text(ArenaText),
    /// A NUL in the probed bytes.
    Binary,
    /// Not taken: the bytes read so far, for the plain path to finish.
    Declined(Vec<u8>),
}

/// Reads until `buf` is full or the reader ends; the count read.
fn fill(reader: &mut impl Read, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut got = 0;
    while got < buf.len() {
        match reader.read(&mut buf[got..]) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(got)
}

/// One arena per rayon thread.
pub type ThreadArenas = crate::per_thread::PerThread<TextArena>;

/// `texts` as shared texts, copied into arenas if there are enough of them
/// (see `ARENA_AT_FILES`), in parallel; each `String` is freed as it is
/// copied.
pub fn share(texts: Vec<String>) -> Vec<super::SharedText> {
    use rayon::prelude::*;
    if texts.len() < ARENA_AT_FILES {
        return texts.into_iter().map(Into::into).collect();
    }
    let arenas = ThreadArenas::new(TextArena::default);
    texts
        .into_par_iter()
        .with_min_len(64)
        .map(|t| match arenas.with(|a| a.copy(&t)).1 {
            Some(copy) => copy.into(),
            None => t.into(),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Cursor;

    fn read(arena: &mut TextArena, bytes: &[u8], len: usize) -> Taken {
        arena.read(&mut Cursor::new(bytes.to_vec()), len, 16).unwrap()
    }

    #[test]
    fn texts_share_blocks_and_outlive_their_arena() {
        let mut arena = TextArena::default();
        let texts: Vec<ArenaText> = (0..200)
            .map(|i| {
                let t = format!("text number {i} ").repeat(i % 7 + 1);
                match read(&mut arena, t.as_bytes(), t.len()) {
                    Taken::Text(text) => text,
                    _ => panic!("text {i} declined"),
                }
            })
            .collect();
        assert!(texts.windows(2).all(|w| Arc::ptr_eq(&w[0].block, &w[1].block)), "one block");
        // A text larger than a block gets its own; the next ones go on.
        let big = "x".repeat(BLOCK_BYTES + 10);
        let Taken::Text(big_text) = read(&mut arena, big.as_bytes(), big.len()) else { panic!("declined") };
        let Taken::Text(after) = read(&mut arena, b"after", 5) else { panic!("declined") };
        drop(arena);
        for (i, t) in texts.iter().enumerate() {
            assert_eq!(t.text(), format!("text number {i} ").repeat(i % 7 + 1));
        }
        assert_eq!((big_text.text().len(), after.text()), (big.len(), "after"));
        assert!(!Arc::ptr_eq(&big_text.block, &texts[0].block));
    }

    #[test]
    fn what_does_not_match_its_size_or_utf8_is_handed_back() {
        let mut arena = TextArena::default();
        // Shorter than the walk saw, longer, not UTF-8: the bytes read so far.
        assert!(matches!(read(&mut arena, b"short", 9), Taken::Declined(b) if b == b"short"));
        assert!(matches!(read(&mut arena, b"longer text", 6), Taken::Declined(b) if b == b"longer "));
        assert!(matches!(read(&mut arena, b"ok \xff", 4), Taken::Declined(b) if b == b"ok \xff"));
        // A NUL in the probed bytes is binary; past them it is text.
        assert!(matches!(read(&mut arena, b"ab\0cd", 5), Taken::Binary));
        let late = [&[b'a'; 20][..], b"\0"].concat();
        assert!(matches!(read(&mut arena, &late, 21), Taken::Text(t) if t.text().len() == 21));
        // What was declined left no gap: the next text starts where it would have.
        let Taken::Text(next) = read(&mut arena, b"next", 4) else { panic!("declined") };
        assert_eq!((next.start, next.text()), (21, "next"));
        assert!(matches!(read(&mut arena, b"", 0), Taken::Text(t) if t.text().is_empty()));
        let copy = arena.copy("copied é").unwrap();
        assert_eq!((copy.start, copy.text()), (25, "copied é"));
    }

    #[test]
    fn many_texts_are_shared_in_order_from_arenas() {
        use crate::text::Body;
        let texts: Vec<String> = (0..ARENA_AT_FILES * 3).map(|i| format!("text {i} ").repeat(i % 5)).collect();
        let shared = share(texts.clone());
        assert_eq!(shared.iter().map(|t| t.to_string()).collect::<Vec<_>>(), texts);
        assert!(shared.iter().all(|t| matches!(&**t.parts().0, Body::Arena(_))));
        let few = share(texts[..3].to_vec());
        assert!(few.iter().all(|t| matches!(&**t.parts().0, Body::Owned(_))), "few stay on the heap");
    }
}
