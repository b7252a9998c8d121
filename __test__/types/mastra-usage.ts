// Type-checked with `tsc --noEmit` (npm run test:types) against the real
// Mastra classes: every MastraVector subclass is a vectorStore of both
// entries, and workspace-search/mastra's Workspace is the one Mastra's
// Agent takes. (skipLibCheck: @mastra/core's own declarations do not
// check cleanly on their own.)
import { Agent } from '@mastra/core/agent'
import { LibSQLVector } from '@mastra/libsql'
import { PgVector } from '@mastra/pg'
import { DuckDBVector } from '@mastra/duckdb'
import { embedMany, type EmbeddingModel } from 'ai'
import { Workspace, LocalFilesystem, LocalVector, tenantPool, type BatchEmbedder, type IndexReport } from 'workspace-search'
import * as mastra from 'workspace-search/mastra'

declare const model: EmbeddingModel
const batch = Object.assign(async (texts: string[]) => (await embedMany({ model, values: texts })).embeddings, {
  batch: true as const,
  maxBatchSize: 2048,
})
const single = async (text: string): Promise<number[]> => [text.length]

export const stores = [
  new LibSQLVector({ id: 'libsql', url: 'file:vectors.db' }),
  new PgVector({ id: 'pg', connectionString: 'postgres://localhost/db' }),
  new DuckDBVector({ id: 'duck', path: ':memory:' }),
]

export function rootEntry(): Workspace[] {
  return stores.map(
    (vectorStore) =>
      new Workspace({ filesystem: new LocalFilesystem({ basePath: '.' }), bm25: true, vectorStore, embedder: batch }),
  )
}

export function mastraEntry(): mastra.Workspace[] {
  return stores.map(
    (vectorStore) =>
      new mastra.Workspace({ filesystem: new mastra.LocalFilesystem({ basePath: '.' }), bm25: true, vectorStore, embedder: single }),
  )
}

export async function agent(languageModel: ConstructorParameters<typeof Agent>[0]['model']): Promise<void> {
  const workspace = new mastra.Workspace({
    filesystem: new mastra.LocalFilesystem({ basePath: '.' }),
    bm25: true,
    autoIndexPaths: ['docs'],
    persist: { dir: '.workspace-search' },
    watch: true,
    embedTimeoutMs: 30_000,
    vectorStoreTimeoutMs: 10_000,
    chunking: { maxChars: 8000 },
  })
  const helper = new Agent({ id: 'a', name: 'a', instructions: 'help', model: languageModel, workspace })
  await workspace.init()
  const report: IndexReport | undefined = mastra.lastIndexReport(workspace)
  const base: mastra.Workspace = workspace
  void [helper, report, base]
}

// Mastra's per-request Workspace factory over a tenantPool of workspace-search/mastra workspaces.
export async function perTenant(languageModel: ConstructorParameters<typeof Agent>[0]['model']) {
  const pool = tenantPool({
    attach: async (tenant: string) => {
      const ws = new mastra.Workspace({ id: tenant, filesystem: new mastra.LocalFilesystem({ basePath: `/srv/${tenant}` }), bm25: true })
      await ws.init()
      return ws
    },
    maxBytes: 1 << 30,
    memoryOf: (ws) => mastra.nativeWorkspace(ws)?.stats().memoryBytes ?? 0,
  })
  const agent = new Agent({
    id: 'b',
    name: 'b',
    instructions: 'help',
    model: languageModel,
    workspace: ({ requestContext }) => pool.get(String(requestContext.get('tenant'))),
  })
  void agent
}

export const typedBatch: BatchEmbedder = batch

// workspace-search/mastra takes the native engine's options where Mastra's
// types are narrower; its search's own options are typed through
// nativeWorkspace(); the workspace is still Mastra's, for its Agent.
export async function nativeOptions(languageModel: ConstructorParameters<typeof Agent>[0]['model']): Promise<number> {
  const workspace = new mastra.Workspace({
    filesystem: new mastra.LocalFilesystem({ basePath: '.' }),
    bm25: { k1: 1.2, b: 0.75, tokenize: { preset: 'mastra' } },
    vectorStore: new LocalVector(),
    embedder: Object.assign(async (texts: string[]) => texts.map(() => new Float32Array(4)), { batch: true as const }),
  })
  const results = (await mastra.nativeWorkspace(workspace)?.search('router', { group: 'file', pathPrefix: 'src', fusion: 'rrf' })) ?? []
  const plain = await workspace.search('router', { topK: 3 })
  const agent = new Agent({ id: 'c', name: 'c', instructions: 'help', model: languageModel, workspace })
  void agent
  return (results[0]?.lineRanges?.length ?? 0) + plain.length
}

// A batch embedder whose `batch` is not the literal `true` is refused (the
// message, "'boolean' is not assignable to type 'true'", is checked by
// __test__/types.test.mjs).
// @ts-expect-error
new Workspace({ embedder: Object.assign(async (texts: string[]) => texts.map(() => [1]), { batch: true }) })

// Options written for Mastra's LocalFilesystem compile with this package's (the README's "swap the import").
export function fromMastraOptions(options: import('@mastra/core/workspace').LocalFilesystemOptions): LocalFilesystem {
  return new LocalFilesystem(options)
}
new LocalFilesystem({ id: 'docs', basePath: '.', contained: true, allowedPaths: ['/tmp'], instructions: 'x', readOnly: true })

