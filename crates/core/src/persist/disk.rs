//! A snapshot on disk: `snapshot.wss` in the persist directory, replaced
//! atomically (written to a temporary file in the same directory, synced,
//! renamed over the old one, directory synced), so that a reader or a
//! process killed in the middle always finds the previous snapshot or the
//! next one, whole. The header carries a magic, the format version, the
//! payload's length and its xxh3 checksum, which leaves out the documents'
//! texts (each has its own, checked when it is read: loading reads none).
//! The file is read-only and memory-mapped; a loaded index keeps using it.
//! `lock` is held by the one process that writes a directory.

use super::codec::Encoder;
use super::{SnapshotError, FORMAT_VERSION};
use crate::bytes::section::Backing;
use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

const MAGIC: &[u8; 8] = b"WSSNAP\r\n";
/// Magic, format version, spare word, payload length, checksum, and the
/// span of the payload the checksum leaves out (start, end).
pub const HEADER: usize = 8 + 4 + 4 + 8 + 8 + 8 + 8;
pub const SNAPSHOT_FILE: &str = "snapshot.wss";
/// grep's trigram index and file table (`grep::store`), beside the snapshot.
pub const GREP_FILE: &str = "grep.wss";
const LOCK_FILE: &str = "lock";
/// A `.gitignore` that leaves out the whole directory: one inside a folder
/// that is indexed or searched (another workspace over it, the command
/// line's other runs, git) is passed over there, as the workspace that owns
/// it passes over it. Its lock file ranked first for "process" there.
const IGNORE_FILE: &str = ".gitignore";
const IGNORE_TEXT: &str = "# workspace-search's index: not to be indexed, searched or committed\n*\n";
/// The first line of a lock file of ours: a file named `lock` without it
/// is someone else's, never written.
const LOCK_MARK: &str = "workspace-search persist lock";
const TEMP_MARK: &str = ".tmp-";

pub fn snapshot_path(dir: &Path) -> PathBuf {
    dir.join(SNAPSHOT_FILE)
}

/// The payload of a snapshot file's bytes, checked.
pub fn unframe(bytes: &[u8]) -> Result<&[u8], SnapshotError> {
    unframe_head(bytes, 0)
}

/// Where a framed snapshot's texts (the payload's tail) begin, if it has
/// its texts last: the bytes before are its head, which a snapshot store
/// keeps apart from them.
pub fn texts_start(framed: &[u8]) -> Option<usize> {
    let long = |at: usize| Some(u64::from_le_bytes(framed.get(at..at + 8)?.try_into().ok()?));
    let (len, skip_start, skip_end) = (long(16)?, long(32)?, long(40)?);
    let start = HEADER.checked_add(usize::try_from(skip_start).ok()?)?;
    (skip_end == len && framed.len() as u64 == HEADER as u64 + len && start <= framed.len()).then_some(start)
}

/// The payload of a snapshot's bytes without its texts, the last `apart`
/// bytes of the payload (a snapshot store's texts part), checked. With
/// `apart` 0, the whole snapshot (`unframe`).
pub fn unframe_head(bytes: &[u8], apart: u64) -> Result<&[u8], SnapshotError> {
    let framed = frame_of(bytes, apart)?;
    framed.verify()?;
    Ok(framed.payload)
}

/// A snapshot's payload, its frame checked but not yet its checksum
/// (`verify`): a load decodes it while the checksum is computed on the
/// other core, and keeps the result only if both succeed.
pub struct Framed<'a> {
    pub payload: &'a [u8],
    checksum: u64,
    /// The texts: left out of the checksum (each is checked when read).
    skip: (usize, usize),
}

impl Framed<'_> {
    pub fn verify(&self) -> Result<(), SnapshotError> {
        // Everything but the texts, so that loading never touches their pages.
        let mut hasher = xxhash_rust::xxh3::Xxh3::new();
        hasher.update(&self.payload[..self.skip.0]);
        hasher.update(&self.payload[self.skip.1..]);
        if hasher.digest() != self.checksum {
            return Err(SnapshotError::Checksum);
        }
        Ok(())
    }
}

/// `unframe_head`'s checks but the checksum's.
pub fn frame_of(bytes: &[u8], apart: u64) -> Result<Framed<'_>, SnapshotError> {
    frame_apart(bytes, apart, 0)
}

