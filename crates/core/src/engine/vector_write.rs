//! The one way vectors are written, for `index()`, `indexMany()`,
//! rebuilds, incremental updates and the recovery after a crash: the texts
//! of *sources* (a file's chunks, or one document) embedded in the
//! embedder's groups, then written to the store in units of at most
//! `MAX_UPSERT` that keep a source whole where it fits. A source is written
//! whole or fails with one reason; the caller decides what a failure does
//! (a rebuild keeps the file for keyword search, `indexMany` keeps the
//! document's previous version: `vectors::plan`). The documents stay the
//! caller's: each step borrows them, so that a caller can move a unit's
//! documents into the index as soon as the store has them.

use super::embedder::Embedder;
use super::error::{Error, Result};
use super::{Engine, VectorSide};
use crate::index::NewDocument;
use crate::vectors::plan::{self, MAX_UPSERT};
use crate::vectors::store::MAX_DIMENSION;
use crate::vectors::{embedding, metadata};
use futures::stream::{self, StreamExt};
use rustc_hash::FxHashMap;
use std::sync::atomic::Ordering;

/// What happens to the sources of a group the embedder failed.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum OnGroupFailure {
    /// Each is embedded again on its own, so that only the sources at
    /// fault fail (rebuilds: one bad file must not fail its neighbours).
    /// Reports the groups as the `embed` phase's progress.
    Retry,
    /// As `Retry`, without progress: texts embedded again after the phases
    /// of a start (a phase's count must not begin again after `index`).
    RetryQuietly,
    /// Each fails with the group's error (`indexMany`, SPEC 8).
    Fail,
}

impl OnGroupFailure {
    fn retries(self) -> bool {
        matches!(self, OnGroupFailure::Retry | OnGroupFailure::RetryQuietly)
    }
}

/// The documents of each source, borrowed for a step.
pub(super) type Sources<'a> = [Vec<&'a NewDocument>];

/// Sources retried first to tell an embedder that is down from a text it
/// refuses (`VectorSide::retry`): two bad texts opening two batches do not
/// make a probe of four fail whole.
const PROBE: usize = 4;

/// `retries` taken from their groups in turn (the first of each group, then
/// the second of each, ...), so that a probe spans the failed groups.
fn in_turn(retries: Vec<(usize, GroupFailure)>) -> Vec<(usize, GroupFailure)> {
    // A group's sources follow each other (a group is a run of texts).
    let mut groups: Vec<(usize, std::collections::VecDeque<(usize, GroupFailure)>)> = Vec::new();
    for r in retries {
        match groups.last_mut() {
            Some((g, members)) if *g == r.1.group => members.push_back(r),
            _ => groups.push((r.1.group, std::collections::VecDeque::from([r]))),
        }
    }
    let mut out = Vec::new();
    while groups.iter().any(|(_, m)| !m.is_empty()) {
        out.extend(groups.iter_mut().filter_map(|(_, m)| m.pop_front()));
    }
    out
}

/// Why a source's texts were not embedded: its first failed group's
/// reason, that group's error (for the first source it fails), and which
/// failed group it was.
struct GroupFailure {
    reason: String,
    error: Option<Error>,
    group: usize,
}

/// Sources embedded, ready to be written (`VectorSide::write`).
pub(super) struct Embedded {
    /// By text: the sources' documents in order, flattened.
    vectors: Vec<Option<Vec<f32>>>,
    /// Where each source's texts start among `vectors`, and how many it has.
    starts: Vec<usize>,
    lens: Vec<usize>,
    /// Sources that failed, with why.
    pub failed: FxHashMap<usize, String>,
    /// The first failure, as it was (the host's own error), to reject with.
    pub first_error: Option<Error>,
}

/// A store write: `(source, document of the source)`.
pub(super) type Unit = Vec<(usize, usize)>;

impl Embedded {
    /// Texts sent to the embedder.
    pub fn texts(&self) -> usize {
        self.vectors.len()
    }

    fn range(&self, source: usize) -> std::ops::Range<usize> {
        self.starts[source]..self.starts[source] + self.lens[source]
    }

    fn fail(&mut self, source: usize, e: Error) {
        self.failed.entry(source).or_insert_with(|| e.reason.clone());
        self.first_error.get_or_insert(e);
    }

    /// The store writes of the sources that did not fail: units of at most
    /// `MAX_UPSERT` documents, whole sources where they fit.
    pub fn units(&self) -> Vec<Unit> {
        let counts: Vec<(usize, usize)> = (0..self.lens.len())
            .filter(|s| !self.failed.contains_key(s) && self.lens[*s] > 0)
            .map(|s| (s, self.lens[s]))
            .collect();
        plan::write_units(&counts, MAX_UPSERT)
    }
}

