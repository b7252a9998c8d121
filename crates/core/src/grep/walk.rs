//! The files a grep reads, found as Mastra 1.71's grep tool walks: depth
//! first in byte order of names (Node's `readdir` order) with files and
//! folders interleaved, `.git` never entered, names starting with `.`
//! left out unless asked for, symbolic links to folders not followed
//! (links to files are read), only the root `.gitignore` applied (and not
//! at all when the searched folder is itself ignored), text files by
//! extension. Folders are listed in parallel; the order stays Mastra's.

use ignore::gitignore::{Gitignore, GitignoreBuilder};
use rayon::prelude::*;
use rustc_hash::FxHashSet;
use std::path::{Path, PathBuf};

/// What a walk keeps and leaves out.
pub struct WalkRules {
    pub include_hidden: bool,
    /// Lowercased extensions with their dot (`.ts`); `None`: every file.
    pub text_extensions: Option<FxHashSet<String>>,
}

/// A file found: its path relative to the walk's base (POSIX separators)
/// and what its metadata said (for telling whether it changed).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found {
    /// Shared: a kept walk hands the same path to every grep.
    pub rel: std::sync::Arc<str>,
    /// A symbolic link: its target may change where no watch sees it.
    pub link: bool,
    pub stamp: Option<Stamp>,
}

/// A file's size, times and inode (`None` in `Found`: it could not be
/// read, a broken link, no permission), as the scan of `init()` stamps it.
pub use crate::ingest::scan::FileStamp as Stamp;

/// What a walk found: the files in Mastra's order, and the folders it
/// could not list.
#[derive(Debug, Default)]
pub struct Walked {
    pub files: Vec<Found>,
    pub unreadable_folders: usize,
}

/// Mastra's text extensions (`isTextFile` in @mastra/core 1.71).
pub const MASTRA_TEXT_EXTENSIONS: &[&str] = &[
    ".md", ".txt", ".json", ".yaml", ".yml", ".js", ".mjs", ".ts", ".tsx", ".jsx", ".py", ".rb", ".go", ".rs", ".java",
    ".c", ".cpp", ".h", ".hpp", ".sh", ".bash", ".zsh", ".html", ".htm", ".css", ".xml", ".toml", ".ini", ".env",
    ".csv", ".sql", ".graphql", ".gql", ".vue", ".svg", ".mdx", ".scss", ".sass", ".less", ".svelte", ".php", ".swift",
    ".kt", ".kts", ".dart", ".lua", ".r", ".tf", ".tfvars", ".sas", ".log", ".jsonl",
];

/// Mastra's text-file test: Node's `path.extname`, lowercased, in the set.
pub fn is_text(name: &str, extensions: &FxHashSet<String>) -> bool {
    let Some(e) = extname(name) else { return false };
    // Lowercased on the stack: this runs for every file of every grep.
    let mut buf = [0u8; 16];
    if e.len() <= buf.len() && e.is_ascii() {
        buf[..e.len()].copy_from_slice(e.as_bytes());
        buf[..e.len()].make_ascii_lowercase();
        return std::str::from_utf8(&buf[..e.len()]).is_ok_and(|l| extensions.contains(l));
    }
    extensions.contains(&e.to_lowercase())
}

/// Node's `path.extname` of a file name: from the last `.` that is not the
/// first character.
fn extname(name: &str) -> Option<&str> {
    let dot = name.rfind('.')?;
    (dot > 0).then(|| &name[dot..])
}

/// The root `.gitignore` of `base` as Mastra applies it (its `ignore`
/// package); `None` without one.
pub struct RootIgnore {
    rules: Gitignore,
    /// A rule holds a character beyond ASCII: that package folds its case
    /// (`É/` ignores `é/`) where the matcher here folds ASCII only, so a
    /// name beyond ASCII is left undecided (below).
    wide_rules: bool,
}

impl RootIgnore {
    /// Whether `path` (relative to the base) is ignored, for certain.
    pub fn ignores(&self, path: &str, is_dir: bool) -> bool {
        match self.as_units(path) {
            Some(units) => self.rules.matched(&*units, is_dir).is_ignore(),
            None => false,
        }
    }

