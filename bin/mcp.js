// `workspace-search mcp <folder>`: the folder served to coding agents over
// the Model Context Protocol (stdio), on the official TypeScript SDK's
// McpServer (an optional peer dependency, loaded only here), its tools'
// arguments declared and checked with zod schemas. Three tools:
// workspace_search (ranked matches as text an agent reads well, within a
// token budget, paged with a cursor, without repeating what this connection
// was already shown; lib/budget.js), workspace_grep (Workspace.grep(), as
// ripgrep prints it, within a token budget) and workspace_index_status. The folder is indexed at start; calls
// made meanwhile wait for it, with progress notifications.
'use strict'

const os = require('node:os')
const fs = require('node:fs')
const path = require('node:path')
const { escapeControls, consoleToStderr } = require('./format.js')
const { guardLines, MAX_LINE } = require('./mcp-stdin.js')
const { budgetedPage, cursorKey, fitLine, loadEstimator, SearchMemory, CursorError, DEFAULT_MAX_TOKENS, MIN_MAX_TOKENS, MAX_MAX_TOKENS, MAX_FILES, MEMORY_CALLS } = require('../lib/budget.js')
const { fileLines } = require('./grep.js')
const { indexDirWarnings } = require('./args.js')

const SEARCH_DESCRIPTION = `Search the files of this workspace by keywords (BM25 with stemming, identifier splitting and CJK support), or by meaning when an embedder is configured. Returns one result per file, best first: "path:start-end  score" and the file's best matching lines ("12:" a match, "13-" context), as many files as fit in maxTokens (default ${DEFAULT_MAX_TOKENS}). When there is more, the text ends with a cursor: the same call with that cursor gives the next page. Lines this session was already shown are not repeated (a file shown before is one line) unless repeat is true.`
const GREP_DESCRIPTION = `Search file contents with a JavaScript regular expression, as grep does, from an index (fast on large folders). Returns "N matches in M files", then "path:line:column:text" per matching line (one match per line), context lines as "path-line-text", groups separated by "--"; as many lines as fit in maxTokens (default ${DEFAULT_MAX_TOKENS}), then what was left out.`
/** Tokens a grep line may take (about Mastra's 500 characters). */
const GREP_LINE_TOKENS = 125
/** The least time between two progress notes of one phase, and between the last note and the answer. */
const PROGRESS_EVERY_MS = 100
const ANSWER_GAP_MS = 50

/** Indexing's phases in the order init() runs them (embed only with an embedder): MCP progress must only increase, and each phase counts from 0. */
const PHASES = ['scan', 'read', 'embed', 'index']
/** How long a server whose client closed stdin waits for the calls it is answering. */
const FINISH_CALLS_MS = 30_000
const STATUS_DESCRIPTION = 'How many files and chunks of the workspace are indexed, what was skipped and why, and whether indexing is still running.'

/**
 * The tools' input schemas in zod (its v4 API, from the zod the SDK itself
 * loads): the SDK lists them as JSON Schema and checks every call against
 * them, answering a bad one with a tool error that holds these messages.
 * Unknown arguments are refused, not dropped.
 * @param {typeof import('zod/v4')} z
 */
