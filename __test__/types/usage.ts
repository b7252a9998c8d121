// Type-checked with `tsc --noEmit` (npm run test:types): the usage of SPEC 1
// compiles, and inputs that must be rejected do not.
import { generateText, type LanguageModel } from 'ai'
import {
  Workspace,
  LocalFilesystem,
  LocalVector,
  createWorkspaceTools,
  type WorkspaceTools,
  type BatchEmbedder,
  WorkspaceError,
  SearchNotAvailableError,
  WorkspaceNotReadyError,
  UnsupportedGrepPatternError,
  EmbedderError,
  VectorStoreError,
  type GrepFileResult,
  type SearchResult,
  type IndexReport,
  type WorkspaceStats,
  type ProgressEvent,
  type TokenizeOptions,
  type WorkspaceOptions,
} from 'workspace-search'

export async function usage(): Promise<void> {
  const workspace = new Workspace({
    filesystem: new LocalFilesystem({ basePath: './workspace' }),
    bm25: true,
    autoIndexPaths: ['docs', 'support/**/*.md'],
  })
  const report: IndexReport = await workspace.init()
  const skippedPaths: string[] = report.skipped.map((s) => s.path)
  await workspace.index('/docs/api.md', 'text', { metadata: { category: 'api' } })
  const results: SearchResult[] = await workspace.search('password reset', { topK: 10, mode: 'bm25', minScore: 0.2 })
  for (const r of results) {
    const line: number | undefined = r.lineRange?.start
    const raw: number | undefined = r.scoreDetails?.bm25
    const meta: Record<string, unknown> | undefined = r.metadata
    void [line, raw, meta, r.id, r.content, r.score.toFixed(2)]
  }
  void skippedPaths

  // The three bm25 forms and every tokenize option.
  const tokenize: TokenizeOptions = {
    preset: 'mastra',
    lowercase: true,
    removePunctuation: true,
    minLength: 2,
    stopwords: new Set(['the']),
    splitPattern: /\s+/,
    tokenizer: (text: string) => text.split(' '),
    cjkBigrams: true,
    foldDiacritics: false,
    splitIdentifiers: true,
    stem: 'english',
  }
  new Workspace({ bm25: { k1: 1.2, b: 0.75 } })
  new Workspace({ bm25: { bm25: { k1: 1.2 }, tokenize } })
  new Workspace({ bm25: { k1: 3, b: 0.5, tokenize: { stopwords: ['a'] } } })

  // Beyond Mastra.
  const options: WorkspaceOptions = {
    id: 'docs',
    bm25: true,
    chunking: { maxChars: 2000, overlapLines: 2 },
    respectGitignore: false,
    onProgress: (e: ProgressEvent) => {
      const phase: 'scan' | 'read' | 'index' | 'embed' = e.phase
      void [phase, e.done, e.total, e.path]
    },
    // Mastra's other options are accepted.
    sandbox: {},
    skills: ['/skills'],
  }
  const ws = new Workspace(options)
  const many: IndexReport = await ws.indexMany([{ path: 'a', content: 'b', metadata: { k: 1 }, startLineOffset: 3 }])
  const removed: boolean = await ws.unindex('a')
  await ws.clear()
  const stats: WorkspaceStats = ws.stats()
  const flags: boolean[] = [ws.canBM25, ws.canVector, ws.canHybrid]
  const status: 'pending' | 'initializing' | 'ready' | 'error' | 'destroyed' = ws.status
  await ws.rebuildSearchIndex(['docs'])
  await ws.search('q', { filter: { category: { $in: ['api'] } }, fusion: 'rrf', vectorWeight: 0.3 })
  await ws.search('q', { pathPrefix: '/src/', topK: 3 })
  await ws.destroy()
  const saveError: string | undefined = stats.saveError
  void [many, removed, stats.avgDocLength, saveError, flags, status, ws.id]

  try {
    await ws.search('x')
  } catch (err) {
    if (err instanceof WorkspaceNotReadyError || err instanceof SearchNotAvailableError) {
      const code: string = err.code
      const message: string = err.message
      void [code, message]
    } else if (err instanceof EmbedderError || err instanceof VectorStoreError) {
      const retry: boolean = err.code === 'EMBEDDER' || err.code === 'VECTOR_STORE'
      void [retry, err.cause]
    } else if (err instanceof WorkspaceError) {
      const id: string | undefined = err.workspaceId
      void id
    }
  }
}

export async function grep(): Promise<void> {
  const ws = new Workspace({ filesystem: new LocalFilesystem({ basePath: '.' }) })
  const files: GrepFileResult[] = await ws.grep('TODO|FIXME', { path: 'src/**/*.ts', contextLines: 2, maxCount: 5, caseSensitive: false, includeHidden: true })
  for (const f of files) for (const m of f.matches) void [f.path, m.line, m.column, m.text, m.before?.length, m.after?.length]
  const g = ws.stats().grep
  void [g?.files, g?.memoryBytes, g?.unreadable]
  try {
    await ws.grep('(?<=a+)b')
  } catch (err) {
    if (err instanceof UnsupportedGrepPatternError) void err.code
  }
  // @ts-expect-error contextLines is a number
  await ws.grep('x', { contextLines: '2' })
  // @ts-expect-error no such option
  await ws.grep('x', { glob: '*.ts' })
}

