//! Rebuilding both indexes from the files of `paths` (SPEC 7 and 8): scan,
//! read and tokenize before the turn; then embed and write vectors as core
//! plans them, and swap in the new BM25 index with the writes that landed
//! meanwhile carried over. With `persist`, `incremental.rs` takes over.

use super::error::{Error, Result};
use super::vector_write::OnGroupFailure;
use super::write::analyze_js;
use super::Outcome;
use super::{blocking, Engine, Keyword, VectorSide};
use crate::index::gate::Ticket;
use crate::index::{Bm25Index, NewDocument};
use crate::ingest::scan::{self, FoundFile, ScanOptions};
use crate::ingest::{self, Failed, FileOutcome, Report};
use crate::persist::FileTable;
use crate::vectors::plan;
use futures::stream::{self, StreamExt};
use parking_lot::Mutex;
use rustc_hash::FxHashMap;
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Instant;

/// Why each file failed, by its position in the outcomes.
type FileErrors = FxHashMap<usize, String>;

impl Engine {
    /// Rebuilds both indexes from the files of `paths`; rejects, once done,
    /// with what the user's `onProgress` threw meanwhile.
    pub async fn rebuild(self: Arc<Self>, ticket: Ticket, paths: Vec<String>) -> Result<Outcome> {
        let outcome = self.clone().rebuild_files(ticket, paths).await;
        self.progress_answered(outcome).await
    }

    /// `outcome`, or once it is Ok, the first failure of the user's progress
    /// callback since the last call. (One callback serves every flow: a
    /// failure during flows that overlap, or during the watcher's updates,
    /// rejects the next of them to end, never none.)
    pub(super) async fn progress_answered<T>(&self, outcome: Result<T>) -> Result<T> {
        match &self.progress {
            Some(p) if outcome.is_ok() => p.answered().await.and(outcome),
            _ => outcome,
        }
    }

    /// `rebuild`'s work.
    pub(super) async fn rebuild_files(self: Arc<Self>, ticket: Ticket, paths: Vec<String>) -> Result<Outcome> {
        if self.persist.is_some() {
            return self.rebuild_persisted(ticket, paths).await;
        }
        let started = Instant::now();
        let Some(base) = self.base_path.clone().filter(|_| self.has_search() && !paths.is_empty()) else {
            // No files to read (documents come from `index()`, as Mastra's
            // index tool gives them, by path): the history and the
            // `.gitattributes` rules count for them all the same (they were
            // never read).
            let mut report = Report::default();
            if self.base_path.is_some() && self.has_search() {
                self.refresh_history_in_background();
                self.refresh_path_rules(&mut report).await;
            }
            return Ok(Outcome::of(report, started));
        };
        // Reading and tokenizing change nothing, so they run before our turn.
        // The history is read beside them (a thread of its own).
        let read = async {
            let (report, found) = self.clone().scan_files(base, paths, Vec::new()).await?;
            Ok::<_, Error>((report, self.clone().read_found(found).await?))
        };
        let (read, ()) = futures::join!(read, self.refresh_history_for_init());
        let (mut report, outcomes) = read?;
        let embedded = self.clone().fresh_build(&ticket, outcomes, &mut report, None).await?;
        self.refresh_path_rules(&mut report).await;
        let mut out = Outcome::of(report, started);
        out.embedded = embedded;
        Ok(out)
    }

