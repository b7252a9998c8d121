//! Search in every mode: bm25 results (`keyword`), vector results and the
//! hybrid merge (`hybrid`), and which of them runs (`mode`).

pub mod group;
pub mod history;
pub mod hybrid;
pub mod keyword;
pub mod mode;
pub mod rerank;

pub use keyword::{keyword_search, shift_range, KeywordQuery, SearchHit};
pub use mode::{Fusion, Mode};
