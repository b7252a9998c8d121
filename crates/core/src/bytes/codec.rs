//! The byte format of snapshots: little-endian integers and floats,
//! length-prefixed strings and arrays. Reading never panics on bad bytes:
//! every read checks what is left and says what was being read.

use super::SnapshotError;
use crate::bytes::section::{Backing, Plain, Section};
use std::sync::Arc;

/// Bytes being written: kept in `buf`, or streamed to a sink in pieces
/// (`to_sink`), so that saving a large index does not hold a second copy
/// of it in memory.
#[derive(Default)]
pub struct Encoder {
    pub buf: Vec<u8>,
    sink: Option<Sink>,
}

struct Sink {
    out: Box<dyn std::io::Write>,
    hasher: xxhash_rust::xxh3::Xxh3,
    written: u64,
    error: Option<std::io::Error>,
    /// Bytes written now are left out of the checksum (`unhashed`).
    hashing: bool,
    unhashed: Option<(u64, u64)>,
}

/// What a streamed encoding wrote: its length, its checksum, and the one
/// span of bytes the checksum leaves out (texts, each with its own).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Written {
    pub len: u64,
    pub checksum: u64,
    pub unhashed: (u64, u64),
}

/// Bytes kept before they go to the sink.
const PIECE: usize = 1 << 20;

impl Encoder {
    pub fn to_sink(out: Box<dyn std::io::Write>) -> Self {
        let hasher = xxhash_rust::xxh3::Xxh3::new();
        let sink = Sink { out, hasher, written: 0, error: None, hashing: true, unhashed: None };
        Encoder { buf: Vec::with_capacity(PIECE * 2), sink: Some(sink) }
    }

    fn spill(&mut self, force: bool) {
        let Some(s) = &mut self.sink else { return };
        if self.buf.len() < PIECE && !force {
            return;
        }
        if s.hashing {
            s.hasher.update(&self.buf);
        }
        s.written += self.buf.len() as u64;
        if s.error.is_none() {
            if let Err(e) = s.out.write_all(&self.buf) {
                s.error = Some(e);
            }
        }
        self.buf.clear();
    }

    /// Ends a streamed encoding: what it wrote, or the first write error.
    pub fn finish(mut self) -> std::io::Result<Written> {
        self.spill(true);
        let mut s = self.sink.take().expect("a streaming encoder");
        if let Some(e) = s.error.take() {
            return Err(e);
        }
        s.out.flush()?;
        let unhashed = s.unhashed.unwrap_or((s.written, s.written));
        Ok(Written { len: s.written, checksum: s.hasher.digest(), unhashed })
    }

    /// Writes what `write` writes outside the checksum: bytes that carry
    /// their own checks (texts), so that loading need not read them. The
    /// header has room for one such span: a second is hashed like the rest.
    pub fn unhashed(&mut self, write: impl FnOnce(&mut Encoder)) {
        let first = self.sink.as_ref().is_some_and(|s| s.unhashed.is_none());
        if !first {
            return write(self);
        }
        self.spill(true);
        let start = self.position();
        self.sink.as_mut().expect("a streaming encoder").hashing = false;
        write(self);
        self.spill(true);
        let end = self.position();
        let s = self.sink.as_mut().expect("a streaming encoder");
        s.hashing = true;
        s.unhashed = Some((start, end));
    }

    /// Makes a streamed encoding fail with `e` (a part that could not be
    /// read); `finish` returns it.
    pub fn fail(&mut self, e: std::io::Error) {
        if let Some(s) = &mut self.sink {
            s.error.get_or_insert(e);
        }
    }

    /// Bytes written so far.
    fn position(&self) -> u64 {
        self.sink.as_ref().map_or(0, |s| s.written) + self.buf.len() as u64
    }

    /// Zero bytes up to a multiple of 4 from the payload's start, so that
    /// the arrays after it can be viewed in place once mapped (`Section`).
    pub fn pad4(&mut self) {
        let pad = self.position().wrapping_neg() % 4;
        self.buf.extend(std::iter::repeat_n(0u8, pad as usize));
    }

    /// Bytes as they are (no length).
    pub fn raw(&mut self, b: &[u8]) {
        self.spill(false);
        self.buf.extend_from_slice(b);
    }

