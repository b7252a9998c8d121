// One server process of a tenant, for snapshot-store.test.mjs: attaches the
// tenant's snapshot from S3 (init()), then does what the job says, and
// prints one JSON line per step.
//   job: { endpoint, bucket, prefix, id, index?: [[path, text]...], queries?: string[],
//          save?: 'now' | 'on-stdin' }
import readline from 'node:readline'
import { createRequire } from 'node:module'
import { hashEmbed } from './vector-helpers.mjs'
import { client } from './s3-helpers.mjs'

const require = createRequire(import.meta.url)
const { Workspace, s3SnapshotStore } = require('../index.js')
const job = JSON.parse(process.argv[2])
let embedded = 0
const embedder = Object.assign(
  async (texts) => {
    embedded += texts.length
    return texts.map((t) => hashEmbed(t, 32))
  },
  { batch: true, maxBatchSize: 16 },
)
const store = s3SnapshotStore({ client: client(job.endpoint), bucket: job.bucket, prefix: job.prefix })
const ws = new Workspace({ id: job.id, bm25: true, embedder, embedderId: 'hash-32', persist: { store } })
const say = (o) => process.stdout.write(JSON.stringify(o) + '\n')
const report = await ws.init()
say({ step: 'attached', warnings: report.warnings, documents: ws.stats().documents, embedded })
if (job.index) await ws.indexMany(job.index.map(([path, content]) => ({ path, content })))
const search = async () => {
  const out = {}
  for (const q of job.queries ?? []) {
    out[q] = {
      bm25: (await ws.search(q, { mode: 'bm25', topK: 5 })).map((r) => [r.id, r.score]),
      vector: (await ws.search(q, { mode: 'vector', topK: 5 })).map((r) => [r.id, r.score]),
    }
  }
  return out
}
say({ step: 'searched', results: await search(), embedded, documents: ws.stats().documents })
if (job.save === 'on-stdin') {
  const lines = readline.createInterface({ input: process.stdin })
  for await (const _ of lines) break
}
if (job.save) {
  try {
    say({ step: 'saved', saved: await ws.save() })
  } catch (e) {
    say({ step: 'saved', error: e.name, code: e.code, message: e.message })
  }
}
say({ step: 'destroyed', error: await ws.destroy().then(() => null, (e) => e.name) })
process.exit(0)
