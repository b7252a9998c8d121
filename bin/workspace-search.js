#!/usr/bin/env node
'use strict'
// workspace-search <folder> "<query>" [--top-k N] [--json] [--glob PATTERN]...
// Indexes a folder with BM25 and prints the ranked results.

const { parseArgs } = require('node:util')
const fs = require('node:fs')
const path = require('node:path')
const { Workspace, LocalFilesystem } = require('..')
const { progressBar } = require('./progress.js')

const USAGE = `Usage: workspace-search <folder> "<query>" [options]

Indexes the files of <folder> (honouring .gitignore) and prints the best
BM25 matches for <query> as "path:start-end  score" and the matching lines.

Options:
  --top-k N          number of results (default 5)
  --glob PATTERN     index only files matching PATTERN (repeatable; default: the whole folder)
  --json             print the results as JSON
  --no-gitignore     index files that .gitignore excludes too
  -h, --help         show this help`

/** Lines shown per result before eliding the middle. */
const MAX_LINES = 8

function fail(message, code = 2) {
  process.stderr.write(`workspace-search: ${message}\n`)
  process.exit(code)
}

function parse(argv) {
  let parsed
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      options: {
        'top-k': { type: 'string' },
        glob: { type: 'string', multiple: true },
        json: { type: 'boolean' },
        'no-gitignore': { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
      },
    })
  } catch (err) {
    fail(`${err.message}\n\n${USAGE}`)
  }
  const { values, positionals } = parsed
  if (values.help) {
    process.stdout.write(`${USAGE}\n`)
    process.exit(0)
  }
  if (positionals.length !== 2) fail(`expected a folder and a query\n\n${USAGE}`)
  const topK = values['top-k'] === undefined ? 5 : Number(values['top-k'])
  if (!Number.isInteger(topK) || topK < 0) fail(`--top-k must be an integer >= 0, got ${values['top-k']}`)
  const [folder, query] = positionals
  if (!fs.existsSync(folder) || !fs.statSync(folder).isDirectory()) fail(`not a folder: ${folder}`)
  return { folder, query, topK, globs: values.glob ?? [], json: Boolean(values.json), gitignore: !values['no-gitignore'] }
}

/**
 * The lines of a result that hold a query word, read from its file: the
 * first and last lines of `lineRange` (where the engine found query tokens)
 * and the lines between them that contain a query word.
 */
function matchingLines(folder, result, words) {
  if (!result.lineRange) return []
  const file = result.metadata?.sourceFile ?? result.id
  let text
  try {
    text = fs.readFileSync(path.join(folder, file), 'utf8')
  } catch {
    return []
  }
  const lines = text.split('\n')
  const { start, end } = result.lineRange
  const numbered = []
  for (let n = start; n <= end && n <= lines.length; n++) {
    const line = lines[n - 1].replace(/\r$/, '')
    const lower = line.toLowerCase()
    if (n === start || n === end || words.some((w) => lower.includes(w))) numbered.push(`${String(n).padStart(6)}  ${line}`)
  }
  if (numbered.length <= MAX_LINES) return numbered
  return [...numbered.slice(0, MAX_LINES - 3), '        …', ...numbered.slice(-2)]
}

async function main() {
  const args = parse(process.argv.slice(2))
  const progress = progressBar()
  const workspace = new Workspace({
    filesystem: new LocalFilesystem({ basePath: args.folder }),
    bm25: true,
    autoIndexPaths: args.globs.length ? args.globs : ['.'],
    respectGitignore: args.gitignore,
    onProgress: progress.onProgress,
  })
  let report
  try {
    report = await workspace.init()
  } finally {
    progress.stop()
  }
  const results = await workspace.search(args.query, { topK: args.topK })
  if (args.json) {
    process.stdout.write(`${JSON.stringify({ results, indexed: report.indexed, skipped: report.skipped, failed: report.failed }, null, 2)}\n`)
    return
  }
  if (results.length === 0) {
    process.stderr.write(`No results for "${args.query}" (${report.indexed} files indexed).\n`)
    return
  }
  const words = args.query.toLowerCase().split(/[^\p{L}\p{N}_]+/u).filter((w) => w.length >= 2)
  for (const r of results) {
    const range = r.lineRange ? `:${r.lineRange.start}-${r.lineRange.end}` : ''
    process.stdout.write(`${r.id}${range}  ${r.score.toFixed(3)}\n`)
    for (const line of matchingLines(args.folder, r, words)) process.stdout.write(`${line}\n`)
    process.stdout.write('\n')
  }
}

// A reader that stops early (`| head`) is not an error.
process.stdout.on('error', (err) => {
  if (err.code === 'EPIPE') process.exit(0)
  throw err
})
main().catch((err) => fail(err && err.message ? err.message : String(err), 1))
