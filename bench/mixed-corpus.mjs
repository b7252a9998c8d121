// The mixed-language corpus: a folder that looks like a polyglot
// workspace, built from what any machine of this kind has — Python's
// standard library, the cargo registry's crate sources, system C headers,
// the Rust toolchain's HTML documentation as text, and the JavaScript,
// TypeScript and Markdown of node_modules — taken round-robin, whole files
// of 200 B to 64 KB, written once to $TMPDIR/wss-bench-mixed/<files>/ in
// the layout corpus.mjs's documents() reads.
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { execFileSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'

const here = path.dirname(fileURLToPath(import.meta.url))

/** Files under `root` whose name matches `re`, sorted, at most `max`. */
function files(root, re, max = 60000) {
  const out = []
  const walk = (dir, depth) => {
    if (depth > 12 || out.length >= max) return
    let entries
    try {
      entries = fs.readdirSync(dir, { withFileTypes: true })
    } catch {
      return
    }
    for (const e of entries.sort((a, b) => (a.name < b.name ? -1 : 1))) {
      const p = path.join(dir, e.name)
      if (e.isDirectory() && !e.name.startsWith('.') && e.name !== 'test' && e.name !== 'tests') walk(p, depth + 1)
      else if (e.isFile() && re.test(e.name)) {
        const size = fs.statSync(p).size
        if (size >= 200 && size <= 64 * 1024) out.push(p)
      }
      if (out.length >= max) return
    }
  }
  if (fs.existsSync(root)) walk(root, 0)
  return out
}

const firstExisting = (paths) => paths.find((p) => fs.existsSync(p))

/** The sources: [label, files, how a file becomes text]. */
function sources() {
  const python = firstExisting([...fs.readdirSync('/usr/lib').filter((d) => /^python3\.\d+$/.test(d)).map((d) => `/usr/lib/${d}`), '/usr/lib/python3'])
  const cargo = path.join(os.homedir(), '.cargo/registry/src')
  let rustDocs
  try {
    rustDocs = path.join(execFileSync('rustc', ['--print', 'sysroot'], { encoding: 'utf8' }).trim(), 'share/doc/rust/html')
  } catch {}
  const html = (text) =>
    text
      .replace(/<(script|style)[\s\S]*?<\/\1>/g, ' ')
      .replace(/<[^>]+>/g, ' ')
      .replace(/&[a-z]+;/g, ' ')
      .replace(/[ \t]+/g, ' ')
      .replace(/\n\s*\n+/g, '\n')
  const asIs = (text) => text
  return [
    ['py', files(python ?? '/nonexistent', /\.py$/), asIs],
    ['rs', files(cargo, /\.rs$/), asIs],
    ['h', files('/usr/include', /\.h$/), asIs],
    ['txt', files(rustDocs ?? '/nonexistent', /\.html$/, 30000), html],
    ['js', files(path.resolve(here, '../node_modules'), /\.(m?js|ts|md)$/), asIs],
  ].filter(([, list]) => list.length > 0)
}

/** A folder of `count` mixed-language files; returns { dir, files, bytes, kinds }. */
export function mixedCorpus(count) {
  const dir = path.join(os.tmpdir(), 'wss-bench-mixed', String(count))
  const doneFile = `${dir}.json`
  if (fs.existsSync(doneFile)) return JSON.parse(fs.readFileSync(doneFile, 'utf8'))
  fs.rmSync(dir, { recursive: true, force: true })
  const all = sources()
  const next = all.map(() => 0)
  const kinds = {}
  let bytes = 0
  for (let i = 0; i < count; i++) {
    const k = i % all.length
    const [label, list, toText] = all[k]
    const src = list[next[k]++ % list.length]
    const text = toText(fs.readFileSync(src, 'utf8'))
    const ext = label === 'js' ? path.extname(src).slice(1) : label
    const sub = path.join(dir, `d${String(Math.floor(i / 1000)).padStart(3, '0')}`)
    if (i % 1000 === 0) fs.mkdirSync(sub, { recursive: true })
    fs.writeFileSync(path.join(sub, `f${String(i).padStart(6, '0')}.${ext}`), text)
    bytes += Buffer.byteLength(text)
    kinds[ext] = (kinds[ext] ?? 0) + 1
  }
  const info = { dir, files: count, bytes, kinds }
  fs.writeFileSync(doneFile, JSON.stringify(info))
  return info
}
