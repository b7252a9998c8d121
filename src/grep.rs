//! `workspace.grep(pattern, options)`: options checked here, the grep run
//! by core's `grep` off the JavaScript thread, results in the shape of
//! Mastra's `FilesystemGrepResult`.

use crate::engine::blocking;
use crate::js::*;
use crate::promise::spawn;
use crate::workspace::Workspace;
use napi::bindgen_prelude::*;
use napi_derive::napi;
use workspace_search_core::grep::js_regex::PatternError;
use workspace_search_core::grep::{walk, FileMatches, Grep, GrepRequest, Matcher};

/// One matching line, as Mastra's `FilesystemGrepMatch`.
#[napi(object)]
pub struct GrepMatch {
    /// 1-based line number.
    pub line: u32,
    /// 0-based UTF-16 index of the match in the line (Mastra prints it + 1).
    pub column: u32,
    /// The whole line, without its line feed.
    pub text: String,
    /// Up to `contextLines` lines before (present when `contextLines` > 0).
    pub before: Option<Vec<String>>,
    /// Up to `contextLines` lines after (present when `contextLines` > 0).
    pub after: Option<Vec<String>>,
}

/// A file's matches, as Mastra's `FilesystemGrepResult`.
#[napi(object)]
pub struct GrepFileResult {
    /// Relative to `basePath`, POSIX separators.
    pub path: String,
    pub matches: Vec<GrepMatch>,
}

/// A workspace's grep index, and how many paths its last grep could not read.
pub struct GrepState {
    pub grep: Grep,
    pub last_unreadable: usize,
}

/// `grep()` options, checked.
struct GrepArgs {
    request: GrepRequest,
    /// Reject when a file or folder cannot be read (else it is skipped).
    strict: bool,
}

const OPTION_KEYS: &[&str] =
    &["path", "contextLines", "maxCount", "caseSensitive", "includeHidden", "allFiles", "strict"];

fn grep_args(env: &Env, workspace_id: &str, pattern: &Unknown, options: Option<Unknown>) -> Checked<GrepArgs> {
    let pattern = to_string(pattern, "pattern")?;
    let (mut path, mut context, mut max_count, mut case_sensitive, mut hidden, mut all_files, mut strict) =
        (".".to_string(), 0usize, None, true, false, false, false);
    if let Some(o) = options.filter(|o| !is_nullish(o)) {
        let o = to_object(&o, "grep options")?;
        check_keys(&o, OPTION_KEYS, &[], "grep options")?;
        if let Some(v) = prop(&o, "path")? {
            path = to_string(&v, "path")?;
        }
        if let Some(v) = prop(&o, "contextLines")? {
            context = to_integer(&v, "contextLines", 0.0)?.min(10_000.0) as usize;
        }
        if let Some(v) = prop(&o, "maxCount")? {
            max_count = Some(to_integer(&v, "maxCount", 1.0)?.min(u32::MAX as f64) as usize);
        }
        if let Some(v) = prop(&o, "caseSensitive")? {
            case_sensitive = to_bool(&v, "caseSensitive")?;
        }
        if let Some(v) = prop(&o, "includeHidden")? {
            hidden = to_bool(&v, "includeHidden")?;
        }
        if let Some(v) = prop(&o, "allFiles")? {
            all_files = to_bool(&v, "allFiles")?;
        }
        if let Some(v) = prop(&o, "strict")? {
            strict = to_bool(&v, "strict")?;
        }
    }
    check_grep_pattern(env, &pattern, case_sensitive)?;
    let matcher = Matcher::new(&pattern, case_sensitive).map_err(|PatternError::Unsupported { pattern, reason }| {
        Fail::UnsupportedGrep {
            message: format!("/{pattern}/ cannot run natively: {reason}"),
            workspace_id: workspace_id.to_string(),
        }
    })?;
    let (folder, glob) = workspace_search_core::grep::split_glob(&path).map_err(Fail::Range)?;
    let text_extensions = (!all_files).then(|| walk::MASTRA_TEXT_EXTENSIONS.iter().map(|s| s.to_string()).collect());
    let request = GrepRequest {
        matcher,
        path: folder,
        include_hidden: hidden,
        max_count,
        context_lines: context,
        text_extensions,
        glob,
    };
    Ok(GrepArgs { request, strict })
}

fn to_results(files: Vec<FileMatches>, with_context: bool) -> Vec<GrepFileResult> {
    files
        .into_iter()
        .map(|f| GrepFileResult {
            path: f.path,
            matches: f
                .matches
                .into_iter()
                .map(|m| GrepMatch {
                    line: m.line,
                    column: m.column,
                    text: m.text,
                    before: with_context.then_some(m.before),
                    after: with_context.then_some(m.after),
                })
                .collect(),
        })
        .collect()
}

#[napi]
impl Workspace {
    /// Lines of the files under `basePath` that match a JavaScript regex,
    /// found as Mastra's grep tool finds them (its walk, its matching).
    #[napi(ts_args_type = "pattern: string, options?: GrepOptions", ts_return_type = "Promise<GrepFileResult[]>")]
    pub fn grep<'e>(
        &self,
        env: &'e Env,
        pattern: Unknown,
        options: Option<Unknown>,
    ) -> Result<PromiseRaw<'e, Vec<GrepFileResult>>> {
        guard(|| {
            let inner = &self.inner;
            let checked = (|| -> Checked<(GrepArgs, std::path::PathBuf)> {
                inner.check_ready()?;
                let Some(base) = inner.base_path.clone() else {
                    return Err(Fail::Plain("grep() needs a filesystem with a basePath".to_string()));
                };
                Ok((grep_args(env, &inner.id, &pattern, options)?, base))
            })();
            let (args, base) = match checked {
                Err(f) => return rejected(env, f),
                Ok(x) => x,
            };
            let state = inner.grep.clone();
            let (with_context, strict, path) = (args.request.context_lines > 0, args.strict, args.request.path.clone());
            spawn(env, inner, async move {
                let outcome = blocking(move || {
                    let mut state = state.lock();
                    let grep = state.get_or_insert_with(|| GrepState { grep: Grep::new(base), last_unreadable: 0 });
                    let outcome = grep.grep.grep(&args.request);
                    grep.last_unreadable = outcome.unreadable;
                    outcome
                })
                .await?;
                if outcome.not_found {
                    return Err(Error::from_reason(format!("grep(): no such file or folder in basePath: {path}")));
                }
                if strict && outcome.unreadable > 0 {
                    return Err(Error::from_reason(format!(
                        "grep(): {} file(s) or folder(s) could not be read under {path:?} (strict)",
                        outcome.unreadable
                    )));
                }
                Ok(to_results(outcome.files, with_context))
            })
        })
    }
}
