//! Embedding again from the index: the texts a loaded snapshot holds whose
//! vectors the store does not have from this embedder (the embedder changed
//! or was added, another vector index or store was configured, an earlier
//! start could not embed them), and those a crash left in doubt.

use super::error::Result;
use super::vector_write::OnGroupFailure;
use super::{Engine, VectorSide};
use crate::index::NewDocument;
use crate::ingest::Failed;
use crate::vectors::plan;
use std::sync::Arc;

impl Engine {
    /// At every `init()`, after the files are reconciled: every document
    /// of the index whose vector this embedder did not write (the ledger
    /// holds no text hash for it: a snapshot saved without vectors, by
    /// another embedder or for another store, or an earlier start that
    /// could not embed it) is embedded again from the index. A source that
    /// fails keeps its documents in the keyword index without vectors,
    /// listed in `failed`, and is tried again at the next `init()` (its
    /// hash stays unknown); one `failed` lists already (a file read again)
    /// is not tried twice. Nothing is rejected: one text an embedder
    /// refuses must not keep a workspace from starting, and dropping the
    /// documents instead would lose those given to `index()`. Returns how
    /// many documents were embedded.
    pub(super) async fn embed_unwritten(self: &Arc<Self>, failed: &mut Vec<Failed>) -> Result<usize> {
        // (A workspace that only loads a directory another writes leaves it to the writer.)
        let Some(v) = self.vectors.as_ref().filter(|v| self.keyword.is_some() && v.store.refused().is_none()) else {
            return Ok(0);
        };
        let me = self.clone();
        let unwritten = self.read_index(move |index| {
            // Lock order (docs/architecture.md): the index, then the ledger.
            let ledger = me.vectors.as_ref().expect("vectors").ledger.lock();
            let mut sources: Vec<String> = index
                .documents()
                .filter(|d| !ledger.has_text(&d.id))
                .map(|d| d.source_file().unwrap_or(&d.id).to_string())
                .collect();
            sources.sort_unstable();
            sources.dedup();
            sources
        });
        let mut sources = unwritten.await?;
        let reported: rustc_hash::FxHashSet<&str> = failed.iter().map(|f| f.path.as_str()).collect();
        sources.retain(|source| !reported.contains(source.as_str()));
        if sources.is_empty() {
            return Ok(0);
        }
        let refused = match self.remote() {
            Some(remote) => remote.texts_ready(self.indexes_files_only()).await.err(),
            None => None,
        };
        let (embedded, refused) = match refused {
            // The texts cannot be read: tried again at the next init().
            Some(e) => (0, sources.iter().map(|s| (s.clone(), e.reason.clone())).collect()),
            None => self.rewrite_from_index(v, &sources).await,
        };
        let files: Vec<bool> = match &self.persist {
            Some(p) => {
                let state = p.state.lock();
                refused.iter().map(|(source, _)| state.files.get(source).is_some()).collect()
            }
            None => vec![false; refused.len()],
        };
        for ((source, reason), file) in refused.into_iter().zip(files) {
            let error = if file { plan::vectors_failed(&reason) } else { plan::record_vectors_failed(&reason) };
            failed.push(Failed { path: source, error });
        }
        if let Some(p) = self.persist.as_ref().filter(|_| embedded > 0) {
            // Saved with this embedder's name and what it wrote.
            p.changed();
        }
        Ok(embedded)
    }

    /// Embeds again, from the index, the documents of `sources` (a file's
    /// path or an `index()` document's id), in one pass of the embedder's
    /// groups (a refused batch retried as `rebuild_vectors` does), and
    /// writes them to the store. A source that fails is left without
    /// vectors (what it had written of them deleted). Returns how many
    /// documents were embedded, and each failed source with why.
    pub(super) async fn rewrite_from_index(
        self: &Arc<Self>,
        v: &VectorSide,
        sources: &[String],
    ) -> (usize, Vec<(String, String)>) {
        let groups = match self.documents_of(sources).await {
            Ok(groups) => groups,
            Err(e) => return (0, sources.iter().map(|s| (s.clone(), e.reason.clone())).collect()),
        };
        let (sources, groups): (Vec<&String>, Vec<Vec<NewDocument>>) =
            sources.iter().zip(groups).filter(|(_, docs)| !docs.is_empty()).unzip();
        let refs: Vec<Vec<&NewDocument>> = groups.iter().map(|docs| docs.iter().collect()).collect();
        let mut embedded = v.embed(self, &refs, OnGroupFailure::RetryQuietly, None).await;
        v.write(&mut embedded, &refs).await;
        drop(refs);
        let (mut done, mut failed) = (0, Vec::new());
        for (i, (source, docs)) in sources.into_iter().zip(groups).enumerate() {
            let ids: Vec<String> = docs.into_iter().map(|d| d.id).collect();
            match embedded.failed.remove(&i) {
                None => {
                    done += ids.len();
                    v.ledger.lock().replace(source, ids)
                }
                Some(reason) => {
                    // All or nothing, as a rebuild's file: units written before the failure go.
                    // Still listed if the delete failed, so that a later removal deletes them.
                    match v.store.delete_ids(&v.index_name, &ids).await {
                        Ok(()) => v.ledger.lock().withdraw(source, &ids),
                        Err(_) => v.ledger.lock().drop_texts(&ids),
                    }
                    failed.push((source.clone(), reason));
                }
            }
        }
        (done, failed)
    }

    /// The documents of each of `sources`, as the index holds them, read off
    /// this task: the index may be held, and stored texts are read from disk.
    async fn documents_of(self: &Arc<Self>, sources: &[String]) -> Result<Vec<Vec<NewDocument>>> {
        let (wanted, me) = (sources.to_vec(), self.clone());
        super::blocking(move || {
            let at: rustc_hash::FxHashMap<&str, usize> =
                wanted.iter().enumerate().map(|(i, s)| (s.as_str(), i)).collect();
            let mut groups: Vec<Vec<NewDocument>> = vec![Vec::new(); wanted.len()];
            let index = me.index.read();
            for d in index.documents() {
                let source = at.get(d.source_file().unwrap_or(&d.id)).or_else(|| at.get(d.id.as_str()));
                if let Some(&i) = source {
                    groups[i].push(NewDocument {
                        id: d.id.clone(),
                        content: d.content.clone(),
                        metadata: d.metadata.clone(),
                        start_line_offset: d.start_line_offset,
                        analyzed: Default::default(),
                    });
                }
            }
            groups
        })
        .await
    }
}
