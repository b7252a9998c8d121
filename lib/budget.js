// Search results an agent can afford: one page of file-level results as
// text that never exceeds a token budget (estimated with tokenx, as Mastra
// estimates its tool output), best file first, each file a header and its
// best matching lines with a line of context; a cursor for the next page;
// and a memory of what a session was already shown, so that a later call
// refers to it in one line instead of showing it again. Used by the search
// tool of createWorkspaceTools, the MCP server's workspace_search and the
// command line's --max-tokens.
'use strict'

const crypto = require('node:crypto')

/** The budget when none is given: Mastra's DEFAULT_MAX_OUTPUT_TOKENS. */
const DEFAULT_MAX_TOKENS = 2000
/** The smallest budget accepted: room for a header, a line and the footer. */
const MIN_MAX_TOKENS = 100
const MAX_MAX_TOKENS = 100_000
/** Files one page considers at most (and topK's maximum). */
const MAX_FILES = 50
/** Search calls a session remembers what it showed for. */
const MEMORY_CALLS = 20

/**
 * How a page spends its budget (chosen on codeloc-dev with eval/budget.mjs;
 * docs/cli-and-mcp.md has the figures).
 * - share: each file may take the remaining budget divided by
 *   min(files left, share), so the best file gets the most and the budget
 *   reaches many files;
 * - hits: matching lines per file at most; context: lines each side;
 * - lineTokens: a longer line is elided around its first match.
 */
const PARAMS = Object.freeze({ share: 12, hits: 4, context: 1, lineTokens: 40 })

/** Control characters a terminal acts on: C0 but tab, DEL, C1 (U+0080-U+009F). */
const CONTROLS = /[\x00-\x08\x0a-\x1f\x7f-\x9f\u2028\u2029]/g

/**
 * `text` with its control characters written as `\xHH` (ESC as `\x1b`),
 * and the line and paragraph separators as `\u2028`, `\u2029` (readers
 * that break lines there would show an unnumbered line): a file holding
 * `\x1b[2J` shows it rather than clearing a screen. Every human- or
 * agent-readable output goes through it.
 * @param {string} text
 */
const escapeControls = (text) =>
  text.replace(CONTROLS, (c) => {
    const code = c.charCodeAt(0)
    return code > 0xff ? `\\u${code.toString(16)}` : `\\x${code.toString(16).padStart(2, '0')}`
  })

/**
 * @typedef {{ start: number, end: number }} LineRange
 * @typedef {{ id: string, content: string, score: number, lineRange?: LineRange, lineRanges?: LineRange[], lineCut?: { start: boolean, end: boolean }, metadata?: Record<string, unknown> }} Result
 * @typedef {(text: string) => number} Estimate
 * @typedef {(query: string, text: string) => Array<[number, number]>} Highlight
 */

/**
 * The file a result comes from: its source file for a chunk, that is when
 * its id is that file's chunk id (`path#chunk-N`; as the addon's
 * `chunk_source`: a `sourceFile` in a user's own metadata changes nothing).
 */
const fileOf = (/** @type {Result} */ r) => {
  const file = r.metadata?.sourceFile
  return typeof file === 'string' && r.id.startsWith(file) && /^#chunk-\d+$/.test(r.id.slice(file.length)) ? file : r.id
}

/** @type {Promise<Estimate> | undefined} */
let estimator
/**
 * tokenx's estimateTokenCount (an ES module, imported once).
 * @returns {Promise<Estimate>}
 */
function loadEstimator() {
  estimator ??= import('tokenx').then((m) => (text) => m.estimateTokenCount(text))
  return estimator
}

/** A bad cursor, or one from another search: the caller's mistake. */
class CursorError extends TypeError {}

/**
 * The part of a cursor that ties it to its search: a hash of the query and
 * of every option that changes the results (not the budget, not repeat).
 * @param {Record<string, unknown>} search
 */
function cursorKey(search) {
  const keys = Object.keys(search).sort()
  const json = JSON.stringify(keys.map((k) => [k, search[k] ?? null]))
  return crypto.createHash('sha256').update(json).digest('hex').slice(0, 8)
}

/** @param {number} skip @param {string} key */
const makeCursor = (skip, key) => `${skip}.${key}`