function inputSchemas(z) {
  const unknownKeys = (issue) => {
    if (issue.code !== 'unrecognized_keys') return undefined
    return issue.keys.length === 1 ? `unknown argument "${issue.keys[0]}"` : `unknown arguments ${issue.keys.map((k) => `"${k}"`).join(', ')}`
  }
  const strict = (shape) => z.strictObject(shape, { error: unknownKeys })
  const QUERY = 'query must be a non-empty string'
  const TOP_K = `topK must be a whole number from 1 to ${MAX_FILES}`
  const MIN_SCORE = 'minScore must be a number from 0 to 1'
  const MAX_TOKENS = `maxTokens must be a whole number from ${MIN_MAX_TOKENS} to ${MAX_MAX_TOKENS}`
  const CONTEXT = 'contextLines must be a whole number from 0 to 100'
  const MAX_COUNT = `maxCount must be a whole number from 1 to ${Number.MAX_SAFE_INTEGER}`
  // A whole number's other bounds are not checked once it is not one: one message, not the same twice.
  const whole = (message) => ({ error: message, abort: true })
  return {
    search: strict({
      query: z.string({ error: QUERY }).regex(/\S/, { error: QUERY }).describe('What to look for: words, identifiers, a question'),
      topK: z.number({ error: TOP_K }).int(whole(TOP_K)).min(1, { error: TOP_K }).max(MAX_FILES, { error: TOP_K }).optional().describe(`Files per page at most (1-${MAX_FILES}; default: as many as fit in maxTokens)`),
      mode: z.enum(['bm25', 'vector', 'hybrid'], { error: 'mode must be bm25, vector or hybrid' }).optional().describe('bm25 (keywords, default), vector or hybrid (need an embedder)'),
      minScore: z.number({ error: MIN_SCORE }).min(0, { error: MIN_SCORE }).max(1, { error: MIN_SCORE }).optional().describe('Drop results scoring below this (0-1)'),
      path: z.string({ error: 'path must be a string' }).optional().describe('Only files under this folder, or this file (whole names: "src" holds "src/a.ts", not "srcs/b.ts"; e.g. "src/")'),
      maxTokens: z.number({ error: MAX_TOKENS }).int(whole(MAX_TOKENS)).min(MIN_MAX_TOKENS, { error: MAX_TOKENS }).max(MAX_MAX_TOKENS, { error: MAX_TOKENS }).default(DEFAULT_MAX_TOKENS).describe(`Most tokens the answer may take (estimated as Mastra does, with tokenx; default ${DEFAULT_MAX_TOKENS})`),
      cursor: z.string({ error: 'cursor must be a string' }).optional().describe('The cursor the previous page ended with: the next page of the same search'),
      repeat: z.boolean({ error: 'repeat must be true or false' }).default(false).describe('Show lines again that this session was already shown (default false: they are referred to in one line)'),
    }),
    grep: strict({
      pattern: z.string({ error: 'pattern must be a string' }).min(1, { error: 'pattern must not be empty' }).max(1000, { error: 'pattern must be at most 1000 characters' }).describe('A JavaScript regular expression (e.g. "TODO|FIXME", "function\\s+\\w+\\(")'),
      path: z.string({ error: 'path must be a string' }).optional().describe('A file, a folder or a glob inside the workspace (default: all of it; "src/**/*.ts")'),
      caseSensitive: z.boolean({ error: 'caseSensitive must be true or false' }).default(true).describe('Default true'),
      contextLines: z.number({ error: CONTEXT }).int(whole(CONTEXT)).min(0, { error: CONTEXT }).max(100, { error: CONTEXT }).default(0).describe('Lines of context around each match (0-100)'),
      maxCount: z.number({ error: MAX_COUNT }).int(whole(MAX_COUNT)).min(1, { error: MAX_COUNT }).optional().describe('Matching lines per file at most'),
      includeHidden: z.boolean({ error: 'includeHidden must be true or false' }).default(false).describe('Also names starting with "."'),
      maxTokens: z.number({ error: MAX_TOKENS }).int(whole(MAX_TOKENS)).min(MIN_MAX_TOKENS, { error: MAX_TOKENS }).max(MAX_MAX_TOKENS, { error: MAX_TOKENS }).default(DEFAULT_MAX_TOKENS).describe(`Most tokens the answer may take (default ${DEFAULT_MAX_TOKENS})`),
    }),
    status: strict({}),
  }
}

/** A tool error the agent reads (isError), not a protocol error. */
// (An error may echo the agent's own input: its control characters are escaped, as in every text;
// its lines stay lines.)
const toolError = (message) => ({ content: [{ type: 'text', text: message.split('\n').map(escapeControls).join('\n') }], isError: true })

