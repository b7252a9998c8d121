//! What is about to reach a vector store that outlives the process (a
//! user's JavaScript store), written down before the store sees it: the
//! ids of each upsert and delete, and each delete by source file. The
//! ledger of what the store holds is saved with the snapshot, a second
//! after writes; a process killed in between would leave vectors the next
//! start does not know of (a file deleted meanwhile, a document the killed
//! process indexed) or vectors that no longer match the saved index. At the
//! next start, every id in this log is deleted from the store and forgotten
//! by the ledger, so that the reconcile writes again exactly what the index
//! holds. A save trims what it covers.
//!
//! One line per entry: `i` or `s`, a tab, the id or source as a JSON
//! string. A torn last line (a crash mid-write) is ignored. Entries are
//! written, not synced: they survive the process, as a kill is the case
//! this covers (a power loss may also lose the snapshot's last save).
//!
//! A save trims only what no store call still in flight wrote: each
//! record is held open (`Held`) until its call has answered, and one whose
//! call was cut short (dropped unanswered: it may still reach the store)
//! stays open for good, so the next start undoes it.

use std::collections::BTreeMap;
use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

pub const INTENT_FILE: &str = "vectors.intent";
/// The hold on what an earlier process left, from the log's opening (ids
/// of other holds count from 1).
const LEFT_HOLD: u64 = 0;
const TEMP_SUFFIX: &str = ".tmp";

/// The ids and sources a log names.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Intents {
    pub ids: Vec<String>,
    pub sources: Vec<String>,
}

impl Intents {
    pub fn is_empty(&self) -> bool {
        self.ids.is_empty() && self.sources.is_empty()
    }
}

/// The open log of a persist directory (held by its writer only).
pub struct IntentLog {
    path: PathBuf,
    file: Mutex<File>,
    /// Where each record still held open begins, by its number; a trim
    /// never passes the first of them.
    held: Mutex<(u64, BTreeMap<u64, u64>)>,
    /// Where the records an earlier process left end (the log's length
    /// when this one opened it): what a recovery undoes. Records of this
    /// process's own (a write before its first `init()`) are not a crash's.
    left: Mutex<u64>,
}

/// A record whose store call has not answered yet; `answered` releases it.
/// Dropped without it (the call cut short), it holds the log from its
/// start on until the next start of the workspace.
pub struct Held {
    log: Arc<IntentLog>,
    id: u64,
}

impl Held {
    pub fn answered(self) {
        self.log.held.lock().unwrap_or_else(|e| e.into_inner()).1.remove(&self.id);
    }
}

fn open_options() -> OpenOptions {
    let mut o = OpenOptions::new();
    o.read(true).write(true).create(true).truncate(false);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::custom_flags(&mut o, libc::O_NOFOLLOW | libc::O_NONBLOCK);
    o
}

impl IntentLog {
    /// Opens (or creates) the log of `dir`; a link or a special file is refused.
    pub fn open(dir: &Path) -> std::io::Result<IntentLog> {
        let path = dir.join(INTENT_FILE);
        let mut file = open_options().open(&path)?;
        let meta = file.metadata()?;
        if !meta.is_file() {
            return Err(std::io::Error::other(format!("{} is not a regular file", path.display())));
        }
        super::disk::only_name(&meta, &path)?;
        // A line torn by a crash is cut off, so that the next record starts a line of its own.
        let mut bytes = Vec::new();
        file.read_to_end(&mut bytes)?;
        let whole = bytes.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
        if whole < bytes.len() {
            file.set_len(whole as u64)?;
        }
        // What an earlier process left is held until a recovery undid it
        // (`release_left`): a save before that must not trim it away.
        let held = match whole {
            0 => (0, BTreeMap::new()),
            _ => (1, BTreeMap::from([(LEFT_HOLD, 0)])),
        };
        Ok(IntentLog { path, file: Mutex::new(file), held: Mutex::new(held), left: Mutex::new(whole as u64) })
    }

    /// What an earlier process left was undone (a recovery succeeded):
    /// a save may trim it now.
    pub fn release_left(&self) {
        self.held.lock().unwrap_or_else(|e| e.into_inner()).1.remove(&LEFT_HOLD);
    }

