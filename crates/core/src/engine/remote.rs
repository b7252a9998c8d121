//! `persist: { store }`: the snapshot in the host's object storage
//! (`host::SnapshotStoreCall`, e.g. S3) instead of a directory. A save
//! writes the snapshot as one content-addressed part, then the manifest
//! with a conditional write over the version this workspace attached (or
//! only if there is none): when another server saved first, the write is
//! refused and the save fails with a conflict, the in-memory state kept
//! (it is not merged: attach again to take the other writer's state).
//! Every call is bounded by `storeTimeoutMs`; a store that fails is an
//! error of that call, never a wrong answer.

use super::error::{Error, Result};
use super::host::{PutCondition, PutOutcome, SnapshotStoreCall, StoredObject};
use super::{blocking, Engine};
use crate::persist::disk;
use crate::persist::remote::{Manifest, PartRef, MANIFEST};
use crate::persist::{Snapshot, SnapshotError};
use parking_lot::Mutex;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

/// A workspace's snapshot store, and the manifest version it attached or last wrote.
pub struct RemoteSnapshots {
    pub store: Arc<dyn SnapshotStoreCall>,
    pub timeout: Duration,
    /// `None`: no manifest was there (the first save writes only if there still is none).
    etag: Mutex<Option<String>>,
    /// Another writer saved first: saves fail until the workspace attaches again.
    conflicted: Mutex<bool>,
}

impl RemoteSnapshots {
    pub fn new(store: Arc<dyn SnapshotStoreCall>, timeout: Duration) -> RemoteSnapshots {
        RemoteSnapshots { store, timeout, etag: Mutex::new(None), conflicted: Mutex::new(false) }
    }

    /// Another writer saved first (since this workspace attached).
    pub fn conflicted(&self) -> bool {
        *self.conflicted.lock()
    }

    /// One call of the store, bounded by the timeout; its failure a store error.
    async fn call<T>(&self, what: &str, call: impl Future<Output = Result<T>>) -> Result<T> {
        let ms = self.timeout.as_millis();
        match tokio::time::timeout(self.timeout, call).await {
            Err(_) => Err(Error::store(format!("persist.store: {what} did not answer within {ms} ms"))),
            Ok(Err(e)) => Err(Error::store(format!("persist.store: {what} failed: {}", e.reason))),
            Ok(Ok(v)) => Ok(v),
        }
    }

    /// The snapshot the manifest names, checked (`Ok(Err(..))`: what the
    /// store holds is not a usable snapshot: a truncated or foreign part).
    pub async fn fetch(&self) -> Result<std::result::Result<Option<Snapshot>, SnapshotError>> {
        let manifest = self.call("get manifest.json", self.store.get(MANIFEST)).await?;
        let Some(StoredObject { bytes, etag }) = manifest else {
            *self.etag.lock() = None;
            return Ok(Ok(None));
        };
        *self.etag.lock() = Some(etag);
        *self.conflicted.lock() = false;
        let manifest = match Manifest::decode(&bytes) {
            Ok(m) => m,
            Err(e) => return Ok(Err(e)),
        };
        let key = manifest.snapshot.key.clone();
        let part = self.call(&format!("get {key}"), self.store.get(&key)).await?;
        let Some(StoredObject { bytes, .. }) = part else {
            return Ok(Err(SnapshotError::Corrupt(format!("the manifest names {key}, which is not there"))));
        };
        blocking(move || {
            manifest.snapshot.check(&bytes)?;
            Snapshot::decode(disk::unframe(&bytes)?).map(Some)
        })
        .await
    }

    /// Writes `bytes` (a framed snapshot) and the manifest naming it, over
    /// the version attached; a conflict when another writer was first.
    pub async fn write(&self, bytes: Vec<u8>) -> Result<()> {
        if *self.conflicted.lock() {
            return Err(conflict());
        }
        let part = PartRef::of(&bytes);
        // Content-addressed: a part already there holds these very bytes.
        let key = part.key.clone();
        self.call(&format!("put {key}"), self.store.put(&key, bytes, Some(PutCondition::IfNoneMatch))).await?;
        let condition = match self.etag.lock().clone() {
            Some(etag) => PutCondition::IfMatch(etag),
            None => PutCondition::IfNoneMatch,
        };
        let manifest = Manifest { snapshot: part }.encode();
        match self.call("put manifest.json", self.store.put(MANIFEST, manifest, Some(condition))).await? {
            PutOutcome::Written { etag } => {
                *self.etag.lock() = Some(etag);
                Ok(())
            }
            PutOutcome::Conflict => {
                *self.conflicted.lock() = true;
                Err(conflict())
            }
        }
    }
}

fn conflict() -> Error {
    Error::conflict(
        "persist.store: another workspace saved this snapshot first; this one keeps its state in memory and saves nothing until it attaches again (init() on a new Workspace)",
    )
}

impl Engine {
    /// The snapshot's framed bytes, encoded off the runtime under the
    /// index's read lock (as a save to a directory is).
    pub(super) async fn framed_snapshot(self: &Arc<Self>) -> Result<Vec<u8>> {
        let me = self.clone();
        blocking(move || me.frame_snapshot())
            .await?
            .map_err(|e| Error::from_reason(format!("persist: could not encode the snapshot: {e}")))
    }
}
