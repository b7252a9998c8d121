//! tantivy-bench <corpus dir> <queries file> <indexing threads> <index dir>
//!
//! Reads the corpus (dir/<sub>/<file>) into memory (not timed: tantivy is
//! handed text, it does not read files), indexes it with the default
//! tokenizer (simple split, lowercasing) on the given number of threads,
//! commits, then times top-10 queries (ids only) over three passes after a
//! warm-up. Prints one JSON line of figures.

use std::time::Instant;
use tantivy::collector::TopDocs;
use tantivy::query::QueryParser;
use tantivy::schema::{Schema, STORED, STRING, TEXT};
use tantivy::{doc, Index, IndexWriter};

fn cpu_ms() -> f64 {
    let mut u: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut u) };
    let ms = |t: libc::timeval| t.tv_sec as f64 * 1000.0 + t.tv_usec as f64 / 1000.0;
    ms(u.ru_utime) + ms(u.ru_stime)
}

fn sorted(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut v: Vec<_> = std::fs::read_dir(dir).expect("readable").map(|e| e.expect("entry").path()).collect();
    v.sort();
    v
}

fn percentile(samples: &mut [f64], p: f64) -> f64 {
    samples.sort_by(|a, b| a.total_cmp(b));
    samples[((samples.len() as f64 * p) as usize).min(samples.len() - 1)]
}

fn main() -> tantivy::Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let (dir, queries_file, threads, index_dir) =
        (&args[1], &args[2], args[3].parse::<usize>().expect("threads"), &args[4]);
    let mut docs = Vec::new();
    for sub in sorted(std::path::Path::new(dir)) {
        if !sub.is_dir() {
            continue;
        }
        for f in sorted(&sub) {
            let bytes = std::fs::read(&f).expect("readable");
            docs.push((f.to_string_lossy().into_owned(), String::from_utf8_lossy(&bytes).into_owned()));
        }
    }
    let bytes: usize = docs.iter().map(|d| d.1.len()).sum();
    let mut builder = Schema::builder();
    let path = builder.add_text_field("path", STRING | STORED);
    let body = builder.add_text_field("body", TEXT);
    let index = Index::create_in_dir(index_dir, builder.build())?;
    let (c0, t0) = (cpu_ms(), Instant::now());
    let mut writer: IndexWriter = index.writer_with_num_threads(threads, 200_000_000 * threads)?;
    for (p, text) in docs {
        writer.add_document(doc!(path => p, body => text))?;
    }
    writer.commit()?;
    writer.wait_merging_threads()?;
    let (build_ms, cpu) = (t0.elapsed().as_secs_f64() * 1000.0, cpu_ms() - c0);
    let reader = index.reader()?;
    let searcher = reader.searcher();
    let parser = QueryParser::for_index(&index, vec![body]);
    let queries: Vec<String> =
        std::fs::read_to_string(queries_file).expect("queries").lines().map(str::to_string).collect();
    let run = |q: &str| {
        let query = parser.parse_query(q).expect("query");
        std::hint::black_box(searcher.search(&query, &TopDocs::with_limit(10).order_by_score()).expect("search"));
    };
    for q in queries.iter().take(20) {
        run(q);
    }
    let mut samples = Vec::new();
    for _ in 0..3 {
        for q in &queries {
            let t = Instant::now();
            run(q);
            samples.push(t.elapsed().as_secs_f64() * 1e6);
        }
    }
    let p50 = percentile(&mut samples, 0.5);
    let p99 = percentile(&mut samples, 0.99);
    let index_bytes: u64 =
        std::fs::read_dir(index_dir).expect("index").map(|e| e.expect("entry").metadata().map_or(0, |m| m.len())).sum();
    println!(
        "{{\"buildMs\":{build_ms:.1},\"cpuMs\":{cpu:.1},\"p50Us\":{p50:.1},\"p99Us\":{p99:.1},\"bytes\":{bytes},\"indexBytes\":{index_bytes},\"threads\":{threads}}}"
    );
    Ok(())
}
