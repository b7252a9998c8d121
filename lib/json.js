// The one door for JSON-like values into the addon (metadata, filters, what
// a vector store answers): checked here, then handed over as JSON text.
// Bounded depth and cycle checks mean no recursion in the addon ever sees
// an unbounded value; only plain data passes, so nothing is silently
// altered (a Date, Map or class instance would be).
'use strict'

const { describe } = require('./describe.js')

/** Deepest nesting accepted: far above real metadata and filters. */
const MAX_DEPTH = 64
/** The most entries an array in JSON data (metadata, a filter's `$in`) may hold (napi-rs reads at most as many values of one). */
const MAX_ARRAY = 1_000_000

/** A UTF-16 surrogate without its pair: no Unicode text, and JSON text cannot carry it to the addon. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/

/**
 * @param {unknown} value
 * @returns {string}
 */
function kindOf(value) {
  if (typeof value !== 'object' || value === null) return describe(value)
  const name = Object.getPrototypeOf(value)?.constructor?.name
  return name ? `a ${name}` : 'an object'
}

/** Characters of a caller's string shown in a message, at most. */
const SHOWN = 80

/**
 * A caller's string as a message shows it: quoted, control characters
 * escaped, cut at `SHOWN` characters with its length said (a model's
 * 1 MB field name came back whole in the error, with raw escapes).
 * @param {string} s
 * @returns {string}
 */
function quoted(s) {
  if (s.length <= SHOWN) return JSON.stringify(s)
  return `${JSON.stringify(s.slice(0, SHOWN))}... (${s.length} characters)`
}

/**
 * The path of `key` below `at` in a message: `.key` for a plain name, else quoted.
 * @param {string} at
 * @param {string} key
 * @returns {string}
 */
function keyPath(at, key) {
  return /^[A-Za-z_$][\w$]{0,79}$/.test(key) ? `${at}.${key}` : `${at}[${quoted(key)}]`
}

/**
 * Checks `value` (plain objects, arrays, strings, finite numbers, booleans,
 * null; `undefined` properties dropped as JSON.stringify drops them) and
 * returns it as JSON text. Throws a TypeError naming the path (or what
 * `refuse` makes of that message).
 * @param {unknown} value
 * @param {string} name what the value is, for messages (e.g. "metadata")
 * @param {(message: string) => Error} [refuse] the error a value that is not JSON data throws
 * @returns {string}
 */
function jsonText(value, name, refuse = (message) => new TypeError(message)) {
  /** @type {object[]} */
  const ancestors = []
  /**
   * @param {unknown} v
   * @param {string} at
   */
  const check = (v, at) => {
    if (typeof v === 'string') {
      if (LONE_SURROGATE.test(v)) throw refuse(`${at} holds a lone UTF-16 surrogate: not valid Unicode text`)
      return
    }
    if (v === null || typeof v === 'boolean') return
    if (typeof v === 'number') {
      if (!Number.isFinite(v)) throw refuse(`${at} must be a finite number, got ${describe(v)}`)
      return
    }
    if (typeof v !== 'object') throw refuse(`${at} must be JSON data, got ${describe(v)}`)
    if (ancestors.includes(v)) throw refuse(`${at} refers back to itself (a cycle): not JSON data`)
    if (ancestors.length >= MAX_DEPTH) throw refuse(`${name} is nested more than ${MAX_DEPTH} levels deep`)
    ancestors.push(v)
    if (Array.isArray(v)) {
      // A sparse array's length costs nothing to set: 2^32 - 1 holes froze the thread here.
      if (v.length > MAX_ARRAY) throw refuse(`${at} is an array of ${v.length} entries, more than ${MAX_ARRAY}`)
      for (let i = 0; i < v.length; i++) if (v[i] !== undefined) check(v[i], `${at}[${i}]`)
    } else {
      const proto = Object.getPrototypeOf(v)
      if (proto !== Object.prototype && proto !== null) throw refuse(`${at} must be a plain object or array, got ${kindOf(v)}`)
      for (const key of Object.keys(v)) {
        if (LONE_SURROGATE.test(key)) throw refuse(`${at} has a key holding a lone UTF-16 surrogate: not valid Unicode text`)
        const child = /** @type {Record<string, unknown>} */ (v)[key]
        if (child !== undefined) check(child, keyPath(at, key))
      }
    }
    ancestors.pop()
  }
  check(value, name)
  return JSON.stringify(value)
}

module.exports = { jsonText, quoted, MAX_DEPTH }
