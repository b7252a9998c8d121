// `workspace-search mcp <folder>` driven by the MCP TypeScript SDK's own
// client over stdio, as Claude Code, Cursor or Codex start it.
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { spawn } from 'node:child_process'
import test, { after } from 'node:test'
import assert from 'node:assert/strict'
import { fileURLToPath } from 'node:url'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { tree, eventually } from './helpers.mjs'

const CLI = fileURLToPath(new URL('../bin/workspace-search.js', import.meta.url))

// The saved index goes to a temporary cache folder, not the user's, outside
// the test's tree: a server writes it as it ends, after the tree is removed.
const CACHES = fs.mkdtempSync(path.join(os.tmpdir(), 'wss-mcp-cache-'))
after(() => fs.rmSync(CACHES, { recursive: true, force: true }))
const envFor = (dir) => ({ ...process.env, XDG_CACHE_HOME: path.join(CACHES, path.basename(dir)) })

async function connect(t, dir, extra = []) {
  const transport = new StdioClientTransport({ command: process.execPath, args: [CLI, 'mcp', dir, ...extra], stderr: 'pipe', env: envFor(dir) })
  const client = new Client({ name: 'test-client', version: '1.0.0' })
  await client.connect(transport)
  t.after(() => client.close())
  return client
}

const text = (result) => result.content.map((c) => c.text).join('\n')

