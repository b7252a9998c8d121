//! Snapshots give back the index they were made of (same results, same
//! statistics, same memory), damaged ones are refused, and an incremental
//! update of a loaded index equals a fresh build of the same files.

use super::*;
use crate::analysis::tokenizer::Tokenizer;
use crate::analysis::Analyzed;
use crate::index::tests::{doc, q};
use crate::index::{Bm25Index, Bm25Params};
use crate::ingest::scan::{FileStamp, FoundFile};
use crate::ingest::{documents_of, ChunkOptions, FileOutcome, Report};

fn results(ix: &Bm25Index, t: &Tokenizer, query: &str) -> Vec<(String, u64, String)> {
    ix.top_k(&q(t, query), 10, None)
        .iter()
        .map(|h| {
            (
                h.doc.id.clone(),
                h.score.to_bits(),
                format!("{:?}{:?}", h.doc.metadata, ix.line_range(h.slot, &q(t, query))),
            )
        })
        .collect()
}

fn file(t: &Tokenizer, id: &str, text: &str) -> FileOutcome {
    let (mut docs, chunked) = documents_of(id, text.into(), ChunkOptions { max_chars: 60, overlap_lines: 1 });
    for d in docs.iter_mut() {
        d.analyzed = Analyzed::of_text(t, &d.content);
    }
    FileOutcome::Documents { id: id.into(), docs, chunked, hash: crate::ingest::content_hash(text) }
}

fn found(id: &str, size: u64) -> FoundFile {
    FoundFile {
        id: id.into(),
        path: id.into(),
        identity: None,
        hard_linked: false,
        stamp: Some(FileStamp { size, modified_ns: 1, ..Default::default() }),
        link: false,
        listed: None,
        base: None,
    }
}

fn long_text(word: &str) -> String {
    (0..12).map(|i| format!("line {i} of {word} about searching indexes\n")).collect()
}

#[test]
fn a_snapshot_gives_back_the_same_index() {
    let t = Tokenizer::default();
    let mut ix = Bm25Index::new(Bm25Params { k1: 1.2, b: 0.7 });
    ix.upsert(doc(&t, "a.md", "alpha beta gamma\nsecond line beta"), 1);
    ix.upsert(doc(&t, "b.md", "beta delta ünïcode 重置密码"), 2);
    ix.upsert(doc(&t, "gone.md", "alpha"), 3);
    ix.remove("gone.md", 4);
    let FileOutcome::Documents { docs, .. } = file(&t, "big.md", &long_text("chunked")) else { panic!() };
    assert!(docs.len() > 1);
    for d in docs {
        ix.upsert(d, 5);
    }
    let snap = Snapshot { fingerprint: "options".into(), index: ix.clone(), ..Default::default() };
    let back = Snapshot::decode(&snap.encode()).unwrap();
    assert_eq!(back.fingerprint, "options");
    for query in ["beta", "alpha gamma", "重置", "chunked searching", "line 7"] {
        assert_eq!(results(&back.index, &t, query), results(&ix, &t, query), "{query}");
    }
    let (a, b) = (back.index.stats(), ix.stats());
    assert_eq!((a.documents, a.terms, a.tokens, a.avg_doc_length), (b.documents, b.terms, b.tokens, b.avg_doc_length));
    assert!(a.memory_bytes <= b.memory_bytes, "loaded: exact capacities");
    let chunks: Vec<_> = back.index.documents().filter(|d| d.source_file().is_some()).collect();
    assert!(chunks.windows(2).all(|w| w[0].content.shares_with(&w[1].content)), "one text per file");
    let maps: Vec<_> = chunks.iter().map(|d| d.metadata.clone().expect("sourceFile")).collect();
    assert!(maps.windows(2).all(|w| std::sync::Arc::ptr_eq(&w[0], &w[1])), "one metadata map per file");
    // Writes of the new process (any sequence number) win over loaded ones.
    let mut loaded = back.index;
    assert!(loaded.upsert(doc(&t, "a.md", "replaced"), 1));
    assert_eq!(loaded.get("a.md").unwrap().content, "replaced");
    // Every cut and every flipped byte is refused, never misread.
    let bytes = snap.encode();
    for cut in (0..bytes.len()).step_by(7) {
        assert!(Snapshot::decode(&bytes[..cut]).is_err(), "cut at {cut}");
    }
    // Bytes that pass the checksum but say something else (a file changed
    // on purpose): decoding refuses or accepts them, and never panics.
    for at in (0..bytes.len()).step_by(3) {
        for flip in [0x01, 0x80, 0xff] {
            let mut bad = bytes.clone();
            bad[at] ^= flip;
            let _ = Snapshot::decode(&bad);
        }
    }
}

