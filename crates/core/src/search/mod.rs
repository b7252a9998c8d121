//! Search in every mode: bm25 results (`keyword`), vector results and the
//! hybrid merge (`hybrid`).

pub mod hybrid;
pub mod keyword;

pub use keyword::{keyword_search, shift_range, KeywordQuery, SearchHit};
