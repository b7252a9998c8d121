// watch: true with real file changes: created, modified, deleted, renamed,
// and saved the way editors do (write a temporary file, rename it over the
// old one). Results are polled with a deadline, never a fixed sleep.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs'
import path from 'node:path'
import { tree, eventually, Workspace, LocalFilesystem, WorkspaceNotReadyError } from './helpers.mjs'


const idsFor = async (ws, q) => (await ws.search(q, { topK: 10 })).map((r) => r.id)

test('changes under autoIndexPaths reach the index; index() documents and other folders are left alone', async (t) => {
  const dir = tree(t, {
    'docs/a.md': 'alpha original text',
    'docs/keep.md': 'kept document',
    'other/x.md': 'outside the watched paths',
    '.gitignore': 'docs/ignored/\n',
  })
  const ws = new Workspace({
    filesystem: new LocalFilesystem({ basePath: dir }),
    bm25: true,
    autoIndexPaths: ['docs'],
    watch: true,
    maxFileSize: 1000,
  })
  t.after(() => ws.destroy())
  const report = await ws.init()
  assert.deepEqual(report.warnings, [])
  await ws.index('manual/note', 'a zebra written by hand')

  fs.writeFileSync(path.join(dir, 'docs/new.md'), 'a giraffe appears')
  await eventually('a created file is found', async () => (await idsFor(ws, 'giraffe')).includes('docs/new.md'))

  fs.writeFileSync(path.join(dir, 'docs/a.md'), 'alpha rewritten with walrus')
  await eventually('a modified file is found by its new words', async () => (await idsFor(ws, 'walrus')).includes('docs/a.md'))
  assert.deepEqual(await idsFor(ws, 'original'), [])

  // An editor's save: a temporary file renamed over the old one.
  fs.writeFileSync(path.join(dir, 'docs/.a.md.swp'), 'alpha saved by an editor with pelican')
  fs.renameSync(path.join(dir, 'docs/.a.md.swp'), path.join(dir, 'docs/a.md'))
  await eventually('an atomic save is seen', async () => (await idsFor(ws, 'pelican')).includes('docs/a.md'))
  assert.ok(!(await idsFor(ws, 'pelican')).includes('docs/.a.md.swp'))

  fs.renameSync(path.join(dir, 'docs/new.md'), path.join(dir, 'docs/renamed.md'))
  await eventually('a renamed file moves', async () => {
    const ids = await idsFor(ws, 'giraffe')
    return ids.includes('docs/renamed.md') && !ids.includes('docs/new.md')
  })

  fs.rmSync(path.join(dir, 'docs/keep.md'))
  await eventually('a deleted file is gone', async () => (await idsFor(ws, 'kept')).length === 0)

  // Ignored, binary and oversized files stay out; a new normal file marks the update.
  fs.mkdirSync(path.join(dir, 'docs/ignored'))
  fs.writeFileSync(path.join(dir, 'docs/ignored/secret.md'), 'hidden okapi')
  fs.writeFileSync(path.join(dir, 'docs/blob.bin'), Buffer.from([0x6f, 0x6b, 0x61, 0x70, 0x69, 0, 1, 2]))
  fs.writeFileSync(path.join(dir, 'docs/huge.md'), 'okapi '.repeat(400))
  fs.writeFileSync(path.join(dir, 'docs/marker.md'), 'okapi marker')
  await eventually('the marker is found', async () => (await idsFor(ws, 'okapi')).includes('docs/marker.md'))
  assert.deepEqual(await idsFor(ws, 'okapi'), ['docs/marker.md'])

  fs.writeFileSync(path.join(dir, 'other/y.md'), 'zebra outside')
  assert.deepEqual(await idsFor(ws, 'zebra'), ['manual/note'], 'index() documents are not touched')
  assert.equal(ws.stats().documents, 4)
})

