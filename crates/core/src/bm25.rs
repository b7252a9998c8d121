//! The BM25 index: documents, postings and statistics, kept exact under
//! add, replace and remove at O(document) cost, and top-k retrieval with
//! block-max MaxScore pruning over windows of slots, whose results equal
//! exhaustive scoring.
//!
//! Documents live in slots that are never reused until compaction, so every
//! posting list stays sorted by slot. Removing a document only marks its slot
//! dead and fixes the statistics; its postings are skipped by queries and
//! dropped by the next compaction, which runs once dead postings outnumber
//! live ones (amortised O(document)).

pub use crate::analysis::{Analyzed, TermStats, Vocab};
use crate::postings::{decode_table, encode_table, f32_up, gallop, lines_of_terms, table_terms, BlockMax, Postings, BLOCK};
use crate::slot_index::SlotIndex;
use crate::text::SharedText;
use crate::topk::TopK;
use rustc_hash::FxHashMap;
use serde_json::{Map, Value};
use std::cmp::Ordering;
use std::collections::BinaryHeap;
use std::sync::Arc;

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Bm25Params {
    pub k1: f64,
    pub b: f64,
}

impl Default for Bm25Params {
    fn default() -> Self {
        Bm25Params { k1: 1.5, b: 0.75 }
    }
}

/// What a caller gives to store one document.
#[derive(Debug, Clone, PartialEq)]
pub struct NewDocument {
    pub id: String,
    pub content: SharedText,
    pub metadata: Option<Map<String, Value>>,
    /// 1-based line of the file where `content` starts (chunks, and the
    /// `startLineOffset` option of `index()`).
    pub start_line_offset: Option<u32>,
    pub analyzed: Analyzed,
}

#[derive(Debug, Clone)]
pub struct Document {
    pub id: String,
    pub content: SharedText,
    /// Shared with the results that return it (no copy per result); a
    /// pointer, so slots stay small.
    pub metadata: Option<Arc<Map<String, Value>>>,
    pub start_line_offset: Option<u32>,
    pub len: u32,
    /// Write sequence number: a later write wins whatever order writes land in.
    pub seq: u64,
    /// Distinct terms with their first and last lines (postings.rs).
    table: Box<[u8]>,
}

impl Document {
    /// Requests what turning this document into a result reads (its id,
    /// text, line table and metadata), so that the misses of all the hits
    /// of a query overlap instead of coming one after another.
    pub fn prefetch(&self) {
        use crate::prefetch::prefetch;
        prefetch(self.id.as_ptr());
        self.content.prefetch();
        prefetch(self.table.as_ptr());
        if let Some(m) = &self.metadata {
            prefetch(Arc::as_ptr(m));
        }
    }
}

#[derive(Debug, Clone, Default)]
struct Term {
    postings: Postings,
    df: u32,
    // Bounds for MaxScore (see postings::BlockMax); stay valid (if loose)
    // after removals.
    max_tf: u32,
    min_len_per_tf: f32,
    max_score: f32,
}

/// A scored document.
#[derive(Debug, Clone, Copy)]
pub struct Hit<'a> {
    pub doc: &'a Document,
    pub slot: u32,
    pub score: f64,
}

#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct IndexStats {
    pub documents: usize,
    pub terms: usize,
    pub tokens: u64,
    pub avg_doc_length: f64,
    pub memory_bytes: usize,
}

const DEAD: u32 = u32::MAX;

/// Bounds are inflated this much so that float rounding never makes a
/// bound smaller than a score it should cover.
const BOUND_SLACK: f64 = 1.0 + 1e-9;

/// Documents prepared at once by `add_bulk`.
const BULK_BATCH: usize = 8192;

/// BM25's term-frequency part, `tf·(k1+1) / (tf + k1·(1 − b + b·len/avgdl))`,
/// with the constants of one query folded.
#[derive(Clone, Copy)]
struct Norm {
    c1: f64,
    c2: f64,
    k1p1: f64,
}

impl Norm {
    #[inline]
    fn tf_part(&self, tf: u32, len: u32) -> f64 {
        let tf = tf as f64;
        tf * self.k1p1 / (tf + self.c1 + self.c2 * len as f64)
    }

    /// The largest `tf_part` of postings with frequencies up to `max_tf` and
    /// `len/tf` of at least `min_len_per_tf` (needs k1 >= 0, 0 <= b <= 1).
    fn bound(&self, max_tf: u32, min_len_per_tf: f32) -> f64 {
        self.k1p1 / (1.0 + self.c1 / max_tf as f64 + self.c2 * min_len_per_tf as f64)
    }
}

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
/// line table.
pub fn prepare(doc: NewDocument, global: impl Fn(u32) -> u32) -> PreparedDocument {
    let n = doc.analyzed.terms.len();
    let mut terms = Vec::with_capacity(n);
    let mut entries = Vec::with_capacity(n);
    for &(local, st) in &doc.analyzed.terms {
        let g = global(local);
        terms.push((g, st.tf));
        entries.push((g, st.first_line, st.last_line));
    }
    PreparedDocument {
        id: doc.id,
        content: doc.content,
        metadata: doc.metadata.map(Arc::new),
        start_line_offset: doc.start_line_offset,
        len: doc.analyzed.len,
        terms,
        table: encode_table(&mut entries),
    }
}

/// See `Bm25Index::writer`.
pub struct Writer<'a> {
    index: &'a mut Bm25Index,
    map: VocabMap,
}

impl Writer<'_> {
    /// As `Bm25Index::upsert`.
    pub fn upsert(&mut self, doc: NewDocument, seq: u64) -> bool {
        let ix = &mut *self.index;
        if !ix.is_current(&doc.id, seq) {
            return false;
        }
        ix.remove_slot_of(&doc.id);
        ix.tombstones.remove(&doc.id);
        ix.add(doc, seq, &mut self.map);
        true
    }
}

/// Global ids of one vocabulary's terms, filled as they are met.
#[derive(Default)]
struct VocabMap {
    vocab: Option<Arc<Vocab>>,
    ids: Vec<u32>,
}

