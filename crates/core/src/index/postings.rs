//! Compact index storage. Per term: document slots (32-bit, or 16-bit
//! distances where they fit: slots.rs), and per posting one byte of
//! frequency and one byte of length code (a lower bound on the document's
//! length), in parallel arrays (4 to 6 bytes a posting), with a summary per
//! block of 32 postings, so top-k can skip blocks and bound postings
//! without reading the documents' lengths. (Per-document line tables are
//! in line_table.rs.)

use super::section::{Backing, Plain};
use super::slots::{back_from_last, fit_narrow, narrow_is_sound, Slots};
use crate::bytes::SnapshotError;
use std::sync::Arc;

/// Postings per skip block.
pub const BLOCK: usize = 32;

/// What bounds the scores inside one block: BM25's frequency part is
/// `(k1+1) / (1 + c1/tf + c2·len/tf)`, so the largest `tf` and the smallest
/// `len/tf` bound it whatever the average length is.
#[derive(Debug, Clone, Copy, PartialEq)]
#[repr(C)]
pub struct BlockMax {
    pub last_doc: u32,
    pub max_tf: u32,
    pub min_len_per_tf: f32,
    /// The block's largest frequency part at the index's reference average
    /// length (rounded up): exact while the average stays there, and scaled
    /// up by how much it has grown since (see `Bm25Index::top_k`).
    pub max_score: f32,
}

/// A posting being added, with what bounds its score (computed once: a
/// build adds tens of millions).
#[derive(Debug, Clone, Copy)]
pub struct NewPosting {
    pub doc: u32,
    pub tf: u32,
    pub len: u32,
    /// `len_per_tf(len, tf)`.
    pub ratio: f32,
    /// The frequency part at the reference average length.
    pub score: f32,
}

impl NewPosting {
    #[inline]
    pub fn new(doc: u32, tf: u32, len: u32, score: f32) -> Self {
        NewPosting { doc, tf, len, ratio: len_per_tf(len, tf), score }
    }
}

impl BlockMax {
    /// The summary of a block whose first posting this is.
    fn first(p: &NewPosting) -> Self {
        BlockMax { last_doc: p.doc, max_tf: p.tf, min_len_per_tf: p.ratio, max_score: p.score }
    }

    /// Takes in the block's next posting.
    fn widen(&mut self, p: &NewPosting) {
        self.last_doc = p.doc;
        self.max_tf = self.max_tf.max(p.tf);
        self.min_len_per_tf = self.min_len_per_tf.min(p.ratio);
        self.max_score = self.max_score.max(p.score);
    }
}

// SAFETY: four 4-byte fields (no padding); any bits are a valid u32 or f32.
unsafe impl Plain for BlockMax {
    fn read_le(b: &[u8]) -> Self {
        BlockMax {
            last_doc: u32::read_le(b),
            max_tf: u32::read_le(&b[4..]),
            min_len_per_tf: f32::from_bits(u32::read_le(&b[8..])),
            max_score: f32::from_bits(u32::read_le(&b[12..])),
        }
    }
}

/// `x` as an f32 no smaller than `x`, so that bounds stored in f32 stay bounds.
pub fn f32_up(x: f64) -> f32 {
    let r = x as f32;
    if (r as f64) < x {
        r.next_up()
    } else {
        r
    }
}

/// `len / tf`, rounded down so that bounds built on it stay bounds.
pub fn len_per_tf(len: u32, tf: u32) -> f32 {
    let exact = len as f64 / tf as f64;
    let r = exact as f32;
    if r as f64 > exact {
        f32::from_bits(r.to_bits() - 1).max(0.0)
    } else {
        r
    }
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

/// A term's postings as plain slices (see `Postings::slices`).
#[derive(Clone, Copy)]
pub struct PostingSlices<'p> {
    pub docs: Slots<'p>,
    packed: &'p [u16],
    big: Option<&'p [(u32, u32)]>,
    pub blocks: &'p [BlockMax],
}

impl PostingSlices<'_> {
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
        let big = self.big.expect("a TF_BIG marker has its entry");
        big[big.partition_point(|&(p, _)| p < i as u32)].1
    }

    /// The first position at or after `from` whose slot is at least
    /// `target`.
    #[inline]
    pub fn advance(&self, from: usize, target: u32) -> usize {
        self.docs.gallop(from, |d| d < target)
    }
}

/// One term's share of arrays filled in place.
pub struct Arrays<'a> {
    pub docs: &'a mut [u32],
    pub packed: &'a mut [u16],
    pub blocks: &'a mut [BlockMax],
}

