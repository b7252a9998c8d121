// Mastra's own Workspace with its search engine swapped for the native one:
// everything but search (filesystem tools, sandbox, skills, LSP,
// getToolsConfig, getInfo...) stays Mastra's. Mastra keeps its engine in a
// field (`_searchEngine`, private in its typings only); that shape is
// checked at construction, so a Mastra that keeps it otherwise fails
// loudly instead of silently searching with its own engine.
'use strict'

const { Workspace: NativeWorkspace } = require('../../index.js')
const { NativeSearchEngine, ENGINE_METHODS } = require('./engine.js')

/** The @mastra/core releases this entry is tested with. */
const SUPPORTED_MASTRA = '>=1.71.0 <2'

/**
 * The last native rebuild's report of each workspace of this entry.
 * @type {WeakMap<object, import('../../index').IndexReport>}
 */
const reports = new WeakMap()

/**
 * What the last native rebuild of `workspace` indexed, skipped and failed.
 * @param {object} workspace
 */
function lastIndexReport(workspace) {
  return reports.get(workspace)
}

/**
 * The options of the native Workspace that Mastra's config also has, and
 * ours that it does not (Mastra ignores them).
 */
const SHARED_OPTIONS = ['bm25', 'vectorStore', 'embedder', 'searchIndexName', 'autoIndexPaths']
const NATIVE_OPTIONS = ['persist', 'embedderId', 'watch', 'fileKinds', 'gitHistory']

/**
 * Mastra's WorkspaceError (code `UNSUPPORTED_MASTRA`) for a Mastra whose
 * Workspace is not shaped as this entry needs.
 * @param {any} mastra
 * @param {string} what
 * @param {string | undefined} version
 */
function unsupported(mastra, what, version) {
  const WorkspaceError = typeof mastra.WorkspaceError === 'function' ? mastra.WorkspaceError : Error
  return new WorkspaceError(
    `workspace-search/mastra supports @mastra/core ${SUPPORTED_MASTRA}; the installed @mastra/core ${version ?? '(unknown version)'} ${what}`,
    'UNSUPPORTED_MASTRA',
  )
}

/**
 * The Workspace class of this entry, over the given @mastra/core workspace
 * module (the ESM or CommonJS build, whichever the user's code loads, so
 * that `instanceof` checks in Mastra hold).
 * @param {any} mastra `@mastra/core/workspace`
 * @param {string | undefined} version `@mastra/core`'s version
 */
function createWorkspaceClass(mastra, version) {
  const MastraWorkspace = mastra.Workspace
  if (typeof MastraWorkspace !== 'function' || typeof MastraWorkspace.prototype.rebuildSearchIndex !== 'function') {
    throw unsupported(mastra, 'has no Workspace class with rebuildSearchIndex()', version)
  }

  /**
   * The basePath to scan natively: a Mastra LocalFilesystem confined to it
   * (paths relative to it, as the native scan reads them); otherwise
   * undefined, and files are read through Mastra's filesystem API.
   * @param {any} fs
   * @returns {string | undefined}
   */
  function nativeBasePath(fs) {
    if (!(fs instanceof mastra.LocalFilesystem) || fs.contained === false) return undefined
    return typeof fs.basePath === 'string' ? fs.basePath : undefined
  }

  return class Workspace extends MastraWorkspace {
    /** @type {import('../../index').Workspace | undefined} */
    #native

    /** @param {any} config Mastra's WorkspaceConfig */
    constructor(config) {
      super(config)
      const self = /** @type {any} */ (this)
      if (!Object.prototype.hasOwnProperty.call(self, '_searchEngine')) {
        throw unsupported(mastra, 'does not keep its search engine in Workspace._searchEngine', version)
      }
      const engine = self._searchEngine
      if (engine === undefined) return // no search configured: nothing to swap
      const missing = ENGINE_METHODS.filter((m) => typeof engine[m] !== 'function')
      if (missing.length > 0) throw unsupported(mastra, `has a search engine without ${missing.join(', ')}`, version)
      /** @type {Record<string, unknown>} */
      // A persisted workspace without an id of its own keeps the native one's
      // (stable across starts, so is its vector index name); Mastra's is new each time.
      const options = config.id === undefined && config.persist ? {} : { id: this.id }
      for (const key of [...SHARED_OPTIONS, ...NATIVE_OPTIONS]) if (config[key] !== undefined) options[key] = config[key]
      const basePath = nativeBasePath(self._fs)
      if (basePath !== undefined) options.filesystem = { basePath }
      this.#native = new NativeWorkspace(/** @type {any} */ (options))
      self._searchEngine = new NativeSearchEngine(this.#native)
    }

    /**
     * Mastra's rebuild, with files scanned, read, chunked and indexed
     * natively when the filesystem is a contained LocalFilesystem (else
     * read through Mastra's filesystem API and indexed natively).
     * @param {string[]} [paths]
     * @returns {Promise<void>}
     */
    async rebuildSearchIndex(paths) {
      const self = /** @type {any} */ (this)
      const wanted = paths ?? self._config.autoIndexPaths ?? []
      if (this.#native === undefined || nativeBasePath(self._fs) === undefined) return super.rebuildSearchIndex(wanted)
      self.assertSearchWritable()
      if (wanted.length === 0) return
      reports.set(this, await this.#native.rebuildSearchIndex(wanted))
    }

    /**
     * The native workspace first (it saves a persisted index and releases
     * it), then Mastra's teardown: Mastra clears its search engine there,
     * which must not reach a persisted index as a write.
     */
    async destroy() {
      try {
        await this.#native?.destroy()
      } finally {
        await super.destroy()
      }
    }
  }
}

module.exports = { createWorkspaceClass, lastIndexReport, SUPPORTED_MASTRA }
