#!/usr/bin/env node
'use strict'
// workspace-search [search] <folder> "<query>" [options]
// workspace-search mcp <folder> [options]
// workspace-search grep PATTERN [FOLDER] [options] (bin/grep.js)
// Indexes a folder and prints the best matches, or serves it to coding
// agents over the Model Context Protocol (bin/mcp.js).

const { parseArgs } = require('node:util')
const crypto = require('node:crypto')
const fs = require('node:fs')
const path = require('node:path')
const { pathToFileURL } = require('node:url')
const { Workspace, LocalFilesystem } = require('..')
const { progressBar } = require('./progress.js')
const { UsageError, explain, checkFolder, indexDirWarnings } = require('./args.js')
const { badGlobs } = require('./globs.js')
const { elide, matchLines, printer, jsonLine, displayPath, pathInside, escapeControls, consoleToStderr } = require('./format.js')
const { budgetedPage, cursorKey, readCursor, makeCursor, CursorError, MIN_MAX_TOKENS, MAX_MAX_TOKENS, MAX_FILES } = require('../lib/budget.js')

const USAGE = `Usage: workspace-search [search] <folder> "<query>" [options]
       workspace-search mcp <folder> [options]
       workspace-search grep PATTERN [FOLDER] [options] (see grep --help)

Indexes the files of <folder> (honouring .gitignore) and prints the best
matches as "path:start-end  score" with the matching lines, the path as
<folder> joined with the file's path in it ("." prints it alone); "mcp"
serves the folder to coding agents over the Model Context Protocol (stdio).

Options:
  --mode MODE        bm25 (default), or vector / hybrid with an embedder
  --top-k N          number of results (default 5)
  --min-score X      drop results scoring below X (0 to 1)
  --glob PATTERN     index only files matching PATTERN (repeatable)
  --json             one JSON object per result: { file, path, id, start, end,
                     score, bm25, vector, content } (file: as printed; path:
                     inside <folder>)
  --max-tokens N     print what an agent is given: as many files as fit in N
                     tokens (tokenx's estimate), each with its best matching
                     lines, ending with the cursor of the next page (with
                     --json: the same files as JSON, the cursor on stderr)
  --cursor C         the next page of the same search (C as a previous page
                     ended with); the next cursor is printed at the end, or
                     on stderr for the usual output and --json
  --no-gitignore     index files that .gitignore excludes too
  --index-dir DIR    keep the index in DIR (default: a folder under
                     ~/.cache/workspace-search per <folder>, --glob,
                     --no-gitignore and --embedder); a second run reads only
                     the files that changed
  --no-persist       keep nothing between runs
  --stats            print on stderr what indexing did (files reused from
                     the saved index, read, removed, skipped, failed)
  --embedder MODULE  a JavaScript module whose default export is an embedder
                     (also WORKSPACE_SEARCH_EMBEDDER); enables vector and hybrid
  -v, --version      print the version
  -h, --help         show this help

Exit status: 0 with results, 1 with none, 2 on an error (as grep).`

const OPTIONS = {
  mode: { type: 'string' },
  'top-k': { type: 'string' },
  'min-score': { type: 'string' },
  glob: { type: 'string', multiple: true },
  json: { type: 'boolean' },
  'max-tokens': { type: 'string' },
  cursor: { type: 'string' },
  'no-gitignore': { type: 'boolean' },
  'index-dir': { type: 'string' },
  'no-persist': { type: 'boolean' },
  stats: { type: 'boolean' },
  embedder: { type: 'string' },
  version: { type: 'boolean', short: 'v' },
  help: { type: 'boolean', short: 'h' },
}

