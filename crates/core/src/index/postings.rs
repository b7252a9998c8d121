//! Compact index storage. Per term: document slots, and per posting one
//! byte of frequency and one byte of length code (a lower bound on the
//! document's length), in parallel arrays (6 bytes a posting), with a
//! summary per block of 32 postings, so top-k can skip blocks and bound
//! postings without reading the documents' lengths. (Per-document line
//! tables are in line_table.rs.)

use super::section::{Plain, Section};
use crate::persist::SnapshotError;

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
    pub docs: &'p [u32],
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
        gallop(self.docs, from, |&d| d < target)
    }
}

/// One term's share of arrays filled in place.
pub struct Arrays<'a> {
    pub docs: &'a mut [u32],
    pub packed: &'a mut [u16],
    pub blocks: &'a mut [BlockMax],
}

#[derive(Debug, Clone, Default)]
pub struct Postings {
    pub docs: Section<u32>,
    /// Per posting: the frequency in the low byte (`TF_BIG`: see `big`), the
    /// length code (`len_code`) in the high byte.
    packed: Section<u16>,
    /// (position, tf) of the rare frequencies that do not fit in a byte;
    /// boxed, so that the many terms without any pay one pointer, not a Vec.
    #[allow(clippy::box_collection)] // the point: 8 bytes per term instead of 24
    big: Option<Box<Vec<(u32, u32)>>>,
    pub blocks: Section<BlockMax>,
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
        self.push_posting(&NewPosting::new(doc, tf, len, score));
    }

    pub fn push_posting(&mut self, p: &NewPosting) {
        let i = self.docs.len();
        self.docs.push(p.doc);
        let code = self.packed_code(i, p.tf, p.len);
        self.packed.push(code);
        if i.is_multiple_of(BLOCK) {
            self.blocks.push(BlockMax::first(p));
        } else {
            self.blocks.to_mut().last_mut().expect("block").widen(p);
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

    /// Takes the arrays `put` filled.
    pub fn adopt(&mut self, docs: Section<u32>, packed: Section<u16>, blocks: Section<BlockMax>) {
        debug_assert!(self.docs.is_empty() && packed.len() == docs.len());
        debug_assert_eq!(blocks.len(), docs.len().div_ceil(BLOCK));
        (self.docs, self.packed, self.blocks) = (docs, packed, blocks);
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

    /// The arrays as slices, resolved once (a viewed array takes a few
    /// loads to resolve; top-k reads them per posting).
    #[inline]
    pub fn slices(&self) -> PostingSlices<'_> {
        PostingSlices {
            docs: &self.docs,
            packed: &self.packed,
            big: self.big.as_deref().map(|b| &b[..]),
            blocks: &self.blocks,
        }
    }

    #[inline]
    pub fn tf(&self, i: usize) -> u32 {
        self.slices().tf(i)
    }

    /// The position of `doc`, if it has a posting here.
    pub fn find(&self, doc: u32) -> Option<usize> {
        self.docs.binary_search(&doc).ok()
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
        let have = self.blocks.len();
        self.blocks.reserve_exact(blocks.saturating_sub(have));
    }

    pub fn shrink_to_fit(&mut self) {
        self.docs.shrink_to_fit();
        self.packed.shrink_to_fit();
        if let Some(big) = &mut self.big {
            big.shrink_to_fit();
        }
        self.blocks.shrink_to_fit();
    }

    pub fn bytes(&self) -> usize {
        self.docs.held_bytes()
            + self.packed.held_bytes()
            + self.big.as_ref().map_or(0, |b| std::mem::size_of::<Vec<(u32, u32)>>() + b.capacity() * 8)
            + self.blocks.held_bytes()
    }
}

impl Postings {
    /// Starts at a multiple of 4 (after `Encoder::pad4`) and keeps its
    /// arrays there, so that a mapped snapshot's postings are used in place.
    pub fn encode(&self, e: &mut crate::persist::codec::Encoder) {
        e.u32s(&self.docs);
        e.u16s(&self.packed);
        e.pad4();
        let big: &[(u32, u32)] = self.big.as_deref().map_or(&[], |b| b.as_slice());
        e.len(big.len());
        for &(i, tf) in big {
            e.u32(i);
            e.u32(tf);
        }
        e.len(self.blocks.len());
        for b in &self.blocks {
            e.u32(b.last_doc);
            e.u32(b.max_tf);
            e.f32(b.min_len_per_tf);
            e.f32(b.max_score);
        }
    }

    /// The bytes `encode` writes.
    pub fn encoded_len(&self) -> usize {
        let big = self.big.as_ref().map_or(0, |b| b.len());
        8 + 4 * self.docs.len()
            + 8
            + (2 * self.packed.len()).next_multiple_of(4)
            + 8
            + 8 * big
            + 8
            + 16 * self.blocks.len()
    }

    /// Postings as `encode` wrote them, checked against the slot count.
    pub fn decode(d: &mut crate::persist::codec::Decoder, slots: usize) -> Result<Postings, SnapshotError> {
        let bad = |what: &str| SnapshotError::Corrupt(format!("postings: {what}"));
        let docs = d.section::<u32>("postings")?;
        let packed = d.section::<u16>("frequencies")?;
        d.pad4("frequencies")?;
        if packed.len() != docs.len() || docs.windows(2).any(|w| w[0] >= w[1]) {
            return Err(bad("unsorted or uneven"));
        }
        if docs.last().is_some_and(|&s| s as usize >= slots) {
            return Err(bad("slot out of range"));
        }
        let n = d.len(8, "big frequencies")?;
        let mut big = Vec::with_capacity(n);
        for _ in 0..n {
            big.push((d.u32("a big frequency")?, d.u32("a big frequency")?));
        }
        let blocks = d.section::<BlockMax>("blocks")?;
        if blocks.len() != docs.len().div_ceil(BLOCK) {
            return Err(bad("block count"));
        }
        let markers = packed.iter().filter(|&&p| p & 0xff == TF_BIG).count();
        if markers != big.len() || big.iter().any(|&(i, _)| i as usize >= docs.len()) {
            return Err(bad("big frequencies"));
        }
        Ok(Postings { docs, packed, big: (!big.is_empty()).then(|| Box::new(big)), blocks })
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
        assert_eq!(p.slices().tf_and_min_len(7), (100_000, 17));
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
                assert_eq!(p.slices().advance(from, target), expect, "{from} {target}");
            }
        }
        assert_eq!(p.find(15), None);
        let q = p.remap(|d| (d % 4 == 0).then_some(d / 4), |s| s, |tf, _| tf as f32);
        assert_eq!(q.len(), 150);
        assert_eq!(q.tf(0), 1);
    }
}
