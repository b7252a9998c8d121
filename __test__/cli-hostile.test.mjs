// The command line given what breaks it: huge contexts, globs that lead
// nowhere, folders and files it cannot index, an index folder it cannot use.
import test from 'node:test'
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import fs from 'node:fs'
import { createRequire } from 'node:module'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { tree, Workspace } from './helpers.mjs'

const CLI = fileURLToPath(new URL('../bin/workspace-search.js', import.meta.url))
const { fileLines } = createRequire(import.meta.url)('../bin/grep.js')
// The index each run keeps goes to a temporary cache folder, not the user's.
const CACHE = fs.mkdtempSync(path.join(os.tmpdir(), 'wss-hostile-cache-'))
process.on('exit', () => fs.rmSync(CACHE, { recursive: true, force: true }))
const ENV = { ...process.env, XDG_CACHE_HOME: CACHE }
/** The command run from `cwd` (paths print relative to it), stdin closed. */
const runIn = (cwd, ...args) => spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8', env: ENV, cwd, input: '' })
const usage = (message) => `workspace-search: ${message}\nTry "workspace-search --help".\n`

// Matches 3 and 5 share their context, 10 and 12 too, 12 and 13 touch; -C 3 joins 5 and 10.
const CONTEXT = 'ctx1\nctx2\nMATCH a\nctx4\nMATCH b\nctx6\nctx7\nctx8\nctx9\nMATCH c\nctx11\nMATCH d\nMATCH e\nctx14\n'

test('grep -C: context shared by neighbouring matches prints once, as the API without contextOnce gives it to ripgrep\'s format; --json keeps each match\'s whole context', async (t) => {
  const dir = tree(t, { 'ctx.md': CONTEXT, 'one.md': 'alone MATCH\n' })
  const workspace = new Workspace({ filesystem: { basePath: dir } })
  t.after(() => workspace.destroy())
  for (const context of [1, 2, 3, 20]) {
    const full = await workspace.grep('MATCH', { contextLines: context })
    const once = await workspace.grep('MATCH', { contextLines: context, contextOnce: true })
    const lines = (files) => files.map((f) => fileLines(f.path, f.matches).join('\n')).join('\n--\n')
    assert.equal(lines(once), lines(full), `-C ${context}: the same lines from either form`)
    const out = runIn(dir, 'grep', 'MATCH', '.', '-C', String(context), '--no-persist')
    assert.equal(out.status, 0, out.stderr)
    assert.equal(out.stdout, `${lines(full)}\n`, `-C ${context}`)
    const json = runIn(dir, 'grep', 'MATCH', '.', '-C', String(context), '--no-persist', '--json')
    assert.deepEqual(json.stdout.trim().split('\n').map((l) => JSON.parse(l)), full, `--json -C ${context}`)
  }
  assert.equal(
    runIn(dir, 'grep', 'MATCH', '.', '-C', '1', '--no-persist').stdout,
    'ctx.md-2-ctx2\nctx.md:3:1:MATCH a\nctx.md-4-ctx4\nctx.md:5:1:MATCH b\nctx.md-6-ctx6\n--\nctx.md-9-ctx9\nctx.md:10:1:MATCH c\nctx.md-11-ctx11\nctx.md:12:1:MATCH d\nctx.md:13:1:MATCH e\nctx.md-14-ctx14\n--\none.md:1:7:alone MATCH\none.md-2-\n',
  )
})

test('grep -C over a file of many matches takes memory for its lines, not matches x context (each match had its own copy)', (t) => {
  const dir = tree(t, { 'many.ts': 'xxxxxxxxxxxxxxxxxxxxxx\n'.repeat(3000) })
  // Under a 64 MB heap: 3,000 matches with 1,000 lines of context each are 3 million lines.
  const out = spawnSync(process.execPath, ['--max-old-space-size=64', CLI, 'grep', 'x', dir, '-C', '500', '--no-persist'], { encoding: 'utf8', env: ENV, maxBuffer: 1 << 28 })
  assert.equal(out.status, 0, out.stderr.slice(0, 500))
  const lines = out.stdout.split('\n')
  assert.equal(lines.length, 3002, 'the 3,000 lines and the empty last one, each once, and the final line feed')
  assert.equal(lines[2999], `${dir}/many.ts:3000:1:xxxxxxxxxxxxxxxxxxxxxx`)
})

/** Runs grep over `dir` with `args`, and checks it refuses them as a usage error. */
function refused(dir, args, message) {
  const out = runIn(dir, 'grep', 'needle', '.', '--no-persist', ...args)
  assert.equal(out.status, 2, args.join(' '))
  assert.equal(out.stderr, usage(message))
  assert.equal(out.stdout, '')
}

