// npm run pack:local [-- --out DIR] [-- --no-build]
//
// Builds this platform's binary and writes, into one folder (default
// dist/), the two tarballs a release publishes for it: the root package
// (no binary; optionalDependencies on every platform package at the same
// version, as `napi prepublish` sets them) and this platform's package
// (the binary alone). Prints the two paths as JSON.
import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

const ROOT = fileURLToPath(new URL('..', import.meta.url))
const args = process.argv.slice(2)
const out = path.resolve(args.includes('--out') ? args[args.indexOf('--out') + 1] : path.join(ROOT, 'dist'))
const npm = (argv, cwd) => execFileSync('npm', argv, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] })

/** The npm/ folder of this platform, as napi-rs names them (linux-x64-gnu, darwin-arm64, win32-x64-msvc...). */
function platformDir() {
  const { platform, arch } = process
  if (platform === 'linux') {
    const musl = !process.report.getReport().header.glibcVersionRuntime
    return `linux-${arch}-${musl ? 'musl' : 'gnu'}`
  }
  return platform === 'win32' ? `win32-${arch}-msvc` : `${platform}-${arch}`
}

/** Copies what the root package.json's `files` ships (globs under lib/ included) into `dest`. */
function stageRoot(dest, pkg) {
  const shipped = execFileSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], { cwd: ROOT, encoding: 'utf8' })
  for (const { path: file } of JSON.parse(shipped)[0].files) {
    fs.mkdirSync(path.dirname(path.join(dest, file)), { recursive: true })
    fs.copyFileSync(path.join(ROOT, file), path.join(dest, file))
  }
  const platforms = fs.readdirSync(path.join(ROOT, 'npm')).map((d) => JSON.parse(fs.readFileSync(path.join(ROOT, 'npm', d, 'package.json'), 'utf8')).name)
  pkg.optionalDependencies = Object.fromEntries(platforms.sort().map((name) => [name, pkg.version]))
  delete pkg.devDependencies
  delete pkg.scripts
  fs.writeFileSync(path.join(dest, 'package.json'), `${JSON.stringify(pkg, null, 2)}\n`)
}

const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8'))
if (!args.includes('--no-build')) execFileSync('npm', ['run', 'build'], { cwd: ROOT, stdio: 'inherit' })
const dir = platformDir()
const binary = `${pkg.napi.binaryName}.${dir}.node`
if (!fs.existsSync(path.join(ROOT, binary))) throw new Error(`${binary} is not built (npm run build)`)
fs.mkdirSync(out, { recursive: true })
const stage = fs.mkdtempSync(path.join(os.tmpdir(), 'wss-stage-'))
try {
  const root = path.join(stage, 'root')
  stageRoot(root, pkg)
  const platform = path.join(stage, dir)
  fs.cpSync(path.join(ROOT, 'npm', dir), platform, { recursive: true })
  fs.copyFileSync(path.join(ROOT, binary), path.join(platform, binary))
  fs.copyFileSync(path.join(ROOT, 'LICENSE'), path.join(platform, 'LICENSE'))
  const tarballs = [root, platform].map((d) => path.join(out, JSON.parse(npm(['pack', '--json', '--pack-destination', out], d))[0].filename))
  console.log(JSON.stringify({ root: tarballs[0], platform: tarballs[1] }))
} finally {
  fs.rmSync(stage, { recursive: true, force: true })
}
