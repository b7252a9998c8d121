// The root entry needs nothing of Mastra: the package copied alone into a
// project without @mastra/core searches through CommonJS and ESM, and
// workspace-search/mastra says what is missing.
import test from 'node:test'
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

const ROOT = fileURLToPath(new URL('..', import.meta.url))

/** A project whose node_modules holds this package only (its `files`). */
function isolatedProject(t) {
  const app = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'wss-nomastra-')))
  t.after(() => fs.rmSync(app, { recursive: true, force: true }))
  const pkg = path.join(app, 'node_modules/workspace-search')
  fs.mkdirSync(pkg, { recursive: true })
  // What the root tarball ships, and this platform's binary beside it.
  const shipped = JSON.parse(execFileSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], { cwd: ROOT, encoding: 'utf8' }))[0].files
  const binaries = fs.readdirSync(ROOT).filter((f) => f.endsWith('.node'))
  for (const file of [...shipped.map((f) => f.path), ...binaries]) fs.cpSync(path.join(ROOT, file), path.join(pkg, file), { recursive: true })
  fs.mkdirSync(path.join(app, 'docs'))
  fs.writeFileSync(path.join(app, 'docs/a.md'), 'reset your password here\n')
  return app
}

const run = (app, file, source) => {
  fs.writeFileSync(path.join(app, file), source)
  return execFileSync(process.execPath, [file], { cwd: app, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] })
}

test('the root entry works without @mastra/core; the mastra entry names what is missing', (t) => {
  const app = isolatedProject(t)
  const search = `const ws = new Workspace({ filesystem: new LocalFilesystem({ basePath: '.' }), bm25: true, autoIndexPaths: ['docs'] })
await ws.init()
console.log((await ws.search('password')).map((r) => r.id).join())`
  const cjs = run(app, 'main.cjs', `const { Workspace, LocalFilesystem } = require('workspace-search')
;(async () => {
${search}
  try { require('workspace-search/mastra') } catch (err) { console.log(err.message) }
})()`)
  assert.equal(cjs.split('\n')[0], 'docs/a.md')
  assert.match(cjs.split('\n')[1], /^workspace-search\/mastra needs @mastra\/core \(>=1\.71\.0 <2\), an optional peer dependency: npm install @mastra\/core$/)
  const esm = run(app, 'main.mjs', `import { Workspace, LocalFilesystem } from 'workspace-search'
${search}
try { await import('workspace-search/mastra') } catch (err) { console.log(err.message) }`)
  assert.equal(esm.split('\n')[0], 'docs/a.md')
  assert.match(esm.split('\n')[1], /^workspace-search\/mastra needs @mastra\/core/)
  assert.throws(() => fs.accessSync(path.join(app, 'node_modules/@mastra')))
})
