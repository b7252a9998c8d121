//! What this workspace wrote to its vector store: the ids of the vectors of
//! each source (a file path, or the id given to `index()`). It decides
//! what a removal, a clear or a rebuild deletes, so that the store never
//! keeps vectors of documents the workspace no longer has, and never loses
//! vectors of another workspace sharing it.

use crate::bytes::codec::{Decoder, Encoder};
use crate::bytes::SnapshotError;
use rustc_hash::{FxHashMap, FxHashSet};

#[derive(Debug, Default, Clone, PartialEq)]
pub struct Ledger {
    by_source: FxHashMap<String, Vec<String>>,
    /// The hash of what was written for each id (`metadata::written_hash`:
    /// text and metadata): an unchanged document is not embedded again.
    texts: FxHashMap<String, u64>,
    /// Ids whose deletion from the store failed (a gone file's vectors, a
    /// changed file's old chunks): kept out of results, and deleted again
    /// at the next rebuild or update. Saved as a source named `UNDELETED`:
    /// a version without this field reads it as a source of its own (its
    /// ids counted in `stats().vectors`), deleted by its next full rebuild.
    undeleted: FxHashSet<String>,
}

/// The saved ledger's entry of `undeleted`: a name no path or id has, with
/// no NUL (PostgreSQL refuses one, and an older version deletes the
/// source's own name among its ids).
const UNDELETED: &str = "\u{1}workspace-search:undeleted";

impl Ledger {
    /// Notes that the vector of `id` was embedded from a text with this hash.
    pub fn note_text(&mut self, id: &str, hash: u64) {
        self.texts.insert(id.to_string(), hash);
    }

    /// Whether the store holds a vector of `id`, written for `source`, of a
    /// text with this hash (so embedding it again would give the same).
    pub fn holds(&self, source: &str, id: &str, hash: u64) -> bool {
        self.texts.get(id) == Some(&hash) && self.get(source).is_some_and(|ids| ids.iter().any(|i| i == id))
    }

    /// Whether a vector of `id` is recorded as written by this embedder.
    pub fn has_text(&self, id: &str) -> bool {
        self.texts.contains_key(id)
    }

    /// Takes in what `newer` recorded (its sources replace these ones):
    /// a saved ledger absorbing the writes made before it was loaded.
    pub fn absorb(&mut self, newer: Ledger) {
        for (source, ids) in newer.by_source {
            if let Some(old) = self.by_source.insert(source, ids) {
                self.drop_texts(&old);
            }
        }
        self.texts.extend(newer.texts);
        self.undeleted.extend(newer.undeleted);
        if self.undeleted.is_empty() {
            return;
        }
        let rewritten: Vec<String> =
            self.by_source.values().flatten().filter(|id| self.undeleted.contains(*id)).cloned().collect();
        for id in rewritten {
            self.undeleted.remove(&id);
        }
    }

    /// Notes `ids` as still in the store though meant to be gone (their
    /// deletion failed).
    pub fn note_undeleted(&mut self, ids: impl IntoIterator<Item = String>) {
        for id in ids {
            self.texts.remove(&id);
            self.undeleted.insert(id);
        }
    }

    /// Whether `id`'s vector is one whose deletion failed (not a result).
    pub fn is_undeleted(&self, id: &str) -> bool {
        self.undeleted.contains(id)
    }

    pub fn has_undeleted(&self) -> bool {
        !self.undeleted.is_empty()
    }

    /// The ids whose deletion failed, sorted, to delete again.
    pub fn undeleted_ids(&self) -> Vec<String> {
        let mut ids: Vec<String> = self.undeleted.iter().cloned().collect();
        ids.sort();
        ids
    }

    /// `ids`, owed, are deleted from the store now.
    pub fn deleted(&mut self, ids: &[String]) {
        for id in ids {
            self.undeleted.remove(id);
        }
    }

    /// Whether this workspace wrote `id` in any way: as a source, a chunk
    /// listed under its file, or a text it embedded.
    pub fn knows(&self, id: &str) -> bool {
        self.by_source.contains_key(id) || self.listed_under_file(id) || self.texts.contains_key(id)
    }

