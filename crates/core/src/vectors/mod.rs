//! Vector search: the embedded store (`store`) and its int8 codes
//! (`quantized`), Mastra's metadata filter
//! (`filter`), and the plans of what to write to and delete from any store
//! (`plan`).

pub mod embedding;
pub mod filter;
pub mod graph;
pub mod index_name;
pub mod ledger;
pub mod metadata;
pub mod plan;
pub mod quantized;
pub mod store;
