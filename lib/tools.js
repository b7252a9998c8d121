// createWorkspaceTools(workspace): Mastra's two search tools for agents,
// the search tool's answer kept within a token budget (lib/budget.js), or
// Mastra's own text with `{ maxTokens: false }`. Each input schema is a
// Standard Schema (`~standard` with `validate` and a JSON Schema), which both
// Mastra's Agent and the AI SDK validate without a wrapper and without zod.
'use strict'

const { quoted } = require('./json.js')
const { natives } = require('./natives.js')
const { budgetedPage, cursorKey, SearchMemory, DEFAULT_MAX_TOKENS, MIN_MAX_TOKENS, MAX_MAX_TOKENS, MAX_FILES } = require('./budget.js')

const PREFIX = 'mastra_workspace'

/**
 * @typedef {import('../index').WorkspaceTools} WorkspaceTools
 * @typedef {{ type: 'string' | 'number' | 'integer' | 'boolean' | 'object', description: string, default?: unknown, enum?: readonly string[], minimum?: number, maximum?: number, additionalProperties?: object }} FieldSpec
 * @typedef {{ message: string, path: PropertyKey[] }} Issue
 */

/** @param {unknown} v */
const kind = (v) => (v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v)

/**
 * A Standard Schema for a flat object whose fields are described by a
 * JSON Schema `properties` map (type string/number/integer/boolean/object,
 * enum, minimum and maximum, default).
 * @template T
 * @param {Record<string, FieldSpec>} properties
 * @param {string[]} required
 * @returns {import('../index').ToolInputSchema<T>}
 */
function objectSchema(properties, required) {
  const json = { type: 'object', properties, required, additionalProperties: false }
  /**
   * @param {unknown} input
   * @returns {{ value: T, issues?: undefined } | { issues: Issue[] }}
   */
  const validate = (input) => {
    if (kind(input) !== 'object') return { issues: [{ message: `Expected an object, got ${kind(input)}`, path: [] }] }
    const value = /** @type {Record<string, unknown>} */ (input)
    /** @type {Issue[]} */
    const issues = []
    /** @type {Record<string, unknown>} */
    const out = {}
    for (const key of Object.keys(value)) {
      if (!(key in properties)) issues.push({ message: `Unknown field ${quoted(key)} (expected ${Object.keys(properties).join(', ')})`, path: [key] })
    }
    for (const [key, spec] of Object.entries(properties)) {
      const v = value[key]
      if (v === undefined) {
        if (required.includes(key)) issues.push({ message: `${key} is required (${spec.type})`, path: [key] })
        else if ('default' in spec) out[key] = spec.default
        continue
      }
      const bounded = (/** @type {number} */ n) => (spec.minimum === undefined || n >= spec.minimum) && (spec.maximum === undefined || n <= spec.maximum)
      if (spec.type === 'number' && (typeof v !== 'number' || !Number.isFinite(v))) {
        issues.push({ message: `${key} must be a finite number, got ${typeof v === 'number' ? v : kind(v)}`, path: [key] })
      } else if (spec.type === 'integer' && (typeof v !== 'number' || !Number.isInteger(v) || !bounded(v))) {
        issues.push({ message: `${key} must be a whole number from ${spec.minimum} to ${spec.maximum}, got ${typeof v === 'number' ? v : kind(v)}`, path: [key] })
      } else if (spec.type === 'boolean' && typeof v !== 'boolean') {
        issues.push({ message: `${key} must be true or false, got ${kind(v)}`, path: [key] })
      } else if (spec.type === 'string' && typeof v !== 'string') {
        issues.push({ message: `${key} must be a string, got ${kind(v)}`, path: [key] })
      } else if (spec.type === 'object' && kind(v) !== 'object') {
        issues.push({ message: `${key} must be an object, got ${kind(v)}`, path: [key] })
      } else if (spec.enum && !spec.enum.includes(/** @type {string} */ (v))) {
        issues.push({ message: `${key} must be one of ${spec.enum.join(', ')}, got ${typeof v === 'string' ? quoted(v) : kind(v)}`, path: [key] })
      } else {
        out[key] = v
      }
    }
    return issues.length ? { issues } : { value: /** @type {T} */ (out) }
  }
  return {
    '~standard': {
      version: 1,
      vendor: 'workspace-search',
      validate,
      jsonSchema: { input: () => structuredClone(json), output: () => structuredClone(json) },
    },
  }
}

