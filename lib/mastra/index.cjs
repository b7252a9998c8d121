// `require('workspace-search/mastra')`: everything @mastra/core/workspace
// exports, with its Workspace running search natively.
'use strict'

const { createWorkspaceClass, lastIndexReport, nativeWorkspace } = require('./workspace.js')

/** @returns {any} */
function requireMastra() {
  try {
    return require('@mastra/core/workspace')
  } catch (err) {
    const e = /** @type {NodeJS.ErrnoException} */ (err)
    if (e.code === 'MODULE_NOT_FOUND' && String(e.message).includes('@mastra/core')) {
      throw new Error('workspace-search/mastra needs @mastra/core (>=1.71.0 <2), an optional peer dependency: npm install @mastra/core', { cause: err })
    }
    throw err
  }
}

const mastra = requireMastra()
const version = require('@mastra/core/package.json').version

module.exports = { ...mastra, Workspace: createWorkspaceClass(mastra, version), lastIndexReport, nativeWorkspace }