test('mcp: lists its tools, searches, reports status, and answers bad arguments with a tool error', async (t) => {
  const files = {
    'src/auth/reset.ts': 'export function resetPassword(user) {\n  // send the reset link\n}\n',
    'docs/guide.md': '# Guide\n\nRouters and switches.\n',
    'docs/密码.md': '如何重置密码\n',
  }
  for (let i = 0; i < 30; i++) files[`notes/n${i}.md`] = `note ${i} about routers\n`
  const dir = tree(t, files)
  const client = await connect(t, dir)
  const { tools } = await client.listTools()
  assert.deepEqual(tools.map((x) => x.name), ['workspace_search', 'workspace_grep', 'workspace_index_status'])
  assert.deepEqual(tools[0].inputSchema.required, ['query'])
  // The JSON Schemas the SDK makes of the tools' zod schemas: every argument typed and bounded, no others allowed.
  const { properties, additionalProperties } = tools[0].inputSchema
  assert.deepEqual(Object.keys(properties), ['query', 'topK', 'mode', 'minScore', 'path', 'maxTokens', 'cursor', 'repeat'])
  assert.equal(additionalProperties, false)
  assert.deepEqual([properties.query.type, properties.query.pattern], ['string', '\\S'])
  assert.deepEqual([properties.topK.type, properties.topK.minimum, properties.topK.maximum, properties.topK.default], ['integer', 1, 50, undefined])
  assert.deepEqual([properties.maxTokens.type, properties.maxTokens.minimum, properties.maxTokens.maximum, properties.maxTokens.default], ['integer', 100, 100000, 2000])
  assert.deepEqual([properties.cursor.type, properties.repeat.type, properties.repeat.default], ['string', 'boolean', false])
  assert.match(tools[0].description, /maxTokens \(default 2000\).*cursor.*repeat/s)
  assert.deepEqual(properties.mode.enum, ['bm25', 'vector', 'hybrid'])
  assert.deepEqual([properties.minScore.type, properties.minScore.minimum, properties.minScore.maximum], ['number', 0, 1])
  assert.equal(properties.path.type, 'string')
  for (const p of Object.values(properties)) assert.ok(p.description, JSON.stringify(p))
  assert.deepEqual([tools[2].inputSchema.properties, tools[2].inputSchema.additionalProperties], [{}, false])
  assert.deepEqual(tools[1].inputSchema.required, ['pattern'])
  assert.match(tools[0].description, /^Search the files of this workspace by keywords/)

  const progress = []
  const found = await client.callTool({ name: 'workspace_search', arguments: { query: 'reset password', topK: 3 } }, undefined, { onprogress: (p) => progress.push(p) })
  assert.equal(found.isError, undefined)
  assert.equal(text(found), 'src/auth/reset.ts:1-2  1.000\n1:export function resetPassword(user) {\n2:  // send the reset link\n3-}\n\n[no more results]')

  const cjk = await client.callTool({ name: 'workspace_search', arguments: { query: '重置密码' } })
  assert.match(text(cjk), /^docs\/密码\.md:1-1/)
  const scoped = await client.callTool({ name: 'workspace_search', arguments: { query: 'routers', path: 'docs/' } })
  assert.match(text(scoped), /^docs\/guide\.md:3-3/)
  assert.doesNotMatch(text(scoped), /notes\//)

  const status = await client.callTool({ name: 'workspace_index_status', arguments: {} })
  assert.match(text(status), /status: ready\n.*\nfiles indexed at start: 33 \(0 chunks\)\ndocuments now: 33/)

  // Checked by the SDK against the zod schemas: its own wording around the schemas' messages.
  for (const [args, message] of [
    [{ topK: 3 }, 'query must be a non-empty string'],
    [{ query: ' \n ' }, 'query must be a non-empty string'],
    [{ query: 'x', topK: 0 }, 'topK must be a whole number from 1 to 50'],
    [{ query: 'x', topK: 2.5 }, 'topK must be a whole number from 1 to 50'],
    [{ query: 'x', mode: 'fuzzy' }, 'mode must be bm25, vector or hybrid'],
    [{ query: 'x', minScore: 2 }, 'minScore must be a number from 0 to 1'],
    [{ query: 'x', path: 3 }, 'path must be a string'],
    [{ query: 'x', bogus: 1 }, 'unknown argument "bogus"'],
    [{ query: 'x', maxTokens: 99 }, 'maxTokens must be a whole number from 100 to 100000'],
    [{ query: 'x', maxTokens: 2000.5 }, 'maxTokens must be a whole number from 100 to 100000'],
    [{ query: 'x', maxTokens: 1e308 }, 'maxTokens must be a whole number from 100 to 100000'],
    [{ query: 'x', topK: 1e308 }, 'topK must be a whole number from 1 to 50'],
    [{ query: 'x', cursor: 5 }, 'cursor must be a string'],
    [{ query: 'x', repeat: 'yes' }, 'repeat must be true or false'],
  ]) {
    const bad = await client.callTool({ name: 'workspace_search', arguments: args })
    assert.equal(bad.isError, true)
    assert.match(text(bad), /Invalid arguments for tool workspace_search: /)
    // Once: a number that is not whole is not checked against its bounds too (1e308 said it twice).
    assert.equal(text(bad).split(message).length, 2, `${JSON.stringify(args)}: ${text(bad)}`)
  }
  const vector = await client.callTool({ name: 'workspace_search', arguments: { query: 'x', mode: 'vector' } })
  assert.equal(vector.isError, true)
  assert.equal(text(vector), 'mode vector needs an embedder (start the server with --embedder or WORKSPACE_SEARCH_EMBEDDER); use bm25')
  const extra = await client.callTool({ name: 'workspace_index_status', arguments: { verbose: true } })
  assert.equal(extra.isError, true)
  assert.ok(text(extra).includes('unknown argument "verbose"'), text(extra))
  const none = await client.callTool({ name: 'workspace_search', arguments: { query: 'zebra' } })
  assert.equal(text(none), 'No results for "zebra".')
  const badCursor = await client.callTool({ name: 'workspace_search', arguments: { query: 'routers', cursor: '3.0123abcd' } })
  assert.equal(badCursor.isError, true)
  assert.match(text(badCursor), /^cursor belongs to another search/)
})

test('mcp: an embedder module enables vector and hybrid search', async (t) => {
  const dir = tree(t, {
    'a.md': 'cats and kittens\n',
    'b.md': 'dogs and puppies\n',
    'embedder.mjs': `export default async (text) => [text.includes('cat') || text.includes('kitten') ? 1 : 0, text.includes('dog') || text.includes('pupp') ? 1 : 0, 0.1]\n`,
  })
  const client = await connect(t, dir, ['--embedder', `${dir}/embedder.mjs`])
  const out = text(await client.callTool({ name: 'workspace_search', arguments: { query: 'kitten', mode: 'vector', topK: 1 } }))
  assert.match(out, /^a\.md/)
})

/** Bytes of a request line over the SDK's 10 MiB stdio cap. */
const OVERSIZE = 12 * 1024 * 1024

test('mcp: a request line over 10 MiB gets an error reply with its id, and the server goes on serving', async (t) => {
  const dir = tree(t, { 'a.md': 'hello world\n' })
  const client = await connect(t, dir)
  await assert.rejects(client.callTool({ name: 'workspace_search', arguments: { query: 'x'.repeat(OVERSIZE) } }), (err) => {
    assert.equal(err.code, -32600, err.message)
    assert.match(err.message, /Request too large: a line of \d+ bytes is over the limit of 10485760 bytes/)
    return true
  })
  const after = await client.callTool({ name: 'workspace_search', arguments: { query: 'hello' } })
  assert.match(text(after), /^a\.md:1-1/)
})

test('mcp: an oversize line without a readable id, written in pieces, is answered without an id; the next request is served', async (t) => {
  const dir = tree(t, { 'a.md': 'hello world\n' })
  const child = spawn(process.execPath, [CLI, 'mcp', dir], { env: envFor(dir) })
  t.after(() => child.kill())
  let exited = null
  child.on('exit', (code) => (exited = code))
  child.stdin.on('error', () => {}) // a server that exited is reported below, not as EPIPE
  let stdout = ''
  let stderr = ''
  child.stdout.on('data', (d) => (stdout += d))
  child.stderr.on('data', (d) => (stderr += d))
  const replies = () => stdout.split('\n').filter(Boolean).map((l) => JSON.parse(l))
  const reply = (what, match) => eventually(what, () => (exited !== null ? assert.fail(`server exited ${exited}: ${stderr}`) : replies().find(match)))
  const send = (message) => child.stdin.write(`${JSON.stringify(message)}\n`)

  send({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } })
  await reply('initialize result', (m) => m.id === 1)
  send({ jsonrpc: '2.0', method: 'notifications/initialized' })
  // Not JSON at all, in 1 MiB writes: the cap is crossed mid-line.
  const piece = Buffer.alloc(1024 * 1024, 'x')
  for (let i = 0; i < OVERSIZE / piece.length; i++) child.stdin.write(piece)
  child.stdin.write('\n')
  const error = await reply('error reply', (m) => m.error)
  assert.equal(error.id, undefined)
  assert.equal(error.error.code, -32600)
  assert.match(error.error.message, /over the limit of 10485760 bytes/)
  assert.match(stderr, /dropped a request line of 12582913 bytes/)

  send({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'workspace_search', arguments: { query: 'hello' } } })
  const found = await reply('search result', (m) => m.id === 2)
  assert.match(found.result.content[0].text, /^a\.md:1-1/)
})

