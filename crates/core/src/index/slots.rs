//! A term's posting slots as top-k reads them: full 32-bit slots, or —
//! where every block of `BLOCK` postings spans fewer than 65,536 slots —
//! 16-bit distances back from the block's last slot, which its summary
//! already holds. Half the bytes for the slots of most postings (nine in
//! ten on a code or prose workspace of 50,000 files), read back with one
//! subtraction from a summary that top-k has in cache anyway. Lists kept
//! in shared bytes (a bulk build's buffer, a snapshot) are narrowed where
//! they fit; growing lists stay wide.

use super::postings::{BlockMax, BLOCK};

/// A term's slots, ascending.
#[derive(Clone, Copy, Debug)]
pub enum Slots<'p> {
    Wide(&'p [u32]),
    /// `blocks[i / BLOCK].last_doc - back[i]`.
    Narrow {
        back: &'p [u16],
        blocks: &'p [BlockMax],
    },
}

impl<'p> Slots<'p> {
    #[inline]
    pub fn len(&self) -> usize {
        match self {
            Slots::Wide(d) => d.len(),
            Slots::Narrow { back, .. } => back.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The slot at `i` (`i < len`).
    #[inline]
    pub fn at(&self, i: usize) -> u32 {
        match self {
            Slots::Wide(d) => d[i],
            Slots::Narrow { back, blocks } => blocks[i / BLOCK].last_doc.wrapping_sub(u32::from(back[i])),
        }
    }

    #[inline]
    pub fn get(&self, i: usize) -> Option<u32> {
        (i < self.len()).then(|| self.at(i))
    }

    pub fn last(&self) -> Option<u32> {
        self.len().checked_sub(1).map(|i| self.at(i))
    }

    pub fn iter(&self) -> impl Iterator<Item = u32> + '_ {
        (0..self.len()).map(|i| self.at(i))
    }

    /// The first position in `from..to` whose slot is not `before` (which
    /// must hold, then not, along the slots).
    #[inline]
    pub fn partition_point(&self, from: usize, to: usize, before: impl Fn(u32) -> bool) -> usize {
        match self {
            Slots::Wide(d) => from + d[from..to].partition_point(|&x| before(x)),
            // Inside one block (top-k's probes): one base for all.
            Slots::Narrow { back, blocks } if from < to && from / BLOCK == (to - 1) / BLOCK => {
                let last = blocks[from / BLOCK].last_doc;
                from + back[from..to].partition_point(|&b| before(last - u32::from(b)))
            }
            Slots::Narrow { .. } => partition_by(from, to, |i| before(self.at(i))),
        }
    }

    /// The first position at or after `from` whose slot is not `before`.
    #[inline]
    pub fn gallop(&self, from: usize, before: impl Fn(u32) -> bool) -> usize {
        gallop_by(self.len(), from, |i| before(self.at(i)))
    }

    /// The position of `slot`, if it is here.
    pub fn find(&self, slot: u32) -> Option<usize> {
        let i = self.partition_point(0, self.len(), |d| d < slot);
        (self.get(i) == Some(slot)).then_some(i)
    }
}

/// Equal when they hold the same slots, in whichever form.
impl PartialEq for Slots<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.len() == other.len() && self.iter().eq(other.iter())
    }
}

/// Whether `n` ascending slots `at(i)`, whose blocks end at slots
/// `last(b)`, can be kept narrow: each block spans fewer than 65,536.
pub fn fit_narrow(n: usize, at: impl Fn(usize) -> u32, last: impl Fn(usize) -> u32) -> bool {
    n > 1 && (0..n.div_ceil(BLOCK)).all(|b| last(b) - at(b * BLOCK) <= u32::from(u16::MAX))
}

/// Slot `slot` at position `i` as a distance back from its block's last.
#[inline]
pub fn back_from_last(slot: u32, i: usize, blocks: &[BlockMax]) -> u16 {
    (blocks[i / BLOCK].last_doc - slot) as u16
}

/// Whether `n` narrow slots (distances `back(i)`, blocks' last slots
/// `last(b)`) read back ascending and end each block at its summary's last
/// slot: a snapshot's are checked so before they are used.
pub fn narrow_is_sound(n: usize, back: impl Fn(usize) -> u16, last: impl Fn(usize) -> u32) -> bool {
    let mut prev: Option<u32> = None;
    for b in 0..n.div_ceil(BLOCK) {
        let (from, to, last) = (b * BLOCK, ((b + 1) * BLOCK).min(n), last(b));
        // Distances fall along a block (slots rise), to 0 at its last.
        if back(to - 1) != 0 || (from + 1..to).any(|i| back(i - 1) <= back(i)) {
            return false;
        }
        let first = match last.checked_sub(u32::from(back(from))) {
            Some(f) => f,
            None => return false,
        };
        if prev.is_some_and(|p| p >= first) {
            return false;
        }
        prev = Some(last);
    }
    true
}

