//! `init()` with `persist`: the snapshot is loaded (once), the tree is
//! walked, and only files whose size or modification time changed are read
//! again; of those, only the ones whose content changed are indexed and
//! embedded again (chunk by chunk: a chunk whose text the store already
//! holds is not embedded). Files gone lose their documents and vectors.
//! Without a usable snapshot it is a full build, recorded for next time.

use super::error::Result;
use super::Outcome;
use super::{blocking, Engine};
use crate::index::gate::Ticket;
use crate::index::Bm25Index;
use crate::ingest::scan::FoundFile;
use crate::ingest::{Failed, Report, SkipReason, Skipped};
use crate::persist::{
    apply_changes, fingerprint_difference, now_ns, same_vectors, FileCounts, FileTable, Reconcile, Snapshot,
    VectorState,
};
use crate::vectors::plan::dropped_sources;
use std::sync::Arc;
use std::time::Instant;

/// An install of at least this many documents gives the memory it freed
/// back at once (`install`).
const RELEASE_AFTER_DOCUMENTS: usize = 16_384;

/// A walk of the indexed paths: what it found and skipped, and when it began.
pub(super) struct Walked {
    report: Report,
    found: Vec<FoundFile>,
    scanned_at: i128,
}

impl Engine {
    pub(super) async fn rebuild_persisted(self: Arc<Self>, ticket: Ticket, paths: Vec<String>) -> Result<Outcome> {
        self.turn(&ticket).await?;
        let mut warnings = Vec::new();
        // Watching from before the walk: a file changed after the walk read
        // it is an event, applied once this call is done (its turn is next).
        // A large first build's reads overflow the system's queue of events:
        // the tree is then reconciled once after this call (a walk).
        let before = self.watched_paths();
        // (`[]` keeps the index, and the watcher on the paths it follows.)
        if self.watch && !paths.is_empty() {
            warnings.extend(self.start_watching_off_runtime(paths.clone()).await?);
        }
        let out = self.clone().load_and_reconcile(&ticket, paths, warnings).await;
        if out.is_err() && self.watched_paths() != before {
            // In this call's turn still: a failed call leaves the watcher as
            // it found it (none, or the one on the paths before).
            self.stop_watching();
            if let Some(before) = before {
                let _ = self.start_watching_off_runtime(before).await;
            }
        }
        drop(ticket);
        out
    }

    /// `rebuild_persisted`'s work, in its turn: the snapshot loaded beside
    /// the walk, then the index brought up to date with the files.
    async fn load_and_reconcile(
        self: Arc<Self>,
        ticket: &Ticket,
        paths: Vec<String>,
        mut warnings: Vec<String>,
    ) -> Result<Outcome> {
        let started = Instant::now();
        // The walk runs beside the snapshot's loading: neither needs the other.
        let (opened, walked, ()) = futures::join!(
            self.open_snapshot(&mut warnings),
            self.clone().walk(paths),
            self.refresh_history_for_init()
        );
        // Nothing to walk (no paths, no filesystem) keeps what a loaded
        // snapshot recorded as it was saved: an index built elsewhere and
        // attached (a tenant's, from a snapshot store) is used as built.
        if let Some(snapshot) = opened? {
            self.install(snapshot, &mut warnings).await?;
            if let Some(p) = &self.persist {
                Self::attached(p);
            }
        }
        // (Before an index is dropped: a walk that failed leaves it as it is.)
        let walked = walked?;
        self.drop_unreadable_postings(ticket, &mut warnings).await?;
        let embedded_at_recovery = self.recover_intents(&mut warnings).await;
        let saves = self.persist.as_ref().is_some_and(|p| p.dir.is_some() || p.remote.is_some());
        if let Some(v) = self.vectors.as_ref().filter(|_| saves) {
            // Known now, so that the next save records it (`watch` alone saves nothing: no canary).
            if let Err(e) = self.embedder_identity(v).await {
                warnings
                    .push(format!("persist: the embedder could not be checked ({}); no vector is reused", e.reason));
            }
        }
        let (mut report, counts, embedded, fresh) = self.clone().reconcile(ticket, walked, false).await?;
        let embedded_at_load = self.embed_unwritten(&mut report.failed).await?;
        if let Some(remote) = self.remote() {
            // Built again if it was dropped (a full build lowered this as it
            // went in); or nothing to build it from: it stays empty, as asked.
            remote.set_emptied(false);
        }
        if fresh || (counts.reused == 0 && counts.reread > 0 && counts.worth_saving()) {
            // A full build is on disk when init() resolves: redoing it costs a full build.
            if let Err(e) = self.save(false).await {
                warnings.push(e.reason.clone());
            }
        } else {
            // An update is saved a second later, as writes are: a process that
            // ends first only reads those files again at its next start.
            self.save_soon_if_changed();
        }
        let mut out = Outcome::of(report, started);
        (out.embedded, out.reused, out.reread, out.removed) =
            (embedded + embedded_at_load + embedded_at_recovery, counts.reused, counts.reread, counts.removed);
        out.warnings = warnings;
        Ok(out)
    }

