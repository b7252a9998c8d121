// What the compiler tells a user who gets a type wrong: the messages must
// name the real mistake.
import test from 'node:test'
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

const ROOT = fileURLToPath(new URL('..', import.meta.url))
const TSC = path.join(ROOT, 'node_modules/typescript/bin/tsc')

/** tsc's output for `source` compiled strict beside the package's types. */
function compile(t, source) {
  const dir = fs.mkdtempSync(path.join(ROOT, '__test__/types/.tmp-'))
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }))
  fs.writeFileSync(path.join(dir, 'main.ts'), source)
  const config = { compilerOptions: { strict: true, noEmit: true, target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', types: [] }, files: ['main.ts'] }
  fs.writeFileSync(path.join(dir, 'tsconfig.json'), JSON.stringify(config))
  try {
    execFileSync(process.execPath, [TSC, '-p', dir], { encoding: 'utf8' })
    return ''
  } catch (err) {
    return err.stdout
  }
}

test("a batch embedder without `as const` is told 'boolean' is not assignable to 'true'", (t) => {
  const out = compile(
    t,
    `import { Workspace } from 'workspace-search'
const embedder = Object.assign(async (texts: string[]) => texts.map(() => [1]), { batch: true, maxBatchSize: 8 })
new Workspace({ embedder })
`,
  )
  assert.match(out, /Type 'boolean' is not assignable to type 'true'/)
  assert.doesNotMatch(out, /Types of parameters 'texts' and 'text' are incompatible/)
  const fixed = compile(
    t,
    `import { Workspace } from 'workspace-search'
const embedder = Object.assign(async (texts: string[]) => texts.map(() => [1]), { batch: true as const, maxBatchSize: 8 })
new Workspace({ embedder })
new Workspace({ embedder: async (text: string) => [text.length] })
`,
  )
  assert.equal(fixed, '')
})
