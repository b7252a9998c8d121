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
 * @param {string | undefined} workspaceId the native workspace's: only its own errors are translated
 *   (one of another workspace, thrown by the user's embedder or store, passes as it is)
 * @returns {(err: unknown) => unknown}
 */
function toMastraError(mastra, workspaceId) {
  return (err) => {
    if (!(err instanceof ours.WorkspaceError) || err.workspaceId !== workspaceId) return err
    // (Classes Mastra has no counterpart of pass as they are.)
    if (
      err instanceof ours.SnapshotStoreError ||
      err instanceof ours.SnapshotConflictError ||
      err instanceof ours.EmbedderError ||
      err instanceof ours.VectorStoreError
    ) {
      return err
    }
    let mapped
    if (err instanceof ours.WorkspaceNotReadyError) {
      mapped = new mastra.WorkspaceNotReadyError(err.workspaceId ?? '', err.status)
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
