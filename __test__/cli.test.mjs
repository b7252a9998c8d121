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
/** A path of the tests' spelling ('/') as the command prints it (ripgrep's: native separators). */
const native = (p) => p.split('/').join(path.sep)
/** The command run from `cwd` (paths print relative to it). */
const runIn = (cwd, ...args) => spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8', env: ENV, cwd })

const FILES = {
  'docs/reset.md': '# Accounts\n\nTo reset your password, open settings.\nThen click reset.\n',
  'docs/router.md': 'Router setup guide\n',
  'notes.txt': 'password hints are not stored\n',
  '.gitignore': 'ignored.md\n',
  'ignored.md': 'password reset secrets\n',
}

test('prints path:start-end  score and the matching lines', (t) => {
  const dir = tree(t, FILES)
  const out = runIn(dir, '.', 'reset password')
  assert.equal(out.status, 0, out.stderr)
  const lines = out.stdout.split('\n')
  assert.equal(lines[0], `${native('docs/reset.md')}:3-4  1.000`)
  assert.match(lines[1], /^\s+3  To reset your password, open settings\.$/)
  assert.match(lines[2], /^\s+4  Then click reset\.$/)
  assert.ok(out.stdout.includes('notes.txt:1-1  0.'))
  assert.ok(!out.stdout.includes('ignored.md'))
  assert.equal(out.stderr, '', 'no progress bar when stderr is not a terminal')
})

test('--json prints one object per result; --top-k, --glob, --no-gitignore, --min-score', (t) => {
  const dir = tree(t, FILES)
  const lines = runIn(dir, '.', 'reset password', '--json', '--top-k', '1').stdout.trim().split('\n')
  assert.equal(lines.length, 1)
  const first = JSON.parse(lines[0])
  assert.deepEqual(Object.keys(first), ['file', 'path', 'id', 'start', 'end', 'score', 'bm25', 'vector', 'content'])
  assert.deepEqual([first.file, first.path, first.id, first.start, first.end, first.score, first.vector], [native('docs/reset.md'), 'docs/reset.md', 'docs/reset.md', 3, 4, 1, null])
  const ids = (out) => out.stdout.trim().split('\n').filter(Boolean).map((l) => JSON.parse(l).id)
  assert.deepEqual(ids(run(dir, 'password', '--json', '--glob', '*.txt')), ['notes.txt'])
  assert.deepEqual(ids(run(dir, 'secrets', '--json', '--no-gitignore')), ['ignored.md'])
  assert.deepEqual(ids(run(dir, 'reset password', '--json', '--min-score', '0.9')), ['docs/reset.md'])
  // `path` is the file's path inside the folder however the glob spells it (it was the id).
  for (const glob of ['docs/**', './docs/**', '/docs/**', `${dir}/docs/**`, 'x/../docs/**', 'docs/./**', `${dir}/x/../docs/**`]) {
    const found = JSON.parse(run(dir, 'reset password', '--json', '--top-k', '1', '--glob', glob, '--no-persist').stdout)
    assert.equal(found.path, 'docs/reset.md', glob)
  }
})

