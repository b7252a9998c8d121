// This package's own errors, through workspace-search/mastra, as Mastra's
// classes of the same name: the entry exports Mastra's classes, so that a
// `catch (e) { if (e instanceof WorkspaceNotReadyError) ... }` written
// against its imports catches them (the native engine throws the root
// entry's). Any other value (what the user's embedder, store or callback
// threw, a snapshot store's errors, which Mastra has no class for) passes
// as it is.
'use strict'

const ours = require('../errors.js')

/**
 * @param {any} mastra `@mastra/core/workspace`
 * @returns {(err: unknown) => unknown}
 */
function toMastraError(mastra) {
  return (err) => {
    if (!(err instanceof ours.WorkspaceError) || err instanceof ours.SnapshotStoreError || err instanceof ours.SnapshotConflictError) return err
    let mapped
    if (err instanceof ours.WorkspaceNotReadyError) {
      const status = /\(status: ([a-z]+)\)/.exec(err.message)?.[1] ?? 'destroyed'
      mapped = new mastra.WorkspaceNotReadyError(err.workspaceId ?? '', status)
    } else if (err instanceof ours.SearchNotAvailableError) {
      mapped = new mastra.SearchNotAvailableError()
    } else if (err instanceof ours.UnsupportedGrepPatternError) {
      return err // (the grep hook throws Mastra's own, with its arguments)
    } else {
      mapped = new mastra.WorkspaceError(err.message, err.code, err.workspaceId)
    }
    Object.defineProperty(mapped, 'cause', { value: err, configurable: true, writable: true })
    return mapped
  }
}

module.exports = { toMastraError }
