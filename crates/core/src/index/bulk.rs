//! A bulk build into an index without postings (a cold `init()`, a first
//! `indexMany`) writes every posting list in place, in one allocation
//! sized exactly from the counts it takes first: no allocation per term
//! (three per term before: hundreds of thousands on a code workspace, each
//! rounded up by the allocator and scattered over its pages), and no
//! length checks or growth as postings are appended. Terms that occur in
//! one document keep their single posting inline (`Section::One`) and take
//! no room here. The filled arrays become views (`Section::View`) of the
//! allocation, which lives as long as any of them; a later write to a term
//! copies its postings out, as for a loaded snapshot.

use super::postings::{Arrays, BlockMax, NewPosting, BLOCK};
use super::section::{Backing, Buffer, Plain, Section};
use super::Term;
use rayon::prelude::*;
use std::sync::Arc;

/// A document's postings to add: its slot, its length, its (term, tf).
pub type NewPostings = (u32, u32, Vec<(u32, u32)>);

/// Where one term's postings go, side by side so that a posting costs
/// one cache miss here, not four.
#[derive(Clone, Copy, Default)]
struct Place {
    /// Its first posting and its first block in the arrays (a term of one
    /// posting takes none).
    start: u32,
    block_start: u32,
    count: u32,
    /// Postings written so far.
    filled: u32,
}

/// Where each term's postings go in the one allocation of a bulk build.
pub struct PostingArena {
    words: Buffer,
    /// Per term, and one past the last (its starts: the arrays' ends).
    places: Vec<Place>,
    /// Where (in words) the frequency codes and the block summaries start.
    packed_at: usize,
    blocks_at: usize,
}

/// The share of the arrays of the terms `lo..` one thread fills.
struct Region<'a> {
    lo: usize,
    /// Where the arrays below start: the first term's place.
    first: Place,
    terms: &'a mut [Term],
    places: &'a mut [Place],
    docs: &'a mut [u32],
    packed: &'a mut [u16],
    blocks: &'a mut [BlockMax],
}

/// `words` as `T`s.
pub fn cast<T: Plain>(words: &mut [u32]) -> &mut [T] {
    let bytes = std::mem::size_of_val(words);
    assert!(align_of::<T>() <= 4 && bytes.is_multiple_of(size_of::<T>()));
    // SAFETY: `Plain` values have no padding, every bit pattern is one, and
    // their alignment is at most a u32's; the length covers the same bytes.
    unsafe { std::slice::from_raw_parts_mut(words.as_mut_ptr().cast::<T>(), bytes / size_of::<T>()) }
}

impl PostingArena {
    /// Room for `counts[t]` postings of each term `t`. `None` where views
    /// cannot be used: arrays past 4 GB (sections keep 32-bit offsets), or
    /// a big-endian target (views read values as the snapshot stores them).
    pub fn new(counts: &[u32]) -> Option<Self> {
        if cfg!(target_endian = "big") {
            return None;
        }
        let mut places = Vec::with_capacity(counts.len() + 1);
        let (mut postings, mut blocks) = (0u64, 0u64);
        for &count in counts {
            places.push(Place { start: postings as u32, block_start: blocks as u32, count, filled: 0 });
            if count > 1 {
                postings += u64::from(count);
                blocks += u64::from(count).div_ceil(BLOCK as u64);
                if postings > u64::from(u32::MAX) {
                    return None;
                }
            }
        }
        let words = postings + postings.div_ceil(2) + blocks * (size_of::<BlockMax>() / 4) as u64;
        if words * 4 > u64::from(u32::MAX) {
            return None;
        }
        places.push(Place { start: postings as u32, block_start: blocks as u32, ..Place::default() });
        let packed_at = postings as usize;
        Some(PostingArena {
            words: Buffer::zeroed(words as usize),
            places,
            packed_at,
            blocks_at: packed_at + packed_at.div_ceil(2),
        })
    }

