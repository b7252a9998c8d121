// How a value reads in an error message ("a string", "the number 3",
// "an array"...). The addon calls this too, so that messages read the same
// whether JavaScript or Rust found the mistake.
'use strict'

/**
 * @param {unknown} v
 * @returns {string}
 */
function describe(v) {
  if (v === null) return 'null'
  if (Array.isArray(v)) return 'an array'
  switch (typeof v) {
    case 'undefined':
      return 'undefined'
    case 'number':
      return Number.isNaN(v) ? 'NaN' : `the number ${v}`
    case 'boolean':
      return `a boolean (${v})`
    case 'object':
      return 'an object'
    default:
      return `a ${typeof v}`
  }
}

module.exports = { describe }