    /// Moves what `source` has in the store to the undeleted ids (its
    /// deletion failed): the source is gone, its vectors are not results.
    pub fn forget_undeleted(&mut self, source: &str) {
        let (ids, _) = self.removal(source);
        self.forget(source);
        self.note_undeleted(ids);
    }

    /// Forgets every text hash: each text is embedded again (another
    /// embedder).
    pub fn forget_texts(&mut self) {
        self.texts.clear();
    }

    /// Forgets the text hashes of `ids` (vectors deleted or never whole).
    pub fn drop_texts(&mut self, ids: &[String]) {
        for id in ids {
            self.texts.remove(id);
        }
    }

    /// Adds `ids` to what `source` has in the store.
    pub fn record(&mut self, source: &str, ids: impl IntoIterator<Item = String>) {
        let ids: Vec<String> = ids.into_iter().collect();
        self.take_over(source, &ids);
        self.written_again(&ids);
        let entry = self.by_source.entry(source.to_string()).or_default();
        for id in ids {
            if !entry.contains(&id) {
                entry.push(id);
            }
        }
    }

    /// `source` now has exactly `ids` in the store.
    pub fn replace(&mut self, source: &str, ids: Vec<String>) {
        self.take_over(source, &ids);
        self.written_again(&ids);
        self.by_source.insert(source.to_string(), ids);
    }

    /// Ids written again are in the store as they should be: a deletion
    /// still owed would take them.
    fn written_again(&mut self, ids: &[String]) {
        if !self.undeleted.is_empty() {
            for id in ids {
                self.undeleted.remove(id);
            }
        }
    }

    /// An id has one source: a file's chunk id given to `index()` (its own
    /// source) leaves the file's list, and a file's chunk written again
    /// ends the document `index()` had put under that id. Otherwise removing
    /// one would delete the other's vector (and the other would be taken
    /// for written).
    fn take_over(&mut self, source: &str, ids: &[String]) {
        for id in ids {
            match crate::index::chunk_parent(id) {
                Some(file) if file != source => {
                    if let Some(listed) = self.by_source.get_mut(file) {
                        listed.retain(|i| i != id);
                    }
                }
                Some(_) if id != source && self.by_source.get(id.as_str()).is_some_and(|own| *own == [id.clone()]) => {
                    self.by_source.remove(id.as_str());
                }
                _ => {}
            }
        }
    }

    /// What `source` has in the store, if this workspace wrote it.
    pub fn get(&self, source: &str) -> Option<&[String]> {
        self.by_source.get(source).map(Vec::as_slice)
    }

    /// The ids to delete to remove `source` from the store: what was
    /// written for it, and its own id (a document another process indexed
    /// under that path). Whether this workspace knew the source.
    pub fn removal(&self, source: &str) -> (Vec<String>, bool) {
        let mut ids = self.by_source.get(source).cloned().unwrap_or_default();
        let known = !ids.is_empty() || self.listed_under_file(source);
        if !ids.iter().any(|i| i == source) {
            ids.push(source.to_string());
        }
        (ids, known)
    }

    /// Forgets `ids` of `source` (their vectors deleted), and `source`
    /// itself when none are left: a source counts only what the store holds.
    pub fn withdraw(&mut self, source: &str, ids: &[String]) {
        self.drop_texts(ids);
        if let Some(listed) = self.by_source.get_mut(source) {
            listed.retain(|id| !ids.contains(id));
            if listed.is_empty() {
                self.by_source.remove(source);
            }
        }
    }

    /// Forgets `source` (after its vectors were deleted). A file's chunk
    /// named by its own id leaves its file's list too: kept there, the
    /// file's next read would take the chunk for embedded and never write
    /// its vector again.
    pub fn forget(&mut self, source: &str) {
        if let Some(ids) = self.by_source.remove(source) {
            self.drop_texts(&ids);
        }
        if let Some(file) = crate::index::chunk_parent(source) {
            self.withdraw(file, &[source.to_string()]);
        }
    }

    /// Whether `id` is a chunk its file's list holds (`a.md#chunk-1` of `a.md`).
    fn listed_under_file(&self, id: &str) -> bool {
        crate::index::chunk_parent(id)
            .and_then(|file| self.by_source.get(file))
            .is_some_and(|ids| ids.iter().any(|i| i == id))
    }