    /// Embeds, builds a fresh index of `outcomes` and swaps it in (in
    /// turn); returns how many texts were embedded. With `found`, the
    /// files indexed are recorded for `persist`.
    pub(super) async fn fresh_build(
        self: Arc<Self>,
        ticket: &Ticket,
        mut outcomes: Vec<FileOutcome>,
        report: &mut Report,
        found: Option<&[FoundFile]>,
    ) -> Result<usize> {
        let total = outcomes.len();
        self.turn(ticket).await?;
        let mut embedded = 0;
        if let Some(v) = &self.vectors {
            let gone = plan::gone_sources(&outcomes, &v.ledger.lock());
            embedded = self.rebuild_vectors(v, &mut outcomes, gone, &mut report.failed).await;
        }
        // The file table of the new index, put in place with it (below): a
        // save between the two must never pair a new table with an old index.
        let table = match (&self.persist, found) {
            (Some(p), Some(found)) => {
                let mut table = p.state.lock().files.clone();
                table.record(found, &outcomes);
                Some(table)
            }
            _ => None,
        };
        let me = self.clone();
        let params = self.read_index(|index| index.params()).await?;
        let seq = ticket.seq();
        let mut taken = std::mem::take(report);
        let (rebuilt, taken) = blocking(move || {
            let rebuilt =
                ingest::build_index(params, seq, std::mem::take(&mut outcomes), &mut taken, &|done, total, id| {
                    me.emit_throttled("index", done, total, id)
                });
            drop(outcomes);
            (me.release_memory)();
            (rebuilt, taken)
        })
        .await?;
        *report = taken;
        self.clone().swap_in_rebuilt(rebuilt, (seq, ticket.committed()), table).await?;
        if total > 0 {
            self.emit_final("index", total).await;
        }
        Ok(embedded)
    }

    /// Puts a rebuilt index (with the writes made since `seq` carried
    /// over) and its file table in place, unless `destroy()` came first;
    /// once in place, `committed` says so (the call then resolves, as a
    /// write that applied does: `applied_unless_destroyed`).
    async fn swap_in_rebuilt(
        self: Arc<Self>,
        rebuilt: Bm25Index,
        (seq, committed): (u64, Arc<AtomicBool>),
        table: Option<FileTable>,
    ) -> Result<()> {
        // Carrying over takes the write lock: off the JavaScript thread.
        // Lock order: the index, then the file state (as saves take them).
        blocking(move || {
            self.remember_stats();
            let mut index = self.index.write();
            // A build that outlived `destroy()` (it is not cut short inside
            // the blocking pool) leaves the workspace as destroy left it
            // (asked under the lock destroy empties the index under).
            self.applied_unless_destroyed(&committed, || self.put_rebuilt(&mut index, rebuilt, seq, table))
        })
        .await?
    }

    /// `swap_in_rebuilt`'s change, under the index's write lock.
    fn put_rebuilt(&self, index: &mut Bm25Index, rebuilt: Bm25Index, seq: u64, table: Option<FileTable>) {
        if self.keyword.is_some() {
            let mut rebuilt = rebuilt;
            rebuilt.carry_over(index, seq);
            rebuilt.follow_path_rules_of(index);
            *index = rebuilt;
        }
        if let (Some(p), Some(table)) = (&self.persist, table) {
            p.state.lock().files = table;
            // Built from the files: what was loaded is replaced (writes
            // carried over are counted by `api_writes`).
            p.loaded_api_docs.store(false, std::sync::atomic::Ordering::SeqCst);
            if let Some(remote) = &p.remote {
                remote.set_emptied(false); // (an index dropped to be built again is built)
            }
        }
    }

    /// Resolves `paths` to the files to index (only those at or below
    /// `within`, when it is not empty: see `ScanOptions::within`).
    pub(super) async fn scan_files(
        self: Arc<Self>,
        base: PathBuf,
        paths: Vec<String>,
        within: Vec<PathBuf>,
    ) -> Result<(Report, Vec<FoundFile>)> {
        blocking(move || {
            let persist_dir = self.persist.as_ref().and_then(|p| p.dir.as_deref());
            let options = ScanOptions {
                respect_gitignore: self.respect_gitignore,
                max_file_size: self.max_file_size,
                exclude: persist_dir.and_then(|d| scan::excluded_dir(&base, d)),
                within,
            };
            let scanned = scan::scan(&base, &paths, options);
            self.emit("scan", scanned.files.len(), scanned.files.len(), None);
            (Report { skipped: scanned.skipped, ..Default::default() }, scanned.files)
        })
        .await
    }

