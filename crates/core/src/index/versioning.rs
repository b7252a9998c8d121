//! Write order: every write carries a sequence number (from `gate.rs`), and
//! a write older than what the index holds for its id (a document, a
//! tombstone, or a `clear`) changes nothing. A rebuild made aside from the
//! live index is brought up to date with `carry_over`.

use super::vocab::VocabMap;
use super::{Bm25Index, NewDocument};
use crate::analysis::{Analyzed, TermStats, Vocab};
use crate::index::line_table::decode_table;
use std::sync::Arc;

impl Bm25Index {
    /// Whether a write with this sequence number is not older than what the
    /// index holds for `id`.
    pub fn is_current(&self, id: &str, seq: u64) -> bool {
        if seq < self.floor_seq {
            return false;
        }
        if let Some(d) = self.get(id) {
            return d.seq <= seq;
        }
        self.tombstones.get(id).is_none_or(|&t| t <= seq)
    }

    /// Adds or replaces a document. Returns false (and changes nothing) when
    /// a newer write of the same id is already applied.
    pub fn upsert(&mut self, doc: NewDocument, seq: u64) -> bool {
        let upserted = self.upsert_mapped(doc, seq, &mut VocabMap::default());
        self.maybe_compact();
        upserted
    }

    /// `upsert` with a cache of the vocabulary's global ids (see `writer()`),
    /// never compacting: compaction renumbers the terms that cache names
    /// (the writer compacts when it is done).
    pub(super) fn upsert_mapped(&mut self, doc: NewDocument, seq: u64, map: &mut VocabMap) -> bool {
        if !self.is_current(&doc.id, seq) {
            return false;
        }
        self.remove_slot_of(&doc.id);
        self.tombstones.remove(&doc.id);
        self.add(doc, seq, map);
        true
    }

    /// Removes a document. Returns whether it was there.
    pub fn remove(&mut self, id: &str, seq: u64) -> bool {
        if !self.is_current(id, seq) {
            return false;
        }
        let removed = self.remove_slot_of(id);
        self.tombstones.insert(id.to_string(), seq);
        self.maybe_compact();
        removed
    }

    /// Removes a document and the chunks (`chunk_id(id, n)` with
    /// `sourceFile` = `id`) that a large file under that path was split into.
    pub fn remove_with_chunks(&mut self, id: &str, seq: u64) -> bool {
        let mut removed = self.remove(id, seq);
        // (Last first: each is then taken off the end of the file's numbers.)
        for chunk in self.chunk_ids_of(id).into_iter().rev() {
            removed |= self.remove(&chunk, seq);
        }
        removed
    }

    /// The ids of the chunks of the file `id` here (the documents whose
    /// ids are `id`'s chunk ids and whose metadata name `id` as their
    /// source), by number: what `remove_with_chunks` removes beside `id`.
    pub fn chunk_ids_of(&self, id: &str) -> Vec<String> {
        self.chunks.ids_of(id)
    }

    /// Removes every document; writes numbered before `seq` are ignored
    /// from now on. The path rules stay (documents added later still
    /// follow them).
    pub fn clear(&mut self, seq: u64) {
        let (params, rules, base) = (self.params, self.kind_rules.take(), std::mem::take(&mut self.id_base));
        *self = Bm25Index::new(params);
        self.kind_rules = rules;
        self.id_base = base;
        self.floor_seq = seq;
    }

    /// Sequence number below which writes are ignored.
    pub fn floor_seq(&self) -> u64 {
        self.floor_seq
    }

    /// Removal records newer than `seq` (to replay on a rebuilt index).
    pub fn tombstones_after(&self, seq: u64) -> impl Iterator<Item = (&str, u64)> {
        self.tombstones.iter().filter(move |(_, &s)| s > seq).map(|(k, &s)| (k.as_str(), s))
    }

    /// Brings into this (rebuilt) index what `old` received after the
    /// rebuild started at `seq`: newer documents and newer removals.
    pub fn carry_over(&mut self, old: &Bm25Index, seq: u64) {
        for d in old.documents().filter(|d| d.seq > seq) {
            let doc = old.export(&d.id).expect("stored document");
            self.upsert(doc, d.seq);
        }
        for (id, s) in old.tombstones_after(seq) {
            self.remove(id, s);
        }
    }

    /// A stored document as it was given, its analysis read back from the
    /// postings.
    fn export(&self, id: &str) -> Option<NewDocument> {
        let slot = self.slot_of(id)?;
        let d = self.doc_at(slot);
        let mut vocab = Vocab::default();
        let terms = decode_table(&d.table)
            .filter(|&(t, _, _)| (t as usize) < self.terms.len())
            .map(|(t, first_line, last_line)| {
                let postings = &self.terms.get(t).postings;
                let tf = postings.find(slot).map_or(0, |i| postings.tf(i));
                (vocab.intern(&self.names[t as usize]), TermStats { tf, first_line, last_line })
            })
            .collect();
        Some(NewDocument {
            id: d.id.clone(),
            content: d.content.clone(),
            metadata: d.metadata.clone(),
            start_line_offset: d.start_line_offset,
            analyzed: Analyzed { vocab: Arc::new(vocab), terms, len: d.len },
        })
    }
}
