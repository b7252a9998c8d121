//! File-level results (`group: 'file'`): the chunks of a file folded into
//! one result, ranked by the file's best chunk (the maximum: a sum over
//! chunks favours long files and lost 0.11 nDCG@10 on codeloc-dev, 0.532
//! against 0.423), with the best chunk's content and line range and every
//! matching chunk's range in `line_ranges`.

use super::SearchHit;
use rustc_hash::FxHashMap;

/// The file a hit belongs to: a chunk's `sourceFile`, else its id.
pub fn file_of(hit: &SearchHit) -> &str {
    crate::index::chunk_source(&hit.id, hit.metadata.as_deref()).unwrap_or(&hit.id)
}

/// Folds `hits` (best first) into at most `top_k` files, best first; each
/// keeps its best hit's content, score and range, under the file's path.
pub fn by_file(hits: Vec<SearchHit>, top_k: usize) -> Vec<SearchHit> {
    let mut files: Vec<SearchHit> = Vec::new();
    let mut at: FxHashMap<String, usize> = FxHashMap::default();
    for h in hits {
        let file = file_of(&h).to_string();
        match at.get(&file) {
            Some(&i) => files[i].line_ranges.extend(h.line_range),
            None => {
                at.insert(file.clone(), files.len());
                let mut best = h;
                best.line_ranges = best.line_range.into_iter().collect();
                best.id = file;
                files.push(best);
            }
        }
    }
    // In the order of each file's best hit (tied files as their best hits
    // tie, by id: `ab!` before `ab`, whose chunk is `ab#chunk-0`): sorted
    // by path, a tie across the depth `grouped` stopped at would order a
    // larger `topK`'s first files otherwise, and vector modes' hits come in
    // the store's raw order, which the scores shown (clamped) do not keep.
    files.truncate(top_k);
    for f in &mut files {
        f.line_ranges.sort_unstable();
        f.line_ranges.dedup();
    }
    files
}

/// The files `hits` come from.
pub fn files_of(hits: &[SearchHit]) -> rustc_hash::FxHashSet<&str> {
    hits.iter().map(file_of).collect()
}

/// How deep the vector modes ask before they give up filling `top_k`
/// files: a store is asked for at most this many hits (Pinecone's limit).
pub const MAX_VECTOR_DEPTH: usize = 10_000;

/// How many chunk hits to ask for to fill `top_k` files: four per file at
/// first (`grouped` asks again with more when files repeat more).
pub fn first_depth(top_k: usize) -> usize {
    top_k.saturating_mul(4).max(50)
}

/// Runs `search(depth)` (best-first hits) deep enough to fill `top_k`
/// files: the depth doubles while the hits ran out at the depth asked and
/// fewer files than wanted came of them. `chunks_of(files)` then gives the
/// line range of every matching chunk of the files chosen (as `(file,
/// range)`), so that each file's `line_ranges` are all of them whatever
/// `top_k` and `minScore` are (a weak chunk of a file is still a place
/// the query matches).
pub fn grouped(
    top_k: usize,
    mut search: impl FnMut(usize) -> Vec<SearchHit>,
    chunks_of: impl FnOnce(&[String]) -> Vec<(String, (u32, u32))>,
) -> Vec<SearchHit> {
    let mut depth = first_depth(top_k);
    loop {
        let hits = search(depth);
        let full = hits.len() >= depth;
        let mut files = by_file(hits, top_k);
        if files.len() >= top_k || !full || depth >= 1 << 20 {
            let names: Vec<String> = files.iter().map(|f| f.id.clone()).collect();
            add_ranges(&mut files, chunks_of(&names));
            return files;
        }
        depth = depth.saturating_mul(2);
    }
}