/**
 * The files a cursor skips.
 * @param {string | undefined} cursor
 * @param {string} key
 */
function readCursor(cursor, key) {
  if (cursor === undefined || cursor === '') return 0
  const m = /^(\d{1,9})\.([0-9a-f]{8})$/.exec(cursor)
  if (!m) throw new CursorError(`cursor ${JSON.stringify(cursor.slice(0, 40))} is not one this search gave; leave it out to start from the first page`)
  if (m[2] !== key) throw new CursorError('cursor belongs to another search (the query, mode, minScore, path or topK differ); repeat that search, or leave the cursor out to start again')
  return Number(m[1])
}

/**
 * What a session (an MCP connection, a tools instance) was shown: per
 * file, the lines shown with a hash of their text and the call that showed
 * them. A line counts as shown for MEMORY_CALLS calls, and only while its
 * text is the same at the same number: an edited file shows its new lines.
 */
class SearchMemory {
  constructor({ calls = MEMORY_CALLS } = {}) {
    this.horizon = calls
    this.call = 0
    /** @type {Map<string, Map<number, { hash: number, call: number }>>} */
    this.files = new Map()
  }

  /** A new call: forgets what is past the horizon. */
  begin() {
    this.call++
    if (this.call % this.horizon !== 0) return
    for (const [file, lines] of this.files) {
      for (const [n, seen] of lines) if (this.call - seen.call >= this.horizon) lines.delete(n)
      if (lines.size === 0) this.files.delete(file)
    }
  }

  /** @param {string} file @param {number} line @param {string} text */
  seen(file, line, text) {
    const s = this.files.get(file)?.get(line)
    return s !== undefined && this.call - s.call < this.horizon && s.hash === hash(text)
  }

  /** @param {string} file @param {number} line @param {string} text */
  remember(file, line, text) {
    let lines = this.files.get(file)
    if (!lines) this.files.set(file, (lines = new Map()))
    lines.set(line, { hash: hash(text), call: this.call })
  }
}

/** FNV-1a of a line's text (a collision only shows a line once more, or once less). */
function hash(/** @type {string} */ text) {
  let h = 0x811c9dc5
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193)
  return h >>> 0
}

/**
 * Spans of the query's words in `text` when the workspace has no
 * highlight(): letters and digits, case-insensitive, two or more long.
 * @type {Highlight}
 */
function wordSpans(query, text) {
  const words = new Set((query.toLowerCase().match(/[\p{L}\p{N}_]{2,}/gu) ?? []))
  /** @type {Array<[number, number]>} */
  const spans = []
  for (const m of text.matchAll(/[\p{L}\p{N}_]+/gu)) if (words.has(m[0].toLowerCase())) spans.push([m.index, m.index + m[0].length])
  return spans
}

/**
 * Results folded into one per file (best first, the others' ranges added),
 * for a workspace that does not group them itself.
 * @param {Result[]} results
 */
function byFile(results) {
  /** @type {Map<string, Result>} */
  const files = new Map()
  for (const r of results) {
    const f = fileOf(r)
    const first = files.get(f)
    if (!first) files.set(f, r)
    else if (r.lineRange) files.set(f, { ...first, lineRanges: [...(first.lineRanges ?? (first.lineRange ? [first.lineRange] : [])), r.lineRange] })
  }
  return [...files.values()]
}

/**
 * The pieces of the query to look for inside a long span (a whole CJK run
 * or a long identifier is one span): its words, lowercased, and the
 * character pairs of its CJK runs, longest first.
 * @param {string} query
 */
function queryPieces(query) {
  const pieces = new Set()
  for (const word of query.toLowerCase().match(/[\p{L}\p{N}_]+/gu) ?? []) {
    if (word.length >= 2) pieces.add(word)
    for (const run of word.match(/[\p{scx=Han}\p{scx=Hiragana}\p{scx=Katakana}\p{scx=Hangul}]+/gu) ?? []) {
      const chars = [...run]
      for (let i = 0; i + 1 < chars.length; i++) pieces.add(chars[i] + chars[i + 1])
    }
  }
  return [...pieces].sort((a, b) => b.length - a.length)
}

