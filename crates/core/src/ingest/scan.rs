//! Resolving `autoIndexPaths` entries (directories, files, globs) to files
//! inside `basePath`, as Mastra (contract section 4) with the differences of
//! SPEC 7: `.gitignore` honoured (git's rules, from `basePath` down, also
//! outside a repository; read by `gitignore`, matched by the `ignore` crate), `.git/` never indexed, a
//! leading `/` relative to `basePath`, nothing read outside `basePath`
//! through `..` or symbolic links, sorted walk order, and every file that is
//! left out reported.

use super::gitignore::GitignoreRules;
use crate::index::id_base::within_base;
use crate::text::glob::Glob;
use globset::GlobBuilder;
use ignore::WalkBuilder;
use std::collections::HashSet;
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;

/// Mastra's walk depth: files in up to 9 nested directories below an entry.
pub const MAX_DEPTH: usize = 10;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FoundFile {
    /// Document id: the entry's form joined with the relative path.
    pub id: String,
    pub path: PathBuf,
    /// The file that was found (device and inode where the platform has
    /// them): reading checks that it opened that very file, so a link
    /// retargeted after the walk is not followed out of basePath.
    pub identity: Option<(u64, u64)>,
    /// The file has other names (hard links; Unix): a write through one is
    /// a change of each (`Located`).
    pub hard_linked: bool,
    /// Size and modification time when found (an incremental `init()`
    /// reuses a file whose stamp is unchanged).
    pub stamp: Option<FileStamp>,
    /// Found through a symbolic link (to a file inside basePath): a change
    /// of its target is a change of this file (`Located`).
    pub link: bool,
    /// The inode the folder's listing gave (Unix): a file stat-ed later as
    /// that inode was reached the way the walk went (a folder on the way
    /// replaced by a link since gives another one).
    pub listed: Option<u64>,
    /// basePath, canonical, for a file not found by listing its folder (a
    /// link, a file named as an entry): the file opened must lie below it
    /// (checked where the platform says where an open file is).
    pub base: Option<Arc<Path>>,
}

/// What tells that a file may have changed without reading it: its size
/// and modification time, and where the platform has them (Unix) its
/// status-change time and inode, as git's index keeps them. A same-size
/// edit that keeps the modification time (`touch -r`, `cp -p`, a clock set
/// back) still moves the status-change time, which no program can set.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct FileStamp {
    pub size: u64,
    /// Nanoseconds since the epoch.
    pub modified_ns: i128,
    /// Status-change time (ctime) in nanoseconds since the epoch; 0 where
    /// the platform has none.
    pub changed_ns: i128,
    /// The inode; 0 where the platform has none.
    pub inode: u64,
}

impl FileStamp {
    pub fn of(m: &std::fs::Metadata) -> Option<FileStamp> {
        let modified = m.modified().ok()?;
        let modified_ns = match modified.duration_since(std::time::UNIX_EPOCH) {
            Ok(d) => d.as_nanos() as i128,
            Err(e) => -(e.duration().as_nanos() as i128),
        };
        let (changed_ns, inode) = status_change(m);
        Some(FileStamp { size: m.len(), modified_ns, changed_ns, inode })
    }
}

/// The status-change time and inode of `m` (zeros where there are none).
fn status_change(m: &std::fs::Metadata) -> (i128, u64) {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        (m.ctime() as i128 * 1_000_000_000 + m.ctime_nsec() as i128, m.ino())
    }
    #[cfg(not(unix))]
    {
        let _ = m;
        (0, 0)
    }
}

impl FoundFile {
    fn new(id: String, path: PathBuf) -> Self {
        FoundFile { id, path, identity: None, hard_linked: false, stamp: None, link: false, listed: None, base: None }
    }
}

/// The id of the file beside `f` whose chunk `f`'s name is (`big.md` for
/// `big.md#chunk-0`), when that file is there: the two ids would collide
/// once it is chunked (a chunk id is `path#chunk-N`, as Mastra's).
fn chunk_named(f: &FoundFile) -> Option<String> {
    let file = crate::index::chunk_parent(&f.id)?;
    let name = f.path.file_name()?.to_str()?;
    let stem = name.get(..name.len().checked_sub(f.id.len() - file.len())?).filter(|s| !s.is_empty())?;
    let sibling = f.path.with_file_name(stem);
    std::fs::symlink_metadata(sibling).is_ok().then(|| file.to_string())
}

