//! A snapshot in object storage (`persist: { store }`): immutable,
//! content-addressed parts (the index and the rest; the texts), and one
//! small manifest naming them, written
//! last with a conditional write, so that two servers saving one tenant
//! never lose an update silently (the loser's write is refused). Keys are
//! relative to the tenant's prefix, which the store adds.

use crate::bytes::section::{cast, Backing, Buffer};
use crate::bytes::SnapshotError;
use serde_json::{json, Value};
use std::sync::Arc;

/// The manifest's key.
pub const MANIFEST: &str = "manifest.json";
const FORMAT: &str = "workspace-search/manifest-2";
/// A manifest whose texts part begins with the index's postings
/// (`Manifest::postings`): a reader that does not know it must not read it.
const FORMAT_POSTINGS_APART: &str = "workspace-search/manifest-3";

/// A part named by its content: the same bytes always have the same key,
/// so a part is written once and never overwritten. It is stored
/// compressed (zstd) where that is smaller; `raw_size` is its size unpacked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PartRef {
    pub key: String,
    /// The stored object's size, and its xxh3-128 (hex).
    pub size: u64,
    pub hash: String,
    pub zstd: bool,
    pub raw_size: u64,
    /// The stored size of each of its zstd frames (each `FRAME` bytes
    /// unpacked but the last), where the manifest says: a frame can then be
    /// read by range (`frame_span`). Empty: the part is read whole.
    pub frames: Vec<u64>,
    /// The nonce of a part stored otherwise (`fresh`): a save of the same
    /// content makes the same bytes again, and names this part.
    pub nonce: Option<u128>,
}

/// A zstd skippable frame of 16 bytes: its magic number, its length, the bytes.
const SKIPPABLE_LEN: usize = 24;

/// zstd's level for parts: fast to write (a save of 50,000 files), and
/// most of the gain on text and postings.
const ZSTD_LEVEL: i32 = 3;

impl PartRef {
    /// The part of stored bytes as they are.
    pub fn of(bytes: &[u8]) -> PartRef {
        let hash = format!("{:032x}", xxhash_rust::xxh3::xxh3_128(bytes));
        let size = bytes.len() as u64;
        PartRef {
            key: format!("parts/{hash}.wss"),
            size,
            hash,
            zstd: false,
            raw_size: size,
            frames: Vec::new(),
            nonce: None,
        }
    }

    /// `raw` (a framed snapshot) packed for storage: its part and the bytes
    /// to store. Packed in independent zstd frames of `FRAME` bytes (one
    /// zstd stream, as any zstd reader reads it), on every core, so that
    /// `unpack` unpacks them on every core too.
    pub fn pack(raw: &[u8]) -> (PartRef, Vec<u8>) {
        PartRef::pack_pieces(&[raw])
    }

    /// `pack` of the bytes `pieces` make one after the other, without
    /// putting them together first (a frame across two is copied alone).
    pub fn pack_pieces(pieces: &[&[u8]]) -> (PartRef, Vec<u8>) {
        let len: usize = pieces.iter().map(|p| p.len()).sum();
        // Stored as they are (one copy) when they do not pack smaller.
        match PartRef::framed(pieces) {
            Some((part, packed)) if packed.len() < len => (part, packed),
            _ => {
                let bytes = pieces.concat();
                (PartRef::of(&bytes), bytes)
            }
        }
    }

    /// `pieces` in zstd frames of `FRAME` bytes, however large they come to.
    fn framed(pieces: &[&[u8]]) -> Option<(PartRef, Vec<u8>)> {
        use rayon::prelude::*;
        let len: usize = pieces.iter().map(|p| p.len()).sum();
        let frames: Vec<Vec<u8>> = (0..len.div_ceil(FRAME))
            .into_par_iter()
            .map(|i| zstd_frame(&span_of(pieces, i * FRAME..((i + 1) * FRAME).min(len))))
            .collect::<Result<_, _>>()
            .ok()?;
        let sizes: Vec<u64> = frames.iter().map(|f| f.len() as u64).collect();
        let packed = frames.concat();
        Some((PartRef { zstd: true, raw_size: len as u64, frames: sizes, ..PartRef::of(&packed) }, packed))
    }

    /// This part stored otherwise, under a key of its own: its zstd frames
    /// (a part stored as it is packed first) followed by a zstd skippable
    /// frame holding `nonce`, counted in its last frame's stored size (so
    /// that frames are still read by range; zstd passes over it). A save
    /// whose part is one a save before retired (the same documents again)
    /// writes this rather than name that one, whose deletion may be on its
    /// way.
    pub fn fresh(&self, stored: &[u8], nonce: u128) -> Option<(PartRef, Vec<u8>)> {
        let (mut part, mut bytes) = match self.zstd {
            true => (self.clone(), stored.to_vec()),
            false => PartRef::framed(&[stored])?,
        };
        let mut skippable = Vec::with_capacity(SKIPPABLE_LEN);
        skippable.extend_from_slice(&0x184D_2A5Eu32.to_le_bytes());
        skippable.extend_from_slice(&16u32.to_le_bytes());
        skippable.extend_from_slice(&nonce.to_le_bytes());
        bytes.extend_from_slice(&skippable);
        if let Some(last) = part.frames.last_mut() {
            *last += SKIPPABLE_LEN as u64;
        }
        let named = PartRef::of(&bytes);
        (part.key, part.hash, part.size, part.nonce) = (named.key, named.hash, named.size, Some(nonce));
        Some((part, bytes))
    }

