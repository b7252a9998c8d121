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
  -C, --context N          N lines of context around each match (at most
                           10000)
  -m, --max-count N        at most N matching lines per file
  --glob GLOB              only files matching GLOB (relative to FOLDER; once:
                           one glob names several, "{src/**/*.ts,*.md}")
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
  // Taken as a list so that a second --glob is refused rather than silently
  // replacing the first: grep() takes one glob (a brace list names several).
  glob: { type: 'string', multiple: true },
  hidden: { type: 'boolean' },
  'all-files': { type: 'boolean' },
  json: { type: 'boolean' },
  'no-persist': { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
}

/** Context lines grep() gives at most (it caps larger values without a word). */
const MAX_CONTEXT = 10_000

/** A whole number >= min (and <= max when given) from an option's text. */
function whole(value, name, min, max = Infinity) {
  const n = Number(value)
  if (!Number.isInteger(n) || n < min || n > max) {
    const range = max === Infinity ? `of at least ${min}` : `from ${min} to ${max}`
    throw new UsageError(`${name} must be a whole number ${range}, got ${value}`)
  }
  return n
}

/** The one --glob given (grep() takes one path or glob), or '.'. */
function onlyGlob(globs = []) {
  if (globs.length > 1) throw new UsageError(`--glob can be given once to grep, got ${globs.length}: write one glob that names them all, such as "{${globs.join(',')}}"`)
  return globs[0] ?? '.'
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
      contextLines: values.context === undefined ? 0 : whole(values.context, '--context', 0, MAX_CONTEXT),
      maxCount: values['max-count'] === undefined ? undefined : whole(values['max-count'], '--max-count', 1),
      path: onlyGlob(values.glob),
      includeHidden: Boolean(values.hidden),
      allFiles: Boolean(values['all-files']),
      // Each context line once: by default every match carries its own copy of
      // its context, and -C 100 over files of many matches took gigabytes.
      contextOnce: true,
    },
    json: Boolean(values.json),
    persist: !values['no-persist'],
  }
}

/**
 * ripgrep's lines for one file's matches: each match's context, merged with
 * its neighbours' into one group (a later match prints as a match). Takes
 * grep()'s matches with or without `contextOnce`: a line given twice prints
 * once.
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

/**
 * One file's matches each with all its context lines, as grep() gives them
 * without `contextOnce` (a line between two matches in both), rebuilt from
 * `contextOnce`'s: --json prints them so. Lines are shared, not copied, and
 * only one file's at a time.
 * @param {Array<{ line: number, column: number, text: string, before?: string[], after?: string[] }>} matches
 * @param {number} contextLines
 */
function fullContext(matches, contextLines) {
  if (contextLines === 0) return matches
  const lines = new Map()
  for (const m of matches) {
    const before = m.before ?? []
    before.forEach((text, i) => lines.set(m.line - before.length + i, text))
    lines.set(m.line, m.text)
    ;(m.after ?? []).forEach((text, i) => lines.set(m.line + 1 + i, text))
  }
  // Each line within contextLines of a match is in the map (the file's last line ends an `after`).
  const span = (from, to) => {
    const out = []
    for (let n = from; n <= to && lines.has(n); n++) out.push(lines.get(n))
    return out
  }
  return matches.map((m) => ({ ...m, before: span(Math.max(1, m.line - contextLines), m.line - 1), after: span(m.line + 1, m.line + contextLines) }))
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
        out.write(`${JSON.stringify({ ...file, matches: fullContext(file.matches, args.options.contextLines) })}\n`)
        continue
      }
      if (i > 0 && args.options.contextLines > 0) out.write('--\n')
      const text = fileLines(escapeControls(show(file.path)), file.matches)
      out.write(`${text.join('\n')}\n`)
    }
    // As grep: what could not be read is said on stderr, and is an error (status 2) even beside matches.
    const unreadable = workspace.stats().grep?.unreadable ?? 0
    if (unreadable > 0) {
      const what = unreadable === 1 ? '1 file or folder' : `${unreadable} files or folders`
      // grep() counts a link to a file outside FOLDER here too: it does not read through it, as Mastra's grep does not.
      process.stderr.write(`workspace-search grep: ${what} could not be read (permission denied, gone, a link out of the folder, or a name not in UTF-8)\n`)
    }
    // The first grep of a folder scans it; its index is built after, and kept for the next run.
    while (args.persist && workspace.stats().grep?.building !== false) await new Promise((r) => setTimeout(r, 20))
    return unreadable > 0 ? 2 : files.length ? 0 : 1
  } catch (err) {
    if (err instanceof SyntaxError) throw new UsageError(`invalid pattern: ${err.message}`)
    if (err instanceof UnsupportedGrepPatternError) throw new Error(err.message)
    // The answer is held whole, and bounded: said in this command's own terms (the API's named its options).
    const tooLarge = err instanceof RangeError && /^grep\(\): (the answer would hold more than .*? of them \(matched and context\))/.exec(err.message)
    if (tooLarge) throw new Error(`${tooLarge[1]}: narrow the pattern, the folder or --glob, or lower -C or -m`)
    throw err
  } finally {
    await workspace.destroy()
  }
}

module.exports = { grep, fileLines, USAGE }
