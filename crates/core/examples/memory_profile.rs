//! Where a cold build's memory and time go, phase by phase (RSS from /proc):
//!   [COUNT=1] [REPACK=1] cargo run --release -p workspace-search-core --example memory_profile <corpus dir>
//! COUNT=1 also counts the bytes and allocations held (slower), by size;
//! DROP=1 then drops the index (what stays is held by others: caches);
//! REPACK=1 then decodes the index from its snapshot form, for comparison.
use std::time::Instant;

use std::alloc::{GlobalAlloc, Layout};
use std::sync::atomic::{AtomicIsize, Ordering};

/// The addon's allocator, so that the slack measured is the one a
/// workspace has, counting the bytes held.
struct Counting;
static HELD: AtomicIsize = AtomicIsize::new(0);
static USABLE: AtomicIsize = AtomicIsize::new(0);
static COUNT: AtomicIsize = AtomicIsize::new(0);
/// Allocations held per power-of-two size class (`COUNT=1`).
static CLASSES: [AtomicIsize; 40] = [const { AtomicIsize::new(0) }; 40];
fn class(size: usize) -> usize {
    (usize::BITS - size.leading_zeros()) as usize
}
/// Counting on (`COUNT=1`): off, phases are timed without its atomics.
static COUNTING: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
fn counting() -> bool {
    COUNTING.load(Ordering::Relaxed)
}
fn usable(p: *mut u8) -> isize {
    unsafe { libmimalloc_sys::mi_usable_size(p as *const _) as isize }
}
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        let p = mimalloc::MiMalloc.alloc(l);
        if counting() {
            HELD.fetch_add(l.size() as isize, Ordering::Relaxed);
            USABLE.fetch_add(usable(p), Ordering::Relaxed);
            COUNT.fetch_add(1, Ordering::Relaxed);
            CLASSES[class(l.size())].fetch_add(1, Ordering::Relaxed);
        }
        p
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        if counting() {
            HELD.fetch_sub(l.size() as isize, Ordering::Relaxed);
            USABLE.fetch_sub(usable(p), Ordering::Relaxed);
            COUNT.fetch_sub(1, Ordering::Relaxed);
            CLASSES[class(l.size())].fetch_sub(1, Ordering::Relaxed);
        }
        mimalloc::MiMalloc.dealloc(p, l)
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, n: usize) -> *mut u8 {
        if !counting() {
            return mimalloc::MiMalloc.realloc(p, l, n);
        }
        HELD.fetch_add(n as isize - l.size() as isize, Ordering::Relaxed);
        USABLE.fetch_sub(usable(p), Ordering::Relaxed);
        CLASSES[class(l.size())].fetch_sub(1, Ordering::Relaxed);
        CLASSES[class(n)].fetch_add(1, Ordering::Relaxed);
        let q = mimalloc::MiMalloc.realloc(p, l, n);
        USABLE.fetch_add(usable(q), Ordering::Relaxed);
        q
    }
}
#[global_allocator]
static ALLOCATOR: Counting = Counting;

fn classes() -> String {
    let mut out = String::new();
    for (c, n) in CLASSES.iter().enumerate() {
        let n = n.load(Ordering::Relaxed);
        if n > 1000 {
            out += &format!(" [{}B: {n}]", (1usize << c) >> 1);
        }
    }
    out
}

fn held_mb() -> String {
    format!(
        "{:.0} (usable {:.0}, {} allocations{})",
        HELD.load(Ordering::Relaxed) as f64 / 1048576.0,
        USABLE.load(Ordering::Relaxed) as f64 / 1048576.0,
        COUNT.load(Ordering::Relaxed),
        classes()
    )
}
use workspace_search_core::analysis::tokenizer::Tokenizer;
use workspace_search_core::index::Bm25Params;
use workspace_search_core::ingest::scan::{scan, ScanOptions};
use workspace_search_core::ingest::{build_index, ingest, ChunkOptions, Report};

