//! The vector store behind a workspace: the embedded one (no boundary
//! crossing) or a store with Mastra's `MastraVector` methods (the user's,
//! through the host's `StoreCall`), called with Mastra's argument shapes.

use super::error::{Error, Result};
use super::host::StoreCall;
use crate::persist::intent::{Held, IntentLog};
use crate::search::hybrid::StoreHit;
use crate::vectors::filter::{json_kind, Filter};
use crate::vectors::plan::MAX_UPSERT;
use crate::vectors::store::{Metric, VectorError, VectorStore};
use parking_lot::RwLock;
use serde_json::{json, Map, Value};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// How long a read of the user's vector store may take by default
/// (`vectorStoreTimeoutMs`).
pub const DEFAULT_VECTOR_STORE_TIMEOUT: Duration = Duration::from_secs(120);

/// A store of the user's, called by method name (as Mastra's
/// `this.vectorStore.x(...)`, so that methods replaced later are the ones called).
pub struct MastraStore {
    caller: Arc<dyn StoreCall>,
    /// How long a read (`query`, `createIndex`) may take: a store that
    /// never answers fails the search instead of holding it for good.
    /// Writes are not bounded: one that answered late would have reached
    /// the store while the ledger and the log of intent say it did not.
    read_timeout: Duration,
    /// With `persist`: what is about to reach the store, written down first
    /// (`persist::intent`), set once this workspace writes the directory.
    pub intent: std::sync::OnceLock<Arc<IntentLog>>,
    /// The writes sent and not answered yet, whether or not their caller
    /// still waits for them.
    pub writes: Arc<WritesInFlight>,
    /// Why this workspace writes nothing to the store (`refuse_writes`).
    refused: parking_lot::Mutex<Option<String>>,
    /// `createIndex` calls sent, and answered: a query that failed while
    /// one was under way may have met the index not made yet (a search
    /// beside the first write).
    creations_sent: AtomicU64,
    creations_answered: AtomicU64,
}

/// Writes sent to a user's store and not answered yet. A call that
/// `destroy()` cuts short cannot take its write back: it runs on, on a
/// task of its own, and what must outlive it (the persist directory's
/// writer lock: the next writer undoes the log, and a write landing after
/// that would stay for good) is kept here until the last one answers.
#[derive(Default)]
pub struct WritesInFlight {
    state: parking_lot::Mutex<Flights>,
    /// Woken when the last write under way answers.
    none_left: tokio::sync::Notify,
}

#[derive(Default)]
struct Flights {
    under_way: usize,
    /// Set by `destroy()`: no write is sent from then on (one cut short
    /// between its embedding and its upsert sent it after `destroy()`
    /// had resolved, and nothing waited for it).
    closed: bool,
    /// Dropped when the last write under way answers.
    kept: Vec<Box<dyn std::any::Any + Send>>,
}

/// One write under way; dropped when the store answered.
struct WriteUnderWay(Arc<WritesInFlight>);

impl WritesInFlight {
    /// A write about to be sent, counted; `None` once closed. Counted and
    /// checked under one lock: `destroy()` either waits for it or it is
    /// never sent.
    fn enter(self: &Arc<Self>) -> Option<WriteUnderWay> {
        let mut state = self.state.lock();
        if state.closed {
            return None;
        }
        state.under_way += 1;
        Some(WriteUnderWay(self.clone()))
    }

    /// No write is sent from now on (`destroy()`).
    pub fn close(&self) {
        self.state.lock().closed = true;
    }

    /// Drops `value` once no write is under way (now, if none is).
    pub fn keep_until_answered(&self, value: Box<dyn std::any::Any + Send>) {
        let mut state = self.state.lock();
        if state.under_way > 0 {
            state.kept.push(value);
        }
    }

    pub fn under_way(&self) -> bool {
        self.state.lock().under_way > 0
    }