    /// Adds the postings of `docs`, each range of terms `bounds` gives on
    /// a thread of its own; `score(tf, len)` is a posting's frequency part
    /// at the reference average length. Returns how many terms got their
    /// first posting.
    pub fn fill(
        &mut self,
        terms: &mut [Term],
        docs: &[NewPostings],
        bounds: &[usize],
        score: impl Fn(u32, u32) -> f32 + Sync,
    ) -> usize {
        let (docs_all, rest) = self.words.words().split_at_mut(self.packed_at);
        let (packed_words, block_words) = rest.split_at_mut(self.blocks_at - self.packed_at);
        let (mut docs_rest, mut packed_rest) = (docs_all, &mut cast::<u16>(packed_words)[..self.packed_at]);
        let mut blocks_rest = cast::<BlockMax>(block_words);
        let (mut terms_rest, mut places_rest) = (terms, &mut self.places[..]);
        let mut regions = Vec::with_capacity(bounds.len());
        for w in bounds.windows(2) {
            let (lo, hi) = (w[0], w[1]);
            let (first, end) = (places_rest[0], places_rest[hi - lo]);
            let postings = (end.start - first.start) as usize;
            let blocks = (end.block_start - first.block_start) as usize;
            let (terms, t) = std::mem::take(&mut terms_rest).split_at_mut(hi - lo);
            let (places, f) = std::mem::take(&mut places_rest).split_at_mut(hi - lo);
            let (docs, d) = std::mem::take(&mut docs_rest).split_at_mut(postings);
            let (packed, p) = std::mem::take(&mut packed_rest).split_at_mut(postings);
            let (blocks_here, b) = std::mem::take(&mut blocks_rest).split_at_mut(blocks);
            (terms_rest, places_rest, docs_rest, packed_rest, blocks_rest) = (t, f, d, p, b);
            regions.push(Region { lo, first, terms, places, docs, packed, blocks: blocks_here });
        }
        let add = |r: Region<'_>| -> usize {
            let (p0, b0) = (r.first.start, r.first.block_start);
            let mut new_terms = 0;
            for (slot, len, doc_terms) in docs {
                // Most postings have a frequency of 1: their bounds once per document.
                let once = NewPosting::new(*slot, 1, *len, score(1, *len));
                for &(tid, tf) in doc_terms {
                    let Some(i) = (tid as usize).checked_sub(r.lo).filter(|&i| i < r.terms.len()) else { continue };
                    let p = if tf == 1 { once } else { NewPosting::new(*slot, tf, *len, score(tf, *len)) };
                    let term = &mut r.terms[i];
                    new_terms += usize::from(term.note(&p));
                    let place = &mut r.places[i];
                    let n = place.filled as usize;
                    place.filled += 1;
                    if place.count == 1 {
                        term.postings.push_posting(&p);
                        continue;
                    }
                    let (at, block) = ((place.start - p0) as usize, (place.block_start - b0) as usize);
                    let at =
                        Arrays { docs: &mut r.docs[at..], packed: &mut r.packed[at..], blocks: &mut r.blocks[block..] };
                    term.postings.put(at, n, &p);
                }
            }
            new_terms
        };
        let postings: usize = docs.iter().map(|d| d.2.len()).sum();
        // Threads only for enough work (always in tests, to test them).
        if regions.len() > 1 && (cfg!(test) || postings > 100_000) {
            regions.into_par_iter().map(add).sum()
        } else {
            regions.into_iter().map(add).sum()
        }
    }

    /// Hands each term its filled arrays, as views of the allocation.
    pub fn finish(self, terms: &mut [Term]) {
        let backing = self.words.freeze();
        let words = |at: usize| 4 * at;
        for (t, term) in terms.iter_mut().enumerate().filter(|&(t, _)| self.places[t].count > 1) {
            let (here, next) = (self.places[t], self.places[t + 1]);
            debug_assert_eq!(here.filled, here.count, "every counted posting written");
            let (p0, p1) = (here.start as usize, next.start as usize);
            let (b0, b1) = (here.block_start as usize, next.block_start as usize);
            let packed = words(self.packed_at);
            let blocks = words(self.blocks_at);
            term.postings.adopt(
                view(&backing, words(p0)..words(p1)),
                view(&backing, packed + 2 * p0..packed + 2 * p1),
                view(&backing, blocks + size_of::<BlockMax>() * b0..blocks + size_of::<BlockMax>() * b1),
            );
        }
    }
}

/// The values at `range` of `backing` (a single one in place).
fn view<T: Plain>(backing: &Arc<Backing>, range: std::ops::Range<usize>) -> Section<T> {
    let bytes = &backing.bytes()[range];
    if bytes.len() == size_of::<T>() {
        return Section::copy(bytes);
    }
    Section::view(backing, bytes).unwrap_or_else(|| Section::copy(bytes))
}