    /// The sources that have one of `ids`, or are named among them, sorted
    /// (after a crash: their vectors are in doubt).
    pub fn sources_with(&self, ids: &[String]) -> Vec<String> {
        let doubted: FxHashSet<&str> = ids.iter().map(String::as_str).collect();
        let mut sources: Vec<String> = self
            .by_source
            .iter()
            .filter(|(source, written)| {
                doubted.contains(source.as_str()) || written.iter().any(|id| doubted.contains(id.as_str()))
            })
            .map(|(source, _)| source.clone())
            .collect();
        sources.sort();
        sources
    }

    /// Every id written (and every one whose deletion failed), to delete on `clear()`.
    pub fn all_ids(&self) -> Vec<String> {
        self.by_source.values().flatten().chain(&self.undeleted).cloned().collect()
    }

    pub fn clear(&mut self) {
        self.by_source.clear();
        self.texts.clear();
        self.undeleted.clear();
    }

    /// How many sources (files, `index()` documents) have vectors written.
    pub fn sources(&self) -> usize {
        self.by_source.len()
    }

    /// Vectors written.
    pub fn count(&self) -> usize {
        self.by_source.values().map(Vec::len).sum()
    }

    /// Written ids starting with `prefix`.
    pub fn count_prefix(&self, prefix: &str) -> usize {
        self.by_source.values().flatten().filter(|id| id.starts_with(prefix)).count()
    }

    /// The written ids starting with `prefix`, sorted.
    pub fn with_prefix(&self, prefix: &str) -> Vec<String> {
        let mut ids: Vec<String> =
            self.by_source.values().flatten().filter(|id| id.starts_with(prefix)).cloned().collect();
        ids.sort();
        ids
    }

    /// Forgets the written ids starting with `prefix` (and sources left
    /// with none); returns them, to delete from the store.
    pub fn take_prefix(&mut self, prefix: &str) -> Vec<String> {
        let mut taken = Vec::new();
        self.by_source.retain(|_, ids| {
            ids.retain(|id| {
                let hit = id.starts_with(prefix);
                if hit {
                    taken.push(id.clone());
                    self.texts.remove(id.as_str());
                }
                !hit
            });
            !ids.is_empty()
        });
        taken.sort();
        taken
    }

    /// Sources written that are not in `present` (files gone since, or
    /// documents added with `index()` that a rebuild drops).
    pub fn sources_absent_from(&self, present: &FxHashSet<&str>) -> Vec<String> {
        self.by_source.keys().filter(|s| !present.contains(s.as_str())).cloned().collect()
    }
}

impl Ledger {
    pub fn encode(&self, e: &mut Encoder) {
        let mut sources: Vec<&String> = self.by_source.keys().collect();
        sources.sort();
        let mut undeleted: Vec<&String> = self.undeleted.iter().collect();
        undeleted.sort();
        e.len(sources.len() + usize::from(!undeleted.is_empty()));
        if !undeleted.is_empty() {
            e.str(UNDELETED);
            e.len(undeleted.len());
            for id in undeleted {
                e.str(id);
                e.u8(0);
            }
        }
        for s in sources {
            e.str(s);
            let ids = &self.by_source[s];
            e.len(ids.len());
            for id in ids {
                e.str(id);
                match self.texts.get(id) {
                    Some(&h) => {
                        e.u8(1);
                        e.u64(h);
                    }
                    None => e.u8(0),
                }
            }
        }
    }

