//! The raw-word cache of analysis: words of up to 15 bytes, packed into
//! 16-byte keys, mapped to a range of term ids. An open-addressing table
//! with the key and the value in one 24-byte slot, so that a look-up costs
//! one cache line, and whose slot addresses are known from the key alone,
//! so that the analyzer can ask for them ahead of use (most of indexing
//! time was spent waiting for these look-ups).

/// A word of at most 15 bytes as a key: its bytes, then its length (never
/// all zero: the length byte of a word is at least 1).
#[inline]
pub fn pack(word: &str) -> Option<[u64; 2]> {
    let b = word.as_bytes();
    if b.is_empty() || b.len() > 15 {
        return None;
    }
    let mut buf = [0u8; 16];
    buf[..b.len()].copy_from_slice(b);
    buf[15] = b.len() as u8;
    Some([u64::from_le_bytes(buf[..8].try_into().expect("8")), u64::from_le_bytes(buf[8..].try_into().expect("8"))])
}

#[derive(Clone, Copy, Default)]
struct Slot {
    key: [u64; 2],
    from: u32,
    n: u32,
}

pub struct WordTable {
    slots: Vec<Slot>,
    len: usize,
    /// log2 of the slot count.
    bits: u32,
}

const EMPTY: [u64; 2] = [0, 0];

impl Default for WordTable {
    fn default() -> Self {
        WordTable::with_bits(12)
    }
}

impl WordTable {
    fn with_bits(bits: u32) -> Self {
        WordTable { slots: vec![Slot::default(); 1 << bits], len: 0, bits }
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    #[inline]
    fn home(&self, key: [u64; 2]) -> usize {
        let h = (key[0] ^ key[1].rotate_left(29) ^ (key[1] >> 17)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        (h >> (64 - self.bits)) as usize
    }

    /// Asks the CPU for the cache line where `key` would be.
    #[inline]
    pub fn prefetch(&self, key: [u64; 2]) {
        #[cfg(target_arch = "x86_64")]
        {
            let p = &self.slots[self.home(key)] as *const Slot as *const i8;
            // SAFETY: prefetching a valid address has no effect on memory.
            unsafe { std::arch::x86_64::_mm_prefetch(p, std::arch::x86_64::_MM_HINT_T0) };
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = key;
    }

    #[inline]
    pub fn get(&self, key: [u64; 2]) -> Option<(u32, u32)> {
        let mask = self.slots.len() - 1;
        let mut i = self.home(key);
        loop {
            let s = &self.slots[i];
            if s.key == key {
                return Some((s.from, s.n));
            }
            if s.key == EMPTY {
                return None;
            }
            i = (i + 1) & mask;
        }
    }

    /// Adds `key` (not present yet).
    pub fn insert(&mut self, key: [u64; 2], from: u32, n: u32) {
        // At most 80% full: linear probing stays short.
        if (self.len + 1) * 5 > self.slots.len() * 4 {
            let old = std::mem::replace(self, WordTable::with_bits(self.bits + 1));
            for s in old.slots.into_iter().filter(|s| s.key != EMPTY) {
                self.put(s);
            }
        }
        self.put(Slot { key, from, n });
    }

    fn put(&mut self, slot: Slot) {
        let mask = self.slots.len() - 1;
        let mut i = self.home(slot.key);
        while self.slots[i].key != EMPTY {
            i = (i + 1) & mask;
        }
        self.slots[i] = slot;
        self.len += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_every_word_through_growth() {
        let mut t = WordTable::default();
        let words: Vec<String> = (0..20_000).map(|i| format!("w{i}")).collect();
        for (i, w) in words.iter().enumerate() {
            assert_eq!(t.get(pack(w).unwrap()), None);
            t.insert(pack(w).unwrap(), i as u32, 1);
        }
        assert_eq!(t.len(), 20_000);
        for (i, w) in words.iter().enumerate() {
            assert_eq!(t.get(pack(w).unwrap()), Some((i as u32, 1)));
        }
        assert_eq!(pack(""), None);
        assert_eq!(pack("sixteen-bytes-xx"), None);
        assert_ne!(pack("a"), pack("a\0"));
    }
}