/** The SDK's high-level server, its stdio transport and zod as the SDK loads it. */
function loadSdk() {
  let mcp
  try {
    mcp = require.resolve('@modelcontextprotocol/sdk/server/mcp.js')
  } catch (err) {
    if (err.code !== 'MODULE_NOT_FOUND') throw err
    throw new Error('workspace-search mcp needs @modelcontextprotocol/sdk (an optional peer dependency): npm install @modelcontextprotocol/sdk')
  }
  // The SDK's own zod (its dependency, found from its folder): schemas from
  // another copy of zod may not be the kind it reads.
  let z
  try {
    z = require(require.resolve('zod/v4', { paths: [path.dirname(mcp)] }))
  } catch (err) {
    if (err.code !== 'MODULE_NOT_FOUND' && err.code !== 'ERR_PACKAGE_PATH_NOT_EXPORTED') throw err
    throw new Error('workspace-search mcp needs @modelcontextprotocol/sdk 1.23 or later, with zod 3.25 or later (zod/v4): npm install @modelcontextprotocol/sdk@latest')
  }
  return { ...require(mcp), ...require('@modelcontextprotocol/sdk/server/stdio.js'), ...require('@modelcontextprotocol/sdk/types.js'), z }
}

/**
 * The SDK's stdio transport reading whole lines of stdin, with a line over
 * MAX_LINE answered by an error (the id read from the dropped line when it
 * has one; MCP's error response may go without) and a note on stderr.
 */
function stdioTransport(sdk) {
  const onOversize = (bytes, id) => {
    process.stderr.write(`workspace-search mcp: dropped a request line of ${bytes} bytes (the limit is ${MAX_LINE} bytes)\n`)
    const message = `Request too large: a line of ${bytes} bytes is over the limit of ${MAX_LINE} bytes (10 MiB); the request was dropped`
    transport.send({ jsonrpc: '2.0', ...(id === undefined ? {} : { id }), error: { code: sdk.ErrorCode.InvalidRequest, message } }).catch(() => {})
  }
  // The same cap for the transport's buffer, where the SDK takes it: a whole line fits.
  const transport = new sdk.StdioServerTransport(guardLines(process.stdin, { onOversize }), process.stdout, { maxBufferSize: MAX_LINE })
  return transport
}

/**
 * A search's `path` read from `folder` down when it spells a path inside the folder absolutely
 * (an agent's habit; ids are relative, and the engine reads a leading `/` as the folder's): as given
 * otherwise. The folder as given or as its real path.
 * @param {string} folder
 * @param {string} wanted
 */
function pathInFolder(folder, wanted) {
  if (!path.isAbsolute(wanted)) return withinFolder(wanted)
  const bases = [path.resolve(folder)]
  try {
    bases.push(fs.realpathSync(folder))
  } catch {}
  for (const base of bases) {
    const inside = path.relative(base, wanted)
    if (inside === '') return ''
    if (inside === '..' || inside.startsWith(`..${path.sep}`) || path.isAbsolute(inside)) continue
    return inside.split(path.sep).join('/') + (/[\\/]$/.test(wanted) ? '/' : '')
  }
  return outside(wanted)
}

/** A relative `path` with `..` in it resolved, as workspace_grep reads it (`src/../docs/` is `docs/`). */
function withinFolder(wanted) {
  if (!wanted.split(/[\\/]/).includes('..')) return wanted
  const resolved = path.posix.normalize(wanted.replace(/\\/g, '/'))
  if (resolved === '..' || resolved.startsWith('../')) return outside(wanted)
  return resolved === './' || resolved === '.' ? '' : resolved
}

/** A path out of the folder: an error, as workspace_grep's (it matched nothing: "No results"). */
function outside(wanted) {
  throw new PathOutside(`path must stay inside the folder the server searches, got "${wanted}"`)
}

class PathOutside extends Error {}

/**
 * Answers a line that is no JSON (-32700) or no JSON-RPC message (-32600),
 * as JSON-RPC asks (`id: null`): the SDK's transport hands such a line to
 * `onerror` alone, and the client waited out its own timeout. To be called
 * after `connect()`, which sets `onerror`.
 */
