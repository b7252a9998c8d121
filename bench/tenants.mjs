// npm run bench:tenants [-- --tenants 200 --files 1000 --max-mb 256]
//
// Many tenants from object storage: one tenant of `files` mixed-language
// code files (bench/mixed-corpus.mjs) is built and saved to the S3 test
// server (tools/s3-server, started here), then its parts are copied under
// `tenants` prefixes. A fresh process attaches every tenant in turn
// through tenantPool (bounded at --max-mb), and reports attach p50/p99,
// the first search after attach and later searches (p50), snapshot bytes
// per file, RSS and open mappings; cold (nothing cached locally), then
// warm from `cacheDir`, in another fresh process. Writes bench/out/tenants.json.
import { spawn, execFileSync } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { createRequire } from 'node:module'
import { fileURLToPath } from 'node:url'
import { mixedCorpus } from './mixed-corpus.mjs'

const here = path.dirname(fileURLToPath(import.meta.url))
const require = createRequire(import.meta.url)
const args = process.argv.slice(2)
const opt = (name, def) => (args.includes(`--${name}`) ? args[args.indexOf(`--${name}`) + 1] : def)
const TENANTS = Number(opt('tenants', '200'))
const FILES = Number(opt('files', '1000'))
const MAX_MB = Number(opt('max-mb', '256'))
const CREDENTIALS = { accessKeyId: 'workspace-search', secretAccessKey: 'workspace-search-secret' }

const pct = (xs, p) => {
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]
}

async function startServer() {
  const bin = process.env.WS_S3_SERVER_BIN ?? execFileSync('bash', [path.join(here, '../scripts/s3/s3-install.sh')]).toString().trim()
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'wss-bench-s3-'))
  const child = spawn(bin, [root, '0'], { stdio: ['ignore', 'pipe', 'inherit'] })
  const port = await new Promise((resolve) => {
    let out = ''
    child.stdout.on('data', (d) => {
      out += d
      const m = /listening (\d+)/.exec(out)
      if (m) resolve(Number(m[1]))
    })
  })
  return { endpoint: `http://127.0.0.1:${port}`, stop: () => (child.kill('SIGKILL'), fs.rmSync(root, { recursive: true, force: true })) }
}

function s3(endpoint) {
  const { S3Client } = require('@aws-sdk/client-s3')
  return new S3Client({ endpoint, region: 'us-east-1', forcePathStyle: true, credentials: CREDENTIALS, maxAttempts: 1 })
}

async function build(endpoint) {
  const sdk = require('@aws-sdk/client-s3')
  const { Workspace, LocalFilesystem, s3SnapshotStore } = require('../index.js')
  const client = s3(endpoint)
  await client.send(new sdk.CreateBucketCommand({ Bucket: 'tenants' }))
  const info = mixedCorpus(FILES)
  const ws = new Workspace({
    id: 'tenant',
    filesystem: new LocalFilesystem({ basePath: info.dir }),
    autoIndexPaths: ['.'],
    bm25: true,
    persist: { store: s3SnapshotStore({ client, bucket: 'tenants', prefix: 'tenants/0/' }) },
  })
  await ws.init()
  await ws.destroy()
  const manifest = JSON.parse(await (await client.send(new sdk.GetObjectCommand({ Bucket: 'tenants', Key: 'tenants/0/manifest.json' }))).Body.transformToString())
  for (let t = 1; t < TENANTS; t++) {
    for (const key of ['manifest.json', manifest.index.key, manifest.texts.key]) {
      await client.send(new sdk.CopyObjectCommand({ Bucket: 'tenants', Key: `tenants/${t}/${key}`, CopySource: `tenants/tenants/0/${key}` }))
    }
  }
  return { info, indexBytes: manifest.index.size, textsBytes: manifest.texts.size, indexRaw: manifest.index.rawSize, textsRaw: manifest.texts.rawSize }
}

