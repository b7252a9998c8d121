//! What was indexed from each file, and the plan of an incremental
//! `init()`: files whose size and modification time are unchanged are
//! reused without reading; the others are read, and those whose content
//! hash is unchanged too cost nothing more (no re-indexing, no embedding).
//!
//! A file modified in the same instant as it was scanned could keep its
//! size and time (git's "racy" case): files modified within `RACY_NS` of
//! the last scan are read again and compared by hash.

use super::codec::{Decoder, Encoder};
use super::SnapshotError;
use crate::ingest::scan::{FileStamp, FoundFile};
use rustc_hash::FxHashMap;

/// How close to the last scan a modification time must be to be doubted.
pub const RACY_NS: i128 = 2_000_000_000;

/// The words of a record after its id: size, two times of two words each,
/// inode, hash (`encode`).
const FIXED_WORDS: usize = 7;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileRecord {
    pub stamp: FileStamp,
    /// xxh3 of the file's bytes as decoded (see `ingest::content_hash`).
    pub hash: u64,
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct FileTable {
    records: FxHashMap<String, FileRecord>,
    /// When the files were last scanned (nanoseconds since the epoch).
    pub scanned_at: i128,
}

/// What an incremental `init()` does with the files found.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Reconcile {
    /// Positions (in the found files) of files reused without reading.
    pub reused: Vec<usize>,
    /// Positions of files to read (new, changed, or in doubt).
    pub to_read: Vec<usize>,
    /// Recorded files no longer found.
    pub gone: Vec<String>,
    /// Recorded files whose documents the index no longer holds (removed
    /// by hand): indexed again even when their content is unchanged.
    pub missing: rustc_hash::FxHashSet<String>,
}

impl FileTable {
    pub fn len(&self) -> usize {
        self.records.len()
    }

    pub fn is_empty(&self) -> bool {
        self.records.is_empty()
    }

    pub fn get(&self, id: &str) -> Option<&FileRecord> {
        self.records.get(id)
    }

    pub fn set(&mut self, id: &str, record: FileRecord) {
        self.records.insert(id.to_string(), record);
    }

    pub fn remove(&mut self, id: &str) -> Option<FileRecord> {
        self.records.remove(id)
    }

    pub fn clear(&mut self) {
        self.records.clear();
    }

    /// Which found files to reuse, which to read, and which recorded files
    /// are gone. `has_docs(id)`: whether the index still holds the file's
    /// documents (a file removed by hand is read again). Files are looked
    /// at in parallel (a warm start waits for this over every file).
    pub fn plan(&self, found: &[FoundFile], has_docs: impl Fn(&str) -> bool + Sync) -> Reconcile {
        use rayon::prelude::*;
        enum Class {
            Reuse,
            Read,
            Missing,
        }
        let classes: Vec<(Class, bool)> = found
            .par_iter()
            .with_min_len(1024)
            .map(|f| {
                let Some(r) = self.records.get(&f.id) else { return (Class::Read, false) };
                if !has_docs(&f.id) {
                    return (Class::Missing, true);
                }
                // Racy by the modification time only, as git: the status-change time
                // is compared for equality (a test or tool that sets times back
                // cannot set it, so doubting it would read recent files forever).
                let unchanged = f.stamp.is_some_and(|s| r.stamp == s && s.modified_ns < self.scanned_at - RACY_NS);
                (if unchanged { Class::Reuse } else { Class::Read }, true)
            })
            .collect();
        let mut out = Reconcile::default();
        let mut recorded = 0;
        for (i, (class, known)) in classes.into_iter().enumerate() {
            recorded += usize::from(known);
            match class {
                Class::Reuse => out.reused.push(i),
                Class::Read => out.to_read.push(i),
                Class::Missing => {
                    out.missing.insert(found[i].id.clone());
                    out.to_read.push(i);
                }
            }
        }
        // Found ids are distinct: when every record was found, none is gone.
        if recorded < self.records.len() {
            let seen: rustc_hash::FxHashSet<&str> = found.iter().map(|f| f.id.as_str()).collect();
            out.gone = self.records.keys().filter(|id| !seen.contains(id.as_str())).cloned().collect();
            out.gone.sort();
        }
        out
    }

