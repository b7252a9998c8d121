//! What the watcher (`watch: true`) watches: for each `autoIndexPaths`
//! entry, the deepest directory it is sure to stay within (a glob's
//! leading literal directories; a file's own directory), so that changes
//! elsewhere in the workspace (`node_modules`, build output) wake nothing.

use super::gitignore::GitignoreRules;
use super::scan::{identity, is_glob, plain_walker, FoundFile, MAX_DEPTH};

/// How deep below a watched root folders are watched one by one: the
/// scan's depth from the deepest entry a glob can match there.
const MAX_WATCH_DEPTH: usize = 8 * MAX_DEPTH;
use crate::index::id_base::within_base;
use std::collections::BTreeMap;
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;

/// More changed paths than this in one burst: the tree is reconciled
/// instead (a checkout, an unpacked archive).
pub const MAX_BURST_PATHS: usize = 4096;

/// The changes of one burst: the paths to look at again (files or
/// directories; what lies below a directory is looked at too), or the
/// whole tree after an overflow, a lost watch or too many paths.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Burst {
    /// Each once: a write is several events of one path, and a burst of
    /// 1,500 files written once counted past `MAX_BURST_PATHS`.
    paths: std::collections::BTreeSet<PathBuf>,
    pub rescan: bool,
}

impl Burst {
    pub fn add(&mut self, path: PathBuf) {
        if !self.rescan {
            self.paths.insert(path);
            if self.paths.len() > MAX_BURST_PATHS {
                self.rescan();
            }
        }
    }

    pub fn rescan(&mut self) {
        self.rescan = true;
        self.paths.clear();
    }

    pub fn is_empty(&self) -> bool {
        !self.rescan && self.paths.is_empty()
    }

    /// The paths, each once, none below another (a directory's walk
    /// covers what lies below it).
    pub fn take_paths(&mut self) -> Vec<PathBuf> {
        let paths = std::mem::take(&mut self.paths);
        let mut out: Vec<PathBuf> = Vec::with_capacity(paths.len());
        for p in paths {
            // Sorted: an ancestor comes before what lies below it.
            if !out.last().is_some_and(|last| p.starts_with(last)) {
                out.push(p);
            }
        }
        out
    }
}

/// Where each indexed file was found (its path as the scan meets it, and
/// its id), so that a change under a path finds the ids it concerns
/// without a walk of the tree. Kept only while watching.
#[derive(Debug, Default, Clone)]
pub struct Located {
    /// Each file's id and (device, inode).
    by_path: BTreeMap<PathBuf, (String, Option<(u64, u64)>)>,
    /// Files found through a symbolic link, and their targets (canonical,
    /// as the watcher names changes): a change of a target is one of the
    /// link's file. Links are few: looked through whole.
    link_targets: BTreeMap<PathBuf, PathBuf>,
    /// Inodes found under more than one name (hard links), with those
    /// names: a write through one is a change of each (the system reports
    /// the name written only). Hard links are few: only they are kept.
    shared: rustc_hash::FxHashMap<(u64, u64), Vec<PathBuf>>,
}

impl Located {
    /// Everything found by a walk of the whole tree, and the links it
    /// found broken (`dangling`).
    pub fn replace_all(&mut self, found: &[FoundFile], dangling: &[PathBuf]) {
        self.by_path = found.iter().map(|f| (f.path.clone(), (f.id.clone(), f.identity))).collect();
        self.link_targets.clear();
        self.note_links(found, dangling);
        self.shared.clear();
        for f in found.iter().filter(|f| f.hard_linked) {
            if let Some(inode) = f.identity {
                self.shared.entry(inode).or_default().push(f.path.clone());
            }
        }
        self.shared.retain(|_, names| names.len() > 1);
    }

    /// The other names of the files at `paths` (hard links).
    pub fn hard_links_of(&self, paths: &[PathBuf]) -> Vec<PathBuf> {
        let names = |p: &PathBuf| self.by_path.get(p).and_then(|(_, inode)| self.shared.get(inode.as_ref()?));
        paths.iter().filter_map(|p| Some(names(p)?.iter().filter(move |n| *n != p))).flatten().cloned().collect()
    }