/**
 * Checks input again inside execute, for callers that do not validate.
 * @template T
 * @param {import('../index').ToolInputSchema<T>} schema
 * @param {unknown} input
 * @returns {T}
 */
function checked(schema, input) {
  const result = schema['~standard'].validate(input)
  if (result.issues) throw new TypeError(`Invalid tool input: ${result.issues.map((i) => i.message).join('; ')}`)
  return result.value
}

/**
 * The workspace's own highlight(), which matches words as its index does (its tokenizer, stemming,
 * stopwords), so that the lines shown are those its lineRange counts; that of the native workspace
 * behind one of workspace-search/mastra. Undefined where there is none (budget.js's fallback).
 * @param {any} workspace
 * @returns {((query: string, text: string) => Array<[number, number]>) | undefined}
 */
function highlighter(workspace) {
  const owner = typeof workspace.highlight === 'function' ? workspace : natives.get(workspace)
  return owner && typeof owner.highlight === 'function' ? (q, text) => owner.highlight(q, text) : undefined
}

/**
 * The agent tools of a workspace, named, described and shaped as Mastra's:
 * `mastra_workspace_search` (when search is configured) and
 * `mastra_workspace_index` (unless the filesystem is read-only). They work
 * as tools of a Mastra `Agent` and of the AI SDK's `generateText`. The
 * search tool answers within `maxTokens` (an input beside Mastra's, by
 * default `options.maxTokens`, 2,000), one result per file, paged with a
 * cursor, without repeating what this instance already showed;
 * `options.maxTokens: false` gives Mastra's own tool: its inputs and its
 * text, byte for byte.
 * @param {import('../index').Workspace} workspace
 * @param {import('../index').WorkspaceToolsOptions} [options]
 * @returns {import('../index').WorkspaceTools}
 */
