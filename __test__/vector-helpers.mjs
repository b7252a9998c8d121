// Real parts for the vector tests: an offline AI-SDK embedding model
// (EmbeddingModelV3, deterministic feature hashing, no network, no weights)
// driven through the real `embed`/`embedMany`, recording wrappers, and the
// real vector stores (embedded, LibSQL, DuckDB, PostgreSQL + pgvector).
import { embed, embedMany } from 'ai'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'

const words = (s) => s.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []
function fnv1a(str) {
  let h = 0x811c9dc5
  for (let i = 0; i < str.length; i++) {
    h ^= str.charCodeAt(i)
    h = Math.imul(h, 0x01000193) >>> 0
  }
  return h >>> 0
}

/** Feature hashing: each word adds ±1 at hash(word) % dim; L2-normalised. */
export function hashEmbed(text, dim = 64) {
  const v = new Array(dim).fill(0)
  for (const w of words(text)) {
    const h = fnv1a(w)
    v[h % dim] += h & 0x80000000 ? -1 : 1
  }
  const norm = Math.hypot(...v)
  return norm === 0 ? v : v.map((x) => x / norm)
}

export function cosine(a, b) {
  let dot = 0
  let na = 0
  let nb = 0
  for (let i = 0; i < a.length; i++) {
    dot += a[i] * b[i]
    na += a[i] * a[i]
    nb += b[i] * b[i]
  }
  return na === 0 || nb === 0 ? 0 : dot / Math.sqrt(na * nb)
}

/** A real EmbeddingModelV3 of the AI SDK's provider interface. */
export function hashModel({ dim = 64, maxEmbeddingsPerCall = 8 } = {}) {
  const model = {
    specificationVersion: 'v3',
    provider: 'local-hash',
    modelId: `fnv1a-${dim}`,
    maxEmbeddingsPerCall,
    supportsParallelCalls: true,
    calls: [],
    async doEmbed({ values }) {
      model.calls.push(values.length)
      return { embeddings: values.map((v) => hashEmbed(v, dim)), usage: { tokens: 0 }, warnings: [] }
    },
  }
  return model
}

/**
 * Wraps an embedder to record its calls and the most calls in flight at
 * once; `fail(text)` may throw to simulate a provider error.
 */
function recording(fn, fail) {
  const rec = { calls: [], inFlight: 0, maxInFlight: 0 }
  const wrapped = async (input) => {
    rec.calls.push(Array.isArray(input) ? input.length : 1)
    rec.inFlight++
    rec.maxInFlight = Math.max(rec.maxInFlight, rec.inFlight)
    try {
      await new Promise((r) => setTimeout(r, 2))
      for (const t of Array.isArray(input) ? input : [input]) fail?.(t)
      return await fn(input)
    } finally {
      rec.inFlight--
    }
  }
  return { wrapped, rec }
}

/** The AI SDK's embedMany as a Mastra batch embedder. */
export function batchEmbedder(model, { maxBatchSize = 4, fail } = {}) {
  const { wrapped, rec } = recording(async (texts) => (await embedMany({ model, values: texts, maxRetries: 0 })).embeddings, fail)
  return { embedder: Object.assign(wrapped, { batch: true, maxBatchSize }), rec }
}

/** The AI SDK's embed as a single-text embedder. */
export function singleEmbedder(model, { fail } = {}) {
  const { wrapped, rec } = recording(async (text) => (await embed({ model, value: text, maxRetries: 0 })).embedding, fail)
  return { embedder: wrapped, rec }
}

export const PG_URL = process.env.PG_URL ?? 'postgresql://postgres@127.0.0.1:54329/mastra'

/** Whether PostgreSQL with pgvector answers at PG_URL. */
export async function pgAvailable() {
  const { default: pg } = await import('pg')
  const client = new pg.Client({ connectionString: PG_URL, connectionTimeoutMillis: 2000 })
  try {
    await client.connect()
    await client.query("SELECT 1 FROM pg_extension WHERE extname = 'vector'")
    return true
  } catch {
    return false
  } finally {
    await client.end().catch(() => {})
  }
}

let duckHomeDir
/** One temporary $HOME for DuckDB per process, removed as the process ends. */
function duckHome() {
  if (!duckHomeDir) {
    duckHomeDir = fs.mkdtempSync(path.join(os.tmpdir(), 'wss-duck-home-'))
    process.on('exit', () => fs.rmSync(duckHomeDir, { recursive: true, force: true }))
  }
  return duckHomeDir
}

/** A fresh store of the given kind; `close()` releases it. */
export async function makeStore(kind) {
  switch (kind) {
    case 'embedded':
      return { store: undefined, close: async () => {} }
    case 'LocalVector': {
      const { LocalVector } = await import('./helpers.mjs').then((m) => m.lib)
      return { store: new LocalVector({ id: 'local' }), close: async () => {} }
    }
    case 'libsql': {
      const { LibSQLVector } = await import('@mastra/libsql')
      const store = new LibSQLVector({ id: 'libsql', url: ':memory:' })
      return { store, close: async () => store.close?.() }
    }
    case 'duckdb': {
      // DuckDB tries to install its vss extension under $HOME; keep that in a temp folder.
      process.env.HOME = duckHome()
      const { DuckDBVector } = await import('@mastra/duckdb')
      const store = new DuckDBVector({ id: 'duckdb', path: ':memory:' })
      return { store, close: async () => store.close?.() }
    }
    case 'pg': {
      const { PgVector } = await import('@mastra/pg')
      const store = new PgVector({ id: 'pg', connectionString: PG_URL })
      return { store, close: async () => store.disconnect?.() }
    }
    default:
      throw new Error(`unknown store ${kind}`)
  }
}
