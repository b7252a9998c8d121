//! The leaf below the index, the vectors, the texts and the snapshot: how
//! values are laid out in bytes (`codec`), arrays that are either owned or
//! views of mapped bytes (`section`), texts still in their snapshot file
//! (`stored`), LEB128 varints (`varint`), what a JSON value holds on the heap
//! (`json_size`), and why a snapshot could not be used (`SnapshotError`).
//! Nothing here knows a BM25 index, a vector or a workspace.

pub mod codec;
pub mod json_size;
pub mod section;
pub mod stored;
pub mod varint;

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
    /// (Named for the common case: it is also a snapshot longer than written.)
    #[error("the snapshot is {} ({got} of {expected} bytes)", if got > expected { "longer than written" } else { "truncated" })]
    Truncated { got: u64, expected: u64 },
    #[error("the snapshot's checksum does not match its contents")]
    Checksum,
    #[error("the snapshot is corrupt: {0}")]
    Corrupt(String),
    #[error("the snapshot was built with other options ({0})")]
    OtherOptions(String),
    #[error("the snapshot could not be read: {0}")]
    Io(String),
    /// The system refused to open or read what is there (EACCES, EMFILE,
    /// EIO): says nothing of the snapshot, which is neither rebuilt over
    /// nor taken for missing.
    #[error("the snapshot could not be read: {0}")]
    Unreadable(String),
}