/**
 * Where in a span the query itself is: the earliest piece of it found in
 * the span's text, or the span's start.
 * @param {string} line
 * @param {[number, number]} span
 * @param {string[]} pieces
 * @returns {[number, number]}
 */
function focusIn(line, [a, b], pieces) {
  if (b - a <= 12) return [a, b]
  const text = line.slice(a, b).toLowerCase()
  let best = /** @type {[number, number]} */ ([a, Math.min(b, a + 12)])
  let at = Infinity
  for (const p of pieces) {
    const i = text.indexOf(p)
    if (i >= 0 && i < at) {
      at = i
      best = [a + i, a + i + p.length]
    }
  }
  return best
}

/** Index in `text` moved off the second half of a surrogate pair. */
const onBoundary = (/** @type {string} */ text, /** @type {number} */ i) => (i > 0 && i < text.length && /[\uDC00-\uDFFF]/.test(text[i]) && /[\uD800-\uDBFF]/.test(text[i - 1]) ? i + 1 : i)

/**
 * A line fitted to `limit` tokens: whole when it fits, otherwise a window
 * around `focus` (the first match, or the start) with `…` where it was cut.
 * Control characters escaped.
 * @param {string} text
 * @param {[number, number] | undefined} focus
 * @param {number} limit
 * @param {Estimate} estimate
 */
function fitLine(text, focus, limit, estimate) {
  const whole = escapeControls(text)
  if (estimate(whole) <= limit) return whole
  const [fs, fe] = focus ?? [0, 0]
  /** @param {number} width */
  const windowOf = (width) => {
    const room = Math.max(0, width - (fe - fs))
    let left = Math.max(0, fs - Math.floor(room / 3))
    let right = Math.min(text.length, left + width)
    left = Math.max(0, Math.min(left, right - width))
    left = onBoundary(text, left)
    right = Math.max(left, right - (onBoundary(text, right) !== right ? 1 : 0))
    return `${left > 0 ? '…' : ''}${escapeControls(text.slice(left, right))}${right < text.length ? '…' : ''}`
  }
  // The widest window within the limit (tokens grow with the width, near enough).
  let lo = 1
  let hi = Math.min(text.length, limit * 8)
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2)
    if (estimate(windowOf(mid)) <= limit) lo = mid
    else hi = mid - 1
  }
  return windowOf(lo)
}

/**
 * A path or a message cut to `limit` tokens in the middle.
 * @param {string} text
 * @param {number} limit
 * @param {Estimate} estimate
 */
function fitText(text, limit, estimate) {
  if (estimate(text) <= limit) return text
  let lo = 0
  let hi = text.length
  const cut = (/** @type {number} */ n) => {
    const head = onBoundary(text, Math.ceil(n * 0.6))
    const tail = onBoundary(text, text.length - (n - Math.ceil(n * 0.6)))
    return `${text.slice(0, head)}…${text.slice(Math.max(head, tail))}`
  }
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2)
    if (estimate(cut(mid)) <= limit) lo = mid
    else hi = mid - 1
  }
  return cut(lo)
}

/**
 * One file's lines, ready to be chosen from: the lines of its content
 * numbered as in the file, the matching ones ranked (lines with more of
 * the query's rarer words first).
 * @param {Result} r
 * @param {string} query
 * @param {Highlight} highlight
 */
