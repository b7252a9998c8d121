//! The engine of workspace-search, free of any Node.js binding: tokenizer,
//! BM25 index with pruned top-k, chunking, file scanning and ingestion,
//! metadata filters and the search results of every mode.

pub mod bm25;
pub mod chunk;
pub mod filter;
pub mod ingest;
pub mod scan;
pub mod search;
pub mod tokenizer;
