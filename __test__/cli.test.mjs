// The workspace-search command line.
import test from 'node:test'
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import fs from 'node:fs'
import { createRequire } from 'node:module'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { tree } from './helpers.mjs'

const CLI = fileURLToPath(new URL('../bin/workspace-search.js', import.meta.url))
// The index each run keeps goes to a temporary cache folder, not the user's.
const CACHE = fs.mkdtempSync(path.join(os.tmpdir(), 'wss-cli-cache-'))
process.on('exit', () => fs.rmSync(CACHE, { recursive: true, force: true }))
const ENV = { ...process.env, XDG_CACHE_HOME: CACHE }
const run = (...args) => spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8', env: ENV })

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

test('--json prints one object per result; --top-k, --glob, --no-gitignore, --min-score', (t) => {
  const dir = tree(t, FILES)
  const lines = run(dir, 'reset password', '--json', '--top-k', '1').stdout.trim().split('\n')
  assert.equal(lines.length, 1)
  const first = JSON.parse(lines[0])
  assert.deepEqual(Object.keys(first), ['path', 'id', 'start', 'end', 'score', 'bm25', 'vector', 'content'])
  assert.deepEqual([first.path, first.id, first.start, first.end, first.score, first.vector], ['docs/reset.md', 'docs/reset.md', 3, 4, 1, null])
  const ids = (out) => out.stdout.trim().split('\n').filter(Boolean).map((l) => JSON.parse(l).id)
  assert.deepEqual(ids(run(dir, 'password', '--json', '--glob', '*.txt')), ['notes.txt'])
  assert.deepEqual(ids(run(dir, 'secrets', '--json', '--no-gitignore')), ['ignored.md'])
  assert.deepEqual(ids(run(dir, 'reset password', '--json', '--min-score', '0.9')), ['docs/reset.md'])
})

test('exit status: 0 with results, 1 with none, 2 on a usage error with a message a person reads', (t) => {
  const dir = tree(t, FILES)
  const none = run(dir, 'zebra')
  assert.equal(none.status, 1)
  assert.match(none.stderr, /^No results for "zebra" \(4 files indexed\)\.$/m)
  const cases = [
    [[], 'expected a folder and a query'],
    [[dir], 'expected a folder and a query'],
    [[dir, 'x', '--top-k', 'many'], '--top-k must be a whole number of at least 1, got many'],
    [[dir, 'x', '--top-k', '-1'], '--top-k needs a value (write --name=value for a value starting with -)'],
    [[dir, 'x', '--min-score', '2'], '--min-score must be a number from 0 to 1, got 2'],
    [[dir, 'x', '--mode', 'fuzzy'], '--mode must be bm25, vector or hybrid, got fuzzy'],
    [[dir, 'x', '--mode', 'vector'], '--mode vector needs an embedder: --embedder MODULE or WORKSPACE_SEARCH_EMBEDDER'],
    [[dir, 'x', '--bogus'], 'unknown option --bogus'],
    [['/nonexistent-folder', 'x'], 'not a folder: /nonexistent-folder'],
    [['mcp'], 'expected a folder'],
  ]
  for (const [args, message] of cases) {
    const out = run(...args)
    assert.equal(out.status, 2, args.join(' '))
    assert.equal(out.stderr, `workspace-search: ${message}\nTry "workspace-search --help".\n`)
  }
  assert.match(run('--help').stdout, /^Usage: workspace-search \[search\] <folder>/)
  assert.equal(run('--version').stdout, `${JSON.parse(fs.readFileSync(new URL('../package.json', import.meta.url))).version}\n`)
  assert.equal(run('search', dir, 'router').status, 0)
})

