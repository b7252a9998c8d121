'use strict'
// workspace-search grep PATTERN [FOLDER] [options]: Workspace.grep() with
// ripgrep's output (`path:line:column:text`, context lines `path-line-text`,
// `--` between groups) and grep's exit status (0 match, 1 none, 2 error).

const { parseArgs } = require('node:util')
const fs = require('node:fs')
const { Workspace, UnsupportedGrepPatternError } = require('..')
const { displayPath, escapeControls } = require('./format.js')
const { UsageError, explain, checkFolder } = require('./args.js')

const USAGE = `Usage: workspace-search grep PATTERN [FOLDER] [options]

Prints the lines of the files in FOLDER (default ".") that match PATTERN, a
JavaScript regular expression, as "path:line:column:text" (one match per
line; column counted in UTF-16 code units from 1). Files are those Mastra's
grep tool reads: text files by extension, names starting with "." left out,
the root .gitignore applied.

Options:
  -i, --ignore-case        match case-insensitively
  -C, --context N          N lines of context around each match
  -m, --max-count N        at most N matching lines per file
  --glob GLOB              only files matching GLOB (relative to FOLDER)
  --hidden                 also names starting with "."
  --all-files              every file, not only text extensions
  --json                   one JSON object per file: { path, matches: [{ line,
                           column, text, before?, after? }] } (column from 0)
  --no-persist             keep no index between runs (default: the trigram
                           index is kept under ~/.cache/workspace-search, so
                           the next grep of FOLDER reads only what can match)
  -h, --help               show this help

Exit status: 0 with a match, 1 with none, 2 on an error (as grep).`

const OPTIONS = {
  'ignore-case': { type: 'boolean', short: 'i' },
  context: { type: 'string', short: 'C' },
  'max-count': { type: 'string', short: 'm' },
  glob: { type: 'string' },
  hidden: { type: 'boolean' },
  'all-files': { type: 'boolean' },
  json: { type: 'boolean' },
  'no-persist': { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
}

/** A whole number >= min from an option's text. */
function whole(value, name, min) {
  const n = Number(value)
  if (!Number.isInteger(n) || n < min) throw new UsageError(`${name} must be a whole number of at least ${min}, got ${value}`)
  return n
}

function parse(argv) {
  let parsed
  try {
    parsed = parseArgs({ args: argv, allowPositionals: true, options: OPTIONS })
  } catch (err) {
    throw new UsageError(explain(err))
  }
  const { values, positionals } = parsed
  if (values.help) return { help: true }
  if (positionals.length < 1 || positionals.length > 2) throw new UsageError('expected a pattern and at most one folder')
  const [pattern, folder = '.'] = positionals
  checkFolder(folder)
  return {
    pattern,
    folder,
    options: {
      caseSensitive: !values['ignore-case'],
      contextLines: values.context === undefined ? 0 : whole(values.context, '--context', 0),
      maxCount: values['max-count'] === undefined ? undefined : whole(values['max-count'], '--max-count', 1),
      path: values.glob ?? '.',
      includeHidden: Boolean(values.hidden),
      allFiles: Boolean(values['all-files']),
    },
    json: Boolean(values.json),
    persist: !values['no-persist'],
  }
}

/**
 * ripgrep's lines for one file's matches: each match's context, merged with
 * its neighbours' into one group (a later match prints as a match).
 * @param {string} show the path as printed
 * @param {Array<{ line: number, column: number, text: string, before?: string[], after?: string[] }>} matches
 * @param {(text: string, focus?: [number, number]) => string} [fit] a line as printed (its control characters escaped; the MCP server also cuts long ones around the match)
 */
function fileLines(show, matches, fit = (text) => escapeControls(text)) {
  const out = []
  let printed = 0 // the last line number printed
  matches.forEach((m, k) => {
    const before = m.before ?? []
    const first = m.line - before.length
    // Groups are separated only when there is context (as ripgrep).
    if (printed > 0 && m.before !== undefined && first > printed + 1) out.push('--')
    before.forEach((text, i) => {
      if (first + i > printed) out.push(`${show}-${first + i}-${fit(text)}`)
    })
    out.push(`${show}:${m.line}:${m.column + 1}:${fit(m.text, [m.column, m.column + 1])}`)
    printed = m.line
    const next = matches[k + 1]?.line ?? Infinity
    ;(m.after ?? []).forEach((text, i) => {
      const n = m.line + 1 + i
      if (n < next) {
        out.push(`${show}-${n}-${fit(text)}`)
        printed = n
      }
    })
  })
  return out
}

/** Runs the command; resolves the exit status. */
async function grep(argv, out = process.stdout) {
  const args = parse(argv)
  if (args.help) return out.write(`${USAGE}\n`), 0
  // One index per folder (the id names the cache folder beside the search's).
  const workspace = new Workspace({ id: 'grep', filesystem: { basePath: args.folder }, ...(args.persist ? { persist: true } : {}) })
  try {
    const files = await workspace.grep(args.pattern, args.options)
    const show = displayPath(args.folder)
    for (const [i, file] of files.entries()) {
      if (args.json) {
        out.write(`${JSON.stringify(file)}\n`)
        continue
      }
      if (i > 0 && args.options.contextLines > 0) out.write('--\n')
      const text = fileLines(escapeControls(show(file.path)), file.matches)
      out.write(`${text.join('\n')}\n`)
    }
    // As grep: what could not be read is said on stderr, and is an error (status 2) even beside matches.
    const unreadable = workspace.stats().grep?.unreadable ?? 0
    if (unreadable > 0) process.stderr.write(`workspace-search grep: ${unreadable} file${unreadable === 1 ? '' : 's'} or folder${unreadable === 1 ? '' : 's'} could not be read (permission denied or gone)\n`)
    // The first grep of a folder scans it; its index is built after, and kept for the next run.
    while (args.persist && workspace.stats().grep?.building !== false) await new Promise((r) => setTimeout(r, 20))
    return unreadable > 0 ? 2 : files.length ? 0 : 1
  } catch (err) {
    if (err instanceof SyntaxError) throw new UsageError(`invalid pattern: ${err.message}`)
    if (err instanceof UnsupportedGrepPatternError) throw new Error(err.message)
    throw err
  } finally {
    await workspace.destroy()
  }
}

module.exports = { grep, fileLines, USAGE }