/// `frame_of` for a head whose part apart (`apart` bytes) begins with
/// `postings` bytes of the index's postings, then the texts: the texts'
/// span then starts that much past the head's end. Such a head is not
/// summed (the sum covers the postings, which are apart): each of its
/// part's frames was checked on its own.
pub fn frame_apart(bytes: &[u8], apart: u64, postings: u64) -> Result<Framed<'_>, SnapshotError> {
    if bytes.len() < 12 || &bytes[..8] != MAGIC {
        return Err(SnapshotError::NotSnapshot);
    }
    let word = |at: usize| u32::from_le_bytes(bytes[at..at + 4].try_into().expect("4 bytes"));
    let version = word(8);
    if version != FORMAT_VERSION {
        return Err(SnapshotError::Version { found: version, expected: FORMAT_VERSION });
    }
    if bytes.len() < HEADER {
        return Err(SnapshotError::Truncated { got: bytes.len() as u64, expected: HEADER as u64 });
    }
    let long = |at: usize| u64::from_le_bytes(bytes[at..at + 8].try_into().expect("8 bytes"));
    let (len, checksum, skip_start, skip_end) = (long(16), long(24), long(32), long(40));
    let payload = &bytes[HEADER..];
    let here = payload.len() as u64;
    if here.checked_add(apart) != Some(len) {
        let expected = (HEADER as u64 + len).saturating_sub(apart);
        return Err(SnapshotError::Truncated { got: bytes.len() as u64, expected });
    }
    // What is apart is the texts, all of them (after the postings, if they are apart too).
    let texts_at = here.checked_add(postings).filter(|&at| postings <= apart && at <= len);
    if skip_start > skip_end || skip_end > len || (apart > 0 && (Some(skip_start) != texts_at || skip_end != len)) {
        return Err(SnapshotError::Checksum);
    }
    let skip_start = skip_start.min(here);
    Ok(Framed { payload, checksum, skip: (skip_start as usize, skip_end.min(here) as usize) })
}

/// A snapshot file's bytes: mapped from the file (no copy of a file
/// that may be hundreds of megabytes; the loaded index keeps using its
/// postings and line tables there), or read where mapping fails.
pub enum SnapshotBytes {
    Mapped(std::sync::Arc<Backing>),
    Read(Vec<u8>),
}

impl SnapshotBytes {
    /// The mapping, if a loaded index may keep viewing it. Not on Windows,
    /// where a mapped file cannot be replaced, so that our own next save
    /// (a rename over its name) would fail while the index lives.
    pub fn mapping(&self) -> Option<&std::sync::Arc<Backing>> {
        match self {
            SnapshotBytes::Mapped(m) if cfg!(unix) => Some(m),
            _ => None,
        }
    }
}

impl std::ops::Deref for SnapshotBytes {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match self {
            SnapshotBytes::Mapped(m) => m.bytes(),
            SnapshotBytes::Read(v) => v,
        }
    }
}

/// Opens `path` for reading as a regular file only: a symbolic link is not
/// followed (the open fails), and a FIFO or device is refused without
/// blocking on it (opened non-blocking, checked before any read).
pub fn open_regular(path: &Path) -> std::io::Result<File> {
    let mut options = OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::custom_flags(&mut options, libc::O_NOFOLLOW | libc::O_NONBLOCK);
    let file = options.open(path).map_err(|e| {
        #[cfg(unix)]
        if e.raw_os_error() == Some(libc::ELOOP) {
            return std::io::Error::other(format!("{} is a symbolic link, not a snapshot", path.display()));
        }
        e
    })?;
    let kind = file.metadata()?.file_type();
    if !kind.is_file() {
        let what = crate::ingest::scan::kind_of(kind);
        return Err(std::io::Error::other(format!("{} is {what}, not a regular file", path.display())));
    }
    Ok(file)
}

/// Refuses a file that has other names (hard links): written in place, a
/// file named so in the persist directory would change a user's file
/// elsewhere, which `O_NOFOLLOW` does not see.
pub fn only_name(meta: &std::fs::Metadata, path: &Path) -> std::io::Result<()> {
    #[cfg(unix)]
    if std::os::unix::fs::MetadataExt::nlink(meta) > 1 {
        return Err(std::io::Error::other(format!("{} has other names (a hard link): not written", path.display())));
    }
    #[cfg(not(unix))]
    let _ = (meta, path);
    Ok(())
}