test('exit status: 0 with results, 1 with none, 2 on any error, with a message a person reads', (t) => {
  const dir = tree(t, FILES)
  const none = run(dir, 'zebra')
  assert.equal(none.status, 1)
  assert.match(none.stderr, /^No results for "zebra" \(4 files indexed\)\.$/m)
  assert.match(run(dir, 'zebra', '--glob', 'notes.txt', '--no-persist').stderr, /^No results for "zebra" \(1 file indexed\)\.$/m)
  for (const [glob, reason] of [['[', /invalid glob: /], ['../**', /outside basePath/]]) {
    const bad = run(dir, 'password', '--glob', glob, '--no-persist')
    assert.equal(bad.status, 2, glob)
    assert.match(bad.stderr, new RegExp(`^workspace-search: --glob ${glob.replace(/[[*.]/g, '\\$&')}: ${reason.source}`), glob)
  }
  const cases = [
    [[], 'expected a folder and a query'],
    [[dir], 'expected a folder and a query'],
    [[dir, 'x', '--top-k', 'many'], '--top-k must be a whole number of at least 1, got many'],
    [[dir, 'x', '--top-k', '-1'], '--top-k needs a value (write --name=value for a value starting with -)'],
    [[dir, 'x', '--min-score', '2'], '--min-score must be a number from 0 to 1, got 2'],
    [[dir, 'x', '--min-score', ' '], '--min-score must be a number from 0 to 1, got  '],
    [[dir, 'x', '--mode', 'fuzzy'], '--mode must be bm25, vector or hybrid, got fuzzy'],
    [[dir, 'x', '--mode', 'vector'], '--mode vector needs an embedder: --embedder MODULE or WORKSPACE_SEARCH_EMBEDDER'],
    [[dir, 'x', '--bogus'], 'unknown option --bogus'],
    [['/nonexistent-folder', 'x'], 'not a folder: /nonexistent-folder'],
    [['mcp'], 'expected a folder'],
    [['mcp', dir, '--json'], '--json is an option of a search, not of mcp (its tool calls take topK, mode, minScore, maxTokens and cursor)'],
    [[dir, 'x', '--index-dir', ''], '--index-dir needs a folder'],
    [['grep', 'x', dir, '--bogus'], 'unknown option --bogus'],
  ]
  for (const [args, message] of cases) {
    const out = run(...args)
    assert.equal(out.status, 2, args.join(' '))
    assert.equal(out.stderr, `workspace-search: ${message}\nTry "workspace-search --help".\n`)
  }
  const help = run('--help')
  assert.equal(help.status, 0)
  assert.match(help.stdout, /^Usage: workspace-search \[search\] <folder>/)
  const version = run('--version')
  assert.equal(version.status, 0)
  assert.equal(version.stdout, `${JSON.parse(fs.readFileSync(new URL('../package.json', import.meta.url))).version}\n`)
  assert.equal(run('search', dir, 'router').status, 0)
  assert.match(run(dir, 'router', '--no-persist', '--stats').stderr, /: 4 files indexed in \d+ ms: 0 reused from the saved index, 4 read, 0 removed/)
  // Errors past the arguments are errors too (2, not 1): a workspace that cannot be made, an index that cannot be kept.
  const badInit = run(dir, 'x', '--index-dir', dir)
  assert.equal(badInit.status, 2, badInit.stderr)
  assert.match(badInit.stderr, /^workspace-search: --index-dir .* is the folder searched or holds it: .* give a folder of its own/)
  assert.ok(!badInit.stderr.includes('--help'), 'not a usage error')
})

test('exit status 2 for a folder that cannot be read (not "No results")', { skip: process.platform === 'win32' || !process.getuid }, (t) => {
  // root reads any folder: the command runs as nobody then, which needs a
  // Node.js binary nobody may run (one fetched by npx under root's home is not).
  const as = process.getuid() === 0 ? { uid: 65534, gid: 65534 } : {}
  if (spawnSync(process.execPath, ['-e', '0'], as).status !== 0) return t.skip(`${process.execPath} cannot run as uid 65534`)
  const dir = tree(t, FILES)
  fs.chmodSync(dir, 0o000)
  let out
  try {
    out = spawnSync(process.execPath, [CLI, dir, 'password', '--no-persist'], { encoding: 'utf8', env: ENV, ...as })
  } finally {
    fs.chmodSync(dir, 0o700)
  }
  assert.equal(out.status, 2, out.stderr)
  assert.equal(out.stderr, `workspace-search: cannot read ${dir}: permission denied\n`)
})

