//! A bulk build into an index without postings (a cold `init()`, a first
//! `indexMany`) writes every posting list in place, in one allocation
//! sized exactly from the counts it takes first: no allocation per term
//! (three per term before: hundreds of thousands on a code workspace, each
//! rounded up by the allocator and scattered over its pages), and no
//! length checks or growth as postings are appended. Each term's arrays
//! lie side by side (slots, frequency codes, block summaries), as in a
//! snapshot, so that a query reading a term touches one stretch of memory.
//! Terms that occur in one document keep their single posting in place
//! and take no room here. Each term then views its filled run (one
//! reference per term, `Postings::adopt`); the allocation lives as long as
//! any term views it, and a later write to a term copies its postings out,
//! as for a loaded snapshot.

use super::postings::{layout, Arrays, BlockMax, NewPosting, BLOCK};
use super::section::{cast, Buffer};
use super::slots::fit_narrow;
use super::Term;
use rayon::prelude::*;

/// A document's postings to add: its slot, its length, its (term, tf) in
/// term order (as `prepare` gives them).
pub type NewPostings = (u32, u32, Vec<(u32, u32)>);

/// Where one term's postings go, with what is written so far, side by
/// side so that a posting costs one cache miss here.
#[derive(Clone, Copy, Default)]
struct Place {
    /// Its first word in the buffer (a term of one posting takes none).
    start: u32,
    count: u32,
    /// Postings written so far.
    filled: u32,
}

/// Words a term of `count` postings takes (`postings::layout`).
fn words_for(count: u32) -> u64 {
    (layout(count as usize, false).2 / 4) as u64
}

/// Where each term's postings go in the one allocation of a bulk build.
pub struct PostingArena {
    words: Buffer,
    /// Per term, and one past the last (its start: the buffer's end).
    places: Vec<Place>,
}

/// The share of the buffer of the terms `lo..` one thread fills.
struct Region<'a> {
    lo: usize,
    /// Where `words` starts in the buffer.
    first: u32,
    terms: &'a mut [Term],
    places: &'a mut [Place],
    words: &'a mut [u32],
}

impl Region<'_> {
    /// Writes this region's share of the postings of `docs`; returns how
    /// many of its terms got their first posting.
    fn add(mut self, docs: &[NewPostings], score: &impl Fn(u32, u32) -> f32) -> usize {
        let mut new_terms = 0;
        for (slot, len, doc_terms) in docs {
            // Most postings have a frequency of 1: their bounds once per document.
            let once = NewPosting::new(*slot, 1, *len, score(1, *len));
            // A document's terms are in id order (`prepare`): this range's
            // share of them is one run.
            let from = doc_terms.partition_point(|&(t, _)| (t as usize) < self.lo);
            for &(tid, tf) in &doc_terms[from..] {
                let Some(i) = (tid as usize).checked_sub(self.lo).filter(|&i| i < self.terms.len()) else { break };
                let p = if tf == 1 { once } else { NewPosting::new(*slot, tf, *len, score(tf, *len)) };
                new_terms += usize::from(self.terms[i].note(&p));
                self.put(i, &p);
            }
        }
        new_terms
    }

    /// Writes a posting of term `lo + i`.
    #[inline]
    fn put(&mut self, i: usize, p: &NewPosting) {
        let (term, place) = (&mut self.terms[i], &mut self.places[i]);
        let n = place.filled as usize;
        place.filled += 1;
        if place.count == 1 {
            return term.postings.push_posting(p);
        }
        let at = (place.start - self.first) as usize;
        let words = &mut self.words[at..at + words_for(place.count) as usize];
        term.postings.put(arrays(words, place.count as usize), n, p);
    }
}

/// A term's words as its three arrays.
fn arrays(words: &mut [u32], count: usize) -> Arrays<'_> {
    let (docs, rest) = words.split_at_mut(count);
    let (packed, blocks) = rest.split_at_mut(count.div_ceil(2));
    Arrays { docs, packed: &mut cast::<u16>(packed)[..count], blocks: cast::<BlockMax>(blocks) }
}

impl PostingArena {
    /// Room for `counts[t]` postings of each term `t`. `None` where views
    /// cannot be used: a buffer past 4 GB (sections keep 32-bit offsets), or
    /// a big-endian target (views read values as the snapshot stores them).
    pub fn new(counts: &[u32]) -> Option<Self> {
        if cfg!(target_endian = "big") {
            return None;
        }
        let mut places = Vec::with_capacity(counts.len() + 1);
        let mut words = 0u64;
        for &count in counts {
            places.push(Place { start: words as u32, count, filled: 0 });
            if count > 1 {
                words += words_for(count);
                if words * 4 > u64::from(u32::MAX) {
                    return None;
                }
            }
        }
        places.push(Place { start: words as u32, ..Place::default() });
        Some(PostingArena { words: Buffer::zeroed(words as usize), places })
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
        let regions = self.regions(terms, bounds);
        let add = |r: Region<'_>| r.add(docs, &score);
        let postings: usize = docs.iter().map(|d| d.2.len()).sum();
        // Threads only for enough work (always in tests, to test them).
        if regions.len() > 1 && (cfg!(test) || postings > 100_000) {
            regions.into_par_iter().map(add).sum()
        } else {
            regions.into_iter().map(add).sum()
        }
    }