function prepare(r, query, highlight) {
  const content = r.content ?? ''
  const lines = content.split('\n').map((l) => l.replace(/\s+$/, ''))
  const starts = [0]
  for (const line of content.split('\n')) starts.push(starts[starts.length - 1] + line.length + 1)
  /** @type {Map<number, Array<[number, number]>>} */
  const hits = new Map()
  /** @type {Map<number, Set<string>>} */
  const words = new Map()
  let at = 0
  for (const [a, b] of highlight(query, content)) {
    while (starts[at + 1] <= a) at++
    const end = Math.min(b, starts[at + 1] - 1) - starts[at]
    let lineHits = hits.get(at)
    let lineWords = words.get(at)
    if (!lineHits || !lineWords) {
      hits.set(at, (lineHits = []))
      words.set(at, (lineWords = new Set()))
    }
    lineHits.push([a - starts[at], end])
    lineWords.add(content.slice(a, b).toLowerCase())
  }
  const first = hits.size ? Math.min(...hits.keys()) : 0
  const last = hits.size ? Math.max(...hits.keys()) : 0
  // The first and last matching lines are lineRange's in the file's numbering. Where the index found
  // none (no lineRange) or they do not span what it spans, where the text lies in the file is not
  // known: no line is shown, as below, rather than every line misnumbered (a chunk far down a file was
  // numbered from 1). The same where the words were found by `wordSpans`, not by the workspace's own
  // highlight(), and the text would not start at line 1: it neither stems nor drops stopwords, so its
  // lines may span what lineRange spans and still be others.
  const offset = r.lineRange ? r.lineRange.start - first : 1
  if (hits.size && (!r.lineRange || r.lineRange.end - r.lineRange.start !== last - first || (highlight === wordSpans && offset !== 1))) {
    return { lines, hits: new Map(), ranked: [], offset: 1 }
  }
  /** @type {Map<string, number>} */
  const df = new Map()
  for (const set of words.values()) for (const w of set) df.set(w, (df.get(w) ?? 0) + 1)
  const weight = (/** @type {number} */ i) => {
    let s = 0
    for (const w of words.get(i) ?? []) s += Math.log(1 + lines.length / (df.get(w) ?? 1))
    return s
  }
  const ranked = [...hits.keys()].map((i) => ({ i, w: weight(i) })).sort((x, y) => y.w - x.w || x.i - y.i).map((x) => x.i)
  // No line holds the query's words (a vector hit, a file found by its name): no line is shown, as the
  // command line does: where the text lies in the file is not known, and lines numbered from 1 were wrong.
  return { lines, hits, ranked, offset }
}

/**
 * Renders a file's line `i` (numbered as in the file, `:` where it matches,
 * `-` around it), cut to `params.lineTokens` around its first match; each
 * line is rendered once.
 * @param {Result} r
 * @param {ReturnType<typeof prepare>} prepared
 * @param {ReturnType<typeof queryPieces>} pieces
 * @param {typeof PARAMS} params
 * @param {(text: string) => number} estimate
 */
function lineRenderer(r, { lines, hits, offset }, pieces, params, estimate) {
  /** @type {Map<number, string>} rendered lines by index */
  const rendered = new Map()
  return (/** @type {number} */ i) => {
    let line = rendered.get(i)
    if (line === undefined) {
      const spans = hits.get(i)
      let text = fitLine(lines[i], spans ? focusIn(lines[i], spans[0], pieces) : undefined, params.lineTokens, estimate)
      // A piece of a line longer than the chunks: the line goes on (never shown as the whole line).
      if (r.lineCut?.start && i === 0 && !text.startsWith('…')) text = `…${text}`
      if (r.lineCut?.end && i === lines.length - 1 && !text.endsWith('…')) text = `${text}…`
      line = `${i + offset}${spans ? ':' : '-'}${text}`
      rendered.set(i, line)
    }
    return line
  }
}

/**
 * The lines of one file to show: its best matching lines with
 * `params.context` lines around each, those shown before left out (not
 * replaced by lesser ones). The first matching line may use all that is
 * `left`; the others stay within `share`.
 * @param {{ lines: string[], ranked: number[], seen: (i: number) => boolean, render: (i: number) => string }} view
 * @param {{ left: number, share: number, headerCost: number, params: typeof PARAMS, estimate: (text: string) => number }} budget
 */
function chooseLines({ lines, ranked, seen, render }, { left, share, headerCost, params, estimate }) {
  /** @type {Set<number>} */
  const chosen = new Set()
  /** @type {number[]} lines that would show but were shown before */
  const before = []
  let cost = headerCost
  let taken = 0
  // A line not shown before that did not fit (the file is then not "shown before" as a whole).
  let unfit = false
  for (const i of ranked.slice(0, params.hits)) {
    if (seen(i)) {
      before.push(i)
      continue
    }
    /** @type {number[]} */
    const add = []
    for (let j = Math.max(0, i - params.context); j <= Math.min(lines.length - 1, i + params.context); j++) {
      if (chosen.has(j) || add.includes(j)) continue
      if (j !== i && (seen(j) || !lines[j].trim())) continue
      add.push(j)
    }
    const extra = add.reduce((s, j) => s + estimate(`\n${render(j)}`), 0)
    if (cost + extra > (taken === 0 ? left : share)) {
      const alone = estimate(`\n${render(i)}`)
      if (taken === 0 && add.length > 1 && cost + alone <= left) {
        chosen.add(i)
        cost += alone
        taken++
      }
      unfit = taken === 0
      break
    }
    for (const j of add) chosen.add(j)
    cost += extra
    taken++
  }
  return { chosen, before, cost, taken, unfit }
}

