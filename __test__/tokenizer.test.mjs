// Tokenization options through the Workspace: Mastra's pipeline, CJK,
// stopwords, patterns, custom JavaScript tokenizers and the additions.
import test from 'node:test'
import assert from 'node:assert/strict'
import { Workspace, ids } from './helpers.mjs'

async function hits(tokenize, docs, query) {
  const ws = new Workspace({ bm25: { tokenize } })
  for (const [id, text] of Object.entries(docs)) await ws.index(id, text)
  return ids(await ws.search(query, { topK: 10 })).sort()
}

test('Unicode letters and numbers of every script, lowercased', async () => {
  const docs = { ru: 'Привет Мир', de: 'Größe Ärger', num: 'Error 404 happened', snake: 'call parse_user_id here' }
  assert.deepEqual(await hits(undefined, docs, 'мир'), ['ru'])
  assert.deepEqual(await hits(undefined, docs, 'GRÖSSE größe'), ['de'])
  assert.deepEqual(await hits(undefined, docs, '404'), ['num'])
  assert.deepEqual(await hits(undefined, docs, 'parse_user_id'), ['snake'])
  // Mastra keeps snake_case whole; the default also indexes the parts.
  assert.deepEqual(await hits({ preset: 'mastra' }, docs, 'parse'), [])
  assert.deepEqual(await hits(undefined, docs, 'parse'), ['snake'])
})

test("defaults: English stemming and identifier splitting; the mastra preset is Mastra's exact tokenization", async () => {
  const docs = { a: 'Connecting the routers', b: 'function getUserName() {}', c: '中文分词' }
  assert.deepEqual(await hits(undefined, docs, 'connected router'), ['a'])
  assert.deepEqual(await hits(undefined, docs, 'user name'), ['b'])
  assert.deepEqual(await hits(undefined, docs, '中文'), ['c'])
  assert.deepEqual(await hits({ preset: 'mastra' }, docs, 'connected router'), [])
  assert.deepEqual(await hits({ preset: 'mastra' }, docs, 'user name'), [])
  assert.deepEqual(await hits({ preset: 'mastra' }, docs, '中文'), [])
  assert.deepEqual(await hits({ preset: 'mastra' }, docs, 'getusername'), ['b'])
  // Other keys adjust a preset.
  assert.deepEqual(await hits({ preset: 'mastra', stem: 'english' }, docs, 'connected router'), ['a'])
  assert.deepEqual(await hits({ stem: false }, docs, 'connected router'), [])
})

test('CJK text is searchable by default (bigrams); cjkBigrams:false is Mastra', async () => {
  const docs = { zh: '我们学习中文分词技术', ja: '東京タワーに行きました', ko: '한국어 검색 엔진' }
  assert.deepEqual(await hits(undefined, docs, '中文'), ['zh'])
  assert.deepEqual(await hits(undefined, docs, '分词技术'), ['zh'])
  assert.deepEqual(await hits(undefined, docs, 'タワー'), ['ja'])
  assert.deepEqual(await hits(undefined, docs, '검색'), ['ko'])
  assert.deepEqual(await hits({ preset: 'mastra' }, docs, '中文'), [])
  assert.deepEqual(await hits({ preset: 'mastra' }, docs, '我们学习中文分词技术'), ['zh'])
})

test('stopwords as a Set, an array, or none', async () => {
  const docs = { a: 'the quick fox', b: 'quick brown dog' }
  assert.deepEqual(await hits(undefined, docs, 'the'), [])
  assert.deepEqual(await hits({ stopwords: [] }, docs, 'the'), ['a'])
  assert.deepEqual(await hits({ stopwords: new Set(['quick']) }, docs, 'quick'), [])
  assert.deepEqual(await hits({ stopwords: ['dog'] }, docs, 'the dog'), ['a'])
})

test('lowercase, removePunctuation, minLength and splitPattern', async () => {
  assert.deepEqual(await hits({ lowercase: false }, { a: 'Rust', b: 'rust' }, 'Rust'), ['a'])
  assert.deepEqual(await hits({ removePunctuation: false }, { a: 'v1.2.3 release', b: 'v1 2 3' }, 'v1.2.3'), ['a'])
  assert.deepEqual(await hits({ minLength: 1 }, { a: 'x marks', b: 'y marks' }, 'x'), ['a'])
  assert.deepEqual(await hits({ splitPattern: /[\s,]+/, removePunctuation: false }, { a: 'red,green', b: 'red green blue' }, 'green'), ['a', 'b'])
  assert.deepEqual(await hits({ splitPattern: ';', removePunctuation: false }, { a: 'one two;three', b: 'one two' }, 'one two'), ['a', 'b'])
})

test('a custom JavaScript tokenizer is used as it is, for documents, queries and line ranges', async () => {
  const seen = []
  const tokenizer = (text) => {
    seen.push(text)
    return text.split(/[|\s]+/).filter(Boolean)
  }
  const ws = new Workspace({ bm25: { tokenize: { tokenizer } } })
  await ws.index('a', 'Alpha|Beta\nGamma|Delta')
  await ws.indexMany([{ path: 'b', content: 'Beta|x' }])
  const results = await ws.search('Beta|Gamma')
  assert.deepEqual(ids(results), ['a', 'b'])
  assert.deepEqual(results[0].lineRange, { start: 1, end: 2 })
  assert.deepEqual(await ws.search('beta'), [], 'no lowercasing')
  assert.ok(seen.includes('Beta|Gamma'))
})

