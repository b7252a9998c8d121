//! A string -> u32 map that holds the u32s only and reads the strings from
//! where they are stored: document id -> slot (the ids live in the
//! documents) and term -> term id (the names live in the term table). No
//! second copy of every id or term, and one allocation less each.
//!
//! A snapshot keeps the term dictionary as a frozen table (`frozen_slots`):
//! open addressing over a hash that does not change between builds
//! (xxh3), read where it lies in the mapping, so that a warm start does not
//! hash 610,000 names again (35 ms on a 50,000-file code index). The first
//! change makes it a hash table again.

use super::section::Section;
use hashbrown::HashTable;

/// Room for the slot of an id not yet recorded (`find_or_vacant`).
pub struct Vacant<'t>(hashbrown::hash_table::VacantEntry<'t, u32>);

impl Vacant<'_> {
    pub fn insert(self, slot: u32) {
        self.0.insert(slot);
    }
}

#[derive(Debug, Clone, Default)]
pub struct SlotIndex {
    table: HashTable<u32>,
    frozen: Option<Frozen>,
}

/// A frozen table: a power of two of cells, each a slot or `EMPTY`, a
/// slot found by linear probing from `hash(id)`. Its slots are
/// below `limit` (a cell beyond it, in a damaged file, matches nothing).
#[derive(Debug, Clone)]
struct Frozen {
    cells: Section<u32>,
    len: usize,
    limit: u32,
}

const EMPTY: u32 = u32::MAX;

/// The hash of both tables: for the frozen one (saved in snapshots) it
/// must stay the same in every build and version. Also what `insert_new`
/// takes, worked out where the id is at hand (a snapshot's documents hash
/// their ids as their runs decode).
pub fn hash(id: &(impl AsRef<[u8]> + ?Sized)) -> u64 {
    xxhash_rust::xxh3::xxh3_64(id.as_ref())
}

impl SlotIndex {
    pub fn len(&self) -> usize {
        self.frozen.as_ref().map_or(self.table.len(), |f| f.len)
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The slot of `id`; `id_of(slot)` reads the id stored at a slot.
    pub fn get<'a, S: AsRef<[u8]> + ?Sized + 'a>(&self, id: &str, id_of: impl Fn(u32) -> &'a S) -> Option<u32> {
        match &self.frozen {
            Some(f) => f.get(id, id_of),
            None => self.table.find(hash(id), |&s| id_of(s).as_ref() == id.as_bytes()).copied(),
        }
    }

    /// The cells of a frozen table of slots `0..n` (`id_of` reading their
    /// ids), as `frozen` takes them back: at most two thirds full.
    pub fn frozen_slots<'a, S: AsRef<[u8]> + ?Sized + 'a>(n: usize, id_of: impl Fn(u32) -> &'a S) -> Vec<u32> {
        let size = (n + n / 2).max(8).next_power_of_two();
        let mut cells = vec![EMPTY; size];
        for s in 0..n as u32 {
            let mut i = hash(id_of(s)) as usize & (size - 1);
            while cells[i] != EMPTY {
                i = (i + 1) & (size - 1);
            }
            cells[i] = s;
        }
        cells
    }

    /// The table `frozen_slots` made for `len` slots (`None`: not one).
    pub fn frozen(cells: Section<u32>, len: usize) -> Option<SlotIndex> {
        let limit = u32::try_from(len).ok()?;
        let fits = cells.len().is_power_of_two() && cells.len() > len;
        fits.then(|| SlotIndex { table: HashTable::new(), frozen: Some(Frozen { cells, len, limit }) })
    }

    /// A frozen table made a hash table, to be changed.
    fn thaw<'a, S: AsRef<[u8]> + ?Sized + 'a>(&mut self, id_of: impl Fn(u32) -> &'a S) {
        let Some(f) = self.frozen.take() else { return };
        self.table.reserve(f.len, |&s| hash(id_of(s)));
        for &s in f.cells.iter().filter(|&&s| s < f.limit) {
            self.table.insert_unique(hash(id_of(s)), s, |&s| hash(id_of(s)));
        }
    }

    /// Records `slot` for `id` (not present).
    pub fn insert<'a, S: AsRef<[u8]> + ?Sized + 'a>(&mut self, id: &str, slot: u32, id_of: impl Fn(u32) -> &'a S) {
        self.thaw(&id_of);
        self.table.insert_unique(hash(id), slot, |&s| hash(id_of(s)));
    }

    pub fn remove<'a, S: AsRef<[u8]> + ?Sized + 'a>(&mut self, id: &str, id_of: impl Fn(u32) -> &'a S) -> Option<u32> {
        self.thaw(&id_of);
        self.table.find_entry(hash(id), |&s| id_of(s).as_ref() == id.as_bytes()).ok().map(|e| e.remove().0)
    }

    /// Records `slot` for `id`, whose hash (`hash`) is `id_hash`,
    /// unless `id` is present (then returns false): one probe (loading a
    /// snapshot checks every id this way).
    pub fn insert_new<'a, S: AsRef<[u8]> + ?Sized + 'a>(
        &mut self,
        id: &str,
        id_hash: u64,
        slot: u32,
        id_of: impl Fn(u32) -> &'a S,
    ) -> bool {
        debug_assert_eq!(id_hash, hash(id));
        self.thaw(&id_of);
        match self.table.entry(id_hash, |&s| id_of(s).as_ref() == id.as_bytes(), |&s| hash(id_of(s))) {
            hashbrown::hash_table::Entry::Occupied(_) => false,
            hashbrown::hash_table::Entry::Vacant(v) => {
                v.insert(slot);
                true
            }
        }
    }

    /// The slot of `id`, or where to record one for it: one hash, one probe.
    pub fn find_or_vacant<'a, S: AsRef<[u8]> + ?Sized + 'a>(
        &mut self,
        id: &str,
        id_of: impl Fn(u32) -> &'a S,
    ) -> Result<u32, Vacant<'_>> {
        self.thaw(&id_of);
        match self.table.entry(hash(id), |&s| id_of(s).as_ref() == id.as_bytes(), |&s| hash(id_of(s))) {
            hashbrown::hash_table::Entry::Occupied(o) => Ok(*o.get()),
            hashbrown::hash_table::Entry::Vacant(v) => Err(Vacant(v)),
        }
    }