#[test]
fn a_file_read_again_as_recorded_is_worth_saving_only_when_that_spares_its_next_read() {
    let t = Tokenizer::default();
    let r = files::RACY_NS;
    let scan = 100 * r;
    let at = |id: &str, modified_ns: i128| FoundFile {
        stamp: Some(FileStamp { size: 4, modified_ns, ..Default::default() }),
        ..found(id, 4)
    };
    // Recorded at the last scan (`scan`): one modified just before it, one
    // dated ahead of the clock, one touched since (a new stamp).
    let before = [at("recent.md", scan - r / 2), at("ahead.md", 1_000 * r), at("touched.md", 10 * r)];
    let texts = ["same", "same", "same"];
    let outcomes = || before.iter().zip(texts).map(|(f, text)| file(&t, &f.id, text)).collect::<Vec<_>>();
    let mut table = FileTable::default();
    table.scanned_at = scan;
    table.record(&before, &outcomes());
    let now = [before[0].clone(), before[1].clone(), at("touched.md", 20 * r)];
    let counts_of = |found: &[FoundFile], table: &mut FileTable, scanned_at: i128| {
        let plan = table.plan(found, |_| true);
        let read: Vec<FileOutcome> = plan.to_read.iter().map(|&i| file(&t, &found[i].id, texts[i])).collect();
        let mut counts = FileCounts::default();
        assert!(table.changed_only(found, &plan, read, &mut counts, scanned_at).is_empty());
        counts
    };
    let counts = counts_of(&now, &mut table, scan + 10 * r);
    assert_eq!((counts.reread, counts.unchanged, counts.settled), (3, 3, 2), "recent.md settles, touched.md too");
    assert!(counts.worth_saving());
    // Saved: the next start reads only the file dated ahead, and finds
    // nothing worth saving again.
    table.scanned_at = scan + 10 * r;
    let counts = counts_of(&now, &mut table, scan + 20 * r);
    assert_eq!((counts.reused, counts.reread, counts.unchanged, counts.settled), (2, 1, 1, 0));
    assert!(!counts.worth_saving());
}

