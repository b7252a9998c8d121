// The tree changing under init() in hostile ways: names swapped for links
// out of basePath between the walk and the read; `.gitignore` files and a
// `.git` folder that are FIFOs, endless devices or links out of basePath.
// Nothing outside basePath is read, nothing blocks, nothing grows without
// bound.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { spawn, spawnSync, execFileSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { bm25Workspace, tree } from './helpers.mjs'

// GNU mv -T and bash make the swaps; the check that closes the race for folders is Linux's.
test('a file or a folder swapped for a link out of basePath while init() reads is never read', { skip: process.platform !== 'linux' }, async (t) => {
  const root = tree(t, { 'out/secret.md': 'outsidesecret', 'out/dir/y.md': 'outsidesecret' })
  const base = path.join(root, 'base')
  fs.mkdirSync(path.join(base, 'dir'), { recursive: true })
  for (let i = 0; i < 300; i++) fs.writeFileSync(path.join(base, `pad${i}.md`), `pad ${i}`)
  fs.writeFileSync(path.join(base, 'x.md'), 'harmless')
  fs.writeFileSync(path.join(base, 'dir/y.md'), 'harmless')
  // x.md: a file, then a link to the secret (atomic renames); dir: a
  // folder, then a link to a folder outside.
  const churn = spawn(
    'bash',
    [
      '-c',
      // (Until this process is gone: killed, it cannot end its group.)
      `cd '${base}'; while kill -0 ${process.pid} 2>/dev/null; do
        ln -sfn '${root}/out/secret.md' l.tmp; mv -T l.tmp x.md; echo harmless > r.tmp; mv -T r.tmp x.md
        mv dir dir.real && ln -s '${root}/out/dir' dir; sleep 0.001; rm -f dir; mv dir.real dir
      done`,
    ],
    // Its own process group, so that stop() ends the mv or ln it is running too:
    // killed alone, bash left them to finish after the tree's removal listed the folder.
    { stdio: 'ignore', detached: true },
  )
  const exited = new Promise((resolve) => churn.once('exit', resolve))
  const stop = async () => {
    try {
      process.kill(-churn.pid, 'SIGKILL')
    } catch {}
    await exited
    // Killed ones are gone once reaped; a zombie nobody reaps writes nothing, hence the bound.
    const deadline = Date.now() + 2_000
    while (groupAlive(churn.pid) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 5))
  }
  const leaks = []
  // Stopped in the body, not in an after() hook: hooks run in the order
  // registered, the tree's removal first, and no file may appear while it runs.
  try {
    for (let round = 0; round < 150; round++) {
      const ws = bm25Workspace(base, { autoIndexPaths: ['.'] })
      await ws.init()
      for (const hit of await ws.search('outsidesecret')) leaks.push(`${round}: ${hit.id}`)
      await ws.destroy()
    }
  } finally {
    await stop()
  }
  assert.deepEqual(leaks, [])
})

/** Whether any process of the group `pgid` is still there (a killed one is gone once reaped). */
function groupAlive(pgid) {
  try {
    process.kill(-pgid, 0)
    return true
  } catch {
    return false
  }
}

/** Runs `source` (an ES module with `Workspace`, `LocalFilesystem` and `base` in scope) in a child, with a time limit. */
function child(base, source, timeout = 30_000) {
  const entry = new URL('../index.js', import.meta.url).pathname
  const prelude = `import { createRequire } from 'node:module'\nconst { Workspace, LocalFilesystem } = createRequire(import.meta.url)(${JSON.stringify(entry)})\nconst base = ${JSON.stringify(base)}\n`
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', prelude + source], { encoding: 'utf8', timeout })
  assert.equal(r.error, undefined, `the child did not finish: ${r.error}`)
  assert.equal(r.status, 0, r.stderr)
  return JSON.parse(r.stdout)
}
const mkfifo = (p) => execFileSync('mkfifo', [p])
const INDEX_IDS = `
  const ws = new Workspace({ filesystem: new LocalFilesystem({ basePath: base }), bm25: true, autoIndexPaths: ['.'] })
  const report = await ws.init()
  const found = (await ws.search('needle', { topK: 50 })).map((r) => r.id).sort()
  await ws.destroy()
  console.log(JSON.stringify({ found, skipped: report.skipped }))
`

