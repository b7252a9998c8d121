//! The index in a snapshot: terms with their postings, documents with
//! their text (each shared text once: the chunks of a file are ranges of
//! it), line tables, lengths and statistics. The two hash tables (ids and
//! terms) are rebuilt on load. Write order starts afresh: loaded
//! documents carry sequence number 0, so any write of the new process wins.

use super::postings::Postings;
use super::slot_index::SlotIndex;
use super::{Bm25Index, Document, Term, DEAD};
use crate::persist::codec::{Decoder, Encoder};
use crate::persist::stored::StoredText;
use crate::persist::SnapshotError;
use crate::scoring::bm25::Bm25Params;
use crate::text::{Body, SharedText};
use rustc_hash::FxHashMap;
use serde_json::{Map, Value};
use std::sync::Arc;

fn corrupt(what: &str) -> SnapshotError {
    SnapshotError::Corrupt(what.to_string())
}

impl Bm25Index {
    pub fn encode(&self, e: &mut Encoder) {
        e.f64(self.params.k1);
        e.f64(self.params.b);
        e.f64(self.ref_avgdl);
        for n in [self.live_docs, self.live_terms, self.content_bytes] {
            e.len(n);
        }
        for n in [self.total_len, self.live_postings, self.dead_postings] {
            e.u64(n);
        }
        // The terms first, behind their byte length, so that a loader
        // decodes them and the documents at the same time; aligned, so that
        // their postings are used where they lie once mapped.
        let term_bytes: usize = 8 + self
            .terms
            .iter()
            .zip(&self.names)
            .map(|(t, n)| 8 + n.len().next_multiple_of(4) + 16 + t.postings.encoded_len())
            .sum::<usize>();
        e.len(term_bytes);
        e.pad4();
        e.len(self.terms.len());
        for (t, name) in self.terms.iter().zip(&self.names) {
            e.str(name);
            e.pad4();
            e.u32(t.df);
            e.u32(t.max_tf);
            e.f32(t.min_len_per_tf);
            e.f32(t.max_score);
            t.postings.encode(e);
        }
        self.encode_texts(e);
        e.u32s(&self.lens);
    }

    /// Each shared text once (with its checksum, for a later lazy read),
    /// then the documents referring to them.
    fn encode_texts(&self, e: &mut Encoder) {
        let mut text_ids: FxHashMap<*const Body, u32> = FxHashMap::default();
        let mut texts: Vec<&Arc<Body>> = Vec::new();
        for d in self.docs.iter().flatten() {
            let (text, _, _) = d.content.parts();
            text_ids.entry(Arc::as_ptr(text)).or_insert_with(|| {
                texts.push(text);
                texts.len() as u32 - 1
            });
        }
        e.len(texts.len());
        for t in &texts {
            encode_text(e, t);
        }
        e.len(self.docs.len());
        for slot in &self.docs {
            let Some(d) = slot else {
                e.u8(0);
                continue;
            };
            e.u8(1);
            e.str(&d.id);
            let (text, start, end) = d.content.parts();
            e.u32(text_ids[&Arc::as_ptr(text)]);
            e.u32(start);
            e.u32(end);
            e.u8(u8::from(d.content.is_ascii()));
            let meta = d.metadata.as_ref().map(|m| serde_json::to_string(&**m).unwrap_or_default());
            e.opt_str(meta.as_deref());
            e.opt_u32(d.start_line_offset);
            e.u32(d.len);
            e.bytes(&d.table);
        }
    }

    pub fn decode(d: &mut Decoder) -> Result<Bm25Index, SnapshotError> {
        let params = Bm25Params { k1: d.f64("k1")?, b: d.f64("b")? };
        let mut ix = Bm25Index::new(params);
        ix.ref_avgdl = d.f64("the average length")?;
        ix.live_docs = d.len(0, "statistics")?;
        ix.live_terms = d.len(0, "statistics")?;
        ix.content_bytes = d.len(0, "statistics")?;
        ix.total_len = d.u64("statistics")?;
        ix.live_postings = d.u64("statistics")?;
        ix.dead_postings = d.u64("statistics")?;
        let n = d.len(1, "the terms")?;
        d.pad4("the terms")?;
        let mut term_bytes = d.sub(n, "the terms")?;
        let (terms, docs) = rayon::join(
            || decode_terms(&mut term_bytes),
            || -> Result<_, SnapshotError> { Ok((decode_documents(d)?, d.u32s("document lengths")?)) },
        );
        let (terms, names, dict) = terms?;
        (ix.docs, ix.lens) = docs?;
        if terms.iter().any(|t| t.postings.docs.last().is_some_and(|&s| s as usize >= ix.docs.len())) {
            return Err(corrupt("postings: slot out of range"));
        }
        (ix.terms, ix.names, ix.dict) = (terms, names, dict);
        if ix.lens.len() != ix.docs.len() {
            return Err(corrupt("one length per document"));
        }
        for (slot, len) in ix.docs.iter().zip(&ix.lens) {
            if slot.as_ref().map_or(DEAD, |doc| doc.len) != *len {
                return Err(corrupt("document lengths"));
            }
        }
        ix.index_ids()?;
        Ok(ix)
    }

