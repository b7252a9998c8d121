//! Folders watched one by one, where the host's watch of a folder is a
//! watch of that folder alone (inotify: `TreeWatchFactory::per_folder`).
//! A recursive watch there is one watch per folder below the root,
//! `node_modules`, build output and `.git` included: thousands of watches,
//! the system's limit reached on a large project, and every `npm install`
//! a storm of events about files the index leaves out. Here only the
//! folders the index's walk enters are watched
//! (`ingest::watch::folders_to_watch`), kept in step as folders come and
//! go and as `.gitignore` files change.

use super::host::{TreeWatch, WatchRefusal};
use crate::ingest::gitignore::GitignoreRules;
use crate::ingest::scan::identity;
use crate::ingest::watch::{folders_to_watch, WatchRoot};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// A folder's device and inode (`None` where there are none).
type Identity = Option<(u64, u64)>;

pub(super) struct FolderWatches {
    /// basePath, canonical (as the roots are).
    base: PathBuf,
    /// The persist directory, never walked.
    exclude: Option<PathBuf>,
    respect_gitignore: bool,
    /// The `.gitignore` rules, read again at each `sync` (one changed).
    rules: Option<Arc<GitignoreRules>>,
    /// Each folder watched, with its identity when it was: a folder made
    /// again under the same name has lost its watch and those below it.
    watched: BTreeMap<PathBuf, Identity>,
    /// Entries' folders a root covers (`covered_roots`), walked on their
    /// own where the walk from that root does not enter them.
    covered: Vec<PathBuf>,
}

impl FolderWatches {
    pub fn new(
        base: PathBuf,
        exclude: Option<PathBuf>,
        respect_gitignore: bool,
        covered: Vec<PathBuf>,
    ) -> FolderWatches {
        let covered = covered.into_iter().filter(|c| !through_link(c)).collect();
        let mut folders =
            FolderWatches { base, exclude, respect_gitignore, rules: None, watched: BTreeMap::new(), covered };
        folders.rules = folders.fresh_rules();
        folders
    }

    fn fresh_rules(&self) -> Option<Arc<GitignoreRules>> {
        self.respect_gitignore.then(|| Arc::new(GitignoreRules::new(&self.base)))
    }

    /// Watches `root` and the folders below it that the walk enters. A
    /// refusal of `root` itself is returned (missing: looked for; refused:
    /// the watch degrades); below it, only the system's limit is: a folder
    /// the process may not read is one the scan cannot read either, and
    /// once it is made readable, its change of mode is an event that
    /// brings it to `changed`.
    pub fn watch_tree(&mut self, watch: &mut dyn TreeWatch, root: &Path) -> Result<(), WatchRefusal> {
        watch.watch(root, false)?;
        self.watched.insert(root.to_path_buf(), identity_of(root));
        self.watch_below(watch, root)
    }

    /// After the roots (`watch_tree`): watches the covered entries' folders
    /// the walks from the roots do not enter (`watch_lone`).
    pub fn watch_covered(&mut self, watch: &mut dyn TreeWatch, roots: &[WatchRoot]) -> Result<(), WatchRefusal> {
        let mut refused = None;
        for dir in self.lone(roots) {
            self.watch_lone(watch, &dir, &mut refused);
        }
        refused.map_or(Ok(()), Err)
    }

    /// The covered entries' folders walked on their own (`walk_roots`).
    fn lone(&self, roots: &[WatchRoot]) -> Vec<PathBuf> {
        self.walk_roots(roots).into_iter().filter(|d| self.covered.contains(d)).collect()
    }

    /// Watches a covered entry's folder walked on its own, the folders
    /// below it the walk enters, and those above it up to basePath, each
    /// alone (`above_lone`).
    fn watch_lone(&mut self, watch: &mut dyn TreeWatch, dir: &Path, refused: &mut Option<WatchRefusal>) {
        for above in above_lone(&self.base, dir) {
            self.watch_one(watch, &above, identity_of(&above), refused);
        }
        if dir.is_dir() && refused.is_none() {
            let (exclude, rules) = (self.exclude.clone(), self.rules.clone());
            folders_to_watch(dir, exclude, rules, &mut |d, id| self.watch_one(watch, &d, id, refused));
        }
    }

