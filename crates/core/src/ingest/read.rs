//! Reading files in parallel into documents: binary files skipped,
//! UTF-8 decoded with replacement characters, large files chunked, and the
//! documents one thread reads tokenized with a shared vocabulary.

use super::chunk::{chunk_id, chunk_lines, needs_chunking};
use super::scan::{FileStamp, FoundFile};
use super::{ChunkOptions, FileOutcome, SkipReason};
use crate::analysis::tokenizer::Tokenizer;
use crate::analysis::{definitions, Analyzed, Analyzer, ThreadAnalyzers};
use crate::index::id_base::IdBase;
use crate::index::NewDocument;
use crate::text::arena::{Taken, TextArena, ThreadArenas, ARENA_AT_FILES};
use crate::text::SharedText;
use rayon::prelude::*;
use serde_json::{Map, Value};
use std::io::Read;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

/// Bytes looked at for a NUL byte (binary detection).
const BINARY_PROBE: usize = 8192;

/// What reading a found file gave.
enum Contents {
    Text(SharedText),
    Skip(SkipReason),
}

/// Opens a found file for reading without ever blocking: a FIFO put in
/// its place after the walk would otherwise block `open` until a writer
/// comes. `follow`: false for a name the walk found as a file, so that a
/// link put in its place since is refused (`ELOOP`), not followed.
fn open(path: &std::path::Path, follow: bool) -> std::io::Result<std::fs::File> {
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NONBLOCK | if follow { 0 } else { libc::O_NOFOLLOW });
    }
    #[cfg(not(unix))]
    let _ = follow;
    options.open(path)
}

/// Whether the file opened lies outside `base` (a folder on its way
/// replaced by a link after the walk). Linux says where an open file is
/// (`/proc/self/fd`); elsewhere, or without `/proc`, the identity check of
/// `read_text` is what stands.
fn opened_outside(file: &std::fs::File, base: &std::path::Path) -> bool {
    #[cfg(target_os = "linux")]
    {
        use std::os::fd::AsRawFd;
        if let Ok(real) = std::fs::read_link(format!("/proc/self/fd/{}", file.as_raw_fd())) {
            return !real.starts_with(base);
        }
    }
    let _ = (file, base);
    false
}

/// Reads a found file: the opened file must be the regular file the walk
/// found (same device and inode: a link retargeted since is refused) and
/// no larger than `max_size`; its first 8 KiB decide whether it is binary
/// before the rest is read; UTF-8 is decoded with replacement characters.
fn read_text(f: &FoundFile, max_size: u64, arena: Option<&mut TextArena>) -> std::io::Result<Contents> {
    let file = match open(&f.path, f.link) {
        #[cfg(unix)]
        Err(e) if e.raw_os_error() == Some(libc::ELOOP) && !f.link => return Ok(Contents::Skip(SkipReason::Replaced)),
        other => other?,
    };
    let m = file.metadata()?;
    if !m.is_file() {
        return Ok(Contents::Skip(SkipReason::NotRegular(super::scan::kind_of(m.file_type()))));
    }
    if f.identity.is_some() && super::scan::identity(&m) != f.identity {
        return Ok(Contents::Skip(SkipReason::Replaced));
    }
    if f.base.as_deref().is_some_and(|base| opened_outside(&file, base)) {
        return Ok(Contents::Skip(SkipReason::LinkOutsideBase));
    }
    if m.len() > max_size {
        return Ok(Contents::Skip(SkipReason::TooLarge { size: m.len(), max: max_size }));
    }
    // At most one byte more than allowed: a file that grew is caught too.
    let mut reader = file.take(max_size.saturating_add(1));
    let size = m.len() as usize;
    let mut bytes = match arena {
        Some(arena) => match arena.read(&mut reader, size, BINARY_PROBE)? {
            Taken::Text(text) => return Ok(Contents::Text(text.into())),
            Taken::Binary => return Ok(Contents::Skip(SkipReason::Binary)),
            // Another size than its metadata said, or not UTF-8: the plain way.
            Taken::Declined(read) => read,
        },
        None => Vec::with_capacity(size),
    };
    if bytes.len() < BINARY_PROBE {
        (&mut reader).take((BINARY_PROBE - bytes.len()) as u64).read_to_end(&mut bytes)?;
    }
    if bytes[..bytes.len().min(BINARY_PROBE)].contains(&0) {
        return Ok(Contents::Skip(SkipReason::Binary));
    }
    reader.read_to_end(&mut bytes)?;
    if bytes.len() as u64 > max_size {
        return Ok(Contents::Skip(SkipReason::TooLarge { size: bytes.len() as u64, max: max_size }));
    }
    Ok(Contents::Text(SharedText::new(match String::from_utf8(bytes) {
        Ok(s) => s,
        Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
    })))
}