    pub fn u8(&mut self, v: u8) {
        self.buf.push(v);
    }

    pub fn u32(&mut self, v: u32) {
        self.buf.extend_from_slice(&v.to_le_bytes());
    }

    pub fn u64(&mut self, v: u64) {
        self.buf.extend_from_slice(&v.to_le_bytes());
    }

    pub fn f32(&mut self, v: f32) {
        self.u32(v.to_bits());
    }

    pub fn f64(&mut self, v: f64) {
        self.u64(v.to_bits());
    }

    pub fn len(&mut self, n: usize) {
        self.u64(n as u64);
    }

    pub fn bytes(&mut self, b: &[u8]) {
        self.spill(false);
        self.len(b.len());
        self.buf.extend_from_slice(b);
    }

    pub fn str(&mut self, s: &str) {
        self.bytes(s.as_bytes());
    }

    pub fn opt_u32(&mut self, v: Option<u32>) {
        match v {
            Some(x) => {
                self.u8(1);
                self.u32(x);
            }
            None => self.u8(0),
        }
    }

    pub fn opt_str(&mut self, v: Option<&str>) {
        match v {
            Some(s) => {
                self.u8(1);
                self.str(s);
            }
            None => self.u8(0),
        }
    }

    pub fn u32s(&mut self, v: &[u32]) {
        self.spill(false);
        self.len(v.len());
        self.buf.reserve(v.len() * 4);
        for x in v {
            self.buf.extend_from_slice(&x.to_le_bytes());
        }
    }

    pub fn u16s(&mut self, v: &[u16]) {
        self.spill(false);
        self.len(v.len());
        self.buf.reserve(v.len() * 2);
        for x in v {
            self.buf.extend_from_slice(&x.to_le_bytes());
        }
    }

    pub fn f32s(&mut self, v: &[f32]) {
        self.spill(false);
        self.len(v.len());
        self.buf.reserve(v.len() * 4);
        for x in v {
            self.buf.extend_from_slice(&x.to_le_bytes());
        }
    }
}

/// Bytes being read.
pub struct Decoder<'a> {
    bytes: &'a [u8],
    pos: usize,
    /// Where `bytes` start in the payload (for `pad4`), less the postings
    /// apart before them (`parts_apart`: their length is a multiple of 4).
    base: usize,
    /// The file the payload was read from and where in it the payload
    /// starts: texts are then left there (see `stored`) instead of copied.
    source: Option<(Arc<super::stored::StoredFile>, u64)>,
    /// The payload's memory map, if arrays may be viewed in it (`Section`).
    map: Option<Arc<Backing>>,
    /// The texts: the payload's tail, or a part of their own (`begin_texts`).
    texts: Tail<'a>,
    /// The index's postings, where they lie in the part apart with the
    /// texts (a large snapshot in a store: `Decoder::parts_apart`).
    postings: Option<PostingsApart>,
}

/// Postings left out of the bytes decoded: `len` bytes at the payload's
/// position `at`, the first of the part apart.
#[derive(Clone)]
struct PostingsApart {
    at: usize,
    len: usize,
    file: Arc<super::stored::StoredFile>,
}

/// An index's postings as `Decoder::postings` finds them.
pub enum PostingsAt<'a> {
    Bytes(&'a [u8]),
    /// The first `len` bytes of the part apart (`Decoder::parts_apart`).
    Apart(Arc<super::stored::StoredFile>, usize),
}

/// Where a payload's texts are. They are its last bytes (after everything
/// else, so that a snapshot store can keep them as a part apart and attach
/// without them), back to back in the order `begin_texts` is given.
enum Tail<'a> {
    /// In the bytes decoded (found by `begin_texts`: the last `total` bytes).
    Here { bytes: &'a [u8], at: usize, used: usize },
    /// In a file of their own, from `base` on (`Decoder::texts_apart`).
    Apart { file: Arc<super::stored::StoredFile>, base: u64, len: u64, used: u64 },
}

/// One text as `Decoder::text` finds it: its bytes, or where they are.
pub enum TextAt<'a> {
    Bytes(&'a [u8]),
    /// Left in this file at this offset, to be read when used (`stored`).
    Stored(Arc<super::stored::StoredFile>, u64),
}

