//! A document as a caller gives it, as the index stores it, and as a
//! query returns it.

use crate::analysis::Analyzed;
use crate::text::SharedText;
use serde_json::{Map, Value};
use std::sync::Arc;

/// What a caller gives to store one document.
#[derive(Debug, Clone, PartialEq)]
pub struct NewDocument {
    pub id: String,
    pub content: SharedText,
    /// Shared: the chunks of one file carry one map (`sourceFile`).
    pub metadata: Option<Arc<Map<String, Value>>>,
    /// 1-based line of the file where `content` starts (chunks, and the
    /// `startLineOffset` option of `index()`).
    pub start_line_offset: Option<u32>,
    pub analyzed: Analyzed,
}

#[derive(Debug, Clone)]
pub struct Document {
    pub id: String,
    pub content: SharedText,
    /// Shared with the results that return it (no copy per result); a
    /// pointer, so slots stay small.
    pub metadata: Option<Arc<Map<String, Value>>>,
    pub start_line_offset: Option<u32>,
    pub len: u32,
    /// Write sequence number: a later write wins whatever order writes land in.
    pub seq: u64,
    /// Distinct terms with their first and last lines (line_table.rs).
    pub(crate) table: super::section::Section<u8>,
}

impl Document {
    /// Requests what turning this document into a result reads (its id,
    /// text, line table and metadata), so that the misses of all the hits
    /// of a query overlap instead of coming one after another.
    pub fn prefetch(&self) {
        use crate::prefetch::prefetch;
        prefetch(self.id.as_ptr());
        self.content.prefetch();
        prefetch(self.table.as_ptr());
        if let Some(m) = &self.metadata {
            prefetch(Arc::as_ptr(m));
        }
    }

    /// The file this document is a chunk of, if it is one.
    pub fn source_file(&self) -> Option<&str> {
        chunk_source(&self.id, self.metadata.as_deref())
    }
}

/// The file the document `id` with `metadata` is a chunk of: its
/// `sourceFile`, when `id` is a chunk id of that file (`<file>#chunk-<n>`,
/// as the reader names chunks). A `sourceFile` of a user's own metadata on
/// another id (copied from a result, say) does not make a chunk of it.
pub fn chunk_source<'a>(id: &str, metadata: Option<&'a Map<String, Value>>) -> Option<&'a str> {
    let file = metadata?.get("sourceFile")?.as_str()?;
    (chunk_parent(id) == Some(file)).then_some(file)
}

/// The file whose chunk id `id` has the form of (`a.md` of `a.md#chunk-2`).
pub fn chunk_parent(id: &str) -> Option<&str> {
    let (file, n) = id.rsplit_once("#chunk-")?;
    (!file.is_empty() && !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit())).then_some(file)
}

/// A scored document.
#[derive(Debug, Clone, Copy)]
pub struct Hit<'a> {
    pub doc: &'a Document,
    pub slot: u32,
    pub score: f64,
}

/// The id of chunk `n` of the file `id`: the one format, used when chunks
/// are made and when a file's chunks are removed.
pub fn chunk_id(id: &str, n: usize) -> String {
    format!("{id}#chunk-{n}")
}