#[derive(Debug, Clone, Default)]
pub struct Bm25Index {
    params: Bm25Params,
    dict: FxHashMap<Box<str>, u32>,
    terms: Vec<Term>,
    names: Vec<Box<str>>,
    docs: Vec<Option<Document>>,
    /// Length per slot, `DEAD` for a removed document (hot in scoring).
    lens: Vec<u32>,
    by_id: SlotIndex,
    live_docs: usize,
    live_terms: usize,
    total_len: u64,
    live_postings: u64,
    dead_postings: u64,
    content_bytes: usize,
    /// Sequence numbers of removals, so that an older write landing late
    /// does not bring a removed document back.
    tombstones: FxHashMap<String, u64>,
    /// Writes older than this were wiped by `clear`.
    floor_seq: u64,
    /// The average length that stored block scores are computed at (0 until
    /// the first document): set by the first write or bulk build and by
    /// compaction.
    ref_avgdl: f64,
}

impl Bm25Index {
    pub fn new(params: Bm25Params) -> Self {
        Bm25Index { params, ..Default::default() }
    }

    pub fn params(&self) -> Bm25Params {
        self.params
    }

    pub fn len(&self) -> usize {
        self.live_docs
    }

    pub fn is_empty(&self) -> bool {
        self.live_docs == 0
    }

    pub fn get(&self, id: &str) -> Option<&Document> {
        self.slot_of(id).and_then(|s| self.docs[s as usize].as_ref())
    }

    pub fn contains(&self, id: &str) -> bool {
        self.slot_of(id).is_some()
    }

    /// Documents in slot order (indexing order).
    pub fn documents(&self) -> impl Iterator<Item = &Document> {
        self.docs.iter().flatten()
    }

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
        if !self.is_current(&doc.id, seq) {
            return false;
        }
        self.remove_slot_of(&doc.id);
        self.tombstones.remove(&doc.id);
        self.add(doc, seq, &mut VocabMap::default());
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

    /// Removes a document and the chunks (`id#chunk-N` with `sourceFile`
    /// = `id`) that a large file under that path was split into.
    pub fn remove_with_chunks(&mut self, id: &str, seq: u64) -> bool {
        let mut removed = self.remove(id, seq);
        for n in 0.. {
            let chunk = format!("{id}#chunk-{n}");
            let is_chunk = self.get(&chunk).and_then(|d| d.metadata.as_ref()).and_then(|m| m.get("sourceFile")).and_then(|v| v.as_str()) == Some(id);
            if !is_chunk {
                break;
            }
            removed |= self.remove(&chunk, seq);
        }
        removed
    }

