// What the commands share about their arguments: the usage error (the
// message ends with a pointer to --help) and parseArgs' errors reworded as
// a person reads them.
'use strict'

class UsageError extends Error {}

/** A parseArgs error as a person reads it. */
function explain(err) {
  const m = String(err.message)
  const unknown = m.match(/Unknown option '([^']+)'/)
  if (unknown) return `unknown option ${unknown[1]}`
  const missing = m.match(/Option '(?:-\w, )?(--[\w-]+)(?: <value>)?' argument (?:missing|is ambiguous)/)
  if (missing) return `${missing[1]} needs a value (write --name=value for a value starting with -)`
  return m
}

module.exports = { UsageError, explain }
