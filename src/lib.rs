//! Node.js binding of workspace-search: `#[napi]` classes, conversions of
//! JavaScript values, and adapters that implement core's host traits over
//! the user's JavaScript (embedder, vector store, tokenizer, reranker,
//! progress) and over `notify` (file and folder watches). Core's engine
//! (`crates/core/src/engine`) drives every flow and makes every decision;
//! the public JavaScript (errors, tools, result shaping) lives in `lib/`.

#![deny(clippy::undocumented_unsafe_blocks)]

mod construct;
mod embedder;
mod env_cleanup;
mod error;
mod filesystem;
mod grep;
mod host;
mod js;
mod local_vector;
mod options;
mod promise;
mod reranker;
mod shape;
mod snapshot_store;
mod store;
mod text;
mod types;
mod watch;
mod workspace;

use napi::bindgen_prelude::*;
use napi_derive::napi;

/// mimalloc: faster for the many small allocations of tokenizing and
/// indexing, and it gives freed memory back to the system after a build.
/// It serves this addon's own allocations only (statically linked); the
/// host's allocator and process settings are left alone. Built with
/// local-dynamic TLS (Cargo.toml): mimalloc's default, initial-exec, takes
/// part of the small static TLS reserve glibc keeps for libraries loaded
/// after start, and a native module loaded after this one could then fail
/// to load (__test__/hardening.test.mjs loads four copies). Built without
/// transparent huge pages (`no_thp`, Cargo.toml: mimalloc then never asks
/// the kernel for them with `madvise`; the process's own THP setting is
/// left as it is): on a system where THP is `madvise` (the common default),
/// each 2 MiB page mimalloc touched first was zeroed whole by the kernel,
/// which was about a fifth of the CPU time of `init()` over 50,000 files
/// (docs/ranking.md, docs/benchmarks.md).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// `mi_option_purge_delay` of the mimalloc v3 that libmimalloc-sys builds
/// (its position in `mi_option_e`, mimalloc.h; the crate's bindings name
/// only the v2 options).
const MI_OPTION_PURGE_DELAY: libmimalloc_sys::mi_option_t = 15;

/// Sets this addon's allocator options when the module loads.
#[napi(module_exports)]
pub fn module_exports(_exports: Object, _env: Env) -> Result<()> {
    // Freed pages are given back to the system after 1 s rather than 10 ms:
    // a build frees and allocates hundreds of MB in turn, and each page given
    // back too early came back zeroed by the kernel (a quarter of the CPU
    // time of init() over 50,000 files). mi_collect still gives everything
    // back at the end of a build (`release_memory`).
    // SAFETY: sets an option of this addon's own mimalloc; any value is valid.
    unsafe { libmimalloc_sys::mi_option_set(MI_OPTION_PURGE_DELAY, 1000) };
    Ok(())
}

/// Gives the memory that a bulk build freed back to the system: mimalloc
/// keeps freed pages for reuse by each thread that used them (core's
/// engine calls it after a build).
fn release_memory() {
    // SAFETY: mi_collect only returns this allocator's free pages.
    rayon::broadcast(|_| unsafe { libmimalloc_sys::mi_collect(true) });
    // SAFETY: as above, on this thread.
    unsafe { libmimalloc_sys::mi_collect(true) };
}

/// Hands the addon the JavaScript it calls back into (lib/runtime.js):
/// error classes, the result builder and input checks. index.js calls it
/// once per load; it is not part of the public API.
#[napi(js_name = "__initRuntime", skip_typescript)]
pub fn init_runtime(runtime: Object) -> Result<()> {
    js::set_runtime(&runtime)
}

/// Panics inside `guard` as the tests trigger them: a thrown error, not an
/// abort (the guard every synchronous entry point runs its body in).
#[napi(js_name = "__panicForTest", skip_typescript)]
pub fn panic_for_test() -> Result<()> {
    js::guard(|| panic!("a panic raised on purpose by a test"))
}

/// The entries of `paths` that a scan of `basePath` refuses whatever files
/// there are (out of basePath, by their text or through a link; a glob
/// that does not compile), each as `[path, reason]` with the reason
/// `report.skipped` gives: the command line checks its `--glob`s with it
/// before it indexes. Not part of the public API.
#[napi(js_name = "__refusedPaths", skip_typescript)]
pub fn refused_paths(base_path: String, paths: Vec<String>) -> Result<Vec<Vec<String>>> {
    use workspace_search_core::ingest::scan::{refused_entries, resolve_from_cwd};
    js::guard(|| {
        let base = resolve_from_cwd(&base_path).map_err(|e| Error::from_reason(format!("basePath: {e}")))?;
        let refused = refused_entries(&base, &paths);
        Ok(refused.into_iter().map(|s| vec![s.path, s.reason.to_string()]).collect())
    })
}

/// The kind of file a path names, as BM25 weighs it (`fileKinds`):
/// `'source'`, `'test'`, `'docs'`, `'config'` or `'generated'` (the path
/// read as the scan reads it: `x/../docs/a.ts` is `docs/a.ts`).
#[napi(js_name = "fileKind", ts_args_type = "path: string", ts_return_type = "string")]
pub fn file_kind(env: Env, path: Unknown) -> Result<&'static str> {
    use workspace_search_core::index::kind::{kind_of, FileKind};
    js::guard(|| {
        let path = match js::to_string(&path, "path") {
            Ok(p) => p,
            Err(fail) => return Err(fail.throw(&env)),
        };
        Ok(match kind_of(&path) {
            FileKind::Source => "source",
            FileKind::Test => "test",
            FileKind::Doc => "docs",
            FileKind::Config => "config",
            FileKind::Generated => "generated",
        })
    })
}
