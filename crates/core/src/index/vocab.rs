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

impl Bm25Index {
    /// A writer for many documents in a row: each vocabulary is mapped to
    /// global term ids once, not once per document.
    pub fn writer(&mut self) -> Writer<'_> {
        Writer { index: self, map: VocabMap::default() }
    }

    /// Global ids for every term of `vocab` (terms are created as needed).
    pub fn intern_vocab(&mut self, vocab: &Arc<Vocab>) -> Vec<u32> {
        // Room for every term being new: the table never grows (and hashes
        // every name again) on the way.
        let names = &self.names;
        self.dict.reserve(vocab.len(), |s| names.bytes_of(s as usize));
        if self.terms.is_empty() {
            self.terms.held_mut().reserve_exact(vocab.len());
        }
        (0..vocab.len() as u32).map(|local| self.intern(vocab.name(local))).collect()
    }

    /// The id of term `name`, made if it is new.
    fn intern(&mut self, name: &str) -> u32 {
        let names = &self.names;
        match self.dict.find_or_vacant(name, |s| names.bytes_of(s as usize)) {
            Ok(t) => t,
            Err(vacant) => {
                let t = self.terms.len() as u32;
                vacant.insert(t);
                self.names.push(name);
                self.terms.held_mut().push(Term::new());
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
