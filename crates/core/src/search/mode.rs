//! Which search runs: the mode asked for, checked against what the
//! workspace has, or the best it has (hybrid > vector > bm25); how hybrid
//! fuses; how deep each half of a hybrid search looks.

use std::str::FromStr;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    Bm25,
    Vector,
    Hybrid,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Fusion {
    /// The vector score clamped to [0, 1] and BM25 divided by its best
    /// match, weighted by `vectorWeight`.
    #[default]
    Weighted,
    /// Reciprocal-rank fusion.
    Rrf,
}

/// Why a mode cannot run; Mastra's messages.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ModeError {
    #[error("BM25 search requires BM25 configuration.")]
    NoBm25,
    #[error("Vector search requires vector configuration.")]
    NoVectors,
    #[error("Hybrid search requires both vector and BM25 configuration.")]
    NotHybrid,
}

/// A value that names no mode or fusion, with the names it accepts.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("must be {expected}, got '{got}'")]
pub struct UnknownName {
    pub expected: &'static str,
    pub got: String,
}

impl FromStr for Mode {
    type Err = UnknownName;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "bm25" => Ok(Mode::Bm25),
            "vector" => Ok(Mode::Vector),
            "hybrid" => Ok(Mode::Hybrid),
            _ => Err(UnknownName { expected: "'bm25', 'vector' or 'hybrid'", got: s.to_string() }),
        }
    }
}

impl FromStr for Fusion {
    type Err = UnknownName;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "weighted" => Ok(Fusion::Weighted),
            "rrf" => Ok(Fusion::Rrf),
            _ => Err(UnknownName { expected: "'weighted' or 'rrf'", got: s.to_string() }),
        }
    }
}

impl Mode {
    /// The mode to run for a workspace with BM25 (`keyword`) and/or vector
    /// search: the one asked for, or the best available.
    pub fn select(asked: Option<Mode>, keyword: bool, vectors: bool) -> Result<Mode, ModeError> {
        match asked {
            Some(Mode::Bm25) if !keyword => Err(ModeError::NoBm25),
            Some(Mode::Vector) if !vectors => Err(ModeError::NoVectors),
            Some(Mode::Hybrid) if !(keyword && vectors) => Err(ModeError::NotHybrid),
            Some(m) => Ok(m),
            None if keyword && vectors => Ok(Mode::Hybrid),
            None if vectors => Ok(Mode::Vector),
            None => Ok(Mode::Bm25),
        }
    }
}

/// The first tier of a hybrid merge: each half's first 200 candidates
/// (eval/tune.mjs: deeper lists fuse better; SPEC asks for min(2 * topK,
/// 50) at least).
pub const FIRST_TIER: usize = 200;

/// Candidates per half of a hybrid search for `top_k` results: the first
/// tier, doubled until it holds `top_k` (the merge fuses tier by tier, so
/// the depth must be one of the tiers' sizes).
pub fn hybrid_depth(top_k: usize) -> usize {
    let mut depth = FIRST_TIER;
    while depth < top_k {
        depth = depth.saturating_mul(2);
    }
    depth
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn selects_and_checks_modes() {
        assert_eq!(Mode::select(None, true, true), Ok(Mode::Hybrid));
        assert_eq!(Mode::select(None, false, true), Ok(Mode::Vector));
        assert_eq!(Mode::select(None, true, false), Ok(Mode::Bm25));
        assert_eq!(Mode::select(Some(Mode::Bm25), false, true), Err(ModeError::NoBm25));
        assert_eq!(Mode::select(Some(Mode::Vector), true, false), Err(ModeError::NoVectors));
        assert_eq!(Mode::select(Some(Mode::Hybrid), true, false), Err(ModeError::NotHybrid));
        assert_eq!("rrf".parse(), Ok(Fusion::Rrf));
        assert_eq!("x".parse::<Mode>().unwrap_err().to_string(), "must be 'bm25', 'vector' or 'hybrid', got 'x'");
        assert_eq!(hybrid_depth(5), 200);
        assert_eq!(hybrid_depth(200), 200);
        assert_eq!(hybrid_depth(201), 400);
        assert_eq!(hybrid_depth(usize::MAX), usize::MAX);
    }
}