/// The inode a folder's listing gave for `e` (Unix only).
fn listed_inode(e: &ignore::DirEntry) -> Option<u64> {
    #[cfg(unix)]
    return e.ino();
    #[cfg(not(unix))]
    {
        let _ = e;
        None
    }
}

/// Whether the file has other names (a link count over one; Unix).
fn hard_linked(m: &std::fs::Metadata) -> bool {
    #[cfg(unix)]
    {
        std::os::unix::fs::MetadataExt::nlink(m) > 1
    }
    #[cfg(not(unix))]
    {
        let _ = m;
        false
    }
}

/// Device and inode of a file's metadata (`None` where there are none).
pub fn identity(m: &std::fs::Metadata) -> Option<(u64, u64)> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        Some((m.dev(), m.ino()))
    }
    #[cfg(not(unix))]
    {
        let _ = m;
        None
    }
}

/// What kind of file a non-regular file is, for the skip reason.
pub fn kind_of(t: std::fs::FileType) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if t.is_fifo() {
            return "a FIFO";
        }
        if t.is_socket() {
            return "a socket";
        }
        if t.is_char_device() {
            return "a character device";
        }
        if t.is_block_device() {
            return "a block device";
        }
    }
    if t.is_dir() {
        "a directory"
    } else {
        "a special file"
    }
}

/// Why an entry or a file is not indexed (listed in `report.skipped`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SkipReason {
    #[error("outside basePath")]
    OutsideBase,
    #[error("outside basePath (symbolic link)")]
    LinkOutsideBase,
    #[error("not found")]
    NotFound,
    #[error("unreadable: {0}")]
    Unreadable(String),
    #[error("basePath unreadable: {0}")]
    BaseUnreadable(String),
    #[error("deeper than {MAX_DEPTH} levels")]
    TooDeep,
    #[error("symbolic link to a directory")]
    LinkToDirectory,
    #[error("broken symbolic link: {0}")]
    BrokenLink(String),
    #[error("invalid glob: {0}")]
    InvalidGlob(String),
    #[error("binary")]
    Binary,
    #[error("not a regular file ({0})")]
    NotRegular(&'static str),
    #[error("larger than maxFileSize ({size} bytes > {max})")]
    TooLarge { size: u64, max: u64 },
    #[error("file name is not valid UTF-8")]
    NonUtf8Name,
    #[error("replaced while being indexed (not the file that was found)")]
    Replaced,
    /// `big.md#chunk-0` beside `big.md`: its id would be that chunk's.
    #[error("named as a chunk of {0} (its id would be that chunk's)")]
    ChunkName(String),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skipped {
    pub path: String,
    pub reason: SkipReason,
}

#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct ScanResult {
    pub files: Vec<FoundFile>,
    pub skipped: Vec<Skipped>,
}

#[derive(Debug, Clone)]
pub struct ScanOptions {
    pub respect_gitignore: bool,
    /// Larger files are skipped (`SkipReason::TooLarge`).
    pub max_file_size: u64,
    /// A directory never walked (the `persist` directory, when it is
    /// inside `basePath`), as a path below `base` (see `excluded_dir`).
    pub exclude: Option<PathBuf>,
    /// When not empty, only these paths (files or directories, as paths
    /// below `base` like `exclude`) and what lies below them are looked
    /// at: the watcher's update of what changed walks the way down to
    /// each, not the tree, with the same rules (`.gitignore` files on the
    /// way are read as the full walk reads them).
    pub within: Vec<PathBuf>,
}

/// `dir` as a path below `base` (as the walk meets it), if it is inside;
/// `dir` need not exist yet (a snapshot directory is created while the
/// first walk runs).
pub fn excluded_dir(base: &Path, dir: &Path) -> Option<PathBuf> {
    let canonical_base = base.canonicalize().ok()?;
    let rel = canonical_even_if_missing(dir)?.strip_prefix(&canonical_base).ok()?.to_path_buf();
    (!rel.as_os_str().is_empty()).then(|| base.join(rel))
}

/// The canonical form of the deepest existing ancestor of `dir`, with the
/// missing names after it.
fn canonical_even_if_missing(dir: &Path) -> Option<PathBuf> {
    let mut missing = Vec::new();
    let mut at = dir;
    loop {
        if let Ok(mut found) = at.canonicalize() {
            found.extend(missing.iter().rev());
            return Some(found);
        }
        missing.push(at.file_name()?);
        at = at.parent()?;
    }
}