    /// `shared` after a walk limited to `within` found `found`: the names
    /// below `within` taken out, then those found put back, with the
    /// other names of an inode found anew among the files known (a hard
    /// link just made).
    fn share_within(&mut self, within: &[PathBuf], found: &[FoundFile]) {
        for names in self.shared.values_mut() {
            names.retain(|n| !within.iter().any(|w| n.starts_with(w)));
        }
        let linked = || found.iter().filter(|f| f.hard_linked).filter_map(|f| Some((f.identity?, &f.path)));
        // Inodes new to `shared`: their names among the files known, in one pass.
        let new: rustc_hash::FxHashSet<(u64, u64)> =
            linked().map(|(inode, _)| inode).filter(|inode| !self.shared.contains_key(inode)).collect();
        if !new.is_empty() {
            for (path, (_, inode)) in &self.by_path {
                if let Some(inode) = inode.filter(|i| new.contains(i)) {
                    self.shared.entry(inode).or_default().push(path.clone());
                }
            }
        }
        for (inode, path) in linked() {
            self.shared.entry(inode).or_default().push(path.clone());
        }
        for names in self.shared.values_mut() {
            names.sort();
            names.dedup();
        }
        self.shared.retain(|_, names| names.len() > 1);
    }

    /// A link broken now is kept with where it leads, so that its target
    /// made (again: a `git checkout` that removed it and put it back) is a
    /// change of the link's file too.
    fn note_links(&mut self, found: &[FoundFile], dangling: &[PathBuf]) {
        for f in found.iter().filter(|f| f.link) {
            if let Ok(target) = f.path.canonicalize() {
                self.link_targets.insert(f.path.clone(), target);
            }
        }
        for link in dangling {
            if let Some(target) = destination(link) {
                self.link_targets.insert(link.clone(), target);
            }
        }
    }

    /// The files found through links whose targets are at or below one of
    /// `changed` (canonical paths).
    pub fn links_into(&self, changed: &[PathBuf]) -> Vec<PathBuf> {
        let into =
            |(link, target): (&PathBuf, &PathBuf)| changed.iter().any(|c| target.starts_with(c)).then(|| link.clone());
        self.link_targets.iter().filter_map(into).collect()
    }

    pub fn len(&self) -> usize {
        self.by_path.len()
    }

    pub fn is_empty(&self) -> bool {
        self.by_path.is_empty()
    }

    /// Forgets the file at `path` if it is `id`'s (a write of the API's
    /// now holds that id: its file's removal is not the document's).
    pub fn forget(&mut self, path: &Path, id: &str) {
        if self.by_path.get(path).is_some_and(|(found, _)| found == id) {
            self.by_path.remove(path);
        }
    }

    /// After a walk limited to `within`: the ids found before below those
    /// paths and not found now (gone), the map brought up to date.
    pub fn update_within(&mut self, within: &[PathBuf], found: &[FoundFile], dangling: &[PathBuf]) -> Vec<String> {
        let now: rustc_hash::FxHashSet<&Path> = found.iter().map(|f| f.path.as_path()).collect();
        let mut gone = Vec::new();
        for w in within {
            let below: Vec<PathBuf> =
                self.by_path.range(w.clone()..).take_while(|(p, _)| p.starts_with(w)).map(|(p, _)| p.clone()).collect();
            for p in below.into_iter().filter(|p| !now.contains(p.as_path())) {
                gone.extend(self.by_path.remove(&p).map(|(id, _)| id));
            }
            self.link_targets.retain(|link, _| !link.starts_with(w));
        }
        for f in found {
            self.by_path.insert(f.path.clone(), (f.id.clone(), f.identity));
        }
        self.note_links(found, dangling);
        self.share_within(within, found);
        gone.sort();
        gone.dedup();
        gone
    }
}

/// Where the broken link `link` leads, as the watcher names it once it is
/// there (its folder canonical): `None` when that folder is not there.
fn destination(link: &Path) -> Option<PathBuf> {
    let to = std::fs::read_link(link).ok()?;
    let to = if to.is_absolute() { to } else { link.parent()?.join(to) };
    Some(to.parent()?.canonicalize().ok()?.join(to.file_name()?))
}

/// A directory to watch, recursively or not.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WatchRoot {
    pub dir: PathBuf,
    pub recursive: bool,
}

