//! The best `k` of a stream of (score, slot) pairs: the one heap of BM25's
//! top-k, its exhaustive reference and the embedded vector store. The order is given per
//! call, so that ties on score can be broken by reading document ids only
//! when they happen: on a large index every id read is a likely cache miss,
//! and most candidates never tie.

use std::cmp::Ordering;

/// Whether `a` ranks before `b`: the higher score, then the smaller id
/// (`id_of(slot)`), the order of every mode's results.
#[inline]
pub fn ranks_before<'a>(a: (f64, u32), b: (f64, u32), id_of: impl Fn(u32) -> &'a str) -> bool {
    match a.0.total_cmp(&b.0) {
        Ordering::Greater => true,
        Ordering::Less => false,
        Ordering::Equal => id_of(a.1) < id_of(b.1),
    }
}

/// Sorts best first by `better` (a strict order).
pub fn sort_best_first(items: &mut [(f64, u32)], better: impl Fn((f64, u32), (f64, u32)) -> bool) {
    items.sort_by(|&a, &b| {
        if better(a, b) {
            Ordering::Less
        } else if better(b, a) {
            Ordering::Greater
        } else {
            Ordering::Equal
        }
    });
}

pub struct TopK {
    k: usize,
    /// A heap whose root is the worst entry kept.
    heap: Vec<(f64, u32)>,
}

impl TopK {
    pub fn new(k: usize) -> Self {
        TopK { k, heap: Vec::with_capacity(k.min(4096)) }
    }

    pub fn is_full(&self) -> bool {
        self.heap.len() >= self.k
    }

    /// The worst entry kept (the one a newcomer must beat once full).
    pub fn worst(&self) -> Option<(f64, u32)> {
        self.heap.first().copied()
    }

    /// Whether `item` would be kept. `better(a, b)`: `a` ranks before `b`.
    pub fn admits(&self, item: (f64, u32), better: impl Fn((f64, u32), (f64, u32)) -> bool) -> bool {
        self.k > 0 && (!self.is_full() || better(item, self.heap[0]))
    }

    /// Adds `item` (call when `admits`), dropping the worst when over `k`.
    pub fn push(&mut self, item: (f64, u32), better: impl Fn((f64, u32), (f64, u32)) -> bool) {
        if self.is_full() {
            self.heap[0] = item;
            self.sift_down(0, &better);
        } else {
            self.heap.push(item);
            let mut i = self.heap.len() - 1;
            while i > 0 {
                let parent = (i - 1) / 2;
                // The worse of the two goes up.
                if better(self.heap[parent], self.heap[i]) {
                    self.heap.swap(parent, i);
                    i = parent;
                } else {
                    break;
                }
            }
        }
    }

    fn sift_down(&mut self, mut i: usize, better: &impl Fn((f64, u32), (f64, u32)) -> bool) {
        let n = self.heap.len();
        loop {
            let (l, r) = (2 * i + 1, 2 * i + 2);
            let mut worst = i;
            if l < n && better(self.heap[worst], self.heap[l]) {
                worst = l;
            }
            if r < n && better(self.heap[worst], self.heap[r]) {
                worst = r;
            }
            if worst == i {
                return;
            }
            self.heap.swap(i, worst);
            i = worst;
        }
    }

    /// The entries kept, best first.
    pub fn into_sorted(mut self, better: impl Fn((f64, u32), (f64, u32)) -> bool) -> Vec<(f64, u32)> {
        sort_best_first(&mut self.heap, better);
        self.heap
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_the_best_k_with_ties_broken_by_the_given_order() {
        // Ties on score broken by the smaller slot.
        let better = |a: (f64, u32), b: (f64, u32)| a.0 > b.0 || (a.0 == b.0 && a.1 < b.1);
        let items: Vec<(f64, u32)> = (0..200u32).map(|i| (((i * 37) % 23) as f64, i)).collect();
        for k in [0, 1, 5, 10, 199, 200, 300] {
            let mut top = TopK::new(k);
            for &it in &items {
                if top.admits(it, better) {
                    top.push(it, better);
                }
            }
            let mut want = items.clone();
            want.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
            want.truncate(k);
            assert_eq!(top.into_sorted(better), want, "k = {k}");
        }
    }
}
