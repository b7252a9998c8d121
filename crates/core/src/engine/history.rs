//! What a git work tree says beside its files: the history of each file
//! (core's `ingest::history` and `search::history`), read after `init()`
//! and `rebuildSearchIndex()` and again in the background when a search
//! finds that `HEAD` moved (a commit, a branch switch; checked at most
//! every `CHECK_EVERY`, never while idle); and the linguist attributes of
//! the root's `.gitattributes` over file kinds, read with every walk of
//! the tree.

use super::{blocking, Engine, Keyword};
use crate::index::id_base::IdBase;
use crate::ingest::attributes::read_kind_rules;
use crate::ingest::history::{read_file_messages, version_at};
use crate::ingest::{Report, SkipReason, Skipped};
use crate::search::history::FileHistory;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

const CHECK_EVERY: Duration = Duration::from_secs(2);

/// How long `init()` waits for the history: a read past it goes on in the
/// background and is used once done, so that a huge history, or a special
/// file in `.git` that `repository`'s checks do not look at (a loose
/// object that is a FIFO), never holds `init()`.
const HISTORY_WAIT: Duration = Duration::from_secs(20);

/// A read older than this is taken for blocked for good (a FIFO in
/// `.git`): another may start. Not `HISTORY_WAIT`: a read of a wide tree
/// past 20 s was replaced by the next search's before it could land, for
/// as long as searches came.
const READ_STUCK: Duration = Duration::from_secs(120);

/// Reads that may run at once: one stuck for good (a FIFO among the
/// objects) and one more; then none starts until one ends. Each stuck one
/// holds a blocking thread: one more every `READ_STUCK` exhausted the
/// runtime's threads after hours.
const MAX_READS_RUNNING: usize = 2;

#[derive(Default)]
pub struct HistoryState {
    pub current: Option<Arc<FileHistory>>,
    checked: Option<Instant>,
    /// When the read under way began: another starts only once it is older
    /// than `READ_STUCK` (one blocked for good does not stop them).
    reading_since: Option<Instant>,
    /// Reads begun and not ended (`MAX_READS_RUNNING`).
    running: usize,
    /// Bumped by every read that starts.
    generation: u64,
    /// The read whose answer is in place: an older one that finishes later
    /// does not replace it; a newer one does, though it finishes first.
    installed: u64,
    /// Told when a read settles the state (`refresh_history_for_init`
    /// waits for one under way).
    settled: Arc<tokio::sync::Notify>,
}

impl HistoryState {
    fn read_under_way(&self) -> bool {
        self.reading_since.is_some_and(|t| t.elapsed() < READ_STUCK)
    }

    /// Whether no read may start: as many run as may, stuck.
    fn reads_stuck(&self) -> bool {
        self.running >= MAX_READS_RUNNING
    }

    /// Marks a read as begun, under the same lock as its generation: an
    /// older read that ends in between then never takes the new one's
    /// mark away.
    fn begin_read(&mut self) -> u64 {
        self.reading_since = Some(Instant::now());
        self.running += 1;
        self.generation += 1;
        self.generation
    }
}

impl Engine {
    /// The root whose history counts: `basePath`, with `gitHistory` on and
    /// the Rust tokenizer (a JavaScript one would tokenize off the thread
    /// that reads the history; documented with `gitHistory`).
    fn history_root(&self) -> Option<(PathBuf, Arc<crate::analysis::tokenizer::Tokenizer>)> {
        match (&self.keyword, &self.base_path) {
            (Some(Keyword { tokenizer, js: None }), Some(base)) if self.git_history => {
                Some((base.clone(), tokenizer.clone()))
            }
            _ => None,
        }
    }

    /// `refresh_history` for `init()`: waited for at most `HISTORY_WAIT`.
    /// One read at a time: a read under way (a search's, begun before
    /// `HEAD` moved perhaps) is waited for first, and this one then reads
    /// `HEAD` as it is now.
    pub async fn refresh_history_for_init(self: &Arc<Self>) {
        if self.history_root().is_none() {
            return;
        }
        let deadline = tokio::time::Instant::now() + HISTORY_WAIT;
        let generation = loop {
            let settled = match self.start_read_or_wait() {
                Ok(Some(generation)) => break generation,
                Ok(None) => return, // the history stays as it is
                Err(settled) => settled,
            };
            let notified = settled.notified();
            let mut notified = std::pin::pin!(notified);
            // Listening before looking again: a read that settles in
            // between is not missed.
            notified.as_mut().enable();
            if self.history.lock().read_under_way() && tokio::time::timeout_at(deadline, notified).await.is_err() {
                return; // one blocked past the wait settles the state when done
            }
            if self.is_destroyed() {
                return; // (no read of ours is needed any more)
            }
        };
        let me = self.clone();
        let read = self.runtime.spawn(async move { me.refresh_history(generation).await });
        let _ = tokio::time::timeout_at(deadline, read).await;
    }

