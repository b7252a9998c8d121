// Shared helpers of the node:test suites: the built addon and real
// temporary folders.
import { createRequire } from 'node:module'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'

const require = createRequire(import.meta.url)
export const lib = require('../index.js')
export const { Workspace, LocalFilesystem, WorkspaceError, SearchNotAvailableError, WorkspaceNotReadyError, EmbedderError, VectorStoreError } = lib

/** Writes `files` ({ relativePath: string | Buffer }) into a new temporary folder, removed after the test. */
export function tree(t, files = {}) {
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'wss-')))
  for (const [rel, content] of Object.entries(files)) {
    const p = path.join(dir, rel)
    fs.mkdirSync(path.dirname(p), { recursive: true })
    fs.writeFileSync(p, content)
  }
  t.after(() => removeTree(dir))
  return dir
}

/**
 * Removes `dir` and what is in it, listing it again while a file still
 * appears in it (a process the test ended may finish its last write late;
 * `rmSync`'s own retries only retry the last rmdir, not the listing).
 */
export async function removeTree(dir) {
  for (let tries = 1; ; tries++) {
    try {
      return fs.rmSync(dir, { recursive: true, force: true })
    } catch (e) {
      if (tries === 20 || !['ENOTEMPTY', 'EBUSY'].includes(e.code)) throw e
      await new Promise((r) => setTimeout(r, 100))
    }
  }
}

/** A BM25 workspace over `dir`. */
export function bm25Workspace(dir, options = {}) {
  return new Workspace({ filesystem: new LocalFilesystem({ basePath: dir }), bm25: true, ...options })
}

export const ids = (results) => results.map((r) => r.id)

/** The files the search tool shows for `query`, page after page (each page's cursor asks for the next). */
export async function toolPages(ws, query) {
  const tool = lib.createWorkspaceTools(ws).mastra_workspace_search
  const shown = []
  let cursor
  do {
    const text = await tool.execute({ query, maxTokens: 100000, ...(cursor ? { cursor } : {}) })
    const blocks = text.split('\n\n')
    cursor = /cursor "([^"]+)"/.exec(blocks.at(-1))?.[1]
    const results = blocks.filter((b) => !b.startsWith('[') && !/cursor "/.test(b))
    // A header: `path:first-last  score`, or `path  score` where no lines are shown.
    shown.push(...results.map((b) => /^(.*?)(?::\d+-\d+)?  /.exec(b.split('\n')[0])[1]))
  } while (cursor)
  return shown
}

/** Polls `check` until it returns a truthy value (resolved with it), or fails after `ms`. */
export async function eventually(what, check, ms = 10_000) {
  const deadline = Date.now() + ms
  for (;;) {
    const value = await check()
    if (value) return value
    if (Date.now() > deadline) throw new Error(`not within ${ms} ms: ${what}`)
    await new Promise((r) => setTimeout(r, 25))
  }
}
