// --glob checked before a workspace is made. The engine's scan refuses a
// glob that leads out of the folder or is not a glob, but only in init()'s
// report: the search command read it there after indexing, and an MCP
// server, indexing in the background, served a workspace of no files. The
// engine answers with the scan's own rules and words (`refused_entries`),
// without walking the folder.
'use strict'

const binding = require('../binding.js')

/**
 * The --glob values the scan of `folder` would refuse, with its reasons
 * ("outside basePath", "outside basePath (symbolic link)", "invalid glob:
 * ..."), in the order given.
 * @param {string} folder
 * @param {string[]} globs
 * @returns {Array<{ glob: string, reason: string }>}
 */
function badGlobs(folder, globs) {
  if (globs.length === 0) return []
  return binding.__refusedPaths(folder, globs).map(([glob, reason]) => ({ glob, reason }))
}

module.exports = { badGlobs }