impl VectorSide {
    /// Embeds the documents of every source; `label` names a single text's
    /// call in its errors (`index()`), else each group is named by its place.
    pub(super) async fn embed(
        &self,
        engine: &Engine,
        sources: &Sources<'_>,
        on_failure: OnGroupFailure,
        label: Option<&str>,
    ) -> Embedded {
        let mut out = Embedded {
            vectors: Vec::new(),
            starts: Vec::with_capacity(sources.len()),
            lens: sources.iter().map(Vec::len).collect(),
            failed: FxHashMap::default(),
            first_error: None,
        };
        let mut texts = Vec::new();
        for docs in sources {
            out.starts.push(texts.len());
            texts.extend(docs.iter().map(|d| d.content.to_string()));
        }
        if texts.is_empty() {
            return out;
        }
        if let Some(why) = self.store.refused() {
            // Nothing embedded that could not be written.
            for (source, docs) in sources.iter().enumerate() {
                if !docs.is_empty() {
                    out.failed.insert(source, why.clone());
                }
            }
            out.first_error = Some(Error::from_reason(why));
            return out;
        }
        let total = texts.len();
        let groups = match label {
            Some(label) if total == 1 => vec![self.embedder.embed_group(texts, label).await],
            _ => self.embedder.embed_groups(texts).await,
        };
        if on_failure == OnGroupFailure::Retry {
            let size = self.embedder.group_size();
            for g in 1..=groups.len() {
                engine.emit("embed", (g * size).min(total), total, None);
            }
        }
        let failed_groups = self.spread(&mut out, groups);
        let retries = self.settle(&mut out, failed_groups, on_failure);
        self.retry(&mut out, sources, retries).await;
        out
    }

    /// Records each source's outcome: checked where its groups answered,
    /// failed where one failed; answers the failures worth sending again.
    /// A source's texts sent again on their own is a new question only
    /// where its groups held other texts too, and only of an embedder that
    /// answers.
    fn settle(
        &self,
        out: &mut Embedded,
        failed_groups: Vec<Option<GroupFailure>>,
        on_failure: OnGroupFailure,
    ) -> Vec<(usize, GroupFailure)> {
        let worth_retrying =
            |reason: &str| on_failure.retries() && self.embedder.group_size() > 1 && !Embedder::timed_out(reason);
        let mut retries = Vec::new();
        for (source, group) in failed_groups.into_iter().enumerate() {
            match group {
                None => self.check_source(out, source),
                Some(failure) if worth_retrying(&failure.reason) => retries.push((source, failure)),
                Some(GroupFailure { reason, error, .. }) => {
                    out.failed.insert(source, reason);
                    if let Some(e) = error {
                        out.first_error.get_or_insert(e);
                    }
                }
            }
        }
        retries
    }

    /// Puts each group's vectors in place; per source, its first failed
    /// group's reason, with the group's error for the first source it fails.
    fn spread(&self, out: &mut Embedded, groups: Vec<Result<Vec<Vec<f32>>>>) -> Vec<Option<GroupFailure>> {
        let total = out.starts.last().map_or(0, |&s| s + out.lens.last().copied().unwrap_or(0));
        let mut errors: Vec<(String, Option<Error>)> = Vec::new();
        let per_group = groups.into_iter().map(|g| {
            g.map_err(|e| {
                errors.push((e.reason.clone(), Some(e)));
                errors.len() - 1
            })
        });
        let per_text = plan::spread(per_group.collect::<Vec<_>>(), self.embedder.group_size(), total);
        let first_failed: Vec<Option<usize>> = (0..out.lens.len())
            .map(|s| per_text[out.range(s)].iter().find_map(|r| r.as_ref().err().copied()))
            .collect();
        out.vectors = per_text.into_iter().map(std::result::Result::ok).collect();
        first_failed
            .into_iter()
            .map(|g| g.map(|g| GroupFailure { reason: errors[g].0.clone(), error: errors[g].1.take(), group: g }))
            .collect()
    }

    /// A source whose texts went to several groups: one dimension across
    /// them, or it fails (a store holds vectors of one dimension).
    /// (Each group's numbers were checked as it came back.)
    fn check_source(&self, out: &mut Embedded, source: usize) {
        let dims: Vec<usize> = out.vectors[out.range(source)].iter().flatten().map(Vec::len).collect();
        let Some(&dim) = dims.first() else { return };
        if let Some(at) = dims.iter().position(|&d| d != dim) {
            let label = "all texts".into();
            let e = embedding::EmbeddingError::MixedDimensions { at: at + 1, got: dims[at], dim, label };
            out.fail(source, Error::embedder(e.to_string()));
        }
    }

