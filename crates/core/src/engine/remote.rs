//! `persist: { store }`: the snapshot in the host's object storage
//! (`host::SnapshotStoreCall`, e.g. S3) instead of a directory. A save
//! writes the snapshot as two content-addressed parts (the texts; the
//! rest, the head), then the manifest with a conditional write over the
//! version this workspace attached (or only if there is none): when
//! another server saved first, the write is refused and the save fails
//! with a conflict, the in-memory state kept (it is not merged: attach
//! again to take the other writer's state). An attach needs the manifest
//! and the head; the texts are fetched in the background once the head is
//! decoded, and a search waits for them only when it reads them
//! (`texts_ready`). Every call is
//! bounded by `storeTimeoutMs`; a store that fails is an error of that
//! call (a write whose answer was lost is confirmed by reading the
//! manifest back). A snapshot that was there but could not be used is
//! replaced only by a workspace that rebuilt it all from files.

use super::error::{Error, Result};
use super::host::{PutCondition, PutOutcome, SnapshotStoreCall, StoredObject};
use super::{blocking, Engine};
use crate::bytes::section::Backing;
use crate::bytes::stored::{StoredFile, TextsApart};
use crate::persist::disk;
use crate::persist::remote::{tenant_of, Manifest, PartFill, PartRef, Retired, FRAME, MANIFEST};
use crate::persist::{Snapshot, SnapshotError};
use futures::StreamExt;
use parking_lot::Mutex;
use std::future::Future;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// A workspace's snapshot store, and what it knows of the manifest there.
/// `persist: { store, storeTimeoutMs, cacheDir, cacheMaxBytes, retainMs }`.
pub struct StoreConfig {
    pub store: Arc<dyn SnapshotStoreCall>,
    /// How long a call of the store may take.
    pub timeout: Duration,
    /// The local cache of its parts (`cacheDir`).
    pub cache: Option<PartCache>,
    /// How long the parts of a snapshot a save replaced stay in the store.
    pub retain: Duration,
}

pub struct RemoteSnapshots {
    store: Arc<dyn SnapshotStoreCall>,
    /// The workspace's `id`, named in the manifests it saves: a manifest
    /// of another is not attached (two tenants under one prefix).
    tenant: String,
    timeout: Duration,
    retain: Duration,
    state: Mutex<RemoteState>,
    cache: Option<Arc<PartCache>>,
    /// The texts of the snapshot attached, until they are here.
    texts: Mutex<Option<Arc<TextsFetch>>>,
    /// The store answered a ranged read with the range asked, not the whole
    /// object: a search then asks for all its frames at once, without
    /// first trying one alone.
    ranged: AtomicBool,
    /// Texts parts the store was found not to hold whole (truncated,
    /// foreign): a snapshot whose postings one holds is not attached again
    /// (`rebuildSearchIndex()` then builds from the files), and a save of
    /// the same bytes writes the part over the one there.
    broken_parts: Mutex<Vec<String>>,
    /// Parts this workspace wrote (not found there) for saves whose
    /// manifest did not land: never named, so never retired nor deleted;
    /// a save of the same bytes names them again (`put_named`) rather than
    /// leave one more behind at each try.
    written_unnamed: Mutex<Vec<PartRef>>,
    /// A rebuild from the files is running because a texts part holding
    /// the postings was found broken (`Engine::repair_from_files`).
    repairing: AtomicBool,
    /// The index was dropped for its unreadable postings and is not built
    /// again yet (`Engine::drop_unreadable_postings`): searches fail, typed,
    /// rather than answer from what is there.
    emptied: AtomicBool,
    /// The `cacheDir` file the attached snapshot was loaded from, if it was.
    from_cache: Mutex<Option<std::path::PathBuf>>,
    /// A text of the cached copy attached failed its check: every search
    /// fails, typed, until the next attach (the document it left out
    /// might be any search's).
    cache_damaged: AtomicBool,
    /// The last attach failed (the store's error): searches fail with it
    /// until one succeeds.
    unattached: Mutex<Option<String>>,
}

/// `cacheDir`: snapshots fetched or saved, kept on local disk by their
/// parts' content names (so a cached one is never stale), at most
/// `max_bytes` of them, loaded from there mapped, as a directory's is.
pub struct PartCache {
    pub dir: std::path::PathBuf,
    pub max_bytes: u64,
    /// Where the store keeps this tenant (the store's `cacheKey`): the
    /// manifest last seen there is kept here under it, so that a warm
    /// attach loads its snapshot while the manifest is fetched.
    pub key: Option<String>,
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
    /// A manifest this workspace sent whose answer was lost: it may have
    /// landed after it was read back (`put_manifest`).
    unconfirmed: Option<Vec<u8>>,
    /// The manifest as attached or last written: a refused write over it
    /// while it is still there is the store's doing, not another writer's.
    manifest: Option<Vec<u8>>,
}

/// A texts part on its way, where its texts are read once it is here,
/// and how its latest fetch went.
struct TextsFetch {
    manifest: Manifest,
    apart: Arc<TextsApart>,
    /// The head's bytes, kept until the texts arrive to cache the two as
    /// one snapshot file (with a cache only).
    head: Mutex<Option<Arc<Backing>>>,
    outcome: tokio::sync::watch::Sender<Outcome>,
    /// Whether the attach is done with its head (decoded or not): the
    /// texts are fetched after it, so that an attach has the cores first.
    head_settled: tokio::sync::watch::Sender<bool>,
}

/// Marks the head settled when the attach is done with it, or is dropped.
struct HeadSettled(Arc<TextsFetch>);

impl Drop for HeadSettled {
    fn drop(&mut self) {
        self.0.head_settled.send_replace(true);
    }
}

#[derive(Clone)]
enum Outcome {
    /// Not fetched whole yet (a large part read by range): the first call
    /// that needs it whole starts the fetch.
    Idle,
    Running,
    Here,
    /// The store failed (down, slow): tried again by the next call. The
    /// error, with what the store threw, goes to the first reader to meet
    /// it; later ones get its message.
    Failed(String, Arc<Mutex<Option<Error>>>),
    /// The store holds something else (truncated, foreign): for good.
    Broken(String),
}

/// One call of the store, bounded by the timeout; its failure a store error.
async fn bounded<T>(timeout: Duration, what: &str, call: impl Future<Output = Result<T>>) -> Result<T> {
    let ms = timeout.as_millis();
    match tokio::time::timeout(timeout, call).await {
        Err(_) => Err(Error::store(format!("persist.store: {what} did not answer within {ms} ms"))),
        Ok(Err(e)) => Err(Error::store_caused(format!("persist.store: {what} failed: {}", e.reason), e)),
        Ok(Ok(v)) => Ok(v),
    }
}

/// `get`, with the version tag every answer must carry.
async fn get(store: &dyn SnapshotStoreCall, timeout: Duration, key: &str) -> Result<Option<StoredObject>> {
    let got = bounded(timeout, &format!("get {key}"), store.get(key)).await?;
    if got.as_ref().is_some_and(|o| o.etag.is_empty()) {
        return Err(Error::store(format!("persist.store: get {key} answered no etag")));
    }
    Ok(got)
}

/// A part's bytes from the store, checked and unpacked (`Ok(Err(..))`: a
/// truncated or foreign object, or none where the manifest names one). One
/// that fails its checks is fetched once more before it is taken for what
/// the store holds: an answer damaged on its way (a connection cut short, a
/// store without checksums) made a whole tenant start empty, or fail every
/// search, for good.
async fn fetch_part(
    store: &dyn SnapshotStoreCall,
    timeout: Duration,
    part: &PartRef,
) -> Result<std::result::Result<Arc<Backing>, SnapshotError>> {
    let mut tries = 0;
    loop {
        let Some(StoredObject { bytes, .. }) = get(store, timeout, &part.key).await? else {
            return Ok(Err(absent(part)));
        };
        let checked = part.clone();
        match blocking(move || checked.unpack(&bytes)).await? {
            Err(_) if tries == 0 => tries += 1,
            unpacked => return Ok(unpacked),
        }
    }
}

