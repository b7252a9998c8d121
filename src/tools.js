// createWorkspaceTools(workspace): Mastra's two search tools for agents,
// evaluated by src/lib.rs when the module loads. Each input schema is a
// Standard Schema (`~standard` with `validate` and a JSON Schema), which both
// Mastra's Agent and the AI SDK validate without a wrapper and without zod.
(function () {
  const PREFIX = 'mastra_workspace'

  const kind = (v) => (v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v)

  /**
   * A Standard Schema for a flat object whose fields are described by a
   * JSON Schema `properties` map (type string/number/object, enum, default).
   */
  function objectSchema(properties, required) {
    const json = { type: 'object', properties, required, additionalProperties: false }
    const validate = (value) => {
      if (kind(value) !== 'object') return { issues: [{ message: `Expected an object, got ${kind(value)}`, path: [] }] }
      const issues = []
      const out = {}
      for (const key of Object.keys(value)) {
        if (!(key in properties)) issues.push({ message: `Unknown field ${key} (expected ${Object.keys(properties).join(', ')})`, path: [key] })
      }
      for (const [key, spec] of Object.entries(properties)) {
        const v = value[key]
        if (v === undefined) {
          if (required.includes(key)) issues.push({ message: `${key} is required (${spec.type})`, path: [key] })
          else if ('default' in spec) out[key] = spec.default
          continue
        }
        if (spec.type === 'number' && (typeof v !== 'number' || !Number.isFinite(v))) {
          issues.push({ message: `${key} must be a number, got ${kind(v)}`, path: [key] })
        } else if (spec.type === 'string' && typeof v !== 'string') {
          issues.push({ message: `${key} must be a string, got ${kind(v)}`, path: [key] })
        } else if (spec.type === 'object' && kind(v) !== 'object') {
          issues.push({ message: `${key} must be an object, got ${kind(v)}`, path: [key] })
        } else if (spec.enum && !spec.enum.includes(v)) {
          issues.push({ message: `${key} must be one of ${spec.enum.join(', ')}, got ${JSON.stringify(v)}`, path: [key] })
        } else {
          out[key] = v
        }
      }
      return issues.length ? { issues } : { value: out }
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

  /** Checks input again inside execute, for callers that do not validate. */
  function checked(schema, input) {
    const result = schema['~standard'].validate(input)
    if (result.issues) throw new TypeError(`Invalid tool input: ${result.issues.map((i) => i.message).join('; ')}`)
    return result.value
  }

  return function createWorkspaceTools(workspace) {
    const tools = {}
    if (!workspace || typeof workspace.search !== 'function') throw new TypeError('createWorkspaceTools needs a Workspace')
    if (!(workspace.canBM25 || workspace.canVector)) return tools
    const modes = [workspace.canBM25 && 'bm25', workspace.canVector && 'vector', workspace.canHybrid && 'hybrid'].filter(Boolean)

    const searchFields = (modeEnum) => ({
      query: { type: 'string', description: 'The search query string' },
      topK: { type: 'number', default: 5, description: 'Maximum number of results to return' },
      mode: { type: 'string', enum: modeEnum, description: `Search mode: ${modeEnum.join(', ')}` },
      minScore: { type: 'number', description: 'Minimum score threshold (0-1 for normalized scores)' },
    })
    // The model is offered the modes this workspace has; execute() itself
    // takes any mode and falls back, as Mastra's.
    const searchSchema = objectSchema(searchFields(modes), ['query'])
    const anyModeSchema = objectSchema(searchFields(['bm25', 'vector', 'hybrid']), ['query'])
    tools[`${PREFIX}_search`] = {
      id: `${PREFIX}_search`,
      description: 'Search indexed content in the workspace. Supports keyword (BM25), semantic (vector), and hybrid search modes.',
      inputSchema: searchSchema,
      async execute(input) {
        const { query, topK, mode, minScore } = checked(anyModeSchema, input)
        // Mastra's fallback: never run a mode this workspace does not have.
        const effectiveMode =
          mode === 'hybrid' && !workspace.canHybrid
            ? workspace.canVector ? 'vector' : 'bm25'
            : mode === 'vector' && !workspace.canVector
              ? 'bm25'
              : mode ?? (workspace.canHybrid ? 'hybrid' : workspace.canVector ? 'vector' : 'bm25')
        const results = await workspace.search(query, { topK, mode: effectiveMode, minScore })
        const lines = results.map((r) => `${r.id}${r.lineRange ? `:${r.lineRange.start}-${r.lineRange.end}` : ''}: ${r.content}`)
        lines.push('---', `${results.length} result${results.length !== 1 ? 's' : ''} (${effectiveMode} search)`)
        return lines.join('\n')
      },
    }

    // Mastra leaves the index tool out when the filesystem is read-only.
    if (!workspace.filesystem?.readOnly) {
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
        async execute(input) {
          const { path, content, metadata } = checked(indexSchema, input)
          await workspace.index(path, content, { metadata })
          return `Indexed ${path}`
        },
      }
    }
    return tools
  }
})()