function parse(argv) {
  let parsed
  try {
    parsed = parseArgs({ args: argv, allowPositionals: true, options: OPTIONS })
  } catch (err) {
    throw new UsageError(explain(err))
  }
  const { values, positionals } = parsed
  if (values.help || values.version) return { info: values.help ? 'help' : 'version' }
  const command = positionals[0] === 'mcp' || positionals[0] === 'search' ? positionals.shift() : 'search'
  if (command === 'mcp') {
    // A tool call says these for itself: on the server's command line they would be silently unused.
    const searchOnly = ['mode', 'top-k', 'min-score', 'json', 'max-tokens', 'cursor', 'stats'].filter((name) => values[name] !== undefined)
    if (searchOnly.length) throw new UsageError(`--${searchOnly[0]} is an option of a search, not of mcp (its tool calls take topK, mode, minScore, maxTokens and cursor)`)
  }
  const wanted = command === 'mcp' ? 1 : 2
  if (positionals.length !== wanted) throw new UsageError(command === 'mcp' ? 'expected a folder' : 'expected a folder and a query')
  const [folder, query] = positionals
  // The MCP server refuses it too: a blank query finds nothing, which is not what "No results" says.
  if (command === 'search' && !/\S/.test(query)) throw new UsageError('the query is empty: give the words to search for')
  checkFolder(folder)
  try {
    fs.opendirSync(folder).closeSync()
  } catch (err) {
    throw new Error(`cannot read ${folder}: ${err.code === 'EACCES' || err.code === 'EPERM' ? 'permission denied' : err.message}`)
  }
  // Read from inside it (`.`), a folder on whose path a name is not UTF-8
  // opens, but Node.js names it with U+FFFD: the index would read another
  // path (the MCP server answered "No results" to every search).
  const real = path.resolve(folder)
  if (real.includes('\uFFFD') && !fs.existsSync(real)) {
    throw new Error(`cannot read ${real}: basePath unreadable: a folder on its path is not named in UTF-8, which Node.js cannot pass on`)
  }
  const maxTokens = values['max-tokens'] === undefined ? undefined : Number(values['max-tokens'])
  if (maxTokens !== undefined && !(Number.isInteger(maxTokens) && maxTokens >= MIN_MAX_TOKENS && maxTokens <= MAX_MAX_TOKENS)) {
    throw new UsageError(`--max-tokens must be a whole number from ${MIN_MAX_TOKENS} to ${MAX_MAX_TOKENS}, got ${values['max-tokens']}`)
  }
  // With a budget, as many files as fit unless --top-k says fewer (at most MAX_FILES a page).
  const topK = values['top-k'] === undefined ? (maxTokens === undefined ? 5 : undefined) : Number(values['top-k'])
  if (topK !== undefined && (!Number.isInteger(topK) || topK < 1)) throw new UsageError(`--top-k must be a whole number of at least 1, got ${values['top-k']}`)
  if (topK !== undefined && maxTokens !== undefined && topK > MAX_FILES) throw new UsageError(`--top-k must be at most ${MAX_FILES} with --max-tokens, got ${topK}`)
  // (Number('') and Number(' ') are 0: a blank value is not a number.)
  const minScore = values['min-score'] === undefined ? undefined : values['min-score'].trim() === '' ? NaN : Number(values['min-score'])
  if (minScore !== undefined && !(minScore >= 0 && minScore <= 1)) throw new UsageError(`--min-score must be a number from 0 to 1, got ${values['min-score']}`)
  const mode = values.mode
  if (mode !== undefined && !['bm25', 'vector', 'hybrid'].includes(mode)) throw new UsageError(`--mode must be bm25, vector or hybrid, got ${mode}`)
  const embedderModule = values.embedder ?? process.env.WORKSPACE_SEARCH_EMBEDDER
  if (mode && mode !== 'bm25' && !embedderModule) throw new UsageError(`--mode ${mode} needs an embedder: --embedder MODULE or WORKSPACE_SEARCH_EMBEDDER`)
  return { command, folder, query, topK, minScore, mode, maxTokens, cursor: values.cursor, embedderModule, json: Boolean(values.json), stats: Boolean(values.stats), globs: values.glob ?? [], gitignore: !values['no-gitignore'], persist: persistOption(values, folder) }
}

/**
 * The workspace id for the default cache folder (`persist: true` keeps one
 * folder per real path of <folder> and id): a hash of every option that
 * changes what is indexed, so that runs with other --glob, --no-gitignore
 * or --embedder each keep their own index instead of rebuilding one in
 * turn; options that only change the search (--top-k, --mode, --min-score,
 * --json) share it. The engine's own fingerprint (version, tokenizer,
 * chunking) is checked inside the folder.
 */
function cacheId(args) {
  const key = {
    v: 1,
    globs: [...new Set(args.globs.length ? args.globs : ['.'])].sort(),
    gitignore: args.gitignore,
    embedder: args.embedderModule ? realpathOr(path.resolve(args.embedderModule)) : null,
  }
  return `cli_${crypto.createHash('sha256').update(JSON.stringify(key)).digest('hex').slice(0, 16)}`
}

