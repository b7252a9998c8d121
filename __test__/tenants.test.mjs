// tenantPool over real snapshot stores (s3-helpers.mjs): tenants attach on
// demand, the least recently used are destroyed once their memory passes
// the bound, a tenant in use() is never evicted, and an evicted tenant
// attaches again with the same answers.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { createRequire } from 'node:module'
import { ids } from './helpers.mjs'
import { bucket, client, endpoint, unavailable } from './s3-helpers.mjs'

const require = createRequire(import.meta.url)
const { Workspace, s3SnapshotStore, tenantPool } = require('../index.js')
const skip = unavailable() ?? false

const docsOf = (n) =>
  Array.from({ length: 40 }, (_, i) => ({ path: `t${n}/doc-${i}.md`, content: `tenant ${n} note ${i} about invoices and renewals ${'word '.repeat(i)}` }))

test('tenantPool: attach on demand, least recently used evicted past the bound, use() pins, evicted tenants come back alike', { skip }, async (t) => {
  const url = await endpoint(t)
  const s3 = client(url)
  const name = await bucket(url)
  const workspace = (tenant) =>
    new Workspace({ id: tenant, bm25: true, persist: { store: s3SnapshotStore({ client: s3, bucket: name, prefix: `${tenant}/` }) } })
  const TENANTS = 12
  for (let n = 0; n < TENANTS; n++) {
    const ws = workspace(`tenant-${n}`)
    await ws.init()
    await ws.indexMany(docsOf(n))
    assert.equal(await ws.save(), true)
    await ws.destroy()
  }
  let attaches = 0
  const attached = []
  const attach = async (tenant) => {
    attaches++
    const ws = workspace(tenant)
    await ws.init()
    attached.push(ws)
    return ws
  }
  const probe = await attach('tenant-0')
  const perTenant = probe.stats().memoryBytes
  await probe.destroy()
  attaches = 0
  const pool = tenantPool({ attach, maxBytes: perTenant * 4.5 })
  t.after(() => pool.close())
  // Two requests for one tenant at once share one attach.
  const [a, b] = await Promise.all([pool.get('tenant-0'), pool.get('tenant-0')])
  assert.equal(a, b)
  assert.equal(attaches, 1)
  const expected = ids(await a.search('invoices renewals note 3', { topK: 3 }))
  // tenant-1 stays in use while every other tenant is attached.
  let release
  const held = new Promise((r) => (release = r))
  const inUse = pool.use('tenant-1', async (ws) => {
    await held // until every other tenant was attached
    return { status: ws.status, results: await ws.search('note 7', { topK: 1 }) }
  })
  for (let n = 2; n < TENANTS; n++) {
    const ws = await pool.get(`tenant-${n}`)
    assert.equal(ws.stats().documents, 40)
    assert.ok(pool.memoryBytes() <= perTenant * 5.5, `${pool.memoryBytes()} > bound`)
  }
  release()
  const used = await inUse
  assert.equal(used.status, 'ready', 'a tenant in use is never evicted')
  assert.match(ids(used.results)[0], /^t1\//, 'the pinned tenant answered from its own documents')
  assert.ok(pool.tenants().length <= 5, pool.tenants().join())
  assert.equal(a.status, 'destroyed', 'the least recently used tenant went')
  assert.ok(!pool.tenants().includes('tenant-0'))
  const back = await pool.get('tenant-0')
  assert.notEqual(back, a)
  assert.deepEqual(ids(await back.search('invoices renewals note 3', { topK: 3 })), expected)
  const destroyed = attached.filter((ws) => ws.status === 'destroyed').length
  assert.equal(destroyed, attached.length - pool.tenants().length)
})
