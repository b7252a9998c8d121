//! `grep()` over a workspace's `basePath`: core's `grep` run off the host's
//! thread against a state kept between calls (the trigram index, the walk
//! a folder watch keeps current), the index built in the background after
//! the first grep, and saved beside the snapshot with `persist`. The host
//! gives the folder watch (`host::GrepWatch`); everything else is here.

use super::error::Error;
use super::host::{GrepWatch, GrepWatchFactory};
use super::{blocking, Engine};
use crate::grep::{FileMatches, Grep, GrepRequest};
use parking_lot::Mutex;
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::sync::Arc;

/// Files per step of a background build: the grep state is locked only to
/// hand a step out and to keep its trigrams, and a step's trigram lists
/// stay small (2,000 files of code: a few MB).
const BUILD_STEP: usize = 2000;

/// What `stats().grep` reports.
#[derive(Debug, Clone, Default)]
pub struct GrepStats {
    pub files: usize,
    pub memory_bytes: usize,
    /// Files and folders the last grep could not read (skipped).
    pub unreadable: usize,
    /// Folders whose walk is kept and watched (0: each grep walks the disk).
    pub watched_folders: usize,
    /// The trigram index is being built in the background.
    pub building: bool,
    /// Files the last grep walked, and how many of them it read.
    pub last_searched: usize,
    pub last_read: usize,
}

/// Why a grep has no answer.
pub enum GrepFailure {
    /// The path asked for leads outside `basePath` (through a link): an
    /// invalid argument, not a failure of the grep.
    Outside(String),
    /// A file the pattern cannot be searched in as JavaScript would.
    Unanswerable {
        path: String,
        why: String,
    },
    /// The answer would hold more than `grep::search::MAX_ANSWER_BYTES`
    /// of lines: a range error of the arguments, not a failure.
    TooLarge(String),
    Other(Error),
}

impl From<Error> for GrepFailure {
    fn from(e: Error) -> Self {
        GrepFailure::Other(e)
    }
}

/// A workspace's grep: the index, the watch that keeps its walk, and the
/// figures of its last run.
pub struct GrepState {
    grep: Grep,
    last: GrepStats,
    /// `None` before the first grep, or after a watch failed (every grep
    /// then walks the disk).
    watch: Option<Box<dyn GrepWatch>>,
    watch_failed: bool,
}

impl GrepState {
    /// With `persist`, the index saved there by an earlier run (every file
    /// still checked against the disk before it is trusted).
    fn new(base: PathBuf, persist_dir: Option<&Path>) -> GrepState {
        let grep = persist_dir.and_then(|d| Grep::load(d, &base).ok()).unwrap_or_else(|| Grep::new(base));
        GrepState { grep, last: GrepStats::default(), watch: None, watch_failed: false }
    }

    fn stats(&self) -> GrepStats {
        let s = self.grep.stats();
        GrepStats {
            files: s.files,
            memory_bytes: s.memory_bytes,
            watched_folders: self.grep.kept_folders(),
            ..self.last.clone()
        }
    }

    fn run(&mut self, base: &Path, request: &GrepRequest, watches: &dyn GrepWatchFactory) -> crate::grep::GrepOutcome {
        if self.watch.is_none() && !self.watch_failed {
            self.watch = watches.watch(base);
            self.watch_failed = self.watch.is_none();
        }
        // A watch that cannot say it heard every change is given up: the disk is walked.
        if self.watch.as_mut().is_some_and(|w| !w.sync()) {
            self.watch = None;
            self.watch_failed = true;
        }
        let outcome = match self.watch.as_mut() {
            Some(w) => {
                let changes = w.take_changes();
                let out = self.grep.grep(request, Some((w.as_dir_watch(), changes)));
                if w.refused() {
                    // A watch limit: the kept walk cannot be trusted; walk the disk from now on.
                    self.watch = None;
                    self.watch_failed = true;
                }
                out
            }
            None => self.grep.grep(request, None),
        };
        (self.last.unreadable, self.last.last_searched, self.last.last_read) =
            (outcome.unreadable, outcome.searched, outcome.read);
        outcome
    }
}

/// The grep side of a workspace (the engine's `grep` field).
#[derive(Default)]
pub struct GrepSide {
    state: Arc<Mutex<Option<GrepState>>>,
    /// `stats().grep` as of the last grep or build step (a leaf lock:
    /// `stats()` never waits for a grep running).
    stats: Arc<Mutex<Option<GrepStats>>>,
}

impl GrepSide {
    pub fn stats(&self) -> Option<GrepStats> {
        self.stats.lock().clone()
    }

    /// At `destroy()`: a grep still running keeps its own reference until
    /// it is done; `keep` (with `persist`) leaves the index for the save.
    fn shut_down(&self, keep: bool) {
        if !keep {
            if let Some(mut g) = self.state.try_lock() {
                *g = None;
            }
        }
        *self.stats.lock() = None;
    }
}

