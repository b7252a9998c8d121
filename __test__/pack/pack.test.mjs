// The package as users get it: the root and this platform's tarballs that
// a release publishes (npm run pack:local), installed into fresh projects
// with no Rust toolchain on PATH, then type-checked, compiled and run
// through CommonJS, ESM and the CLI; and inside a fresh Mastra project.
// .ci/run runs this file on Node 20, 22 and 24.
import test, { before } from 'node:test'
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { docsBlocks, writeBlocks } from '../readme-blocks.mjs'

const ROOT = fileURLToPath(new URL('../..', import.meta.url))
const TSC = path.join(ROOT, 'node_modules/typescript/bin/tsc')

/** PATH without the Rust toolchain: a user's install must not build anything. */
const USER_PATH = process.env.PATH.split(path.delimiter)
  .filter((dir) => !['cargo', 'rustc'].some((tool) => fs.existsSync(path.join(dir, tool))))
  .join(path.delimiter)
const userEnv = { ...process.env, PATH: `${path.dirname(process.execPath)}${path.delimiter}${USER_PATH}` }
const npm = (args, cwd) => execFileSync('npm', args, { cwd, env: userEnv, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] })
const node = (args, cwd) => execFileSync(process.execPath, args, { cwd, env: userEnv, encoding: 'utf8' })

/** The two tarballs, packed once for all tests. */
let tarballs
let work
before(() => {
  work = fs.mkdtempSync(path.join(os.tmpdir(), 'wss-pack-'))
  const out = execFileSync(process.execPath, [path.join(ROOT, 'scripts/pack-local.mjs'), '--no-build', '--out', work], { encoding: 'utf8' })
  tarballs = JSON.parse(out.trim().split('\n').at(-1))
})
test.after(() => fs.rmSync(work, { recursive: true, force: true }))

