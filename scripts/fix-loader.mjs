// node scripts/fix-loader.mjs [binding.js]
//
// Rewrites the loader that `napi build --js binding.js` generates (run by
// the postbuild scripts, so each build leaves it fixed): the platform
// package's version is read apart from loading its binary. The generated
// loader reads `require('<platform package>/package.json').version` in the
// same `try` as `require('<platform package>')`, so when that read throws
// the binary already loaded is thrown away and the package fails with
// "Cannot find native binding". It throws on Node 20 under tsx (a `.cts`
// file): tsx hands JSON to Node as an ES module, and the require() that
// Node 20 gives a CommonJS module loaded through loader hooks then looks
// for it among CommonJS modules ("Cannot read properties of undefined
// (reading 'exports')"). The package's own resolution is fine there:
// require.resolve finds the file, so the helper added here reads it with fs
// when require() cannot; a version it cannot read at all skips the check
// (NAPI_RS_ENFORCE_VERSION_CHECK) instead of failing the load.
//
// Deterministic and idempotent (a fixed loader is left as it is); throws
// when the generated text no longer has the shape this expects, so a new
// @napi-rs/cli cannot slip through unfixed.
import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'

const HELPER_NAME = '__napiBindingPackageVersion'

const HELPER = `
// Added by scripts/fix-loader.mjs: a platform package's version, read apart
// from its binary, so that a failed read never discards a binary already
// loaded. Node 20's require() in a CommonJS module run through loader hooks
// (tsx) cannot load JSON that a hook turned into an ES module; the file is
// then read with fs. Undefined when it cannot be read: the check is skipped.
function ${HELPER_NAME}(name) {
  try {
    return require(name + '/package.json').version
  } catch {}
  try {
    return JSON.parse(require('fs').readFileSync(require.resolve(name + '/package.json'), 'utf8')).version
  } catch {
    return undefined
  }
}
`

/** Where the helper goes: after the generated loader's error list. */
const ANCHOR = 'const loadErrors = []\n'
/** A version read as generated: `require('<package>/package.json').version`. */
const VERSION_READ = /require\('([^'\n]+)\/package\.json'\)\.version/g
/** A version comparison as generated; a fixed one starts with an undefined check. */
const COMPARISON = /(?<!bindingPackageVersion !== undefined && )bindingPackageVersion !== '/g

/** Throws unless `condition`, naming what changed in the generated loader. */
function expect(condition, what) {
  if (!condition) throw new Error(`fix-loader: the generated binding.js no longer ${what}; update scripts/fix-loader.mjs for this @napi-rs/cli`)
}

/** Occurrences of a string, or of a global pattern. */
const count = (text, pattern) => (typeof pattern === 'string' ? text.split(pattern).length - 1 : (text.match(pattern) ?? []).length)

/**
 * The loader with its version reads moved out of the binary's way.
 * @param {string} text the generated (or already fixed) binding.js
 * @returns {string}
 */
export function fixLoader(text) {
  const fixed = text.includes(`function ${HELPER_NAME}(`)
  if (!fixed) {
    expect(count(text, ANCHOR) === 1, `has one "${ANCHOR.trim()}" to put the helper after`)
    expect(count(text, VERSION_READ) > 0, "reads require('<package>/package.json').version")
  }
  const declarations = count(text, /const bindingPackageVersion = /g)
  const out = (fixed ? text : text.replace(ANCHOR, `${ANCHOR}${HELPER}`))
    .replace(VERSION_READ, (_, name) => `${HELPER_NAME}('${name}')`)
    .replace(COMPARISON, "bindingPackageVersion !== undefined && bindingPackageVersion !== '")
  // Every version the loader reads now goes through the helper, and every check allows an unread one.
  expect(count(out, VERSION_READ) === 0, 'reads versions only in the places rewritten here')
  expect(count(out, `${HELPER_NAME}('`) === declarations, 'declares bindingPackageVersion once per version read')
  expect(count(out, /bindingPackageVersion !== undefined && bindingPackageVersion !== '/g) === declarations, 'compares bindingPackageVersion once per version read')
  return out
}

if (process.argv[1] && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) {
  const file = path.resolve(process.argv[2] ?? fileURLToPath(new URL('../binding.js', import.meta.url)))
  const text = fs.readFileSync(file, 'utf8')
  const out = fixLoader(text)
  if (out !== text) fs.writeFileSync(file, out)
  console.log(`fix-loader: ${path.relative(process.cwd(), file) || file} ${out === text ? 'already fixed' : 'fixed'}`)
}
