//! Ranking: the BM25 formula (`bm25`), pruned top-k retrieval
//! (`maxscore`), its exhaustive reference (`exhaustive`) and the one top-k
//! heap every ranking uses (`topk`).

pub mod bm25;
mod exhaustive;
pub mod maxscore;
pub mod topk;

#[cfg(test)]
mod tests;
