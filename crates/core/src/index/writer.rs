//! Adding documents: one at a time (`upsert`), or many at once in a bulk
//! build whose per-document work (term ids, line tables) runs in parallel,
//! with room for every posting made exactly first (one buffer for all of
//! them into an empty index, see `bulk`) and postings added by term range,
//! one range per thread.

use super::bulk::{NewPostings, PostingArena};
use super::line_table::{encode_table, table_terms};
use super::postings::{f32_up, NewPosting};
use super::section::{cast, Buffer, Section};
use super::vocab::VocabMap;
use super::{id_at, Bm25Index, Document, NewDocument, Term, DEAD};
use crate::analysis::Vocab;
use crate::text::SharedText;
use rayon::prelude::*;
use serde_json::{Map, Value};
use std::sync::Arc;

/// Documents prepared at once by `add_bulk`.
const BULK_BATCH: usize = 8192;

/// Each vocabulary of a bulk build with its global term ids.
type VocabIds = Vec<(Arc<Vocab>, Vec<u32>)>;

/// A document with global term ids and its encoded line table: the part
/// of adding it that does not touch the index, so bulk builds can do it in
/// parallel.
pub struct PreparedDocument {
    id: String,
    content: SharedText,
    metadata: Option<Arc<Map<String, Value>>>,
    start_line_offset: Option<u32>,
    len: u32,
    terms: Vec<(u32, u32)>,
    table: Box<[u8]>,
}

/// Maps a document's terms to global ids (`global(local)`) and encodes its
/// line table. The terms come out in id order, as the table keeps them,
/// so that each thread of a bulk build finds its range of terms in them
/// (and writes its postings in address order).
pub fn prepare(doc: NewDocument, global: impl Fn(u32) -> u32) -> PreparedDocument {
    let analyzed = &doc.analyzed.terms;
    // Sorted as one u64 each, the global id above the term's position: 8
    // bytes moved per swap and one comparison, where the entries' own sort
    // moved 16 (a term is once in a document: the position never decides).
    let mut order: Vec<u64> =
        analyzed.iter().enumerate().map(|(i, &(local, _))| u64::from(global(local)) << 32 | i as u64).collect();
    order.sort_unstable();
    let mut terms = Vec::with_capacity(order.len());
    // Already in order: the table's own sort only checks it.
    let mut entries: Vec<(u32, u32, u32)> = Vec::with_capacity(order.len());
    for key in order {
        let (id, st) = ((key >> 32) as u32, analyzed[key as u32 as usize].1);
        terms.push((id, st.tf));
        entries.push((id, st.first_line, st.last_line));
    }
    PreparedDocument {
        id: doc.id,
        content: doc.content,
        metadata: doc.metadata,
        start_line_offset: doc.start_line_offset,
        len: doc.analyzed.len,
        terms,
        table: encode_table(&mut entries),
    }
}

fn ids_of<'m>(maps: &'m VocabIds, d: &NewDocument) -> &'m [u32] {
    &maps.iter().find(|(v, _)| Arc::ptr_eq(v, &d.analyzed.vocab)).expect("mapped").1
}

impl Bm25Index {
    pub(super) fn add(&mut self, doc: NewDocument, seq: u64, map: &mut VocabMap) {
        let vocab = doc.analyzed.vocab.clone();
        for &(local, _) in &doc.analyzed.terms {
            self.global_id(&vocab, local, map);
        }
        let ids = &map.ids;
        let prepared = prepare(doc, |local| ids[local as usize]);
        self.add_prepared(prepared, seq);
    }

