// What the addon calls back into JavaScript for, handed to it once when
// the package loads (index.js): the error classes it throws, the result
// builder, and the checks that are cheaper on this side of the boundary.
'use strict'

const {
  WorkspaceError,
  SearchNotAvailableError,
  WorkspaceNotReadyError,
  UnsupportedGrepPatternError,
  SnapshotConflictError,
  SnapshotStoreError,
  EmbedderError,
  VectorStoreError,
} = require('./errors.js')
const { results, resultsOf } = require('./results.js')
const { describe } = require('./describe.js')
const { jsonText } = require('./json.js')

/** The keys an `indexMany()` document may have. */
const DOC_FIELDS = ['path', 'content', 'type', 'mimeType', 'metadata', 'startLineOffset']

const errorClasses = { Error, TypeError, RangeError }

/**
 * A plain error of one of the built-in kinds.
 * @param {'Error' | 'TypeError' | 'RangeError'} kind
 * @param {string} message
 */
function makeError(kind, message) {
  return new errorClasses[kind](message)
}

/** A UTF-16 surrogate without its other half (String.prototype.isWellFormed is Node 20+). */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/

/**
 * indexMany's documents, checked and split into parallel arrays (cheap to
 * cross into Rust); `extras` lists the documents with more fields.
 * @param {unknown} docs
 * @returns {{ paths: string[], contents: string[], extras: number[] }}
 */
function splitDocs(docs) {
  if (!Array.isArray(docs)) throw new TypeError(`docs must be an array, got ${describe(docs)}`)
  const n = docs.length
  const paths = new Array(n)
  const contents = new Array(n)
  const extras = []
  for (let i = 0; i < n; i++) {
    const d = docs[i]
    if (d === null || typeof d !== 'object' || Array.isArray(d)) throw new TypeError(`docs[${i}] must be an object, got ${describe(d)}`)
    const { path, content } = d
    if (typeof path !== 'string' || path === '') throw new TypeError(`docs[${i}].path must be a non-empty string`)
    // (One with a lone surrogate would become another string in Rust: two paths, one document.)
    if (LONE_SURROGATE.test(path)) throw new TypeError(`docs[${i}].path must be a well-formed string, got one with a lone UTF-16 surrogate`)
    if (typeof content !== 'string') throw new TypeError(`docs[${i}].content must be a string`)
    paths[i] = path
    contents[i] = content
    for (const key in d) {
      if (key === 'path' || key === 'content' || d[key] === undefined) continue
      if (!DOC_FIELDS.includes(key)) throw new TypeError(`Unknown option '${key}' in docs[${i}] (expected one of: ${DOC_FIELDS.join(', ')})`)
      extras.push(i)
      break
    }
  }
  return { paths, contents, extras }
}

/**
 * The elements of a Set, or null for anything else.
 * @param {unknown} value
 * @returns {unknown[] | null}
 */
function setValues(value) {
  return value instanceof Set ? [...value] : null
}

/** The most entries an answer of the user's (tokens, a vector, a batch, scores) may hold at one level. */
const MAX_ANSWER_ENTRIES = 1 << 24

/**
 * A user tokenizer `(text) => string[]` applied to many texts in one call
 * from Rust (one boundary crossing per document, not per line).
 * @param {(text: string) => unknown} tokenizer
 * @returns {(texts: string[]) => string[][]}
 */
function tokenizeMany(tokenizer) {
  return (texts) =>
    texts.map((text) => {
      const tokens = tokenizer(text)
      if (!Array.isArray(tokens)) {
        throw new TypeError(`tokenize.tokenizer must return an array of strings, got ${tokens === null ? 'null' : typeof tokens}`)
      }
      if (tokens.length > MAX_ANSWER_ENTRIES) {
        throw new TypeError(`tokenize.tokenizer returned an array of ${tokens.length} entries, more than ${MAX_ANSWER_ENTRIES}`)
      }
      // (`Array.from` visits a sparse array's holes, as undefined elements; `map` left them holes.)
      return Array.from(tokens, String)
    })
}