/// The default `maxFileSize`: 10 MiB.
pub const DEFAULT_MAX_FILE_SIZE: u64 = 10 * 1024 * 1024;

impl Default for ScanOptions {
    fn default() -> Self {
        ScanOptions { respect_gitignore: true, max_file_size: DEFAULT_MAX_FILE_SIZE, exclude: None, within: Vec::new() }
    }
}

/// Characters that make an entry a glob, as Mastra.
pub fn is_glob(entry: &str) -> bool {
    entry.contains(['*', '?', '{', '}', '[', ']'])
}

/// Whether `p` is `target`, below it, or on the way down to it. The walk
/// joins names with one separator, so a byte prefix that ends at a
/// separator is a component prefix (cheaper than `Path::starts_with`).
fn on_the_way(p: &Path, target: &Path) -> bool {
    let (p, t) = (p.as_os_str().as_encoded_bytes(), target.as_os_str().as_encoded_bytes());
    let prefix = |long: &[u8], short: &[u8]| {
        long.starts_with(short)
            && (long.len() == short.len() || short.last() == Some(&b'/') || long[short.len()] == b'/' || {
                #[cfg(windows)]
                {
                    long[short.len()] == b'\\'
                }
                #[cfg(not(windows))]
                {
                    false
                }
            })
    };
    prefix(p, t) || prefix(t, p)
}

/// Lexically normalised relative path (`a/./b/../c` -> `a/c`, a leading
/// `/` dropped); `None` when it climbs out of its root.
fn normalize(rel: &str) -> Option<PathBuf> {
    lexical(Path::new(rel), Root::Drop)
}

/// `base` resolved against `cwd` lexically, as Node's `path.resolve` (the
/// basePath of a `LocalFilesystem`): `..` at the root stays at the root.
pub fn resolve_base(cwd: &Path, base: &str) -> PathBuf {
    lexical(&cwd.join(base), Root::Keep).unwrap_or_default()
}

/// `base` resolved against the working directory of this moment (see
/// `resolve_base`); fails only where that directory cannot be read.
pub fn resolve_from_cwd(base: &str) -> std::io::Result<PathBuf> {
    Ok(resolve_base(&std::env::current_dir()?, base))
}

/// What `lexical` does with a root (`/`, a drive prefix).
#[derive(Clone, Copy, PartialEq)]
enum Root {
    /// Relative paths: roots dropped, a drive prefix or a `..` above the
    /// start is an escape (`None`).
    Drop,
    /// Absolute paths: roots kept, a `..` at the root ignored.
    Keep,
}

/// `path` with `.` and `..` applied lexically (no file system access).
fn lexical(path: &Path, root: Root) -> Option<PathBuf> {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::Normal(p) => out.push(p),
            Component::CurDir => {}
            Component::ParentDir => {
                if !out.pop() && root == Root::Drop {
                    return None;
                }
            }
            Component::RootDir if root == Root::Drop => {}
            Component::Prefix(_) if root == Root::Drop => return None,
            Component::RootDir | Component::Prefix(_) => out.push(c),
        }
    }
    Some(out)
}

/// `p` relative to `target` when strictly below it. The walk joins names
/// with one separator, so a byte prefix that ends at a separator is the
/// answer (per file, this is cheaper than `Path::strip_prefix`); other
/// spellings of `target` (`a/./b`) take the component-wise way.
fn below<'a>(p: &'a Path, target: &Path) -> Option<&'a Path> {
    let (pb, tb) = (p.as_os_str().as_encoded_bytes(), target.as_os_str().as_encoded_bytes());
    if pb.len() > tb.len() + 1 && pb.starts_with(tb) && is_separator(pb[tb.len()]) && !is_separator(pb[tb.len() + 1]) {
        if let Some(s) = p.to_str() {
            return Some(Path::new(&s[tb.len() + 1..]));
        }
    }
    p.strip_prefix(target).ok().filter(|r| !r.as_os_str().is_empty())
}

fn is_separator(b: u8) -> bool {
    b == b'/' || (cfg!(windows) && b == b'\\')
}

/// A relative path as the walk gives it, with `/` between names.
fn slashed(rel: &str) -> std::borrow::Cow<'_, str> {
    if cfg!(windows) {
        rel.replace('\\', "/").into()
    } else {
        rel.into()
    }
}