/// The stamp and text hash of the file at `path` as it is now, read as
/// a walk's file is (`link`: it is a symbolic link to a file below
/// `base`); `None` for a file that is not text (gone, binary, too large).
/// The stamp is taken first: a change after it moves the file's stamp.
pub fn stamp_and_hash(
    path: &std::path::Path,
    link: bool,
    base: Arc<std::path::Path>,
    max_size: u64,
) -> Option<(FileStamp, u64)> {
    let stamp = FileStamp::of(&std::fs::metadata(path).ok()?)?;
    let f = FoundFile {
        id: String::new(),
        path: path.to_path_buf(),
        identity: None,
        hard_linked: false,
        stamp: None,
        link,
        listed: None,
        base: Some(base),
    };
    match read_text(&f, max_size, None).ok()? {
        Contents::Text(text) => Some((stamp, super::content_hash(&text))),
        Contents::Skip(_) => None,
    }
}

/// The text of the file at `path` if it is, decoded as `read_text`
/// decodes, exactly `len` bytes with xxh3 `hash` (a damaged snapshot's
/// text read again from its intact source). Reads at most `len + 1` bytes
/// of a regular file: a decoded text is never shorter than its file.
pub fn read_intact(path: &std::path::Path, hash: u64, len: usize) -> Option<String> {
    let file = open(path, true).ok()?;
    if !file.metadata().ok()?.is_file() {
        return None;
    }
    let mut bytes = Vec::new();
    file.take(len as u64 + 1).read_to_end(&mut bytes).ok()?;
    let text = match String::from_utf8(bytes) {
        Ok(s) => s,
        Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
    };
    (text.len() == len && super::content_hash(&text) == hash).then_some(text)
}

/// How many times each word of a file's path counts in its documents
/// (`analyze_with_field`): folders and file name, identifier-split. Chosen
/// on codeloc-dev (file level, nDCG@10 / Acc@5 / source-only nDCG@10): 0
/// gives 0.699 / 0.706 / 0.682, 1 0.705 / 0.702 / 0.686, 3 0.708 / 0.706 /
/// 0.686, 5 0.711 / 0.702 / 0.689, 12 0.712 / 0.702 / 0.692.
pub const PATH_WEIGHT: u32 = 3;

/// How many times each name a document defines counts
/// (`analysis::definitions`), beside its occurrence in the content.
pub const DEFINITION_WEIGHT: u32 = 10;

/// Splits one text into the documents it is indexed as: itself when small,
/// else `id#chunk-N` chunks with `sourceFile` metadata. Their analysis is
/// left empty for the caller.
pub fn documents_of(id: &str, whole: SharedText, chunking: ChunkOptions) -> (Vec<NewDocument>, bool) {
    if !needs_chunking(&whole, chunking.max_chars) {
        return (
            vec![NewDocument {
                id: id.to_string(),
                content: whole,
                metadata: None,
                start_line_offset: None,
                analyzed: Analyzed::default(),
            }],
            false,
        );
    }
    // Chunks are ranges of the file's text, not copies.
    // One map for all the chunks of the file: a code workspace has
    // hundreds of thousands of chunks, and a map is five allocations.
    let meta = Arc::new(Map::from_iter([("sourceFile".to_string(), Value::String(id.to_string()))]));
    let docs = chunk_lines(&whole, chunking.max_chars, chunking.overlap_lines)
        .into_iter()
        .enumerate()
        .map(|(n, c)| NewDocument {
            id: chunk_id(id, n),
            content: whole.slice(c.text),
            metadata: Some(meta.clone()),
            start_line_offset: Some(c.start_line),
            analyzed: Analyzed::default(),
        })
        .collect();
    (docs, true)
}