/// A part read by runs of its frames (`INDEX_RUNS` ranged reads at once),
/// each unpacked as it arrives, when it has at least `RANGE_MIN_FRAMES`
/// frames; a smaller one whole (`fetch_part`). A store that ignores ranges
/// answers a run with the whole part, which is then used whole (the first
/// such answer; the others are dropped unread); a run that is missing,
/// fails its checks or fails in the store falls back to the whole part,
/// which says what the store holds. `Ok(Ok((part, whole)))`: `whole` when
/// the part's content hash was checked; by runs only each frame was (the
/// caller then checks the snapshot's own sum).
async fn fetch_part_by_runs(
    store: &dyn SnapshotStoreCall,
    timeout: Duration,
    part: &PartRef,
    ranged: &AtomicBool,
) -> Result<std::result::Result<(Arc<Backing>, bool), SnapshotError>> {
    let whole = |got: std::result::Result<Arc<Backing>, SnapshotError>| got.map(|b| (b, true));
    // (A small part is read whole before a buffer is taken for runs.)
    let fill = match (part.frames.len() >= RANGE_MIN_FRAMES).then(|| PartFill::new(part.clone())) {
        Some(Ok(fill)) => Arc::new(fill),
        _ => return fetch_part(store, timeout, part).await.map(whole),
    };
    let taken = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let runs = part.frame_runs(INDEX_RUNS);
    let filling = fill.clone();
    let mut arrivals = futures::stream::iter(runs)
        .map(move |run| fill_run(store, timeout, part, filling.clone(), taken.clone(), run, ranged))
        .buffer_unordered(INDEX_RUNS);
    while let Some(arrived) = arrivals.next().await {
        match arrived {
            Ok(Ok(None)) => {}
            Ok(Ok(Some(got))) => return Ok(Ok((got, true))),
            Ok(Err(_)) | Err(_) => {
                drop((arrivals, fill));
                return fetch_part(store, timeout, part).await.map(whole);
            }
        }
    }
    drop(arrivals);
    let fill = Arc::try_unwrap(fill)
        .map_err(|_| Error::from_reason("workspace-search internal error: a part still filling"))?;
    Ok(blocking(move || fill.finish()).await?.map(|b| (b, false)))
}

/// What a search, or a save, of a workspace whose cached copy was found
/// damaged fails with.
fn cache_damaged() -> Error {
    Error::store(
        "persist.store: a text in the local cache's copy of this snapshot is damaged; the copy is removed, and the next attach (init() on a new Workspace) fetches the snapshot from the store",
    )
}

/// Decodes a fetched index part (`hashed`: read whole and checked against
/// its content hash), its texts `len` bytes in `texts`, its postings apart
/// at `postings` when they are.
fn decode_head(
    head: &Arc<Backing>,
    hashed: bool,
    texts: Arc<StoredFile>,
    len: u64,
    postings: Option<(usize, usize)>,
) -> std::result::Result<Snapshot, SnapshotError> {
    // Read whole, it is not summed again: `unpack` checked the stored bytes
    // against the part's content hash, and they unpack to these bytes only.
    // Read by runs, each frame was checked on its own: the snapshot's own
    // sum is checked beside the decoding, unless the postings it covers are
    // apart (they are not here).
    let framed = disk::frame_apart(head.bytes(), len, postings.map_or(0, |(_, n)| n as u64))?;
    let decode = || Snapshot::decode_apart(framed.payload, head.clone(), texts, len, postings);
    let mut snapshot = if hashed || postings.is_some() {
        decode()?
    } else {
        let (checked, decoded) = rayon::join(|| framed.verify(), decode);
        checked?;
        decoded?
    };
    snapshot.restore_graph();
    Ok(snapshot)
}

/// One run of a part's frames by range, unpacked into `fill`
/// (`Ok(Some(..))`: the store answered the whole part, here unpacked, the
/// first time only: `taken` drops the others unread).
async fn fill_run(
    store: &dyn SnapshotStoreCall,
    timeout: Duration,
    part: &PartRef,
    fill: Arc<PartFill>,
    taken: Arc<std::sync::atomic::AtomicBool>,
    run: std::ops::Range<usize>,
    ranged: &AtomicBool,
) -> Result<std::result::Result<Option<Arc<Backing>>, SnapshotError>> {
    let Some(at) = part.run_span(&run) else { return Ok(Err(absent(part))) };
    let what = format!("get {} bytes {}-{}", part.key, at.start, at.end);
    let Some(StoredObject { bytes, .. }) = bounded(timeout, &what, store.get_range(&part.key, at.clone())).await?
    else {
        return Ok(Err(absent(part)));
    };
    // The store answered the whole part, not the range asked.
    let whole = bytes.len() as u64 == part.size && bytes.len() as u64 != at.end - at.start;
    if whole && taken.swap(true, Ordering::AcqRel) {
        return Ok(Ok(None));
    }
    if bytes.len() as u64 == at.end - at.start && at.end - at.start < part.size {
        ranged.store(true, Ordering::Release);
    }
    let part = part.clone();
    blocking(move || if whole { part.unpack(&bytes).map(Some) } else { fill.fill(run, &bytes).map(|()| None) }).await
}

/// Ranged reads of a large part's runs at once. A 50,000-file tenant's
/// 85 MB index part from the S3 test server, attach medians of four fresh
/// processes: read whole 550 ms; in 1 / 2 / 4 / 8 runs 680 / 510 / 450 /
/// 505 ms (the unpacking of one run keeps up with the transfer of the next).
const INDEX_RUNS: usize = 4;

/// Postings of at least this many bytes are kept apart from the index
/// part, with the texts (`Manifest::postings`): an attach then fetches
/// none of them. Half of a 50,000-file index part's bytes were postings
/// (108 of 210 MB unpacked, 39 of 88 MB stored).
const POSTINGS_APART_AT: usize = 16 * FRAME;

/// A texts part of at least this many frames (MiB unpacked) is read by
/// range until it is here whole: a search reads its results' frames (and
/// those of its terms' postings, when a large index keeps them there). A
/// smaller one is read whole sooner than its frames one by one.
const RANGE_MIN_FRAMES: usize = 16;

/// Neighbouring frames read by one ranged read at most (a search's
/// postings: a frequent term's lie in several; texts of neighbouring files).
const RANGE_RUN_FRAMES: usize = 4;

/// Ranged reads of one search in flight at once (S3 clients keep a few
/// dozen connections per host).
const RANGE_READS_AT_ONCE: usize = 8;

/// What a ranged read of neighbouring frames got.
enum FrameGot {
    /// The frames, by number, each checked and unpacked.
    Frames(Vec<(usize, Vec<u8>)>),
    /// The store answered the whole part (it ignores ranges): unpacked.
    Whole(Arc<Backing>),
    /// No such frame there (the part missing or not whole, a frame that
    /// fails its checks): the fetch of the whole part reports what it is.
    Absent,
    /// The whole part again, after another read of the same search took
    /// it: dropped unread.
    Dropped,
}

/// The neighbouring frames `run` of `part` from the store, by one range.
/// A store that answers the whole part: the first such answer is unpacked
/// (`whole_taken`), the others are dropped unread.
async fn fetch_frames(
    store: &dyn SnapshotStoreCall,
    timeout: Duration,
    part: &PartRef,
    run: std::ops::Range<usize>,
    whole_taken: Arc<AtomicBool>,
) -> Result<FrameGot> {
    let Some(at) = part.run_span(&run) else { return Ok(FrameGot::Absent) };
    let what = format!("get {} bytes {}-{}", part.key, at.start, at.end);
    let got = bounded(timeout, &what, store.get_range(&part.key, at.clone())).await?;
    let Some(StoredObject { bytes, .. }) = got else { return Ok(FrameGot::Absent) };
    let part = part.clone();
    let n = bytes.len() as u64;
    blocking(move || match n {
        n if n == at.end - at.start => {
            let frame = |i: usize| {
                let (span, _) = part.frame_span(i)?;
                let stored = bytes.get((span.start - at.start) as usize..(span.end - at.start) as usize)?;
                part.unpack_frame(i, stored).ok().map(|f| (i, f))
            };
            run.map(frame).collect::<Option<Vec<_>>>().map_or(FrameGot::Absent, FrameGot::Frames)
        }
        n if n == part.size && whole_taken.swap(true, Ordering::AcqRel) => FrameGot::Dropped,
        n if n == part.size => part.unpack(&bytes).map_or(FrameGot::Absent, FrameGot::Whole),
        _ => FrameGot::Absent,
    })
    .await
}