    /// An index whose postings a snapshot store was found to hold broken
    /// (`rebuildSearchIndex()` after a search said so) is dropped with the
    /// file table, so that `reconcile` builds it all again from the files.
    async fn drop_unreadable_postings(self: &Arc<Self>, ticket: &Ticket, warnings: &mut Vec<String>) -> Result<()> {
        let broken = self.remote().is_some_and(|r| r.parts_broken());
        let unread = self.read_index(|index| index.postings_pending() || index.damaged().is_some());
        if !broken || !unread.await? {
            return Ok(());
        }
        // Before the index is emptied: no search answers from it meanwhile.
        if let Some(remote) = self.remote() {
            remote.set_emptied(true);
        }
        let (me, seq) = (self.clone(), ticket.seq());
        blocking(move || {
            // Lock order (docs/architecture.md): the index, then the file state.
            let mut index = me.index.write();
            index.clear(seq);
            if let Some(p) = &me.persist {
                p.state.lock().files.clear();
            }
        })
        .await?;
        warnings.push(
            "persist.store: the index's postings in the store are not whole; the index was rebuilt from the files"
                .into(),
        );
        Ok(())
    }

    /// The files of `paths` as they are now (`None`: nothing to index).
    pub(super) async fn walk(self: Arc<Self>, paths: Vec<String>) -> Result<Option<Walked>> {
        let Some(base) = self.base_path.clone().filter(|_| self.has_search() && !paths.is_empty()) else {
            return Ok(None);
        };
        // Taken before the walk: a file changed during it is read again next time.
        let scanned_at = now_ns();
        let (report, found) = self.scan_files(base, paths, Vec::new()).await?;
        Ok(Some(Walked { report, found, scanned_at }))
    }

    /// Brings the index up to date with the `walked` files (in turn): a
    /// full build when nothing is recorded yet (`true` with the counts),
    /// else only what changed. `by_watcher`: only file changes count, so a
    /// file the API removed stays out while its content is unchanged.
    pub(super) async fn reconcile(
        self: Arc<Self>,
        ticket: &Ticket,
        walked: Option<Walked>,
        by_watcher: bool,
    ) -> Result<(Report, FileCounts, usize, bool)> {
        let mut counts = FileCounts::default();
        let Some(Walked { mut report, found, scanned_at }) = walked else {
            return Ok((Report::default(), counts, 0, false));
        };
        if let Some(p) = self.persist.as_ref().filter(|_| self.watch) {
            let dangling = self.unread_links(&report);
            p.state.lock().located.replace_all(&found, &dangling);
        }
        let fresh = self.persist.as_ref().is_some_and(|p| p.state.lock().files.is_empty())
            && self.read_index(|index| index.is_empty()).await?;
        let embedded = if fresh {
            self.clone().build_recorded(ticket, found, &mut report, &mut counts).await?
        } else {
            self.clone().update(ticket, found, scanned_at, &mut report, &mut counts, by_watcher).await?
        };
        if let Some(p) = &self.persist {
            p.state.lock().files.scanned_at = scanned_at;
            // (Files read again and found as recorded, still in doubt: dated
            // ahead of the clock. Saving them again would not spare a read.)
            if fresh || counts.worth_saving() {
                p.changed();
            }
        }
        self.refresh_path_rules(&mut report).await;
        Ok((report, counts, embedded, fresh))
    }

