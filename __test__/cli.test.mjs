// The workspace-search command line.
import test from 'node:test'
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { tree } from './helpers.mjs'

const CLI = fileURLToPath(new URL('../bin/workspace-search.js', import.meta.url))
const run = (...args) => spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8' })

const FILES = {
  'docs/reset.md': '# Accounts\n\nTo reset your password, open settings.\nThen click reset.\n',
  'docs/router.md': 'Router setup guide\n',
  'notes.txt': 'password hints are not stored\n',
  '.gitignore': 'ignored.md\n',
  'ignored.md': 'password reset secrets\n',
}

test('prints path:start-end  score and the matching lines', (t) => {
  const dir = tree(t, FILES)
  const out = run(dir, 'reset password')
  assert.equal(out.status, 0, out.stderr)
  const lines = out.stdout.split('\n')
  assert.match(lines[0], /^docs\/reset\.md:3-4  1\.000$/)
  assert.match(lines[1], /^\s+3  To reset your password, open settings\.$/)
  assert.match(lines[2], /^\s+4  Then click reset\.$/)
  assert.ok(out.stdout.includes('notes.txt:1-1  0.'))
  assert.ok(!out.stdout.includes('ignored.md'))
  assert.equal(out.stderr, '', 'no progress bar when stderr is not a terminal')
})

test('--json, --top-k and --glob', (t) => {
  const dir = tree(t, FILES)
  const json = JSON.parse(run(dir, 'reset password', '--json', '--top-k', '1').stdout)
  assert.equal(json.results.length, 1)
  assert.equal(json.results[0].id, 'docs/reset.md')
  assert.equal(json.indexed, 4)
  const globbed = JSON.parse(run(dir, 'password', '--json', '--glob', '*.txt').stdout)
  assert.deepEqual(globbed.results.map((r) => r.id), ['notes.txt'])
  const all = JSON.parse(run(dir, 'secrets', '--json', '--no-gitignore').stdout)
  assert.deepEqual(all.results.map((r) => r.id), ['ignored.md'])
})

test('usage errors exit with 2; no results is not an error', (t) => {
  const dir = tree(t, FILES)
  assert.equal(run().status, 2)
  assert.equal(run(dir).status, 2)
  assert.equal(run(dir, 'x', '--top-k', 'many').status, 2)
  assert.equal(run('/nonexistent-folder', 'x').status, 2)
  const none = run(dir, 'zebra')
  assert.equal(none.status, 0)
  assert.match(none.stderr, /No results/)
  assert.match(run('--help').stdout, /Usage: workspace-search/)
})

test('a reader that stops early (| head) ends the command quietly', async (t) => {
  // Many matching files, so that the output outlasts the reader.
  const files = {}
  for (let i = 0; i < 400; i++) files[`f${i}.md`] = `password reset line ${i}\n`.repeat(20)
  const dir = tree(t, files)
  const { spawn } = await import('node:child_process')
  const child = spawn(process.execPath, [CLI, dir, 'password reset', '--top-k', '400'], { stdio: ['ignore', 'pipe', 'pipe'] })
  let stderr = ''
  child.stderr.on('data', (d) => (stderr += d))
  // Read the first chunk, then close the pipe as `head` does.
  await new Promise((resolve) => child.stdout.once('data', resolve))
  child.stdout.destroy()
  const code = await new Promise((resolve) => child.on('close', resolve))
  assert.equal(code, 0, stderr)
  assert.ok(!stderr.includes('EPIPE'), stderr)
})

test('the progress bar fits any terminal width and keeps its counts', async () => {
  const { createRequire } = await import('node:module')
  const { render } = createRequire(import.meta.url)('../bin/progress.js')
  const event = { phase: 'read', done: 5123, total: 10366, path: 'node_modules/some/deep/path/file.js' }
  for (let width = 24; width <= 200; width++) {
    const line = render(event, width)
    assert.ok(line.length < width, `${width}: ${line}`)
    assert.ok(line.includes('5123/10366'), `${width}: ${line}`)
  }
  assert.match(render({ phase: 'index', done: 10, total: 10 }, 80), /^index \[#{40}\] 10\/10$/)
})