    /// Whether `path` or a folder above it is ignored, or may be (Mastra
    /// then turns the root `.gitignore` off for a search of it: so does grep).
    /// The folders above come first, as in Mastra's package and in git: a
    /// folder under an ignored one is ignored whatever a `!` rule says of
    /// it (`ignore`'s `matched_path_or_any_parents` stops at the path's own
    /// `!dist/sub/` and never asks about `dist/`).
    pub fn may_ignore_path_or_parents(&self, path: &str) -> bool {
        let Some(units) = self.as_units(path) else { return true };
        let units = units.trim_end_matches('/');
        let parent_ignored = units.match_indices('/').any(|(i, _)| self.rules.matched(&units[..i], true).is_ignore());
        parent_ignored || self.rules.matched(units, true).is_ignore()
    }

    /// `path` as Mastra's package counts it: one byte for each UTF-16 unit
    /// (`?` and `[...]` count units there, bytes here: `[!a]?.ts` takes
    /// `é.ts` here, not there), each unit beyond ASCII a control character
    /// no rule of ASCII names. `None`: undecided (a rule beyond ASCII).
    /// Undecided names are kept by the walk (the Mastra tool drops what
    /// Mastra ignores with its own matcher: a file dropped here would be
    /// lost) and turn the root `.gitignore` off as the searched path.
    fn as_units<'p>(&self, path: &'p str) -> Option<std::borrow::Cow<'p, str>> {
        if path.is_ascii() {
            return Some(path.into());
        }
        if self.wide_rules {
            return None;
        }
        let mut units = String::with_capacity(path.len());
        for c in path.chars() {
            match c.is_ascii() {
                true => units.push(c),
                false => (0..c.len_utf16()).for_each(|_| units.push('\u{1}')),
            }
        }
        Some(units.into())
    }
}

/// Reads the root `.gitignore` as the index's walk reads it (`small_file`):
/// a FIFO or device there is passed over rather than waited on or read
/// without end.
pub fn root_gitignore(base: &Path) -> Option<RootIgnore> {
    use crate::ingest::small_file::{read_small, SmallFile};
    let SmallFile::Text(text) = read_small(&base.join(".gitignore"), crate::ingest::gitignore::MAX_BYTES) else {
        return None;
    };
    if text.trim().is_empty() {
        return None;
    }
    // Mastra's `ignore` package matches case-insensitively by default.
    let mut b = GitignoreBuilder::new(base);
    b.case_insensitive(true).ok()?;
    let mut wide_rules = false;
    for line in crate::ingest::gitignore::rule_lines(&text) {
        let line = &*crate::text::glob::literal_braces(line);
        if b.add_line(None, line).is_ok() && !line.trim_start().starts_with('#') {
            wide_rules |= !line.is_ascii();
        }
    }
    Some(RootIgnore { rules: b.build().ok()?, wide_rules })
}

/// How many levels of folders a walk lists in parallel.
const PARALLEL_LEVELS: usize = 24;

/// Walks the folder `rel` of `base` (`""` for base itself).
pub fn walk(base: &Path, rel: &str, rules: &WalkRules) -> Walked {
    let ignore = root_gitignore(base).filter(|g| rel.is_empty() || !g.may_ignore_path_or_parents(rel));
    let real_base = std::fs::canonicalize(base).unwrap_or_else(|_| base.to_path_buf());
    let walker = Walker { base, real_base: &real_base, rules, ignore: ignore.as_ref() };
    let mut out = Walked::default();
    walker.folder(rel, &mut out);
    out
}

/// One folder's walk: the base, its rules, and the root `.gitignore`.
pub(super) struct Walker<'a> {
    pub(super) base: &'a Path,
    /// `base` with its links resolved: a linked file must resolve inside it.
    pub(super) real_base: &'a Path,
    pub(super) rules: &'a WalkRules,
    pub(super) ignore: Option<&'a RootIgnore>,
}

/// What a folder holds that the walk keeps: a file, or a folder to walk.
#[derive(Debug, Clone)]
pub(super) enum Entry {
    File(Found),
    Folder(String),
}

