//! Text left in the snapshot file until something reads it. A warm start
//! does not copy every document's text into fresh memory (on a 50,000-file
//! workspace, 300 MB and most of its time); a text is read, checked and
//! kept the first time a result, a save or a caller needs it.
//!
//! Texts are read with positional reads through the handle the file was
//! mapped and checked through: our own saves rename a new file over the
//! name (this handle keeps the old inode). A text that fails its checksum
//! (damaged on disk, or the file changed in place by another program) is
//! read again from the indexed file when that file still holds exactly it
//! (`StoredFile::set_recover`); else it comes back blank and marked so
//! (`is_damaged`: searches leave such a document out). Either way the
//! snapshot file is removed so the next start rebuilds, unless it holds
//! documents given to `index()`, which no file can give again.

use super::section::Backing;
use std::borrow::Cow;
use std::fs::File;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};

/// Gives the intact text with this xxh3 and byte length from where it
/// came from (the indexed file), if it is still there.
pub type Recover = Box<dyn Fn(u64, usize) -> Option<String> + Send + Sync>;

/// Where texts are read from: the snapshot file, and the name it was
/// opened by; or a snapshot store's texts part, still on its way.
pub struct StoredFile {
    source: Source,
    damaged: AtomicBool,
    recover: OnceLock<Recover>,
    /// Whether a damaged file may be removed (the next start then rebuilds
    /// from the files): not where it holds documents no file can give again.
    removable: OnceLock<Box<dyn Fn() -> bool + Send + Sync>>,
}

enum Source {
    File(File, PathBuf),
    Apart(Arc<TextsApart>),
}

/// A texts part fetched after the rest of the snapshot: a workspace
/// attaches and ranks without it; a read waits for it (the engine's
/// searches wait before they read, and report a fetch that failed). Until
/// it is here whole, frames of it read by range serve the reads they hold.
pub struct TextsApart {
    state: parking_lot::Mutex<Apart>,
    arrived: parking_lot::Condvar,
    /// How long a read waits (the store's timeout), then fails.
    wait: std::time::Duration,
    /// The unpacked size of each frame read by range (`frame_arrive`).
    frame: u64,
    /// Called when a read must wait for the whole part: its fetch may not
    /// have started (a large part read by range only).
    wanted: OnceLock<Box<dyn Fn() + Send + Sync>>,
}

enum Apart {
    /// Not here whole yet; the frames read by range so far, by number, and
    /// how many fetches of the whole failed (a read waiting for one stops).
    Waiting(std::collections::BTreeMap<usize, Arc<Vec<u8>>>, u64),
    Here(Arc<Backing>),
    /// What the store holds is not this part: every read fails (and is
    /// read again from the indexed file where it can be: `set_recover`),
    /// but for those the frames read by range before hold: each was checked
    /// on its own, and a search may have ranked on their being here.
    Broken(std::collections::BTreeMap<usize, Arc<Vec<u8>>>),
}

impl TextsApart {
    /// `frame`: the unpacked size of the part's frames (0: none read by range).
    pub fn new(wait: std::time::Duration, frame: u64) -> Arc<TextsApart> {
        let state = parking_lot::Mutex::new(Apart::Waiting(Default::default(), 0));
        Arc::new(TextsApart { state, arrived: parking_lot::Condvar::new(), wait, frame, wanted: OnceLock::new() })
    }

    /// What starts the fetch of the whole part, when a read waits for it.
    pub fn when_wanted(&self, start: Box<dyn Fn() + Send + Sync>) {
        let _ = self.wanted.set(start);
    }

    /// The part's bytes (checked as the part the manifest names).
    pub fn arrive(&self, bytes: Arc<Backing>) {
        *self.state.lock() = Apart::Here(bytes);
        self.arrived.notify_all();
    }

    /// The store holds no such part (truncated, foreign): it never arrives.
    pub fn broken(&self) {
        let mut state = self.state.lock();
        let frames = match std::mem::replace(&mut *state, Apart::Broken(Default::default())) {
            Apart::Waiting(frames, _) | Apart::Broken(frames) => frames,
            Apart::Here(_) => Default::default(),
        };
        *state = Apart::Broken(frames);
        self.arrived.notify_all();
    }

    /// A fetch of the whole part failed (the store is down or slow): the
    /// reads waiting for it fail now; later ones ask again.
    pub fn fetch_failed(&self) {
        if let Apart::Waiting(_, failures) = &mut *self.state.lock() {
            *failures += 1;
        }
        self.arrived.notify_all();
    }