    /// Puts a usable snapshot in place: the index and the file table, and
    /// the vectors when the embedder and the vectors' index and store are
    /// the same. Otherwise (none saved, another embedder, another place):
    /// when every document is a file's (or without a keyword index, which
    /// keeps the texts), nothing is put in place and the files are read and
    /// embedded again; else the index is put in place and `embed_unwritten`
    /// embeds its texts again. An embedder that cannot be checked (it
    /// threw) fails this call with what it threw, and nothing is put in
    /// place.
    async fn install(self: &Arc<Self>, snapshot: Snapshot, warnings: &mut Vec<String>) -> Result<()> {
        self.postings_for_earlier_writes(&snapshot).await?;
        let Snapshot { fingerprint, index, files, vectors, texts } = snapshot;
        if let Some(texts) = texts {
            // Removed when damaged only where the files can give every text again.
            let engine = Arc::downgrade(self);
            texts.set_removable(Box::new(move || engine.upgrade().is_some_and(|e| e.indexes_files_only())));
            if let Some(base) = self.base_path.clone() {
                texts.set_recover(files.recover_texts(base, self.id_base()));
            }
        }
        let same_place = same_vectors(&fingerprint, &self.persisted().fingerprint);
        if !same_place {
            let what =
                if self.vectors.is_some() { "every text is embedded again" } else { "the saved vectors are left out" };
            warnings.push(format!(
                "persist: the vectors' configuration changed ({}); {what}",
                fingerprint_difference(&fingerprint, &self.persisted().fingerprint)
            ));
        }
        let vectors = vectors.filter(|_| same_place);
        let Some((index, files)) = self.unless_read_again(index, files, vectors, warnings).await? else {
            return Ok(());
        };
        let documents = self.put_in_place(index, files).await?;
        // What decoding a large index left free goes back to the system, off
        // init()'s way (it waits for every core's pool thread). A small one
        // leaves little, and giving back every free page would make the next
        // attach of a pool of tenants take its memory zeroed from the kernel.
        if documents >= RELEASE_AFTER_DOCUMENTS {
            drop(tokio::task::spawn_blocking(self.release_memory));
        }
        Ok(())
    }

    /// Writes made before this first init() (documents or removals) go
    /// into the loaded index, whose postings must then be here: waits for
    /// them (on failure nothing is loaded: no save replaces the snapshot
    /// with what this workspace holds; the next init() attaches again).
    async fn postings_for_earlier_writes(self: &Arc<Self>, snapshot: &Snapshot) -> Result<()> {
        if !snapshot.index.postings_pending() {
            return Ok(());
        }
        // Read off this thread: the walk beside the load may hold the index.
        let written = self.read_index(|current| !current.is_empty() || current.tombstones_after(0).next().is_some());
        if written.await? {
            if let Some(remote) = self.remote() {
                remote.postings_ready().await?;
            }
        }
        Ok(())
    }

    /// The saved vectors put in place (`saved`: those of this place, if
    /// any), and the index and file table handed back to be put in place,
    /// unless every document is a file's (or there is no keyword index,
    /// which keeps the texts): then `None`, and the files are read and
    /// embedded again, as at a first start. Else where the vectors were
    /// not reused, `embed_unwritten` embeds the index's texts again.
    async fn unless_read_again(
        self: &Arc<Self>,
        index: Bm25Index,
        files: FileTable,
        saved: Option<VectorState>,
        warnings: &mut Vec<String>,
    ) -> Result<Option<(Bm25Index, FileTable)>> {
        let Some(v) = &self.vectors else { return Ok(Some((index, files))) };
        // Saved for another vector index or store (or none): nothing of it is
        // this store's; the ledger keeps only what was written before this init().
        let reused = match saved {
            Some(saved) => self.install_vectors(v, saved, warnings).await?,
            None => false,
        };
        if reused {
            return Ok(Some((index, files)));
        }
        let checked = blocking(move || {
            let all = super::persist::all_from_files(&index, &files);
            (index, files, all)
        });
        let (index, files, all) = checked.await?;
        Ok((self.keyword.is_some() && !all).then_some((index, files)))
    }