impl Walker<'_> {
    fn abs(&self, rel: &str) -> PathBuf {
        if rel.is_empty() {
            self.base.to_path_buf()
        } else {
            self.base.join(rel)
        }
    }

    /// The files under `rel`, in order, appended to `out`.
    fn folder(&self, rel: &str, out: &mut Walked) {
        self.folder_at(rel, 0, out)
    }

    /// `folder` at `depth` below the walk's root: sub-folders are walked
    /// in parallel down to `PARALLEL_LEVELS`, one after another below
    /// (a chain of thousands of folders ran the thread out of stack).
    fn folder_at(&self, rel: &str, depth: usize, out: &mut Walked) {
        if depth >= PARALLEL_LEVELS {
            return self.folder_in_order(rel, out);
        }
        let Some(entries) = self.list(rel) else {
            out.unreadable_folders += 1;
            return;
        };
        // Sub-folders are walked in parallel, then put back in place.
        let walked: Vec<Result<Found, Walked>> = entries
            .into_par_iter()
            .map(|e| match e {
                Entry::File(f) => Ok(f),
                Entry::Folder(sub) => {
                    let mut w = Walked::default();
                    self.folder_at(&sub, depth + 1, &mut w);
                    Err(w)
                }
            })
            .collect();
        for w in walked {
            match w {
                Ok(f) => out.files.push(f),
                Err(w) => {
                    out.files.extend(w.files);
                    out.unreadable_folders += w.unreadable_folders;
                }
            }
        }
    }

    /// `folder` on this thread, without recursion: any depth.
    fn folder_in_order(&self, rel: &str, out: &mut Walked) {
        let Some(entries) = self.list(rel) else {
            out.unreadable_folders += 1;
            return;
        };
        let mut open = vec![entries.into_iter()];
        while let Some(entries) = open.last_mut() {
            match entries.next() {
                None => drop(open.pop()),
                Some(Entry::File(f)) => out.files.push(f),
                Some(Entry::Folder(sub)) => match self.list(&sub) {
                    Some(entries) => open.push(entries.into_iter()),
                    None => out.unreadable_folders += 1,
                },
            }
        }
    }

    /// One folder's entries that the walk keeps, in byte order of names.
    pub(super) fn list(&self, rel: &str) -> Option<Vec<Entry>> {
        let mut names: Vec<(Vec<u8>, std::fs::DirEntry)> = std::fs::read_dir(self.abs(rel))
            .ok()?
            .filter_map(Result::ok)
            .map(|e| (e.file_name().as_encoded_bytes().to_vec(), e))
            .collect();
        names.sort_unstable_by(|a, b| a.0.cmp(&b.0));
        Some(names.into_iter().filter_map(|(_, e)| self.entry(rel, &e)).collect())
    }

    pub(super) fn entry(&self, rel: &str, e: &std::fs::DirEntry) -> Option<Entry> {
        // Mastra's paths are JavaScript strings: Node reads a name that is
        // not UTF-8 with U+FFFD in it, and then cannot read the file (or
        // folder) of that name: a read error, as here (the folder is read
        // by that name and fails; the file gets no stamp).
        let (name, utf8) = match e.file_name().into_string() {
            Ok(name) => (name, true),
            Err(raw) => (raw.to_string_lossy().into_owned(), false),
        };
        if name == ".git" || (!self.rules.include_hidden && name.starts_with('.')) {
            return None;
        }
        let path = if rel.is_empty() { name.clone() } else { format!("{rel}/{name}") };
        let kind = e.file_type().ok()?;
        let is_dir = kind.is_dir();
        if self.ignore.is_some_and(|g| g.ignores(&path, is_dir)) {
            return None;
        }
        if is_dir {
            return Some(Entry::Folder(path));
        }
        if kind.is_symlink() && std::fs::metadata(e.path()).is_ok_and(|m| m.is_dir()) {
            return None; // a link to a folder: not followed
        }
        if let Some(exts) = &self.rules.text_extensions {
            if !is_text(&name, exts) {
                return None;
            }
        }
        if !kind.is_symlink() && !kind.is_file() {
            return None; // FIFOs, sockets, devices: never opened (a FIFO would block)
        }
        let stamp = match std::fs::metadata(e.path()) {
            // A link that leads outside the base is not read (Mastra's
            // contained filesystem refuses it: a read error), whatever it
            // leads to: a device or a FIFO there too (it was skipped unsaid).
            Ok(_) if kind.is_symlink() && !self.inside(&e.path()) => None,
            Ok(m) if !m.is_file() => return None,
            Ok(_) if !utf8 => None,
            Ok(m) => Stamp::of(&m),
            Err(_) => None,
        };
        Some(Entry::File(Found { rel: path.into(), link: kind.is_symlink(), stamp }))
    }
}

