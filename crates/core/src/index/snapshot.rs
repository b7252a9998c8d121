//! The index in a snapshot: terms with their postings, documents with
//! their text (each shared text once: the chunks of a file are ranges of
//! it), line tables, lengths and statistics. The texts' bytes are written
//! last of the whole snapshot (`Texts::write`), so that a snapshot store
//! keeps them as a part of their own. The terms and their dictionary are
//! read where they lie (`Terms`, `SlotIndex::frozen`); the ids' hash
//! table is rebuilt on load. Write order starts afresh: loaded
//! documents carry sequence number 0, so any write of the new process wins.

use super::names::Names;
use super::slot_index::{self, SlotIndex};
use super::terms::Terms;
use super::Bm25Params;
use super::{Bm25Index, Document, DEAD};
use crate::bytes::codec::{Decoder, Encoder, TextAt};
use crate::bytes::stored::StoredText;
use crate::bytes::SnapshotError;
use crate::text::{Body, SharedText};
use rayon::prelude::*;
use rustc_hash::FxHashMap;
use serde_json::{Map, Value};
use std::sync::Arc;

/// Documents per run of a snapshot's document records (decoded in parallel).
const DOC_RUN: usize = 4096;

fn corrupt(what: &str) -> SnapshotError {
    SnapshotError::Corrupt(what.to_string())
}

/// The texts of an encoded index, to be written after everything else
/// (the payload's tail: `Decoder::begin_texts`).
#[must_use = "the texts are written last: Texts::write"]
pub struct Texts<'a>(Vec<&'a Arc<Body>>);

impl Texts<'_> {
    /// Each text's bytes, back to back, outside the checksum (each has its own).
    pub fn write(self, e: &mut Encoder) {
        e.unhashed(|e| {
            for t in &self.0 {
                encode_text(e, t);
            }
        });
    }
}