    /// Frame `i` of a part that lists its frames: where it lies stored,
    /// and where its bytes go unpacked.
    pub fn frame_span(&self, i: usize) -> Option<(std::ops::Range<u64>, std::ops::Range<u64>)> {
        let size = *self.frames.get(i)?;
        let start: u64 = self.frames[..i].iter().sum();
        let raw_start = i as u64 * FRAME as u64;
        Some((start..start + size, raw_start..(raw_start + FRAME as u64).min(self.raw_size)))
    }

    /// Frame `i`'s stored bytes unpacked, checked: its size, its zstd
    /// checksum, and the size it unpacks to.
    pub fn unpack_frame(&self, i: usize, stored: &[u8]) -> Result<Vec<u8>, SnapshotError> {
        let (_, raw) = self.frame_span(i).ok_or_else(|| SnapshotError::Corrupt("no such frame of the part".into()))?;
        let mut out = vec![0u8; (raw.end - raw.start) as usize];
        self.unpack_frame_into(i, stored, &mut out)?;
        Ok(out)
    }

    /// `unpack_frame` into `place`, exactly the frame's unpacked size.
    fn unpack_frame_into(&self, i: usize, stored: &[u8], place: &mut [u8]) -> Result<(), SnapshotError> {
        let (at, raw) = self.frame_span(i).ok_or_else(|| SnapshotError::Corrupt("no such frame of the part".into()))?;
        if stored.len() as u64 != at.end - at.start {
            return Err(SnapshotError::Truncated { got: stored.len() as u64, expected: at.end - at.start });
        }
        if place.len() as u64 != raw.end - raw.start {
            return Err(SnapshotError::Corrupt("a frame's place is not its size".into()));
        }
        let bad = |e: std::io::Error| SnapshotError::Corrupt(format!("a frame of the part does not unpack: {e}"));
        if unzstd_frame(stored, place).map_err(bad)? != place.len() {
            return Err(SnapshotError::Corrupt("a frame of the part unpacks to another size than it says".into()));
        }
        Ok(())
    }

    /// The frames split into at most `n` runs of neighbours, of about the
    /// same stored size each (one ranged read each).
    pub fn frame_runs(&self, n: usize) -> Vec<std::ops::Range<usize>> {
        let total: u64 = self.frames.iter().sum();
        let share = total.div_ceil(n.max(1) as u64).max(1);
        let (mut runs, mut start, mut size) = (Vec::new(), 0, 0);
        for (i, &f) in self.frames.iter().enumerate() {
            size += f;
            if size >= share || i + 1 == self.frames.len() {
                runs.push(start..i + 1);
                (start, size) = (i + 1, 0);
            }
        }
        runs
    }

    /// Where the frames `run` lie stored, as one range.
    pub fn run_span(&self, run: &std::ops::Range<usize>) -> Option<std::ops::Range<u64>> {
        let first = self.frame_span(run.start)?.0;
        let last = self.frame_span(run.end.checked_sub(1)?)?.0;
        Some(first.start..last.end)
    }

    /// The bytes `stored` holds, checked as this part's and unpacked into
    /// memory that a loaded index views in place (postings, names and line
    /// tables are not copied out, as from a mapped file), exactly `raw_size` long.
    pub fn unpack(&self, stored: &[u8]) -> Result<Arc<Backing>, SnapshotError> {
        self.check(stored)?;
        let (len, mut buffer) = unpacked_buffer(self)?;
        let out = &mut cast::<u8>(buffer.words())[..len];
        let got = if self.zstd {
            unzstd(stored, out)?
        } else {
            let n = stored.len().min(len);
            out[..n].copy_from_slice(&stored[..n]);
            stored.len()
        };
        if got != len {
            return Err(SnapshotError::Truncated { got: got as u64, expected: self.raw_size });
        }
        Ok(buffer.freeze_bytes(len))
    }

    /// Whether `bytes` are this part's (a truncated or foreign object is not).
    pub fn check(&self, bytes: &[u8]) -> Result<(), SnapshotError> {
        if bytes.len() as u64 != self.size {
            return Err(SnapshotError::Truncated { got: bytes.len() as u64, expected: self.size });
        }
        if PartRef::of(bytes).hash != self.hash {
            return Err(SnapshotError::Checksum);
        }
        Ok(())
    }
}

/// A framed part filled by runs of its frames read by range, in any
/// order (`PartRef::frame_runs`), each unpacked into its place as it
/// arrives, so that unpacking keeps up with the transfer. Each frame is
/// checked on its own (its stored size, its zstd checksum, its unpacked
/// size): the part's hash covers only the whole, which is never here.
pub struct PartFill {
    part: PartRef,
    /// The unpacked part, and which frames are in it (one run unpacks at a
    /// time, its frames on every core: a 50,000-file tenant's attach, nine
    /// alternating fresh processes, median 382 ms against 465 with a run's
    /// frames one after the other).
    state: std::sync::Mutex<(Buffer, Vec<bool>)>,
}