function createWorkspaceTools(workspace, options = {}) {
  /** @type {WorkspaceTools} */
  const tools = {}
  if (!workspace || typeof workspace.search !== 'function') throw new TypeError('createWorkspaceTools needs a Workspace')
  if (kind(options) !== 'object') throw new TypeError(`createWorkspaceTools options must be an object, got ${kind(options)}`)
  for (const key of Object.keys(options)) if (key !== 'maxTokens') throw new TypeError(`createWorkspaceTools options: unknown option ${key} (expected maxTokens)`)
  const budget = options.maxTokens ?? DEFAULT_MAX_TOKENS
  if (budget !== false && !(Number.isInteger(budget) && budget >= MIN_MAX_TOKENS && budget <= MAX_MAX_TOKENS)) {
    throw new TypeError(`createWorkspaceTools options.maxTokens must be false or a whole number from ${MIN_MAX_TOKENS} to ${MAX_MAX_TOKENS}, got ${String(budget)}`)
  }
  if (!(workspace.canBM25 || workspace.canVector)) return tools
  /** @type {Array<'bm25' | 'vector' | 'hybrid'>} */
  const modes = []
  if (workspace.canBM25) modes.push('bm25')
  if (workspace.canVector) modes.push('vector')
  if (workspace.canHybrid) modes.push('hybrid')

  /**
   * @param {ReadonlyArray<'bm25' | 'vector' | 'hybrid'>} modeEnum
   * @returns {Record<string, FieldSpec>}
   */
  const searchFields = (modeEnum) => ({
    query: { type: 'string', description: 'The search query string' },
    ...(budget === false
      ? { topK: { type: 'number', default: 5, description: 'Maximum number of results to return' } }
      : { topK: { type: 'integer', minimum: 1, maximum: MAX_FILES, description: `Maximum number of results (files) to return per page (1-${MAX_FILES}; default: as many as fit in maxTokens)` } }),
    mode: { type: 'string', enum: modeEnum, description: `Search mode: ${modeEnum.join(', ')}` },
    minScore: { type: 'number', description: 'Minimum score threshold (0-1 for normalized scores)' },
    ...(budget === false
      ? {}
      : {
          maxTokens: { type: 'integer', minimum: MIN_MAX_TOKENS, maximum: MAX_MAX_TOKENS, default: budget, description: `Most tokens the answer may take (default ${budget}); a longer one ends with a cursor for the next page` },
          cursor: { type: 'string', description: 'The cursor the previous answer ended with: the next page of the same search' },
          repeat: { type: 'boolean', default: false, description: 'Show again lines already shown by earlier searches (default false: a file shown before is one line)' },
        }),
  })
  // The model is offered the modes this workspace has; execute() itself
  // takes any mode and falls back, as Mastra's.
  /** @type {import('../index').ToolInputSchema<import('../index').WorkspaceSearchToolInput>} */
  const searchSchema = objectSchema(searchFields(modes), ['query'])
  /** @type {typeof searchSchema} */
  const anyModeSchema = objectSchema(searchFields(['bm25', 'vector', 'hybrid']), ['query'])
  // What this instance showed (lib/budget.js: lines stay shown for 20 calls, and only while unchanged).
  const memory = new SearchMemory()
  tools[`${PREFIX}_search`] = {
    id: `${PREFIX}_search`,
    description: 'Search indexed content in the workspace. Supports keyword (BM25), semantic (vector), and hybrid search modes.',
    inputSchema: searchSchema,
    /** @param {unknown} input */
    async execute(input) {
      const { query, topK, mode, minScore, maxTokens, cursor, repeat } = checked(anyModeSchema, input)
      // Mastra's fallback: never run a mode this workspace does not have.
      const effectiveMode =
        mode === 'hybrid' && !workspace.canHybrid
          ? workspace.canVector ? 'vector' : 'bm25'
          : mode === 'vector' && !workspace.canVector
            ? 'bm25'
            : mode ?? (workspace.canHybrid ? 'hybrid' : workspace.canVector ? 'vector' : 'bm25')
      if (budget === false) {
        const results = await workspace.search(query, { topK, mode: effectiveMode, minScore })
        const lines = results.map((r) => `${r.id}${r.lineRange ? `:${r.lineRange.start}-${r.lineRange.end}` : ''}: ${r.content}`)
        lines.push('---', `${results.length} result${results.length !== 1 ? 's' : ''} (${effectiveMode} search)`)
        return lines.join('\n')
      }
      const page = await budgetedPage({
        query,
        maxTokens,
        cursor,
        repeat,
        topK,
        key: cursorKey({ query, mode: effectiveMode, minScore, path: undefined, topK }),
        memory,
        highlight: highlighter(workspace),
        search: (n) => workspace.search(query, { topK: n, mode: effectiveMode, minScore, group: 'file' }),
      })
      return page.text
    },
  }

  // Mastra leaves the index tool out when the filesystem is read-only.
  if (!workspace.filesystem?.readOnly) {
    /** @type {import('../index').ToolInputSchema<import('../index').WorkspaceIndexToolInput>} */
    const indexSchema = objectSchema(
      {
        path: { type: 'string', description: 'The document ID/path for search results' },
        content: { type: 'string', description: 'The text content to index' },
        metadata: { type: 'object', additionalProperties: {}, description: 'Optional metadata to store with the document' },
      },
      ['path', 'content'],
    )
    tools[`${PREFIX}_index`] = {
      id: `${PREFIX}_index`,
      description: 'Index content for search. The path becomes the document ID in search results.',
      inputSchema: indexSchema,
      /** @param {unknown} input */
      async execute(input) {
        const { path, content, metadata } = checked(indexSchema, input)
        await workspace.index(path, content, { metadata })
        return `Indexed ${path}`
      },
    }
  }
  return tools
}

module.exports = { createWorkspaceTools }
