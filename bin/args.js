// What the commands share about their arguments: the usage error (the
// message ends with a pointer to --help) and parseArgs' errors reworded as
// a person reads them.
'use strict'

const fs = require('node:fs')

class UsageError extends Error {}

/** A parseArgs error as a person reads it. */
function explain(err) {
  const m = String(err.message)
  const unknown = m.match(/Unknown option '([^']+)'/)
  if (unknown) return `unknown option ${unknown[1]}`
  const missing = m.match(/Option '(?:-\w, )?(--[\w-]+)(?: <value>)?' argument (?:missing|is ambiguous)/)
  if (missing) return `${missing[1]} needs a value (write --name=value for a value starting with -)`
  // A short option alone (`-C -1`): parseArgs names it without its long form.
  const short = m.match(/Option '(-\w)' argument (?:missing|is ambiguous)/)
  if (short) return `${short[1]} needs a value (write ${short[1]}VALUE for a value starting with -)`
  return m
}

/**
 * Throws a UsageError unless `folder` is a folder. Node.js hands a program
 * its arguments as UTF-8 text: a name that is not UTF-8 arrives with U+FFFD
 * in place of its bytes and cannot be opened, which is said as such
 * (rather than "not a folder" about a folder that is there).
 */
function checkFolder(folder) {
  if (fs.existsSync(folder) && fs.statSync(folder).isDirectory()) return
  if (folder.includes('\uFFFD')) {
    throw new UsageError(`${folder}: the name is not valid UTF-8, and Node.js cannot pass such a name to a program`)
  }
  throw new UsageError(`not a folder: ${folder}`)
}

/**
 * init()'s warnings that --index-dir DIR cannot keep the index (a file, a
 * folder of other files): the search runs, but nothing is saved, which the
 * user asked for by name and is told without --stats. The default cache
 * folder failing costs only the next run's reuse, and stays with --stats.
 * @param {{ warnings: string[] }} report
 * @param {{ persist: boolean | { dir: string } }} args
 */
function indexDirWarnings(report, args) {
  if (typeof args.persist !== 'object') return []
  return report.warnings.filter((w) => /^persist: .* cannot be used \(.*; nothing is saved$/.test(w))
}

module.exports = { UsageError, explain, checkFolder, indexDirWarnings }