fn to_slash(p: &Path) -> String {
    p.components().filter_map(|c| c.as_os_str().to_str()).collect::<Vec<_>>().join("/")
}

/// `root` in the entry's own form, joined with a `/`-separated relative path.
fn join_id(root: &str, rel: &str) -> String {
    if rel.is_empty() {
        root.to_string()
    } else if root.is_empty() || root == "." {
        rel.to_string()
    } else if root.ends_with('/') {
        format!("{root}{rel}")
    } else {
        format!("{root}/{rel}")
    }
}

/// An entry split into the form its ids keep and its path relative to base.
struct Resolved {
    id_root: String,
    rel: PathBuf,
}

/// What an entry names (`Scanner::plan`).
enum Planned {
    /// A file or folder, `abs`; `link`: the entry itself is a link.
    Path {
        resolved: Resolved,
        abs: PathBuf,
        link: bool,
    },
    Glob(GlobPlan),
}

/// A glob entry: the folder it is walked from (`rel`, its files' ids
/// under `id_root`) and its pattern over paths relative to basePath.
struct GlobPlan {
    rel: PathBuf,
    id_root: String,
    pattern: String,
    matcher: Glob,
}

/// An entry as it is looked up: a trailing `/` dropped, `` as `.`.
fn entry_form(raw: &str) -> &str {
    match raw {
        "" => ".",
        _ if raw.len() > 1 && raw.ends_with('/') => &raw[..raw.len() - 1],
        _ => raw,
    }
}

/// The entries that `scan` of `base` refuses whatever files there are:
/// those that lead out of basePath, by their text or through a link, and
/// globs that do not compile. A command line checks its paths with this
/// before it starts (an MCP server, indexing in the background, served a
/// workspace of no files); an unreadable `base` refuses none here.
pub fn refused_entries(base: &Path, entries: &[String]) -> Vec<Skipped> {
    let Ok(canonical_base) = base.canonicalize() else { return Vec::new() };
    let s = Scanner {
        base,
        shared_base: Arc::from(canonical_base.as_path()),
        canonical_base,
        gitignore: None,
        opts: ScanOptions::default(),
        seen: Default::default(),
        out: ScanResult::default(),
    };
    let refused = |raw: &String| match s.plan(entry_form(raw)) {
        Err(reason @ (SkipReason::OutsideBase | SkipReason::LinkOutsideBase | SkipReason::InvalidGlob(_))) => {
            Some(Skipped { path: raw.clone(), reason })
        }
        _ => None,
    };
    entries.iter().filter_map(refused).collect()
}

struct Scanner<'a> {
    base: &'a Path,
    canonical_base: PathBuf,
    /// `canonical_base`, shared by the files found.
    shared_base: Arc<Path>,
    /// With `respect_gitignore`: the rules of the folders walked.
    gitignore: Option<Arc<GitignoreRules>>,
    opts: ScanOptions,
    /// Paths added, by their bytes (a PathBuf hashes component by
    /// component: three times per file, that was a tenth of a warm start's walk).
    seen: rustc_hash::FxHashSet<std::ffi::OsString>,
    out: ScanResult,
}

/// A walker of the folder at `root` that applies none of its own rules:
/// no hidden-file, ignore-file or git rules (`.gitignore` files are read
/// by `GitignoreRules`, never by the walker: see there), and no link
/// followed; the caller filters.
pub fn plain_walker(root: &Path) -> WalkBuilder {
    let mut builder = WalkBuilder::new(root);
    builder
        .standard_filters(false)
        .hidden(false)
        .parents(false)
        .ignore(false)
        .git_global(false)
        .git_exclude(false)
        .git_ignore(false)
        .require_git(false)
        .follow_links(false);
    builder
}

