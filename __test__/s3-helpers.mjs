// A real S3-compatible server for the snapshot-store tests: the one
// .ci/run starts (WS_S3_ENDPOINT), or one started here from the binary
// .ci/run builds (tools/s3-server; WS_S3_SERVER_BIN or its cargo target).
// Without either the tests skip, saying why.
import { spawn } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { createRequire } from 'node:module'

const here = path.dirname(new URL(import.meta.url).pathname)
const require = createRequire(import.meta.url)
export const CREDENTIALS = { accessKeyId: 'workspace-search', secretAccessKey: 'workspace-search-secret' }

/** The server binary, if it was built. */
export function serverBin() {
  const built = path.join(here, '..', 'tools', 's3-server', 'target', 'release', 'ws-s3-test-server')
  const bin = process.env.WS_S3_SERVER_BIN ?? built
  return fs.existsSync(bin) ? bin : null
}

/** Why the tests cannot run here, or `null`. */
export function unavailable() {
  if (process.env.WS_S3_ENDPOINT || serverBin()) return null
  return 'no S3 test server: build tools/s3-server (cargo build --release) or set WS_S3_ENDPOINT'
}

/** Starts a server of its own over a new folder (stopped after the test): `{ endpoint, stop }`. */
export async function startServer(t) {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'wss-s3-'))
  const child = spawn(serverBin(), [root, '0'], { stdio: ['ignore', 'pipe', 'inherit'] })
  const port = await new Promise((resolve, reject) => {
    let out = ''
    child.stdout.on('data', (d) => {
      out += d
      const m = /listening (\d+)/.exec(out)
      if (m) resolve(Number(m[1]))
    })
    child.once('exit', (code) => reject(new Error(`the S3 test server exited (${code})`)))
  })
  // Resolves once the server has exited: its folder is removed after it.
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return
    const exited = new Promise((resolve) => child.once('exit', resolve))
    child.kill('SIGKILL')
    await exited
  }
  t.after(async () => {
    await stop()
    fs.rmSync(root, { recursive: true, force: true })
  })
  return { endpoint: `http://127.0.0.1:${port}`, stop, child }
}

/** The shared server's endpoint (.ci/run's), else one started for this test. */
export async function endpoint(t) {
  return process.env.WS_S3_ENDPOINT ?? (await startServer(t)).endpoint
}

/** An S3Client for `endpoint`, path-style, with the server's credentials. */
export function client(endpointUrl) {
  const { S3Client } = require('@aws-sdk/client-s3')
  return new S3Client({
    endpoint: endpointUrl,
    region: 'us-east-1',
    forcePathStyle: true,
    credentials: CREDENTIALS,
    maxAttempts: 1,
  })
}

let buckets = 0
/** A new bucket on `endpoint` (one per test: tenants never meet). */
export async function bucket(endpointUrl) {
  const { CreateBucketCommand } = require('@aws-sdk/client-s3')
  const name = `t${process.pid}-${Date.now().toString(36)}-${buckets++}`
  await client(endpointUrl).send(new CreateBucketCommand({ Bucket: name }))
  return name
}
