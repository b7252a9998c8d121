//! The engine of workspace-search, free of any Node.js binding: tokenizer,
//! BM25 index with pruned top-k, chunking, file scanning and ingestion,
//! metadata filters and the search results of every mode.

pub mod analysis;
pub mod index;
pub mod ingest;
pub mod prefetch;
pub mod scoring;
pub mod search;
pub mod text;
pub mod vectors;

/// Checks a vector index name as Mastra does (an SQL identifier of at most
/// 63 characters); the error is Mastra's message.
pub fn validate_index_name(name: &str) -> Result<(), String> {
    let mut chars = name.chars();
    let ok_first = chars.next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_');
    if !ok_first || !chars.all(|c| c.is_ascii_alphanumeric() || c == '_') {
        return Err(format!("Invalid searchIndexName: \"{name}\". Must start with a letter or underscore, and contain only letters, numbers, or underscores."));
    }
    if name.len() > 63 {
        return Err(format!("searchIndexName exceeds 63 characters (got {})", name.len()));
    }
    Ok(())
}

/// The default vector index name: `${id}_search` with every character
/// outside `[A-Za-z0-9_]` replaced by `_`.
pub fn default_index_name(id: &str) -> String {
    format!("{id}_search").chars().map(|c| if c.is_ascii_alphanumeric() || c == '_' { c } else { '_' }).collect()
}

#[cfg(test)]
mod tests {
    #[test]
    fn index_names() {
        assert_eq!(super::default_index_name("my-ws.id"), "my_ws_id_search");
        assert_eq!(super::default_index_name("é"), "__search");
        assert!(super::validate_index_name("ok_name1").is_ok());
        assert!(super::validate_index_name("_x").is_ok());
        for bad in ["", "1abc", "a-b", "a.b", "a b", "é"] {
            assert!(super::validate_index_name(bad).unwrap_err().starts_with("Invalid searchIndexName"), "{bad}");
        }
        assert_eq!(super::validate_index_name(&"a".repeat(64)).unwrap_err(), "searchIndexName exceeds 63 characters (got 64)");
        assert!(super::validate_index_name(&"a".repeat(63)).is_ok());
    }
}