    /// Waits, at most `limit`, until no write is under way.
    pub async fn answered(&self, limit: Duration) {
        let all_answered = async {
            loop {
                // Registered before the check: a last answer between the
                // two still wakes this wait.
                let woken = self.none_left.notified();
                tokio::pin!(woken);
                woken.as_mut().enable();
                if !self.under_way() {
                    return;
                }
                woken.await;
            }
        };
        let _ = tokio::time::timeout(limit, all_answered).await;
    }
}

impl Drop for WriteUnderWay {
    fn drop(&mut self) {
        let (last, kept) = {
            let mut state = self.0.state.lock();
            state.under_way -= 1;
            let last = state.under_way == 0;
            (last, if last { std::mem::take(&mut state.kept) } else { Vec::new() })
        };
        // What was kept for the writes goes before anyone waiting hears of it.
        drop(kept);
        if last {
            self.0.none_left.notify_waiters();
        }
    }
}

pub enum Store {
    Local(Arc<RwLock<VectorStore>>),
    Mastra(MastraStore),
}

impl MastraStore {
    pub fn new(caller: Arc<dyn StoreCall>, read_timeout: Duration) -> MastraStore {
        MastraStore {
            caller,
            read_timeout,
            intent: Default::default(),
            writes: Default::default(),
            refused: Default::default(),
            creations_sent: Default::default(),
            creations_answered: Default::default(),
        }
    }

    /// A workspace that reads a persist directory another writes (without
    /// its lock) writes nothing to the store they share: its writes would
    /// go unrecorded by the writer's ledger and log, and stay there for
    /// good (vectors of documents the index never holds, another text's
    /// vector under an id). Set once: the lock is tried once.
    pub fn refuse_writes(&self, why: String) {
        *self.refused.lock() = Some(why);
    }

    /// Why writes are refused, if they are.
    pub fn refused(&self) -> Option<String> {
        self.refused.lock().clone()
    }

    /// Calls `store[name](args)`; `None` when the store has no such method.
    async fn call(&self, name: &str, args: Value) -> Result<Option<Value>> {
        self.caller.call(name, args).await
    }

    /// `call` of a method that changes what the store holds: on a task of
    /// its own, counted until the store answers (`WritesInFlight`).
    async fn call_write(&self, name: &'static str, args: Value) -> Result<Option<Value>> {
        if let Some(why) = self.refused() {
            return Err(Error::from_reason(why));
        }
        self.send_counted(name, args)?.await.map_err(|e| joined_err(name, e))?
    }

    /// Sends `store[name](args)` on a task of its own, counted as a write
    /// until the store answers, whether or not its caller still waits
    /// (`destroy()` waits for it); never sent after `destroy()`.
    fn send_counted(&self, name: &'static str, args: Value) -> Result<tokio::task::JoinHandle<Result<Option<Value>>>> {
        super::test_pause("store-write");
        let Some(under_way) = self.writes.enter() else {
            return Err(Error::from_reason(format!(
                "vectorStore.{name} not sent: the workspace was destroyed (nothing reaches the store after destroy())"
            )));
        };
        let caller = self.caller.clone();
        Ok(tokio::spawn(async move {
            let answer = caller.call(name, args).await;
            drop(under_way);
            answer
        }))
    }

    /// Writes down ids about to be written or deleted; a log that cannot
    /// be written fails the call before the store sees it.
    /// The record is held until the call answers (`Held::answered`).
    fn intend_ids(&self, ids: &[String]) -> Result<Option<Held>> {
        match self.intent.get() {
            Some(log) => log
                .ids(ids)
                .map(Some)
                .map_err(|e| Error::from_reason(format!("persist: cannot record a vector write ({e})"))),
            None => Ok(None),
        }
    }

    /// `call` of a method that changes nothing the store holds, bounded by
    /// the read timeout.
    async fn call_read(&self, name: &str, args: Value) -> Result<Option<Value>> {
        tokio::time::timeout(self.read_timeout, self.call(name, args)).await.map_err(|_| self.late(name))?
    }