fn rss_mb() -> f64 {
    let s = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let kb: f64 = s
        .lines()
        .find(|l| l.starts_with("RssAnon:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(0.0);
    kb / 1024.0
}

fn collect() {
    rayon::broadcast(|_| unsafe { libmimalloc_sys::mi_collect(true) });
    unsafe { libmimalloc_sys::mi_collect(true) };
}

fn main() {
    let dir = std::path::PathBuf::from(std::env::args().nth(1).expect("corpus dir"));
    // Before anything is allocated in counted mode, so that frees match.
    COUNTING.store(std::env::var("COUNT").is_ok_and(|v| v == "1"), Ordering::Relaxed);
    let t = Instant::now();
    let tokenizer = Tokenizer::default();
    let found = scan(&dir, &[".".to_string()], ScanOptions::default());
    eprintln!("scan {:?}: RSS {:.0} MB, held {} MB", t.elapsed(), rss_mb(), held_mb());
    let outcomes =
        ingest(&found.files, ChunkOptions::default(), u64::MAX, Some((&tokenizer, &Default::default())), &|_, _, _| {});
    eprintln!("ingest {:?}: RSS {:.0} MB, held {} MB", t.elapsed(), rss_mb(), held_mb());
    let index = build_index(Bm25Params::default(), 1, outcomes, &mut Report::default(), &|_, _, _| {});
    eprintln!("build {:?}: RSS {:.0} MB, held {} MB", t.elapsed(), rss_mb(), held_mb());
    drop(found);
    collect();
    std::thread::sleep(std::time::Duration::from_secs(1));
    collect();
    eprintln!("a second later: RSS {:.0} MB, held {} MB", rss_mb(), held_mb());
    let stats = index.stats();
    eprintln!("{} documents, {} terms", stats.documents, stats.terms);
    let parts = index.memory_parts();
    let total: usize = parts.iter().map(|p| p.1).sum();
    eprintln!(
        "collected: RSS {:.0} MB, held {} MB; index's account {:.0} MB",
        rss_mb(),
        held_mb(),
        total as f64 / 1048576.0
    );
    if std::env::var("MI_STATS").is_ok() {
        unsafe { libmimalloc_sys::mi_stats_print(std::ptr::null_mut()) };
    }
    for (k, v) in parts {
        eprintln!("  {k}: {:.1} MB", v as f64 / 1048576.0);
    }
    if counting() {
        for (c, n) in CLASSES.iter().enumerate() {
            let n = n.load(Ordering::Relaxed);
            if n > 1000 {
                eprintln!("  allocations of {}-{} bytes: {n}", (1usize << c) >> 1, (1usize << c) - 1);
            }
        }
    }
    if std::env::var("SMAPS").is_ok() {
        let text = std::fs::read_to_string("/proc/self/smaps").unwrap_or_default();
        let (mut head, mut sizes) = (String::new(), Vec::new());
        for l in text.lines() {
            if l.starts_with("Rss:") {
                let kb: u64 = l.split_whitespace().nth(1).and_then(|v| v.parse().ok()).unwrap_or(0);
                sizes.push((kb, head.clone()));
            } else if !l.contains(':') || l.split_whitespace().next().is_some_and(|w| w.contains('-')) {
                head = l.to_string();
            }
        }
        sizes.sort();
        let small: u64 = sizes.iter().filter(|s| s.0 < 2048).map(|s| s.0).sum();
        eprintln!(
            "  mappings under 2 MB RSS: {} of them, {:.1} MB",
            sizes.iter().filter(|s| s.0 < 2048).count(),
            small as f64 / 1024.0
        );
        for (kb, h) in sizes.iter().filter(|s| s.0 >= 2048) {
            eprintln!("  {:.1} MB {h}", *kb as f64 / 1024.0);
        }
    }
    if std::env::var("DROP").is_ok() {
        drop(index);
        collect();
        eprintln!("index dropped: RSS {:.0} MB, held {} MB", rss_mb(), held_mb());
        return;
    }
    if std::env::var("REPACK").is_ok() {
        // The same index decoded from its snapshot form: what it holds
        // when nothing else was allocated between its parts.
        let mut e = workspace_search_core::persist::codec::Encoder::default();
        index.encode(&mut e).write(&mut e);
        drop(index);
        collect();
        eprintln!("encoded, index dropped: RSS {:.0} MB, held {} MB", rss_mb(), held_mb());
        let again = workspace_search_core::index::Bm25Index::decode(
            &mut workspace_search_core::persist::codec::Decoder::new(&e.buf),
        )
        .unwrap();
        drop(e);
        collect();
        eprintln!("decoded: RSS {:.0} MB, held {} MB ({} docs)", rss_mb(), held_mb(), again.len());
        std::thread::sleep(std::time::Duration::from_secs(1));
        collect();
        eprintln!("a second later: RSS {:.0} MB, held {} MB", rss_mb(), held_mb());
    }
}
