// lib/ on its own, without the native addon: the error classes, the
// messages' value descriptions, the result builder, the indexMany splitter,
// the batched JS tokenizer and the agent tools over a recording workspace.
import test from 'node:test'
import assert from 'node:assert/strict'
import { createRequire } from 'node:module'

const require = createRequire(import.meta.url)
const { WorkspaceError, SearchNotAvailableError, WorkspaceNotReadyError } = require('../lib/errors.js')
const { describe } = require('../lib/describe.js')
const { results, resultsOf, SLOTS } = require('../lib/results.js')
const runtime = require('../lib/runtime.js')
const { createWorkspaceTools } = require('../lib/tools.js')

test('lib loads without the addon', () => {
  const loaded = Object.keys(require.cache).filter((k) => k.endsWith('.node') || k.endsWith('binding.js'))
  assert.deepEqual(loaded, [])
})

test('error classes are Error subclasses with codes', () => {
  const e = new WorkspaceNotReadyError('ws-1', 'destroyed')
  assert.ok(e instanceof WorkspaceError && e instanceof Error)
  assert.equal(e.name, 'WorkspaceNotReadyError')
  assert.equal(e.code, 'NOT_READY')
  assert.equal(e.workspaceId, 'ws-1')
  assert.equal(e.message, 'Workspace is not ready (status: destroyed)')
  const n = new SearchNotAvailableError(null)
  assert.equal(n.code, 'NO_SEARCH')
  assert.equal(n.workspaceId, undefined)
  assert.match(n.stack, /SearchNotAvailableError/)
  assert.ok(runtime.makeError('RangeError', 'x') instanceof RangeError)
})

test('describe names every kind of value', () => {
  const cases = [
    [null, 'null'],
    [undefined, 'undefined'],
    [[1], 'an array'],
    [NaN, 'NaN'],
    [3, 'the number 3'],
    [true, 'a boolean (true)'],
    [{}, 'an object'],
    ['s', 'a string'],
    [() => 1, 'a function'],
    [1n, 'a bigint'],
    [Symbol('x'), 'a symbol'],
  ]
  for (const [v, want] of cases) assert.equal(describe(v), want)
})

test('results are built from the flat array, absent parts absent', () => {
  const flat = [
    ...['a.md', 'text', 1, 2, 3, '{"k":1}', 4.5, undefined, undefined, undefined, 0.7, undefined],
    ...['b.md', 'more', 0.5, undefined, undefined, undefined, undefined, 0.9, undefined, undefined, 'the reranker failed: down', undefined],
    // A single string entry comes as its value and key, not JSON text; a piece of a long line (cut at its start).
    ...['c.md#chunk-2', 'c', 0.25, 7, 9, 'c.md', 0.1, undefined, 'sourceFile', undefined, undefined, 1],
    ...['d.md', 'd', 0.2, undefined, undefined, 'x', undefined, undefined, '__proto__', undefined, undefined, undefined],
    // A file-level result: its chunks' ranges as text; its best chunk cut at both ends.
    ...['e.rs', 'e', 0.1, 40, 60, 'e.rs', 0.05, undefined, 'sourceFile', '1,9,40,60', undefined, 3],
  ]
  assert.equal(flat.length, 5 * SLOTS)
  const expected = [
    { id: 'a.md', content: 'text', score: 1, lineRange: { start: 2, end: 3 }, metadata: { k: 1 }, scoreDetails: { bm25: 4.5, rerank: 0.7 } },
    { id: 'b.md', content: 'more', score: 0.5, scoreDetails: { vector: 0.9, rerankError: 'the reranker failed: down' } },
    { id: 'c.md#chunk-2', content: 'c', score: 0.25, lineRange: { start: 7, end: 9 }, metadata: { sourceFile: 'c.md' }, scoreDetails: { bm25: 0.1 }, lineCut: { start: true, end: false } },
    { id: 'd.md', content: 'd', score: 0.2, metadata: JSON.parse('{"__proto__":"x"}'), scoreDetails: {} },
    { id: 'e.rs', content: 'e', score: 0.1, lineRange: { start: 40, end: 60 }, metadata: { sourceFile: 'e.rs' }, scoreDetails: { bm25: 0.05 }, lineRanges: [{ start: 1, end: 9 }, { start: 40, end: 60 }], lineCut: { start: true, end: true } },
  ]
  assert.deepEqual(results(flat), expected)
  assert.deepEqual(resultsOf(...flat), expected)
  assert.deepEqual(Object.keys(results(flat)[0]), ['id', 'content', 'score', 'lineRange', 'metadata', 'scoreDetails'])
  // An own key named __proto__, as JSON.parse makes it; the prototype untouched.
  const d = results(flat)[3].metadata
  assert.deepEqual(Object.keys(d), ['__proto__'])
  assert.equal(Object.getPrototypeOf(d), Object.prototype)
  assert.deepEqual(results([]), [])
})

