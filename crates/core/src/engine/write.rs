//! Writes: `index()`, `indexMany()`, `unindex()`, `clear()`. Each prepares
//! (tokenizes, embeds) before its turn, then writes the vector store and
//! the BM25 index in call order; a failed write changes neither.

use super::error::{Error, Result};
use super::host::TokenizeCall;
use super::vector_write::{Embedded, OnGroupFailure};
use super::{blocking, Engine, Keyword, Outcome};
use crate::index::gate::Ticket;
use crate::index::{Analyzed, NewDocument};
use crate::ingest::{Failed, Report};
use crate::text::arena::share;
use crate::text::SharedText;
use serde_json::{Map, Value};
use std::sync::Arc;
use std::time::Instant;

/// One document to write, checked.
pub struct DocArgs {
    pub id: String,
    pub content: String,
    pub metadata: Option<Map<String, Value>>,
    pub start_line_offset: Option<u32>,
}

/// What `indexMany` resolves or rejects with.
pub struct ManyOutcome {
    pub report: Outcome,
    pub error: Option<Error>,
}

/// Tokenizes a text with the user's tokenizer (the host's): the whole text
/// and each of its lines.
pub(super) async fn analyze_js(f: &dyn TokenizeCall, text: &str) -> Result<Analyzed> {
    let mut texts = vec![text.to_string()];
    if text.contains('\n') {
        texts.extend(text.split('\n').map(str::to_string));
    }
    let mut out = f.tokenize(texts).await?;
    if out.len() == 1 {
        let whole = out.pop().unwrap_or_default();
        return Ok(Analyzed::from_whole_and_lines(&whole, std::slice::from_ref(&whole)));
    }
    let lines = out.split_off(1);
    Ok(Analyzed::from_whole_and_lines(&out[0], &lines))
}

fn new_document(mut d: DocArgs, analyzed: Analyzed) -> NewDocument {
    let content = std::mem::take(&mut d.content).into();
    shared_document(d, content, analyzed)
}

fn shared_document(d: DocArgs, content: SharedText, analyzed: Analyzed) -> NewDocument {
    NewDocument {
        id: d.id,
        content,
        metadata: d.metadata.map(std::sync::Arc::new),
        start_line_offset: d.start_line_offset,
        analyzed,
    }
}

impl Engine {
    /// BM25 analysis of documents (empty without BM25).
    async fn analyze_docs(&self, docs: Vec<DocArgs>) -> Result<Vec<NewDocument>> {
        match &self.keyword {
            None => Ok(docs.into_iter().map(|d| new_document(d, Analyzed::default())).collect()),
            Some(Keyword { js: Some(f), .. }) => {
                let mut out = Vec::with_capacity(docs.len());
                for d in docs {
                    let a = analyze_js(f.as_ref(), &d.content).await?;
                    out.push(new_document(d, a));
                }
                Ok(out)
            }
            Some(Keyword { tokenizer, js: None }) => {
                let tokenizer = tokenizer.clone();
                if docs.len() == 1 && docs[0].content.len() < 64 * 1024 {
                    let d = docs.into_iter().next().expect("one document");
                    let a = Analyzed::of_text(&tokenizer, &d.content);
                    return Ok(vec![new_document(d, a)]);
                }
                blocking(move || {
                    let mut docs = docs;
                    let analyzed = crate::analysis::analyze_all(&tokenizer, &docs, |d| d.content.as_str());
                    use rayon::prelude::*;
                    // In parallel, each checked for ASCII on the way; many
                    // are copied back to back (see core's text::arena).
                    let texts = share(docs.iter_mut().map(|d| std::mem::take(&mut d.content)).collect());
                    docs.into_par_iter().zip(texts).zip(analyzed).map(|((d, t), a)| shared_document(d, t, a)).collect()
                })
                .await
            }
        }
    }

    /// `index()`: `indexMany()` of one document (one vector-write pipeline
    /// for both); its failure rejects as it was thrown, and changes nothing.
    pub async fn index_one(self: Arc<Self>, ticket: Ticket, doc: DocArgs) -> Result<()> {
        match self.write_docs(ticket, vec![doc], Instant::now(), Some("index()")).await? {
            ManyOutcome { error: Some(e), .. } => Err(e),
            ManyOutcome { error: None, .. } => Ok(()),
        }
    }