/// `frames` (sorted, each once) as runs of neighbours, none longer than
/// `RANGE_RUN_FRAMES`: one ranged read each.
fn neighbour_runs(frames: &[usize]) -> Vec<std::ops::Range<usize>> {
    let mut runs: Vec<std::ops::Range<usize>> = Vec::new();
    for &i in frames {
        match runs.last_mut() {
            Some(run) if run.end == i && run.len() < RANGE_RUN_FRAMES => run.end = i + 1,
            _ => runs.push(i..i + 1),
        }
    }
    runs
}

/// What to do about a snapshot that cannot be used: it may be one replaced
/// since, whose parts were deleted (never remove a good manifest for it).
const START_ANEW: &str = "if another workspace saved since, a new attach (init() of a new Workspace) reads its snapshot; if not, remove the tenant's manifest.json to start it anew";

/// Fetches of the manifest's snapshot at one attach while the manifest
/// moves on under it (`RemoteSnapshots::fetch`).
const FETCH_TRIES: usize = 3;

fn absent(part: &PartRef) -> SnapshotError {
    SnapshotError::Corrupt(format!(
        "the manifest names {}, which is not there (a save deletes the parts of snapshots replaced persist.retainMs before it: if one replaced this workspace's, attaching again reads the new one)",
        part.key
    ))
}

impl PartCache {
    /// A snapshot's file name here: its two parts' content hashes.
    fn path(&self, manifest: &Manifest) -> std::path::PathBuf {
        self.dir.join(format!("{}-{}.wss", manifest.index.hash, manifest.texts.hash))
    }

    /// The file of the manifest last seen where the store keeps this
    /// tenant (`None` without a `cacheKey`).
    fn last_manifest_path(&self) -> Option<std::path::PathBuf> {
        let key = self.key.as_deref()?;
        Some(self.dir.join(format!("{:032x}{}", xxhash_rust::xxh3::xxh3_128(key.as_bytes()), disk::LAST_MANIFEST)))
    }

    /// The manifest last seen, as it was read (a regular file only, opened
    /// without following a link or blocking on a FIFO; small).
    fn last_manifest(&self) -> Option<Vec<u8>> {
        use std::io::Read;
        let file = disk::open_regular(&self.last_manifest_path()?).ok()?;
        let mut bytes = Vec::new();
        file.take(MAX_MANIFEST_BYTES + 1).read_to_end(&mut bytes).ok()?;
        (bytes.len() as u64 <= MAX_MANIFEST_BYTES).then_some(bytes)
    }

    /// Notes `manifest` as the one last seen (a hint: a torn or lost
    /// write costs the next attach its head start, never its answer).
    /// Callers note only a manifest that changed.
    fn note_manifest(&self, manifest: &[u8]) {
        if let Some(path) = self.last_manifest_path() {
            let _ = disk::replace_small(&path, manifest);
        }
    }

    /// Keeps the snapshot `pieces` make (checked as `manifest`'s parts),
    /// then the cache within its bound; where it is, if it could be written.
    fn keep(&self, manifest: &Manifest, pieces: &[&[u8]]) -> Option<std::path::PathBuf> {
        let path = self.path(manifest);
        let name = path.file_name()?.to_str()?.to_string();
        let path = disk::cache_part(&self.dir, &name, pieces).ok()?;
        disk::trim_cache(&self.dir, self.max_bytes, &path);
        Some(path)
    }
}

impl TextsFetch {
    /// The whole part, answered to a ranged read (a store that ignores
    /// ranges): it serves every read from now on. Always `true`.
    fn whole_arrived(&self, whole: Arc<Backing>) -> bool {
        self.apart.arrive(whole);
        self.outcome.send_if_modified(|o| matches!(o, Outcome::Idle).then(|| *o = Outcome::Here).is_some());
        true
    }

    /// Fetches the texts (again, after a failure), in the background.
    fn start(self: &Arc<Self>, store: Arc<dyn SnapshotStoreCall>, timeout: Duration, cache: Option<Arc<PartCache>>) {
        let me = self.clone();
        let mut settled = self.head_settled.subscribe();
        tokio::spawn(async move {
            // After the attach is done with its head: the GET and the
            // unpacking of the texts would take the cores (the store's
            // too, on one machine) from it.
            let _ = settled.wait_for(|done| *done).await;
            let outcome = match fetch_part(&*store, timeout, &me.manifest.texts).await {
                Ok(Ok(raw)) => {
                    me.apart.arrive(raw);
                    me.cache_whole(cache).await;
                    Outcome::Here
                }
                Ok(Err(e)) => {
                    me.apart.broken();
                    Outcome::Broken(format!("the texts part {}: {e}", me.manifest.texts.key))
                }
                Err(e) => Outcome::Failed(e.reason.clone(), Arc::new(Mutex::new(Some(e)))),
            };
            let failed = matches!(outcome, Outcome::Failed(..));
            me.outcome.send_replace(outcome);
            // After the outcome: a read woken now that asks again starts another fetch.
            if failed {
                me.apart.fetch_failed();
            }
        });
    }

    /// Starts the fetch of the whole part unless it is running or done:
    /// none was (`Outcome::Idle`), or the last one failed (the store may be
    /// back: a failure is reported only to calls that waited for it).
    fn start_unless_running(
        self: &Arc<Self>,
        store: Arc<dyn SnapshotStoreCall>,
        timeout: Duration,
        cache: Option<Arc<PartCache>>,
    ) {
        let start = self.outcome.send_if_modified(|o| {
            let start = matches!(o, Outcome::Idle | Outcome::Failed(..));
            if start {
                *o = Outcome::Running;
            }
            start
        });
        if start {
            self.start(store, timeout, cache);
        }
    }

    /// The head is decoded: kept for the cache until the texts are here
    /// (whichever comes second caches the two).
    async fn head_decoded(&self, head: Arc<Backing>, cache: Option<Arc<PartCache>>) {
        if cache.is_some() {
            *self.head.lock() = Some(head);
            self.cache_whole(cache).await;
        }
    }

    /// With a cache, once head and texts are both here: the whole snapshot
    /// in it, for the next attach (which then fetches the manifest only).
    async fn cache_whole(&self, cache: Option<Arc<PartCache>>) {
        let Some(cache) = cache else { return };
        let (head, texts) = {
            let mut head = self.head.lock();
            let Some(texts) = self.apart.bytes().filter(|_| head.is_some()) else { return };
            (head.take().expect("checked"), texts)
        };
        let manifest = self.manifest.clone();
        let _ = blocking(move || {
            let (head, texts) = (head.bytes(), texts.bytes());
            match manifest.postings.map(|(at, len)| (at as usize, len as usize)) {
                // In the snapshot's own order: the postings back between the head's two halves.
                Some((at, len)) if at <= head.len() && len <= texts.len() => {
                    cache.keep(&manifest, &[&head[..at], &texts[..len], &head[at..], &texts[len..]])
                }
                Some(_) => None,
                None => cache.keep(&manifest, &[head, texts]),
            }
        })
        .await;
    }
}