/// The directories to watch for `entries` inside `base` (canonical;
/// entries that climb out of `base`, by `..` or a link, are left out: the
/// scan refuses them too). A glob is watched from its leading literal
/// directories, recursively (a match may be a folder, indexed in full); a
/// file from its directory alone.
/// A directory that does not exist yet is still a root (the watcher looks
/// for it until it comes).
/// An absolute entry inside `base` is read as the scan reads it (`lexical`
/// is basePath as the user spelled it, `base` its canonical form).
pub fn watch_roots(base: &Path, lexical: &Path, entries: &[String]) -> Vec<WatchRoot> {
    let mut roots: Vec<WatchRoot> = Vec::new();
    for entry in entries {
        let mut dir = base.to_path_buf();
        let mut literal = true;
        let mut escaped = false;
        let rel = within_base(entry, &[lexical, base]);
        for c in Path::new(rel.trim_start_matches('/')).components() {
            match c {
                Component::Normal(part) if literal && !is_glob(&part.to_string_lossy()) => dir.push(part),
                Component::Normal(_) => literal = false,
                // (`lib/../src` is `src`, as the scan reads it.)
                Component::ParentDir if literal && dir != base => drop(dir.pop()),
                Component::ParentDir => escaped = true,
                _ => {}
            }
        }
        // A directory reached through a link out of `base` is not read by
        // the scan, so it is not watched either.
        if escaped || dir.canonicalize().is_ok_and(|c| !c.starts_with(base)) {
            continue;
        }
        // A folder reached through a link inside `base` is watched where it
        // is too (links are not followed); its changes are mapped back to
        // the entry's paths by the update (`through_linked_entries`). The
        // entry's own path stays watched: the link removed or retargeted.
        let real = dir.canonicalize().ok().filter(|r| r != &dir);
        for dir in std::iter::once(dir).chain(real) {
            let root = if literal && dir.is_file() {
                WatchRoot { dir: dir.parent().unwrap_or(base).to_path_buf(), recursive: false }
            } else {
                // A glob's matches may be folders, indexed in full: watched below too.
                WatchRoot { dir, recursive: true }
            };
            add_root(&mut roots, root);
        }
    }
    roots
}

/// The recursive roots each entry reached through a link has on its own
/// that `roots` (those of all entries together) dropped, as covered by
/// another root. Where the walk from the covering root does not enter one
/// (a link entry into a folder `.gitignore` leaves out: the scan walks it
/// from the entry), its folders are watched from it (`FolderWatches`).
pub fn covered_roots(base: &Path, lexical: &Path, entries: &[String], roots: &[WatchRoot]) -> Vec<PathBuf> {
    let mut covered: Vec<PathBuf> = Vec::new();
    for entry in entries {
        let own = watch_roots(base, lexical, std::slice::from_ref(entry));
        // Only an entry through a link: one named in a folder `.gitignore`
        // leaves out is not walked by the scan either (it was watched for
        // nothing).
        if !own.iter().any(|r| r.dir.canonicalize().is_ok_and(|c| c != r.dir)) {
            continue;
        }
        for r in own {
            if r.recursive && !roots.contains(&r) && !covered.contains(&r.dir) {
                covered.push(r.dir);
            }
        }
    }
    covered
}

/// Adds `root` unless a recursive root covers it; drops the roots it covers.
fn add_root(roots: &mut Vec<WatchRoot>, root: WatchRoot) {
    if roots.contains(&root) || roots.iter().any(|r| r.recursive && root.dir.starts_with(&r.dir) && r.dir != root.dir) {
        return;
    }
    if roots.iter().any(|r| r.dir == root.dir && r.recursive) {
        return;
    }
    roots.retain(|r| !(root.recursive && r.dir.starts_with(&root.dir)));
    roots.push(root);
}

/// The directories between `base` and each root (`base` included, the
/// roots not), watched alone so that a root removed or renamed with a
/// folder above it is noticed, and a `.gitignore` above it too.
pub fn ancestors(base: &Path, roots: &[WatchRoot]) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = Vec::new();
    for r in roots {
        let mut at = r.dir.parent();
        while let Some(dir) = at.filter(|d| d.starts_with(base)) {
            if !out.iter().any(|o| o == dir) && !roots.iter().any(|r| r.dir == dir) {
                out.push(dir.to_path_buf());
            }
            at = dir.parent();
        }
    }
    out.sort();
    out
}