    /// Where a text that failed its checksum in the snapshot is read again:
    /// the indexed file (below `base`) that still holds exactly it, found
    /// by its hash in this table as loaded (kept as a sorted table of
    /// hashes and ids: a lookup takes no lock, so a save streaming the
    /// texts can recover one too).
    pub fn recover_texts(&self, base: std::path::PathBuf) -> super::stored::Recover {
        let mut by_hash: Vec<(u64, Box<str>)> =
            self.records.iter().map(|(id, r)| (r.hash, id.as_str().into())).collect();
        by_hash.sort_unstable();
        Box::new(move |hash, len| {
            let at = by_hash.partition_point(|(h, _)| *h < hash);
            by_hash[at..]
                .iter()
                .take_while(|(h, _)| *h == hash)
                .find_map(|(_, id)| crate::ingest::read_intact(&base.join(id.trim_start_matches('/')), hash, len))
        })
    }

    pub fn encode(&self, e: &mut Encoder) {
        e.u64(self.scanned_at as u64);
        e.u64((self.scanned_at >> 64) as u64);
        e.len(self.records.len());
        let mut ids: Vec<&String> = self.records.keys().collect();
        ids.sort();
        for id in ids {
            let r = &self.records[id];
            e.str(id);
            e.u64(r.stamp.size);
            for time in [r.stamp.modified_ns, r.stamp.changed_ns] {
                e.u64(time as u64);
                e.u64((time >> 64) as u64);
            }
            e.u64(r.stamp.inode);
            e.u64(r.hash);
        }
    }

    /// Reads past a table `decode` would read, checking only its lengths
    /// (`Decoder::split_off`: the table is decoded beside the index).
    pub fn skip(d: &mut Decoder) -> Result<(), SnapshotError> {
        d.u64("a time")?;
        d.u64("a time")?;
        for _ in 0..d.len(64, "the file table")? {
            d.bytes("a file id")?;
            for _ in 0..FIXED_WORDS {
                d.u64("a file record")?;
            }
        }
        Ok(())
    }

    pub fn decode(d: &mut Decoder) -> Result<FileTable, SnapshotError> {
        let wide = |d: &mut Decoder| -> Result<i128, SnapshotError> {
            let lo = d.u64("a time")?;
            let hi = d.u64("a time")?;
            Ok(((hi as i128) << 64) | lo as i128)
        };
        let scanned_at = wide(d)?;
        let n = d.len(64, "the file table")?;
        let mut records = FxHashMap::default();
        records.reserve(n);
        for _ in 0..n {
            let id = d.string("a file id")?;
            let size = d.u64("a file size")?;
            let modified_ns = wide(d)?;
            let changed_ns = wide(d)?;
            let inode = d.u64("an inode")?;
            let hash = d.u64("a file hash")?;
            records.insert(id, FileRecord { stamp: FileStamp { size, modified_ns, changed_ns, inode }, hash });
        }
        if !d.is_done() {
            return Err(SnapshotError::Corrupt("bytes after the file table".into()));
        }
        Ok(FileTable { records, scanned_at })
    }
}

/// Now, in nanoseconds since the epoch (the `scanned_at` of a scan).
pub fn now_ns() -> i128 {
    use std::time::{SystemTime, UNIX_EPOCH};
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_nanos() as i128)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    fn found(id: &str, size: u64, modified_ns: i128) -> FoundFile {
        FoundFile {
            id: id.into(),
            path: PathBuf::from(id),
            identity: None,
            stamp: Some(FileStamp { size, modified_ns, ..Default::default() }),
        }
    }

    #[test]
    fn reuses_unchanged_files_and_doubts_recent_ones() {
        let old = 1_000 * RACY_NS;
        let mut t = FileTable { scanned_at: old + 10 * RACY_NS, ..Default::default() };
        for (id, size) in [("a", 1), ("b", 2), ("gone", 3)] {
            t.set(id, FileRecord { stamp: FileStamp { size, modified_ns: old, ..Default::default() }, hash: 9 });
        }
        t.set(
            "racy",
            FileRecord { stamp: FileStamp { size: 4, modified_ns: t.scanned_at - 1, ..Default::default() }, hash: 9 },
        );
        let files = [found("a", 1, old), found("b", 5, old), found("racy", 4, t.scanned_at - 1), found("new", 1, old)];
        let plan = t.plan(&files, |_| true);
        assert_eq!(
            plan,
            Reconcile {
                reused: vec![0],
                to_read: vec![1, 2, 3],
                gone: vec!["gone".into()],
                missing: Default::default()
            }
        );
        let plan = t.plan(&files, |id| id != "a");
        assert_eq!(
            (plan.to_read, plan.missing.into_iter().collect::<Vec<_>>()),
            (vec![0, 1, 2, 3], vec!["a".to_string()])
        );
        let mut e = Encoder::default();
        t.encode(&mut e);
        let back = FileTable::decode(&mut Decoder::new(&e.buf)).unwrap();
        assert_eq!(back, t);
    }
}
