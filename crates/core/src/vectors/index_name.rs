//! The vector index name of a workspace, checked as Mastra checks it (an
//! SQL identifier of at most 63 characters), with Mastra's messages.

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum IndexNameError {
    #[error("Invalid searchIndexName: \"{0}\". Must start with a letter or underscore, and contain only letters, numbers, or underscores.")]
    Invalid(String),
    #[error("searchIndexName exceeds 63 characters (got {0})")]
    TooLong(usize),
}

pub fn validate(name: &str) -> Result<(), IndexNameError> {
    let mut chars = name.chars();
    let ok_first = chars.next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_');
    if !ok_first || !chars.all(|c| c.is_ascii_alphanumeric() || c == '_') {
        return Err(IndexNameError::Invalid(name.to_string()));
    }
    if name.len() > 63 {
        return Err(IndexNameError::TooLong(name.len()));
    }
    Ok(())
}

/// The default name: `${id}_search` with every character outside
/// `[A-Za-z0-9_]` replaced by `_`.
pub fn default_for(id: &str) -> String {
    format!("{id}_search").chars().map(|c| if c.is_ascii_alphanumeric() || c == '_' { c } else { '_' }).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn index_names() {
        assert_eq!(default_for("my-ws.id"), "my_ws_id_search");
        assert_eq!(default_for("é"), "__search");
        assert!(validate("ok_name1").is_ok());
        assert!(validate("_x").is_ok());
        for bad in ["", "1abc", "a-b", "a.b", "a b", "é"] {
            assert!(validate(bad).unwrap_err().to_string().starts_with("Invalid searchIndexName"), "{bad}");
        }
        assert_eq!(
            validate(&"a".repeat(64)).unwrap_err().to_string(),
            "searchIndexName exceeds 63 characters (got 64)"
        );
        assert!(validate(&"a".repeat(63)).is_ok());
    }
}
