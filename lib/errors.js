// The error classes of the public API: real `Error` subclasses, so that
// `instanceof`, `name` and stack traces behave as Mastra's. The addon
// throws them through lib/runtime.js.
'use strict'

/** Base class of the errors with a `code`: `INVALID_SEARCH_CONFIG` for a bad search configuration (as Mastra). */
class WorkspaceError extends Error {
  /**
   * @param {string} message
   * @param {string} code
   * @param {string | undefined | null} [workspaceId]
   */
  constructor(message, code, workspaceId) {
    super(message)
    this.name = 'WorkspaceError'
    /** @readonly */
    this.code = code
    /** @readonly @type {string | undefined} */
    this.workspaceId = workspaceId ?? undefined
  }
}

/** Search or indexing on a workspace without `bm25` (or vector search): code `NO_SEARCH`. */
class SearchNotAvailableError extends WorkspaceError {
  /** @param {string | undefined | null} [workspaceId] */
  constructor(workspaceId) {
    super('Workspace does not have search configured (enable bm25 or provide vectorStore + embedder)', 'NO_SEARCH', workspaceId)
    this.name = 'SearchNotAvailableError'
  }
}

/** Any call but the capability getters, `status` and `destroy()` after `destroy()`: code `NOT_READY`. */
class WorkspaceNotReadyError extends WorkspaceError {
  /**
   * @param {string} workspaceId
   * @param {string} status
   */
  constructor(workspaceId, status) {
    super(`Workspace is not ready (status: ${status})`, 'NOT_READY', workspaceId)
    this.name = 'WorkspaceNotReadyError'
    /** The workspace's status when the call was refused or cut short. */
    this.status = status
  }
}

/**
 * A grep pattern that is valid JavaScript but cannot run natively with the
 * same matches (code `UNSUPPORTED_GREP_PATTERN`); run it in JavaScript instead.
 * Through `workspace-search/mastra`, Mastra's own `UnsupportedGrepPatternError`
 * is thrown, and Mastra's grep tool falls back to its walk.
 */
class UnsupportedGrepPatternError extends WorkspaceError {
  /**
   * @param {string} message
   * @param {string | undefined | null} [workspaceId]
   */
  constructor(message, workspaceId) {
    super(message, 'UNSUPPORTED_GREP_PATTERN', workspaceId)
    this.name = 'UnsupportedGrepPatternError'
  }
}

/**
 * `persist: { store }`: another workspace saved the same snapshot first
 * (code `SNAPSHOT_CONFLICT`). This workspace keeps its state in memory and
 * saves nothing more; attach again (`init()` on a new Workspace) to take the
 * other writer's state.
 */
class SnapshotConflictError extends WorkspaceError {
  /**
   * @param {string} message
   * @param {string | undefined | null} [workspaceId]
   */
  constructor(message, workspaceId) {
    super(message, 'SNAPSHOT_CONFLICT', workspaceId)
    this.name = 'SnapshotConflictError'
  }
}

/**
 * `persist`: the snapshot store failed, timed out (`storeTimeoutMs`) or
 * answered something else than asked, or a save to the persist directory
 * failed (code `SNAPSHOT_STORE`). The call that met it fails; the
 * workspace's state stays.
 */
class SnapshotStoreError extends WorkspaceError {
  /**
   * @param {string} message
   * @param {string | undefined | null} [workspaceId]
   * @param {{ cause?: unknown }} [options] `cause`: what the store threw, when it did
   */
  constructor(message, workspaceId, options) {
    super(message, 'SNAPSHOT_STORE', workspaceId)
    this.name = 'SnapshotStoreError'
    if (options && 'cause' in options) this.cause = options.cause
  }
}

/**
 * The embedder did not answer within `embedTimeoutMs`, or answered other
 * than one vector of finite numbers per text, all of one size, the size the
 * index holds (code `EMBEDDER`; `cause`: what a vector store threw on
 * vectors of another size). What the embedder itself threw reaches the
 * caller as it was.
 */
class EmbedderError extends WorkspaceError {
  /**
   * @param {string} message
   * @param {string | undefined | null} [workspaceId]
   * @param {{ cause?: unknown }} [options]
   */
  constructor(message, workspaceId, options) {
    super(message, 'EMBEDDER', workspaceId)
    this.name = 'EmbedderError'
    if (options && 'cause' in options) this.cause = options.cause
  }
}

/**
 * The vector store did not answer within `vectorStoreTimeoutMs`, or its
 * `query` answered other than `Array<{ id, score, metadata? }>` of JSON
 * data (code `VECTOR_STORE`). What the store itself threw reaches the
 * caller as it was.
 */
class VectorStoreError extends WorkspaceError {
  /**
   * @param {string} message
   * @param {string | undefined | null} [workspaceId]
   * @param {{ cause?: unknown }} [options]
   */
  constructor(message, workspaceId, options) {
    super(message, 'VECTOR_STORE', workspaceId)
    this.name = 'VectorStoreError'
    if (options && 'cause' in options) this.cause = options.cause
  }
}

module.exports = {
  WorkspaceError,
  SearchNotAvailableError,
  WorkspaceNotReadyError,
  UnsupportedGrepPatternError,
  SnapshotConflictError,
  SnapshotStoreError,
  EmbedderError,
  VectorStoreError,
}