test('a file changed during init(), after init() read it, reaches the index once init() is done (with and without persist)', async (t) => {
  const { hashEmbed } = await import('./vector-helpers.mjs')
  for (const persist of [false, true]) {
    const dir = tree(t, { 'docs/a.md': 'original kangaroo', 'docs/b.md': 'another file' })
    let changed = false
    // The embedder runs after the files were read and before init() is
    // done: the change falls between the walk and the end of init().
    const embedder = async (text) => {
      if (!changed) {
        changed = true
        fs.writeFileSync(path.join(dir, 'docs/a.md'), 'changed platypus')
      }
      return hashEmbed(text)
    }
    const ws = new Workspace({
      filesystem: new LocalFilesystem({ basePath: dir }),
      bm25: true,
      embedder,
      embedderId: 'hash',
      autoIndexPaths: ['docs'],
      watch: true,
      ...(persist ? { persist: { dir: path.join(dir, '.index') } } : {}),
    })
    await ws.init()
    assert.ok(changed)
    const bm25 = async (q) => (await ws.search(q, { topK: 10, mode: 'bm25' })).map((r) => r.id)
    await eventually(`the change is indexed (persist: ${persist})`, async () => (await bm25('platypus'))[0] === 'docs/a.md')
    assert.deepEqual(await bm25('kangaroo'), [])
    await ws.destroy()
  }
})

test('a file found through a symbolic link changes with its target (in a watched folder): edited, the link\'s document follows; deleted, the link\'s document goes', async (t) => {
  const dir = tree(t, { 'docs/shared/real.md': 'alpha zebra', 'docs/shared/other.md': 'beta zebra' })
  fs.symlinkSync('shared/real.md', path.join(dir, 'docs/link.md'))
  fs.symlinkSync('shared/other.md', path.join(dir, 'docs/link2.md'))
  const ws = new Workspace({ filesystem: new LocalFilesystem({ basePath: dir }), bm25: true, autoIndexPaths: ['docs'], watch: true })
  t.after(() => ws.destroy())
  await ws.init()
  const contents = async (q) => (await ws.search(q, { topK: 10 })).map((r) => `${r.id}=${r.content}`).sort()
  assert.deepEqual(await contents('zebra'), ['docs/link.md=alpha zebra', 'docs/link2.md=beta zebra', 'docs/shared/other.md=beta zebra', 'docs/shared/real.md=alpha zebra'])
  fs.writeFileSync(path.join(dir, 'docs/shared/real.md'), 'alpha yak')
  fs.rmSync(path.join(dir, 'docs/shared/other.md'))
  await eventually('the links follow their targets', async () => JSON.stringify(await contents('zebra yak')) === JSON.stringify(['docs/link.md=alpha yak', 'docs/shared/real.md=alpha yak']))
})

test('a file written through another of its hard-linked names in a watched folder follows (it kept its old text until it changed itself); a hard link made while watching is followed too', async (t) => {
  const dir = tree(t, { 'src/a.rs': 'fn alpha() {}\n', 'src/c.rs': 'fn gamma() {}\n' })
  fs.linkSync(path.join(dir, 'src/a.rs'), path.join(dir, 'src/b.rs'))
  const ws = new Workspace({ filesystem: new LocalFilesystem({ basePath: dir }), bm25: true, autoIndexPaths: ['.'], watch: true })
  t.after(() => ws.destroy())
  await ws.init()
  const contents = async (q) => (await ws.search(q, { topK: 10 })).map((r) => `${r.id}=${r.content.trim()}`).sort()
  fs.writeFileSync(path.join(dir, 'src/b.rs'), 'fn omega() {}\n') // in place: the same inode
  await eventually('both names have the new text', async () => JSON.stringify(await contents('omega alpha')) === JSON.stringify(['src/a.rs=fn omega() {}', 'src/b.rs=fn omega() {}']))
  fs.linkSync(path.join(dir, 'src/c.rs'), path.join(dir, 'src/d.rs'))
  await eventually('the new name is indexed', async () => (await contents('gamma')).length === 2)
  fs.writeFileSync(path.join(dir, 'src/d.rs'), 'fn delta() {}\n')
  await eventually('the old name follows the new one', async () => JSON.stringify(await contents('delta gamma')) === JSON.stringify(['src/c.rs=fn delta() {}', 'src/d.rs=fn delta() {}']))
})