    /// Holds the whole log while a recovery undoes it: answered when it
    /// succeeded; dropped unanswered (it failed), the log is kept for the
    /// next start.
    pub fn hold_all(self: &Arc<Self>) -> Held {
        let mut held = self.held.lock().unwrap_or_else(|e| e.into_inner());
        let id = held.0;
        held.0 += 1;
        held.1.insert(id, 0);
        Held { log: self.clone(), id }
    }

    /// What the log names now (a torn last line left out).
    pub fn read(&self) -> std::io::Result<Intents> {
        self.read_upto(u64::MAX)
    }

    /// What the records an earlier process left name: not those this
    /// process wrote since it opened the log (what a recovery undoes).
    pub fn read_left(&self) -> std::io::Result<Intents> {
        let left = *self.left.lock().unwrap_or_else(|e| e.into_inner());
        self.read_upto(left)
    }

    fn read_upto(&self, end: u64) -> std::io::Result<Intents> {
        let mut file = self.file.lock().unwrap_or_else(|e| e.into_inner());
        file.seek(SeekFrom::Start(0))?;
        let mut text = String::new();
        // Lossy: a damaged byte loses its entry, never the log.
        let mut bytes = Vec::new();
        Read::take(&mut *file, end).read_to_end(&mut bytes)?;
        text.push_str(&String::from_utf8_lossy(&bytes));
        let mut out = Intents::default();
        for line in text.split_inclusive('\n').filter(|l| l.ends_with('\n')) {
            let Some((kind, json)) = line.trim_end_matches('\n').split_once('\t') else { continue };
            let Ok(value) = serde_json::from_str::<String>(json) else { continue };
            match kind {
                "i" => out.ids.push(value),
                "s" => out.sources.push(value),
                _ => {}
            }
        }
        Ok(out)
    }

    /// Records ids about to be written or deleted, held until answered.
    pub fn ids(self: &Arc<Self>, ids: &[String]) -> std::io::Result<Held> {
        self.append(ids.iter().map(|id| ('i', id.as_str())))
    }

    /// Records a delete by source file about to be sent, held until answered.
    pub fn source(self: &Arc<Self>, source: &str) -> std::io::Result<Held> {
        self.append(std::iter::once(('s', source)))
    }

