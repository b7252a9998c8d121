//! `workspace.grep(pattern, options)`: options checked here, the grep run
//! by core's engine, results in the shape of Mastra's
//! `FilesystemGrepResult`; the OS's folder notifications that let a grep
//! walk its kept tree instead of the disk (`FolderWatch`, core's `GrepWatch`).

use crate::error::napi_error;
use crate::js::*;
use crate::promise::{js_error, raced};
use crate::workspace::Workspace;
use napi::bindgen_prelude::*;
use napi_derive::napi;
use notify::event::{AccessKind, AccessMode, ModifyKind};
use notify::{Event, EventKind, RecommendedWatcher, RecursiveMode, Watcher as _};
use parking_lot::Mutex;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use workspace_search_core::engine::host::{GrepWatch, GrepWatchFactory};
use workspace_search_core::engine::GrepFailure;
use workspace_search_core::grep::tree::{Changes, DirWatch};
use workspace_search_core::grep::{walk, FileMatches, GrepRequest, Matcher};
use workspace_search_core::text::js_regex::PatternError;

/// Marks the reason of an error that rejects with `UnsupportedGrepPatternError`.
const UNANSWERABLE: &str = "\u{0}unanswerable:";

/// Marks the reason of an error that rejects with a `RangeError`.
const TOO_LARGE: &str = "\u{0}too-large:";

/// One matching line, as Mastra's `FilesystemGrepMatch` (its TypeScript
/// type: the objects themselves are built by lib/runtime.js's `grepResults`).
#[allow(dead_code)]
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

/// A file's matches, as Mastra's `FilesystemGrepResult` (a TypeScript type, as above).
#[allow(dead_code)]
#[napi(object)]
pub struct GrepFileResult {
    /// Relative to `basePath`, POSIX separators.
    pub path: String,
    pub matches: Vec<GrepMatch>,
}

/// The OS's notifications for the folders of grep's kept walk, one folder
/// at a time (links not followed). Events only record what changed; the
/// next grep applies them. Idle, it costs a blocked thread and nothing else.
///
/// Notifications arrive on the watcher's own thread, a little after the
/// change: a grep right after a write could walk the tree before hearing
/// of it. So each grep first touches a file of its own in a private folder
/// watched by the same queue (`sync`, a "cookie" as Watchman's) and waits
/// for its event: every change made before the grep was then recorded.
struct FolderWatch {
    base: PathBuf,
    watcher: RecommendedWatcher,
    changes: Arc<Mutex<Changes>>,
    refused: bool,
    cookies: Cookies,
}

/// The private folder (under the system's temporary folder, removed when
/// the watch is dropped) and the cookies sent and heard.
struct Cookies {
    dir: PathBuf,
    /// The folder opened and locked while it is in use (Linux, where the
    /// sweep runs): the sweep of other processes passes it over even where
    /// its pid looks gone (a container that shares /tmp but not the
    /// process table).
    _in_use: Option<std::fs::File>,
    sent: u64,
    heard: Arc<(Mutex<u64>, parking_lot::Condvar)>,
}

