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
mod text;
mod types;
mod workspace;

use napi::bindgen_prelude::*;
use napi_derive::napi;

/// mimalloc: faster for the many small allocations of tokenizing and
/// indexing, and it gives freed memory back to the system after a build.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// `mi_option_purge_delay` in the mimalloc v3 that libmimalloc-sys builds
/// (its bindings name only the v2 options).
const MI_OPTION_PURGE_DELAY: libmimalloc_sys::mi_option_t = 15;

/// Runs runtime.js, exports its error classes in place of the placeholder
/// classes declared in errors.rs, and keeps its helpers for the binding.
#[napi(module_exports)]
pub fn module_exports(mut exports: Object, env: Env) -> Result<()> {
    // Freed pages are given back to the system after 1 s rather than 10 ms:
    // a build frees and allocates hundreds of MB in turn, and each page given
    // back too early came back zeroed by the kernel (a quarter of the CPU
    // time of init() over 50,000 files). mi_collect still gives everything
    // back at the end of a build (engine.rs).
    // SAFETY: sets a global mimalloc option; any value is valid.
    unsafe { libmimalloc_sys::mi_option_set(MI_OPTION_PURGE_DELAY, 1000) };
    let runtime: Object = env.run_script(include_str!("runtime.js"))?;
    js::set_runtime(&runtime)?;
    for name in ["WorkspaceError", "SearchNotAvailableError", "WorkspaceNotReadyError"] {
        let class: Unknown = runtime.get_named_property(name)?;
        exports.set_named_property(name, class)?;
    }
    let tools: Unknown = env.run_script(include_str!("tools.js"))?;
    exports.set_named_property("createWorkspaceTools", tools)?;
    Ok(())
}

/// The agent tools of a workspace, named, described and shaped as
/// Mastra's: `mastra_workspace_search` (when search is configured) and
/// `mastra_workspace_index` (unless the filesystem is read-only). They work
/// as tools of a Mastra `Agent` and of the AI SDK's `generateText`.
/// Implemented in src/tools.js, which replaces this declaration on load.
#[napi(ts_args_type = "workspace: Workspace", ts_return_type = "WorkspaceTools")]
pub fn create_workspace_tools() -> Result<()> {
    Err(Error::from_reason("createWorkspaceTools is provided by src/tools.js"))
}