#[test]
fn incremental_update_equals_a_fresh_build() {
    let t = Tokenizer::default();
    let v1 = [
        ("keep.md", "stays the same forever".to_string()),
        ("edit.md", long_text("before")),
        ("drop.md", "goes away".into()),
    ];
    let v2 = [
        ("keep.md", "stays the same forever".to_string()),
        ("edit.md", long_text("after")),
        ("new.md", "brand new file".into()),
    ];
    let outcomes = |files: &[(&str, String)]| files.iter().map(|(id, text)| file(&t, id, text)).collect::<Vec<_>>();
    let founds =
        |files: &[(&str, String)]| files.iter().map(|(id, text)| found(id, text.len() as u64)).collect::<Vec<_>>();
    let mut report = Report::default();
    let mut ix = crate::ingest::build_index(Bm25Params::default(), 1, outcomes(&v1), &mut report, &|_, _, _| {});
    let mut table = FileTable::default();
    table.scanned_at = 10 * files::RACY_NS;
    table.record(&founds(&v1), &outcomes(&v1));
    let snap = Snapshot::decode(&Snapshot { index: ix, files: table, ..Default::default() }.encode()).unwrap();
    (ix, table) = (snap.index, snap.files);

    let found2 = founds(&v2);
    let plan = table.plan(&found2, |id| ix.holds_file(id));
    assert_eq!(plan.gone, ["drop.md"]);
    assert_eq!(plan.reused, [0], "same size and time");
    let read: Vec<FileOutcome> = plan.to_read.iter().map(|&i| file(&t, v2[i].0, &v2[i].1)).collect();
    let mut counts = FileCounts::default();
    let changed = table.changed_only(&found2, &plan, read, &mut counts, 20 * files::RACY_NS);
    let mut report = Report::default();
    counts.removed = apply_changes(&mut ix, &mut table, &found2, changed, &plan.gone, 2, &mut report);
    assert_eq!((counts.reused, counts.reread, counts.removed), (1, 2, 1));

    let fresh =
        crate::ingest::build_index(Bm25Params::default(), 1, outcomes(&v2), &mut Report::default(), &|_, _, _| {});
    assert_eq!(report.indexed, 3);
    assert_eq!(ix.stats().documents, fresh.stats().documents);
    assert_eq!(ix.stats().tokens, fresh.stats().tokens);
    for query in ["after", "before", "same forever", "brand new", "goes away", "line searching"] {
        let ids = |r: Vec<(String, u64, String)>| r.into_iter().map(|x| x.0).collect::<Vec<_>>();
        assert_eq!(ids(results(&ix, &t, query)), ids(results(&fresh, &t, query)), "{query}");
    }
}

#[test]
fn a_saved_vector_side_is_kept_whole_only_with_the_same_embedder() {
    use crate::vectors::ledger::Ledger;
    use crate::vectors::store::{Metric, VectorIndex};
    let mut ledger = Ledger::default();
    ledger.record("a.md", ["a.md".to_string()]);
    ledger.note_text("a.md", 7);
    let saved =
        VectorState { embedder: EmbedderIdentity::default(), ledger, local: Some(VectorIndex::new(4, Metric::Cosine)) };
    let (l, local) = saved.clone().adopt(true, true);
    assert!(l.holds("a.md", "a.md", 7) && local.is_some());
    let (l, local) = saved.clone().adopt(false, false);
    assert!(
        !l.holds("a.md", "a.md", 7) && l.get("a.md").is_some() && local.is_none(),
        "external store: deletions still known"
    );
    let (l, local) = saved.adopt(false, true);
    assert!(l.count() == 0 && local.is_none(), "embedded store: nothing held");
}

