// tenantPool over real snapshot stores (s3-helpers.mjs): tenants attach on
// demand, the least recently used are destroyed once their memory passes
// the bound, a tenant in use() is never evicted, and an evicted tenant
// attaches again with the same answers.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { createRequire } from 'node:module'
import fs from 'node:fs'
import { execFileSync } from 'node:child_process'
import { ids, tree, LocalFilesystem } from './helpers.mjs'
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
  await pool.settled()
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

test("Mastra's per-request Workspace factory: an Agent's workspace attached per tenant from the store, never rebuilt", { skip }, async (t) => {
  const { Agent } = await import('@mastra/core/agent')
  const { RequestContext } = await import('@mastra/core/request-context')
  const ours = await import('workspace-search/mastra')
  const { tree } = await import('./helpers.mjs')
  const { scriptedModel, call } = await import('./mock-model.mjs')
  const url = await endpoint(t)
  const s3 = client(url)
  const name = await bucket(url)
  // Each tenant's own folder (its files, say synced from elsewhere), and its index in the store.
  const folders = {
    acme: tree(t, { 'docs/billing.md': 'Acme invoices are sent on the first day of the month.\n' }),
    globex: tree(t, { 'docs/billing.md': 'Globex pays by wire transfer within thirty days.\n' }),
  }
  // Written an hour ago: a file changed within the snapshot's own second is read again (racy stamps).
  const fs = await import('node:fs')
  const past = new Date(Date.now() - 3600_000)
  for (const base of Object.values(folders)) fs.utimesSync(`${base}/docs/billing.md`, past, past)
  const workspace = (tenant) =>
    new ours.Workspace({
      id: `tenant-${tenant}`,
      filesystem: new ours.LocalFilesystem({ basePath: folders[tenant] }),
      bm25: true,
      autoIndexPaths: ['docs'],
      persist: { store: s3SnapshotStore({ client: s3, bucket: name, prefix: `mastra/${tenant}/` }) },
    })
  for (const tenant of Object.keys(folders)) {
    const built = workspace(tenant) // another server, earlier: built from the files and saved
    await built.init()
    assert.equal(ours.lastIndexReport(built).reread, 1)
    await built.destroy()
  }
  const reports = {}
  const pool = tenantPool({
    attach: async (tenant) => {
      const ws = workspace(tenant)
      await ws.init()
      reports[tenant] = ours.lastIndexReport(ws)
      return ws
    },
    maxBytes: 64 * 1024 * 1024,
    memoryOf: (ws) => ours.nativeWorkspace(ws)?.stats().memoryBytes ?? 0,
  })
  t.after(() => pool.close())
  // Each request: one search, then the answer (null: "done").
  const { model, results } = scriptedModel([
    [call('a1', 'mastra_workspace_search', { query: 'invoices' })],
    null,
    [call('g1', 'mastra_workspace_search', { query: 'wire transfer' })],
    null,
    [call('a2', 'mastra_workspace_search', { query: 'wire transfer' })],
    null,
  ])
  const agent = new Agent({
    id: 'billing',
    name: 'billing',
    instructions: 'Answer from the workspace.',
    model,
    // Mastra's multi-tenant pattern: the workspace of the request's tenant.
    workspace: ({ requestContext }) => pool.get(requestContext.get('tenant')),
  })
  // As docs/mastra.md: the request holds its tenant while the agent runs.
  const ask = (tenant, question) =>
    pool.use(tenant, () => agent.generate(question, { maxSteps: 2, requestContext: new RequestContext([['tenant', tenant]]) }))
  const text = (output) => (typeof output?.value === 'string' ? output.value : JSON.stringify(output))
  await ask('acme', 'When are invoices sent?')
  await ask('globex', 'How does Globex pay?')
  await ask('acme', 'Does Acme pay by wire?')
  assert.match(text(results.a1), /first day of the month/)
  assert.match(text(results.g1), /wire transfer within thirty days/)
  assert.doesNotMatch(text(results.a2), /Globex/, "one tenant never sees another's documents")
  // Attached from the store: each file recognised unchanged, none read or indexed again.
  for (const tenant of Object.keys(folders)) assert.deepEqual([reports[tenant].reused, reports[tenant].reread], [1, 0], tenant)
  assert.deepEqual(pool.tenants().sort(), ['acme', 'globex'])
  assert.ok(pool.memoryBytes() > 0)
})

test("tenantPool's default measure counts the index, the grep index and the git history", async (t) => {
  const dir = tree(t, { 'src/a.rs': 'fn parse() { tokens }', 'src/b.rs': 'fn read() { bytes }' })
  const git = (...args) => execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@t', '-c', 'commit.gpgsign=false', ...args], { cwd: dir, stdio: 'pipe' })
  git('init', '-q')
  git('add', '.')
  git('commit', '-qm', 'Start')
  fs.appendFileSync(`${dir}/src/a.rs`, '\n')
  git('commit', '-qam', 'Parse tokens faster')
  const pool = tenantPool({
    maxBytes: 1e12,
    attach: async () => {
      const ws = new Workspace({ filesystem: new LocalFilesystem({ basePath: dir }), bm25: true, autoIndexPaths: ['src'] })
      await ws.init()
      await ws.grep('parse', { path: 'src' })
      return ws
    },
  })
  t.after(() => pool.close())
  const ws = await pool.get('one')
  const s = ws.stats()
  assert.ok(s.history.memoryBytes > 0 && s.grep, "a history, and a grep index (empty while this small)")
  assert.equal(pool.memoryBytes(), s.memoryBytes + s.grep.memoryBytes + s.history.memoryBytes)
})