    /// Where folders are walked from: the recursive roots not reached
    /// through a link, and the covered entries' folders the walk from the
    /// roots covering them does not enter (with the rules as they are).
    fn walk_roots(&self, roots: &[WatchRoot]) -> Vec<PathBuf> {
        let outer: Vec<&Path> =
            roots.iter().filter(|r| r.recursive && !through_link(&r.dir)).map(|r| r.dir.as_path()).collect();
        let lone = self.covered.iter().filter(|c| !outer.iter().any(|r| c.starts_with(r) && self.enters(c, r)));
        outer.iter().map(|r| r.to_path_buf()).chain(lone.cloned()).collect()
    }

    /// A path that changed under a root watched below: a folder not
    /// watched as it is now (made, moved in, made again, made readable) is
    /// watched with the folders below it, before the burst walks it, so
    /// that nothing written into it is missed; a path that is no longer a
    /// folder, or was `removed` (the system dropped the watches at and
    /// below it, even if a folder of that name, maybe of the same inode
    /// number, is there again) takes the folders at and below it out of
    /// the set. Only the system's limit is returned.
    pub fn changed(
        &mut self,
        watch: &mut dyn TreeWatch,
        roots: &[WatchRoot],
        path: &Path,
        removed: bool,
    ) -> Result<(), WatchRefusal> {
        if removed {
            // A root, or a folder above one, too: renamed back later, it
            // has the same inode, and its folders must be walked again.
            self.forget(watch, path);
        }
        // Below a root (a root itself is watched by `watch_root`), at or
        // below a covered entry's folder, or above one walked on its own.
        let covered = self.covered.clone();
        let under = |r: &Path| path.starts_with(r) && (path != r || covered.iter().any(|c| c == r));
        let above: Vec<PathBuf> = self.lone(roots).into_iter().filter(|c| c.starts_with(path) && c != path).collect();
        if !roots.iter().any(|r| r.recursive && under(&r.dir)) && !covered.iter().any(|c| under(c)) && above.is_empty()
        {
            return Ok(());
        }
        let meta = std::fs::symlink_metadata(path).ok().filter(|m| m.is_dir());
        let id = meta.as_ref().and_then(identity);
        if meta.is_some() && self.watched.get(path) == Some(&id) {
            return Ok(());
        }
        self.forget(watch, path);
        if meta.is_none() {
            return Ok(());
        }
        // Read again: a folder moved in brings its own `.gitignore` files,
        // which no event named (the rules read for the one moved out stay).
        self.rules = self.fresh_rules();
        if self.walk_roots(roots).iter().any(|r| under(r) && self.enters(path, r)) {
            self.watch_below(watch, path)?;
        }
        // A folder above a covered entry's folder made again (`rm -rf
        // third_party` and a download): the way down to it is watched,
        // so that it made later is an event, and it if it is there.
        let mut refused = None;
        for dir in self.lone(roots).into_iter().filter(|c| above.contains(c)) {
            self.watch_lone(watch, &dir, &mut refused);
        }
        refused.map_or(Ok(()), Err)
    }

    /// Reads the `.gitignore` rules again and walks every root watched
    /// below: folders no longer entered are unwatched, folders entered and
    /// not watched are watched. After lost events (a folder made then has
    /// no watch) and a change of `.gitignore` (a folder it no longer
    /// leaves out has none either). Only the system's limit is returned.
    pub fn sync(&mut self, watch: &mut dyn TreeWatch, roots: &[WatchRoot]) -> Result<(), WatchRefusal> {
        self.rules = self.fresh_rules();
        let mut entered = BTreeMap::new();
        let mut unreadable = Vec::new();
        let mut refused = None;
        for root in self.walk_roots(roots) {
            if self.covered.contains(&root) {
                for above in above_lone(&self.base, &root) {
                    let id = identity_of(&above);
                    self.watch_one(watch, &above, id, &mut refused);
                    entered.insert(above, id);
                }
            }
            let (exclude, rules) = (self.exclude.clone(), self.rules.clone());
            let mut visit = |dir: PathBuf, id: Identity| {
                self.watch_one(watch, &dir, id, &mut refused);
                entered.insert(dir, id);
            };
            unreadable.extend(folders_to_watch(&root, exclude, rules, &mut visit));
        }
        // Below a folder not read now (its mode changed for a while, or
        // the process is out of file handles), the watches stay: what is
        // there is not known, and its mode changed back is an event on the
        // folder alone, whose identity is unchanged.
        let left: Vec<PathBuf> = self
            .watched
            .keys()
            .filter(|d| !entered.contains_key(*d) && !unreadable.iter().any(|u| d.starts_with(u)))
            .cloned()
            .collect();
        for dir in left {
            watch.unwatch(&dir);
            self.watched.remove(&dir);
        }
        refused.map_or(Ok(()), Err)
    }

