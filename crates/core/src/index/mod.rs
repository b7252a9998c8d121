//! The BM25 index: documents, postings and statistics, kept exact under
//! add, replace and remove at O(document) cost. Scoring and top-k are in
//! `crate::scoring`; this module owns what is stored.
//!
//! Documents live in slots that are never reused until compaction, so every
//! posting list stays sorted by slot. Removing a document only marks its slot
//! dead and fixes the statistics; its postings are skipped by queries and
//! dropped by the next compaction, which runs once dead postings outnumber
//! live ones (amortised O(document)).
//!
//! - `document`: what a document is, given and stored;
//! - `versioning`: write order (sequence numbers, tombstones, clear, carry-over);
//! - `vocab`: term ids, global to the index, from each analysis' own ids;
//! - `writer`: adding documents, one at a time or in parallel bulk builds;
//! - `compact`: dropping dead slots, memory accounting, statistics;
//! - `terms`: the terms by id, held or left in a loaded snapshot;
//! - `postings`, `line_table`, `slot_index`, `names`: the storage formats;
//! - `section`: arrays owned or viewed in shared bytes (a loaded snapshot's
//!   mapping, or `bulk`'s one allocation for a cold build's postings).

mod bulk;
mod chunks;
pub(crate) use chunks::chunk_number;
mod compact;
mod document;
pub mod gate;
pub mod id_base;
pub mod kind;
pub mod line_table;
mod names;
pub mod postings;
pub(crate) mod prefix;
mod repack;
pub use crate::bytes::section;
pub mod slot_index;
pub mod slots;
mod snapshot;
mod terms;
mod versioning;
mod vocab;
mod writer;

#[cfg(test)]
pub(crate) mod tests;

pub use crate::analysis::{Analyzed, TermStats, Vocab};
/// BM25's parameters, kept with the index they were built for (scoring
/// reads them from it).
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

impl Bm25Params {
    /// Whether scores can be bounded from block summaries (the bound of
    /// `Norm::bound` needs k1 > 0 and 0 <= b <= 1).
    pub fn prunable(&self) -> bool {
        self.k1 > 0.0 && (0.0..=1.0).contains(&self.b)
    }
}

pub use document::{chunk_id, chunk_parent, chunk_source, Document, Hit, NewDocument};
pub use vocab::Writer;
pub use writer::{prepare, PreparedDocument};

use postings::Postings;
use rustc_hash::FxHashMap;
use slot_index::SlotIndex;

/// The length stored for a removed document's slot.
pub(crate) const DEAD: u32 = u32::MAX;

/// One term's postings and the summaries that bound its scores.
#[derive(Debug, Clone, Default)]
pub(crate) struct Term {
    pub postings: Postings,
    pub df: u32,
    // Bounds for MaxScore (see postings::BlockMax); stay valid (if loose)
    // after removals.
    pub max_tf: u32,
    pub min_len_per_tf: f32,
    pub max_score: f32,
}

impl Term {
    fn new() -> Self {
        Term { min_len_per_tf: f32::MAX, ..Default::default() }
    }