test('tenantPool: a memoryOf that cannot measure fails that get() and keeps nothing attached', async () => {
  let destroyed = 0
  const pool = tenantPool({ attach: async () => ({ destroy: async () => void destroyed++ }), maxBytes: 10, memoryOf: () => NaN })
  await assert.rejects(pool.get('a'), (e) => e instanceof TypeError && /memoryOf answered NaN/.test(e.message))
  assert.deepEqual([pool.tenants(), destroyed], [[], 1])
  assert.throws(() => tenantPool({ attach: async () => ({ destroy: async () => {} }), maxBytes: 10, memoryOf: 5 }), TypeError)
})

test("tenantPool: an eviction's destroy() (a save) runs beside the get() that caused it; the evicted tenant comes back only after it", async () => {
  const finish = new Map()
  const log = []
  const attach = async (tenant) => {
    log.push(`attach ${tenant}`)
    return { tenant, destroy: () => new Promise((resolve) => finish.set(tenant, () => (log.push(`destroyed ${tenant}`), resolve()))) }
  }
  const pool = tenantPool({ attach, maxBytes: 2, memoryOf: () => 1 })
  await pool.get('a')
  await pool.get('b')
  // 'c' passes the bound: 'a' is evicted, and its destroy() hangs.
  const c = await pool.get('c')
  assert.equal(c.tenant, 'c')
  assert.deepEqual(pool.tenants(), ['b', 'c'])
  assert.ok(finish.has('a'), "a's destroy() was called")
  let settled = false
  const waiting = pool.settled().then(() => (settled = true))
  // Asked for again while it is being destroyed: attached once that is done.
  const again = pool.get('a')
  await new Promise((r) => setTimeout(r, 20))
  assert.equal(settled, false)
  assert.equal(log.filter((l) => l === 'attach a').length, 1, 'not attached again before its destroy() is done')
  finish.get('a')()
  await waiting
  assert.equal((await again).tenant, 'a')
  assert.deepEqual(log.slice(0, 5), ['attach a', 'attach b', 'attach c', 'destroyed a', 'attach a'])
  // Attaching 'a' again evicted 'b' (least recently used), in the background too.
  assert.deepEqual(pool.tenants(), ['c', 'a'])
  // While 'b' is being destroyed its memory still counts: one more tenant evicts 'c' as well.
  await pool.get('d')
  assert.deepEqual(pool.tenants(), ['d'], "b's memory counts until its destroy() is done")
  const closed = pool.close()
  for (const t of ['b', 'c', 'a', 'd']) {
    await new Promise((r) => setTimeout(r, 5))
    finish.get(t)?.()
  }
  await closed
  assert.equal(log.filter((l) => l.startsWith('destroyed')).length, 5)
})

test('tenantPool: an onEvictError that throws is a warning, never an unhandled rejection', async () => {
  const unhandled = []
  const onUnhandled = (e) => unhandled.push(e)
  process.on('unhandledRejection', onUnhandled)
  const warned = new Promise((resolve) => process.once('warning', resolve))
  const pool = tenantPool({
    attach: async (tenant) => ({ tenant, destroy: async () => { throw new Error(`cannot save ${tenant}`) } }),
    maxBytes: 1,
    memoryOf: () => 1,
    onEvictError: () => { throw new Error('the handler failed') },
  })
  await pool.get('a')
  await pool.get('b') // evicts 'a', whose destroy() rejects
  await pool.settled()
  const warning = await warned
  assert.match(warning.message, /onEvictError threw: the handler failed/)
  await new Promise((r) => setImmediate(r))
  process.off('unhandledRejection', onUnhandled)
  assert.deepEqual(unhandled, [])
  // close() is awaited: a destroy() that fails there is its rejection, naming the tenant.
  await assert.rejects(pool.close(), (e) => e instanceof AggregateError && e.errors.map((x) => [x.tenant, x.message]).join() === 'b,cannot save b' && /1 tenant could not be destroyed \(b\)/.test(e.message))
})

test('tenantPool: a tenant evicted while another call measured it is not counted again (its memory would evict the rest)', async () => {
  const mem = { A: 100, B: 100 }
  const destroyed = []
  const pool = tenantPool({ maxBytes: 250, attach: async (t) => ({ t, destroy: async () => void destroyed.push(t) }), memoryOf: (w) => mem[w.t] })
  await pool.get('A')
  await pool.get('B')
  // Two requests end together; A grew by its write past the bound with B.
  await Promise.all([pool.use('A', async () => void (mem.A = 200)), pool.use('B', async () => {})])
  await pool.settled()
  assert.deepEqual([pool.tenants(), pool.memoryBytes(), destroyed], [['A'], 200, ['B']])
})

test('tenantPool: concurrent get()s of an attach that is then destroyed (unmeasurable, or the pool closed) all reject; none gets a destroyed workspace', async () => {
  const made = []
  const attach = async (t) => {
    await new Promise((r) => setTimeout(r, 10))
    const w = { t, destroyed: false, destroy: async () => void (w.destroyed = true) }
    made.push(w)
    return w
  }
  const unmeasurable = tenantPool({ attach, maxBytes: 10, memoryOf: () => { throw new Error('cannot measure') } })
  const both = await Promise.allSettled([unmeasurable.get('y'), unmeasurable.get('y')])
  assert.deepEqual(both.map((r) => r.status), ['rejected', 'rejected'])
  const pool = tenantPool({ attach, maxBytes: 10, memoryOf: () => 1 })
  const racing = pool.get('z')
  await pool.close()
  await assert.rejects(racing, /closed while z was attaching/)
  assert.ok(made.every((w) => w.destroyed), 'every workspace made was destroyed')
})