/**
 * Hands `indexMany()`'s report to the error it rejects with, as `report`;
 * an error that refuses the property (frozen, or a Proxy whose trap
 * throws) carries none rather than leave the call unsettled.
 * @param {object} error
 * @param {unknown} report
 */
function attachReport(error, report) {
  try {
    /** @type {{ report?: unknown }} */ (error).report = report
  } catch {
    // (as documented: its `report` is missing)
  }
}

/**
 * The user's `onProgress` as the engine calls it. `call(event)` never
 * throws and leaves no promise rejected unhandled: the first failure (a
 * throw, or a rejection of the promise it answered, however late) is kept,
 * and the events after it are not sent. `answered()`, called as a flow
 * ends, throws that failure (the flow then rejects with it, as it was
 * thrown). One callback serves every flow, so a failure is never dropped:
 * it rejects the next flow to end; but the events of a flow that already
 * rejected are done with (their promises that reject later are its failure
 * again, not the next flow's).
 * @param {(event: unknown) => unknown} onProgress
 */
function progressCaller(onProgress) {
  let flow = 0
  /** The flows that rejected with a failure. @type {Set<number>} */
  const rejected = new Set()
  /** @type {{ error: unknown, of: number } | undefined} */
  let failure
  /** @param {number} of @param {unknown} error */
  const fail = (of, error) => {
    if (!failure && !rejected.has(of)) failure = { error, of }
  }
  return {
    /** @param {unknown} event */
    call(event) {
      if (failure) return
      const of = flow
      try {
        const answer = onProgress(event)
        if (answer !== null && (typeof answer === 'object' || typeof answer === 'function') && 'then' in answer) {
          Promise.resolve(answer).then(undefined, (error) => fail(of, error))
        }
      } catch (error) {
        fail(of, error)
      }
    },
    answered() {
      const failed = failure
      failure = undefined
      if (failed) rejected.add(failed.of).add(flow)
      flow++
      if (failed) throw failed.error
    },
  }
}

/**
 * What a user tokenizer does, for the persist fingerprint (src/construct.rs):
 * its source text (an edited function) and the tokens it gives for each of
 * core's probe texts (closures and bound functions, whose text is the same
 * whatever they do), or the message it throws on one.
 * @param {(text: string) => unknown} tokenizer
 * @param {string[]} probes
 * @returns {string}
 */
function tokenizerIdentity(tokenizer, probes) {
  const one = tokenizeMany(tokenizer)
  const tokens = probes.map((text) => {
    try {
      return one([text])[0]
    } catch (err) {
      return { threw: err instanceof Error ? String(err.message) : describe(err) }
    }
  })
  return JSON.stringify([Function.prototype.toString.call(tokenizer), tokens])
}

/** What storeCaller answers for a method the store does not have (src/store.rs). */
const MISSING_METHOD = 'workspace-search:missing-method'
/** How storeCaller's answer begins when `query` answered other than JSON data, the reason after it (src/store.rs). */
const BAD_ANSWER = 'workspace-search:bad-answer:'

/** `jsonText`'s refusal of a store's answer, told apart from what a getter of the answer threw. */
class BadAnswer extends Error {}

/**
 * A query's hits with a `NaN` score (PgVector's cosine of an all-zero
 * vector) given `null` instead, which JSON can carry: the engine scores
 * them 0, as its own store scores such a vector (crates/core/src/engine/store.rs).
 * Anything else is left for `jsonText` to check.
 * @param {unknown} answer
 */
function nanScoresAsNull(answer) {
  if (!Array.isArray(answer)) return answer
  const isNaNHit = (/** @type {unknown} */ h) => h !== null && typeof h === 'object' && !Array.isArray(h) && Number.isNaN(/** @type {{ score?: unknown }} */ (h).score)
  if (!answer.some(isNaNHit)) return answer
  return answer.map((h) => (isNaNHit(h) ? { .../** @type {object} */ (h), score: null } : h))
}

