//! The options of the public API, read from JavaScript and checked.

use crate::js::*;
use napi::bindgen_prelude::*;
use napi::JsValue;
use std::path::PathBuf;
use workspace_search_core::analysis::tokenizer::{SplitRule, TokenizerConfig};
use workspace_search_core::index::Bm25Params;
use workspace_search_core::ingest::ChunkOptions;
use workspace_search_core::search::keyword::MAX_START_LINE;
use workspace_search_core::vectors::filter::Filter;

/// Options of Mastra's `Workspace` that concern no search: accepted so that
/// a Mastra configuration keeps working, and ignored.
pub const MASTRA_IGNORED: &[&str] = &[
    "name",
    "sandbox",
    "instructions",
    "sandboxCacheKey",
    "mounts",
    "onMount",
    "browser",
    "skills",
    "skillSource",
    "checkSkillFileMtime",
    "lsp",
    "tools",
    "autoSync",
    "operationTimeout",
];

pub const WORKSPACE_KEYS: &[&str] = &[
    "id",
    "filesystem",
    "bm25",
    "vectorStore",
    "embedder",
    "searchIndexName",
    "autoIndexPaths",
    "chunking",
    "respectGitignore",
    "embedConcurrency",
    "embedTimeoutMs",
    "vectorStoreTimeoutMs",
    "maxFileSize",
    "onProgress",
    "persist",
    "embedderId",
    "watch",
    "fileKinds",
    "gitHistory",
    "rerank",
    "rerankDepth",
    "rerankTimeoutMs",
];

/// How long one embedder call may take before it fails (2 minutes).
pub const DEFAULT_EMBED_TIMEOUT_MS: u64 = 120_000;

pub use workspace_search_core::ingest::scan::DEFAULT_MAX_FILE_SIZE;

/// A JavaScript function taken from the options.
pub type JsFn<'e> = Function<'e, Unknown<'e>, Unknown<'e>>;

/// Stored metadata and the start line of a document.
pub type DocFields = (Option<serde_json::Map<String, serde_json::Value>>, Option<u32>);

pub struct Bm25Options {
    pub params: Bm25Params,
    pub tokenizer: TokenizerConfig,
}

pub struct WorkspaceOptions<'e> {
    pub id: Option<String>,
    pub base_path: Option<PathBuf>,
    pub read_only: bool,
    pub bm25: Option<Bm25Options>,
    pub js_tokenizer: Option<Function<'e, Unknown<'e>, Unknown<'e>>>,
    /// `bm25.tokenize.tokenizerId`: what a snapshot knows `js_tokenizer` by.
    pub tokenizer_id: Option<String>,
    pub vector_store: Option<Unknown<'e>>,
    pub embedder: Option<Unknown<'e>>,
    pub search_index_name: Option<String>,
    pub auto_index_paths: Vec<String>,
    pub chunking: ChunkOptions,
    pub respect_gitignore: bool,
    pub embed_concurrency: usize,
    pub embed_timeout_ms: u64,
    pub vector_store_timeout_ms: u64,
    pub max_file_size: u64,
    pub on_progress: Option<Function<'e, Unknown<'e>, Unknown<'e>>>,
    /// `persist`: `None` off; `Some(None)` the default directory.
    pub persist: Option<Option<PathBuf>>,
    /// `persist: { store, ... }`: the user's snapshot store and its options.
    pub snapshot_store: Option<StoreOption<'e>>,
    pub embedder_id: Option<String>,
    pub watch: bool,
    /// `fileKinds`: the weight of each file kind in BM25 (core's `index::kind`).
    pub file_kinds: workspace_search_core::index::kind::KindWeights,
    /// `gitHistory`: the commit messages of each file as a ranking signal.
    pub git_history: bool,
    /// `rerank`, `rerankDepth`, `rerankTimeoutMs`.
    pub rerank: Option<JsFn<'e>>,
    pub rerank_depth: usize,
    pub rerank_timeout_ms: u64,
}

