//! Document ids read as paths from basePath down. A file found through an
//! absolute `autoIndexPaths` entry (`/work/repo/src`) keeps that spelling
//! in its id, as Mastra's ids do; what its path says of the file (its
//! kind, its path field, its git history, its `.gitattributes` rules) is
//! read from basePath down, so that folders above basePath (`/tmp/tests/`)
//! say nothing about it.

use std::path::Path;
use std::sync::Arc;

/// basePath in each of its spellings (as given, and canonical where that
/// differs), as document ids starting with it spell it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct IdBase {
    spellings: Arc<[String]>,
}

impl IdBase {
    pub fn of(spellings: &[&Path]) -> IdBase {
        let mut kept: Vec<String> = Vec::new();
        for s in spellings.iter().filter_map(|p| p.to_str()) {
            if !kept.iter().any(|k| k == s) {
                kept.push(s.to_string());
            }
        }
        IdBase { spellings: kept.into() }
    }

    /// `id` from basePath down, without a leading `/` (`src/a.rs` for
    /// `/work/repo/src/a.rs` with basePath `/work/repo`); an id not spelled
    /// from basePath as it is, less a leading `/` (Mastra's `/src/a.rs`
    /// means basePath's `src/a.rs` too).
    pub fn relative<'a>(&self, id: &'a str) -> &'a str {
        strip_base(id, self.spellings.iter().map(String::as_str)).trim_start_matches('/')
    }
}

/// An entry's path from basePath: an absolute path inside basePath (in any
/// of its spellings, `bases`) is used as it is; any other leading `/` is
/// relative to basePath, as Mastra's paths are. The scan and the watcher
/// both read entries so.
pub fn within_base<'a>(form: &'a str, bases: &[&Path]) -> &'a str {
    strip_base(form, bases.iter().filter_map(|b| b.to_str()))
}

/// `form` less the first of `bases` it starts with as a whole folder
/// (keeping the `/` after it); `form` itself when none.
fn strip_base<'a, 'b>(form: &'a str, mut bases: impl Iterator<Item = &'b str>) -> &'a str {
    if !form.starts_with('/') {
        return form;
    }
    bases
        .find_map(|b| form.strip_prefix(b).filter(|r| !b.is_empty() && (r.is_empty() || r.starts_with('/'))))
        .unwrap_or(form)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_from_base_down() {
        let base = IdBase::of(&[Path::new("/tmp/tests/proj"), Path::new("/real/proj"), Path::new("/tmp/tests/proj")]);
        assert_eq!(base.relative("/tmp/tests/proj/src/a.rs"), "src/a.rs");
        assert_eq!(base.relative("/real/proj/src/a.rs"), "src/a.rs", "the canonical spelling");
        assert_eq!(base.relative("/tmp/tests/project/a.rs"), "tmp/tests/project/a.rs", "a sibling is no part");
        assert_eq!(base.relative("src/a.rs"), "src/a.rs");
        assert_eq!(base.relative("/src/a.rs"), "src/a.rs", "Mastra's leading slash");
        assert_eq!(IdBase::default().relative("/tmp/tests/proj/a.rs"), "tmp/tests/proj/a.rs");
        assert_eq!(within_base("/tmp/tests/proj/src", &[Path::new("/tmp/tests/proj")]), "/src");
        assert_eq!(within_base("/tmp/tests/proj", &[Path::new("/tmp/tests/proj")]), "");
        assert_eq!(within_base("/etc/x", &[Path::new("/")]), "/etc/x", "as before: the root's own slash is kept");
    }
}