test('rebuildSearchIndex([]) keeps the index and the watcher on its paths: later changes reach the index (it watched nothing, silently)', async (t) => {
  const dir = tree(t, { 'docs/a.md': 'alpha', 'docs/b.md': 'bravo' })
  const ws = new Workspace({ filesystem: new LocalFilesystem({ basePath: dir }), bm25: true, autoIndexPaths: ['docs'], watch: true })
  t.after(() => ws.destroy())
  await ws.init()
  const report = await ws.rebuildSearchIndex([])
  assert.equal(report.indexed, 0)
  assert.equal(ws.stats().documents, 2, 'the index is kept')
  fs.writeFileSync(path.join(dir, 'docs/c.md'), 'charlie')
  fs.unlinkSync(path.join(dir, 'docs/b.md'))
  await eventually('a new file and a removal reach the index', async () =>
    (await idsFor(ws, 'charlie')).includes('docs/c.md') && (await idsFor(ws, 'bravo')).length === 0)
  assert.equal(ws.stats().watch.live, true)
})

test('destroy() stops the watcher; later changes reach nothing and nothing throws', async (t) => {
  const dir = tree(t, { 'docs/a.md': 'first' })
  const ws = new Workspace({ filesystem: new LocalFilesystem({ basePath: dir }), bm25: true, autoIndexPaths: ['docs'], watch: true })
  await ws.init()
  await ws.destroy()
  fs.writeFileSync(path.join(dir, 'docs/b.md'), 'after destroy')
  await assert.rejects(ws.search('after'), WorkspaceNotReadyError)
  // A second workspace on the same folder watches on its own.
  const again = new Workspace({ filesystem: new LocalFilesystem({ basePath: dir }), bm25: true, autoIndexPaths: ['docs'], watch: true })
  t.after(() => again.destroy())
  await again.init()
  fs.writeFileSync(path.join(dir, 'docs/c.md'), 'heron arrives')
  await eventually('the new workspace sees changes', async () => (await idsFor(again, 'heron')).includes('docs/c.md'))
})

test('an entry that is a link to a folder inside basePath is watched where the folder is: edits and new files land under the entry\'s ids', async (t) => {
  const dir = tree(t, { 'real/a.md': 'alpha one' })
  fs.symlinkSync('real', path.join(dir, 'docs'))
  const ws = new Workspace({ filesystem: new LocalFilesystem({ basePath: dir }), bm25: true, autoIndexPaths: ['docs'], watch: true })
  t.after(() => ws.destroy())
  await ws.init()
  assert.deepEqual((await ws.search('alpha')).map((r) => r.id), ['docs/a.md'])
  fs.writeFileSync(path.join(dir, 'real/a.md'), 'beta changed')
  fs.writeFileSync(path.join(dir, 'real/new.md'), 'alpha new')
  await eventually('the edit and the new file land', async () => {
    const alpha = (await ws.search('alpha')).map((r) => r.id)
    const beta = (await ws.search('beta')).map((r) => r.id)
    return JSON.stringify([alpha, beta]) === JSON.stringify([['docs/new.md'], ['docs/a.md']])
  })
})

test('an absolute entry inside basePath is watched as init() reads it: new files, edits and removals land under its ids', async (t) => {
  const dir = tree(t, { 'docs/a.md': 'alpha one', 'src/x.ts': 'export const alpha = 1' })
  const entries = [path.join(dir, 'docs'), `${dir}/src/*.ts`]
  const ws = new Workspace({ filesystem: new LocalFilesystem({ basePath: dir }), bm25: true, autoIndexPaths: entries, watch: true })
  t.after(() => ws.destroy())
  await ws.init()
  const docA = `${path.join(dir, 'docs')}/a.md`
  assert.deepEqual((await idsFor(ws, 'alpha')).sort(), [docA, `${dir}/src/x.ts`].sort())
  fs.writeFileSync(path.join(dir, 'docs/new.md'), 'heron arrives')
  fs.writeFileSync(path.join(dir, 'src/y.ts'), 'export const heron = 2')
  fs.rmSync(path.join(dir, 'docs/a.md'))
  await eventually('the new files land and the removed one goes', async () => {
    const heron = (await idsFor(ws, 'heron')).sort()
    const alpha = await idsFor(ws, 'alpha')
    return JSON.stringify([heron, alpha]) === JSON.stringify([[`${path.join(dir, 'docs')}/new.md`, `${dir}/src/y.ts`].sort(), [`${dir}/src/x.ts`]])
  })
})

