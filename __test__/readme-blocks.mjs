// The README's TypeScript code blocks, each a module of its own, and the
// compiler settings a strict user project has; shared by the README test
// and the pack-and-install test.
import fs from 'node:fs'

/** The ```ts blocks of the README, in order. */
export function readmeBlocks(readme) {
  return [...fs.readFileSync(readme, 'utf8').matchAll(/```ts\n([\s\S]*?)```/g)].map((m) => m[1])
}

/** Writes each block as block-N.mts (ES modules: top-level await works) and a strict tsconfig over them. */
export function writeBlocks(dir, blocks, extraOptions = {}) {
  const files = blocks.map((code, i) => {
    const file = `block-${i + 1}.mts`
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