test('chunks print their file path with file lines; long lines are elided; no colour when piped', (t) => {
  const long = `${'filler words here '.repeat(40)}needle${' and more'.repeat(200)}`
  const body = Array.from({ length: 400 }, (_, i) => (i === 300 ? 'the needle is here' : `line ${i} of text`)).join('\n')
  const dir = tree(t, { 'big.md': body, 'wide.md': long })
  const out = run(dir, 'needle')
  assert.equal(out.status, 0)
  assert.match(out.stdout, /^big\.md:301-301 {2}\d\.\d{3}\n {3}301 {2}the needle is here\n/m)
  assert.ok(!out.stdout.includes('#chunk-'))
  for (const line of out.stdout.split('\n')) assert.ok([...line].length < 200, `${line.length} columns`)
  assert.match(out.stdout, /wide\.md:1-1 .*\n {5}1 {2}filler words .*…/)
  assert.ok(!out.stdout.includes('\x1b['), 'no escape codes when not a terminal')
})

test('a reader that stops early (| head) ends the command quietly', async (t) => {
  // Many matching files, so that the output outlasts the reader.
  const files = {}
  for (let i = 0; i < 400; i++) files[`f${i}.md`] = `password reset line ${i}\n`.repeat(20)
  const dir = tree(t, files)
  const { spawn } = await import('node:child_process')
  const child = spawn(process.execPath, [CLI, dir, 'password reset', '--top-k', '400'], { stdio: ['ignore', 'pipe', 'pipe'], env: ENV })
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

test('a second run over the same folder reuses the saved index and sees changed files', (t) => {
  const dir = tree(t, { 'docs/a.md': 'the heron flies', 'docs/b.md': 'the crane waits' })
  const indexDir = path.join(CACHE, 'explicit')
  const first = run(dir, 'heron', '--index-dir', indexDir, '--json')
  assert.equal(first.status, 0, first.stderr)
  assert.ok(fs.existsSync(path.join(indexDir, 'snapshot.wss')))
  fs.writeFileSync(path.join(dir, 'docs/b.md'), 'the crane and a heron')
  const second = run(dir, 'heron', '--index-dir', indexDir, '--json')
  assert.equal(second.status, 0, second.stderr)
  const paths = second.stdout.trim().split('\n').map((l) => JSON.parse(l).path).sort()
  assert.deepEqual(paths, ['docs/a.md', 'docs/b.md'])
  // The default: a folder under the cache directory, one per searched folder.
  const before = fs.existsSync(path.join(CACHE, 'workspace-search')) ? fs.readdirSync(path.join(CACHE, 'workspace-search')).length : 0
  assert.equal(run(dir, 'crane').status, 0)
  assert.equal(fs.readdirSync(path.join(CACHE, 'workspace-search')).length, before + 1)
  const off = tree(t, { 'x.md': 'heron' })
  assert.equal(run(off, 'heron', '--no-persist').status, 0)
  assert.equal(fs.readdirSync(path.join(CACHE, 'workspace-search')).length, before + 1, '--no-persist keeps nothing')
  const both = run(off, 'heron', '--no-persist', '--index-dir', indexDir)
  assert.equal(both.status, 2)
  assert.match(both.stderr, /--index-dir and --no-persist cannot go together/)
})

test('an embedder that fails (401) leaves keyword search working; its error is printed, never "No results"', (t) => {
  const dir = tree(t, FILES)
  const module = path.join(tree(t, { 'embedder.mjs': "export default async () => { throw new Error('401 Unauthorized: invalid API key') }\n" }), 'embedder.mjs')
  const bm25 = run(dir, 'reset password', '--embedder', module)
  assert.equal(bm25.status, 0, bm25.stderr)
  assert.match(bm25.stdout, /^docs\/reset\.md:3-4 /)
  // One line for the four files the embedder failed alike.
  assert.match(bm25.stderr, /^workspace-search: 4 files: vectors not written: 401 Unauthorized: invalid API key \(/m)
  assert.ok(!bm25.stderr.includes('No results'), bm25.stderr)
  // Hybrid search embeds the query: the same error is the answer.
  const hybrid = run(dir, 'reset password', '--embedder', module, '--mode', 'hybrid')
  assert.equal(hybrid.status, 1)
  assert.match(hybrid.stderr, /^workspace-search: 401 Unauthorized: invalid API key$/m)
  assert.ok(!hybrid.stderr.includes('No results'), hybrid.stderr)
})

// Terminal control sequences in files: clear the screen, set the window title, a bell, DEL, a C1 CSI.
const CONTROL_FILES = {
  'tricks.md': 'terminal one \x1b[2J cleared\nterminal two \x1b]0;pwned\x07 titled\nterminal three \x7f and \u009b31m end\n',
  'odd\x1b[2Kname.md': 'terminal in the name\n',
}
const RAW_CONTROLS = /[\x00-\x08\x0b-\x1f\x7f-\x9f]/

/** The escaped forms every human-readable output shows for CONTROL_FILES. */
function assertEscaped(out) {
  assert.ok(!RAW_CONTROLS.test(out), `raw control character in ${JSON.stringify(out)}`)
  for (const shown of ['terminal one \\x1b[2J cleared', 'terminal two \\x1b]0;pwned\\x07 titled', 'terminal three \\x7f and \\x9b31m end', 'odd\\x1b[2Kname.md:1-1']) {
    assert.ok(out.includes(shown), `${shown} in ${out}`)
  }
}

test('control characters from files are printed escaped (\\x1b), piped or on a terminal; --json keeps them raw', (t) => {
  const dir = tree(t, CONTROL_FILES)
  const piped = run(dir, 'terminal')
  assert.equal(piped.status, 0, piped.stderr)
  assertEscaped(piped.stdout)

  // A terminal, as far as the printer can tell: colours on, matches highlighted piece by piece.
  const fakeTty = path.join(CACHE, 'tty.cjs')
  fs.writeFileSync(fakeTty, "process.stdout.isTTY = true; process.stdout.columns = 200\n")
  const onTty = spawnSync(process.execPath, ['--require', fakeTty, CLI, dir, 'terminal'], { encoding: 'utf8', env: { ...ENV, NO_COLOR: '' } })
  assert.equal(onTty.status, 0, onTty.stderr)
  assert.ok(onTty.stdout.includes('\x1b[1;31mterminal\x1b[0m'), 'highlighted on a terminal')
  assertEscaped(onTty.stdout.replace(/\x1b\[(?:0|35|1;31)m/g, ''))

  const json = run(dir, 'terminal', '--json').stdout.trim().split('\n').map((l) => JSON.parse(l))
  const byPath = Object.fromEntries(json.map((r) => [r.path, r]))
  assert.equal(byPath['tricks.md'].content, CONTROL_FILES['tricks.md'])
  assert.equal(byPath['odd\x1b[2Kname.md'].content, CONTROL_FILES['odd\x1b[2Kname.md'])
  assert.deepEqual(Object.keys(json[0]), ['path', 'id', 'start', 'end', 'score', 'bm25', 'vector', 'content'])

  // What goes to stderr too: the query echoed back, a path in an error, the progress bar's file.
  const none = run(dir, 'zebra\x1b[Kquux')
  assert.equal(none.status, 1)
  assert.ok(none.stderr.includes('No results for "zebra\\x1b[Kquux"'), none.stderr)
  const bad = run(path.join(dir, 'gone\x1b]0;x\x07'), 'x')
  assert.equal(bad.status, 2)
  assert.ok(bad.stderr.includes('not a folder: ') && bad.stderr.includes('gone\\x1b]0;x\\x07\n'), bad.stderr)
  const { render } = createRequire(import.meta.url)('../bin/progress.js')
  assert.equal(render({ phase: 'read', done: 1, total: 2, path: 'odd\x1b[2Kname.md' }, 200), 'read [####################--------------------] 1/2 odd\\x1b[2Kname.md')
})
