//! The metadata stored beside each vector, as Mastra writes it
//! (`{ id, text, ...metadata }`), plus `_startLineOffset` for chunks and for
//! documents given a `startLineOffset`, except that the document's own `id`
//! and `text` win over metadata keys of those names (in Mastra's order, a
//! record's own `id` field took the document's place: its hits came back
//! under another document's id, with another text). Written (`encode`) and
//! read back from store hits (`decode`) here only.

use crate::index::NewDocument;
use serde_json::{Map, Value};

const ID: &str = "id";
const TEXT: &str = "text";
const START_LINE: &str = "_startLineOffset";

/// The metadata to store with `doc`'s vector.
pub fn encode(doc: &NewDocument) -> Map<String, Value> {
    let mut m = Map::new();
    if let Some(meta) = &doc.metadata {
        m.extend(meta.iter().map(|(k, v)| (k.clone(), v.clone())));
    }
    m.insert(ID.into(), Value::String(doc.id.clone()));
    m.insert(TEXT.into(), Value::String(doc.content.to_string()));
    // The document's own offset, or none: a key of the user's of that name
    // would be read back as the offset (`decode`), shifting its lines.
    match doc.start_line_offset {
        Some(o) => m.insert(START_LINE.into(), o.into()),
        None => m.remove(START_LINE),
    };
    m
}

/// The hash of what a vector store holds for `doc`: its text and the
/// metadata written beside it (a text moved to other lines, or given
/// other metadata, is written again). The ledger keeps it per id, so that
/// an unchanged document is never embedded twice.
pub fn written_hash(doc: &NewDocument) -> u64 {
    let mut h = xxhash_rust::xxh3::Xxh3::new();
    h.update(doc.content.as_bytes());
    h.update(&[0]);
    if let Some(meta) = &doc.metadata {
        h.update(serde_json::to_string(&**meta).unwrap_or_default().as_bytes());
        if meta.contains_key(ID) || meta.contains_key(TEXT) {
            // Not the hash of a row written in the order before 2026-12-06
            // (the record's `id` or `text` in the document's place): such a
            // document given to `index()` again is written again, not skipped.
            h.update(b"\0own id and text last");
        }
        if meta.contains_key(START_LINE) {
            // Nor one written before 2026-12-06 with the user's key as the offset.
            h.update(b"\0own line offset");
        }
    }
    h.update(&[0]);
    h.update(&doc.start_line_offset.map_or(u64::MAX, u64::from).to_le_bytes());
    h.digest()
}

/// A stored vector's document, read back from its metadata.
#[derive(Debug, Clone, PartialEq)]
pub struct Decoded {
    pub id: String,
    pub content: String,
    pub start_line_offset: Option<u32>,
    /// The user's metadata (without the fields above).
    pub metadata: Map<String, Value>,
}

/// Reads a hit's metadata; `store_id` stands in when `id` is missing (a
/// vector another program wrote).
pub fn decode(store_id: String, metadata: Option<Map<String, Value>>) -> Decoded {
    let mut meta = metadata.unwrap_or_default();
    let id = match meta.remove(ID) {
        Some(Value::String(s)) => s,
        _ => store_id,
    };
    let content = match meta.remove(TEXT) {
        Some(Value::String(s)) => s,
        _ => String::new(),
    };
    let start_line_offset =
        meta.remove(START_LINE).and_then(|v| v.as_u64()).and_then(|v| u32::try_from(v).ok()).filter(|&v| v >= 1);
    Decoded { id, content, start_line_offset, metadata: meta }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn round_trip() {
        let doc = NewDocument {
            id: "a.md#chunk-1".into(),
            content: "two\nlines".into(),
            metadata: json!({"sourceFile": "a.md", "n": 1}).as_object().cloned().map(std::sync::Arc::new),
            start_line_offset: Some(40),
            analyzed: Default::default(),
        };
        let m = encode(&doc);
        assert_eq!(
            Value::Object(m.clone()),
            json!({"id": "a.md#chunk-1", "text": "two\nlines", "sourceFile": "a.md", "n": 1, "_startLineOffset": 40})
        );
        let d = decode("x".into(), Some(m));
        assert_eq!((d.id.as_str(), d.content.as_str(), d.start_line_offset), ("a.md#chunk-1", "two\nlines", Some(40)));
        assert_eq!(Value::Object(d.metadata), json!({"sourceFile": "a.md", "n": 1}));
        let shadowed = NewDocument {
            id: "note-1".into(),
            content: "alpha".into(),
            metadata: json!({"id": "row-7", "text": "other"}).as_object().cloned().map(std::sync::Arc::new),
            start_line_offset: None,
            analyzed: Default::default(),
        };
        let d = decode("note-1".into(), Some(encode(&shadowed)));
        assert_eq!((d.id.as_str(), d.content.as_str()), ("note-1", "alpha"), "the document's own id and text win");
        let own_key = NewDocument {
            id: "note-2".into(),
            content: "beta".into(),
            metadata: json!({"_startLineOffset": 100, "author": "x"}).as_object().cloned().map(std::sync::Arc::new),
            start_line_offset: None,
            analyzed: Default::default(),
        };
        let d = decode("note-2".into(), Some(encode(&own_key)));
        assert_eq!(d.start_line_offset, None, "a key of the user's is not the document's offset");
        assert_eq!(Value::Object(d.metadata), json!({"author": "x"}));
        let bare = decode("store-id".into(), None);
        assert_eq!((bare.id.as_str(), bare.content.as_str(), bare.start_line_offset), ("store-id", "", None));
    }
}