    /// Embeds each source of a failed group again, on its own, as many at
    /// once as the embedder allows. First a probe: `PROBE` sources at least
    /// (more with more calls at once), taken from the failed groups in turn.
    /// When none of them answered, the embedder is taken to be down (one bad
    /// text fails one source, not several): the rest fail with their group's
    /// reason, without a call (one call per file, each failing, took minutes).
    async fn retry(&self, out: &mut Embedded, sources: &Sources<'_>, retries: Vec<(usize, GroupFailure)>) {
        let mut queue = in_turn(retries);
        let rest = queue.split_off(queue.len().min(self.embedder.concurrency().max(PROBE)));
        let answered = self.retry_each(out, sources, queue.iter().map(|(s, _)| *s).collect()).await;
        if answered {
            self.retry_each(out, sources, rest.iter().map(|(s, _)| *s).collect()).await;
            return;
        }
        for (source, failure) in rest {
            out.fail(source, Error::from_reason(failure.reason));
        }
    }

    /// `retry`'s calls, `concurrency` at a time; whether any answered.
    async fn retry_each(&self, out: &mut Embedded, sources: &Sources<'_>, retries: Vec<usize>) -> bool {
        let results: Vec<(usize, Result<Vec<Vec<f32>>>)> = stream::iter(retries)
            .map(|source| {
                let texts: Vec<String> = sources[source].iter().map(|d| d.content.to_string()).collect();
                async move { (source, self.embedder.embed_all(texts).await) }
            })
            .buffer_unordered(self.embedder.concurrency())
            .collect()
            .await;
        let mut answered = false;
        for (source, result) in results {
            match result {
                Ok(vs) => {
                    answered = true;
                    let range = out.range(source);
                    for (slot, v) in out.vectors[range].iter_mut().zip(vs) {
                        *slot = Some(v);
                    }
                }
                Err(e) => out.fail(source, e),
            }
        }
        answered
    }

    /// Writes one unit of `e.units()` (`docs`: its documents, in order); a
    /// store that refuses it fails its sources, and the error is handed
    /// back (to reject with, where asked).
    pub(super) async fn write_unit(&self, e: &mut Embedded, docs: &[&NewDocument], unit: &Unit) -> Option<Error> {
        let vectors: Vec<Vec<f32>> =
            unit.iter().map(|&(s, j)| e.vectors[e.starts[s] + j].clone().expect("embedded")).collect();
        let err = self.upsert(docs, vectors).await.err()?;
        for &(s, _) in unit {
            e.failed.entry(s).or_insert_with(|| err.reason.clone());
        }
        Some(err)
    }

    /// Writes every unit (`write_unit`), the first store error kept. A unit
    /// of several files the store refuses is written again file by file,
    /// so that a document it cannot take (a NUL byte PostgreSQL refuses)
    /// fails its own file, not the 99 beside it. First a probe of `PROBE`
    /// files: when none of them is written the store is taken to be down,
    /// and neither the rest nor later units are written again.
    pub(super) async fn write(&self, e: &mut Embedded, sources: &Sources<'_>) {
        let mut down = false;
        for unit in e.units() {
            let docs: Vec<&NewDocument> = unit.iter().map(|&(s, j)| sources[s][j]).collect();
            // A file spanning units may have failed in an earlier one: it stays failed.
            let failed_before: Vec<usize> = unit.iter().map(|&(s, _)| s).filter(|s| e.failed.contains_key(s)).collect();
            let Some(err) = self.write_unit(e, &docs, &unit).await else { continue };
            if !down {
                down = !self.write_each(e, sources, &unit, &failed_before).await;
            }
            e.first_error.get_or_insert(err);
        }
    }

    /// `unit`'s files written one at a time (`write`), but those that had
    /// failed before it; whether the store took any of them (or was not
    /// asked: a unit of one file).
    async fn write_each(&self, e: &mut Embedded, sources: &Sources<'_>, unit: &Unit, failed_before: &[usize]) -> bool {
        let mut files: Vec<usize> = unit.iter().map(|&(s, _)| s).collect();
        files.dedup();
        files.retain(|f| !failed_before.contains(f));
        if files.len() < 2 {
            return true;
        }
        let (mut written, mut refused) = (false, 0);
        for file in files {
            if !written && refused >= PROBE {
                break; // (they stay failed with the unit's error)
            }
            let part: Unit = unit.iter().copied().filter(|&(s, _)| s == file).collect();
            let docs: Vec<&NewDocument> = part.iter().map(|&(s, j)| sources[s][j]).collect();
            e.failed.remove(&file); // (the unit's error; its own, if refused again)
            match self.write_unit(e, &docs, &part).await {
                None => written = true,
                Some(_) => refused += 1,
            }
        }
        written
    }
}