impl WorkspaceOptions<'_> {
    /// Every option at its default (none given).
    fn defaults() -> Self {
        WorkspaceOptions {
            id: None,
            base_path: None,
            read_only: false,
            bm25: None,
            js_tokenizer: None,
            tokenizer_id: None,
            vector_store: None,
            embedder: None,
            search_index_name: None,
            auto_index_paths: Vec::new(),
            chunking: ChunkOptions::default(),
            respect_gitignore: true,
            embed_concurrency: 8,
            embed_timeout_ms: DEFAULT_EMBED_TIMEOUT_MS,
            vector_store_timeout_ms: workspace_search_core::engine::DEFAULT_VECTOR_STORE_TIMEOUT.as_millis() as u64,
            max_file_size: DEFAULT_MAX_FILE_SIZE,
            on_progress: None,
            persist: None,
            snapshot_store: None,
            embedder_id: None,
            watch: false,
            file_kinds: workspace_search_core::index::kind::DEFAULT_WEIGHTS,
            git_history: true,
            rerank: None,
            rerank_depth: workspace_search_core::search::rerank::DEFAULT_DEPTH,
            rerank_timeout_ms: workspace_search_core::search::rerank::DEFAULT_TIMEOUT_MS,
        }
    }
}

pub fn workspace_options<'e>(env: &Env, options: Option<Unknown<'e>>) -> Checked<WorkspaceOptions<'e>> {
    let mut out = WorkspaceOptions::defaults();
    let Some(options) = options.filter(|o| !is_nullish(o)) else { return Ok(out) };
    let o = to_object(&options, "Workspace options")?;
    check_keys(&o, WORKSPACE_KEYS, MASTRA_IGNORED, "Workspace options")?;
    if let Some(v) = prop(&o, "id")? {
        out.id = Some(non_empty(&v, "id")?);
    }
    if let Some(v) = prop(&o, "filesystem")? {
        (out.base_path, out.read_only) = filesystem_base_path(&v)?;
    }
    searched_options(env, &o, &mut out)?;
    limit_options(&o, &mut out)?;
    if let Some(v) = prop(&o, "onProgress")? {
        out.on_progress = Some(to_function(&v, "onProgress")?);
    }
    if let Some(v) = prop(&o, "persist")? {
        match store_option(&v)? {
            Some(s) => out.snapshot_store = Some(s),
            None => out.persist = persist_option(&v)?,
        }
    }
    if let Some(v) = prop(&o, "embedderId")? {
        out.embedder_id = Some(non_empty(&v, "embedderId")?);
    }
    if let Some(v) = prop(&o, "watch")? {
        out.watch = to_bool(&v, "watch")?;
    }
    ranking_options(&o, &mut out)?;
    Ok(out)
}

/// A string option that must not be empty.
fn non_empty(v: &Unknown, name: &str) -> Checked<String> {
    let s = to_string(v, name)?;
    if s.is_empty() {
        return Err(Fail::Type(format!("{name} must be a non-empty string")));
    }
    Ok(s)
}

/// What is searched and how: `bm25`, `vectorStore`, `embedder`,
/// `searchIndexName`, `autoIndexPaths`, `chunking`, `respectGitignore`.
fn searched_options<'e>(env: &Env, o: &Object<'e>, out: &mut WorkspaceOptions<'e>) -> Checked<()> {
    if let Some(v) = prop(o, "bm25")? {
        (out.bm25, out.js_tokenizer, out.tokenizer_id) = bm25_options(env, &v)?;
    }
    out.vector_store = prop(o, "vectorStore")?.filter(|v| !is_nullish(v));
    out.embedder = prop(o, "embedder")?.filter(|v| !is_nullish(v));
    if let Some(v) = prop(o, "searchIndexName")? {
        out.search_index_name = Some(to_string(&v, "searchIndexName")?);
    }
    if let Some(v) = prop(o, "autoIndexPaths")? {
        out.auto_index_paths = to_name_array(&v, "autoIndexPaths")?;
    }
    if let Some(v) = prop(o, "chunking")? {
        let c = to_object(&v, "chunking")?;
        check_keys(&c, &["maxChars", "overlapLines"], &[], "chunking")?;
        if let Some(m) = prop(&c, "maxChars")? {
            out.chunking.max_chars = to_integer(&m, "chunking.maxChars", 1.0)? as usize;
        }
        if let Some(m) = prop(&c, "overlapLines")? {
            out.chunking.overlap_lines = to_integer(&m, "chunking.overlapLines", 0.0)? as usize;
        }
    }
    if let Some(v) = prop(o, "respectGitignore")? {
        out.respect_gitignore = to_bool(&v, "respectGitignore")?;
    }
    Ok(())
}

