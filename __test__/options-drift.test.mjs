// The option names in the declarations (binding.d.ts) and the ones the
// addon accepts must be the same lists: an unknown key is rejected with the
// accepted keys named, each of which the declarations must have, and every
// declared key must be accepted.
import test from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs'
import { createRequire } from 'node:module'

const require = createRequire(import.meta.url)
const { Workspace, LocalVector } = require('../index.js')
const dts = fs.readFileSync(new URL('../binding.d.ts', import.meta.url), 'utf8')

/** The keys of `export interface name { ... }` (top level only). */
function interfaceKeys(name) {
  const m = dts.match(new RegExp(`export interface ${name} (?:extends \\w+ )?\\{\\n([\\s\\S]*?)\\n\\}`))
  assert.ok(m, `interface ${name} declared`)
  return [...m[1].matchAll(/^ {2}(\w+)\??:/gm)].map((k) => k[1])
}

/** The keys of the inline `params: { ... }` of a LocalVector method. */
function paramKeys(method) {
  const start = dts.indexOf('export declare class LocalVector')
  const cls = dts.slice(start, dts.indexOf('\n}', start))
  const m = cls.match(new RegExp(`\\n  ${method}\\(params: \\{ ([^}]*?(?:\\{[^}]*\\}[^}]*?)*) \\}\\)`))
  assert.ok(m, `LocalVector.${method} declared`)
  return [...m[1].replace(/\{[^}]*\}/g, '').matchAll(/(\w+)\??:/g)].map((k) => k[1])
}

/** The keys an error for an unknown key lists as accepted. */
async function acceptedKeys(call) {
  try {
    await call({ bogusKey: 1 })
  } catch (err) {
    const m = String(err.message).match(/Unknown option 'bogusKey' in .* \(expected one of: (.*)\)$/)
    assert.ok(m, err.message)
    return m[1].split(', ')
  }
  assert.fail('an unknown key was accepted')
}

/** Whether a call with only `key` set fails because of the key's name. */
async function rejectsName(call, key) {
  try {
    await call({ [key]: Symbol('wrong type on purpose') })
  } catch (err) {
    return /Unknown option/.test(err.message)
  }
  return false
}

async function sameKeys(declared, call, what) {
  const accepted = await acceptedKeys(call)
  for (const k of accepted) assert.ok(declared.includes(k), `${what}: '${k}' accepted but not declared`)
  for (const k of declared) assert.equal(await rejectsName(call, k), false, `${what}: '${k}' declared but rejected`)
}

test('Workspace, search, index, tokenize and chunking options: declared = accepted', async () => {
  await sameKeys(interfaceKeys('WorkspaceOptions'), (o) => new Workspace(o), 'WorkspaceOptions')
  await sameKeys(interfaceKeys('TokenizeOptions'), (o) => new Workspace({ bm25: { tokenize: o } }), 'TokenizeOptions')
  await sameKeys(interfaceKeys('ChunkingOptions'), (o) => new Workspace({ chunking: o }), 'ChunkingOptions')
  const ws = new Workspace({ bm25: true })
  await sameKeys(interfaceKeys('SearchOptions'), (o) => ws.search('q', o), 'SearchOptions')
  await sameKeys(interfaceKeys('IndexOptions'), (o) => ws.index('p', 'c', o), 'IndexOptions')
})

test('LocalVector method parameters: declared = accepted', async () => {
  const lv = new LocalVector()
  await lv.createIndex({ indexName: 'drift', dimension: 2 })
  for (const method of ['createIndex', 'upsert', 'query', 'updateVector', 'deleteVector', 'deleteVectors', 'describeIndex', 'deleteIndex']) {
    await sameKeys(paramKeys(method), (o) => lv[method]({ indexName: 'drift', ...o }), `LocalVector.${method}`)
  }
  await assert.rejects(lv.upsert({ indexName: 'drift', vectors: [[1, 0]], sparseVectors: [] }), { message: /Unknown option 'sparseVectors'/ })
})

test('the engine crates carry the package version (a saved index records it and is rebuilt by another version)', () => {
  const version = JSON.parse(fs.readFileSync(new URL('../package.json', import.meta.url), 'utf8')).version
  for (const toml of ['../Cargo.toml', '../crates/core/Cargo.toml']) {
    const found = fs.readFileSync(new URL(toml, import.meta.url), 'utf8').match(/^version = "([^"]+)"/m)?.[1]
    assert.equal(found, version, `${toml} version`)
  }
})