    /// Adds or replaces many documents at once: each vocabulary is mapped
    /// once, term ids and line tables are prepared in parallel, postings
    /// are appended in order. `on_added(n)` follows progress. Returns how
    /// many documents were current and written.
    pub fn add_bulk(&mut self, docs: Vec<NewDocument>, seq: u64, on_added: &mut dyn FnMut(usize)) -> usize {
        self.reserve(docs.len());
        let docs: Vec<NewDocument> = docs.into_iter().filter(|d| self.is_current(&d.id, seq)).collect();
        let n = docs.len();
        if self.docs.is_empty() && !docs.is_empty() {
            // Block scores exact for the index this build makes.
            let total: u64 = docs.iter().map(|d| u64::from(d.analyzed.len)).sum();
            self.ref_avgdl = (total as f64 / docs.len() as f64).max(1.0);
        }
        let maps = self.map_vocabularies(&docs);
        let (bounds, counts) = self.count_postings(&docs, &maps);
        let mut arena = self.make_room(&counts);
        let mut added = 0;
        let mut docs = docs.into_iter();
        // In batches, so that the prepared term lists of the whole corpus
        // never exist at once.
        loop {
            let batch: Vec<NewDocument> = docs.by_ref().take(BULK_BATCH).collect();
            if batch.is_empty() {
                break;
            }
            let batch_len = batch.len();
            self.add_batch(batch, &maps, &bounds, seq, arena.as_mut());
            for _ in 0..batch_len {
                added += 1;
                on_added(added);
            }
        }
        if let Some(arena) = arena {
            arena.finish(self.terms.held_mut());
        }
        // Documents replaced by this build leave dead slots and postings.
        self.maybe_compact();
        n
    }

    /// Global ids of every vocabulary the documents use.
    fn map_vocabularies(&mut self, docs: &[NewDocument]) -> VocabIds {
        let mut vocabs: Vec<&Arc<Vocab>> = Vec::new();
        for d in docs {
            if !vocabs.iter().any(|v| Arc::ptr_eq(v, &d.analyzed.vocab)) {
                vocabs.push(&d.analyzed.vocab);
            }
        }
        let ids = self.intern_vocabs(&vocabs);
        vocabs.into_iter().cloned().zip(ids).collect()
    }

    /// Room for `counts[t]` more postings of each term `t`: into an index
    /// without postings, the one buffer they are all written into
    /// (bulk.rs); else each list grown once, exactly.
    fn make_room(&mut self, counts: &[u32]) -> Option<PostingArena> {
        if counts.iter().all(|&c| c == 0) {
            // Nothing to add (a warm start's empty write): a snapshot's
            // terms stay where they lie, decoded only as queries read them.
            return None;
        }
        if self.terms.iter().all(|t| t.postings.is_empty()) {
            if let Some(arena) = PostingArena::new(counts) {
                return Some(arena);
            }
        }
        for (term, &count) in self.terms.held_mut().iter_mut().zip(counts) {
            if count > 0 {
                term.postings.reserve_exact(count as usize);
            }
        }
        None
    }

    /// How many postings the documents add to each term, and the term ids
    /// split into ranges of about as many postings each, one per thread
    /// (the bounds).
    fn count_postings(&self, docs: &[NewDocument], maps: &VocabIds) -> (Vec<usize>, Vec<u32>) {
        let terms = self.terms.len();
        // One count array per thread (not per rayon split: they are big).
        let per_thread = docs.len().div_ceil(rayon::current_num_threads().max(1)).max(1);
        let counts = docs
            .par_chunks(per_thread)
            .map(|chunk| {
                let mut counts = vec![0u32; terms];
                for d in chunk {
                    let ids = ids_of(maps, d);
                    for &(local, _) in &d.analyzed.terms {
                        counts[ids[local as usize] as usize] += 1;
                    }
                }
                counts
            })
            .reduce(
                || vec![0u32; terms],
                |mut a, b| {
                    a.iter_mut().zip(b).for_each(|(x, y)| *x += y);
                    a
                },
            );
        let parts = rayon::current_num_threads().max(1);
        let total: u64 = counts.iter().map(|&c| u64::from(c)).sum();
        let mut bounds = vec![0usize];
        let mut acc = 0u64;
        for (t, &c) in counts.iter().enumerate() {
            acc += u64::from(c);
            if acc * parts as u64 >= total * bounds.len() as u64 && bounds.len() < parts {
                bounds.push(t + 1);
            }
        }
        bounds.push(self.terms.len());
        (bounds, counts)
    }