/// Bounds: `embedConcurrency`, `embedTimeoutMs`, `vectorStoreTimeoutMs`,
/// `maxFileSize`.
fn limit_options(o: &Object, out: &mut WorkspaceOptions) -> Checked<()> {
    if let Some(v) = prop(o, "embedConcurrency")? {
        out.embed_concurrency = to_integer(&v, "embedConcurrency", 1.0)? as usize;
    }
    if let Some(v) = prop(o, "embedTimeoutMs")? {
        out.embed_timeout_ms = to_integer(&v, "embedTimeoutMs", 1.0)? as u64;
    }
    if let Some(v) = prop(o, "vectorStoreTimeoutMs")? {
        out.vector_store_timeout_ms = to_integer(&v, "vectorStoreTimeoutMs", 1.0)? as u64;
    }
    if let Some(v) = prop(o, "maxFileSize")? {
        out.max_file_size = to_integer(&v, "maxFileSize", 1.0)? as u64;
    }
    Ok(())
}

/// Ranking: `fileKinds`, `gitHistory`, `rerank`, `rerankDepth`,
/// `rerankTimeoutMs`.
fn ranking_options<'e>(o: &Object<'e>, out: &mut WorkspaceOptions<'e>) -> Checked<()> {
    if let Some(v) = prop(o, "fileKinds")? {
        out.file_kinds = file_kinds_option(&v)?;
    }
    if let Some(v) = prop(o, "gitHistory")? {
        out.git_history = to_bool(&v, "gitHistory")?;
    }
    if let Some(v) = prop(o, "rerank")? {
        out.rerank = Some(to_function(&v, "rerank")?);
    }
    if let Some(v) = prop(o, "rerankDepth")? {
        out.rerank_depth = to_integer(&v, "rerankDepth", 1.0)? as usize;
    }
    if let Some(v) = prop(o, "rerankTimeoutMs")? {
        out.rerank_timeout_ms = to_integer(&v, "rerankTimeoutMs", 1.0)? as u64;
    }
    Ok(())
}

/// `fileKinds`: `true` (the defaults), `false` (every file alike), or
/// `{ test, docs, config, generated }`, each a weight in (0, 1] (the others
/// keep their default).
fn file_kinds_option(v: &Unknown) -> Checked<workspace_search_core::index::kind::KindWeights> {
    use workspace_search_core::index::kind::{FileKind, DEFAULT_WEIGHTS, FLAT};
    if v.get_type()? == napi::ValueType::Boolean {
        return Ok(if to_bool(v, "fileKinds")? { DEFAULT_WEIGHTS } else { FLAT });
    }
    let o = to_object(v, "fileKinds")?;
    let names = [
        ("test", FileKind::Test),
        ("docs", FileKind::Doc),
        ("config", FileKind::Config),
        ("generated", FileKind::Generated),
    ];
    check_keys(&o, &names.map(|(n, _)| n), &[], "fileKinds")?;
    let mut w = DEFAULT_WEIGHTS;
    for (name, kind) in names {
        if let Some(x) = prop(&o, name)? {
            let n = to_number(&x, &format!("fileKinds.{name}"))?;
            if !(n > 0.0 && n <= 1.0) {
                return Err(Fail::Range(format!("fileKinds.{name} must be a weight in (0, 1], got {n}")));
            }
            w[kind as usize] = n;
        }
    }
    Ok(w)
}