#[test]
fn a_loaded_snapshot_reads_its_texts_from_the_file_on_first_use() {
    let t = Tokenizer::default();
    let mut ix = Bm25Index::new(Bm25Params::default());
    ix.upsert(doc(&t, "a.md", "alpha beta gamma\nsecond line beta"), 1);
    ix.upsert(doc(&t, "b.md", "beta delta ünïcode 重置密码"), 2);
    let dir = tempfile::tempdir().unwrap();
    let snap = Snapshot { fingerprint: "options".into(), index: ix.clone(), ..Default::default() };
    disk::begin(dir.path(), |e| snap.parts().encode(e)).unwrap().commit().unwrap();
    let loaded = Snapshot::load(dir.path()).unwrap();
    let b = loaded.index.get("b.md").unwrap();
    assert!(matches!(&**b.content.parts().0, crate::text::Body::Stored(s) if !s.is_loaded()));
    assert_eq!((b.content.len(), b.content.is_ascii()), ("beta delta ünïcode 重置密码".len(), false));
    assert_eq!(b.content, "beta delta ünïcode 重置密码");
    for query in ["beta", "重置", "second line"] {
        assert_eq!(results(&loaded.index, &t, query), results(&ix, &t, query), "{query}");
    }
    // Postings and line tables are viewed in the file (on unix, where the
    // mapping is kept); a write copies what it changes, and the index then
    // answers as the original given the same write.
    let term = loaded.index.term_id("beta").unwrap();
    assert_eq!(loaded.index.terms.get(term).postings.is_view(), cfg!(unix));
    assert_eq!(loaded.index.get("a.md").unwrap().table.is_view(), cfg!(unix));
    let (mut written, mut original) = (loaded.index.clone(), ix.clone());
    for index in [&mut written, &mut original] {
        index.upsert(doc(&t, "c.md", "beta epsilon\nbeta"), 3);
        index.remove("a.md", 4);
    }
    assert!(!written.terms.get(written.term_id("beta").unwrap()).postings.is_view());
    for query in ["beta", "epsilon", "重置", "alpha"] {
        assert_eq!(results(&written, &t, query), results(&original, &t, query), "{query} after writes");
    }
    // A save of the loaded index carries the texts it never read.
    let again = dir.path().join("again");
    std::fs::create_dir(&again).unwrap();
    let snap2 = Snapshot { fingerprint: "options".into(), index: loaded.index.clone(), ..Default::default() };
    disk::begin(&again, |e| snap2.parts().encode(e)).unwrap().commit().unwrap();
    let reloaded = Snapshot::load(&again).unwrap();
    assert_eq!(reloaded.index.get("a.md").unwrap().content, "alpha beta gamma\nsecond line beta");
    // Its terms, saved from where they lay, and a written index's, answer as before.
    let twice = dir.path().join("twice");
    std::fs::create_dir(&twice).unwrap();
    let snap3 = Snapshot { fingerprint: "options".into(), index: written.clone(), ..Default::default() };
    disk::begin(&twice, |e| snap3.parts().encode(e)).unwrap().commit().unwrap();
    let rewritten = Snapshot::load(&twice).unwrap();
    for query in ["beta", "epsilon", "重置", "alpha", "second line"] {
        assert_eq!(results(&reloaded.index, &t, query), results(&ix, &t, query), "{query} saved again");
        assert_eq!(results(&rewritten.index, &t, query), results(&original, &t, query), "{query} written, saved");
        assert!(reloaded.index.damaged().is_none() && rewritten.index.damaged().is_none());
    }

    // Another program rewrites the file in place: an unread text comes back
    // as spaces of its length (never foreign bytes, never a panic), and a
    // save fails instead of writing them.
    let fresh = Snapshot::load(&again).unwrap();
    let path = disk::snapshot_path(&again);
    let mut bytes = std::fs::read(&path).unwrap();
    for b in bytes.iter_mut().skip(disk::HEADER) {
        *b = b'x';
    }
    writable(&path);
    std::fs::write(&path, &bytes).unwrap();
    let a = fresh.index.get("a.md").unwrap();
    assert_eq!(a.content.as_str(), " ".repeat(a.content.len()));
    assert!(!path.exists(), "a damaged snapshot is removed, so the next start rebuilds");
    let snap3 = Snapshot { fingerprint: "options".into(), index: fresh.index.clone(), ..Default::default() };
    let third = dir.path().join("third");
    std::fs::create_dir(&third).unwrap();
    let err = disk::begin(&third, |e| snap3.parts().encode(e)).err().expect("the save fails");
    // (Its postings, written over too, may fail it first.)
    let why = err.to_string();
    assert!(why.contains("changed since it was loaded") || why.contains("the loaded index"), "{why}");
    // Also once the blanks were handed out: they are never saved as the text.
    assert!(disk::begin(&third, |e| snap3.parts().encode(e)).is_err());
}

/// Snapshots are written read-only; a test playing another program makes one writable.
fn writable(path: &std::path::Path) {
    #[cfg(unix)]
    std::fs::set_permissions(path, std::os::unix::fs::PermissionsExt::from_mode(0o644)).unwrap();
}

