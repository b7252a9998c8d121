//! What kind of file a document comes from, by its path, as linguist and
//! go-enry tell them: hand-written source, tests, documentation,
//! configuration, and generated or vendored files (lock files, minified
//! bundles, `vendor/`, `dist/`). A BM25 score is multiplied by its kind's
//! weight (at most 1, so that top-k's upper bounds still hold): on a code
//! search the file to edit is source, and README, changelogs and tests
//! share its words (codeloc-dev: a documentation file ranked first for 89
//! of 218 queries). A query that reads like a question about usage ("how
//! do I ...?") keeps documentation at full weight.

/// The kinds, as stored per document (one byte).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum FileKind {
    Source = 0,
    Test = 1,
    Doc = 2,
    Config = 3,
    Generated = 4,
}

pub const KINDS: usize = 5;

/// A weight per kind (`FileKind as usize`), each in (0, 1].
pub type KindWeights = [f64; KINDS];

/// Chosen on codeloc-dev (nDCG@10, file level, `npm run eval`); the prose
/// sets have no paths of these kinds and do not move.
pub const DEFAULT_WEIGHTS: KindWeights = [1.0, 0.6, 0.2, 0.6, 0.2];

/// Every kind at full weight (the option turned off).
pub const FLAT: KindWeights = [1.0; KINDS];

const LOCK_FILES: &[&str] = &[
    "package-lock.json",
    "yarn.lock",
    "pnpm-lock.yaml",
    "cargo.lock",
    "go.sum",
    "poetry.lock",
    "gemfile.lock",
    "composer.lock",
    "bun.lockb",
    "flake.lock",
];
// Linguist's vendored folders (`vendor.yml`: `vendors?/`, `third[-_]?party/`,
// `3rd[-_]?party/`, `extern(al)?/`), and `bundled/`, where C and C++
// projects keep a copy of a library (spdlog's `fmt/bundled/`).
const GENERATED_DIRS: &[&str] = &[
    "vendor",
    "vendors",
    "_vendor",
    "node_modules",
    "bower_components",
    "dist",
    "third_party",
    "third-party",
    "thirdparty",
    "3rd_party",
    "3rd-party",
    "3rdparty",
    "extern",
    "external",
    "bundled",
];
const TEST_DIRS: &[&str] = &["test", "tests", "__tests__", "spec", "specs", "testdata", "fixtures", "e2e", "__mocks__"];
const DOC_DIRS: &[&str] = &["doc", "docs", "documentation", "man"];
const DOC_EXTS: &[&str] = &["md", "mdx", "markdown", "txt", "rst", "adoc", "asciidoc", "org", "tex"];
const DOC_NAMES: &[&str] = &[
    "readme",
    "changelog",
    "changes",
    "history",
    "news",
    "license",
    "licence",
    "copying",
    "contributing",
    "authors",
    "notice",
];
const CONFIG_EXTS: &[&str] = &[
    "json",
    "jsonc",
    "yml",
    "yaml",
    "toml",
    "ini",
    "cfg",
    "conf",
    "lock",
    "xml",
    "plist",
    "properties",
    "env",
    // Build files: CMake, Gradle, Bazel, make, qmake, autoconf and
    // pkg-config templates, editor syntax definitions.
    "cmake",
    "gradle",
    "bazel",
    "bzl",
    "mk",
    "pro",
    "in",
    "ac",
    "am",
    "m4",
    "spec",
    "sublime-syntax",
];
/// Shell scripts are source (fzf's `shell/completion.bash` is what its
/// commits change) except where they only build or release the project.
const SCRIPT_EXTS: &[&str] = &["sh", "bash", "zsh", "fish", "ps1", "bat", "cmd"];
const BUILD_DIRS: &[&str] = &["ci", ".ci", ".github", ".circleci", ".buildkite"];
const CONFIG_NAMES: &[&str] = &[
    "makefile",
    "dockerfile",
    "justfile",
    "rakefile",
    "gemfile",
    "procfile",
    "vagrantfile",
    "codeowners",
    "owners",
    "version",
    "deps",
    "pkgbuild",
    "apkbuild",
];
/// The last extensions a man page has after its section (`jq.1.prebuilt`, `ls.1.in`).
const MAN_EXTS: &[&str] = &["in", "prebuilt", "man", "roff"];
/// Whole file names of build and packaging files whose extension says
/// otherwise (`CMakeLists.txt` is no documentation, `setup.py` no source).
const CONFIG_FILES: &[&str] = &[
    "build",
    "workspace",
    "cmakelists.txt",
    "meson.build",
    "setup.py",
    "noxfile.py",
    "fabfile.py",
    "py.typed",
    "build.gradle.kts",
    "settings.gradle.kts",
];