/// Reads, chunks and tokenizes `files` in parallel, in their order; the
/// documents one thread tokenizes share a vocabulary. Without a tokenizer
/// the analysis is left empty (a caller tokenizing elsewhere).
/// `on_read(done, total, id)` is called as files finish. A file's path
/// field holds its path from basePath down (`base`).
pub fn ingest(
    files: &[FoundFile],
    chunking: ChunkOptions,
    max_file_size: u64,
    tokenizer: Option<(&Tokenizer, &IdBase)>,
    on_read: &(dyn Fn(usize, usize, &str) + Sync),
) -> Vec<FileOutcome> {
    let done = AtomicUsize::new(0);
    let total = files.len();
    let piece = 64.max(total / (rayon::current_num_threads() * 16).max(1));
    let analyzers = tokenizer.map(|(t, _)| ThreadAnalyzers::new(t));
    let arenas = (total >= ARENA_AT_FILES).then(|| ThreadArenas::new(TextArena::default));
    let read_one = |f: &FoundFile, arena: Option<&mut TextArena>| -> FileOutcome {
        let out = read_outcome(f, chunking, max_file_size, arena);
        on_read(done.fetch_add(1, Ordering::Relaxed) + 1, total, &f.id);
        out
    };
    let pieces: Vec<(usize, Vec<FileOutcome>)> = files
        .par_chunks(piece)
        .map(|chunk| {
            let mut out: Vec<FileOutcome> = match &arenas {
                Some(arenas) => arenas.with(|arena| chunk.iter().map(|f| read_one(f, Some(&mut *arena))).collect()).1,
                None => chunk.iter().map(|f| read_one(f, None)).collect(),
            };
            let slot = match (&analyzers, tokenizer) {
                (Some(analyzers), Some((_, base))) => analyzers.with(|a| analyze_outcomes(a, base, &mut out)).0,
                _ => 0,
            };
            (slot, out)
        })
        .collect();
    let vocabs = analyzers.map(ThreadAnalyzers::into_vocabs);
    pieces
        .into_iter()
        .flat_map(|(slot, mut out)| {
            if let Some(vocabs) = &vocabs {
                for d in documents_mut(&mut out) {
                    d.analyzed.vocab = vocabs[slot].clone();
                }
            }
            out
        })
        .collect()
}

/// One file read and chunked: its documents, or why it is skipped or failed.
fn read_outcome(
    f: &FoundFile,
    chunking: ChunkOptions,
    max_file_size: u64,
    arena: Option<&mut TextArena>,
) -> FileOutcome {
    match read_text(f, max_file_size, arena) {
        Ok(Contents::Skip(reason)) => FileOutcome::Skipped { id: f.id.clone(), reason },
        Ok(Contents::Text(text)) => {
            let hash = super::content_hash(&text);
            let (docs, chunked) = documents_of(&f.id, text, chunking);
            FileOutcome::Documents { id: f.id.clone(), docs, chunked, hash }
        }
        Err(e) => FileOutcome::Failed { id: f.id.clone(), error: e.to_string() },
    }
}

/// Tokenizes the documents of `out` with one thread's analyzer. The
/// file's path (from basePath down) is a field of each of its documents,
/// and the names a document defines another.
fn analyze_outcomes(a: &mut Analyzer<'_>, base: &IdBase, out: &mut [FileOutcome]) {
    let mut path = Vec::new();
    for o in out.iter_mut() {
        if let FileOutcome::Documents { docs, id, .. } = o {
            a.field_terms(&base.relative(id), &mut path);
            let lang = definitions::lang_of(id);
            for d in docs.iter_mut() {
                let (terms, len) = a.analyze_with_fields(&d.content, (&path, PATH_WEIGHT), (lang, DEFINITION_WEIGHT));
                d.analyzed.terms = terms;
                d.analyzed.len = len;
            }
        }
    }
}

