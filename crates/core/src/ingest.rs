//! Turning found files into documents: read in parallel (rayon), skip
//! binary files, decode UTF-8 with replacement characters (as Mastra),
//! split large files into line chunks, tokenize.

use crate::bm25::{Analyzed, Bm25Index, Bm25Params, NewDocument};
use crate::chunk::{chunk_lines, needs_chunking};
use crate::scan::FoundFile;
use crate::tokenizer::Tokenizer;
use rayon::prelude::*;
use serde_json::{Map, Value};
use std::io::Read;
use std::sync::atomic::{AtomicUsize, Ordering};

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
    Documents { id: String, docs: Vec<NewDocument>, chunked: bool },
    Skipped { id: String, reason: String },
    Failed { id: String, error: String },
}

/// Bytes looked at for a NUL byte (binary detection).
const BINARY_PROBE: usize = 8192;

fn read_text(path: &std::path::Path) -> std::io::Result<Option<String>> {
    let mut f = std::fs::File::open(path)?;
    let mut bytes = Vec::new();
    f.read_to_end(&mut bytes)?;
    if bytes[..bytes.len().min(BINARY_PROBE)].contains(&0) {
        return Ok(None);
    }
    Ok(Some(match String::from_utf8(bytes) {
        Ok(s) => s,
        Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
    }))
}

/// Splits one text into the documents it is indexed as: itself when small,
/// else `id#chunk-N` chunks with `sourceFile` metadata. `analyze` tokenizes
/// (None leaves the analysis empty for a caller that tokenizes elsewhere).
pub fn documents_of(id: &str, text: String, chunking: ChunkOptions, tokenizer: Option<&Tokenizer>) -> (Vec<NewDocument>, bool) {
    let analyze = |t: &str| tokenizer.map(|tk| Analyzed::of_text(tk, t)).unwrap_or_default();
    if !needs_chunking(&text, chunking.max_chars) {
        let analyzed = analyze(&text);
        return (vec![NewDocument { id: id.to_string(), content: text, metadata: None, start_line_offset: None, analyzed }], false);
    }
    let docs = chunk_lines(&text, chunking.max_chars, chunking.overlap_lines)
        .into_iter()
        .enumerate()
        .map(|(n, c)| {
            let mut meta = Map::new();
            meta.insert("sourceFile".into(), Value::String(id.to_string()));
            NewDocument {
                id: format!("{id}#chunk-{n}"),
                content: c.text.to_string(),
                metadata: Some(meta),
                start_line_offset: Some(c.start_line),
                analyzed: analyze(c.text),
            }
        })
        .collect();
    (docs, true)
}

/// Reads, chunks and tokenizes `files` in parallel, in their order.
/// `on_read(done, total, id)` is called as files finish.
pub fn ingest(
    files: &[FoundFile],
    chunking: ChunkOptions,
    tokenizer: Option<&Tokenizer>,
    on_read: &(dyn Fn(usize, usize, &str) + Sync),
) -> Vec<FileOutcome> {
    let done = AtomicUsize::new(0);
    let total = files.len();
    files
        .par_iter()
        .map(|f| {
            let out = match read_text(&f.path) {
                Ok(None) => FileOutcome::Skipped { id: f.id.clone(), reason: "binary".into() },
                Ok(Some(text)) => {
                    let (docs, chunked) = documents_of(&f.id, text, chunking, tokenizer);
                    FileOutcome::Documents { id: f.id.clone(), docs, chunked }
                }
                Err(e) => FileOutcome::Failed { id: f.id.clone(), error: e.to_string() },
            };
            on_read(done.fetch_add(1, Ordering::Relaxed) + 1, total, &f.id);
            out
        })
        .collect()
}

/// What a rebuild did, for `IndexReport`.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Report {
    /// Files (or documents) now in the index.
    pub indexed: usize,
    /// Chunk documents that large files were split into.
    pub chunks: usize,
    pub skipped: Vec<(String, String)>,
    pub failed: Vec<(String, String)>,
}

/// Builds a fresh index from ingested files; writes older than `seq` are
/// ignored by it from then on.
pub fn build_index(params: Bm25Params, seq: u64, outcomes: Vec<FileOutcome>, report: &mut Report, on_index: &dyn Fn(usize, usize, &str)) -> Bm25Index {
    let mut index = Bm25Index::new(params);
    index.clear(seq);
    let total = outcomes.len();
    for (i, o) in outcomes.into_iter().enumerate() {
        match o {
            FileOutcome::Documents { id, docs, chunked } => {
                if chunked {
                    report.chunks += docs.len();
                }
                for d in docs {
                    index.upsert(d, seq);
                }
                report.indexed += 1;
                on_index(i + 1, total, &id);
            }
            FileOutcome::Skipped { id, reason } => report.skipped.push((id, reason)),
            FileOutcome::Failed { id, error } => report.failed.push((id, error)),
        }
    }
    index
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    #[test]
    fn binary_utf8_chunks_and_failures() {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(d.path().join("bin.dat"), b"abc\0def").unwrap();
        std::fs::write(d.path().join("bad.txt"), b"ok \xff word").unwrap();
        let long: String = (0..300).map(|i| format!("line number {i}\n")).collect();
        std::fs::write(d.path().join("long.md"), &long).unwrap();
        let f = |n: &str| FoundFile { id: n.into(), path: d.path().join(n) };
        let files = vec![f("bin.dat"), f("bad.txt"), f("long.md"), FoundFile { id: "gone".into(), path: PathBuf::from("/nonexistent/x") }];
        let t = Tokenizer::default();
        let out = ingest(&files, ChunkOptions::default(), Some(&t), &|_, _, _| {});
        assert!(matches!(&out[0], FileOutcome::Skipped { reason, .. } if reason == "binary"));
        match &out[1] {
            FileOutcome::Documents { docs, chunked: false, .. } => {
                assert_eq!(docs[0].content, "ok \u{FFFD} word");
                assert_eq!(docs[0].analyzed.len, 2);
            }
            o => panic!("{o:?}"),
        }
        match &out[2] {
            FileOutcome::Documents { docs, chunked: true, .. } => {
                assert_eq!(docs[0].id, "long.md#chunk-0");
                assert_eq!(docs[1].start_line_offset, Some(docs[0].content.lines().count() as u32 - 2));
                assert_eq!(docs[1].metadata.as_ref().unwrap()["sourceFile"], "long.md");
            }
            o => panic!("{o:?}"),
        }
        assert!(matches!(&out[3], FileOutcome::Failed { .. }));
    }
}