    /// Frame `i` of the part, read by range and checked, while the whole is
    /// not here.
    pub fn frame_arrive(&self, i: usize, bytes: Vec<u8>) {
        // (Also once broken: a search that asked for it reads it.)
        if let Apart::Waiting(frames, _) | Apart::Broken(frames) = &mut *self.state.lock() {
            frames.insert(i, Arc::new(bytes));
        }
        self.arrived.notify_all();
    }

    /// The frames that hold the bytes `spans` (offset, length) and are not
    /// here (none once the whole part is, or can never be).
    pub fn missing_frames(&self, spans: &[(u64, usize)]) -> Vec<usize> {
        let state = self.state.lock();
        let Apart::Waiting(frames, _) = &*state else { return Vec::new() };
        let mut missing: Vec<usize> =
            spans.iter().flat_map(|&span| self.frames_of(span)).filter(|i| !frames.contains_key(i)).collect();
        missing.sort_unstable();
        missing.dedup();
        missing
    }

    fn frames_of(&self, (offset, len): (u64, usize)) -> std::ops::Range<usize> {
        if self.frame == 0 || len == 0 {
            return 0..0;
        }
        let last = offset.saturating_add(len as u64 - 1) / self.frame;
        (offset / self.frame) as usize..last as usize + 1
    }

    /// The part's bytes, once here.
    pub fn bytes(&self) -> Option<Arc<Backing>> {
        match &*self.state.lock() {
            Apart::Here(bytes) => Some(bytes.clone()),
            _ => None,
        }
    }

    fn read_at(&self, offset: u64, len: usize) -> std::io::Result<Vec<u8>> {
        match self.region(offset, len)? {
            Region::Whole(backing) => slice_of(backing.bytes(), offset, len),
            Region::Copied(bytes) => Ok(bytes),
        }
    }

    /// The `len` bytes at `offset`, waiting for them as a text's read
    /// does: the whole part once it is here (read where it lies), else a
    /// copy from the frames read by range.
    pub fn region(&self, offset: u64, len: usize) -> std::io::Result<Region> {
        let mut deadline = std::time::Instant::now() + self.wait;
        let mut state = self.state.lock();
        let mut asked = false;
        let failed_before = match &*state {
            Apart::Waiting(_, failures) => *failures,
            _ => 0,
        };
        loop {
            match &*state {
                Apart::Here(backing) => return Ok(Region::Whole(backing.clone())),
                Apart::Broken(frames) => {
                    return match self.read_frames(frames, offset, len) {
                        Some(bytes) => bytes.map(Region::Copied),
                        None => Err(std::io::Error::other("the texts part is not here")),
                    }
                }
                Apart::Waiting(frames, failures) => {
                    if let Some(bytes) = self.read_frames(frames, offset, len) {
                        return bytes.map(Region::Copied);
                    }
                    if *failures != failed_before {
                        return Err(std::io::Error::other("the texts part could not be fetched"));
                    }
                }
            }
            if !std::mem::replace(&mut asked, true) {
                if let Some(start) = self.wanted.get() {
                    // (Not under the lock: starting the fetch takes it.)
                    parking_lot::MutexGuard::unlocked(&mut state, start);
                    // The fetch it started: a GET within the store's timeout, then unpacking.
                    deadline = std::time::Instant::now() + 2 * self.wait;
                    continue;
                }
            }
            if self.arrived.wait_until(&mut state, deadline).timed_out() {
                return Err(std::io::Error::other("the texts part is not here"));
            }
        }
    }

    /// The bytes from the frames read by range, if they are all here.
    fn read_frames(
        &self,
        frames: &std::collections::BTreeMap<usize, Arc<Vec<u8>>>,
        offset: u64,
        len: usize,
    ) -> Option<std::io::Result<Vec<u8>>> {
        if len == 0 {
            return Some(Ok(Vec::new()));
        }
        let needed = self.frames_of((offset, len));
        if needed.is_empty() || !needed.clone().all(|i| frames.contains_key(&i)) {
            return None;
        }
        let mut out = Vec::with_capacity(len);
        for i in needed {
            let frame = &frames[&i];
            let start = (i as u64 * self.frame) as usize;
            let from = (offset as usize).max(start) - start;
            let to = ((offset as usize + len).min(start + frame.len())).checked_sub(start)?;
            out.extend_from_slice(frame.get(from..to)?);
        }
        Some(if out.len() == len { Ok(out) } else { Err(std::io::ErrorKind::UnexpectedEof.into()) })
    }
}

/// Bytes of a part apart (`TextsApart::region`).
pub enum Region {
    /// The whole part: the bytes asked for lie where they were asked.
    Whole(Arc<Backing>),
    /// Just the bytes asked for.
    Copied(Vec<u8>),
}