    /// `indexMany()`: embedding groups run concurrently; then, in call
    /// order, the units core plans are written, each one all or nothing.
    /// Failures are reported and the first one rejects.
    pub async fn index_many(
        self: Arc<Self>,
        ticket: Ticket,
        docs: Vec<DocArgs>,
        started: Instant,
    ) -> Result<ManyOutcome> {
        self.write_docs(ticket, docs, started, None).await
    }

    /// The pipeline of `index()` and `indexMany()`; `label`: how a single
    /// document's embedder call is named in its errors (`index()`), else by
    /// its group.
    async fn write_docs(
        self: Arc<Self>,
        ticket: Ticket,
        docs: Vec<DocArgs>,
        started: Instant,
        label: Option<&str>,
    ) -> Result<ManyOutcome> {
        if let Some(p) = &self.persist {
            p.api_writes.store(true, std::sync::atomic::Ordering::SeqCst);
        }
        let docs = self.analyze_docs(docs).await?;
        let ids: Vec<String> = docs.iter().map(|d| d.id.clone()).collect();
        let Some(v) = &self.vectors else {
            let report = Report { indexed: docs.len(), ..Default::default() };
            self.clone().write_keyword_only(&ticket, docs).await?;
            self.settle_written_files(ids).await?;
            self.save_soon();
            return Ok(ManyOutcome { report: Outcome::of(report, started), error: None });
        };
        // Documents the store already holds as they are are not embedded again.
        let (held, docs): (Vec<NewDocument>, Vec<NewDocument>) = docs.into_iter().partition(|d| v.holds(d));
        // Before anything is embedded: a workspace that turns out to only load the directory writes nothing.
        self.claim_dir_for_store_writes().await?;
        let mut fresh = v.embed(&self, &one_each(&docs), OnGroupFailure::Fail, label).await;
        self.turn_to_change(&ticket).await?;
        // Those whose vector went meanwhile (an earlier write removed it) are embedded now.
        let (held, lost): (Vec<NewDocument>, Vec<NewDocument>) = held.into_iter().partition(|d| v.holds(d));
        let mut again = v.embed(&self, &one_each(&lost), OnGroupFailure::Fail, label).await;
        let embedded = fresh.texts() + again.texts();
        // An embedder's error rejects first, then a store's, each as thrown.
        let mut first_error = fresh.first_error.take().or_else(|| again.first_error.take());
        let mut report = Report { indexed: held.len(), ..Default::default() };
        for (docs, e) in [(docs, fresh), (lost, again)] {
            self.write_units(&ticket, docs, e, &mut report, &mut first_error).await;
        }
        if self.keyword.is_some() {
            let seq = ticket.seq();
            self.write_index(move |index| {
                let mut writer = index.writer();
                for d in held {
                    writer.upsert(d, seq);
                }
            })
            .await?;
        }
        // Not those that failed: they keep the file's version, read again when it changed.
        let failed: std::collections::HashSet<&str> = report.failed.iter().map(|f| f.path.as_str()).collect();
        let written: Vec<String> = ids.into_iter().filter(|id| !failed.contains(id.as_str())).collect();
        self.settle_written_files(written).await?;
        self.save_soon();
        let mut report = Outcome::of(report, started);
        report.embedded = embedded;
        Ok(ManyOutcome { report, error: first_error })
    }

    /// Writes analyzed documents to a workspace without vectors, in the
    /// ticket's turn: one as an upsert, more as a bulk build.
    async fn write_keyword_only(self: Arc<Self>, ticket: &Ticket, docs: Vec<NewDocument>) -> Result<()> {
        self.turn_to_change(ticket).await?;
        let (me, seq, committed) = (self.clone(), ticket.seq(), ticket.committed());
        if docs.len() == 1 {
            let doc = docs.into_iter().next().expect("one");
            self.write_index(move |index| me.unless_destroyed(&committed, || index.upsert(doc, seq))).await??;
            return Ok(());
        }
        let large = docs.len() >= 10_000;
        // The build holds the write lock: off the JavaScript thread.
        blocking(move || {
            me.remember_stats();
            let mut index = me.index.write();
            me.unless_destroyed(&committed, || {
                super::test_pause("committed-bulk");
                index.add_bulk(docs, seq, &mut |_| {})
            })?;
            drop(index);
            if large {
                (me.release_memory)();
            }
            Ok::<_, Error>(())
        })
        .await?
    }