test('grep: a folder that cannot be read is counted on stderr and makes the status 2; the matches elsewhere still print', { skip: process.platform === 'win32' || !process.getuid }, (t) => {
  const as = process.getuid() === 0 ? { uid: 65534, gid: 65534 } : {}
  if (spawnSync(process.execPath, ['-e', '0'], as).status !== 0) return t.skip(`${process.execPath} cannot run as uid 65534`)
  const dir = tree(t, { 'open/a.txt': 'password here\n', 'locked/b.txt': 'password there\n' })
  fs.chmodSync(dir, 0o755)
  fs.chmodSync(path.join(dir, 'open'), 0o755)
  fs.chmodSync(path.join(dir, 'open/a.txt'), 0o644)
  fs.chmodSync(path.join(dir, 'locked'), 0o000)
  let out
  try {
    out = spawnSync(process.execPath, [CLI, 'grep', 'password', dir, '--no-persist'], { encoding: 'utf8', env: ENV, ...as })
  } finally {
    fs.chmodSync(path.join(dir, 'locked'), 0o700)
  }
  assert.equal(out.stdout, `${dir}/open/a.txt:1:1:password here\n`)
  assert.equal(out.stderr, 'workspace-search grep: 1 file or folder could not be read (permission denied, gone, a link out of the folder, or a name not in UTF-8)\n')
  assert.equal(out.status, 2)
})

test('paths print as the folder argument joined with the file path (as ripgrep), in --json as file', (t) => {
  const root = tree(t, { 'proj/src/a.md': 'the heron flies\n', 'work/.keep': '' })
  const work = path.join(root, 'work')
  const proj = path.join(root, 'proj')
  for (const [cwd, folder, shown] of [
    [work, '../proj', '../proj/src/a.md'],
    [work, '../proj/', '../proj/src/a.md'],
    [root, 'proj', 'proj/src/a.md'],
    [root, './proj', './proj/src/a.md'],
    [proj, '.', 'src/a.md'],
    [proj, './', 'src/a.md'],
    [proj, 'src', 'src/a.md'],
    [work, proj, `${proj}/src/a.md`],
    [work, path.join(proj, 'src'), `${proj}/src/a.md`],
  ]) {
    const out = runIn(cwd, folder, 'heron')
    assert.equal(out.status, 0, out.stderr)
    assert.equal(out.stdout.split('\n')[0], `${native(shown)}:1-1  1.000`, `${folder} from ${cwd}`)
    assert.ok(fs.existsSync(path.resolve(cwd, native(shown))), `${shown} opens from ${cwd}`)
    const json = JSON.parse(runIn(cwd, folder, 'heron', '--json').stdout)
    assert.equal(json.file, native(shown))
    assert.equal(json.path, folder === path.join(proj, 'src') || folder === 'src' ? 'a.md' : 'src/a.md', 'path: inside the folder, as before')
  }
  // A file the index could not take is named the same way on stderr.
  const module = path.join(tree(t, { 'embedder.mjs': "export default async () => { throw new Error('503 down') }\n" }), 'embedder.mjs')
  const failed = runIn(work, '../proj', 'heron', '--embedder', module)
  assert.equal(failed.status, 0, failed.stderr)
  assert.match(failed.stderr, new RegExp(`^workspace-search: ${native('../proj/src/a.md').replace(/[.\\]/g, '\\$&')}: vectors not written: 503 down`, 'm'))
})

test('displayPath: separators as the platform writes them, roots kept, the folder as written', () => {
  const { displayPath } = createRequire(import.meta.url)('../bin/format.js')
  const posix = (folder) => displayPath(folder, { sep: '/' })('src/a.rs')
  assert.deepEqual(['.', './', '..', '../x/', '/', '/abs', 'a/../b', 'we\\ird'].map(posix), ['src/a.rs', 'src/a.rs', '../src/a.rs', '../x/src/a.rs', '/src/a.rs', '/abs/src/a.rs', 'a/../b/src/a.rs', 'we\\ird/src/a.rs'])
  const windows = (folder) => displayPath(folder, { sep: '\\' })('src/a.rs')
  assert.deepEqual(['.', '.\\', '..\\x\\', 'C:\\', 'C:', 'C:\\w', 'd/'].map(windows), ['src\\a.rs', 'src\\a.rs', '..\\x\\src\\a.rs', 'C:\\src\\a.rs', 'C:src\\a.rs', 'C:\\w\\src\\a.rs', 'd\\src\\a.rs'])
  // An id found through an absolute --glob inside the folder is the file's absolute path (printed
  // as it is; it was joined to the folder: `p//tmp/p/a.md`); one through `/sub/*.md` is the folder's.
  const abs = path.resolve('p')
  assert.equal(displayPath('p', { sep: '/' })(`${abs}/sub/a.md`), `${abs}/sub/a.md`)
  assert.equal(displayPath('.', { sep: '/' })(`${path.resolve('.')}/a.md`), `${path.resolve('.')}/a.md`)
  assert.equal(displayPath('p', { sep: '/' })('/sub/a.md'), 'p/sub/a.md')
  assert.equal(displayPath('.', { sep: '/' })('/sub/a.md'), 'sub/a.md')
})

