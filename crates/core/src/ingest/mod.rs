//! Turning found files into documents: `scan` resolves `autoIndexPaths`
//! to files inside `basePath`, `read` reads them in parallel (rayon), skips
//! binary files, decodes UTF-8 with replacement characters (as Mastra) and
//! tokenizes, `chunk` splits large files into line chunks; `build_index`
//! makes a fresh index of the result.

pub mod attributes;
pub mod chunk;
pub mod gitignore;
pub mod history;
mod read;
pub mod scan;
pub mod small_file;
pub mod watch;

pub use read::{documents_of, ingest, read_intact, stamp_and_hash, DEFINITION_WEIGHT, PATH_WEIGHT};
pub use scan::{SkipReason, Skipped};

use crate::index::{Bm25Index, Bm25Params, NewDocument};
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ChunkOptions {
    pub max_chars: usize,
    pub overlap_lines: usize,
}

impl Default for ChunkOptions {
    fn default() -> Self {
        ChunkOptions { max_chars: 4000, overlap_lines: 3 }
    }
}

/// What became of one file.
#[derive(Debug)]
pub enum FileOutcome {
    /// One document, or its chunks (`chunked` true).
    Documents {
        id: String,
        docs: Vec<NewDocument>,
        chunked: bool,
        /// `content_hash` of the file's text.
        hash: u64,
    },
    Skipped {
        id: String,
        reason: SkipReason,
    },
    Failed {
        id: String,
        error: String,
    },
}

/// A file or document that could not be indexed, and why (a read error,
/// the embedder's or the vector store's message).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failed {
    pub path: String,
    pub error: String,
}

/// The hash that tells whether a text changed (files, and the texts a
/// vector store holds): xxh3, 64 bits.
pub fn content_hash(text: &str) -> u64 {
    xxhash_rust::xxh3::xxh3_64(text.as_bytes())
}

/// What a rebuild did, for `IndexReport`.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Report {
    /// Files (or documents) now in the index.
    pub indexed: usize,
    /// Chunk documents that large files were split into.
    pub chunks: usize,
    pub skipped: Vec<Skipped>,
    pub failed: Vec<Failed>,
}

/// Builds a fresh index from ingested files; writes older than `seq` are
/// ignored by it from then on (see `Bm25Index::add_bulk`).
pub fn build_index(
    params: Bm25Params,
    seq: u64,
    outcomes: Vec<FileOutcome>,
    report: &mut Report,
    on_index: &dyn Fn(usize, usize, &str),
) -> Bm25Index {
    let mut index = Bm25Index::new(params);
    index.clear(seq);
    let total = outcomes.len();
    let mut docs = Vec::new();
    // (file id, its last document's position) for progress.
    let mut ends: Vec<(String, usize)> = Vec::new();
    for o in outcomes {
        match o {
            FileOutcome::Documents { id, docs: d, chunked, .. } => {
                if chunked {
                    report.chunks += d.len();
                }
                report.indexed += 1;
                docs.extend(d);
                ends.push((id, docs.len()));
            }
            FileOutcome::Skipped { id, reason } => report.skipped.push(Skipped { path: id, reason }),
            FileOutcome::Failed { id, error } => report.failed.push(Failed { path: id, error }),
        }
    }
    let mut file = 0;
    index.add_bulk(docs, seq, &mut |added| {
        while file < ends.len() && ends[file].1 == added {
            on_index(file + 1, total, &ends[file].0);
            file += 1;
        }
    });
    index.shrink();
    index.repack_shared_parts();
    index
}