impl Bm25Index {
    /// Everything but the texts' bytes, which the caller writes last.
    pub fn encode(&self, e: &mut Encoder) -> Texts<'_> {
        e.f64(self.params.k1);
        e.f64(self.params.b);
        e.f64(self.ref_avgdl);
        for n in [self.live_docs, self.live_terms, self.content_bytes] {
            e.len(n);
        }
        for n in [self.total_len, self.live_postings, self.dead_postings] {
            e.u64(n);
        }
        // The terms first, behind their byte length; aligned, so that
        // names, entries, postings and the dictionary are used where they
        // lie once mapped (`Terms`, `SlotIndex::frozen`).
        let names = &self.names;
        let dict = SlotIndex::frozen_slots(names.len(), |t| names.bytes_of(t as usize));
        let term_bytes = 8 + names.encoded_len() + self.terms.encoded_len() + 8 + 4 * dict.len();
        e.len(term_bytes);
        e.pad4();
        e.len(self.terms.len());
        names.encode(e);
        self.terms.encode(e, self.docs.len());
        e.u32s(&dict);
        let texts = self.encode_texts(e);
        e.u32s(&self.lens);
        texts
    }

    /// Each shared text's length and checksum (for a later lazy read),
    /// then the documents referring to them; the texts themselves, to write last.
    fn encode_texts(&self, e: &mut Encoder) -> Texts<'_> {
        let mut text_ids: FxHashMap<*const Body, u32> = FxHashMap::default();
        let mut texts: Vec<&Arc<Body>> = Vec::new();
        for d in self.docs.iter().flatten() {
            let (text, _, _) = d.content.parts();
            text_ids.entry(Arc::as_ptr(text)).or_insert_with(|| {
                texts.push(text);
                texts.len() as u32 - 1
            });
        }
        // Lengths and checksums here (under the file's checksum); the texts
        // at the end (outside it: each has its own, checked when it is
        // read), so that loading reads none of them.
        e.len(texts.len());
        for t in &texts {
            e.u64(t.hash());
            e.len(t.len());
        }
        // The documents in runs of `DOC_RUN`, each run's start given, so
        // that a load decodes them on every core.
        let mut records = Encoder::default();
        let mut starts = Vec::with_capacity(self.docs.len().div_ceil(DOC_RUN));
        for (i, slot) in self.docs.iter().enumerate() {
            if i % DOC_RUN == 0 {
                starts.push(records.buf.len());
            }
            let Some(d) = slot else {
                records.u8(0);
                continue;
            };
            records.u8(1);
            records.str(&d.id);
            let (text, start, end) = d.content.parts();
            records.u32(text_ids[&Arc::as_ptr(text)]);
            records.u32(start);
            records.u32(end);
            records.u8(u8::from(d.content.is_ascii()));
            let meta = d.metadata.as_ref().map(|m| serde_json::to_string(&**m).unwrap_or_default());
            records.opt_str(meta.as_deref());
            records.opt_u32(d.start_line_offset);
            records.u32(d.len);
            records.bytes(&d.table);
        }
        // (Runs start within 4 GB; past that, one run.)
        let (run, starts) = match starts.iter().map(|&s| u32::try_from(s)).collect::<Result<Vec<u32>, _>>() {
            Ok(starts) => (DOC_RUN, starts),
            Err(_) => (self.docs.len().max(1), vec![0]),
        };
        e.len(self.docs.len());
        e.len(run);
        e.u32s(&starts);
        e.len(records.buf.len());
        // In pieces, so that the sink takes them as they come (the records
        // are not held twice).
        for piece in records.buf.chunks(1 << 20) {
            e.raw(piece);
        }
        Texts(texts)
    }

    /// Where the postings lie in the payload `encode` wrote, read up to
    /// them as `decode` reads (a snapshot store keeps them apart).
    pub fn postings_span(d: &mut Decoder) -> Result<std::ops::Range<usize>, SnapshotError> {
        for what in ["k1", "b", "the average length"] {
            d.f64(what)?;
        }
        for _ in 0..6 {
            d.u64("statistics")?;
        }
        let n = d.len(1, "the terms")?;
        d.pad4("the terms")?;
        let mut term_bytes = d.sub(n, "the terms")?;
        term_bytes.len(20, "terms")?;
        Names::skip(&mut term_bytes)?;
        Terms::postings_span(&mut term_bytes)
    }

    pub fn decode(d: &mut Decoder) -> Result<Bm25Index, SnapshotError> {
        let params = Bm25Params { k1: d.f64("k1")?, b: d.f64("b")? };
        let mut ix = Bm25Index::new(params);
        ix.ref_avgdl = d.f64("the average length")?;
        // Counts, not lengths of what follows (the texts may be apart).
        let mut count = || usize::try_from(d.u64("statistics")?).map_err(|_| corrupt("statistics"));
        (ix.live_docs, ix.live_terms, ix.content_bytes) = (count()?, count()?, count()?);
        ix.total_len = d.u64("statistics")?;
        ix.live_postings = d.u64("statistics")?;
        ix.dead_postings = d.u64("statistics")?;
        // (Checked by `sub` against what is here: the postings may be apart.)
        let n = usize::try_from(d.u64("the terms")?).map_err(|_| corrupt("the terms"))?;
        d.pad4("the terms")?;
        let mut term_bytes = d.sub(n, "the terms")?;
        let n = term_bytes.len(20, "terms")?;
        let names = Names::decode(&mut term_bytes)?;
        if names.len() != n {
            return Err(corrupt("one name per term"));
        }
        // The documents first: their count bounds the postings' slots.
        let documents = read_documents(d)?;
        ix.lens = d.u32s("document lengths")?;
        ix.terms = Terms::decode(&mut term_bytes, n, documents.count)?;
        ix.dict =
            SlotIndex::frozen(term_bytes.section("the dictionary")?, n).ok_or_else(|| corrupt("the dictionary"))?;
        if !term_bytes.is_done() {
            return Err(corrupt("bytes after the terms"));
        }
        ix.names = names;
        if ix.lens.len() != documents.count {
            return Err(corrupt("one length per document"));
        }
        // The documents' runs on every core, then their ids' table and kinds.
        let hashes;
        (ix.docs, hashes) = documents.decode()?;
        for (slot, len) in ix.docs.iter().zip(&ix.lens) {
            if slot.as_ref().map_or(DEAD, |doc| doc.len) != *len {
                return Err(corrupt("document lengths"));
            }
        }
        // The ids' table and the files' chunks on one core, the documents' kinds on the other.
        let ((by_id, chunks), kinds) = rayon::join(
            || (ids_of(&ix.docs, &hashes), super::chunks::FileChunks::of(&ix.docs)),
            || super::kinds_of(&ix.docs, None, &Default::default()),
        );
        (ix.by_id, ix.kinds, ix.chunks) = (by_id?, kinds, chunks);
        Ok(ix)
    }
}

/// The table of `docs`' ids (no id twice).
/// `hashes`: each document's id's (`slot_index::hash`).
fn ids_of(docs: &[Option<Document>], hashes: &[u64]) -> Result<SlotIndex, SnapshotError> {
    let mut by_id = SlotIndex::default();
    by_id.reserve(docs.len(), |s| super::id_at(docs, s));
    for (slot, (d, &hash)) in docs.iter().zip(hashes).enumerate() {
        let Some(d) = d else { continue };
        if !by_id.insert_new(&d.id, hash, slot as u32, |s| super::id_at(docs, s)) {
            return Err(corrupt("a document id twice"));
        }
    }
    Ok(by_id)
}

/// A text's bytes. One still in the loaded snapshot is read from it
/// without being kept; if that file no longer holds it, the save fails
/// (the old snapshot stays) rather than write something else.
fn encode_text(e: &mut Encoder, text: &Body) {
    match text {
        Body::Owned(s) => e.raw(s.as_bytes()),
        Body::Arena(s) => e.raw(s.text().as_bytes()),
        Body::Stored(s) => match s.bytes() {
            Ok(bytes) => e.raw(&bytes),
            Err(err) => e.fail(err), // (this file is never renamed into place)
        },
    }
}

/// The documents' texts, and their records in runs, each a decoder of
/// its own (`ReadDocuments::decode`).
struct ReadDocuments<'a> {
    count: usize,
    run: usize,
    runs: Vec<Decoder<'a>>,
    texts: Vec<Arc<Body>>,
}