impl PartFill {
    pub fn new(part: PartRef) -> Result<PartFill, SnapshotError> {
        let framed =
            part.zstd && !part.frames.is_empty() && part.frames.len() as u64 == part.raw_size.div_ceil(FRAME as u64);
        if !framed {
            return Err(SnapshotError::Corrupt("the part's frames do not cover its size".into()));
        }
        let (_, buffer) = unpacked_buffer(&part)?;
        let filled = vec![false; part.frames.len()];
        Ok(PartFill { state: std::sync::Mutex::new((buffer, filled)), part })
    }

    /// The stored bytes of the frames `run`, unpacked into their places.
    pub fn fill(&self, run: std::ops::Range<usize>, stored: &[u8]) -> Result<(), SnapshotError> {
        let expected =
            self.part.run_span(&run).ok_or_else(|| SnapshotError::Corrupt("no such frames of the part".into()))?;
        if stored.len() as u64 != expected.end - expected.start {
            return Err(SnapshotError::Truncated { got: stored.len() as u64, expected: expected.end - expected.start });
        }
        use rayon::prelude::*;
        let spans: Vec<_> = run
            .clone()
            .map(|i| self.part.frame_span(i).map(|(at, _)| (i, at)))
            .collect::<Option<_>>()
            .ok_or_else(|| SnapshotError::Corrupt("no such frame of the part".into()))?;
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let (buffer, filled) = &mut *state;
        // The run's frames lie side by side unpacked, FRAME bytes each (the
        // part's last may be shorter): unpacked on every core at once.
        let raw = run.start * FRAME..(run.end * FRAME).min(self.part.raw_size as usize);
        let place = cast::<u8>(buffer.words())
            .get_mut(raw)
            .filter(|p| p.len().div_ceil(FRAME) == spans.len())
            .ok_or_else(|| SnapshotError::Corrupt("the run's frames do not cover their place".into()))?;
        place.par_chunks_mut(FRAME).zip(spans).try_for_each(|(place, (i, at))| {
            let from = (at.start - expected.start) as usize..(at.end - expected.start) as usize;
            self.part.unpack_frame_into(i, &stored[from], place)
        })?;
        filled[run].iter_mut().for_each(|f| *f = true);
        Ok(())
    }

    /// The part, once every frame is in it.
    pub fn finish(self) -> Result<Arc<Backing>, SnapshotError> {
        let (buffer, filled) = self.state.into_inner().unwrap_or_else(|e| e.into_inner());
        if filled.iter().any(|f| !f) {
            return Err(SnapshotError::Corrupt("frames of the part are missing".into()));
        }
        Ok(buffer.freeze_bytes(self.part.raw_size as usize))
    }
}

/// The bytes `at` of the bytes `pieces` make one after the other: borrowed
/// when one piece holds them all.
fn span_of<'a>(pieces: &[&'a [u8]], at: std::ops::Range<usize>) -> std::borrow::Cow<'a, [u8]> {
    let mut start = 0;
    let mut parts = Vec::new();
    for piece in pieces {
        let end = start + piece.len();
        let (from, to) = (at.start.max(start), at.end.min(end));
        if from < to {
            parts.push(&piece[from - start..to - start]);
        }
        start = end;
    }
    match parts[..] {
        [one] => std::borrow::Cow::Borrowed(one),
        _ => std::borrow::Cow::Owned(parts.concat()),
    }
}

/// One frame as `pack` writes it: its unpacked size and a checksum of its
/// bytes in its header and trailer, so that a frame read by range is
/// checked on its own (the part's hash covers only the whole).
fn zstd_frame(piece: &[u8]) -> std::io::Result<Vec<u8>> {
    let mut compressor = zstd::bulk::Compressor::new(ZSTD_LEVEL)?;
    compressor.include_checksum(true)?;
    compressor.compress(piece)
}

/// The unpacked size of each zstd frame `pack` writes.
pub const FRAME: usize = 1 << 20;

/// zstd's `stored` unpacked into `out`: the bytes written. Frames that
/// state their size (`pack`'s do) are unpacked on every core, each into its
/// own place; any other stream as one.
fn unzstd(stored: &[u8], out: &mut [u8]) -> Result<usize, SnapshotError> {
    use rayon::prelude::*;
    let bad = |e: std::io::Error| SnapshotError::Corrupt(format!("the part does not unpack: {e}"));
    let Some(frames) = frames_of(stored).filter(|f| f.iter().map(|&(_, n)| n).sum::<usize>() == out.len()) else {
        return zstd::bulk::decompress_to_buffer(stored, out).map_err(bad);
    };
    let mut places = Vec::with_capacity(frames.len());
    let mut rest = out;
    for &(frame, n) in &frames {
        let (place, after) = std::mem::take(&mut rest).split_at_mut(n);
        places.push((frame, place));
        rest = after;
    }
    let each: Result<Vec<usize>, _> = places.into_par_iter().map(|(frame, place)| unzstd_frame(frame, place)).collect();
    let written = each.map_err(bad)?;
    // A frame that says one size and holds another is not this part.
    if written.iter().zip(&frames).any(|(&w, &(_, n))| w != n) {
        return Err(SnapshotError::Corrupt("a frame of the part unpacks to another size than it says".into()));
    }
    Ok(written.iter().sum())
}

