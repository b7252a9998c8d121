//! Git history as a ranking signal: a small BM25 index of one document per
//! file (the messages of the commits that touched it, `ingest::history`),
//! fused with the content ranking: a hit's score becomes
//! `content / best content + HISTORY_WEIGHT * history / best history`,
//! normalised again. Only files the content ranking found are moved (a
//! file no word of the query is in is not brought in by its history).
//! Measured on codeloc-dev (file level): min-max fusion at weight 0.5
//! against 0.721 without, 0.759; reciprocal-rank fusion 0.755; weight 0.7
//! 0.755, 0.3 0.756.

use super::{keyword_search, KeywordQuery, SearchHit};
use crate::analysis::tokenizer::Tokenizer;
use crate::analysis::Analyzed;
use crate::index::id_base::IdBase;
use crate::index::{Bm25Index, Bm25Params, NewDocument};
use crate::ingest::history::FileMessages;
use rustc_hash::FxHashMap;

pub const HISTORY_WEIGHT: f64 = 0.5;

/// BM25's length normalisation of a file's history (`b`; 0.75 for
/// content). A file that many commits touched has a long history, and is
/// no less likely to be touched again: normalising it less gave, source
/// only, codeloc-dev 0.769 → 0.777 and three held-out sets 0.755 → 0.755,
/// 0.745 → 0.752, 0.708 → 0.721 (the grid, 0.1 to 1.0, in docs/ranking.md).
pub const HISTORY_B: f64 = 0.3;

/// How many content hits are re-ranked (chunk hits; `group: 'file'` asks
/// for `FILE_POOL`): a number of its own, not one that grows with `top_k`,
/// so that every `topK` and every page of the search tool are cut from one
/// ranking (a deeper pool for a larger `topK` re-ordered the first results:
/// pages overlapped and left files out). Hits past the pool follow it in
/// content order. The history lifts a hit from anywhere in the pool.
pub const POOL: usize = 100;

/// `POOL` for file-level results: the chunk hits that `topK: 10` files
/// were re-ranked from when the pool grew with `top_k` (the figures of
/// docs/ranking.md are measured there).
pub const FILE_POOL: usize = 200;

/// The file a hit's history is kept under (relative to `basePath`): an
/// id spelled from an absolute `autoIndexPaths` entry (`base` its folder,
/// as `/work/repo/`) loses that folder.
fn file_key<'h>(h: &'h SearchHit, base: &IdBase) -> std::borrow::Cow<'h, str> {
    base.relative(super::group::file_of(h))
}

/// bm25 hits for `q`: the first `pool` re-ranked with `history` when
/// there is one, and then with their files' names (`file_name`) when
/// `names` (the workspace's tokenizer) is given too, the others after them
/// in content order. Both are signals of a code repository, where files
/// are the documents; elsewhere the scores stay Mastra's (the best
/// match's share).
pub fn keyword_ranked(
    index: &Bm25Index,
    q: &KeywordQuery,
    history: Option<&FileHistory>,
    names: Option<&Tokenizer>,
    pool: usize,
) -> Vec<SearchHit> {
    let Some(h) = history else { return keyword_search(index, q) };
    let deeper = KeywordQuery { top_k: q.top_k.max(pool), min_score: None, ..*q };
    let mut hits = keyword_search(index, &deeper);
    let rest = hits.split_off(pool.min(hits.len()));
    hits = h.fuse(hits, q.tokens);
    if let Some(tokenizer) = names {
        hits = super::file_name::lift(hits, q.tokens, tokenizer);
    }
    after_pool(&mut hits, rest);
    cut(hits, q.min_score, q.top_k)
}