/// Resolves every entry, in order, to the files to index.
pub fn scan(base: &Path, entries: &[String], opts: ScanOptions) -> ScanResult {
    let canonical_base = match base.canonicalize() {
        Ok(p) => p,
        Err(e) => {
            let mut out = ScanResult::default();
            out.skipped
                .push(Skipped { path: base.display().to_string(), reason: SkipReason::BaseUnreadable(e.to_string()) });
            return out;
        }
    };
    let shared_base: Arc<Path> = Arc::from(canonical_base.as_path());
    let gitignore = opts.respect_gitignore.then(|| Arc::new(GitignoreRules::new(base)));
    let mut s = Scanner {
        base,
        canonical_base,
        shared_base,
        gitignore,
        opts,
        seen: Default::default(),
        out: ScanResult::default(),
    };
    for entry in entries {
        s.entry(entry);
    }
    let too_large = s.gitignore.as_ref().map(|g| g.not_applied()).unwrap_or_default();
    for (path, size) in too_large {
        let id = to_slash(path.strip_prefix(base).unwrap_or(&path));
        let why = format!("its rules are not applied: {size} bytes, over {}", super::gitignore::MAX_BYTES);
        s.skip(id, SkipReason::Unreadable(why));
    }
    s.out
}

impl Scanner<'_> {
    fn skip(&mut self, path: impl Into<String>, reason: SkipReason) {
        self.out.skipped.push(Skipped { path: path.into(), reason });
    }

    fn resolve(&self, form: &str) -> Option<Resolved> {
        let rel = within_base(form, &[self.base, &self.canonical_base]);
        Some(Resolved { id_root: form.to_string(), rel: normalize(&rel)? })
    }

    /// Whether a path, with symbolic links resolved, stays inside basePath.
    fn inside(&self, p: &Path) -> std::io::Result<bool> {
        Ok(p.canonicalize()?.starts_with(&self.canonical_base))
    }

    fn entry(&mut self, raw: &str) {
        match self.plan(entry_form(raw)) {
            Err(reason) => self.skip(raw, reason),
            Ok(Planned::Path { resolved, abs, link }) => {
                if abs.is_dir() {
                    // An entry that is a link to a folder inside basePath
                    // (or passes through one) is walked through it, as
                    // Mastra follows it (`walk_entries` starts there).
                    let files = self.walk(&resolved.rel, &resolved.id_root);
                    self.add_all(files);
                } else {
                    self.add_all(vec![FoundFile { link, ..FoundFile::new(resolved.id_root, abs) }]);
                }
            }
            Ok(Planned::Glob(glob)) => self.glob_entry(glob),
        }
    }

    /// What the entry `form` names, found before anything is walked; why
    /// it names nothing to index.
    fn plan(&self, form: &str) -> Result<Planned, SkipReason> {
        if is_glob(form) {
            return self.plan_glob(form).map(Planned::Glob);
        }
        let resolved = self.resolve(form).ok_or(SkipReason::OutsideBase)?;
        let abs = self.base.join(&resolved.rel);
        let meta = std::fs::symlink_metadata(&abs).map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => SkipReason::NotFound,
            _ => SkipReason::Unreadable(e.to_string()),
        })?;
        match self.inside(&abs) {
            Ok(true) => Ok(Planned::Path { resolved, abs, link: meta.file_type().is_symlink() }),
            Ok(false) => Err(SkipReason::LinkOutsideBase),
            Err(e) => Err(SkipReason::Unreadable(e.to_string())),
        }
    }

    /// Adds files to index: regular files (links followed: they were
    /// checked to stay inside basePath) no larger than `max_file_size`,
    /// with their identity for the read to check. A name the walk listed as
    /// a file is not followed if it has become a link since. The files are
    /// stat-ed in parallel (a warm `init()` is mostly this walk), then kept
    /// in order.
    fn add_all(&mut self, files: Vec<FoundFile>) {
        use rayon::prelude::*;
        let stats: Vec<std::io::Result<std::fs::Metadata>> = files
            .par_iter()
            .with_min_len(256)
            .map(|f| {
                if self.seen.contains(f.path.as_os_str()) {
                    Err(std::io::ErrorKind::AlreadyExists.into())
                } else if f.link {
                    std::fs::metadata(&f.path)
                } else {
                    std::fs::symlink_metadata(&f.path)
                }
            })
            .collect();
        for (f, m) in files.into_iter().zip(stats) {
            self.add(f, m);
        }
    }

    fn add(&mut self, mut f: FoundFile, m: std::io::Result<std::fs::Metadata>) {
        if self.seen.contains(f.path.as_os_str()) || !self.is_within(&f.path) {
            return;
        }
        let m = match m {
            Ok(m) => m,
            Err(e) => return self.skip(f.id, SkipReason::Unreadable(e.to_string())),
        };
        if !m.is_file() {
            return self.skip(f.id, SkipReason::NotRegular(kind_of(m.file_type())));
        }
        if m.len() > self.opts.max_file_size {
            return self.skip(f.id, SkipReason::TooLarge { size: m.len(), max: self.opts.max_file_size });
        }
        if let Some(file) = chunk_named(&f) {
            return self.skip(f.id, SkipReason::ChunkName(file));
        }
        f.identity = identity(&m);
        f.hard_linked = hard_linked(&m);
        f.stamp = FileStamp::of(&m);
        // The file stat-ed is the one its folder listed: the read checks it
        // is the one opened. Else (not listed; or another inode, as a
        // folder replaced by a link gives, or as some file systems list
        // them) the read checks where the file opened lies.
        if f.listed.is_none() || f.identity.map(|(_, ino)| ino) != f.listed {
            f.base = Some(self.shared_base.clone());
        }
        self.seen.insert(f.path.as_os_str().to_owned());
        self.out.files.push(f);
    }

    /// The files below `rel`, sorted, ids built from `id_root`.
    /// Whether `p` is one of `within` or below one (always, without them).
    fn is_within(&self, p: &Path) -> bool {
        self.opts.within.is_empty() || self.opts.within.iter().any(|w| p.starts_with(w))
    }

    fn walk(&mut self, rel: &Path, id_root: &str) -> Vec<FoundFile> {
        self.walk_entries(rel, id_root).into_iter().filter(|(_, is_dir)| !is_dir).map(|(f, _)| f).collect()
    }

    /// Whether a folder from basePath down to `rel` (itself included) is
    /// one the walk never enters: a `.git`, the persist directory, or one
    /// `.gitignore` rules leave out.
    fn pruned_on_the_way(&self, rel: &Path) -> bool {
        let mut at = self.base.to_path_buf();
        for part in rel.components() {
            at.push(part);
            if part.as_os_str() == ".git"
                || self.opts.exclude.as_deref() == Some(at.as_path())
                || self.gitignore.as_ref().is_some_and(|g| g.ignored(&at, true))
            {
                return true;
            }
        }
        false
    }

    /// The persist directory as the walk from `target` meets it, when
    /// `target` is reached through a link (`exclude` names it where it
    /// really is, below basePath).
    fn exclude_through_link(&self, target: &Path, rel: &Path) -> Option<PathBuf> {
        let exclude = self.opts.exclude.as_ref()?;
        let real_target = target.canonicalize().ok()?;
        if real_target == self.canonical_base.join(rel) {
            return None;
        }
        let real_exclude = self.canonical_base.join(exclude.strip_prefix(self.base).ok()?);
        Some(target.join(real_exclude.strip_prefix(&real_target).ok()?))
    }

    /// Files and directories below `rel` (flagged `true` for directories).
    fn walk_entries(&mut self, rel: &Path, id_root: &str) -> Vec<(FoundFile, bool)> {
        // The walk's root is not filtered: the folders on the way to it are
        // looked at here, as a walk from basePath would have.
        if self.pruned_on_the_way(rel) {
            return Vec::new();
        }
        let target = self.base.join(rel);
        let mut out = Vec::new();
        let mut deep_reported = HashSet::new();
        for item in self.walker(rel, &target).build() {
            let e = match item {
                Ok(e) => e,
                Err(err) => {
                    self.skip_walk_error(&err, rel);
                    continue;
                }
            };
            let p = e.path();
            let Some(rel_to_target) = below(p, &target) else { continue };
            let Some(rel_str) = rel_to_target.to_str() else {
                // Ids are strings: such a name would collide with others.
                self.skip(join_id(id_root, &rel_to_target.to_string_lossy()), SkipReason::NonUtf8Name);
                continue;
            };
            let depth = rel_str.bytes().filter(|&b| is_separator(b)).count() + 1;
            if depth > MAX_DEPTH {
                let top = to_slash(&rel_to_target.iter().take(MAX_DEPTH).collect::<PathBuf>());
                if deep_reported.insert(top.clone()) {
                    self.skip(join_id(id_root, &top), SkipReason::TooDeep);
                }
                continue;
            }
            let id = join_id(id_root, &slashed(rel_str));
            if let Some(found) = self.found_entry(&e, id) {
                out.push(found);
            }
        }
        out
    }

    /// The walker of the folder at `target` (`rel` below basePath), with
    /// the rules of which entries it enters and yields.
    fn walker(&self, rel: &Path, target: &Path) -> WalkBuilder {
        // From the entry's folder itself (a link there is followed: it was
        // checked to stay inside basePath), paths kept as the entry names
        // them. `.gitignore` rules of the folders above it still apply
        // (`GitignoreRules` reads them by path).
        let mut builder = plain_walker(target);
        builder
            // One level past the limit, to report what lies there (TooDeep),
            // and no deeper: a tree of thousands of levels is not walked.
            .max_depth(Some(MAX_DEPTH + 1))
            // By name within each directory: siblings share their parent's
            // path, so comparing whole paths as bytes is that order without
            // taking each path apart for its name (as sorting by name does).
            .sort_by_file_path(|a, b| a.as_os_str().cmp(b.as_os_str()));
        let target = target.to_path_buf();
        let exclude = self.opts.exclude.clone();
        let exclude_here = self.exclude_through_link(&target, rel);
        let within = self.opts.within.clone();
        let gitignore = self.gitignore.clone();
        builder.filter_entry(move |e| {
            let p = e.path();
            // Git's own: a `.git` folder, or the `.git` file of a worktree or submodule.
            if e.file_name() == ".git" {
                return false;
            }
            // Directories only (the path comparisons cost more than the type check).
            let is_dir = e.file_type().is_some_and(|t| t.is_dir());
            let excluded = exclude.as_deref() == Some(p) || exclude_here.as_deref() == Some(p);
            if is_dir && (excluded || !on_the_way(p, &target)) {
                return false;
            }
            on_the_way(p, &target)
                && (within.is_empty() || within.iter().any(|w| on_the_way(p, w)))
                && gitignore.as_ref().is_none_or(|g| !g.ignored(p, is_dir))
        });
        builder
    }

    /// Reports an entry the walker could not read, by its id's form.
    fn skip_walk_error(&mut self, err: &ignore::Error, rel: &Path) {
        let path = match err {
            // As ids are: relative to basePath.
            ignore::Error::WithPath { path, .. } => to_slash(path.strip_prefix(self.base).unwrap_or(path)),
            _ => to_slash(rel),
        };
        self.skip(path, SkipReason::Unreadable(err.to_string()));
    }

    /// What the walk keeps of one entry (flagged `true` for a directory):
    /// a link is kept only when it leads to a file inside basePath, and
    /// reported otherwise.
    fn found_entry(&mut self, e: &ignore::DirEntry, id: String) -> Option<(FoundFile, bool)> {
        let p = e.path();
        match e.file_type()? {
            t if t.is_dir() => Some((FoundFile::new(id, p.to_path_buf()), true)),
            t if t.is_symlink() => {
                match std::fs::metadata(p) {
                    Ok(m) if m.is_dir() => self.skip(id, SkipReason::LinkToDirectory),
                    Ok(_) => match self.inside(p) {
                        Ok(true) => {
                            return Some((FoundFile { link: true, ..FoundFile::new(id, p.to_path_buf()) }, false))
                        }
                        Ok(false) => self.skip(id, SkipReason::LinkOutsideBase),
                        Err(err) => self.skip(id, SkipReason::Unreadable(err.to_string())),
                    },
                    Err(err) => self.skip(id, SkipReason::BrokenLink(err.to_string())),
                }
                None
            }
            _ => Some((FoundFile { listed: listed_inode(e), ..FoundFile::new(id, p.to_path_buf()) }, false)),
        }
    }

    /// A glob entry's folder to walk from (its static prefix, cut back to
    /// its last `/`) and its pattern, relative to basePath as the
    /// candidates are.
    fn plan_glob(&self, form: &str) -> Result<GlobPlan, SkipReason> {
        let first_glob = form.find(['*', '?', '{', '}', '[', ']']).unwrap_or(form.len());
        let root_form = match form[..first_glob].rfind('/') {
            Some(0) => "/",
            Some(i) => &form[..i],
            None => ".",
        };
        let root = self.resolve(root_form).ok_or(SkipReason::OutsideBase)?;
        let root_abs = self.base.join(&root.rel);
        if !root_abs.is_dir() {
            return Err(SkipReason::NotFound);
        }
        match self.inside(&root_abs) {
            Ok(true) => {}
            Ok(false) => return Err(SkipReason::LinkOutsideBase),
            Err(e) => return Err(SkipReason::Unreadable(e.to_string())),
        }
        let rel_root = to_slash(&root.rel);
        let tail = if root_form == "." || root_form == "/" {
            form.trim_start_matches("./").trim_start_matches('/')
        } else {
            &form[root_form.len() + 1..]
        };
        let pattern = join_id(&rel_root, tail);
        let matcher = picomatch_glob(&pattern).map_err(SkipReason::InvalidGlob)?;
        // (Mastra's ids for `/**/*.md` are `a.md`: its glob base is `.` there.)
        let id_root = if root_form == "." || root_form == "/" { String::new() } else { root.id_root };
        Ok(GlobPlan { rel: root.rel, id_root, pattern, matcher })
    }

    fn glob_entry(&mut self, glob: GlobPlan) {
        let GlobPlan { rel: root_rel, id_root, pattern, matcher } = glob;
        let dots = DotSegments::of(&pattern);
        let entries = self.walk_entries(&root_rel, &id_root);
        let mut files = Vec::new();
        let mut dirs: Vec<FoundFile> = Vec::new();
        for (f, is_dir) in entries {
            let rel = to_slash(f.path.strip_prefix(self.base).unwrap_or(&f.path));
            // picomatch semantics: dot-files and dot-directories only match
            // a pattern that names them.
            if !dots.allow_all(&rel) {
                continue;
            }
            if !matcher.is_match(&rel) {
                continue;
            }
            if is_dir {
                dirs.push(f);
            } else {
                files.push(f);
            }
        }
        self.add_all(files);
        // A matched directory is indexed in full; nested matches once.
        let mut done: Vec<PathBuf> = Vec::new();
        for d in dirs {
            if done.iter().any(|p| d.path.starts_with(p)) {
                continue;
            }
            let rel = d.path.strip_prefix(self.base).unwrap_or(&d.path).to_path_buf();
            let files = self.walk(&rel, &d.id.clone());
            self.add_all(files);
            done.push(d.path);
        }
    }
}

