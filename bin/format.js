// How the command line prints results: `path:start-end  score` (the file's
// path, chunks included, so editors and terminals open it at the line),
// then the lines of the match with the matching words highlighted from the
// engine's own tokens, every line elided to the width it may take.
'use strict'

/** Lines shown per result before eliding the middle. */
const MAX_LINES = 8
/** Columns a line may take when stdout is not a terminal. */
const PIPE_WIDTH = 200

// escapeControls writes control characters as `\xHH` (ESC as `\x1b`), for
// every human-readable output: a file holding `\x1b[2J` or
// `\x1b]0;title\x07` shows them rather than clearing the screen or
// retitling the window. Hex rather than U+FFFD so the reader sees which
// byte it was. Applied on a pipe too, since a pipe into `less -R` or
// through `tee` still reaches a terminal; --json output is JSON and left
// as it is. fileOf is the file a result comes from (its source file for a
// chunk). Both are shared with the agent-facing text (lib/budget.js).
const { escapeControls, fileOf } = require('../lib/budget.js')

/**
 * Sends the global console to stderr (each method as it is, on a console of
 * stderr): stdout carries results (or MCP's protocol messages) only, so what
 * the user's embedder or store logs must not land between them.
 */
function consoleToStderr() {
  const toStderr = new console.Console(process.stderr)
  for (const [name, method] of Object.entries(toStderr)) if (typeof method === 'function') console[name] = method.bind(toStderr)
}

/**
 * How the command line prints a file's path, as ripgrep does: the folder
 * argument as the user wrote it (`../x`, `/abs/dir`, `./x`) joined with the
 * file's path inside it, so the path opens from the working directory;
 * `.` (the working directory) gives the plain relative path. Not
 * normalised (`a/../b` stays), since `a` may be a symbolic link.
 * @param {string} folder the folder argument
 * @returns {(relative: string) => string}
 */
function displayPath(folder, { sep = require('node:path').sep } = {}) {
  const native = sep === '/' ? (p) => p : (p) => p.replaceAll('/', sep)
  const trimmed = folder.replace(sep === '/' ? /\/+$/ : /[\\/]+$/, '')
  // An id that is the file's absolute path (found through an absolute
  // --glob inside the folder, as Mastra names it) is printed as it is.
  const spellings = folderSpellings(folder, sep)
  const inFolder = (id) => spellings.some((s) => id.startsWith(`${s}/`))
  // (Any other leading `/` is the folder's, as Mastra reads `/sub/*.md`.)
  const inside = (id) => native(id.replace(/^\/+/, ''))
  if (trimmed === '.') return (id) => (inFolder(id) ? native(id) : inside(id))
  // "/" (or "C:\\") keeps its root separator.
  const base = trimmed === '' || /^[A-Za-z]:$/.test(trimmed) ? folder.slice(0, trimmed.length + 1) : `${trimmed}${sep}`
  return (id) => (inFolder(id) ? native(id) : `${base}${inside(id)}`)
}

/**
 * `folder` absolute, `/`-separated, as given and with links resolved (the
 * scan takes a glob through its real path too).
 * @param {string} folder
 * @param {string} sep
 */
function folderSpellings(folder, sep) {
  const spellings = [require('node:path').resolve(folder)]
  try {
    spellings.push(require('node:fs').realpathSync(folder))
  } catch {}
  return spellings.map((s) => s.replaceAll(sep, '/'))
}

/**
 * The path of the file `id` inside `folder`, `/`-separated: an absolute id
 * loses the folder's spelling, any other its leading `/` and `./`; `.` and
 * `..` applied as the scan applies them (`x/../docs/a.md` is `docs/a.md`).
 * @param {string} folder
 * @returns {(id: string) => string}
 */
function pathInside(folder, { sep = require('node:path').sep } = {}) {
  const spellings = folderSpellings(folder, sep)
  return (id) => {
    const spelling = spellings.find((s) => id.startsWith(`${s}/`))
    const inside = spelling === undefined ? id : id.slice(spelling.length + 1)
    return require('node:path').posix.normalize(inside).replace(/^(\.?\/)+/, '')
  }
}

/** East Asian wide and fullwidth characters (and emoji), which a terminal draws two columns wide. */
const WIDE = /[\u1100-\u115f\u2e80-\u303e\u3041-\u33ff\u3400-\u4dbf\u4e00-\u9fff\ua000-\ua4cf\uac00-\ud7a3\uf900-\ufaff\ufe30-\ufe4f\uff00-\uff60\uffe0-\uffe6\u{1f300}-\u{1f64f}\u{1f900}-\u{1f9ff}\u{20000}-\u{3fffd}]/u
/** Marks drawn over the character before them, and joiners: no column of their own. */
const ZERO = /[\p{Mn}\p{Me}\u200b-\u200f]/u

/** The columns a character takes on a terminal. */
const columnsOf = (/** @type {string} */ char) => (ZERO.test(char) ? 0 : WIDE.test(char) ? 2 : 1)

/** The columns `text` takes on a terminal. */
function columns(text) {
  let n = 0
  for (const char of text) n += columnsOf(char)
  return n
}

/**
 * The end of `text` in at most `width` terminal columns, `…` before it
 * when cut; whole characters (an emoji cut in half showed as �).
 * @param {string} text
 * @param {number} width
 */
