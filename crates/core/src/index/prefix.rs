//! Documents counted and found by id prefix (Mastra's `countByPrefix` and
//! `removeByPrefix`: skills keep their documents under `skill-scope:` and
//! Mastra's Workspace counts them on every search). A prefix asked for once
//! is tracked (the last `TRACKED` of them): its count is kept up to date by
//! every write, so counting it again costs nothing; others are counted by
//! a scan.

use super::Bm25Index;

/// Tracked prefixes and their live document counts, the first tracked
/// going first past `TRACKED` (every write looks at each; a caller that
/// asked for thousands of prefixes slowed every write down 20-fold).
#[derive(Debug, Clone, Default)]
pub(crate) struct PrefixCounts(std::collections::VecDeque<(Box<str>, usize)>);

/// Prefixes whose counts are kept (Mastra keeps its skills under one).
pub const TRACKED: usize = 16;

impl PrefixCounts {
    pub fn get(&self, prefix: &str) -> Option<usize> {
        self.0.iter().find(|(p, _)| &**p == prefix).map(|(_, n)| *n)
    }

    /// A document with this id was added (`delta` 1) or removed (-1).
    pub fn update(&mut self, id: &str, added: bool) {
        for (p, n) in &mut self.0 {
            if id.starts_with(&**p) {
                if added {
                    *n += 1;
                } else {
                    *n -= 1;
                }
            }
        }
    }
}

impl Bm25Index {
    /// Live documents whose id starts with `prefix`: O(1) for a tracked
    /// prefix, a scan otherwise.
    pub fn count_prefix(&self, prefix: &str) -> usize {
        self.prefixes.get(prefix).unwrap_or_else(|| self.documents().filter(|d| d.id.starts_with(prefix)).count())
    }

    /// Whether `count_prefix(prefix)` is O(1).
    pub fn tracks_prefix(&self, prefix: &str) -> bool {
        self.prefixes.get(prefix).is_some()
    }

    /// Keeps the count of `prefix` from now on.
    pub fn track_prefix(&mut self, prefix: &str) {
        if !self.tracks_prefix(prefix) {
            let n = self.count_prefix(prefix);
            if self.prefixes.0.len() >= TRACKED {
                self.prefixes.0.pop_front();
            }
            self.prefixes.0.push_back((prefix.into(), n));
        }
    }

    /// The ids of live documents starting with `prefix`, in slot order.
    pub fn ids_with_prefix(&self, prefix: &str) -> Vec<String> {
        self.documents().filter(|d| d.id.starts_with(prefix)).map(|d| d.id.clone()).collect()
    }
}

#[cfg(test)]
mod tests {
    use crate::analysis::tokenizer::Tokenizer;
    use crate::analysis::Analyzed;
    use crate::index::{Bm25Index, Bm25Params, NewDocument};

    fn doc(t: &Tokenizer, id: &str) -> NewDocument {
        NewDocument {
            id: id.into(),
            content: "text".into(),
            metadata: None,
            start_line_offset: None,
            analyzed: Analyzed::of_text(t, "text"),
        }
    }

    #[test]
    fn at_most_tracked_prefixes_are_kept_the_first_going_first() {
        let t = Tokenizer::default();
        let mut ix = Bm25Index::new(Bm25Params::default());
        ix.upsert(doc(&t, "p0/a"), 1);
        for i in 0..super::super::prefix::TRACKED + 1 {
            ix.track_prefix(&format!("p{i}/"));
        }
        assert!(!ix.tracks_prefix("p0/"));
        assert!(ix.tracks_prefix("p1/") && ix.tracks_prefix(&format!("p{}/", super::super::prefix::TRACKED)));
        // Counted by a scan once it is no longer tracked: still right.
        ix.upsert(doc(&t, "p0/b"), 2);
        assert_eq!(ix.count_prefix("p0/"), 2);
    }

    #[test]
    fn tracked_counts_follow_writes() {
        let t = Tokenizer::default();
        let mut ix = Bm25Index::new(Bm25Params::default());
        ix.upsert(doc(&t, "skill-scope:a"), 1);
        ix.upsert(doc(&t, "docs/x.md"), 2);
        assert_eq!(ix.count_prefix("skill-scope:"), 1);
        ix.track_prefix("skill-scope:");
        assert!(ix.tracks_prefix("skill-scope:"));
        ix.upsert(doc(&t, "skill-scope:b"), 3);
        ix.upsert(doc(&t, "skill-scope:b"), 4); // a replacement counts once
        ix.add_bulk(vec![doc(&t, "skill-scope:c"), doc(&t, "other")], 5, &mut |_| {});
        assert_eq!(ix.count_prefix("skill-scope:"), 3);
        ix.remove("skill-scope:a", 6);
        assert_eq!(ix.count_prefix("skill-scope:"), 2);
        assert_eq!(ix.ids_with_prefix("skill-scope:"), ["skill-scope:b", "skill-scope:c"]);
        for i in 0..5000 {
            ix.upsert(doc(&t, &format!("n{i}")), 10 + i);
        }
        for i in 0..5000 {
            ix.remove(&format!("n{i}"), 10_000 + i); // compactions on the way
        }
        assert_eq!(ix.count_prefix("skill-scope:"), 2);
        assert_eq!(ix.count_prefix(""), 4); // b, c, other, docs/x.md
        ix.clear(20_000);
        assert_eq!(ix.count_prefix("skill-scope:"), 0);
    }
}
