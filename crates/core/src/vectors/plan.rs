//! What to write to and delete from a vector store (carried out by the
//! engine's one vector-write pipeline, `engine::vector_write`): which texts
//! a rebuild embeds, which stale vectors to delete, how writes are grouped,
//! which files fail, and what the ledger records. Vector writes are all or
//! nothing per source (a file, or one document); a rebuild's file whose
//! vectors fail stays in the keyword index (see `settle`).

use super::ledger::Ledger;
use crate::index::NewDocument;
use crate::ingest::{Failed, FileOutcome};
use crate::vectors::metadata::written_hash;
use rustc_hash::{FxHashMap, FxHashSet};

/// At most this many vectors per `upsert` call, as Mastra.
pub const MAX_UPSERT: usize = 100;

/// The documents of a file outcome (none for a skipped or failed file).
pub fn docs_of(o: &FileOutcome) -> &[NewDocument] {
    match o {
        FileOutcome::Documents { docs, .. } => docs,
        _ => &[],
    }
}

/// The documents a rebuild embeds, by file: `(file, documents of it)` for
/// every file with a document whose vector the store does not hold for
/// the same text (`ledger` tells which it holds).
pub fn texts_to_embed(outcomes: &[FileOutcome], ledger: &Ledger) -> Vec<(usize, Vec<usize>)> {
    let mut out = Vec::new();
    for (file, o) in outcomes.iter().enumerate() {
        if let FileOutcome::Documents { id, docs, .. } = o {
            let members: Vec<usize> =
                (0..docs.len()).filter(|&j| !ledger.holds(id, &docs[j].id, written_hash(&docs[j]))).collect();
            if !members.is_empty() {
                out.push((file, members));
            }
        }
    }
    out
}

/// Results per text from results per group of `group_size` texts: a failed
/// group fails each of its texts with its error.
pub fn spread<V, E: Clone>(
    groups: impl IntoIterator<Item = Result<Vec<V>, E>>,
    group_size: usize,
    total: usize,
) -> Vec<Result<V, E>> {
    let mut out: Vec<Result<V, E>> = Vec::with_capacity(total);
    for g in groups {
        match g {
            Ok(vs) => out.extend(vs.into_iter().map(Ok)),
            Err(e) => {
                let n = group_size.max(1).min(total - out.len());
                out.extend((0..n).map(|_| Err(e.clone())));
            }
        }
    }
    out
}

/// A deletion a rebuild makes before writing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StaleDelete {
    /// The file they were written for.
    pub file: String,
    /// Whether this workspace wrote them (the ledger's), not vectors another
    /// writer may have left (deleted on the chance: a failure is no harm).
    pub written: bool,
    /// Vectors to delete by id.
    pub ids: Vec<String>,
    /// Also delete by `sourceFile` (the chunks another process wrote).
    pub by_source: Option<String>,
}

/// Stale vectors of files still here: chunks this workspace wrote that the
/// file no longer has, or, for a file this workspace never wrote on a store
/// others write too (`shared`: a JavaScript store an earlier process wrote,
/// a `LocalVector` another workspace writes), whatever they wrote for it
/// (Mastra's per-file `deleteVector` and `deleteVectors` by `sourceFile`).
pub fn stale_deletes(outcomes: &[FileOutcome], ledger: &Ledger, shared: bool) -> Vec<StaleDelete> {
    let mut out = Vec::new();
    for o in outcomes {
        let FileOutcome::Documents { id, docs, .. } = o else { continue };
        let (ids, written) = match ledger.get(id) {
            Some(before) => (before.iter().filter(|b| !docs.iter().any(|d| &d.id == *b)).cloned().collect(), true),
            None if shared => (vec![id.clone()], false),
            None => continue,
        };
        if ids.is_empty() {
            continue;
        }
        let by_source = (ids.len() == 1 && &ids[0] == id).then(|| id.clone());
        out.push(StaleDelete { file: id.clone(), ids, by_source, written });
    }
    out
}

/// Sources this workspace wrote that a rebuild no longer has (files gone,
/// documents added with `index()`).
pub fn gone_sources(outcomes: &[FileOutcome], ledger: &Ledger) -> Vec<String> {
    let present: FxHashSet<&str> = outcomes
        .iter()
        .filter_map(|o| match o {
            FileOutcome::Documents { id, .. } => Some(id.as_str()),
            _ => None,
        })
        .collect();
    ledger.sources_absent_from(&present)
}

