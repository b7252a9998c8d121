//! Grep at index speed: a JavaScript regex over the files of a folder, with
//! Mastra's semantics (`regex.exec` once per line: at most one match per
//! line, its column a UTF-16 index) and Mastra's walk (`walk`).
//!
//! Every grep walks its folder (which files exist, their size and time);
//! a file whose size and time are those it had when its trigrams were
//! taken is read only if the pattern's trigram query (`trigrams`) admits
//! it, any other file is read (and its trigrams taken for the next grep).
//! Files are always read fresh from disk, so a reported line is the file's
//! line now; the index only decides which files need no reading. The first
//! grep of a folder reads every file once: the index is built lazily.

pub mod fold;
pub mod search;
pub mod store;
pub mod tree;
pub mod trigrams;
pub mod walk;

pub use search::{search_text, AnswerBudget, Context, LineMatch, Matcher, Unanswerable, Unsearched};

use rayon::prelude::*;
use rustc_hash::{FxHashMap, FxHashSet};
use std::path::PathBuf;
use tree::{Changes, DirWatch, Tree};
use trigrams::TrigramIndex;
use walk::{Found, Stamp, WalkRules, Walked, Walker};

/// One grep: the pattern and Mastra's options.
pub struct GrepRequest {
    pub matcher: Matcher,
    /// The folder or file to search, relative to the base (`""`: all of it).
    pub path: String,
    pub include_hidden: bool,
    /// Matches kept per file (`maxCount`).
    pub max_count: Option<usize>,
    pub context_lines: usize,
    /// Each context line given once: with the match before it, or the one
    /// after (Mastra's tool joins them by line number; a file of many
    /// matches then costs its lines, not matches x context).
    pub context_once: bool,
    /// Text files by extension (Mastra's list); `None`: every file.
    pub text_extensions: Option<FxHashSet<String>>,
    /// Only paths (relative to the base) this glob matches.
    pub glob: Option<crate::text::glob::Glob>,
    /// What is left of the answer's bytes (`MAX_ANSWER_BYTES` to begin with).
    pub answer: AnswerBudget,
}

/// A file's matches, its path relative to the base.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileMatches {
    pub path: String,
    pub matches: Vec<LineMatch>,
}

/// What a grep found, and what it could not read.
#[derive(Debug, Default)]
pub struct GrepOutcome {
    pub files: Vec<FileMatches>,
    /// Files and folders that could not be read (broken links, permissions).
    pub unreadable: usize,
    /// Files the walk kept, and how many of them were read.
    pub searched: usize,
    pub read: usize,
    /// The requested path does not exist.
    pub not_found: bool,
    /// The requested path leads outside the base (through a link).
    pub outside: bool,
    /// A file this pattern cannot be searched in as JavaScript would (its
    /// path and why): the grep has no exact answer.
    pub unanswerable: Option<(String, String)>,
    /// The answer would hold more than `search::MAX_ANSWER_BYTES` of lines.
    pub too_large: bool,
}

/// The trigram index of one folder, and what each file was when indexed.
pub struct Grep {
    base: PathBuf,
    files: FxHashMap<String, (u32, Stamp)>,
    index: TrigramIndex,
    /// The kept walk of the base without hidden names, while watched.
    tree: Option<Tree>,
    /// Which folder the base was when the kept tree was built.
    tree_root: Option<FolderId>,
    /// Notifications the kept tree has not taken in yet.
    pending: Changes,
    /// The files of the last walk (what a build indexes).
    last_walk: Vec<Found>,
    /// Every file of the walks so far has been indexed once (the build
    /// ran); new and changed files are then indexed as greps read them.
    built: bool,
    /// Changes to the index so far, and as of the last save (`store`).
    changes: u64,
    saved: u64,
    /// The last plan's ids (`ids_of`).
    ids: Option<IdCache>,
}