/// A glob as Mastra's (picomatch) reads it: braces (`text::glob::picomatch_braces`),
/// `{,a}`, classes that are also their own text (`picomatch_classes`), and
/// the path spelled as the glob itself.
pub fn picomatch_glob(pattern: &str) -> Result<Glob, String> {
    let text = crate::text::glob::picomatch_classes(&crate::text::glob::picomatch_braces(pattern));
    // (`\{` escapes on Windows too, where globset's default reads `\` as a separator.)
    let builder = GlobBuilder::new(&text).literal_separator(true).empty_alternates(true).backslash_escape(true).clone();
    Ok(Glob::build_picomatch(&builder)?.also_literally(pattern))
}

/// The segments of a glob that start with a dot (`.github`, `.*`,
/// `.env.*`), by position: picomatch matches a dot-file or dot-folder by
/// such a segment alone, never by `*` or `**`. A path's segment meets the
/// pattern's of the same place from the start (before a `**`) or from the
/// end (after the last `**`).
struct DotSegments {
    head: Vec<Option<Glob>>,
    /// Reversed: the last segment first (empty without a `**`).
    tail: Vec<Option<Glob>>,
}

impl DotSegments {
    fn of(pattern: &str) -> DotSegments {
        let dot = |s: &&str| {
            s.starts_with('.')
                .then(|| Glob::build(GlobBuilder::new(s).literal_separator(true).backslash_escape(true)).ok())
                .flatten()
        };
        let segments: Vec<&str> = pattern.split('/').collect();
        let star = |s: &&str| *s == "**";
        let head = segments.iter().take_while(|s| !star(s)).map(dot).collect();
        let tail = match segments.iter().any(star) {
            true => segments.iter().rev().take_while(|s| !star(s)).map(dot).collect(),
            false => Vec::new(),
        };
        DotSegments { head, tail }
    }

    /// Whether every dot segment of `rel` (a path from the base, as the
    /// pattern is) is named by the pattern's segment in its place.
    fn allow_all(&self, rel: &str) -> bool {
        let parts: Vec<&str> = rel.split('/').collect();
        let named = |m: Option<&Option<Glob>>, c: &str| m.and_then(Option::as_ref).is_some_and(|m| m.is_match(c));
        parts.iter().enumerate().all(|(i, c)| {
            !c.starts_with('.') || named(self.head.get(i), c) || named(self.tail.get(parts.len() - 1 - i), c)
        })
    }
}

#[cfg(test)]
#[path = "scan_tests.rs"]
mod tests;