impl Engine {
    /// Greps `basePath`; the first grep starts the index's background build.
    pub async fn grep(
        self: Arc<Self>,
        request: GrepRequest,
        strict: bool,
    ) -> std::result::Result<Vec<FileMatches>, GrepFailure> {
        let Some(base) = self.base_path.clone() else {
            return Err(Error::from_reason("grep() needs a filesystem with a basePath").into());
        };
        let path = request.path.clone();
        let me = self.clone();
        let (outcome, build) = blocking(move || {
            let persist_dir = me.persist.as_ref().and_then(|p| p.dir.clone());
            let mut state = me.grep.state.lock();
            let g = state.get_or_insert_with(|| GrepState::new(base.clone(), persist_dir.as_deref()));
            let outcome = g.run(&base, &request, me.grep_watches.as_ref());
            let build = g.grep.needs_build() && !g.last.building;
            g.last.building |= build;
            *me.grep.stats.lock() = Some(g.stats());
            (outcome, build)
        })
        .await?;
        if build {
            self.clone().build_grep_in_background();
        }
        if let Some((path, why)) = outcome.unanswerable {
            return Err(GrepFailure::Unanswerable { path, why });
        }
        if outcome.too_large {
            use crate::grep::search::{MAX_ANSWER_BYTES, MAX_ANSWER_LINES};
            let mb = MAX_ANSWER_BYTES >> 20;
            return Err(GrepFailure::TooLarge(format!(
                "grep(): the answer would hold more than {MAX_ANSWER_LINES} lines or {mb} MB of them (matched \
                 and context); narrow the pattern or the path, lower contextLines or maxCount, or ask for contextOnce: true"
            )));
        }
        let fail = |m: String| Err(GrepFailure::Other(Error::from_reason(m)));
        if outcome.outside {
            return Err(GrepFailure::Outside(format!("grep(): {path} leads outside basePath (through a link)")));
        }
        if outcome.not_found && path.is_empty() {
            return fail("grep(): basePath is not there (removed since?)".to_string());
        }
        if outcome.not_found {
            return fail(format!("grep(): no such file or folder in basePath: {path}"));
        }
        if strict && outcome.unreadable > 0 {
            let (n, under) =
                (outcome.unreadable, if path.is_empty() { "basePath".to_string() } else { format!("{path:?}") });
            return fail(format!("grep(): {n} file(s) or folder(s) could not be read under {under} (strict)"));
        }
        Ok(outcome.files)
    }

    /// Builds the trigram index after the first grep, off every thread a
    /// call waits on: the first grep itself only scans (as fast as a plain
    /// scan), and a workspace that greps once more finds the index ready.
    /// It stops when the workspace is destroyed.
    fn build_grep_in_background(self: Arc<Self>) {
        let Some(base) = self.base_path.clone() else { return };
        let runtime = self.runtime.clone();
        runtime.spawn(async move {
            // The state's lock is taken on the blocking thread only: a grep
            // running holds it, and a runtime thread must not wait for it.
            let _ = blocking(move || {
                self.build_grep_steps(&base);
                if let Some(g) = self.grep.state.lock().as_mut() {
                    g.last.building = false;
                    *self.grep.stats.lock() = Some(g.stats());
                }
            })
            .await;
        });
    }

    /// The background build's steps, until every file walked is indexed
    /// (or the workspace is destroyed, or its grep state dropped).
    fn build_grep_steps(&self, base: &Path) {
        while !self.destroyed.load(Ordering::SeqCst) {
            let todo = match self.grep.state.lock().as_mut() {
                Some(g) => g.grep.unindexed(BUILD_STEP),
                None => return,
            };
            if todo.is_empty() {
                return;
            }
            let built = Grep::build(base, todo);
            match self.grep.state.lock().as_mut() {
                Some(g) => {
                    g.grep.add_built(built);
                    *self.grep.stats.lock() = Some(g.stats());
                }
                None => return,
            }
        }
    }

    /// With `persist`: writes grep's index beside the snapshot if it changed
    /// since loaded or saved (at `save()` and `destroy()`). A workspace that
    /// never ran `init()` takes the directory's lock for it, and leaves the
    /// index unsaved when another process holds it.
    pub fn save_grep(&self) -> std::io::Result<()> {
        let Some((p, dir)) = self.persist.as_ref().and_then(|p| Some((p, p.dir.clone()?))) else { return Ok(()) };
        let mut state = self.grep.state.lock();
        let Some(g) = state.as_mut().filter(|g| g.grep.unsaved()) else { return Ok(()) };
        let _lock = if p.holds_lock() {
            if p.lost_lock(&dir) {
                return Ok(()); // (another workspace may write the directory now)
            }
            None
        } else {
            match crate::persist::disk::lock(&dir) {
                Ok(Ok(lock)) => Some(lock),
                _ => return Ok(()),
            }
        };
        let at = g.grep.changes();
        g.grep.save(&dir)?;
        g.grep.mark_saved(at);
        Ok(())
    }

    /// Drops grep's state (after its last save).
    pub(super) fn drop_grep(&self) {
        *self.grep.state.lock() = None;
    }

    pub(super) fn shut_down_grep(&self) {
        self.grep.shut_down(self.persist.as_ref().and_then(|p| p.dir.as_ref()).is_some());
    }
}
