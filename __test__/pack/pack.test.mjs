// The package as users get it: `npm pack`, installed into a fresh
// TypeScript project (ES module, moduleResolution NodeNext), type-checked,
// compiled and run.
import test from 'node:test'
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { readmeBlocks, writeBlocks } from '../readme-blocks.mjs'

const ROOT = fileURLToPath(new URL('../..', import.meta.url))
const TSC = path.join(ROOT, 'node_modules/typescript/bin/tsc')
const npm = (args, cwd) => execFileSync('npm', args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] })

const PROGRAM = `import { Workspace, LocalFilesystem, SearchNotAvailableError, type SearchResult } from 'workspace-search'

declare const process: { argv: string[] } // no @types/node in this project
const basePath = process.argv[2]
const workspace = new Workspace({ filesystem: new LocalFilesystem({ basePath }), bm25: true, autoIndexPaths: ['docs'] })
const report = await workspace.init()
const results: SearchResult[] = await workspace.search('reset password', { topK: 3 })
let noSearch = ''
try {
  await new Workspace().search('x')
} catch (err) {
  if (err instanceof SearchNotAvailableError) noSearch = err.code
}
console.log(JSON.stringify({ indexed: report.indexed, ids: results.map((r) => r.id), lineRange: results[0]?.lineRange, noSearch }))
`

test('npm pack, install into a fresh TypeScript ESM project, type-check and run', { timeout: 300_000 }, (t) => {
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'wss-pack-'))
  t.after(() => fs.rmSync(work, { recursive: true, force: true }))
  const packed = JSON.parse(npm(['pack', '--json', '--pack-destination', work], ROOT))
  const tarball = path.join(work, packed[0].filename)
  const files = packed[0].files.map((f) => f.path)
  for (const f of ['index.js', 'binding.js', 'index.d.ts', 'binding.d.ts', 'lib/runtime.js', 'lib/tools.js', 'bin/workspace-search.js', 'package.json']) assert.ok(files.includes(f), `${f} packed`)
  assert.ok(files.some((f) => f.endsWith('.node')), 'native addon packed')
  assert.ok(!files.some((f) => f.startsWith('src/') || f.startsWith('crates/') || f.startsWith('__test__/')), files.join())

  const app = path.join(work, 'app')
  fs.mkdirSync(path.join(app, 'data/docs'), { recursive: true })
  fs.writeFileSync(path.join(app, 'package.json'), JSON.stringify({ name: 'app', private: true, type: 'module' }))
  fs.writeFileSync(
    path.join(app, 'tsconfig.json'),
    JSON.stringify({ compilerOptions: { strict: true, target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', outDir: 'dist', types: [], skipLibCheck: false }, files: ['main.ts'] }),
  )
  fs.writeFileSync(path.join(app, 'main.ts'), PROGRAM)
  fs.writeFileSync(path.join(app, 'data/docs/reset.md'), 'Intro\nTo reset your password open settings\n')
  fs.writeFileSync(path.join(app, 'data/docs/other.md'), 'Nothing to see\n')
  npm(['install', '--no-audit', '--no-fund', '--prefer-offline', tarball], app)

  try {
    execFileSync(process.execPath, [TSC, '-p', app], { cwd: app, encoding: 'utf8' })
  } catch (err) {
    assert.fail(`tsc failed:\n${err.stdout}`)
  }
  const out = execFileSync(process.execPath, [path.join(app, 'dist/main.js'), path.join(app, 'data')], { cwd: app, encoding: 'utf8' })
  assert.deepEqual(JSON.parse(out), { indexed: 2, ids: ['docs/reset.md'], lineRange: { start: 2, end: 2 }, noSearch: 'NO_SEARCH' })

  // The command line installed with the package.
  const cli = execFileSync(path.join(app, 'node_modules/.bin/workspace-search'), [path.join(app, 'data'), 'password'], { encoding: 'utf8' })
  assert.match(cli, /^docs\/reset\.md:2-2 {2}1\.000\n/)
})

/** The versions of a development dependency this repository tests with (installed, so in npm's cache). */
const installed = (name) => `${name}@${JSON.parse(fs.readFileSync(path.join(ROOT, 'node_modules', name, 'package.json'), 'utf8')).version}`

const AGENT = `import { Agent } from '@mastra/core/agent'
import { MockLanguageModelV3 } from 'ai/test'
import { Workspace, LocalFilesystem, lastIndexReport } from 'workspace-search/mastra'

const usage = { inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 1, text: 1, reasoning: 0 } }
const seen = []
let step = 0
const model = new MockLanguageModelV3({
  doGenerate: async ({ prompt }) => {
    for (const m of prompt) if (m.role === 'tool') for (const p of m.content) seen.push(p.output.value)
    return step++ === 0
      ? { content: [{ type: 'tool-call', toolCallId: 'c1', toolName: 'mastra_workspace_search', input: JSON.stringify({ query: '密码' }) }], finishReason: { unified: 'tool-calls', raw: undefined }, usage, warnings: [] }
      : { content: [{ type: 'text', text: 'done' }], finishReason: { unified: 'stop', raw: undefined }, usage, warnings: [] }
  },
})
const workspace = new Workspace({ filesystem: new LocalFilesystem({ basePath: process.argv[2] }), bm25: true, autoIndexPaths: ['docs'] })
await workspace.init()
const agent = new Agent({ id: 'a', name: 'a', instructions: 'Use the workspace.', model, workspace })
const out = await agent.generate('Where is the password page?')
console.log(JSON.stringify({ text: out.text, indexed: lastIndexReport(workspace).indexed, tool: seen[0] }))
await workspace.destroy()
`

test('inside a fresh Mastra project: the README compiles, an Agent({ workspace }) conversation runs', { timeout: 600_000 }, (t) => {
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'wss-mastra-'))
  t.after(() => fs.rmSync(work, { recursive: true, force: true }))
  const packed = JSON.parse(npm(['pack', '--json', '--pack-destination', work], ROOT))
  const app = path.join(work, 'app')
  fs.mkdirSync(path.join(app, 'data/docs'), { recursive: true })
  fs.writeFileSync(path.join(app, 'package.json'), JSON.stringify({ name: 'app', private: true, type: 'module' }))
  fs.writeFileSync(path.join(app, 'data/docs/密码.md'), '如何重置密码\n打开设置\n')
  fs.writeFileSync(path.join(app, 'data/docs/other.md'), 'Nothing to see\n')
  const deps = ['@mastra/core', '@mastra/libsql', '@mastra/pg', '@mastra/duckdb', 'ai'].map(installed)
  npm(['install', '--no-audit', '--no-fund', '--prefer-offline', path.join(work, packed[0].filename), ...deps], app)

  writeBlocks(app, readmeBlocks(path.join(ROOT, 'README.md')), { typeRoots: [path.join(ROOT, 'node_modules/@types')] })
  try {
    execFileSync(process.execPath, [TSC, '-p', app], { cwd: app, encoding: 'utf8' })
  } catch (err) {
    assert.fail(`tsc failed over the README's blocks:\n${err.stdout}`)
  }
  fs.writeFileSync(path.join(app, 'agent.mjs'), AGENT)
  const out = execFileSync(process.execPath, ['agent.mjs', path.join(app, 'data')], { cwd: app, encoding: 'utf8' })
  const result = JSON.parse(out.trim().split('\n').at(-1))
  assert.equal(result.text, 'done')
  assert.equal(result.indexed, 2)
  assert.match(result.tool, /docs\/密码\.md/)
})