    fn index_ids(&mut self) -> Result<(), SnapshotError> {
        let docs = &self.docs;
        self.by_id.reserve(docs.len(), |s| super::id_at(docs, s));
        for (slot, d) in docs.iter().enumerate() {
            let Some(d) = d else { continue };
            if self.by_id.get(&d.id, |s| super::id_at(docs, s)).is_some() {
                return Err(corrupt("a document id twice"));
            }
            self.by_id.insert(&d.id, slot as u32, |s| super::id_at(docs, s));
        }
        Ok(())
    }
}

/// A text's bytes and checksum. One still in the loaded snapshot is read
/// from it without being kept; if that file no longer holds it, the save
/// fails (the old snapshot stays) rather than write something else.
fn encode_text(e: &mut Encoder, text: &Body) {
    match text {
        Body::Owned(s) => {
            e.u64(xxhash_rust::xxh3::xxh3_64(s.as_bytes()));
            e.str(s);
        }
        // Its checksum is known (and was checked when the bytes were read).
        Body::Stored(s) => match s.bytes() {
            Ok(bytes) => {
                e.u64(s.hash());
                e.bytes(&bytes);
            }
            Err(err) => e.fail(err), // (this file is never renamed into place)
        },
    }
}

/// Terms with their postings, their names, and the dictionary over the names.
type TermTable = (Vec<Term>, Vec<Box<str>>, SlotIndex);

fn decode_terms(d: &mut Decoder) -> Result<TermTable, SnapshotError> {
    let n = d.len(20, "terms")?;
    let (mut terms, mut names) = (Vec::with_capacity(n), Vec::<Box<str>>::with_capacity(n));
    let mut dict = SlotIndex::default();
    dict.reserve(n, |s| &names[s as usize]);
    for t in 0..n as u32 {
        names.push(d.str("a term")?.into());
        d.pad4("a term")?;
        terms.push(Term {
            df: d.u32("a term")?,
            max_tf: d.u32("a term")?,
            min_len_per_tf: d.f32("a term")?,
            max_score: d.f32("a term")?,
            // Slots are checked against the documents once they are decoded too.
            postings: Postings::decode(d, usize::MAX)?,
        });
        if !dict.insert_new(&names[t as usize], t, |s| &names[s as usize]) {
            return Err(corrupt("a term twice"));
        }
    }
    if !d.is_done() {
        return Err(corrupt("bytes after the terms"));
    }
    Ok((terms, names, dict))
}

fn decode_documents(d: &mut Decoder) -> Result<Vec<Option<Document>>, SnapshotError> {
    let n = d.len(16, "texts")?;
    let mut texts = Vec::with_capacity(n);
    let texts_start = d.position();
    for _ in 0..n {
        let hash = d.u64("a text")?;
        let len = d.len(0, "a text")?;
        let body = match d.file_position() {
            // Left in the file: read (and checked) when first used.
            Some((file, at)) if len > 0 => {
                d.take_bytes(len)?;
                let len = u32::try_from(len).map_err(|_| corrupt("a text length"))?;
                Body::Stored(StoredText::new(file, at, len, hash))
            }
            _ => Body::Owned(
                std::str::from_utf8(d.take_bytes(len)?).map_err(|_| corrupt("a text is not UTF-8"))?.to_string(),
            ),
        };
        texts.push(Arc::new(body));
    }
    d.done_with_since(texts_start);
    let n = d.len(1, "documents")?;
    let mut docs = Vec::with_capacity(n);
    for _ in 0..n {
        docs.push(match d.u8("a document")? {
            0 => None,
            _ => Some(decode_document(d, &texts)?),
        });
    }
    Ok(docs)
}

fn decode_document(d: &mut Decoder, texts: &[Arc<Body>]) -> Result<Document, SnapshotError> {
    let id = d.string("a document id")?;
    let text = texts.get(d.u32("a text reference")? as usize).ok_or_else(|| corrupt("a text reference"))?;
    let (start, end) = (d.u32("a text range")?, d.u32("a text range")?);
    let ascii = d.u8("an ASCII flag")? == 1;
    let content =
        SharedText::from_parts(text.clone(), start, end, Some(ascii)).ok_or_else(|| corrupt("a text range"))?;
    let metadata = match d.opt_string("metadata")? {
        None => None,
        Some(json) => {
            Some(Arc::new(serde_json::from_str::<Map<String, Value>>(&json).map_err(|_| corrupt("metadata"))?))
        }
    };
    Ok(Document {
        id,
        content,
        metadata,
        start_line_offset: d.opt_u32("a start line")?,
        len: d.u32("a length")?,
        seq: 0,
        table: d.section("a line table")?,
    })
}