/// `persist: { store, storeTimeoutMs?, cacheDir?, cacheMaxBytes?, retainMs? }`:
/// a snapshot store, how long a call of it may take, the local cache of its
/// parts, and how long replaced parts stay (`None`: not that form of `persist`).
fn store_option<'e>(v: &Unknown<'e>) -> Checked<Option<StoreOption<'e>>> {
    if v.get_type()? != napi::ValueType::Object || v.is_array()? {
        return Ok(None);
    }
    let o = to_object(v, "persist")?;
    let Some(store) = prop(&o, "store")? else { return Ok(None) };
    check_keys(&o, &["store", "storeTimeoutMs", "cacheDir", "cacheMaxBytes", "retainMs"], &[], "persist")?;
    let timeout_ms = match prop(&o, "storeTimeoutMs")? {
        Some(t) => to_integer(&t, "persist.storeTimeoutMs", 1.0)? as u64,
        None => DEFAULT_STORE_TIMEOUT_MS,
    };
    let cache_dir = match prop(&o, "cacheDir")? {
        Some(d) => {
            let dir = to_string(&d, "persist.cacheDir")?;
            if dir.is_empty() {
                return Err(Fail::Type("persist.cacheDir must be a non-empty string".into()));
            }
            Some(absolute_now(dir, "persist.cacheDir")?)
        }
        None => None,
    };
    let cache_max_bytes = match prop(&o, "cacheMaxBytes")? {
        Some(n) => to_integer(&n, "persist.cacheMaxBytes", 1.0)? as u64,
        None => DEFAULT_CACHE_MAX_BYTES,
    };
    let retain_ms = match prop(&o, "retainMs")? {
        Some(n) => to_integer(&n, "persist.retainMs", 0.0)? as u64,
        None => DEFAULT_RETAIN_MS,
    };
    Ok(Some(StoreOption { store, timeout_ms, cache_dir, cache_max_bytes, retain_ms }))
}

/// `persist: { store, ... }`, checked.
pub struct StoreOption<'e> {
    pub store: Unknown<'e>,
    pub timeout_ms: u64,
    pub cache_dir: Option<PathBuf>,
    pub cache_max_bytes: u64,
    pub retain_ms: u64,
}

/// The local cache of a snapshot store's parts holds at most this much by default (1 GiB).
const DEFAULT_CACHE_MAX_BYTES: u64 = 1 << 30;

/// How long the parts of a snapshot a save replaced stay in the store by
/// default (a day): a workspace still attached to that snapshot may fetch
/// its texts late.
const DEFAULT_RETAIN_MS: u64 = 24 * 3600 * 1000;

/// How long a call of a snapshot store may take by default.
const DEFAULT_STORE_TIMEOUT_MS: u64 = 30_000;

/// `persist`: `true` (the default directory), `false`, or `{ dir }`.
fn persist_option(v: &Unknown) -> Checked<Option<Option<PathBuf>>> {
    if v.get_type()? == napi::ValueType::Boolean {
        return Ok(to_bool(v, "persist")?.then_some(None));
    }
    if v.get_type()? != napi::ValueType::Object || v.is_array()? {
        return Err(Fail::Type(format!("persist must be true, false or {{ dir: string }}, got {}", describe(v))));
    }
    let o = to_object(v, "persist")?;
    check_keys(&o, &["dir"], &[], "persist")?;
    match prop(&o, "dir")? {
        None => Ok(Some(None)),
        Some(d) => {
            let dir = to_string(&d, "persist.dir")?;
            if dir.is_empty() {
                return Err(Fail::Type("persist.dir must be a non-empty string".into()));
            }
            Ok(Some(Some(absolute_now(dir, "persist.dir")?)))
        }
    }
}

/// A path given relative: relative to the working directory of this moment,
/// not of each later read or save (a process's later chdir() moved them),
/// and as Node's `path.resolve` gives it (`.` and `..` taken out, no
/// trailing separator), as `LocalFilesystem` holds its `basePath`. An empty
/// one is left as it is (its own checks refuse it where it is used).
fn absolute_now(path: String, name: &str) -> Checked<PathBuf> {
    if path.is_empty() {
        return Ok(PathBuf::from(path));
    }
    workspace_search_core::ingest::scan::resolve_from_cwd(&path).map_err(|e| Fail::Type(format!("{name}: {e}")))
}

/// `filesystem`: a `LocalFilesystem` (ours or Mastra's: anything with a
/// string `basePath`), and whether it is read-only. A resolver function
/// disables auto-indexing, as Mastra.
fn filesystem_base_path(v: &Unknown) -> Checked<(Option<PathBuf>, bool)> {
    if v.get_type()? == napi::ValueType::Function {
        return Ok((None, false));
    }
    let fs = to_object(v, "filesystem")?;
    let read_only = match prop(&fs, "readOnly")? {
        Some(r) => r.get_type()? == napi::ValueType::Boolean && to_bool(&r, "filesystem.readOnly")?,
        None => false,
    };
    match prop(&fs, "basePath")? {
        Some(b) => Ok((Some(absolute_now(to_string(&b, "filesystem.basePath")?, "filesystem.basePath")?), read_only)),
        None => Err(Fail::Type("filesystem must be a LocalFilesystem (an object with a string basePath)".into())),
    }
}