thread_local! {
    /// A context per thread, kept: one made per frame allocates and
    /// clears its tables again for every MiB unpacked.
    static UNZSTD: std::cell::RefCell<Option<zstd::bulk::Decompressor<'static>>> = const { std::cell::RefCell::new(None) };
}

/// One frame unpacked into `place`, with this thread's context.
fn unzstd_frame(frame: &[u8], place: &mut [u8]) -> std::io::Result<usize> {
    UNZSTD.with(|context| {
        let mut context = context.borrow_mut();
        let context = match context.as_mut() {
            Some(c) => c,
            None => context.insert(zstd::bulk::Decompressor::new()?),
        };
        context.decompress_to_buffer(frame, place)
    })
}

/// The frames of a zstd stream, each with the size it says it unpacks to
/// (`None`: a frame that does not say, or not a stream of frames).
fn frames_of(stored: &[u8]) -> Option<Vec<(&[u8], usize)>> {
    let mut frames = Vec::new();
    let mut rest = stored;
    while !rest.is_empty() {
        let n = zstd::zstd_safe::find_frame_compressed_size(rest).ok().filter(|&n| n > 0 && n <= rest.len())?;
        let size = zstd::zstd_safe::get_frame_content_size(&rest[..n]).ok()??;
        frames.push((&rest[..n], usize::try_from(size).ok()?));
        rest = &rest[n..];
    }
    Some(frames)
}

/// What the manifest names: a snapshot's head (everything but the texts'
/// bytes: `disk::texts_start`), and its texts, a part of their own so
/// that a workspace attaches and ranks before they arrive.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Manifest {
    pub index: PartRef,
    pub texts: PartRef,
    /// Where a large index's postings lay in the snapshot (an offset in
    /// its framed bytes) and their length, when the index part leaves
    /// them out and the texts part begins with them: an attach then
    /// fetches no postings, and a search reads its terms' by range.
    pub postings: Option<(u64, u64)>,
    /// Parts earlier snapshots named and this one does not, kept in the
    /// store for the workspaces still attached to those (their texts may
    /// be fetched late) until their time is up (`retire`).
    pub retired: Vec<Retired>,
}

/// A part a save replaced, and when (milliseconds since 1970).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Retired {
    pub key: String,
    pub at_ms: u64,
}

/// At most this many replaced parts are listed (the manifest stays small,
/// fetched at every attach): past it the oldest go first.
pub const MAX_RETIRED: usize = 1_000;

/// `manifest-1` named one part, the whole snapshot of format 9.
const OLDER: &str = "workspace-search/manifest-1";

/// The workspace `id` a manifest was saved by (`None`: a manifest saved
/// before 2026-12-08, which named none, or not a manifest).
pub fn tenant_of(manifest: &[u8]) -> Option<String> {
    let v: Value = serde_json::from_slice(manifest).ok()?;
    v["tenant"].as_str().map(str::to_string)
}

impl Manifest {
    /// The manifest, naming the workspace `id` that saves it (`tenant_of`).
    pub fn encode_for(&self, tenant: &str) -> Vec<u8> {
        let mut v = self.json();
        v["tenant"] = json!(tenant);
        serde_json::to_vec_pretty(&v).expect("a manifest encodes")
    }

    pub fn encode(&self) -> Vec<u8> {
        serde_json::to_vec_pretty(&self.json()).expect("a manifest encodes")
    }

    fn json(&self) -> Value {
        let mut v = json!({ "format": FORMAT, "index": part_json(&self.index), "texts": part_json(&self.texts) });
        if let Some((at, len)) = self.postings {
            v["format"] = json!(FORMAT_POSTINGS_APART);
            v["postingsApart"] = json!({ "at": at, "length": len });
        }
        if !self.retired.is_empty() {
            v["retired"] = self.retired.iter().map(|r| json!({ "key": r.key, "at": r.at_ms })).collect();
        }
        v
    }

    pub fn decode(bytes: &[u8]) -> Result<Manifest, SnapshotError> {
        let v: Value = serde_json::from_slice(bytes).map_err(|_| corrupt("is not JSON"))?;
        if v["format"] == OLDER {
            return Err(SnapshotError::Version { found: 9, expected: crate::persist::FORMAT_VERSION });
        }
        let apart = match v["format"].as_str() {
            Some(FORMAT) => false,
            Some(FORMAT_POSTINGS_APART) => true,
            _ => return Err(SnapshotError::NotSnapshot),
        };
        let (index, texts) = (part_of(&v["index"])?, part_of(&v["texts"])?);
        let postings = match apart {
            false => None,
            true => {
                let (Some(at), Some(len)) = (v["postingsApart"]["at"].as_u64(), v["postingsApart"]["length"].as_u64())
                else {
                    return Err(corrupt("names no postings"));
                };
                // Inside the head's payload (4-byte aligned, as written), and the texts part's first bytes.
                let fits = at >= crate::persist::disk::HEADER as u64 && at <= index.raw_size && len <= texts.raw_size;
                let aligned = || (at - crate::persist::disk::HEADER as u64).is_multiple_of(4) && len.is_multiple_of(4);
                if !fits || !aligned() {
                    return Err(corrupt("names postings outside its parts"));
                }
                Some((at, len))
            }
        };
        Ok(Manifest { index, texts, postings, retired: retired_of(&v["retired"]) })
    }