    /// Takes a new posting into the statistics; true if it is the term's
    /// only live one.
    #[inline]
    fn note(&mut self, p: &postings::NewPosting) -> bool {
        self.df += 1;
        self.max_tf = self.max_tf.max(p.tf);
        self.min_len_per_tf = self.min_len_per_tf.min(p.ratio);
        self.max_score = self.max_score.max(p.score);
        self.df == 1
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct IndexStats {
    pub documents: usize,
    pub terms: usize,
    pub tokens: u64,
    pub avg_doc_length: f64,
    pub memory_bytes: usize,
}

#[derive(Debug, Clone, Default)]
pub struct Bm25Index {
    pub(crate) params: Bm25Params,
    /// Term -> term id, reading names from `names`.
    pub(crate) dict: SlotIndex,
    pub(crate) terms: terms::Terms,
    pub(crate) names: names::Names,
    pub(crate) docs: Vec<Option<Document>>,
    /// Length per slot, `DEAD` for a removed document (hot in scoring).
    pub(crate) lens: Vec<u32>,
    /// The file kind per slot (`kind::FileKind`), from the document's
    /// path: not saved, derived again when a snapshot loads.
    pub(crate) kinds: Vec<u8>,
    /// `.gitattributes` linguist rules over the kinds (`set_path_rules`).
    pub(crate) kind_rules: Option<std::sync::Arc<kind::KindRules>>,
    /// basePath as ids spelled from it start with it: kinds are read from
    /// basePath down (`set_path_rules`).
    pub(crate) id_base: id_base::IdBase,
    by_id: SlotIndex,
    pub(crate) live_docs: usize,
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
    pub(crate) ref_avgdl: f64,
    prefixes: prefix::PrefixCounts,
    /// The chunks of each chunked file (not saved, found again at a load).
    pub(crate) chunks: chunks::FileChunks,
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

    /// Whether the documents of a file indexed under `id` are here: the
    /// file itself, or its first chunk.
    pub fn holds_file(&self, id: &str) -> bool {
        self.contains(id) || self.chunks.has(id)
    }

    /// Each document of the file `id` that holds any of the terms
    /// `wanted`, with the lines they span in it: one indexed under `id`
    /// itself, then its chunks (`id#chunk-0`, `-1`, ... in order).
    pub fn file_docs_holding(&self, id: &str, wanted: &[u32]) -> Vec<(&Document, (u32, u32))> {
        let mut out = Vec::new();
        let own = self.get(id);
        let chunks = self.chunks.ids_of(id);
        for doc in own.into_iter().chain(chunks.iter().filter_map(|c| self.get(c))) {
            if let Some(range) = line_table::lines_of_terms(&doc.table, wanted) {
                out.push((doc, range));
            }
        }
        out
    }

    /// Documents in slot order (indexing order).
    pub fn documents(&self) -> impl Iterator<Item = &Document> {
        self.docs.iter().flatten()
    }

    /// The kind of each slot's document, from its path (after a load).
    pub(crate) fn derive_kinds(&mut self) {
        self.kinds = kinds_of(&self.docs, self.kind_rules.as_deref(), &self.id_base);
    }

    /// basePath (as ids spelled from it start with it) and its
    /// `.gitattributes` rules, which the kinds follow from now on; the
    /// kinds of the documents held are derived again when they changed.
    pub fn set_path_rules(&mut self, base: id_base::IdBase, rules: Option<kind::KindRules>) {
        self.use_path_rules(base, rules.map(std::sync::Arc::new));
    }

    /// The path rules of `other` (the index this one replaces: a rebuilt
    /// or loaded one is made without them), its kinds derived again.
    pub fn follow_path_rules_of(&mut self, other: &Bm25Index) {
        self.use_path_rules(other.id_base.clone(), other.kind_rules.clone());
    }

    fn use_path_rules(&mut self, base: id_base::IdBase, rules: Option<std::sync::Arc<kind::KindRules>>) {
        let same_rules = self.kind_rules.as_ref().map(|r| &r.source) == rules.as_ref().map(|r| &r.source);
        if same_rules && self.id_base == base {
            return;
        }
        self.kind_rules = rules;
        self.id_base = base;
        self.derive_kinds();
    }

    /// The kind of the file `path` (a document id) under the path rules.
    pub(crate) fn kind_of_file(&self, path: &str) -> kind::FileKind {
        kind::kind_with(self.kind_rules.as_deref(), &self.id_base.relative(path))
    }

    /// The live document in `slot`.
    pub(crate) fn doc_at(&self, slot: u32) -> &Document {
        self.docs[slot as usize].as_ref().expect("live slot")
    }

    pub fn avg_doc_length(&self) -> f64 {
        if self.live_docs == 0 {
            0.0
        } else {
            self.total_len as f64 / self.live_docs as f64
        }
    }

    /// First and last line (1-based, in the document's own lines) holding
    /// one of the query tokens, from positions recorded at indexing time.
    pub fn line_range(&self, slot: u32, tokens: &[String]) -> Option<(u32, u32)> {
        self.line_range_of_terms(slot, &self.distinct_term_ids(tokens))
    }

    /// The term ids of the tokens the index knows (for `line_range_of_terms`).
    pub fn term_ids(&self, tokens: &[String]) -> Vec<u32> {
        tokens.iter().filter_map(|t| self.term_id(t)).collect()
    }

    /// `term_ids`, each once (sorted): what a line table is asked for. A
    /// query repeating a word 20,000 times read each hit's table that often.
    pub fn distinct_term_ids(&self, tokens: &[String]) -> Vec<u32> {
        let mut ids = self.term_ids(tokens);
        ids.sort_unstable();
        ids.dedup();
        ids
    }

    /// How many postings a search of `tokens` reads (each term's document
    /// count, a repeated token once per time): what the search costs.
    pub fn postings_of(&self, tokens: &[String]) -> u64 {
        self.term_ids(tokens).iter().map(|&t| u64::from(self.terms.df(t))).sum()
    }

    /// `line_range` with the query's term ids looked up once for all hits.
    pub fn line_range_of_terms(&self, slot: u32, wanted: &[u32]) -> Option<(u32, u32)> {
        let doc = self.docs.get(slot as usize)?.as_ref()?;
        line_table::lines_of_terms(&doc.table, wanted)
    }

    /// Where the postings of `tokens`' terms lie in a snapshot store's part
    /// that is not here yet (a search reads them first); empty when they
    /// are here (`Terms::spans_to_read`).
    pub fn postings_to_read(&self, tokens: &[String]) -> Vec<(u64, usize)> {
        self.terms.spans_to_read(&self.term_ids(tokens))
    }

    /// Whether some postings are still in a snapshot store's part on its way.
    pub fn postings_pending(&self) -> bool {
        self.terms.pending()
    }

    /// Why a term of the loaded snapshot could not be read, once a search
    /// found one that cannot (`terms::Terms`).
    pub fn damaged(&self) -> Option<&str> {
        self.terms.damaged()
    }

    /// The id of a term the index has (live or not yet compacted away).
    pub(crate) fn term_id(&self, name: &str) -> Option<u32> {
        self.dict.get(name, |t| self.names.bytes_of(t as usize))
    }

    fn slot_of(&self, id: &str) -> Option<u32> {
        self.by_id.get(id, |s| id_at(&self.docs, s))
    }
}

/// The file kind of each slot's document (0 for a removed one).
fn kinds_of(docs: &[Option<Document>], rules: Option<&kind::KindRules>, base: &id_base::IdBase) -> Vec<u8> {
    // The chunks of a file follow each other: its kind is found once.
    let mut last: Option<(&str, u8)> = None;
    docs.iter()
        .map(|d| {
            d.as_ref().map_or(0, |d| {
                let file = d.source_file().unwrap_or(&d.id);
                match last {
                    Some((f, k)) if f == file => k,
                    _ => last.insert((file, kind::kind_with(rules, &base.relative(file)) as u8)).1,
                }
            })
        })
        .collect()
}

/// The id of the document at `slot` ("" for a removed one).
pub(crate) fn id_at(docs: &[Option<Document>], slot: u32) -> &str {
    docs.get(slot as usize).and_then(|d| d.as_ref()).map_or("", |d| d.id.as_str())
}
