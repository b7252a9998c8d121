// One lock order for every flow (docs/architecture.md): a save that holds
// the index while a watcher's update arrives must not deadlock. The save is
// paused with its index lock held (a test-only hook read from the
// environment), a file changes meanwhile; the change must land and
// destroy() resolve. Before the fix the update held the file state and
// waited for the index while the save waited for the file state: a hang.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'

import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { tree } from './helpers.mjs'

const here = path.dirname(fileURLToPath(import.meta.url))

test('a save holding the index while the watcher applies a change: no deadlock, the change lands', async (t) => {
  const dir = tree(t, { 'docs/a.md': 'alpha' })
  const store = tree(t)
  const script = `
    const fs = require('fs'), path = require('path')
    const { Workspace, LocalFilesystem } = require(${JSON.stringify(path.join(here, '..', 'index.js'))})
    const dir = ${JSON.stringify(dir)}
    ;(async () => {
      const ws = new Workspace({ filesystem: new LocalFilesystem({ basePath: dir }), bm25: true, autoIndexPaths: ['docs'], watch: true, persist: { dir: ${JSON.stringify(store)} } })
      await ws.init()
      // The background save comes a second after a write (in a turn of its
      // own: the watcher's update waits for it); it pauses with the index
      // held for 3 s, and the file changes 1.5 s after the write.
      await ws.index('manual/x', 'a change to save')
      await new Promise((r) => setTimeout(r, 1500))
      fs.writeFileSync(path.join(dir, 'docs/b.md'), 'bison arrives')
      for (let i = 0; i < 200; i++) {
        if ((await ws.search('bison')).length) break
        await new Promise((r) => setTimeout(r, 25))
      }
      const found = (await ws.search('bison')).map((r) => r.id)
      await ws.destroy()
      console.log(JSON.stringify(found))
    })().catch((e) => { console.error(e); process.exit(1) })`
  const child = spawn(process.execPath, ['-e', script], { env: { ...process.env, WORKSPACE_SEARCH_TEST_PAUSE: 'save-holds-index:3000' } })
  let out = ''
  child.stdout.on('data', (d) => (out += d))
  child.stderr.on('data', (d) => (out += d))
  const code = await new Promise((resolve) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL')
      resolve('hung')
    }, 20_000)
    child.on('exit', (c) => {
      clearTimeout(timer)
      resolve(c)
    })
  })
  assert.equal(code, 0, out)
  assert.deepEqual(JSON.parse(out.trim().split('\n').pop()), ['docs/b.md'])

})