/// The kind of `path` under `rules` when there are any.
pub fn kind_with(rules: Option<&KindRules>, path: &str) -> FileKind {
    rules.map_or_else(|| kind_of(path), |r| r.kind(path))
}

/// The kind of the file at `path` (slash-separated, as document ids are;
/// `.` and `..` applied: `x/../docs/a.ts` is `docs/a.ts`).
pub fn kind_of(path: &str) -> FileKind {
    let path = &*super::id_base::applied(path);
    with_parts(path, |parts, name, stem, ext| kind_of_parts(path, parts, name, stem, ext)).unwrap_or(FileKind::Source)
}

/// `f(folders, name, stem, extension)` of `path`, lowercased (`None` for a
/// path with no name).
fn with_parts<R>(path: &str, f: impl FnOnce(&[&str], &str, &str, &str) -> R) -> Option<R> {
    let lower = path.to_ascii_lowercase();
    let mut parts: Vec<&str> = lower.split('/').filter(|p| !p.is_empty() && *p != ".").collect();
    let name = parts.pop()?;
    let (stem, ext) = match name.rfind('.') {
        Some(0) | None => (name, ""),
        Some(i) => (&name[..i], &name[i + 1..]),
    };
    Some(f(&parts, name, stem, ext))
}

fn kind_of_parts(path: &str, parts: &[&str], name: &str, stem: &str, ext: &str) -> FileKind {
    let in_dir = |dirs: &[&str]| parts.iter().any(|p| dirs.contains(p));
    if LOCK_FILES.contains(&name)
        || in_dir(GENERATED_DIRS)
        || stem.ends_with(".min")
        || ext == "map"
        || stem.ends_with("_generated")
        || stem.ends_with(".generated")
        || stem.ends_with(".pb")
        || stem.ends_with(".g")
    {
        return FileKind::Generated;
    }
    // `vite.config.ts`, `jest.config.js`: a tool's configuration in code
    // (after the generated check: `third_party/x/BUILD` stays vendored).
    if CONFIG_FILES.contains(&name) || stem.ends_with(".config") {
        return FileKind::Config;
    }
    if in_dir(TEST_DIRS) || is_test_name(stem, ext, path) {
        return FileKind::Test;
    }
    // `README`, `CHANGELOG.md`, `LICENSE-MIT`; not `history.ts` or `readme_parser.rs`.
    let doc_name = !is_code_ext(ext)
        && DOC_NAMES.iter().any(|n| stem == *n || stem.strip_prefix(n).is_some_and(|r| r.starts_with(['-', '_', '.'])));
    // `jq.1`, and `jq.1.prebuilt`, `ls.1.in`: a section number before a man page's last
    // extension (not a version's last digit: `config-1.2.in`, `openapi-3.0.yaml`).
    let section = |s: &str| s.len() == 1 && s.as_bytes()[0].is_ascii_digit();
    let man_page = section(ext)
        || (MAN_EXTS.contains(&ext)
            && stem
                .rsplit_once('.')
                .is_some_and(|(head, e)| section(e) && !head.ends_with(|c: char| c.is_ascii_digit())));
    // `TODO`, `INSTALL`, `SYNCING`: a capitalised name without an extension is a note to readers
    // (`BUILD`, `WORKSPACE` are configuration, found above; `CODEOWNERS`, `PKGBUILD` below).
    let shouted = ext.is_empty() && is_shouted(path) && !CONFIG_NAMES.contains(&stem);
    if DOC_EXTS.contains(&ext) || doc_name || man_page || shouted || in_dir(DOC_DIRS) && !is_code_ext(ext) {
        return FileKind::Doc;
    }
    // Code in a documentation folder (a docs site's scripts, the generators of its
    // pages) is documentation too where linguist's `documentation.yml` says so: a
    // `docs/`, `doc/` or `man/` at the root, a `documentation/` anywhere. A nested
    // `doc/` is often a package of its own (Go's `go/doc`).
    let root_doc_dir = parts.first().is_some_and(|p| matches!(*p, "doc" | "docs" | "man"));
    if root_doc_dir || parts.contains(&"documentation") {
        return FileKind::Doc;
    }
    let build_script = SCRIPT_EXTS.contains(&ext) && in_dir(BUILD_DIRS);
    if CONFIG_EXTS.contains(&ext)
        || build_script
        // `Makefile`, `VERSION`; not `src/version.rs` or `lib/deps.ts`.
        || (CONFIG_NAMES.contains(&stem) && !is_code_ext(ext))
        || (name.starts_with('.') && ext.is_empty())
    {
        return FileKind::Config;
    }
    FileKind::Source
}