/// A term's postings, kept where they are cheapest: one posting in place,
/// a run in shared bytes (a bulk build's buffer or a mapped snapshot), or
/// growing arrays once written to. One pointer-sized reference to shared
/// bytes per term, not one per array: a code workspace has hundreds of
/// thousands of terms, and three 24-byte arrays each made the term table
/// as large as the postings at 10k files.
#[derive(Clone, Default)]
pub struct Postings {
    lists: Lists,
    /// (position, tf) of the rare frequencies that do not fit in a byte;
    /// boxed, so that the many terms without any pay one pointer, not a Vec.
    #[allow(clippy::box_collection)] // the point: 8 bytes per term instead of 24
    big: Option<Box<Vec<(u32, u32)>>>,
}

#[derive(Clone, Default)]
enum Lists {
    #[default]
    Empty,
    /// A single posting: its summary holds its slot (`last_doc`).
    One { packed: u16, block: BlockMax },
    /// `len` postings `offset` bytes into `backing`, laid out as `layout`
    /// says (checked when made: inside, aligned, little-endian), their
    /// slots narrow or not.
    View { backing: Arc<Backing>, offset: u32, len: u32, narrow: bool },
    /// Written since: growing arrays.
    Owned(Box<OwnedLists>),
}

#[derive(Clone, Default)]
struct OwnedLists {
    docs: Vec<u32>,
    /// Per posting: the frequency in the low byte (`TF_BIG`: see `big`), the
    /// length code (`len_code`) in the high byte.
    packed: Vec<u16>,
    blocks: Vec<BlockMax>,
}

/// Where `n` postings laid out in place keep their arrays, in bytes from
/// their start: slots (4 bytes each, or 2 bytes padded to 4 when narrow),
/// codes (2 bytes each, padded to 4), block summaries; and the total. A
/// bulk build's buffer and a snapshot lay them out so.
pub fn layout(n: usize, narrow: bool) -> (usize, usize, usize) {
    let packed = if narrow { 4 * n.div_ceil(2) } else { 4 * n };
    let blocks = packed + 4 * n.div_ceil(2);
    (packed, blocks, blocks + size_of::<BlockMax>() * n.div_ceil(BLOCK))
}

