// Mastra's own Workspace with its search engine swapped for the native one:
// everything but search (filesystem tools, sandbox, skills, LSP,
// getToolsConfig, getInfo...) stays Mastra's. Mastra keeps its engine in a
// field (`_searchEngine`, private in its typings only); that shape is
// checked at construction, so a Mastra that keeps it otherwise fails
// loudly instead of silently searching with its own engine.
'use strict'

const { Workspace: NativeWorkspace, WorkspaceError: NativeWorkspaceError, UnsupportedGrepPatternError: NativeUnsupported } = require('../../index.js')
const { NativeSearchEngine, ENGINE_METHODS, SKILL_PREFIXES } = require('./engine.js')
const { toMastraError } = require('./errors.js')
const { describe } = require('../describe.js')

/** The @mastra/core releases this entry is tested with. */
const SUPPORTED_MASTRA = '>=1.71.0 <2'

/** The native workspace behind each workspace of this entry. */
const { natives } = require('../natives.js')
const nodeFs = require('node:fs')
const nodePath = require('node:path')
const os = require('node:os')

/**
 * The native Workspace behind `workspace` (its `stats()`, `save()`,
 * `grep()`...), undefined for a workspace of another class (one without
 * search has one for grep alone, over a LocalFilesystem).
 * @param {object} workspace
 */
function nativeWorkspace(workspace) {
  return natives.get(workspace)
}

/**
 * The last native rebuild's report of each workspace of this entry.
 * @type {WeakMap<object, import('../../index').IndexReport>}
 */
const reports = new WeakMap()

/**
 * The caller's `topK` and `minScore`, checked as the native search() checks
 * them: Mastra adds to `topK` before its engine sees it (the skills it keeps
 * apart, `Math.max(topK, skills)` in skills.search), which turned `-1` or
 * `1.5` into a valid engine value.
 * @param {any} options
 */
function checkCallerNumbers(options) {
  if (options === null || typeof options !== 'object') return
  const number = (/** @type {string} */ name, /** @type {unknown} */ value) => {
    if (typeof value !== 'number') throw new TypeError(`${name} must be a number, got ${describe(value)}`)
    if (!Number.isFinite(value)) throw new RangeError(`${name} must be a finite number, got ${describe(value)}`)
    return value
  }
  if (options.topK !== undefined) {
    const k = number('topK', options.topK)
    if (!Number.isInteger(k) || k < 0) throw new RangeError(`topK must be an integer >= 0, got ${k}`)
  }
  if (options.minScore !== undefined) {
    const m = number('minScore', options.minScore)
    if (m < 0 || m > 1) throw new RangeError(`minScore must be between 0 and 1, got ${m}`)
  }
}

/** Skills objects whose search checks the caller's numbers (`get skills`). */
const checkedSkills = new WeakSet()

/**
 * `skills` (Mastra's), its `search` checking the caller's numbers first,
 * and so the skills `getScoped` gives (the `skill_search` tool asks for
 * those: with a filesystem resolver they are other objects).
 * @param {any} skills
 */
function checkSkills(skills) {
  if (skills === null || typeof skills !== 'object' || checkedSkills.has(skills)) return skills
  checkedSkills.add(skills)
  if (typeof skills.search === 'function') {
    const search = skills.search.bind(skills)
    skills.search = async (/** @type {string} */ query, /** @type {any} */ options) => {
      checkCallerNumbers(options)
      return search(query, options)
    }
  }
  if (typeof skills.getScoped === 'function') {
    const getScoped = skills.getScoped.bind(skills)
    skills.getScoped = async (/** @type {any[]} */ ...args) => checkSkills(await getScoped(...args))
  }
  return skills
}

/**
 * What the last native rebuild of `workspace` indexed, skipped and failed.
 * @param {object} workspace
 */
function lastIndexReport(workspace) {
  return reports.get(workspace)
}

/**
 * The options of the native Workspace that Mastra's config also has, and
 * ours that it does not (Mastra ignores them): every one of ours but `id`
 * and `filesystem`, which come from Mastra's workspace.
 */
const SHARED_OPTIONS = ['bm25', 'vectorStore', 'embedder', 'searchIndexName', 'autoIndexPaths']
const NATIVE_ONLY_OPTIONS = [
  'persist',
  'embedderId',
  'watch',
  'fileKinds',
  'gitHistory',
  'chunking',
  'respectGitignore',
  'embedConcurrency',
  'embedTimeoutMs',
  'vectorStoreTimeoutMs',
  'maxFileSize',
  'onProgress',
  'rerank',
  'rerankDepth',
  'rerankTimeoutMs',
]
/** What Mastra's config passes on to the native workspace. */
const FORWARDED_OPTIONS = [...SHARED_OPTIONS, ...NATIVE_ONLY_OPTIONS]