function keepEnd(text, width) {
  if (columns(text) <= width) return text
  const chars = [...text]
  let [tail, used] = [chars.length, 0]
  while (tail > 0 && used + columnsOf(chars[tail - 1]) <= width - 1) used += columnsOf(chars[--tail])
  return `…${chars.slice(tail).join('')}`
}

/**
 * `text` cut to `width` terminal columns with `…` in the middle (CJK and
 * emoji count two: a CJK line took twice the terminal's width, and wrapped).
 * @param {string} text
 * @param {number} width
 */
function elide(text, width) {
  if (columns(text) <= width) return text
  const chars = [...text]
  const keep = Math.max(1, width - 1)
  const headRoom = Math.ceil(keep * 0.7)
  let [head, used] = [0, 0]
  while (head < chars.length && used + columnsOf(chars[head]) <= headRoom) used += columnsOf(chars[head++])
  let [tail, tailUsed] = [chars.length, 0]
  while (tail > head && tailUsed + columnsOf(chars[tail - 1]) <= keep - used) tailUsed += columnsOf(chars[--tail])
  return `${chars.slice(0, head).join('')}…${chars.slice(tail).join('')}`
}

/**
 * The result's lines to show, numbered as in its file, with the spans to
 * highlight: the first and last lines of `lineRange` and the lines between
 * holding a matching word. Read from the result's content, not the disk.
 * @param {{ content: string, lineRange?: { start: number, end: number }, lineCut?: { start: boolean, end: boolean } }} r
 * @param {Array<[number, number]>} spans matching words, offsets in `r.content`
 */
function matchLines(r, spans) {
  if (!r.lineRange || spans.length === 0) return []
  const lines = r.content.split('\n')
  const starts = [0]
  for (const line of lines) starts.push(starts.at(-1) + line.length + 1)
  const lineOf = (offset) => starts.findLastIndex((s) => s <= offset)
  const hit = new Map()
  for (const [a, b] of spans) {
    const i = lineOf(a)
    if (!hit.has(i)) hit.set(i, [])
    hit.get(i).push([a - starts[i], Math.min(b, starts[i + 1] - 1) - starts[i]])
  }
  // The first line with a match is lineRange.start in the file's numbering.
  const first = Math.min(...hit.keys())
  const offset = r.lineRange.start - first
  // A piece of a line longer than the chunks says that the line goes on (it is not the whole line).
  const shown = [...hit.keys()].sort((a, b) => a - b).map((i) => {
    const before = i === 0 && r.lineCut?.start ? '…' : ''
    const after = i === lines.length - 1 && r.lineCut?.end ? '…' : ''
    const spans = hit.get(i).map(([a, b]) => [a + before.length, b + before.length])
    return { number: i + offset, text: `${before}${lines[i].replace(/\r$/, '')}${after}`, spans }
  })
  if (shown.length <= MAX_LINES) return shown
  return [...shown.slice(0, MAX_LINES - 3), null, ...shown.slice(-2)]
}

/**
 * A printer for results on `stream`: colours only on a terminal and never
 * with NO_COLOR; lines fitted to the terminal (or PIPE_WIDTH).
 */
function printer(stream, { show = (p) => p } = {}) {
  const tty = Boolean(stream.isTTY)
  const colour = tty && !process.env.NO_COLOR // no-color.org: set and not empty
  const width = tty ? stream.columns || 80 : PIPE_WIDTH
  const paint = (code, text) => (colour ? `\x1b[${code}m${text}\x1b[0m` : text)
  const line = (text) => stream.write(`${elide(text, width - 1)}\n`)
  return {
    header(r) {
      const range = r.lineRange ? `:${r.lineRange.start}-${r.lineRange.end}` : ''
      stream.write(`${paint('35', elide(`${escapeControls(show(fileOf(r)))}${range}`, width - 9))}  ${r.score.toFixed(3)}\n`)
    },
    /** A numbered line with its matching words highlighted (elided first, so spans are kept only where whole). */
    numbered({ number, text, spans }) {
      const prefix = `${String(number).padStart(6)}  `
      const room = width - 1 - prefix.length
      const shown = escapeControls(text)
      if (!colour || columns(shown) > room) return line(`${prefix}${shown}`)
      // Escaped piece by piece: the spans are offsets in the raw text.
      let out = ''
      let at = 0
      for (const [a, b] of spans) {
        out += escapeControls(text.slice(at, a)) + paint('1;31', escapeControls(text.slice(a, b)))
        at = b
      }
      stream.write(`${prefix}${out}${escapeControls(text.slice(at))}\n`)
    },
    gap: () => line('        …'),
    blank: () => stream.write('\n'),
  }
}

/**
 * One result as a JSON line: a stable shape for scripts. `file` is the path
 * as printed (`show`, the folder argument joined: `displayPath`), `path` the
 * file's path inside the folder (`inside`: `pathInside`), `id` the result's.
 */
function jsonLine(r, show = (p) => p, inside = (p) => p) {
  return JSON.stringify({
    file: show(fileOf(r)),
    path: inside(fileOf(r)),
    id: r.id,
    start: r.lineRange?.start ?? null,
    end: r.lineRange?.end ?? null,
    score: r.score,
    bm25: r.scoreDetails?.bm25 ?? null,
    vector: r.scoreDetails?.vector ?? null,
    content: r.content,
  })
}

module.exports = { elide, keepEnd, columns, matchLines, printer, jsonLine, fileOf, displayPath, pathInside, escapeControls, consoleToStderr, PIPE_WIDTH }