impl Postings {
    pub fn len(&self) -> usize {
        match &self.lists {
            Lists::Empty => 0,
            Lists::One { .. } => 1,
            Lists::View { len, .. } => *len as usize,
            Lists::Owned(o) => o.docs.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Whether the postings are read in shared bytes.
    pub fn is_view(&self) -> bool {
        matches!(self.lists, Lists::View { .. })
    }

    /// Whether the slots are kept as 16-bit distances (slots.rs).
    pub fn is_narrow(&self) -> bool {
        matches!(self.lists, Lists::View { narrow: true, .. })
    }

    /// Whether the single posting is kept in place.
    pub fn is_one(&self) -> bool {
        matches!(self.lists, Lists::One { .. })
    }

    /// Appends a posting; `doc` must be above every slot already here.
    /// `score`: its frequency part at the reference average length.
    pub fn push(&mut self, doc: u32, tf: u32, len: u32, score: f32) {
        self.push_posting(&NewPosting::new(doc, tf, len, score));
    }

    pub fn push_posting(&mut self, p: &NewPosting) {
        let i = self.len();
        let code = self.packed_code(i, p.tf, p.len);
        if i == 0 {
            self.lists = Lists::One { packed: code, block: BlockMax::first(p) };
            return;
        }
        let o = self.owned();
        o.docs.push(p.doc);
        o.packed.push(code);
        if i.is_multiple_of(BLOCK) {
            o.blocks.push(BlockMax::first(p));
        } else {
            o.blocks.last_mut().expect("block").widen(p);
        }
    }

    /// The postings as growing arrays (copied out of shared bytes first).
    fn owned(&mut self) -> &mut OwnedLists {
        if !matches!(self.lists, Lists::Owned(_)) {
            let s = self.slices();
            let o = OwnedLists { docs: s.docs.iter().collect(), packed: s.packed.to_vec(), blocks: s.blocks.to_vec() };
            self.lists = Lists::Owned(Box::new(o));
        }
        match &mut self.lists {
            Lists::Owned(o) => o,
            _ => unreachable!("just made owned"),
        }
    }

    /// Writes posting `i` into arrays filled in place (see `bulk`), which
    /// have room for this term's postings: `docs` and `packed` from its
    /// first posting, `blocks` from its first block.
    #[inline]
    pub fn put(&mut self, at: Arrays<'_>, i: usize, p: &NewPosting) {
        at.docs[i] = p.doc;
        at.packed[i] = self.packed_code(i, p.tf, p.len);
        let block = &mut at.blocks[i / BLOCK];
        if i.is_multiple_of(BLOCK) {
            *block = BlockMax::first(p);
        } else {
            block.widen(p);
        }
    }

    /// Takes the `n` postings `put` filled at `bytes` of `backing` (laid out
    /// as `layout` says, narrowed or not): viewed there, or copied where
    /// they cannot be.
    pub fn adopt(&mut self, backing: &Arc<Backing>, bytes: &[u8], n: usize, narrow: bool) {
        debug_assert!(self.is_empty() && n > 1 && bytes.len() == layout(n, narrow).2);
        self.lists = Lists::view(backing, bytes, n, narrow).unwrap_or_else(|| Lists::copy(bytes, n, narrow));
    }

    /// Posting `i`'s frequency and length code (a frequency too large for
    /// its byte is noted in `big`).
    #[inline]
    fn packed_code(&mut self, i: usize, tf: u32, len: u32) -> u16 {
        let code = u16::from(len_code(len)) << 8;
        if tf >= u32::from(TF_BIG) {
            self.big.get_or_insert_with(Default::default).push((i as u32, tf));
            code | TF_BIG
        } else {
            code | tf as u16
        }
    }

    /// The arrays as slices, resolved once (top-k reads them per posting).
    #[inline]
    pub fn slices(&self) -> PostingSlices<'_> {
        let big = self.big.as_deref().map(|b| &b[..]);
        match &self.lists {
            Lists::Empty => PostingSlices { docs: Slots::Wide(&[]), packed: &[], big, blocks: &[] },
            Lists::One { packed, block } => PostingSlices {
                docs: Slots::Wide(std::slice::from_ref(&block.last_doc)),
                packed: std::slice::from_ref(packed),
                big,
                blocks: std::slice::from_ref(block),
            },
            Lists::View { backing, offset, len, narrow } => {
                let n = *len as usize;
                let (packed_at, blocks_at, end) = layout(n, *narrow);
                let bytes = &backing.bytes()[*offset as usize..][..end];
                let blocks = plain_slice(&bytes[blocks_at..]);
                let docs = if *narrow {
                    Slots::Narrow { back: plain_slice(&bytes[..packed_at]).get(..n).unwrap_or(&[]), blocks }
                } else {
                    Slots::Wide(plain_slice(&bytes[..packed_at]))
                };
                let packed = plain_slice(&bytes[packed_at..blocks_at]).get(..n).unwrap_or(&[]);
                PostingSlices { docs, packed, big, blocks }
            }
            Lists::Owned(o) => PostingSlices { docs: Slots::Wide(&o.docs), packed: &o.packed, big, blocks: &o.blocks },
        }
    }

    #[inline]
    pub fn tf(&self, i: usize) -> u32 {
        self.slices().tf(i)
    }

    /// The position of `doc`, if it has a posting here.
    pub fn find(&self, doc: u32) -> Option<usize> {
        self.slices().docs.find(doc)
    }

    /// Keeps the postings whose slot maps to a new slot (compaction).
    /// `score_of(tf, len)`: the frequency part at the reference average.
    pub fn remap(
        &self,
        new_slot: impl Fn(u32) -> Option<u32>,
        len_of: impl Fn(u32) -> u32,
        score_of: impl Fn(u32, u32) -> f32,
    ) -> Postings {
        let mut out = Postings::default();
        for (i, d) in self.slices().docs.iter().enumerate() {
            if let Some(s) = new_slot(d) {
                let (tf, len) = (self.tf(i), len_of(s));
                out.push(s, tf, len, score_of(tf, len));
            }
        }
        out
    }

    /// Room for exactly `n` more postings (none for a first single one).
    pub fn reserve_exact(&mut self, n: usize) {
        if self.is_empty() && n <= 1 {
            return;
        }
        let o = self.owned();
        o.docs.reserve_exact(n);
        o.packed.reserve_exact(n);
        let blocks = (o.docs.len() + n).div_ceil(BLOCK);
        o.blocks.reserve_exact(blocks.saturating_sub(o.blocks.len()));
    }

    pub fn shrink_to_fit(&mut self) {
        if let Some(big) = &mut self.big {
            big.shrink_to_fit();
        }
        if let Lists::Owned(o) = &mut self.lists {
            if o.docs.len() == 1 {
                self.lists = Lists::One { packed: o.packed[0], block: o.blocks[0] };
            } else {
                o.docs.shrink_to_fit();
                o.packed.shrink_to_fit();
                o.blocks.shrink_to_fit();
            }
        }
    }

    /// Bytes held beside the term (viewed ones: the bytes viewed).
    pub fn bytes(&self) -> usize {
        let big = self.big.as_ref().map_or(0, |b| size_of::<Vec<(u32, u32)>>() + b.capacity() * 8);
        big + match &self.lists {
            Lists::Empty | Lists::One { .. } => 0,
            Lists::View { len, narrow, .. } => layout(*len as usize, *narrow).2,
            Lists::Owned(o) => {
                size_of::<OwnedLists>()
                    + o.docs.capacity() * 4
                    + o.packed.capacity() * 2
                    + o.blocks.capacity() * size_of::<BlockMax>()
            }
        }
    }
}

impl Lists {
    /// A view of `n` postings at `bytes` inside `backing`, if they can be
    /// read there (`Backing::offset_of`).
    fn view(backing: &Arc<Backing>, bytes: &[u8], n: usize, narrow: bool) -> Option<Lists> {
        let offset = backing.offset_of::<u32>(bytes)?;
        let len = u32::try_from(n).ok()?;
        (bytes.len() == layout(n, narrow).2).then(|| Lists::View { backing: backing.clone(), offset, len, narrow })
    }

