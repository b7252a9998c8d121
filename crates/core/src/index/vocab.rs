//! Term ids global to the index. Analysis gives each thread's documents
//! their own small vocabulary; a write maps each vocabulary to global ids
//! once, through a cache, not once per document.

use super::{Bm25Index, NewDocument, Term};
use crate::analysis::Vocab;
use std::sync::Arc;

/// Global ids of one vocabulary's terms, filled as they are met.
#[derive(Default)]
pub(crate) struct VocabMap {
    vocab: Option<Arc<Vocab>>,
    pub(crate) ids: Vec<u32>,
}

/// See `Bm25Index::writer`.
pub struct Writer<'a> {
    index: &'a mut Bm25Index,
    map: VocabMap,
}

impl Writer<'_> {
    /// As `Bm25Index::upsert`.
    pub fn upsert(&mut self, doc: NewDocument, seq: u64) -> bool {
        self.index.upsert_mapped(doc, seq, &mut self.map)
    }
}

impl Drop for Writer<'_> {
    /// The documents it replaced are compacted away once their dead slots
    /// and postings outnumber the live ones (not before: compaction
    /// renumbers the terms its cache names).
    fn drop(&mut self) {
        self.index.maybe_compact();
    }
}

impl Bm25Index {
    /// A writer for many documents in a row: each vocabulary is mapped to
    /// global term ids once, not once per document.
    pub fn writer(&mut self) -> Writer<'_> {
        Writer { index: self, map: VocabMap::default() }
    }

    /// Global ids for every term of each of `vocabs`, made where new: the
    /// names first, then the new terms in one exact growth. Room in the
    /// table is made for the largest vocabulary (into an empty index, the
    /// first one is all new); it grows as needed past that. Room for every
    /// vocabulary as all new doubled the table on a two-thread build (a
    /// thread's vocabulary shares most of its terms with the other's) and
    /// pushing terms one by one doubled their array: each was then copied
    /// back to size by `shrink` (773,471 terms rehashed, 50 MB moved at
    /// 50,000 files).
    pub fn intern_vocabs(&mut self, vocabs: &[&Arc<Vocab>]) -> Vec<Vec<u32>> {
        let names = &self.names;
        let largest = vocabs.iter().map(|v| v.len()).max().unwrap_or(0);
        if largest > 0 {
            // (Not for a write of no terms: a loaded snapshot's dictionary
            // stays frozen, `reserve` would rebuild it.)
            self.dict.reserve(largest, |s| names.bytes_of(s as usize));
        }
        let ids =
            vocabs.iter().map(|v| (0..v.len() as u32).map(|local| self.intern_name(v.name(local))).collect()).collect();
        if self.terms.len() < self.names.len() {
            // (Only for new terms: a loaded snapshot's stay where they lie,
            // `held_mut` would decode every one of them.)
            let terms = self.terms.held_mut();
            terms.reserve_exact(self.names.len() - terms.len());
            terms.resize_with(self.names.len(), Term::new);
        }
        ids
    }

    /// The id of term `name`, made if it is new.
    fn intern(&mut self, name: &str) -> u32 {
        let t = self.intern_name(name);
        if self.terms.len() < self.names.len() {
            self.terms.held_mut().push(Term::new());
        }
        debug_assert_eq!(self.terms.len(), self.names.len());
        t
    }

    /// The id of term `name`, its name recorded if it is new (its `Term`
    /// is the caller's to make: `intern`, `intern_vocabs`).
    fn intern_name(&mut self, name: &str) -> u32 {
        let names = &self.names;
        match self.dict.find_or_vacant(name, |s| names.bytes_of(s as usize)) {
            Ok(t) => t,
            Err(vacant) => {
                let t = self.names.len() as u32;
                vacant.insert(t);
                self.names.push(name);
                t
            }
        }
    }

    /// The global id of a term of `vocab`, through a cache of the vocab's
    /// ids (reset when the vocabulary changes).
    pub(super) fn global_id(&mut self, vocab: &Arc<Vocab>, local: u32, map: &mut VocabMap) -> u32 {
        if !map.vocab.as_ref().is_some_and(|v| Arc::ptr_eq(v, vocab)) {
            map.vocab = Some(vocab.clone());
            map.ids.clear();
            map.ids.resize(vocab.len(), u32::MAX);
        }
        let cached = map.ids[local as usize];
        if cached != u32::MAX {
            return cached;
        }
        let t = self.intern(vocab.name(local));
        map.ids[local as usize] = t;
        t
    }
}