test('the default cache is one per folder and index options: same options reuse it, others get their own', (t) => {
  const dir = tree(t, { 'docs/a.md': 'the heron flies\n', 'docs/b.md': 'the crane waits\n', 'notes.txt': 'a heron note\n', '.gitignore': 'hidden.md\n', 'hidden.md': 'heron hidden\n' })
  // Older than any scan, so that none is read again as modified in the same instant (git's "racy" case).
  const hourAgo = new Date(Date.now() - 3600_000)
  for (const f of ['docs/a.md', 'docs/b.md', 'notes.txt', '.gitignore', 'hidden.md']) fs.utimesSync(path.join(dir, f), hourAgo, hourAgo)
  const cache = fs.mkdtempSync(path.join(os.tmpdir(), 'wss-cli-key-'))
  t.after(() => fs.rmSync(cache, { recursive: true, force: true }))
  const env = { ...process.env, XDG_CACHE_HOME: cache }
  /** The files reused from the saved index (--stats), and the cache folders there are. */
  const stats = (...args) => {
    const out = spawnSync(process.execPath, [CLI, dir, 'heron', '--stats', ...args], { encoding: 'utf8', env })
    assert.equal(out.status, 0, out.stderr)
    const m = out.stderr.match(/^workspace-search: (\d+) files? indexed in \d+ ms: (\d+) reused from the saved index, (\d+) read, (\d+) removed; (\d+) skipped, (\d+) failed$/m)
    assert.ok(m, out.stderr)
    assert.ok(!out.stderr.includes('rebuilt'), out.stderr)
    return { indexed: Number(m[1]), reused: Number(m[2]), read: Number(m[3]), folders: fs.readdirSync(path.join(cache, 'workspace-search')).length }
  }
  assert.deepEqual(stats(), { indexed: 4, reused: 0, read: 4, folders: 1 })
  assert.deepEqual(stats(), { indexed: 4, reused: 4, read: 0, folders: 1 }, 'the same options reuse the index')
  // Options of the search only: the same index.
  assert.deepEqual(stats('--top-k', '1', '--json', '--min-score', '0.1', '--mode', 'bm25'), { indexed: 4, reused: 4, read: 0, folders: 1 })
  // Options of the index: one each, the first left as it was.
  assert.deepEqual(stats('--glob', 'docs/**'), { indexed: 2, reused: 0, read: 2, folders: 2 })
  assert.deepEqual(stats('--glob', 'docs/**'), { indexed: 2, reused: 2, read: 0, folders: 2 })
  assert.deepEqual(stats('--no-gitignore'), { indexed: 5, reused: 0, read: 5, folders: 3 })
  assert.deepEqual(stats('--glob', 'notes.txt', '--glob', 'docs/**'), { indexed: 3, reused: 0, read: 3, folders: 4 })
  assert.deepEqual(stats('--glob', 'docs/**', '--glob', 'notes.txt', '--glob', 'docs/**'), { indexed: 3, reused: 3, read: 0, folders: 4 }, 'the same globs in another order')
  assert.deepEqual(stats(), { indexed: 4, reused: 4, read: 0, folders: 4 }, 'the first options still reuse theirs')
  // The folder is known by its real path: a symbolic link to it shares its cache.
  const link = path.join(cache, 'link')
  fs.symlinkSync(dir, link, 'dir')
  const viaLink = spawnSync(process.execPath, [CLI, link, 'heron', '--stats'], { encoding: 'utf8', env })
  assert.match(viaLink.stderr, /: 4 files indexed in \d+ ms: 4 reused from the saved index/)
  assert.equal(fs.readdirSync(path.join(cache, 'workspace-search')).length, 4)
})

