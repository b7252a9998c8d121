//! `persist: { store }`: the snapshot in the host's object storage
//! (`host::SnapshotStoreCall`, e.g. S3) instead of a directory. A save
//! writes the snapshot as one content-addressed part, then the manifest
//! with a conditional write over the version this workspace attached (or
//! only if there is none): when another server saved first, the write is
//! refused and the save fails with a conflict, the in-memory state kept
//! (it is not merged: attach again to take the other writer's state).
//! Every call is bounded by `storeTimeoutMs`; a store that fails is an
//! error of that call (a write whose answer was lost is confirmed by
//! reading the manifest back). A snapshot that was there but could not be
//! used is replaced only by a workspace that rebuilt it all from files.

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

/// A workspace's snapshot store, and what it knows of the manifest there.
pub struct RemoteSnapshots {
    store: Arc<dyn SnapshotStoreCall>,
    timeout: Duration,
    state: Mutex<RemoteState>,
    cache: Option<PartCache>,
}

/// `cacheDir`: parts fetched or saved, kept on local disk by their content
/// name (so a cached part is never stale), at most `max_bytes` of them,
/// loaded from there mapped, as a directory's snapshot is.
pub struct PartCache {
    pub dir: std::path::PathBuf,
    pub max_bytes: u64,
}

#[derive(Default)]
struct RemoteState {
    /// The manifest's version as attached or last written (`None`: there
    /// was none; the first save writes only if there still is none).
    etag: Option<String>,
    /// Another writer saved first: saves fail until the workspace attaches again.
    conflicted: bool,
    /// A manifest was there but its snapshot could not be used (why).
    unreadable: Option<String>,
}

impl RemoteSnapshots {
    pub fn new(store: Arc<dyn SnapshotStoreCall>, timeout: Duration, cache: Option<PartCache>) -> RemoteSnapshots {
        RemoteSnapshots { store, timeout, state: Mutex::default(), cache }
    }

    /// The cached copy of `part`, loaded (`None`: not cached, or unusable).
    async fn cached(&self, part: &PartRef) -> Option<Snapshot> {
        let path = self.cache.as_ref()?.dir.join(cache_name(part));
        std::fs::symlink_metadata(&path).ok().filter(|m| m.is_file() && m.len() == part.raw_size)?;
        blocking(move || {
            // Most recently used: kept longest by `trim_cache`.
            if let Ok(f) = std::fs::File::open(&path) {
                let _ = f.set_modified(std::time::SystemTime::now());
            }
            let loaded = Snapshot::load_file(&path);
            if loaded.is_err() {
                // Damaged on this disk: fetched again, and cached anew.
                let _ = std::fs::remove_file(&path);
            }
            loaded.ok()
        })
        .await
        .ok()
        .flatten()
    }

    /// Keeps `bytes` (checked as `part`'s) in the cache, then the cache
    /// within its bound; where it is, if it could be written.
    fn keep_cached(&self, part: &PartRef, bytes: &[u8]) -> Option<std::path::PathBuf> {
        let cache = self.cache.as_ref()?;
        let path = disk::cache_part(&cache.dir, &cache_name(part), bytes).ok()?;
        disk::trim_cache(&cache.dir, cache.max_bytes, &path);
        Some(path)
    }

    /// Another writer saved first (since this workspace attached).
    pub fn conflicted(&self) -> bool {
        self.state.lock().conflicted
    }