/// Whether the file name (as written, not lowered) is three or more
/// capitals, `_` or `-` included.
fn is_shouted(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    name.len() >= 3
        && name.bytes().all(|b| b.is_ascii_uppercase() || b == b'_' || b == b'-')
        && name.bytes().any(|b| b.is_ascii_uppercase())
}

fn is_test_name(stem: &str, ext: &str, path: &str) -> bool {
    stem.ends_with("_test")
        || stem.ends_with(".test")
        || stem.ends_with(".spec")
        || stem.ends_with("_spec")
        || (stem.starts_with("test_") && ext == "py")
        || (stem == "conftest" && ext == "py")
        || stem == "tests"
        // `FooTest.java` by its case (not `Latest.java`).
        || (ext == "java" && path.rsplit('/').next().is_some_and(|n| n.trim_end_matches(".java").ends_with("Test")))
}

/// The extensions of code: those whose definitions are read
/// (`definitions::lang_of_ext`; a `history.sh` or a nested `doc/x.hh` is
/// code, as `x.cpp` was).
fn is_code_ext(ext: &str) -> bool {
    crate::analysis::definitions::lang_of_ext(ext).is_some()
}

/// The linguist attributes of a `.gitattributes` file (`linguist-generated`,
/// `linguist-vendored`, `linguist-documentation`, each set, `=true`,
/// `-unset` or `=false`), which override what a path says: GitHub's
/// linguist and go-enry read them the same way. Later lines win, as in git.
/// The patterns are one `GlobSet` (a path is matched once, not once per
/// rule: 34,000 rules over 3,000 files took 27 s and 460 MB as separate
/// globs), and only the first `MAX_RULES` are read.
#[derive(Debug, Default)]
pub struct KindRules {
    /// The globs in sets of `SET_SIZE` (one set past globset's size limit
    /// loses those rules, not all), each with the number of its first rule.
    sets: Vec<(usize, globset::GlobSet)>,
    /// What the glob of the same number sets.
    rules: Vec<(Attribute, bool)>,
    /// Rules past `MAX_RULES`, not applied.
    pub dropped: usize,
    /// The text they came from (`set_path_rules` skips a re-read that changed nothing).
    pub source: String,
}

/// Far more linguist rules than a project writes (tens); a bound on the
/// set's size and build time.
pub const MAX_RULES: usize = 10_000;

/// Rules per `GlobSet`: a set of pathological globs can pass globset's
/// size limit, and then only its own rules are lost.
const SET_SIZE: usize = 500;

impl KindRules {
    pub fn parse(text: &str) -> KindRules {
        let mut globs = Vec::new();
        let (mut rules, mut dropped) = (Vec::new(), 0);
        for line in text.lines().map(str::trim).filter(|l| !l.is_empty() && !l.starts_with('#')) {
            let mut parts = line.split_whitespace();
            let Some(pattern) = parts.next() else { continue };
            let attributes: Vec<(Attribute, bool)> = parts.filter_map(linguist_attribute).collect();
            if attributes.is_empty() {
                continue;
            }
            let Some(glob) = attribute_glob(pattern) else { continue };
            for attribute in attributes {
                if rules.len() == MAX_RULES {
                    dropped += 1;
                    continue;
                }
                globs.push(glob.clone());
                rules.push(attribute);
            }
        }
        let mut sets = Vec::new();
        for (n, chunk) in globs.chunks(SET_SIZE).enumerate() {
            let mut set = globset::GlobSetBuilder::new();
            for g in chunk {
                set.add(g.clone());
            }
            match set.build() {
                Ok(set) => sets.push((n * SET_SIZE, set)),
                Err(_) => dropped += chunk.len(),
            }
        }
        KindRules { sets, rules, dropped, source: text.to_string() }
    }

