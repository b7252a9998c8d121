//! `watch: true`: the OS's notifications (the `notify` crate, links not
//! followed) as core's `TreeWatch`: each event becomes a signal for core's
//! engine, which gathers the bursts and applies them (`engine::watch`).

use notify::event::{AccessKind, AccessMode, ModifyKind, RenameMode};
use notify::{Event, EventKind, RecommendedWatcher, RecursiveMode, Watcher as _};
use std::path::{Path, PathBuf};
use tokio::sync::mpsc::UnboundedSender;
use workspace_search_core::engine::host::{TreeWatch, TreeWatchFactory, WatchRefusal, WatchSignal as Signal};
use workspace_search_core::ingest::watch::{changes_rules, concerns, WatchRoot};

/// File watches over `notify` (core's `TreeWatchFactory`).
pub struct NotifyTreeWatches;

struct NotifyTreeWatch(RecommendedWatcher);

impl TreeWatchFactory for NotifyTreeWatches {
    fn start(
        &self,
        roots: Vec<WatchRoot>,
        base: PathBuf,
        skip: Option<PathBuf>,
        signals: UnboundedSender<Signal>,
    ) -> Result<Box<dyn TreeWatch>, String> {
        // Links are not followed: the scan reads nothing through them either.
        let config = notify::Config::default().with_follow_symlinks(false);
        let watcher =
            RecommendedWatcher::new(handler(signals, roots, base, skip), config).map_err(|e| e.to_string())?;
        Ok(Box::new(NotifyTreeWatch(watcher)))
    }

    fn per_folder(&self) -> bool {
        // inotify watches one folder per watch (a recursive watch is one per
        // folder below, ignored ones too); FSEvents and Windows watch a tree
        // with one handle, where a watch per folder would cost more.
        RecommendedWatcher::kind() == notify::WatcherKind::Inotify
    }
}

impl TreeWatch for NotifyTreeWatch {
    fn watch(&mut self, dir: &Path, recursive: bool) -> Result<(), WatchRefusal> {
        let mode = if recursive { RecursiveMode::Recursive } else { RecursiveMode::NonRecursive };
        self.0.watch(dir, mode).map_err(|e| WatchRefusal {
            limit: matches!(e.kind, notify::ErrorKind::MaxFilesWatch),
            message: e.to_string(),
        })
    }

    fn unwatch(&mut self, dir: &Path) {
        let _ = self.0.unwatch(dir);
    }
}

/// Whether an event says something changed: opening, reading and closing
/// a file unwritten change nothing (the scan itself opens directories).
fn is_change(kind: &EventKind) -> bool {
    match kind {
        EventKind::Access(AccessKind::Close(AccessMode::Write)) => true,
        EventKind::Access(_) => false,
        _ => true,
    }
}

/// Whether the event removes or renames away the watched directory `root`
/// or a folder above it.
fn loses_root(event: &Event, root: &Path) -> bool {
    let away = matches!(
        event.kind,
        EventKind::Remove(_)
            | EventKind::Modify(ModifyKind::Name(RenameMode::From | RenameMode::Any | RenameMode::Both))
    );
    away && event.paths.iter().any(|p| root.starts_with(p))
}

/// The handler run on the watcher's thread: events become signals.
fn handler(
    tx: UnboundedSender<Signal>,
    roots: Vec<WatchRoot>,
    base: PathBuf,
    skip: Option<PathBuf>,
) -> impl FnMut(notify::Result<Event>) + Send + 'static {
    move |result| {
        // (A test holds this thread once, so that the system's queue of
        // events overflows behind it: __test__/watch-quiet.test.mjs.)
        workspace_search_core::engine::test_pause_once("watch-event");
        let event = match result {
            Ok(event) => event,
            Err(e) => {
                let limit = matches!(e.kind, notify::ErrorKind::MaxFilesWatch);
                let _ = tx.send(Signal::Failed { message: e.to_string(), limit });
                return;
            }
        };
        if event.need_rescan() {
            let _ = tx.send(Signal::Rescan);
            return;
        }
        if !is_change(&event.kind) {
            return;
        }
        for r in roots.iter().filter(|r| loses_root(&event, &r.dir)) {
            let _ = tx.send(Signal::RootLost(r.dir.clone()));
        }
        // Other rules for the walk: the tree is walked again as a whole.
        if event
            .paths
            .iter()
            .any(|p| changes_rules(p) && p.starts_with(&base) && !skip.as_deref().is_some_and(|s| p.starts_with(s)))
        {
            let _ = tx.send(Signal::Rules);
            return;
        }
        // A rename's first path is where it came from (`Both`: from, to).
        let first_removed = matches!(
            event.kind,
            EventKind::Remove(_) | EventKind::Modify(ModifyKind::Name(RenameMode::From | RenameMode::Both))
        );
        for (i, p) in event.paths.into_iter().enumerate() {
            if concerns(&p, &roots, skip.as_deref()) {
                let _ = tx.send(if i == 0 && first_removed { Signal::Removed(p) } else { Signal::Changed(p) });
            }
        }
    }
}
