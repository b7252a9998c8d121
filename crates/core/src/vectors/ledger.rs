//! What this workspace wrote to its vector store: the ids of the vectors of
//! each source (a file path, or the id given to `index()`). It decides
//! what a removal, a clear or a rebuild deletes, so that the store never
//! keeps vectors of documents the workspace no longer has, and never loses
//! vectors of another workspace sharing it.

use rustc_hash::{FxHashMap, FxHashSet};

#[derive(Debug, Default, Clone)]
pub struct Ledger {
    by_source: FxHashMap<String, Vec<String>>,
}

impl Ledger {
    /// Adds `ids` to what `source` has in the store.
    pub fn record(&mut self, source: &str, ids: impl IntoIterator<Item = String>) {
        let entry = self.by_source.entry(source.to_string()).or_default();
        for id in ids {
            if !entry.contains(&id) {
                entry.push(id);
            }
        }
    }

    /// `source` now has exactly `ids` in the store.
    pub fn replace(&mut self, source: &str, ids: Vec<String>) {
        self.by_source.insert(source.to_string(), ids);
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
        let known = !ids.is_empty();
        if !ids.iter().any(|i| i == source) {
            ids.push(source.to_string());
        }
        (ids, known)
    }

    /// Forgets `source` (after its vectors were deleted).
    pub fn forget(&mut self, source: &str) {
        self.by_source.remove(source);
    }

    /// Every id written, to delete on `clear()`.
    pub fn all_ids(&self) -> Vec<String> {
        self.by_source.values().flatten().cloned().collect()
    }

    pub fn clear(&mut self) {
        self.by_source.clear();
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

#[cfg(test)]
mod tests {
    use super::*;

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
        l.forget("a.md");
        assert_eq!(l.all_ids(), ["doc"]);
        l.replace("doc", vec![]);
        assert_eq!(l.count(), 0);
    }
}
