//! The walk of a watched folder, kept: every folder's entries as the last
//! listing found them, watched (`DirWatch`, implemented by the binding over
//! the OS's notifications) before they were listed, so that no change after
//! a listing goes unseen. A grep then walks this tree in memory; the
//! changes reported since (`Changes`) are applied first: a changed folder
//! is listed again (a new sub-folder walked, a gone one dropped), a changed
//! file's size and time are read again. Anything the notifications may
//! have missed (an overflow, a lost watch, the root `.gitignore` changed)
//! drops the tree, and the next grep walks the disk.

use super::walk::{is_text, Entry, Found, Walker};
use rayon::prelude::*;
use rustc_hash::{FxHashMap, FxHashSet};

/// Watches folders, one at a time (not their sub-folders).
pub trait DirWatch: Send {
    /// Starts watching `rel` (relative to the base); `false` when it cannot
    /// (a limit reached): the tree is then not kept.
    fn watch(&mut self, rel: &str) -> bool;
    fn unwatch(&mut self, rel: &str);
}

/// What changed since the last grep, as the watcher reported it.
#[derive(Debug, Default)]
pub struct Changes {
    /// Files whose content or time changed.
    pub files: FxHashSet<String>,
    /// Folders whose entries changed (created, removed, renamed).
    pub folders: FxHashSet<String>,
    /// Notifications may be missing: start over.
    pub overflow: bool,
}

impl Changes {
    pub fn is_empty(&self) -> bool {
        !self.overflow && self.files.is_empty() && self.folders.is_empty()
    }

    pub fn merge(&mut self, other: Changes) {
        self.files.extend(other.files);
        self.folders.extend(other.folders);
        self.overflow |= other.overflow;
    }
}

/// The kept walk of the whole base (with or without hidden names).
pub struct Tree {
    folders: FxHashMap<String, Vec<Entry>>,
    /// Folders that could not be listed (kept empty above).
    unreadable: FxHashSet<String>,
}

impl Tree {
    /// Walks the base, watching each folder before it is listed; `None`
    /// when a folder cannot be watched.
    pub(super) fn build(walker: &Walker, watch: &mut dyn DirWatch) -> Option<Tree> {
        let mut tree = Tree { folders: FxHashMap::default(), unreadable: FxHashSet::default() };
        tree.add(walker, "", watch).then_some(tree)
    }

    /// Stops watching every folder (the tree is dropped: the base is
    /// another folder now).
    pub(super) fn unwatch_all(mut self, watch: &mut dyn DirWatch) {
        self.drop_folder("", watch);
    }

    /// Watches and lists `rel` and every folder below it, a level at a
    /// time: the level's folders watched (each before it is listed), then
    /// listed in parallel.
    fn add(&mut self, walker: &Walker, rel: &str, watch: &mut dyn DirWatch) -> bool {
        let mut level = vec![rel.to_string()];
        while !level.is_empty() {
            if !level.iter().all(|f| watch.watch(f)) {
                return false;
            }
            let listed: Vec<(String, Option<Vec<Entry>>)> = level
                .into_par_iter()
                .map(|f| {
                    let entries = walker.list(&f);
                    (f, entries)
                })
                .collect();
            level = Vec::new();
            for (f, entries) in listed {
                // An unreadable folder is kept empty (each grep counts it).
                let entries = entries.unwrap_or_else(|| {
                    self.unreadable.insert(f.clone());
                    Vec::new()
                });
                level.extend(
                    entries.iter().filter_map(|e| if let Entry::Folder(s) = e { Some(s.clone()) } else { None }),
                );
                self.folders.insert(f, entries);
            }
        }
        true
    }

    /// Forgets `rel` and every folder below it (no recursion: any depth).
    fn drop_folder(&mut self, rel: &str, watch: &mut dyn DirWatch) {
        let mut gone = vec![rel.to_string()];
        while let Some(rel) = gone.pop() {
            self.unreadable.remove(&rel);
            if let Some(entries) = self.folders.remove(&rel) {
                watch.unwatch(&rel);
                gone.extend(entries.into_iter().filter_map(|e| match e {
                    Entry::Folder(sub) => Some(sub),
                    Entry::File(_) => None,
                }));
            }
        }
    }