    /// One batch of a bulk build: prepared in parallel, stored in order
    /// (the batch's line tables in one allocation), postings added in
    /// parallel by term range.
    fn add_batch(
        &mut self,
        batch: Vec<NewDocument>,
        maps: &VocabIds,
        bounds: &[usize],
        seq: u64,
        mut arena: Option<&mut PostingArena>,
    ) {
        let mut prepared: Vec<PreparedDocument> = batch
            .into_par_iter()
            .map(|d| {
                let ids = ids_of(maps, &d);
                prepare(d, |local| ids[local as usize])
            })
            .collect();
        let tables = batch_tables(&mut prepared);
        let mut pending: Vec<NewPostings> = Vec::with_capacity(prepared.len());
        for (mut p, table) in prepared.into_iter().zip(tables) {
            self.tombstones.remove(&p.id);
            if self.slot_of(&p.id).is_some_and(|slot| pending.first().is_some_and(|f| slot >= f.0)) {
                // Replaces a document of this batch: its postings first.
                self.add_postings(&pending, bounds, arena.as_deref_mut());
                pending.clear();
            }
            let terms = std::mem::take(&mut p.terms);
            let (slot, len) = self.add_document(p, table, seq);
            pending.push((slot, len, terms));
        }
        self.add_postings(&pending, bounds, arena);
    }

    /// Adds a prepared document (see `prepare`), replacing one of the same id.
    pub fn add_prepared(&mut self, mut doc: PreparedDocument, seq: u64) {
        let terms = std::mem::take(&mut doc.terms);
        let table = std::mem::take(&mut doc.table).into();
        let (slot, len) = self.add_document(doc, table, seq);
        let bounds = [0, self.terms.len()];
        self.add_postings(&[(slot, len, terms)], &bounds, None);
    }

    /// The postings of documents just added, as (slot, length, terms);
    /// `bounds` splits the term ids into ranges handled in parallel.
    fn add_postings(&mut self, docs: &[NewPostings], bounds: &[usize], arena: Option<&mut PostingArena>) {
        let ref_norm = self.norm(self.ref_avgdl);
        if let Some(arena) = arena {
            let score = |tf: u32, len: u32| f32_up(ref_norm.tf_part(tf, len));
            self.live_terms += arena.fill(self.terms.held_mut(), docs, bounds, score);
            self.live_postings += docs.iter().map(|d| d.2.len() as u64).sum::<u64>();
            return;
        }
        let mut ranges: Vec<(usize, &mut [Term])> = Vec::with_capacity(bounds.len());
        let mut rest: &mut [Term] = self.terms.held_mut();
        for w in bounds.windows(2) {
            let (head, tail) = rest.split_at_mut((w[1] - w[0]).min(rest.len()));
            ranges.push((w[0], head));
            rest = tail;
        }
        let add = |(lo, terms): (usize, &mut [Term])| -> usize {
            let mut new_terms = 0;
            for (slot, len, doc_terms) in docs {
                let once = NewPosting::new(*slot, 1, *len, f32_up(ref_norm.tf_part(1, *len)));
                for &(tid, tf) in doc_terms {
                    let Some(term) = (tid as usize).checked_sub(lo).and_then(|i| terms.get_mut(i)) else { continue };
                    let p = if tf == 1 {
                        once
                    } else {
                        NewPosting::new(*slot, tf, *len, f32_up(ref_norm.tf_part(tf, *len)))
                    };
                    new_terms += usize::from(term.note(&p));
                    term.postings.push_posting(&p);
                }
            }
            new_terms
        };
        let postings: usize = docs.iter().map(|d| d.2.len()).sum();
        // Threads only for enough work (always in tests, to test them).
        let parallel = ranges.len() > 1 && (cfg!(test) || postings > 100_000);
        let new_terms: usize =
            if parallel { ranges.into_par_iter().map(add).sum() } else { ranges.into_iter().map(add).sum() };
        self.live_terms += new_terms;
        self.live_postings += postings as u64;
    }