struct IdCache {
    key: (String, bool, Option<String>),
    changes: u64,
    ids: std::sync::Arc<Vec<Option<(u32, Stamp)>>>,
}

/// One file's trigrams, taken by `Grep::build`.
pub struct Built {
    rel: std::sync::Arc<str>,
    stamp: Stamp,
    trigrams: Vec<u32>,
}

/// Memory and size of a grep index, for `stats()`.
#[derive(Debug, Clone, Copy, Default)]
pub struct GrepStats {
    pub files: usize,
    pub memory_bytes: usize,
}

/// A folder as the system knows it (device and inode), where it can say.
type FolderId = (u64, u64);

/// The identity of the folder `path` leads to (a link followed).
fn folder_id(path: &std::path::Path) -> Option<FolderId> {
    crate::persist::disk::identity(&std::fs::metadata(path).ok()?)
}

/// A file modified this recently may change again within the clock's
/// resolution without a new time: its trigrams are not kept (git's "racy"
/// rule), so the next grep reads it again.
const RACY_NS: i128 = 2_000_000_000;

impl Grep {
    pub fn new(base: PathBuf) -> Grep {
        Grep {
            base,
            files: FxHashMap::default(),
            index: TrigramIndex::default(),
            tree: None,
            tree_root: None,
            pending: Changes::default(),
            last_walk: Vec::new(),
            built: false,
            changes: 0,
            saved: 0,
            ids: None,
        }
    }

    pub fn stats(&self) -> GrepStats {
        GrepStats { files: self.files.len(), memory_bytes: self.index.memory_bytes() + self.files.capacity() * 64 }
    }

    /// Greps; with `watched` (a folder watch and what it reported since
    /// the last grep), from the kept walk of the base instead of the disk.
    pub fn grep(&mut self, req: &GrepRequest, watched: Option<(&mut dyn DirWatch, Changes)>) -> GrepOutcome {
        // What the notifications said applies to the table now, and to the
        // kept tree whenever a grep next walks it (never lost on the way).
        let watch = watched.map(|(w, changes)| {
            self.forget_changed(&changes);
            self.pending.merge(changes);
            w
        });
        let target = self.base.join(&req.path);
        let meta = match std::fs::metadata(&target) {
            Ok(m) => m,
            Err(_) => return GrepOutcome { not_found: true, ..Default::default() },
        };
        if !self.inside_base(&target) {
            return GrepOutcome { outside: true, ..Default::default() };
        }
        let (mut walked, unchanged) = self.files_of(req, &meta, watch);
        // The files a glob leaves out are still there (their trigrams stay).
        let all = req.glob.as_ref().map(|_| walked.files.clone());
        if let Some(g) = &req.glob {
            walked.files.retain(|f| g.is_match(&f.rel));
        }
        let plan = self.plan(req, &walked.files, unchanged);
        let base = &self.base;
        let results: Vec<(usize, Option<Result<Searched, Unsearched>>)> = plan
            .par_iter()
            .map(|&(i, read)| {
                let f = &walked.files[i];
                (i, read_and_search(&base.join(&*f.rel), f.stamp.map_or(0, |s| s.size), req, read))
            })
            .collect();
        let mut out = GrepOutcome {
            unreadable: walked.unreadable_folders + walked.files.iter().filter(|f| f.stamp.is_none()).count(),
            searched: walked.files.len(),
            read: results.len(),
            ..Default::default()
        };
        self.take_results(&walked.files, results, &mut out);
        if !unchanged {
            self.forget_missing(&req.path, all.as_deref().unwrap_or(&walked.files), meta.is_file());
        }
        if !self.built {
            self.last_walk = walked.files;
        }
        out
    }

    /// Whether a build is due: some file a grep walked has no trigrams yet.
    pub fn needs_build(&self) -> bool {
        !self.built
    }

