//! What the watcher (`watch: true`) watches: for each `autoIndexPaths`
//! entry, the deepest directory it is sure to stay within (a glob's
//! leading literal directories; a file's own directory), so that changes
//! elsewhere in the workspace (`node_modules`, build output) wake nothing.

use super::scan::is_glob;
use std::path::{Component, Path, PathBuf};

/// A directory to watch, recursively or not.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WatchRoot {
    pub dir: PathBuf,
    pub recursive: bool,
}

/// The directories to watch for `entries` inside `base` (entries that
/// climb out of `base` are left out: the scan refuses them too).
pub fn watch_roots(base: &Path, entries: &[String]) -> Vec<WatchRoot> {
    let mut roots: Vec<WatchRoot> = Vec::new();
    for entry in entries {
        let mut dir = base.to_path_buf();
        let mut literal = true;
        let mut escaped = false;
        for c in Path::new(entry.trim_start_matches('/')).components() {
            match c {
                Component::Normal(part) if literal && !is_glob(&part.to_string_lossy()) => dir.push(part),
                Component::Normal(_) => literal = false,
                Component::ParentDir => escaped = true,
                _ => {}
            }
        }
        if escaped {
            continue;
        }
        let root = if dir.is_file() || (!literal && !dir.is_dir()) {
            WatchRoot { dir: dir.parent().unwrap_or(base).to_path_buf(), recursive: !literal }
        } else {
            WatchRoot { dir, recursive: true }
        };
        if !roots.iter().any(|r| r.recursive && root.dir.starts_with(&r.dir)) {
            roots.retain(|r| !(root.recursive && r.dir.starts_with(&root.dir)));
            roots.push(root);
        }
    }
    roots
}

/// Whether a changed path concerns the index: under a root (directly
/// under it for a root watched alone), not inside `.git`, nor inside
/// `skip` (the persist directory, whose saves would wake the watcher).
pub fn concerns(path: &Path, roots: &[WatchRoot], skip: Option<&Path>) -> bool {
    if skip.is_some_and(|s| path.starts_with(s)) || path.components().any(|c| c.as_os_str() == ".git") {
        return false;
    }
    roots.iter().any(|r| if r.recursive { path.starts_with(&r.dir) } else { path.parent() == Some(r.dir.as_path()) })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roots_are_the_literal_directories_of_entries() {
        let d = tempfile::tempdir().unwrap();
        let base = d.path();
        std::fs::create_dir_all(base.join("docs/api")).unwrap();
        std::fs::create_dir_all(base.join("src")).unwrap();
        std::fs::write(base.join("README.md"), "x").unwrap();
        let entries: Vec<String> =
            ["docs/api", "docs", "/src/**/*.ts", "README.md", "../outside", "missing"].map(String::from).into();
        let roots = watch_roots(base, &entries);
        assert_eq!(
            roots,
            [
                WatchRoot { dir: base.join("docs"), recursive: true },
                WatchRoot { dir: base.join("src"), recursive: true },
                WatchRoot { dir: base.to_path_buf(), recursive: false },
                WatchRoot { dir: base.join("missing"), recursive: true },
            ]
        );
        assert!(concerns(&base.join("docs/api/x.md"), &roots, None));
        assert!(concerns(&base.join("README.md"), &roots, None));
        assert!(!concerns(&base.join("node_modules/x.js"), &roots, None));
        assert!(!concerns(&base.join("docs/.git/HEAD"), &roots, None));
        assert!(!concerns(&base.join("docs/.cache/snap"), &roots, Some(&base.join("docs/.cache"))));
    }
}
