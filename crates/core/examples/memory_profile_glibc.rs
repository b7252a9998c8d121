//! Where a cold build's memory goes, phase by phase (RSS from /proc):
//!   cargo run --release -p workspace-search-core --example memory_profile <corpus dir>
use std::time::Instant;

use std::alloc::{GlobalAlloc, Layout};
use std::sync::atomic::{AtomicIsize, Ordering};

/// The addon's allocator, so that the slack measured is the one a
/// workspace has, counting the bytes held.
struct Counting;
static HELD: AtomicIsize = AtomicIsize::new(0);
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        HELD.fetch_add(l.size() as isize, Ordering::Relaxed);
        std::alloc::System.alloc(l)
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        HELD.fetch_sub(l.size() as isize, Ordering::Relaxed);
        std::alloc::System.dealloc(p, l)
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, n: usize) -> *mut u8 {
        HELD.fetch_add(n as isize - l.size() as isize, Ordering::Relaxed);
        std::alloc::System.realloc(p, l, n)
    }
}
#[global_allocator]
static ALLOCATOR: Counting = Counting;

fn held_mb() -> f64 {
    HELD.load(Ordering::Relaxed) as f64 / 1048576.0
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
    unsafe {
        libc::malloc_trim(0);
    }
}

fn main() {
    let dir = std::path::PathBuf::from(std::env::args().nth(1).expect("corpus dir"));
    let t = Instant::now();
    let tokenizer = Tokenizer::default();
    let found = scan(&dir, &[".".to_string()], ScanOptions::default());
    eprintln!("scan {:?}: RSS {:.0} MB, held {:.0} MB", t.elapsed(), rss_mb(), held_mb());
    let outcomes = ingest(&found.files, ChunkOptions::default(), u64::MAX, Some(&tokenizer), &|_, _, _| {});
    eprintln!("ingest {:?}: RSS {:.0} MB, held {:.0} MB", t.elapsed(), rss_mb(), held_mb());
    let index = build_index(Bm25Params::default(), 1, outcomes, &mut Report::default(), &|_, _, _| {});
    eprintln!("build {:?}: RSS {:.0} MB, held {:.0} MB", t.elapsed(), rss_mb(), held_mb());
    drop(found);
    collect();
    let parts = index.memory_parts();
    let total: usize = parts.iter().map(|p| p.1).sum();
    eprintln!(
        "collected: RSS {:.0} MB, held {:.0} MB; index's account {:.0} MB",
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
}