    /// Up to `n` files of the last walk without trigrams, to build (`build`
    /// reads them without holding this; `add_built` keeps the answers).
    /// Empty: the build is done, and new files are indexed as greps find them.
    pub fn unindexed(&mut self, n: usize) -> Vec<(std::sync::Arc<str>, Stamp)> {
        let mut out = Vec::new();
        while out.len() < n {
            let Some(f) = self.last_walk.pop() else { break };
            match (f.stamp, self.files.get(&*f.rel)) {
                (Some(s), Some(&(_, t))) if s == t => {}
                (Some(s), _) => out.push((f.rel, s)),
                (None, _) => {}
            }
        }
        if out.is_empty() && !self.built {
            self.built = true;
            self.changes += 1;
        }
        out
    }

    /// Reads `files` and takes their trigrams, in parallel (no grep state
    /// needed: call it without holding the `Grep`). A file whose size or
    /// time is not the walk's any more, or modified in the last 2 seconds,
    /// is left out (the next grep reads it).
    pub fn build(base: &std::path::Path, files: Vec<(std::sync::Arc<str>, Stamp)>) -> Vec<Built> {
        let now = crate::persist::now_ns();
        files
            .into_par_iter()
            .filter(|(_, stamp)| now - stamp.modified_ns >= RACY_NS)
            .filter_map(|(rel, stamp)| {
                let path = base.join(&*rel);
                let bytes = read_file(&path, stamp.size).ok()?;
                let after = std::fs::metadata(&path).ok()?;
                if Stamp::of(&after) != Some(stamp) {
                    return None;
                }
                let text = String::from_utf8_lossy(&bytes);
                let units = search::as_units(&text);
                let trigrams = trigrams::trigrams_of(units.as_deref().unwrap_or(&text).as_bytes());
                Some(Built { rel, stamp, trigrams })
            })
            .collect()
    }

    /// Keeps what `build` took, for files still as they were (a grep may
    /// have indexed one meanwhile).
    pub fn add_built(&mut self, built: Vec<Built>) {
        for b in built {
            if self.files.get(&*b.rel).is_some_and(|&(_, s)| s == b.stamp) {
                continue;
            }
            self.forget(&b.rel);
            let id = self.index.add(&b.trigrams);
            self.files.insert(b.rel.to_string(), (id, b.stamp));
            self.changes += 1;
        }
    }

    /// The files a grep searches, in Mastra's order; and whether they are
    /// the kept walk unchanged since the last grep (then no file is gone).
    fn files_of(
        &mut self,
        req: &GrepRequest,
        meta: &std::fs::Metadata,
        watch: Option<&mut dyn DirWatch>,
    ) -> (Walked, bool) {
        // `.git` is never entered, named by the path too (`.git`,
        // `sub/.git/refs`), as Mastra's tool searches nothing there.
        if req.path.split('/').any(|segment| segment == ".git") {
            return (Walked::default(), false);
        }
        if meta.is_file() {
            // As Mastra's tool takes a file path: only its extension decides.
            let name = req.path.rsplit('/').next().unwrap_or(&req.path);
            if req.text_extensions.as_ref().is_some_and(|x| !walk::is_text(name, x)) {
                return (Walked::default(), false);
            }
            let stamp = Stamp::of(meta);
            return (
                Walked {
                    files: vec![Found { rel: req.path.as_str().into(), link: false, stamp }],
                    unreadable_folders: 0,
                },
                false,
            );
        }
        if let Some(watch) = watch.filter(|_| !req.include_hidden) {
            let unchanged = self.pending.is_empty() && self.tree.is_some();
            if let Some(kept) = self.kept_walk(req, watch) {
                return (kept, unchanged);
            }
        }
        let rules = WalkRules { include_hidden: req.include_hidden, text_extensions: req.text_extensions.clone() };
        (walk::walk(&self.base, &req.path, &rules), false)
    }