/// Maps a snapshot file read-only, not populated: the texts' pages are
/// never touched (texts are read with positional reads when used); the
/// rest is faulted in by the checksum.
///
/// # Safety
///
/// The caller must ensure that nobody truncates or writes the file in
/// place while any part of the mapping is alive (the index views it for as
/// long as the workspace holds the snapshot). If that is broken:
///
/// - a truncation makes the next read of a page past the new end raise
///   SIGBUS, which ends the process (a signal, not a Rust panic);
/// - a write in place changes bytes after they were checked: postings,
///   lengths and line tables read back as other numbers (wrong scores,
///   never reads out of bounds: every offset into the mapping is
///   bounds-checked by the slice it indexes), and term names are checked
///   as UTF-8 on every read (`index::names`), so invalid bytes never
///   become a `&str`.
///
/// How the project keeps it: writers never change a snapshot in place but
/// write a new file and rename it over the name (the mapped inode stays as
/// it was); the file is created read-only (mode 0444), so a plain write or
/// `cp` over it fails; the persist directory is held with a lock file and
/// used by one process at a time (`docs/architecture.md`; replacing a
/// snapshot by hand: by rename, `docs/persistence.md`).
pub unsafe fn map_snapshot(file: &File) -> std::io::Result<memmap2::Mmap> {
    // SAFETY: forwarded to the caller (this function's contract).
    unsafe { memmap2::MmapOptions::new().map(file) }
}

/// Reads the snapshot file of `dir` (its checked payload is `unframe`'s),
/// with the handle it was read through (texts are read from it later).
/// Only a regular file is read, and no more of it than its size.
pub fn read(dir: &Path) -> Result<(SnapshotBytes, File), SnapshotError> {
    read_file(&snapshot_path(dir))
}

/// Whether the system refused a read that may succeed later, saying nothing
/// of what is there (permission, open files, memory, an I/O error), as
/// opposed to what is there not being a snapshot.
pub fn refused_by_system(e: &std::io::Error) -> bool {
    #[cfg(unix)]
    return matches!(
        e.raw_os_error(),
        Some(libc::EACCES | libc::EPERM | libc::EMFILE | libc::ENFILE | libc::EIO | libc::ENOMEM)
    );
    #[cfg(not(unix))]
    return e.kind() == std::io::ErrorKind::PermissionDenied;
}

/// `read` of a snapshot file at `path` (a snapshot store's cached part).
pub fn read_file(path: &Path) -> Result<(SnapshotBytes, File), SnapshotError> {
    let io = |e: std::io::Error| match e.kind() {
        std::io::ErrorKind::NotFound => SnapshotError::Missing,
        _ if refused_by_system(&e) => SnapshotError::Unreadable(e.to_string()),
        // What is there is not a snapshot file (our own checks' errors, ELOOP, ENOTDIR).
        _ => SnapshotError::Io(e.to_string()),
    };
    let mut file = open_regular(path).map_err(io)?;
    // SAFETY: `map_snapshot`'s contract is kept by how snapshots are written
    // (a new read-only file renamed over the old name, in a directory our
    // lock file holds) and what stays checked on every read (see there).
    let bytes = match unsafe { map_snapshot(&file) } {
        Ok(m) => SnapshotBytes::Mapped(std::sync::Arc::new(Backing::mapped(m))),
        Err(_) => {
            let size = file.metadata().map_err(io)?.len();
            let mut v = Vec::new();
            std::io::Read::read_to_end(&mut std::io::Read::take(&mut file, size), &mut v).map_err(io)?;
            SnapshotBytes::Read(v)
        }
    };
    Ok((bytes, file))
}

/// The checked payload of another framed file of `dir` (`GREP_FILE`), read
/// whole (a regular file only, no more than its size).
pub fn read_named(dir: &Path, name: &str) -> Result<Vec<u8>, SnapshotError> {
    let io = |e: std::io::Error| match e.kind() {
        std::io::ErrorKind::NotFound => SnapshotError::Missing,
        _ => SnapshotError::Io(e.to_string()),
    };
    let mut file = open_regular(&dir.join(name)).map_err(io)?;
    let size = file.metadata().map_err(io)?.len();
    let mut bytes = Vec::new();
    std::io::Read::read_to_end(&mut std::io::Read::take(&mut file, size), &mut bytes).map_err(io)?;
    unframe(&bytes).map(<[u8]>::to_vec)
}

