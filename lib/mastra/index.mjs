// `import ... from 'workspace-search/mastra'`: everything @mastra/core/workspace
// exports (the names below; __test__/mastra.test.mjs checks they are all of
// them), with its Workspace running search natively, lastIndexReport and nativeWorkspace.
import { createRequire } from 'node:module'

const require = createRequire(import.meta.url)
const { createWorkspaceClass, lastIndexReport, nativeWorkspace } = require('./workspace.js')

/** @returns {Promise<any>} */
async function importMastra() {
  try {
    return await import('@mastra/core/workspace')
  } catch (err) {
    const e = /** @type {NodeJS.ErrnoException} */ (err)
    if (e.code === 'ERR_MODULE_NOT_FOUND' && String(e.message).includes('@mastra/core')) {
      throw new Error('workspace-search/mastra needs @mastra/core (>=1.71.0 <2), an optional peer dependency: npm install @mastra/core', { cause: err })
    }
    throw err
  }
}

const mastra = await importMastra()
const version = require('@mastra/core/package.json').version

export const Workspace = createWorkspaceClass(mastra, version)
export { lastIndexReport, nativeWorkspace }
export const {
  CompositeFilesystem, CompositeVersionedSkillSource, DirectoryNotEmptyError,
  DirectoryNotFoundError, FileExistsError, FileNotFoundError, FileReadRequiredError,
  FilesystemError, FilesystemNotAvailableError, FilesystemNotMountableError,
  FilesystemNotReadyError, IsDirectoryError, IsolationUnavailableError, LocalFilesystem,
  LocalSandbox, LocalSkillSource, MAX_SANDBOX_FILE_MODE, MastraFilesystem, MastraSandbox,
  MountError, MountManager, MountNotSupportedError, NotDirectoryError, PermissionError,
  ProcessHandle, SandboxAbortError, SandboxError, SandboxExecutionError,
  SandboxFeatureNotSupportedError, SandboxNotAvailableError, SandboxNotReadyError,
  SandboxProcessManager, SandboxTimeoutError, SandboxUnsupportedFeatureError,
  SearchNotAvailableError, StaleFileError, UnsupportedGrepPatternError, UnsupportedStdinCloseError,
  VersionedSkillSource, WORKSPACE_TOOLS, WORKSPACE_TOOLS_PREFIX, WorkspaceError,
  WorkspaceNotAvailableError, WorkspaceNotReadyError, WorkspaceReadOnlyError,
  assertModesUnsupported, callLifecycle, collectSkillForPublish, createGlobMatcher,
  createSkillTools, createWorkspaceTools, deleteFileTool, detectIsolation, editFileTool,
  executeCommandTool, extractGlobBase, fileStatTool, formatSkillActivation,
  getRecommendedIsolation, indexContentTool, isGlobPattern, isIsolationAvailable, listFilesTool,
  matchGlob, mkdirTool, publishSkillFromSource, readFileTool, requireFilesystem, requireSandbox,
  requireWorkspace, resolveToolConfig, searchTool, supportsComputer, supportsNetworking,
  validateSandboxFileMode, writeFileTool,
} = mastra
