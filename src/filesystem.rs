//! `LocalFilesystem`: where auto-indexing reads files.

use crate::js::*;
use napi::bindgen_prelude::*;
use napi_derive::napi;

/// A folder on the local disk. `basePath` is resolved against the current
/// directory, as Mastra's `LocalFilesystem` does; nothing outside it is read.
#[napi]
pub struct LocalFilesystem {
    base_path: String,
    read_only: bool,
}

#[napi]
impl LocalFilesystem {
    #[napi(constructor, ts_args_type = "options: LocalFilesystemOptions")]
    pub fn new(env: Env, options: Unknown) -> Result<Self> {
        guard(|| Self::parse(&options).map_err(|f| f.throw(&env)))
    }

    fn parse(options: &Unknown) -> Checked<Self> {
        let o = to_object(options, "LocalFilesystem options")?;
        let base = match prop(&o, "basePath")? {
            Some(v) => to_string(&v, "basePath")?,
            None => return Err(Fail::Type("LocalFilesystem needs a basePath".into())),
        };
        if base.is_empty() {
            return Err(Fail::Type("basePath must be a non-empty string".into()));
        }
        let read_only = match prop(&o, "readOnly")? {
            Some(v) => to_bool(&v, "readOnly")?,
            None => false,
        };
        let abs = workspace_search_core::ingest::scan::resolve_from_cwd(&base)
            .map_err(|e| Fail::Plain(format!("cannot read the current directory: {e}")))?;
        Ok(LocalFilesystem { base_path: abs.to_string_lossy().into_owned(), read_only })
    }

    pub(crate) fn from_parts(base_path: String, read_only: bool) -> Self {
        LocalFilesystem { base_path, read_only }
    }

    /// The absolute folder path.
    #[napi(getter)]
    pub fn base_path(&self) -> String {
        self.base_path.clone()
    }

    #[napi(getter)]
    pub fn read_only(&self) -> bool {
        self.read_only
    }
}