/// Puts the framed snapshot `pieces` hold (back to back) in the cache folder `dir` as `name`,
/// unless a file of that name and size is there: a temporary file,
/// read-only (a mapped file is never written again), renamed into place.
/// Cached parts are named by their content, so one name never changes
/// bytes. Returns its path.
pub fn cache_part(dir: &Path, name: &str, pieces: &[&[u8]]) -> std::io::Result<PathBuf> {
    let path = dir.join(name);
    let len: u64 = pieces.iter().map(|p| p.len() as u64).sum();
    if fs::symlink_metadata(&path).is_ok_and(|m| m.is_file() && m.len() == len) {
        return Ok(path);
    }
    fs::create_dir_all(dir)?;
    let mut options = OpenOptions::new();
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o444);
    write_beside(&path, options, |f| {
        pieces.iter().try_for_each(|p| f.write_all(p))?;
        f.sync_all()
    })?;
    Ok(path)
}

/// The name's end of a cache's note of the manifest last seen for a
/// tenant (`engine::remote`): trimmed with the snapshots, oldest first.
pub const LAST_MANIFEST: &str = ".manifest";

/// Replaces the small file `path` with `bytes` (not synced: what it holds
/// is a hint).
pub fn replace_small(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    write_beside(path, OpenOptions::new(), |f| f.write_all(bytes))
}

/// Writes a new temporary file beside `path` (opened with `options`, made
/// writable and new), then renames it over `path`; on failure the
/// temporary file is removed.
fn write_beside(
    path: &Path,
    mut options: OpenOptions,
    write: impl FnOnce(&mut File) -> std::io::Result<()>,
) -> std::io::Result<()> {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("part");
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let temp = path.with_file_name(format!("{name}{TEMP_MARK}{}-{n}", std::process::id()));
    let written = options.write(true).create_new(true).open(&temp).and_then(|mut f| write(&mut f));
    if let Err(e) = written.and_then(|()| fs::rename(&temp, path)) {
        let _ = fs::remove_file(&temp);
        return Err(e);
    }
    Ok(())
}

/// Removes the oldest cached parts of `dir` (by modification time) until
/// they hold at most `max_bytes`, never `keep`. A part still mapped by a
/// workspace stays readable where it is (Unix keeps the removed file's
/// pages; Windows refuses the removal, and it is tried again next time).
pub fn trim_cache(dir: &Path, max_bytes: u64, keep: &Path) {
    let Ok(entries) = fs::read_dir(dir) else { return };
    // A temporary file an hour old is a write that never finished (a
    // process killed mid-write); a younger one may be another's under way.
    let hour_ago = std::time::SystemTime::now() - std::time::Duration::from_secs(3600);
    let mut parts: Vec<(std::time::SystemTime, u64, PathBuf)> = Vec::new();
    for e in entries.flatten() {
        let Some(name) = e.file_name().to_str().map(str::to_owned) else { continue };
        let Some((m, modified)) =
            e.metadata().ok().filter(|m| m.is_file()).and_then(|m| Some((m.len(), m.modified().ok()?)))
        else {
            continue;
        };
        match name.split_once(TEMP_MARK) {
            Some((written, _)) if cache_name(written) && modified < hour_ago => {
                let _ = fs::remove_file(e.path());
            }
            None if cache_name(&name) => parts.push((modified, m, e.path())),
            _ => {}
        }
    }
    let mut total: u64 = parts.iter().map(|p| p.1).sum();
    parts.sort();
    for (_, len, path) in parts {
        if total <= max_bytes {
            break;
        }
        if path != keep && fs::remove_file(&path).is_ok() {
            total -= len;
        }
    }
}

/// Whether `name` is one the cache writes, a snapshot
/// (`<hash>-<hash>.wss`) or a manifest's note (`<hash>.manifest`), each
/// hash 32 hex digits: only those are trimmed, since nothing says a
/// `cacheDir` holds nothing else (another's `backup.wss` was removed).
fn cache_name(name: &str) -> bool {
    match name.strip_suffix(".wss") {
        Some(stem) => stem.split_once('-').is_some_and(|(index, texts)| is_part_hash(index) && is_part_hash(texts)),
        None => name.strip_suffix(LAST_MANIFEST).is_some_and(is_part_hash),
    }
}

