// Types of `workspace-search/mastra`: @mastra/core/workspace's, with its
// Workspace running search natively.
export * from '@mastra/core/workspace'
import type { Workspace as MastraWorkspace, WorkspaceConfig, WorkspaceFilesystem, WorkspaceSandbox } from '@mastra/core/workspace'
import type { IndexReport, Workspace as NativeWorkspace, WorkspaceOptions } from '../../index.js'

/**
 * workspace-search's options that Mastra's config does not have (Mastra
 * ignores them; see the root entry's `WorkspaceOptions` for each): the index
 * kept between runs, the embedder's name for reusing vectors, file watching,
 * ranking by kind of file and git history, chunking, the `.gitignore`, the
 * embedder's concurrency and the embedder's and vector store's timeouts,
 * the largest file read, progress, and a reranker. Those of reading files
 * act where the native side reads them (a `LocalFilesystem`; docs/mastra.md).
 */
export type NativeSearchOptions = Omit<WorkspaceOptions, keyof WorkspaceConfig<any, any, any>>

/**
 * The options Mastra's config shares with workspace-search's, taken as the
 * native engine takes them (wider than Mastra's types): `bm25` with
 * `tokenize` (`{ preset: 'mastra' }` for Mastra's exact tokenization),
 * `vectorStore` as any store with MastraVector's methods (`LocalVector`),
 * a batch `embedder` answering `Float32Array`s.
 */
export type NativeSharedOptions = Pick<WorkspaceOptions, 'bm25' | 'vectorStore' | 'embedder'>

/** Mastra's config with workspace-search's options (see `NativeSharedOptions`, `NativeSearchOptions`). */
export type NativeWorkspaceConfig<
  TFilesystem extends WorkspaceFilesystem | undefined = WorkspaceFilesystem | undefined,
  TSandbox extends WorkspaceSandbox | undefined = WorkspaceSandbox | undefined,
  TMounts extends Record<string, WorkspaceFilesystem> | undefined = undefined,
> = Omit<WorkspaceConfig<TFilesystem, TSandbox, TMounts>, keyof NativeSharedOptions> &
  NativeSharedOptions &
  NativeSearchOptions

/**
 * Mastra's Workspace (a subclass: `new Agent({ workspace })`, tools, skills,
 * sandbox and LSP are Mastra's) whose indexing and search run in
 * workspace-search's native engine. Its instances are typed as Mastra's own
 * Workspace, so that every Mastra API that takes one takes it: its
 * `search()` takes workspace-search's options too (`group`, `pathPrefix`,
 * `fusion`), typed through `nativeWorkspace(workspace)`.
 */
export type Workspace<
  TFilesystem extends WorkspaceFilesystem | undefined = WorkspaceFilesystem | undefined,
  TSandbox extends WorkspaceSandbox | undefined = WorkspaceSandbox | undefined,
  TMounts extends Record<string, WorkspaceFilesystem> | undefined = undefined,
> = MastraWorkspace<TFilesystem, TSandbox, TMounts>

export declare const Workspace: {
  new <
    TFilesystem extends WorkspaceFilesystem | undefined = WorkspaceFilesystem | undefined,
    TSandbox extends WorkspaceSandbox | undefined = WorkspaceSandbox | undefined,
    TMounts extends Record<string, WorkspaceFilesystem> | undefined = undefined,
  >(
    config: NativeWorkspaceConfig<TFilesystem, TSandbox, TMounts>,
  ): Workspace<TFilesystem, TSandbox, TMounts>
  readonly prototype: MastraWorkspace
}

/**
 * What the last native rebuild of `workspace` (`init()`,
 * `rebuildSearchIndex()` over a LocalFilesystem) indexed, skipped and
 * failed; undefined before one, or for a workspace of another class.
 * (A function, not a member: instances keep Mastra's own type, which is
 * what lets Mastra's Agent take them.)
 */
export declare function lastIndexReport(workspace: MastraWorkspace<any, any, any>): IndexReport | undefined

/**
 * The native Workspace behind `workspace`: its `stats()` (e.g. for
 * `tenantPool`'s `memoryOf`), `save()`, `grep()`; undefined for a
 * workspace of another class. One without search configured has one for
 * grep alone (over a LocalFilesystem), whose `search()` rejects.
 */
export declare function nativeWorkspace(workspace: MastraWorkspace<any, any, any>): NativeWorkspace | undefined
