//! Carrying out an incremental `init()` on a loaded index: files read
//! again whose content is unchanged only get their new stamp; changed
//! files replace their documents; files gone, or now skipped or failing,
//! lose them, as a full rebuild would.

use super::files::{FileRecord, FileTable, Reconcile};
use crate::index::Bm25Index;
use crate::ingest::scan::FoundFile;
use crate::ingest::{Failed, FileOutcome, Report, Skipped};
use rustc_hash::FxHashMap;

/// What an incremental `init()` did with the files, for `IndexReport`.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct FileCounts {
    /// Files kept from the snapshot without reading them.
    pub reused: usize,
    /// Files read again (changed stamp, new, or in doubt).
    pub reread: usize,
    /// Files read again whose content was unchanged.
    pub unchanged: usize,
    /// Of those, the files the next start reuses only once this record is
    /// saved: their stamp is new, or it was too recent at the last scan and
    /// is no longer (one dated ahead of the clock stays too recent: saving
    /// it again would not spare its next read).
    pub settled: usize,
    /// Files whose documents were removed (gone, or now skipped or failing).
    pub removed: usize,
}

impl FileCounts {
    /// Whether saving the file table spares the next start some work: a
    /// file's content changed, it was removed, or its record settled.
    pub fn worth_saving(&self) -> bool {
        self.reread > self.unchanged || self.settled > 0 || self.removed > 0
    }
}

impl FileTable {
    /// Keeps the outcomes of files whose content changed (or that are new,
    /// skipped or failing); the others only get their new stamp. `scanned_at`:
    /// when `found` was walked.
    pub fn changed_only(
        &mut self,
        found: &[FoundFile],
        plan: &Reconcile,
        outcomes: Vec<FileOutcome>,
        counts: &mut FileCounts,
        scanned_at: i128,
    ) -> Vec<FileOutcome> {
        counts.reused = plan.reused.len();
        counts.reread = outcomes.len();
        if outcomes.is_empty() {
            return Vec::new(); // (an unchanged workspace: no table of 50k stamps to build)
        }
        let stamps = stamps(found);
        let mut changed = Vec::new();
        for o in outcomes {
            if let FileOutcome::Documents { id, hash, .. } = &o {
                let recorded = self.get(id).copied().filter(|_| !plan.missing.contains(id));
                if let (Some(r), Some(&stamp)) = (recorded, stamps.get(id.as_str())) {
                    if r.hash == *hash {
                        if r.stamp != stamp || stamp.modified_ns < scanned_at - super::files::RACY_NS {
                            counts.settled += 1;
                        }
                        self.set(id, FileRecord { stamp, hash: *hash });
                        counts.unchanged += 1;
                        continue;
                    }
                }
            }
            changed.push(o);
        }
        changed
    }

    /// Records the files a build indexed (with their stamps when found).
    pub fn record(&mut self, found: &[FoundFile], outcomes: &[FileOutcome]) {
        if outcomes.is_empty() {
            return;
        }
        let stamps = stamps(found);
        for o in outcomes {
            match o {
                FileOutcome::Documents { id, hash, .. } => match stamps.get(id.as_str()) {
                    Some(&stamp) => self.set(id, FileRecord { stamp, hash: *hash }),
                    None => {
                        self.remove(id);
                    }
                },
                FileOutcome::Skipped { id, .. } | FileOutcome::Failed { id, .. } => {
                    self.remove(id);
                }
            }
        }
    }
}

fn stamps(found: &[FoundFile]) -> FxHashMap<&str, crate::ingest::scan::FileStamp> {
    found.iter().filter_map(|f| Some((f.id.as_str(), f.stamp?))).collect()
}

/// Applies changed outcomes and removes gone files (write `seq`); fills
/// `report` as a full rebuild would (indexed counts every file now in).
pub fn apply_changes(
    index: &mut Bm25Index,
    table: &mut FileTable,
    found: &[FoundFile],
    changed: Vec<FileOutcome>,
    gone: &[String],
    seq: u64,
    report: &mut Report,
) -> usize {
    let mut removed = 0;
    for id in gone {
        index.remove_with_chunks(id, seq);
        table.remove(id);
        removed += 1;
    }
    table.record(found, &changed);
    let mut writer_docs = Vec::new();
    for o in changed {
        match o {
            FileOutcome::Documents { id, docs, .. } => {
                index.remove_with_chunks(&id, seq);
                writer_docs.extend(docs);
            }
            FileOutcome::Skipped { id, reason } => {
                removed += usize::from(index.remove_with_chunks(&id, seq));
                report.skipped.push(Skipped { path: id, reason });
            }
            FileOutcome::Failed { id, error } => {
                removed += usize::from(index.remove_with_chunks(&id, seq));
                report.failed.push(Failed { path: id, error });
            }
        }
    }
    // In bulk: term ids mapped once per vocabulary, documents prepared in parallel.
    index.add_bulk(writer_docs, seq, &mut |_| {});
    report.indexed = table.len();
    report.chunks = index.documents().filter(|d| d.source_file().is_some()).count();
    removed
}