    pub fn is_empty(&self) -> bool {
        self.rules.is_empty()
    }

    /// The kind of `path` with these rules applied over `kind_of`. Each
    /// attribute is settled on its own, the last matching line winning (as
    /// git resolves attributes); then set ones decide, and an unset one
    /// overrules only what the path said for that same attribute.
    pub fn kind(&self, path: &str) -> FileKind {
        let p = path.trim_start_matches("./");
        let mut value: [Option<(usize, bool)>; 3] = [None; 3];
        for i in self.sets.iter().flat_map(|(first, set)| set.matches(p).into_iter().map(move |i| first + i)) {
            let Some(&(attribute, on)) = self.rules.get(i) else { continue };
            let slot = &mut value[attribute as usize];
            if slot.is_none_or(|(j, _)| j < i) {
                *slot = Some((i, on));
            }
        }
        let [generated, vendored, documentation] = value.map(|v| v.map(|(_, on)| on));
        if generated == Some(true) || vendored == Some(true) {
            return FileKind::Generated;
        }
        if documentation == Some(true) {
            return FileKind::Doc;
        }
        let by_path = kind_of(path);
        let unset = match by_path {
            // `-linguist-vendored` on `vendor/x.go`: hand-written after all;
            // `-linguist-generated` does not make it so.
            FileKind::Generated if is_vendored_path(path) => vendored == Some(false),
            FileKind::Generated => generated == Some(false),
            FileKind::Doc => documentation == Some(false),
            _ => false,
        };
        if unset {
            // What the path says once that attribute is off: a test stays a test.
            return kind_without_generated_or_doc(path);
        }
        by_path
    }
}

/// A linguist attribute of a `.gitattributes` line (`linguist-generated`,
/// `-linguist-vendored`, `linguist-documentation=false`), set or unset.
fn linguist_attribute(attr: &str) -> Option<(Attribute, bool)> {
    let (name, on) = match attr.strip_prefix('-') {
        Some(n) => (n, false),
        None => match attr.split_once('=') {
            Some((n, v)) => (n, v != "false"),
            None => (attr, true),
        },
    };
    let attribute = match name {
        "linguist-generated" => Attribute::Generated,
        "linguist-vendored" => Attribute::Vendored,
        "linguist-documentation" => Attribute::Documentation,
        _ => return None,
    };
    Some((attribute, on))
}

/// The linguist attributes `KindRules` reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Attribute {
    Generated = 0,
    Vendored = 1,
    Documentation = 2,
}

/// Whether the path is generated because of a vendored folder (`vendor/`,
/// `node_modules/`, ...) rather than by its name.
fn is_vendored_path(path: &str) -> bool {
    with_parts(path, |parts, _, _, _| parts.iter().any(|p| GENERATED_DIRS.contains(p))).unwrap_or(false)
}

/// The kind a path has when it is neither generated nor documentation.
fn kind_without_generated_or_doc(path: &str) -> FileKind {
    let test = with_parts(path, |parts, _, stem, ext| {
        parts.iter().any(|p| TEST_DIRS.contains(p)) || is_test_name(stem, ext, path)
    });
    if test == Some(true) {
        FileKind::Test
    } else {
        FileKind::Source
    }
}

/// A `.gitattributes` pattern as a glob over root-relative paths: one
/// without a slash matches a name at any depth, one with a slash is
/// anchored at the root. (globset's own matching, by bytes: git's `?`
/// also meets one byte.)
fn attribute_glob(pattern: &str) -> Option<globset::Glob> {
    let pattern = &*crate::text::glob::literal_braces(pattern);
    let anchored = pattern.trim_start_matches('/');
    let glob =
        if pattern.trim_end_matches('/').contains('/') { anchored.to_string() } else { format!("**/{anchored}") };
    globset::GlobBuilder::new(&glob).literal_separator(true).backslash_escape(true).build().ok()
}

