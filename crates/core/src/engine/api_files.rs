//! Files whose ids an API write names (`index()`, `indexMany()`,
//! `unindex()`): the write holds until the file changes after it. A file
//! written, then `index()`ed under its id, gave an event the watcher
//! applied after the write (its burst ends 200 ms later), and re-read the
//! file over the document the API gave; a file removed, then `index()`ed,
//! lost that document to the burst. The next `init()` did the same.
//! (Not a chunked file's id, nor before the snapshot is loaded: as before.)

use super::{blocking, error::Result, Engine};
use crate::persist::files::FileRecord;
use std::sync::Arc;

impl Engine {
    /// In the write's turn, once it applied: each of `ids` that names a
    /// file the file table records is recorded as the file is now, so that
    /// a burst or an `init()` that finds it so leaves the API's document
    /// (a change after it is a new stamp and hash: read again). A file that
    /// is gone is forgotten: its removal happened before the write.
    pub(super) async fn settle_written_files(self: &Arc<Self>, ids: Vec<String>) -> Result<()> {
        let (Some(base), Some(p)) = (self.base_path.clone(), self.persist.as_ref()) else { return Ok(()) };
        let known: Vec<String> = {
            let state = p.state.lock();
            if !state.loaded {
                return Ok(()); // the snapshot's records come later: they stand
            }
            ids.into_iter().filter(|id| state.files.get(id).is_some()).collect()
        };
        if known.is_empty() {
            return Ok(());
        }
        let me = self.clone();
        blocking(move || {
            // Not a chunked file: the write replaced the document of its id,
            // not its chunks, which only a read of the file replaces.
            let known: Vec<String> = {
                let index = me.index.read();
                known.into_iter().filter(|id| index.chunk_ids_of(id).is_empty()).collect()
            };
            let id_base = me.id_base();
            let canonical: Arc<std::path::Path> = base.canonicalize().unwrap_or_else(|_| base.clone()).into();
            let now: Vec<(String, std::path::PathBuf, Option<FileRecord>, bool)> = known
                .into_iter()
                .map(|id| {
                    let path = base.join(&*id_base.relative(&id));
                    let meta = std::fs::symlink_metadata(&path);
                    let link = meta.as_ref().is_ok_and(|m| m.file_type().is_symlink());
                    let read = crate::ingest::stamp_and_hash(&path, link, canonical.clone(), me.max_file_size);
                    let record = read.map(|(stamp, hash)| FileRecord { stamp, hash });
                    (id, path, record, meta.is_err())
                })
                .collect();
            let mut state = me.persist.as_ref().expect("persist").state.lock();
            for (id, path, record, gone) in now {
                match record {
                    Some(record) => state.files.set(&id, record),
                    // Not text now (binary, too large): its next read says so.
                    None if !gone => {}
                    None => {
                        state.files.remove(&id);
                        state.located.forget(&path, &id);
                    }
                }
            }
        })
        .await
    }
}