    /// The parts this manifest names, which `next` replaces: theirs that
    /// `next` does not name are retired `now_ms`, beside those listed
    /// already; `(kept, due)`: those to list in `next` and those to delete
    /// now (retired `retain_ms` ago or more, or the oldest past
    /// `MAX_RETIRED`). A part `next` names again is neither.
    pub fn retire(&self, next: &Manifest, now_ms: u64, retain_ms: u64) -> (Vec<Retired>, Vec<Retired>) {
        let named = |key: &str| key == next.index.key || key == next.texts.key;
        // (A time ahead of this clock, another writer's, counts as now.)
        let mut all: Vec<Retired> = self
            .retired
            .iter()
            .filter(|r| !named(&r.key) && r.key != self.index.key && r.key != self.texts.key)
            .map(|r| Retired { key: r.key.clone(), at_ms: r.at_ms.min(now_ms) })
            .collect();
        all.sort_by_key(|r| r.at_ms);
        // This manifest's own parts, retired now, go last: never past the cap.
        for key in [&self.index.key, &self.texts.key] {
            if !named(key) && !all.iter().any(|r| &r.key == key) {
                all.push(Retired { key: key.clone(), at_ms: now_ms });
            }
        }
        let past_cap = all.len().saturating_sub(MAX_RETIRED);
        let (mut due, mut kept) = (Vec::new(), Vec::new());
        for (n, r) in all.into_iter().enumerate() {
            if n < past_cap || r.at_ms.saturating_add(retain_ms) <= now_ms {
                due.push(r);
            } else {
                kept.push(r);
            }
        }
        (kept, due)
    }
}

/// A manifest's `retired` list: entries of another shape are left out, so
/// that a manifest never has anything but a part deleted.
fn retired_of(v: &Value) -> Vec<Retired> {
    let Some(entries) = v.as_array() else { return Vec::new() };
    let entries = entries.iter().filter_map(|e| {
        let (key, at_ms) = (e["key"].as_str()?, e["at"].as_u64()?);
        is_part_key(key).then(|| Retired { key: key.to_string(), at_ms })
    });
    entries.take(MAX_RETIRED).collect()
}

/// `parts/<32 hex digits>.wss`, the only keys parts have.
fn is_part_key(key: &str) -> bool {
    key.strip_prefix("parts/").and_then(|k| k.strip_suffix(".wss")).is_some_and(crate::persist::disk::is_part_hash)
}

fn corrupt(why: &str) -> SnapshotError {
    SnapshotError::Corrupt(format!("the manifest {why}"))
}

fn part_json(p: &PartRef) -> Value {
    let encoding = if p.zstd { "zstd" } else { "none" };
    let mut v = json!({ "key": p.key, "size": p.size, "hash": p.hash, "encoding": encoding, "rawSize": p.raw_size });
    if !p.frames.is_empty() {
        v["frames"] = json!(p.frames);
    }
    if let Some(nonce) = p.nonce {
        v["nonce"] = json!(format!("{nonce:032x}"));
    }
    v
}

fn part_of(s: &Value) -> Result<PartRef, SnapshotError> {
    let (Some(key), Some(size), Some(hash)) = (s["key"].as_str(), s["size"].as_u64(), s["hash"].as_str()) else {
        return Err(corrupt("names no part"));
    };
    // Only keys this format writes: a manifest never sends a read elsewhere.
    if !crate::persist::disk::is_part_hash(hash) || key != format!("parts/{hash}.wss") {
        return Err(corrupt("names a part of another shape"));
    }
    let zstd = match s["encoding"].as_str() {
        None | Some("none") => false,
        Some("zstd") => true,
        Some(_) => return Err(corrupt("names a part of an unknown encoding")),
    };
    let raw_size = s["rawSize"].as_u64().unwrap_or(size);
    // A part stored as it is unpacks to its own size; a packed one to no
    // more than zstd can make of it.
    if (!zstd && raw_size != size) || raw_size > size.max(1).saturating_mul(MAX_UNPACKED_PER_STORED) {
        return Err(corrupt("names a part whose sizes disagree"));
    }
    // Frames that do not make up the part (another writer's frame size):
    // the part is read whole.
    let frames = frames_of_json(&s["frames"]).filter(|f| {
        let count = raw_size.div_ceil(FRAME as u64);
        let total = f.iter().try_fold(0u64, |sum, &n| sum.checked_add(n));
        zstd && f.len() as u64 == count && f.iter().all(|&n| n > 0) && total == Some(size)
    });
    // (Read only to make the same part again: a wrong one makes another.)
    let nonce = s["nonce"].as_str().and_then(|n| u128::from_str_radix(n, 16).ok());
    Ok(PartRef { key: key.into(), size, hash: hash.into(), zstd, raw_size, frames: frames.unwrap_or_default(), nonce })
}