/// Whether a query reads like a question about usage (documentation then
/// keeps its full weight): it ends with `?` or starts with a question word.
pub fn reads_as_question(query: &str) -> bool {
    let q = query.trim();
    if q.ends_with('?') {
        return true;
    }
    let first = q.split_whitespace().next().unwrap_or("").to_ascii_lowercase();
    matches!(
        first.as_str(),
        "how" | "what" | "why" | "where" | "which" | "when" | "can" | "does" | "do" | "is" | "should"
    )
}

/// The weights for one query: documentation at full weight for a question.
pub fn for_query(weights: &KindWeights, query: &str) -> KindWeights {
    let mut w = *weights;
    if reads_as_question(query) {
        w[FileKind::Doc as usize] = 1.0;
    }
    w
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_by_path() {
        use FileKind::*;
        for (path, kind) in [
            // A config's name as a code file's stem, code of every language
            // definitions are read for in a nested doc/ or man/, or named as
            // a document: code (from a hostile-input hunt).
            ("src/version.rs", Source),
            ("lib/deps.ts", Source),
            ("pkg/owners.go", Source),
            ("VERSION", Config),
            ("deps", Config),
            ("go/doc/x.hh", Source),
            ("go/doc/x.pyi", Source),
            ("src/man/x.sh", Source),
            ("src/history.sh", Source),
            ("lua/news.lua", Source),
            ("src/authors.kts", Source),
            ("docs/build.sh", Doc),
            ("HISTORY", Doc),
            ("src/router/trie-router/router.ts", Source),
            ("src/walk.rs", Source),
            ("README.md", Doc),
            ("CHANGELOG.md", Doc),
            ("docs/guide/setup.html", Doc),
            ("doc/fd.1", Doc),
            ("docs/example.rs", Doc),
            ("doc/man_docs.go", Doc),
            ("./docs/public/js/search.js", Doc),
            ("kernel/Documentation/x.c", Doc),
            ("src/go/doc/reader.go", Source),
            ("pkg/docs/notes.md", Doc),
            ("src/docstring.rs", Source),
            ("LICENSE-MIT", Doc),
            ("src/main_test.go", Test),
            ("test/index.ts", Test),
            ("source/core/Ky.test.ts", Test),
            ("tests/tests.rs", Test),
            ("pkg/test_util.py", Test),
            ("Cargo.lock", Generated),
            ("package-lock.json", Generated),
            ("dist/bundle.min.js", Generated),
            ("vendor/github.com/x/y.go", Generated),
            ("api/service.pb.go", Generated),
            ("package.json", Config),
            (".github/workflows/ci.yml", Config),
            ("Makefile", Config),
            (".gitignore", Config),
            ("ci/before_deploy.bash", Config),
            ("shell/completion.bash", Source),
            ("CMakeLists.txt", Config),
            ("src/CMakeLists.txt", Config),
            ("support/cmake/fmt-config.cmake.in", Config),
            ("support/build.gradle", Config),
            ("support/bazel/BUILD.bazel", Config),
            ("setup.py", Config),
            ("tests/conftest.py", Test),
            ("vite.config.ts", Config),
            ("src/config.ts", Source),
            ("src/build.rs", Source),
            ("third_party/x/BUILD", Generated),
            ("vendor/foo/setup.py", Generated),
            ("node_modules/p/jest.config.js", Generated),
            ("third_party/googletest/CMakeLists.txt", Generated),
            ("include/spdlog/fmt/bundled/format.h", Generated),
            ("src/external/zlib/inflate.c", Generated),
            ("pip/_vendor/rich/text.py", Generated),
            ("3rdparty/lua/lapi.c", Generated),
            ("jq.1.prebuilt", Doc),
            ("man/ls.1.in", Doc),
            ("configure.ac", Config),
            ("config/m4/ax_pthread.m4", Config),
            ("Makefile.am", Config),
            ("jq.spec", Config),
            ("TODO", Doc),
            ("INSTALL", Doc),
            ("docs/RELEASE_NOTES", Doc),
            ("BUILD", Config),
            ("bin/ws", Source),
            ("src/external_api.rs", Source),
            ("src/v1.2.rs", Source),
            ("openapi-3.0.yaml", Config),
            ("config/schema-2.1.json", Config),
            ("docker-compose.3.8.yml", Config),
            ("scripts/migrate-1.2.sh", Source),
            ("db/V1.2.sql", Source),
            ("templates/page.1.html", Source),
            ("config-1.2.in", Config),
            ("CODEOWNERS", Config),
            ("PKGBUILD", Config),
            ("VERSION", Config),
            ("shell/key-bindings.zsh", Source),
            ("build.rs", Source),
            ("src/history.ts", Source),
            ("src/readme_parser.rs", Source),
            ("changes.go", Source),
            ("src/Latest.java", Source),
            ("src/RouterTest.java", Test),
        ] {
            assert_eq!(kind_of(path), kind, "{path}");
        }
    }

    #[test]
    fn gitattributes_override_the_path() {
        let rules = KindRules::parse(
            "# generated parsers\nsrc/parser.c linguist-generated\n*.pb.go -linguist-generated\nvendor/** -linguist-vendored\nsrc/api.ts linguist-documentation=true\ndocs/gen.go -linguist-documentation\nlib/gen/** linguist-generated=true\nlib/gen/keep.ts linguist-generated=false\n",
        );
        assert_eq!(rules.kind("src/parser.c"), FileKind::Generated);
        assert_eq!(rules.kind("src/other.c"), FileKind::Source);
        assert_eq!(rules.kind("api/service.pb.go"), FileKind::Source);
        assert_eq!(rules.kind("vendor/github.com/x/y.go"), FileKind::Source);
        assert_eq!(rules.kind("./src/api.ts"), FileKind::Doc);
        assert_eq!(rules.kind("docs/gen.go"), FileKind::Source, "unset documentation is not documentation");
        assert_eq!(rules.kind("lib/gen/a.ts"), FileKind::Generated);
        assert_eq!(rules.kind("lib/gen/keep.ts"), FileKind::Source);
        assert_eq!(rules.kind("README.md"), FileKind::Doc);
        // Each attribute settled on its own: unsetting one leaves another set.
        let rules = KindRules::parse("api/** linguist-generated\n*.go -linguist-documentation\n*.min.js linguist-generated\n*.js linguist-vendored=false\nvendor/** -linguist-generated\n");
        assert_eq!(rules.kind("api/x.go"), FileKind::Generated);
        assert_eq!(rules.kind("web/app.min.js"), FileKind::Generated);
        assert_eq!(rules.kind("vendor/lib/x.go"), FileKind::Generated, "unset generated is not unset vendored");
        let rules = KindRules::parse("vendor/** -linguist-vendored\n");
        assert_eq!(rules.kind("vendor/lib/x_test.go"), FileKind::Test);
    }

    #[test]
    fn gitattributes_rules_are_one_set_the_last_matching_winning_and_bounded() {
        let mut text: String = (0..MAX_RULES + 5).map(|i| format!("gen{i}/** linguist-generated\n")).collect();
        text.push_str("gen7/keep.rs -linguist-generated\n");
        let rules = KindRules::parse(&text);
        assert_eq!(rules.dropped, 6, "past MAX_RULES, the last line too");
        assert_eq!(rules.kind("gen7/a.rs"), FileKind::Generated);
        assert_eq!(rules.kind("gen7/keep.rs"), FileKind::Generated, "a dropped line is not applied");
        assert_eq!(rules.kind(&format!("gen{}/a.rs", MAX_RULES + 1)), FileKind::Source);
        let rules =
            KindRules::parse("*.rs linguist-generated\nsrc/** -linguist-generated\nsrc/gen/** linguist-generated\n");
        assert_eq!(rules.kind("lib/a.rs"), FileKind::Generated);
        assert_eq!(rules.kind("src/a.rs"), FileKind::Source, "a later unset wins");
        assert_eq!(rules.kind("src/gen/a.rs"), FileKind::Generated, "a later set wins again");
        assert!(
            KindRules::parse("a/** linguist-generated linguist-documentation -linguist-vendored\n").kind("a/x.rs")
                == FileKind::Generated
        );
    }

    #[test]
    fn questions_keep_documentation() {
        assert!(reads_as_question("How do I reset a password"));
        assert!(reads_as_question("reset password?"));
        assert!(!reads_as_question("Fix double-click on light renderer"));
        assert_eq!(for_query(&DEFAULT_WEIGHTS, "how to install")[FileKind::Doc as usize], 1.0);
        assert_eq!(for_query(&DEFAULT_WEIGHTS, "install")[FileKind::Doc as usize], DEFAULT_WEIGHTS[2]);
    }
}