/// A part's content hash as its names spell it: 32 hex digits (xxh3-128).
pub fn is_part_hash(s: &str) -> bool {
    s.len() == 32 && s.bytes().all(|b| b.is_ascii_hexdigit())
}

/// Replaces the snapshot of `dir` with `payload`, atomically and durably
/// (the tests' way to write raw payloads; workspaces stream with `begin`).
#[cfg(test)]
pub fn write(dir: &Path, payload: &[u8]) -> std::io::Result<()> {
    begin(dir, |e| e.raw(payload))?.commit()
}

/// A snapshot written to its temporary file, not yet in place.
pub struct Pending {
    temp: PathBuf,
    dir: PathBuf,
    /// The name it takes at `commit`.
    name: &'static str,
    file: File,
}

/// Streams a snapshot's payload (`encode` fills the encoder) to a
/// temporary file in `dir`, then writes its header. `commit` puts it in
/// place; dropping it instead removes it.
pub fn begin(dir: &Path, encode: impl FnOnce(&mut Encoder)) -> std::io::Result<Pending> {
    begin_named(dir, SNAPSHOT_FILE, encode)
}

/// `begin` for another file of the directory (`GREP_FILE`), framed alike.
pub fn begin_named(dir: &Path, name: &'static str, encode: impl FnOnce(&mut Encoder)) -> std::io::Result<Pending> {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let temp = dir.join(format!("{name}{TEMP_MARK}{}-{n}", std::process::id()));
    let mut options = OpenOptions::new();
    options.write(true).create_new(true);
    // Read-only for everyone (this handle still writes it): a loaded index
    // keeps viewing the file in place, so another program must replace it
    // (rename), never write into it; a plain write or `cp` over it fails.
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o444);
    let file = options.open(&temp)?;
    let mut pending = Pending { temp, dir: dir.to_path_buf(), name, file };
    pending.file.write_all(&[0u8; HEADER])?;
    let sink = std::io::BufWriter::with_capacity(1 << 20, pending.file.try_clone()?);
    let mut e = Encoder::to_sink(Box::new(sink));
    encode(&mut e);
    let header = header(&e.finish()?);
    std::io::Seek::seek(&mut pending.file, std::io::SeekFrom::Start(0))?;
    pending.file.write_all(&header)?;
    Ok(pending)
}

/// A snapshot file's header for the payload `written` describes.
fn header(written: &crate::bytes::codec::Written) -> Vec<u8> {
    let mut header = Vec::with_capacity(HEADER);
    header.extend_from_slice(MAGIC);
    header.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
    header.extend_from_slice(&0u32.to_le_bytes());
    for word in [written.len, written.checksum, written.unhashed.0, written.unhashed.1] {
        header.extend_from_slice(&word.to_le_bytes());
    }
    header
}