/// Every document of the files read in `out`.
fn documents_mut(out: &mut [FileOutcome]) -> impl Iterator<Item = &mut NewDocument> {
    out.iter_mut().flat_map(|o| match o {
        FileOutcome::Documents { docs, .. } => docs.as_mut_slice(),
        _ => &mut [],
    })
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
        let f = |n: &str| FoundFile {
            id: n.into(),
            path: d.path().join(n),
            identity: None,
            hard_linked: false,
            stamp: None,
            link: false,
            listed: None,
            base: None,
        };
        let files = vec![
            f("bin.dat"),
            f("bad.txt"),
            f("long.md"),
            FoundFile {
                id: "gone".into(),
                path: PathBuf::from("/nonexistent/x"),
                identity: None,
                hard_linked: false,
                stamp: None,
                link: false,
                listed: None,
                base: None,
            },
        ];
        let t = Tokenizer::default();
        let out = ingest(&files, ChunkOptions::default(), 1 << 20, Some((&t, &IdBase::default())), &|_, _, _| {});
        assert!(matches!(&out[0], FileOutcome::Skipped { reason, .. } if *reason == SkipReason::Binary));
        match &out[1] {
            FileOutcome::Documents { docs, chunked: false, .. } => {
                assert_eq!(docs[0].content, "ok \u{FFFD} word");
                // Two words of the text, and the path's two (`bad`, `txt`) at their weight.
                assert_eq!(docs[0].analyzed.len, 2 + 2 * PATH_WEIGHT);
            }
            o => panic!("{o:?}"),
        }
        match &out[2] {
            FileOutcome::Documents { docs, chunked: true, .. } => {
                assert_eq!(docs[0].id, "long.md#chunk-0");
                assert_eq!(docs[1].start_line_offset, Some(docs[0].content.lines().count() as u32 - 2));
                assert_eq!(docs[1].metadata.as_ref().unwrap()["sourceFile"], "long.md");
                let (first, second) = (docs[0].metadata.as_ref().unwrap(), docs[1].metadata.as_ref().unwrap());
                assert!(Arc::ptr_eq(first, second), "the chunks of a file share one map");
            }
            o => panic!("{o:?}"),
        }
        assert!(matches!(&out[3], FileOutcome::Failed { .. }));
    }

    /// A large ingest reads texts into arenas; what it gives is what
    /// reading each file on its own gives.
    #[test]
    fn texts_read_into_arenas_equal_texts_read_alone() {
        let d = tempfile::tempdir().unwrap();
        let long: String = (0..400).map(|i| format!("line {i} of a long file\n")).collect();
        let files: Vec<FoundFile> = (0..ARENA_AT_FILES + 10)
            .map(|i| {
                let name = format!("f{i:03}.txt");
                let bytes: Vec<u8> = match i % 50 {
                    0 => b"bin\0ary".to_vec(),
                    1 => b"not utf-8 \xff here".to_vec(),
                    2 => long.clone().into_bytes(),
                    _ => format!("file {i} text").into_bytes(),
                };
                std::fs::write(d.path().join(&name), bytes).unwrap();
                FoundFile {
                    id: name.clone(),
                    path: d.path().join(name),
                    identity: None,
                    hard_linked: false,
                    stamp: None,
                    link: false,
                    listed: None,
                    base: None,
                }
            })
            .collect();
        let together = ingest(&files, ChunkOptions::default(), 1 << 20, None, &|_, _, _| {});
        let in_arena = |o: &FileOutcome| match o {
            FileOutcome::Documents { docs, .. } => matches!(&**docs[0].content.parts().0, crate::text::Body::Arena(_)),
            _ => false,
        };
        assert!(in_arena(&together[3]) && !in_arena(&together[1]), "arena, or the heap for a decoded text");
        for (f, t) in files.iter().zip(&together) {
            let alone = ingest(std::slice::from_ref(f), ChunkOptions::default(), 1 << 20, None, &|_, _, _| {});
            assert!(!in_arena(&alone[0]));
            assert_eq!(format!("{:?}", alone[0]), format!("{t:?}"), "{}", f.id);
        }
    }

    /// A link retargeted outside basePath between the walk and the read is
    /// not followed; a file replaced by a FIFO does not block the read.
    #[cfg(unix)]
    #[test]
    fn files_changed_after_the_walk_are_refused() {
        use crate::ingest::scan::{scan, ScanOptions};
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("secret.txt"), "outside secret").unwrap();
        let d = tempfile::tempdir().unwrap();
        std::fs::write(d.path().join("inside.md"), "inside text").unwrap();
        std::fs::write(d.path().join("plain.md"), "plain text").unwrap();
        std::os::unix::fs::symlink(d.path().join("inside.md"), d.path().join("link.md")).unwrap();
        let found = scan(d.path(), &[".".into()], ScanOptions::default()).files;
        assert_eq!(found.iter().map(|f| f.id.as_str()).collect::<Vec<_>>(), ["inside.md", "link.md", "plain.md"]);
        // Retarget the link outside, and put a FIFO in place of a file.
        std::fs::remove_file(d.path().join("link.md")).unwrap();
        std::os::unix::fs::symlink(outside.path().join("secret.txt"), d.path().join("link.md")).unwrap();
        std::fs::remove_file(d.path().join("plain.md")).unwrap();
        let fifo = std::ffi::CString::new(d.path().join("plain.md").to_str().unwrap()).unwrap();
        // SAFETY: a valid NUL-terminated path; mkfifo only creates a file.
        assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o644) }, 0);
        // Alone (texts on the heap) and among enough files for the texts
        // to be read into blocks: refused the same way.
        let others = tempfile::tempdir().unwrap();
        let padding: Vec<FoundFile> = (0..ARENA_AT_FILES)
            .map(|i| {
                let path = others.path().join(format!("p{i}.md"));
                std::fs::write(&path, "padding").unwrap();
                FoundFile {
                    id: format!("p{i}.md"),
                    path,
                    identity: None,
                    hard_linked: false,
                    stamp: None,
                    link: false,
                    listed: None,
                    base: None,
                }
            })
            .collect();
        for files in [found.clone(), [found.clone(), padding].concat()] {
            let out = ingest(&files, ChunkOptions::default(), 1 << 20, None, &|_, _, _| {});
            assert!(matches!(&out[0], FileOutcome::Documents { .. }));
            assert!(matches!(&out[1], FileOutcome::Skipped { reason: SkipReason::Replaced, .. }), "{:?}", out[1]);
            assert!(
                matches!(&out[2], FileOutcome::Skipped { reason: SkipReason::NotRegular("a FIFO"), .. }),
                "{:?}",
                out[2]
            );
        }
    }
}
