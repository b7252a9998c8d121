//! Snapshots: everything `search()` needs, saved to a directory and loaded
//! by a later process (`persist` option, issue 14).
//!
//! - `codec`: the byte format (little-endian, length-prefixed, checked);
//! - `files`: what was indexed from each file (size, modification time,
//!   content hash) and the plan that re-reads only what changed;
//! - `disk`: atomic writes (temporary file, fsync, rename), the header
//!   (magic, format version, length, checksum) and the one-writer lock.
//!
//! The index, the ledger and the embedded vector store encode themselves
//! (`index::snapshot`, `Ledger::encode`, `VectorIndex::encode`).

pub use crate::bytes::{codec, stored};
pub mod apply;
pub mod disk;
pub mod files;
pub mod intent;
pub mod remote;

#[cfg(test)]
mod tests;

use crate::analysis::tokenizer::{Pattern, SplitRule, TokenizerConfig};
use crate::index::{Bm25Index, Bm25Params};
use crate::ingest::ChunkOptions;
use crate::vectors::ledger::Ledger;
use crate::vectors::store::VectorIndex;
pub use apply::{apply_changes, FileCounts};
use codec::{Decoder, Encoder};
pub use files::{now_ns, FileRecord, FileTable, Reconcile};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Bumped whenever the byte layout changes: an older or newer snapshot is
/// rebuilt, never misread.
pub const FORMAT_VERSION: u32 = 13;

pub use crate::bytes::SnapshotError;

pub use crate::vectors::embedding::EmbedderIdentity;

/// The vector side of a snapshot.
#[derive(Debug, Clone, Default)]
pub struct VectorState {
    pub embedder: EmbedderIdentity,
    pub ledger: Ledger,
    /// The embedded store's index of this workspace (none for a store of
    /// the user's, which keeps its own vectors).
    pub local: Option<VectorIndex>,
}

impl VectorState {
    /// What of a saved vector side a workspace keeps. With the same
    /// embedder, everything. With another (or one that could not be
    /// checked), the record of what the store holds, for deletions, but no
    /// text hash: every text is embedded again. For the embedded store,
    /// its vectors only with the same embedder; without them the ledger
    /// holds nothing either.
    pub fn adopt(self, same_embedder: bool, embedded_store: bool) -> (Ledger, Option<VectorIndex>) {
        let mut ledger = self.ledger;
        if !same_embedder {
            ledger.forget_texts();
        }
        let local = self.local.filter(|_| same_embedder && embedded_store);
        if embedded_store && local.is_none() {
            ledger.clear();
        }
        (ledger, local)
    }
}

/// Everything a workspace saves.
#[derive(Debug, Clone, Default)]
pub struct Snapshot {
    /// The options the index depends on (tokenizer, BM25 parameters,
    /// chunking...): a snapshot made with others is rebuilt.
    pub fingerprint: String,
    pub index: Bm25Index,
    pub files: FileTable,
    pub vectors: Option<VectorState>,
    /// The file the texts are still in (loaded from a file), for
    /// `StoredFile::set_recover`.
    pub texts: Option<Arc<stored::StoredFile>>,
}

/// The texts a JavaScript tokenizer is tried on when the workspace starts,
/// to know it by what it does (`JsTokenizer::Behaviour`): ASCII words in
/// both cases with stopwords, plurals and a contraction; accents and other
/// scripts' letters; Han, Kana and Hangul; numbers of several forms;
/// identifiers; punctuation and symbols; unusual spaces. Each is tried on
/// its own, so that a tokenizer that throws on one is still known by the
/// others. Changing them rebuilds every snapshot made with such a tokenizer.
pub const TOKENIZER_PROBES: &[&str] = &[
    "The QUICK brown fox's jumps, over the lazy dogs; it isn't running and was RUNS.",
    "Café naïve RÉSUMÉ Ærøskøbing straße İstanbul ΟΔΥΣΣΕΑΣ Ñandú",
    "東京都の天気は晴れ カタカナ 서울특별시 中文分词测试",
    "0 7 42 3.14 -5 1,000,000 v2.0.1 2024-01-31 Ⅻ ٣٤",
    "parseUserId HTTPServer2 snake_case_name CONSTANT_VALUE kebab-case dot.separated",
    "a-b a_b a/b a\\b (x) [y] {z} <w> \"q\" 'r' #tag @user $var 100% & * + = | ~ ^ ` — … ¿¡ ✓ 🙂",
    "  tabs\tand\u{00A0}odd\u{2003}spaces\r\nnew line  ",
];

