//! One value per rayon thread (an analyzer with its caches, an arena of
//! texts), so that the pieces of a parallel run a thread handles share it
//! without contention.

use std::sync::Mutex;

pub struct PerThread<T> {
    slots: Vec<Mutex<T>>,
}

impl<T> PerThread<T> {
    pub fn new(make: impl Fn() -> T) -> Self {
        PerThread { slots: (0..rayon::current_num_threads().max(1)).map(|_| Mutex::new(make())).collect() }
    }

    /// Runs `f` with the calling thread's value; returns its slot too.
    /// (A thread outside the pool shares slot 0, behind its lock.)
    pub fn with<R>(&self, f: impl FnOnce(&mut T) -> R) -> (usize, R) {
        let slot = rayon::current_thread_index().unwrap_or(0) % self.slots.len();
        let mut value = self.slots[slot].lock().unwrap_or_else(|e| e.into_inner());
        (slot, f(&mut value))
    }

    /// The values, by slot.
    pub fn into_inner(self) -> impl Iterator<Item = T> {
        self.slots.into_iter().map(|m| m.into_inner().unwrap_or_else(|e| e.into_inner()))
    }
}
