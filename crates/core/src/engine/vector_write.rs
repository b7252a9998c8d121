//! The one way vectors are written, for `index()`, `indexMany()`,
//! rebuilds, incremental updates and the recovery after a crash: the texts
//! of *sources* (a file's chunks, or one document) embedded in the
//! embedder's groups, then written to the store in units of at most
//! `MAX_UPSERT` that keep a source whole where it fits. A source is written
//! whole or fails with one reason; the caller decides what a failure does
//! (a rebuild keeps the file for keyword search, `indexMany` keeps the
//! document's previous version: `vectors::plan`).

use super::error::{Error, Result};
use super::{Engine, VectorSide};
use crate::index::NewDocument;
use crate::vectors::metadata;
use crate::vectors::plan::{self, MAX_UPSERT};
use rustc_hash::FxHashMap;
use std::sync::atomic::Ordering;

/// What happens to the sources of a group the embedder failed.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum OnGroupFailure {
    /// Each is embedded again on its own, so that only the sources at
    /// fault fail (rebuilds: one bad file must not fail its neighbours).
    Retry,
    /// Each fails with the group's error (`indexMany`, SPEC 8).
    Fail,
}

/// Sources embedded, ready to be written (`VectorSide::write`).
pub(super) struct Embedded<'a> {
    sources: Vec<Vec<&'a NewDocument>>,
    /// By text: the sources' documents in order, flattened.
    vectors: Vec<Option<Vec<f32>>>,
    /// Where each source's texts start among `vectors`.
    starts: Vec<usize>,
    /// Sources that failed, with why.
    pub failed: FxHashMap<usize, String>,
    /// The first failure, as it was (the host's own error), to reject with.
    pub first_error: Option<Error>,
}

impl Embedded<'_> {
    /// Texts sent to the embedder.
    pub fn texts(&self) -> usize {
        self.vectors.len()
    }

    fn fail(&mut self, source: usize, e: Error) {
        self.failed.entry(source).or_insert_with(|| e.reason.clone());
        self.first_error.get_or_insert(e);
    }
}

impl VectorSide {
    /// Embeds the documents of every source; `label` names a single text's
    /// call in its errors (`index()`), else each group is named by its place.
    pub(super) async fn embed<'a>(
        &self,
        engine: &Engine,
        sources: Vec<Vec<&'a NewDocument>>,
        on_failure: OnGroupFailure,
        label: Option<&str>,
    ) -> Embedded<'a> {
        let mut starts = Vec::with_capacity(sources.len());
        let mut texts = Vec::new();
        for docs in &sources {
            starts.push(texts.len());
            texts.extend(docs.iter().map(|d| d.content.to_string()));
        }
        let mut out =
            Embedded { sources, vectors: Vec::new(), starts, failed: FxHashMap::default(), first_error: None };
        if texts.is_empty() {
            return out;
        }
        let total = texts.len();
        let size = self.embedder.group_size();
        let groups = match label {
            Some(label) if total == 1 => vec![self.embedder.embed_group(texts, label).await],
            _ => self.embedder.embed_groups(texts).await,
        };
        if on_failure == OnGroupFailure::Retry {
            let mut done = 0;
            for _ in &groups {
                done = (done + size).min(total);
                engine.emit("embed", done, total, None);
            }
        }
        // A failed group's error, kept whole for the first source it fails.
        let mut errors: Vec<(String, Option<Error>)> = Vec::new();
        let per_group = groups.into_iter().map(|g| {
            g.map_err(|e| {
                errors.push((e.reason.clone(), Some(e)));
                errors.len() - 1
            })
        });
        let per_text = plan::spread(per_group.collect::<Vec<_>>(), size, total);
        let mut failed_group: Vec<Option<usize>> = Vec::with_capacity(out.sources.len());
        for source in 0..out.sources.len() {
            failed_group.push(per_text[out.range(source)].iter().find_map(|r| r.as_ref().err().copied()));
        }
        out.vectors = per_text.into_iter().map(std::result::Result::ok).collect();
        for (source, group) in failed_group.into_iter().enumerate() {
            let Some(group) = group else { continue };
            match on_failure {
                OnGroupFailure::Fail => {
                    let (reason, error) = &mut errors[group];
                    out.failed.insert(source, reason.clone());
                    if let Some(e) = error.take() {
                        out.first_error.get_or_insert(e);
                    }
                }
                OnGroupFailure::Retry => {
                    let range = out.range(source);
                    let texts: Vec<String> = out.sources[source].iter().map(|d| d.content.to_string()).collect();
                    match self.embedder.embed_all(texts).await {
                        Ok(vs) => {
                            for (slot, v) in out.vectors[range].iter_mut().zip(vs) {
                                *slot = Some(v);
                            }
                        }
                        Err(e) => out.fail(source, e),
                    }
                }
            }
        }
        out
    }

    /// Writes what `embed` embedded, but the failed sources, in units of
    /// at most `MAX_UPSERT` (whole sources where they fit); a unit the
    /// store refuses fails its sources.
    pub(super) async fn write(&self, e: &mut Embedded<'_>) {
        let counts: Vec<(usize, usize)> = (0..e.sources.len())
            .filter(|s| !e.failed.contains_key(s) && !e.sources[*s].is_empty())
            .map(|s| (s, e.sources[s].len()))
            .collect();
        for unit in plan::write_units(&counts, MAX_UPSERT) {
            let docs: Vec<&NewDocument> = unit.iter().map(|&(s, j)| e.sources[s][j]).collect();
            let vectors: Vec<Vec<f32>> =
                unit.iter().map(|&(s, j)| e.vectors[e.starts[s] + j].clone().expect("embedded")).collect();
            if let Err(err) = self.upsert(&docs, vectors).await {
                let mut sources: Vec<usize> = unit.iter().map(|&(s, _)| s).collect();
                sources.dedup();
                for s in sources {
                    e.failed.entry(s).or_insert_with(|| err.reason.clone());
                }
                e.first_error.get_or_insert(err);
            }
        }
    }
}

impl Embedded<'_> {
    fn range(&self, source: usize) -> std::ops::Range<usize> {
        let start = self.starts[source];
        start..start + self.sources[source].len()
    }
}

impl VectorSide {
    /// Writes one unit (at most `MAX_UPSERT` documents) to the store.
    pub(super) async fn upsert(&self, docs: &[&NewDocument], vectors: Vec<Vec<f32>>) -> Result<()> {
        if !self.upserted.load(Ordering::SeqCst) {
            if let Some(dim) = vectors.first().map(Vec::len) {
                // Errors ignored, as Mastra: the index usually exists already.
                let _ = self.store.create_index(&self.index_name, dim).await;
            }
        }
        let ids = docs.iter().map(|d| d.id.clone()).collect();
        let metadata = docs.iter().map(|d| metadata::encode(d)).collect();
        self.store.upsert(&self.index_name, ids, vectors, metadata).await?;
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

    /// Removes what this workspace wrote for `source` (and, for a shared
    /// store, its chunks by `sourceFile`: another writer's). The ledger
    /// forgets the source only once the store has deleted it, so a failed
    /// deletion leaves everything as it was.
    pub(super) async fn forget(&self, source: &str) -> Result<bool> {
        let (ids, known) = self.ledger.lock().removal(source);
        self.store.delete_ids(&self.index_name, &ids).await?;
        self.ledger.lock().forget(source);
        if self.shared {
            let _ = self.store.delete_source(&self.index_name, source).await;
        }
        Ok(known)
    }
}