test("with a custom JavaScript tokenizer, vector hits have the line range of the query's tokens, as Mastra finds it line by line (they had none)", async () => {
  const tokenizer = (text) => text.toLowerCase().split(/[^a-z0-9]+/).filter((w) => w.length >= 2)
  // A bag of words hashed to 16 dimensions: 'nothing here' is still near 'heron'.
  const embed = (t) => {
    const v = new Array(16).fill(0.01)
    for (const w of t.toLowerCase().match(/[a-z]+/g) ?? []) v[[...w].reduce((h, c) => h * 31 + c.charCodeAt(0), 7) % 16] += 1
    return v
  }
  const ws = new Workspace({ bm25: { tokenize: { tokenizer } }, embedder: async (t) => embed(t) })
  await ws.index('a.md', 'intro line\nthe heron flies\nend\nheron again\nlast')
  await ws.index('b.md', 'nothing here\nat all')
  await ws.indexMany([{ path: 'c.md', content: 'x\nheron', startLineOffset: 10 }])
  for (const mode of ['vector', 'hybrid', 'bm25']) {
    const results = await ws.search('Heron', { mode, topK: 5 })
    const range = (id) => results.find((r) => r.id === id)?.lineRange
    assert.deepEqual(range('a.md'), { start: 2, end: 4 }, mode)
    assert.deepEqual(range('c.md'), { start: 11, end: 11 }, mode)
    if (mode !== 'bm25') assert.equal(range('b.md'), undefined, 'no line holds a query token')
  }
  await ws.destroy()
})

test('a custom tokenizer also serves auto-indexing, chunks included', async (t) => {
  const { tree, LocalFilesystem } = await import('./helpers.mjs')
  const long = Array.from({ length: 60 }, (_, i) => (i === 50 ? 'Needle|Here' : `row|${i}`)).join('\n')
  const dir = tree(t, { 'a.md': 'Alpha|Beta', 'big.md': long })
  const ws = new Workspace({
    filesystem: new LocalFilesystem({ basePath: dir }),
    autoIndexPaths: ['.'],
    chunking: { maxChars: 200 },
    bm25: { tokenize: { tokenizer: (text) => text.split(/[|\s]+/).filter(Boolean) } },
  })
  const report = await ws.init()
  assert.equal(report.indexed, 2)
  assert.ok(report.chunks > 1)
  assert.deepEqual(ids(await ws.search('Beta')), ['a.md'])
  const [hit] = await ws.search('Needle')
  assert.match(hit.id, /^big\.md#chunk-\d+$/)
  assert.deepEqual(hit.lineRange, { start: 51, end: 51 })
})

test('errors of a custom tokenizer reach the caller as the same Error object', async () => {
  class TokenizerFailure extends Error {
    code = 'E_TOK'
  }
  const thrown = new TokenizerFailure('cannot tokenize')
  const ws = new Workspace({ bm25: { tokenize: { tokenizer: (text) => {
    if (text.includes('boom')) throw thrown
    return text.split(' ')
  } } } })
  await ws.index('ok', 'fine text')
  await assert.rejects(ws.index('bad', 'boom here'), (err) => err === thrown)
  await assert.rejects(ws.search('boom'), (err) => err === thrown)
  assert.deepEqual(ids(await ws.search('fine')), ['ok'])
  const notArray = new Workspace({ bm25: { tokenize: { tokenizer: () => 'words' } } })
  await assert.rejects(notArray.index('a', 'b'), { name: 'TypeError', message: /tokenize.tokenizer must return an array/ })
  // A sparse array's holes are read as undefined elements (napi's untyped error before).
  const sparse = new Workspace({ bm25: { tokenize: { tokenizer: (text) => {
    const tokens = text.split(' ')
    tokens[tokens.length + 1] = 'tail'
    return tokens
  } } } })
  await sparse.index('a', 'hello world')
  assert.deepEqual(ids(await sparse.search('tail')), ['a'])
})

test('foldDiacritics keeps Hangul syllables and kana voicing; the default bigrams keep a word mixing CJK with other characters whole (1층, 5月)', async () => {
  const korean = { a: '국경 검문소', b: '구경 가자' }
  assert.deepEqual(await hits({ foldDiacritics: true }, korean, '국경'), ['a'])
  assert.deepEqual(await hits({ foldDiacritics: true }, korean, '국'), [])
  assert.deepEqual(await hits({ foldDiacritics: true }, { a: 'ガス', b: 'カス' }, 'ガス'), ['a'])
  assert.deepEqual(await hits(undefined, { a: '1층 로비', b: '2층 식당', c: '5月 予定' }, '1층'), ['a'])
  assert.deepEqual(await hits(undefined, { a: '1층 로비', b: '2층 식당', c: '5月 予定' }, '5月'), ['c'])
})

test('foldDiacritics, splitIdentifiers and stem', async () => {
  assert.deepEqual(await hits({ foldDiacritics: true }, { a: 'Café crème', b: 'tea' }, 'cafe creme'), ['a'])
  assert.deepEqual(await hits(undefined, { a: 'Café crème', b: 'tea' }, 'cafe'), [])
  const code = { a: 'function parseUserId(raw) {}', b: 'const HTTPServer2 = make()', c: 'def parse_user_id(): pass' }
  assert.deepEqual(await hits({ splitIdentifiers: true }, code, 'user id'), ['a', 'c'])
  assert.deepEqual(await hits({ splitIdentifiers: true }, code, 'server'), ['b'])
  assert.deepEqual(await hits({ splitIdentifiers: true }, code, 'parseuserid'), ['a'])
  assert.deepEqual(await hits({ stem: 'english' }, { a: 'running connections', b: 'walk' }, 'connected runs'), ['a'])
  assert.deepEqual(await hits({ stem: 'english' }, { a: 'Häuser bauen', b: 'haus' }, 'häuser'), ['a'])
})