/// `len` bytes at `offset` of `bytes`, or an end of file.
fn slice_of(bytes: &[u8], offset: u64, len: usize) -> std::io::Result<Vec<u8>> {
    let start = usize::try_from(offset).ok().filter(|&s| s.checked_add(len).is_some_and(|e| e <= bytes.len()));
    let start = start.ok_or_else(|| std::io::Error::from(std::io::ErrorKind::UnexpectedEof))?;
    Ok(bytes[start..start + len].to_vec())
}

impl std::fmt::Debug for StoredFile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let path = match &self.source {
            Source::File(_, path) => Some(path),
            Source::Apart(_) => None,
        };
        f.debug_struct("StoredFile").field("path", &path).finish_non_exhaustive()
    }
}

impl StoredFile {
    pub fn new(file: File, path: PathBuf) -> Arc<StoredFile> {
        StoredFile::of(Source::File(file, path))
    }

    /// Texts read from a texts part once it arrives.
    pub fn apart(texts: Arc<TextsApart>) -> Arc<StoredFile> {
        StoredFile::of(Source::Apart(texts))
    }

    /// The part apart these texts are read from, if they are (not a file).
    pub fn apart_part(&self) -> Option<&Arc<TextsApart>> {
        match &self.source {
            Source::Apart(apart) => Some(apart),
            Source::File(..) => None,
        }
    }

    fn of(source: Source) -> Arc<StoredFile> {
        Arc::new(StoredFile {
            source,
            damaged: AtomicBool::new(false),
            recover: OnceLock::new(),
            removable: OnceLock::new(),
        })
    }

    /// Whether the file may be removed once a text in it is found damaged
    /// (set once, after loading; unset: it may).
    pub fn set_removable(&self, removable: Box<dyn Fn() -> bool + Send + Sync>) {
        let _ = self.removable.set(removable);
    }

    /// Where a damaged text is read again from (set once, after loading).
    pub fn set_recover(&self, recover: Recover) {
        let _ = self.recover.set(recover);
    }

    /// The intact text of `hash` and `len` from its source, checked.
    fn recovered(&self, hash: u64, len: usize) -> Option<Box<str>> {
        let text = (self.recover.get()?)(hash, len)?;
        (text.len() == len && xxhash_rust::xxh3::xxh3_64(text.as_bytes()) == hash).then(|| text.into_boxed_str())
    }

    /// A text failed its checksum: the file was damaged after it was
    /// written, or changed in place. Texts are outside the whole-file
    /// checksum (loading does not read them), so the next start would load
    /// the same file again: it is removed while it is still the file at
    /// that name (not one our own later save renamed there), and the next
    /// start rebuilds from the files.
    fn damaged(&self) {
        if self.damaged.swap(true, Ordering::Relaxed) {
            return;
        }
        // (A texts part was checked whole when it arrived: nothing on disk to remove.)
        let Source::File(file, path) = &self.source else { return };
        // Documents given to `index()` are in no file: removed, they would
        // all be lost at the next start, the intact ones with the damaged.
        if self.removable.get().is_some_and(|removable| !removable()) {
            return;
        }
        if let (Ok(open), Ok(named)) = (file.metadata(), std::fs::metadata(path)) {
            if same_file(&open, &named) {
                let _ = std::fs::remove_file(path);
            }
        }
    }

    fn read_at(&self, offset: u64, len: usize) -> std::io::Result<Vec<u8>> {
        let file = match &self.source {
            Source::File(file, _) => file,
            Source::Apart(texts) => return texts.read_at(offset, len),
        };
        let mut buf = vec![0u8; len];
        #[cfg(unix)]
        std::os::unix::fs::FileExt::read_exact_at(file, &mut buf, offset)?;
        #[cfg(windows)]
        {
            let mut done = 0;
            while done < len {
                let n = std::os::windows::fs::FileExt::seek_read(file, &mut buf[done..], offset + done as u64)?;
                if n == 0 {
                    return Err(std::io::ErrorKind::UnexpectedEof.into());
                }
                done += n;
            }
        }
        Ok(buf)
    }
}

/// One text of a snapshot: where it is, its checksum, and once read, itself.
pub struct StoredText {
    file: Arc<StoredFile>,
    offset: u64,
    len: u32,
    hash: u64,
    /// The text once read; `Err` holds the blank stand-in of a text the
    /// file no longer held (never saved as if it were the text).
    loaded: OnceLock<Result<Box<str>, Box<str>>>,
}

