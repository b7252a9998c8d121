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
        let mut map = VocabMap::default();
        for local in 0..vocab.len() as u32 {
            self.global_id(vocab, local, &mut map);
        }
        map.ids
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
        let name = vocab.name(local);
        let t = match self.term_id(name) {
            Some(t) => t,
            None => {
                let t = self.terms.len() as u32;
                self.names.push(name);
                let names = &self.names;
                self.dict.insert(name, t, |s| &names[s as usize]);
                self.terms.push(Term::new());
                t
            }
        };
        map.ids[local as usize] = t;
        t
    }
}
