//! Node.js binding of workspace-search: JavaScript conversions, the
//! `#[napi]` classes and async orchestration. Every algorithm lives in
//! `crates/core`.

mod embedder;
mod engine;
mod errors;
mod filesystem;
mod js;
mod local_vector;
mod options;
mod shape;
mod store;
mod types;
mod workspace;

use napi::bindgen_prelude::*;
use napi_derive::napi;

/// Runs runtime.js, exports its error classes in place of the placeholder
/// classes declared in errors.rs, and keeps its helpers for the binding.
#[napi(module_exports)]
pub fn module_exports(mut exports: Object, env: Env) -> Result<()> {
    let runtime: Object = env.run_script(include_str!("runtime.js"))?;
    js::set_runtime(&runtime)?;
    for name in ["WorkspaceError", "SearchNotAvailableError", "WorkspaceNotReadyError"] {
        let class: Unknown = runtime.get_named_property(name)?;
        exports.set_named_property(name, class)?;
    }
    Ok(())
}
