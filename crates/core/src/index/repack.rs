//! After a bulk build: the small parts each file's documents share (the
//! metadata map of a chunked file, `sourceFile`, and the handle of the
//! file's text) are allocated anew, together, in slot order.
//!
//! Why: they were made while files were read and tokenized, a handful of
//! small allocations per file between a great many short-lived ones of the
//! same sizes, so they kept allocator pages alive that were otherwise free
//! once the build was done. Moved, those pages go back to the system
//! (`memory_profile`, mixed-language code, 50,000 files: RSS 599-602 ->
//! 576-582 MB; moving the maps alone gave a third of that, the handles
//! alone nothing, the document ids nothing more).

use super::Bm25Index;
use crate::text::Body;
use rustc_hash::FxHashMap;
use serde_json::{Map, Value};
use std::sync::Arc;

type Metadata = Arc<Map<String, Value>>;

/// The new handle of each shared part moved so far, by its old address:
/// what several documents shared before, they share after.
#[derive(Default)]
struct Moved {
    metadata: FxHashMap<usize, Metadata>,
    texts: FxHashMap<usize, Arc<Body>>,
}

impl Bm25Index {
    /// Moves the documents' shared parts into allocations made now (see
    /// the module's note); what several documents shared, they still share.
    /// Nothing a reader sees changes.
    pub fn repack_shared_parts(&mut self) {
        let mut moved = Moved::default();
        for d in self.docs.iter_mut().flatten() {
            if let Some(old) = &d.metadata {
                let new = moved
                    .metadata
                    .entry(Arc::as_ptr(old) as usize)
                    .or_insert_with(|| Arc::new(old.iter().map(|(k, v)| (k.clone(), v.clone())).collect()));
                d.metadata = Some(new.clone());
            }
            d.content = d.content.rehomed(&mut moved.texts);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::tokenizer::Tokenizer;
    use crate::analysis::Analyzed;
    use crate::index::{Bm25Params, NewDocument};
    use crate::text::SharedText;

    #[test]
    fn repacked_metadata_reads_the_same_and_is_shared_as_before() {
        let t = Tokenizer::default();
        let mut arena = crate::text::arena::TextArena::default();
        let mut docs = Vec::new();
        for i in 0..40 {
            let meta = Arc::new(Map::from_iter([("sourceFile".to_string(), Value::String(format!("f{i}")))]));
            let file = format!("line one {i}\nsecond line of file {i}\n");
            // Even files: one text in an arena block, chunks are ranges of
            // it (those handles move); odd ones: a text of its own a chunk.
            let whole: SharedText = arena.copy(&file).unwrap().into();
            let cut = file.find('\n').unwrap() + 1;
            for (n, part) in [&file[..cut], &file[cut..]].into_iter().enumerate() {
                let whole_part = &whole.as_str()[if n == 0 { 0..cut } else { cut..file.len() }];
                docs.push(NewDocument {
                    id: format!("f{i}#{n}"),
                    analyzed: Analyzed::of_text(&t, part),
                    content: if i % 2 == 0 { whole.slice(whole_part) } else { part.into() },
                    metadata: (i % 5 != 0).then(|| meta.clone()),
                    start_line_offset: Some(1 + n as u32),
                });
            }
        }
        let mut ix = Bm25Index::new(Bm25Params::default());
        ix.add_bulk(docs, 1, &mut |_| {});
        let read = |ix: &Bm25Index| -> Vec<_> {
            ix.documents().map(|d| (d.id.clone(), d.content.to_string(), d.metadata.as_deref().cloned())).collect()
        };
        let hits = |ix: &Bm25Index| -> Vec<(String, u64)> {
            let q = t.tokenize("second file 7");
            ix.top_k(&q, 5, None).iter().map(|h| (h.doc.id.clone(), h.score.to_bits())).collect()
        };
        let (before, ranked) = (read(&ix), hits(&ix));
        let old = Arc::as_ptr(ix.get("f1#0").unwrap().metadata.as_ref().unwrap());
        let text_of = |ix: &Bm25Index, id: &str| Arc::as_ptr(ix.get(id).unwrap().content.parts().0);
        let (arena_text, own_text) = (text_of(&ix, "f2#1"), text_of(&ix, "f3#1"));
        ix.repack_shared_parts();
        assert_eq!(read(&ix), before);
        assert_eq!(hits(&ix), ranked);
        assert_ne!(Arc::as_ptr(ix.get("f1#0").unwrap().metadata.as_ref().unwrap()), old, "moved");
        assert_ne!(text_of(&ix, "f2#1"), arena_text, "moved");
        assert_eq!(text_of(&ix, "f2#0"), text_of(&ix, "f2#1"), "still shared");
        assert_eq!(text_of(&ix, "f3#1"), own_text, "a text of its own stays");
        let all: Vec<_> = ix.documents().collect();
        for pair in all.chunks(2) {
            match (&pair[0].metadata, &pair[1].metadata) {
                // The chunks of one file still share one map.
                (Some(a), Some(b)) => assert!(Arc::ptr_eq(a, b)),
                (None, None) => {}
                other => panic!("metadata changed: {other:?}"),
            }
        }
        assert!(!Arc::ptr_eq(all[2].metadata.as_ref().unwrap(), all[4].metadata.as_ref().unwrap()));
    }
}