    /// Stores a prepared document (its postings apart) in a new slot,
    /// replacing one of the same id; returns the slot and its length.
    fn add_document(&mut self, doc: PreparedDocument, table: Section<u8>, seq: u64) -> (u32, u32) {
        self.remove_slot_of(&doc.id);
        let slot = self.docs.len() as u32;
        let len = doc.len;
        if self.ref_avgdl == 0.0 {
            self.ref_avgdl = f64::from(len.max(1));
        }
        self.live_docs += 1;
        self.total_len += u64::from(len);
        self.content_bytes += doc.content.len() + doc.id.len() + metadata_bytes(doc.metadata.as_deref());
        self.lens.push(len);
        let path = super::chunk_source(&doc.id, doc.metadata.as_deref()).unwrap_or(doc.id.as_str());
        self.kinds.push(self.kind_of_file(path) as u8);
        self.docs.push(Some(Document {
            id: doc.id.as_str().to_owned(),
            content: doc.content,
            metadata: doc.metadata,
            start_line_offset: doc.start_line_offset,
            len,
            seq,
            table,
        }));
        let docs = &self.docs;
        let id = docs[slot as usize].as_ref().expect("just stored").id.as_str();
        self.by_id.insert(id, slot, |s| id_at(docs, s));
        self.prefixes.update(id, true);
        self.chunks.added(docs[slot as usize].as_ref().expect("just stored"));
        (slot, len)
    }

    /// Marks the slot of `id` dead and takes its postings out of the
    /// statistics (they stay in the lists until compaction).
    pub(super) fn remove_slot_of(&mut self, id: &str) -> bool {
        let docs = &self.docs;
        let Some(slot) = self.by_id.remove(id, |s| id_at(docs, s)) else { return false };
        let doc = self.docs[slot as usize].take().expect("live slot");
        self.lens[slot as usize] = DEAD;
        self.prefixes.update(&doc.id, false);
        self.chunks.removed(&doc);
        let mut n = 0u64;
        for t in table_terms(&doc.table) {
            // (A loaded snapshot's table names only its terms; checked
            // anyway: a damaged one must not panic here.)
            let Some(term) = self.terms.held_mut().get_mut(t as usize).filter(|t| t.df > 0) else { continue };
            term.df -= 1;
            if term.df == 0 {
                self.live_terms = self.live_terms.saturating_sub(1);
            }
            n += 1;
        }
        self.live_postings = self.live_postings.saturating_sub(n);
        self.dead_postings += n;
        // (Saturating: the counts of a loaded snapshot are its own word.)
        self.live_docs = self.live_docs.saturating_sub(1);
        self.total_len = self.total_len.saturating_sub(u64::from(doc.len));
        let held = doc.content.len() + doc.id.len() + metadata_bytes(doc.metadata.as_deref());
        self.content_bytes = self.content_bytes.saturating_sub(held);
        true
    }

    /// Room for `n` more documents, so a bulk write does not grow (and
    /// copy) the document tables again and again.
    pub fn reserve(&mut self, n: usize) {
        self.docs.reserve(n);
        self.lens.reserve(n);
        self.kinds.reserve(n);
        let docs = &self.docs;
        self.by_id.reserve(n, |s| id_at(docs, s));
    }
}

/// The line tables of a batch moved into one allocation (one per document
/// before, made by the threads that prepared them between short-lived
/// lists, which left allocator pages half used once those were freed).
fn batch_tables(prepared: &mut [PreparedDocument]) -> Vec<Section<u8>> {
    let total: usize = prepared.iter().map(|p| p.table.len()).sum();
    if total.div_ceil(4) > u32::MAX as usize / 4 {
        return prepared.iter_mut().map(|p| std::mem::take(&mut p.table).into()).collect();
    }
    let mut words = Buffer::zeroed(total.div_ceil(4));
    let bytes = cast::<u8>(words.words());
    let mut at = 0;
    for p in prepared.iter() {
        bytes[at..at + p.table.len()].copy_from_slice(&p.table);
        at += p.table.len();
    }
    let backing = words.freeze();
    let mut at = 0;
    prepared
        .iter_mut()
        .map(|p| {
            let len = std::mem::take(&mut p.table).len();
            let bytes = &backing.bytes()[at..at + len];
            at += len;
            match len {
                0 => Section::default(),
                _ => Section::view(&backing, bytes).unwrap_or_else(|| Section::copy(bytes)),
            }
        })
        .collect()
}

/// A document's metadata as `memoryBytes` counts it (with its text: the
/// "content" part of `memory_parts`).
fn metadata_bytes(m: Option<&serde_json::Map<String, serde_json::Value>>) -> usize {
    m.map_or(0, crate::bytes::json_size::map_bytes)
}