function answerMalformed(transport, sdk) {
  const onerror = transport.onerror
  transport.onerror = (error) => {
    onerror?.(error)
    const code = error instanceof SyntaxError ? sdk.ErrorCode.ParseError : error?.name === 'ZodError' ? sdk.ErrorCode.InvalidRequest : undefined
    if (code === undefined) return
    const message = code === sdk.ErrorCode.ParseError ? 'Parse error: the line is not JSON' : 'Invalid Request: the line is not a JSON-RPC 2.0 message'
    transport.send({ jsonrpc: '2.0', id: null, error: { code, message } }).catch(() => {})
  }
}

/**
 * Grep results as text within `maxTokens` (tokenx's estimate): a summary
 * line, then the lines of each file in order while they fit, then how many
 * matches were left out.
 */
async function grepText(files, input) {
  const estimate = await loadEstimator()
  const total = files.reduce((n, f) => n + f.matches.length, 0)
  const head = `${total} match${total === 1 ? '' : 'es'} in ${files.length} file${files.length === 1 ? '' : 's'}`
  const out = [head]
  let used = estimate(head) + 60 // room for the last line
  let shownMatches = 0
  let full = false
  // A long line (minified code) is cut around its match, as Mastra cuts matching lines at 500
  // characters: one such line must not take the whole budget from the matches after it.
  const lineTokens = Math.min(GREP_LINE_TOKENS, Math.floor(input.maxTokens / 4))
  const fit = (text, focus) => fitLine(text, focus, lineTokens, estimate)
  for (const [i, file] of files.entries()) {
    const show = escapeControls(file.path)
    const lines = fileLines(show, file.matches, fit)
    if (i > 0 && input.contextLines > 0) lines.unshift('--')
    for (const line of lines) {
      const cost = estimate(line) + 1
      if (used + cost > input.maxTokens) {
        full = true
        break
      }
      out.push(line)
      used += cost
      if (line.startsWith(`${show}:`)) shownMatches++
    }
    if (full) break
  }
  if (shownMatches < total) out.push(`[${total - shownMatches} more match${total - shownMatches === 1 ? '' : 'es'} left out to fit ${input.maxTokens} tokens: narrow the pattern or the path, or set maxCount]`)
  return out.join('\n')
}