test('.gitignore files that are FIFOs, endless devices or links out of basePath are passed over, as git passes links over', (t) => {
  const root = tree(t, {
    'outside-rules': 'secret.md\n',
    'base/secret.md': 'needle',
    'base/a/b.md': 'needle',
    'base/a/kept.log': 'needle',
    'base/z/c.md': 'needle',
    'base/d/e.md': 'needle',
    'base/d/.gitignore': '*.md\n',
    'base/.gitignore': '*.log\n!kept.log\n',
  })
  const base = path.join(root, 'base')
  // First, the rules apply as git applies them.
  assert.deepEqual(child(base, INDEX_IDS).found, ['a/b.md', 'a/kept.log', 'secret.md', 'z/c.md'])
  fs.rmSync(path.join(base, '.gitignore'))
  fs.symlinkSync(path.join(root, 'outside-rules'), path.join(base, '.gitignore'))
  mkfifo(path.join(base, 'a/.gitignore'))
  fs.symlinkSync('/dev/zero', path.join(base, 'z/.gitignore'))
  const { found, skipped } = child(base, INDEX_IDS)
  assert.deepEqual(found, ['a/b.md', 'a/kept.log', 'secret.md', 'z/c.md'], 'the linked rules are not applied; d/ keeps its own')
  assert.ok(skipped.some((s) => s.path === 'a/.gitignore' && /FIFO/.test(s.reason)), JSON.stringify(skipped))
})

test('a .git whose HEAD, config (or a file it includes), packed-refs, branch or alternates is a FIFO or an endless device: init() ends, without the history', (t) => {
  for (const [what, spoil] of [
    ['HEAD a FIFO', (git) => (fs.rmSync(`${git}/HEAD`), mkfifo(`${git}/HEAD`))],
    ['HEAD a link to /dev/zero', (git) => (fs.rmSync(`${git}/HEAD`), fs.symlinkSync('/dev/zero', `${git}/HEAD`))],
    ['config a FIFO', (git) => (fs.rmSync(`${git}/config`), mkfifo(`${git}/config`))],
    ['packed-refs a FIFO', (git) => mkfifo(`${git}/packed-refs`)],
    ['the branch a FIFO', (git) => (fs.rmSync(`${git}/refs/heads/main`), mkfifo(`${git}/refs/heads/main`))],
    ['objects/info/alternates a FIFO', (git) => mkfifo(`${git}/objects/info/alternates`)],
    ['an alternate whose own alternates is a FIFO', (git) => {
      fs.mkdirSync(`${git}/../other/info`, { recursive: true })
      mkfifo(`${git}/../other/info/alternates`)
      fs.writeFileSync(`${git}/objects/info/alternates`, '../../other\n')
    }],
    ['the config including a FIFO', (git) => {
      mkfifo(`${git}/../included`)
      fs.appendFileSync(`${git}/config`, `[include]\n\tpath = ${git}/../included\n`)
    }],
    // Found by a hunt on 2026-12-07: each blocked init() for its 20 s wait or grew the process by gigabytes.
    ['a FIFO named HEAD in basePath (tried as a bare repository on the way up)', (git) => mkfifo(`${git}/../HEAD`)],
    ['shallow a link to /dev/zero', (git) => fs.symlinkSync('/dev/zero', `${git}/shallow`)],
    ['the branch a symbolic ref to a FIFO', (git) => {
      fs.writeFileSync(`${git}/refs/heads/main`, 'ref: refs/heads/evil\n')
      mkfifo(`${git}/refs/heads/evil`)
    }],
    ['objects/info/commit-graph a FIFO', (git) => mkfifo(`${git}/objects/info/commit-graph`)],
    ['a pack index a FIFO', (git) => {
      fs.mkdirSync(`${git}/objects/pack`, { recursive: true })
      mkfifo(`${git}/objects/pack/pack-${'0'.repeat(40)}.idx`)
    }],
  ]) {
    const base = tree(t, { 'a.md': 'needle one', 'b.md': 'needle two' })
    const git = (...args) => execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@t', ...args], { cwd: base, stdio: 'ignore' })
    git('init', '-q', '-b', 'main')
    git('add', '.')
    git('commit', '-qm', 'needle history')
    spoil(path.join(base, '.git'))
    // Well within init()'s wait for a history read (20 s): these are seen before it.
    assert.deepEqual(child(base, INDEX_IDS, 12_000).found, ['a.md', 'b.md'], what)
  }
  // A linked worktree whose commondir is a FIFO (it was taken for no commondir, and read by gitoxide).
  const main = tree(t, { 'a.md': 'needle one', 'b.md': 'needle two' })
  const git = (...args) => execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@t', ...args], { cwd: main, stdio: 'ignore' })
  git('init', '-q', '-b', 'main')
  git('add', '.')
  git('commit', '-qm', 'needle history')
  const worktree = path.join(main, '..', `${path.basename(main)}-wt`)
  t.after(() => fs.rmSync(worktree, { recursive: true, force: true }))
  git('worktree', 'add', '-q', worktree)
  const commondir = path.join(main, '.git/worktrees', path.basename(worktree), 'commondir')
  fs.rmSync(commondir)
  mkfifo(commondir)
  assert.deepEqual(child(worktree, INDEX_IDS, 12_000).found, ['a.md', 'b.md'], 'commondir a FIFO')
})