impl RemoteSnapshots {
    pub fn new(config: StoreConfig, tenant: String) -> RemoteSnapshots {
        let StoreConfig { store, timeout, cache, retain } = config;
        let cache = cache.map(Arc::new);
        RemoteSnapshots {
            store,
            tenant,
            timeout,
            retain,
            state: Mutex::default(),
            cache,
            texts: Mutex::new(None),
            ranged: AtomicBool::new(false),
            broken_parts: Mutex::new(Vec::new()),
            written_unnamed: Mutex::new(Vec::new()),
            repairing: AtomicBool::new(false),
            emptied: AtomicBool::new(false),
            from_cache: Mutex::new(None),
            cache_damaged: AtomicBool::new(false),
            unattached: Mutex::new(None),
        }
    }

    /// Notes that an attach failed (`Some(why)`) or succeeded (`None`).
    pub fn set_unattached(&self, why: Option<String>) {
        *self.unattached.lock() = why;
    }

    /// Why the last attach failed, while nothing is attached.
    pub fn unattached(&self) -> Option<String> {
        self.unattached.lock().clone()
    }

    /// Notes that the index was dropped for its unreadable postings
    /// (`true`), or built again from the files (`false`).
    pub fn set_emptied(&self, emptied: bool) {
        self.emptied.store(emptied, Ordering::Release);
    }

    /// The cached copy of `manifest`'s snapshot, loaded (`None`: not
    /// cached, or unusable).
    async fn cached(&self, manifest: &Manifest) -> Option<Snapshot> {
        let (path, size) = (self.cache.as_ref()?.path(manifest), manifest_size(manifest));
        let at = path.clone();
        let loaded = blocking(move || load_cached(&at, size, &AtomicBool::new(false))).await.ok().flatten()?;
        *self.from_cache.lock() = Some(path);
        Some(loaded)
    }

    /// A text of the attached snapshot failed its check: from a `cacheDir`
    /// copy (texts are checked as they are read, not at load), the copy is
    /// removed and the search fails, typed, rather than leave the document
    /// out; the next attach fetches the parts. `None`: not from the cache.
    pub fn damaged_cached_text(&self) -> Option<Error> {
        let path = self.from_cache.lock().clone()?;
        let _ = std::fs::remove_file(&path);
        self.cache_damaged.store(true, Ordering::Release);
        Some(cache_damaged())
    }

    /// With a `cacheKey`: the manifest last noted there read, and the load
    /// of its cached snapshot started, off the runtime, to run while the
    /// manifest is fetched (a warm attach then waits for the longer of the
    /// GET and the load, not for one after the other).
    fn load_last(&self) -> Option<EarlyLoad> {
        let cache = self.cache.clone().filter(|c| c.key.is_some())?;
        let (noted, seen) = tokio::sync::oneshot::channel();
        let cancel = Arc::new(AtomicBool::new(false));
        let dropped = cancel.clone();
        let load = tokio::task::spawn_blocking(move || {
            let note = cache.last_manifest().and_then(|b| Manifest::decode(&b).ok().map(|m| (b, m)));
            let Some((bytes, manifest)) = note else {
                let _ = noted.send(None);
                return None;
            };
            let _ = noted.send(Some(bytes));
            load_cached(&cache.path(&manifest), manifest_size(&manifest), &dropped)
        });
        Some(EarlyLoad { seen, load: Some(load), cancel })
    }

    /// Whether a texts part was found broken here (its postings, if it holds
    /// them, are not read again: `rebuildSearchIndex()`).
    pub fn parts_broken(&self) -> bool {
        !self.broken_parts.lock().is_empty()
    }

    /// Another writer saved first (since this workspace attached).
    pub fn conflicted(&self) -> bool {
        self.state.lock().conflicted
    }

    /// The snapshot there was read but cannot be used here (other options):
    /// only a workspace that rebuilt it all from files replaces it.
    pub fn unusable(&self, why: String) {
        self.state.lock().unreadable = Some(why);
        // Its texts are not this workspace's: no search or save waits for them.
        *self.texts.lock() = None;
    }

    /// At `destroy()`: the texts part of the snapshot attached is let go
    /// (a fetch still on its way drops it when it ends).
    pub fn release(&self) {
        *self.texts.lock() = None;
    }

    /// The snapshot the manifest names, checked (`Ok(Err(..))`: what the
    /// store holds is not a usable snapshot: a truncated or foreign part).
    /// Its texts may still be on their way (`texts_ready`). A snapshot
    /// found unusable while the manifest moved on is fetched again, as the
    /// new manifest names it: another workspace's save may delete the parts
    /// of the manifest read a moment before (`retainMs` after it was
    /// replaced), and taking that for a damaged snapshot attached the tenant
    /// empty.
    pub async fn fetch(&self) -> Result<std::result::Result<Option<Snapshot>, SnapshotError>> {
        let mut tries = 1;
        loop {
            let fetched = self.fetch_once().await?;
            if tries == FETCH_TRIES || fetched.is_ok() || !self.manifest_moved().await? {
                return Ok(fetched);
            }
            tries += 1;
        }
    }

    /// A manifest another workspace saved: never attached (its documents
    /// would be served as this tenant's), never written over.
    fn foreign(&self, other: &str) -> Error {
        Error::store(format!(
            "persist.store: the manifest there was saved by the workspace {other:?}, not by this one ({:?}): two tenants under one prefix? Give each its own (if this workspace's id changed, attach with the one it saved under, or remove the tenant's manifest.json to start it anew)",
            self.tenant
        ))
    }

    /// Whether the store's manifest is no longer the one last fetched.
    async fn manifest_moved(&self) -> Result<bool> {
        let fetched = self.state.lock().manifest.clone();
        let now = get(&*self.store, self.timeout, MANIFEST).await?;
        Ok(match (fetched, now) {
            (Some(fetched), Some(now)) => !same_snapshot(&fetched, &now.bytes),
            (fetched, now) => fetched.is_some() != now.is_some(),
        })
    }

    /// `fetch`, once.
    async fn fetch_once(&self) -> Result<std::result::Result<Option<Snapshot>, SnapshotError>> {
        *self.texts.lock() = None;
        // Dropped (the GET failed, the manifest moved): the load stops where it is.
        let last = self.load_last();
        let Some((StoredObject { bytes, etag }, decoded)) = self.get_manifest().await? else {
            *self.state.lock() = RemoteState::default();
            return Ok(Ok(None));
        };
        if let Some(other) = tenant_of(&bytes).filter(|t| *t != self.tenant) {
            *self.state.lock() = RemoteState::default();
            return Err(self.foreign(&other));
        }
        *self.state.lock() = RemoteState { etag: Some(etag), manifest: Some(bytes.to_vec()), ..Default::default() };
        // The snapshot loaded beside the GET, if the manifest is still the
        // one it was loaded for.
        let (noted, early) = match last {
            Some(last) => last.of(&bytes).await,
            None => (false, None),
        };
        *self.from_cache.lock() = None;
        let fetched = match (early, decoded) {
            (Some(snapshot), Ok(manifest)) => {
                *self.from_cache.lock() = self.cache.as_ref().map(|c| c.path(&manifest));
                Ok(Ok(Some(snapshot)))
            }
            (None, Ok(manifest)) => self.attach(manifest).await,
            (_, Err(e)) => Ok(Err(e)),
        };
        if let (Ok(Ok(Some(_))), Some(cache), false) = (&fetched, self.cache.clone(), noted) {
            let _ = blocking(move || cache.note_manifest(&bytes)).await;
        }
        if !matches!(fetched, Ok(Ok(Some(_)))) {
            *self.texts.lock() = None;
        }
        if let Ok(Err(e)) = &fetched {
            self.state.lock().unreadable = Some(e.to_string());
        }
        fetched
    }

    /// The manifest, and it decoded; fetched a second time when the first
    /// answer is not one (a proxy's error page under 200, a body cut
    /// short), as a part is: one damaged answer must not attach the tenant
    /// empty.
    async fn get_manifest(&self) -> Result<Option<(StoredObject, std::result::Result<Manifest, SnapshotError>)>> {
        let decoded = |got: StoredObject| {
            let manifest = Manifest::decode(&got.bytes);
            (got, manifest)
        };
        match get(&*self.store, self.timeout, MANIFEST).await?.map(decoded) {
            Some((_, Err(_))) => Ok(get(&*self.store, self.timeout, MANIFEST).await?.map(decoded)),
            first => Ok(first),
        }
    }

