// Mastra's own Workspace with its search engine swapped for the native one:
// everything but search (filesystem tools, sandbox, skills, LSP,
// getToolsConfig, getInfo...) stays Mastra's. Mastra keeps its engine in a
// field (`_searchEngine`, private in its typings only); that shape is
// checked at construction, so a Mastra that keeps it otherwise fails
// loudly instead of silently searching with its own engine.
'use strict'

const { Workspace: NativeWorkspace, UnsupportedGrepPatternError: NativeUnsupported } = require('../../index.js')
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
  /** @param {any} options */
  return async function grep(options) {
    const { pattern, caseSensitive = true, includeHidden = false, maxCountPerFile, contextLines = 0 } = options
    // As the native side reads a path (every leading `./`, trailing `/`):
    // the prefix cut from its answer below must be the one it put there.
    const root = String(options.path ?? '.').replace(/^(\.\/)+/, '').replace(/\/+$/, '')
    const folder = root === '.' ? '' : root
    // Mastra joins '' and a path as '/path', which its walk reads outside the base.
    if (options.path === '') throw new mastra.UnsupportedGrepPatternError(pattern, "the path ''")
    if (contextLines > MAX_NATIVE_CONTEXT) throw new mastra.UnsupportedGrepPatternError(pattern, 'contextLines above 10000')
    if (splitsAstral(pattern)) throw new mastra.UnsupportedGrepPatternError(pattern, 'it can match half of a character outside the BMP')
    if (mayReferUnsetGroup(pattern)) throw new mastra.UnsupportedGrepPatternError(pattern, 'a back-reference to a group that may not have matched')
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
    const cut = folder ? folder.length + 1 : 0
    return files.map((f) => ({ path: f.path.slice(cut), matches: f.matches }))
  }
}

/**
 * Whether a back-reference of a pattern may refer to a group that has not
 * matched: JavaScript matches it as empty, the native engine not at all
 * (no line would show the miss). That takes a group in an alternative, an
 * optional group, a negative look-around, a reference before its group
 * closes or inside a look-behind (JavaScript matches those right to left),
 * or a named reference; any of them refuses the pattern.
 * @param {string} pattern
 */
function mayReferUnsetGroup(pattern) {
  if (!/\\[1-9k]/.test(pattern)) return false
  /** @type {{ n: number, behind: boolean }[]} */
  const open = []
  const closed = new Set()
  let groups = 0
  let risky = false
  let inClass = false
  const refs = []
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]
    if (c === '\\') {
      const digits = /^[1-9][0-9]*/.exec(pattern.slice(i + 1))
      if (!inClass && digits) {
        refs.push({ n: Number(digits[0]), set: closed.has(Number(digits[0])) && !open.some((g) => g.behind) })
      }
      if (!inClass && pattern[i + 1] === 'k' && pattern.includes('(?<')) return true
      i += digits && !inClass ? digits[0].length : 1
    } else if (inClass) {
      if (c === ']') inClass = false
    } else if (c === '[') {
      inClass = true
    } else if (c === '|') {
      risky = true
    } else if (c === '(') {
      if (pattern.startsWith('(?!', i) || pattern.startsWith('(?<!', i)) risky = true
      const behind = pattern.startsWith('(?<=', i) || pattern.startsWith('(?<!', i)
      const named = pattern.startsWith('(?<', i) && !behind
      open.push({ n: pattern[i + 1] !== '?' || named ? ++groups : 0, behind })
    } else if (c === ')') {
      const n = open.pop()?.n
      if (n) closed.add(n)
      if (/^(?:[?*]|\{0[,}])/.test(pattern.slice(i + 1))) risky = true
    }
  }
  // A number beyond the groups is no back-reference (the native side refuses it).
  const live = refs.filter((r) => r.n <= groups)
  return live.length > 0 && (risky || live.some((r) => !r.set))
}

/**
 * Whether a pattern (JavaScript's, without the `u` flag) can match one half
 * of a character outside the BMP, which JavaScript sees as two UTF-16 units
 * and the native engine as one character: a surrogate escape (`\uD83D`),
 * such a character in a class (`[😀]` holds two units) or directly
 * quantified (`😀{2}` repeats its second unit). The native answer could
 * then miss lines that JavaScript matches, which checking its matches
 * would not show.
 * @param {string} pattern
 */
function splitsAstral(pattern) {
  let inClass = false
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern.charCodeAt(i)
    if (c === 0x5c) {
      if (/^u[dD][89a-fA-F][0-9a-fA-F]{2}/.test(pattern.slice(i + 1, i + 6))) return true
      i++
    } else if (c >= 0xd800 && c <= 0xdbff) {
      if (inClass || /^[*+?{]/.test(pattern.slice(i + 2, i + 3))) return true
      i++
    } else if (c >= 0xdc00 && c <= 0xdfff) {
      return true // a low surrogate alone
    } else if (c === 0x5b) {
      inClass = true
    } else if (c === 0x5d) {
      inClass = false
    }
  }
  return false
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
        if (basePath !== undefined) this.#installGrep(new NativeWorkspace({ id: this.id, filesystem: { basePath } }))
        return
      }
      const missing = ENGINE_METHODS.filter((m) => typeof engine[m] !== 'function')
      if (missing.length > 0) throw unsupported(mastra, `has a search engine without ${missing.join(', ')}`, version)
      /** @type {Record<string, unknown>} */
      // A persisted workspace without an id of its own keeps the native one's
      // (stable across starts, so is its vector index name); Mastra's is new each time.
      const options = config.id === undefined && config.persist ? {} : { id: this.id }
      for (const key of [...SHARED_OPTIONS, ...NATIVE_OPTIONS]) if (config[key] !== undefined) options[key] = config[key]
      if (basePath !== undefined) options.filesystem = { basePath }
      this.#native = new NativeWorkspace(/** @type {any} */ (options))
      self._searchEngine = new NativeSearchEngine(this.#native)
      if (basePath !== undefined) this.#installGrep(this.#native)
    }

    /** @type {{ fs: any, grep: Function } | undefined} */
    #grep

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
        if (this.#grep && this.#grep.fs.grep === this.#grep.grep) delete this.#grep.fs.grep
        if (this.#grepNative !== this.#native) await this.#grepNative?.destroy()
        await this.#native?.destroy()
      } finally {
        await super.destroy()
      }
    }
  }
}

module.exports = { createWorkspaceClass, lastIndexReport, SUPPORTED_MASTRA }