    /// Removes every document; writes numbered before `seq` are ignored
    /// from now on.
    pub fn clear(&mut self, seq: u64) {
        let params = self.params;
        *self = Bm25Index::new(params);
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
            let doc = old.export(d);
            self.upsert(doc, d.seq);
        }
        for (id, s) in old.tombstones_after(seq) {
            self.remove(id, s);
        }
    }

    /// A stored document as it was given, its analysis read back from the
    /// postings.
    fn export(&self, d: &Document) -> NewDocument {
        let slot = self.slot_of(&d.id).expect("stored document");
        let mut vocab = Vocab::default();
        let terms = decode_table(&d.table)
            .map(|(t, first_line, last_line)| {
                let postings = &self.terms[t as usize].postings;
                let tf = postings.find(slot).map_or(0, |i| postings.tf(i));
                (vocab.intern(&self.names[t as usize]), TermStats { tf, first_line, last_line })
            })
            .collect();
        NewDocument {
            id: d.id.clone(),
            content: d.content.clone(),
            metadata: d.metadata.as_deref().cloned(),
            start_line_offset: d.start_line_offset,
            analyzed: Analyzed { vocab: Arc::new(vocab), terms, len: d.len },
        }
    }

    /// The global id of a term of `vocab`, through a cache of the vocab's
    /// ids (reset when the vocabulary changes).
    fn global_id(&mut self, vocab: &Arc<Vocab>, local: u32, map: &mut VocabMap) -> u32 {
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
        let t = match self.dict.get(name) {
            Some(&t) => t,
            None => {
                let t = self.terms.len() as u32;
                let name: Box<str> = name.into();
                self.dict.insert(name.clone(), t);
                self.names.push(name);
                self.terms.push(Term { min_len_per_tf: f32::MAX, ..Default::default() });
                t
            }
        };
        map.ids[local as usize] = t;
        t
    }

    /// A writer for many documents in a row: each vocabulary is mapped to
    /// global term ids once, not once per document.
    pub fn writer(&mut self) -> Writer<'_> {
        Writer { index: self, map: VocabMap::default() }
    }


    fn add(&mut self, doc: NewDocument, seq: u64, map: &mut VocabMap) {
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
        use rayon::prelude::*;
        self.reserve(docs.len());
        let docs: Vec<NewDocument> = docs.into_iter().filter(|d| self.is_current(&d.id, seq)).collect();
        if self.docs.is_empty() && !docs.is_empty() {
            // Block scores exact for the index this build makes.
            let total: u64 = docs.iter().map(|d| u64::from(d.analyzed.len)).sum();
            self.ref_avgdl = (total as f64 / docs.len() as f64).max(1.0);
        }
        let mut maps: Vec<(Arc<Vocab>, Vec<u32>)> = Vec::new();
        for d in &docs {
            if !maps.iter().any(|(v, _)| Arc::ptr_eq(v, &d.analyzed.vocab)) {
                let ids = self.intern_vocab(&d.analyzed.vocab);
                maps.push((d.analyzed.vocab.clone(), ids));
            }
        }
        // Exact room for every posting list first: no copies as lists grow,
        // and no half-empty allocator pages left behind by them.
        let map_of = |d: &NewDocument| &maps.iter().find(|(v, _)| Arc::ptr_eq(v, &d.analyzed.vocab)).expect("mapped").1;
        let terms = self.terms.len();
        // One count array per thread (not per rayon split: they are big).
        let per_thread = docs.len().div_ceil(rayon::current_num_threads().max(1)).max(1);
        let counts = docs
            .par_chunks(per_thread)
            .map(|chunk| {
                let mut counts = vec![0u32; terms];
                for d in chunk {
                    let ids = map_of(d);
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
        for (term, &count) in self.terms.iter_mut().zip(&counts) {
            if count > 0 {
                term.postings.reserve_exact(count as usize);
            }
        }
        // Term ranges with about as many postings each, one per thread.
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
        drop(counts);
        let n = docs.len();
        let mut added = 0;
        let mut docs = docs.into_iter();
        // In batches, so that the prepared term lists of the whole corpus
        // never exist at once.
        loop {
            let batch: Vec<NewDocument> = docs.by_ref().take(BULK_BATCH).collect();
            if batch.is_empty() {
                break;
            }
            let prepared: Vec<PreparedDocument> = batch
                .into_par_iter()
                .map(|d| {
                    let ids = map_of(&d);
                    prepare(d, |local| ids[local as usize])
                })
                .collect();
            // Documents in order here; their postings in parallel below,
            // each thread on its own range of terms.
            let mut pending: Vec<NewPostings> = Vec::with_capacity(prepared.len());
            let batch_len = prepared.len();
            for mut p in prepared {
                self.tombstones.remove(&p.id);
                if self.slot_of(&p.id).is_some_and(|slot| pending.first().is_some_and(|f| slot >= f.0)) {
                    // Replaces a document of this batch: its postings first.
                    self.add_postings(&pending, &bounds);
                    pending.clear();
                }
                let terms = std::mem::take(&mut p.terms);
                let (slot, len) = self.add_document(p, seq);
                pending.push((slot, len, terms));
            }
            self.add_postings(&pending, &bounds);
            for _ in 0..batch_len {
                added += 1;
                on_added(added);
            }
        }
        n
    }

    /// Global ids for every term of `vocab` (terms are created as needed).
    pub fn intern_vocab(&mut self, vocab: &Arc<Vocab>) -> Vec<u32> {
        let mut map = VocabMap::default();
        for local in 0..vocab.len() as u32 {
            self.global_id(vocab, local, &mut map);
        }
        map.ids
    }

    /// Adds a prepared document (see `prepare`), replacing one of the same id.
    pub fn add_prepared(&mut self, mut doc: PreparedDocument, seq: u64) {
        let terms = std::mem::take(&mut doc.terms);
        let (slot, len) = self.add_document(doc, seq);
        let bounds = [0, self.terms.len()];
        self.add_postings(&[(slot, len, terms)], &bounds);
    }

    /// The postings of documents just added, as (slot, length, terms);
    /// `bounds` splits the term ids into ranges handled in parallel.
    fn add_postings(&mut self, docs: &[NewPostings], bounds: &[usize]) {
        use rayon::prelude::*;
        let ref_norm = self.norm(self.ref_avgdl);
        let mut ranges: Vec<(usize, &mut [Term])> = Vec::with_capacity(bounds.len());
        let mut rest: &mut [Term] = &mut self.terms;
        for w in bounds.windows(2) {
            let (head, tail) = rest.split_at_mut((w[1] - w[0]).min(rest.len()));
            ranges.push((w[0], head));
            rest = tail;
        }
        let add = |(lo, terms): (usize, &mut [Term])| -> usize {
            let mut new_terms = 0;
            for (slot, len, doc_terms) in docs {
                for &(tid, tf) in doc_terms {
                    let Some(term) = (tid as usize).checked_sub(lo).and_then(|i| terms.get_mut(i)) else { continue };
                    new_terms += usize::from(term.df == 0);
                    term.df += 1;
                    term.max_tf = term.max_tf.max(tf);
                    term.min_len_per_tf = term.min_len_per_tf.min(crate::postings::len_per_tf(*len, tf));
                    let score = f32_up(ref_norm.tf_part(tf, *len));
                    term.max_score = term.max_score.max(score);
                    term.postings.push(*slot, tf, *len, score);
                }
            }
            new_terms
        };
        let postings: usize = docs.iter().map(|d| d.2.len()).sum();
        // Threads only for enough work (always in tests, to test them).
        let parallel = ranges.len() > 1 && (cfg!(test) || postings > 100_000);
        let new_terms: usize = if parallel { ranges.into_par_iter().map(add).sum() } else { ranges.into_iter().map(add).sum() };
        self.live_terms += new_terms;
        self.live_postings += postings as u64;
    }

    /// Stores a prepared document (its postings apart) in a new slot,
    /// replacing one of the same id; returns the slot and its length.
    fn add_document(&mut self, doc: PreparedDocument, seq: u64) -> (u32, u32) {
        self.remove_slot_of(&doc.id);
        let slot = self.docs.len() as u32;
        let len = doc.len;
        if self.ref_avgdl == 0.0 {
            self.ref_avgdl = f64::from(len.max(1));
        }
        self.live_docs += 1;
        self.total_len += u64::from(len);
        self.content_bytes += doc.content.len() + doc.id.len();
        self.lens.push(len);
        self.docs.push(Some(Document {
            id: doc.id,
            content: doc.content,
            metadata: doc.metadata,
            start_line_offset: doc.start_line_offset,
            len,
            seq,
            table: doc.table,
        }));
        let docs = &self.docs;
        let id = docs[slot as usize].as_ref().expect("just stored").id.as_str();
        self.by_id.insert(id, slot, |s| id_at(docs, s));
        (slot, len)
    }

    fn slot_of(&self, id: &str) -> Option<u32> {
        self.by_id.get(id, |s| id_at(&self.docs, s))
    }

    fn remove_slot_of(&mut self, id: &str) -> bool {
        let docs = &self.docs;
        let Some(slot) = self.by_id.remove(id, |s| id_at(docs, s)) else { return false };
        let doc = self.docs[slot as usize].take().expect("live slot");
        self.lens[slot as usize] = DEAD;
        let mut n = 0u64;
        for t in table_terms(&doc.table) {
            let term = &mut self.terms[t as usize];
            term.df -= 1;
            if term.df == 0 {
                self.live_terms -= 1;
            }
            n += 1;
        }
        self.live_postings -= n;
        self.dead_postings += n;
        self.live_docs -= 1;
        self.total_len -= u64::from(doc.len);
        self.content_bytes -= doc.content.len() + doc.id.len();
        true
    }

    fn maybe_compact(&mut self) {
        if self.dead_postings > 4096 && self.dead_postings > self.live_postings {
            self.compact();
        }
    }

    /// Room for `n` more documents, so a bulk write does not grow (and
    /// copy) the document tables again and again.
    pub fn reserve(&mut self, n: usize) {
        self.docs.reserve(n);
        self.lens.reserve(n);
        let docs = &self.docs;
        self.by_id.reserve(n, |s| id_at(docs, s));
    }

    /// Gives back the spare capacity of growing vectors (after a bulk build).
    pub fn shrink(&mut self) {
        for t in &mut self.terms {
            t.postings.shrink_to_fit();
        }
        self.terms.shrink_to_fit();
        self.docs.shrink_to_fit();
        self.lens.shrink_to_fit();
    }

    /// Drops dead slots, dead postings and unused terms; renumbers both.
    pub fn compact(&mut self) {
        let mut new_slot = vec![DEAD; self.docs.len()];
        let mut docs = Vec::with_capacity(self.live_docs);
        let mut lens = Vec::with_capacity(self.live_docs);
        for (old, d) in std::mem::take(&mut self.docs).into_iter().enumerate() {
            if let Some(d) = d {
                new_slot[old] = docs.len() as u32;
                lens.push(d.len);
                docs.push(Some(d));
            }
        }
        if self.live_docs > 0 {
            self.ref_avgdl = self.avg_doc_length().max(1.0);
        }
        let ref_norm = self.norm(self.ref_avgdl);
        let mut new_term = vec![DEAD; self.terms.len()];
        let mut terms = Vec::with_capacity(self.live_terms);
        let mut names = Vec::with_capacity(self.live_terms);
        for (old, (term, name)) in std::mem::take(&mut self.terms).into_iter().zip(std::mem::take(&mut self.names)).enumerate() {
            if term.df == 0 {
                continue;
            }
            new_term[old] = terms.len() as u32;
            let mut t = Term { min_len_per_tf: f32::MAX, df: term.df, ..Default::default() };
            t.postings = term.postings.remap(|d| Some(new_slot[d as usize]).filter(|&s| s != DEAD), |s| lens[s as usize], |tf, len| f32_up(ref_norm.tf_part(tf, len)));
            for b in &t.postings.blocks {
                t.max_tf = t.max_tf.max(b.max_tf);
                t.min_len_per_tf = t.min_len_per_tf.min(b.min_len_per_tf);
                t.max_score = t.max_score.max(b.max_score);
            }
            terms.push(t);
            names.push(name);
        }
        for d in docs.iter_mut().flatten() {
            let mut entries: Vec<(u32, u32, u32)> = decode_table(&d.table).map(|(t, a, b)| (new_term[t as usize], a, b)).collect();
            d.table = encode_table(&mut entries);
        }
        self.dict = names.iter().enumerate().map(|(i, n)| (n.clone(), i as u32)).collect();
        let mut by_id = SlotIndex::default();
        by_id.reserve(docs.len(), |s| id_at(&docs, s));
        for (i, d) in docs.iter().enumerate() {
            by_id.insert(&d.as_ref().expect("live").id, i as u32, |s| id_at(&docs, s));
        }
        self.by_id = by_id;
        self.docs = docs;
        self.lens = lens;
        self.terms = terms;
        self.names = names;
        self.dead_postings = 0;
    }

    pub fn avg_doc_length(&self) -> f64 {
        if self.live_docs == 0 {
            0.0
        } else {
            self.total_len as f64 / self.live_docs as f64
        }
    }

    /// Approximate bytes held, by part (for `stats` and profiling).
    pub fn memory_parts(&self) -> Vec<(&'static str, usize)> {
        let postings: usize = self.terms.iter().map(|t| t.postings.bytes()).sum();
        vec![
            ("content", self.content_bytes),
            ("postings", postings),
            ("terms", self.terms.capacity() * std::mem::size_of::<Term>()),
            ("dictionary", self.names.iter().map(|n| n.len() * 2 + 40).sum::<usize>()),
            ("document slots", self.docs.capacity() * (std::mem::size_of::<Option<Document>>() + 4)),
            ("line tables", self.docs.iter().flatten().map(|d| d.table.len()).sum::<usize>()),
            ("ids", self.docs.iter().flatten().map(|d| d.id.len()).sum::<usize>() + self.by_id.bytes()),
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

    /// Distinct query terms known to the index, with their repeat counts
    /// (Mastra sums over query tokens including repeats).
    fn query_terms(&self, tokens: &[String]) -> Vec<(u32, f64, usize)> {
        let mut out: Vec<(u32, f64, usize)> = Vec::new();
        for tok in tokens {
            let Some(&t) = self.dict.get(tok.as_str()) else { continue };
            if self.terms[t as usize].df == 0 {
                continue;
            }
            match out.iter_mut().find(|q| q.0 == t) {
                Some(q) => q.1 += 1.0,
                None => {
                    let pos = out.len();
                    out.push((t, 1.0, pos));
                }
            }
        }
        out
    }

    fn idf(&self, t: u32) -> f64 {
        let n = self.live_docs as f64;
        let df = self.terms[t as usize].df as f64;
        ((n - df + 0.5) / (df + 0.5) + 1.0).ln()
    }

    /// The length normalisation of this query's scores, computed once.
    fn norm(&self, avgdl: f64) -> Norm {
        let Bm25Params { k1, b } = self.params;
        Norm { c1: k1 * (1.0 - b), c2: k1 * b / avgdl, k1p1: k1 + 1.0 }
    }

    /// The top `k` documents for the query tokens, best first, ties by id;
    /// only documents accepted by `keep` count.
    ///
    /// Block-max MaxScore over windows of `WINDOW` slots. Terms whose
    /// bounds together stay below the threshold are non-essential: only
    /// looked up for documents the others bring. Per window, each essential
    /// list is read in order, block by block; a block that cannot lift a
    /// document to the threshold (with every other term at its best in the
    /// window) is passed over, and the other postings add a bound from
    /// their length codes into an array. Only documents whose bound reaches
    /// the threshold are scored exactly, their lengths read from a window
    /// of `lens` that stays in cache. Reading lists in order and scattering
    /// into a small array is what keeps a cold query fast: the document-
    /// at-a-time loop this replaced spent most of its time in cache misses.
    pub fn top_k(&self, tokens: &[String], k: usize, keep: Option<&dyn Fn(&Document) -> bool>) -> Vec<Hit<'_>> {
        let q = self.query_terms(tokens);
        if k == 0 || q.is_empty() || self.live_docs == 0 {
            return Vec::new();
        }
        let avgdl = self.avg_doc_length();
        let norm = self.norm(avgdl);
        let Bm25Params { k1, b } = self.params;
        let prunable = k1 > 0.0 && (0.0..=1.0).contains(&b);
        // Stored scores (at `ref_avgdl`) bound today's scaled by how much
        // the average has grown: a longer average only lowers the length
        // penalty, by that ratio at most.
        let growth = if self.ref_avgdl > 0.0 { (avgdl / self.ref_avgdl).max(1.0) } else { f64::INFINITY };
        // A term's (or block's) best, from its summary; a posting's best,
        // from its frequency and length code. Infinite when not prunable.
        let bound_of = |w: f64, max_tf: u32, min_len_per_tf: f32, max_score: f32| {
            if prunable {
                w * norm.bound(max_tf, min_len_per_tf).min(f64::from(max_score) * growth) * BOUND_SLACK
            } else {
                f64::INFINITY
            }
        };
        let block_bound = |w: f64, b: &BlockMax| bound_of(w, b.max_tf, b.min_len_per_tf, b.max_score);
        let posting_bound = |w: f64, (tf, min_len): (u32, u32)| if prunable { w * norm.tf_part(tf, min_len) * BOUND_SLACK } else { f64::INFINITY };

        struct Cursor<'p> {
            postings: &'p Postings,
            pos: usize,
            weight_idf: f64,
            ub: f64,
            qpos: usize,
            /// Its best in the current window.
            window_bound: f64,
            /// The block that may hold the slot looked at (non-essential
            /// terms; only moves forward) and its bound, once computed.
            shallow: usize,
            shallow_bound: Option<f64>,
        }
        let mut cursors: Vec<Cursor> = q
            .iter()
            .map(|&(t, w, qpos)| {
                let term = &self.terms[t as usize];
                let weight_idf = w * self.idf(t);
                let ub = bound_of(weight_idf, term.max_tf, term.min_len_per_tf, term.max_score);
                Cursor { postings: &term.postings, pos: 0, weight_idf, ub, qpos, window_bound: ub, shallow: 0, shallow_bound: None }
            })
            .collect();
        // Ascending upper bound: the cheap terms become non-essential first.
        cursors.sort_by(|a, b| a.ub.partial_cmp(&b.ub).unwrap_or(Ordering::Equal));
        let prefix: Vec<f64> = cursors
            .iter()
            .scan(0.0, |s, c| {
                *s += c.ub;
                Some(*s)
            })
            .collect();

        let id_of = |slot: u32| self.docs[slot as usize].as_ref().map_or("", |d| d.id.as_str());
        let better = |a: (f64, u32), b: (f64, u32)| a.0 > b.0 || (a.0 == b.0 && id_of(a.1) < id_of(b.1));
        let mut top = TopK::new(k);
        let mut threshold = f64::NEG_INFINITY;
        let mut essential = 0usize;
        let mut parts = vec![0.0f64; q.len()];
        // Per window: bounds of the documents seen, which ones, where each
        // essential list stood when the window began; per candidate, the
        // non-essential block bounds summed in visiting order.
        let mut bounds = vec![0.0f64; WINDOW];
        let mut seen = [0u64; WINDOW / 64];
        let mut starts = vec![0usize; q.len()];
        let mut rest_prefix = vec![0.0f64; q.len()];
        while let Some(base) = cursors[essential..].iter().filter_map(|c| c.postings.docs.get(c.pos).copied()).min() {
            let end = base.saturating_add(WINDOW as u32);
            // Each term's best within the window, from the blocks it spans.
            for c in cursors.iter_mut() {
                c.window_bound = if prunable { window_bound(c.postings, c.pos, base, end, |b| block_bound(c.weight_idf, b)) } else { f64::INFINITY };
            }
            let all: f64 = cursors.iter().map(|c| c.window_bound).sum();
            let non_essential: f64 = cursors[..essential].iter().map(|c| c.window_bound).sum();
            if all < threshold {
                for c in cursors[essential..].iter_mut() {
                    c.pos = c.postings.advance(c.pos, end);
                }
                continue;
            }
            // Essential lists: bounds of their postings in the window.
            for (e, c) in cursors[essential..].iter_mut().enumerate() {
                starts[e] = c.pos;
                let others = all - c.window_bound;
                let blocks = &c.postings.blocks;
                let docs = &c.postings.docs;
                while c.pos < docs.len() && docs[c.pos] < end {
                    let block_end = ((c.pos / BLOCK) + 1) * BLOCK;
                    let stop = block_end.min(docs.len());
                    if block_bound(c.weight_idf, &blocks[c.pos / BLOCK]) + others < threshold {
                        // Nothing here reaches the threshold, whatever the
                        // other terms add.
                        c.pos = if docs[stop - 1] < end { stop } else { c.pos + docs[c.pos..stop].partition_point(|&d| d < end) };
                        continue;
                    }
                    while c.pos < stop {
                        let d = docs[c.pos];
                        if d >= end {
                            break;
                        }
                        let i = (d - base) as usize;
                        bounds[i] += posting_bound(c.weight_idf, c.postings.tf_and_min_len(c.pos));
                        seen[i / 64] |= 1 << (i % 64);
                        c.pos += 1;
                    }
                }
            }
            // Candidates, in slot order: scored exactly when their bound
            // (plus the non-essential terms at their best) reaches the
            // threshold.
            let mut ptrs = starts.clone();
            for (word, slot) in seen.iter_mut().enumerate() {
                let mut bits = std::mem::take(slot);
                while bits != 0 {
                    let i = word * 64 + bits.trailing_zeros() as usize;
                    bits &= bits - 1;
                    let bound = std::mem::take(&mut bounds[i]);
                    if bound + non_essential < threshold {
                        continue;
                    }
                    let d = base + i as u32;
                    // The non-essential terms at their best in the blocks
                    // that would hold `d` (their summaries only).
                    if essential > 0 {
                        let mut sum = 0.0;
                        for (j, c) in cursors[..essential].iter_mut().enumerate() {
                            let blocks = &c.postings.blocks;
                            let at = gallop(blocks, c.shallow, |b| b.last_doc < d);
                            if at != c.shallow || c.shallow_bound.is_none() {
                                c.shallow = at;
                                c.shallow_bound = Some(blocks.get(at).map_or(0.0, |b| block_bound(c.weight_idf, b)));
                            }
                            sum += c.shallow_bound.unwrap_or(0.0);
                            rest_prefix[j] = sum;
                        }
                        if bound + sum < threshold {
                            continue;
                        }
                    }
                    // Non-essential terms looked up next, bounded by their
                    // length codes: the exact length (a likely cache miss)
                    // is read only for documents that may still make it.
                    let mut reach = bound;
                    let mut pruned = false;
                    for j in (0..essential).rev() {
                        if reach + rest_prefix[j] < threshold {
                            pruned = true;
                            break;
                        }
                        let c = &mut cursors[j];
                        // `d` can only be in block `shallow` (found above from
                        // the summaries): search its 32 slots, not the list.
                        let docs = &c.postings.docs;
                        let from = c.pos.max(c.shallow * BLOCK).min(docs.len());
                        let to = ((c.shallow + 1) * BLOCK).min(docs.len()).max(from);
                        c.pos = from + docs[from..to].partition_point(|&x| x < d);
                        if c.postings.docs.get(c.pos) == Some(&d) {
                            reach += posting_bound(c.weight_idf, c.postings.tf_and_min_len(c.pos));
                        }
                    }
                    if pruned || reach < threshold {
                        continue;
                    }
                    let len = self.lens[d as usize];
                    if len == DEAD {
                        continue;
                    }
                    parts.iter_mut().for_each(|p| *p = 0.0);
                    for (e, c) in cursors[essential..].iter().enumerate() {
                        let docs = &c.postings.docs;
                        let p = &mut ptrs[e];
                        while *p < c.pos && docs[*p] < d {
                            *p += 1;
                        }
                        if *p < c.pos && docs[*p] == d {
                            parts[c.qpos] = c.weight_idf * norm.tf_part(c.postings.tf(*p), len);
                        }
                    }
                    for c in &cursors[..essential] {
                        if c.postings.docs.get(c.pos) == Some(&d) {
                            parts[c.qpos] = c.weight_idf * norm.tf_part(c.postings.tf(c.pos), len);
                        }
                    }
                    // The reported score sums in query order, so it does not
                    // depend on which terms pruning visited first.
                    let score: f64 = parts.iter().sum();
                    if !top.admits((score, d), better) {
                        continue;
                    }
                    if let Some(keep) = keep {
                        if !keep(self.docs[d as usize].as_ref().expect("live slot")) {
                            continue;
                        }
                    }
                    top.push((score, d), better);
                    if let (true, Some((worst, _))) = (top.is_full() && prunable, top.worst()) {
                        threshold = worst;
                    }
                }
            }
            // The threshold only rises: terms that cannot reach it together
            // become non-essential for the next windows.
            while essential < cursors.len() && prefix[essential] < threshold {
                essential += 1;
            }
            if essential == cursors.len() {
                break;
            }
        }
        self.finish(top.into_sorted(better))
    }

    /// Scores every matching document (the reference for `top_k`).
    pub fn top_k_exhaustive(&self, tokens: &[String], k: usize, keep: Option<&dyn Fn(&Document) -> bool>) -> Vec<Hit<'_>> {
        let q = self.query_terms(tokens);
        let norm = self.norm(self.avg_doc_length());
        let mut scores: FxHashMap<u32, Vec<f64>> = FxHashMap::default();
        for &(t, w, qpos) in &q {
            let wi = w * self.idf(t);
            let postings = &self.terms[t as usize].postings;
            for (i, &doc) in postings.docs.iter().enumerate() {
                let len = self.lens[doc as usize];
                if len != DEAD {
                    scores.entry(doc).or_insert_with(|| vec![0.0; q.len()])[qpos] = wi * norm.tf_part(postings.tf(i), len);
                }
            }
        }
        let mut heap: BinaryHeap<Ranked> = BinaryHeap::new();
        for (d, parts) in scores {
            let doc = self.docs[d as usize].as_ref().unwrap();
            if keep.is_none_or(|f| f(doc)) {
                heap.push(Ranked { score: parts.iter().sum(), id: &doc.id, slot: d });
                if heap.len() > k {
                    heap.pop();
                }
            }
        }
        // into_sorted_vec is ascending by Ord, and Ord puts the best first.
        self.finish(heap.into_sorted_vec().into_iter().map(|r| (r.score, r.slot)).collect())
    }

    /// Hits from (score, slot) pairs, best first.
    fn finish(&self, best: Vec<(f64, u32)>) -> Vec<Hit<'_>> {
        best.into_iter().map(|(score, slot)| Hit { doc: self.docs[slot as usize].as_ref().unwrap(), slot, score }).collect()
    }

    /// First and last line (1-based, in the document's own lines) holding
    /// one of the query tokens, from positions recorded at indexing time.
    pub fn line_range(&self, slot: u32, tokens: &[String]) -> Option<(u32, u32)> {
        self.line_range_of_terms(slot, &self.term_ids(tokens))
    }

    /// The term ids of the tokens the index knows (for `line_range_of_terms`).
    pub fn term_ids(&self, tokens: &[String]) -> Vec<u32> {
        tokens.iter().filter_map(|t| self.dict.get(t.as_str()).copied()).collect()
    }

    /// `line_range` with the query's term ids looked up once for all hits.
    pub fn line_range_of_terms(&self, slot: u32, wanted: &[u32]) -> Option<(u32, u32)> {
        let doc = self.docs.get(slot as usize)?.as_ref()?;
        lines_of_terms(&doc.table, wanted)
    }
}