test('chunks print their file path with file lines; long lines are elided; no colour when piped', (t) => {
  const long = `${'filler words here '.repeat(40)}needle${' and more'.repeat(200)}`
  const body = Array.from({ length: 400 }, (_, i) => (i === 300 ? 'the needle is here' : `line ${i} of text`)).join('\n')
  const dir = tree(t, { 'big.md': body, 'wide.md': long })
  const out = runIn(dir, '.', 'needle')
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
  const { columns } = createRequire(import.meta.url)('../bin/format.js')
  // Paths of wide characters count two columns each, and are never cut inside a character.
  for (const path of ['node_modules/some/deep/path/file.js', 'docs/日本語のドキュメント/説明書/はじめに.md', 'notes/🔥🔥🔥🔥🔥🔥🔥🔥🔥🔥🔥🔥🔥🔥🔥🔥🔥🔥/x.md']) {
    const event = { phase: 'read', done: 5123, total: 10366, path }
    for (let width = 24; width <= 200; width++) {
      const line = render(event, width)
      assert.ok(columns(line) < width, `${width}: ${line}`)
      assert.ok(line.includes('5123/10366'), `${width}: ${line}`)
      assert.ok(line.isWellFormed(), `${width}: ${line}`)
    }
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
  const bm25 = runIn(dir, '.', 'reset password', '--embedder', module)
  assert.equal(bm25.status, 0, bm25.stderr)
  assert.ok(bm25.stdout.startsWith(`${native('docs/reset.md')}:3-4 `), bm25.stdout)
  // One line for the four files the embedder failed alike.
  assert.match(bm25.stderr, /^workspace-search: 4 files: vectors not written: 401 Unauthorized: invalid API key \(/m)
  assert.ok(!bm25.stderr.includes('No results'), bm25.stderr)
  // Hybrid search embeds the query: the same error is the answer.
  const hybrid = run(dir, 'reset password', '--embedder', module, '--mode', 'hybrid')
  assert.equal(hybrid.status, 2, 'an error, not "found nothing"')
  assert.match(hybrid.stderr, /^workspace-search: 401 Unauthorized: invalid API key$/m)
  assert.ok(!hybrid.stderr.includes('No results'), hybrid.stderr)
})

test('an --embedder module that cannot be loaded is named, with the line of its syntax error (the message was Node\'s alone: "Unexpected token \'}\'")', (t) => {
  const dir = tree(t, FILES)
  const module = path.join(tree(t, { 'embedder.mjs': 'export default async function (t) {\n  return [1, 2\n}\n}\n' }), 'embedder.mjs')
  const out = runIn(dir, '.', 'reset', '--embedder', module, '--no-persist')
  assert.equal(out.status, 2)
  assert.ok(out.stderr.startsWith(`workspace-search: --embedder ${module} could not be loaded: `), out.stderr)
  assert.match(out.stderr, / \(line 3\)\n$/)
})

test('an embedder that answers vectors the engine refuses (NaN) for every file: one line counting them, as for other failures alike (a line per file: each message named its batch)', (t) => {
  const files = Object.fromEntries(Array.from({ length: 30 }, (_, i) => [`n${i}.md`, `alpha note ${i}\n`]))
  const dir = tree(t, files)
  const module = path.join(tree(t, { 'embedder.mjs': 'export default async () => [NaN, 1, 2]\n' }), 'embedder.mjs')
  const out = runIn(dir, '.', 'alpha', '--embedder', module, '--no-persist', '--top-k', '1')
  assert.equal(out.status, 0, out.stderr)
  const lines = out.stderr.trim().split('\n')
  assert.equal(lines.length, 1, out.stderr)
  assert.match(lines[0], /^workspace-search: 30 files: vectors not written: Embedder returned a non-finite number: vector 1, element 0 is NaN/)
})

test("an embedder that logs (console.log, as model loaders do) writes to stderr: --json's stdout stays one JSON object per line (the logs were on stdout between them)", (t) => {
  const dir = tree(t, FILES)
  const module = path.join(tree(t, { 'embedder.mjs': "console.log('loading model...')\nexport default async (text) => { console.log('embedding', text.length); console.info('info'); return [text.length % 7 + 1, 1, 2] }\n" }), 'embedder.mjs')
  const out = run(dir, 'password', '--embedder', module, '--mode', 'hybrid', '--json', '--no-persist')
  assert.equal(out.status, 0, out.stderr)
  const lines = out.stdout.split('\n').filter(Boolean)
  assert.ok(lines.length > 0)
  for (const line of lines) assert.doesNotThrow(() => JSON.parse(line), line)
  assert.match(out.stderr, /^loading model\.\.\.$/m)
  assert.match(out.stderr, /^embedding \d+$/m)
})

// Terminal control sequences in files: clear the screen, set the window title, a bell, DEL, a C1 CSI.
const CONTROL_FILES = {
  'tricks.md': 'terminal one \x1b[2J cleared\nterminal two \x1b]0;pwned\x07 titled\nterminal three \x7f and \u009b31m end\nterminal four \u2028 and \u2029 split\n',
  'odd\x1b[2Kname.md': 'terminal in the name\n',
}
const RAW_CONTROLS = /[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029]/

/** The escaped forms every human-readable output shows for CONTROL_FILES. */
function assertEscaped(out) {
  assert.ok(!RAW_CONTROLS.test(out), `raw control character in ${JSON.stringify(out)}`)
  for (const shown of ['terminal one \\x1b[2J cleared', 'terminal two \\x1b]0;pwned\\x07 titled', 'terminal three \\x7f and \\x9b31m end', 'terminal four \\u2028 and \\u2029 split', 'odd\\x1b[2Kname.md:1-1']) {
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
  assert.deepEqual(Object.keys(json[0]), ['file', 'path', 'id', 'start', 'end', 'score', 'bm25', 'vector', 'content'])

  // The folder as the user wrote it, joined to each path, is escaped too (and kept raw in --json's file).
  const parent = tree(t, Object.fromEntries(Object.entries(CONTROL_FILES).map(([name, text]) => [`in\x1b[31mside/${name}`, text])))
  const nested = runIn(parent, 'in\x1b[31mside', 'terminal')
  assert.equal(nested.status, 0, nested.stderr)
  assertEscaped(nested.stdout)
  assert.ok(nested.stdout.includes(`in\\x1b[31mside${path.sep}odd\\x1b[2Kname.md:1-1`), nested.stdout)
  const nestedJson = runIn(parent, 'in\x1b[31mside', 'terminal', '--json').stdout.trim().split('\n').map((l) => JSON.parse(l))
  assert.ok(nestedJson.some((r) => r.file === `in\x1b[31mside${path.sep}odd\x1b[2Kname.md` && r.path === 'odd\x1b[2Kname.md'), JSON.stringify(nestedJson))

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

test('--max-tokens prints what an agent is given, within the budget, paged with --cursor to the end; --json keeps its shape', async (t) => {
  const { estimateTokenCount } = await import('tokenx')
  const files = {}
  for (let i = 0; i < 30; i++) files[`notes/n${String(i).padStart(2, '0')}.md`] = `note ${i} about routers\n${'and switches '.repeat(i % 4)}routers again\n`
  const dir = tree(t, files)
  const seen = []
  let cursor
  let pages = 0
  for (;;) {
    const out = runIn(dir, '.', 'routers', '--max-tokens', '150', '--no-persist', ...(cursor ? ['--cursor', cursor] : []))
    assert.equal(out.status, 0, out.stderr)
    assert.equal(out.stderr, '')
    const text = out.stdout.replace(/\n$/, '')
    assert.ok(estimateTokenCount(text) <= 150, `${estimateTokenCount(text)} tokens\n${text}`)
    seen.push(...[...text.matchAll(/^(\S+):\d+-\d+ {2}\d\.\d{3}$/gm)].map((m) => m[1]))
    pages++
    cursor = /next page: the same command with --cursor (\S+)\]$/.exec(text)?.[1]
    if (!cursor) {
      assert.match(text, /\n\n\[no more results\]$/)
      break
    }
  }
  assert.ok(pages > 2, `${pages} pages`)
  assert.deepEqual(seen.sort(), Object.keys(files).map(native).sort(), 'every file once')

  // --json: the same files as the budgeted page, one object each, the next cursor on stderr.
  const text = runIn(dir, '.', 'routers', '--max-tokens', '150', '--no-persist').stdout
  const json = runIn(dir, '.', 'routers', '--max-tokens', '150', '--no-persist', '--json')
  const rows = json.stdout.trim().split('\n').map((l) => JSON.parse(l))
  assert.deepEqual(Object.keys(rows[0]), ['file', 'path', 'id', 'start', 'end', 'score', 'bm25', 'vector', 'content'])
  assert.deepEqual(rows.map((r) => r.file), [...text.matchAll(/^(\S+):\d+-\d+ {2}/gm)].map((m) => m[1]))
  assert.match(json.stderr, /^workspace-search: next page: --cursor \S+\n$/)
  const next = /--cursor (\S+)/.exec(json.stderr)[1]
  const second = runIn(dir, '.', 'routers', '--max-tokens', '150', '--no-persist', '--json', '--cursor', next).stdout.trim().split('\n').map((l) => JSON.parse(l).file)
  assert.equal(second.filter((f) => rows.some((r) => r.file === f)).length, 0, 'no overlap')

  // Without --max-tokens, --cursor pages --top-k results at a time (an empty one starts), the next cursor on stderr.
  const first = runIn(dir, '.', 'routers', '--top-k', '25', '--no-persist', '--json', '--cursor=')
  assert.equal(first.stdout.trim().split('\n').length, 25)
  const rest = runIn(dir, '.', 'routers', '--top-k', '25', '--no-persist', '--json', '--cursor', /--cursor (\S+)/.exec(first.stderr)[1])
  assert.equal(rest.stdout.trim().split('\n').length, 5)
  assert.equal(rest.stderr, 'workspace-search: no more results\n')

  for (const [args, message] of [
    [['--max-tokens', '99'], '--max-tokens must be a whole number from 100 to 100000, got 99'],
    [['--max-tokens', 'lots'], '--max-tokens must be a whole number from 100 to 100000, got lots'],
    [['--max-tokens', '500', '--top-k', '51'], '--top-k must be at most 50 with --max-tokens, got 51'],
    [['--cursor', 'x'], '--cursor: cursor "x" is not one this search gave; leave it out to start from the first page'],
  ]) {
    const out = runIn(dir, '.', 'routers', '--no-persist', ...args)
    assert.equal(out.status, 2, args.join(' '))
    assert.equal(out.stderr, `workspace-search: ${message}\nTry "workspace-search --help".\n`)
  }
})

test('grep: ripgrep\'s lines (path:line:column:text, context path-line-text, -- between groups), exit 0/1/2, the index kept for the next run', (t) => {
  const dir = tree(t, {
    'src/a.ts': 'one\nconst needle = 1\ntwo\nthree\nfour\nneedle again\n',
    'src/b.md': 'Needle in caps\n',
    'src/c.png': 'needle in a file Mastra does not read\n',
    '.hidden/h.ts': 'needle hidden\n',
    'esc.md': 'needle \x1b[31mred\x1b[0m\n',
  })
  const plain = runIn(dir, 'grep', 'needle', '.')
  assert.equal(plain.status, 0, plain.stderr)
  assert.equal(plain.stdout, 'esc.md:1:1:needle \\x1b[31mred\\x1b[0m\nsrc/a.ts:2:7:const needle = 1\nsrc/a.ts:6:1:needle again\n')
  const context = runIn(dir, 'grep', '-i', '-C', '1', 'needle', 'src')
  // Lines as JavaScript's split('\n') gives them (as Mastra's tool): a file ending in a line feed ends with an empty line.
  assert.equal(context.stdout, 'src/a.ts-1-one\nsrc/a.ts:2:7:const needle = 1\nsrc/a.ts-3-two\n--\nsrc/a.ts-5-four\nsrc/a.ts:6:1:needle again\nsrc/a.ts-7-\n--\nsrc/b.md:1:1:Needle in caps\nsrc/b.md-2-\n')
  assert.equal(runIn(dir, 'grep', '-m', '1', '--hidden', 'needle', '.').stdout.split('\n').filter(Boolean).length, 3)
  assert.equal(runIn(dir, 'grep', '--glob', '**/*.md', 'eedle', '.').stdout, 'esc.md:1:2:needle \\x1b[31mred\\x1b[0m\nsrc/b.md:1:2:Needle in caps\n')
  const json = runIn(dir, 'grep', '--json', 'needle', 'src').stdout.trim().split('\n').map((l) => JSON.parse(l))
  assert.deepEqual(json, [{ path: 'a.ts', matches: [{ line: 2, column: 6, text: 'const needle = 1' }, { line: 6, column: 0, text: 'needle again' }] }])
  // Paths as the folder argument joined with the file's path, as ripgrep prints them.
  assert.match(run('grep', 'caps', path.join(dir, 'src')).stdout, new RegExp(`^${path.join(dir, 'src', 'b.md').replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}:1:11:`))
  assert.equal(runIn(dir, 'grep', 'zzz_none', '.').status, 1)
  const bad = runIn(dir, 'grep', '(', '.')
  assert.equal(bad.status, 2)
  assert.match(bad.stderr, /invalid pattern: Invalid regular expression/)
  assert.equal(runIn(dir, 'grep', 'x', 'missing-folder').status, 2)
  // The second run finds its index in the cache (and an edit in between).
  fs.writeFileSync(path.join(dir, 'src/b.md'), 'Needle edited\n')
  assert.equal(runIn(dir, 'grep', '-i', 'needle edited', '.').stdout, 'src/b.md:1:1:Needle edited\n')
  const caches = fs.readdirSync(CACHE, { recursive: true }).filter((f) => String(f).endsWith('grep.wss'))
  assert.ok(caches.length >= 1, 'the grep index is kept in the cache folder')
})

test('a folder whose name is not UTF-8: given as the folder, or the current folder, the command says so and exits 2 (it was "not a folder", or no results from 0 files)', { skip: process.platform !== 'linux' && 'needs a file system that takes any bytes in a name' }, (t) => {
  const dir = tree(t, { 'b.md': 'routers top\n' })
  const name = Buffer.concat([Buffer.from(`${dir}/caf`), Buffer.from([0xe9])])
  fs.mkdirSync(name)
  fs.writeFileSync(Buffer.concat([name, Buffer.from('/a.md')]), 'hello routers\n')
  const sh = (script) => spawnSync('sh', ['-c', script], { cwd: dir, encoding: 'utf8', env: { ...process.env, XDG_CACHE_HOME: dir } })
  const given = sh(`"${process.execPath}" "${CLI}" "$(printf 'caf\\351')" routers --no-persist`)
  assert.equal(given.status, 2, given.stderr)
  assert.match(given.stderr, /caf\uFFFD: the name is not valid UTF-8/)
  const inside = sh(`cd "$(printf 'caf\\351')" && "${process.execPath}" "${CLI}" . routers --no-persist`)
  assert.equal(inside.status, 2, inside.stderr)
  assert.match(inside.stderr, /cannot read .*caf\uFFFD: basePath unreadable: .*not named in UTF-8/)
  // The MCP server refuses it before it starts (it served "No results" to every search).
  const served = sh(`cd "$(printf 'caf\\351')" && "${process.execPath}" "${CLI}" mcp . --no-persist < /dev/null`)
  assert.equal(served.status, 2, served.stderr)
  assert.match(served.stderr, /cannot read .*caf\uFFFD: basePath unreadable: .*not named in UTF-8/)
  const parent = sh(`"${process.execPath}" "${CLI}" . routers --no-persist`)
  assert.equal(parent.status, 0, parent.stderr)
  assert.match(parent.stdout, /b\.md/)
  // As --index-dir: refused (the index went to a folder of another name, "idx\uFFFD").
  const indexDir = sh(`"${process.execPath}" "${CLI}" . routers --index-dir "$(printf 'idx\\377')"`)
  assert.equal(indexDir.status, 2, indexDir.stderr)
  assert.match(indexDir.stderr, /--index-dir idx\uFFFD: the name is not valid UTF-8/)
  assert.ok(!fs.readdirSync(dir).some((n) => n.startsWith('idx')), 'no index folder made')
})