    /// The manifest's snapshot: from the cache, else its head fetched and
    /// decoded, its texts fetched after it in the background.
    async fn attach(&self, manifest: Manifest) -> Result<std::result::Result<Option<Snapshot>, SnapshotError>> {
        if let Some(cached) = self.cached(&manifest).await {
            return Ok(Ok(Some(cached)));
        }
        if manifest.postings.is_some() && self.broken_parts.lock().contains(&manifest.texts.key) {
            let why = format!("the texts part {} holding the index's postings is not whole", manifest.texts.key);
            return Ok(Err(SnapshotError::Corrupt(why)));
        }
        let fetch = self.texts_fetch(&manifest);
        *self.texts.lock() = Some(fetch.clone());
        let settled = HeadSettled(fetch.clone());
        let (head, hashed) = match fetch_part_by_runs(&*self.store, self.timeout, &manifest.index, &self.ranged).await?
        {
            Ok(head) => head,
            Err(e) => return Ok(Err(e)),
        };
        let (texts, len) = (StoredFile::apart(fetch.apart.clone()), manifest.texts.raw_size);
        let postings = manifest.postings.map(|(at, len)| (at as usize - disk::HEADER, len as usize));
        let decoded = blocking(move || {
            let snapshot = decode_head(&head, hashed, texts, len, postings)?;
            Ok((snapshot, head))
        })
        .await?;
        drop(settled);
        match decoded {
            Ok((snapshot, head)) => {
                fetch.head_decoded(head, self.cache.clone()).await;
                Ok(Ok(Some(snapshot)))
            }
            Err(e) => Ok(Err(e)),
        }
    }

    /// The fetch of the manifest's texts part, started now where it is
    /// fetched whole at once. A large part without a cache to fill is
    /// fetched whole only once a search read some of it by range, or
    /// something needs it whole (a save, a read no range served): an
    /// attached tenant that is never searched costs no texts.
    fn texts_fetch(&self, manifest: &Manifest) -> Arc<TextsFetch> {
        let by_range = manifest.texts.frames.len() >= RANGE_MIN_FRAMES;
        let apart = TextsApart::new(self.timeout, if by_range { FRAME as u64 } else { 0 });
        let whole_now = !by_range || self.cache.is_some();
        let (tx, _) = tokio::sync::watch::channel(if whole_now { Outcome::Running } else { Outcome::Idle });
        let (head_settled, _) = tokio::sync::watch::channel(false);
        let fetch = Arc::new(TextsFetch {
            manifest: manifest.clone(),
            apart,
            head: Mutex::new(None),
            outcome: tx,
            head_settled,
        });
        if whole_now {
            fetch.start(self.store.clone(), self.timeout, self.cache.clone());
        } else {
            // A read that no range served (a rebuild, an embedding) waits for the whole part.
            let (weak, store, timeout, cache) =
                (Arc::downgrade(&fetch), self.store.clone(), self.timeout, self.cache.clone());
            let runtime = tokio::runtime::Handle::current();
            fetch.apart.when_wanted(Box::new(move || {
                if let Some(fetch) = weak.upgrade() {
                    let _inside = runtime.enter();
                    fetch.start_unless_running(store.clone(), timeout, cache.clone());
                }
            }));
        }
        fetch
    }

    /// Writes a part (unless one is there: it holds these very bytes).
    /// A part named so and found broken there is written over.
    async fn put_part(&self, part: &PartRef, bytes: Vec<u8>) -> Result<PutOutcome> {
        let what = format!("put {}", part.key);
        let over = self.broken_parts.lock().contains(&part.key);
        let condition = (!over).then_some(PutCondition::IfNoneMatch);
        bounded(self.timeout, &what, self.store.put(&part.key, bytes, condition)).await
    }

    /// Waits for the texts of the snapshot attached (a search that reads
    /// them, a save); one that failed before this call is tried again. A
    /// fetch that failed while this call waited is its error. A texts part the store does not hold
    /// whole is an error of every such call, unless `files_only`: the
    /// workspace's documents all come from files, and each text is read
    /// again from its file (a local snapshot's damaged text is, too), and
    /// the next save replaces the snapshot.
    pub async fn texts_ready(&self, files_only: bool) -> Result<()> {
        match self.part_ready().await? {
            Err(why) if !files_only => Err(Error::store(format!(
                "persist.store: {why}; the documents given to index() cannot be read: {START_ANEW}"
            ))),
            _ => Ok(()),
        }
    }

    /// `texts_ready` for the index's postings a large snapshot keeps with
    /// its texts: a part the store does not hold whole is an error of
    /// every search and write (there is no file to read them from).
    pub async fn postings_ready(&self) -> Result<()> {
        self.part_ready().await?.map_err(|why| {
            Error::store(format!(
                "persist.store: {why}; the index's postings cannot be read: rebuildSearchIndex() builds the index again from the files; {START_ANEW}"
            ))
        })
    }

    /// Waits for the texts part (`texts_ready`); `Ok(Err(why))`: the store
    /// does not hold it whole.
    async fn part_ready(&self) -> Result<std::result::Result<(), String>> {
        let Some(fetch) = self.texts.lock().clone() else { return Ok(Ok(())) };
        fetch.start_unless_running(self.store.clone(), self.timeout, self.cache.clone());
        let mut outcome = fetch.outcome.subscribe();
        let done = outcome.wait_for(|o| !matches!(o, Outcome::Running)).await.map(|o| o.clone());
        match done {
            // (The next call starts another fetch.)
            Ok(Outcome::Failed(why, error)) => Err(error.lock().take().unwrap_or_else(|| Error::store(why))),
            Ok(Outcome::Broken(why)) => {
                // (Not `unusable`: every later reader must still meet this.)
                self.state.lock().unreadable = Some(why.clone());
                let mut broken = self.broken_parts.lock();
                if !broken.contains(&fetch.manifest.texts.key) {
                    broken.push(fetch.manifest.texts.key.clone());
                }
                Ok(Err(why))
            }
            _ => {
                let mut texts = self.texts.lock();
                if texts.as_ref().is_some_and(|t| Arc::ptr_eq(t, &fetch)) {
                    *texts = None;
                }
                Ok(Ok(()))
            }
        }
    }