    /// Writes `indexMany`'s documents unit by unit, each to the store, then
    /// (at once, before the next unit) to the index and the ledger: a call
    /// cut short by `destroy()` leaves no vector in the store that the
    /// ledger does not know. The documents of failed embedding groups and
    /// of units the store refused are reported, and keep their previous version.
    async fn write_units(
        self: &Arc<Self>,
        ticket: &Ticket,
        docs: Vec<NewDocument>,
        mut e: Embedded,
        report: &mut Report,
        first_error: &mut Option<Error>,
    ) {
        let mut failed: Vec<(&usize, &String)> = e.failed.iter().collect();
        failed.sort_unstable();
        report
            .failed
            .extend(failed.into_iter().map(|(&i, why)| Failed { path: docs[i].id.clone(), error: why.clone() }));
        let mut docs: Vec<Option<NewDocument>> = docs.into_iter().map(Some).collect();
        for unit in e.units() {
            let refs: Vec<&NewDocument> =
                unit.iter().map(|&(i, _)| docs[i].as_ref().expect("each in one unit")).collect();
            if let Some(err) = v_of(self).write_unit(&mut e, &refs, &unit).await {
                v_of(self).undo_new(&refs);
                report.failed.extend(refs.iter().map(|d| Failed { path: d.id.clone(), error: err.reason.clone() }));
                first_error.get_or_insert(err);
                continue;
            }
            let unit: Vec<NewDocument> = unit.iter().filter_map(|&(i, _)| docs[i].take()).collect();
            let (count, seq, keyword, me) = (unit.len(), ticket.seq(), self.keyword.is_some(), self.clone());
            // Lock order (docs/architecture.md): the index, then the ledger.
            let written = self
                .write_index(move |index| {
                    let mut writer = index.writer();
                    let mut ledger = v_of(&me).ledger.lock();
                    for d in unit {
                        ledger.record(&d.id, [d.id.clone()]);
                        if keyword {
                            writer.upsert(d, seq);
                        }
                    }
                })
                .await;
            match written {
                Ok(()) => report.indexed += count,
                Err(err) => {
                    first_error.get_or_insert(err);
                }
            }
        }
    }

    /// Removes a document (and a file's chunks) from both indexes: the
    /// vectors first, so that a store that fails leaves both as they were.
    pub async fn unindex(self: Arc<Self>, ticket: Ticket, id: String) -> Result<bool> {
        self.turn_to_change(&ticket).await?;
        self.claim_dir_for_store_writes().await?;
        let mut removed = false;
        if let Some(v) = &self.vectors {
            // The vectors of every document the index removes below: a
            // document given to index() as a chunk of `id` (its metadata
            // names `id`) is its own source in the ledger.
            let key = id.clone();
            let chunks = self.read_index(move |index| index.chunk_ids_of(&key)).await?;
            let own: Vec<String> = chunks.into_iter().filter(|c| v.ledger.lock().get(c).is_some()).collect();
            for source in std::iter::once(&id).chain(&own) {
                removed |= v.forget(source).await?;
            }
            if self.snapshot_loaded().is_err() {
                v.forgotten_before_load.lock().extend(std::iter::once(id.clone()).chain(own));
            }
        }
        let seq = ticket.seq();
        let key = id.clone();
        removed |= self.write_index(move |index| index.remove_with_chunks(&key, seq)).await?;
        if removed {
            self.forget_partly_removed(std::slice::from_ref(&id));
            self.settle_written_files(vec![id]).await?;
        }
        self.save_soon();
        Ok(removed)
    }

    /// The files of the chunks in `removed` (ids the API removed) are read
    /// again whole by the next reconcile (`rebuildSearchIndex()`, a
    /// restart's `init()`): their records go, since an unchanged stamp
    /// would keep each as it is, a chunk short, for good.
    fn forget_partly_removed(&self, removed: &[String]) {
        let Some(p) = &self.persist else { return };
        let mut state = p.state.lock();
        for file in removed.iter().filter_map(|id| crate::index::chunk_parent(id)) {
            state.files.remove(file);
        }
    }