/// A document's postings to add: its slot, its length, its (term, tf).
type NewPostings = (u32, u32, Vec<(u32, u32)>);

/// The id of the document at `slot` ("" for a removed one).
fn id_at(docs: &[Option<Document>], slot: u32) -> &str {
    docs.get(slot as usize).and_then(|d| d.as_ref()).map_or("", |d| d.id.as_str())
}

/// Slots per window of `top_k`: its bound array and the lengths it reads
/// stay in the first-level cache. Small in tests, so that their corpora
/// span many windows.
const WINDOW: usize = if cfg!(test) { 128 } else { 2048 };

/// The largest block bound among the blocks of `postings` from position
/// `pos` on that hold slots in `[base, end)`; 0 if none does.
fn window_bound(postings: &Postings, pos: usize, base: u32, end: u32, bound: impl Fn(&BlockMax) -> f64) -> f64 {
    let blocks = &postings.blocks;
    let mut b = gallop(blocks, pos / BLOCK, |x| x.last_doc < base);
    let mut best = 0.0f64;
    while b < blocks.len() {
        best = best.max(bound(&blocks[b]));
        // The next block starts past this one's last slot.
        if u64::from(blocks[b].last_doc) + 1 >= u64::from(end) {
            break;
        }
        b += 1;
    }
    best
}