/// The first position in `lo..hi` where `before(i)` turns false (it must
/// hold, then not, along them); the search of `slice::partition_point`,
/// whose steps select rather than branch.
#[inline]
pub fn partition_by(lo: usize, hi: usize, before: impl Fn(usize) -> bool) -> usize {
    let mut size = hi.saturating_sub(lo);
    if size == 0 {
        return lo;
    }
    let mut base = lo;
    while size > 1 {
        let half = size / 2;
        let mid = base + half;
        base = if before(mid) { mid } else { base };
        size -= half;
    }
    base + usize::from(before(base))
}

/// The first position at or after `from` (of `0..n`) where `before(i)`
/// turns false: galloping, since it is usually close to `from`.
#[inline]
pub fn gallop_by(n: usize, from: usize, before: impl Fn(usize) -> bool) -> usize {
    if from >= n || !before(from) {
        return from;
    }
    let (mut step, mut lo, mut hi) = (1, from, from + 1);
    while hi < n && before(hi) {
        lo = hi;
        step *= 2;
        hi = (hi + step).min(n);
    }
    partition_by(lo + 1, hi, before)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn summaries(slots: &[u32]) -> Vec<BlockMax> {
        let last =
            |c: &[u32]| BlockMax { last_doc: *c.last().unwrap(), max_tf: 1, min_len_per_tf: 1.0, max_score: 1.0 };
        slots.chunks(BLOCK).map(last).collect()
    }

    proptest::proptest! {
        /// Narrow slots read, search and gallop as the wide ones they come
        /// from; the searches equal the standard library's. Gaps below
        /// 2,114 keep a block's 31 gaps under 65,536 slots, so every input
        /// fits narrow (`wide_fallback_is_exact` covers the others).
        #[test]
        fn narrow_slots_read_as_wide(
            gaps in proptest::collection::vec(1u32..2114, 2..200),
            from in 0usize..210,
            target in 0u32..700_000,
        ) {
            let wide: Vec<u32> = gaps.iter().scan(0, |s, g| { *s += g; Some(*s) }).collect();
            let blocks = summaries(&wide);
            let n = wide.len();
            proptest::prop_assert!(fit_narrow(n, |i| wide[i], |b| blocks[b].last_doc));
            let back: Vec<u16> = wide.iter().enumerate().map(|(i, &d)| back_from_last(d, i, &blocks)).collect();
            proptest::prop_assert!(narrow_is_sound(n, |i| back[i], |b| blocks[b].last_doc));
            let narrow = Slots::Narrow { back: &back, blocks: &blocks };
            proptest::prop_assert_eq!(narrow, Slots::Wide(&wide));
            let from = from.min(n);
            let expect = from + wide[from..].partition_point(|&d| d < target);
            for slots in [narrow, Slots::Wide(&wide)] {
                proptest::prop_assert_eq!(slots.gallop(from, |d| d < target), expect);
                proptest::prop_assert_eq!(slots.partition_point(from, n, |d| d < target), expect);
                let to = (from + 7).min(n);
                proptest::prop_assert_eq!(slots.partition_point(from, to, |d| d < target), from + wide[from..to].partition_point(|&d| d < target));
                proptest::prop_assert_eq!(slots.find(target), wide.binary_search(&target).ok());
            }
        }
    }

    proptest::proptest! {
        /// Any gaps: slots fit narrow exactly when every block of 32 spans
        /// at most 65,535 slots, and the wide form searches as the standard
        /// library does.
        #[test]
        fn wide_fallback_is_exact(
            gaps in proptest::collection::vec(1u32..10_000, 2..200),
            target in 0u32..2_000_000,
        ) {
            let wide: Vec<u32> = gaps.iter().scan(0, |s, g| { *s += g; Some(*s) }).collect();
            let blocks = summaries(&wide);
            let spans_fit = wide.chunks(BLOCK).all(|c| c.last().unwrap() - c[0] <= u32::from(u16::MAX));
            proptest::prop_assert_eq!(fit_narrow(wide.len(), |i| wide[i], |b| blocks[b].last_doc), spans_fit);
            let slots = Slots::Wide(&wide);
            proptest::prop_assert_eq!(slots.find(target), wide.binary_search(&target).ok());
            proptest::prop_assert_eq!(slots.partition_point(0, wide.len(), |d| d < target), wide.partition_point(|&d| d < target));
        }
    }

    #[test]
    fn a_block_spanning_65536_slots_stays_wide() {
        let wide = [5, 65_541];
        assert!(!fit_narrow(2, |i| wide[i], |_| 65_541));
        let wide = [5, 65_540];
        assert!(fit_narrow(2, |i| wide[i], |_| 65_540));
    }
}