test('splitDocs checks and splits indexMany documents', () => {
  const docs = [{ path: 'a', content: 'x' }, { path: 'b', content: 'y', metadata: { k: 1 } }, { path: 'c', content: 'z', type: undefined }]
  assert.deepEqual(runtime.splitDocs(docs), { paths: ['a', 'b', 'c'], contents: ['x', 'y', 'z'], extras: [1] })
  assert.throws(() => runtime.splitDocs('x'), { name: 'TypeError', message: 'docs must be an array, got a string' })
  assert.throws(() => runtime.splitDocs([true]), { message: 'docs[0] must be an object, got a boolean (true)' })
  assert.throws(() => runtime.splitDocs([{ path: '', content: '' }]), { message: 'docs[0].path must be a non-empty string' })
  assert.throws(() => runtime.splitDocs([{ path: 'a', content: 1 }]), { message: 'docs[0].content must be a string' })
  assert.throws(() => runtime.splitDocs([{ path: 'a', content: '', extra: 1 }]), { message: /Unknown option 'extra' in docs\[0\]/ })
})

test('tokenizeMany applies a user tokenizer to many texts and checks it', () => {
  const many = runtime.tokenizeMany((t) => t.split(' '))
  assert.deepEqual(many(['a b', 'c']), [['a', 'b'], ['c']])
  assert.deepEqual(runtime.tokenizeMany(() => [1, 'x'])(['q']), [['1', 'x']])
  assert.throws(() => runtime.tokenizeMany(() => null)(['q']), { message: 'tokenize.tokenizer must return an array of strings, got null' })
  assert.deepEqual(runtime.setValues(new Set(['a'])), ['a'])
  assert.equal(runtime.setValues(['a']), null)
})

test('tokenizerIdentity: the source text and the tokens per probe, or what a probe throws', () => {
  const words = (lower) => (t) => t.split(' ').map((w) => (lower ? w.toLowerCase() : w))
  const probes = ['The Fox', 'Café']
  assert.equal(runtime.tokenizerIdentity(words(true), probes), runtime.tokenizerIdentity(words(true), probes))
  assert.notEqual(runtime.tokenizerIdentity(words(true), probes), runtime.tokenizerIdentity(words(false), probes))
  const asciiOnly = (t) => {
    if (/[^a-z ]/i.test(t)) throw new Error('ASCII only')
    return [t]
  }
  assert.deepEqual(JSON.parse(runtime.tokenizerIdentity(asciiOnly, probes))[1], [['The Fox'], { threw: 'ASCII only' }])
})

/** A stand-in with the Workspace members the tools use, recording calls. */
function recordingWorkspace({ canBM25 = true, canVector = false, readOnly = false } = {}) {
  const calls = []
  return {
    calls,
    canBM25,
    canVector,
    canHybrid: canBM25 && canVector,
    filesystem: { readOnly },
    async search(query, options) {
      calls.push(['search', query, options])
      return [{ id: 'a.md', content: 'hello', score: 1, lineRange: { start: 2, end: 2 }, scoreDetails: {} }]
    },
    async index(path, content, options) {
      calls.push(['index', path, content, options])
    },
  }
}

test('tools: names, schemas, fallback modes, validation', async () => {
  const ws = recordingWorkspace()
  const tools = createWorkspaceTools(/** @type {any} */ (ws))
  assert.deepEqual(Object.keys(tools), ['mastra_workspace_search', 'mastra_workspace_index'])
  const search = tools.mastra_workspace_search
  const schema = search.inputSchema['~standard'].jsonSchema.input({ target: 'draft-07' })
  assert.deepEqual(schema.properties.mode.enum, ['bm25'])
  assert.deepEqual(schema.required, ['query'])
  // Without highlight() on the workspace, the query's words are matched in JavaScript; results are asked by file.
  // A text that would not start at line 1 by them (lineRange 2-2 for its first line) shows no line: matched
  // otherwise than the workspace matched, where it lies in the file is not known.
  assert.equal(await search.execute({ query: 'Hello', mode: 'hybrid' }), 'a.md:2-2  1.000\n\n[no more results]')
  assert.deepEqual(ws.calls[0], ['search', 'Hello', { topK: 51, mode: 'bm25', minScore: undefined, group: 'file' }])
  await assert.rejects(search.execute({ query: 3 }), { name: 'TypeError', message: 'Invalid tool input: query must be a string, got number' })
  const issues = search.inputSchema['~standard'].validate({ query: 'x', bogus: 1 }).issues
  assert.equal(issues[0].message, 'Unknown field "bogus" (expected query, topK, mode, minScore, maxTokens, cursor, repeat)')
  const plain = createWorkspaceTools(/** @type {any} */ (ws), { maxTokens: false }).mastra_workspace_search
  assert.equal(await plain.execute({ query: 'hi', mode: 'hybrid' }), 'a.md:2-2: hello\n---\n1 result (bm25 search)')
  assert.deepEqual(ws.calls[1], ['search', 'hi', { topK: 5, mode: 'bm25', minScore: undefined }])
  assert.equal(plain.inputSchema['~standard'].validate({ query: 'x', bogus: 1 }).issues[0].message, 'Unknown field "bogus" (expected query, topK, mode, minScore)')
  assert.equal(await tools.mastra_workspace_index.execute({ path: 'n.md', content: 'c' }), 'Indexed n.md')
  assert.deepEqual(ws.calls[2], ['index', 'n.md', 'c', { metadata: undefined }])
  assert.deepEqual(Object.keys(createWorkspaceTools(/** @type {any} */ (recordingWorkspace({ readOnly: true })))), ['mastra_workspace_search'])
  assert.deepEqual(createWorkspaceTools(/** @type {any} */ (recordingWorkspace({ canBM25: false }))), {})
  assert.throws(() => createWorkspaceTools(/** @type {any} */ ({})), { message: 'createWorkspaceTools needs a Workspace' })
})