/// Heap entry ordered so that the best result compares smallest: higher
/// score first, then smaller id (top-k here and in the vector store).
#[derive(Debug)]
pub(crate) struct Ranked<'a> {
    pub score: f64,
    pub id: &'a str,
    pub slot: u32,
}

impl Ranked<'_> {
    pub fn better_than(&self, other: &Ranked) -> bool {
        self.cmp(other) == Ordering::Less
    }
}

impl PartialEq for Ranked<'_> {
    fn eq(&self, o: &Self) -> bool {
        self.cmp(o) == Ordering::Equal
    }
}
impl Eq for Ranked<'_> {}
impl PartialOrd for Ranked<'_> {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Ranked<'_> {
    fn cmp(&self, o: &Self) -> Ordering {
        o.score.total_cmp(&self.score).then_with(|| self.id.cmp(o.id))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tokenizer::{Tokenizer, TokenizerConfig};
    use proptest::prelude::*;

    fn doc(t: &Tokenizer, id: &str, text: &str) -> NewDocument {
        NewDocument { id: id.into(), content: text.into(), metadata: None, start_line_offset: None, analyzed: Analyzed::of_text(t, text) }
    }

    fn q(t: &Tokenizer, s: &str) -> Vec<String> {
        t.tokenize(s)
    }

    #[test]
    fn hand_computed_scores() {
        let t = Tokenizer::new(TokenizerConfig::mastra());
        let mut ix = Bm25Index::new(Bm25Params::default());
        ix.upsert(doc(&t, "a", "password reset guide"), 1);
        ix.upsert(doc(&t, "b", "reset your router"), 2);
        ix.upsert(doc(&t, "c", "cooking pasta at home tonight"), 3);
        // N=3, lengths 3,3,4 (your/router/at: "at" is a stopword -> c has 4 tokens)
        assert_eq!(ix.stats().tokens, 3 + 3 + 4);
        let avgdl = 10.0 / 3.0;
        let (k1, b) = (1.5, 0.75);
        let idf = |df: f64| ((3.0 - df + 0.5) / (df + 0.5) + 1.0_f64).ln();
        let part = |tf: f64, len: f64| tf * (k1 + 1.0) / (tf + k1 * (1.0 - b + b * len / avgdl));
        let hits = ix.top_k(&q(&t, "password reset"), 10, None);
        assert_eq!(hits.iter().map(|h| h.doc.id.as_str()).collect::<Vec<_>>(), ["a", "b"]);
        let expect_a = idf(1.0) * part(1.0, 3.0) + idf(2.0) * part(1.0, 3.0);
        let expect_b = idf(2.0) * part(1.0, 3.0);
        assert!((hits[0].score - expect_a).abs() < 1e-12);
        assert!((hits[1].score - expect_b).abs() < 1e-12);
        // Repeated query tokens count twice (Mastra).
        let twice = ix.top_k(&q(&t, "reset reset"), 10, None);
        assert!((twice[0].score - 2.0 * expect_b).abs() < 1e-12);
    }

    #[test]
    fn replace_and_remove_keep_exact_statistics() {
        let t = Tokenizer::default();
        let mut ix = Bm25Index::new(Bm25Params::default());
        ix.upsert(doc(&t, "a", "alpha beta"), 1);
        ix.upsert(doc(&t, "b", "beta gamma delta"), 2);
        ix.upsert(doc(&t, "a", "gamma"), 3);
        assert!(ix.remove("b", 4));
        assert!(!ix.remove("zzz", 5));
        let mut fresh = Bm25Index::new(Bm25Params::default());
        fresh.upsert(doc(&t, "a", "gamma"), 1);
        assert_eq!(ix.stats().documents, 1);
        assert_eq!(ix.stats().terms, 1);
        assert_eq!(ix.stats().tokens, 1);
        let s1 = ix.top_k(&q(&t, "gamma"), 5, None)[0].score;
        let s2 = fresh.top_k(&q(&t, "gamma"), 5, None)[0].score;
        assert_eq!(s1, s2);
        assert!(ix.top_k(&q(&t, "beta"), 5, None).is_empty());
    }

    #[test]
    fn sequence_numbers_order_writes() {
        let t = Tokenizer::default();
        let mut ix = Bm25Index::new(Bm25Params::default());
        assert!(ix.upsert(doc(&t, "a", "new text"), 5));
        assert!(!ix.upsert(doc(&t, "a", "old text"), 3));
        assert_eq!(ix.get("a").unwrap().content, "new text");
        assert!(ix.remove("a", 7));
        assert!(!ix.upsert(doc(&t, "a", "older"), 6));
        assert!(ix.get("a").is_none());
        ix.clear(10);
        assert!(!ix.upsert(doc(&t, "b", "before clear"), 9));
        assert!(ix.upsert(doc(&t, "b", "after clear"), 11));
    }

    #[test]
    fn bulk_add_equals_one_by_one() {
        let t = Tokenizer::default();
        let texts: Vec<String> = (0..3000).map(|i| format!("doc {i} alpha{} beta{}\nline two gamma{}", i % 13, i % 7, i % 3)).collect();
        let mut docs: Vec<NewDocument> = texts.iter().enumerate().map(|(i, s)| doc(&t, &format!("d{i}"), s)).collect();
        // A parallel analysis: several vocabularies, as rebuilds have.
        let analyzed = crate::analysis::analyze_all(&t, &texts, |s| s.as_str());
        for (d, a) in docs.iter_mut().zip(analyzed) {
            d.analyzed = a;
        }
        // Documents replaced within the same bulk write.
        docs.push(doc(&t, "d10", "replaced in the same write alpha3"));
        docs.push(doc(&t, "d2999", "the last one replaced too"));
        let mut one = Bm25Index::new(Bm25Params::default());
        one.upsert(doc(&t, "d5", "old version"), 1);
        let mut bulk = one.clone();
        for d in docs.clone() {
            one.upsert(d, 2);
        }
        let mut seen = 0;
        assert_eq!(bulk.add_bulk(docs, 2, &mut |n| seen = n), 3002);
        assert_eq!(seen, 3002);
        assert_eq!(one.stats().documents, bulk.stats().documents);
        assert_eq!(one.stats().terms, bulk.stats().terms);
        assert_eq!(one.stats().tokens, bulk.stats().tokens);
        assert_eq!(bulk.get("d10").unwrap().content, "replaced in the same write alpha3");
        for query in ["alpha3 beta4", "gamma1", "doc 17", "old version", "line", "replaced", "last"] {
            let a: Vec<_> = one.top_k(&q(&t, query), 10, None).iter().map(|h| (h.doc.id.clone(), h.score)).collect();
            let b: Vec<_> = bulk.top_k(&q(&t, query), 10, None).iter().map(|h| (h.doc.id.clone(), h.score)).collect();
            assert_eq!(a, b, "{query}");
            if let Some(h) = bulk.top_k(&q(&t, query), 1, None).first() {
                assert_eq!(bulk.line_range(h.slot, &q(&t, query)), one.line_range(one.top_k(&q(&t, query), 1, None)[0].slot, &q(&t, query)));
            }
        }
    }

    #[test]
    fn carry_over_keeps_newer_writes() {
        let t = Tokenizer::default();
        let mut old = Bm25Index::new(Bm25Params::default());
        old.upsert(doc(&t, "before", "old doc"), 1);
        old.upsert(doc(&t, "late", "late write alpha"), 6);
        old.upsert(doc(&t, "gone", "removed later"), 2);
        old.remove("gone", 7);
        let mut rebuilt = Bm25Index::new(Bm25Params::default());
        rebuilt.clear(5);
        rebuilt.upsert(doc(&t, "file", "from disk alpha"), 5);
        rebuilt.upsert(doc(&t, "gone", "on disk too"), 5);
        rebuilt.carry_over(&old, 5);
        let ids: Vec<_> = rebuilt.documents().map(|d| d.id.clone()).collect();
        assert_eq!(ids, ["file", "late"]);
        let hits = rebuilt.top_k(&q(&t, "alpha"), 5, None);
        assert_eq!(hits.len(), 2);
        let slot = hits.iter().find(|h| h.doc.id == "late").unwrap().slot;
        assert_eq!(rebuilt.line_range(slot, &q(&t, "alpha")), Some((1, 1)));
    }

    #[test]
    fn ties_broken_by_id_and_lines() {
        let t = Tokenizer::default();
        let mut ix = Bm25Index::new(Bm25Params::default());
        ix.upsert(doc(&t, "z", "same words"), 1);
        ix.upsert(doc(&t, "m", "same words"), 2);
        ix.upsert(doc(&t, "a", "same words"), 3);
        let ids: Vec<_> = ix.top_k(&q(&t, "words"), 2, None).iter().map(|h| h.doc.id.clone()).collect();
        assert_eq!(ids, ["a", "m"]);
        ix.upsert(doc(&t, "l", "intro\nalpha here\nnothing\nbeta there\nend alpha"), 4);
        let slot = ix.top_k(&q(&t, "beta"), 1, None)[0].slot;
        assert_eq!(ix.line_range(slot, &q(&t, "beta")), Some((4, 4)));
        assert_eq!(ix.line_range(slot, &q(&t, "alpha beta")), Some((2, 5)));
        assert_eq!(ix.line_range(slot, &q(&t, "missing")), None);
    }

    #[test]
    fn compaction_keeps_results() {
        let t = Tokenizer::default();
        let mut ix = Bm25Index::new(Bm25Params::default());
        for i in 0..3000u64 {
            ix.upsert(doc(&t, &format!("d{i}"), &format!("common w{} w{}", i % 17, i % 5)), i);
        }
        for i in 0..2500u64 {
            ix.remove(&format!("d{i}"), 10_000 + i);
        }
        let before: Vec<_> = ix.top_k(&q(&t, "common w3"), 20, None).iter().map(|h| (h.doc.id.clone(), h.score)).collect();
        ix.compact();
        let after: Vec<_> = ix.top_k(&q(&t, "common w3"), 20, None).iter().map(|h| (h.doc.id.clone(), h.score)).collect();
        assert_eq!(before, after);
        assert_eq!(ix.stats().documents, 500);
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(150))]
        /// MaxScore returns exactly what exhaustive scoring returns.
        #[test]
        fn pruning_equals_exhaustive(
            docs in prop::collection::vec(prop::collection::vec(0u8..12, 0..25), 1..60),
            removals in prop::collection::vec(0usize..60, 0..20),
            query in prop::collection::vec(0u8..14, 1..5),
            k in 1usize..12,
            b in 0.0f64..=1.0,
            k1 in prop_oneof![Just(0.0f64), Just(1.2f64), 0.01f64..3.0],
        ) {
            let t = Tokenizer::default();
            let mut ix = Bm25Index::new(Bm25Params { k1, b });
            let word = |w: u8| format!("w{w}");
            for (i, d) in docs.iter().enumerate() {
                let text: Vec<String> = d.iter().map(|&w| word(w)).collect();
                ix.upsert(doc(&t, &format!("d{:02}", i % 40), &text.join(" ")), i as u64);
            }
            for (j, r) in removals.iter().enumerate() {
                ix.remove(&format!("d{:02}", r), 1000 + j as u64);
            }
            let qt: Vec<String> = query.iter().map(|&w| word(w)).collect();
            let odd = |d: &Document| d.id.ends_with(['1', '3', '5', '7', '9']);
            for keep in [None, Some(&odd as &dyn Fn(&Document) -> bool)] {
                let fast: Vec<_> = ix.top_k(&qt, k, keep).iter().map(|h| (h.doc.id.clone(), h.score)).collect();
                let slow: Vec<_> = ix.top_k_exhaustive(&qt, k, keep).iter().map(|h| (h.doc.id.clone(), h.score)).collect();
                prop_assert_eq!(fast, slow);
            }
        }

