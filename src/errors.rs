//! Declarations of the error classes. The classes users get are defined in
//! runtime.js as real `Error` subclasses and replace these placeholders when
//! the module loads (lib.rs); these give `napi build` the export names and
//! constructor types, and header.d.ts merges in the `Error` members.

use napi_derive::napi;

/// Base class of the errors with a `code`: `INVALID_SEARCH_CONFIG` for a
/// bad search configuration (as Mastra).
#[napi]
pub struct WorkspaceError {}

#[napi]
impl WorkspaceError {
    #[napi(constructor)]
    pub fn new(_message: String, _code: Option<String>, _workspace_id: Option<String>) -> Self {
        WorkspaceError {}
    }
}

/// Search or indexing on a workspace without `bm25` (or vector search):
/// code `NO_SEARCH`.
#[napi]
pub struct SearchNotAvailableError {}

#[napi]
impl SearchNotAvailableError {
    #[napi(constructor)]
    pub fn new(_workspace_id: Option<String>) -> Self {
        SearchNotAvailableError {}
    }
}

/// Any call but the capability getters, `status` and `destroy()` after
/// `destroy()`: code `NOT_READY`.
#[napi]
pub struct WorkspaceNotReadyError {}

#[napi]
impl WorkspaceNotReadyError {
    #[napi(constructor)]
    pub fn new(_workspace_id: String, _status: String) -> Self {
        WorkspaceNotReadyError {}
    }
}