    pub fn decode(d: &mut Decoder) -> Result<Ledger, SnapshotError> {
        let mut ledger = Ledger::default();
        let n = d.len(16, "the ledger")?;
        for _ in 0..n {
            let source = d.string("a ledger source")?;
            let m = d.len(9, "a ledger entry")?;
            let mut ids = Vec::with_capacity(m);
            for _ in 0..m {
                let id = d.string("a ledger id")?;
                if d.u8("a text hash")? == 1 {
                    ledger.texts.insert(id.clone(), d.u64("a text hash")?);
                }
                ids.push(id);
            }
            if source == UNDELETED {
                ledger.undeleted.extend(ids);
            } else {
                ledger.by_source.insert(source, ids);
            }
        }
        Ok(ledger)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn undeleted_ids_are_saved_as_a_source_and_end_when_written_again() {
        let mut l = Ledger::default();
        l.record("a.md", ["a.md#chunk-0".to_string(), "a.md#chunk-1".to_string()]);
        l.record("gone.md", ["gone.md".to_string()]);
        l.forget_undeleted("gone.md");
        l.note_undeleted(["a.md#chunk-2".to_string()]);
        assert!(l.is_undeleted("gone.md") && l.is_undeleted("a.md#chunk-2") && l.get("gone.md").is_none());
        assert_eq!((l.sources(), l.count()), (1, 2), "owed deletions are not written vectors");
        let mut e = Encoder::default();
        l.encode(&mut e);
        let back = Ledger::decode(&mut Decoder::new(&e.buf)).unwrap();
        assert_eq!(back, l);
        let mut all = back.all_ids();
        all.sort();
        assert_eq!(all, ["a.md#chunk-0", "a.md#chunk-1", "a.md#chunk-2", "gone.md"], "clear() deletes them too");
        l.record("gone.md", ["gone.md".to_string()]);
        assert!(!l.is_undeleted("gone.md"), "written again: not deleted by the retry");
        assert_eq!(l.undeleted_ids(), ["a.md#chunk-2"]);
        l.deleted(&l.undeleted_ids());
        assert!(!l.has_undeleted());
        assert!(l.knows("a.md#chunk-0") && l.knows("gone.md") && !l.knows("other.md"));
    }

    #[test]
    fn records_removes_and_lists_sources() {
        let mut l = Ledger::default();
        l.record("a.md", ["a.md#chunk-0".to_string(), "a.md#chunk-1".to_string()]);
        l.record("a.md", ["a.md#chunk-1".to_string()]);
        l.record("doc", ["doc".to_string()]);
        assert_eq!(l.count(), 3);
        assert_eq!(l.removal("a.md"), (vec!["a.md#chunk-0".into(), "a.md#chunk-1".into(), "a.md".into()], true));
        assert_eq!(l.removal("doc"), (vec!["doc".into()], true));
        assert_eq!(l.removal("other"), (vec!["other".into()], false));
        let present: FxHashSet<&str> = ["doc"].into_iter().collect();
        assert_eq!(l.sources_absent_from(&present), ["a.md"]);
        assert_eq!(l.count_prefix("a.md#"), 2);
        let mut m = l.clone();
        assert_eq!(m.with_prefix("a.md#chunk-"), ["a.md#chunk-0", "a.md#chunk-1"]);
        assert_eq!(m.take_prefix("a.md#chunk-"), ["a.md#chunk-0", "a.md#chunk-1"]);
        assert_eq!((m.count(), m.get("a.md")), (1, None));
        l.note_text("doc", 42);
        l.note_text("a.md#chunk-0", 7);
        assert!(l.holds("doc", "doc", 42) && !l.holds("doc", "doc", 43) && !l.holds("a.md", "doc", 42));
        let mut e = Encoder::default();
        l.encode(&mut e);
        assert_eq!(Ledger::decode(&mut Decoder::new(&e.buf)).unwrap(), l);
        // A chunk named by its own id (unindex() of it) leaves its file's list.
        let mut c = l.clone();
        c.note_text("a.md#chunk-1", 8);
        assert_eq!(c.removal("a.md#chunk-1"), (vec!["a.md#chunk-1".into()], true));
        c.forget("a.md#chunk-1");
        assert_eq!(c.get("a.md"), Some(&["a.md#chunk-0".to_string()][..]));
        assert!(!c.holds("a.md", "a.md#chunk-1", 8) && c.holds("a.md", "a.md#chunk-0", 7));
        l.forget("a.md");
        assert!(!l.holds("a.md", "a.md#chunk-0", 7));
        assert_eq!(l.all_ids(), ["doc"]);
        l.replace("doc", vec![]);
        assert_eq!(l.count(), 0);
    }
}