    /// Reads by range the frames of a large texts part that hold the texts
    /// at `spans` (offset, length), all at once, while the part is not here
    /// whole. `Ok(true)`: they are here; `Ok(false)`: wait for the whole
    /// part (`texts_ready`), which reports what went wrong, if anything.
    pub async fn texts_by_range(&self, spans: &[(u64, usize)]) -> Result<bool> {
        let Some(fetch) = self.texts.lock().clone() else { return Ok(false) };
        if fetch.manifest.texts.frames.len() < RANGE_MIN_FRAMES || matches!(*fetch.outcome.borrow(), Outcome::Broken(_))
        {
            return Ok(false);
        }
        let missing = fetch.apart.missing_frames(spans);
        let part = &fetch.manifest.texts;
        // Most of the part: the whole of it is sooner than its frames.
        if missing.len() > part.frames.len() / 4 {
            return Ok(false);
        }
        let Some((&first, rest)) = missing.split_first() else { return Ok(true) };
        // The first alone, unless the store has answered a range with the
        // range: one that ignores ranges answers it with the whole part,
        // which then serves every read (rather than a whole part per frame).
        let rest = if self.ranged.load(Ordering::Acquire) {
            &missing[..]
        } else {
            match fetch_frames(&*self.store, self.timeout, part, first..first + 1, Arc::default()).await? {
                FrameGot::Frames(frames) => frames.into_iter().for_each(|(i, f)| fetch.apart.frame_arrive(i, f)),
                FrameGot::Whole(whole) => return Ok(fetch.whole_arrived(whole)),
                FrameGot::Absent | FrameGot::Dropped => return Ok(false),
            }
            self.ranged.store(true, Ordering::Release);
            rest
        };
        let whole_taken = Arc::new(AtomicBool::new(false));
        let mut fetched = futures::stream::iter(neighbour_runs(rest))
            .map(|run| fetch_frames(&*self.store, self.timeout, part, run, whole_taken.clone()))
            .buffer_unordered(RANGE_READS_AT_ONCE);
        while let Some(got) = fetched.next().await {
            match got? {
                FrameGot::Frames(frames) => frames.into_iter().for_each(|(i, f)| fetch.apart.frame_arrive(i, f)),
                FrameGot::Dropped => {}
                // This part's reads are answered whole (whatever the index
                // part's were): it serves every read from now on.
                FrameGot::Whole(whole) => {
                    self.ranged.store(false, Ordering::Release);
                    return Ok(fetch.whole_arrived(whole));
                }
                FrameGot::Absent => return Ok(false),
            }
        }
        // A tenant searched once is searched again: the whole part follows in
        // the background (later searches then read no range).
        fetch.start_unless_running(self.store.clone(), self.timeout, self.cache.clone());
        Ok(true)
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
                    "persist.store: the snapshot there could not be used ({why}), and this workspace's documents do not all come from files: saving would replace documents it never read; {START_ANEW}"
                )));
            }
        }
        // Parted and packed off the runtime (zstd, both parts at once), and
        // kept unpacked in the cache.
        let Some(split) = disk::texts_start(&raw) else {
            return Err(Error::from_reason("persist: the snapshot was not encoded with its texts last"));
        };
        let cache = self.cache.clone();
        let (mut manifest, packed) = blocking(move || {
            let (head, texts) = raw.split_at(split);
            // A large index's postings go with the texts (see `Manifest::postings`).
            let postings = Snapshot::postings_span(&raw).filter(|p| p.end <= split && p.len() >= POSTINGS_APART_AT);
            let (index_raw, texts_raw): (Vec<&[u8]>, Vec<&[u8]>) = match &postings {
                Some(p) => (vec![&raw[..p.start], &raw[p.end..split]], vec![&raw[p.clone()], texts]),
                None => (vec![head], vec![texts]),
            };
            let ((index, index_bytes), (texts_part, texts_bytes)) =
                rayon::join(|| PartRef::pack_pieces(&index_raw), || PartRef::pack_pieces(&texts_raw));
            let postings = postings.map(|p| (p.start as u64, p.len() as u64));
            let manifest = Manifest { index, texts: texts_part, postings, retired: Vec::new() };
            if let Some(cache) = cache {
                cache.keep(&manifest, &[head, texts]);
            }
            (manifest, [index_bytes, texts_bytes])
        })
        .await?;
        // Content-addressed: a part already there holds these very bytes.
        let [index_bytes, texts_bytes] = packed;
        let base = self.base_parts();
        let unnamed_before = self.unnamed_keys();
        let (index_put, texts_put) = futures::join!(
            self.put_named(manifest.index.clone(), index_bytes, &base),
            self.put_named(manifest.texts.clone(), texts_bytes, &base)
        );
        let packed_as = self.cache.as_ref().map(|c| c.path(&manifest));
        (manifest.index, manifest.texts) = (index_put?, texts_put?);
        // A part written under a key of its own: the copy kept under the
        // content's name takes the one the manifest gives (the next attach
        // read the whole snapshot from the store).
        if let (Some(cache), Some(from)) = (self.cache.clone(), packed_as) {
            let to = cache.path(&manifest);
            if to != from {
                let _ = blocking(move || std::fs::rename(from, to)).await;
            }
        }
        let (kept, due) = self.retire(&manifest);
        manifest.retired = kept;
        let manifest = manifest.encode_for(&self.tenant);
        let etag = match self.put_manifest(&manifest).await {
            Ok(etag) => etag,
            Err(e) => {
                if e.store_failure() == Some(super::StoreFailure::Conflict) {
                    self.delete_refused(&unnamed_before).await;
                }
                return Err(e);
            }
        };
        // Only once the write landed over the manifest they were retired
        // from (a refused, lost or cut-short save deletes nothing: a part
        // the manifest there names is never deleted); one that fails to go
        // stays behind, unlisted (cheap beside a part deleted too soon).
        self.delete_parts(due).await;
        {
            let mut state = self.state.lock();
            (state.etag, state.unreadable, state.unconfirmed) = (Some(etag), None, None);
            state.manifest = Some(manifest.clone());
        }
        // The tenant names only parts written whole now.
        self.broken_parts.lock().clear();
        // Named now, they are this save's base; a later one may retire them.
        self.written_unnamed.lock().clear();
        // After the state (a save cut short here has still landed).
        if let Some(cache) = self.cache.clone() {
            let _ = blocking(move || cache.note_manifest(&manifest)).await;
        }
        Ok(())
    }
}

impl RemoteSnapshots {
    /// The parts the manifest attached or last written names that `next`
    /// does not, retired now beside those it listed: `(kept, due)`, those
    /// `next` lists and those to delete now (`Manifest::retire`).
    fn retire(&self, next: &Manifest) -> (Vec<Retired>, Vec<Retired>) {
        let prior = self.state.lock().manifest.as_deref().and_then(|m| Manifest::decode(m).ok());
        let millis = |d: Duration| u64::try_from(d.as_millis()).unwrap_or(u64::MAX);
        let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
        prior.map(|p| p.retire(next, millis(now), millis(self.retain))).unwrap_or_default()
    }

    /// The parts the manifest attached or last written names, and those
    /// this workspace wrote since for saves whose manifest did not land.
    fn base_parts(&self) -> Vec<PartRef> {
        let prior = self.state.lock().manifest.as_deref().and_then(|m| Manifest::decode(m).ok());
        let mut base = prior.map(|m| vec![m.index, m.texts]).unwrap_or_default();
        base.extend(self.written_unnamed.lock().iter().cloned());
        base
    }

    /// Writes a part, and answers the part to name. One already there
    /// under its key holds these very bytes; but where the manifest this
    /// save replaces does not name it, it is a part a save retired (the
    /// same documents again), and its deletion may be under way (a writer
    /// deletes what its save retired once that save landed, maybe after
    /// this one's manifest): it is then written under a key of its own
    /// (`PartRef::fresh`) rather than named. Naming it lost the part, and
    /// the tenant's `index()` documents with it. A part the manifest
    /// replaced names is safe: retiring it takes a later manifest, over
    /// which this save's conflicts.
    /// A part of the base (`base_parts`) written otherwise (`fresh`) is
    /// made again with its nonce and named, if it holds this content: each
    /// save after one went fresh made another copy (until the part it
    /// stood for was deleted, a day later), and each try of a save whose
    /// manifest did not land left one more behind.
    async fn put_named(&self, part: PartRef, bytes: Vec<u8>, base: &[PartRef]) -> Result<PartRef> {
        if base.iter().any(|b| b.key == part.key) {
            self.put_part(&part, bytes).await?;
            return Ok(part);
        }
        let nonces: Vec<(u128, String)> = base.iter().filter_map(|b| Some((b.nonce?, b.key.clone()))).collect();
        if !nonces.is_empty() {
            let (kept, moved) = (bytes.clone(), part.clone());
            let again = blocking(move || {
                nonces.into_iter().find_map(|(n, key)| moved.fresh(&kept, n).filter(|(f, _)| f.key == key))
            })
            .await?;
            if let Some((fresh, bytes)) = again {
                self.put_part(&fresh, bytes).await?;
                return Ok(fresh);
            }
        }
        let kept = bytes.clone();
        if let PutOutcome::Written { .. } = self.put_part(&part, bytes).await? {
            self.note_written(&part);
            return Ok(part);
        }
        let nonce = fresh_nonce();
        let moved = part.clone();
        let Some((fresh, bytes)) = blocking(move || moved.fresh(&kept, nonce)).await? else {
            return Err(Error::from_reason(format!("persist.store: {} could not be packed again", part.key)));
        };
        // (A key no save made before: there is nothing there.)
        self.put_part(&fresh, bytes).await?;
        self.note_written(&fresh);
        Ok(fresh)
    }