const listing = (tarball) => execFileSync('tar', ['tzf', tarball], { encoding: 'utf8' }).split('\n').filter(Boolean).map((f) => f.replace(/^package\//, ''))

test('the root tarball holds no binary, the platform tarball only it', () => {
  const root = listing(tarballs.root)
  for (const f of ['index.js', 'binding.js', 'index.d.ts', 'binding.d.ts', 'lib/runtime.js', 'lib/tools.js', 'lib/mastra/index.mjs', 'lib/mastra/index.cjs', 'lib/mastra/index.d.mts', 'bin/workspace-search.js', 'bin/progress.js', 'LICENSE', 'README.md', 'docs/api.md', 'docs/architecture.md', 'package.json']) {
    assert.ok(root.includes(f), `${f} in the root tarball`)
  }
  assert.deepEqual(root.filter((f) => f.endsWith('.node') || /^(src|crates|__test__|scripts|bench|eval)\//.test(f)), [])
  const manifest = JSON.parse(execFileSync('tar', ['xzOf', tarballs.root, 'package/package.json'], { encoding: 'utf8' }))
  const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8'))
  assert.deepEqual(Object.keys(manifest.optionalDependencies).sort(), fs.readdirSync(path.join(ROOT, 'npm')).map((d) => `workspace-search-${d}`).sort())
  assert.ok(Object.values(manifest.optionalDependencies).every((v) => v === pkg.version))
  assert.equal(manifest.scripts, undefined, 'no install scripts: nothing builds on a user machine')
  // One runtime dependency: tokenx (no dependencies of its own), the estimator token budgets use.
  assert.deepEqual(manifest.dependencies, { tokenx: pkg.dependencies.tokenx })
  const platform = listing(tarballs.platform)
  assert.deepEqual(platform.filter((f) => f.endsWith('.node')).length, 1)
  assert.ok(platform.includes('LICENSE'))
})

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

const EXPECTED = { indexed: 2, ids: ['docs/reset.md'], lineRange: { start: 2, end: 2 }, noSearch: 'NO_SEARCH' }

test('installed with no Rust on PATH: TypeScript ESM, CommonJS and the CLI work', { timeout: 300_000 }, () => {
  assert.throws(() => execFileSync('cargo', ['--version'], { env: userEnv, stdio: 'ignore' }), 'cargo is not on the user PATH')
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
  npm(['install', '--no-audit', '--no-fund', '--prefer-offline', tarballs.root, tarballs.platform], app)
  assert.ok(!fs.readdirSync(path.join(app, 'node_modules/workspace-search')).some((f) => f.endsWith('.node')))

  try {
    node([TSC, '-p', app], app)
  } catch (err) {
    assert.fail(`tsc failed:\n${err.stdout}`)
  }
  assert.deepEqual(JSON.parse(node([path.join(app, 'dist/main.js'), path.join(app, 'data')], app)), EXPECTED)
  // The classic resolution (`moduleResolution: "node"`, CommonJS projects) finds both entries' types too.
  fs.writeFileSync(path.join(app, 'legacy.ts'), "import type * as mastra from 'workspace-search/mastra'\nimport type { Workspace } from 'workspace-search'\nexport type Both = [typeof mastra.nativeWorkspace, Workspace]\n")
  fs.writeFileSync(
    path.join(app, 'tsconfig.node10.json'),
    JSON.stringify({ compilerOptions: { strict: true, noEmit: true, module: 'commonjs', moduleResolution: 'node', types: [], skipLibCheck: true }, files: ['legacy.ts'] }),
  )
  try {
    node([TSC, '-p', path.join(app, 'tsconfig.node10.json')], app)
  } catch (err) {
    assert.fail(`tsc (moduleResolution node) failed:\n${err.stdout}`)
  }

  fs.writeFileSync(
    path.join(app, 'main.cjs'),
    `const { Workspace, LocalFilesystem } = require('workspace-search')
const ws = new Workspace({ filesystem: new LocalFilesystem({ basePath: process.argv[2] }), bm25: true, autoIndexPaths: ['docs'] })
ws.init().then(() => ws.search('reset password')).then((r) => console.log(r.map((x) => x.id).join()))`,
  )
  assert.equal(node(['main.cjs', path.join(app, 'data')], app).trim(), 'docs/reset.md')

  // Paths print as the folder argument joined with the file's path (as ripgrep's).
  const cli = execFileSync(path.join(app, 'node_modules/.bin/workspace-search'), ['data', 'password'], { cwd: app, env: userEnv, encoding: 'utf8' })
  assert.match(cli, /^data\/docs\/reset\.md:2-2 {2}1\.000\n/)
})

const TSX = path.join(ROOT, 'node_modules/tsx/dist/cli.mjs')
/** A CommonJS TypeScript file as a tsx user writes one: on Node 20 tsx runs it through loader hooks. */
const CTS = `const { Workspace, LocalFilesystem } = require('workspace-search')
import type { SearchResult } from 'workspace-search'

const ws = new Workspace({ filesystem: new LocalFilesystem({ basePath: process.argv[2] }), bm25: true, autoIndexPaths: ['docs'] })
ws.init()
  .then(() => ws.search('reset password'))
  .then((results: SearchResult[]) => console.log(results.map((r) => r.id).join()))
`

test('a .cts file run with tsx loads the installed platform binary; the version check still runs', { timeout: 120_000 }, () => {
  const app = path.join(work, 'tsx-app')
  fs.mkdirSync(path.join(app, 'data/docs'), { recursive: true })
  fs.writeFileSync(path.join(app, 'package.json'), JSON.stringify({ name: 'tsx-app', private: true }))
  fs.writeFileSync(path.join(app, 'main.cts'), CTS)
  fs.writeFileSync(path.join(app, 'data/docs/reset.md'), 'To reset your password open settings\n')
  npm(['install', '--no-audit', '--no-fund', '--prefer-offline', tarballs.root, tarballs.platform], app)
  const tsx = (env = {}) => execFileSync(process.execPath, [TSX, 'main.cts', path.join(app, 'data')], { cwd: app, env: { ...userEnv, ...env }, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] })
  const run = (env) => {
    try {
      return tsx(env).trim()
    } catch (err) {
      return `failed: ${err.stderr}`
    }
  }
  assert.equal(run(), 'docs/reset.md')
  assert.equal(run({ NAPI_RS_ENFORCE_VERSION_CHECK: '1' }), 'docs/reset.md')

  // A platform package of another version: loaded, unless the check is enforced (then read with fs under tsx).
  const platform = path.join(app, 'node_modules', fs.readdirSync(path.join(app, 'node_modules')).find((d) => d.startsWith('workspace-search-')), 'package.json')
  fs.writeFileSync(platform, JSON.stringify({ ...JSON.parse(fs.readFileSync(platform, 'utf8')), version: '0.0.0-other' }))
  assert.equal(run(), 'docs/reset.md')
  assert.match(run({ NAPI_RS_ENFORCE_VERSION_CHECK: '1' }), /Native binding package version mismatch, expected \d+\.\d+\.\d+ but got 0\.0\.0-other/)
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

test('inside a fresh Mastra project: the README and docs/ compile, an Agent({ workspace }) conversation runs', { timeout: 600_000 }, () => {
  const app = path.join(work, 'mastra-app')
  fs.mkdirSync(path.join(app, 'data/docs'), { recursive: true })
  fs.writeFileSync(path.join(app, 'package.json'), JSON.stringify({ name: 'app', private: true, type: 'module' }))
  fs.writeFileSync(path.join(app, 'data/docs/密码.md'), '如何重置密码\n打开设置\n')
  fs.writeFileSync(path.join(app, 'data/docs/other.md'), 'Nothing to see\n')
  const deps = ['@mastra/core', '@mastra/libsql', '@mastra/pg', '@mastra/duckdb', 'ai', '@aws-sdk/client-s3'].map(installed)
  npm(['install', '--no-audit', '--no-fund', '--prefer-offline', tarballs.root, tarballs.platform, ...deps], app)

  writeBlocks(app, docsBlocks(ROOT), { typeRoots: [path.join(ROOT, 'node_modules/@types')] })
  try {
    node([TSC, '-p', app], app)
  } catch (err) {
    assert.fail(`tsc failed over the blocks of the README and docs/:\n${err.stdout}`)
  }
  fs.writeFileSync(path.join(app, 'agent.mjs'), AGENT)
  const out = node(['agent.mjs', path.join(app, 'data')], app)
  const result = JSON.parse(out.trim().split('\n').at(-1))
  assert.equal(result.text, 'done')
  assert.equal(result.indexed, 2)
  assert.match(result.tool, /docs\/密码\.md/)
})
