//! Turning found files into documents: read in parallel (rayon), skip
//! binary files, decode UTF-8 with replacement characters (as Mastra),
//! split large files into line chunks, tokenize.

use crate::analysis::{Analyzed, ThreadAnalyzers};
use crate::bm25::{Bm25Index, Bm25Params, NewDocument};
use crate::chunk::{chunk_lines, needs_chunking};
use crate::scan::FoundFile;
use crate::text::SharedText;
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
/// else `id#chunk-N` chunks with `sourceFile` metadata. Their analysis is
/// left empty for the caller.
pub fn documents_of(id: &str, text: String, chunking: ChunkOptions) -> (Vec<NewDocument>, bool) {
    if !needs_chunking(&text, chunking.max_chars) {
        return (vec![NewDocument { id: id.to_string(), content: text.into(), metadata: None, start_line_offset: None, analyzed: Analyzed::default() }], false);
    }
    // Chunks are ranges of the file's text, not copies.
    let whole = SharedText::new(text);
    let docs = chunk_lines(&whole, chunking.max_chars, chunking.overlap_lines)
        .into_iter()
        .enumerate()
        .map(|(n, c)| {
            let mut meta = Map::new();
            meta.insert("sourceFile".into(), Value::String(id.to_string()));
            NewDocument {
                id: format!("{id}#chunk-{n}"),
                content: whole.slice(c.text),
                metadata: Some(meta),
                start_line_offset: Some(c.start_line),
                analyzed: Analyzed::default(),
            }
        })
        .collect();
    (docs, true)
}

/// Reads, chunks and tokenizes `files` in parallel, in their order; the
/// documents one thread tokenizes share a vocabulary. Without a tokenizer
/// the analysis is left empty (a caller tokenizing elsewhere).
/// `on_read(done, total, id)` is called as files finish.
pub fn ingest(
    files: &[FoundFile],
    chunking: ChunkOptions,
    tokenizer: Option<&Tokenizer>,
    on_read: &(dyn Fn(usize, usize, &str) + Sync),
) -> Vec<FileOutcome> {
    let done = AtomicUsize::new(0);
    let total = files.len();
    let piece = 64.max(total / (rayon::current_num_threads() * 16).max(1));
    let analyzers = tokenizer.map(ThreadAnalyzers::new);
    let read_one = |f: &FoundFile| -> FileOutcome {
        let out = match read_text(&f.path) {
            Ok(None) => FileOutcome::Skipped { id: f.id.clone(), reason: "binary".into() },
            Ok(Some(text)) => {
                let (docs, chunked) = documents_of(&f.id, text, chunking);
                FileOutcome::Documents { id: f.id.clone(), docs, chunked }
            }
            Err(e) => FileOutcome::Failed { id: f.id.clone(), error: e.to_string() },
        };
        on_read(done.fetch_add(1, Ordering::Relaxed) + 1, total, &f.id);
        out
    };
    let pieces: Vec<(usize, Vec<FileOutcome>)> = files
        .par_chunks(piece)
        .map(|chunk| {
            let mut out: Vec<FileOutcome> = chunk.iter().map(read_one).collect();
            let slot = match &analyzers {
                Some(a) => {
                    a.with(|a| {
                        for o in out.iter_mut() {
                            if let FileOutcome::Documents { docs, .. } = o {
                                for d in docs.iter_mut() {
                                    let (terms, len) = a.analyze(&d.content);
                                    d.analyzed.terms = terms;
                                    d.analyzed.len = len;
                                }
                            }
                        }
                    })
                    .0
                }
                None => 0,
            };
            (slot, out)
        })
        .collect();
    let vocabs = analyzers.map(ThreadAnalyzers::into_vocabs);
    pieces
        .into_iter()
        .flat_map(|(slot, mut out)| {
            if let Some(vocabs) = &vocabs {
                for o in out.iter_mut() {
                    if let FileOutcome::Documents { docs, .. } = o {
                        for d in docs.iter_mut() {
                            d.analyzed.vocab = vocabs[slot].clone();
                        }
                    }
                }
            }
            out
        })
        .collect()
}

/// Groups the documents of files into store writes of at most `max`
/// documents, keeping each file's documents in one write where it fits (a
/// file with more than `max` documents spans several). `files` gives each
/// file's document count; the result lists `(file, document index)`.
pub fn write_units(files: &[(usize, usize)], max: usize) -> Vec<Vec<(usize, usize)>> {
    let max = max.max(1);
    let mut units = Vec::new();
    let mut unit: Vec<(usize, usize)> = Vec::new();
    for &(file, count) in files {
        if !unit.is_empty() && unit.len() + count > max {
            units.push(std::mem::take(&mut unit));
        }
        for j in 0..count {
            if unit.len() == max {
                units.push(std::mem::take(&mut unit));
            }
            unit.push((file, j));
        }
    }
    if !unit.is_empty() {
        units.push(unit);
    }
    units
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
/// ignored by it from then on (see `Bm25Index::add_bulk`).
pub fn build_index(params: Bm25Params, seq: u64, outcomes: Vec<FileOutcome>, report: &mut Report, on_index: &dyn Fn(usize, usize, &str)) -> Bm25Index {
    let mut index = Bm25Index::new(params);
    index.clear(seq);
    let total = outcomes.len();
    let mut docs = Vec::new();
    // (file id, its last document's position) for progress.
    let mut ends: Vec<(String, usize)> = Vec::new();
    for o in outcomes {
        match o {
            FileOutcome::Documents { id, docs: d, chunked } => {
                if chunked {
                    report.chunks += d.len();
                }
                report.indexed += 1;
                docs.extend(d);
                ends.push((id, docs.len()));
            }
            FileOutcome::Skipped { id, reason } => report.skipped.push((id, reason)),
            FileOutcome::Failed { id, error } => report.failed.push((id, error)),
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
    index
}

#[cfg(test)]
mod tests {
    #[test]
    fn write_units_keep_files_whole_where_they_fit() {
        let units = super::write_units(&[(0, 2), (1, 2), (2, 3), (3, 7), (4, 1)], 4);
        let shape: Vec<Vec<(usize, usize)>> = units;
        assert_eq!(shape[0], [(0, 0), (0, 1), (1, 0), (1, 1)]);
        assert_eq!(shape[1], [(2, 0), (2, 1), (2, 2)]);
        assert_eq!(shape[2], [(3, 0), (3, 1), (3, 2), (3, 3)]);
        assert_eq!(shape[3], [(3, 4), (3, 5), (3, 6), (4, 0)]);
        assert!(super::write_units(&[], 100).is_empty());
    }

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