fn read_documents<'a>(d: &mut Decoder<'a>) -> Result<ReadDocuments<'a>, SnapshotError> {
    let n = d.len(16, "texts")?;
    let mut sizes = Vec::with_capacity(n);
    for _ in 0..n {
        let hash = d.u64("a text")?;
        let len = u32::try_from(d.u64("a text")?).map_err(|_| corrupt("a text length"))?;
        sizes.push((hash, len));
    }
    d.begin_texts(sizes.iter().map(|&(_, len)| u64::from(len)).sum())?;
    let mut texts = Vec::with_capacity(n);
    for (hash, len) in sizes {
        let body = match d.text(len as usize)? {
            // Left in the file: read (and checked) when first used.
            TextAt::Stored(file, at) => Body::Stored(StoredText::new(file, at, len, hash)),
            TextAt::Bytes(bytes) => {
                if xxhash_rust::xxh3::xxh3_64(bytes) != hash {
                    return Err(corrupt("a text's checksum"));
                }
                Body::Owned(std::str::from_utf8(bytes).map_err(|_| corrupt("a text is not UTF-8"))?.to_string())
            }
        };
        texts.push(Arc::new(body));
    }
    let count = d.len(1, "documents")?;
    let run = usize::try_from(d.u64("document runs")?).map_err(|_| corrupt("document runs"))?;
    let starts = d.u32s("document runs")?;
    let len = d.len(1, "documents")?;
    let mut records = d.sub(len, "documents")?;
    if run == 0 || starts.len() != count.div_ceil(run) || starts.first().is_some_and(|&s| s != 0) {
        return Err(corrupt("document runs"));
    }
    let mut runs = Vec::with_capacity(starts.len());
    for (i, &start) in starts.iter().enumerate() {
        let end = starts.get(i + 1).map_or(len, |&e| e as usize);
        let bytes = end.checked_sub(start as usize).ok_or_else(|| corrupt("document runs"))?;
        runs.push(records.sub(bytes, "documents")?);
    }
    Ok(ReadDocuments { count, run, runs, texts })
}

impl ReadDocuments<'_> {
    /// Every run decoded on the pool, each into its own slots of one
    /// vector (no run decoded apart and copied in after), with the hashes
    /// of the documents' ids (the ids' table is then filled without
    /// reading them again).
    fn decode(self) -> Result<(Vec<Option<Document>>, Vec<u64>), SnapshotError> {
        let ReadDocuments { count, run, runs, texts } = self;
        debug_assert_eq!(runs.len(), count.div_ceil(run), "checked by read_documents");
        let mut docs: Vec<Option<Document>> = Vec::with_capacity(count);
        docs.par_extend((0..count).into_par_iter().map(|_| None));
        let mut hashes = vec![0; count];
        docs.par_chunks_mut(run)
            .zip(hashes.par_chunks_mut(run))
            .zip(runs)
            .try_for_each(|((slots, hashes), mut d)| decode_run(&mut d, slots, hashes, &texts))?;
        Ok((docs, hashes))
    }
}

/// One document into each of `slots`, all the bytes of `d`, and the hash
/// of its id into `hashes`.
fn decode_run(
    d: &mut Decoder,
    slots: &mut [Option<Document>],
    hashes: &mut [u64],
    texts: &[Arc<Body>],
) -> Result<(), SnapshotError> {
    let mut last_metadata = None;
    for (slot, hash) in slots.iter_mut().zip(hashes) {
        if d.u8("a document")? != 0 {
            let doc = decode_document(d, texts, &mut last_metadata)?;
            *hash = slot_index::hash(&doc.id);
            *slot = Some(doc);
        }
    }
    if !d.is_done() {
        return Err(corrupt("bytes after a run of documents"));
    }
    Ok(())
}

/// The last metadata decoded, as saved and as shared.
type LastMetadata = Option<(String, Arc<Map<String, Value>>)>;

fn decode_document(d: &mut Decoder, texts: &[Arc<Body>], last: &mut LastMetadata) -> Result<Document, SnapshotError> {
    let id = d.string("a document id")?;
    let text = texts.get(d.u32("a text reference")? as usize).ok_or_else(|| corrupt("a text reference"))?;
    let (start, end) = (d.u32("a text range")?, d.u32("a text range")?);
    let ascii = d.u8("an ASCII flag")? == 1;
    let content =
        SharedText::from_parts(text.clone(), start, end, Some(ascii)).ok_or_else(|| corrupt("a text range"))?;
    let metadata = match d.opt_str("metadata")? {
        None => None,
        // The chunks of a file follow each other and share one map, as
        // when they were read.
        Some(json) if last.as_ref().is_some_and(|(saved, _)| saved == json) => last.as_ref().map(|l| l.1.clone()),
        Some(json) => {
            let map = Arc::new(serde_json::from_str::<Map<String, Value>>(json).map_err(|_| corrupt("metadata"))?);
            *last = Some((json.to_string(), map.clone()));
            Some(map)
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
