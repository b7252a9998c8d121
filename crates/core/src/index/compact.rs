//! Compaction (dead slots, dead postings and unused terms dropped, both
//! renumbered), giving spare capacity back, and what the index holds:
//! statistics and memory by part.

use super::line_table::{decode_table, encode_table};
use super::postings::f32_up;
use super::slot_index::SlotIndex;
use super::{id_at, Bm25Index, Document, IndexStats, Term, DEAD};

impl Bm25Index {
    /// Compacts once dead postings outnumber live ones, or dead slots live
    /// documents (amortised O(document) per removal or replacement; a
    /// document replaced again and again, as `index()` of the same id
    /// does, left a dead slot and its postings each time, for good).
    pub(super) fn maybe_compact(&mut self) {
        let dead_slots = self.docs.len().saturating_sub(self.live_docs);
        if (self.dead_postings > 4096 && self.dead_postings > self.live_postings)
            || (dead_slots > 4096 && dead_slots > self.live_docs)
        {
            self.compact();
        }
    }

    /// Gives back the spare capacity of growing vectors (after a bulk build).
    pub fn shrink(&mut self) {
        // (A loaded snapshot's terms are in its mapping: nothing to give back.)
        if let Some(held) = self.terms.held_if_built() {
            for t in held.iter_mut() {
                t.postings.shrink_to_fit();
            }
        }
        self.terms.shrink_to_fit();
        self.docs.shrink_to_fit();
        self.lens.shrink_to_fit();
        self.kinds.shrink_to_fit();
        self.names.shrink_to_fit();
        let names = &self.names;
        self.dict.shrink_to_fit(|t| names.bytes_of(t as usize));
    }

    /// Drops dead slots, dead postings and unused terms; renumbers both.
    pub fn compact(&mut self) {
        let new_slot = self.compact_slots();
        if self.live_docs > 0 {
            self.ref_avgdl = self.avg_doc_length().max(1.0);
        }
        let new_term = self.compact_terms(&new_slot);
        for d in self.docs.iter_mut().flatten() {
            // (A term id no term has, in a damaged table, is dropped.)
            let mut entries: Vec<(u32, u32, u32)> = decode_table(&d.table)
                .filter_map(|(t, a, b)| Some((new_term.get(t as usize).copied().filter(|&n| n != DEAD)?, a, b)))
                .collect();
            d.table = encode_table(&mut entries).into();
        }
        let names = &self.names;
        let mut dict = SlotIndex::default();
        dict.reserve(names.len(), |t| names.bytes_of(t as usize));
        for (i, n) in names.iter().enumerate() {
            dict.insert(n, i as u32, |t| names.bytes_of(t as usize));
        }
        self.dict = dict;
        let docs = &self.docs;
        let mut by_id = SlotIndex::default();
        by_id.reserve(docs.len(), |s| id_at(docs, s));
        for (i, d) in docs.iter().enumerate() {
            by_id.insert(&d.as_ref().expect("live").id, i as u32, |s| id_at(docs, s));
        }
        self.by_id = by_id;
        self.dead_postings = 0;
    }

    /// Moves the live documents to consecutive slots; returns each old
    /// slot's new one (`DEAD` for removed documents).
    fn compact_slots(&mut self) -> Vec<u32> {
        let mut new_slot = vec![DEAD; self.docs.len()];
        // (The count as loaded is a snapshot's word: never more than the slots.)
        let live = self.live_docs.min(self.docs.len());
        let mut docs: Vec<Option<Document>> = Vec::with_capacity(live);
        let mut lens = Vec::with_capacity(live);
        let mut kinds = Vec::with_capacity(live);
        for (old, d) in std::mem::take(&mut self.docs).into_iter().enumerate() {
            if let Some(d) = d {
                new_slot[old] = docs.len() as u32;
                lens.push(d.len);
                kinds.push(self.kinds[old]);
                docs.push(Some(d));
            }
        }
        self.docs = docs;
        self.lens = lens;
        self.kinds = kinds;
        new_slot
    }

    /// Keeps the terms still in use, their postings moved to the new slots
    /// and their block scores recomputed at the new reference average;
    /// returns each old term id's new one.
    fn compact_terms(&mut self, new_slot: &[u32]) -> Vec<u32> {
        let ref_norm = self.norm(self.ref_avgdl);
        let lens = &self.lens;
        let mut new_term = vec![DEAD; self.terms.len()];
        let mut terms = Vec::with_capacity(self.live_terms.min(self.terms.len()));
        let old_names = std::mem::take(&mut self.names);
        let mut names = super::names::Names::with_capacity(self.live_terms.min(new_term.len()), old_names.text_len());
        for (old, term) in std::mem::take(self.terms.held_mut()).into_iter().enumerate() {
            if term.df == 0 {
                continue;
            }
            new_term[old] = terms.len() as u32;
            let mut t = Term { df: term.df, ..Term::new() };
            t.postings = term.postings.remap(
                |d| Some(new_slot[d as usize]).filter(|&s| s != DEAD),
                |s| lens[s as usize],
                |tf, len| f32_up(ref_norm.tf_part(tf, len)),
            );
            for b in t.postings.slices().blocks {
                t.max_tf = t.max_tf.max(b.max_tf);
                t.min_len_per_tf = t.min_len_per_tf.min(b.min_len_per_tf);
                t.max_score = t.max_score.max(b.max_score);
            }
            terms.push(t);
            names.push(&old_names[old]);
        }
        self.terms.replace(terms);
        self.names = names;
        new_term
    }

    /// Approximate bytes held, by part (for `stats` and profiling).
    pub fn memory_parts(&self) -> Vec<(&'static str, usize)> {
        let postings = self.terms.postings_bytes();
        vec![
            // (Texts, ids and metadata.)
            ("content", self.content_bytes),
            ("postings", postings),
            ("terms", self.terms.held_bytes()),
            ("dictionary", self.names.held_bytes() + self.dict.bytes()),
            ("document slots", self.docs.capacity() * (std::mem::size_of::<Option<Document>>() + 4)),
            ("line tables", self.docs.iter().flatten().map(|d| d.table.len()).sum::<usize>()),
            ("ids", self.docs.iter().flatten().map(|d| d.id.len()).sum::<usize>() + self.by_id.bytes()),
            ("chunk table", self.chunks.bytes()),
        ]
    }

    pub fn stats(&self) -> IndexStats {
        let memory_bytes = self.memory_parts().iter().map(|p| p.1).sum();
        IndexStats {
            documents: self.live_docs,
            terms: self.live_terms,
            tokens: self.total_len,
            avg_doc_length: self.avg_doc_length(),
            memory_bytes,
        }
    }
}