/** Above this, context is left to Mastra's walk (the native answer copies context per match). */
const MAX_NATIVE_CONTEXT = 10000

/**
 * The `grep(options)` capability of Mastra's `WorkspaceFilesystem`
 * (`FilesystemGrepOptions` -> `FilesystemGrepResult[]`), run by the native
 * workspace over the same folder. Mastra's grep tool formats the answer
 * itself and filters it again (root .gitignore, hidden names, text
 * extensions, its glob); every match is returned so that its 1,000-match cap
 * falls where its own walk puts it. Whatever the native side cannot answer
 * exactly (a pattern it cannot match as JavaScript does, a file it cannot
 * read, which Mastra's summary counts) throws, and the tool falls back to
 * its JavaScript walk, so its output stays Mastra's own. Mastra prints the
 * answer without matching again, so each native match is checked with the
 * RegExp Mastra compiles (the line matches, at that column): a disagreement
 * falls back too.
 * @param {any} mastra `@mastra/core/workspace`
 * @param {import('../../index').Workspace} native
 * @param {any} fs the LocalFilesystem
 */
function nativeGrep(mastra, native, fs) {
  /** Whether basePath has a .gitignore (Mastra's grep tool reads that one). */
  const rootGitignore = (/** @type {any} */ fs) => typeof fs.basePath === 'string' && nodeFs.existsSync(nodePath.join(fs.basePath, '.gitignore'))
  /** @param {any} options */
  return async function grep(options) {
    const { pattern, caseSensitive = true, includeHidden = false, maxCountPerFile, contextLines = 0 } = options
    // As the native side reads a path (every leading `./`, trailing `/`):
    // the prefix cut from its answer below must be the one it put there.
    const root = String(options.path ?? '.').replace(/^(\.\/)+/, '').replace(/\/+$/, '')
    const folder = root === '.' ? '' : root
    // Mastra joins '' and a path as '/path', which its walk reads outside the base.
    if (options.path === '') throw new mastra.UnsupportedGrepPatternError(pattern, "the path ''")
    // Mastra's walk names the files of `src/../src` or of an absolute path in its own way: its walk answers those.
    // So do `src//` and `dist/.` under a root .gitignore: Mastra tests such spellings against its rules as written.
    const spelled = String(options.path ?? '.').replace(/^(\.\/)+/, '')
    const oddly = spelled !== '.' && /\/\/|(^|\/)\.(\/|$)/.test(spelled) && rootGitignore(fs)
    if (root.startsWith('/') || root.split('/').includes('..') || oddly) {
      throw new mastra.UnsupportedGrepPatternError(pattern, `the path ${root}`)
    }
    if (contextLines > MAX_NATIVE_CONTEXT) throw new mastra.UnsupportedGrepPatternError(pattern, 'contextLines above 10000')
    const extra = fs._textExtensions instanceof Set && fs._textExtensions.size > 0
    let files
    try {
      files = await native.grep(pattern, {
        path: folder || '.',
        caseSensitive,
        includeHidden,
        // Mastra's walk stops a file once its count reaches maxCount.
        maxCount: Number.isFinite(maxCountPerFile) ? Math.max(1, Math.ceil(maxCountPerFile)) : undefined,
        contextLines: Math.max(0, Math.floor(contextLines)),
        // Mastra joins context lines by number: each one once is enough.
        contextOnce: true,
        // Extra text extensions of the filesystem: every file; the tool filters.
        allFiles: extra,
        strict: true,
      })
    } catch (err) {
      if (err instanceof NativeUnsupported) throw new mastra.UnsupportedGrepPatternError(pattern, /** @type {Error} */ (err).message)
      throw err
    }
    const regex = new RegExp(pattern, caseSensitive ? 'g' : 'gi')
    for (const f of files) {
      for (const m of f.matches) {
        regex.lastIndex = 0
        const found = regex.exec(m.text)
        if (found === null || found.index !== m.column) {
          throw new mastra.UnsupportedGrepPatternError(pattern, `the native match at ${f.path}:${m.line}:${m.column + 1} is not JavaScript's`)
        }
      }
    }
    if (contextLines > 0) wholeAfterPastCap(files, Math.floor(contextLines))
    const cut = folder ? folder.length + 1 : 0
    return files.map((f) => ({ path: f.path.slice(cut), matches: f.matches }))
  }
}

/** Mastra's grep tool's cap on matches (`maxTotalMatches`). */
const MASTRA_MAX_MATCHES = 1000