#[test]
fn a_text_damaged_at_rest_is_blank_and_its_snapshot_is_not_loaded_again() {
    let t = Tokenizer::default();
    let mut ix = Bm25Index::new(Bm25Params::default());
    ix.upsert(doc(&t, "a.md", "alpha beta gamma"), 1);
    ix.upsert(doc(&t, "b.md", "delta epsilon zeta"), 2);
    let dir = tempfile::tempdir().unwrap();
    let snap = Snapshot { fingerprint: "options".into(), index: ix, ..Default::default() };
    disk::begin(dir.path(), |e| snap.parts().encode(e)).unwrap().commit().unwrap();
    let path = disk::snapshot_path(dir.path());
    #[cfg(unix)]
    assert_eq!(std::os::unix::fs::PermissionsExt::mode(&std::fs::metadata(&path).unwrap().permissions()) & 0o222, 0);
    // One byte of a text flips on disk (the file replaced by rename, as
    // docs/persistence.md asks): the texts are outside the whole-file checksum, so
    // it loads; that text fails its own and comes back blank.
    let mut bytes = std::fs::read(&path).unwrap();
    let at = bytes.windows(18).position(|w| w == b"delta epsilon zeta").unwrap();
    bytes[at] = b'D';
    let temp = dir.path().join("replacement");
    std::fs::write(&temp, &bytes).unwrap();
    std::fs::rename(&temp, &path).unwrap();
    let loaded = Snapshot::load(dir.path()).unwrap();
    assert_eq!(loaded.index.get("a.md").unwrap().content, "alpha beta gamma");
    assert_eq!(loaded.index.get("b.md").unwrap().content.as_str(), " ".repeat("delta epsilon zeta".len()));
    // ... and the file is gone, so the next start rebuilds from the files.
    assert_eq!(Snapshot::load(dir.path()).err(), Some(SnapshotError::Missing));
    // A byte flipped outside the texts fails the whole-file checksum.
    disk::begin(dir.path(), |e| snap.parts().encode(e)).unwrap().commit().unwrap();
    let mut bytes = std::fs::read(&path).unwrap();
    let at = bytes.windows(18).position(|w| w == b"delta epsilon zeta").unwrap();
    bytes[at - 20] ^= 1; // the texts' table, before the texts
    std::fs::write(&temp, &bytes).unwrap();
    std::fs::rename(&temp, &path).unwrap();
    assert!(matches!(Snapshot::load(dir.path()), Err(SnapshotError::Checksum) | Err(SnapshotError::Corrupt(_))));
}

