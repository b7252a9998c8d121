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
use crate::index::id_base::IdBase;
use crate::ingest::scan::{FileStamp, FoundFile};
use rustc_hash::FxHashMap;
use std::sync::{Arc, OnceLock};

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

/// The table of the files indexed. One loaded from a snapshot keeps its
/// records as the snapshot holds them until first used: a workspace
/// without a `basePath` (a tenant attached from a store, its documents
/// from `index()`) never builds the table; one with a `basePath` builds it
/// when the snapshot is installed (texts to recover from the files:
/// `recover_texts`) or reconciled.
#[derive(Debug, Clone, Default)]
pub struct FileTable {
    records: OnceLock<FxHashMap<String, FileRecord>>,
    /// The records as the snapshot holds them, checked when loaded
    /// (`decode`), decoded on first use. A copy (about 100 bytes a file):
    /// a view would keep the whole snapshot mapped or held; shared by the
    /// table's clones (a save takes one).
    encoded: Option<Arc<[u8]>>,
    /// When the files were last scanned (nanoseconds since the epoch).
    pub scanned_at: i128,
}

impl PartialEq for FileTable {
    fn eq(&self, other: &Self) -> bool {
        self.scanned_at == other.scanned_at && self.records() == other.records()
    }
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
    /// The records, decoded from the snapshot's on first use.
    fn records(&self) -> &FxHashMap<String, FileRecord> {
        self.records.get_or_init(|| self.encoded.as_deref().map(decode_records).unwrap_or_default())
    }

    fn records_mut(&mut self) -> &mut FxHashMap<String, FileRecord> {
        self.records();
        self.encoded = None;
        self.records.get_mut().expect("records() initialised them")
    }

    pub fn len(&self) -> usize {
        self.records().len()
    }

    pub fn is_empty(&self) -> bool {
        self.records().is_empty()
    }

    pub fn get(&self, id: &str) -> Option<&FileRecord> {
        self.records().get(id)
    }

    pub fn set(&mut self, id: &str, record: FileRecord) {
        self.records_mut().insert(id.to_string(), record);
    }

    pub fn remove(&mut self, id: &str) -> Option<FileRecord> {
        self.records_mut().remove(id)
    }