    /// A copy of `n` postings laid out as `layout` says in `bytes` (wide,
    /// as growing lists are).
    fn copy(bytes: &[u8], n: usize, narrow: bool) -> Lists {
        let (packed, blocks, end) = layout(n, narrow);
        let codes: Vec<u16> = bytes[packed..blocks].chunks_exact(2).take(n).map(u16::read_le).collect();
        let sums: Vec<BlockMax> =
            bytes[blocks..end].chunks_exact(size_of::<BlockMax>()).map(BlockMax::read_le).collect();
        let docs: Vec<u32> = if narrow {
            let back: Vec<u16> = bytes[..packed].chunks_exact(2).take(n).map(u16::read_le).collect();
            Slots::Narrow { back: &back, blocks: &sums }.iter().collect()
        } else {
            bytes[..packed].chunks_exact(4).map(u32::read_le).collect()
        };
        match n {
            0 => Lists::Empty,
            1 => Lists::One { packed: codes[0], block: sums[0] },
            _ => Lists::Owned(Box::new(OwnedLists { docs, packed: codes, blocks: sums })),
        }
    }
}

impl std::fmt::Debug for Postings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let s = self.slices();
        f.debug_struct("Postings").field("docs", &s.docs).field("packed", &s.packed).field("big", &s.big).finish()
    }
}

impl Postings {
    /// The count (with `NARROW` set when the slots are narrow), then the
    /// arrays back to back as `layout` lays them out (so that a mapped
    /// snapshot's postings are viewed where they lie, as one run), then the
    /// big frequencies. Starts at a multiple of 4 and ends at one. Slots
    /// that fit are written narrow whatever form they are kept in.
    pub fn encode(&self, e: &mut crate::bytes::codec::Encoder) {
        let s = self.slices();
        let narrow = self.narrows();
        e.u64(s.docs.len() as u64 | if narrow { NARROW } else { 0 });
        if narrow {
            for i in 0..s.docs.len() {
                e.raw(&back_from_last(s.docs.at(i), i, s.blocks).to_le_bytes());
            }
            if !s.docs.len().is_multiple_of(2) {
                e.raw(&[0, 0]);
            }
        } else {
            for d in s.docs.iter() {
                e.u32(d);
            }
        }
        for &p in s.packed {
            e.raw(&p.to_le_bytes());
        }
        if !s.packed.len().is_multiple_of(2) {
            e.raw(&[0, 0]); // codes padded to 4 bytes
        }
        for b in s.blocks {
            e.u32(b.last_doc);
            e.u32(b.max_tf);
            e.f32(b.min_len_per_tf);
            e.f32(b.max_score);
        }
        let big = s.big.unwrap_or(&[]);
        e.len(big.len());
        for &(i, tf) in big {
            e.u32(i);
            e.u32(tf);
        }
    }