    /// Applies `changes`; `false` when the tree must be walked anew. Links
    /// to files are looked at again every time (their target's folder may
    /// be watched under another name, or not at all).
    pub(super) fn refresh(&mut self, walker: &Walker, mut changes: Changes, watch: &mut dyn DirWatch) -> bool {
        for entries in self.folders.values() {
            changes.files.extend(entries.iter().filter_map(|e| match e {
                Entry::File(f) if f.link => Some(f.rel.to_string()),
                _ => None,
            }));
        }
        // The root .gitignore decides what the tree holds (edited, or
        // created, removed or renamed: then it names a "folder" change).
        if changes.overflow || changes.files.contains(".gitignore") || changes.folders.contains(".gitignore") {
            return false;
        }
        self.drop_recreated(&changes, watch);
        // A folder named as a file changed: its own metadata (permissions)
        // changed, and its listing may be readable no more, or again.
        let touched: Vec<String> =
            changes.files.iter().filter(|f| self.folders.contains_key(f.as_str())).cloned().collect();
        changes.folders.extend(touched);
        let mut folders: Vec<&String> =
            changes.folders.iter().filter(|f| self.folders.contains_key(f.as_str())).collect();
        folders.sort();
        for rel in &folders {
            if !self.relist(walker, rel, watch) {
                return false;
            }
        }
        changes.files.iter().all(|file| self.restat_file(walker, file, &changes, watch))
    }

    /// Drops the folders that were themselves created or removed (their
    /// parent changed too), to be walked again: a folder removed and made
    /// anew has lost its watch, though its name is the same.
    fn drop_recreated(&mut self, changes: &Changes, watch: &mut dyn DirWatch) {
        let recreated: Vec<String> = changes
            .folders
            .iter()
            .filter(|f| !f.is_empty() && self.folders.contains_key(f.as_str()))
            .filter(|f| changes.folders.contains(f.rsplit_once('/').map_or("", |(p, _)| p)))
            .cloned()
            .collect();
        for f in &recreated {
            self.drop_folder(f, watch);
        }
    }

    /// Brings the entry of a `file` that changed up to date (its folder
    /// listed again when the listing did not have it); `false` when the
    /// tree must be walked anew.
    fn restat_file(&mut self, walker: &Walker, file: &str, changes: &Changes, watch: &mut dyn DirWatch) -> bool {
        let parent = file.rsplit_once('/').map_or("", |(p, _)| p);
        if changes.folders.contains(parent) {
            return true; // listed again with the folders
        }
        let Some(entries) = self.folders.get_mut(parent) else { return true };
        let at = entries.iter().position(|e| matches!(e, Entry::File(f) if *f.rel == *file));
        match (at, walker.restat(file)) {
            (Some(i), Some(stamp)) => {
                let link = matches!(&entries[i], Entry::File(f) if f.link);
                entries[i] = Entry::File(Found { rel: file.into(), link, stamp });
                true
            }
            (Some(i), None) => {
                entries.remove(i);
                true
            }
            // A file the last listing did not have: list its folder.
            (None, Some(_)) => self.relist(walker, parent, watch),
            (None, None) => true,
        }
    }

    /// Lists `rel` again: gone sub-folders dropped, new ones walked.
    fn relist(&mut self, walker: &Walker, rel: &str, watch: &mut dyn DirWatch) -> bool {
        let Some(old) = self.folders.get(rel) else { return true };
        let before: FxHashSet<String> =
            old.iter().filter_map(|e| if let Entry::Folder(f) = e { Some(f.clone()) } else { None }).collect();
        let Some(entries) = walker.list(rel) else {
            // Gone, or no longer readable: its parent's listing tells which.
            self.drop_folder(rel, watch);
            let parent = rel.rsplit_once('/').map_or("", |(p, _)| p);
            return rel.is_empty() || self.relist(walker, parent, watch);
        };
        self.unreadable.remove(rel);
        let now: FxHashSet<String> =
            entries.iter().filter_map(|e| if let Entry::Folder(f) = e { Some(f.clone()) } else { None }).collect();
        self.folders.insert(rel.to_string(), entries);
        for gone in before.difference(&now).cloned().collect::<Vec<_>>() {
            self.drop_folder(&gone, watch);
        }
        // New folders, and those dropped above as recreated.
        let new: Vec<String> = now.into_iter().filter(|f| !self.folders.contains_key(f.as_str())).collect();
        new.iter().all(|f| self.add(walker, f, watch))
    }