/// The ranges of `chunks` added to those of the files they belong to.
fn add_ranges(files: &mut [SearchHit], chunks: Vec<(String, (u32, u32))>) {
    let at: FxHashMap<&str, usize> = files.iter().enumerate().map(|(i, f)| (f.id.as_str(), i)).collect();
    let mut extra: Vec<(usize, (u32, u32))> = Vec::new();
    for (file, range) in &chunks {
        if let Some(&i) = at.get(file.as_str()) {
            extra.push((i, *range));
        }
    }
    drop(at);
    for (i, range) in extra {
        files[i].line_ranges.push(range);
    }
    for f in files.iter_mut() {
        f.line_ranges.sort_unstable();
        f.line_ranges.dedup();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{json, Map, Value};
    use std::sync::Arc;

    fn chunk(file: &str, n: usize, score: f64, range: (u32, u32)) -> SearchHit {
        let meta: Map<String, Value> = json!({ "sourceFile": file }).as_object().unwrap().clone();
        SearchHit {
            id: format!("{file}#chunk-{n}"),
            content: format!("chunk {n} of {file}").into(),
            score,
            bm25: Some(score),
            vector: None,
            line_range: Some(range),
            line_ranges: Vec::new(),
            metadata: Some(Arc::new(meta)),
            rerank: None,
            line_offset: None,
            line_cut: Default::default(),
        }
    }

    #[test]
    fn each_file_once_with_every_range_ranked_by_its_best_chunk() {
        let mut whole = chunk("b.md", 0, 0.5, (1, 2));
        whole.id = "b.md".into();
        whole.metadata = None;
        let hits = vec![
            chunk("a.rs", 3, 1.0, (60, 70)),
            whole,
            chunk("a.rs", 0, 0.4, (1, 9)),
            chunk("a.rs", 3, 0.3, (60, 70)),
        ];
        let files = by_file(hits, 10);
        assert_eq!(files.iter().map(|f| f.id.as_str()).collect::<Vec<_>>(), ["a.rs", "b.md"]);
        assert_eq!(files[0].line_range, Some((60, 70)));
        assert_eq!(files[0].line_ranges, [(1, 9), (60, 70)]);
        assert_eq!(files[0].content.as_str(), "chunk 3 of a.rs");
        assert_eq!(files[1].line_ranges, [(1, 2)]);
        assert_eq!(by_file(files, 1).len(), 1);
    }

    #[test]
    fn asks_deeper_until_enough_files() {
        let mut asked = Vec::new();
        // 200 chunks of one file, then other files: 3 files need a deeper search.
        let all: Vec<SearchHit> = (0..200)
            .map(|i| chunk("big.rs", i, 1.0 - i as f64 / 1000.0, (i as u32, i as u32)))
            .chain((0..5).map(|i| chunk(&format!("f{i}.rs"), 0, 0.1, (1, 1))))
            .collect();
        let files = grouped(
            3,
            |depth| {
                asked.push(depth);
                all.iter().take(depth).cloned().collect()
            },
            // Every hit was seen: the chunks looked up add nothing new.
            |_| all.iter().map(|h| (file_of(h).to_string(), h.line_range.unwrap())).collect(),
        );
        assert_eq!(files.len(), 3);
        assert_eq!(asked, [50, 100, 200, 400]);
        assert_eq!(files[0].line_ranges.len(), 200);
    }

    #[test]
    fn every_matching_chunk_of_a_chosen_file_is_in_its_ranges() {
        let all: Vec<SearchHit> =
            (0..200).map(|i| chunk("big.rs", i, 1.0 - i as f64 / 1000.0, (i as u32, i as u32))).collect();
        let files = grouped(
            1,
            |depth| all.iter().take(depth).cloned().collect(),
            |names| {
                assert_eq!(names, ["big.rs"]);
                all.iter().map(|h| (file_of(h).to_string(), h.line_range.unwrap())).collect()
            },
        );
        assert_eq!(files.len(), 1);
        assert_eq!(files[0].line_ranges.len(), 200, "not only the 50 hits of the first depth");
    }
}