impl Tail<'_> {
    /// Texts in the bytes decoded (none until `begin_texts` says how many).
    fn here() -> Self {
        Tail::Here { bytes: &[], at: 0, used: 0 }
    }
}

fn truncated(what: &str) -> SnapshotError {
    SnapshotError::Corrupt(format!("ends inside {what}"))
}

impl<'a> Decoder<'a> {
    pub fn new(bytes: &'a [u8]) -> Self {
        Decoder { bytes, pos: 0, base: 0, source: None, map: None, texts: Tail::here(), postings: None }
    }

    /// Decodes `bytes`, which start at `offset` in `file` and lie inside
    /// `map` if it is given.
    pub fn in_file(
        bytes: &'a [u8],
        file: Arc<super::stored::StoredFile>,
        offset: u64,
        map: Option<Arc<Backing>>,
    ) -> Self {
        Decoder { bytes, pos: 0, base: 0, source: Some((file, offset)), map, texts: Tail::here(), postings: None }
    }

    /// Decodes `bytes`, a payload without its tail: its texts are `len`
    /// bytes in `texts` (a snapshot store's texts part), read when used.
    /// Arrays are viewed where they lie in `map`, which holds `bytes`.
    pub fn texts_apart(bytes: &'a [u8], map: Arc<Backing>, texts: Arc<super::stored::StoredFile>, len: u64) -> Self {
        let texts = Tail::Apart { file: texts, base: 0, len, used: 0 };
        Decoder { bytes, pos: 0, base: 0, source: None, map: Some(map), texts, postings: None }
    }

    /// As `texts_apart`, the index's postings apart too: `postings` bytes
    /// that lay at the payload's position `at` (not in `bytes`), the first
    /// of the part apart; its texts follow them there.
    pub fn parts_apart(
        bytes: &'a [u8],
        map: Arc<Backing>,
        apart: Arc<super::stored::StoredFile>,
        len: u64,
        (at, postings): (usize, usize),
    ) -> Self {
        let texts = Tail::Apart {
            file: apart.clone(),
            base: postings as u64,
            len: len.saturating_sub(postings as u64),
            used: 0,
        };
        let postings = Some(PostingsApart { at, len: postings, file: apart });
        Decoder { bytes, pos: 0, base: 0, source: None, map: Some(map), texts, postings }
    }

