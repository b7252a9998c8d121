//! Reading the small files that steer a walk (`.gitignore`,
//! `.gitattributes`, git's `HEAD`) as git reads them: the name itself only,
//! never a symbolic link (git does not follow a `.gitignore` link either),
//! a regular file only (a FIFO or a device put there is passed over without
//! blocking), and only up to a bound (an endless file such as `/dev/zero`
//! never grows the process).

use std::io::Read;
use std::path::Path;

/// What reading such a file found.
#[derive(Debug, PartialEq, Eq)]
pub enum SmallFile {
    /// The file's text (UTF-8, invalid bytes replaced).
    Text(String),
    /// No regular file of that name (none, a link, a FIFO, a device, a folder).
    Absent,
    /// A regular file larger than the bound: not read.
    TooLarge(u64),
}

/// Reads `path` as the module says, if it is a regular file of at most `max_bytes`.
pub fn read_small(path: &Path, max_bytes: u64) -> SmallFile {
    read_bounded(path, max_bytes, false)
}

/// As `read_small`, a link followed (to a regular file all the same): git's
/// own files, such as a `HEAD` that `core.preferSymlinkRefs` made a link.
pub fn read_small_through_links(path: &Path, max_bytes: u64) -> SmallFile {
    read_bounded(path, max_bytes, true)
}

fn read_bounded(path: &Path, max_bytes: u64, follow: bool) -> SmallFile {
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::custom_flags(
        &mut options,
        libc::O_NONBLOCK | if follow { 0 } else { libc::O_NOFOLLOW },
    );
    #[cfg(not(unix))]
    if !follow && std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink()) {
        return SmallFile::Absent;
    }
    let Ok(file) = options.open(path) else { return SmallFile::Absent };
    let Ok(meta) = file.metadata() else { return SmallFile::Absent };
    if !meta.is_file() {
        return SmallFile::Absent;
    }
    if meta.len() > max_bytes {
        return SmallFile::TooLarge(meta.len());
    }
    let mut bytes = Vec::new();
    // One byte more than allowed: a file that grew since is caught too.
    if file.take(max_bytes + 1).read_to_end(&mut bytes).is_err() {
        return SmallFile::Absent;
    }
    if bytes.len() as u64 > max_bytes {
        return SmallFile::TooLarge(bytes.len() as u64);
    }
    SmallFile::Text(String::from_utf8(bytes).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn regular_files_only_and_bounded() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("f");
        assert_eq!(read_small(&p, 10), SmallFile::Absent);
        std::fs::write(&p, "abc").unwrap();
        assert_eq!(read_small(&p, 10), SmallFile::Text("abc".into()));
        assert_eq!(read_small(&p, 2), SmallFile::TooLarge(3));
        #[cfg(unix)]
        {
            let link = dir.path().join("link");
            std::os::unix::fs::symlink(&p, &link).unwrap();
            assert_eq!(read_small(&link, 10), SmallFile::Absent, "a link is not followed");
            let zero = dir.path().join("zero");
            std::os::unix::fs::symlink("/dev/zero", &zero).unwrap();
            assert_eq!(read_small(&zero, 10), SmallFile::Absent);
            assert_eq!(read_small(Path::new("/dev/zero"), 10), SmallFile::Absent, "a device is not read");
            let fifo = std::ffi::CString::new(dir.path().join("fifo").to_str().unwrap()).unwrap();
            // SAFETY: a valid NUL-terminated path; mkfifo only creates a file.
            assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o600) }, 0);
            assert_eq!(read_small(&dir.path().join("fifo"), 10), SmallFile::Absent, "a FIFO is not waited on");
        }
    }
}