/// The three forms of `bm25`: `true`, `{ k1, b }`, `{ bm25: { k1, b }, tokenize }`;
/// a custom tokenizer and its `tokenizerId` come with them.
fn bm25_options<'e>(env: &Env, v: &Unknown<'e>) -> Checked<(Option<Bm25Options>, Option<JsFn<'e>>, Option<String>)> {
    match v.get_type()? {
        napi::ValueType::Boolean | napi::ValueType::Null => {
            if v.get_type()? == napi::ValueType::Null || !to_bool(v, "bm25")? {
                return Ok((None, None, None));
            }
            return Ok((
                Some(Bm25Options { params: Bm25Params::default(), tokenizer: TokenizerConfig::default() }),
                None,
                None,
            ));
        }
        napi::ValueType::Object if !v.is_array()? => {}
        _ => return Err(Fail::Type(format!("bm25 must be a boolean or an object, got {}", describe(v)))),
    }
    let o = to_object(v, "bm25")?;
    check_keys(&o, &["k1", "b", "bm25", "tokenize"], &[], "bm25")?;
    let mut params = Bm25Params::default();
    read_params(&o, "bm25", &mut params)?;
    if let Some(inner) = prop(&o, "bm25")? {
        let io = to_object(&inner, "bm25.bm25")?;
        check_keys(&io, &["k1", "b"], &[], "bm25.bm25")?;
        read_params(&io, "bm25.bm25", &mut params)?;
    }
    let (tokenizer, js, tokenizer_id) = match prop(&o, "tokenize")? {
        Some(t) => tokenize_options(env, &t)?,
        None => (TokenizerConfig::default(), None, None),
    };
    Ok((Some(Bm25Options { params, tokenizer }), js, tokenizer_id))
}

fn read_params(o: &Object, at: &str, p: &mut Bm25Params) -> Checked<()> {
    if let Some(k1) = prop(o, "k1")? {
        p.k1 = to_number(&k1, &format!("{at}.k1"))?;
        if p.k1 < 0.0 {
            return Err(Fail::Range(format!("{at}.k1 must be >= 0, got {}", p.k1)));
        }
    }
    if let Some(b) = prop(o, "b")? {
        p.b = to_number(&b, &format!("{at}.b"))?;
        if !(0.0..=1.0).contains(&p.b) {
            return Err(Fail::Range(format!("{at}.b must be between 0 and 1, got {}", p.b)));
        }
    }
    Ok(())
}

const TOKENIZE_KEYS: &[&str] = &[
    "preset",
    "lowercase",
    "removePunctuation",
    "minLength",
    "stopwords",
    "splitPattern",
    "tokenizer",
    "tokenizerId",
    "cjkBigrams",
    "foldDiacritics",
    "splitIdentifiers",
    "stem",
];

fn tokenize_options<'e>(env: &Env, v: &Unknown<'e>) -> Checked<(TokenizerConfig, Option<JsFn<'e>>, Option<String>)> {
    let o = to_object(v, "bm25.tokenize")?;
    check_keys(&o, TOKENIZE_KEYS, &[], "bm25.tokenize")?;
    let name = |k: &str| format!("bm25.tokenize.{k}");
    // A preset gives the starting point; the other keys adjust it.
    let mut c = match prop(&o, "preset")? {
        None => TokenizerConfig::default(),
        Some(p) => match to_string(&p, &name("preset"))?.as_str() {
            "default" => TokenizerConfig::default(),
            "mastra" => TokenizerConfig::mastra(),
            other => {
                return Err(Fail::Type(format!("{} must be 'default' or 'mastra', got '{other}'", name("preset"))))
            }
        },
    };
    adjust_tokenizer(env, &o, &mut c)?;
    let js = match prop(&o, "tokenizer")? {
        Some(f) => Some(to_function(&f, &name("tokenizer"))?),
        None => None,
    };
    let id = match prop(&o, "tokenizerId")? {
        Some(x) => Some(tokenizer_id(&x, js.is_some())?),
        None => None,
    };
    Ok((c, js, id))
}