/// Sources whose vectors an incremental update deletes: files gone, and
/// files read again that are now skipped or failing, that this workspace
/// wrote.
pub fn dropped_sources(gone: &[String], changed: &[FileOutcome], ledger: &Ledger) -> Vec<String> {
    let dropped = changed.iter().filter_map(|o| match o {
        FileOutcome::Skipped { id, .. } | FileOutcome::Failed { id, .. } => Some(id),
        FileOutcome::Documents { .. } => None,
    });
    gone.iter().chain(dropped).filter(|id| ledger.get(id).is_some()).cloned().collect()
}

/// What `settle` leaves to the engine.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Settled {
    /// The ids of the failed files' partial writes, to delete.
    pub partial: Vec<Vec<String>>,
    /// Files kept in the keyword index whose vectors failed, with why
    /// (`vectors_failed`), for `IndexReport.failed`.
    pub vectors_failed: Vec<Failed>,
}

/// Why a file is listed as failed when vectors it no longer has could not
/// be deleted from the store.
pub fn vectors_undeleted(error: &str) -> String {
    format!("{UNDELETED}: {error} (they are left out of results, and deleted at the next update)")
}

const UNDELETED: &str = "old vectors not deleted from the vector store";

/// Whether a failure is `vectors_undeleted`'s.
pub fn is_undeleted(error: &str) -> bool {
    error.starts_with(UNDELETED)
}

/// The report of a file indexed for keyword search whose vectors could not
/// be written: the embedder's (or the store's) error, and what became of it.
pub fn vectors_failed(error: &str) -> String {
    format!(
        "vectors not written: {error} (the file is indexed for keyword search, and embedded again at the next init())"
    )
}

/// The report of a document given to `index()` (loaded from a snapshot)
/// whose vectors could not be written again.
pub fn record_vectors_failed(error: &str) -> String {
    format!(
        "vectors not written: {error} (the document is kept for keyword search, and embedded again at the next init())"
    )
}

/// After a rebuild's writes: records each written file in the ledger. A
/// file whose vectors failed is forgotten by the ledger (so the next
/// `init()` embeds it again: `persist` reads again a file the ledger does
/// not know) and its partial writes are deleted. With a keyword index it
/// stays there, reported in `vectors_failed`: an embedder that is down, out
/// of quota or refuses one file must not take files out of keyword search.
/// Without one it is in no index: `FileOutcome::Failed`, its error as it was.
pub fn settle(
    outcomes: &mut [FileOutcome],
    failed: &FxHashMap<usize, String>,
    ledger: &mut Ledger,
    keyword: bool,
) -> Settled {
    let mut out = Settled::default();
    for (i, o) in outcomes.iter_mut().enumerate() {
        let FileOutcome::Documents { id, docs, .. } = o else { continue };
        let ids: Vec<String> = docs.iter().map(|d| d.id.clone()).collect();
        match failed.get(&i) {
            None => ledger.replace(id, ids),
            Some(err) => {
                ledger.forget(id);
                ledger.drop_texts(&ids);
                out.partial.push(ids);
                if keyword {
                    out.vectors_failed.push(Failed { path: id.clone(), error: vectors_failed(err) });
                } else {
                    *o = FileOutcome::Failed { id: id.clone(), error: err.clone() };
                }
            }
        }
    }
    out
}

/// Groups the documents of files into store writes of at most `max`
/// documents, keeping each file's documents in one write where it fits (a
/// file with more than `max` documents spans several). `files` gives each
/// file's document count; the result lists `(file, document index)`.
pub fn write_units(files: &[(usize, usize)], max: usize) -> Vec<Vec<(usize, usize)>> {
    let max = max.max(1);
    let mut units = Vec::new();
    let mut unit: Vec<(usize, usize)> = Vec::new();
    for &(file, count) in files {
        if !unit.is_empty() && unit.len() + count > max {
            units.push(std::mem::take(&mut unit));
        }
        for j in 0..count {
            if unit.len() == max {
                units.push(std::mem::take(&mut unit));
            }
            unit.push((file, j));
        }
    }
    if !unit.is_empty() {
        units.push(unit);
    }
    units
}