    /// The index's postings, `len` bytes: the next ones, or the part
    /// apart's first (which the bytes decoded leave out).
    pub fn postings(&mut self, len: usize) -> Result<PostingsAt<'a>, SnapshotError> {
        match &self.postings {
            Some(p) if p.at == self.base + self.pos => {
                if p.len != len {
                    return Err(SnapshotError::Corrupt("the postings apart are not the postings' size".into()));
                }
                Ok(PostingsAt::Apart(p.file.clone(), len))
            }
            _ => self.take(len, "the postings").map(PostingsAt::Bytes),
        }
    }

    /// Decodes `bytes`, which lie inside `map`, viewing arrays there.
    pub fn viewing(bytes: &'a [u8], map: Arc<Backing>) -> Self {
        Decoder { bytes, pos: 0, base: 0, source: None, map: Some(map), texts: Tail::here(), postings: None }
    }

    /// A decoder of the next `n` bytes of the payload (decoded apart, on
    /// another thread); fewer here when the postings among them are apart.
    pub fn sub(&mut self, n: usize, what: &str) -> Result<Decoder<'a>, SnapshotError> {
        let base = self.base + self.pos;
        let postings = self.postings.clone().filter(|p| (base..base.saturating_add(n)).contains(&p.at));
        let here = n.checked_sub(postings.as_ref().map_or(0, |p| p.len)).ok_or_else(|| truncated(what))?;
        let bytes = self.take(here, what)?;
        let (source, map) = (self.source.clone(), self.map.clone());
        Ok(Decoder { bytes, pos: 0, base, source, map, texts: Tail::here(), postings })
    }

    /// The bytes `read` reads from here (read past, to be decoded later).
    pub fn read_over(
        &mut self,
        read: impl FnOnce(&mut Decoder<'a>) -> Result<(), SnapshotError>,
    ) -> Result<&'a [u8], SnapshotError> {
        let start = self.pos;
        read(self)?;
        Ok(&self.bytes[start..self.pos])
    }

    /// The texts are `total` bytes: the last of the bytes decoded (which
    /// then end before them), or all of the part apart.
    pub fn begin_texts(&mut self, total: u64) -> Result<(), SnapshotError> {
        match &mut self.texts {
            Tail::Here { bytes, at, used } => {
                let left = (self.bytes.len() - self.pos) as u64;
                if total > left {
                    return Err(truncated("the texts"));
                }
                let split = self.bytes.len() - total as usize;
                (*bytes, *at, *used) = (&self.bytes[split..], split, 0);
                self.bytes = &self.bytes[..split];
            }
            Tail::Apart { len, .. } if *len != total => {
                return Err(SnapshotError::Corrupt("the texts part is not the texts' size".into()))
            }
            Tail::Apart { .. } => {}
        }
        Ok(())
    }

    /// The next text, of `len` bytes (after `begin_texts`).
    pub fn text(&mut self, len: usize) -> Result<TextAt<'a>, SnapshotError> {
        match &mut self.texts {
            Tail::Here { bytes, at, used } => {
                let end = used.checked_add(len).filter(|&e| e <= bytes.len()).ok_or_else(|| truncated("a text"))?;
                let start = std::mem::replace(used, end);
                match &self.source {
                    Some((file, offset)) if len > 0 => {
                        Ok(TextAt::Stored(file.clone(), offset + (self.base + *at + start) as u64))
                    }
                    _ => Ok(TextAt::Bytes(&bytes[start..end])),
                }
            }
            Tail::Apart { file, base, len: total, used } => {
                let end = used.checked_add(len as u64).filter(|&e| e <= *total).ok_or_else(|| truncated("a text"))?;
                let start = std::mem::replace(used, end);
                Ok(if len == 0 { TextAt::Bytes(&[]) } else { TextAt::Stored(file.clone(), *base + start) })
            }
        }
    }

    /// The file being decoded and the file offset of the next byte (`None`
    /// when decoding bytes that came from elsewhere).
    pub fn file_position(&self) -> Option<(Arc<super::stored::StoredFile>, u64)> {
        self.source.as_ref().map(|(f, at)| (f.clone(), at + (self.base + self.pos) as u64))
    }

    /// Where the next byte lies in the payload (less the postings apart
    /// before it, if any: `base`).
    pub fn position(&self) -> usize {
        self.base + self.pos
    }

    /// The payload's memory map, if arrays may be viewed in it.
    pub fn backing(&self) -> Option<&Arc<Backing>> {
        self.map.as_ref()
    }

    /// Skips what `Encoder::pad4` wrote.
    pub fn pad4(&mut self, what: &str) -> Result<(), SnapshotError> {
        let pad = (self.base + self.pos).wrapping_neg() % 4;
        self.take(pad, what).map(drop)
    }

    /// A length-prefixed array: viewed where it lies in the mapped
    /// snapshot when it can be, else copied.
    pub fn section<T: Plain>(&mut self, what: &str) -> Result<Section<T>, SnapshotError> {
        let n = self.len(size_of::<T>(), what)?;
        let bytes = self.take(n * size_of::<T>(), what)?;
        if n == 1 {
            return Ok(Section::copy(bytes)); // one value: kept in place of a view
        }
        Ok(self.map.as_ref().and_then(|m| Section::view(m, bytes)).unwrap_or_else(|| Section::copy(bytes)))
    }

    /// Whether everything was read: the bytes, and every text.
    pub fn is_done(&self) -> bool {
        let texts_done = match &self.texts {
            Tail::Here { bytes, used, .. } => *used == bytes.len(),
            Tail::Apart { len, used, .. } => used == len,
        };
        self.pos == self.bytes.len() && texts_done
    }

    fn take(&mut self, n: usize, what: &str) -> Result<&'a [u8], SnapshotError> {
        let end = self.pos.checked_add(n).filter(|&e| e <= self.bytes.len()).ok_or_else(|| truncated(what))?;
        let out = &self.bytes[self.pos..end];
        self.pos = end;
        Ok(out)
    }

    fn array<const N: usize>(&mut self, what: &str) -> Result<[u8; N], SnapshotError> {
        let mut out = [0u8; N];
        out.copy_from_slice(self.take(N, what)?);
        Ok(out)
    }

    /// The next `n` bytes, as they are.
    pub fn take_bytes(&mut self, n: usize) -> Result<&'a [u8], SnapshotError> {
        self.take(n, "a section")
    }

    pub fn u8(&mut self, what: &str) -> Result<u8, SnapshotError> {
        Ok(self.take(1, what)?[0])
    }

    pub fn u32(&mut self, what: &str) -> Result<u32, SnapshotError> {
        Ok(u32::from_le_bytes(self.array(what)?))
    }

    pub fn u64(&mut self, what: &str) -> Result<u64, SnapshotError> {
        Ok(u64::from_le_bytes(self.array(what)?))
    }

    pub fn f32(&mut self, what: &str) -> Result<f32, SnapshotError> {
        Ok(f32::from_bits(self.u32(what)?))
    }

    pub fn f64(&mut self, what: &str) -> Result<f64, SnapshotError> {
        Ok(f64::from_bits(self.u64(what)?))
    }

    /// A count of items of at least `item_size` bytes each: never more than
    /// the bytes left could hold, so that a bad count cannot make a reader
    /// allocate without bound.
    pub fn len(&mut self, item_size: usize, what: &str) -> Result<usize, SnapshotError> {
        let n = self.u64(what)?;
        let left = (self.bytes.len() - self.pos) as u64;
        if n.saturating_mul(item_size.max(1) as u64) > left {
            return Err(truncated(what));
        }
        Ok(n as usize)
    }

    pub fn bytes(&mut self, what: &str) -> Result<&'a [u8], SnapshotError> {
        let n = self.len(1, what)?;
        self.take(n, what)
    }

    pub fn str(&mut self, what: &str) -> Result<&'a str, SnapshotError> {
        std::str::from_utf8(self.bytes(what)?).map_err(|_| SnapshotError::Corrupt(format!("{what} is not UTF-8")))
    }

    pub fn string(&mut self, what: &str) -> Result<String, SnapshotError> {
        self.str(what).map(str::to_string)
    }

    pub fn opt_u32(&mut self, what: &str) -> Result<Option<u32>, SnapshotError> {
        Ok(match self.u8(what)? {
            0 => None,
            _ => Some(self.u32(what)?),
        })
    }

    pub fn opt_str(&mut self, what: &str) -> Result<Option<&'a str>, SnapshotError> {
        Ok(match self.u8(what)? {
            0 => None,
            _ => Some(self.str(what)?),
        })
    }

    pub fn opt_string(&mut self, what: &str) -> Result<Option<String>, SnapshotError> {
        Ok(match self.u8(what)? {
            0 => None,
            _ => Some(self.string(what)?),
        })
    }

    pub fn u32s(&mut self, what: &str) -> Result<Vec<u32>, SnapshotError> {
        let n = self.len(4, what)?;
        let raw = self.take(n * 4, what)?;
        Ok(raw.chunks_exact(4).map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect())
    }

    pub fn f32s(&mut self, what: &str) -> Result<Vec<f32>, SnapshotError> {
        Ok(self.u32s(what)?.into_iter().map(f32::from_bits).collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_and_refuses_short_or_oversized_input() {
        let mut e = Encoder::default();
        e.u32(7);
        e.str("héllo");
        e.u32s(&[1, 2, u32::MAX]);
        e.opt_u32(None);
        e.f64(0.25);
        let mut d = Decoder::new(&e.buf);
        assert_eq!(d.u32("a").unwrap(), 7);
        assert_eq!(d.str("b").unwrap(), "héllo");
        assert_eq!(d.u32s("c").unwrap(), [1, 2, u32::MAX]);
        assert_eq!(d.opt_u32("d").unwrap(), None);
        assert_eq!(d.f64("e").unwrap(), 0.25);
        assert!(d.is_done());
        for cut in 0..e.buf.len() {
            let mut d = Decoder::new(&e.buf[..cut]);
            let all = (|| -> Result<(), SnapshotError> {
                d.u32("a")?;
                d.str("b")?;
                d.u32s("c")?;
                d.opt_u32("d")?;
                d.f64("e")?;
                Ok(())
            })();
            assert!(all.is_err(), "cut at {cut}");
        }
        // A huge count is refused before anything is allocated.
        let mut e = Encoder::default();
        e.u64(u64::MAX / 2);
        assert!(Decoder::new(&e.buf).u32s("x").is_err());
    }
}