test('mcp: control characters from files come back escaped (\\x1b), as on the command line', async (t) => {
  const dir = tree(t, { 'tricks.md': 'terminal \x1b[2J and \x1b]0;pwned\x07 and \u009b31m\n', 'odd\x1b[2Kname.md': 'terminal\n' })
  const client = await connect(t, dir)
  const out = text(await client.callTool({ name: 'workspace_search', arguments: { query: 'terminal' } }))
  assert.ok(!/[\x00-\x08\x0b-\x1f\x7f-\x9f]/.test(out), JSON.stringify(out))
  assert.ok(out.includes('terminal \\x1b[2J and \\x1b]0;pwned\\x07 and \\x9b31m'), out)
  assert.ok(out.includes('odd\\x1b[2Kname.md:1-1'), out)
})

test('mcp: workspace_grep prints matches as ripgrep does, within its token budget; bad patterns are tool errors', async (t) => {
  const files = { 'src/a.ts': 'const x = 1\n// TODO: one\nconst y = 2\n', 'src/b.ts': 'nothing\n' }
  for (let i = 0; i < 200; i++) files[`many/m${String(i).padStart(3, '0')}.md`] = `TODO item ${i} ${'words '.repeat(20)}\n`
  const client = await connect(t, tree(t, files))
  const one = await client.callTool({ name: 'workspace_grep', arguments: { pattern: 'TODO: \\w+', path: 'src', contextLines: 1 } })
  assert.equal(text(one), '1 match in 1 file\nsrc/a.ts-1-const x = 1\nsrc/a.ts:2:4:// TODO: one\nsrc/a.ts-3-const y = 2')
  const big = await client.callTool({ name: 'workspace_grep', arguments: { pattern: 'TODO', maxTokens: 300 } })
  const lines = text(big).split('\n')
  assert.equal(lines[0], '201 matches in 201 files')
  assert.match(lines.at(-1), /^\[\d+ more matches left out to fit 300 tokens/)
  assert.ok(lines.length > 3 && lines.length < 60, String(lines.length))
  const bad = await client.callTool({ name: 'workspace_grep', arguments: { pattern: '(' } })
  assert.equal(bad.isError, true)
  assert.match(text(bad), /Invalid regular expression/)
  // A whole number past 2^53 is refused for what it is (it was "must be a whole number of at least 1").
  const huge = await client.callTool({ name: 'workspace_grep', arguments: { pattern: 'TODO', maxCount: 2 ** 53 } })
  assert.equal(huge.isError, true)
  assert.ok(text(huge).includes(`maxCount must be a whole number from 1 to ${Number.MAX_SAFE_INTEGER}`), text(huge))
  const none = await client.callTool({ name: 'workspace_grep', arguments: { pattern: 'zzz_nothing' } })
  assert.equal(text(none), '0 matches in 0 files')
})

test('mcp: workspace_grep gives each context line once, in memory and in print (each match carried its own copy: contextLines 100 over many matches ran out of memory)', async (t) => {
  const files = { 'many.ts': 'xxxxxxxxxxxxxxxxxxxxxx\n'.repeat(10_000), 'ctx.md': 'ctx1\nctx2\nMATCH a\nctx4\nMATCH b\nctx6\nctx7\nctx8\nctx9\nMATCH c\nctx11\n' }
  const dir = tree(t, files)
  // Under a 64 MB heap: 10,000 matches with 200 lines of context each are 2 million lines.
  const transport = new StdioClientTransport({ command: process.execPath, args: ['--max-old-space-size=64', CLI, 'mcp', dir, '--no-persist'], stderr: 'pipe', env: envFor(dir) })
  const client = new Client({ name: 'test-client', version: '1.0.0' })
  await client.connect(transport)
  t.after(() => client.close())
  const many = text(await client.callTool({ name: 'workspace_grep', arguments: { pattern: 'x', path: 'many.ts', contextLines: 100 } })).split('\n')
  assert.equal(many[0], '10000 matches in 1 file')
  assert.deepEqual(many.slice(1, 3), ['many.ts:1:1:xxxxxxxxxxxxxxxxxxxxxx', 'many.ts:2:1:xxxxxxxxxxxxxxxxxxxxxx'])
  // Neighbouring matches share their context lines; a gap wider than twice the context separates groups.
  const shared = await client.callTool({ name: 'workspace_grep', arguments: { pattern: 'MATCH', path: 'ctx.md', contextLines: 1 } })
  assert.equal(text(shared), '3 matches in 1 file\nctx.md-2-ctx2\nctx.md:3:1:MATCH a\nctx.md-4-ctx4\nctx.md:5:1:MATCH b\nctx.md-6-ctx6\n--\nctx.md-9-ctx9\nctx.md:10:1:MATCH c\nctx.md-11-ctx11')
  const joined = await client.callTool({ name: 'workspace_grep', arguments: { pattern: 'MATCH', path: 'ctx.md', contextLines: 3 } })
  assert.equal(text(joined), `3 matches in 1 file\n${files['ctx.md'].split('\n').map((line, i) => `ctx.md${line.startsWith('MATCH') ? `:${i + 1}:1:` : `-${i + 1}-`}${line}`).join('\n')}`)
})

test('mcp: an --index-dir that cannot hold the index is said on stderr; the server serves', async (t) => {
  const dir = tree(t, { 'a.md': 'hello world\n' })
  const file = path.join(tree(t, { 'not-a-folder': 'x\n' }), 'not-a-folder')
  const transport = new StdioClientTransport({ command: process.execPath, args: [CLI, 'mcp', dir, '--index-dir', file], stderr: 'pipe', env: envFor(dir) })
  let stderr = ''
  transport.stderr.on('data', (d) => (stderr += d))
  const client = new Client({ name: 'test-client', version: '1.0.0' })
  await client.connect(transport)
  t.after(() => client.close())
  assert.match(text(await client.callTool({ name: 'workspace_search', arguments: { query: 'hello' } })), /^a\.md:1-1/)
  await eventually('the warning on stderr', () => stderr.includes('\n'))
  assert.equal(stderr, `workspace-search mcp: persist: ${file} cannot be used (it is not a directory); nothing is saved\n`)
})

test('mcp: a very long matching line (minified code) is cut around its match; the matches after it are still shown', async (t) => {
  const files = { 'lib/a.min.js': `${'var q=1;'.repeat(2500)}NEEDLE();${'var r=2;'.repeat(2500)}\n` }
  for (let i = 0; i < 5; i++) files[`src/s${i}.ts`] = `call(NEEDLE) // ${i}\n`
  const client = await connect(t, tree(t, files))
  const lines = text(await client.callTool({ name: 'workspace_grep', arguments: { pattern: 'NEEDLE' } })).split('\n')
  assert.equal(lines[0], '6 matches in 6 files')
  const long = lines.find((l) => l.startsWith('lib/a.min.js:1:20001:'))
  assert.ok(long && long.includes('NEEDLE();') && long.length < 1000, String(long?.length))
  assert.deepEqual(lines.filter((l) => l.startsWith('src/')).length, 5, lines.join('\n'))
})

test('mcp: progress notifications only increase over the phases of indexing; an embedder that logs does not break the protocol', async (t) => {
  // Every console method that writes to stdout by default, as an embedder module might use them.
  const logs = "console.log('embedding', text.length); console.info('i'); console.debug('d'); console.dir({ a: 1 }); console.table([{ a: 1 }]); console.group('g'); console.count('c'); console.countReset('c'); console.groupEnd(); console.timeLog('t')"
  const files = { 'embedder.mjs': `let said = 0\nconsole.time('t')\nexport default async (text) => { if (said++ < 3) { ${logs} } return [text.length % 7, 1, 0.5] }\n` }
  for (let i = 0; i < 3000; i++) files[`f/n${i}.md`] = `note ${i} about routers\n`
  const dir = tree(t, files)
  const client = await connect(t, dir, ['--embedder', `${dir}/embedder.mjs`, '--no-persist'])
  // A line on stdout that is not the protocol's reaches the client as an error.
  const strayLines = []
  client.onerror = (e) => strayLines.push(String(e?.message ?? e))
  const progress = []
  const found = await client.callTool({ name: 'workspace_search', arguments: { query: 'routers', topK: 1 } }, undefined, { onprogress: (p) => progress.push(p) })
  assert.match(text(found), /^f\/n\d+\.md/)
  const values = progress.map((p) => p.progress)
  assert.ok(values.every((v, i) => i === 0 || v > values[i - 1]), JSON.stringify(values))
  assert.ok(progress.every((p) => p.total === 4 && p.progress <= 4), JSON.stringify(progress.slice(0, 3)))
  // The phases in the order they run, each one's count within its own step.
  const phases = [...new Set(progress.map((p) => p.message.split(' ')[0]))]
  // (Events that reach JavaScript after init() resolved may come after the answer, and are not sent.)
  const order = ['scan', 'read', 'embed', 'index']
  assert.ok(phases.includes('embed') && phases.every((p, k) => k === 0 || order.indexOf(p) > order.indexOf(phases[k - 1])), JSON.stringify(phases))
  for (const p of progress) {
    const step = order.indexOf(p.message.split(' ')[0])
    assert.ok(p.progress >= step && p.progress <= step + 1, `${p.message}: ${p.progress}`)
  }
  // A note read together with the answer is an error to this client (typescript-sdk#2580): the server
  // sends one a phase and at most one every 100 ms (it sent one a file), and waits before the answer.
  const late = strayLines.filter((m) => /progress notification for an unknown token/.test(m))
  assert.deepEqual(strayLines.filter((m) => !late.includes(m)), [], 'nothing but the protocol on stdout')
  assert.ok(late.length <= 1, `${late.length} progress notes came after the answer`)
  assert.ok(progress.length <= 4 + 20, `${progress.length} notes for a start of well under 2 s`)
})

test('mcp: a client that closes stdin after its requests still gets every answer', async (t) => {
  const dir = tree(t, { 'a.md': 'hello routers\n', 'b.md': 'TODO routers\n' })
  const child = spawn(process.execPath, [CLI, 'mcp', dir], { env: envFor(dir), stdio: ['pipe', 'pipe', 'pipe'] })
  t.after(() => child.kill())
  let out = ''
  child.stdout.on('data', (d) => (out += d))
  const send = (m) => child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', ...m })}\n`)
  send({ id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } })
  send({ method: 'notifications/initialized' })
  send({ id: 2, method: 'tools/call', params: { name: 'workspace_search', arguments: { query: 'routers' } } })
  send({ id: 3, method: 'tools/call', params: { name: 'workspace_grep', arguments: { pattern: 'TODO' } } })
  child.stdin.end()
  const code = await new Promise((resolve) => child.on('exit', resolve))
  assert.equal(code, 0)
  const answers = new Map(out.trim().split('\n').map((l) => JSON.parse(l)).filter((m) => m.id).map((m) => [m.id, m]))
  assert.deepEqual([...answers.keys()].sort(), [1, 2, 3], out)
  assert.match(answers.get(2).result.content[0].text, /a\.md|b\.md/)
  assert.equal(answers.get(2).result.isError, undefined, out)
  assert.match(answers.get(3).result.content[0].text, /^1 match in 1 file\nb\.md:1:1:TODO routers/)
})