/// The bytes of a snapshot file, header and payload, in memory (for a
/// snapshot store: `persist::remote`); `unframe` reads them back.
pub fn frame(encode: impl FnOnce(&mut Encoder)) -> std::io::Result<Vec<u8>> {
    /// A sink the encoder streams into, kept by the caller.
    struct Shared(std::sync::Arc<parking_lot::Mutex<Vec<u8>>>);
    impl Write for Shared {
        fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
            self.0.lock().extend_from_slice(b);
            Ok(b.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let payload = std::sync::Arc::new(parking_lot::Mutex::new(vec![0u8; HEADER]));
    let mut e = Encoder::to_sink(Box::new(Shared(payload.clone())));
    encode(&mut e);
    let header = header(&e.finish()?);
    let mut bytes = std::mem::take(&mut *payload.lock());
    bytes[..HEADER].copy_from_slice(&header);
    Ok(bytes)
}

impl Pending {
    /// Syncs the file, renames it over the snapshot, syncs the directory.
    pub fn commit(self) -> std::io::Result<()> {
        self.file.sync_all()?;
        fs::rename(&self.temp, self.dir.join(self.name))?;
        sync_dir(&self.dir)
    }
}

impl Drop for Pending {
    fn drop(&mut self) {
        // After a commit the temporary name is gone and this does nothing.
        let _ = fs::remove_file(&self.temp);
    }
}

/// Makes a rename in `dir` durable (a no-op where directories cannot be
/// opened).
fn sync_dir(dir: &Path) -> std::io::Result<()> {
    #[cfg(unix)]
    {
        File::open(dir)?.sync_all()?;
    }
    let _ = dir;
    Ok(())
}

/// The writer's lock on a persist directory: one process (one workspace)
/// writes a directory at a time; the others read it. Released when
/// dropped, and by the system when the process dies (even by SIGKILL).
#[derive(Debug)]
pub struct DirLock {
    _file: File,
    /// The lock file's device and inode (unix), to tell it from another
    /// made at its path since.
    id: Option<(u64, u64)>,
}

impl DirLock {
    /// What `still_locks` compares.
    pub fn id(&self) -> Option<(u64, u64)> {
        self.id
    }
}

/// Whether `dir`'s lock file is still the one a `DirLock` of this `id`
/// holds: not so once the directory was removed (or replaced), when another
/// workspace may have made it again and taken its lock. (A stat: call it
/// with no lock of the engine held.)
pub fn still_locks(dir: &Path, id: Option<(u64, u64)>) -> bool {
    match id {
        Some(id) => file_id(&dir.join(LOCK_FILE)) == Some(id),
        None => true, // (where the system cannot say)
    }
}

/// A file's device and inode (unix), to tell it from another made at its
/// path since; `None` where the system cannot say.
pub fn identity(meta: &fs::Metadata) -> Option<(u64, u64)> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        Some((meta.dev(), meta.ino()))
    }
    #[cfg(not(unix))]
    {
        let _ = meta;
        None
    }
}

/// The identity of the file at `path` (a link not followed).
fn file_id(path: &Path) -> Option<(u64, u64)> {
    identity(&fs::symlink_metadata(path).ok()?)
}

/// Whether a name in a persist directory is one of ours.
fn is_ours(name: &std::ffi::OsStr) -> bool {
    let name = name.to_string_lossy();
    name == SNAPSHOT_FILE
        || name == GREP_FILE
        || name.starts_with(&format!("{GREP_FILE}{TEMP_MARK}"))
        || name == LOCK_FILE
        || name == IGNORE_FILE
        || name.starts_with(super::intent::INTENT_FILE)
        || name.starts_with(&format!("{SNAPSHOT_FILE}{TEMP_MARK}"))
}

/// Refuses a persist directory that holds anything but our files (a
/// user's folder given as `persist.dir`: we must not write beside, or
/// over, their files), or that is itself a symbolic link.
pub fn check_dir(dir: &Path) -> std::io::Result<()> {
    let meta = match fs::symlink_metadata(dir) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        m => m?,
    };
    if meta.file_type().is_symlink() {
        return Err(std::io::Error::other("it is a symbolic link; give the directory itself"));
    }
    if !meta.is_dir() {
        return Err(std::io::Error::other("it is not a directory"));
    }
    let foreign: Vec<String> = fs::read_dir(dir)?
        .filter_map(|e| e.ok())
        .filter(|e| !is_ours(&e.file_name()))
        .take(3)
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    if !foreign.is_empty() {
        return Err(std::io::Error::other(format!(
            "it holds files that are not workspace-search's ({}); give an empty or new directory",
            foreign.join(", ")
        )));
    }
    Ok(())
}