test('an entry with .. that stays inside basePath (lib/../src) is watched as init() reads it (it was left unwatched, silently)', async (t) => {
  const dir = tree(t, { 'src/x.ts': 'export const alpha = 1', 'lib/keep.txt': 'k' })
  for (const entry of ['lib/../src', `${dir}/lib/../src`]) {
    const ws = new Workspace({ filesystem: new LocalFilesystem({ basePath: dir }), bm25: true, autoIndexPaths: [entry], watch: true })
    t.after(() => ws.destroy())
    await ws.init()
    assert.deepEqual(await idsFor(ws, 'alpha'), [`${entry}/x.ts`])
    fs.writeFileSync(path.join(dir, 'src/y.ts'), `export const heron = "${entry}"`)
    await eventually(`the new file lands under ${entry}`, async () => (await idsFor(ws, 'heron')).includes(`${entry}/y.ts`))
    fs.rmSync(path.join(dir, 'src/y.ts'))
    await eventually('and goes', async () => (await idsFor(ws, 'heron')).length === 0)
    await ws.destroy()
  }
})

test('an entry that is a link to a folder loses its documents when the folder is removed, and gets them back when it returns', async (t) => {
  const dir = tree(t, { 'pkg/sub/a.ts': 'export const alpha = 1', 'pkg/b.ts': 'export const alpha = 2' })
  fs.symlinkSync('pkg', path.join(dir, 'linkdir'))
  const ws = new Workspace({ filesystem: new LocalFilesystem({ basePath: dir }), bm25: true, autoIndexPaths: ['linkdir'], watch: true })
  t.after(() => ws.destroy())
  await ws.init()
  assert.deepEqual((await idsFor(ws, 'alpha')).sort(), ['linkdir/b.ts', 'linkdir/sub/a.ts'])
  fs.rmSync(path.join(dir, 'pkg'), { recursive: true })
  await eventually('the documents found through the link go', async () => (await idsFor(ws, 'alpha')).length === 0)
  fs.mkdirSync(path.join(dir, 'pkg'))
  fs.writeFileSync(path.join(dir, 'pkg/c.ts'), 'export const alpha = 3')
  await eventually('the folder back, its file is found', async () => (await idsFor(ws, 'alpha')).includes('linkdir/c.ts'))
})

test('an autoIndexPaths entry that is a link to a folder, retargeted as a deploy does (or first made as such a link), is watched where it leads now: files at the new target\'s top level are followed (they were never seen again)', async (t) => {
  const files = {}
  for (const v of ['v1', 'v2']) Object.assign(files, { [`releases/${v}/top.md`]: `top ${v}\n`, [`releases/${v}/sub/a.md`]: `sub ${v}\n` })
  const dir = tree(t, files)
  fs.symlinkSync('releases/v1', path.join(dir, 'docs'))
  const ws = new Workspace({ filesystem: new LocalFilesystem({ basePath: dir }), bm25: true, autoIndexPaths: ['docs', 'later'], watch: true, gitHistory: false })
  t.after(() => ws.destroy())
  await ws.init()
  const sorted = async (q) => (await idsFor(ws, q)).sort()
  fs.symlinkSync('releases/v2', path.join(dir, 'docs.tmp'))
  fs.renameSync(path.join(dir, 'docs.tmp'), path.join(dir, 'docs'))
  await eventually('the retarget reconciled', async () => (await idsFor(ws, 'v2')).length === 2)
  fs.writeFileSync(path.join(dir, 'docs/top.md'), 'top walrus\n')
  fs.writeFileSync(path.join(dir, 'docs/new.md'), 'new walrus\n')
  fs.writeFileSync(path.join(dir, 'docs/sub/a.md'), 'sub walrus\n')
  await eventually('every walrus', async () => (await sorted('walrus')).length === 3)
  assert.deepEqual(await sorted('walrus'), ['docs/new.md', 'docs/sub/a.md', 'docs/top.md'])
  // An entry missing at the start that comes as a link to a folder.
  fs.symlinkSync('releases/v1', path.join(dir, 'later'))
  await eventually('the new entry indexed', async () => (await idsFor(ws, 'v1')).length === 2)
  fs.writeFileSync(path.join(dir, 'later/fresh.md'), 'fresh heron\n')
  await eventually('a file at its top level', async () => (await idsFor(ws, 'heron')).includes('later/fresh.md'))
  assert.equal(ws.stats().watch.live, true)
})