    /// The keys of `written_unnamed`.
    fn unnamed_keys(&self) -> Vec<String> {
        self.written_unnamed.lock().iter().map(|p| p.key.clone()).collect()
    }

    /// Deletes the parts a save refused for a conflict made (those in
    /// `written_unnamed` now and not in `before`): no manifest names them
    /// or will (a part is made only where its key was free, and only this
    /// save's manifest, refused, named it), and this workspace saves
    /// nothing more until it attaches again, so each conflict left two
    /// parts in the store for good. A part written over a broken one of
    /// that name is left: a manifest there may name it; so is one the
    /// manifest there names. A delete that fails leaves its part, as a
    /// save's retired parts are left.
    async fn delete_refused(&self, before: &[String]) {
        let made: Vec<PartRef> = {
            let mut written = self.written_unnamed.lock();
            let (made, kept) = written.drain(..).partition(|p| !before.contains(&p.key));
            *written = kept;
            made
        };
        // A store that ignores `If-None-Match` on parts answered `Written` for
        // a part another writer had made, and named: never one the manifest
        // there names (or lists as retired). Unread, nothing is deleted.
        let Ok(Some(there)) = get(&*self.store, self.timeout, MANIFEST).await else { return };
        let Ok(there) = Manifest::decode(&there.bytes) else { return };
        let named =
            |key: &str| there.index.key == key || there.texts.key == key || there.retired.iter().any(|r| r.key == key);
        let broken = self.broken_parts.lock().clone();
        let deletes = made.into_iter().filter(|p| !broken.contains(&p.key) && !named(&p.key)).map(|p| async move {
            let what = format!("delete {}", p.key);
            let _ = bounded(self.timeout, &what, self.store.delete(&p.key)).await;
        });
        futures::future::join_all(deletes).await;
    }

    /// Notes a part written (`written_unnamed`), the newest few: a save
    /// that lands names its parts, and they are the base then.
    fn note_written(&self, part: &PartRef) {
        let mut written = self.written_unnamed.lock();
        if written.len() >= 16 {
            written.remove(0);
        }
        written.push(part.clone());
    }

    /// Deletes parts whose time is up, after the manifest that no longer
    /// lists them landed. A store without `delete`, or one that fails it,
    /// keeps them.
    async fn delete_parts(&self, due: Vec<Retired>) {
        let deletes = due.into_iter().map(|r| async move {
            let what = format!("delete {}", r.key);
            let _ = bounded(self.timeout, &what, self.store.delete(&r.key)).await;
        });
        futures::future::join_all(deletes).await;
    }

    /// Writes the manifest over the version this workspace attached or
    /// last wrote; its etag. A write whose answer was lost (a timeout) may
    /// land after it was read back: kept as unconfirmed, and met by the next
    /// write's conflict, it is taken for the version that write replaces
    /// (it is this workspace's own), not for another writer's.
    async fn put_manifest(&self, manifest: &[u8]) -> Result<String> {
        let (mut retried, mut retagged) = (false, false);
        loop {
            let condition = match self.state.lock().etag.clone() {
                Some(etag) => PutCondition::IfMatch(etag),
                None => PutCondition::IfNoneMatch,
            };
            let put = bounded(
                self.timeout,
                "put manifest.json",
                self.store.put(MANIFEST, manifest.to_vec(), Some(condition)),
            )
            .await;
            let refused = matches!(put, Ok(PutOutcome::Conflict));
            let lost = match put {
                Ok(PutOutcome::Written { etag }) if !etag.is_empty() => return Ok(etag),
                Ok(PutOutcome::Written { .. }) => {
                    return Err(Error::store("persist.store: put manifest.json answered no etag"))
                }
                Ok(PutOutcome::Conflict) => None,
                Err(e) => Some(e),
            };
            // Refused, or unanswered: a retry of a write that landed meets
            // that write, and a timed-out call may still land. The manifest
            // there is ours if it holds our very bytes (the same state).
            let there = get(&*self.store, self.timeout, MANIFEST).await;
            let mut state = self.state.lock();
            match there {
                Ok(Some(there)) if same_snapshot(&there.bytes, manifest) => return Ok(there.etag),
                Ok(Some(there)) if refused && !retried && state.unconfirmed.as_deref() == Some(&*there.bytes) => {
                    (state.etag, state.unconfirmed, retried) = (Some(there.etag), None, true);
                    state.manifest = Some(there.bytes.to_vec());
                }
                // Refused over the very manifest attached: the store's tag
                // changed, not its object. Tried once more with the tag there
                // now, made strong (`W/"…"`, a compressing proxy's weak tag,
                // never matches `If-Match`, which compares strongly).
                Ok(Some(there)) if refused && !retagged && state.manifest.as_deref() == Some(&*there.bytes) => {
                    let strong = there.etag.strip_prefix("W/").unwrap_or(&there.etag).to_string();
                    (state.etag, retagged) = (Some(strong), true);
                }
                Ok(Some(there)) if refused && state.manifest.as_deref() == Some(&*there.bytes) => {
                    return Err(Error::store(format!(
                        "persist.store: the store refused to write manifest.json over version {}, though that version is still the one there, unchanged: its version tags on GET differ from those on PUT (a proxy that rewrites ETags?), and conditional writes need the store's own",
                        state.etag.as_deref().unwrap_or("none")
                    )));
                }
                Ok(_) if refused => {
                    state.conflicted = true;
                    return Err(conflict());
                }
                Ok(there) => {
                    // An earlier lost write landed meanwhile: the version this one was to replace.
                    if let Some(there) = there.filter(|t| state.unconfirmed.as_deref() == Some(&*t.bytes)) {
                        state.etag = Some(there.etag);
                        state.manifest = Some(there.bytes.to_vec());
                    }
                    state.unconfirmed = Some(manifest.to_vec());
                    return Err(lost.expect("an unanswered put"));
                }
                Err(e) => {
                    if lost.is_some() {
                        state.unconfirmed = Some(manifest.to_vec());
                    }
                    return Err(lost.unwrap_or(e));
                }
            }
        }
    }
}

/// Whether two manifests name the same snapshot: the same bytes, or the
/// same parts with other retired lists (two saves of one state, each
/// stamping what it retired with its own time).
fn same_snapshot(a: &[u8], b: &[u8]) -> bool {
    a == b
        || match (Manifest::decode(a), Manifest::decode(b)) {
            (Ok(a), Ok(b)) => (a.index, a.texts, a.postings) == (b.index, b.texts, b.postings),
            _ => false,
        }
}

/// The load of the snapshot last noted, begun before the manifest's GET;
/// dropped, it stops where it is (before its file is touched, if it can).
struct EarlyLoad {
    /// The noted manifest's bytes, once read (`None`: no note, or not one).
    seen: tokio::sync::oneshot::Receiver<Option<Vec<u8>>>,
    load: Option<tokio::task::JoinHandle<Option<Snapshot>>>,
    cancel: Arc<AtomicBool>,
}

impl EarlyLoad {
    /// Whether `manifest` is the one noted, and then its snapshot (`None`:
    /// its load failed).
    async fn of(mut self, manifest: &[u8]) -> (bool, Option<Snapshot>) {
        let seen = (&mut self.seen).await.ok().flatten();
        if seen.as_deref() != Some(manifest) {
            return (false, None);
        }
        let snapshot = match self.load.take() {
            Some(load) => load.await.ok().flatten(),
            None => None,
        };
        (true, snapshot)
    }
}

impl Drop for EarlyLoad {
    fn drop(&mut self) {
        self.cancel.store(true, Ordering::Release);
    }
}

/// A manifest file larger than this is not one of ours.
const MAX_MANIFEST_BYTES: u64 = 1 << 20;

/// The size of the cached file of `manifest`'s snapshot.
fn manifest_size(manifest: &Manifest) -> u64 {
    manifest.index.raw_size + manifest.texts.raw_size
}