/// How the fingerprint knows a JavaScript tokenizer. Its source text alone
/// does not tell it: closures made by one function, and every bound
/// function, have the same text whatever they do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JsTokenizer<'a> {
    /// The `tokenizerId` option: the user's name for it, trusted as given
    /// (for a tokenizer whose difference the probes cannot show, e.g. a
    /// word list in a closure).
    Id(&'a str),
    /// What it does: its source text (an edited function) and what it
    /// gives for each of `TOKENIZER_PROBES` (closures and bound functions
    /// over other values), as lib/runtime.js `tokenizerIdentity` writes them.
    Behaviour(&'a str),
}

/// What the index depends on besides the files: a snapshot made with
/// other options, or by another version of the engine (whose tokenizer
/// may differ), is rebuilt. `js_tokenizer`: how a JavaScript tokenizer,
/// if one is used, is known.
pub fn fingerprint(
    tokenizer: Option<&TokenizerConfig>,
    params: Bm25Params,
    chunking: ChunkOptions,
    js_tokenizer: Option<JsTokenizer>,
) -> String {
    let tokenizer = tokenizer.map(|c| {
        let mut stopwords: Vec<&String> = c.stopwords.iter().collect();
        stopwords.sort();
        let split = match &c.split {
            SplitRule::Whitespace => "whitespace".to_string(),
            SplitRule::Pattern(Pattern::Automaton(r)) => format!("/{}/", r.as_str()),
            SplitRule::Pattern(Pattern::Backtracking(r)) => format!("/{}/", r.as_str()),
        };
        format!(
            "lowercase={} punctuation={} min={} stopwords={:?} split={} cjk={} fold={} identifiers={} stem={}",
            c.lowercase,
            c.remove_punctuation,
            c.min_length,
            stopwords,
            split,
            // (Bigrams since 2026-12-06 keep a word mixing CJK with other characters whole too.)
            if c.cjk_bigrams { "bigrams, mixed words whole" } else { "false" },
            // (Since 2026-12-06 folding keeps Hangul syllables and kana's voicing marks.)
            if c.fold_diacritics { "marks, Hangul and kana whole" } else { "false" },
            c.split_identifiers,
            c.stem_english
        )
    });
    format!(
        "engine: {}; tokenizer: {}; js tokenizer: {}; k1={} b={}; chunks of {} characters, {} lines overlap; path field x{}; definitions x{} ({})",
        env!("CARGO_PKG_VERSION"),
        tokenizer.as_deref().unwrap_or("none"),
        match js_tokenizer {
            None => "none".to_string(),
            Some(JsTokenizer::Id(id)) => format!("id {id:?}"),
            Some(JsTokenizer::Behaviour(b)) => format!("{:016x}", xxhash_rust::xxh3::xxh3_64(b.as_bytes())),
        },
        params.k1,
        params.b,
        chunking.max_chars,
        chunking.overlap_lines,
        crate::ingest::PATH_WEIGHT,
        crate::ingest::DEFINITION_WEIGHT,
        crate::analysis::definitions::VERSION
    )
}

/// Whether the persist directory `dir` is `base` or a folder above it
/// (compared as given and, where they exist, as canonical paths).
pub fn holds_base(dir: &Path, base: &Path) -> bool {
    let lexical = |p: &Path| {
        crate::ingest::scan::resolve_base(&std::env::current_dir().unwrap_or_default(), &p.to_string_lossy())
    };
    let (d, b) = (lexical(dir), lexical(base));
    if b.starts_with(&d) {
        return true;
    }
    matches!((dir.canonicalize(), base.canonicalize()), (Ok(d), Ok(b)) if b.starts_with(&d))
}

/// The id of a persisted workspace given none: the same at every start
/// (so is its default vector index name, `<id>_search`), from its directory.
pub fn stable_id(dir: &Path) -> String {
    let dir = std::path::absolute(dir).unwrap_or_else(|_| dir.to_path_buf());
    format!("ws_{:012x}", xxhash_rust::xxh3::xxh3_64(dir.to_string_lossy().as_bytes()) >> 16)
}

/// What separates a fingerprint's vector side from the rest (`Engine::new`).
pub const VECTORS_PART: &str = "; vectors: ";

/// Whether a snapshot with the fingerprint `saved` can be loaded by a
/// workspace with `now`: the same options for the index. Its vector side
/// may differ (an embedder added, removed, or another vector index or
/// store): the index is loaded and its texts embedded again, rather than
/// rebuilt from the files, which would lose the documents given to
/// `index()`.
pub fn same_index(saved: &str, now: &str) -> bool {
    index_part(saved) == index_part(now)
}

/// Whether the vector side (index and store) is the same in both.
pub fn same_vectors(saved: &str, now: &str) -> bool {
    saved.rsplit_once(VECTORS_PART).map(|(_, v)| v) == now.rsplit_once(VECTORS_PART).map(|(_, v)| v)
}

fn index_part(fingerprint: &str) -> &str {
    fingerprint.rsplit_once(VECTORS_PART).map_or(fingerprint, |(index, _)| index)
}

/// The parts of two fingerprints that differ, for the warning.
pub fn fingerprint_difference(saved: &str, now: &str) -> String {
    let now_parts: Vec<&str> = now.split("; ").collect();
    let saved_parts: Vec<&str> = saved.split("; ").collect();
    let changed: Vec<String> = now_parts
        .iter()
        .enumerate()
        .filter(|(i, p)| saved_parts.get(*i) != Some(*p))
        .map(|(i, p)| format!("{} (saved: {})", p, saved_parts.get(i).unwrap_or(&"nothing")))
        .collect();
    changed.join("; ")
}

/// The directory `persist: true` uses: one per `basePath` (and explicit
/// workspace id) under the user's cache directory (`$XDG_CACHE_HOME` or
/// `~/.cache` on Linux, `~/Library/Caches` on macOS, `%LOCALAPPDATA%` on
/// Windows), never inside the workspace, so git status stays clean.
pub fn default_dir(base: &Path, id: Option<&str>) -> Option<PathBuf> {
    let base = std::fs::canonicalize(base).unwrap_or_else(|_| base.to_path_buf());
    let key = format!("{}\0{}", base.display(), id.unwrap_or(""));
    let name = base.file_name().map_or("root".into(), |n| n.to_string_lossy().into_owned());
    let name: String =
        name.chars().map(|c| if c.is_alphanumeric() || c == '-' || c == '_' { c } else { '_' }).take(40).collect();
    let hash = xxhash_rust::xxh3::xxh3_64(key.as_bytes());
    Some(dirs::cache_dir()?.join("workspace-search").join(format!("{name}-{hash:016x}")))
}

/// A snapshot's parts, borrowed from a live workspace for saving.
pub struct Parts<'a> {
    pub fingerprint: &'a str,
    pub index: &'a Bm25Index,
    pub files: &'a FileTable,
    pub vectors: Option<VectorParts<'a>>,
}