/**
 * With `contextOnce` a match's `after` stops before the next match's line.
 * Mastra's tool stops at its 1,000th match (counted after its own filters,
 * so at the 1,000th native match or later), and the context after that last
 * match is printed from its `after` alone: from there on, each `after` is
 * made whole again (`contextLines` lines, matching ones too, as Mastra's walk
 * gives them) from the lines the following matches carry.
 * @param {Array<{ matches: Array<{ line: number, text: string, before?: string[], after?: string[] }> }>} files
 * @param {number} contextLines
 */
function wholeAfterPastCap(files, contextLines) {
  let seen = 0
  for (const { matches } of files) {
    for (const [k, m] of matches.entries()) {
      if (++seen < MASTRA_MAX_MATCHES || m.after === undefined || m.after.length >= contextLines) continue
      /** @type {Map<number, string>} */
      const known = new Map()
      for (let j = k + 1; j < matches.length && matches[j].line - (matches[j].before?.length ?? 0) <= m.line + contextLines; j++) {
        const next = matches[j]
        const before = next.before ?? []
        before.forEach((text, i) => known.set(next.line - before.length + i, text))
        known.set(next.line, next.text)
        next.after?.forEach((text, i) => known.set(next.line + 1 + i, text))
      }
      const after = [...m.after]
      for (let line = m.line + 1 + after.length; line <= m.line + contextLines && known.has(line); line++) after.push(/** @type {string} */ (known.get(line)))
      m.after = after
    }
  }
}

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

  /**
   * Whether an entry of `paths` names a place outside basePath that the
   * filesystem's `allowedPaths` let Mastra read: the native scan reads
   * inside basePath only, so such a rebuild takes Mastra's walk (the files
   * it finds are still indexed natively).
   * @param {any} fs a LocalFilesystem
   * @param {string[]} paths
   */
  function readsAllowedPaths(fs, paths) {
    const allowed = Array.isArray(fs.allowedPaths) ? fs.allowedPaths : []
    if (allowed.length === 0) return false
    const within = (/** @type {string} */ p, /** @type {string} */ root) => p === root || p.startsWith(root.endsWith(nodePath.sep) ? root : root + nodePath.sep)
    return paths.some((entry) => {
      // A glob's fixed folders (`../skills` of `../skills/**/*.md`); `~` as Mastra expands it.
      const cut = entry.search(/[*?[\]{}]/)
      const fixed = (cut === -1 ? entry : entry.slice(0, cut)).replace(/^~(?=$|\/)/, os.homedir())
      const at = nodePath.isAbsolute(fixed) ? nodePath.normalize(fixed) : nodePath.resolve(fs.basePath, fixed)
      return !within(at, nodePath.resolve(fs.basePath)) && allowed.some((/** @type {string} */ root) => within(at, root))
    })
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
      const basePath = nativeBasePath(self._fs)
      if (engine === undefined) {
        // No search configured: a native workspace for grep alone.
        // (Mastra takes an empty id; ours then names itself.)
        if (basePath !== undefined) {
          const native = new NativeWorkspace({ ...(this.id === '' ? {} : { id: this.id }), filesystem: { basePath } })
          natives.set(this, native) // (its stats(), for tenantPool's memoryOf)
          this.#grepNative = native // (destroyed with the workspace, grep installed or not)
          this.#installGrep(native)
        }
        return
      }
      const missing = ENGINE_METHODS.filter((m) => typeof engine[m] !== 'function')
      if (missing.length > 0) throw unsupported(mastra, `has a search engine without ${missing.join(', ')}`, version)
      /** @type {Record<string, unknown>} */
      // A persisted workspace without an id of its own keeps the native one's
      // (stable across starts, so is its vector index name); Mastra's is new each time.
      // An empty id (Mastra takes it) is left to the native workspace too.
      const options = this.id === '' || (config.id === undefined && config.persist) ? {} : { id: this.id }
      for (const key of FORWARDED_OPTIONS) if (config[key] !== undefined) options[key] = config[key]
      if (basePath !== undefined) options.filesystem = { basePath }
      const autoIndexPaths = Array.isArray(config.autoIndexPaths) ? config.autoIndexPaths : []
      // Mastra's walk reads the files (through its filesystem API) when the
      // native scan cannot: the native init() then only loads the snapshot.
      const walksNatively = basePath !== undefined && !readsAllowedPaths(self._fs, autoIndexPaths)
      if (!walksNatively) delete options.autoIndexPaths
      // Mastra's init() reaches the native workspace only through a native
      // rebuild of a non-empty autoIndexPaths: otherwise init() loads a
      // persisted index first (see init()).
      this.#persisted = Boolean(config.persist)
      this.#hasSkills = Boolean(config.skills)
      this.#loadsAtInit = this.#persisted && !(walksNatively && autoIndexPaths.length > 0)
      if (config.watch && !walksNatively) {
        // (Files reach the index through Mastra's filesystem API here: no folder of ours to watch.)
        const why = basePath === undefined ? 'watch needs a contained LocalFilesystem' : 'watch follows files the native scan reads, and autoIndexPaths reaches outside basePath (allowedPaths), so Mastra reads them all'
        process.emitWarning(`workspace-search/mastra: ${why}; files are not followed`, { code: 'WORKSPACE_SEARCH_WATCH_IGNORED' })
      }
      try {
        this.#native = new NativeWorkspace(/** @type {any} */ (options))
      } catch (err) {
        // (Its id is not known before it is made: a configuration error is its own.)
        const id = err instanceof NativeWorkspaceError && err.code === 'INVALID_SEARCH_CONFIG' ? err.workspaceId : undefined
        throw toMastraError(mastra, id)(err)
      }
      natives.set(this, this.#native)
      this.#translate = toMastraError(mastra, this.#native.id)
      self._searchEngine = new NativeSearchEngine(this.#native, this.#translate)
      if (basePath !== undefined) this.#installGrep(this.#native)
    }

    /** @type {{ fs: any, grep: Function } | undefined} */
    #grep

    /** init() loads the persisted index before Mastra's init(). */
    #loadsAtInit = false

    /** The native index is persisted (`persist`). */
    #persisted = false

    /** Mastra's skills are configured (`skills`): it indexes their documents. */
    #hasSkills = false

    /**
     * Mastra's init(), after the native workspace's own where it must load
     * a persisted index: without `autoIndexPaths` (an agent that indexes
     * through the index tool, skills alone) or with files read through
     * Mastra's API (mounts, `contained: false`, `allowedPaths`), Mastra's
     * init() never reached it, so nothing was loaded or saved, and Mastra's
     * rebuild was refused as not ready (its error swallowed by Mastra).
     * The skills' documents the snapshot holds are dropped: Mastra indexes
     * the skills again as it finds them (one deleted since stayed found).
     */
    async init() {
      const native = this.#native
      if (this.#loadsAtInit && native !== undefined && native.status === 'pending') {
        await native.init().catch((err) => {
          throw this.#translate(err)
        })
      }
      await super.init()
      if (this.#persisted && this.#hasSkills && native !== undefined && !(/** @type {any} */ (this)._searchEngine.skillsIndexed)) {
        // Both sent at once: a skill Mastra indexes meanwhile lands after them.
        await Promise.all(SKILL_PREFIXES.map((prefix) => native.removeByPrefix(prefix))).catch((err) => {
          throw this.#translate(err)
        })
      }
    }

    /**
     * Mastra's search, with the caller's `topK` and `minScore` checked
     * first (`checkCallerNumbers`).
     * @param {string} query
     * @param {any} [options]
     */
    async search(query, options) {
      checkCallerNumbers(options)
      return super.search(query, options)
    }

    /** Mastra's skills, whose search checks the caller's numbers first. */
    get skills() {
      return checkSkills(super.skills)
    }

    /** This workspace's own errors as Mastra's classes (errors.js). @type {(err: unknown) => unknown} */
    #translate = (err) => err

    /**
     * Gives the workspace's LocalFilesystem Mastra's optional `grep()`
     * capability (an own, non-enumerable property), run natively, unless it
     * has one already; `destroy()` takes it back.
     * @param {import('../../index').Workspace} native
     */
    #installGrep(native) {
      const fs = /** @type {any} */ (this)._fs
      if (fs.grep !== undefined) return
      this.#grepNative = native
      const grep = nativeGrep(mastra, native, fs)
      Object.defineProperty(fs, 'grep', { value: grep, configurable: true, writable: true, enumerable: false })
      this.#grep = { fs, grep }
    }

    /** The native workspace behind grep when there is no search (else #native). @type {import('../../index').Workspace | undefined} */
    #grepNative

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
      if (this.#native === undefined || nativeBasePath(self._fs) === undefined || readsAllowedPaths(self._fs, wanted)) {
        return super.rebuildSearchIndex(wanted)
      }
      self.assertSearchWritable()
      if (wanted.length === 0) return
      reports.set(this, await this.#native.rebuildSearchIndex(wanted).catch((err) => {
        throw this.#translate(err)
      }))
    }

    /**
     * The native workspace first (it saves a persisted index and releases
     * it), then Mastra's teardown: Mastra clears its search engine there,
     * which must not reach a persisted index as a write.
     */
    async destroy() {
      try {
        if (this.#grep && this.#grep.fs.grep === this.#grep.grep) delete this.#grep.fs.grep
        if (this.#grepNative !== this.#native) await this.#grepNative?.destroy()
        await this.#native?.destroy()
      } finally {
        await super.destroy()
      }
    }
  }
}

module.exports = { createWorkspaceClass, lastIndexReport, nativeWorkspace, SUPPORTED_MASTRA, FORWARDED_OPTIONS }