#[test]
fn postings_kept_apart_with_the_texts_are_read_as_their_blocks_arrive_and_the_index_answers_the_same() {
    use crate::bytes::section::Backing;
    use crate::bytes::stored::{StoredFile, TextsApart};
    let t = Tokenizer::default();
    let mut ix = Bm25Index::new(Bm25Params::default());
    for i in 0..400 {
        let text =
            format!("alpha word{i} common{} {}\nsecond line {}", i % 7, if i % 3 == 0 { "gamma" } else { "" }, i * 31);
        ix.upsert(doc(&t, &format!("d{i}.md"), &text), i + 1);
    }
    let snap = Snapshot { fingerprint: "options".into(), index: ix.clone(), ..Default::default() };
    let framed = disk::frame(|e| snap.parts().encode(e)).unwrap();
    // Split as a snapshot store keeps it: the postings go with the texts.
    let split = disk::texts_start(&framed).unwrap();
    let p = Snapshot::postings_span(&framed).unwrap();
    let len_before = u64::from_le_bytes(framed[p.start - 8..p.start].try_into().unwrap());
    assert_eq!(len_before as usize, p.len(), "the span is the postings, behind their length");
    let head = [&framed[..p.start], &framed[p.end..split]].concat();
    let apart = [&framed[p.clone()], &framed[split..]].concat();
    let frame = 256u64;
    let part = TextsApart::new(std::time::Duration::from_millis(20), frame);
    let attach = |part: &std::sync::Arc<TextsApart>| {
        let backing = Backing::mapped_copy(&head);
        let payload = disk::frame_apart(backing.bytes(), apart.len() as u64, p.len() as u64).unwrap().payload;
        let at = Some((p.start - disk::HEADER, p.len()));
        Snapshot::decode_apart(payload, backing.clone(), StoredFile::apart(part.clone()), apart.len() as u64, at)
            .unwrap()
    };
    let loaded = attach(&part);
    assert!(loaded.index.postings_pending());
    let memory = |index: &Bm25Index| index.memory_parts().iter().find(|p| p.0 == "terms").unwrap().1;
    let (before, mut copied) = (memory(&loaded.index), 0);
    // Each query's blocks of terms, by frame, then the same answers.
    for query in ["word12 gamma", "common3 second", "alpha", "line 124"] {
        let spans = loaded.index.postings_to_read(&q(&t, query));
        copied += spans.iter().map(|s| s.1).sum::<usize>();
        // (A block of terms read for one query is read for the next too.)
        assert!(!spans.is_empty() || query != "word12 gamma", "{query}: its postings are not here yet");
        for i in part.missing_frames(&spans) {
            let at = i * frame as usize;
            part.frame_arrive(i, apart[at..(at + frame as usize).min(apart.len())].to_vec());
        }
        assert_eq!(results(&loaded.index, &t, query), results(&ix, &t, query), "{query}");
        assert!(loaded.index.postings_to_read(&q(&t, query)).is_empty(), "{query}: read once");
    }
    assert!(loaded.index.damaged().is_none());
    // The blocks read before the part was whole keep copies of their postings: counted.
    assert!(copied > 0);
    assert!(memory(&loaded.index) >= before + copied, "{} < {before} + {copied}", memory(&loaded.index));
    // A term whose frames never come: the read waits, then the index says
    // it is damaged (a search then fails) rather than answer without it.
    let never = attach(&TextsApart::new(std::time::Duration::from_millis(20), frame));
    let _ = results(&never.index, &t, "word399");
    assert!(never.index.damaged().is_some());
    // The whole part: the rest read where it lies, and saved as it was.
    part.arrive(Backing::mapped_copy(&apart));
    assert!(!loaded.index.postings_pending());
    assert_eq!(results(&loaded.index, &t, "word399 common5"), results(&ix, &t, "word399 common5"));
    let saved = disk::frame(|e| loaded.parts().encode(e)).unwrap();
    let saved_postings = Snapshot::postings_span(&saved).unwrap();
    assert!(saved[saved_postings] == framed[p.clone()], "its postings saved as they were");
    let back = Snapshot::decode(disk::unframe(&saved).unwrap()).unwrap();
    for query in ["word12 gamma", "common3 second", "word399 common5"] {
        assert_eq!(results(&back.index, &t, query), results(&ix, &t, query), "{query}, saved and loaded");
    }
}

#[test]
fn a_fingerprint_differing_in_its_vector_side_alone_keeps_the_index() {
    use super::{same_index, same_vectors};
    let (none, local) =
        ("engine: 1; k1=1.5; vectors: none", "engine: 1; k1=1.5; vectors: ws_search in the embedded store");
    assert!(same_index(none, local) && !same_vectors(none, local));
    assert!(!same_index(none, "engine: 1; k1=1.2; vectors: none"));
    assert!(same_vectors(local, local));
    // A tokenizer option holding the separator: only the last one splits.
    let odd = "engine: 1; split=/; vectors: /; vectors: none";
    assert!(same_index(odd, "engine: 1; split=/; vectors: /; vectors: x") && !same_index(odd, none));
}
