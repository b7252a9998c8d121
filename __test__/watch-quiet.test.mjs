// watch: true, quiet and exact: an idle watched tree costs no CPU, reads by
// anyone cause no work, a change costs the changed file, the watcher never
// undoes API calls, survives its folder being removed and recreated, does
// not follow links out of basePath, sees same-size edits that keep their
// modification time, and reconciles after lost events. Real files, real
// processes; waits are deadlines (eventually), never fixed sleeps.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs'

import path from 'node:path'
import { execFileSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { tree, eventually, Workspace, LocalFilesystem } from './helpers.mjs'

const INDEX_JS = JSON.stringify(fileURLToPath(new URL('../index.js', import.meta.url)))
/** A script for a child process: `body` runs in an async function over `dir` (with `fs`, `spawnSync`,
 * `Workspace`, `LocalFilesystem`, `sleep`) and returns what the child prints as its last line, in JSON. */
const childScript = (dir, body) => `
    const fs = require('fs'), { spawnSync } = require('child_process')
    const { Workspace, LocalFilesystem } = require(${INDEX_JS})
    const dir = ${JSON.stringify(dir)}
    const sleep = (ms) => new Promise((r) => setTimeout(r, ms))
    ;(async () => { ${body} })().then((out) => console.log(JSON.stringify(out)), (e) => { console.error(e); process.exit(1) })`
const lastJson = (out) => JSON.parse(out.trim().split('\n').pop())
/** Whether this process may make a user namespace of its own (`unshare -U -r`), asked once. */
const canUnshare = (() => {
  try {
    execFileSync('unshare', ['-U', '-r', 'true'], { stdio: 'ignore' })
    return true
  } catch {
    return false
  }
})()

const idsFor = async (ws, q) => (await ws.search(q, { topK: 20 })).map((r) => r.id)
const cpuMs = (since) => {
  const d = process.cpuUsage(since)
  return (d.user + d.system) / 1000
}
const watched = (dir, options = {}) =>
  new Workspace({ filesystem: new LocalFilesystem({ basePath: dir }), bm25: true, autoIndexPaths: ['docs'], watch: true, ...options })

/** inotify watches this process holds (Linux), from /proc/self/fdinfo. */
function inotifyWatches() {
  let n = 0
  for (const fd of fs.readdirSync('/proc/self/fd')) {
    try {
      if (fs.readlinkSync(`/proc/self/fd/${fd}`) !== 'anon_inode:inotify') continue
      n += fs.readFileSync(`/proc/self/fdinfo/${fd}`, 'utf8').split('\n').filter((l) => l.startsWith('inotify wd:')).length
    } catch {}
  }
  return n
}

const linux = process.platform === 'linux'

test('an idle watched tree of 20,000 files costs no CPU; reads by another process cause no work; a change costs that file', { skip: !linux && 'inotify figures are Linux-only' }, async (t) => {
  const dir = tree(t)
  for (let d = 0; d < 200; d++) {
    const sub = path.join(dir, 'docs', `d${d}`)
    fs.mkdirSync(sub, { recursive: true })
    for (let f = 0; f < 100; f++) fs.writeFileSync(path.join(sub, `f${f}.md`), `file ${d} ${f} word${f} topic${d}\n`)
  }
  const ws = watched(dir)
  t.after(() => ws.destroy())
  const report = await ws.init()
  assert.equal(report.indexed, 20_000)

  const quiet = process.cpuUsage()
  await new Promise((r) => setTimeout(r, 5000))
  const idle = cpuMs(quiet)
  assert.ok(idle < 50, `idle CPU ${idle.toFixed(1)} ms over 5 s (target < 50)`)

  // Another process reads 5,000 of the files (opens and closes: no change; 10,000
  // events, under the system's default queue of 16,384 even if none were drained).
  const reads = process.cpuUsage()
  execFileSync(process.execPath, ['-e', `const fs=require('fs'),p=require('path');for(const d of fs.readdirSync(${JSON.stringify(path.join(dir, 'docs'))}).slice(0,50)){const s=p.join(${JSON.stringify(path.join(dir, 'docs'))},d);for(const f of fs.readdirSync(s))fs.readFileSync(p.join(s,f))}`])
  // A change after the reads marks that the watcher caught up with them.
  fs.writeFileSync(path.join(dir, 'docs/d7/f7.md'), 'file 7 7 rewritten with narwhal\n')
  await eventually('the changed file is found', async () => (await idsFor(ws, 'narwhal')).includes('docs/d7/f7.md'))
  const spent = cpuMs(reads)
  const w = ws.stats().watch
  assert.equal(w.rescans, 0, 'no reconcile of the tree')
  assert.ok(w.updates >= 1 && w.updates <= 2, `updates ${w.updates}`)
  assert.ok(spent < 400, `reads by another process and one change cost ${spent.toFixed(1)} ms of CPU`)
  assert.equal(w.live, true)
})

test('the watcher never undoes unindex(), clear() or rebuildSearchIndex(paths); it applies later file changes on top', async (t) => {
  const dir = tree(t, { 'docs/a.md': 'alpha lemur', 'docs/b.md': 'beta lemur', 'docs/sub/c.md': 'gamma lemur', 'docs/marker.md': 'm0' })
  const ws = watched(dir)
  t.after(() => ws.destroy())
  await ws.init()
  let n = 0
  /** A change the watcher must apply: once it is visible, earlier events were handled too. */
  const settle = async (file = 'docs/marker.md') => {
    const word = `marker${++n}x`
    fs.writeFileSync(path.join(dir, file), word)
    await eventually(`marker ${n}`, async () => (await idsFor(ws, word)).length === 1)
  }

  assert.equal(await ws.unindex('docs/a.md'), true)
  fs.utimesSync(path.join(dir, 'docs/a.md'), new Date(), new Date()) // touched, same content
  await settle()
  assert.deepEqual((await idsFor(ws, 'lemur')).sort(), ['docs/b.md', 'docs/sub/c.md'])
  fs.writeFileSync(path.join(dir, 'docs/a.md'), 'alpha lemur edited')
  await eventually('an edited file comes back', async () => (await idsFor(ws, 'edited')).includes('docs/a.md'))

  await ws.clear()
  await settle()
  assert.deepEqual(await idsFor(ws, 'lemur'), [])
  assert.equal(ws.stats().documents, 1, 'only the marker, which changed')

  await ws.rebuildSearchIndex(['docs/sub'])
  assert.deepEqual(await idsFor(ws, 'lemur'), ['docs/sub/c.md'])
  fs.writeFileSync(path.join(dir, 'docs/b.md'), 'beta lemur outside the rebuilt paths')
  await settle('docs/sub/marker.md')
  assert.deepEqual(await idsFor(ws, 'lemur'), ['docs/sub/c.md'], 'the watcher follows the rebuilt paths')
})

test('a watched folder removed and recreated is watched again and reconciled', async (t) => {
  const dir = tree(t, { 'docs/a.md': 'alpha ibis', 'docs/deep/b.md': 'beta ibis' })
  const ws = watched(dir)
  t.after(() => ws.destroy())
  await ws.init()
  fs.rmSync(path.join(dir, 'docs'), { recursive: true })
  await eventually('removed files are gone', async () => (await idsFor(ws, 'ibis')).length === 0)
  assert.equal(ws.stats().watch.live, false)
  assert.match(ws.stats().watch.warnings.join('\n'), /docs was removed/)
  fs.mkdirSync(path.join(dir, 'docs/deep'), { recursive: true })
  fs.writeFileSync(path.join(dir, 'docs/deep/c.md'), 'gamma ibis returns')
  await eventually('the recreated folder is indexed', async () => (await idsFor(ws, 'ibis')).includes('docs/deep/c.md'))
  await eventually('live again', () => ws.stats().watch.live)
  // And watched again: a later change arrives.
  fs.writeFileSync(path.join(dir, 'docs/later.md'), 'delta ibis later')
  await eventually('a later change is seen', async () => (await idsFor(ws, 'later')).includes('docs/later.md'))

  // Renamed away and back.
  fs.renameSync(path.join(dir, 'docs'), path.join(dir, 'gone'))
  await eventually('renamed-away files are gone', async () => (await idsFor(ws, 'ibis')).length === 0)
  fs.renameSync(path.join(dir, 'gone'), path.join(dir, 'docs'))
  await eventually('renamed back', async () => (await idsFor(ws, 'ibis')).length === 2)
})

test('links out of basePath are not watched', { skip: !linux && 'counts inotify watches (Linux)' }, async (t) => {
  const dir = tree(t, { 'docs/a.md': 'alpha' })
  const outside = tree(t)
  for (let i = 0; i < 50; i++) fs.mkdirSync(path.join(outside, `o${i}`))
  fs.symlinkSync(outside, path.join(dir, 'docs/link'))
  const before = inotifyWatches()
  const ws = watched(dir)
  t.after(() => ws.destroy())
  await ws.init()
  const added = inotifyWatches() - before
  assert.ok(added >= 1 && added <= 2, `${added} watches for one folder`)
  fs.writeFileSync(path.join(outside, 'o1/x.md'), 'outside okapi')
  fs.writeFileSync(path.join(dir, 'docs/b.md'), 'inside okapi')
  await eventually('the inside change is seen', async () => (await idsFor(ws, 'okapi')).includes('docs/b.md'))
  assert.deepEqual(await idsFor(ws, 'okapi'), ['docs/b.md'])
})

test('a same-size edit that keeps the modification time is seen by the watcher and at restart', async (t) => {
  const dir = tree(t, { 'docs/a.md': 'alpha stays here' })
  const store = tree(t)
  const file = path.join(dir, 'docs/a.md')
  const when = new Date(Date.now() - 3600_000)
  fs.utimesSync(file, when, when)
  const ws = watched(dir, { persist: { dir: store } })
  await ws.init()
  fs.writeFileSync(file, 'omega stays here')
  fs.utimesSync(file, when, when)
  await eventually('the watcher reads it', async () => (await idsFor(ws, 'omega')).includes('docs/a.md'))
  await ws.destroy()

  fs.writeFileSync(file, 'sigma stays here')
  fs.utimesSync(file, when, when) // touch -r: size and modification time as recorded
  const again = watched(dir, { persist: { dir: store }, watch: false })
  t.after(() => again.destroy())
  const report = await again.init()
  assert.equal(report.reread, 1)
  assert.deepEqual(await idsFor(again, 'sigma'), ['docs/a.md'])
  assert.deepEqual(await idsFor(again, 'omega'), [])
})

test('lost events (queue overflow) lead to a reconcile of the tree', { skip: !linux && 'inotify' }, (t) => {
  // The system's queue of events overflows behind the watcher's thread,
  // held once by a test pause while more files are written than the queue
  // holds (the machine's own limit, read, never changed).
  const queue = Number(fs.readFileSync('/proc/sys/fs/inotify/max_queued_events', 'utf8'))
  if (!(queue <= 100_000)) return t.skip(`a queue of ${queue} events is too long to overflow here`)
  const dir = tree(t, { 'docs/a.md': 'alpha' })
  const files = queue + 2_000
  const script = `
    const fs = require('fs'), path = require('path')
    const { Workspace, LocalFilesystem } = require(${JSON.stringify(fileURLToPath(new URL('../index.js', import.meta.url)))})
    const dir = ${JSON.stringify(dir)}
    ;(async () => {
      const ws = new Workspace({ filesystem: new LocalFilesystem({ basePath: dir }), bm25: true, autoIndexPaths: ['.'], watch: true })
      await ws.init()
      for (let i = 0; i < ${files}; i++) fs.writeFileSync(path.join(dir, 'docs', 'n' + i + '.md'), 'note ' + i + ' capybara')
      const deadline = Date.now() + 60000
      while (Date.now() < deadline && ws.stats().documents < ${files + 1}) await new Promise((r) => setTimeout(r, 100))
      const out = { documents: ws.stats().documents, found: (await ws.search('capybara', { topK: ${files + 10} })).length, watch: ws.stats().watch }
      await ws.destroy()
      console.log(JSON.stringify(out))
    })().catch((e) => { console.error(e); process.exit(1) })`
  const env = { ...process.env, WORKSPACE_SEARCH_TEST_PAUSE: 'watch-event:8000' }
  const out = execFileSync(process.execPath, ['-e', script], { encoding: 'utf8', env, timeout: 120_000 })
  const { documents, found, watch } = JSON.parse(out.trim().split('\n').pop())
  assert.equal(documents, files + 1)
  assert.equal(found, files)
  assert.ok(watch.rescans >= 1, `the queue overflowed and the tree was reconciled: ${JSON.stringify(watch)}`)
})

test('a directory the system refuses to watch (the watch limit) is reported, and the tree is reconciled', { skip: !linux && 'inotify' }, async (t) => {
  // In a user namespace of its own, whose inotify watch limit this test may lower without
  // touching the machine's (/proc/sys/user/max_inotify_watches is per namespace).
  if (!canUnshare) return t.skip('unshare -U is not available here')
  const dir = tree(t, { 'docs/a.md': 'alpha' })
  const script = `
    const fs = require('fs'), path = require('path')
    fs.writeFileSync('/proc/sys/user/max_inotify_watches', '3')
    const { Workspace, LocalFilesystem } = require(${JSON.stringify(fileURLToPath(new URL('../index.js', import.meta.url)))})
    const dir = ${JSON.stringify(dir)}
    ;(async () => {
      const ws = new Workspace({ filesystem: new LocalFilesystem({ basePath: dir }), bm25: true, autoIndexPaths: ['docs'], watch: true })
      await ws.init()
      for (let i = 0; i < 6; i++) {
        fs.mkdirSync(path.join(dir, 'docs', 'sub' + i))
        fs.writeFileSync(path.join(dir, 'docs', 'sub' + i, 'n.md'), 'tapir number ' + i)
      }
      const deadline = Date.now() + 15000
      while (Date.now() < deadline && (await ws.search('tapir', { topK: 10 })).length < 6) await new Promise((r) => setTimeout(r, 50))
      // The degraded mode reconciles every 10 s; under load the new folders' files may all
      // have been found by the watch that did get through before the first of those rescans.
      const rescanDeadline = Date.now() + 25000
      while (Date.now() < rescanDeadline && ws.stats().watch.rescans < 1) await new Promise((r) => setTimeout(r, 100))
      const out = { found: (await ws.search('tapir', { topK: 10 })).length, watch: ws.stats().watch }
      await ws.destroy()
      console.log(JSON.stringify(out))
    })().catch((e) => { console.error(e); process.exit(1) })`
  const out = execFileSync('unshare', ['-U', '-r', process.execPath, '-e', script], { encoding: 'utf8', timeout: 60_000 })
  const { found, watch } = JSON.parse(out.trim().split('\n').pop())
  assert.equal(found, 6, 'every file of the unwatched directories is found by the reconcile')
  assert.equal(watch.live, false)
  assert.match(watch.warnings.join('\n'), /limit|watch/i)
  assert.ok(watch.rescans >= 1)
})

test('a watch degraded by the limit is live again once every folder could be watched: the timer\'s reconciles end (they went on every 10 s until the next init())', { skip: !linux && 'inotify' }, async (t) => {
  if (!canUnshare) return t.skip('unshare -U is not available here')
  const dir = tree(t, { 'docs/a.md': 'alpha', 'README.md': 'readme', 'notes/deep/inner/n.md': 'quagga' })
  const body = `
    const path = require('path')
    fs.writeFileSync('/proc/sys/user/max_inotify_watches', '0')
    // A file entry: its folder is a root watched alone, tried again with the folders.
    const ws = new Workspace({ filesystem: new LocalFilesystem({ basePath: dir }), bm25: true, autoIndexPaths: ['README.md', 'docs', 'notes/deep/inner'], watch: true, gitHistory: false })
    await ws.init()
    for (let i = 0; i < 6; i++) fs.mkdirSync(path.join(dir, 'docs', 'sub' + i))
    const until = async (check, ms) => { const end = Date.now() + ms; while (Date.now() < end && !(await check())) await sleep(100); return check() }
    const degraded = await until(() => ws.stats().watch.live === false, 15000)
    fs.writeFileSync('/proc/sys/user/max_inotify_watches', '1000')
    const live = await until(() => ws.stats().watch.live === true, 25000)
    // (The reconcile that found every folder watched is counted once it is applied.)
    await sleep(2000)
    const rescans = ws.stats().watch.rescans
    await sleep(11000)
    const idleRescans = ws.stats().watch.rescans - rescans
    fs.mkdirSync(path.join(dir, 'docs', 'sub0', 'deeper'))
    fs.writeFileSync(path.join(dir, 'docs', 'sub0', 'deeper', 'n.md'), 'tapir')
    const found = await until(async () => (await ws.search('tapir')).length === 1, 5000)
    fs.writeFileSync(path.join(dir, 'README.md'), 'wombat')
    const readme = await until(async () => (await ws.search('wombat')).length === 1, 5000)
    // The folder above a root is watched again too: renamed away with it, its files go.
    fs.renameSync(path.join(dir, 'notes', 'deep'), path.join(dir, 'notes', 'away'))
    const above = await until(async () => (await ws.search('quagga')).length === 0, 5000)
    const out = { degraded, live, idleRescans, found, readme, above, warnings: ws.stats().watch.warnings }
    await ws.destroy()
    return out`
  const out = execFileSync('unshare', ['-U', '-r', process.execPath, '-e', childScript(dir, body)], { encoding: 'utf8', timeout: 90_000 })
  const { degraded, live, idleRescans, found, readme, above, warnings } = lastJson(out)
  assert.equal(degraded, true, 'the limit made the watch degraded')
  assert.equal(live, true, warnings.join('\n'))
  assert.equal(idleRescans, 0, 'no reconcile on the timer once every folder is watched')
  assert.equal(found, true, 'a folder made in a folder watched after the limit was raised is followed')
  assert.equal(readme, true, 'the file entry\'s folder is watched again too')
  assert.equal(above, true, 'the folder above a root is watched again too')
  assert.match(warnings.join('\n'), /every folder is watched again/)
})

test('the persist directory inside basePath, made by the first save after the watcher started, never wakes the watcher', async (t) => {
  const dir = tree(t, { 'a.md': 'alpha heron' })
  const ws = new Workspace({ filesystem: new LocalFilesystem({ basePath: dir }), bm25: true, autoIndexPaths: ['.'], watch: true, persist: { dir: path.join(dir, '.index') } })
  await ws.init()
  assert.ok(fs.existsSync(path.join(dir, '.index', 'snapshot.wss')))
  for (let i = 0; i < 2; i++) {
    await ws.index(`api/${i}.md`, 'a note')
    assert.equal(await ws.save(), true)
  }
  await new Promise((r) => setTimeout(r, 1000))
  assert.equal(ws.stats().watch.updates, 0)
  assert.equal(ws.stats().watch.rescans, 0)
  await ws.destroy()
})

test('an autoIndexPaths file missing at init() and created later is indexed, and the watch is live again', async (t) => {
  const dir = tree(t, { 'docs/a.md': 'alpha ocelot' })
  const ws = new Workspace({ filesystem: new LocalFilesystem({ basePath: dir }), bm25: true, autoIndexPaths: ['docs', 'NOTES.md'], watch: true })
  t.after(() => ws.destroy())
  await ws.init()
  assert.equal(ws.stats().watch.live, false)
  fs.writeFileSync(path.join(dir, 'NOTES.md'), 'notes ocelot')
  await eventually('the new file is indexed', async () => (await idsFor(ws, 'ocelot')).includes('NOTES.md'))
  await eventually('live again', () => ws.stats().watch.live)
})

test('a folder above a watched one renamed away and back: its files go and come back; a .gitignore edit is applied', async (t) => {
  const dir = tree(t, { 'docs/api/a.md': 'alpha quokka', 'docs/api/b.md': 'beta quokka' })
  const ws = new Workspace({ filesystem: new LocalFilesystem({ basePath: dir }), bm25: true, autoIndexPaths: ['docs/api'], watch: true })
  t.after(() => ws.destroy())
  await ws.init()
  fs.renameSync(path.join(dir, 'docs'), path.join(dir, 'elsewhere'))
  await eventually('the files under the renamed folder are gone', async () => (await idsFor(ws, 'quokka')).length === 0)
  fs.renameSync(path.join(dir, 'elsewhere'), path.join(dir, 'docs'))
  await eventually('they are back', async () => (await idsFor(ws, 'quokka')).length === 2)
  await eventually('live again', () => ws.stats().watch.live)
  fs.writeFileSync(path.join(dir, '.gitignore'), 'docs/api/b.md\n')
  await eventually('a newly ignored file leaves the index', async () => (await idsFor(ws, 'quokka')).length === 1)
})

test('events lost just after a reconcile (a checkout still writing) are not taken for its echo alone: the tree is reconciled once more (the edit was never indexed)', { skip: !linux && 'inotify' }, (t) => {
  const queue = Number(fs.readFileSync('/proc/sys/fs/inotify/max_queued_events', 'utf8'))
  if (!(queue <= 100_000)) return t.skip(`a queue of ${queue} events is too long to overflow here`)
  const files = {}
  for (let i = 0; i < 2000; i++) files[`d${i % 20}/f${i}.md`] = `alpha bravo ${i}\n`
  files['d1/target.md'] = 'plain words here\n'
  const dir = tree(t, files)
  // Each cat opens every file: an IN_OPEN event each, past the queue while the process is stopped.
  const rounds = Math.ceil((queue * 1.3) / 2001)
  const script = childScript(dir, `
      const ws = new Workspace({ filesystem: new LocalFilesystem({ basePath: dir }), bm25: true, autoIndexPaths: ['.'], watch: true, gitHistory: false })
      await ws.init()
      // A reconcile of the tree (a .gitignore written), then, at once, lost events and an edit among them.
      fs.writeFileSync(dir + '/.gitignore', '*.log\\n')
      while (ws.stats().watch.rescans === 0) await sleep(5)
      const flood = 'kill -STOP ' + process.pid + '; for k in $(seq ${rounds}); do find . -name "*.md" -print0 | xargs -0 cat > /dev/null; done; echo "quasar nebula" > d1/target.md; kill -CONT ' + process.pid
      spawnSync('bash', ['-c', flood], { cwd: dir, stdio: 'ignore' })
      const deadline = Date.now() + 20000
      while (Date.now() < deadline && (await ws.search('quasar', { topK: 5 })).length === 0) await sleep(100)
      const out = { found: (await ws.search('quasar', { topK: 5 })).map((r) => r.id), watch: ws.stats().watch }
      await ws.destroy()
      return out`)
  const out = execFileSync(process.execPath, ['-e', script], { encoding: 'utf8', timeout: 120_000 })
  const { found, watch } = lastJson(out)
  assert.deepEqual(found, ['d1/target.md'], JSON.stringify(watch))
  assert.ok(watch.rescans >= 2 && watch.rescans <= 3, `once more, never in a loop: ${JSON.stringify(watch)}`)
})

test('a watcher the system refuses (its limit of inotify instances) falls back to reconciling the folder every 10 s, said in stats().watch (nothing was followed)', { skip: (!linux && 'inotify') || (!canUnshare && 'unshare -U is not available here') }, (t) => {
  const dir = tree(t, { 'docs/a.md': 'alpha' })
  // In a user namespace of its own, whose instance limit this test may set (per namespace).
  const script = childScript(dir, `
      fs.writeFileSync('/proc/sys/user/max_inotify_instances', '0')
      const ws = new Workspace({ filesystem: new LocalFilesystem({ basePath: dir }), bm25: true, autoIndexPaths: ['docs'], watch: true })
      const report = await ws.init()
      fs.writeFileSync(dir + '/docs/b.md', 'tapir')
      const deadline = Date.now() + 25000
      while (Date.now() < deadline && (await ws.search('tapir', { topK: 5 })).length === 0) await sleep(100)
      const out = { warnings: report.warnings, found: (await ws.search('tapir', { topK: 5 })).length, watch: ws.stats().watch }
      await ws.destroy()
      return out`)
  const out = execFileSync('unshare', ['-U', '-r', process.execPath, '-e', script], { encoding: 'utf8', timeout: 60_000 })
  const { warnings, found, watch } = lastJson(out)
  assert.equal(found, 1)
  assert.equal(watch.live, false)
  assert.ok(watch.rescans >= 1)
  assert.match(warnings.join('\n'), /^watch: the system refused a watcher \(.*max_user_instances.*\); the folder is reconciled every 10 s$/m)
})

test('a folder the process may not read under a watched root, ignored or not, leaves the folders after it watched and live, and costs nothing idle (the folders after it were never watched, and the whole tree was walked again every 500 ms)', { skip: (!linux && 'inotify') || (process.getuid?.() !== 0 && 'needs root to give a folder away') || (!canUnshare && 'unshare -U is not available here') }, (t) => {
  const files = { '.gitignore': 'data/\n' }
  for (let i = 10; i < 30; i++) files[`m${i}/a.md`] = `alpha ${i}\n`
  const dir = tree(t, files)
  // Owned by a user the namespace does not map: its root cannot read it.
  for (const locked of ['data/pg', 'm15/private']) {
    fs.mkdirSync(path.join(dir, locked), { recursive: true })
    fs.chmodSync(path.join(dir, locked), 0o700)
    execFileSync('chown', ['12345:12345', path.join(dir, locked)])
  }
  const script = childScript(dir, `
      const ws = new Workspace({ filesystem: new LocalFilesystem({ basePath: dir }), bm25: true, autoIndexPaths: ['.'], watch: true, gitHistory: false })
      await ws.init()
      const folders = fs.readdirSync(dir).filter((d) => d.startsWith('m'))
      for (const d of folders) fs.writeFileSync(dir + '/' + d + '/a.md', 'quasar ' + d)
      const deadline = Date.now() + 25000
      while (Date.now() < deadline && (await ws.search('quasar', { topK: 100 })).length < folders.length) await sleep(100)
      const found = (await ws.search('quasar', { topK: 100 })).length
      const before = process.cpuUsage()
      await sleep(2000)
      const idle = process.cpuUsage(before)
      const out = { found, folders: folders.length, idleMs: (idle.user + idle.system) / 1000, watch: ws.stats().watch }
      await ws.destroy()
      return out`)
  const out = execFileSync('unshare', ['-U', '-r', process.execPath, '-e', script], { encoding: 'utf8', timeout: 60_000 })
  const { found, folders, idleMs, watch } = lastJson(out)
  assert.equal(found, folders, JSON.stringify(watch))
  // Each folder the walk enters is watched alone: the one it cannot read
  // holds nothing the index could take (init() reports it), and the
  // ignored one is not watched at all.
  assert.equal(watch.live, true, JSON.stringify(watch))
  assert.deepEqual(watch.warnings, [])
  assert.ok(idleMs < 300, `no walk every 500 ms: ${idleMs} ms of CPU in 2 s`)
})

test('watch over a basePath missing at init() says so in the warnings (the watcher was off without a word)', async (t) => {
  const dir = path.join(tree(t, {}), 'not-yet')
  const ws = new Workspace({ filesystem: new LocalFilesystem({ basePath: dir }), bm25: true, autoIndexPaths: ['.'], watch: true })
  t.after(() => ws.destroy())
  const report = await ws.init()
  assert.match(report.warnings.join('\n'), /^watch: basePath .*not-yet cannot be watched \(.*\); files are not followed until init\(\) or rebuildSearchIndex\(\) runs again$/m)
})

test('only folders the index walks are watched (Linux): ignored node_modules and .git cost no watch and their churn no work; new, renamed and un-ignored folders are followed', { skip: !linux && 'counts inotify watches (Linux)' }, async (t) => {
  const dir = tree(t, { '.gitignore': 'node_modules/\ngen/\n', 'src/a/one.ts': 'export const alpha = 1\n', 'gen/made.ts': 'export const gamma = 1\n' })
  for (let i = 0; i < 400; i++) fs.mkdirSync(path.join(dir, `node_modules/p${i % 40}/lib${i}`), { recursive: true })
  for (let i = 0; i < 100; i++) fs.mkdirSync(path.join(dir, `.git/objects/${i}`), { recursive: true })
  const before = inotifyWatches()
  const ws = new Workspace({ filesystem: new LocalFilesystem({ basePath: dir }), bm25: true, autoIndexPaths: ['.'], watch: true, gitHistory: false })
  t.after(() => ws.destroy())
  await ws.init()
  // basePath, src, src/a (a recursive watch held one per folder: 550 here).
  assert.equal(inotifyWatches() - before, 3)

  // An install's churn in node_modules, by another process: nothing to do.
  const cpu = process.cpuUsage()
  execFileSync(process.execPath, ['-e', `const fs = require('fs'); for (let i = 0; i < 2000; i++) fs.writeFileSync(${JSON.stringify(dir)} + '/node_modules/p' + (i % 40) + '/lib' + (i % 400) + '/x' + i + '.js', 'okapi')`])
  fs.writeFileSync(path.join(dir, 'src/a/one.ts'), 'export const alpha = 2 // okapi\n')
  await eventually('the source edit is seen', async () => (await idsFor(ws, 'okapi')).includes('src/a/one.ts'))
  assert.deepEqual(await idsFor(ws, 'okapi'), ['src/a/one.ts'])
  assert.equal(ws.stats().watch.rescans, 0, JSON.stringify(ws.stats().watch))
  assert.ok(cpuMs(cpu) < 400, `${cpuMs(cpu)} ms of CPU`)

  // A folder tree made at once, and a file written into it later.
  fs.mkdirSync(path.join(dir, 'src/b/c'), { recursive: true })
  fs.writeFileSync(path.join(dir, 'src/b/c/first.ts'), 'export const zebra = 1\n')
  await eventually('the new folder is walked', async () => (await idsFor(ws, 'zebra')).includes('src/b/c/first.ts'))
  fs.writeFileSync(path.join(dir, 'src/b/c/later.ts'), 'export const quokka = 1\n')
  await eventually('a file written into it later is seen', async () => (await idsFor(ws, 'quokka')).includes('src/b/c/later.ts'))

  // Renamed within the tree: edits land under the new name.
  fs.renameSync(path.join(dir, 'src/b'), path.join(dir, 'src/moved'))
  await eventually('the rename is seen', async () => (await idsFor(ws, 'zebra')).includes('src/moved/c/first.ts'))
  fs.writeFileSync(path.join(dir, 'src/moved/c/first.ts'), 'export const zebra = 2 // ibis\n')
  await eventually('an edit in the renamed folder is seen', async () => (await idsFor(ws, 'ibis')).includes('src/moved/c/first.ts'))
  assert.deepEqual(await idsFor(ws, 'zebra'), ['src/moved/c/first.ts'])

  // Removed and made again under the same name: watched again.
  fs.rmSync(path.join(dir, 'src/moved'), { recursive: true })
  fs.mkdirSync(path.join(dir, 'src/moved/c'), { recursive: true })
  await eventually('the removal is seen', async () => (await idsFor(ws, 'zebra')).length === 0)
  fs.writeFileSync(path.join(dir, 'src/moved/c/again.ts'), 'export const heron = 1\n')
  await eventually('a file in the folder made again is seen', async () => (await idsFor(ws, 'heron')).includes('src/moved/c/again.ts'))

  // A folder .gitignore stops leaving out is indexed and then followed.
  fs.writeFileSync(path.join(dir, '.gitignore'), 'node_modules/\n')
  await eventually('gen/ is indexed', async () => (await idsFor(ws, 'gamma')).includes('gen/made.ts'))
  fs.writeFileSync(path.join(dir, 'gen/made.ts'), 'export const gamma = 2 // tapir\n')
  await eventually('an edit in gen/ is seen', async () => (await idsFor(ws, 'tapir')).includes('gen/made.ts'))
  assert.deepEqual(await idsFor(ws, 'okapi'), ['src/a/one.ts'], 'node_modules stays out')
})

test('folders watched one by one stay watched: below a root renamed away and back, and below a root reached through a link after a reconcile (their files were no longer followed, with the watch live)', { skip: !linux && 'inotify' }, async (t) => {
  const dir = tree(t, { 'docs/sub/deep/a.md': 'alpha\n', 'real/docs/a.md': 'alpha\n' })
  fs.symlinkSync('real/docs', path.join(dir, 'linked'))
  const ws = new Workspace({ filesystem: new LocalFilesystem({ basePath: dir }), bm25: true, autoIndexPaths: ['docs', 'linked'], watch: true, gitHistory: false })
  t.after(() => ws.destroy())
  await ws.init()
  fs.renameSync(path.join(dir, 'docs'), path.join(dir, 'away'))
  await eventually('the rename away is seen', async () => (await idsFor(ws, 'alpha')).length === 1)
  fs.renameSync(path.join(dir, 'away'), path.join(dir, 'docs'))
  await eventually('the rename back is seen', async () => (await idsFor(ws, 'alpha')).includes('docs/sub/deep/a.md'))
  fs.writeFileSync(path.join(dir, 'docs/sub/deep/b.md'), 'okapi\n')
  await eventually('a write below the root that came back is seen', async () => (await idsFor(ws, 'okapi')).includes('docs/sub/deep/b.md'))

  // A .gitignore written: the tree is reconciled, and the folders to watch with it.
  const rescans = ws.stats().watch.rescans
  fs.writeFileSync(path.join(dir, '.gitignore'), 'nothing/\n')
  await eventually('the reconcile is done', () => ws.stats().watch.rescans > rescans)
  fs.writeFileSync(path.join(dir, 'real/docs/c.md'), 'quokka\n')
  await eventually('a write where the link leads is seen', async () => (await idsFor(ws, 'quokka')).includes('linked/c.md'))
  assert.equal(ws.stats().watch.live, true)
})

test('a link entry into a folder .gitignore leaves out, beside an entry that covers the link, is followed (the walk from basePath never entered that folder, so its folders were not watched)', { skip: !linux && 'inotify' }, async (t) => {
  const dir = tree(t, { '.gitignore': 'vendor/\n', 'src/a.md': 'alpha\n', 'vendor/lib/a.md': 'alpha\n' })
  fs.symlinkSync('vendor', path.join(dir, 'vendor-link'))
  const ws = new Workspace({ filesystem: new LocalFilesystem({ basePath: dir }), bm25: true, autoIndexPaths: ['.', 'vendor-link'], watch: true, gitHistory: false })
  await ws.init()
  assert.deepEqual((await idsFor(ws, 'alpha')).sort(), ['src/a.md', 'vendor-link/lib/a.md'])
  fs.writeFileSync(path.join(dir, 'vendor/lib/b.md'), 'okapi\n')
  await eventually('a write where the link leads is seen', async () => (await idsFor(ws, 'okapi')).includes('vendor-link/lib/b.md'))
  // A folder made below it.
  fs.mkdirSync(path.join(dir, 'vendor/lib/new'))
  fs.writeFileSync(path.join(dir, 'vendor/lib/new/c.md'), 'quokka\n')
  await eventually('a new folder there is followed', async () => (await idsFor(ws, 'quokka')).includes('vendor-link/lib/new/c.md'))
  // Still after a reconcile (a .gitignore written).
  const rescans = ws.stats().watch.rescans
  fs.appendFileSync(path.join(dir, '.gitignore'), 'nothing/\n')
  await eventually('the reconcile is done', () => ws.stats().watch.rescans > rescans)
  fs.writeFileSync(path.join(dir, 'vendor/lib/new/d.md'), 'wombat\n')
  await eventually('a write after the reconcile is seen', async () => (await idsFor(ws, 'wombat')).includes('vendor-link/lib/new/d.md'))
  // The link's folder removed and made again.
  fs.rmSync(path.join(dir, 'vendor'), { recursive: true })
  fs.mkdirSync(path.join(dir, 'vendor/lib'), { recursive: true })
  fs.writeFileSync(path.join(dir, 'vendor/lib/e.md'), 'numbat\n')
  await eventually('the folder made again is followed', async () => (await idsFor(ws, 'numbat')).includes('vendor-link/lib/e.md'))
  fs.writeFileSync(path.join(dir, 'vendor/lib/f.md'), 'dugong\n')
  await eventually('a write in it is seen', async () => (await idsFor(ws, 'dugong')).includes('vendor-link/lib/f.md'))
  assert.equal(ws.stats().watch.live, true)
  await ws.destroy()
})

test('a link entry beside an entry covering it follows its target when a folder above the target is made again or renamed back, and when the link is retargeted into a folder .gitignore leaves out (the link\'s files went stale until init())', { skip: !linux && 'inotify' }, async (t) => {
  const dir = tree(t, { '.gitignore': 'vendor/\n', 'src/a.md': 'alpha\n', 'real/docs/a.md': 'alpha\n', 'vendor/v1/a.md': 'alpha\n', 'vendor/v2/b.md': 'okapi\n' })
  fs.symlinkSync('real/docs', path.join(dir, 'docs-link'))
  fs.symlinkSync('vendor/v1', path.join(dir, 'vendor-link'))
  const ws = new Workspace({ filesystem: new LocalFilesystem({ basePath: dir }), bm25: true, autoIndexPaths: ['.', 'docs-link', 'vendor-link'], watch: true, gitHistory: false })
  await ws.init()
  assert.deepEqual((await idsFor(ws, 'alpha')).sort(), ['docs-link/a.md', 'real/docs/a.md', 'src/a.md', 'vendor-link/a.md'])
  // A folder above the link's target made again in one burst (a download).
  fs.rmSync(path.join(dir, 'real'), { recursive: true })
  fs.mkdirSync(path.join(dir, 'real/docs'), { recursive: true })
  fs.writeFileSync(path.join(dir, 'real/docs/e.md'), 'numbat\n')
  await eventually('the target made again is read', async () => (await idsFor(ws, 'numbat')).includes('docs-link/e.md'))
  await eventually('its old file is gone', async () => !(await idsFor(ws, 'alpha')).includes('docs-link/a.md'))
  // Renamed away and back.
  fs.renameSync(path.join(dir, 'real'), path.join(dir, 'away'))
  await eventually('renamed away', async () => !(await idsFor(ws, 'numbat')).includes('docs-link/e.md'))
  fs.renameSync(path.join(dir, 'away'), path.join(dir, 'real'))
  await eventually('renamed back', async () => (await idsFor(ws, 'numbat')).includes('docs-link/e.md'))
  // Retargeted into another ignored folder: followed there.
  fs.symlinkSync('vendor/v2', path.join(dir, 'vendor-link.tmp'))
  fs.renameSync(path.join(dir, 'vendor-link.tmp'), path.join(dir, 'vendor-link'))
  await eventually('the retarget is read', async () => (await idsFor(ws, 'okapi')).includes('vendor-link/b.md'))
  fs.writeFileSync(path.join(dir, 'vendor/v2/c.md'), 'dugong\n')
  await eventually('a write where it leads now is seen', async () => (await idsFor(ws, 'dugong')).includes('vendor-link/c.md'))
  assert.equal(ws.stats().watch.live, true)
  await ws.destroy()
})