/// The cached snapshot at `path` (a regular file of `size` bytes), loaded
/// and marked most recently used; a damaged one is removed (fetched again,
/// and cached anew).
fn load_cached(path: &std::path::Path, size: u64, cancel: &AtomicBool) -> Option<Snapshot> {
    std::fs::symlink_metadata(path).ok().filter(|m| m.is_file() && m.len() == size)?;
    if cancel.load(Ordering::Acquire) {
        return None;
    }
    // Most recently used: kept longest by `trim_cache`.
    if let Ok(f) = std::fs::File::open(path) {
        let _ = f.set_modified(std::time::SystemTime::now());
    }
    let loaded = Snapshot::load_file(path);
    if loaded.is_err() {
        let _ = std::fs::remove_file(path);
    }
    loaded.ok()
}

fn conflict() -> Error {
    Error::conflict(
        "persist.store: another workspace saved this snapshot first; this one keeps its state in memory and saves nothing until it attaches again (init() on a new Workspace)",
    )
}

impl Engine {
    /// Before the texts of `hits` are read: those still in a snapshot
    /// store's texts part are here, by range (large parts) or the part
    /// whole (a fetch that failed is this call's error).
    pub(super) async fn remote_texts_for(&self, hits: &[crate::search::SearchHit]) -> Result<()> {
        let Some(remote) = self.remote() else { return Ok(()) };
        let spans: Vec<(u64, usize)> = hits.iter().filter_map(|h| h.content.unread_span()).collect();
        if remote.texts_by_range(&spans).await? {
            return Ok(());
        }
        remote.texts_ready(self.indexes_files_only()).await
    }

    /// The snapshot store's side of `persist`, if it has one.
    pub(super) fn remote(&self) -> Option<&RemoteSnapshots> {
        self.persist.as_ref().and_then(|p| p.remote.as_ref())
    }

    /// Whether the index was dropped for postings the store holds broken
    /// and is not built again yet (searches fail, typed, meanwhile).
    pub(super) fn index_emptied(&self) -> bool {
        self.remote().is_some_and(|r| {
            r.emptied.load(Ordering::Acquire)
                || r.unattached.lock().is_some()
                || r.cache_damaged.load(Ordering::Acquire)
        })
    }

    /// `index_emptied` as a search's error. Asked under the index's read
    /// lock, it is exact: the flag is raised before the index is emptied
    /// under the write lock, and lowered once it is built again.
    pub(super) fn not_emptied(&self) -> Result<()> {
        if !self.index_emptied() {
            return Ok(());
        }
        if let Some(why) = self.remote().and_then(|r| r.unattached.lock().clone()) {
            return Err(Error::store(format!(
                "{why} (the tenant is not attached: init() again once the store answers; until then searches fail rather than answer from an empty index)"
            )));
        }
        if self.remote().is_some_and(|r| r.cache_damaged.load(Ordering::Acquire)) {
            return Err(cache_damaged());
        }
        Err(Error::store(
            "persist.store: the index's postings in the store are not whole; the index was dropped to be built again from the files and is not built yet (if that rebuild failed, rebuildSearchIndex() tries again)",
        ))
    }

    /// Before a search reads the postings of `tokens`: those of a snapshot
    /// store's texts part (a large index keeps them there) are here, by
    /// range, or the part whole (a fetch that failed is this call's error).
    pub(super) async fn remote_postings_for(self: &Arc<Self>, tokens: &[String]) -> Result<()> {
        let Some(remote) = self.remote() else { return Ok(()) };
        self.not_emptied()?;
        // Most searches have every posting here: no trip off this task for them.
        if self.index.try_read().is_some_and(|index| !index.postings_pending()) {
            return Ok(());
        }
        let tokens = tokens.to_vec();
        let spans = self.read_index(move |index| index.postings_to_read(&tokens)).await?;
        if spans.is_empty() || remote.texts_by_range(&spans).await? {
            return Ok(());
        }
        self.postings_ready_or_repair().await
    }

    /// Before a write: the postings of a snapshot store's texts part are
    /// all here (a write may read any of them), or this call fails typed.
    pub(super) async fn remote_postings_whole(self: &Arc<Self>) -> Result<()> {
        if self.remote().is_none() || !self.read_index(|index| index.postings_pending()).await? {
            return Ok(());
        }
        self.postings_ready_or_repair().await
    }

    /// The postings a snapshot store's texts part holds, all here; or the
    /// error, after `repair_from_files`. (Boxed: the rebuild a repair
    /// starts may come back here, and a future that holds itself has no
    /// size.)
    fn postings_ready_or_repair(self: &Arc<Self>) -> futures::future::BoxFuture<'_, Result<()>> {
        Box::pin(async move {
            let Some(remote) = self.remote() else { return Ok(()) };
            match remote.postings_ready().await {
                Err(e) => Err(self.repair_from_files(e).await),
                ready => ready,
            }
        })
    }

    /// `error`, of a call that needed postings the store holds broken: if
    /// every document came from this workspace's files, the index is built
    /// again from them in the background, once, as `rebuildSearchIndex()`
    /// does (its save writes the part over), and the error says so. Calls
    /// fail, typed, until it is done; one holding documents from `index()`
    /// is left to the caller (the rebuild would drop them).
    async fn repair_from_files(self: &Arc<Self>, error: Error) -> Error {
        let Some(remote) = self.remote() else { return error };
        if !remote.parts_broken() || !self.indexes_files_only() {
            return error;
        }
        let me = self.clone();
        let from_files = blocking(move || {
            // Lock order (docs/architecture.md): the index, then the file state.
            let index = me.index.read();
            let Some(p) = &me.persist else { return false };
            let state = p.state.lock();
            super::persist::all_from_files(&index, &state.files)
        });
        if !from_files.await.unwrap_or(false) {
            return error;
        }
        if !remote.repairing.swap(true, Ordering::AcqRel) {
            let (me, ticket, paths) = (self.clone(), self.gate.ticket(), self.auto_index_paths.clone());
            drop(tokio::spawn(async move {
                // Saved when done (a full build), which forgets the broken
                // part. One that fails is not tried again by itself: searches
                // fail, typed, naming rebuildSearchIndex(). Nothing more is
                // built or written once destroyed.
                // (`rebuild_files`: a failure of the user's onProgress is left to their next call.)
                let work = me.clone().rebuild_files(ticket, paths);
                let stop = me.until_destroyed();
                futures::pin_mut!(work, stop);
                let _ = futures::future::select(stop, work).await;
                if let Some(remote) = me.remote() {
                    remote.repairing.store(false, Ordering::Release);
                }
            }));
        }
        Error::store(format!(
            "{}; every document came from the files: the workspace is building its index again from them, in the background",
            error.reason
        ))
    }

    /// The snapshot's framed bytes, encoded off the runtime under the
    /// index's read lock (as a save to a directory is).
    pub(super) async fn framed_snapshot(self: &Arc<Self>) -> Result<Vec<u8>> {
        let me = self.clone();
        let emptied = self.clone();
        blocking(move || me.frame_snapshot()).await?.map_err(|e| match emptied.not_emptied() {
            Err(emptied) => emptied, // (dropped to be built again meanwhile)
            // A text that fails its check, from a cacheDir copy: the store's side, typed.
            Ok(()) => emptied
                .remote()
                .filter(|_| e.kind() == std::io::ErrorKind::InvalidData)
                .and_then(RemoteSnapshots::damaged_cached_text)
                .unwrap_or_else(|| Error::from_reason(format!("persist: could not encode the snapshot: {e}"))),
        })
    }
}

/// 128 bits no other part's bytes hold: the time, this process, a count.
fn fresh_nonce() -> u128 {
    static COUNT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
    let mut seed = Vec::with_capacity(32);
    seed.extend_from_slice(&now.as_nanos().to_le_bytes());
    seed.extend_from_slice(&std::process::id().to_le_bytes());
    seed.extend_from_slice(&COUNT.fetch_add(1, Ordering::Relaxed).to_le_bytes());
    xxhash_rust::xxh3::xxh3_128(&seed)
}
