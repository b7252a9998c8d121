// One run of a persisted workspace in its own process, for persist.test.mjs:
// reads a JSON job from argv, prints one JSON line with what happened.
//   job: { base, dir, paths, queries, store?: 'libsql:<file>' | 'pg:<table>',
//          embedder?: { dim, id?, model? }, loop?: 'save' | 'hold', watch?, exit?,
//          crash?: { index: [id, text] } (that write, then SIGKILL before any save) }
import { Workspace, LocalFilesystem } from './helpers.mjs'
import { hashEmbed } from './vector-helpers.mjs'

const job = JSON.parse(process.argv[2])
const embedded = []
let embedder
if (job.embedder) {
  const { dim = 32, model = 'a' } = job.embedder
  embedder = Object.assign(
    async (texts) => {
      embedded.push(...texts)
      // Model "b" is another model: same dimension, other vectors.
      return texts.map((t) => hashEmbed(model === 'a' ? t : `${t} ${t.length} other model`, dim))
    },
    { batch: true, maxBatchSize: 16 },
  )
}
let vectorStore
let close = async () => {}
if (job.store?.startsWith('libsql:')) {
  const { LibSQLVector } = await import('@mastra/libsql')
  vectorStore = new LibSQLVector({ id: 'persisted', url: `file:${job.store.slice(7)}` })
} else if (job.store?.startsWith('pg:')) {
  const { PgVector } = await import('@mastra/pg')
  vectorStore = new PgVector({ id: 'persisted', connectionString: job.pgUrl })
  close = async () => vectorStore.disconnect()
}
const ws = new Workspace({
  filesystem: new LocalFilesystem({ basePath: job.base }),
  bm25: true,
  autoIndexPaths: job.paths ?? ['docs'],
  persist: { dir: job.dir },
  ...(embedder ? { embedder, embedderId: job.embedder.id, vectorStore, searchIndexName: job.indexName } : {}),
  ...(job.watch ? { watch: true } : {}),
  ...(job.chunking ? { chunking: job.chunking } : {}),
})
const report = await ws.init()
// What init() embedded (queries below are embedded too, and not counted).
const initEmbedded = embedded.splice(0)
// Documents given to index() after init() (`index: [[id, text], ...]`).
for (const [id, text] of job.index ?? []) await ws.index(id, text)
const results = {}
for (const q of job.queries ?? []) {
  const hits = await ws.search(q, { topK: 5, ...(embedder ? { mode: job.mode ?? 'hybrid' } : {}) })
  results[q] = hits.map((h) => `${h.id} ${h.score.toFixed(6)} ${h.lineRange?.start}-${h.lineRange?.end} ${h.content}`)
}
let stored
if (vectorStore && job.indexName) {
  const hits = await vectorStore.query({ indexName: job.indexName, queryVector: hashEmbed('anything', job.embedder.dim ?? 32), topK: 1000 })
  stored = hits.map((h) => h.id).sort()
}
if (job.crash) {
  await ws.index(...job.crash.index)
  process.kill(process.pid, 'SIGKILL')
}
const out = { report, results, embedded: initEmbedded, stats: ws.stats(), stored }
if (job.save) out.saved = await ws.save()
process.stdout.write(JSON.stringify(out) + '\n')
// Ends the process at once: no save(), no destroy().
if (job.exit) process.exit(0)
if (job.loop === 'save') {
  // Saves again and again (with a write in between), until killed.
  for (let i = 0; ; i++) {
    await ws.index(`extra/${i % 50}.md`, `extra document ${i} `.repeat(50))
    process.stdout.write(`saving ${i}\n`)
    await ws.save()
  }
}
if (job.loop === 'hold') {
  // Keeps the workspace (and its directory) until stdin closes.
  process.stdout.write('holding\n')
  await new Promise((resolve) => process.stdin.on('close', resolve).resume())
}
await ws.destroy()
await close()
