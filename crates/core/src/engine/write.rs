//! Writes: `index()`, `indexMany()`, `unindex()`, `clear()`. Each prepares
//! (tokenizes, embeds) before its turn, then writes the vector store and
//! the BM25 index in call order; a failed write changes neither.

use super::error::{Error, Result};
use super::host::TokenizeCall;
use super::{blocking, Engine, Keyword, Outcome, VectorSide};
use crate::index::gate::Ticket;
use crate::index::{Analyzed, NewDocument};
use crate::ingest::{Failed, Report};
use crate::text::arena::share;
use crate::text::SharedText;
use crate::vectors::plan;
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

/// Tokenizes a text with the user's JavaScript tokenizer: the whole text
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
        let docs = self.analyze_docs(docs).await?;
        let Some(v) = &self.vectors else {
            self.turn(&ticket).await?;
            let report = Report { indexed: docs.len(), ..Default::default() };
            if docs.len() == 1 {
                // One document: an upsert, no bulk build.
                let (doc, seq) = (docs.into_iter().next().expect("one"), ticket.seq());
                self.write_index(move |index| index.upsert(doc, seq)).await?;
                self.save_soon();
                return Ok(ManyOutcome { report: Outcome::of(report, started), error: None });
            }
            let large = docs.len() >= 10_000;
            let (me, seq) = (self.clone(), ticket.seq());
            // The build holds the write lock: off the JavaScript thread.
            blocking(move || {
                me.remember_stats();
                me.index.write().add_bulk(docs, seq, &mut |_| {});
                if large {
                    (me.release_memory)();
                }
            })
            .await?;
            self.save_soon();
            return Ok(ManyOutcome { report: Outcome::of(report, started), error: None });
        };
        // Documents the store already holds as they are are not embedded again.
        let (held, docs): (Vec<NewDocument>, Vec<NewDocument>) = docs.into_iter().partition(|d| v.holds(d));
        let mut first_error: Option<Error> = None;
        let per_doc = Self::embed_many(v, &docs, label, &mut first_error).await;
        self.turn(&ticket).await?;
        // Those whose vector went meanwhile (an earlier write removed it) are embedded now.
        let (held, lost): (Vec<NewDocument>, Vec<NewDocument>) = held.into_iter().partition(|d| v.holds(d));
        let lost_per_doc = Self::embed_many(v, &lost, label, &mut first_error).await;
        let embedded = docs.len() + lost.len();
        let mut report = self.write_units(v, &ticket, docs, per_doc, &mut first_error).await;
        let more = self.write_units(v, &ticket, lost, lost_per_doc, &mut first_error).await;
        report.indexed += more.indexed;
        report.failed.extend(more.failed);
        report.indexed += held.len();
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
        self.save_soon();
        let mut report = Outcome::of(report, started);
        report.embedded = embedded;
        Ok(ManyOutcome { report, error: first_error })
    }

    /// Embeds `docs` in groups: a vector or the group's message per
    /// document; the first failure is kept to reject with, as the object it was.
    async fn embed_many(
        v: &VectorSide,
        docs: &[NewDocument],
        label: Option<&str>,
        first_error: &mut Option<Error>,
    ) -> Vec<std::result::Result<Vec<f32>, String>> {
        if docs.is_empty() {
            return Vec::new();
        }
        let texts: Vec<String> = docs.iter().map(|d| d.content.to_string()).collect();
        let groups = match label {
            Some(label) if texts.len() == 1 => vec![v.embedder.embed_group(texts, label).await],
            _ => v.embedder.embed_groups(texts).await,
        };
        let messages = groups.into_iter().map(|g| {
            g.map_err(|e| {
                let msg = e.reason.clone();
                first_error.get_or_insert(e);
                msg
            })
        });
        plan::spread(messages.collect::<Vec<_>>(), v.embedder.group_size(), docs.len())
    }

    /// Writes `indexMany`'s units (core's `many_units`) in order; the
    /// documents of failed embedding groups, and of units the store
    /// refused, are reported failed and keep their previous version.
    async fn write_units(
        self: &Arc<Self>,
        v: &VectorSide,
        ticket: &Ticket,
        docs: Vec<NewDocument>,
        per_doc: Vec<std::result::Result<Vec<f32>, String>>,
        first_error: &mut Option<Error>,
    ) -> Report {
        let mut report = Report::default();
        let plan = plan::many_units(per_doc);
        let mut docs: Vec<Option<NewDocument>> = docs.into_iter().map(Some).collect();
        let mut take = |i: usize| docs[i].take().expect("each document in one place");
        for (i, msg) in plan.failed {
            report.failed.push(Failed { path: take(i).id, error: msg });
        }
        for unit in plan.units {
            let (unit, vectors): (Vec<NewDocument>, Vec<Vec<f32>>) =
                unit.into_iter().map(|(i, vec)| (take(i), vec)).unzip();
            let refs: Vec<&NewDocument> = unit.iter().collect();
            if let Err(e) = v.upsert(&refs, vectors).await {
                let msg = e.reason.clone();
                first_error.get_or_insert(e);
                report.failed.extend(unit.into_iter().map(|d| Failed { path: d.id, error: msg.clone() }));
                continue;
            }
            let (count, seq, keyword, me) = (unit.len(), ticket.seq(), self.keyword.is_some(), self.clone());
            // Lock order (docs/architecture.md): the index, then the ledger.
            let written = self
                .write_index(move |index| {
                    let ledger = &me.vectors.as_ref().expect("a vector side").ledger;
                    let mut writer = index.writer();
                    let mut ledger = ledger.lock();
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
                Err(e) => {
                    first_error.get_or_insert(e);
                }
            }
        }
        report
    }

    /// Removes a document (and a file's chunks) from both indexes: the
    /// vectors first, so that a store that fails leaves both as they were.
    pub async fn unindex(self: Arc<Self>, ticket: Ticket, id: String) -> Result<bool> {
        self.turn(&ticket).await?;
        let mut removed = false;
        if let Some(v) = &self.vectors {
            removed = v.forget(&id).await?;
        }
        let seq = ticket.seq();
        removed |= self.write_index(move |index| index.remove_with_chunks(&id, seq)).await?;
        self.save_soon();
        Ok(removed)
    }

    /// Removes every document whose id starts with `prefix` from both
    /// indexes; resolves how many ids were removed.
    pub async fn remove_by_prefix(self: Arc<Self>, ticket: Ticket, prefix: String) -> Result<u32> {
        self.turn(&ticket).await?;
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
        self.save_soon();
        Ok(removed.len() as u32)
    }

    pub async fn clear(self: Arc<Self>, ticket: Ticket) -> Result<()> {
        self.turn(&ticket).await?;
        if let Some(v) = &self.vectors {
            let ids = v.ledger.lock().all_ids();
            v.store.delete_ids(&v.index_name, &ids).await?;
            v.ledger.lock().clear();
        }
        // The file table stays: a watcher then adds back only files whose
        // content changes, and the next init() reads every file again (the
        // index holds none of their documents).
        let seq = ticket.seq();
        self.write_index(move |index| index.clear(seq)).await?;
        self.save_soon();
        Ok(())
    }
}
