//! The engine of workspace-search, free of any Node.js binding. Data flows
//! top to bottom:
//!
//! - `ingest`: `autoIndexPaths` -> files inside `basePath` (`scan`) ->
//!   texts and chunks (`read`, `chunk`);
//! - `analysis`: texts -> tokens (`tokenizer`) -> term statistics;
//! - `index`: term statistics -> postings, line tables, documents, kept
//!   exact under writes in call order;
//! - `scoring`: postings -> BM25 top-k (`maxscore`, exact to `exhaustive`);
//! - `search`: top-k -> results of bm25, vector and hybrid mode (`mode`);
//! - `vectors`: the embedded store, filters, and the plans of what to write
//!   to and delete from any store (the engine runs them with the user's
//!   embedder and store).
//!
//! - `grep`: a JavaScript regex over a folder's files, as Mastra's grep
//!   tool walks and matches them, pruned by a trigram index.
//!
//! - `persist`: snapshots of all of it on disk, and the plan of an
//!   incremental `init()` that re-reads only changed files.
//!
//! - `engine`: the front over all of it: a workspace's state and every flow
//!   (writes, rebuilds, snapshots, searches, grep, watching) in the write
//!   order, calling the host's code (the user's embedder, store, tokenizer,
//!   reranker; file watches) through the traits of `engine::host`.
//!
//! Every decision (what to write, delete, retry, report) is made here; the
//! binding in `src/` converts values and implements the host traits.

#![deny(clippy::undocumented_unsafe_blocks)]

pub mod analysis;
pub mod bytes;
pub mod engine;
pub mod grep;
pub mod index;
pub mod ingest;
pub mod per_thread;
pub mod persist;
pub mod prefetch;
pub mod scoring;
pub mod search;
pub mod text;
pub mod vectors;