function realpathOr(p) {
  try {
    return fs.realpathSync(p)
  } catch {
    return p
  }
}

/** `persist` for the workspace: the cache folder by default, --index-dir, or off. */
function persistOption(values, folder) {
  if (values['no-persist']) {
    if (values['index-dir'] !== undefined) throw new UsageError('--index-dir and --no-persist cannot go together')
    return false
  }
  if (values['index-dir'] === undefined) return true
  if (values['index-dir'].trim() === '') throw new UsageError('--index-dir needs a folder')
  // (Node.js hands such a name on with U+FFFD: the index went to a folder of another name.)
  if (values['index-dir'].includes('\uFFFD')) {
    throw new UsageError(`--index-dir ${values['index-dir']}: the name is not valid UTF-8, and Node.js cannot pass such a name to a program`)
  }
  const dir = path.resolve(values['index-dir'])
  // Said here in this command's terms (the engine's message names persist.dir).
  const [real, searched] = [realpathOr(dir), realpathOr(path.resolve(folder))]
  if (real === searched || searched.startsWith(real.endsWith(path.sep) ? real : real + path.sep)) {
    throw new Error(`--index-dir ${values['index-dir']} is the folder searched or holds it: the index would sit among the files it indexes; give a folder of its own (a subfolder of the folder searched will do), or leave --index-dir out`)
  }
  return { dir }
}

/** Where a module's syntax error is (` (line N)`), as `node --check` finds it; '' if it does not say. */
function syntaxErrorLine(file) {
  const checked = require('node:child_process').spawnSync(process.execPath, ['--check', file], { encoding: 'utf8', timeout: 10_000 })
  const first = String(checked.stderr ?? '').split('\n')[0]
  const line = /:(\d+)$/.exec(first)?.[1]
  return line ? ` (line ${line})` : ''
}

/** The embedder a module exports (default export, or `embedder`). */
async function loadEmbedder(module) {
  if (!module) return undefined
  // stdout carries results only (one JSON object per line with --json).
  consoleToStderr()
  const url = pathToFileURL(path.resolve(module)).href
  const loaded = await import(url).catch((err) => {
    // Node's message alone named neither the module nor the line ("Unexpected token '}'").
    throw new Error(`--embedder ${module} could not be loaded: ${err?.message ?? err}${err instanceof SyntaxError ? syntaxErrorLine(path.resolve(module)) : ''}`)
  })
  const embedder = loaded.default?.default ?? loaded.default ?? loaded.embedder
  if (typeof embedder !== 'function') throw new UsageError(`${module} must export an embedder function as its default export`)
  return embedder
}

/** The workspace the command searches: BM25 always, vectors with an embedder. */
async function openWorkspace(args, onProgress, { watch = false } = {}) {
  const embedder = await loadEmbedder(args.embedderModule)
  return new Workspace({
    ...(args.persist === true ? { id: cacheId(args) } : {}),
    filesystem: new LocalFilesystem({ basePath: args.folder }),
    bm25: true,
    ...(embedder ? { embedder } : {}),
    autoIndexPaths: args.globs.length ? args.globs : ['.'],
    respectGitignore: args.gitignore,
    persist: args.persist,
    watch,
    onProgress,
  })
}

async function search(args) {
  const progress = progressBar()
  const workspace = await openWorkspace(args, progress.onProgress)
  try {
    return await searchIn(workspace, args, progress)
  } finally {
    // Saves what init() updated (an update is saved a second later, or here).
    await workspace.destroy().catch(() => {})
  }
}

/** An embedder's error without which batch it was (`(batch 3 of 300, texts 3-3)`). */
const batchless = (/** @type {string} */ error) => error.replace(/ \(batch \d+ of \d+, texts \d+-\d+\)/, '')

/**
 * The files init() could not index (wholly, or only their vectors), and
 * the entries it skipped that are worth a line (notIndexed), on
 * stderr: one line per kind of error (`alike`, by default the error), since
 * an embedder that is down fails every file with the same one. A kind met
 * once names its file and error; one met more often counts them (`noun`).
 * @param {Array<{ path: string, error: string, alike?: string, noun?: string }>} failed
 */