/**
 * Calls a vector store's methods with `this` bound to it, looking each one
 * up when it is called (as Mastra's `this.vectorStore.upsert(...)`), so that
 * a method replaced or spied on after construction is the one used. Its
 * answer is awaited as Mastra awaits it (a thenable that is not a native
 * promise included). Only `query`'s answer is read, handed over as checked
 * JSON text (a TypeError naming the path where it is not JSON data),
 * `listIndexes`' when it is a list of names, and `describeIndex`'s dimension; the others' answers are ignored, as Mastra ignores them, so that a store that
 * wrote and answered something odd is not taken for one that failed.
 * @param {Record<string, unknown>} store
 * @returns {(request: { method: string, args: unknown }) => Promise<string | null>}
 */
function storeCaller(store) {
  return async ({ method, args }) => {
    const f = store[method]
    if (typeof f !== 'function') return MISSING_METHOD
    const answer = await f.call(store, args)
    if (method === 'query') {
      try {
        return jsonText(answer === undefined ? null : nanScoresAsNull(answer), `vectorStore.query answer`, (why) => new BadAnswer(why))
      } catch (e) {
        if (e instanceof BadAnswer) return BAD_ANSWER + e.message
        throw e
      }
    }
    // The index names, when they are strings (else unknown: the caller deletes as before).
    if (method === 'listIndexes') return Array.isArray(answer) && answer.every((n) => typeof n === 'string') ? JSON.stringify(answer) : null
    // The size of the index's vectors, when it is a number (to say why a write or query was refused).
    if (method === 'describeIndex') {
      const dimension = answer !== null && typeof answer === 'object' ? /** @type {{ dimension?: unknown }} */ (answer).dimension : undefined
      return Number.isSafeInteger(dimension) ? JSON.stringify({ dimension }) : null
    }
    return null
  }
}

/**
 * `f` (the user's embedder or reranker) with its answer awaited as Mastra
 * awaits it (a thenable that is not a native promise included) and its
 * arrays copied into plain ones here, so that a getter or proxy that throws
 * rejects the call with what it threw, never inside the addon's reading.
 * @param {(...args: any[]) => unknown} f
 * @param {number} depth levels of arrays to copy: 1 for a vector or scores, 2 for a batch
 * @returns {(...args: any[]) => Promise<unknown>}
 */
function answerCaller(f, depth) {
  // A Float32Array is read as it is; another typed array (Float64Array) as numbers.
  /** @type {(v: unknown) => v is ArrayLike<unknown>} */
  const listLike = (v) => Array.isArray(v) || (ArrayBuffer.isView(v) && !(v instanceof Float32Array) && !(v instanceof DataView))
  /** @type {(v: unknown, d: number) => unknown} */
  const plain = (v, d) => {
    if (!(d > 0 && listLike(v))) return v
    const n = v.length
    // A sparse array's length costs nothing to set: copying 2^32 - 1 holes froze the thread.
    if (n > MAX_ANSWER_ENTRIES) throw new TypeError(`the answer is an array of ${n} entries; more than ${MAX_ANSWER_ENTRIES} is no vector, batch or list of scores`)
    const copy = []
    for (let i = 0; i < n; i++) {
      const e = v[i]
      copy.push(plain(e, d - 1))
      // Refused there (no vector, batch or score holds one): the rest is not copied. A
      // batch of vectors of 2^24 holes each filled gigabytes here, and froze the thread.
      if (e === undefined) break
    }
    return copy
  }
  return async (...args) => plain(await f(...args), depth)
}

/**
 * Calls a snapshot store (`persist: { store }`) for src/snapshot_store.rs,
 * its answers checked and put in one shape: `get` (of the bytes
 * `[start, end)` when given) answers `{ bytes: Buffer, etag }` or `null`; `put` `{ etag }` or `{ conflict: true }`.
 * @param {import('../index').SnapshotStore} store
 * @returns {(request: { method: string, key: string, bytes?: Buffer, ifMatch?: string, ifNoneMatch?: boolean, start?: number, end?: number }) => Promise<{ bytes?: Buffer, etag?: string, conflict?: boolean } | null>}
 */