test('grep: -C above the API\'s 10,000 is refused (it was capped without a word)', (t) => {
  const dir = tree(t, { 'a.ts': 'needle\n' })
  refused(dir, ['-C', '10001'], '--context must be a whole number from 0 to 10000, got 10001')
  refused(dir, ['--context=1e20'], '--context must be a whole number from 0 to 10000, got 1e20')
  refused(dir, ['--context=-1'], '--context must be a whole number from 0 to 10000, got -1')
  // A short option's value that starts with a dash: said as the long options' is (it was parseArgs' own three lines).
  refused(dir, ['-C', '-1'], '-C needs a value (write -CVALUE for a value starting with -)')
  assert.equal(runIn(dir, 'grep', 'needle', '.', '--no-persist', '-C', '10000').status, 0)
})

test('grep: a second --glob is refused (grep() takes one glob: the first was dropped without a word)', (t) => {
  const dir = tree(t, { 'src/a.ts': 'needle\n', 'docs/b.md': 'needle\n' })
  refused(dir, ['--glob', 'src/*.ts', '--glob', 'docs/*.md'], '--glob can be given once to grep, got 2: write one glob that names them all, such as "{src/*.ts,docs/*.md}"')
  // The brace list the message offers names both.
  assert.equal(runIn(dir, 'grep', 'needle', '.', '--no-persist', '--glob', '{src/*.ts,docs/*.md}').stdout, 'docs/b.md:1:1:needle\nsrc/a.ts:1:1:needle\n')
})

test('grep: a link to a file outside the folder is counted among what could not be read, and the message says it may be one', (t) => {
  const outside = tree(t, { 'secret.md': 'needle outside\n' })
  const dir = tree(t, { 'a.md': 'needle inside\n' })
  fs.symlinkSync(path.join(outside, 'secret.md'), path.join(dir, 'link.md'))
  const out = runIn(dir, 'grep', 'needle', '.', '--no-persist')
  assert.equal(out.stdout, 'a.md:1:1:needle inside\n')
  assert.equal(out.stderr, 'workspace-search grep: 1 file or folder could not be read (permission denied, gone, a link out of the folder, or a name not in UTF-8)\n')
})

test('an empty or blank query is a usage error (it printed "No results" and exited 1)', (t) => {
  const dir = tree(t, { 'a.md': 'hello\n' })
  for (const query of ['', '  ', '\t\n']) {
    const out = runIn(dir, '.', query, '--no-persist')
    assert.equal(out.status, 2, JSON.stringify(query))
    assert.equal(out.stderr, usage('the query is empty: give the words to search for'))
  }
})

test('mcp refuses a --glob that leads out of the folder or is no glob before it starts, as the search does (it served no files)', (t) => {
  const outside = tree(t, { 'o.md': 'hello\n' })
  const dir = tree(t, { 'src/a.md': 'hello\n' })
  fs.symlinkSync(outside, path.join(dir, 'out'))
  for (const [glob, reason] of [
    ['../x', 'outside basePath'],
    ['src/../../x/*.md', 'outside basePath'],
    ['out/*.md', 'outside basePath (symbolic link)'],
    ['out', 'outside basePath (symbolic link)'],
    ['[[', "invalid glob: error parsing glob '[[': unclosed character class; missing ']'"],
    ['src/*.{md', "invalid glob: error parsing glob 'src/*.{md': unclosed alternate group; missing '}' (maybe escape '{' with '[{]'?)"],
  ]) {
    const search = runIn(dir, '.', 'hello', '--glob', glob, '--no-persist')
    assert.equal(search.status, 2, glob)
    assert.equal(search.stderr, `workspace-search: --glob ${glob}: ${reason}\n`, glob)
    const mcp = runIn(dir, 'mcp', '.', '--glob', 'src/*.md', '--glob', glob, '--no-persist')
    assert.equal(mcp.status, 2, glob)
    assert.equal(mcp.stderr, search.stderr, glob)
    assert.equal(mcp.stdout, '', 'no server started')
  }
  // Globs it takes: the server starts, and ends as stdin closes.
  const good = runIn(dir, 'mcp', '.', '--glob', 'src/*.md', '--glob', `${dir}/src/**`, '--glob', 'missing/[[', '--no-persist')
  assert.equal(good.status, 0, good.stderr)
})