function printFailed(failed, show) {
  const byKind = new Map()
  for (const f of failed) {
    // The engine's messages say which batch, and which vector of it: alike but for those.
    const kind = f.alike ?? batchless(f.error).replace(/\b(vector|element) \d+/g, '$1 #')
    if (!byKind.has(kind)) byKind.set(kind, [])
    byKind.get(kind).push(f)
  }
  for (const [, [first, ...others]] of byKind) {
    const line = others.length === 0 ? `${show(first.path)}: ${first.error}` : `${others.length + 1} ${first.noun ?? 'files'}: ${first.alike ?? batchless(first.error)}`
    process.stderr.write(`workspace-search: ${escapeControls(line)}\n`)
  }
}

/**
 * Why init() skipped an entry, when a person expects it searched: it could
 * not be read, or it is over a limit (size, depth), or its name cannot be
 * a path here. What ripgrep also passes over without a word (binary files,
 * FIFOs and devices, links out of the folder, to folders or broken) is left
 * out, as are ignored files (not in the report at all).
 */
const WORTH_A_LINE = /^(unreadable|larger than maxFileSize|deeper than|file name is not valid UTF-8|named as a chunk)/

/** The skipped entries worth a line, as printFailed takes them. */
function notIndexed(skipped) {
  return skipped.filter((s) => WORTH_A_LINE.test(s.reason)).map((s) => ({ path: s.path, ...skipReason(s.reason) }))
}

/** A skip reason as printed, and what entries skipped alike share. */
function skipReason(reason) {
  // "unreadable: /abs/a: IO error for operation on /abs/a: Permission denied (os error 13)": the path is printed already.
  const system = /^unreadable: .*: ([^:]+ \(os error \d+\))$/.exec(reason)
  if (system) return { error: `unreadable: ${system[1]}`, noun: 'files or folders' }
  // "larger than maxFileSize (11000000 bytes > 10485760)": each file its own size.
  const large = /^larger than maxFileSize \(\d+ bytes > (\d+)\)$/.exec(reason)
  if (large) return { error: reason, alike: `larger than maxFileSize (${large[1]} bytes)` }
  return { error: reason, noun: 'files or folders' }
}

/** The --glob values refused, on stderr as the search reports them; the exit status. */
function refuseGlobs(bad) {
  // (A glob of a hundred thousand characters is named by its ends.)
  for (const { glob, reason } of bad) process.stderr.write(`workspace-search: --glob ${escapeControls(elide(glob, 200))}: ${escapeControls(reason)}\n`)
  return 2
}

async function searchIn(workspace, args, progress) {
  let report
  try {
    report = await workspace.init()
  } finally {
    progress.stop()
  }
  const show = displayPath(args.folder)
  // The folder was there when the command started: one it cannot read is an error, not "no results".
  const unreadable = report.skipped.find((s) => /^basePath unreadable/.test(s.reason))
  if (unreadable) {
    const utf8 = unreadable.path.includes('\uFFFD') ? ' (a folder on its path is not named in UTF-8, which Node.js cannot pass on)' : ''
    process.stderr.write(`workspace-search: cannot read ${escapeControls(unreadable.path)}: ${escapeControls(unreadable.reason)}${utf8}\n`)
    return 2
  }
  printFailed([...notIndexed(report.skipped), ...report.failed], show)
  if (args.stats) printStats(report, args.persist !== false)
  else for (const w of indexDirWarnings(report, args)) process.stderr.write(`workspace-search: ${escapeControls(w)}\n`)
  // A --glob that cannot name files here is the command line's error, not an empty result (main()
  // refuses them before indexing; the engine's word is the last).
  const refused = report.skipped.filter((s) => args.globs.includes(s.path) && /^(invalid glob|outside basePath)/.test(s.reason))
  if (refused.length) return refuseGlobs(refused.map((s) => ({ glob: s.path, reason: s.reason })))
  // One result per file (its best chunk, every matching range): what a person opens is a file.
  const mode = args.mode ?? 'bm25'
  const search = (topK) => workspace.search(args.query, { topK, minScore: args.minScore, mode, group: 'file' })
  if (args.maxTokens !== undefined || args.cursor !== undefined) return page(workspace, args, search, show)
  const results = await search(args.topK)
  if (results.length === 0) {
    process.stderr.write(`No results for "${escapeControls(args.query)}" (${report.indexed} file${report.indexed === 1 ? '' : 's'} indexed).\n`)
    return 1
  }
  print(workspace, args, results, show)
  return 0
}

