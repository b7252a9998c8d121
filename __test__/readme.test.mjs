// The README's TypeScript examples compile as written under strict (the
// real Mastra, AI SDK and vector store packages, this package's types).
import test from 'node:test'
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { readmeBlocks, writeBlocks } from './readme-blocks.mjs'

const ROOT = fileURLToPath(new URL('..', import.meta.url))

test("the README's TypeScript blocks compile under strict", (t) => {
  const blocks = readmeBlocks(path.join(ROOT, 'README.md'))
  assert.ok(blocks.length >= 5, `${blocks.length} blocks`)
  // Inside the package, so that 'workspace-search' resolves to it by name.
  const dir = fs.mkdtempSync(path.join(ROOT, '__test__/types/.tmp-readme-'))
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }))
  writeBlocks(dir, blocks)
  try {
    execFileSync(process.execPath, [path.join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', dir], { encoding: 'utf8' })
  } catch (err) {
    assert.fail(`tsc:\n${err.stdout}`)
  }
})