/// `tokenizerId`: names a custom `tokenizer`, which must be given too.
fn tokenizer_id(x: &Unknown, with_tokenizer: bool) -> Checked<String> {
    let name = |k: &str| format!("bm25.tokenize.{k}");
    let id = to_string(x, &name("tokenizerId"))?;
    if id.is_empty() {
        return Err(Fail::Type(format!("{} must be a non-empty string", name("tokenizerId"))));
    }
    if !with_tokenizer {
        return Err(Fail::Type(format!(
            "{} names a custom tokenizer: give {} too",
            name("tokenizerId"),
            name("tokenizer")
        )));
    }
    Ok(id)
}

/// The tokenize options that adjust the preset's configuration.
fn adjust_tokenizer(env: &Env, o: &Object, c: &mut TokenizerConfig) -> Checked<()> {
    let name = |k: &str| format!("bm25.tokenize.{k}");
    if let Some(x) = prop(o, "lowercase")? {
        c.lowercase = to_bool(&x, &name("lowercase"))?;
    }
    if let Some(x) = prop(o, "removePunctuation")? {
        c.remove_punctuation = to_bool(&x, &name("removePunctuation"))?;
    }
    if let Some(x) = prop(o, "minLength")? {
        c.min_length = to_integer(&x, &name("minLength"), 0.0)? as usize;
    }
    if let Some(x) = prop(o, "stopwords")? {
        c.stopwords = stopwords(env, &x)?.into_iter().collect();
    }
    if let Some(x) = prop(o, "splitPattern")? {
        c.split = split_pattern(&x)?;
    }
    if let Some(x) = prop(o, "cjkBigrams")? {
        c.cjk_bigrams = to_bool(&x, &name("cjkBigrams"))?;
    }
    if let Some(x) = prop(o, "foldDiacritics")? {
        c.fold_diacritics = to_bool(&x, &name("foldDiacritics"))?;
    }
    if let Some(x) = prop(o, "splitIdentifiers")? {
        c.split_identifiers = to_bool(&x, &name("splitIdentifiers"))?;
    }
    if let Some(x) = prop(o, "stem")? {
        c.stem_english = match x.get_type()? {
            napi::ValueType::Boolean if !to_bool(&x, "stem")? => false,
            napi::ValueType::String if to_string(&x, "stem")? == "english" => true,
            _ => return Err(Fail::Type(format!("{} must be 'english' or false, got {}", name("stem"), describe(&x)))),
        };
    }
    Ok(())
}

/// `stopwords`: a `Set<string>` or an array of strings.
fn stopwords(env: &Env, v: &Unknown) -> Checked<Vec<String>> {
    let name = "bm25.tokenize.stopwords";
    if v.is_array()? {
        return to_string_array(v, name);
    }
    let values = runtime_fn(env, "setValues")?.call(*v)?;
    if is_nullish(&values) {
        return Err(Fail::Type(format!("{name} must be a Set or an array of strings, got {}", describe(v))));
    }
    to_string_array(&values, name)
}

/// `splitPattern`: a RegExp (or its source as a string), any JavaScript
/// pattern (look-around and back-references included; see SplitRule).
fn split_pattern(v: &Unknown) -> Checked<SplitRule> {
    let name = "bm25.tokenize.splitPattern";
    let (source, flags) = match v.get_type()? {
        napi::ValueType::String => {
            return SplitRule::literal(&to_string(v, name)?).map_err(|e| Fail::Type(format!("{name} {e}")))
        }
        napi::ValueType::Object => {
            let o = to_object(v, name)?;
            match (prop(&o, "source")?, prop(&o, "flags")?) {
                (Some(s), Some(f)) => (to_string(&s, name)?, to_string(&f, name)?),
                _ => return Err(Fail::Type(format!("{name} must be a RegExp or a string, got {}", describe(v)))),
            }
        }
        _ => return Err(Fail::Type(format!("{name} must be a RegExp or a string, got {}", describe(v)))),
    };
    SplitRule::from_js(&source, &flags).map_err(|e| Fail::Type(format!("{name} {e}")))
}

/// `search()` options, checked.
pub use workspace_search_core::engine::SearchOptions;

