//! A JavaScript vector store (any object with Mastra's `MastraVector`
//! methods) as core's `StoreCall`: each method called by name with `this`
//! bound to the store; core builds Mastra's argument shapes and reads the
//! answers.

use crate::error::host_error;
use crate::js::*;
use crate::shape::{Js, MaybePromise};
use napi::bindgen_prelude::*;
use napi::threadsafe_function::ThreadsafeFunction;
use serde_json::{json, Value};
use workspace_search_core::engine;
use workspace_search_core::engine::host::{HostFuture, StoreCall};

/// Answers: the missing-method marker, `query`'s answer as checked JSON
/// text, or nothing for the methods whose answer is ignored.
type StoreFn = ThreadsafeFunction<Js<Value>, MaybePromise<Option<String>>, Js<Value>, Status, false, true>;

/// A JavaScript store: one caller (lib/runtime.js `storeCaller`) that looks
/// the method up on the store at each call, as Mastra's `this.vectorStore.x(...)`
/// does, so that methods replaced or spied on later are the ones called.
pub struct JsStore {
    caller: StoreFn,
}

/// What `storeCaller` answers for a method the store does not have.
const MISSING_METHOD: &str = "workspace-search:missing-method";
/// How `storeCaller`'s answer begins when `query` answered other than JSON
/// data (the rest says why).
const BAD_ANSWER: &str = "workspace-search:bad-answer:";

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
        // SAFETY: lib's storeCaller returns a function answering a promise
        // of a string or null.
        let f: Function<Js<Value>, MaybePromise<Option<String>>> = unsafe { caller.cast()? };
        Ok(JsStore { caller: f.build_threadsafe_function().weak::<true>().build()? })
    }

    /// Calls `store[name](args)`; `None` when the store has no such method,
    /// `Null` for a method whose answer is ignored. What the store threw
    /// comes back as it was; an answer that is not JSON data is a
    /// `VectorStoreError`.
    async fn call_js(&self, name: &str, args: Value) -> engine::Result<Option<Value>> {
        let request = json!({ "method": name, "args": as_js_numbers(args) });
        let answer = async { self.caller.call_async_catch(Js(request)).await?.settle().await };
        match answer.await.map_err(host_error)? {
            None => Ok(Some(Value::Null)),
            Some(marker) if marker == MISSING_METHOD => Ok(None),
            Some(text) => match text.strip_prefix(BAD_ANSWER) {
                Some(why) => Err(engine::Error::vector_store(why)),
                // Checked by lib/json.js: plain JSON data, bounded depth.
                None => serde_json::from_str(&text)
                    .map(Some)
                    .map_err(|e| engine::Error::vector_store(format!("vectorStore.{name} answer: {e}"))),
            },
        }
    }
}

/// `v` with every integer past 32 bits as a double, as it came from
/// JavaScript (a `Date.now()` in metadata): napi's serde conversion makes
/// such an integer a BigInt, which a store that writes JSON (PgVector,
/// LibSQL) cannot take, and which no filter compares with a number.
fn as_js_numbers(v: Value) -> Value {
    match v {
        Value::Number(n)
            if n.as_i64().is_some_and(|i| i32::try_from(i).is_err())
                || n.as_u64().is_some_and(|u| u > u32::MAX as u64) =>
        {
            n.as_f64().and_then(serde_json::Number::from_f64).map_or(Value::Number(n), Value::Number)
        }
        Value::Array(items) => Value::Array(items.into_iter().map(as_js_numbers).collect()),
        Value::Object(map) => Value::Object(map.into_iter().map(|(k, v)| (k, as_js_numbers(v))).collect()),
        other => other,
    }
}

impl StoreCall for JsStore {
    fn call<'a>(&'a self, method: &'a str, args: Value) -> HostFuture<'a, Option<Value>> {
        Box::pin(self.call_js(method, args))
    }
}