test('a file entry removed and written again is followed without reconciling the tree (the watcher was started again, with full rescans and a lasting warning)', async (t) => {
  const dir = tree(t, { 'README.md': 'first walrus\n', 'docs/a.md': 'other\n' })
  const ws = new Workspace({ filesystem: new LocalFilesystem({ basePath: dir }), bm25: true, autoIndexPaths: ['README.md', 'docs'], watch: true, gitHistory: false })
  t.after(() => ws.destroy())
  await ws.init()
  fs.rmSync(path.join(dir, 'README.md'))
  await eventually('the entry removed', async () => (await idsFor(ws, 'walrus')).length === 0)
  fs.writeFileSync(path.join(dir, 'README.md'), 'second heron\n')
  await eventually('the entry back', async () => (await idsFor(ws, 'heron')).includes('README.md'))
  const watch = ws.stats().watch
  assert.equal(watch.rescans, 0, JSON.stringify(watch))
  assert.equal(watch.live, true, JSON.stringify(watch))
})

test('a file entry that is a link to a file in another folder, retargeted, is followed there (edits to the new target were missed)', async (t) => {
  const dir = tree(t, { 'shared/v1/notes.md': 'first walrus\n', 'shared/v2/notes.md': 'second walrus\n' })
  fs.symlinkSync('shared/v1/notes.md', path.join(dir, 'notes.md'))
  const ws = new Workspace({ filesystem: new LocalFilesystem({ basePath: dir }), bm25: true, autoIndexPaths: ['notes.md'], watch: true, gitHistory: false })
  t.after(() => ws.destroy())
  await ws.init()
  fs.symlinkSync('shared/v2/notes.md', path.join(dir, 'n.tmp'))
  fs.renameSync(path.join(dir, 'n.tmp'), path.join(dir, 'notes.md'))
  await eventually('the retarget read', async () => (await idsFor(ws, 'second')).includes('notes.md'))
  fs.writeFileSync(path.join(dir, 'shared/v2/notes.md'), 'third heron\n')
  await eventually('an edit of the new target', async () => (await idsFor(ws, 'heron')).includes('notes.md'))
})

test('a link whose target is missing, at init() or later (a git checkout that removes it and puts it back), is indexed once its target is there (it stayed out until a restart)', async (t) => {
  const dir = tree(t, { 'docs/b.md': 'bravo' })
  fs.symlinkSync('a.md', path.join(dir, 'docs/link.md'))
  fs.symlinkSync('gone.md', path.join(dir, 'docs/later.md'))
  fs.writeFileSync(path.join(dir, 'docs/gone.md'), 'kiwi in the target')
  fs.unlinkSync(path.join(dir, 'docs/gone.md'))
  const ws = new Workspace({ filesystem: new LocalFilesystem({ basePath: dir }), bm25: true, autoIndexPaths: ['docs'], watch: true })
  t.after(() => ws.destroy())
  const report = await ws.init()
  assert.deepEqual(report.skipped.map((s) => s.path).sort(), ['docs/later.md', 'docs/link.md'])
  fs.writeFileSync(path.join(dir, 'docs/a.md'), 'heron in the target')
  await eventually('the broken link found once its target is made', async () =>
    (await idsFor(ws, 'heron')).sort().join() === 'docs/a.md,docs/link.md')
  // Removed, then put back after the watcher took the removal in.
  fs.unlinkSync(path.join(dir, 'docs/a.md'))
  await eventually('the link goes with its target', async () => (await idsFor(ws, 'heron')).length === 0)
  fs.writeFileSync(path.join(dir, 'docs/a.md'), 'heron is back')
  await eventually('and comes back with it', async () => (await idsFor(ws, 'heron')).sort().join() === 'docs/a.md,docs/link.md')
  fs.writeFileSync(path.join(dir, 'docs/gone.md'), 'kiwi in the target')
  await eventually('a link broken since init() too', async () => (await idsFor(ws, 'kiwi')).sort().join() === 'docs/gone.md,docs/later.md')
})