    fn append<'a>(self: &Arc<Self>, entries: impl Iterator<Item = (char, &'a str)>) -> std::io::Result<Held> {
        let mut buf = String::new();
        for (kind, value) in entries {
            buf.push(kind);
            buf.push('\t');
            buf.push_str(&serde_json::to_string(value).expect("a string serializes"));
            buf.push('\n');
        }
        let mut file = self.file.lock().unwrap_or_else(|e| e.into_inner());
        let start = file.seek(SeekFrom::End(0))?;
        file.write_all(buf.as_bytes())?;
        let mut held = self.held.lock().unwrap_or_else(|e| e.into_inner());
        let id = held.0;
        held.0 += 1;
        held.1.insert(id, start);
        Ok(Held { log: self.clone(), id })
    }

    /// What a save that begins now covers: the log up to its end, but not
    /// from a record still held (a call in flight when the save took its
    /// copy may answer before the trim, its write not in that copy).
    pub fn mark(&self) -> u64 {
        let file = self.file.lock().unwrap_or_else(|e| e.into_inner());
        let end = file.metadata().map_or(0, |m| m.len());
        let held = self.held.lock().unwrap_or_else(|e| e.into_inner());
        held.1.values().copied().min().map_or(end, |first| first.min(end))
    }

    /// Drops what was recorded before `mark` (a save covering it is on
    /// disk), but never a record still held: the rest is written to a new
    /// file renamed over the log (a crash keeps the old log or the new).
    pub fn trim(&self, mark: u64) -> std::io::Result<()> {
        let mut file = self.file.lock().unwrap_or_else(|e| e.into_inner());
        let held = self.held.lock().unwrap_or_else(|e| e.into_inner());
        let upto = held.1.values().copied().min().map_or(mark, |first| first.min(mark));
        drop(held);
        if upto == 0 {
            return Ok(());
        }
        file.seek(SeekFrom::Start(upto))?;
        let mut rest = Vec::new();
        file.read_to_end(&mut rest)?;
        let temp = self.path.with_file_name(format!("{INTENT_FILE}{TEMP_SUFFIX}"));
        let _ = std::fs::remove_file(&temp);
        let mut options = open_options();
        options.create_new(true);
        let mut fresh = options.open(&temp)?;
        fresh.write_all(&rest)?;
        std::fs::rename(&temp, &self.path)?;
        // Offsets held from now on count in the new file.
        let mut held = self.held.lock().unwrap_or_else(|e| e.into_inner());
        for at in held.1.values_mut() {
            *at = at.saturating_sub(upto);
        }
        let mut left = self.left.lock().unwrap_or_else(|e| e.into_inner());
        *left = left.saturating_sub(upto);
        *file = fresh;
        Ok(())
    }

    pub fn path(&self) -> &Path {
        &self.path
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_trims_and_ignores_a_torn_line() {
        let dir = tempfile::tempdir().unwrap();
        let log = Arc::new(IntentLog::open(dir.path()).unwrap());
        log.ids(&["a.md".into(), "odd\n\"id\"\t".into()]).unwrap().answered();
        let mark = log.mark();
        log.source("docs/b.md").unwrap().answered();
        assert_eq!(
            log.read().unwrap(),
            Intents { ids: vec!["a.md".into(), "odd\n\"id\"\t".into()], sources: vec!["docs/b.md".into()] }
        );
        log.trim(mark).unwrap();
        assert_eq!(log.read().unwrap(), Intents { ids: vec![], sources: vec!["docs/b.md".into()] });
        std::fs::OpenOptions::new().append(true).open(log.path()).unwrap().write_all(b"i\t\"torn").unwrap();
        assert_eq!(log.read().unwrap().ids, Vec::<String>::new());
        // Opened again (a start after the crash): the torn line is cut, the next record reads.
        let log = Arc::new(IntentLog::open(dir.path()).unwrap());
        log.ids(&["next".into()]).unwrap().answered();
        assert_eq!(log.read().unwrap().ids, ["next"]);
        log.release_left(); // (what the crash left was undone)
        log.trim(log.mark()).unwrap();
        assert!(log.read().unwrap().is_empty());
    }

    #[test]
    fn a_recovery_reads_what_an_earlier_process_left_not_this_ones_writes() {
        let dir = tempfile::tempdir().unwrap();
        let earlier = Arc::new(IntentLog::open(dir.path()).unwrap());
        drop(earlier.ids(&["crashed".into()]).unwrap());
        drop(earlier);
        let log = Arc::new(IntentLog::open(dir.path()).unwrap());
        log.ids(&["own, before init()".into()]).unwrap().answered();
        assert_eq!(log.read_left().unwrap().ids, ["crashed"]);
        assert_eq!(log.read().unwrap().ids, ["crashed", "own, before init()"]);
        log.trim(log.mark()).unwrap();
        assert_eq!(log.read_left().unwrap().ids, ["crashed"], "held until a recovery undid it");
        log.release_left();
        log.trim(log.mark()).unwrap();
        assert!(log.read_left().unwrap().is_empty());
    }

    #[test]
    fn a_trim_never_passes_a_call_still_in_flight_or_cut_short() {
        let dir = tempfile::tempdir().unwrap();
        let log = Arc::new(IntentLog::open(dir.path()).unwrap());
        log.ids(&["done".into()]).unwrap().answered();
        let in_flight = log.ids(&["flying".into()]).unwrap();
        log.ids(&["after".into()]).unwrap().answered();
        let mark = log.mark();
        in_flight.answered(); // answered after the save took its copy: still not covered
        log.trim(mark).unwrap();
        assert_eq!(log.read().unwrap().ids, ["flying", "after"]);
        drop(log.ids(&["cut".into()]).unwrap()); // its call was dropped unanswered
        log.trim(log.mark()).unwrap();
        assert_eq!(log.read().unwrap().ids, ["cut"]);
        log.trim(log.mark()).unwrap();
        assert_eq!(log.read().unwrap().ids, ["cut"], "held until the next start");
    }
}