    /// The files under `root` in the walk's order (text files only when
    /// `extensions` is given) and the folders there that could not be
    /// listed; `None` when `root` is not a folder of the tree.
    pub(super) fn files(&self, root: &str, extensions: Option<&FxHashSet<String>>) -> Option<(Vec<Found>, usize)> {
        self.folders.get(root)?;
        let mut out = Vec::new();
        self.collect(root, extensions, &mut out);
        let prefix = format!("{root}/");
        let unreadable =
            self.unreadable.iter().filter(|u| root.is_empty() || *u == root || u.starts_with(&prefix)).count();
        Some((out, unreadable))
    }

    /// The files under `rel`, in order (no recursion: any depth).
    fn collect(&self, rel: &str, extensions: Option<&FxHashSet<String>>, out: &mut Vec<Found>) {
        let entries_of = |rel: &str| self.folders.get(rel).map(Vec::as_slice).unwrap_or_default().iter();
        let mut open = vec![entries_of(rel)];
        while let Some(entries) = open.last_mut() {
            match entries.next() {
                None => drop(open.pop()),
                Some(Entry::File(f)) => {
                    let name = f.rel.rsplit('/').next().unwrap_or(&f.rel);
                    if extensions.is_none_or(|x| is_text(name, x)) {
                        out.push(f.clone());
                    }
                }
                Some(Entry::Folder(sub)) => open.push(entries_of(sub)),
            }
        }
    }

    /// Folders in the tree.
    pub fn folder_count(&self) -> usize {
        self.folders.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::grep::walk::{walk, WalkRules, MASTRA_TEXT_EXTENSIONS};
    use std::path::Path;

    #[derive(Default)]
    struct Recorded(FxHashSet<String>);

    impl DirWatch for Recorded {
        fn watch(&mut self, rel: &str) -> bool {
            self.0.insert(rel.to_string());
            true
        }
        fn unwatch(&mut self, rel: &str) {
            self.0.remove(rel);
        }
    }

    fn write(base: &Path, rel: &str, text: &str) {
        std::fs::create_dir_all(base.join(rel).parent().unwrap()).unwrap();
        std::fs::write(base.join(rel), text).unwrap();
    }

    /// The kept tree's files against a fresh walk of the disk.
    fn same_as_disk(tree: &Tree, base: &Path) {
        let exts: FxHashSet<String> = MASTRA_TEXT_EXTENSIONS.iter().map(|s| s.to_string()).collect();
        let rules = WalkRules { include_hidden: false, text_extensions: Some(exts.clone()) };
        let disk: Vec<(String, Option<crate::grep::walk::Stamp>)> =
            walk(base, "", &rules).files.into_iter().map(|f| (f.rel.to_string(), f.stamp)).collect();
        let kept: Vec<(String, Option<crate::grep::walk::Stamp>)> =
            tree.files("", Some(&exts)).unwrap().0.into_iter().map(|f| (f.rel.to_string(), f.stamp)).collect();
        assert_eq!(kept, disk);
    }

    #[test]
    fn changes_applied_give_the_walk_of_the_disk() {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path();
        for f in ["a.ts", "src/b.ts", "src/deep/c.ts", "gone/d.ts", "img.png"] {
            write(base, f, "x");
        }
        let real = std::fs::canonicalize(base).unwrap();
        let rules = WalkRules { include_hidden: false, text_extensions: None };
        let walker = Walker { base, real_base: &real, rules: &rules, ignore: None };
        let mut watch = Recorded::default();
        let mut tree = Tree::build(&walker, &mut watch).unwrap();
        same_as_disk(&tree, base);
        assert_eq!(watch.0.len(), 4, "{:?}", watch.0);

        // A file rewritten (longer), one added, a folder removed, a folder with files added.
        write(base, "src/b.ts", "longer text");
        write(base, "src/new.ts", "y");
        std::fs::remove_dir_all(base.join("gone")).unwrap();
        write(base, "added/sub/e.ts", "z");
        let mut changes = Changes::default();
        changes.files.insert("src/b.ts".into());
        for f in ["src", "", "gone"] {
            changes.folders.insert(f.into());
        }
        assert!(tree.refresh(&walker, changes, &mut watch));
        same_as_disk(&tree, base);
        assert!(watch.0.contains("added/sub") && !watch.0.contains("gone"), "{:?}", watch.0);

        // The root .gitignore changed, or notifications overflowed: walked anew.
        let mut changes = Changes::default();
        changes.files.insert(".gitignore".into());
        assert!(!tree.refresh(&walker, changes, &mut watch));
        assert!(!tree.refresh(&walker, Changes { overflow: true, ..Default::default() }, &mut watch));
    }
}
