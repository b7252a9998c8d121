// Mastra's `SearchEngine` interface (what its Workspace, skills and tools
// call) over this package's native Workspace: every method runs in the
// addon. Mastra 1.71's methods: index, indexMany, remove, countByPrefix,
// removeByPrefix, removeSource, clear, search, canBM25/canVector/canHybrid,
// bm25Index.
'use strict'

/**
 * @typedef {import('../../index').Workspace} NativeWorkspace
 * @typedef {{ id: string, content: string, metadata?: Record<string, unknown>, startLineOffset?: number }} IndexDocument
 * @typedef {import('../../index').SearchOptions} SearchOptions
 * @typedef {import('../../index').SearchResult} SearchResult
 */

/** Mastra's SearchEngine default `topK`. */
const DEFAULT_TOP_K = 10

/** The prefixes of the documents Mastra's skills index (`skill:`, and `skill-scope:` for a scoped view). */
const SKILL_PREFIXES = ['skill:', 'skill-scope:']

/**
 * Metadata without `undefined` values (Mastra's Workspace passes
 * `{ type: undefined, mimeType: undefined, ...metadata }`); absent when empty.
 * @param {Record<string, unknown> | undefined} metadata
 * @returns {Record<string, unknown> | undefined}
 */
function definedMetadata(metadata) {
  if (metadata === undefined || metadata === null) return undefined
  /** @type {Record<string, unknown>} */
  const out = {}
  for (const [key, value] of Object.entries(metadata)) if (value !== undefined) out[key] = value
  return Object.keys(out).length > 0 ? out : undefined
}

/** @param {IndexDocument} doc */
function indexOptions(doc) {
  return { metadata: definedMetadata(doc.metadata), startLineOffset: doc.startLineOffset }
}

class NativeSearchEngine {
  /** @type {NativeWorkspace} */
  #native

  /** @type {(err: unknown) => unknown} */
  #translate

  /**
   * @param {NativeWorkspace} native
   * @param {(err: unknown) => unknown} [translate] this package's errors as Mastra's classes (errors.js)
   */
  constructor(native, translate = (err) => err) {
    this.#native = native
    this.#translate = translate
  }

  /**
   * `promise`, its rejection translated.
   * @template T
   * @param {Promise<T>} promise
   * @returns {Promise<T>}
   */
  #mapped(promise) {
    return promise.catch((err) => {
      throw this.#translate(err)
    })
  }

  /** A document of Mastra's skills was indexed (in this process). */
  skillsIndexed = false

  /** @param {IndexDocument} doc */
  async index(doc) {
    if (SKILL_PREFIXES.some((p) => doc.id.startsWith(p))) this.skillsIndexed = true
    await this.#mapped(this.#native.index(doc.id, doc.content, indexOptions(doc)))
  }

  /**
   * Many documents in one native call (embedder batched across them).
   * Mastra's `concurrency`/`stopOnError` options do not apply: writes are
   * all or nothing per unit, and the first failure rejects.
   * @param {IndexDocument[]} docs
   */
  async indexMany(docs) {
    await this.#mapped(this.#native.indexMany(docs.map((d) => ({ path: d.id, content: d.content, ...indexOptions(d) }))))
  }

  /**
   * Removes the document `id` (and, as `removeSource`, chunks of a file
   * indexed under that path; skills' documents have none).
   * @param {string} id
   */
  async remove(id) {
    await this.#mapped(this.#native.unindex(id))
  }

  /** @param {string} prefix */
  countByPrefix(prefix) {
    try {
      return this.#native.countByPrefix(prefix)
    } catch (err) {
      throw this.#translate(err)
    }
  }

  /** @param {string} prefix */
  async removeByPrefix(prefix) {
    await this.#mapped(this.#native.removeByPrefix(prefix))
  }

  /**
   * Removes a file's document and its `#chunk-N` documents, and on a store
   * that outlives the process its vectors by `sourceFile`; then, as
   * Mastra's, every document whose id starts with `<sourceId>#chunk-`
   * (chunk ids given to `index()` are no file's chunks).
   * @param {string} sourceId
   */
  async removeSource(sourceId) {
    await this.#mapped(this.#native.unindex(sourceId))
    await this.#mapped(this.#native.removeByPrefix(`${sourceId}#chunk-`))
  }

  /**
   * Synchronous in Mastra: the native clear takes its place in the write
   * order now (later writes land after it) and settles on its own.
   */
  clear() {
    if (this.#native.status === 'destroyed') return
    const clearing = this.#native.clear().catch(() => {})
    this.#clearing = clearing
    clearing.then(() => {
      if (this.#clearing === clearing) this.#clearing = undefined
    })
  }

  /** The last clear() until it is done: searches wait for it, as they follow Mastra's synchronous clear. @type {Promise<void> | undefined} */
  #clearing

  /**
   * @param {string} query
   * @param {SearchOptions} [options]
   * @returns {Promise<SearchResult[]>}
   */
  async search(query, options = {}) {
    if (this.#clearing !== undefined) await this.#clearing
    return this.#mapped(this.#native.search(query, { ...options, topK: options.topK ?? DEFAULT_TOP_K }))
  }

  get canBM25() {
    return this.#native.canBM25
  }

  get canVector() {
    return this.#native.canVector
  }

  get canHybrid() {
    return this.#native.canHybrid
  }

  /** Mastra's JavaScript BM25 index does not exist here: the index is native. */
  get bm25Index() {
    return undefined
  }
}

/** The methods Mastra's Workspace, skills and tools call on their engine. */
const ENGINE_METHODS = ['index', 'indexMany', 'remove', 'countByPrefix', 'removeByPrefix', 'removeSource', 'clear', 'search']

module.exports = { NativeSearchEngine, ENGINE_METHODS, SKILL_PREFIXES, definedMetadata }