pub struct VectorParts<'a> {
    pub embedder: &'a EmbedderIdentity,
    pub ledger: &'a Ledger,
    pub local: Option<&'a VectorIndex>,
}

impl Parts<'_> {
    /// The payload (without the header `disk` adds).
    pub fn encode(&self, e: &mut Encoder) {
        e.str(self.fingerprint);
        let texts = self.index.encode(e);
        self.files.encode(e);
        match &self.vectors {
            None => e.u8(0),
            Some(v) => {
                e.u8(1);
                e.opt_str(v.embedder.id.as_deref());
                e.f32s(&v.embedder.canary);
                v.ledger.encode(e);
                match v.local {
                    None => e.u8(0),
                    Some(ix) => {
                        e.u8(1);
                        ix.encode(e);
                    }
                }
            }
        }
        // Last: the texts (`Decoder::begin_texts`).
        texts.write(e);
    }
}

impl Snapshot {
    pub fn parts(&self) -> Parts<'_> {
        Parts {
            fingerprint: &self.fingerprint,
            index: &self.index,
            files: &self.files,
            vectors: self.vectors.as_ref().map(|v| VectorParts {
                embedder: &v.embedder,
                ledger: &v.ledger,
                local: v.local.as_ref(),
            }),
        }
    }

    pub fn encode(&self) -> Vec<u8> {
        let mut e = Encoder::default();
        self.parts().encode(&mut e);
        e.buf
    }

    /// Loads the snapshot of `dir`: checked, decoded, its texts left in the
    /// file until used (`stored`).
    pub fn load(dir: &std::path::Path) -> Result<Snapshot, SnapshotError> {
        let (bytes, file) = disk::read(dir)?;
        Snapshot::decode_in_file(&bytes, file, disk::snapshot_path(dir))
    }

    /// Loads a snapshot file at `path` (a snapshot store's cached part), as `load`.
    pub fn load_file(path: &std::path::Path) -> Result<Snapshot, SnapshotError> {
        let (bytes, file) = disk::read_file(path)?;
        Snapshot::decode_in_file(&bytes, file, path.to_path_buf())
    }

    /// Checks and decodes the bytes of `file` (opened as `path`): texts
    /// left in the file, postings, names and line tables viewed in its
    /// mapping where it is kept.
    pub fn decode_in_file(
        bytes: &disk::SnapshotBytes,
        file: std::fs::File,
        path: PathBuf,
    ) -> Result<Snapshot, SnapshotError> {
        let framed = disk::frame_of(bytes, 0)?;
        let map = bytes.mapping().cloned();
        let file = stored::StoredFile::new(file, path);
        let decoder = Decoder::in_file(framed.payload, file.clone(), disk::HEADER as u64, map);
        // The checksum on one core, the decoding on the other (it checks
        // what it reads, and its result is dropped unless the sum is right).
        let (checked, decoded) = rayon::join(|| framed.verify(), || Snapshot::decode_from(decoder));
        checked?;
        let mut snapshot = decoded?;
        snapshot.texts = Some(file);
        snapshot.restore_graph();
        Ok(snapshot)
    }

    /// Decodes a payload held in memory (its texts copied), known good.
    pub fn decode(bytes: &[u8]) -> Result<Snapshot, SnapshotError> {
        let mut snapshot = Snapshot::decode_from(Decoder::new(bytes))?;
        snapshot.restore_graph();
        Ok(snapshot)
    }

    /// Hands the embedded store's saved graph, if any, to usearch: only
    /// once the bytes are known good (`VectorIndex::restore_graph`).
    pub fn restore_graph(&mut self) {
        if let Some(local) = self.vectors.as_mut().and_then(|v| v.local.as_mut()) {
            local.restore_graph();
        }
    }

    /// Decodes a payload without its texts, which are the `len` bytes of
    /// `texts` (a snapshot store's texts part: `engine::remote`), its graph
    /// left for `restore_graph` once the bytes are known good; arrays
    /// viewed where they lie in `map`, which holds `head`.
    /// `postings`: where the index's postings lay in the payload and their
    /// length, when they lie apart too, as the first bytes of `texts`.
    pub fn decode_apart(
        head: &[u8],
        map: Arc<crate::bytes::section::Backing>,
        texts: Arc<stored::StoredFile>,
        len: u64,
        postings: Option<(usize, usize)>,
    ) -> Result<Snapshot, SnapshotError> {
        let decoder = match postings {
            None => Decoder::texts_apart(head, map, texts.clone(), len),
            Some(at) => Decoder::parts_apart(head, map, texts.clone(), len, at),
        };
        let mut snapshot = Snapshot::decode_from(decoder)?;
        snapshot.texts = Some(texts);
        Ok(snapshot)
    }

    /// Where the index's postings lie in a framed snapshot's bytes (a
    /// snapshot store keeps them apart, with the texts).
    pub fn postings_span(framed: &[u8]) -> Option<std::ops::Range<usize>> {
        let mut d = Decoder::new(framed.get(disk::HEADER..)?);
        d.str("the options").ok()?;
        let span = Bm25Index::postings_span(&mut d).ok()?;
        Some(span.start + disk::HEADER..span.end + disk::HEADER)
    }

    fn decode_from(mut d: Decoder) -> Result<Snapshot, SnapshotError> {
        let fingerprint = d.string("the options")?;
        let index = Bm25Index::decode(&mut d)?;
        // (Kept as it lies until first used.)
        let files = FileTable::decode(&mut d)?;
        let vectors = match d.u8("the vector flag")? {
            0 => None,
            _ => {
                let id = d.opt_string("the embedder id")?;
                let canary = d.f32s("the canary")?;
                let ledger = Ledger::decode(&mut d)?;
                let local = match d.u8("the store flag")? {
                    0 => None,
                    _ => Some(VectorIndex::decode(&mut d)?),
                };
                Some(VectorState { embedder: EmbedderIdentity { id, canary }, ledger, local })
            }
        };
        if !d.is_done() {
            return Err(SnapshotError::Corrupt("bytes after the end".into()));
        }
        Ok(Snapshot { fingerprint, index, files, vectors, texts: None })
    }
}
