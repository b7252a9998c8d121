// The dependency graph of crates/core's top-level modules, from the
// `crate::<module>` paths their files name (use lines and inline paths;
// comments left out), and its cycles. `node scripts/module-graph.mjs`
// prints both; exits 1 when there is a cycle (run by __test__/modules.test.mjs).
import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

const SRC = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../crates/core/src')

/** The .rs files under `dir`, test modules (`tests.rs`, `*_tests.rs`) left out. */
function files(dir) {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    if (e.isDirectory()) return files(path.join(dir, e.name))
    return e.name.endsWith('.rs') && !/(^|_)tests\.rs$/.test(e.name) ? [path.join(dir, e.name)] : []
  })
}

/** module -> Map(dependency -> first file that names it). */
export function moduleGraph() {
  const graph = new Map()
  for (const file of files(SRC)) {
    const rel = path.relative(SRC, file)
    const module = rel.includes(path.sep) ? rel.split(path.sep)[0] : rel.replace(/\.rs$/, '')
    if (module === 'lib') continue
    if (!graph.has(module)) graph.set(module, new Map())
    // Tests may reach anywhere: only the code that ships counts.
    const code = fs.readFileSync(file, 'utf8').split(/\n#\[cfg\(test\)\]\s*\nmod tests/)[0]
    const text = code.replace(/\/\/.*$/gm, '')
    for (const m of text.matchAll(/\bcrate::([a-z_]+)/g)) {
      if (m[1] !== module && !graph.get(module).has(m[1])) graph.get(module).set(m[1], rel)
    }
    // `use crate::{a, b::c}` groups.
    for (const g of text.matchAll(/\buse crate::\{([^}]*)\}/g)) {
      for (const name of g[1].split(',').map((s) => s.trim().split('::')[0]).filter(Boolean)) {
        if (name !== module && !graph.get(module).has(name)) graph.get(module).set(name, rel)
      }
    }
  }
  return graph
}

/** Every cycle, as module lists (each found once, from its smallest name). */
export function cycles(graph) {
  const out = []
  const names = [...graph.keys()].sort()
  for (const start of names) {
    const stack = [[start, [start]]]
    while (stack.length) {
      const [at, trail] = stack.pop()
      for (const next of graph.get(at)?.keys() ?? []) {
        if (next === start) out.push([...trail, start])
        else if (!trail.includes(next) && next > start && graph.has(next)) stack.push([next, [...trail, next]])
      }
    }
  }
  return out
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const graph = moduleGraph()
  for (const [m, deps] of [...graph].sort()) console.log(`${m} -> ${[...deps.keys()].sort().join(', ')}`)
  const found = cycles(graph)
  for (const c of found) console.log(`cycle: ${c.join(' -> ')}  (${c.slice(0, -1).map((m, i) => `${m}: ${graph.get(m).get(c[i + 1])}`).join('; ')})`)
  process.exit(found.length ? 1 : 0)
}