    pub fn reserve<'a, S: AsRef<[u8]> + ?Sized + 'a>(&mut self, n: usize, id_of: impl Fn(u32) -> &'a S) {
        self.thaw(&id_of);
        self.table.reserve(n, |&s| hash(id_of(s)));
    }

    /// Gives back the room reserved beyond what the entries need (a bulk
    /// build reserves for its largest vocabulary as if all of it were new).
    pub fn shrink_to_fit<'a, S: AsRef<[u8]> + ?Sized + 'a>(&mut self, id_of: impl Fn(u32) -> &'a S) {
        if self.frozen.is_some() {
            return; // nothing held to give back
        }
        self.table.shrink_to_fit(|&s| hash(id_of(s)));
    }

    /// Whether the table is still the one a snapshot mapped (`frozen`).
    #[cfg(test)]
    pub fn is_frozen(&self) -> bool {
        self.frozen.is_some()
    }

    pub fn bytes(&self) -> usize {
        self.table.capacity() * 5 + self.frozen.as_ref().map_or(0, |f| f.cells.held_bytes())
    }
}

impl Frozen {
    fn get<'a, S: AsRef<[u8]> + ?Sized + 'a>(&self, id: &str, id_of: impl Fn(u32) -> &'a S) -> Option<u32> {
        let mask = self.cells.len() - 1;
        let mut i = hash(id) as usize & mask;
        // At most every cell once: a damaged table may have no empty one.
        for _ in 0..self.cells.len() {
            match self.cells[i] {
                EMPTY => return None,
                s if s < self.limit && id_of(s).as_ref() == id.as_bytes() => return Some(s),
                _ => i = (i + 1) & mask,
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn maps_ids_to_slots_through_the_stored_ids() {
        let ids: Vec<String> = (0..5000).map(|i| format!("doc/{i}.md")).collect();
        let id_of = |s: u32| ids[s as usize].as_str();
        let mut ix = SlotIndex::default();
        for (i, id) in ids.iter().enumerate() {
            assert_eq!(ix.get(id, id_of), None);
            ix.insert(id, i as u32, id_of);
        }
        assert_eq!(ix.len(), 5000);
        assert_eq!(ix.get("doc/77.md", id_of), Some(77));
        assert_eq!(ix.remove("doc/77.md", id_of), Some(77));
        assert_eq!(ix.get("doc/77.md", id_of), None);
        assert_eq!(ix.get("doc/78.md", id_of), Some(78));
        assert_eq!(ix.len(), 4999);
        assert!(!ix.insert_new("doc/78.md", hash("doc/78.md"), 9, id_of));
        assert!(ix.insert_new("doc/77.md", hash("doc/77.md"), 77, id_of));
        assert_eq!(ix.get("doc/77.md", id_of), Some(77));
    }

    #[test]
    fn a_frozen_table_finds_what_it_was_made_of_and_thaws_on_change() {
        let ids: Vec<String> = (0..3000).map(|i| format!("term{i}")).collect();
        let id_of = |s: u32| ids.get(s as usize).map_or("", String::as_str);
        let cells = SlotIndex::frozen_slots(2000, id_of);
        let mut ix = SlotIndex::frozen(Section::from(cells.clone()), 2000).unwrap();
        assert_eq!(ix.len(), 2000);
        assert!((0..2000).all(|i| ix.get(&ids[i], id_of) == Some(i as u32)));
        assert_eq!(ix.get("term2500", id_of), None);
        assert!(ix.insert_new("term2500", hash("term2500"), 2500, id_of), "thawed, then written");
        assert!(ix.frozen.is_none() && ix.len() == 2001);
        assert!((0..2000).all(|i| ix.get(&ids[i], id_of) == Some(i as u32)));
        assert_eq!(ix.get("term2500", id_of), Some(2500));
        // Not a table of that size; a damaged one: bounded, no panic.
        assert!(SlotIndex::frozen(Section::from(vec![EMPTY; 100]), 10).is_none());
        assert!(SlotIndex::frozen(Section::from(cells.clone()), cells.len()).is_none());
        let full = SlotIndex::frozen(Section::from(vec![7u32; 4096]), 2000).unwrap();
        assert_eq!(full.get("nothing", id_of), None);
        let beyond = SlotIndex::frozen(Section::from(vec![u32::MAX - 1; 4096]), 2000).unwrap();
        assert_eq!(beyond.get("term1", id_of), None);
    }
}