/// The folders at and below `root` that the index's walk enters, with
/// each one's identity (device, inode): not a `.git`, not `exclude` (the
/// persist directory), not one `gitignore` leaves out, not reached through
/// a link, and no deeper than files are indexed. A watch of each of them
/// alone (inotify) sees every change the index cares about, and none of
/// the churn in `node_modules`, build output or `.git` (thousands of
/// folders that a recursive watch would each have watched). `root` itself
/// comes first, when it is a folder. Each is handed to `visit` with its
/// identity as the walk meets it, before what it holds is read, so that a
/// caller that watches it there misses no folder made in it meanwhile.
/// Returns the folders that could not be read (what lies below them is
/// not known).
pub fn folders_to_watch(
    root: &Path,
    exclude: Option<PathBuf>,
    gitignore: Option<Arc<GitignoreRules>>,
    visit: &mut dyn FnMut(PathBuf, Option<(u64, u64)>),
) -> Vec<PathBuf> {
    let mut unreadable = Vec::new();
    let mut builder = plain_walker(root);
    builder
        // The scan counts its depth from each entry, and a glob's matched
        // folder is walked from there: a bound for pathological trees only.
        .max_depth(Some(MAX_WATCH_DEPTH));
    let walker = builder
        .filter_entry(move |e| {
            let p = e.path();
            e.depth() == 0
                || (e.file_type().is_some_and(|t| t.is_dir())
                    && e.file_name() != ".git"
                    && exclude.as_deref() != Some(p)
                    && gitignore.as_ref().is_none_or(|g| !g.ignored(p, true)))
        })
        .build();
    for item in walker {
        match item {
            Ok(entry) if entry.file_type().is_some_and(|t| t.is_dir()) => {
                let id = entry.metadata().ok().as_ref().and_then(identity);
                visit(entry.into_path(), id);
            }
            Ok(_) => {}
            Err(e) => unreadable.extend(error_path(&e).map(Path::to_path_buf)),
        }
    }
    unreadable
}

/// The path an error of the walk names, if it names one.
fn error_path(e: &ignore::Error) -> Option<&Path> {
    match e {
        ignore::Error::WithPath { path, .. } => Some(path),
        ignore::Error::WithDepth { err, .. } | ignore::Error::WithLineNumber { err, .. } => error_path(err),
        _ => None,
    }
}

/// Whether a changed path concerns the index: under a root (directly
/// under it for a root watched alone), not inside a `.git` below the root,
/// nor inside `skip` (the persist directory, whose saves would wake the
/// watcher).
pub fn concerns(path: &Path, roots: &[WatchRoot], skip: Option<&Path>) -> bool {
    if skip.is_some_and(|s| path.starts_with(s)) {
        return false;
    }
    roots.iter().any(|r| {
        let Ok(rel) = path.strip_prefix(&r.dir) else { return false };
        let inside = if r.recursive { true } else { rel.components().count() == 1 };
        inside && !rel.components().any(|c| c.as_os_str() == ".git")
    })
}

