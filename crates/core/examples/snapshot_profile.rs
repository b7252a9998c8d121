//! Where a warm start's time goes: cargo run --release -p workspace-search-core --example snapshot_profile <persist dir> <corpus dir> [scan]
//! (`scan`: time the walk alone, five times).
use std::time::Instant;

/// The addon's allocator, so that allocation costs are the ones a workspace pays.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;
use workspace_search_core::ingest::scan::{scan, ScanOptions};
use workspace_search_core::persist::{disk, Snapshot};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let dir = std::path::Path::new(&args[1]);
    if args.get(3).is_some_and(|a| a == "scan") {
        for _ in 0..5 {
            let t = Instant::now();
            let found = scan(std::path::Path::new(&args[2]), &[".".to_string()], ScanOptions::default());
            eprintln!("scan: {:?} ({} files)", t.elapsed(), found.files.len());
        }
        return;
    }
    let t = Instant::now();
    let (bytes, file) = disk::read(dir).unwrap();
    eprintln!("read {} MB: {:?}", bytes.len() >> 20, t.elapsed());
    let t = Instant::now();
    disk::unframe(&bytes).unwrap();
    eprintln!("checksum: {:?}", t.elapsed());
    let t = Instant::now();
    // As a workspace loads it: texts left in the file.
    let s = Snapshot::decode_in_file(&bytes, file, disk::snapshot_path(dir)).unwrap();
    eprintln!("decode: {:?} ({} docs)", t.elapsed(), s.index.len());
    let t = Instant::now();
    drop(bytes);
    eprintln!("free buffer: {:?}", t.elapsed());
    let t = Instant::now();
    let found = scan(std::path::Path::new(&args[2]), &[".".to_string()], ScanOptions::default());
    eprintln!("scan: {:?} ({} files)", t.elapsed(), found.files.len());
    let t = Instant::now();
    let plan = s.files.plan(&found.files, |_| true);
    eprintln!("plan: {:?} ({} reused)", t.elapsed(), plan.reused.len());
    let t = Instant::now();
    drop(s);
    eprintln!("drop: {:?}", t.elapsed());
}
