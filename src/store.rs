//! The vector store behind a workspace: the embedded one (Rust, no
//! boundary crossing) or any JavaScript object with Mastra's `MastraVector`
//! methods, called with `this` bound to it and Mastra's argument shapes.

use crate::js::*;
use crate::shape::{Js, Json, Lenient, MaybePromise};
use napi::bindgen_prelude::*;
use napi::threadsafe_function::ThreadsafeFunction;
use parking_lot::RwLock;
use serde_json::{json, Map, Value};
use std::sync::Arc;
use workspace_search_core::persist::intent::{Held, IntentLog};
use workspace_search_core::search::hybrid::StoreHit;
use workspace_search_core::vectors::filter::{json_kind, Filter};
use workspace_search_core::vectors::plan::MAX_UPSERT;
use workspace_search_core::vectors::store::{Metric, VectorStore};

type StoreFn = ThreadsafeFunction<Js<Value>, MaybePromise<Lenient<Json>>, Js<Value>, Status, false, true>;

/// A JavaScript store: one caller (lib/runtime.js `storeCaller`) that looks
/// the method up on the store at each call, as Mastra's `this.vectorStore.x(...)`
/// does, so that methods replaced or spied on later are the ones called.
pub struct JsStore {
    caller: StoreFn,
    /// With `persist`: what is about to reach the store, written down first
    /// (core's `persist::intent`), set once this workspace writes the directory.
    pub intent: std::sync::OnceLock<Arc<IntentLog>>,
}

pub enum Store {
    Local(Arc<RwLock<VectorStore>>),
    Js(JsStore),
}

/// What `storeCaller` answers for a method the store does not have.
const MISSING_METHOD: &str = "workspace-search:missing-method";

impl JsStore {
    pub fn from_js(env: &Env, v: &Unknown) -> Checked<JsStore> {
        let obj = to_object(v, "vectorStore")?;
        for name in ["upsert", "query"] {
            let m: Unknown = obj.get_named_property_unchecked(name)?;
            if m.get_type()? != napi::ValueType::Function {
                return Err(Fail::Type(format!("vectorStore.{name} must be a function, got {}", describe(&m))));
            }
        }
        let caller = runtime_fn(env, "storeCaller")?.call(*v)?;
        // SAFETY: lib's storeCaller returns a function; its answers are read leniently.
        let f: Function<Js<Value>, MaybePromise<Lenient<Json>>> = unsafe { caller.cast()? };
        Ok(JsStore { caller: f.build_threadsafe_function().weak::<true>().build()?, intent: Default::default() })
    }

    /// Calls `store[name](args)`; `None` when the store has no such method.
    async fn call(&self, name: &str, args: Value) -> Result<Option<Value>> {
        let request = json!({ "method": name, "args": args });
        let Lenient(answer) = self.caller.call_async_catch(Js(request)).await?.settle().await?;
        let value = answer
            .map(|j| j.0)
            .map_err(|e| Error::from_reason(format!("vectorStore.{name} returned an invalid value: {e}")))?;
        Ok((value != Value::String(MISSING_METHOD.into())).then_some(value))
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

    /// A method every store has (`upsert`, `query`).
    async fn call_required(&self, name: &str, args: Value) -> Result<Value> {
        self.call(name, args).await?.ok_or_else(|| Error::from_reason(format!("vectorStore.{name} must be a function")))
    }
}

fn local_err(e: impl std::fmt::Display) -> Error {
    Error::from_reason(e.to_string())
}

impl Store {
    pub fn is_local(&self) -> bool {
        matches!(self, Store::Local(_))
    }

    pub async fn create_index(&self, index_name: &str, dimension: usize) -> Result<()> {
        match self {
            Store::Local(s) => s.write().create_index(index_name, dimension, Metric::Cosine).map_err(local_err),
            Store::Js(js) => {
                js.call("createIndex", json!({ "indexName": index_name, "dimension": dimension })).await.map(drop)
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
            Store::Js(js) => {
                let held = js.intend_ids(&ids)?;
                let args = json!({ "indexName": index_name, "vectors": vectors, "metadata": metadata, "ids": ids });
                let answer = js.call_required("upsert", args).await.map(drop);
                if let Some(h) = held {
                    h.answered();
                }
                answer
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
            Store::Js(js) => {
                let mut args = json!({ "indexName": index_name, "queryVector": vector, "topK": top_k });
                if let Some((_, raw)) = filter {
                    args["filter"] = raw.clone();
                }
                parse_hits(js.call_required("query", args).await?)
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
            Store::Js(js) => {
                let held = js.intend_ids(ids)?;
                // An error is an answer too: only a call cut short stays held.
                let answer = async {
                    // One call per 100 ids where the store can; else one per id.
                    for chunk in ids.chunks(MAX_UPSERT) {
                        if js.call("deleteVectors", json!({ "indexName": index_name, "ids": chunk })).await?.is_some() {
                            continue;
                        }
                        for id in chunk {
                            js.call("deleteVector", json!({ "indexName": index_name, "id": id })).await?;
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
            Store::Js(js) => {
                let held = match js.intent.get() {
                    Some(log) => Some(
                        log.source(source_file)
                            .map_err(|e| Error::from_reason(format!("persist: cannot record a vector delete ({e})")))?,
                    ),
                    None => None,
                };
                let args = json!({ "indexName": index_name, "filter": { "sourceFile": source_file } });
                let answer = js.call("deleteVectors", args).await.map(drop);
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
        Error::from_reason(format!(
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