    /// Which files to read, and why: an indexed file only when the query
    /// admits it; a new or changed one always (its trigrams are taken).
    fn plan(&mut self, req: &GrepRequest, files: &[Found], unchanged: bool) -> Vec<(usize, Read)> {
        let candidates = self.index.candidates(&req.matcher.query);
        let now = crate::persist::now_ns();
        let ids = self.ids_of(req, files, unchanged);
        files
            .iter()
            .zip(ids.iter())
            .enumerate()
            .filter_map(|(i, (f, indexed))| {
                let stamp = f.stamp?;
                match *indexed {
                    Some((id, s)) if s == stamp => trigrams::has(&candidates, id).then_some((i, Read::Search)),
                    // Before the first build, a file not indexed is only
                    // scanned: the build takes its trigrams (`unindexed`).
                    None if !self.built => Some((i, Read::Index { keep: false })),
                    _ => Some((i, Read::Index { keep: now - stamp.modified_ns >= RACY_NS })),
                }
            })
            .collect()
    }

    /// Each file's id and stamp in the table: the last grep's, when it
    /// walked the same files of the same kept tree and the table has not
    /// changed since (a warm grep then looks nothing up), else looked up.
    fn ids_of(
        &mut self,
        req: &GrepRequest,
        files: &[Found],
        unchanged: bool,
    ) -> std::sync::Arc<Vec<Option<(u32, Stamp)>>> {
        let key = (req.path.clone(), req.text_extensions.is_some(), req.glob.as_ref().map(|g| g.glob().to_string()));
        if let Some(c) = &self.ids {
            if unchanged && c.key == key && c.changes == self.changes && c.ids.len() == files.len() {
                return c.ids.clone();
            }
        }
        let ids: std::sync::Arc<Vec<Option<(u32, Stamp)>>> =
            std::sync::Arc::new(files.iter().map(|f| self.files.get(&*f.rel).copied()).collect());
        self.ids = Some(IdCache { key, changes: self.changes, ids: ids.clone() });
        ids
    }

    /// Keeps what the reads found: matches into `out`, new trigrams into the index.
    fn take_results(
        &mut self,
        files: &[Found],
        results: Vec<(usize, Option<Result<Searched, Unsearched>>)>,
        out: &mut GrepOutcome,
    ) {
        for (i, r) in results {
            let f = &files[i];
            let r = match r {
                None => {
                    out.unreadable += 1;
                    continue;
                }
                Some(Err(Unsearched::Unanswerable(Unanswerable(why)))) => {
                    out.unanswerable.get_or_insert((f.rel.to_string(), why));
                    continue;
                }
                Some(Err(Unsearched::TooLarge)) => {
                    out.too_large = true;
                    continue;
                }
                Some(Ok(r)) => r,
            };
            if let Some(grams) = r.trigrams {
                self.forget(&f.rel);
                let id = self.index.add(&grams);
                self.files.insert(f.rel.to_string(), (id, f.stamp.expect("read files have a stamp")));
                self.changes += 1;
            } else if matches!(r.read, Read::Index { .. }) {
                self.forget(&f.rel);
            }
            if !r.matches.is_empty() {
                out.files.push(FileMatches { path: f.rel.to_string(), matches: r.matches });
            }
        }
    }