    /// The buffer cut at `bounds`, one region per range of terms.
    fn regions<'a>(&'a mut self, terms: &'a mut [Term], bounds: &[usize]) -> Vec<Region<'a>> {
        let (mut words_rest, mut terms_rest, mut places_rest) = (self.words.words(), terms, &mut self.places[..]);
        let mut regions = Vec::with_capacity(bounds.len());
        for w in bounds.windows(2) {
            let (lo, hi) = (w[0], w[1]);
            let (first, end) = (places_rest[0].start, places_rest[hi - lo].start);
            let (terms, t) = std::mem::take(&mut terms_rest).split_at_mut(hi - lo);
            let (places, p) = std::mem::take(&mut places_rest).split_at_mut(hi - lo);
            let (words, r) = std::mem::take(&mut words_rest).split_at_mut((end - first) as usize);
            (terms_rest, places_rest, words_rest) = (t, p, r);
            regions.push(Region { lo, first, terms, places, words });
        }
        regions
    }

    /// Hands each term its filled arrays, as views of the buffer, narrowed
    /// where their slots fit (slots.rs).
    pub fn finish(mut self, terms: &mut [Term]) {
        let narrow = self.narrow(terms);
        let backing = self.words.freeze();
        for (t, term) in terms.iter_mut().enumerate().filter(|&(t, _)| self.places[t].count > 1) {
            let (place, narrow) = (self.places[t], narrow[t]);
            debug_assert_eq!(place.filled, place.count, "every counted posting written");
            let start = 4 * place.start as usize;
            let bytes = &backing.bytes()[start..start + layout(place.count as usize, narrow).2];
            term.postings.adopt(&backing, bytes, place.count as usize, narrow);
        }
    }

    /// Narrows in place the runs whose slots fit, each run moving down
    /// over the room the runs before it gave up; region by region of the
    /// buffer (four a thread), in parallel, each region's freed end given
    /// back to the system. Returns, per term, whether it was narrowed.
    fn narrow(&mut self, terms: &mut [Term]) -> Vec<bool> {
        let per = terms.len().div_ceil(4 * rayon::current_num_threads()).max(1);
        let bounds: Vec<usize> = (0..terms.len()).step_by(per).chain([terms.len()]).collect();
        let total = self.places[terms.len()].start as usize;
        let squeeze = |r: Region<'_>| {
            let (narrowed, kept) = squeeze_region(r.places, r.words, r.first);
            (narrowed, r.first as usize + kept, r.first as usize + r.words.len())
        };
        let regions = self.regions(terms, &bounds);
        let squeezed: Vec<(Vec<bool>, usize, usize)> = if cfg!(test) || total > 1 << 18 {
            regions.into_par_iter().map(squeeze).collect()
        } else {
            regions.into_iter().map(squeeze).collect()
        };
        let mut narrowed = Vec::with_capacity(terms.len());
        for (flags, from, to) in squeezed {
            narrowed.extend(flags);
            self.words.release(from, to);
        }
        narrowed
    }
}

/// Moves the runs of one region of the buffer (`words`, starting at word
/// `first` of it) down to its start, narrowing those that fit, and notes
/// where each now starts; returns which were narrowed and the words kept.
fn squeeze_region(places: &mut [Place], words: &mut [u32], first: u32) -> (Vec<bool>, usize) {
    let mut narrowed = vec![false; places.len()];
    let mut write = 0usize;
    for (place, narrowed) in places.iter_mut().zip(&mut narrowed).filter(|(p, _)| p.count > 1) {
        let (n, old) = (place.count as usize, (place.start - first) as usize);
        let half = n.div_ceil(2);
        let blocks_at = old + n + half;
        let block_words = 4 * n.div_ceil(BLOCK);
        let last = |w: &[u32], i: usize| w[blocks_at + 4 * (i / BLOCK)];
        place.start = first + write as u32;
        if !fit_narrow(n, |i| words[old + i], |b| last(words, b * BLOCK)) {
            let len = words_for(place.count) as usize;
            words.copy_within(old..old + len, write);
            write += len;
            continue;
        }
        // Two distances a word, written at or below the slots they come
        // from (already read), and below the summaries they are read from.
        for i in (0..n).step_by(2) {
            let lo = last(words, i) - words[old + i];
            let hi = if i + 1 < n { last(words, i + 1) - words[old + i + 1] } else { 0 };
            words[write + i / 2] = lo | hi << 16;
        }
        words.copy_within(old + n..old + n + half, write + half);
        words.copy_within(blocks_at..blocks_at + block_words, write + 2 * half);
        debug_assert_eq!(4 * (2 * half + block_words), layout(n, true).2);
        *narrowed = true;
        write += 2 * half + block_words;
    }
    (narrowed, write)
}
