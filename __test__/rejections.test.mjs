// What a user's embedder throws reaches the caller as it was thrown: a
// string, a number, null, undefined, a plain object or an Error subclass
// (its own class and fields), through index(), indexMany() and search().
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { Workspace, lib } from './helpers.mjs'

class QuotaError extends Error {
  constructor() {
    super('over quota')
    this.name = 'QuotaError'
    this.retryAfter = 5
  }
}

test("an embedder's rejection value is handed back as it is, whatever it is", async () => {
  const values = { string: 'quota', number: 42, null: null, undefined, object: { code: 'E_QUOTA' }, subclass: new QuotaError() }
  for (const [label, value] of Object.entries(values)) {
    for (const sync of [false, true]) {
      const embedder = sync
        ? () => {
            throw value
          }
        : async () => {
            throw value
          }
      const ws = new Workspace({ bm25: true, vectorStore: new lib.LocalVector({ id: `v-${label}` }), embedder })
      const calls = {
        index: () => ws.index('a.md', 'hello world'),
        indexMany: () => ws.indexMany([{ path: 'b.md', content: 'hello' }]),
        search: () => ws.search('hello', { mode: 'vector' }),
      }
      for (const [name, call] of Object.entries(calls)) {
        const got = await call().then(
          () => ({ resolved: true }),
          (e) => ({ e }),
        )
        assert.ok(!got.resolved, `${label} ${name}: rejected`)
        assert.equal(got.e, value, `${label} (${sync ? 'thrown' : 'rejected'}) through ${name}: the same value`)
      }
      if (typeof value === 'object' && value !== null) assert.ok('report' in value, `${label}: an object carries indexMany's report`)
      await ws.destroy()
    }
  }
})
