//! Stems already computed, shared by a tokenizer's threads: Snowball costs
//! about a microsecond a word, and a vocabulary is small next to the
//! tokens that repeat it. Words and their stems are kept back to back in
//! one string (a code workspace caches hundreds of thousands; two boxed
//! strings each were the most numerous allocations a workspace held).

use hashbrown::HashTable;

/// Stems kept (words stemmed after that are not remembered).
pub const MAX_STEMS: usize = 1 << 18;

#[derive(Default)]
pub struct StemCache {
    bytes: String,
    /// Per entry: where its word starts, the word's length, its stem's
    /// (which follows the word).
    entries: Vec<(u32, u32, u32)>,
    table: HashTable<u32>,
}

fn hash(word: &str) -> u64 {
    std::hash::BuildHasher::hash_one(&rustc_hash::FxBuildHasher, word)
}

impl StemCache {
    fn word(&self, e: u32) -> &str {
        let (start, word, _) = self.entries[e as usize];
        &self.bytes[start as usize..(start + word) as usize]
    }

    pub fn get(&self, word: &str) -> Option<&str> {
        let e = *self.table.find(hash(word), |&e| self.word(e) == word)?;
        let (start, word, stem) = self.entries[e as usize];
        Some(&self.bytes[(start + word) as usize..(start + word + stem) as usize])
    }

    /// Remembers `word`'s stem, unless the cache is full or has it.
    pub fn insert(&mut self, word: &str, stem: &str) {
        let start = self.bytes.len();
        if self.entries.len() >= MAX_STEMS || self.get(word).is_some() {
            return;
        }
        let (Ok(at), Ok(w), Ok(s)) = (u32::try_from(start), u32::try_from(word.len()), u32::try_from(stem.len()))
        else {
            return; // past 4 GB of words: not remembered
        };
        self.bytes.push_str(word);
        self.bytes.push_str(stem);
        let e = self.entries.len() as u32;
        self.entries.push((at, w, s));
        let (bytes, entries) = (&self.bytes, &self.entries);
        self.table.insert_unique(hash(word), e, |&e| {
            let (start, word, _) = entries[e as usize];
            hash(&bytes[start as usize..(start + word) as usize])
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stems_are_found_by_their_word() {
        let mut c = StemCache::default();
        c.insert("running", "run");
        c.insert("runs", "run");
        c.insert("running", "other"); // the first one stays
        c.insert("", "");
        assert_eq!(
            (c.get("running"), c.get("runs"), c.get("run"), c.get("")),
            (Some("run"), Some("run"), None, Some(""))
        );
        for i in 0..MAX_STEMS + 5 {
            c.insert(&format!("w{i}"), &format!("s{i}"));
        }
        assert_eq!(c.entries.len(), MAX_STEMS, "full: no more");
        assert_eq!(c.get("w1000"), Some("s1000"));
        assert_eq!(c.get(&format!("w{}", MAX_STEMS + 1)), None);
    }
}
