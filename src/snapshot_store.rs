//! The user's snapshot store (`persist: { store }`) as core's
//! `SnapshotStoreCall`: each call goes through lib/runtime.js's
//! `snapshotStoreCaller`, which checks the store's answer and puts it in
//! one shape; bytes cross as Buffers.

use crate::error::host_error;
use crate::js::*;
use crate::shape::MaybePromise;
use napi::bindgen_prelude::*;
use napi::threadsafe_function::ThreadsafeFunction;
use napi_derive::napi;
use workspace_search_core::engine::host::{
    HostBytes, HostFuture, PutCondition, PutOutcome, SnapshotStoreCall, StoredObject,
};

/// A call of the store, as `snapshotStoreCaller` takes it.
#[napi(object)]
pub struct SnapshotRequest {
    pub method: String,
    pub key: String,
    #[napi(ts_type = "Uint8Array")]
    pub bytes: Option<Buffer>,
    pub if_match: Option<String>,
    pub if_none_match: Option<bool>,
    /// `get` of the bytes `[start, end)` only.
    pub start: Option<i64>,
    pub end: Option<i64>,
}

/// Its answer (`null`: a key not there).
#[napi(object)]
pub struct SnapshotAnswer {
    #[napi(ts_type = "Uint8Array")]
    pub bytes: Option<Buffer>,
    pub etag: Option<String>,
    pub conflict: Option<bool>,
}

type CallerFn =
    ThreadsafeFunction<SnapshotRequest, MaybePromise<Option<SnapshotAnswer>>, SnapshotRequest, Status, false, true>;

pub struct JsSnapshotStore {
    caller: CallerFn,
}

impl JsSnapshotStore {
    pub fn from_js(env: &Env, v: &Unknown) -> Checked<JsSnapshotStore> {
        let obj = to_object(v, "persist.store")?;
        for name in ["get", "put"] {
            let m: Unknown = obj.get_named_property_unchecked(name)?;
            if m.get_type()? != napi::ValueType::Function {
                return Err(Fail::Type(format!("persist.store.{name} must be a function, got {}", describe(&m))));
            }
        }
        let caller = runtime_fn(env, "snapshotStoreCaller")?.call(*v)?;
        // SAFETY: lib's snapshotStoreCaller returns a function of one request
        // object to a promise of an answer object or null (checked there).
        let f: Function<SnapshotRequest, MaybePromise<Option<SnapshotAnswer>>> = unsafe { caller.cast()? };
        Ok(JsSnapshotStore { caller: f.build_threadsafe_function().weak::<true>().build()? })
    }

    /// The store's `cacheKey` (where it keeps the tenant: `s3SnapshotStore`
    /// gives `s3://bucket/prefix`), if it has one.
    pub fn cache_key_of(v: &Unknown) -> Checked<Option<String>> {
        let obj = to_object(v, "persist.store")?;
        let key: Unknown = obj.get_named_property_unchecked("cacheKey")?;
        match key.get_type()? {
            napi::ValueType::Undefined => Ok(None),
            napi::ValueType::String => Ok(Some(to_string(&key, "persist.store.cacheKey")?).filter(|k| !k.is_empty())),
            _ => Err(Fail::Type(format!("persist.store.cacheKey must be a string, got {}", describe(&key)))),
        }
    }

    async fn call(&self, request: SnapshotRequest) -> Result<Option<SnapshotAnswer>> {
        self.caller.call_async_catch(request).await?.settle().await
    }
}

fn request(method: &str, key: &str) -> SnapshotRequest {
    SnapshotRequest {
        method: method.into(),
        key: key.into(),
        bytes: None,
        if_match: None,
        if_none_match: None,
        start: None,
        end: None,
    }
}

impl JsSnapshotStore {
    async fn get_object(&self, r: SnapshotRequest) -> workspace_search_core::engine::Result<Option<StoredObject>> {
        let answer = self.call(r).await.map_err(host_error)?;
        Ok(answer.map(|a| StoredObject {
            // Read in place, not copied (`HostBytes`).
            bytes: a.bytes.map_or_else(|| HostBytes::from(Vec::new()), HostBytes::new),
            etag: a.etag.unwrap_or_default(),
        }))
    }
}

impl SnapshotStoreCall for JsSnapshotStore {
    fn get<'a>(&'a self, key: &'a str) -> HostFuture<'a, Option<StoredObject>> {
        Box::pin(self.get_object(request("get", key)))
    }

    fn get_range<'a>(&'a self, key: &'a str, range: std::ops::Range<u64>) -> HostFuture<'a, Option<StoredObject>> {
        let mut r = request("get", key);
        // (Parts are far below 2^53 bytes: exact as JavaScript numbers.)
        (r.start, r.end) = (Some(range.start as i64), Some(range.end as i64));
        Box::pin(self.get_object(r))
    }

    fn delete<'a>(&'a self, key: &'a str) -> HostFuture<'a, bool> {
        Box::pin(async move {
            // `null`: the store has no `delete`.
            let answer = self.call(request("delete", key)).await.map_err(host_error)?;
            Ok(answer.is_some())
        })
    }

    fn put<'a>(&'a self, key: &'a str, bytes: Vec<u8>, condition: Option<PutCondition>) -> HostFuture<'a, PutOutcome> {
        Box::pin(async move {
            let mut r = request("put", key);
            r.bytes = Some(bytes.into());
            match condition {
                Some(PutCondition::IfMatch(etag)) => r.if_match = Some(etag),
                Some(PutCondition::IfNoneMatch) => r.if_none_match = Some(true),
                None => {}
            }
            let answer = self.call(r).await.map_err(host_error)?;
            Ok(match answer {
                Some(SnapshotAnswer { conflict: Some(true), .. }) => PutOutcome::Conflict,
                // No etag: refused by core (a later conditional write needs one).
                Some(SnapshotAnswer { etag, .. }) => PutOutcome::Written { etag: etag.unwrap_or_default() },
                None => PutOutcome::Written { etag: String::new() },
            })
        })
    }
}