test('a link to a folder whose folder is replaced by a file is indexed through it (it stayed out until a restart)', async (t) => {
  const dir = tree(t, { 'docs/b.md': 'bravo', 'docs/t/inner.md': 'inside the folder' })
  fs.symlinkSync('t', path.join(dir, 'docs/lnk.md'))
  const ws = new Workspace({ filesystem: new LocalFilesystem({ basePath: dir }), bm25: true, autoIndexPaths: ['docs'], watch: true })
  t.after(() => ws.destroy())
  await ws.init()
  fs.rmSync(path.join(dir, 'docs/t'), { recursive: true })
  fs.writeFileSync(path.join(dir, 'docs/t'), 'heron in a file now')
  await eventually('the link read once its target is a file', async () => (await idsFor(ws, 'heron')).sort().join() === 'docs/lnk.md,docs/t')
  fs.writeFileSync(path.join(dir, 'docs/t'), 'kiwi edited')
  await eventually('and read again when it changes', async () => (await idsFor(ws, 'kiwi')).sort().join() === 'docs/lnk.md,docs/t')
})

test('a burst of 2,000 files each rewritten once is followed path by path, not reconciled over the tree (each write is several events, and 1,500 files counted past 4,096 paths)', async (t) => {
  const files = Object.fromEntries(Array.from({ length: 2000 }, (_, i) => [`docs/f${i}.md`, `alpha ${i}`]))
  const dir = tree(t, files)
  const ws = new Workspace({ filesystem: new LocalFilesystem({ basePath: dir }), bm25: true, autoIndexPaths: ['docs'], watch: true })
  t.after(() => ws.destroy())
  await ws.init()
  const before = ws.stats().watch
  for (let i = 0; i < 2000; i++) fs.writeFileSync(path.join(dir, `docs/f${i}.md`), `quokka number ${i}`)
  await eventually('every file read again', async () => (await ws.search('quokka', { topK: 3000 })).length === 2000, 30_000)
  assert.equal(ws.stats().watch.rescans, before.rescans, JSON.stringify(ws.stats().watch))
})

test('a file whose embedding failed in a watcher update is embedded again once the embedder answers, with a warning (it stayed without a vector while the process ran)', async (t) => {
  const base = tree(t, { 'docs/a.md': 'alpha beta\n', 'docs/b.md': 'gamma delta\n' })
  let failing = 0
  const embedder = Object.assign(
    async (texts) => {
      if (failing > 0) {
        failing--
        throw new Error('503 transient')
      }
      return texts.map((x) => [x.includes('omega') ? 1 : 0.1, 1, x.length % 3])
    },
    { batch: true },
  )
  const ws = new Workspace({ filesystem: new LocalFilesystem({ basePath: base }), bm25: true, autoIndexPaths: ['docs'], embedder, watch: true })
  t.after(() => ws.destroy())
  await ws.init()
  assert.equal(ws.stats().vectors, 2)
  failing = 2 // the group, then the file on its own
  fs.writeFileSync(path.join(base, 'docs/a.md'), 'alpha omega changed\n')
  await eventually('the update applied to BM25', async () => (await ws.search('omega', { mode: 'bm25' })).length === 1)
  await eventually('the warning', () => ws.stats().watch.warnings.some((w) => /docs\/a\.md was not embedded \(.*503 transient.*\); the folder is reconciled in \d+ s/.test(w)))
  // Tried again (a reconcile within seconds), once the embedder answers.
  await eventually('a.md embedded again', async () => ws.stats().vectors === 2 && (await ws.search('omega', { mode: 'vector', topK: 1 }))[0]?.id === 'docs/a.md', 30_000)
})