function snapshotStoreCaller(store) {
  const etagOf = (/** @type {any} */ a, /** @type {string} */ what) => {
    if (!a || typeof a.etag !== 'string' || a.etag === '') throw new TypeError(`persist.store.${what} must resolve with a non-empty etag`)
    return a.etag
  }
  return async ({ method, key, bytes, ifMatch, ifNoneMatch, start, end }) => {
    if (method === 'get') {
      const got = await (typeof start === 'number' && typeof end === 'number' ? store.get(key, { start, end }) : store.get(key))
      // Only null says "no such object": an undefined (a forgotten return) is a mistake to report.
      if (got === null) return null
      if (!got || !(got.bytes instanceof Uint8Array)) throw new TypeError('persist.store.get must resolve to { bytes: Uint8Array, etag: string } or null')
      const etag = etagOf(got, 'get')
      return { bytes: Buffer.from(got.bytes.buffer, got.bytes.byteOffset, got.bytes.byteLength), etag }
    }
    if (method === 'put') {
      const options = ifMatch !== undefined && ifMatch !== null ? { ifMatch } : ifNoneMatch ? { ifNoneMatch: '*' } : {}
      const put = await store.put(key, /** @type {Buffer} */ (bytes), /** @type {any} */ (options))
      if (put && 'conflict' in put && put.conflict === true) return { conflict: true }
      return { etag: etagOf(put, 'put') }
    }
    if (method === 'delete') {
      // (Optional: a store without it keeps the parts saves replaced.)
      if (typeof store.delete !== 'function') return null
      await store.delete(key)
      return {}
    }
    throw new TypeError(`persist.store: no method ${method}`)
  }
}

/**
 * Compiles a grep pattern as Mastra's grep tool does (`g`, or `gi` when
 * not case-sensitive): an invalid one throws JavaScript's own SyntaxError.
 * @param {string} pattern
 * @param {boolean} caseSensitive
 */
function checkGrepPattern(pattern, caseSensitive) {
  new RegExp(pattern, caseSensitive ? 'g' : 'gi')
}

/**
 * Grep results (Mastra's FilesystemGrepResult[]) from src/grep.rs's flat
 * answer: per file a path and its match count; per match its line, column
 * and how many context lines come before and after it; every line (context
 * before, the match, context after, in order) in one string, cut at `ends`
 * (UTF-16 offsets).
 * @param {string[]} paths
 * @param {Uint32Array} counts
 * @param {Uint32Array} nums
 * @param {string} text
 * @param {Uint32Array} ends
 * @param {boolean} withContext
 */
function grepResults(paths, counts, nums, text, ends, withContext) {
  let piece = 0
  let at = 0
  const next = () => text.slice(at, (at = ends[piece++]))
  /** @param {number} n */
  const lines = (n) => {
    const out = new Array(n)
    for (let i = 0; i < n; i++) out[i] = next()
    return out
  }
  const files = new Array(paths.length)
  let m = 0
  for (let f = 0; f < paths.length; f++) {
    const matches = new Array(counts[f])
    for (let k = 0; k < matches.length; k++, m++) {
      const line = nums[4 * m]
      const column = nums[4 * m + 1]
      if (withContext) {
        const before = lines(nums[4 * m + 2])
        const lineText = next()
        matches[k] = { line, column, text: lineText, before, after: lines(nums[4 * m + 3]) }
      } else {
        matches[k] = { line, column, text: next() }
      }
    }
    files[f] = { path: paths[f], matches }
  }
  return files
}

module.exports = {
  checkGrepPattern,
  grepResults,
  UnsupportedGrepPatternError,
  SnapshotConflictError,
  SnapshotStoreError,
  EmbedderError,
  VectorStoreError,
  snapshotStoreCaller,
  storeCaller,
  answerCaller,
  WorkspaceError,
  SearchNotAvailableError,
  WorkspaceNotReadyError,
  makeError,
  results,
  resultsOf,
  describe,
  jsonText,
  splitDocs,
  setValues,
  tokenizeMany,
  tokenizerIdentity,
  progressCaller,
  attachReport,
}