    /// The files of `req.path` from the kept tree, brought up to date with
    /// `changes` (or walked anew, watching as it goes); `None` when the tree
    /// cannot answer (the path is outside it, or a folder cannot be watched).
    fn kept_walk(&mut self, req: &GrepRequest, watch: &mut dyn DirWatch) -> Option<Walked> {
        let ignore = walk::root_gitignore(&self.base);
        // Mastra turns the root .gitignore off for a path it ignores: not the tree's walk.
        if !req.path.is_empty() && ignore.as_ref().is_some_and(|g| g.may_ignore_path_or_parents(&req.path)) {
            return None;
        }
        let changes = std::mem::take(&mut self.pending);
        let real_base = std::fs::canonicalize(&self.base).unwrap_or_else(|_| self.base.clone());
        let rules = WalkRules { include_hidden: false, text_extensions: None };
        let walker = Walker { base: &self.base, real_base: &real_base, rules: &rules, ignore: ignore.as_ref() };
        // The base renamed away and another folder made at its path (or a
        // link to it retargeted): the kept tree's watches follow the old one.
        let root = folder_id(&self.base);
        if self.tree.is_some() && root != self.tree_root {
            self.tree.take().expect("kept").unwatch_all(watch);
        }
        let kept = self.tree.take().and_then(|mut t| t.refresh(&walker, changes, watch).then_some(t));
        let fresh = match kept {
            Some(t) => Some(t),
            None => {
                self.tree_root = root;
                Tree::build(&walker, watch)
            }
        };
        self.tree = fresh;
        let (files, unreadable_folders) = self.tree.as_ref()?.files(&req.path, req.text_extensions.as_ref())?;
        Some(Walked { files, unreadable_folders })
    }

    /// Whether `path` (the base joined with a grep's path) resolves inside
    /// the base: a link on the way must not lead the walk outside.
    fn inside_base(&self, path: &std::path::Path) -> bool {
        let base = std::fs::canonicalize(&self.base).unwrap_or_else(|_| self.base.clone());
        std::fs::canonicalize(path).is_ok_and(|p| p.starts_with(base))
    }

    /// Folders in the kept walk (0 when there is none).
    pub fn kept_folders(&self) -> usize {
        self.tree.as_ref().map_or(0, Tree::folder_count)
    }

    /// Whether the index changed since it was saved or loaded.
    pub fn unsaved(&self) -> bool {
        self.changes != self.saved
    }

    /// After a save of the index as it was when `changes()` said `at`.
    pub fn mark_saved(&mut self, at: u64) {
        self.saved = at;
    }

    pub fn changes(&self) -> u64 {
        self.changes
    }

    fn forget(&mut self, rel: &str) {
        if let Some((id, _)) = self.files.remove(rel) {
            self.index.remove(id);
            self.changes += 1;
        }
        // Past twice as many dead ids as live ones, start over: the next
        // grep reads every file again.
        if self.index.dead() > 2 * self.files.len() + 1024 {
            self.files.clear();
            self.index = TrigramIndex::default();
            self.built = false;
        }
    }

    /// Drops the trigrams of the files a notification named (read again by
    /// the next grep). A file replaced in a changed folder needs nothing
    /// here: its folder is listed again, and a new inode or change time is
    /// a new stamp.
    fn forget_changed(&mut self, changes: &Changes) {
        let gone: Vec<String> = changes.files.iter().filter(|f| self.files.contains_key(*f)).cloned().collect();
        for rel in gone {
            self.forget(&rel);
        }
    }

    /// Files under the searched folder that the walk no longer found.
    fn forget_missing(&mut self, root: &str, found: &[Found], single: bool) {
        if single {
            return;
        }
        let seen: FxHashSet<&str> = found.iter().map(|f| &*f.rel).collect();
        let prefix = if root.is_empty() { String::new() } else { format!("{root}/") };
        let gone: Vec<String> =
            self.files.keys().filter(|k| k.starts_with(&prefix) && !seen.contains(k.as_str())).cloned().collect();
        for k in gone {
            self.forget(&k);
        }
    }
}

#[derive(Debug, Clone, Copy)]
enum Read {
    /// Indexed as it is: read because the query admits it.
    Search,
    /// New or changed: read, searched, and its trigrams taken (kept unless racy).
    Index { keep: bool },
}

struct Searched {
    read: Read,
    matches: Vec<LineMatch>,
    trigrams: Option<Vec<u32>>,
}