    /// A method that makes something in the store (`createIndex`): counted
    /// as a write (`send_counted`), bounded by the read timeout.
    async fn call_counted(&self, name: &'static str, args: Value) -> Result<Option<Value>> {
        let call = self.send_counted(name, args)?;
        tokio::time::timeout(self.read_timeout, call)
            .await
            .map_err(|_| self.late(name))?
            .map_err(|e| joined_err(name, e))?
    }

    /// A call that did not answer within the read timeout.
    fn late(&self, name: &str) -> Error {
        Error::vector_store(format!("vectorStore.{name} did not answer within {} ms.", self.read_timeout.as_millis()))
    }

    /// A method every store has (`upsert`, `query`).
    fn required(name: &str, answer: Option<Value>) -> Result<Value> {
        answer.ok_or_else(|| Error::from_reason(format!("vectorStore.{name} must be a function")))
    }
}

/// A call's task that ended without an answer (it panicked).
fn joined_err(name: &str, e: tokio::task::JoinError) -> Error {
    Error::vector_store(format!("vectorStore.{name} failed: {e}"))
}

/// Why vectors of another size than those held are refused.
const SIZE_CHANGED: &str = "the embedder's vectors are not the size of those already in the index; the embedder changed (with persist and embedderId, give it a new embedderId, or none, so that every text is embedded again)";

fn local_err(e: VectorError) -> Error {
    match e {
        // Vectors of another size than those held: the embedder changed (with
        // `persist`, under an `embedderId` that is taken at its word).
        VectorError::Dimension { .. } => Error::embedder(format!("{e}: {SIZE_CHANGED}")),
        e => Error::from_reason(e.to_string()),
    }
}

impl Store {
    pub fn is_local(&self) -> bool {
        matches!(self, Store::Local(_))
    }

    /// Whether the store holds an index of this name: `None` when it cannot
    /// say (no `listIndexes`, or it failed or answered something else).
    pub async fn holds_index(&self, index_name: &str) -> Option<bool> {
        match self {
            Store::Local(s) => Some(s.read().index(index_name).is_ok()),
            Store::Mastra(js) => match js.call_read("listIndexes", json!({})).await {
                Ok(Some(Value::Array(names))) => Some(names.iter().any(|n| n.as_str() == Some(index_name))),
                _ => None,
            },
        }
    }

    /// Why this workspace writes nothing to the store, if it does not.
    pub fn refused(&self) -> Option<String> {
        match self {
            Store::Local(_) => None,
            Store::Mastra(js) => js.refused(),
        }
    }

    pub async fn create_index(&self, index_name: &str, dimension: usize) -> Result<()> {
        match self {
            Store::Local(s) => s.write().create_index(index_name, dimension, Metric::Cosine).map_err(local_err),
            Store::Mastra(js) => {
                js.creations_sent.fetch_add(1, Ordering::SeqCst);
                // It makes a table or a collection: a write, bounded as a read.
                let made =
                    js.call_counted("createIndex", json!({ "indexName": index_name, "dimension": dimension })).await;
                js.creations_answered.fetch_add(1, Ordering::SeqCst);
                made.map(drop)
            }
        }
    }

    pub async fn upsert(
        &self,
        index_name: &str,
        ids: Vec<String>,
        vectors: Vec<Vec<f32>>,
        metadata: Vec<Map<String, Value>>,
    ) -> Result<()> {
        match self {
            Store::Local(s) => {
                let mut store = s.write();
                let ix = store.index_mut(index_name).map_err(local_err)?;
                ix.upsert(index_name, ids, vectors, metadata.into_iter().map(Some).collect()).map_err(local_err)
            }
            Store::Mastra(js) => {
                let held = js.intend_ids(&ids)?;
                let len = vectors.first().map(Vec::len);
                let args = json!({ "indexName": index_name, "vectors": vectors, "metadata": metadata, "ids": ids });
                let answer =
                    js.call_write("upsert", args).await.and_then(|a| MastraStore::required("upsert", a)).map(drop);
                if let Some(h) = held {
                    h.answered();
                }
                match answer {
                    Err(e) => Err(self.size_changed(index_name, len, e).await),
                    ok => ok,
                }
            }
        }
    }