async function attachAll(endpoint, cacheDir, fill = false) {
  const { Workspace, s3SnapshotStore, tenantPool } = require('../index.js')
  const client = s3(endpoint)
  const words = ['parse', 'error', 'buffer', 'thread', 'config', 'string', 'value', 'return']
  let gets = 0
  const attach = async (tenant) => {
    const inner = s3SnapshotStore({ client, bucket: 'tenants', prefix: `tenants/${tenant}/` })
    const store = { ...inner, get: (key, range) => (gets++, inner.get(key, range)) }
    const ws = new Workspace({ id: 'tenant', bm25: true, persist: { store, ...(cacheDir ? { cacheDir, cacheMaxBytes: 8 * 2 ** 30 } : {}) } })
    await ws.init()
    return ws
  }
  // The process's first S3 request loads and sets up the AWS SDK (tens of
  // ms, the user's client, not the attach): made first, and reported apart.
  const sdk = require('@aws-sdk/client-s3')
  const sdkStart = performance.now()
  await client.send(new sdk.HeadBucketCommand({ Bucket: 'tenants' }))
  const sdkFirstRequestMs = performance.now() - sdkStart
  const pool = tenantPool({ attach, maxBytes: MAX_MB * 1024 * 1024 })
  const attachMs = []
  const firstMs = []
  const laterMs = []
  const getsBefore = []
  for (let t = 0; t < TENANTS; t++) {
    gets = 0
    let start = performance.now()
    const ws = await pool.get(String(t))
    attachMs.push(performance.now() - start)
    start = performance.now()
    await ws.search(`${words[t % words.length]} ${words[(t + 3) % words.length]}`, { topK: 10 })
    firstMs.push(performance.now() - start)
    getsBefore.push(gets)
    for (let q = 0; q < 5; q++) {
      start = performance.now()
      await ws.search(words[(t + q) % words.length], { topK: 10 })
      laterMs.push(performance.now() - start)
    }
  }
  // Filling the cache: a large tenant's texts part arrives in the
  // background after its searches (they read by range); wait for it, as a
  // server that stays up would.
  for (let waited = 0; fill && waited < 120_000 && !fs.readdirSync(cacheDir).some((f) => f.endsWith('.wss')); waited += 50) {
    await new Promise((r) => setTimeout(r, 50))
  }
  const maps = fs.readFileSync('/proc/self/maps', 'utf8').split('\n').filter((l) => l.includes('.wss')).length
  const out = {
    sdkFirstRequestMs,
    tenants: TENANTS,
    attached: pool.tenants().length,
    attachMs: { p50: pct(attachMs, 50), p99: pct(attachMs, 99) },
    firstSearchMs: { p50: pct(firstMs, 50) },
    // From a fresh Workspace to its first search's results.
    toFirstResultMs: { p50: pct(attachMs.map((a, i) => a + firstMs[i]), 50), p99: pct(attachMs.map((a, i) => a + firstMs[i]), 99) },
    getsBeforeFirstResult: Math.max(...getsBefore),
    searchMs: { p50: pct(laterMs, 50) },
    rssMb: process.memoryUsage().rss / 1048576,
    poolMb: pool.memoryBytes() / 1048576,
    mappedSnapshots: maps,
  }
  await pool.close()
  return out
}

if (args[0] === '--attach') {
  // Cold: no local cache (every tenant's part fetched); then the cacheDir
  // is filled (the tenants' parts are copies: one fetch fills it).
  const cold = await attachAll(args[1], null)
  await attachAll(args[1], args[2], true)
  process.stdout.write(JSON.stringify({ cold }) + '\n')
  process.exit(0)
}
if (args[0] === '--warm') {
  // Warm: another fresh process, from the cacheDir the first one filled.
  const warm = await attachAll(args[1], args[2])
  process.stdout.write(JSON.stringify({ warm }) + '\n')
  process.exit(0)
}
const server = await startServer()
try {
  const { info, indexBytes, textsBytes, indexRaw, textsRaw } = await build(server.endpoint)
  // A fresh process: nothing cached, nothing attached; then another, warm.
  const cacheDir = fs.mkdtempSync(path.join(os.tmpdir(), 'wss-bench-cache-'))
  const run = (mode) => {
    const out = execFileSync(process.execPath, [fileURLToPath(import.meta.url), mode, server.endpoint, cacheDir, ...args], { maxBuffer: 1 << 24 })
    return JSON.parse(out.toString().trim().split('\n').pop())
  }
  let attach
  try {
    attach = { ...run('--attach'), ...run('--warm') }
  } finally {
    fs.rmSync(cacheDir, { recursive: true, force: true })
  }
  const result = {
    ...attach,
    files: FILES,
    maxMb: MAX_MB,
    corpusBytesPerFile: info.bytes / FILES,
    // The stored (compressed) parts, and their size unpacked (the snapshot file's).
    indexPartBytesPerFile: indexBytes / FILES,
    textsPartBytesPerFile: textsBytes / FILES,
    snapshotBytesPerFile: (indexBytes + textsBytes) / FILES,
    unpackedBytesPerFile: (indexRaw + textsRaw) / FILES,
  }
  fs.mkdirSync(path.join(here, 'out'), { recursive: true })
  fs.writeFileSync(path.join(here, 'out', 'tenants.json'), JSON.stringify(result, null, 2))
  console.log(JSON.stringify(result, null, 2))
} finally {
  server.stop()
}