test('a file over the size limit is reported on stderr, alike ones in one line; binary files, FIFOs and links out are passed over quietly', (t) => {
  const outside = tree(t, { 'o.md': 'hello outside\n' })
  const big = 'hello '.repeat(Math.ceil((10 * 1024 * 1024 + 1) / 6))
  const dir = tree(t, { 'a.md': 'hello\n', 'big.md': big, 'bin.md': 'hello\0binary\n' })
  fs.symlinkSync(path.join(outside, 'o.md'), path.join(dir, 'link.md'))
  const fifo = spawnSync('mkfifo', [path.join(dir, 'pipe.md')]).status === 0
  const out = runIn(dir, '.', 'hello', '--no-persist')
  assert.equal(out.status, 0, out.stderr)
  assert.equal(out.stderr, `workspace-search: big.md: larger than maxFileSize (${big.length} bytes > 10485760)\n`)
  fs.writeFileSync(path.join(dir, 'big2.md'), big)
  const two = runIn(dir, '.', 'hello', '--no-persist', '--stats')
  assert.match(two.stderr, /^workspace-search: 2 files: larger than maxFileSize \(10485760 bytes\)\n/)
  assert.match(two.stderr, new RegExp(`; ${fifo ? 5 : 4} skipped, 0 failed\\n`), 'the others are counted by --stats')
})

test('a folder that cannot be read inside the searched one is reported on stderr (it was dropped without a word)', { skip: process.platform === 'win32' || !process.getuid }, (t) => {
  // root reads any folder: the command runs as nobody then (as in cli.test.mjs).
  const as = process.getuid() === 0 ? { uid: 65534, gid: 65534 } : {}
  if (spawnSync(process.execPath, ['-e', '0'], as).status !== 0) return t.skip(`${process.execPath} cannot run as uid 65534`)
  const dir = tree(t, { 'open/a.md': 'hello here\n', 'locked/b.md': 'hello there\n' })
  for (const p of [dir, path.join(dir, 'open')]) fs.chmodSync(p, 0o755)
  fs.chmodSync(path.join(dir, 'open/a.md'), 0o644)
  fs.chmodSync(path.join(dir, 'locked'), 0o000)
  let out
  try {
    out = spawnSync(process.execPath, [CLI, dir, 'hello', '--no-persist'], { encoding: 'utf8', env: ENV, ...as })
  } finally {
    fs.chmodSync(path.join(dir, 'locked'), 0o700)
  }
  assert.equal(out.status, 0, out.stderr)
  assert.match(out.stdout, /open\/a\.md:1-1/)
  assert.equal(out.stderr, `workspace-search: ${dir}/locked: unreadable: Permission denied (os error 13)\n`)
})

test('--index-dir that cannot hold the index (a file, a folder of other files) is said in one line on stderr; the search still answers, status 0', (t) => {
  const dir = tree(t, { 'a.md': 'hello\n' })
  const elsewhere = tree(t, { 'a-file': 'x\n', 'theirs/notes.txt': 'mine\n' })
  for (const [name, why] of [
    ['a-file', 'it is not a directory'],
    ['theirs', "it holds files that are not workspace-search's (notes.txt); give an empty or new directory"],
  ]) {
    const at = path.join(elsewhere, name)
    const out = runIn(dir, '.', 'hello', '--index-dir', at)
    assert.equal(out.status, 0, out.stderr)
    assert.match(out.stdout, /^a\.md:1-1/)
    assert.equal(out.stderr, `workspace-search: persist: ${at} cannot be used (${why}); nothing is saved\n`)
  }
  assert.deepEqual(fs.readdirSync(path.join(elsewhere, 'theirs')), ['notes.txt'], 'nothing written there')
  const fresh = runIn(dir, '.', 'hello', '--index-dir', path.join(elsewhere, 'new'))
  assert.equal(fresh.stderr, '', 'a folder it can use says nothing')
})

test('a glob past the regex size limit is refused in one short line (the engine panicked: a megabyte of Rust panic on stderr), in grep, in search and through grep()', async (t) => {
  const dir = tree(t, { 'a.md': 'hello transport\n' })
  const huge = '*'.repeat(100_000)
  for (const args of [['grep', 'x', dir, '--glob', huge], [dir, 'hello', '--glob', huge]]) {
    const r = runIn(dir, ...args)
    assert.equal(r.status, 2, r.stderr.slice(0, 300))
    assert.ok(r.stderr.length < 1000 && !/panicked/.test(r.stderr), r.stderr.slice(0, 300))
    assert.match(r.stderr, /size limit|invalid glob/)
  }
  const workspace = new Workspace({ filesystem: { basePath: dir } })
  t.after(() => workspace.destroy())
  const braces = `{${Array.from({ length: 50_000 }, (_, i) => `src/file${i}.ts`).join(',')}}`
  const error = await workspace.grep('x', { path: braces }).then(() => null, (e) => e)
  assert.ok(error && error.message.length < 1000 && !/internal error/.test(error.message), String(error?.message).slice(0, 300))
})

