// JavaScript pieces of the addon, evaluated once per module load by
// src/lib.rs: the error classes (real `Error` subclasses, so `instanceof`,
// `name` and stack traces behave as Mastra's) and two small helpers.
(function () {
  class WorkspaceError extends Error {
    constructor(message, code, workspaceId) {
      super(message)
      this.name = 'WorkspaceError'
      this.code = code
      this.workspaceId = workspaceId ?? undefined
    }
  }
  class SearchNotAvailableError extends WorkspaceError {
    constructor(workspaceId) {
      super('Workspace does not have search configured (enable bm25 or provide vectorStore + embedder)', 'NO_SEARCH', workspaceId)
      this.name = 'SearchNotAvailableError'
    }
  }
  class WorkspaceNotReadyError extends WorkspaceError {
    constructor(workspaceId, status) {
      super(`Workspace is not ready (status: ${status})`, 'NOT_READY', workspaceId)
      this.name = 'WorkspaceNotReadyError'
    }
  }
  const errorClasses = { Error, TypeError, RangeError }
  return {
    WorkspaceError,
    SearchNotAvailableError,
    WorkspaceNotReadyError,
    makeError(kind, message) {
      return new errorClasses[kind](message)
    },
    // The elements of a Set, or null for anything else.
    setValues(value) {
      return value instanceof Set ? [...value] : null
    },
    // A user tokenizer `(text) => string[]` applied to many texts in one
    // call from Rust (one boundary crossing per document, not per line).
    tokenizeMany(tokenizer) {
      return (texts) =>
        texts.map((text) => {
          const tokens = tokenizer(text)
          if (!Array.isArray(tokens)) {
            throw new TypeError(`tokenize.tokenizer must return an array of strings, got ${tokens === null ? 'null' : typeof tokens}`)
          }
          return tokens.map(String)
        })
    },
  }
})()
