//! Times the engine's top-k alone (no Node, no result conversion):
//!   cargo run -p workspace-search-core --release --example topk -- <folder> <queries file> [k]
//! The queries file has one query per line (`node bench/queries.mjs` writes
//! the bench's). Builds the index as `init()` does, then runs every query
//! once per pass (`PASSES`, default 3) and prints percentiles, the mean per
//! number of query tokens, and the same queries warm.
use std::alloc::{GlobalAlloc, Layout, System};
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Counts the bytes held, to compare with the index's own account.
struct Counting;
static HELD: AtomicUsize = AtomicUsize::new(0);
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        HELD.fetch_add(l.size(), Ordering::Relaxed);
        System.alloc(l)
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        HELD.fetch_sub(l.size(), Ordering::Relaxed);
        System.dealloc(p, l)
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, n: usize) -> *mut u8 {
        HELD.fetch_add(n, Ordering::Relaxed);
        HELD.fetch_sub(l.size(), Ordering::Relaxed);
        System.realloc(p, l, n)
    }
}
#[global_allocator]
static GLOBAL: Counting = Counting;
use std::time::Instant;
use workspace_search_core::analysis::tokenizer::Tokenizer;
use workspace_search_core::index::Bm25Params;
use workspace_search_core::ingest::scan::{scan, ScanOptions};
use workspace_search_core::ingest::{build_index, ingest, ChunkOptions, Report};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let (dir, queries) = (Path::new(&args[1]), std::fs::read_to_string(&args[2]).expect("queries file"));
    let k: usize = args.get(3).map_or(10, |s| s.parse().expect("k"));
    let tokenizer = Tokenizer::default();
    let t = Instant::now();
    let found = scan(dir, &[".".to_string()], ScanOptions::default());
    let scanned = t.elapsed();
    let outcomes =
        ingest(&found.files, ChunkOptions::default(), u64::MAX, Some((&tokenizer, &Default::default())), &|_, _, _| {});
    let ingested = t.elapsed();
    let index = build_index(Bm25Params::default(), 1, outcomes, &mut Report::default(), &|_, _, _| {});
    let ms = |d: std::time::Duration| d.as_secs_f64() * 1000.0;
    println!(
        "built {} documents in {:.0} ms (scan {:.0}, read and tokenize {:.0}, index {:.0})",
        index.len(),
        ms(t.elapsed()),
        ms(scanned),
        ms(ingested - scanned),
        ms(t.elapsed() - ingested)
    );
    let n = index.len() as f64;
    let parts: Vec<String> = index.memory_parts().iter().map(|(k, v)| format!("{k} {:.0}", *v as f64 / n)).collect();
    println!("bytes per document: {}", parts.join(", "));
    println!(
        "allocated {:.0} bytes per document, accounted {:.0}",
        HELD.load(Ordering::Relaxed) as f64 / n,
        index.memory_parts().iter().map(|p| p.1).sum::<usize>() as f64 / n
    );
    let queries: Vec<Vec<String>> = queries.lines().map(|q| tokenizer.tokenize(q)).collect();
    let mut samples = Vec::new();
    let mut found = 0;
    let passes: usize = std::env::var("PASSES").ok().and_then(|s| s.parse().ok()).unwrap_or(3);
    for _ in 0..passes {
        for q in &queries {
            let t = Instant::now();
            found += index.top_k(q, k, None).len();
            samples.push(t.elapsed().as_secs_f64() * 1e6);
        }
    }
    // Warm: each query run 10 times in a row, the last timed (what is left
    // once its postings are in cache).
    let mut warm: Vec<f64> = queries
        .iter()
        .map(|q| {
            for _ in 0..9 {
                index.top_k(q, k, None);
            }
            let t = Instant::now();
            index.top_k(q, k, None);
            t.elapsed().as_secs_f64() * 1e6
        })
        .collect();
    warm.sort_by(|a, b| a.partial_cmp(b).unwrap());
    println!(
        "warm (each query run 10 times in a row): p50 {:.1} µs, mean {:.1} µs",
        warm[warm.len() / 2],
        warm.iter().sum::<f64>() / warm.len() as f64
    );
    // Mean per number of query tokens (where the time goes).
    let mut by_len: std::collections::BTreeMap<usize, (f64, usize)> = Default::default();
    for (i, q) in queries.iter().enumerate() {
        for p in 0..passes {
            let e = by_len.entry(q.len()).or_default();
            e.0 += samples[p * queries.len() + i];
            e.1 += 1;
        }
    }
    for (len, (sum, n)) in by_len {
        println!("  {len} tokens: {} queries, mean {:.1} µs", n / passes, sum / n as f64);
    }
    {
        let (mut table_t, mut scan_t, mut n, mut same, mut bytes) = (0.0, 0.0, 0, 0, 0);
        for q in &queries {
            let hits = index.top_k(q, k, None);
            let ids = index.term_ids(q);
            for h in &hits {
                let t = Instant::now();
                let a = index.line_range_of_terms(h.slot, &ids);
                table_t += t.elapsed().as_secs_f64() * 1e6;
                let t = Instant::now();
                let b = workspace_search_core::search::hybrid::line_range_of(&h.doc.content, q, &tokenizer);
                scan_t += t.elapsed().as_secs_f64() * 1e6;
                bytes += h.doc.content.len();
                n += 1;
                same += (a == b) as usize;
            }
        }
        println!(
            "line ranges of {n} hits ({} B each): tables {:.2} µs/hit, tokenizing {:.2} µs/hit, same {same}",
            bytes / n.max(1),
            table_t / n as f64,
            scan_t / n as f64
        );
    }
    samples.sort_by(|a, b| a.partial_cmp(b).unwrap());
    let at = |p: f64| samples[((samples.len() as f64 * p) as usize).min(samples.len() - 1)];
    println!(
        "top-{k} over {} queries x 3: p50 {:.1} µs, p90 {:.1} µs, p99 {:.1} µs, mean {:.1} µs ({found} hits)",
        queries.len(),
        at(0.5),
        at(0.9),
        at(0.99),
        samples.iter().sum::<f64>() / samples.len() as f64
    );
}
