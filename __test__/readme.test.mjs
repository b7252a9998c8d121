// The documentation as written: the TypeScript examples of the README and
// of docs/*.md compile under strict (the real Mastra, AI SDK and vector
// store packages, this package's types), the README opens with the two
// commands a fresh machine runs, and every link between these files points
// to a file and a heading that exist.
import test from 'node:test'
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { docFiles, docsBlocks, readmeBlocks, writeBlocks } from './readme-blocks.mjs'

const ROOT = fileURLToPath(new URL('..', import.meta.url))
const read = (file) => fs.readFileSync(path.join(ROOT, file), 'utf8')

test("the README's and docs' TypeScript blocks compile under strict", (t) => {
  const readme = readmeBlocks(path.join(ROOT, 'README.md'))
  // A first example for each entry point.
  assert.ok(readme.some((code) => /from 'workspace-search'/.test(code)), 'a README example of workspace-search')
  assert.ok(readme.some((code) => /from 'workspace-search\/mastra'/.test(code)), 'a README example of workspace-search/mastra')
  const blocks = docsBlocks(ROOT)
  assert.ok(blocks.length >= 7, `${blocks.length} blocks`)
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

test('the README opens with the two commands a fresh machine runs: search a folder, run every test', () => {
  const readme = read('README.md')
  const opening = readme.slice(0, readme.indexOf('\n## '))
  const blocks = [...opening.matchAll(/```(\w*)\n([\s\S]*?)```/g)].map((m) => [m[1], m[2]])
  assert.deepEqual(blocks.slice(0, 2), [
    ['sh', 'npm install && npm run build && node bin/workspace-search.js crates "bm25 top-k pruning"\n'],
    ['sh', 'npm install && npm test\n'],
  ])
  const scripts = JSON.parse(read('package.json')).scripts
  assert.ok(scripts.build && scripts.test)
  assert.ok(fs.existsSync(path.join(ROOT, 'bin/workspace-search.js')) && fs.statSync(path.join(ROOT, 'crates')).isDirectory())
})

/** The text of a Markdown file outside its fenced code blocks. */
function prose(text) {
  return text.replace(/^```[\s\S]*?^```/gm, '')
}

/** The anchors GitHub gives the headings of a Markdown file. */
function anchors(text) {
  const seen = new Map()
  const out = new Set()
  for (const [, title] of prose(text).matchAll(/^#{1,6} +(.+?) *#* *$/gm)) {
    const base = title
      .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\p{M} _-]/gu, '')
      .replace(/ /g, '-')
    const n = seen.get(base) ?? 0
    seen.set(base, n + 1)
    out.add(n === 0 ? base : `${base}-${n}`)
  }
  return out
}

test('every link of the README and docs/*.md to a file or heading of the repository resolves', () => {
  const files = docFiles(ROOT)
  assert.ok(files.includes('docs/architecture.md') && files.includes('docs/api.md'), files.join(', '))
  const broken = []
  let checked = 0
  for (const file of files) {
    for (const [, target] of prose(read(file)).matchAll(/\]\(([^)\s]+)\)/g)) {
      if (/^[a-z]+:/i.test(target)) continue // https:, mailto:
      const [where, anchor] = target.split('#')
      const to = where === '' ? file : path.posix.normalize(path.posix.join(path.posix.dirname(file), where))
      checked++
      if (!fs.existsSync(path.join(ROOT, to))) broken.push(`${file}: ${target} (no ${to})`)
      else if (anchor !== undefined && !anchors(read(to)).has(anchor)) broken.push(`${file}: ${target} (no heading #${anchor} in ${to})`)
    }
  }
  assert.ok(checked >= 20, `${checked} links`)
  assert.deepEqual(broken, [])
})