    pub async fn query(
        &self,
        index_name: &str,
        vector: Vec<f32>,
        top_k: usize,
        filter: Option<(&Filter, &Value)>,
    ) -> Result<Vec<StoreHit>> {
        match self {
            Store::Local(s) => {
                let store = s.read();
                let ix = match store.index(index_name) {
                    Ok(ix) => ix,
                    Err(_) => return Ok(Vec::new()), // nothing indexed yet
                };
                let hits = ix.query(index_name, &vector, top_k, filter.map(|f| f.0), false).map_err(local_err)?;
                Ok(hits.into_iter().map(|m| StoreHit { id: m.id, score: m.score, metadata: m.metadata }).collect())
            }
            Store::Mastra(js) => {
                // A number every store takes (an SQL LIMIT is 32-bit in some; a
                // larger one would reach JavaScript as a BigInt).
                let top_k = top_k.min(i32::MAX as usize);
                let args = || {
                    let mut args = json!({ "indexName": index_name, "queryVector": vector, "topK": top_k });
                    if let Some((_, raw)) = filter {
                        args["filter"] = raw.clone();
                    }
                    args
                };
                let sent_before = js.creations_sent.load(Ordering::SeqCst);
                let answered_before = js.creations_answered.load(Ordering::SeqCst);
                match js.call_read("query", args()).await {
                    Ok(answer) => parse_hits(MastraStore::required("query", answer)?),
                    // An index not made yet (nothing embedded: LibSQL has no
                    // table) holds nothing, as the embedded store answers;
                    // one made meanwhile (a first write beside this search:
                    // sent before or after the query, answered after it) is
                    // asked again, once; any other failure is the search's.
                    Err(e) => match self.holds_index(index_name).await {
                        Some(false) => Ok(Vec::new()),
                        _ if js.creations_sent.load(Ordering::SeqCst) != sent_before
                            || sent_before != answered_before =>
                        {
                            parse_hits(MastraStore::required("query", js.call_read("query", args()).await?)?)
                        }
                        _ => Err(self.size_changed(index_name, Some(vector.len()), e).await),
                    },
                }
            }
        }
    }

    /// A user's store refused vectors of `len` numbers: when its index
    /// holds vectors of another size (`describeIndex`), the store's own
    /// message (a size error in its words) gets the reason the embedded
    /// store gives, and what to do.
    async fn size_changed(&self, index_name: &str, len: Option<usize>, e: Error) -> Error {
        let Store::Mastra(js) = self else { return e };
        let Some(len) = len else { return e };
        let held = match js.call_read("describeIndex", json!({ "indexName": index_name })).await {
            Ok(Some(answer)) => answer.get("dimension").and_then(Value::as_u64),
            _ => None,
        };
        match held {
            Some(dim) if dim as usize != len => {
                let why = format!(
                    "vectors of {len} numbers, where the vector store's index {index_name} holds vectors of {dim}: {SIZE_CHANGED}. The store said: {}",
                    e.reason
                );
                Error::embedder_caused(why, e)
            }
            _ => e,
        }
    }

    /// After a `clear()`: the embedded store's index, if nothing is left in
    /// it, is dropped, so that the next write makes it again with the
    /// vectors' size then (an empty index kept only its dimension, and
    /// refused another embedder's vectors as "the embedder changed").
    pub fn drop_if_empty(&self, index_name: &str) {
        if let Store::Local(s) = self {
            let mut store = s.write();
            if store.index(index_name).is_ok_and(|ix| ix.is_empty()) {
                store.delete_index(index_name);
            }
        }
    }