/// `rest` (content order) after the re-ranked pool `hits`, scaled to start
/// just below the pool's last score: the scores stay in the order shown and
/// keep their differences, and none ties with a hit of the pool (a tie
/// would be ordered by id, and a larger `topK` could then put a hit past
/// the pool before one of it).
fn after_pool(hits: &mut Vec<SearchHit>, rest: Vec<SearchHit>) {
    let floor = hits.last().map_or(1.0, |h| h.score);
    let first = rest.first().map_or(0.0, |h| h.score);
    let scale = if first > 0.0 { floor / first } else { 1.0 };
    let below = floor.next_down();
    hits.extend(rest.into_iter().map(|mut h| {
        // (Rounding can put the product one step above the floor.)
        h.score = (h.score * scale).min(below);
        h
    }));
}

/// Re-ranked `hits` cut at `min_score` (on the re-ranked score) and `top_k`.
fn cut(mut hits: Vec<SearchHit>, min_score: Option<f64>, top_k: usize) -> Vec<SearchHit> {
    hits.retain(|h| min_score.is_none_or(|m| h.score >= m));
    hits.truncate(top_k);
    hits
}

/// The history index of a workspace, as of one commit.
pub struct FileHistory {
    pub head: String,
    /// The history's version it was read at (`ingest::history::version_at`).
    pub version: String,
    /// `basePath` as an absolute id starts (`/work/repo`), when known.
    base: IdBase,
    /// The messages are analysed, not kept: no content, no line tables.
    index: Bm25Index,
}

impl FileHistory {
    pub fn build(messages: &FileMessages, tokenizer: &Tokenizer) -> FileHistory {
        let mut index = Bm25Index::new(Bm25Params { b: HISTORY_B, ..Bm25Params::default() });
        let docs: Vec<NewDocument> = messages
            .texts()
            .map(|(file, text)| NewDocument {
                id: file.to_string(),
                analyzed: Analyzed::of_text(tokenizer, &text),
                content: String::new().into(),
                metadata: None,
                start_line_offset: None,
            })
            .collect();
        index.add_bulk(docs, 1, &mut |_| {});
        index.shrink();
        FileHistory { head: messages.head.clone(), version: messages.version.clone(), base: IdBase::default(), index }
    }

    /// The history of files under `base` (`basePath`): ids spelled from an
    /// absolute path start with it.
    pub fn under(mut self, base: IdBase) -> FileHistory {
        self.base = base;
        self
    }

    pub fn files(&self) -> usize {
        self.index.len()
    }

    pub fn memory_bytes(&self) -> usize {
        self.index.memory_parts().iter().map(|p| p.1).sum()
    }

    /// The history score of each of `files` for `tokens` (each scored
    /// itself: ties elsewhere in the history cannot push a found file
    /// out), divided by the best score of any file's history.
    fn scores(&self, tokens: &[String], files: &rustc_hash::FxHashSet<&str>) -> FxHashMap<&str, f64> {
        let best = self.index.top_k(tokens, 1, None).first().map_or(0.0, |h| h.score);
        if best <= 0.0 {
            return FxHashMap::default();
        }
        let keep = |d: &crate::index::Document| files.contains(d.id.as_str());
        let hits = self.index.top_k(tokens, files.len(), Some(&keep));
        hits.into_iter().map(|h| (h.doc.id.as_str(), h.score / best)).collect()
    }