test('grep piped into a reader that stops early (| head) still builds and keeps its grep index: the command ends as it would (it exited at once, before the build of a large folder was done)', async (t) => {
  const dir = tree(t)
  for (let d = 0; d < 150; d++) {
    fs.mkdirSync(path.join(dir, `d${d}`))
    for (let f = 0; f < 200; f++) fs.writeFileSync(path.join(dir, `d${d}`, `f${f}.txt`), `alpha ${d} ${f}\nbeta gamma delta ${f * d}\n`)
  }
  const cache = tree(t)
  const { spawn } = await import('node:child_process')
  const child = spawn(process.execPath, [CLI, 'grep', 'alpha', dir], { env: { ...ENV, XDG_CACHE_HOME: cache }, stdio: ['ignore', 'pipe', 'pipe'] })
  let stderr = ''
  child.stderr.on('data', (d) => (stderr += d))
  const exited = new Promise((resolve) => child.on('exit', (code, signal) => resolve(code ?? signal)))
  // As `head -1` does: the first output read, the pipe closed.
  await new Promise((resolve) => child.stdout.once('data', resolve))
  child.stdout.destroy()
  const code = await exited
  assert.equal(code, 0, stderr)
  const kept = fs.readdirSync(path.join(cache, 'workspace-search')).map((d) => fs.readdirSync(path.join(cache, 'workspace-search', d)))
  assert.ok(kept.length === 1 && kept[0].includes('grep.wss'), `the grep index kept: ${JSON.stringify(kept)}`)
})

test('grep whose answer would pass its bound (1,000,000 lines) says what to do in the command\'s own terms (it named the API\'s options: contextLines, maxCount, contextOnce)', (t) => {
  const dir = tree(t, { 'many.txt': 'a\n'.repeat(1_000_001) })
  const out = runIn(dir, 'grep', 'a', '.', '--no-persist')
  assert.equal(out.status, 2)
  assert.equal(out.stderr, 'workspace-search: the answer would hold more than 1000000 lines or 128 MB of them (matched and context): narrow the pattern, the folder or --glob, or lower -C or -m\n')
  // As it says: -m bounds it.
  const bounded = runIn(dir, 'grep', 'a', '.', '--no-persist', '-m', '3')
  assert.equal(bounded.status, 0, bounded.stderr)
  assert.equal(bounded.stdout, 'many.txt:1:1:a\nmany.txt:2:1:a\nmany.txt:3:1:a\n')
})

test('an --index-dir inside the folder searched is passed over by every other run too (its .gitignore): its lock file ranked first for "process" in them', (t) => {
  const dir = tree(t, { 'src/app.js': 'function start() { return process.pid }\n' })
  const inside = runIn(dir, '.', 'process', '--index-dir', path.join(dir, 'idx'))
  assert.equal(inside.status, 0, inside.stderr)
  assert.ok(fs.existsSync(path.join(dir, 'idx', '.gitignore')))
  const other = runIn(dir, '.', 'process', '--no-persist', '--json')
  assert.deepEqual(other.stdout.trim().split('\n').map((l) => JSON.parse(l).path), ['src/app.js'])
  const grep = runIn(dir, 'grep', 'process', '.', '--no-persist')
  assert.equal(grep.stdout, 'src/app.js:1:27:function start() { return process.pid }\n')
  // The folder itself, or one holding it: refused in this command's terms.
  const itself = runIn(dir, '.', 'process', '--index-dir', '.')
  assert.equal(itself.status, 2)
  assert.match(itself.stderr, /^workspace-search: --index-dir \. is the folder searched or holds it/)
})

test('lines of CJK text and emoji are cut to the terminal\'s columns, each such character two wide (they took twice the width, and wrapped)', () => {
  const { elide } = createRequire(import.meta.url)('../bin/format.js')
  const wide = (text) => [...text].reduce((n, c) => n + (/[\u3000-\u9fff\uac00-\ud7a3\u{1f300}-\u{1f64f}]/u.test(c) ? 2 : c === '\u0301' ? 0 : 1), 0)
  for (const text of ['中文字符'.repeat(30), `id ${'검색어'.repeat(40)} end`, `${'🎉x'.repeat(50)}`, `cafe\u0301 ${'é'.repeat(100)}`, 'a'.repeat(100)]) {
    for (const width of [20, 59, 80]) {
      const cut = elide(text, width)
      assert.ok(wide(cut) <= width && wide(cut) >= width - 2, `${width}: ${wide(cut)} columns: ${cut}`)
      assert.ok(cut.includes('…'))
    }
  }
  assert.equal(elide('中文', 4), '中文')
})