    /// Swaps the loaded index (with the writes made before this first
    /// init() on top) and file table in; answers how many documents.
    async fn put_in_place(self: &Arc<Self>, index: Bm25Index, files: FileTable) -> Result<usize> {
        let me = self.clone();
        blocking(move || {
            let mut documents = 0;
            if me.keyword.is_some() {
                // (Asked only where files are read: the file table is decoded
                // on first use, and an attach without files never needs it.)
                let from_api = || me.indexes_files() && !super::persist::all_from_files(&index, &files);
                if let Some(p) = me.persist.as_ref().filter(|_| from_api()) {
                    // Documents given to `index()` in an earlier session: no
                    // text of theirs can be read again from a file, nor the
                    // index be built again from the files without them.
                    p.loaded_api_docs.store(true, std::sync::atomic::Ordering::SeqCst);
                }
                let mut index = index;
                let mut current = me.index.write();
                documents = index.len().max(current.len());
                index.carry_over(&current, 0);
                index.follow_path_rules_of(&current);
                let old = std::mem::replace(&mut *current, index);
                drop(current);
                drop(old);
            }
            if let Some(p) = &me.persist {
                p.state.lock().files = files;
            }
            documents
        })
        .await
    }

    /// A full build of `found`, whose files are recorded for next time.
    async fn build_recorded(
        self: Arc<Self>,
        ticket: &Ticket,
        found: Vec<FoundFile>,
        report: &mut Report,
        counts: &mut FileCounts,
    ) -> Result<usize> {
        counts.reread = found.len();
        let outcomes = self.clone().read_found(found.clone()).await?;
        self.fresh_build(ticket, outcomes, report, Some(&found)).await
    }

    /// The links a walk found but did not read, broken or to a folder, as
    /// paths (their ids below `basePath`): the watcher follows their
    /// targets, so that one made (or made a file) is read through them
    /// (a link to a folder whose folder became a file was never read).
    fn unread_links(&self, report: &Report) -> Vec<std::path::PathBuf> {
        let Some(base) = &self.base_path else { return Vec::new() };
        let unread = |s: &&Skipped| matches!(s.reason, SkipReason::BrokenLink(_) | SkipReason::LinkToDirectory);
        report.skipped.iter().filter(unread).map(|s| base.join(&s.path)).collect()
    }

    /// The watcher's update of the `changed` paths (as the system names
    /// them, below the canonical basePath) alone: the way down to each is
    /// walked, every file found there is read again (an event forces the
    /// read: a same-size edit may keep its times), files that were there
    /// and are no longer lose their documents.
    /// Answers what failed (read or embedded).
    pub(super) async fn update_within(
        self: Arc<Self>,
        ticket: &Ticket,
        paths: Vec<String>,
        changed: Vec<std::path::PathBuf>,
    ) -> Result<Vec<Failed>> {
        let (Some(base), Some(p)) = (self.base_path.clone(), self.persist.as_ref()) else { return Ok(Vec::new()) };
        let canonical = base.canonicalize().unwrap_or_else(|_| base.clone());
        let mut within: Vec<_> =
            changed.iter().filter_map(|c| c.strip_prefix(&canonical).ok()).map(|r| base.join(r)).collect();
        // A file found through a link changes with its target; one below an
        // entry that is a link to a folder, with the folder's file; a hard
        // link with each of its other names.
        {
            let state = p.state.lock();
            let hard_links = state.located.hard_links_of(&within);
            within.extend(state.located.links_into(&changed));
            within.extend(hard_links);
        }
        within.extend(through_linked_entries(&base, &canonical, &paths, &changed));
        within.sort();
        within.dedup();
        if within.is_empty() || !self.has_search() {
            return Ok(Vec::new());
        }
        let scanned_at = crate::persist::files::now_ns();
        let (mut report, found) = self.clone().scan_files(base, paths, within.clone()).await?;
        let dangling = self.unread_links(&report);
        let gone = p.state.lock().located.update_within(&within, &found, &dangling);
        let plan = Reconcile { to_read: (0..found.len()).collect(), gone, ..Default::default() };
        let mut counts = FileCounts::default();
        self.clone().apply_plan(ticket, (found, scanned_at), plan, &mut report, &mut counts).await?;
        if counts.reread > counts.unchanged || counts.removed > 0 {
            p.changed();
        }
        Ok(report.failed)
    }