/// The most a stored byte may unpack to, as a manifest states it: zstd's
/// densest frames (runs of one byte) come near 1:20,000. A manifest that
/// claims more is not trusted with an allocation of that size.
const MAX_UNPACKED_PER_STORED: u64 = 1 << 16;

/// A zeroed buffer for `part` unpacked, and its length in bytes; a size
/// that cannot be had (a damaged manifest's) is an error, never an abort.
fn unpacked_buffer(part: &PartRef) -> Result<(usize, Buffer), SnapshotError> {
    let too_large =
        || SnapshotError::Corrupt(format!("a part's size ({} bytes unpacked) cannot be had", part.raw_size));
    let len = usize::try_from(part.raw_size).map_err(|_| too_large())?;
    let buffer = Buffer::try_zeroed(len.div_ceil(4)).ok_or_else(too_large)?;
    Ok((len, buffer))
}

/// A list of frame sizes (`None`: absent, or not a list of sizes).
fn frames_of_json(v: &Value) -> Option<Vec<u64>> {
    v.as_array()?.iter().map(Value::as_u64).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A manifest that claims an unpacked size no part can have is refused,
    /// and a size that cannot be had is an error: it aborted the process
    /// ("memory allocation of 4503599627370496 bytes failed").
    #[test]
    fn a_claimed_size_past_what_zstd_makes_is_refused_not_allocated() {
        let (packed, stored) = PartRef::pack(&b"words and more words ".repeat(100));
        for claimed in [1u64 << 36, 1 << 52, u64::MAX] {
            let lying = PartRef { raw_size: claimed, ..packed.clone() };
            let m = Manifest { index: lying.clone(), texts: PartRef::of(b""), postings: None, retired: Vec::new() };
            assert!(Manifest::decode(&m.encode()).is_err(), "{claimed}");
            assert!(lying.unpack(&stored).is_err(), "{claimed}");
        }
        assert!(unpacked_buffer(&PartRef { raw_size: 1 << 62, ..packed.clone() }).is_err());
        assert!(PartFill::new(PartRef { raw_size: 1 << 62, frames: vec![1; 4], ..packed }).is_err());
    }

    /// A part stored otherwise (`fresh`) has a key of its own and reads
    /// back the same, whole and frame by frame, stored as it was or packed.
    #[test]
    fn a_fresh_part_has_its_own_key_and_the_same_content() {
        let big: Vec<u8> = (0..2 * FRAME + 777).map(|i| (i % 251) as u8 ^ (i / 4093) as u8).collect();
        let incompressible: Vec<u8> = (0..5000u32).map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8).collect();
        for raw in [big, incompressible, Vec::new(), b"short".to_vec()] {
            let (part, stored) = PartRef::pack(&raw);
            let (fresh, bytes) = part.fresh(&stored, 42).unwrap();
            let (again, _) = part.fresh(&stored, 43).unwrap();
            assert_eq!(part.fresh(&stored, 42).unwrap().0, fresh, "the same nonce makes the same part");
            assert!(fresh.key != part.key && again.key != fresh.key, "{} bytes", raw.len());
            assert_eq!(fresh.unpack(&bytes).unwrap().bytes(), raw);
            let m = Manifest { index: fresh.clone(), texts: PartRef::of(b""), postings: None, retired: Vec::new() };
            let read = Manifest::decode(&m.encode()).unwrap().index;
            assert_eq!(read, fresh, "its frames still make up the part");
            for i in 0..fresh.frames.len() {
                let (at, span) = fresh.frame_span(i).unwrap();
                let frame = &bytes[at.start as usize..at.end as usize];
                assert_eq!(fresh.unpack_frame(i, frame).unwrap(), &raw[span.start as usize..span.end as usize]);
            }
        }
    }

    #[test]
    fn a_manifest_round_trips_and_a_part_checks_its_bytes() {
        let part = PartRef::of(b"snapshot bytes");
        let m = Manifest { index: part.clone(), texts: PartRef::of(b""), postings: None, retired: Vec::new() };
        assert_eq!(Manifest::decode(&m.encode()).unwrap(), m);
        let raw = b"a snapshot of many words, many words, many words, many words".repeat(20);
        let (packed, stored) = PartRef::pack(&raw);
        assert!(packed.zstd && stored.len() < raw.len());
        let m = Manifest { index: part.clone(), texts: packed.clone(), postings: None, retired: Vec::new() };
        assert_eq!(Manifest::decode(&m.encode()).unwrap().texts, packed);
        assert_eq!(packed.unpack(&stored).unwrap().bytes(), raw);
        assert!(packed.unpack(&stored[..stored.len() - 1]).is_err());
        // Larger than a frame: several frames, unpacked each in its place.
        let big: Vec<u8> = (0..3 * FRAME + 12_345).map(|i| (i % 251) as u8 ^ (i / 4093) as u8).collect();
        let (framed, stored_framed) = PartRef::pack(&big);
        assert_eq!(frames_of(&stored_framed).unwrap().len(), 4);
        assert_eq!(framed.unpack(&stored_framed).unwrap().bytes(), big);
        // Each frame read on its own, by its span, checked.
        assert_eq!(framed.frames.len(), 4);
        assert_eq!(
            Manifest::decode(
                &Manifest { index: part.clone(), texts: framed.clone(), postings: None, retired: Vec::new() }.encode()
            )
            .unwrap()
            .texts,
            framed
        );
        for i in 0..4 {
            let (at, raw) = framed.frame_span(i).unwrap();
            let frame = &stored_framed[at.start as usize..at.end as usize];
            assert_eq!(framed.unpack_frame(i, frame).unwrap(), &big[raw.start as usize..raw.end as usize]);
            assert!(framed.unpack_frame(i, &frame[1..]).is_err(), "a short frame");
            let mut flipped = frame.to_vec();
            flipped[frame.len() / 2] ^= 0x55;
            assert!(framed.unpack_frame(i, &flipped).is_err(), "a damaged frame fails its checksum");
        }
        assert!(framed.frame_span(4).is_none());
        // Frame sizes that do not make up the part: ignored.
        let mut wrong = part_json(&framed);
        wrong["frames"] = json!([1, 2, 3, 4]);
        assert_eq!(part_of(&wrong).unwrap().frames, Vec::<u64>::new(), "read whole");
        wrong["frames"] = json!([u64::MAX, u64::MAX, 2, framed.size]);
        assert_eq!(part_of(&wrong).unwrap().frames, Vec::<u64>::new());
        // In pieces, frames across them included: the same part.
        let cut = [FRAME - 7, 2 * FRAME + 100, 2 * FRAME + 100];
        let pieces = [&big[..cut[0]], &big[cut[0]..cut[1]], &big[cut[1]..cut[2]], &big[cut[2]..]];
        assert_eq!(PartRef::pack_pieces(&pieces), (framed.clone(), stored_framed.clone()));
        // One stream as well, as any zstd reader reads it.
        assert_eq!(zstd::bulk::decompress(&stored_framed, big.len()).unwrap(), big);
        // A part of one frame (as before frames) unpacks as one.
        let one = zstd::bulk::compress(&big, 3).unwrap();
        let single = PartRef { zstd: true, raw_size: big.len() as u64, ..PartRef::of(&one) };
        assert_eq!(single.unpack(&one).unwrap().bytes(), big);
        // A frame saying a size other than the part's: not unpacked past it.
        let short = PartRef { raw_size: big.len() as u64 - 1, ..framed.clone() };
        assert!(short.unpack(&stored_framed).is_err());
        assert!(part.check(b"snapshot bytes").is_ok());
        assert!(matches!(part.check(b"snapshot byte"), Err(SnapshotError::Truncated { .. })));
        assert!(matches!(part.check(b"snapshot bytez"), Err(SnapshotError::Checksum)));
        assert!(Manifest::decode(b"{}").is_err());
        let foreign = br#"{"format":"workspace-search/manifest-2","index":{"key":"../x","size":1,"hash":"00000000000000000000000000000000"},"texts":{"key":"parts/00000000000000000000000000000000.wss","size":1,"hash":"00000000000000000000000000000000"}}"#;
        assert!(Manifest::decode(foreign).is_err());
        // A part stored as it is, said to unpack to another size.
        let h = "00000000000000000000000000000000";
        let sizes = |raw: u64| {
            let part = format!(r#"{{"key":"parts/{h}.wss","size":4,"hash":"{h}","encoding":"none","rawSize":{raw}}}"#);
            format!(r#"{{"format":"workspace-search/manifest-2","index":{part},"texts":{part}}}"#)
        };
        assert!(Manifest::decode(sizes(4).as_bytes()).is_ok());
        assert!(Manifest::decode(sizes(400).as_bytes()).is_err());
        // Postings kept with the texts: a manifest-3 names where they lay.
        let big_part = |raw_size| PartRef { raw_size, zstd: true, ..PartRef::of(b"x") };
        let apart = Manifest {
            index: big_part(4096),
            texts: big_part(8192),
            postings: Some((48 + 400, 6000)),
            retired: Vec::new(),
        };
        let encoded = apart.encode();
        assert!(String::from_utf8_lossy(&encoded).contains("manifest-3"));
        assert_eq!(Manifest::decode(&encoded).unwrap(), apart);
        for wrong in [(48 + 401, 6000), (20, 6000), (5000, 6000), (48 + 400, 9000)] {
            let m = Manifest { postings: Some(wrong), ..apart.clone() };
            assert!(Manifest::decode(&m.encode()).is_err(), "{wrong:?}: outside its parts");
        }
        let mut none: Value = serde_json::from_slice(&encoded).unwrap();
        none.as_object_mut().unwrap().remove("postingsApart");
        assert!(Manifest::decode(&serde_json::to_vec(&none).unwrap()).is_err(), "manifest-3 names its postings");
        // An older manifest's snapshot is rebuilt, as an older snapshot file is.
        let older = br#"{"format":"workspace-search/manifest-1","snapshot":{}}"#;
        assert!(matches!(Manifest::decode(older), Err(SnapshotError::Version { found: 9, .. })));
    }

    #[test]
    fn a_part_filled_by_runs_in_any_order_is_the_part() {
        let big: Vec<u8> = (0..7 * FRAME + 999).map(|i| (i % 241) as u8 ^ (i / 5003) as u8).collect();
        let (part, stored) = PartRef::pack(&big);
        assert_eq!(part.frames.len(), 8);
        let runs = part.frame_runs(3);
        assert_eq!(runs.first().unwrap().start, 0);
        assert_eq!(runs.last().unwrap().end, 8);
        assert!(runs.windows(2).all(|w| w[0].end == w[1].start), "neighbours, every frame once: {runs:?}");
        assert!(runs.len() <= 3);
        assert_eq!(part.frame_runs(100).len(), 8, "never more runs than frames");
        let stored_of = |run: &std::ops::Range<usize>| {
            let at = part.run_span(run).unwrap();
            &stored[at.start as usize..at.end as usize]
        };
        let fill = PartFill::new(part.clone()).unwrap();
        for run in runs.iter().rev() {
            fill.fill(run.clone(), stored_of(run)).unwrap();
        }
        assert_eq!(fill.finish().unwrap().bytes(), big);
        // A run missing, short or damaged is never taken.
        let fill = PartFill::new(part.clone()).unwrap();
        fill.fill(runs[0].clone(), stored_of(&runs[0])).unwrap();
        let short = stored_of(&runs[1]);
        assert!(matches!(fill.fill(runs[1].clone(), &short[1..]), Err(SnapshotError::Truncated { .. })));
        let mut damaged = short.to_vec();
        damaged[short.len() / 2] ^= 0x55;
        assert!(fill.fill(runs[1].clone(), &damaged).is_err(), "a damaged frame fails its checksum");
        assert!(fill.finish().is_err(), "frames missing");
        // A part without frames to read by range is not filled by runs.
        assert!(PartFill::new(PartRef::of(&big)).is_err());
    }

    #[test]
    fn a_save_retires_the_parts_it_replaces_and_deletes_them_once_their_time_is_up() {
        let manifest = |index: &[u8], texts: &[u8]| Manifest {
            index: PartRef::of(index),
            texts: PartRef::of(texts),
            postings: None,
            retired: Vec::new(),
        };
        let (first, second, third) = (manifest(b"i1", b"t1"), manifest(b"i2", b"t1"), manifest(b"i3", b"t3"));
        // The texts part is shared: only the index part is retired.
        let (kept, due) = first.retire(&second, 1_000, 500);
        assert_eq!(kept, vec![Retired { key: first.index.key.clone(), at_ms: 1_000 }]);
        assert!(due.is_empty());
        let second = Manifest { retired: kept, ..second };
        let round = Manifest::decode(&second.encode()).unwrap();
        assert_eq!(round, second, "the list goes through the manifest");
        // 600 ms later the first index part is due; the second's two parts are retired now.
        let (kept, due) = second.retire(&third, 1_600, 500);
        assert_eq!(due.iter().map(|r| &r.key).collect::<Vec<_>>(), vec![&first.index.key]);
        assert_eq!(
            kept.iter().map(|r| (&r.key, r.at_ms)).collect::<Vec<_>>(),
            vec![(&second.index.key, 1_600), (&second.texts.key, 1_600)]
        );
        // A part named again (the same bytes saved again) is neither kept nor deleted.
        let back = manifest(b"i1", b"t3");
        let (kept, due) = Manifest { retired: kept.clone(), ..third.clone() }.retire(&back, 1_700, 500);
        assert!(!kept.iter().chain(&due).any(|r| r.key == back.index.key));
        // Past MAX_RETIRED the oldest are due at once.
        let many: Vec<Retired> =
            (0..MAX_RETIRED as u64 + 5).map(|n| Retired { key: PartRef::of(&n.to_le_bytes()).key, at_ms: n }).collect();
        let (kept, due) = Manifest { retired: many, ..first.clone() }.retire(&second, 10_000, u64::MAX);
        assert_eq!((kept.len(), due.len()), (MAX_RETIRED, 6));
        assert_eq!(due[0].at_ms, 0);
    }

    #[test]
    fn a_manifest_lists_only_parts_as_retired() {
        let m = Manifest { index: PartRef::of(b"i"), texts: PartRef::of(b"t"), postings: None, retired: Vec::new() };
        let mut v: Value = serde_json::from_slice(&m.encode()).unwrap();
        let part = PartRef::of(b"x").key;
        v["retired"] = json!([
            { "key": "manifest.json", "at": 1 },
            { "key": "../parts/00000000000000000000000000000000.wss", "at": 1 },
            { "key": "parts/0000.wss", "at": 1 },
            { "key": part, "at": -1 },
            { "key": part, "at": 2 },
        ]);
        let decoded = Manifest::decode(&serde_json::to_vec(&v).unwrap()).unwrap();
        assert_eq!(decoded.retired, vec![Retired { key: part, at_ms: 2 }]);
    }
}