    /// Watches the folders the walk enters at and below `dir`, each as
    /// the walk meets it.
    fn watch_below(&mut self, watch: &mut dyn TreeWatch, dir: &Path) -> Result<(), WatchRefusal> {
        let mut refused = None;
        let (exclude, rules) = (self.exclude.clone(), self.rules.clone());
        folders_to_watch(dir, exclude, rules, &mut |dir, id| self.watch_one(watch, &dir, id, &mut refused));
        refused.map_or(Ok(()), Err)
    }

    /// Watches `dir` unless it is watched as it is, or the system's limit
    /// was met (`refused`, after which nothing more is tried).
    fn watch_one(&mut self, watch: &mut dyn TreeWatch, dir: &Path, id: Identity, refused: &mut Option<WatchRefusal>) {
        if refused.is_some() || self.watched.get(dir) == Some(&id) {
            return;
        }
        match watch.watch(dir, false) {
            Ok(()) => drop(self.watched.insert(dir.to_path_buf(), id)),
            Err(e) if e.limit => *refused = Some(e),
            // Gone meanwhile (its removal is an event), or not readable.
            Err(_) => {}
        }
    }

    /// Whether the walk from `root` enters the folder `dir`: neither it
    /// nor a folder on the way down to it from `root` is left out (above
    /// `root`, as the walk from it: a root reached through a link is
    /// walked even where `.gitignore` leaves out where it leads).
    fn enters(&self, dir: &Path, root: &Path) -> bool {
        dir.ancestors().take_while(|at| *at != root).all(|at| {
            at.file_name().is_some_and(|n| n != ".git")
                && self.exclude.as_deref() != Some(at)
                && self.rules.as_ref().is_none_or(|g| !g.ignored(at, true))
        })
    }

    /// Unwatches `dir` and every folder below it, and takes them out of
    /// the set (where the system dropped their watches already, the
    /// unwatch finds nothing). Also for a watched root removed or renamed
    /// away: basePath's folders renamed as a deploy swaps them would send
    /// their events under the old names.
    pub fn forget(&mut self, watch: &mut dyn TreeWatch, dir: &Path) {
        let below: Vec<PathBuf> = self
            .watched
            .range(dir.to_path_buf()..)
            .map(|(d, _)| d)
            .take_while(|d| d.starts_with(dir))
            .cloned()
            .collect();
        for d in below {
            watch.unwatch(&d);
            self.watched.remove(&d);
        }
    }

    /// basePath, canonical.
    pub fn base(&self) -> &Path {
        &self.base
    }

    /// Whether `dir` is watched.
    pub fn holds(&self, dir: &Path) -> bool {
        self.watched.contains_key(dir)
    }

    /// How many folders are watched (for tests).
    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.watched.len()
    }
}

/// Whether `dir` is reached through a symbolic link: such a root is not
/// watched one by one (`Watcher::watch_root`); the root where it leads is.
pub(super) fn through_link(dir: &Path) -> bool {
    dir.canonicalize().is_ok_and(|real| real != dir)
}

