//! The `.gitignore` files of a walk, read by us rather than by the `ignore`
//! crate's walker (which opens and reads each one with plain blocking
//! reads): each read as `small_file` reads it (never through a link, as git
//! does not follow one; a FIFO or device passed over; at most `MAX_BYTES`),
//! then matched with the crate's own gitignore matcher, the folder's rules
//! first and its parents' after, as git applies them.

use super::small_file::{read_small, SmallFile};
use ignore::gitignore::{Gitignore, GitignoreBuilder};
use ignore::Match;
use rustc_hash::FxHashMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// A `.gitignore` larger than this is not applied (and reported).
pub const MAX_BYTES: u64 = 16 << 20;

/// The lines of a `.gitignore` as git reads them: a byte-order mark before
/// the first is not part of it (one: a second is), and a line ends at `\n`, `\r\n`, or a `\r`
/// that ends the file (`str::lines` keeps that `\r`, and the rule it ended
/// then matched nothing).
pub fn rule_lines(text: &str) -> impl Iterator<Item = &str> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    text.strip_suffix('\r').unwrap_or(text).lines()
}

/// The rules of one folder and of every folder above it up to the root of
/// the walk, the root's first.
type Chain = Arc<Vec<Arc<Gitignore>>>;

/// The `.gitignore` rules below `root`, read once per folder as the walk
/// enters it.
pub struct GitignoreRules {
    root: PathBuf,
    /// By the folder's path as bytes (a `PathBuf` hashes per component).
    chains: Mutex<FxHashMap<OsString, Chain>>,
    /// `.gitignore` files not applied, with why (too large).
    not_applied: Mutex<Vec<(PathBuf, u64)>>,
}

impl GitignoreRules {
    pub fn new(root: &Path) -> GitignoreRules {
        GitignoreRules { root: root.to_path_buf(), chains: Default::default(), not_applied: Default::default() }
    }

    /// Whether `path` (below the root; a folder when `is_dir`) is ignored.
    pub fn ignored(&self, path: &Path, is_dir: bool) -> bool {
        let Some(parent) = path.parent().filter(|_| path != self.root) else { return false };
        for rules in self.chain(parent).iter().rev() {
            match rules.matched(path, is_dir) {
                Match::Ignore(_) => return true,
                Match::Whitelist(_) => return false,
                Match::None => {}
            }
        }
        false
    }

    /// The `.gitignore` files too large to apply, with their sizes.
    pub fn not_applied(&self) -> Vec<(PathBuf, u64)> {
        std::mem::take(&mut *self.not_applied.lock().unwrap_or_else(|e| e.into_inner()))
    }

    /// The chain of `dir`, built from the nearest folder above it whose
    /// chain is known (iteratively: a tree may be deeper than a stack).
    fn chain(&self, dir: &Path) -> Chain {
        let mut chains = self.chains.lock().unwrap_or_else(|e| e.into_inner());
        let mut missing = Vec::new();
        let mut at = dir;
        let mut chain = loop {
            if let Some(c) = chains.get(at.as_os_str()) {
                break c.clone();
            }
            missing.push(at);
            match at.parent() {
                Some(up) if at != self.root && at.starts_with(&self.root) => at = up,
                _ => break Chain::default(),
            }
        };
        for folder in missing.into_iter().rev() {
            if let Some(own) = self.read(folder) {
                let mut longer = chain.as_ref().clone();
                longer.push(Arc::new(own));
                chain = Arc::new(longer);
            }
            chains.insert(folder.as_os_str().to_owned(), chain.clone());
        }
        chain
    }

    /// `dir/.gitignore`'s rules, if it holds any.
    fn read(&self, dir: &Path) -> Option<Gitignore> {
        let path = dir.join(".gitignore");
        let text = match read_small(&path, MAX_BYTES) {
            SmallFile::Text(text) => text,
            SmallFile::Absent => return None,
            SmallFile::TooLarge(size) => {
                self.not_applied.lock().unwrap_or_else(|e| e.into_inner()).push((path, size));
                return None;
            }
        };
        let mut builder = GitignoreBuilder::new(dir);
        for line in rule_lines(&text) {
            // A line git would not understand is passed over, as git does.
            let _ = builder.add_line(Some(path.clone()), &crate::text::glob::literal_braces(line));
        }
        builder.build().ok().filter(|g| !g.is_empty())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn folders_rules_then_their_parents() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join("a/b")).unwrap();
        std::fs::write(root.join(".gitignore"), "\u{feff}*.log\nbuild/\n").unwrap();
        std::fs::write(root.join("a/.gitignore"), "!keep.log\nsecret.md\n").unwrap();
        let rules = GitignoreRules::new(root);
        assert!(rules.ignored(&root.join("x.log"), false));
        assert!(rules.ignored(&root.join("a/b/x.log"), false));
        assert!(!rules.ignored(&root.join("a/b/keep.log"), false), "the nearer folder's rule wins");
        assert!(rules.ignored(&root.join("a/b/secret.md"), false));
        assert!(!rules.ignored(&root.join("secret.md"), false), "a folder's rules stay below it");
        assert!(rules.ignored(&root.join("a/build"), true));
        assert!(!rules.ignored(&root.join("a/build"), false), "build/ names folders only");
        assert!(!rules.ignored(root, true));
    }

    #[test]
    fn lines_as_git_reads_them() {
        fn lines(t: &str) -> Vec<&str> {
            rule_lines(t).collect()
        }
        assert_eq!(lines("\u{feff}src/\n*.log\n"), ["src/", "*.log"]);
        assert_eq!(lines("*.log\nsrc/\r"), ["*.log", "src/"]);
        assert_eq!(lines("a\r\nb\r\n"), ["a", "b"]);
        assert_eq!(lines("\u{feff}# note\r"), ["# note"]);
        assert_eq!(lines("\u{feff}\u{feff}src/\n"), ["\u{feff}src/"], "git strips one mark, as Mastra's ignore does");
        assert_eq!(lines(""), Vec::<&str>::new());
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(".gitignore"), "*.log\nsrc/\r").unwrap();
        let rules = GitignoreRules::new(dir.path());
        assert!(rules.ignored(&dir.path().join("src"), true), "the last rule ends at its \\r");
    }

    #[test]
    #[cfg(unix)]
    fn links_fifos_and_devices_are_not_read() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("root");
        std::fs::create_dir_all(root.join("a")).unwrap();
        std::fs::create_dir_all(root.join("z")).unwrap();
        std::fs::write(dir.path().join("outside"), "*.md\n").unwrap();
        std::os::unix::fs::symlink(dir.path().join("outside"), root.join(".gitignore")).unwrap();
        std::os::unix::fs::symlink("/dev/zero", root.join("z/.gitignore")).unwrap();
        let fifo = std::ffi::CString::new(root.join("a/.gitignore").to_str().unwrap()).unwrap();
        // SAFETY: a valid NUL-terminated path; mkfifo only creates a file.
        assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o600) }, 0);
        let rules = GitignoreRules::new(&root);
        assert!(!rules.ignored(&root.join("x.md"), false), "rules behind a link are not applied");
        assert!(!rules.ignored(&root.join("a/x.md"), false));
        assert!(!rules.ignored(&root.join("z/x.md"), false));
    }
}
