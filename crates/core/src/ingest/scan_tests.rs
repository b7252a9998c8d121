//! Tests of scan.rs.

use super::*;
use std::fs;

fn tree(files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (p, c) in files {
        let path = dir.path().join(p);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, c).unwrap();
    }
    dir
}

fn ids(base: &Path, entries: &[&str]) -> Vec<String> {
    let e: Vec<String> = entries.iter().map(|s| s.to_string()).collect();
    scan(base, &e, ScanOptions::default()).files.into_iter().map(|f| f.id).collect()
}

#[test]
fn entry_forms_and_ids() {
    let d = tree(&[
        ("root.md", "r"),
        ("docs/a.md", "a"),
        ("docs/sub/c.md", "c"),
        ("docs/sub/b.txt", "b"),
        ("docs/.hidden.md", "h"),
    ]);
    let b = d.path();
    assert_eq!(ids(b, &["docs"]), ["docs/.hidden.md", "docs/a.md", "docs/sub/b.txt", "docs/sub/c.md"]);
    assert_eq!(ids(b, &["docs/"]), ids(b, &["docs"]));
    assert_eq!(ids(b, &["./docs"])[1], "./docs/a.md");
    assert_eq!(ids(b, &["/docs"])[1], "/docs/a.md");
    assert_eq!(ids(b, &["."])[0], "docs/.hidden.md");
    assert!(ids(b, &["."]).contains(&"root.md".to_string()));
    assert_eq!(ids(b, &["docs/a.md"]), ["docs/a.md"]);
    assert_eq!(ids(b, &["docs/**/*.md"]), ["docs/a.md", "docs/sub/c.md"]);
    assert_eq!(ids(b, &["**/*.md"]), ["docs/a.md", "docs/sub/c.md", "root.md"]);
    assert_eq!(ids(b, &["/docs/**/*.md"]), ["/docs/a.md", "/docs/sub/c.md"]);
    // A matched directory is indexed in full, whatever the extension.
    assert_eq!(ids(b, &["docs/*"]), ["docs/a.md", "docs/sub/b.txt", "docs/sub/c.md"]);
    // Overlapping entries do not duplicate.
    assert_eq!(ids(b, &["docs/a.md", "docs"]).len(), 4);
    let abs = b.join("docs").to_str().unwrap().to_string();
    assert_eq!(ids(b, &[abs.as_str()])[1], format!("{abs}/a.md"));
    // A dot segment with a wildcard names dot-files too, as picomatch has it (it matched none).
    assert_eq!(ids(b, &["docs/.*"]), ["docs/.hidden.md"]);
    assert_eq!(ids(b, &["docs/.h*.md"]), ["docs/.hidden.md"]);
    assert_eq!(ids(b, &["docs/.hidden.md"]), ["docs/.hidden.md"]);
    assert!(ids(b, &["docs/*.md"]).iter().all(|id| !id.contains("/.")), "* alone never does");
    // By place, as Mastra 1.71 finds them (a matched dot-folder is indexed in full).
    let d2 = tree(&[("a/.y", "y"), (".vscode/.x", "x"), (".vscode/b/.z", "z"), ("c/.w/v.md", "v"), ("c/w.md", "w")]);
    let b2 = d2.path();
    let sorted = |mut v: Vec<String>| {
        v.sort();
        v
    };
    assert_eq!(sorted(ids(b2, &["**/.*"])), [".vscode/.x", ".vscode/b/.z", "a/.y", "c/.w/v.md"]);
    assert_eq!(sorted(ids(b2, &[".vscode/**/.*"])), [".vscode/.x", ".vscode/b/.z"]);
    assert_eq!(ids(b2, &["*/.w/*.md"]), ["c/.w/v.md"]);
    assert_eq!(ids(b2, &["**/*.md"]), ["c/w.md"], "`**` enters no dot-folder");
    assert_eq!(sorted(ids(b2, &[".*"])), [".vscode/.x", ".vscode/b/.z"]);
}

#[test]
fn gitignore_rules_nested_and_negated() {
    let d = tree(&[
        (".gitignore", "*.log\nbuild/\n"),
        ("docs/keep.md", "k"),
        ("docs/x.log", "l"),
        ("docs/build/out.md", "o"),
        ("docs/sub/.gitignore", "*.tmp\n!important.tmp\n"),
        ("docs/sub/a.tmp", "t"),
        ("docs/sub/important.tmp", "i"),
        (".git/config", "c"),
    ]);
    let b = d.path();
    assert_eq!(ids(b, &["docs"]), ["docs/keep.md", "docs/sub/.gitignore", "docs/sub/important.tmp"]);
    assert!(!ids(b, &["."]).iter().any(|i| i.starts_with(".git/")));
    let all = scan(b, &["docs".into()], ScanOptions { respect_gitignore: false, ..Default::default() }).files;
    assert_eq!(all.len(), 6);
}