/** Results as --json lines, or for a person: headers and highlighted lines. */
function print(workspace, args, results, show) {
  if (args.json) {
    const inside = pathInside(args.folder)
    for (const r of results) process.stdout.write(`${jsonLine(r, show, inside)}\n`)
    return
  }
  const out = printer(process.stdout, { show })
  for (const r of results) {
    out.header(r)
    for (const line of matchLines(r, workspace.highlight(args.query, r.content))) {
      if (line) out.numbered(line)
      else out.gap()
    }
    out.blank()
  }
}

/**
 * --max-tokens and --cursor: one page of the search. With --max-tokens the
 * page is the text an agent is given (lib/budget.js), its last line the
 * next cursor; with --json, or without --max-tokens, the page's files are
 * printed as usual and the next cursor goes to stderr.
 */
async function page(workspace, args, search, show) {
  const key = cursorKey({ query: args.query, mode: args.mode ?? 'bm25', minScore: args.minScore, path: undefined, topK: args.topK })
  let files
  let next
  try {
    if (args.maxTokens !== undefined) {
      const p = await budgetedPage({ query: args.query, maxTokens: args.maxTokens, cursor: args.cursor, topK: args.topK, key, search, show, highlight: (q, t) => workspace.highlight(q, t), nextHint: (c) => `the same command with --cursor ${c}` })
      if (!args.json) {
        process.stdout.write(`${p.text}\n`)
        return p.files.length ? 0 : 1
      }
      ;({ files, next } = p)
    } else {
      const skip = readCursor(args.cursor, key)
      const found = await search(skip + args.topK + 1)
      files = found.slice(skip, skip + args.topK)
      next = found.length > skip + args.topK ? makeCursor(skip + files.length, key) : null
    }
  } catch (err) {
    if (err instanceof CursorError) throw new UsageError(`--cursor: ${err.message}`)
    throw err
  }
  print(workspace, args, files, show)
  process.stderr.write(next ? `workspace-search: next page: --cursor ${next}\n` : 'workspace-search: no more results\n')
  return files.length ? 0 : 1
}

/** --stats: what init() did, and why a saved index was not used, on stderr. */
function printStats(report, persist) {
  // Without a saved index every file was read (the report counts rereads against one).
  const read = persist ? report.reread : report.indexed
  const line = `${report.indexed} file${report.indexed === 1 ? '' : 's'} indexed in ${Math.round(report.durationMs)} ms: ${report.reused} reused from the saved index, ${read} read, ${report.removed} removed; ${report.skipped.length} skipped, ${report.failed.length} failed`
  process.stderr.write(`workspace-search: ${line}\n`)
  for (const w of report.warnings) process.stderr.write(`workspace-search: ${escapeControls(w)}\n`)
}

async function main() {
  if (process.argv[2] === 'grep') return require('./grep.js').grep(process.argv.slice(3))
  const args = parse(process.argv.slice(2))
  if (args.info === 'help') return process.stdout.write(`${USAGE}\n`), 0
  if (args.info === 'version') return process.stdout.write(`${require('../package.json').version}\n`), 0
  // Before any indexing: a server started with such a glob would serve no files.
  const bad = badGlobs(args.folder, args.globs)
  if (bad.length) return refuseGlobs(bad)
  if (args.command === 'mcp') return require('./mcp.js').serve(args, { openWorkspace })
  return search(args)
}

/** Any error exits 2, as grep's: usage, an unreadable folder, a failed init or search. */
function fail(err) {
  const usage = err instanceof UsageError
  // Messages may quote a path or an argument; their own line breaks are kept.
  const message = (err && err.message ? err.message : String(err)).split('\n').map(escapeControls).join('\n')
  process.stderr.write(`workspace-search: ${message}${usage ? '\nTry "workspace-search --help".' : ''}\n`)
  process.exitCode = 2
}

// A reader that stops early (`| head`) is not an error: what is left to print goes nowhere, and the
// command ends as it would, its index saved (it exited at once, so `grep ... | head` over a large
// folder never kept its grep index, and `mcp` ended without saving). Another write error is one.
let readerGone = false
process.stdout.on('error', (err) => {
  if (readerGone || err.code === 'EPIPE') {
    readerGone = true
    return
  }
  fail(err)
  process.exit(2)
})
main().then(
  (code) => {
    if (typeof code === 'number') process.exitCode = code
  },
  fail,
)