/**
 * One file's block on a page within `left` tokens (its lines beyond the
 * first within `share`): its text, what it costs and the lines it shows;
 * or, where it does not fit (`fits` false), the text that the page's first
 * file shows cut to fit.
 * @param {Result} r
 * @param {{
 *   query: string, highlight: Highlight, show: (path: string) => string, pieces: ReturnType<typeof queryPieces>,
 *   params: typeof PARAMS, estimate: (text: string) => number, repeat: boolean, memory: SearchMemory | null,
 * }} page
 * @param {{ left: number, share: number, first: boolean }} room
 * @returns {{ fits: boolean, text: string, cost: number, remember: Array<[string, number, string]> }}
 */
function fileBlock(r, page, { left, share, first }) {
  const { estimate, memory } = page
  const file = fileOf(r)
  const score = typeof r.score === 'number' ? r.score.toFixed(3) : ''
  const range = r.lineRange ? `:${r.lineRange.start}-${r.lineRange.end}` : ''
  const path = escapeControls(page.show(file))
  const header = `${path}${range}  ${score}`
  const separator = first ? '' : '\n\n'
  const prepared = prepare(r, page.query, page.highlight)
  const { lines, ranked, offset } = prepared
  const seen = (/** @type {number} */ i) => !page.repeat && memory !== null && memory.seen(file, i + offset, lines[i])
  const render = lineRenderer(r, prepared, page.pieces, page.params, estimate)
  const headerCost = estimate(`${separator}${header}`)
  const { chosen, before, cost, taken, unfit } = chooseLines(
    { lines, ranked, seen, render },
    { left, share, headerCost, params: page.params, estimate },
  )
  if (taken === 0 && before.length > 0 && !unfit) {
    // Shown before, nothing new: one line.
    const shownLines = before.map((i) => i + offset)
    const line = `${path}:${Math.min(...shownLines)}-${Math.max(...shownLines)}  ${score}  (shown before)`
    const lineCost = estimate(`${separator}${line}`)
    return { fits: lineCost <= left, text: line, cost: lineCost, remember: [] }
  }
  // No line of it fits (or not even its header): it starts the next page.
  if (cost > left || (taken === 0 && ranked.length > 0)) return { fits: false, text: header, cost, remember: [] }
  const order = [...chosen].sort((a, b) => a - b)
  const note = before.length ? `  (also shown before: ${Math.min(...before) + offset}-${Math.max(...before) + offset})` : ''
  const withNote = note && cost + estimate(note) <= share ? `${header}${note}` : header
  /** @type {Array<[string, number, string]>} */
  const remember = order.map((i) => [file, i + offset, lines[i]])
  const text = [withNote, ...order.map(render)].join('\n')
  return { fits: true, text, cost: cost + (withNote === header ? 0 : estimate(note)), remember }
}

/**
 * One page of results as text within `maxTokens` (tokenx's estimate of the
 * whole text). Results are searched with `search(n)` (the first n files,
 * best first); the page starts after the files `cursor` skips and ends
 * with the next cursor, or with "[no more results]".
 * @param {{
 *   query: string, maxTokens?: number, cursor?: string, repeat?: boolean, topK?: number,
 *   key: string, search: (n: number) => Promise<Result[]>, highlight?: Highlight,
 *   memory?: SearchMemory | null, show?: (path: string) => string, params?: Partial<typeof PARAMS>,
 *   nextHint?: (cursor: string) => string, signal?: AbortSignal,
 * }} request
 * @returns {Promise<{ text: string, files: Result[], next: string | null, tokens: number }>}
 */
