// The TypeScript code blocks of the README and of docs/*.md, each a module
// of its own, and the compiler settings a strict user project has; shared
// by the README test and the pack-and-install test.
import fs from 'node:fs'
import path from 'node:path'

/** The ```ts blocks of one Markdown file, in order. */
export function readmeBlocks(file) {
  return [...fs.readFileSync(file, 'utf8').matchAll(/```ts\n([\s\S]*?)```/g)].map((m) => m[1])
}

/** The documentation whose examples must compile: README.md, then docs/*.md by name (paths relative to `root`). */
export function docFiles(root) {
  const docs = fs.existsSync(path.join(root, 'docs')) ? fs.readdirSync(path.join(root, 'docs')).filter((f) => f.endsWith('.md')).sort() : []
  return ['README.md', ...docs.map((f) => `docs/${f}`)]
}

/** The ```ts blocks of every file of `docFiles(root)`, in order, each with a module name that says where it is from. */
export function docsBlocks(root) {
  return docFiles(root).flatMap((file) => {
    const stem = file.replace(/\.md$/, '').replace(/[^A-Za-z0-9]+/g, '-')
    return readmeBlocks(path.join(root, file)).map((code, i) => ({ name: `${stem}-${i + 1}`, code }))
  })
}

/**
 * Writes each block as a module (ES modules: top-level await works) and a
 * strict tsconfig over them. A block is its code (written as block-N.mts)
 * or `{ name, code }` (written as name.mts).
 */
export function writeBlocks(dir, blocks, extraOptions = {}) {
  const files = blocks.map((block, i) => {
    const { name, code } = typeof block === 'string' ? { name: `block-${i + 1}`, code: block } : block
    const file = `${name}.mts`
    fs.writeFileSync(`${dir}/${file}`, `export {}\n${code}`)
    return file
  })
  const compilerOptions = {
    strict: true,
    noEmit: true,
    target: 'ES2022',
    module: 'NodeNext',
    moduleResolution: 'NodeNext',
    types: ['node'],
    // @mastra/core's own declarations do not check cleanly; ours are
    // checked with skipLibCheck off by __test__/types/tsconfig.json.
    skipLibCheck: true,
    ...extraOptions,
  }
  fs.writeFileSync(`${dir}/tsconfig.json`, JSON.stringify({ compilerOptions, files }))
  return files
}
