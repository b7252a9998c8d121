//! The `.gitattributes` at a workspace's root, for the linguist rules over
//! file kinds (`index::kind::KindRules`). Read as `small_file` reads: a
//! regular file only (a link, FIFO or device is passed over without
//! blocking), at most 1 MiB.

use super::small_file::{read_small, SmallFile};
use crate::index::kind::KindRules;
use std::path::Path;

const MAX_BYTES: u64 = 1 << 20;

/// The rules of `root/.gitattributes` (`None` when there is no such
/// regular file, or it names no linguist attribute), and why some or all
/// of its rules are not applied, for the report.
pub fn read_kind_rules(root: &Path) -> (Option<KindRules>, Option<String>) {
    let text = match read_small(&root.join(".gitattributes"), MAX_BYTES) {
        SmallFile::Text(text) => text,
        SmallFile::TooLarge(size) => {
            return (None, Some(format!("its linguist rules are not applied: {size} bytes, over {MAX_BYTES}")))
        }
        _ => return (None, None),
    };
    let rules = KindRules::parse(&text);
    let why = (rules.dropped > 0).then(|| {
        format!(
            "{} linguist rules are not applied (past the first {}, or too large a set of globs)",
            rules.dropped,
            crate::index::kind::MAX_RULES
        )
    });
    ((!rules.is_empty()).then_some(rules), why)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_regular_file_only() {
        let dir = tempfile::tempdir().unwrap();
        assert!(read_kind_rules(dir.path()).0.is_none());
        std::fs::write(dir.path().join(".gitattributes"), "*.txt text\n").unwrap();
        assert!(read_kind_rules(dir.path()).0.is_none(), "no linguist attribute");
        std::fs::write(dir.path().join(".gitattributes"), "gen/** linguist-generated\n").unwrap();
        assert_eq!(read_kind_rules(dir.path()).0.unwrap().kind("gen/a.rs"), crate::index::kind::FileKind::Generated);
        std::fs::write(dir.path().join(".gitattributes"), "x".repeat(MAX_BYTES as usize + 1)).unwrap();
        assert_eq!(
            read_kind_rules(dir.path()).1.unwrap(),
            format!("its linguist rules are not applied: {} bytes, over {MAX_BYTES}", MAX_BYTES + 1)
        );
        #[cfg(unix)]
        {
            std::fs::remove_file(dir.path().join(".gitattributes")).unwrap();
            let fifo = std::ffi::CString::new(dir.path().join(".gitattributes").to_str().unwrap()).unwrap();
            // SAFETY: a valid NUL-terminated path; mkfifo only creates a file.
            assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o600) }, 0);
            assert!(read_kind_rules(dir.path()).0.is_none(), "a FIFO is passed over, not waited on");
        }
    }
}