    /// Reads only what changed and applies it to the loaded index.
    async fn update(
        self: Arc<Self>,
        ticket: &Ticket,
        found: Vec<FoundFile>,
        scanned_at: i128,
        report: &mut Report,
        counts: &mut FileCounts,
        by_watcher: bool,
    ) -> Result<usize> {
        // Planned off this task: a save may hold the index for a while.
        let me = self.clone();
        let (plan, found) = blocking(move || {
            let p = me.persist.as_ref().expect("persist");
            let index = me.index.read();
            let state = p.state.lock();
            // A file whose vectors were not written (the embedder failed: the
            // ledger does not know it) is read, and embedded, again. Locks in
            // the order saves take them: index, file state, ledger.
            let ledger = me.vectors.as_ref().map(|v| v.ledger.lock());
            let with_docs = |id: &str| {
                by_watcher
                    || ((me.keyword.is_none() || index.holds_file(id))
                        && ledger.as_ref().is_none_or(|l| l.get(id).is_some()))
            };
            let plan = state.files.plan(&found, with_docs);
            (plan, found)
        })
        .await?;
        self.apply_plan(ticket, (found, scanned_at), plan, report, counts).await
    }

    /// Reads the files `plan` names, then applies what changed (embedding
    /// first) and removes the files gone. `found`: the files, and when they
    /// were walked.
    async fn apply_plan(
        self: Arc<Self>,
        ticket: &Ticket,
        (found, scanned_at): (Vec<FoundFile>, i128),
        plan: Reconcile,
        report: &mut Report,
        counts: &mut FileCounts,
    ) -> Result<usize> {
        let p = self.persist.as_ref().expect("persist");
        let to_read: Vec<FoundFile> = plan.to_read.iter().map(|&i| found[i].clone()).collect();
        let outcomes = self.clone().read_found(to_read).await?;
        let mut changed = p.state.lock().files.changed_only(&found, &plan, outcomes, counts, scanned_at);
        if !changed.is_empty() || !plan.gone.is_empty() {
            // The changes touch terms anywhere in the index.
            self.remote_postings_whole().await?;
        }
        let mut embedded = 0;
        if let Some(v) = &self.vectors {
            let gone = dropped_sources(&plan.gone, &changed, &v.ledger.lock());
            embedded = self.rebuild_vectors(v, &mut changed, gone, &mut report.failed).await;
        }
        let me = self.clone();
        let (seq, committed) = (ticket.seq(), ticket.committed());
        let mut taken = std::mem::take(report);
        let (taken, removed) = blocking(move || {
            let p = me.persist.as_ref().expect("persist");
            // Lock order (docs/architecture.md): the index, then the file state.
            let mut index = me.index.write();
            // Once applied, the call resolves though destroy() comes (`applied_unless_destroyed`).
            me.applied_unless_destroyed(&committed, || {
                let mut state = p.state.lock();
                let mut unused = Bm25Index::default();
                let target = if me.keyword.is_some() { &mut *index } else { &mut unused };
                let removed = apply_changes(target, &mut state.files, &found, changed, &plan.gone, seq, &mut taken);
                (taken, removed)
            })
        })
        .await??;
        *report = taken;
        counts.removed = removed;
        Ok(embedded)
    }
}

/// `changed` paths (canonical) below a folder that an entry of `paths`
/// reaches through a link (`docs` → `real`), as the walk names them (below
/// the entry: `base/docs/a.md`).
fn through_linked_entries(
    base: &std::path::Path,
    canonical: &std::path::Path,
    paths: &[String],
    changed: &[std::path::PathBuf],
) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for entry in paths {
        // A glob's fixed folder (`docs` of `docs/*.md`), as its walk starts there.
        let entry = match entry.find(['*', '?', '{', '}', '[', ']']) {
            Some(i) => entry[..i].rfind('/').map_or("", |j| &entry[..j]),
            None => entry.as_str(),
        };
        let rel = crate::index::id_base::within_base(entry, &[base, canonical]);
        let rel = rel.trim_start_matches("./").trim_start_matches('/');
        let named = base.join(rel);
        let Ok(real) = named.canonicalize() else {
            // The link's folder is gone: what was found through it goes too.
            if named.symlink_metadata().is_ok_and(|m| m.file_type().is_symlink()) {
                out.push(named);
            }
            continue;
        };
        if real == canonical.join(rel) || !real.starts_with(canonical) {
            continue; // no link on the way (or one out of basePath: never walked)
        }
        out.extend(changed.iter().filter_map(|c| c.strip_prefix(&real).ok()).map(|rest| named.join(rest)));
        // A folder above where it leads changed (`rm -rf third_party` and
        // made again, `mv real away` and back: a burst names that folder
        // alone): the whole entry. Its files went stale until init().
        if changed.iter().any(|c| real.starts_with(c) && *c != real) {
            out.push(named);
        }
    }
    out
}
