//! What a snapshot's index part holds, by part (MB), to see what an attach
//! must fetch: cargo run --release -p workspace-search-core --example snapshot_parts <persist dir>
use workspace_search_core::persist::{disk, Snapshot};

fn main() {
    let dir = std::path::PathBuf::from(std::env::args().nth(1).expect("a persist dir"));
    let (bytes, file) = disk::read(&dir).expect("a snapshot");
    let s = Snapshot::decode_in_file(&bytes, file, disk::snapshot_path(&dir)).expect("decoded");
    println!("snapshot file {:.1} MB, {} documents", bytes.len() as f64 / 1048576.0, s.index.len());
    for (part, n) in s.index.memory_parts() {
        println!("{part:>16} {:>8.1} MB", n as f64 / 1048576.0);
    }
}
