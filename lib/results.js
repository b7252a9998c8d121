// Search results from the flat values the addon hands over (src/types.rs:
// call arguments for a few results, one array for many): V8 builds object
// literals of one shape far faster than Node-API sets named properties one
// by one.
'use strict'

/**
 * Slots per result: id, content, score, lineRange start and end, metadata
 * (JSON text, or the value of its single string entry), bm25 and vector
 * scores, that single entry's key, a file-level result's line ranges
 * (`start,end,start,end...` as text), the reranker's score (a number)
 * or why there is none (a string), and where the content is a piece of a
 * longer line (1: cut at its start, 2: at its end, 3: both).
 */
const SLOTS = 12

/**
 * @typedef {{ start: number, end: number }} LineRange
 * @typedef {{ id: string, content: string, score: number, lineRange?: LineRange, lineRanges?: LineRange[], lineCut?: { start: boolean, end: boolean }, metadata?: Record<string, unknown>, scoreDetails: { bm25?: number, vector?: number, rerank?: number, rerankError?: string } }} Result
 */

/**
 * Results from the flat array; absent parts stay absent, as Mastra's.
 * @param {ReadonlyArray<any>} flat
 * @returns {Result[]}
 */
function results(flat) {
  const out = new Array(flat.length / SLOTS)
  for (let i = 0, j = 0; i < flat.length; i += SLOTS, j++) {
    /** @type {Partial<Result>} */
    const r = { id: flat[i], content: flat[i + 1], score: flat[i + 2] }
    if (flat[i + 3] !== undefined) r.lineRange = { start: flat[i + 3], end: flat[i + 4] }
    const key = flat[i + 8]
    if (key !== undefined) r.metadata = { [key]: flat[i + 5] }
    else if (flat[i + 5] !== undefined) r.metadata = JSON.parse(flat[i + 5])
    /** @type {Result['scoreDetails']} */
    const details = {}
    if (flat[i + 6] !== undefined) details.bm25 = flat[i + 6]
    if (flat[i + 7] !== undefined) details.vector = flat[i + 7]
    const rerank = flat[i + 10]
    if (typeof rerank === 'number') details.rerank = rerank
    else if (rerank !== undefined) details.rerankError = rerank
    r.scoreDetails = details
    if (flat[i + 9] !== undefined) r.lineRanges = rangesOf(flat[i + 9])
    const cut = flat[i + 11]
    if (cut !== undefined) r.lineCut = { start: (cut & 1) !== 0, end: (cut & 2) !== 0 }
    out[j] = /** @type {Result} */ (r)
  }
  return out
}

/**
 * `start,end,start,end...` as ranges.
 * @param {string} text
 * @returns {LineRange[]}
 */
function rangesOf(text) {
  const n = text.split(',').map(Number)
  const out = []
  for (let k = 0; k + 1 < n.length; k += 2) out.push({ start: n[k], end: n[k + 1] })
  return out
}

/**
 * `results` of the values passed as arguments (the addon's call for a
 * few results: no array to fill through Node-API).
 * @param {...any} flat
 * @returns {Result[]}
 */
function resultsOf(...flat) {
  return results(flat)
}

module.exports = { results, resultsOf, SLOTS }