fn read_and_search(
    path: &std::path::Path,
    len: u64,
    req: &GrepRequest,
    read: Read,
) -> Option<Result<Searched, Unsearched>> {
    let bytes = read_file(path, len).ok()?;
    // As Node's `readFile(path, 'utf-8')` decodes: invalid bytes become U+FFFD.
    let text = String::from_utf8_lossy(&bytes);
    // The trigrams of what the pattern is matched against: JavaScript's units.
    let trigrams = match read {
        Read::Index { keep: true } => {
            Some(trigrams::trigrams_of(search::as_units(&text).as_deref().unwrap_or(&text).as_bytes()))
        }
        _ => None,
    };
    let context = Context { lines: req.context_lines, once: req.context_once };
    Some(search_text(&req.matcher, &text, req.max_count, context, &req.answer).map(|matches| Searched {
        read,
        matches,
        trigrams,
    }))
}

/// A `path` option (a file, a folder, or a glob, relative to the base):
/// the folder to walk (`""` for the base) and the glob that the paths of
/// its files (relative to the base) must match. A path leaving the base is
/// refused.
/// An absolute path inside basePath (`base`, asked only then) is read from
/// basePath down, and a `..` that stays inside is applied.
pub fn split_glob(
    path: &str,
    base: impl FnOnce() -> crate::index::id_base::IdBase,
) -> Result<(String, Option<crate::text::glob::Glob>), String> {
    let outside = || Err(format!("path must stay inside basePath, got {path}"));
    // (`src/.` stays as written: Mastra's results name `src/./a.ts` then, and so do these.)
    let read = match path.starts_with('/') || path.split('/').any(|s| s == "..") {
        true if crate::index::id_base::climbs_out(path) => return outside(),
        true if path.starts_with('/') => match base() {
            base if base.spells_base(path) => base.relative(path),
            _ => return outside(),
        },
        true => crate::index::id_base::applied(path),
        false => std::borrow::Cow::Borrowed(path),
    };
    let clean = read.trim_start_matches("./").trim_end_matches('/');
    let clean = if clean == "." { "" } else { clean };
    if clean.starts_with('/') || clean.split('/').any(|s| s == "..") {
        return Err(format!("path must stay inside basePath, got {path}"));
    }
    let is_glob = |s: &str| s.contains(['*', '?', '[', ']', '{', '}']);
    if !is_glob(clean) {
        return Ok((clean.to_string(), None));
    }
    let base: Vec<&str> = clean.split('/').take_while(|s| !is_glob(s)).collect();
    let glob = crate::ingest::scan::picomatch_glob(clean).map_err(|e| format!("path is not a valid glob: {e}"))?;
    Ok((base.join("/"), Some(glob)))
}

/// A file's bytes, its size known from the walk (`std::fs::read` would ask
/// the system again: one call per file saved, on every file of a scan).
fn read_file(path: &std::path::Path, len: u64) -> std::io::Result<Vec<u8>> {
    // Larger than a JavaScript string can hold: Mastra's read fails (a read error) too.
    if len > MAX_TEXT_BYTES {
        return Err(std::io::Error::other("larger than a JavaScript string"));
    }
    // Never blocks on a FIFO put where a file was (the kept walk may not know yet).
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::custom_flags(&mut options, libc::O_NONBLOCK);
    let file = options.open(path)?;
    let meta = file.metadata()?;
    if !meta.is_file() || meta.len() > MAX_TEXT_BYTES {
        return Err(std::io::Error::other("not a regular file of text"));
    }
    let mut bytes = Vec::with_capacity(meta.len() as usize + 1);
    std::io::Read::read_to_end(&mut std::io::Read::take(file, MAX_TEXT_BYTES + 1), &mut bytes)?;
    if bytes.len() as u64 > MAX_TEXT_BYTES {
        return Err(std::io::Error::other("larger than a JavaScript string"));
    }
    let _ = len;
    Ok(bytes)
}

/// V8's longest string (2^29 - 24 UTF-16 units): a file of more bytes
/// cannot be read as Mastra reads it (`ERR_STRING_TOO_LONG`).
const MAX_TEXT_BYTES: u64 = (1 << 29) - 24;