    /// Deletes vectors by id (missing ids are fine).
    pub async fn delete_ids(&self, index_name: &str, ids: &[String]) -> Result<()> {
        if ids.is_empty() {
            return Ok(());
        }
        match self {
            Store::Local(s) => {
                if let Ok(ix) = s.write().index_mut(index_name) {
                    for id in ids {
                        ix.remove(id);
                    }
                }
                Ok(())
            }
            Store::Mastra(js) => {
                let held = js.intend_ids(ids)?;
                // An error is an answer too: only a call cut short stays held.
                let answer = async {
                    // One call per 100 ids where the store can; else one per id.
                    for chunk in ids.chunks(MAX_UPSERT) {
                        if js
                            .call_write("deleteVectors", json!({ "indexName": index_name, "ids": chunk }))
                            .await?
                            .is_some()
                        {
                            continue;
                        }
                        for id in chunk {
                            js.call_write("deleteVector", json!({ "indexName": index_name, "id": id })).await?;
                        }
                    }
                    Ok(())
                }
                .await;
                if let Some(h) = held {
                    h.answered();
                }
                answer
            }
        }
    }

    /// `delete_ids`, where a store that holds no such index (never made,
    /// or dropped) has nothing of them to delete: its failure then is not one.
    pub async fn delete_ids_if_held(&self, index_name: &str, ids: &[String]) -> Result<()> {
        match self.delete_ids(index_name, ids).await {
            Err(e) if self.holds_index(index_name).await != Some(false) => Err(e),
            _ => Ok(()),
        }
    }

    /// `deleteVectors({ indexName, filter: { sourceFile } })`: the chunks of a file.
    pub async fn delete_source(&self, index_name: &str, source_file: &str) -> Result<()> {
        match self {
            Store::Local(s) => {
                let filter = Filter::parse(&json!({ "sourceFile": source_file })).expect("valid filter");
                if let Ok(ix) = s.write().index_mut(index_name) {
                    ix.remove_matching(&filter);
                }
                Ok(())
            }
            Store::Mastra(js) => {
                let held = match js.intent.get() {
                    Some(log) => Some(
                        log.source(source_file)
                            .map_err(|e| Error::from_reason(format!("persist: cannot record a vector delete ({e})")))?,
                    ),
                    None => None,
                };
                let args = json!({ "indexName": index_name, "filter": { "sourceFile": source_file } });
                let answer = js.call_write("deleteVectors", args).await.map(drop);
                if let Some(h) = held {
                    h.answered();
                }
                answer
            }
        }
    }
}

/// `query` results: `Array<{ id, score, metadata? }>`.
fn parse_hits(v: Value) -> Result<Vec<StoreHit>> {
    let bad = |what: String| {
        Error::vector_store(format!(
            "vectorStore.query must resolve to Array<{{ id: string, score: number, metadata?: object }}>: {what}"
        ))
    };
    let Value::Array(items) = v else { return Err(bad(format!("got {}", json_kind(&v)))) };
    items
        .into_iter()
        .enumerate()
        .map(|(i, item)| {
            let Value::Object(mut o) = item else { return Err(bad(format!("item {i} is {}", json_kind(&item)))) };
            let id = match o.remove("id") {
                Some(Value::String(s)) => s,
                Some(Value::Number(n)) => n.to_string(),
                other => return Err(bad(format!("item {i} has id {}", other.as_ref().map_or("undefined", json_kind)))),
            };
            let score = match o.remove("score") {
                Some(Value::Number(n)) => n.as_f64().unwrap_or(f64::NAN),
                // A `NaN` (the binding passes it as null: PgVector's cosine of
                // an all-zero vector) is 0, as the embedded store scores it.
                Some(Value::Null) => 0.0,
                other => {
                    return Err(bad(format!("item {i} has score {}", other.as_ref().map_or("undefined", json_kind))))
                }
            };
            let metadata = match o.remove("metadata") {
                Some(Value::Object(m)) => Some(m),
                None | Some(Value::Null) => None,
                Some(other) => return Err(bad(format!("item {i} has metadata {}", json_kind(&other)))),
            };
            Ok(StoreHit { id, score, metadata })
        })
        .collect()
}
