//! The raw-word cache of analysis: words packed into keys of `W` 8-byte
//! words (up to `8W - 1` bytes), mapped to a range of term ids. An
//! open-addressing table with the key and the value in one slot, so that a
//! look-up costs one cache line, and whose slot addresses are known from
//! the key alone, so that the analyzer can ask for them ahead of use (most
//! of indexing time was spent waiting for these look-ups).

/// A word of at most `8W - 1` bytes as a key: its bytes, then its length
/// in the last byte (never all zero: a word has at least one byte).
#[inline]
pub fn pack<const W: usize>(word: &str) -> Option<[u64; W]> {
    let b = word.as_bytes();
    if b.is_empty() || b.len() > 8 * W - 1 {
        return None;
    }
    let mut key = [0u64; W];
    for (i, chunk) in b.chunks(8).enumerate() {
        let mut buf = [0u8; 8];
        buf[..chunk.len()].copy_from_slice(chunk);
        key[i] = u64::from_le_bytes(buf);
    }
    key[W - 1] |= (b.len() as u64) << 56;
    Some(key)
}

/// `pack` of `text[start..end]`, reading whole 8-byte words of `text`
/// where it has them and masking what lies past the word (no copy loop:
/// every word of every text is packed).
#[inline]
pub fn pack_at<const W: usize>(text: &str, start: usize, end: usize) -> Option<[u64; W]> {
    let len = end.checked_sub(start)?;
    if len == 0 || len > 8 * W - 1 {
        return None;
    }
    let Some(bytes) = text.as_bytes().get(start..start + 8 * W) else {
        return pack(text.get(start..end)?);
    };
    let mut key = [0u64; W];
    for (i, k) in key.iter_mut().enumerate() {
        let word = u64::from_le_bytes(bytes[8 * i..8 * i + 8].try_into().expect("8 bytes"));
        *k = match len.saturating_sub(8 * i) {
            0 => 0,
            n if n >= 8 => word,
            n => word & ((1u64 << (8 * n)) - 1),
        };
    }
    key[W - 1] |= (len as u64) << 56;
    Some(key)
}

#[derive(Clone, Copy)]
struct Slot<const W: usize> {
    key: [u64; W],
    from: u32,
    n: u32,
}

pub struct WordTable<const W: usize> {
    slots: Vec<Slot<W>>,
    len: usize,
    /// log2 of the slot count.
    bits: u32,
}

impl<const W: usize> Default for WordTable<W> {
    fn default() -> Self {
        WordTable::with_bits(12)
    }
}

impl<const W: usize> WordTable<W> {
    const EMPTY: [u64; W] = [0; W];

    fn with_bits(bits: u32) -> Self {
        WordTable { slots: vec![Slot { key: [0; W], from: 0, n: 0 }; 1 << bits], len: 0, bits }
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    #[inline]
    fn home(&self, key: [u64; W]) -> usize {
        let mut h = 0u64;
        for &k in &key {
            h = (h.rotate_left(23) ^ k ^ (k >> 29)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        }
        (h >> (64 - self.bits)) as usize
    }

    /// Asks the CPU for the cache line where `key` would be.
    #[inline]
    pub fn prefetch(&self, key: [u64; W]) {
        crate::prefetch::prefetch(&self.slots[self.home(key)]);
    }

    #[inline]
    pub fn get(&self, key: [u64; W]) -> Option<(u32, u32)> {
        let mask = self.slots.len() - 1;
        let mut i = self.home(key);
        loop {
            let s = &self.slots[i];
            if s.key == key {
                return Some((s.from, s.n));
            }
            if s.key == Self::EMPTY {
                return None;
            }
            i = (i + 1) & mask;
        }
    }

    /// Adds `key` (not present yet).
    pub fn insert(&mut self, key: [u64; W], from: u32, n: u32) {
        // At most 80% full: linear probing stays short.
        if (self.len + 1) * 5 > self.slots.len() * 4 {
            let old = std::mem::replace(self, WordTable::with_bits(self.bits + 1));
            for s in old.slots.into_iter().filter(|s| s.key != Self::EMPTY) {
                self.put(s);
            }
        }
        self.put(Slot { key, from, n });
    }

    fn put(&mut self, slot: Slot<W>) {
        let mask = self.slots.len() - 1;
        let mut i = self.home(slot.key);
        while self.slots[i].key != Self::EMPTY {
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
        fn check<const W: usize>(make: impl Fn(usize) -> String) {
            let mut t = WordTable::<W>::default();
            let words: Vec<String> = (0..20_000).map(make).collect();
            for (i, w) in words.iter().enumerate() {
                assert_eq!(t.get(pack(w).unwrap()), None);
                t.insert(pack(w).unwrap(), i as u32, 1);
            }
            assert_eq!(t.len(), 20_000);
            for (i, w) in words.iter().enumerate() {
                assert_eq!(t.get(pack(w).unwrap()), Some((i as u32, 1)));
            }
        }
        check::<2>(|i| format!("w{i}"));
        check::<4>(|i| format!("a-longer-word-{i}"));
        assert_eq!(pack::<2>(""), None);
        assert_eq!(pack::<2>("sixteen-bytes-xx"), None);
        assert!(pack::<4>("sixteen-bytes-xx").is_some());
        assert_eq!(pack::<4>("thirty-two-bytes-thirty-two-byte"), None);
        assert_ne!(pack::<2>("a"), pack::<2>("a\0"));
        assert_ne!(pack::<4>("abcdefgh"), pack::<4>("abcdefgh\0"));
    }

    proptest::proptest! {
        /// Packing in place gives the key packing a copy gives.
        #[test]
        fn packing_in_place_equals_packing_a_copy(text in "[a-z\\PC ]{0,80}", a in 0usize..80, b in 0usize..80) {
            let (start, end) = (a.min(b).min(text.len()), a.max(b).min(text.len()));
            if text.is_char_boundary(start) && text.is_char_boundary(end) {
                let word = &text[start..end];
                proptest::prop_assert_eq!(pack_at::<2>(&text, start, end), pack::<2>(word));
                proptest::prop_assert_eq!(pack_at::<4>(&text, start, end), pack::<4>(word));
            }
        }
    }
}