impl Walker<'_> {
    /// A file's stamp now, by the walk's rules (`None` inside: unreadable;
    /// `None` outside: no longer a file the walk keeps).
    pub(super) fn restat(&self, rel: &str) -> Option<Option<Stamp>> {
        let path = self.abs(rel);
        let link = std::fs::symlink_metadata(&path).ok()?;
        if link.is_dir() || (!link.is_symlink() && !link.is_file()) {
            return None;
        }
        match std::fs::metadata(&path) {
            Ok(_) if link.is_symlink() && !self.inside(&path) => Some(None),
            Ok(m) if !m.is_file() => None,
            Ok(m) => Some(Stamp::of(&m)),
            Err(_) => Some(None),
        }
    }

    fn inside(&self, path: &Path) -> bool {
        std::fs::canonicalize(path).is_ok_and(|p| p.starts_with(self.real_base))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rules(hidden: bool) -> WalkRules {
        WalkRules {
            include_hidden: hidden,
            text_extensions: Some(MASTRA_TEXT_EXTENSIONS.iter().map(|s| s.to_string()).collect()),
        }
    }

    #[test]
    fn the_root_gitignore_as_git_reads_it() {
        // A byte-order mark before the first rule, a lone `\r` ending the last:
        // each rule is whole (the first was lost, and `src/` then did not
        // turn the root's rules off for a grep of `src`, as Mastra's does).
        for text in ["\u{feff}src/\n*.log\n", "*.log\nsrc/\r", "\u{feff}# build output\n*.log\nsrc/\n"] {
            let dir = tempfile::tempdir().unwrap();
            std::fs::write(dir.path().join(".gitignore"), text).unwrap();
            let root = root_gitignore(dir.path()).unwrap();
            assert!(root.may_ignore_path_or_parents("src"), "{text:?}");
            assert!(!root.wide_rules, "{text:?}: no rule is beyond ASCII");
        }
    }

    #[test]
    fn walks_in_mastras_order_with_its_filters() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path();
        for f in [
            "b.ts",
            "a/z.ts",
            "a/b/c.md",
            "B.md",
            ".hidden/x.ts",
            ".env",
            "img.png",
            "node_modules/m.js",
            ".git/config",
        ] {
            std::fs::create_dir_all(p.join(f).parent().unwrap()).unwrap();
            std::fs::write(p.join(f), "x").unwrap();
        }
        std::fs::write(p.join(".gitignore"), "node_modules/\n").unwrap();
        let names = |w: Walked| w.files.into_iter().map(|f| f.rel.to_string()).collect::<Vec<_>>();
        assert_eq!(names(walk(p, "", &rules(false))), ["B.md", "a/b/c.md", "a/z.ts", "b.ts"]);
        // `.env` has no extension to Node's `path.extname`: not a text file.
        assert_eq!(names(walk(p, "", &rules(true))), [".hidden/x.ts", "B.md", "a/b/c.md", "a/z.ts", "b.ts"]);
        // A link out of the base is unreadable; a FIFO is left out.
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("secret.ts"), "x").unwrap();
        std::os::unix::fs::symlink(outside.path().join("secret.ts"), p.join("link.ts")).unwrap();
        std::os::unix::fs::symlink(p.join("b.ts"), p.join("inner.ts")).unwrap();
        let c = std::ffi::CString::new(p.join("fifo.ts").as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: a valid NUL-terminated path; mkfifo only creates a file.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
        let w = walk(p, "", &rules(false));
        let got: Vec<(String, bool)> = w.files.into_iter().map(|f| (f.rel.to_string(), f.stamp.is_some())).collect();
        let want = [
            ("B.md", true),
            ("a/b/c.md", true),
            ("a/z.ts", true),
            ("b.ts", true),
            ("inner.ts", true),
            ("link.ts", false),
        ];
        assert_eq!(got, want.map(|(a, b)| (a.to_string(), b)));
        // The searched folder itself ignored: the root .gitignore is off.
        assert_eq!(names(walk(p, "node_modules", &rules(false))), ["node_modules/m.js"]);
    }
}
