//! grep's index on disk: `grep.wss` in the persist directory (framed and
//! replaced atomically as the snapshot is, `persist::disk`), holding the
//! base it was built for, each file's size, time and id, and the trigram
//! index. It is a cache: every file is checked against the disk before its
//! trigrams are trusted, so a file from another run, or another process,
//! can make a grep slower, never wrong.

use super::trigrams::TrigramIndex;
use super::walk::Stamp;
use super::Grep;
use crate::bytes::codec::{Decoder, Encoder};
use crate::bytes::SnapshotError;
use crate::persist::disk::{self, GREP_FILE};
use std::path::Path;

/// The layout of `grep.wss` (inside the snapshot's framing, whose version
/// it also carries): bumped when it changes, and an older file is rebuilt.
const GREP_FORMAT: u32 = 2;

fn write_i128(e: &mut Encoder, v: i128) {
    e.u64((v >> 64) as u64);
    e.u64(v as u64);
}

fn read_i128(d: &mut Decoder) -> Result<i128, SnapshotError> {
    let hi = d.u64("grep time")?;
    let lo = d.u64("grep time")?;
    Ok((i128::from(hi as i64) << 64) | i128::from(lo))
}

impl Grep {
    /// Writes the index to `dir` (atomically: the previous file or this one).
    pub fn save(&self, dir: &Path) -> std::io::Result<()> {
        disk::check_dir(dir)?;
        std::fs::create_dir_all(dir)?;
        disk::begin_named(dir, GREP_FILE, |e| self.encode(e))?.commit()
    }

    /// The index saved in `dir` for this base, if there is one that reads back whole.
    pub fn load(dir: &Path, base: &Path) -> Result<Grep, SnapshotError> {
        let payload = disk::read_named(dir, GREP_FILE)?;
        let mut d = Decoder::new(&payload);
        let version = d.u32("grep format")?;
        if version != GREP_FORMAT {
            return Err(SnapshotError::Version { found: version, expected: GREP_FORMAT });
        }
        let saved = d.string("grep base")?;
        if Path::new(&saved) != base {
            return Err(SnapshotError::OtherOptions(format!("grep index of {saved}")));
        }
        let mut grep = Grep::new(base.to_path_buf());
        let n = d.len(48, "grep files")?;
        for _ in 0..n {
            let rel = d.string("grep file")?;
            let id = d.u32("grep file id")?;
            let len = d.u64("grep file size")?;
            let mtime_ns = read_i128(&mut d)?;
            let ctime_ns = read_i128(&mut d)?;
            let ino = d.u64("grep file inode")?;
            grep.files.insert(rel, (id, Stamp { size: len, modified_ns: mtime_ns, changed_ns: ctime_ns, inode: ino }));
        }
        grep.index = TrigramIndex::decode(&mut d)?;
        if grep.files.values().any(|&(id, _)| id >= grep.index.next_id()) {
            return Err(SnapshotError::Corrupt("grep: a file id past the last one".into()));
        }
        grep.built = d.u8("grep built")? == 1;
        grep.saved = grep.changes;
        Ok(grep)
    }

    fn encode(&self, e: &mut Encoder) {
        e.u32(GREP_FORMAT);
        e.str(&self.base.to_string_lossy());
        let mut files: Vec<(&String, &(u32, Stamp))> = self.files.iter().collect();
        files.sort_unstable_by(|a, b| a.0.cmp(b.0));
        e.len(files.len());
        for (rel, &(id, stamp)) in files {
            e.str(rel);
            e.u32(id);
            e.u64(stamp.size);
            write_i128(e, stamp.modified_ns);
            write_i128(e, stamp.changed_ns);
            e.u64(stamp.inode);
        }
        self.index.encode(e);
        e.u8(u8::from(self.built));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::grep::{GrepRequest, Matcher};

    #[test]
    fn saved_and_loaded_it_answers_the_same_without_reading_again() {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path().join("tree");
        std::fs::create_dir_all(base.join("src")).unwrap();
        std::fs::write(base.join("src/a.ts"), "const needle = 1\n").unwrap();
        std::fs::write(base.join("src/b.ts"), "other\n").unwrap();
        // Old enough that its trigrams are kept.
        let old = std::time::SystemTime::now() - std::time::Duration::from_secs(60);
        for f in ["src/a.ts", "src/b.ts"] {
            std::fs::File::options().write(true).open(base.join(f)).unwrap().set_modified(old).unwrap();
        }
        let req = |p: &str| GrepRequest {
            matcher: Matcher::new(p, true).unwrap(),
            path: String::new(),
            include_hidden: false,
            max_count: None,
            context_lines: 0,
            context_once: false,
            text_extensions: None,
            glob: None,
            answer: Default::default(),
        };
        let mut grep = Grep::new(base.clone());
        let first = grep.grep(&req("needle"), None);
        let todo = grep.unindexed(100);
        grep.add_built(Grep::build(&base, todo));
        assert!(grep.unindexed(100).is_empty());
        let store = dir.path().join("persist");
        grep.save(&store).unwrap();
        let mut loaded = Grep::load(&store, &base).unwrap();
        let again = loaded.grep(&req("needle"), None);
        assert_eq!(again.files, first.files);
        assert_eq!(again.read, 1, "only the candidate is read");
        assert!(Grep::load(&store, &dir.path().join("elsewhere")).is_err());
        // A damaged file is refused, never half read.
        let path = store.join(GREP_FILE);
        let mut bytes = std::fs::read(&path).unwrap();
        let at = bytes.len() - 3;
        bytes[at] ^= 0xFF;
        std::fs::remove_file(&path).unwrap();
        std::fs::write(&path, bytes).unwrap();
        assert!(Grep::load(&store, &base).is_err());
    }
}