/// Takes the writer's lock of `dir` (created if needed), or says who holds it.
/// The lock file is opened without following links, must be a regular
/// file, and is written only when it is ours (empty, as just created, or
/// marked so): a link or a user's file named `lock` is never touched.
pub fn lock(dir: &Path) -> std::io::Result<Result<DirLock, String>> {
    check_dir(dir)?;
    fs::create_dir_all(dir)?;
    let path = dir.join(LOCK_FILE);
    let mut options = OpenOptions::new();
    options.read(true).write(true).create(true).truncate(false);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::custom_flags(&mut options, libc::O_NOFOLLOW | libc::O_NONBLOCK);
    let mut file = options.open(&path)?;
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(std::io::Error::other(format!("{} is not a regular file", path.display())));
    }
    only_name(&meta, &path)?;
    let mut held = String::new();
    std::io::Read::read_to_string(&mut std::io::Read::take(&mut file, 256), &mut held).ok();
    if meta.len() > 0 && !held.starts_with(LOCK_MARK) {
        return Err(std::io::Error::other(format!("{} is not a workspace-search lock file", path.display())));
    }
    match file.try_lock() {
        Ok(()) => {}
        Err(fs::TryLockError::WouldBlock) => {
            let holder = held.lines().nth(1).unwrap_or("").trim();
            return Ok(Err(if holder.is_empty() { "another workspace".into() } else { holder.to_string() }));
        }
        Err(fs::TryLockError::Error(e)) => return Err(e),
    }
    file.set_len(0)?;
    std::io::Seek::seek(&mut file, std::io::SeekFrom::Start(0))?;
    write!(file, "{LOCK_MARK}\nprocess {}\n", std::process::id())?;
    remove_stale_temps(dir);
    leave_out_of_walks(dir);
    // (The metadata read above, of the open file: not one made at its path since.)
    Ok(Ok(DirLock { _file: file, id: identity(&meta) }))
}

/// Writes `IGNORE_FILE` unless one is there (best effort: without it, only
/// other walks over the directory take its files).
fn leave_out_of_walks(dir: &Path) {
    let mut options = OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::custom_flags(&mut options, libc::O_NOFOLLOW);
    if let Ok(mut file) = options.open(dir.join(IGNORE_FILE)) {
        let _ = file.write_all(IGNORE_TEXT.as_bytes());
    }
}