#[test]
fn containment() {
    let outside = tree(&[("secret.md", "s"), ("dir/x.md", "x")]);
    let d = tree(&[("docs/a.md", "a")]);
    let b = d.path();
    std::os::unix::fs::symlink(outside.path().join("secret.md"), b.join("docs/link.md")).unwrap();
    std::os::unix::fs::symlink(outside.path().join("dir"), b.join("linkdir")).unwrap();
    std::os::unix::fs::symlink(b.join("docs/a.md"), b.join("docs/inner.md")).unwrap();
    let r = scan(b, &["docs".into(), "../".into(), "linkdir".into(), "nope".into()], ScanOptions::default());
    let got: Vec<_> = r.files.iter().map(|f| f.id.as_str()).collect();
    assert_eq!(got, ["docs/a.md", "docs/inner.md"]);
    let reasons: Vec<_> = r.skipped.iter().map(|s| (s.path.as_str(), s.reason.to_string())).collect();
    let reasons: Vec<_> = reasons.iter().map(|(p, r)| (*p, r.as_str())).collect();
    assert!(reasons.contains(&("docs/link.md", "outside basePath (symbolic link)")));
    assert!(reasons.contains(&("../", "outside basePath")));
    assert!(reasons.contains(&("linkdir", "outside basePath (symbolic link)")));
    assert!(reasons.contains(&("nope", "not found")));
    assert!(normalize("a/../../b").is_none());
    assert_eq!(normalize("./a/./b/../c").unwrap(), PathBuf::from("a/c"));
    assert_eq!(normalize("/docs/x").unwrap(), PathBuf::from("docs/x"));
    assert_eq!(resolve_base(Path::new("/w/app"), "../data/./x"), PathBuf::from("/w/data/x"));
    assert_eq!(resolve_base(Path::new("/w"), "/abs/../../..//b"), PathBuf::from("/b"));
}

#[test]
fn depth_limit_reported() {
    let deep = (1..=11).map(|i| format!("d{i}")).collect::<Vec<_>>().join("/");
    let d = tree(&[(&format!("{deep}/x.md"), "x"), ("d1/y.md", "y")]);
    let r = scan(d.path(), &["d1".into()], ScanOptions::default());
    assert_eq!(r.files.len(), 1);
    assert!(r.skipped.iter().any(|s| s.reason == SkipReason::TooDeep));
}

#[test]
fn the_persist_directory_inside_base_is_not_walked() {
    let d = tree(&[("docs/a.md", "a"), ("docs/.index/lock", "process 1"), ("docs/.index/snapshot.wss", "x")]);
    let b = d.path();
    let exclude = excluded_dir(b, &b.join("docs/.index"));
    assert_eq!(exclude, Some(b.join("docs/.index")));
    let e = vec!["docs".to_string()];
    let files: Vec<String> =
        scan(b, &e, ScanOptions { exclude, ..Default::default() }).files.into_iter().map(|f| f.id).collect();
    assert_eq!(files, ["docs/a.md"]);
    assert_eq!(excluded_dir(b, Path::new("/")), None, "outside base");
    // Not created yet (the first walk runs while the snapshot directory is made).
    assert_eq!(excluded_dir(b, &b.join("cache/not/yet")), Some(b.join("cache/not/yet")));
}

#[test]
fn below_gives_the_path_under_target_by_bytes_or_by_components() {
    let t = Path::new("/w/docs");
    assert_eq!(below(Path::new("/w/docs/a/b.md"), t), Some(Path::new("a/b.md")));
    assert_eq!(below(Path::new("/w/docs"), t), None);
    assert_eq!(below(Path::new("/w/docsx/a.md"), t), None);
    assert_eq!(below(Path::new("/w/other/a.md"), t), None);
    // Another spelling of the target: the component-wise way.
    assert_eq!(below(Path::new("/w/docs/a.md"), Path::new("/w/./docs")), Some(Path::new("a.md")));
    assert_eq!(below(Path::new("/w/docs//a.md"), t), Some(Path::new("a.md")));
}

#[cfg(unix)]
#[test]
fn non_utf8_names_are_reported_not_dropped() {
    use std::os::unix::ffi::OsStrExt;
    let dir = tree(&[("docs/ok.md", "fine")]);
    fs::write(dir.path().join("docs").join(std::ffi::OsStr::from_bytes(b"bad\xff.md")), "x").unwrap();
    let r = scan(dir.path(), &["docs".to_string()], ScanOptions::default());
    assert_eq!(r.files.iter().map(|f| f.id.as_str()).collect::<Vec<_>>(), ["docs/ok.md"]);
    assert!(r.skipped.iter().any(|s| matches!(s.reason, SkipReason::NonUtf8Name)), "{:?}", r.skipped);
}