    /// The snapshot there was read but cannot be used here (other options):
    /// only a workspace that rebuilt it all from files replaces it.
    pub fn unusable(&self, why: String) {
        self.state.lock().unreadable = Some(why);
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

    /// `get`, with the version tag every answer must carry.
    async fn get(&self, key: &str) -> Result<Option<StoredObject>> {
        let got = self.call(&format!("get {key}"), self.store.get(key)).await?;
        if got.as_ref().is_some_and(|o| o.etag.is_empty()) {
            return Err(Error::store(format!("persist.store: get {key} answered no etag")));
        }
        Ok(got)
    }

    /// The snapshot the manifest names, checked (`Ok(Err(..))`: what the
    /// store holds is not a usable snapshot: a truncated or foreign part).
    pub async fn fetch(&self) -> Result<std::result::Result<Option<Snapshot>, SnapshotError>> {
        let Some(StoredObject { bytes, etag }) = self.get(MANIFEST).await? else {
            *self.state.lock() = RemoteState::default();
            return Ok(Ok(None));
        };
        *self.state.lock() = RemoteState { etag: Some(etag), ..Default::default() };
        let fetched = self.fetch_part(&bytes).await?;
        if let Err(e) = &fetched {
            self.state.lock().unreadable = Some(e.to_string());
        }
        Ok(fetched)
    }

    async fn fetch_part(&self, manifest: &[u8]) -> Result<std::result::Result<Option<Snapshot>, SnapshotError>> {
        let manifest = match Manifest::decode(manifest) {
            Ok(m) => m,
            Err(e) => return Ok(Err(e)),
        };
        if let Some(cached) = self.cached(&manifest.snapshot).await {
            return Ok(Ok(Some(cached)));
        }
        let key = manifest.snapshot.key.clone();
        let Some(StoredObject { bytes, .. }) = self.get(&key).await? else {
            return Ok(Err(SnapshotError::Corrupt(format!("the manifest names {key}, which is not there"))));
        };
        let (part, cached) = (manifest.snapshot.clone(), self.cache.is_some());
        let checked = blocking(move || manifest.snapshot.unpack(bytes)).await?;
        let bytes = match checked {
            Ok(b) => b,
            Err(e) => return Ok(Err(e)),
        };
        // Cached, then loaded from the cache mapped (texts read when used); else decoded here.
        if cached {
            if let Some(path) = self.keep_cached(&part, &bytes) {
                drop(bytes);
                return blocking(move || Snapshot::load_file(&path).map(Some)).await;
            }
        }
        blocking(move || Snapshot::decode(disk::unframe(&bytes)?).map(Some)).await
    }

    /// Writes `bytes` (a framed snapshot) and the manifest naming it, over
    /// the version attached; a conflict when another writer was first.
    /// `replaces_unreadable`: whether this workspace may replace a snapshot
    /// it could not use (it rebuilt everything from files).
    pub async fn write(&self, raw: Vec<u8>, replaces_unreadable: bool) -> Result<()> {
        {
            let state = self.state.lock();
            if state.conflicted {
                return Err(conflict());
            }
            if let (Some(why), false) = (&state.unreadable, replaces_unreadable) {
                return Err(Error::store(format!(
                    "persist.store: the snapshot there could not be used ({why}), and this workspace's documents do not all come from files: saving would replace documents it never read; remove the tenant's manifest.json to start it anew"
                )));
            }
        }
        // Packed off the runtime (zstd over the whole snapshot), then kept unpacked in the cache.
        let (part, bytes, raw) = blocking(move || {
            let (part, bytes) = PartRef::pack(&raw);
            (part, bytes, raw)
        })
        .await?;
        self.keep_cached(&part, &raw);
        drop(raw);
        // Content-addressed: a part already there holds these very bytes.
        let key = part.key.clone();
        self.call(&format!("put {key}"), self.store.put(&key, bytes, Some(PutCondition::IfNoneMatch))).await?;
        let condition = match self.state.lock().etag.clone() {
            Some(etag) => PutCondition::IfMatch(etag),
            None => PutCondition::IfNoneMatch,
        };
        let manifest = Manifest { snapshot: part }.encode();
        let put = self.call("put manifest.json", self.store.put(MANIFEST, manifest.clone(), Some(condition))).await;
        let etag = match put {
            Ok(PutOutcome::Written { etag }) if !etag.is_empty() => etag,
            Ok(PutOutcome::Written { .. }) => {
                return Err(Error::store("persist.store: put manifest.json answered no etag"))
            }
            // Refused, or unanswered: a retry of a write that landed meets
            // that write, and a timed-out call may still land. The manifest
            // there is ours if it holds our very bytes (the same state).
            Ok(PutOutcome::Conflict) | Err(_) => match self.get(MANIFEST).await {
                Ok(Some(there)) if there.bytes == manifest => there.etag,
                Ok(_) if matches!(put, Ok(PutOutcome::Conflict)) => {
                    self.state.lock().conflicted = true;
                    return Err(conflict());
                }
                Ok(_) => return Err(put.err().expect("an error")),
                Err(e) => return Err(put.err().unwrap_or(e)),
            },
        };
        let mut state = self.state.lock();
        (state.etag, state.unreadable) = (Some(etag), None);
        Ok(())
    }
}

/// A cached part's file name: its content hash.
fn cache_name(part: &PartRef) -> String {
    format!("{}.wss", part.hash)
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
