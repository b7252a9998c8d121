// Random JavaScript values (deep, cyclic, huge, of every type) thrown at
// every public method for a bounded time, in a child process: it must end
// with status 0, every call having resolved or failed with an Error.
import test from 'node:test'
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'

const ROOT = fileURLToPath(new URL('..', import.meta.url))

const FUZZER = `
const { Workspace, LocalFilesystem, LocalVector, createWorkspaceTools } = require(${JSON.stringify(ROOT)})
let seed = Number(process.argv[1])
const rand = () => ((seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648)
const pick = (xs) => xs[Math.floor(rand() * xs.length)]
function value(depth = 0) {
  const kinds = ['num', 'str', 'bool', 'null', 'undef', 'arr', 'obj', 'deep', 'cyc', 'huge', 'sym', 'fn', 'big', 'date', 'map', 'nan', 'neg', 'set', 'regexp', 'promise']
  switch (pick(depth > 3 ? kinds.slice(0, 5) : kinds)) {
    case 'num': return pick([0, 1, -1, 5, 1e9, 2 ** 32, 0.5, 1e308])
    case 'str': return pick(['', 'docs', 'a b c', '/../../etc/passwd', 'bm25', 'vector', 'hybrid', 'rrf', '重置密码', '\\u0000', '*', '**/*.md'])
    case 'bool': return rand() < 0.5
    case 'null': return null
    case 'undef': return undefined
    case 'arr': return Array.from({ length: Math.floor(rand() * 4) }, () => value(depth + 1))
    case 'obj': {
      const o = {}
      for (let i = 0; i < rand() * 4; i++) o[pick(['topK', 'mode', 'filter', 'metadata', 'k1', 'b', 'bm25', 'tokenize', 'path', 'content', 'indexName', 'vectors', 'queryVector', 'ids', '$and', '$or', 'x'])] = value(depth + 1)
      return o
    }
    case 'deep': { const root = {}; let d = root; for (let i = 0; i < 3000; i++) { d.x = [{}]; d = d.x[0] } return root }
    case 'cyc': { const o = { a: 1 }; o.self = o; o.arr = [o]; return o }
    case 'huge': return 'word '.repeat(200000)
    case 'sym': return Symbol('s')
    case 'fn': return () => value(depth + 1)
    case 'big': return 12345678901234567890n
    case 'date': return new Date()
    case 'map': return new Map([[1, 2]])
    case 'nan': return NaN
    case 'neg': return -Infinity
    case 'set': return new Set(['a'])
    case 'regexp': return /(?<=a)b|(\\w)\\1/
    case 'promise': return Promise.resolve(value(depth + 1))
  }
}
const attempt = async (f) => {
  try { await f() } catch (e) { if (!(e instanceof Error)) throw new Error('non-Error thrown: ' + String(e)) }
}
const deadline = Date.now() + Number(process.argv[2])
let calls = 0
;(async () => {
  const good = new Workspace({ bm25: true, embedder: async (t) => [t.length % 7, 1, 2] })
  while (Date.now() < deadline) {
    const ws = rand() < 0.7 ? good : await (async () => { try { return new Workspace(value()) } catch { return good } })()
    const lv = new LocalVector()
    const ops = [
      () => ws.index(value(), value(), value()),
      () => ws.index('doc' + calls, 'some text ' + calls, { metadata: value() }),
      () => ws.indexMany(value()),
      () => ws.indexMany([{ path: 'm' + calls, content: 'more text', metadata: value() }]),
      () => ws.search(value(), value()),
      () => ws.search('text', { filter: value(), mode: pick(['bm25', 'vector', 'hybrid']) }),
      () => ws.unindex(value()),
      () => ws.countByPrefix(value()),
      () => ws.removeByPrefix(value()),
      () => ws.rebuildSearchIndex(value()),
      () => ws.stats(),
      () => new LocalFilesystem(value()),
      () => lv.createIndex(value()),
      () => lv.upsert(value()),
      () => lv.query(value()),
      () => lv.deleteVectors(value()),
      () => createWorkspaceTools(value()),
      () => createWorkspaceTools(good).mastra_workspace_search.execute(value()),
    ]
    await attempt(pick(ops))
    calls++
  }
  await good.destroy()
  console.log(JSON.stringify({ calls }))
})()
`

test('random values at every public method: no crash, only Errors', { timeout: 120_000 }, () => {
  for (const seed of [1, 2, 3]) {
    const r = spawnSync(process.execPath, ['-e', FUZZER, String(seed * 7919), '2000'], { encoding: 'utf8', timeout: 60_000 })
    assert.equal(r.signal, null, `seed ${seed}: killed by ${r.signal}\n${r.stderr}`)
    assert.equal(r.status, 0, `seed ${seed}: ${r.stderr}`)
    assert.ok(JSON.parse(r.stdout.trim().split('\n').at(-1)).calls > 100)
  }
})