/// Temporary files left by a writer that died mid-save (only the lock
/// holder writes, so any there now is stale).
fn remove_stale_temps(dir: &Path) {
    let Ok(entries) = fs::read_dir(dir) else { return };
    for e in entries.flatten() {
        let name = e.file_name();
        let name = name.to_string_lossy();
        if [SNAPSHOT_FILE, GREP_FILE].iter().any(|file| name.starts_with(&format!("{file}{TEMP_MARK}"))) {
            let _ = fs::remove_file(e.path());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trimming_the_cache_removes_old_temporary_files_only() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b, c) = (["a"; 32].concat(), ["b"; 32].concat(), ["c"; 32].concat());
        let (old, young) =
            (dir.path().join(format!("{a}-{b}.wss.tmp-1-0")), dir.path().join(format!("{b}.manifest.tmp-2-0")));
        for p in [&old, &young] {
            fs::write(p, b"half written").unwrap();
        }
        let day_ago = std::time::SystemTime::now() - std::time::Duration::from_secs(86_400);
        File::options().write(true).open(&old).unwrap().set_modified(day_ago).unwrap();
        let kept = cache_part(dir.path(), &format!("{c}-{c}.wss"), &[b"snapshot"]).unwrap();
        replace_small(&dir.path().join(format!("{a}.manifest")), b"{}").unwrap();
        trim_cache(dir.path(), 1 << 20, &kept);
        assert!(!old.exists(), "a temporary file a day old is a write that never finished");
        assert!(young.exists(), "a young one may be a write under way");
        assert!(kept.exists() && dir.path().join(format!("{a}.manifest")).exists());
    }

    #[test]
    fn trimming_the_cache_leaves_files_it_did_not_write() {
        // From a hunt: `backup.wss`, `app.manifest` and an old `draft.tmp-keep`
        // of the user's were removed with the cache's own.
        let dir = tempfile::tempdir().unwrap();
        let day_ago = std::time::SystemTime::now() - std::time::Duration::from_secs(86_400);
        let theirs =
            ["backup.wss", "app.manifest", "draft.tmp-keep", "x-y.wss", &format!("{}.wss", ["a"; 32].concat())];
        for name in theirs {
            fs::write(dir.path().join(name), b"the user's").unwrap();
            File::options().write(true).open(dir.path().join(name)).unwrap().set_modified(day_ago).unwrap();
        }
        let a = ["a"; 32].concat();
        let ours = cache_part(dir.path(), &format!("{a}-{a}.wss"), &[b"an old snapshot"]).unwrap();
        File::options().write(true).open(&ours).unwrap().set_modified(day_ago).unwrap();
        let kept = cache_part(dir.path(), &format!("{}-{a}.wss", ["b"; 32].concat()), &[b"snapshot"]).unwrap();
        trim_cache(dir.path(), 1, &kept);
        for name in theirs {
            assert!(dir.path().join(name).exists(), "{name}");
        }
        assert!(!ours.exists(), "the cache's own old snapshot goes past the bound");
        assert!(kept.exists());
    }

    #[test]
    fn writes_atomically_and_refuses_damaged_files() {
        let dir = tempfile::tempdir().unwrap();
        assert!(matches!(read(dir.path()), Err(SnapshotError::Missing)));
        write(dir.path(), b"first").unwrap();
        write(dir.path(), b"second payload").unwrap();
        let bytes = read(dir.path()).unwrap();
        assert_eq!(unframe(&bytes.0).unwrap(), b"second payload");
        let names: Vec<String> =
            fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into()).collect();
        assert_eq!(names, [SNAPSHOT_FILE]);
        assert!(matches!(unframe(&bytes.0[..bytes.0.len() - 1]), Err(SnapshotError::Truncated { .. })));
        assert!(matches!(unframe(&bytes.0[..20]), Err(SnapshotError::Truncated { .. })));
        let mut flipped = bytes.0.to_vec();
        *flipped.last_mut().unwrap() ^= 1;
        assert_eq!(unframe(&flipped), Err(SnapshotError::Checksum));
        let mut other = bytes.0.to_vec();
        other[8] = 99;
        assert_eq!(unframe(&other), Err(SnapshotError::Version { found: 99, expected: FORMAT_VERSION }));
        assert_eq!(unframe(b"{\"json\": true}"), Err(SnapshotError::NotSnapshot));
    }

    #[test]
    fn one_writer_at_a_time() {
        let dir = tempfile::tempdir().unwrap();
        fs::write(dir.path().join(format!("{SNAPSHOT_FILE}{TEMP_MARK}1-0")), b"stale").unwrap();
        let first = lock(dir.path()).unwrap().unwrap();
        assert!(!dir.path().join(format!("{SNAPSHOT_FILE}{TEMP_MARK}1-0")).exists());
        let second = lock(dir.path()).unwrap();
        assert_eq!(second.unwrap_err(), format!("process {}", std::process::id()));
        drop(first);
        assert!(lock(dir.path()).unwrap().is_ok());
    }

    #[cfg(unix)]
    #[test]
    fn lock_and_snapshot_never_follow_links_nor_touch_foreign_files() {
        let dir = tempfile::tempdir().unwrap();
        let victim = dir.path().join("victim.txt");
        fs::write(&victim, "precious").unwrap();
        let persist = dir.path().join("persist");
        fs::create_dir(&persist).unwrap();
        std::os::unix::fs::symlink(&victim, persist.join(LOCK_FILE)).unwrap();
        assert!(lock(&persist).is_err());
        assert_eq!(fs::read_to_string(&victim).unwrap(), "precious");

        // A user's own file named `lock`, and a directory of the user's.
        let theirs = dir.path().join("theirs");
        fs::create_dir(&theirs).unwrap();
        fs::write(theirs.join(LOCK_FILE), "my notes").unwrap();
        assert!(lock(&theirs).is_err());
        assert_eq!(fs::read_to_string(theirs.join(LOCK_FILE)).unwrap(), "my notes");
        let other = dir.path().join("other");
        fs::create_dir(&other).unwrap();
        fs::write(other.join("notes.md"), "x").unwrap();
        let e = lock(&other).unwrap_err().to_string();
        assert!(e.contains("notes.md"), "{e}");
        assert!(!other.join(LOCK_FILE).exists());

        // A FIFO, and a link to a device, named like the snapshot.
        let fifo = dir.path().join("fifo");
        fs::create_dir(&fifo).unwrap();
        let c = std::ffi::CString::new(snapshot_path(&fifo).as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: mkfifo reads a NUL-terminated path that lives for the call.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
        assert!(matches!(read(&fifo), Err(SnapshotError::Io(_))));
        let dev = dir.path().join("dev");
        fs::create_dir(&dev).unwrap();
        std::os::unix::fs::symlink("/dev/urandom", snapshot_path(&dev)).unwrap();
        assert!(matches!(read(&dev), Err(SnapshotError::Io(_))));
        let ours = dir.path().join("ours");
        assert!(lock(&ours).unwrap().is_ok());
    }
}