impl VectorSide {
    /// Writes one unit (at most `MAX_UPSERT` documents) to the store.
    pub(super) async fn upsert(&self, docs: &[&NewDocument], vectors: Vec<Vec<f32>>) -> Result<()> {
        let dim = vectors.first().map_or(0, Vec::len);
        let created = self.upserted.load(Ordering::SeqCst);
        // The index this workspace wrote to may have been removed since
        // (`deleteIndex()` by another user of a shared store, a dropped
        // table): it is made again, as before a first write, rather than
        // failing every write until a restart. The embedded store's check
        // costs a lookup, so it is made each time; a JavaScript store's
        // after an upsert fails, which is then tried once more.
        if self.store.is_local() && dim > MAX_DIMENSION {
            return Err(Error::embedder(format!(
                "the embedded vector store takes vectors of at most {MAX_DIMENSION} dimensions; the embedder answered {dim}"
            )));
        }
        if (!created || self.store.is_local()) && dim > 0 {
            // Errors ignored, as Mastra: the index usually exists already.
            let _ = self.store.create_index(&self.index_name, dim).await;
        }
        let ids: Vec<String> = docs.iter().map(|d| d.id.clone()).collect();
        let metadata: Vec<_> = docs.iter().map(|d| metadata::encode(d)).collect();
        let again = (created && !self.store.is_local()).then(|| (ids.clone(), vectors.clone(), metadata.clone()));
        if let Err(e) = self.store.upsert(&self.index_name, ids, vectors, metadata).await {
            let Some((ids, vectors, metadata)) = again else { return Err(e) };
            let _ = self.store.create_index(&self.index_name, dim).await;
            self.store.upsert(&self.index_name, ids, vectors, metadata).await.map_err(|_| e)?;
        }
        self.upserted.store(true, Ordering::SeqCst);
        let mut ledger = self.ledger.lock();
        for d in docs {
            ledger.note_text(&d.id, metadata::written_hash(d));
        }
        Ok(())
    }

    pub fn count(&self) -> usize {
        self.ledger.lock().count()
    }

    /// Whether the store already holds this very document's vector (same
    /// text, same metadata, written for its own id): no need to embed it.
    pub fn holds(&self, doc: &NewDocument) -> bool {
        self.ledger.lock().holds(&doc.id, &doc.id, metadata::written_hash(doc))
    }

    /// After an upsert the store refused: the documents it was to add (ids
    /// the ledger knows in no way) are owed a deletion (`note_undeleted`):
    /// an upsert that lands and then fails (a connection reset after the
    /// commit) left vectors no index or ledger knew, answered by vector
    /// search and kept by `clear()`. Owed, not deleted now: before a saved
    /// ledger is loaded every id looks new, and `absorb` then drops the
    /// owed ids it knows.
    pub(super) fn undo_new(&self, docs: &[&NewDocument]) {
        let mut ledger = self.ledger.lock();
        let new: Vec<String> = docs.iter().filter(|d| !ledger.knows(&d.id)).map(|d| d.id.clone()).collect();
        ledger.note_undeleted(new);
    }

    /// Deletes again the vectors whose deletion failed before. The owed ids
    /// stay owed (out of results, in a save) until the store has deleted
    /// them. When it fails again, that, as a failure to report (named by
    /// the first id).
    pub(super) async fn delete_owed(&self) -> Option<crate::ingest::Failed> {
        let owed = self.ledger.lock().undeleted_ids();
        if owed.is_empty() {
            return None;
        }
        // (A store that never made the index, the writes that owed these
        // failing before it was, holds nothing of them.)
        match self.store.delete_ids_if_held(&self.index_name, &owed).await {
            Ok(()) => {
                self.ledger.lock().deleted(&owed);
                None
            }
            Err(e) => {
                let why = format!("{} ({} vectors owed)", e.reason, owed.len());
                Some(crate::ingest::Failed { path: owed[0].clone(), error: plan::vectors_undeleted(&why) })
            }
        }
    }

    /// Removes what this workspace wrote for `source` (and, for a shared
    /// store, its chunks by `sourceFile`: another writer's). The ledger
    /// forgets the source only once the store has deleted it, so a failed
    /// deletion leaves everything as it was.
    pub(super) async fn forget(&self, source: &str) -> Result<bool> {
        let (ids, known) = self.ledger.lock().removal(source);
        // A vector this workspace never wrote is deleted where the store
        // holds one (written before, by another run); a store not written
        // to yet has no table or collection to delete from (LibSQL, DuckDB
        // and PgVector fail: unindex() of a document never written rejected).
        if !known && self.store.refused().is_none() && self.store.holds_index(&self.index_name).await == Some(false) {
            return Ok(false);
        }
        self.store.delete_ids(&self.index_name, &ids).await?;
        self.ledger.lock().forget(source);
        if self.shared {
            let _ = self.store.delete_source(&self.index_name, source).await;
        }
        Ok(known)
    }
}