    /// `refresh_history` in the background (documents from `index()`
    /// only: `init()` has no files to read beside it, and does not wait).
    pub fn refresh_history_in_background(self: &Arc<Self>) {
        if self.history_root().is_none() {
            return;
        }
        if let Ok(Some(generation)) = self.start_read_or_wait() {
            let me = self.clone();
            self.runtime.spawn(async move { me.refresh_history(generation).await });
        }
    }

    /// Marks a read as begun (its generation) unless one is under way
    /// (then what tells when it settles) or reads are stuck (`None`).
    fn start_read_or_wait(&self) -> std::result::Result<Option<u64>, Arc<tokio::sync::Notify>> {
        let mut state = self.history.lock();
        if state.read_under_way() {
            return Err(state.settled.clone());
        }
        Ok((!state.reads_stuck()).then(|| state.begin_read()))
    }

    /// Reads the history again unless it is at the version it was read at
    /// (`HEAD`, the shallow boundary and the packs where they were);
    /// `generation`: the read's, marked begun by the caller.
    pub async fn refresh_history(self: &Arc<Self>, generation: u64) {
        let Some((root, tokenizer)) = self.history_root() else {
            self.history.lock().running -= 1;
            return;
        };
        let known = self.history.lock().current.as_ref().map(|h| h.version.clone());
        let me = self.clone();
        let built = blocking(move || {
            if known.is_some() && version_at(&root) == known {
                return None;
            }
            let history = |m| Arc::new(FileHistory::build(&m, &tokenizer).under(me.id_base()));
            Some(read_file_messages(&root).map(history))
        })
        .await;
        let mut state = self.history.lock();
        state.running -= 1;
        if state.generation == generation {
            // The latest read settles the state (a later one would).
            state.reading_since = None;
            state.settled.notify_waiters();
        }
        if self.destroyed.load(std::sync::atomic::Ordering::SeqCst) {
            state.current = None;
            return;
        }
        if generation < state.installed {
            return; // a later read's answer is in place
        }
        state.installed = generation;
        if let Ok(Some(h)) = built {
            state.current = h;
        }
        state.checked = Some(Instant::now());
    }

    /// Reads the root's `.gitattributes` and has the index follow its rules
    /// and basePath's spellings now (on a blocking thread: new rules derive
    /// every document's kind again under the write lock). Rules not
    /// applied (a file too large, too many) are noted in `report`.
    pub async fn refresh_path_rules(self: &Arc<Self>, report: &mut Report) {
        let Some(base) = self.base_path.clone().filter(|_| self.keyword.is_some()) else { return };
        let me = self.clone();
        let not_applied = blocking(move || {
            let (rules, not_applied) = read_kind_rules(&base);
            let id_base = me.id_base();
            me.index.write().set_path_rules(id_base, rules);
            not_applied
        })
        .await;
        if let Ok(Some(why)) = not_applied {
            report.skipped.push(Skipped { path: ".gitattributes".into(), reason: SkipReason::Unreadable(why) });
        }
    }

    /// basePath as the ids of files found through an absolute entry spell
    /// it: as given, and canonical (where it exists now).
    pub fn id_base(&self) -> IdBase {
        super::config::id_base_of(self.base_path.as_deref())
    }

    /// The history a search uses now; starts a background check when the
    /// last one is older than `CHECK_EVERY`.
    pub fn history_for_search(self: &Arc<Self>) -> Option<Arc<FileHistory>> {
        let mut state = self.history.lock();
        let due = state.checked.is_some_and(|t| t.elapsed() >= CHECK_EVERY);
        let free = !state.read_under_way() && !state.reads_stuck();
        if due && free && !self.destroyed.load(std::sync::atomic::Ordering::SeqCst) {
            let generation = state.begin_read();
            let me = self.clone();
            self.runtime.spawn(async move { me.refresh_history(generation).await });
        }
        state.current.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_stuck_for_good_stop_new_ones_at_the_bound() {
        let mut state = HistoryState::default();
        state.begin_read();
        // Stuck past the wait: another may start, beside it.
        state.reading_since = Some(Instant::now() - READ_STUCK - Duration::from_secs(1));
        assert!(!state.read_under_way() && !state.reads_stuck());
        state.begin_read();
        state.reading_since = Some(Instant::now() - READ_STUCK - Duration::from_secs(1));
        // Two stuck: a third would be one more thread blocked for good.
        assert!(!state.read_under_way() && state.reads_stuck());
        state.running -= 1; // one ended
        assert!(!state.reads_stuck());
    }
}
