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
  const DOC_FIELDS = ['path', 'content', 'type', 'mimeType', 'metadata', 'startLineOffset']
  const describe = (v) =>
    v === null ? 'null' : Array.isArray(v) ? 'an array' : typeof v === 'number' ? (Number.isNaN(v) ? 'NaN' : `the number ${v}`) : typeof v === 'object' ? 'an object' : typeof v === 'undefined' ? 'undefined' : `a ${typeof v}`
  return {
    WorkspaceError,
    SearchNotAvailableError,
    WorkspaceNotReadyError,
    makeError(kind, message) {
      return new errorClasses[kind](message)
    },
    // Search results from the flat array types.rs builds (8 slots each:
    // id, content, score, lineRange start and end, metadata as JSON text,
    // bm25 and vector scores); absent parts stay absent, as Mastra's.
    results(flat) {
      const out = new Array(flat.length >> 3)
      for (let i = 0, j = 0; i < flat.length; i += 8, j++) {
        const r = { id: flat[i], content: flat[i + 1], score: flat[i + 2] }
        if (flat[i + 3] !== undefined) r.lineRange = { start: flat[i + 3], end: flat[i + 4] }
        if (flat[i + 5] !== undefined) r.metadata = JSON.parse(flat[i + 5])
        const details = {}
        if (flat[i + 6] !== undefined) details.bm25 = flat[i + 6]
        if (flat[i + 7] !== undefined) details.vector = flat[i + 7]
        r.scoreDetails = details
        out[j] = r
      }
      return out
    },
    // indexMany's documents, checked and split into parallel arrays (cheap
    // to cross into Rust); `extras` lists the documents with more fields.
    splitDocs(docs) {
      if (!Array.isArray(docs)) throw new TypeError(`docs must be an array, got ${describe(docs)}`)
      const n = docs.length
      const paths = new Array(n)
      const contents = new Array(n)
      const extras = []
      for (let i = 0; i < n; i++) {
        const d = docs[i]
        if (d === null || typeof d !== 'object' || Array.isArray(d)) throw new TypeError(`docs[${i}] must be an object, got ${describe(d)}`)
        const { path, content } = d
        if (typeof path !== 'string' || path === '') throw new TypeError(`docs[${i}].path must be a non-empty string`)
        if (typeof content !== 'string') throw new TypeError(`docs[${i}].content must be a string`)
        paths[i] = path
        contents[i] = content
        for (const key in d) {
          if (key === 'path' || key === 'content' || d[key] === undefined) continue
          if (!DOC_FIELDS.includes(key)) throw new TypeError(`Unknown option '${key}' in docs[${i}] (expected one of: ${DOC_FIELDS.join(', ')})`)
          extras.push(i)
          break
        }
      }
      return { paths, contents, extras }
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