    /// Whether the slots are (or would be, once written) kept narrow.
    fn narrows(&self) -> bool {
        match &self.lists {
            Lists::View { narrow, .. } => *narrow,
            Lists::Owned(o) => fit_narrow(o.docs.len(), |i| o.docs[i], |b| o.blocks[b].last_doc),
            Lists::Empty | Lists::One { .. } => false,
        }
    }

    /// The bytes `encode` writes.
    pub fn encoded_len(&self) -> usize {
        8 + layout(self.len(), self.narrows()).2 + 8 + 8 * self.big.as_ref().map_or(0, |b| b.len())
    }

    /// Postings as `encode` wrote them, checked against the slot count.
    pub fn decode(d: &mut crate::bytes::codec::Decoder, slots: usize) -> Result<Postings, SnapshotError> {
        let bad = |what: &str| SnapshotError::Corrupt(format!("postings: {what}"));
        let head = d.u64("postings")?;
        let (n, narrow) = ((head & !NARROW) as usize, head & NARROW != 0);
        if n > u32::MAX as usize || (narrow && n < 2) {
            return Err(bad("count"));
        }
        let bytes = d.take_bytes(layout(n, narrow).2)?;
        let view = match d.backing() {
            Some(backing) if n > 1 => Lists::view(backing, bytes, n, narrow),
            _ => None,
        };
        let lists = match view {
            Some(view) => view, // `check` below checks a view's slots
            None => {
                // Checked before the copy reads them back.
                if narrow && !narrow_sound_in(bytes, n) {
                    return Err(bad("narrow slots"));
                }
                Lists::copy(bytes, n, narrow)
            }
        };
        let nb = d.len(8, "big frequencies")?;
        let mut big = Vec::with_capacity(nb);
        for _ in 0..nb {
            big.push((d.u32("a big frequency")?, d.u32("a big frequency")?));
        }
        let out = Postings { lists, big: (!big.is_empty()).then(|| Box::new(big)) };
        out.check(slots)?;
        Ok(out)
    }

    /// Whether these postings read back as postings: slots ascending and
    /// below `slots`, every big frequency marked. `decode` checks them so;
    /// a save checks a loaded snapshot's again (viewed in its file, which
    /// another program may have written over since).
    pub fn check(&self, slots: usize) -> Result<(), SnapshotError> {
        let bad = |what: &str| SnapshotError::Corrupt(format!("postings: {what}"));
        let s = self.slices();
        let n = s.docs.len();
        if let Slots::Narrow { back, blocks } = s.docs {
            if !narrow_is_sound(n, |i| back[i], |b| blocks[b].last_doc) {
                return Err(bad("narrow slots"));
            }
        }
        if let Slots::Wide(docs) = s.docs {
            if docs.windows(2).any(|w| w[0] >= w[1]) {
                return Err(bad("unsorted"));
            }
        }
        if s.docs.last().is_some_and(|slot| slot as usize >= slots) {
            return Err(bad("slot out of range"));
        }
        let markers = s.packed.iter().filter(|&&p| p & 0xff == TF_BIG).count();
        let big = s.big.unwrap_or(&[]);
        if markers != big.len() || big.iter().any(|&(i, _)| i as usize >= n || s.packed[i as usize] & 0xff != TF_BIG) {
            return Err(bad("big frequencies"));
        }
        Ok(())
    }
}

/// Whether the narrow slots in `bytes` (as `encode` laid out `n` of them)
/// read back ascending.
fn narrow_sound_in(bytes: &[u8], n: usize) -> bool {
    let (_, blocks_at, _) = layout(n, true);
    let back = |i: usize| u16::read_le(&bytes[2 * i..]);
    let last = |b: usize| u32::read_le(&bytes[blocks_at + size_of::<BlockMax>() * b..]);
    narrow_is_sound(n, back, last)
}

/// Set in a snapshot's posting count when the slots are narrow.
const NARROW: u64 = 1 << 63;

/// `bytes` as `T`s (empty if they cannot be: callers made sure they can).
#[inline]
fn plain_slice<T: Plain>(bytes: &[u8]) -> &[T] {
    crate::bytes::section::plain_slice(bytes).unwrap_or(&[])
}

/// The first position at or after `from` where `before` turns false
/// (`before` must be true then false along `items`): galloping, since the
/// position sought is usually close to `from`.
#[inline]
pub fn gallop<T>(items: &[T], from: usize, before: impl Fn(&T) -> bool) -> usize {
    super::slots::gallop_by(items.len(), from, |i| before(&items[i]))
}

#[cfg(test)]
#[path = "postings_tests.rs"]
mod tests;