export async function vectors(model: LanguageModel): Promise<void> {
  const embedder: BatchEmbedder = Object.assign(async (texts: string[]) => texts.map(() => new Float32Array(4)), { batch: true as const, maxBatchSize: 64 })
  const store = new LocalVector({ id: 'local' })
  const ws = new Workspace({ bm25: true, embedder, vectorStore: store, searchIndexName: 'docs_search', embedConcurrency: 4 })
  new Workspace({ embedder: async (text: string) => [text.length] })
  const results = await ws.search('q', { mode: 'hybrid', vectorWeight: 0.7, fusion: 'rrf' })
  const raw: number | undefined = results[0]?.scoreDetails?.vector
  const tools: WorkspaceTools = createWorkspaceTools(ws)
  const out: string | undefined = await tools.mastra_workspace_search?.execute({ query: 'q', topK: 3 })
  const paged = await createWorkspaceTools(ws, { maxTokens: 4000 }).mastra_workspace_search?.execute({ query: 'q', maxTokens: 500, cursor: '5.0123abcd', repeat: true })
  const plain = createWorkspaceTools(ws, { maxTokens: false })
  await plain.mastra_workspace_search?.execute({ query: 'q', topK: 3 })
  // @ts-expect-error Mastra's own tool has no cursor (the runtime refuses it)
  await plain.mastra_workspace_search?.execute({ query: 'q', cursor: '5.0123abcd' })
  // @ts-expect-error maxTokens is a number or false
  createWorkspaceTools(ws, { maxTokens: 'many' })
  void paged
  await generateText({ model, tools, prompt: 'search' })
  const stats = await store.describeIndex({ indexName: 'docs_search' })
  void [raw, out, stats.dimension]
}

export function rejected(): void {
  // @ts-expect-error bm25 is a boolean or an object
  new Workspace({ bm25: 'yes' })
  // @ts-expect-error k1 is a number
  new Workspace({ bm25: { k1: '1.2' } })
  // @ts-expect-error unknown option
  new Workspace({ bm26: true })
  // @ts-expect-error autoIndexPaths is a list of strings
  new Workspace({ autoIndexPaths: 'docs' })
  // @ts-expect-error chunking.maxChars is a number
  new Workspace({ chunking: { maxChars: '4000' } })
  // @ts-expect-error onProgress takes a ProgressEvent
  new Workspace({ onProgress: (e: string) => e })
  // @ts-expect-error preset is default or mastra
  new Workspace({ bm25: { tokenize: { preset: 'lucene' } } })
  // @ts-expect-error stem is 'english' or false
  new Workspace({ bm25: { tokenize: { stem: 'french' } } })
  // @ts-expect-error tokenizer returns string[]
  new Workspace({ bm25: { tokenize: { tokenizer: (t: string) => t } } })
  // @ts-expect-error LocalFilesystem needs a basePath
  new LocalFilesystem({})
  const ws = new Workspace({ bm25: true })
  // @ts-expect-error mode is bm25, vector or hybrid
  void ws.search('q', { mode: 'semantic' })
  // @ts-expect-error topK is a number
  void ws.search('q', { topK: '5' })
  // @ts-expect-error query is a string
  void ws.search(5)
  // @ts-expect-error content is a string
  void ws.index('a', 5)
  // @ts-expect-error metadata is an object
  void ws.index('a', 'b', { metadata: 'x' })
  // @ts-expect-error unknown index option
  void ws.index('a', 'b', { metdata: {} })
  // @ts-expect-error indexMany documents need content
  void ws.indexMany([{ path: 'a' }])
  // @ts-expect-error fusion is weighted or rrf
  void ws.search('q', { fusion: 'max' })
  // @ts-expect-error a batch embedder is marked batch: true
  new Workspace({ embedder: Object.assign(async (texts: string[]) => texts.map(() => [1]), { batch: false }) })
  // @ts-expect-error an embedder returns vectors
  new Workspace({ embedder: async (text: string) => text })
  // @ts-expect-error a vector store needs query
  new Workspace({ embedder: async (text: string) => [text.length], vectorStore: { upsert: async () => [] } })
  // @ts-expect-error the search tool needs a query
  void createWorkspaceTools(ws).mastra_workspace_search?.execute({ topK: 1 })
  // persist, embedderId and watch
  const kept = new Workspace({ filesystem: new LocalFilesystem({ basePath: '.' }), bm25: true, persist: { dir: '.index' }, embedderId: 'hash', watch: true })
  void kept.init().then((r: IndexReport) => [r.reused, r.reread, r.removed, r.embedded, ...r.warnings] satisfies (number | string)[])
  void kept.save().then((saved: boolean) => saved)
  new Workspace({ persist: true })
  // @ts-expect-error persist is a boolean or { dir }
  new Workspace({ persist: '.index' })
  // @ts-expect-error a directory or a store, not both (the constructor refuses them)
  new Workspace({ id: 't', persist: { dir: '.index', store: {} as import('workspace-search').SnapshotStore } })
  // @ts-expect-error cacheDir is a store's
  new Workspace({ persist: { dir: '.index', cacheDir: '.cache' } })
  // @ts-expect-error watch is a boolean
  new Workspace({ watch: 'yes' })
}
