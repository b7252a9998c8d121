//! Where the decoding of one snapshot file goes (a snapshot store's cached
//! copy, or a persist directory's `snapshot.wss`), six times over:
//! cargo run --release -p workspace-search-core --example cached_profile <file.wss>
//! (`SUM=1`: also time the checksum alone).
use std::time::Instant;

/// The addon's allocator, so that allocation costs are the ones a workspace pays.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;
use workspace_search_core::persist::{disk, Snapshot};

fn main() {
    let path = std::path::PathBuf::from(std::env::args().nth(1).expect("a .wss file"));
    for _ in 0..6 {
        let t = Instant::now();
        let (bytes, file) = disk::read_file(&path).unwrap();
        eprintln!("map {} MB: {:?}", bytes.len() >> 20, t.elapsed());
        if std::env::var_os("SUM").is_some() {
            let t = Instant::now();
            disk::frame_of(&bytes, 0).unwrap().verify().unwrap();
            eprintln!("checksum: {:?}", t.elapsed());
        }
        let t = Instant::now();
        let s = Snapshot::decode_in_file(&bytes, file, path.clone()).unwrap();
        eprintln!("decode and checksum: {:?} ({} docs)", t.elapsed(), s.index.len());
        let status = std::fs::read_to_string("/proc/self/status").unwrap();
        eprintln!(
            "{}",
            status
                .lines()
                .filter(|l| l.starts_with("RssAnon") || l.starts_with("RssFile"))
                .collect::<Vec<_>>()
                .join(" ")
        );
        let t = Instant::now();
        drop(s);
        eprintln!("drop: {:?}", t.elapsed());
    }
}