        /// The same with posting lists long enough for block skipping.
        #[test]
        fn block_skipping_equals_exhaustive(
            seed in 0u64..u64::MAX,
            n in 300usize..1500,
            removals in 0usize..200,
            query in prop::collection::vec(0u8..10, 1..4),
            k in 1usize..8,
        ) {
            let t = Tokenizer::default();
            let mut ix = Bm25Index::new(Bm25Params::default());
            let mut x = seed | 1;
            let mut next = move || { x ^= x << 13; x ^= x >> 7; x ^= x << 17; x };
            for i in 0..n {
                // Skewed frequencies and lengths so that blocks differ.
                let len = 1 + next() % 40;
                let words: Vec<String> = (0..len).map(|_| { let r = next() % 100; format!("w{}", if r < 50 { 0 } else if r < 75 { 1 } else { r % 10 }) }).collect();
                ix.upsert(doc(&t, &format!("d{i:05}"), &words.join(" ")), i as u64);
            }
            for j in 0..removals {
                ix.remove(&format!("d{:05}", next() as usize % n), (n + j) as u64);
            }
            let qt: Vec<String> = query.iter().map(|w| format!("w{w}")).collect();
            let fast: Vec<_> = ix.top_k(&qt, k, None).iter().map(|h| (h.doc.id.clone(), h.score)).collect();
            let slow: Vec<_> = ix.top_k_exhaustive(&qt, k, None).iter().map(|h| (h.doc.id.clone(), h.score)).collect();
            prop_assert_eq!(fast, slow);
        }
    }
}