    pub fn clear(&mut self) {
        self.records_mut().clear();
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
        let records = self.records();
        let classes: Vec<(Class, bool)> = found
            .par_iter()
            .with_min_len(1024)
            .map(|f| {
                let Some(r) = records.get(&f.id) else { return (Class::Read, false) };
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
        if recorded < records.len() {
            let seen: rustc_hash::FxHashSet<&str> = found.iter().map(|f| f.id.as_str()).collect();
            out.gone = records.keys().filter(|id| !seen.contains(id.as_str())).cloned().collect();
            out.gone.sort();
        }
        out
    }

    /// Where a text that failed its checksum in the snapshot is read again:
    /// the indexed file (below `base`) that still holds exactly it, found
    /// by its hash in this table as loaded (kept as a sorted table of
    /// hashes and ids: a lookup takes no lock, so a save streaming the
    /// texts can recover one too).
    pub fn recover_texts(&self, base: std::path::PathBuf, id_base: IdBase) -> super::stored::Recover {
        let mut by_hash: Vec<(u64, Box<str>)> =
            self.records().iter().map(|(id, r)| (r.hash, id.as_str().into())).collect();
        by_hash.sort_unstable();
        Box::new(move |hash, len| {
            let at = by_hash.partition_point(|(h, _)| *h < hash);
            by_hash[at..]
                .iter()
                .take_while(|(h, _)| *h == hash)
                .find_map(|(_, id)| crate::ingest::read_intact(&base.join(&*id_base.relative(id)), hash, len))
        })
    }

    pub fn encode(&self, e: &mut Encoder) {
        e.u64(self.scanned_at as u64);
        e.u64((self.scanned_at >> 64) as u64);
        let records = self.records();
        e.len(records.len());
        let mut ids: Vec<&String> = records.keys().collect();
        ids.sort();
        for id in ids {
            let r = &records[id];
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

    /// A table as `encode` wrote it, its records checked (lengths, UTF-8
    /// ids) and kept as they lie until first used (`records`).
    pub fn decode(d: &mut Decoder) -> Result<FileTable, SnapshotError> {
        let wide = |d: &mut Decoder| -> Result<i128, SnapshotError> {
            let lo = d.u64("a time")?;
            let hi = d.u64("a time")?;
            Ok(((hi as i128) << 64) | lo as i128)
        };
        let scanned_at = wide(d)?;
        let encoded = d.read_over(|d| {
            for _ in 0..d.len(64, "the file table")? {
                d.str("a file id")?;
                for _ in 0..FIXED_WORDS {
                    d.u64("a file record")?;
                }
            }
            Ok(())
        })?;
        Ok(FileTable { records: OnceLock::new(), encoded: Some(encoded.into()), scanned_at })
    }
}

/// The records `FileTable::decode` checked.
fn decode_records(encoded: &[u8]) -> FxHashMap<String, FileRecord> {
    let mut d = Decoder::new(encoded);
    let decoded = (|| {
        let n = d.len(64, "the file table")?;
        let mut records = FxHashMap::default();
        records.reserve(n);
        for _ in 0..n {
            let id = d.string("a file id")?;
            let mut word = || d.u64("a file record");
            let size = word()?;
            let mut wide = || -> Result<i128, SnapshotError> { Ok((word()? as i128) | ((word()? as i128) << 64)) };
            let (modified_ns, changed_ns) = (wide()?, wide()?);
            let (inode, hash) = (word()?, word()?);
            records.insert(id, FileRecord { stamp: FileStamp { size, modified_ns, changed_ns, inode }, hash });
        }
        Ok::<_, SnapshotError>(records)
    })();
    // Cannot fail: `decode` made the same reads of the same bytes. (Were
    // it to, the table would be empty: every file read again, but files
    // removed since the snapshot not noticed as gone.)
    debug_assert!(decoded.is_ok());
    decoded.unwrap_or_default()
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
            hard_linked: false,
            stamp: Some(FileStamp { size, modified_ns, ..Default::default() }),
            link: false,
            listed: None,
            base: None,
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

    #[test]
    fn a_loaded_table_is_checked_at_once_and_decoded_when_used() {
        let mut t = FileTable { scanned_at: -7 * RACY_NS, ..Default::default() };
        let stamp = FileStamp { size: 3, modified_ns: -5, changed_ns: i128::MAX, inode: 9 };
        t.set("src/a.rs", FileRecord { stamp, hash: 1 });
        t.set("b.md", FileRecord { stamp: FileStamp::default(), hash: 2 });
        let mut e = Encoder::default();
        t.encode(&mut e);
        e.u8(42); // what follows the table in a snapshot
        let mut d = Decoder::new(&e.buf);
        let mut back = FileTable::decode(&mut d).unwrap();
        assert_eq!(d.u8("after").unwrap(), 42, "read up to its end, no further");
        assert!(back.records.get().is_none(), "not decoded until used");
        assert_eq!(back.get("src/a.rs").map(|r| (r.stamp, r.hash)), Some((stamp, 1)));
        assert_eq!(back, t);
        back.remove("b.md");
        back.set("c.go", FileRecord { stamp, hash: 3 });
        assert_eq!((back.len(), back.get("c.go").map(|r| r.hash), back.get("b.md")), (2, Some(3), None));

        // Damage is found at load, not when first used.
        let end = e.buf.len() - 1;
        for cut in [17, 30, end - 1] {
            assert!(FileTable::decode(&mut Decoder::new(&e.buf[..cut])).is_err(), "cut at {cut}");
        }
        let at = e.buf.windows(8).position(|w| w == b"src/a.rs").unwrap();
        let mut not_utf8 = e.buf.clone();
        not_utf8[at] = 0xff;
        assert!(FileTable::decode(&mut Decoder::new(&not_utf8)).is_err(), "an id that is not UTF-8");
    }
}
