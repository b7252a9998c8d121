//! Snapshots: everything `search()` needs, saved to a directory and loaded
//! by a later process (`persist` option, issue 14).
//!
//! - `codec`: the byte format (little-endian, length-prefixed, checked);
//! - `files`: what was indexed from each file (size, modification time,
//!   content hash) and the plan that re-reads only what changed;
//! - `disk`: atomic writes (temporary file, fsync, rename), the header
//!   (magic, format version, length, checksum) and the one-writer lock.
//!
//! The index, the ledger and the embedded vector store encode themselves
//! (`index::snapshot`, `Ledger::encode`, `VectorIndex::encode`).

pub mod apply;
pub mod codec;
pub mod disk;
pub mod files;

#[cfg(test)]
mod tests;

use crate::index::Bm25Index;
use crate::vectors::ledger::Ledger;
use crate::vectors::store::VectorIndex;
pub use apply::{apply_changes, FileCounts};
use codec::{Decoder, Encoder};
pub use files::{now_ns, FileRecord, FileTable, Reconcile};

/// Bumped whenever the byte layout changes: an older or newer snapshot is
/// rebuilt, never misread.
pub const FORMAT_VERSION: u32 = 1;

/// Why a snapshot was not used (the index is rebuilt and `init()` reports
/// the reason among its warnings).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SnapshotError {
    #[error("no snapshot yet")]
    Missing,
    #[error("not a workspace-search snapshot")]
    NotSnapshot,
    #[error("the snapshot has format version {found}; this version reads {expected}")]
    Version { found: u32, expected: u32 },
    #[error("the snapshot is truncated ({got} of {expected} bytes)")]
    Truncated { got: u64, expected: u64 },
    #[error("the snapshot's checksum does not match its contents")]
    Checksum,
    #[error("the snapshot is corrupt: {0}")]
    Corrupt(String),
    #[error("the snapshot was built with other options ({0})")]
    OtherOptions(String),
    #[error("the snapshot could not be read: {0}")]
    Io(String),
}

/// Which embedder made the vectors a snapshot refers to (see
/// `vectors::embedding::same_embedder`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct EmbedderIdentity {
    /// The `embedderId` option, when given.
    pub id: Option<String>,
    /// The canary text's vector, when no id was given.
    pub canary: Vec<f32>,
}

/// The vector side of a snapshot.
#[derive(Debug, Clone, Default)]
pub struct VectorState {
    pub embedder: EmbedderIdentity,
    pub ledger: Ledger,
    /// The embedded store's index of this workspace (none for a store of
    /// the user's, which keeps its own vectors).
    pub local: Option<VectorIndex>,
}

/// Everything a workspace saves.
#[derive(Debug, Clone, Default)]
pub struct Snapshot {
    /// The options the index depends on (tokenizer, BM25 parameters,
    /// chunking...): a snapshot made with others is rebuilt.
    pub fingerprint: String,
    pub index: Bm25Index,
    pub files: FileTable,
    pub vectors: Option<VectorState>,
}

impl Snapshot {
    /// The payload (without the header `disk` adds).
    pub fn encode(&self) -> Vec<u8> {
        let mut e = Encoder { buf: Vec::with_capacity(self.index.stats().memory_bytes) };
        e.str(&self.fingerprint);
        self.index.encode(&mut e);
        self.files.encode(&mut e);
        match &self.vectors {
            None => e.u8(0),
            Some(v) => {
                e.u8(1);
                e.opt_str(v.embedder.id.as_deref());
                e.f32s(&v.embedder.canary);
                v.ledger.encode(&mut e);
                match &v.local {
                    None => e.u8(0),
                    Some(ix) => {
                        e.u8(1);
                        ix.encode(&mut e);
                    }
                }
            }
        }
        e.buf
    }

    pub fn decode(bytes: &[u8]) -> Result<Snapshot, SnapshotError> {
        let mut d = Decoder::new(bytes);
        let fingerprint = d.string("the options")?;
        let index = Bm25Index::decode(&mut d)?;
        let files = FileTable::decode(&mut d)?;
        let vectors = match d.u8("the vector flag")? {
            0 => None,
            _ => {
                let id = d.opt_string("the embedder id")?;
                let canary = d.f32s("the canary")?;
                let ledger = Ledger::decode(&mut d)?;
                let local = match d.u8("the store flag")? {
                    0 => None,
                    _ => Some(VectorIndex::decode(&mut d)?),
                };
                Some(VectorState { embedder: EmbedderIdentity { id, canary }, ledger, local })
            }
        };
        if !d.is_done() {
            return Err(SnapshotError::Corrupt("bytes after the end".into()));
        }
        Ok(Snapshot { fingerprint, index, files, vectors })
    }
}