impl Drop for Cookies {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Removes the cookie folders that processes which have ended left behind
/// (killed, or ended by `process.exit()`, which runs no destructor). Linux
/// only: there `/proc` says which processes run.
fn remove_folders_of_ended_processes() {
    #[cfg(target_os = "linux")]
    {
        let Ok(entries) = std::fs::read_dir(std::env::temp_dir()) else { return };
        for entry in entries.flatten() {
            let name = entry.file_name();
            let Some(rest) = name.to_str().and_then(|n| n.strip_prefix("workspace-search-grep-")) else { continue };
            let Some(pid) = rest.split('-').next().filter(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
            else {
                continue;
            };
            let ours = entry.metadata().is_ok_and(|m| m.is_dir());
            let ended = || !std::path::Path::new("/proc").join(pid).exists();
            if !ours || !ended() {
                continue;
            }
            // Held through the removal: no process takes the folder meanwhile.
            let unlocked = std::fs::File::open(entry.path()).ok().filter(|f| f.try_lock().is_ok());
            if unlocked.is_some() {
                let _ = std::fs::remove_dir_all(entry.path());
            }
        }
    }
}

/// How long a grep waits for its cookie before it walks the disk instead.
const COOKIE_WAIT: std::time::Duration = std::time::Duration::from_millis(500);

impl FolderWatch {
    fn new(base: PathBuf) -> Option<FolderWatch> {
        static FOLDERS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        static SWEPT: std::sync::Once = std::sync::Once::new();
        SWEPT.call_once(remove_folders_of_ended_processes);
        // A folder of that name left by a killed process of the same pid is
        // not ours: the next name is tried.
        let dir = (0..8).find_map(|_| {
            let n = FOLDERS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            let dir = std::env::temp_dir().join(format!("workspace-search-grep-{}-{n}", std::process::id()));
            std::fs::create_dir(&dir).ok().map(|()| dir)
        })?;
        // (Where a lock cannot be taken, the watch goes on without one.)
        let in_use = if cfg!(target_os = "linux") {
            std::fs::File::open(&dir).ok().filter(|f| f.try_lock().is_ok())
        } else {
            None
        };
        let cookies =
            Cookies { dir, _in_use: in_use, sent: 0, heard: Arc::new((Mutex::new(0), parking_lot::Condvar::new())) };
        let changes = Arc::new(Mutex::new(Changes::default()));
        let config = notify::Config::default().with_follow_symlinks(false);
        let handler = record(base.clone(), changes.clone(), cookies.dir.clone(), cookies.heard.clone());
        let mut watcher = RecommendedWatcher::new(handler, config).ok()?;
        watcher.watch(&cookies.dir, RecursiveMode::NonRecursive).ok()?;
        Some(FolderWatch { base, watcher, changes, refused: false, cookies })
    }

    /// Sends a cookie and waits until its event is heard (every earlier
    /// change is recorded by then); `false` when it was not heard in time.
    fn sync(&mut self) -> bool {
        let c = &mut self.cookies;
        c.sent += 1;
        let file = c.dir.join(c.sent.to_string());
        if std::fs::write(&file, b"").is_err() {
            return false;
        }
        let _ = std::fs::remove_file(&file);
        let (heard, woken) = &*c.heard;
        let mut heard = heard.lock();
        let deadline = std::time::Instant::now() + COOKIE_WAIT;
        while *heard < c.sent {
            if woken.wait_until(&mut heard, deadline).timed_out() {
                return *heard >= c.sent;
            }
        }
        true
    }
}

/// Grep's folder watches over `notify` (core's `GrepWatchFactory`).
pub struct NotifyGrepWatches;

impl GrepWatchFactory for NotifyGrepWatches {
    fn watch(&self, base: &Path) -> Option<Box<dyn GrepWatch>> {
        FolderWatch::new(base.to_path_buf()).map(|w| Box::new(w) as Box<dyn GrepWatch>)
    }
}

impl GrepWatch for FolderWatch {
    fn sync(&mut self) -> bool {
        FolderWatch::sync(self)
    }

    fn take_changes(&mut self) -> Changes {
        std::mem::take(&mut *self.changes.lock())
    }

    fn refused(&self) -> bool {
        self.refused
    }

    fn as_dir_watch(&mut self) -> &mut dyn DirWatch {
        self
    }
}

impl DirWatch for FolderWatch {
    fn watch(&mut self, rel: &str) -> bool {
        let ok = self.watcher.watch(&self.base.join(rel), RecursiveMode::NonRecursive).is_ok();
        self.refused |= !ok;
        ok
    }

    fn unwatch(&mut self, rel: &str) {
        let _ = self.watcher.unwatch(&self.base.join(rel));
    }
}

/// The notify handler: each event's paths, relative to `base`, as changed
/// files (content, time) or changed folders (an entry created, removed or
/// renamed: the folder holding it); a cookie's event, as heard.
fn record(
    base: PathBuf,
    changes: Arc<Mutex<Changes>>,
    cookie_dir: PathBuf,
    heard: Arc<(Mutex<u64>, parking_lot::Condvar)>,
) -> impl FnMut(notify::Result<Event>) + Send + 'static {
    move |result| {
        if let Ok(e) = &result {
            let cookie = e
                .paths
                .iter()
                .filter(|p| p.parent() == Some(cookie_dir.as_path()))
                .find_map(|p| p.file_name()?.to_str()?.parse::<u64>().ok());
            if let Some(n) = cookie {
                let (h, woken) = &*heard;
                let mut h = h.lock();
                *h = (*h).max(n);
                woken.notify_all();
                return;
            }
        }
        let mut c = changes.lock();
        let event = match result {
            Ok(e) if !e.need_rescan() => e,
            _ => return c.overflow = true,
        };
        let content = match event.kind {
            EventKind::Access(AccessKind::Close(AccessMode::Write)) => true,
            EventKind::Access(_) => return,
            EventKind::Modify(ModifyKind::Data(_) | ModifyKind::Metadata(_)) => true,
            _ => false,
        };
        for p in &event.paths {
            let Some(rel) = p.strip_prefix(&base).ok().and_then(|r| r.to_str()) else { continue };
            if content {
                c.files.insert(rel.to_string());
            } else {
                c.folders.insert(rel.rsplit_once('/').map_or("", |(parent, _)| parent).to_string());
                // A folder removed or renamed itself: listed again (and dropped) too.
                c.folders.insert(rel.to_string());
            }
        }
    }
}

/// `grep()` options, checked.
struct GrepArgs {
    request: GrepRequest,
    pattern: String,
    /// Reject when a file or folder cannot be read (else it is skipped).
    strict: bool,
}

const OPTION_KEYS: &[&str] =
    &["path", "contextLines", "maxCount", "caseSensitive", "includeHidden", "allFiles", "strict", "contextOnce"];

/// `grep()`'s options, checked, each at its default when not given.
struct GrepOptions {
    path: String,
    context: usize,
    max_count: Option<usize>,
    case_sensitive: bool,
    hidden: bool,
    all_files: bool,
    strict: bool,
    context_once: bool,
}

fn grep_options(options: Option<Unknown>) -> Checked<GrepOptions> {
    let mut out = GrepOptions {
        path: ".".to_string(),
        context: 0,
        max_count: None,
        case_sensitive: true,
        hidden: false,
        all_files: false,
        strict: false,
        context_once: false,
    };
    let Some(o) = options.filter(|o| !is_nullish(o)) else { return Ok(out) };
    let o = to_object(&o, "grep options")?;
    check_keys(&o, OPTION_KEYS, &[], "grep options")?;
    if let Some(v) = prop(&o, "path")? {
        out.path = to_string(&v, "path")?;
    }
    if let Some(v) = prop(&o, "contextLines")? {
        out.context = to_integer(&v, "contextLines", 0.0)?.min(10_000.0) as usize;
    }
    if let Some(v) = prop(&o, "maxCount")? {
        out.max_count = Some(to_integer(&v, "maxCount", 1.0)?.min(u32::MAX as f64) as usize);
    }
    let flags: [(&str, &mut bool); 5] = [
        ("caseSensitive", &mut out.case_sensitive),
        ("includeHidden", &mut out.hidden),
        ("allFiles", &mut out.all_files),
        ("strict", &mut out.strict),
        ("contextOnce", &mut out.context_once),
    ];
    for (name, flag) in flags {
        if let Some(v) = prop(&o, name)? {
            *flag = to_bool(&v, name)?;
        }
    }
    Ok(out)
}

fn grep_args(
    env: &Env,
    engine: &workspace_search_core::engine::Engine,
    pattern: &Unknown,
    options: Option<Unknown>,
) -> Checked<GrepArgs> {
    let workspace_id = engine.id.as_str();
    let pattern_value = pattern;
    let pattern = to_string(pattern, "pattern")?;
    let source = pattern.clone();
    let GrepOptions { path, context, max_count, case_sensitive, hidden, all_files, strict, context_once } =
        grep_options(options)?;
    check_grep_pattern(env, &pattern, case_sensitive)?;
    if let Some(escaped) = lone_surrogates(pattern_value, &source)? {
        // It would be read as U+FFFD and match something else: JavaScript matches it
        // against half of a character's pair, which UTF-8 text has no way to hold.
        return Err(Fail::UnsupportedGrep {
            message: format!("/{escaped}/ cannot run natively: it holds a lone UTF-16 surrogate"),
            workspace_id: workspace_id.to_string(),
        });
    }
    let matcher = Matcher::new(&pattern, case_sensitive).map_err(|PatternError::Unsupported { pattern, reason }| {
        Fail::UnsupportedGrep {
            message: format!("/{pattern}/ cannot run natively: {reason}"),
            workspace_id: workspace_id.to_string(),
        }
    })?;
    let (folder, glob) = workspace_search_core::grep::split_glob(&path, || engine.id_base()).map_err(Fail::Range)?;
    let text_extensions = (!all_files).then(|| walk::MASTRA_TEXT_EXTENSIONS.iter().map(|s| s.to_string()).collect());
    let request = GrepRequest {
        matcher,
        path: folder,
        include_hidden: hidden,
        max_count,
        context_lines: context,
        context_once,
        text_extensions,
        glob,
        answer: Default::default(),
    };
    Ok(GrepArgs { request, strict, pattern: source })
}

/// `grepResults`'s arguments: paths, match counts, per-match numbers, every line, their ends, context.
type GrepColumns = (Vec<String>, Uint32Array, Uint32Array, String, Uint32Array, bool);

/// Grep's answer, handed to JavaScript as one string of every line and a
/// few number arrays, which lib/runtime.js's `grepResults` turns into
/// Mastra's objects: a Node-API call per match and property took most of
/// the time of a grep with many matches.
pub struct GrepAnswer {
    files: Vec<FileMatches>,
    with_context: bool,
}

impl ToNapiValue for GrepAnswer {
    unsafe fn to_napi_value(env: napi::sys::napi_env, val: Self) -> Result<napi::sys::napi_value> {
        // A panic here would abort Node.js: it becomes a thrown error.
        guard(|| {
            let (mut paths, mut counts, mut nums, mut text, mut ends) =
                (Vec::new(), Vec::new(), Vec::new(), String::new(), Vec::new());
            let mut units = 0u32;
            let mut piece = |s: &str, text: &mut String, ends: &mut Vec<u32>| {
                text.push_str(s);
                units += s.encode_utf16().count() as u32;
                ends.push(units);
            };
            for f in val.files {
                counts.push(f.matches.len() as u32);
                paths.push(f.path);
                for m in f.matches {
                    nums.extend([m.line, m.column, m.before.len() as u32, m.after.len() as u32]);
                    for l in m.before.iter().chain(std::iter::once(&m.text)).chain(&m.after) {
                        piece(l, &mut text, &mut ends);
                    }
                }
            }
            let js = Env::from_raw(env);
            let make: Function<FnArgs<GrepColumns>, Unknown> = runtime_typed(&js, "grepResults")?;
            let args = (
                paths,
                Uint32Array::new(counts),
                Uint32Array::new(nums),
                text,
                Uint32Array::new(ends),
                val.with_context,
            );
            Ok(make.call(args.into())?.raw())
        })
    }
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
    ) -> Result<PromiseRaw<'e, GrepAnswer>> {
        guard(|| {
            let checked = (|| -> Checked<GrepArgs> {
                crate::error::check_ready(&self.engine)?;
                if self.engine.base_path.is_none() {
                    return Err(Fail::Plain("grep() needs a filesystem with a basePath".to_string()));
                }
                grep_args(env, &self.engine, &pattern, options)
            })();
            let args = match checked {
                Err(f) => return rejected(env, f),
                Ok(x) => x,
            };
            let with_context = args.request.context_lines > 0;
            let (source, id, engine) = (args.pattern.clone(), self.engine.id.clone(), self.engine.clone());
            let work = async move {
                match engine.grep(args.request, args.strict).await {
                    Ok(files) => Ok(GrepAnswer { files, with_context }),
                    Err(GrepFailure::Unanswerable { path, why }) => Err(Error::new(
                        Status::GenericFailure,
                        format!("{UNANSWERABLE}/{source}/ cannot run natively on {path}: {why}"),
                    )),
                    Err(GrepFailure::Outside(message)) => Err(Error::new(Status::InvalidArg, message)),
                    Err(GrepFailure::TooLarge(message)) => Err(Error::from_reason(format!("{TOO_LARGE}{message}"))),
                    Err(GrepFailure::Other(e)) => Err(napi_error(e)),
                }
            };
            env.spawn_future_with_callback(raced(self.engine.clone(), None, work), move |env, result| match result {
                Ok(v) => Ok(v),
                Err((e, _)) if e.reason.starts_with(TOO_LARGE) => {
                    Err(Fail::Range(e.reason[TOO_LARGE.len()..].to_string()).throw(env))
                }
                Err((e, _)) if e.reason.starts_with(UNANSWERABLE) => {
                    let message = e.reason[UNANSWERABLE.len()..].to_string();
                    Err(Fail::UnsupportedGrep { message, workspace_id: id }.throw(env))
                }
                Err((e, status)) => Err(js_error(env, e, status, &id)),
            })
        })
    }
}