async function budgetedPage(request) {
  const { query, key, search, memory = null, repeat = false } = request
  const maxTokens = request.maxTokens ?? DEFAULT_MAX_TOKENS
  const highlight = request.highlight ?? wordSpans
  const show = request.show ?? ((p) => p)
  const params = { ...PARAMS, ...request.params }
  const nextHint = request.nextHint ?? ((c) => `the same call with cursor "${c}"`)
  const pieces = queryPieces(query)
  const estimate = await loadEstimator()
  const skip = readCursor(request.cursor, key)
  const pageSize = Math.min(request.topK ?? MAX_FILES, MAX_FILES)
  const found = byFile(await search(skip + pageSize + 1))
  const candidates = found.slice(skip, skip + pageSize)
  const beyond = found.length > skip + pageSize
  memory?.begin()

  const done = '[no more results]'
  if (candidates.length === 0) {
    const text = skip === 0 ? `No results for "${fitText(escapeControls(query), maxTokens - 10, estimate)}".` : done
    return { text, files: [], next: null, tokens: estimate(text) }
  }
  /** @param {number} shown @param {string} next @param {boolean} full */
  const footerOf = (shown, next, full) =>
    full
      ? `[${shown} file${shown === 1 ? '' : 's'} shown, the page is full (${request.topK === undefined ? `at most ${MAX_FILES} files a page` : 'topK'}); next page: ${nextHint(next)}]`
      : `[stopped at maxTokens ${maxTokens} after ${shown} file${shown === 1 ? '' : 's'}; next page: ${nextHint(next)}]`
  // Room kept for the longest footer (every count at its widest).
  const reserve = Math.max(estimate(`\n\n${footerOf(MAX_FILES, makeCursor(999_999_999, key), false)}`), estimate(`\n\n${footerOf(MAX_FILES, makeCursor(999_999_999, key), true)}`), estimate(`\n\n${done}`))
  const room = maxTokens - reserve

  /** @type {string[]} */
  const blocks = []
  /** @type {Result[]} */
  const files = []
  /** @type {Array<[string, number, string]>} */
  const toRemember = []
  let used = 0
  const page = { query, highlight, show, pieces, params, estimate, repeat, memory }
  for (const [n, r] of candidates.entries()) {
    const left = room - used
    const share = Math.floor(left / Math.min(candidates.length - n, params.share))
    const block = fileBlock(r, page, { left, share, first: blocks.length === 0 })
    if (!block.fits) {
      // The first file of a page always shows, cut to fit: a page moves on (a cursor to itself would never end).
      if (files.length === 0) {
        const fitted = fitText(block.text, Math.max(1, left), estimate)
        blocks.push(fitted)
        files.push(r)
        used += estimate(fitted)
      }
      break
    }
    blocks.push(block.text)
    toRemember.push(...block.remember)
    files.push(r)
    used += block.cost
  }
  const nextOf = () => (files.length < candidates.length || beyond ? makeCursor(skip + files.length, key) : null)
  const pageText = () => {
    const next = nextOf()
    return `${blocks.join('\n\n')}\n\n${next ? footerOf(files.length, next, files.length === candidates.length) : done}`
  }
  let text = pageText()
  // The sum of the parts bounds the whole; checked all the same.
  while (estimate(text) > maxTokens && blocks.length > 1) {
    blocks.pop()
    files.pop()
    text = pageText()
  }
  // A call the client gave up on (MCP's notifications/cancelled) is never delivered: what it would
  // have shown is not remembered, or the retry would say "(shown before)" for lines never seen.
  if (memory && !request.signal?.aborted) {
    const kept = new Set(files.map(fileOf))
    for (const [f, n, t] of toRemember) if (kept.has(f)) memory.remember(f, n, t)
  }
  return { text, files, next: nextOf(), tokens: estimate(text) }
}

module.exports = {
  budgetedPage,
  cursorKey,
  readCursor,
  makeCursor,
  loadEstimator,
  SearchMemory,
  CursorError,
  escapeControls,
  fitLine,
  fileOf,
  DEFAULT_MAX_TOKENS,
  MIN_MAX_TOKENS,
  MAX_MAX_TOKENS,
  MAX_FILES,
  MEMORY_CALLS,
  PARAMS,
}