/// The folders between basePath and a covered entry's folder walked on
/// its own, that are there: each watched alone, so that the folder, or one
/// on the way down to it, made again (`.gitignore` leaves them out, and no
/// walk enters them) is an event.
fn above_lone(base: &Path, dir: &Path) -> Vec<PathBuf> {
    let way = dir.ancestors().skip(1).take_while(|a| *a != base && a.starts_with(base));
    way.filter(|a| a.is_dir()).map(Path::to_path_buf).collect()
}

fn identity_of(dir: &Path) -> Identity {
    std::fs::symlink_metadata(dir).ok().as_ref().and_then(identity)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;
    use std::fs;

    /// The folders watched, as the host would hold them.
    #[derive(Default)]
    struct Recorded {
        held: BTreeSet<PathBuf>,
        /// Refuse every watch past this many (the system's limit).
        limit: Option<usize>,
    }

    impl TreeWatch for Recorded {
        fn watch(&mut self, dir: &Path, recursive: bool) -> Result<(), WatchRefusal> {
            assert!(!recursive, "each folder alone");
            if self.limit.is_some_and(|l| self.held.len() >= l) {
                return Err(WatchRefusal { message: "limit".into(), limit: true });
            }
            if !dir.is_dir() {
                return Err(WatchRefusal { message: "not found".into(), limit: false });
            }
            self.held.insert(dir.to_path_buf());
            Ok(())
        }

        fn unwatch(&mut self, dir: &Path) {
            self.held.remove(dir);
        }
    }

    fn held(w: &Recorded, base: &Path) -> Vec<String> {
        w.held.iter().map(|d| d.strip_prefix(base).unwrap().to_string_lossy().into_owned()).collect()
    }

    fn project() -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path().canonicalize().unwrap();
        for d in ["src/a", "node_modules/x/y", ".git/objects/ab", "gen", ".store/parts"] {
            fs::create_dir_all(base.join(d)).unwrap();
        }
        fs::write(base.join(".gitignore"), "node_modules/\ngen/\n").unwrap();
        (dir, base)
    }

    /// The project at `base` watched from it as one root, the persist
    /// directory `.store` left out.
    fn watching(base: &Path) -> (Recorded, FolderWatches, [WatchRoot; 1]) {
        let mut w = Recorded::default();
        let mut folders = FolderWatches::new(base.to_path_buf(), Some(base.join(".store")), true, Vec::new());
        folders.watch_tree(&mut w, base).unwrap();
        (w, folders, [WatchRoot { dir: base.to_path_buf(), recursive: true }])
    }

    #[test]
    fn only_the_folders_the_walk_enters() {
        let (_keep, base) = project();
        let (w, folders, _) = watching(&base);
        assert_eq!(held(&w, &base), ["", "src", "src/a"]);
        assert_eq!(folders.len(), 3);

        let mut all = Recorded::default();
        let mut unruled = FolderWatches::new(base.clone(), None, false, Vec::new());
        unruled.watch_tree(&mut all, &base).unwrap();
        assert_eq!(
            held(&all, &base),
            ["", ".store", ".store/parts", "gen", "node_modules", "node_modules/x", "node_modules/x/y", "src", "src/a"]
        );
    }

    #[test]
    fn folders_that_come_go_and_come_back() {
        let (_keep, base) = project();
        let (mut w, mut folders, roots) = watching(&base);

        fs::create_dir_all(base.join("src/b/c")).unwrap();
        folders.changed(&mut w, &roots, &base.join("src/b"), false).unwrap();
        assert_eq!(held(&w, &base), ["", "src", "src/a", "src/b", "src/b/c"]);

        // Ignored, a file, or outside every root: nothing is watched.
        fs::create_dir_all(base.join("gen/more")).unwrap();
        folders.changed(&mut w, &roots, &base.join("gen/more"), false).unwrap();
        fs::write(base.join("src/f.ts"), "x").unwrap();
        folders.changed(&mut w, &roots, &base.join("src/f.ts"), false).unwrap();
        assert_eq!(folders.len(), 5);

        // Removed (the host drops the watches with it) and made again.
        fs::remove_dir_all(base.join("src/b")).unwrap();
        w.held.retain(|d| !d.starts_with(base.join("src/b")));
        folders.changed(&mut w, &roots, &base.join("src/b"), true).unwrap();
        assert_eq!(folders.len(), 3);
        fs::create_dir_all(base.join("src/b/d")).unwrap();
        folders.changed(&mut w, &roots, &base.join("src/b"), false).unwrap();
        assert_eq!(held(&w, &base), ["", "src", "src/a", "src/b", "src/b/d"]);

        // Made again before its removal's event is read, maybe with the
        // same inode number: the removal says its watches are gone.
        fs::remove_dir_all(base.join("src/b")).unwrap();
        w.held.retain(|d| !d.starts_with(base.join("src/b")));
        fs::create_dir_all(base.join("src/b/e")).unwrap();
        folders.changed(&mut w, &roots, &base.join("src/b"), true).unwrap();
        folders.changed(&mut w, &roots, &base.join("src/b"), false).unwrap();
        assert_eq!(held(&w, &base), ["", "src", "src/a", "src/b", "src/b/e"]);
    }

    #[test]
    fn sync_follows_the_rules_and_the_tree() {
        let (_keep, base) = project();
        let (mut w, mut folders, roots) = watching(&base);
        fs::write(base.join(".gitignore"), "node_modules/\nsrc/a/\n").unwrap();
        fs::create_dir_all(base.join("src/unseen")).unwrap(); // its event was lost
        folders.sync(&mut w, &roots).unwrap();
        assert_eq!(held(&w, &base), ["", "gen", "src", "src/unseen"]);
    }

    #[test]
    fn the_systems_limit_is_returned() {
        let (_keep, base) = project();
        let mut w = Recorded { limit: Some(2), ..Default::default() };
        let mut folders = FolderWatches::new(base.clone(), None, true, Vec::new());
        let refused = folders.watch_tree(&mut w, &base).unwrap_err();
        assert!(refused.limit);
        assert_eq!(folders.len(), 2);
    }

    #[test]
    fn a_root_renamed_away_and_back_is_walked_again() {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path().canonicalize().unwrap();
        fs::create_dir_all(base.join("docs/sub/deep")).unwrap();
        let root = base.join("docs");
        let roots = [WatchRoot { dir: root.clone(), recursive: true }];
        let (mut w, mut folders) = (Recorded::default(), FolderWatches::new(base.clone(), None, true, Vec::new()));
        folders.watch_tree(&mut w, &root).unwrap();
        assert_eq!(folders.len(), 3);
        fs::rename(&root, base.join("away")).unwrap();
        folders.changed(&mut w, &roots, &root, true).unwrap();
        // Unwatched (basePath's folders renamed as a deploy swaps them
        // would go on sending events under the old names).
        assert!(w.held.is_empty(), "{:?}", w.held);
        fs::rename(base.join("away"), &root).unwrap();
        folders.watch_tree(&mut w, &root).unwrap(); // the root is back (same inodes)
        assert_eq!(w.held.len(), 3, "{:?}", w.held);
    }

    #[test]
    fn a_folder_moved_in_is_walked_with_its_own_rules() {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path().canonicalize().unwrap();
        fs::create_dir_all(base.join("src/pkg/gen")).unwrap();
        fs::write(base.join("src/pkg/.gitignore"), "gen/\n").unwrap();
        fs::create_dir_all(base.join("other/gen")).unwrap();
        let roots = [WatchRoot { dir: base.clone(), recursive: true }];
        let (mut w, mut folders) = (Recorded::default(), FolderWatches::new(base.clone(), None, true, Vec::new()));
        folders.watch_tree(&mut w, &base).unwrap();
        assert!(!w.held.contains(&base.join("src/pkg/gen")));
        fs::rename(base.join("src/pkg"), base.join("gone")).unwrap();
        folders.changed(&mut w, &roots, &base.join("src/pkg"), true).unwrap();
        fs::rename(base.join("other"), base.join("src/pkg")).unwrap();
        folders.changed(&mut w, &roots, &base.join("src/pkg"), false).unwrap();
        assert!(w.held.contains(&base.join("src/pkg/gen")), "{:?}", w.held);
    }

    #[cfg(unix)]
    #[test]
    fn an_ignored_folder_an_entry_reaches_is_walked_from_there() {
        // `['.', 'gen-link']`, `gen-link` a link to `gen/`, which the walk
        // from basePath leaves out: the scan walks it from the entry.
        let (_keep, base) = project();
        fs::create_dir_all(base.join("gen/x")).unwrap();
        std::os::unix::fs::symlink("gen", base.join("gen-link")).unwrap();
        let roots = [WatchRoot { dir: base.clone(), recursive: true }];
        let covered = vec![base.join("gen-link"), base.join("gen"), base.join("src")];
        let mut w = Recorded::default();
        let mut folders = FolderWatches::new(base.clone(), Some(base.join(".store")), true, covered);
        folders.watch_tree(&mut w, &base).unwrap();
        folders.watch_covered(&mut w, &roots).unwrap();
        assert_eq!(held(&w, &base), ["", "gen", "gen/x", "src", "src/a"]);

        // Made below it, and it made again, are followed; a reconcile keeps them.
        fs::create_dir_all(base.join("gen/x/y")).unwrap();
        folders.changed(&mut w, &roots, &base.join("gen/x/y"), false).unwrap();
        assert_eq!(held(&w, &base), ["", "gen", "gen/x", "gen/x/y", "src", "src/a"]);
        fs::remove_dir_all(base.join("gen")).unwrap();
        w.held.retain(|d| !d.starts_with(base.join("gen")));
        folders.changed(&mut w, &roots, &base.join("gen"), true).unwrap();
        fs::create_dir_all(base.join("gen/z")).unwrap();
        folders.changed(&mut w, &roots, &base.join("gen"), false).unwrap();
        assert_eq!(held(&w, &base), ["", "gen", "gen/z", "src", "src/a"]);
        folders.sync(&mut w, &roots).unwrap();
        assert_eq!(held(&w, &base), ["", "gen", "gen/z", "src", "src/a"]);

        // No longer left out: walked from basePath (once).
        fs::write(base.join(".gitignore"), "node_modules/\n").unwrap();
        folders.sync(&mut w, &roots).unwrap();
        assert_eq!(held(&w, &base), ["", "gen", "gen/z", "src", "src/a"]);
        assert_eq!(folders.walk_roots(&roots), std::slice::from_ref(&base));
    }

    #[test]
    fn the_way_down_to_a_covered_folder_is_watched_and_followed_when_made_again() {
        // `['.', 'vendor-link']`, the link to `third/vendor`, `third/` left
        // out by `.gitignore`: a download that makes `third` again, then
        // `third/vendor` in it.
        let (_keep, base) = project();
        fs::create_dir_all(base.join("third/vendor/lib")).unwrap();
        fs::write(base.join(".gitignore"), "node_modules/\ngen/\nthird/\n").unwrap();
        let roots = [WatchRoot { dir: base.clone(), recursive: true }];
        let mut w = Recorded::default();
        let mut folders = FolderWatches::new(base.clone(), None, true, vec![base.join("third/vendor")]);
        folders.watch_tree(&mut w, &base).unwrap();
        folders.watch_covered(&mut w, &roots).unwrap();
        let with_vendor = ["", ".store", ".store/parts", "src", "src/a", "third", "third/vendor", "third/vendor/lib"];
        assert_eq!(held(&w, &base), with_vendor);

        fs::remove_dir_all(base.join("third")).unwrap();
        w.held.retain(|d| !d.starts_with(base.join("third")));
        folders.changed(&mut w, &roots, &base.join("third"), true).unwrap();
        fs::create_dir(base.join("third")).unwrap();
        folders.changed(&mut w, &roots, &base.join("third"), false).unwrap();
        assert_eq!(held(&w, &base), ["", ".store", ".store/parts", "src", "src/a", "third"]);
        fs::create_dir_all(base.join("third/vendor/lib")).unwrap();
        folders.changed(&mut w, &roots, &base.join("third/vendor"), false).unwrap();
        assert_eq!(held(&w, &base), with_vendor);
        folders.sync(&mut w, &roots).unwrap();
        assert_eq!(held(&w, &base), with_vendor);
    }
}