    /// `hits` (content scores in [0, 1], best first) re-ranked with the
    /// history of their files, normalised so that the best is 1 (the
    /// caller cuts them: `keyword_ranked`).
    fn fuse(&self, mut hits: Vec<SearchHit>, tokens: &[String]) -> Vec<SearchHit> {
        // Each hit's share of history, read before the hits change.
        let bonus: Vec<f64> = {
            let keys: Vec<_> = hits.iter().map(|h| file_key(h, &self.base)).collect();
            let history = self.scores(tokens, &keys.iter().map(|k| k.as_ref()).collect());
            if history.is_empty() {
                return hits;
            }
            keys.iter().map(|k| HISTORY_WEIGHT * history.get(k.as_ref()).copied().unwrap_or(0.0)).collect()
        };
        for (h, b) in hits.iter_mut().zip(bonus) {
            h.score += b;
        }
        super::resorted(&mut hits);
        hits
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::search::test_hit as hit;

    #[test]
    fn a_files_history_lifts_it_among_the_found() {
        let mut m = FileMessages { head: "h".into(), ..Default::default() };
        m.messages = vec!["Fix the double click on the light renderer".into(), "Add mouse wheel".into()];
        m.by_file.insert("src/light.go".into(), vec![0]);
        m.by_file.insert("src/mouse.go".into(), vec![1]);
        let t = Tokenizer::default();
        let h = FileHistory::build(&m, &t);
        assert_eq!(h.files(), 2);
        let tokens = t.tokenize("double click renderer");
        let hits = vec![hit("src/tcell.go", 1.0), hit("./src/light.go", 0.8), hit("README.md", 0.5)];
        let fused = cut(h.fuse(hits, &tokens), None, 10);
        let ids: Vec<&str> = fused.iter().map(|h| h.id.as_str()).collect();
        assert_eq!(ids, ["./src/light.go", "src/tcell.go", "README.md"]);
        assert_eq!(fused[0].score, 1.0);
        assert_eq!(fused[0].bm25, Some(0.8), "the raw content score stays");
        // min_score on the fused score; files outside the hits never come in.
        let kept = cut(h.fuse(vec![hit("a.go", 1.0), hit("b.go", 0.3)], &tokens), Some(0.5), 10);
        assert_eq!(kept.iter().map(|h| h.id.as_str()).collect::<Vec<_>>(), ["a.go"]);
    }

    #[test]
    fn every_top_k_is_cut_from_one_ranking() {
        // 400 files holding the word, each a different number of times; the
        // history of one file in seven names it too, lifting files from
        // anywhere in the pool: a pool that grew with top_k re-ordered the
        // first results (the search tool's pages overlapped).
        let t = Tokenizer::default();
        let mut index = Bm25Index::new(Bm25Params::default());
        let mut m = FileMessages { head: "h".into(), ..Default::default() };
        m.messages = vec!["zorb fixed".into()];
        for i in 0..400u64 {
            let text = format!("{} filler words {i}", "zorb ".repeat(1 + (i as usize * 7919) % 13));
            index.upsert(crate::index::tests::doc(&t, &format!("f{i}.rs"), &text), i + 1);
            if i % 7 == 0 {
                m.by_file.insert(format!("f{i}.rs"), vec![0]);
            }
        }
        let h = FileHistory::build(&m, &t);
        let tokens = t.tokenize("zorb");
        let ranked = |top_k, pool| {
            let q = KeywordQuery {
                tokens: &tokens,
                top_k,
                min_score: None,
                filter: None,
                path_prefix: None,
                kind_weights: None,
            };
            keyword_ranked(&index, &q, Some(&h), None, pool).into_iter().map(|h| (h.id, h.score)).collect::<Vec<_>>()
        };
        let all = ranked(400, POOL);
        assert_eq!(all.len(), 400);
        assert!(all.windows(2).all(|w| w[0].1 >= w[1].1), "scores in the order shown");
        assert!(all[POOL].1 < all[POOL - 1].1, "past the pool, below it (no tie across it)");
        let q = KeywordQuery {
            tokens: &tokens,
            top_k: 400,
            min_score: None,
            filter: None,
            path_prefix: None,
            kind_weights: None,
        };
        let content: Vec<String> = keyword_ranked(&index, &q, None, None, POOL).into_iter().map(|h| h.id).collect();
        let lifted = |ids: &[String]| ids.iter().filter(|id| m.by_file.contains_key(*id)).count();
        let first: Vec<String> = all[..50].iter().map(|(id, _)| id.clone()).collect();
        assert!(lifted(&first) > lifted(&content[..50]), "the history lifts files within the pool");
        assert_eq!(
            all[POOL..].iter().map(|(id, _)| id).collect::<Vec<_>>(),
            content[POOL..].iter().collect::<Vec<_>>()
        );
        for top_k in [1, 5, 10, 25, 26, 51, 99, 100, 101, 153, 399] {
            assert_eq!(ranked(top_k, POOL), all[..top_k], "topK {top_k}");
        }
    }
}
