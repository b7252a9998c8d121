//! The engine driven as a host drives it, with hosts written in Rust: an
//! embedder that refuses one text (its error value must come back as it
//! was thrown), the embedded store, no watches.

use super::host::{EmbedCall, GrepWatch, GrepWatchFactory, HostFuture, TreeWatch, TreeWatchFactory, WatchSignal};
use super::*;
use crate::ingest::watch::WatchRoot;
use crate::search::Mode;
use std::time::{Duration, Instant};

/// Embeds a text as its length and two constants; refuses "bad" texts
/// with a value of the host's own (here a `u32`, as a thrown number).
struct LengthEmbedder {
    group: usize,
}

impl EmbedCall for LengthEmbedder {
    fn group_size(&self) -> usize {
        self.group
    }
    fn embed<'a>(&'a self, texts: Vec<String>, _label: &'a str) -> HostFuture<'a, Vec<Vec<f32>>> {
        Box::pin(async move {
            if texts.iter().any(|t| t.contains("bad")) {
                return Err(Error::host("quota exceeded", 429u32));
            }
            Ok(texts.iter().map(|t| vec![t.len() as f32, 1.0, 0.5]).collect())
        })
    }
}

struct NoWatches;

impl GrepWatchFactory for NoWatches {
    fn watch(&self, _: &std::path::Path) -> Option<Box<dyn GrepWatch>> {
        None
    }
}

impl TreeWatchFactory for NoWatches {
    fn start(
        &self,
        _: Vec<WatchRoot>,
        _: std::path::PathBuf,
        _: Option<std::path::PathBuf>,
        _: tokio::sync::mpsc::UnboundedSender<WatchSignal>,
    ) -> std::result::Result<Box<dyn TreeWatch>, String> {
        Err("no watches in this test".into())
    }
}

fn engine(runtime: &tokio::runtime::Runtime, group: usize) -> Arc<Engine> {
    let place = Place::new(Some("t".into()), None, &None, false).unwrap();
    let embedder = Embedder::new(Arc::new(LengthEmbedder { group }), 2, Duration::from_secs(5));
    let store = Store::Local(Arc::new(RwLock::new(crate::vectors::store::VectorStore::default())));
    let index_name = place.index_name(None).unwrap();
    Arc::new(Engine::new(EngineConfig {
        place,
        base_path: None,
        read_only: false,
        auto_index_paths: Vec::new(),
        chunking: ChunkOptions::default(),
        respect_gitignore: true,
        max_file_size: 1 << 20,
        bm25: Some(Bm25Config {
            tokenizer: Default::default(),
            params: Default::default(),
            js: None,
            js_identity: None,
        }),
        vectors: Some(VectorConfig { embedder, store, index_name, store_given: false }),
        embedder_id: None,
        snapshot_store: None,
        watch: false,
        file_kinds: crate::index::kind::DEFAULT_WEIGHTS,
        git_history: false,
        reranker: None,
        rerank_timeout: Duration::from_secs(1),
        progress: None,
        host: HostParts {
            runtime: runtime.handle().clone(),
            release_memory: || {},
            grep_watches: Arc::new(NoWatches),
            tree_watches: Arc::new(NoWatches),
        },
    }))
}

fn doc(id: &str, content: &str) -> DocArgs {
    DocArgs { id: id.into(), content: content.into(), metadata: None, start_line_offset: None }
}

fn options(top_k: usize) -> SearchOptions {
    SearchOptions { top_k, ..Default::default() }
}

#[test]
fn a_failed_group_fails_its_documents_only_and_its_error_comes_back_as_thrown() {
    let runtime = tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap();
    for group in [1, 2] {
        let engine = engine(&runtime, group);
        let docs = vec![doc("a.md", "alpha words"), doc("b.md", "a bad text"), doc("c.md", "gamma words")];
        let ticket = engine.gate.ticket();
        let outcome = runtime.block_on(engine.clone().index_many(ticket, docs, Instant::now())).unwrap();
        // Group size 1: only b fails; size 2: a and b share the failed group.
        let failed: Vec<&str> = outcome.report.report.failed.iter().map(|f| f.path.as_str()).collect();
        let expected: &[&str] = if group == 1 { &["b.md"] } else { &["a.md", "b.md"] };
        assert_eq!(failed, expected);
        assert_eq!(outcome.report.report.indexed, 3 - expected.len());
        assert!(outcome.report.report.failed.iter().all(|f| f.error == "quota exceeded"));
        assert_eq!(outcome.error.expect("rejects").into_host::<u32>().unwrap(), 429);
        // What was written is searchable, in both indexes; what failed is in neither.
        assert_eq!(engine.vectors.as_ref().unwrap().count(), 3 - expected.len());
        let hits = match engine.search_at_once("gamma", Mode::Bm25, options(5)) {
            Prepared::Answered(hits) => hits,
            _ => panic!("a bm25 search with the built-in tokenizer answers at once"),
        };
        assert_eq!(hits.iter().map(|h| h.id.as_str()).collect::<Vec<_>>(), ["c.md"]);
        let failed_doc = runtime.block_on(engine.clone().search("bad".into(), Mode::Bm25, options(5))).unwrap();
        assert!(failed_doc.is_empty());
    }
}

#[test]
fn destroy_settles_and_refuses_later_writes() {
    let runtime = tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap();
    let engine = engine(&runtime, 4);
    let ticket = engine.gate.ticket();
    runtime.block_on(engine.clone().index_one(ticket, doc("a.md", "alpha"))).unwrap();
    let Some(VectorSide { store: Store::Local(store), index_name, .. }) = &engine.vectors else { panic!() };
    assert!(store.read().index(index_name).is_ok());
    assert!(engine.destroy().is_none(), "no persist, index free: done at once");
    assert!(engine.is_destroyed());
    assert!(store.read().index(index_name).is_err(), "the embedded store's vectors went with it");
    let ticket = engine.gate.ticket();
    let e = runtime.block_on(engine.clone().index_one(ticket, doc("b.md", "beta"))).unwrap_err();
    assert!(e.is_not_ready());
}