    /// Reads, chunks and tokenizes `files` (with the built-in tokenizer in
    /// parallel, or the user's JavaScript one afterwards).
    pub(super) async fn read_found(self: Arc<Self>, files: Vec<FoundFile>) -> Result<Vec<FileOutcome>> {
        let builtin = match &self.keyword {
            Some(Keyword { tokenizer, js: None }) => Some(tokenizer.clone()),
            _ => None,
        };
        let me = self.clone();
        let mut outcomes = blocking(move || {
            let base = me.id_base();
            let tokenizer = builtin.as_deref().map(|t| (t, &base));
            ingest::ingest(&files, me.chunking, me.max_file_size, tokenizer, &|done, total, id| {
                me.emit_throttled("read", done, total, id)
            })
        })
        .await?;
        if !outcomes.is_empty() {
            self.emit("read", outcomes.len(), outcomes.len(), None);
        }
        if let Some(Keyword { js: Some(f), .. }) = &self.keyword {
            for o in outcomes.iter_mut() {
                if let FileOutcome::Documents { docs, .. } = o {
                    for d in docs.iter_mut() {
                        d.analyzed = analyze_js(f.as_ref(), &d.content).await?;
                    }
                }
            }
        }
        Ok(outcomes)
    }

    /// Embeds and writes the documents of every file (texts whose vector
    /// the store holds are not embedded again); a file whose embedding or
    /// upsert fails has no vectors, and stays in the keyword index, listed
    /// in `failed` (without BM25 it becomes `Failed`: see `plan::settle`).
    /// Vectors of the `gone` sources are deleted. Returns how many texts
    /// were embedded.
    pub(super) async fn rebuild_vectors(
        &self,
        v: &VectorSide,
        outcomes: &mut [FileOutcome],
        gone: Vec<String>,
        failed_files: &mut Vec<Failed>,
    ) -> usize {
        let (files, sources) = {
            let ledger = v.ledger.lock();
            let to_embed = plan::texts_to_embed(outcomes, &ledger);
            let files: Vec<usize> = to_embed.iter().map(|(f, _)| *f).collect();
            let sources: Vec<Vec<&NewDocument>> = to_embed
                .iter()
                .map(|(f, members)| members.iter().map(|&j| &plan::docs_of(&outcomes[*f])[j]).collect())
                .collect();
            (files, sources)
        };
        let mut embedded = v.embed(self, &sources, OnGroupFailure::Retry, None).await;
        let undeleted = Mutex::new(Vec::from_iter(v.delete_owed().await));
        for source in gone {
            if let Err(e) = v.forget(&source).await {
                v.ledger.lock().forget_undeleted(&source);
                undeleted.lock().push(Failed { path: source, error: plan::vectors_undeleted(&e.reason) });
            }
        }
        let deletes = plan::stale_deletes(outcomes, &v.ledger.lock(), v.shared);
        let undeleted_ref = &undeleted;
        stream::iter(deletes)
            .for_each_concurrent(8, |d| async move {
                let deleted = v.store.delete_ids(&v.index_name, &d.ids).await;
                if let Some(source) = &d.by_source {
                    // (Another writer's chunks: best effort.)
                    let _ = v.store.delete_source(&v.index_name, source).await;
                }
                if let (Err(e), true) = (deleted, d.written) {
                    v.ledger.lock().note_undeleted(d.ids);
                    undeleted_ref.lock().push(Failed { path: d.file, error: plan::vectors_undeleted(&e.reason) });
                }
            })
            .await;
        failed_files.append(&mut undeleted.into_inner());
        v.write(&mut embedded, &sources).await;
        drop(sources);
        let texts = embedded.texts();
        let failed: FileErrors = embedded.failed.drain().map(|(source, why)| (files[source], why)).collect();
        let settled = plan::settle(outcomes, &failed, &mut v.ledger.lock(), self.keyword.is_some());
        failed_files.extend(settled.vectors_failed);
        for ids in settled.partial {
            if v.store.delete_ids(&v.index_name, &ids).await.is_err() {
                v.ledger.lock().note_undeleted(ids); // (the file is listed as failed already)
            }
        }
        texts
    }
}