test('index() and unindex() right after a file changed hold until the file changes again, with watch and across a restart', async (t) => {
  const dir = tree(t, { 'docs/a.md': 'zulu first', 'docs/b.md': 'yankee second', 'docs/c.md': 'xenon third' })
  const persist = path.join(dir, '.index')
  const open = (watch) =>
    new Workspace({ filesystem: new LocalFilesystem({ basePath: dir }), bm25: true, autoIndexPaths: ['docs'], watch, persist: { dir: persist } })
  const ws = open(true)
  await ws.init()
  // Each change's event reaches the watcher after the API's call that follows it.
  fs.writeFileSync(path.join(dir, 'docs/a.md'), 'alpha written by a tool')
  await ws.index('docs/a.md', 'bravo summary of the file')
  fs.rmSync(path.join(dir, 'docs/b.md'))
  await ws.index('docs/b.md', 'whiskey note kept by hand')
  fs.writeFileSync(path.join(dir, 'docs/c.md'), 'xenon edited then removed by hand')
  await ws.unindex('docs/c.md')
  // A later file's event comes in the same burst or a later one: once it is found, theirs were applied.
  fs.writeFileSync(path.join(dir, 'docs/marker.md'), 'marker okapi')
  await eventually('the marker is found', async () => (await idsFor(ws, 'okapi')).includes('docs/marker.md'))
  assert.deepEqual(await idsFor(ws, 'bravo'), ['docs/a.md'], 'the index() document stays')
  assert.deepEqual(await idsFor(ws, 'alpha'), [])
  assert.deepEqual(await idsFor(ws, 'whiskey'), ['docs/b.md'], 'the index() document of a removed file stays')
  assert.deepEqual(await idsFor(ws, 'xenon'), [], 'the unindex()ed file stays out')
  await ws.destroy()

  // Across a restart (no watcher): the files as they were at the writes are not read over them
  // (an unindex()ed file is read again by init(), as documented).
  const again = open(false)
  t.after(() => again.destroy())
  await again.init()
  assert.deepEqual(await idsFor(again, 'bravo'), ['docs/a.md'])
  assert.deepEqual(await idsFor(again, 'whiskey'), ['docs/b.md'])
  await again.destroy()

  // A change after the write is the file's again.
  const watching = open(true)
  t.after(() => watching.destroy())
  await watching.init()
  fs.writeFileSync(path.join(dir, 'docs/a.md'), 'charlie rewrites it')
  await eventually('the file is read again', async () => (await idsFor(watching, 'charlie')).includes('docs/a.md'))
  assert.deepEqual(await idsFor(watching, 'bravo'), [])
  await watching.destroy()
})

test('index() under the id of a chunked file that changed just before leaves its chunks to the file (they are read again)', async (t) => {
  const lines = (word) => Array.from({ length: 400 }, (_, i) => `${word} line ${i} with some filler text`).join('\n')
  const dir = tree(t, { 'docs/big.md': lines('oldword') })
  const ws = new Workspace({ filesystem: new LocalFilesystem({ basePath: dir }), bm25: true, autoIndexPaths: ['docs'], watch: true, persist: { dir: path.join(tree(t), 'p') } })
  t.after(() => ws.destroy())
  await ws.init()
  assert.ok((await idsFor(ws, 'oldword')).length > 1, 'chunked')
  fs.writeFileSync(path.join(dir, 'docs/big.md'), lines('newword'))
  await ws.index('docs/big.md', 'summary kiwi of the big file')
  fs.writeFileSync(path.join(dir, 'docs/marker.md'), 'marker okapi')
  await eventually('the marker is found', async () => (await idsFor(ws, 'okapi')).includes('docs/marker.md'))
  await eventually('the new chunks are read', async () => (await idsFor(ws, 'newword')).length > 1)
  assert.deepEqual(await idsFor(ws, 'oldword'), [], 'no chunk of the old text is left')
  await ws.destroy()
})