pub fn search_options(env: &Env, options: Option<Unknown>) -> Checked<SearchOptions> {
    let mut out = SearchOptions::default();
    let Some(options) = options.filter(|o| !is_nullish(o)) else { return Ok(out) };
    let o = to_object(&options, "search options")?;
    check_keys(
        &o,
        &["topK", "mode", "minScore", "vectorWeight", "filter", "fusion", "pathPrefix", "group"],
        &[],
        "search() options",
    )?;
    if let Some(v) = prop(&o, "group")? {
        out.group_by_file = match to_string(&v, "group")?.as_str() {
            "file" => true,
            "chunk" => false,
            other => return Err(Fail::Type(format!("group must be 'file' or 'chunk', got '{other}'"))),
        };
    }
    if let Some(v) = prop(&o, "pathPrefix")? {
        out.path_prefix = Some(to_name(&v, "pathPrefix")?);
    }
    if let Some(v) = prop(&o, "topK")? {
        out.top_k = to_integer(&v, "topK", 0.0)?.min(u32::MAX as f64) as usize;
    }
    if let Some(v) = prop(&o, "mode")? {
        out.mode = Some(to_string(&v, "mode")?.parse().map_err(|e| Fail::Type(format!("mode {e}")))?);
    }
    if let Some(v) = prop(&o, "minScore")? {
        out.min_score = Some(unit_interval(&v, "minScore")?);
    }
    if let Some(v) = prop(&o, "vectorWeight")? {
        out.vector_weight = unit_interval(&v, "vectorWeight")?;
    }
    if let Some(v) = prop(&o, "fusion")? {
        out.fusion = to_string(&v, "fusion")?.parse().map_err(|e| Fail::Type(format!("fusion {e}")))?;
    }
    if let Some(v) = prop(&o, "filter")? {
        let json = to_json(env, &v, "filter")?;
        out.filter = Some(Filter::parse(&json).map_err(|e| Fail::Type(format!("filter is invalid: {}", e.0)))?);
        out.filter_json = Some(json);
    }
    Ok(out)
}

fn unit_interval(v: &Unknown, name: &str) -> Checked<f64> {
    let n = to_number(v, name)?;
    if !(0.0..=1.0).contains(&n) {
        return Err(Fail::Range(format!("{name} must be between 0 and 1, got {n}")));
    }
    Ok(n)
}

/// A document path: a non-empty string.
pub fn doc_path(v: &Unknown, name: &str) -> Checked<String> {
    let p = to_name(v, name)?;
    if p.is_empty() {
        return Err(Fail::Type(format!("{name} must be a non-empty string")));
    }
    Ok(p)
}

/// `index()` options: stored metadata (`type`, `mimeType`, then the user's
/// own keys, as Mastra) and the start line.
pub fn index_options(env: &Env, options: Option<Unknown>, at: &str) -> Checked<DocFields> {
    let Some(options) = options.filter(|o| !is_nullish(o)) else { return Ok((None, None)) };
    let o = to_object(&options, at)?;
    check_keys(&o, &["type", "mimeType", "metadata", "startLineOffset"], &[], at)?;
    doc_fields(env, &o, at)
}

/// The optional fields shared by `index()` options and `indexMany()` items.
pub fn doc_fields(env: &Env, o: &Object, at: &str) -> Checked<DocFields> {
    let mut meta = serde_json::Map::new();
    if let Some(t) = prop(o, "type")? {
        let t = to_string(&t, &format!("{at}.type"))?;
        if !["text", "image", "file"].contains(&t.as_str()) {
            return Err(Fail::Type(format!("{at}.type must be 'text', 'image' or 'file', got '{t}'")));
        }
        meta.insert("type".into(), t.into());
    }
    if let Some(m) = prop(o, "mimeType")? {
        meta.insert("mimeType".into(), to_string(&m, &format!("{at}.mimeType"))?.into());
    }
    if let Some(m) = prop(o, "metadata")? {
        meta.extend(to_metadata(env, &m, &format!("{at}.metadata"))?);
    }
    let offset = match prop(o, "startLineOffset")? {
        Some(v) => {
            let name = format!("{at}.startLineOffset");
            let n = to_integer(&v, &name, 1.0)?;
            if n > f64::from(MAX_START_LINE) {
                return Err(Fail::Range(format!("{name} must be at most {MAX_START_LINE}, got {n}")));
            }
            Some(n as u32)
        }
        None => None,
    };
    Ok(((!meta.is_empty()).then_some(meta), offset))
}