async function serve(args, { openWorkspace }) {
  // stdout carries protocol messages only.
  consoleToStderr()
  const sdk = loadSdk()
  const version = require('../package.json').version
  const server = new sdk.McpServer({ name: 'workspace-search', version }, { capabilities: { tools: {}, logging: {} } })
  const schemas = inputSchemas(sdk.z)
  const waiting = new Set() // progress listeners of calls made while indexing
  // What this connection was shown (one server process serves one client over stdio).
  const memory = new SearchMemory({ calls: MEMORY_CALLS })
  const started = Date.now()
  // A server lives long: files edited meanwhile reach the index (watch).
  const workspace = await openWorkspace(
    args,
    (event) => {
      for (const notify of waiting) notify(event)
    },
    { watch: true },
  )
  let report
  let failure
  const indexing = workspace.init().then(
    (r) => {
      report = r
      // Said as the search command says it: the server runs, but keeps no index in --index-dir.
      for (const w of indexDirWarnings(r, args)) process.stderr.write(`workspace-search mcp: ${escapeControls(w)}\n`)
      server.server.sendLoggingMessage({ level: 'info', data: `workspace-search indexed ${r.indexed} files in ${Date.now() - started} ms` }).catch(() => {})
    },
    (err) => {
      failure = err
    },
  )

  /** Waits for indexing, sending progress to the caller when it asked for it. */
  async function ready(extra) {
    const token = extra?._meta?.progressToken
    if (report || failure || token === undefined) return indexing
    // Progress over the phases that run: phase number + the share of it done, of their count.
    const phases = workspace.canVector ? PHASES : PHASES.filter((p) => p !== 'embed')
    let sent = -1
    let sentAt = 0
    /** @type {Set<Promise<void>>} */
    const sending = new Set()
    const notify = (event) => {
      const phase = Math.max(0, phases.indexOf(event.phase))
      const progress = phase + (event.total > 0 ? Math.min(1, event.done / event.total) : 0)
      // One a phase begins, then at most one every PROGRESS_EVERY_MS: a note per file floods the
      // client, and a note read with the answer is an error to the SDK's client (typescript-sdk#2580).
      if (!(progress > sent) || (Math.floor(progress) === Math.floor(sent) && Date.now() - sentAt < PROGRESS_EVERY_MS)) return
      sent = progress
      sentAt = Date.now()
      const note = extra.sendNotification({ method: 'notifications/progress', params: { progressToken: token, progress, total: phases.length, message: `${event.phase} ${event.done}/${event.total}` } }).catch(() => {})
      sending.add(note)
      note.finally(() => sending.delete(note))
    }
    waiting.add(notify)
    try {
      await indexing
    } finally {
      waiting.delete(notify)
      // The answer goes after the notifications sent for this call (a client drops later ones),
      // and not right behind the last: a client that reads both at once takes the answer first.
      await Promise.all([...sending])
      const since = Date.now() - sentAt
      if (since < ANSWER_GAP_MS) await new Promise((resolve) => setTimeout(resolve, ANSWER_GAP_MS - since))
    }
  }

  // The calls being answered: a client that closes stdin still gets what it asked before.
  const running = new Set()
  const tracked = (handler) => (input, extra) => {
    // Any other failure is a tool error too, as the SDK makes it, its control characters escaped.
    const call = handler(input, extra).catch((err) => toolError(String(err?.message ?? err)))
    running.add(call)
    call.finally(() => running.delete(call)).catch(() => {})
    return call
  }

  // Arguments reach the callbacks checked against the schemas (topK defaulted).
  server.registerTool('workspace_search', { title: 'Search the workspace', description: SEARCH_DESCRIPTION, inputSchema: schemas.search }, tracked(async (input, extra) => {
    if (input.mode && input.mode !== 'bm25' && !workspace.canVector) return toolError(`mode ${input.mode} needs an embedder (start the server with --embedder or WORKSPACE_SEARCH_EMBEDDER); use bm25`)
    await ready(extra)
    if (failure) return toolError(`indexing failed: ${failure.message}`)
    if (extra.signal.aborted) return toolError('cancelled')
    // A path is a prefix here: a glob would match no id and answer "No results" without a word.
    if (input.path && /[*?]/.test(input.path)) return toolError(`path is a prefix of the files' paths for workspace_search (e.g. "src/"), got "${escapeControls(input.path)}"; globs such as "src/**/*.ts" are for workspace_grep`)
    // The path filter runs inside the engine (every mode), so a folder whose hits rank low is still found.
    // One result per file: an agent edits files, and five chunks of one file would crowd out the others.
    const mode = input.mode ?? 'bm25'
    // An absolute path inside the folder is read from the folder down (ids are), as grep reads it.
    let under
    try {
      under = input.path && pathInFolder(args.folder, input.path)
    } catch (err) {
      if (err instanceof PathOutside) return toolError(escapeControls(err.message))
      throw err
    }
    const search = { query: input.query, mode, minScore: input.minScore, path: under, topK: input.topK }
    try {
      const page = await budgetedPage({
        query: input.query,
        maxTokens: input.maxTokens,
        cursor: input.cursor,
        repeat: input.repeat,
        topK: input.topK,
        key: cursorKey(search),
        memory,
        signal: extra.signal,
        highlight: (query, text) => workspace.highlight(query, text),
        search: (topK) => workspace.search(input.query, { topK, mode, minScore: input.minScore, group: 'file', ...(under ? { pathPrefix: under } : {}) }),
      })
      return { content: [{ type: 'text', text: page.text }] }
    } catch (err) {
      if (err instanceof CursorError) return toolError(err.message)
      throw err
    }
  }))
  server.registerTool('workspace_grep', { title: 'Grep the workspace', description: GREP_DESCRIPTION, inputSchema: schemas.grep }, tracked(async (input) => {
    let files
    try {
      // Each context line once (fileLines merges them as before): with every match carrying its own
      // copy, contextLines 100 over files of many matches took gigabytes.
      files = await workspace.grep(input.pattern, { path: input.path ?? '.', caseSensitive: input.caseSensitive, contextLines: input.contextLines, maxCount: input.maxCount, includeHidden: input.includeHidden, contextOnce: true })
    } catch (err) {
      if (err instanceof SyntaxError || err?.code === 'UNSUPPORTED_GREP_PATTERN' || /no such file or folder|basePath is not there/.test(String(err?.message))) return toolError(String(err.message))
      throw err
    }
    return { content: [{ type: 'text', text: await grepText(files, input) }] }
  }))
  server.registerTool('workspace_index_status', { title: 'Index status', description: STATUS_DESCRIPTION, inputSchema: schemas.status }, async () => {
    const state = report ? 'ready' : failure ? `failed: ${failure.message}` : 'indexing'
    const stats = workspace.stats()
    const listed = (items, why) => items.slice(0, 20).map((s) => `  ${escapeControls(s.path)}: ${escapeControls(why(s))}`)
    const skipped = listed(report?.skipped ?? [], (s) => s.reason)
    // Files indexed for keyword search whose vectors were not written (an embedder down: 401, quota).
    const failed = listed(report?.failed ?? [], (f) => f.error)
    // The index's own warnings (a second server on the cache folder saves nothing) and the watcher's.
    const warnings = [...(report?.warnings ?? []), ...(stats.watch?.warnings ?? [])]
    const warned = warnings.slice(0, 20).map((w) => `  ${escapeControls(w)}`)
    const text = [`status: ${escapeControls(state)}`, `folder: ${escapeControls(path.resolve(args.folder))}`, `files indexed at start: ${report?.indexed ?? 0} (${report?.chunks ?? 0} chunks)`, `documents now: ${stats.documents}`, `skipped: ${report?.skipped.length ?? 0}`, ...skipped, `failed: ${report?.failed.length ?? 0}`, ...failed, `warnings: ${warnings.length}`, ...warned].join('\n')
    return { content: [{ type: 'text', text }] }
  })

  // One drain listener per answer waiting to be written (the SDK's send): a client that reads
  // slowly is no leak, and Node's warning about it on stderr was noise.
  process.stdout.setMaxListeners(0)
  const transport = stdioTransport(sdk)
  await server.connect(transport)
  answerMalformed(transport, sdk)
  let stopping
  let hurry = () => {}
  const stop = (finishCalls) => {
    stopping ??= (async () => {
      if (finishCalls) {
        const limit = new Promise((resolve) => setTimeout(resolve, FINISH_CALLS_MS).unref())
        const signalled = new Promise((resolve) => (hurry = resolve))
        await Promise.race([Promise.allSettled([...running]), limit, signalled])
      }
      // A save that fails now (its folder removed) is said, and the server still ends as asked.
      await workspace.destroy().catch((err) => process.stderr.write(`workspace-search mcp: ${escapeControls(String(err?.message ?? err))}\n`))
      // The last answers are written before the process ends (stdout to a pipe is asynchronous).
      await new Promise((resolve) => setImmediate(resolve))
      await new Promise((resolve) => process.stdout.write('', () => resolve(undefined)))
      process.exit(0)
    })()
    return stopping
  }
  process.stdin.on('end', () => stop(true))
  // The client gone while an answer was written: the workspace is destroyed (its save) and the server ends.
  process.stdout.on('error', (err) => {
    if (err.code === 'EPIPE') stop(false)
  })
  // A signal stops waiting for calls (the client closed stdin, then signals: MCP's shutdown) and
  // destroys the workspace (its save); a second one ends the process at once.
  let signals = 0
  for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP']) {
    process.on(signal, () => {
      if (++signals > 1) process.exit(128 + (os.constants.signals[signal] ?? 0))
      hurry()
      stop(false)
    })
  }
  return new Promise(() => {}) // serves until stdin closes
}

module.exports = { serve }
