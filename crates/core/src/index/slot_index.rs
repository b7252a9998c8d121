//! A string -> u32 map that holds the u32s only and reads the strings from
//! where they are stored: document id -> slot (the ids live in the
//! documents) and term -> term id (the names live in the term table). No
//! second copy of every id or term, and one allocation less each.

use hashbrown::HashTable;
use std::hash::BuildHasher;

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
}

fn hash(id: &str) -> u64 {
    rustc_hash::FxBuildHasher.hash_one(id)
}

impl SlotIndex {
    pub fn len(&self) -> usize {
        self.table.len()
    }

    pub fn is_empty(&self) -> bool {
        self.table.is_empty()
    }

    /// The slot of `id`; `id_of(slot)` reads the id stored at a slot.
    pub fn get<'a>(&self, id: &str, id_of: impl Fn(u32) -> &'a str) -> Option<u32> {
        self.table.find(hash(id), |&s| id_of(s) == id).copied()
    }

    /// Records `slot` for `id` (not present).
    pub fn insert<'a>(&mut self, id: &str, slot: u32, id_of: impl Fn(u32) -> &'a str) {
        self.table.insert_unique(hash(id), slot, |&s| hash(id_of(s)));
    }

    pub fn remove<'a>(&mut self, id: &str, id_of: impl Fn(u32) -> &'a str) -> Option<u32> {
        self.table.find_entry(hash(id), |&s| id_of(s) == id).ok().map(|e| e.remove().0)
    }

    /// Records `slot` for `id` unless `id` is present (then returns false):
    /// one hash, one probe (loading a snapshot checks every name this way).
    pub fn insert_new<'a>(&mut self, id: &str, slot: u32, id_of: impl Fn(u32) -> &'a str) -> bool {
        match self.table.entry(hash(id), |&s| id_of(s) == id, |&s| hash(id_of(s))) {
            hashbrown::hash_table::Entry::Occupied(_) => false,
            hashbrown::hash_table::Entry::Vacant(v) => {
                v.insert(slot);
                true
            }
        }
    }

    /// The slot of `id`, or where to record one for it: one hash, one probe.
    pub fn find_or_vacant<'a>(&mut self, id: &str, id_of: impl Fn(u32) -> &'a str) -> Result<u32, Vacant<'_>> {
        match self.table.entry(hash(id), |&s| id_of(s) == id, |&s| hash(id_of(s))) {
            hashbrown::hash_table::Entry::Occupied(o) => Ok(*o.get()),
            hashbrown::hash_table::Entry::Vacant(v) => Err(Vacant(v)),
        }
    }

    pub fn reserve<'a>(&mut self, n: usize, id_of: impl Fn(u32) -> &'a str) {
        self.table.reserve(n, |&s| hash(id_of(s)));
    }

    /// Gives back the room reserved beyond what the entries need (a bulk
    /// build reserves for each thread's vocabulary as if all were new).
    pub fn shrink_to_fit<'a>(&mut self, id_of: impl Fn(u32) -> &'a str) {
        self.table.shrink_to_fit(|&s| hash(id_of(s)));
    }

    pub fn bytes(&self) -> usize {
        self.table.capacity() * 5
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
        assert!(!ix.insert_new("doc/78.md", 9, id_of));
        assert!(ix.insert_new("doc/77.md", 77, id_of));
        assert_eq!(ix.get("doc/77.md", id_of), Some(77));
    }
}