impl StoredText {
    pub fn new(file: Arc<StoredFile>, offset: u64, len: u32, hash: u64) -> StoredText {
        StoredText { file, offset, len, hash, loaded: OnceLock::new() }
    }

    pub fn len(&self) -> usize {
        self.len as usize
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The xxh3 of the text, as saved (and checked whenever it is read).
    pub fn hash(&self) -> u64 {
        self.hash
    }

    pub fn is_loaded(&self) -> bool {
        self.loaded.get().is_some()
    }

    /// Where the text lies (offset, length), while it is still unread.
    pub fn unread_span(&self) -> Option<(u64, usize)> {
        (!self.is_loaded()).then_some((self.offset, self.len()))
    }

    /// The text, read on first use. A file that no longer holds it (changed
    /// in place by another program) gives spaces of the same length, so
    /// that every range of it stays valid: never a panic, never foreign
    /// bytes passed off as the document.
    pub fn text(&self) -> &str {
        if self.loaded.get().is_none() {
            let value = match self.read_checked() {
                Some(b) => Ok(String::from_utf8(b).expect("checked by read_checked()").into_boxed_str()),
                None => self.recovered_or_blank(),
            };
            let _ = self.loaded.set(value);
        }
        match self.loaded.get().expect("set above") {
            Ok(t) | Err(t) => t,
        }
    }

    /// Whether the text failed its checksum and could not be read again
    /// from its file (`text()` is then blank).
    pub fn is_damaged(&self) -> bool {
        matches!(self.loaded.get(), Some(Err(_)))
    }

    /// The text's bytes, checked against its checksum (an unread text is
    /// not kept: a save streams every text without loading them all).
    pub fn bytes(&self) -> std::io::Result<Cow<'_, [u8]>> {
        if self.loaded.get().is_none() {
            if let Some(b) = self.read_checked() {
                return Ok(Cow::Owned(b));
            }
            let _ = self.loaded.set(self.recovered_or_blank());
        }
        match self.loaded.get() {
            Some(Ok(t)) => Ok(Cow::Borrowed(t.as_bytes())),
            _ => Err(changed()),
        }
    }

    /// The bytes in the snapshot, if they pass the checksum and are UTF-8.
    fn read_checked(&self) -> Option<Vec<u8>> {
        let b = self.file.read_at(self.offset, self.len()).ok()?;
        (xxhash_rust::xxh3::xxh3_64(&b) == self.hash && std::str::from_utf8(&b).is_ok()).then_some(b)
    }

    /// After a failed checksum: the text from its intact source, or a
    /// blank of the same length (every range of it stays valid: never a
    /// panic, never foreign bytes passed off as the document).
    fn recovered_or_blank(&self) -> Result<Box<str>, Box<str>> {
        self.file.damaged();
        self.file.recovered(self.hash, self.len()).ok_or_else(|| " ".repeat(self.len()).into_boxed_str())
    }
}

#[cfg(unix)]
fn same_file(a: &std::fs::Metadata, b: &std::fs::Metadata) -> bool {
    use std::os::unix::fs::MetadataExt;
    (a.dev(), a.ino()) == (b.dev(), b.ino())
}

#[cfg(not(unix))]
fn same_file(a: &std::fs::Metadata, b: &std::fs::Metadata) -> bool {
    (a.len(), a.modified().ok()) == (b.len(), b.modified().ok())
}

/// (`InvalidData`: what a snapshot store's side tells from other failures.)
fn changed() -> std::io::Error {
    std::io::Error::new(
        std::io::ErrorKind::InvalidData,
        "a text in the snapshot file failed its checksum (the file changed since it was loaded, or was damaged): nothing is saved over it; give a damaged document from index() again (index() or unindex()), or the next start rebuilds from the files",
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_read_by_range_serve_their_reads_once_the_part_is_found_broken() {
        let part = TextsApart::new(std::time::Duration::from_millis(20), 4);
        part.frame_arrive(0, b"abcd".to_vec());
        part.broken();
        // Asked for by a search before the part was found broken, here after.
        part.frame_arrive(2, b"ijkl".to_vec());
        let read = |offset, len| match part.region(offset, len) {
            Ok(Region::Copied(bytes)) => Some(bytes),
            _ => None,
        };
        assert_eq!(read(1, 2).as_deref(), Some(&b"bc"[..]));
        assert_eq!(read(8, 4).as_deref(), Some(&b"ijkl"[..]));
        assert!(part.region(4, 2).is_err(), "a frame never read fails, never reads blank");
        assert!(part.missing_frames(&[(4, 2)]).is_empty(), "nothing more is fetched");
    }
}
