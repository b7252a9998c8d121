//! Document ids read as paths from basePath down. A file found through an
//! absolute `autoIndexPaths` entry (`/work/repo/src`) keeps that spelling
//! in its id, as Mastra's ids do; what its path says of the file (its
//! kind, its path field, its git history, its `.gitattributes` rules) is
//! read from basePath down, so that folders above basePath (`/tmp/tests/`)
//! say nothing about it.

use std::borrow::Cow;
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

    /// `id` from basePath down, without a leading `/`, its `.` and `..`
    /// applied as the scan applies them (`src/a.rs` for
    /// `/work/repo/src/a.rs` or `/work/repo/x/../src/a.rs` with basePath
    /// `/work/repo`); an id not spelled from basePath as it is, less a
    /// leading `/` (Mastra's `/src/a.rs` means basePath's `src/a.rs` too).
    pub fn relative<'a>(&self, id: &'a str) -> Cow<'a, str> {
        match lexical(id) {
            Cow::Borrowed(id) => Cow::Borrowed(self.strip(id)),
            Cow::Owned(id) => Cow::Owned(self.strip(&id).to_string()),
        }
    }

    /// Whether `path` is spelled from basePath (an absolute path inside it).
    pub fn spells_base(&self, path: &str) -> bool {
        let path = lexical(path);
        strip_base(&path, self.spellings.iter().map(String::as_str)).len() != path.len()
    }

    fn strip<'b>(&self, id: &'b str) -> &'b str {
        strip_base(id, self.spellings.iter().map(String::as_str)).trim_start_matches('/')
    }
}

/// `path` as the scan reads a path from basePath when basePath's own
/// spelling is not known: its `.` and `..` applied, a leading `/` dropped.
pub fn applied(path: &str) -> Cow<'_, str> {
    IdBase::default().relative(path)
}

/// Whether `path`, read from basePath (a leading `/` too), climbs out of
/// it by `..` (`/../x`, `a/../../x`).
pub fn climbs_out(path: &str) -> bool {
    let read = lexical(path.trim_start_matches('/'));
    read == ".." || read.starts_with("../")
}

/// `path` with its `.` and empty segments dropped and each `..` taking the
/// segment before it away (kept where there is none); a leading `/` kept.
/// Borrowed when there is nothing to apply, as for almost every id.
fn lexical(path: &str) -> Cow<'_, str> {
    let body = path.strip_prefix('/').unwrap_or(path);
    if body.split('/').all(|s| !s.is_empty() && s != "." && s != "..") {
        return Cow::Borrowed(path);
    }
    let mut parts: Vec<&str> = Vec::new();
    for s in body.split('/') {
        match s {
            "" | "." => {}
            ".." if parts.last().is_some_and(|p| *p != "..") => {
                parts.pop();
            }
            ".." if path.starts_with('/') => {} // (above the root is the root)
            s => parts.push(s),
        }
    }
    let root = if path.starts_with('/') { "/" } else { "" };
    Cow::Owned(format!("{root}{}", parts.join("/")))
}

/// An entry's path from basePath: an absolute path inside basePath (in any
/// of its spellings, `bases`) is used as it is; any other leading `/` is
/// relative to basePath, as Mastra's paths are. The scan and the watcher
/// both read entries so.
/// An absolute path is compared with `.` and `..` applied, as Node's
/// `path.resolve` reads it (`/work/x/../repo/src` is inside `/work/repo`).
pub fn within_base<'a>(form: &'a str, bases: &[&Path]) -> Cow<'a, str> {
    let bases = || bases.iter().filter_map(|b| b.to_str());
    match lexical(form) {
        Cow::Borrowed(form) => Cow::Borrowed(strip_base(form, bases())),
        Cow::Owned(normal) => match strip_base(&normal, bases()) {
            rest if rest.len() == normal.len() => Cow::Borrowed(form), // not inside: as given
            rest => Cow::Owned(rest.to_string()),
        },
    }
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
        assert_eq!(base.relative("/tmp/tests/proj/x/../src/./a.rs"), "src/a.rs", "as the scan reads it");
        assert_eq!(base.relative("/tmp/tests/x/../proj//src/a.rs"), "src/a.rs");
        assert_eq!(base.relative("test/../src/a.rs"), "src/a.rs");
        assert_eq!(base.relative("./docs/a.md"), "docs/a.md");
        assert_eq!(base.relative("../a.md"), "../a.md", "nothing to take away");
        assert!(matches!(base.relative("/tmp/tests/proj/src/a.rs"), Cow::Borrowed(_)));
        assert!(
            base.spells_base("/tmp/tests/proj/src/")
                && base.spells_base("/real/proj")
                && base.spells_base("/tmp/x/../tests/proj/a")
        );
        assert!(!base.spells_base("/src/") && !base.spells_base("src") && !base.spells_base("/tmp/tests/project"));
        assert_eq!(within_base("/tmp/tests/proj/src", &[Path::new("/tmp/tests/proj")]), "/src");
        assert_eq!(within_base("/tmp/tests/proj", &[Path::new("/tmp/tests/proj")]), "");
        assert_eq!(within_base("/etc/x", &[Path::new("/")]), "/etc/x", "as before: the root's own slash is kept");
        assert_eq!(within_base("/tmp/x/../tests/proj/src", &[Path::new("/tmp/tests/proj")]), "/src");
        assert_eq!(
            within_base("/x/../src", &[Path::new("/tmp/tests/proj")]),
            "/x/../src",
            "relative to basePath, as given"
        );
        assert_eq!(within_base("x/../src", &[Path::new("/tmp/tests/proj")]), "x/../src");
        assert!(climbs_out("/../x") && climbs_out("a/../../x") && climbs_out("/..") && climbs_out(".."));
        assert!(!climbs_out("/x/../src") && !climbs_out("src/..") && !climbs_out("/tmp/tests/proj/src"));
    }
}