test('mcp: a signal after the client closed stdin (MCP stdio shutdown) still destroys the workspace and exits 0', async (t) => {
  const dir = tree(t, { 'a.md': 'hello routers\n' })
  const child = spawn(process.execPath, [CLI, 'mcp', dir], { env: envFor(dir), stdio: ['pipe', 'pipe', 'pipe'] })
  t.after(() => child.kill('SIGKILL'))
  let out = ''
  child.stdout.on('data', (d) => (out += d))
  child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } })}\n`)
  while (!out.includes('"id":1')) await new Promise((r) => setTimeout(r, 10))
  child.stdin.end()
  child.kill('SIGTERM')
  const code = await new Promise((resolve) => child.on('exit', (c, s) => resolve(c ?? s)))
  assert.equal(code, 0)
})

test('mcp: lines that are no JSON or no JSON-RPC message are answered with -32700 / -32600 (they went unanswered, the client waiting out its timeout); the next request is served', async (t) => {
  const dir = tree(t, { 'a.md': 'hello world\n' })
  const child = spawn(process.execPath, [CLI, 'mcp', dir], { env: envFor(dir) })
  t.after(() => child.kill())
  let stdout = ''
  child.stdout.on('data', (d) => (stdout += d))
  const replies = () => stdout.split('\n').filter(Boolean).map((l) => JSON.parse(l))
  const send = (line) => child.stdin.write(`${line}\n`)
  send(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } }))
  await eventually('initialize result', () => replies().find((m) => m.id === 1))
  for (const line of ['not json', '{"jsonrpc":"2.0","id":', '{}', '[]']) send(line)
  send(JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'ping' }))
  await eventually('ping answered', () => replies().find((m) => m.id === 2))
  const errors = replies().filter((m) => m.error)
  assert.deepEqual(errors.map((m) => [m.id, m.error.code]), [[null, -32700], [null, -32700], [null, -32600], [null, -32600]])
})

test("mcp: a search's path spelled absolutely inside the folder finds what the relative one finds (it answered 'No results'); tool errors escape the agent's control characters", async (t) => {
  const dir = tree(t, { 'src/auth.ts': 'export function resetPassword() {}\n', 'docs/a.md': 'resetPassword guide\n' })
  const client = await connect(t, dir)
  const search = async (p) => text(await client.callTool({ name: 'workspace_search', arguments: { query: 'resetPassword', path: p, repeat: true } }))
  const relative = await search('src/')
  assert.match(relative, /^src\/auth\.ts:1-1/)
  for (const p of [path.join(dir, 'src') + '/', path.join(dir, 'src'), path.join(dir, 'src/auth.ts'), path.join(fs.realpathSync(dir), 'src') + '/']) {
    assert.equal(await search(p), relative, p)
  }
  const error = await client.callTool({ name: 'workspace_grep', arguments: { pattern: 'x', path: 'nope\x1b[2J[' } })
  assert.equal(error.isError, true)
  assert.ok(!/[\x00-\x08\x0b-\x1f\x7f-\x9f]/.test(text(error)) && text(error).includes('\\x1b[2J'), text(error))
})

test("mcp: a search's path with .. is read as workspace_grep reads it, and one out of the folder is a tool error (it answered 'No results')", async (t) => {
  const dir = tree(t, { 'src/auth.ts': 'export function resetPassword() {}\n', 'docs/a.md': 'resetPassword guide\n' })
  const client = await connect(t, dir)
  const call = (p) => client.callTool({ name: 'workspace_search', arguments: { query: 'resetPassword', path: p, repeat: true } })
  assert.equal(text(await call('src/../docs/')), text(await call('docs/')))
  assert.match(text(await call('src/../docs/')), /^docs\/a\.md:1-1/)
  for (const p of ['../', '..', 'src/../../', '/etc/', path.dirname(dir)]) {
    const result = await call(p)
    assert.equal(result.isError, true, `${p}: ${text(result)}`)
    assert.match(text(result), /path must stay inside the folder/)
  }
})

test('mcp: index status lists the files whose vectors were not written, and why (an embedder that answers 401)', async (t) => {
  const dir = tree(t, { 'a.md': 'alpha\n', 'b.md': 'beta\n' })
  const embedder = path.join(tree(t, { 'embedder.cjs': "module.exports = async () => { throw new Error('401 Unauthorized: bad key') }\n" }), 'embedder.cjs')
  const client = await connect(t, dir, ['--embedder', embedder])
  await client.callTool({ name: 'workspace_search', arguments: { query: 'alpha' } })
  const status = text(await client.callTool({ name: 'workspace_index_status', arguments: {} }))
  assert.match(status, /^failed: 2$/m)
  assert.match(status, /^ {2}a\.md: vectors not written: 401 Unauthorized: bad key/m)
})

test('mcp: a last save that fails at shutdown (the cache folder removed) is one line on stderr, and the server exits 0 (it crashed with exit 1 and a stack)', async (t) => {
  const dir = tree(t, { 'a.md': 'hello routers\n' })
  const cache = fs.mkdtempSync(path.join(os.tmpdir(), 'wss-mcp-rm-'))
  t.after(() => fs.rmSync(cache, { recursive: true, force: true }))
  const child = spawn(process.execPath, [CLI, 'mcp', dir], { env: { ...process.env, XDG_CACHE_HOME: cache }, stdio: ['pipe', 'pipe', 'pipe'] })
  t.after(() => child.kill('SIGKILL'))
  let out = ''
  let err = ''
  child.stdout.on('data', (d) => (out += d))
  child.stderr.on('data', (d) => (err += d))
  const send = (m) => child.stdin.write(`${JSON.stringify(m)}\n`)
  send({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } })
  send({ jsonrpc: '2.0', method: 'notifications/initialized' })
  send({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'workspace_search', arguments: { query: 'hello' } } })
  await eventually('search answered', () => out.includes('"id":2'))
  fs.rmSync(path.join(cache, 'workspace-search'), { recursive: true, force: true })
  fs.writeFileSync(path.join(dir, 'b.md'), 'routers again\n') // something to save
  await new Promise((r) => setTimeout(r, 300))
  child.stdin.end()
  const code = await new Promise((resolve) => child.on('exit', (c, s) => resolve(c ?? s)))
  assert.equal(code, 0, err)
  assert.ok(!/triggerUncaughtException|\n\s+at /.test(err), err)
})

test('mcp: a search the client gave up on (its timeout while indexing) is not remembered as shown: the retry shows the lines (it said "(shown before)")', async (t) => {
  const dir = tree(t, {
    'target.md': 'intro\nthe frobnicator flux capacitor is configured here\noutro\n',
    // Indexing waits for the embedder, which takes 1.5 s: the first call times out for certain.
    'embedder.mjs': 'export default async (text) => { await new Promise((r) => setTimeout(r, 1500)); return [text.length % 7 + 1, 1, 2] }\n',
  })
  const client = await connect(t, dir, ['--no-persist', '--embedder', path.join(dir, 'embedder.mjs')])
  const ask = (timeout) => client.callTool({ name: 'workspace_search', arguments: { query: 'frobnicator flux capacitor' } }, undefined, { timeout })
  await assert.rejects(ask(50), /timed out/i)
  const status = async () => text(await client.callTool({ name: 'workspace_index_status', arguments: {} }))
  await eventually('indexing done', async () => /status: ready/.test(await status()), 20_000)
  const retry = text(await ask(60_000))
  assert.match(retry, /2:the frobnicator flux capacitor is configured here/)
  assert.doesNotMatch(retry, /shown before/)
  // A call that was delivered is remembered as before.
  assert.match(text(await ask(60_000)), /shown before/)
})

test('mcp: a glob as the path of workspace_search is a tool error that points to workspace_grep (it answered "No results")', async (t) => {
  const dir = tree(t, { 'src/auth/reset.ts': 'export function resetPassword(user) {}\n' })
  const client = await connect(t, dir, ['--no-persist'])
  const result = await client.callTool({ name: 'workspace_search', arguments: { query: 'resetPassword', path: 'src/**/*.ts' } })
  assert.equal(result.isError, true)
  assert.match(text(result), /prefix.*workspace_search.*"src\/\*\*\/\*\.ts".*workspace_grep/)
  // A prefix with brackets (Next.js routes) is still a prefix.
  const plain = await client.callTool({ name: 'workspace_search', arguments: { query: 'resetPassword', path: 'src/' } })
  assert.match(text(plain), /src\/auth\/reset\.ts/)
})

test("mcp: index status lists the index's warnings: a second server on the same cache folder says it does not save (it said nothing)", async (t) => {
  const dir = tree(t, { 'a.md': 'hello world\n' })
  const first = await connect(t, dir)
  await first.callTool({ name: 'workspace_search', arguments: { query: 'hello' } })
  const second = await connect(t, dir)
  await second.callTool({ name: 'workspace_search', arguments: { query: 'hello' } })
  const status = text(await second.callTool({ name: 'workspace_index_status', arguments: {} }))
  assert.match(status, /^warnings: 1\n {2}persist: .* is written by process \d+; this workspace loads it but does not save$/m)
  assert.match(text(await first.callTool({ name: 'workspace_index_status', arguments: {} })), /^warnings: 0$/m)
})
