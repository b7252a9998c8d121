// Search results from the flat values the addon hands over (src/types.rs:
// call arguments for a few results, one array for many): V8 builds object
// literals of one shape far faster than Node-API sets named properties one
// by one.
'use strict'

/**
 * Slots per result: id, content, score, lineRange start and end, metadata
 * (JSON text, or the value of its single string entry), bm25 and vector
 * scores, and that single entry's key.
 */
const SLOTS = 9

/**
 * @typedef {{ id: string, content: string, score: number, lineRange?: { start: number, end: number }, metadata?: Record<string, unknown>, scoreDetails: { bm25?: number, vector?: number } }} Result
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
    r.scoreDetails = details
    out[j] = /** @type {Result} */ (r)
  }
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