    /// Removes every document whose id starts with `prefix` from both
    /// indexes; resolves how many ids were removed.
    pub async fn remove_by_prefix(self: Arc<Self>, ticket: Ticket, prefix: String) -> Result<u32> {
        self.turn_to_change(&ticket).await?;
        self.claim_dir_for_store_writes().await?;
        self.snapshot_loaded()?;
        let mut removed: Vec<String> = Vec::new();
        // Vectors first, forgotten only once deleted: a store that fails
        // leaves both indexes as they were.
        if let Some(v) = &self.vectors {
            let ids = v.ledger.lock().with_prefix(&prefix);
            v.store.delete_ids(&v.index_name, &ids).await?;
            v.ledger.lock().take_prefix(&prefix);
            removed = ids;
        }
        if self.keyword.is_some() {
            let seq = ticket.seq();
            let ids = self
                .write_index(move |index| {
                    let ids = index.ids_with_prefix(&prefix);
                    for id in &ids {
                        index.remove(id, seq);
                    }
                    ids
                })
                .await?;
            removed.extend(ids);
        }
        removed.sort_unstable();
        removed.dedup();
        self.forget_partly_removed(&removed);
        self.save_soon();
        Ok(removed.len() as u32)
    }

    /// `clear()` in the write order as of now (its ticket taken on the
    /// caller's thread); until it is done `count_by_prefix` answers 0.
    pub fn clear_queued(self: &Arc<Self>) -> impl std::future::Future<Output = Result<()>> + Send + 'static {
        let ticket = self.gate.ticket();
        let pending = PendingClear::new(self.clone());
        async move { pending.0.clone().clear(ticket).await }
    }

    pub async fn clear(self: Arc<Self>, ticket: Ticket) -> Result<()> {
        self.turn(&ticket).await?;
        self.claim_dir_for_store_writes().await?;
        self.snapshot_loaded()?;
        if let Some(v) = &self.vectors {
            let ids = v.ledger.lock().all_ids();
            v.store.delete_ids(&v.index_name, &ids).await?;
            v.store.drop_if_empty(&v.index_name);
            v.ledger.lock().clear();
        }
        // The file table stays: a watcher then adds back only files whose
        // content changes, and the next init() reads every file again (the
        // index holds none of their documents).
        let seq = ticket.seq();
        self.write_index(move |index| index.clear(seq)).await?;
        self.prefix_counts.lock().clear();
        self.save_soon();
        Ok(())
    }
}

impl Engine {
    /// Before a removal by prefix or a `clear()`: a persisted workspace's
    /// snapshot is loaded (its first `init()` is done), else this is not
    /// ready. Such a removal names documents the snapshot holds, which are
    /// not here yet to be removed, and the load would bring them back.
    /// (`index()` and `unindex()` name one document: they are carried into
    /// the loaded index.)
    fn snapshot_loaded(&self) -> Result<()> {
        match &self.persist {
            Some(p) if (p.dir.is_some() || p.remote.is_some()) && !p.state.lock().loaded => Err(self.not_ready()),
            _ => Ok(()),
        }
    }
}

/// The vector side of a workspace that has one (checked by the caller).
fn v_of(engine: &Engine) -> &super::VectorSide {
    engine.vectors.as_ref().expect("a vector side")
}

/// Each document a source of its own (`indexMany` writes documents one by one).
fn one_each(docs: &[NewDocument]) -> Vec<Vec<&NewDocument>> {
    docs.iter().map(|d| vec![d]).collect()
}

/// A queued `clear()` counted in `clears_pending` until it is done or
/// dropped unrun.
struct PendingClear(Arc<Engine>);

impl PendingClear {
    fn new(engine: Arc<Engine>) -> PendingClear {
        engine.clears_pending.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        PendingClear(engine)
    }
}

impl Drop for PendingClear {
    fn drop(&mut self) {
        self.0.clears_pending.fetch_sub(1, std::sync::atomic::Ordering::SeqCst);
    }
}