/// Whether a change to `path` changes which files the walk takes or what
/// kind they are: a `.gitignore` or `.gitattributes` (the tree is then
/// reconciled).
pub fn changes_rules(path: &Path) -> bool {
    path.file_name().is_some_and(|n| n == ".gitignore" || n == ".gitattributes")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn found(path: &str) -> FoundFile {
        FoundFile {
            id: format!("id:{path}"),
            path: path.into(),
            identity: None,
            hard_linked: false,
            stamp: None,
            link: false,
            listed: None,
            base: None,
        }
    }

    fn linked(path: &str, inode: u64) -> FoundFile {
        FoundFile { identity: Some((1, inode)), hard_linked: true, ..found(path) }
    }

    #[test]
    fn hard_links_name_each_other_and_follow_updates() {
        let mut l = Located::default();
        l.replace_all(&[linked("/w/a.rs", 7), linked("/w/sub/b.rs", 7), found("/w/c.rs"), linked("/w/e.rs", 9)], &[]);
        assert_eq!(l.hard_links_of(&["/w/sub/b.rs".into()]), [PathBuf::from("/w/a.rs")]);
        assert!(l.hard_links_of(&["/w/c.rs".into(), "/w/e.rs".into()]).is_empty(), "9 has one name known");
        // A name made for 9 while watching (a walk of /w/new only).
        l.update_within(&["/w/new".into()], &[linked("/w/new/f.rs", 9)], &[]);
        assert_eq!(l.hard_links_of(&["/w/e.rs".into()]), [PathBuf::from("/w/new/f.rs")]);
        // b.rs removed: a.rs has no other name left.
        l.update_within(&["/w/sub".into()], &[], &[]);
        assert!(l.hard_links_of(&["/w/a.rs".into()]).is_empty());
    }

    #[test]
    fn a_burst_keeps_each_path_once_and_none_below_another() {
        let mut b = Burst::default();
        for p in ["/w/docs/a.md", "/w/docs", "/w/src/x.rs", "/w/docs/api/b.md", "/w/src/x.rs", "/w/docsy"] {
            b.add(p.into());
        }
        assert_eq!(b.take_paths(), [PathBuf::from("/w/docs"), "/w/docsy".into(), "/w/src/x.rs".into()]);
        assert!(b.is_empty());
        for i in 0..=MAX_BURST_PATHS {
            b.add(format!("/w/{i}").into());
        }
        assert!(b.rescan && b.take_paths().is_empty());
    }

    #[test]
    fn located_files_below_a_changed_path_that_are_not_found_again_are_gone() {
        let mut l = Located::default();
        l.replace_all(
            &[found("/w/docs/a.md"), found("/w/docs/api/b.md"), found("/w/docsy/c.md"), found("/w/x.md")],
            &[],
        );
        // docs walked again: b.md is gone, d.md is new; docsy is not below docs.
        let gone = l.update_within(&["/w/docs".into()], &[found("/w/docs/a.md"), found("/w/docs/d.md")], &[]);
        assert_eq!(gone, ["id:/w/docs/api/b.md"]);
        assert_eq!(l.len(), 4);
        assert_eq!(l.update_within(&["/w/x.md".into()], &[], &[]), ["id:/w/x.md"]);
        assert_eq!(l.update_within(&["/w/missing".into()], &[], &[]), Vec::<String>::new());
    }

    #[test]
    fn roots_are_the_literal_directories_of_entries() {
        let d = tempfile::tempdir().unwrap();
        let base = d.path();
        std::fs::create_dir_all(base.join("docs/api")).unwrap();
        std::fs::create_dir_all(base.join("src")).unwrap();
        std::fs::write(base.join("README.md"), "x").unwrap();
        let entries: Vec<String> =
            ["docs/api", "docs", "/src/**/*.ts", "README.md", "../outside", "missing"].map(String::from).into();
        let roots = watch_roots(base, base, &entries);
        assert_eq!(
            roots,
            [
                WatchRoot { dir: base.join("docs"), recursive: true },
                WatchRoot { dir: base.join("src"), recursive: true },
                WatchRoot { dir: base.to_path_buf(), recursive: false },
                WatchRoot { dir: base.join("missing"), recursive: true },
            ]
        );
        // A missing leading folder stays a root (looked for until it comes).
        let globs: Vec<String> = ["lib/**/*.ts", "gone/*"].map(String::from).into();
        assert_eq!(
            watch_roots(base, base, &globs),
            [
                WatchRoot { dir: base.join("lib"), recursive: true },
                WatchRoot { dir: base.join("gone"), recursive: true }
            ]
        );
        assert_eq!(
            ancestors(base, &[WatchRoot { dir: base.join("docs/api"), recursive: true }]),
            [base.to_path_buf(), base.join("docs")]
        );
        assert!(!concerns(&base.join("docs/sub/.git/HEAD"), &roots, None));
        assert!(changes_rules(&base.join("docs/.gitignore")));
        assert!(concerns(&base.join("docs/api/x.md"), &roots, None));
        assert!(concerns(&base.join("README.md"), &roots, None));
        assert!(!concerns(&base.join("node_modules/x.js"), &roots, None));
        assert!(!concerns(&base.join("docs/.git/HEAD"), &roots, None));
        assert!(!concerns(&base.join("docs/.cache/snap"), &roots, Some(&base.join("docs/.cache"))));
    }

    #[test]
    fn an_absolute_entry_inside_base_is_watched_where_it_is() {
        let d = tempfile::tempdir().unwrap();
        let base = d.path().canonicalize().unwrap();
        std::fs::create_dir_all(base.join("docs")).unwrap();
        let lexical = base.join("docs/..");
        let entries: Vec<String> =
            [format!("{}/docs", base.display()), format!("{}/src/*.ts", lexical.display()), "/other".to_string()]
                .into();
        assert_eq!(
            watch_roots(&base, &lexical, &entries),
            [
                WatchRoot { dir: base.join("docs"), recursive: true },
                WatchRoot { dir: base.join("src"), recursive: true },
                WatchRoot { dir: base.join("other"), recursive: true },
            ]
        );
    }
}