#[cfg(test)]
mod tests {
    #[test]
    fn write_units_keep_files_whole_where_they_fit() {
        let units = super::write_units(&[(0, 2), (1, 2), (2, 3), (3, 7), (4, 1)], 4);
        let shape: Vec<Vec<(usize, usize)>> = units;
        assert_eq!(shape[0], [(0, 0), (0, 1), (1, 0), (1, 1)]);
        assert_eq!(shape[1], [(2, 0), (2, 1), (2, 2)]);
        assert_eq!(shape[2], [(3, 0), (3, 1), (3, 2), (3, 3)]);
        assert_eq!(shape[3], [(3, 4), (3, 5), (3, 6), (4, 0)]);
        assert!(super::write_units(&[], 100).is_empty());
    }

    #[test]
    fn a_held_text_is_not_embedded_again_unless_it_moved() {
        use crate::index::NewDocument;
        use crate::ingest::FileOutcome;
        use crate::vectors::ledger::Ledger;
        use crate::vectors::metadata::written_hash;
        let doc = |id: &str, line: u32| NewDocument {
            id: id.into(),
            content: "same text".into(),
            metadata: None,
            start_line_offset: Some(line),
            analyzed: Default::default(),
        };
        let file = |docs| FileOutcome::Documents { id: "f".into(), docs, chunked: true, hash: 0 };
        let mut ledger = Ledger::default();
        ledger.replace("f", vec!["f#chunk-0".into(), "f#chunk-1".into()]);
        ledger.note_text("f#chunk-0", written_hash(&doc("f#chunk-0", 1)));
        ledger.note_text("f#chunk-1", written_hash(&doc("f#chunk-1", 40)));
        // chunk-0 unchanged; chunk-1 has the same text on other lines.
        let plan = super::texts_to_embed(&[file(vec![doc("f#chunk-0", 1), doc("f#chunk-1", 41)])], &ledger);
        assert_eq!(plan, [(0, vec![1])]);
    }

    #[test]
    fn a_file_whose_vectors_failed_stays_for_keyword_search_and_is_embedded_next_time() {
        use crate::index::NewDocument;
        use crate::ingest::FileOutcome;
        use crate::vectors::ledger::Ledger;
        let file = |id: &str| FileOutcome::Documents {
            id: id.into(),
            docs: vec![NewDocument {
                id: id.into(),
                content: "text".into(),
                metadata: None,
                start_line_offset: None,
                analyzed: Default::default(),
            }],
            chunked: false,
            hash: 0,
        };
        let failed: rustc_hash::FxHashMap<usize, String> = [(1, "401 Unauthorized".to_string())].into_iter().collect();
        for keyword in [true, false] {
            let mut ledger = Ledger::default();
            ledger.replace("b.md", vec!["b.md".into()]);
            ledger.note_text("b.md", 7);
            let mut outcomes = vec![file("a.md"), file("b.md")];
            let settled = super::settle(&mut outcomes, &failed, &mut ledger, keyword);
            assert_eq!(settled.partial, [vec!["b.md".to_string()]]);
            // Written: recorded; failed: forgotten, so the next init() embeds it.
            assert_eq!((ledger.get("a.md").map(<[String]>::len), ledger.get("b.md")), (Some(1), None));
            assert!(!ledger.holds("b.md", "b.md", 7));
            if keyword {
                assert!(matches!(&outcomes[1], FileOutcome::Documents { .. }));
                assert_eq!(settled.vectors_failed.len(), 1);
                assert_eq!(settled.vectors_failed[0].path, "b.md");
                assert!(settled.vectors_failed[0].error.starts_with("vectors not written: 401 Unauthorized ("));
            } else {
                assert!(matches!(&outcomes[1], FileOutcome::Failed { error, .. } if error == "401 Unauthorized"));
                assert!(settled.vectors_failed.is_empty());
            }
        }
    }

    #[test]
    fn spread_and_units() {
        let groups: Vec<Result<Vec<u8>, String>> = vec![Ok(vec![1, 2]), Err("bad".into()), Ok(vec![5])];
        let per = super::spread(groups, 2, 5);
        assert_eq!(per, [Ok(1), Ok(2), Err("bad".to_string()), Err("bad".to_string()), Ok(5)]);
        // One document per source: units of `MAX_UPSERT` in order.
        let ones: Vec<(usize, usize)> = (0..248).map(|i| (i, 1)).collect();
        let units = super::write_units(&ones, super::MAX_UPSERT);
        assert_eq!(units.iter().map(Vec::len).collect::<Vec<_>>(), [100, 100, 48]);
        assert_eq!(units[1][30], (130, 0));
    }
}
