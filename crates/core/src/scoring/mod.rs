//! Ranking: the BM25 formula (`bm25`), pruned top-k retrieval
//! (`maxscore`), long queries' term-at-a-time retrieval (`accumulate`), its exhaustive reference (`exhaustive`) and the one top-k
//! heap every ranking uses (`topk`).

mod accumulate;
pub mod bm25;
mod exhaustive;
pub mod maxscore;
pub mod topk;

#[cfg(test)]
mod tests;
