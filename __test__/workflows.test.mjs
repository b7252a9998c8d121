// The release and CI workflows cannot run here; this checks that they are
// well-formed and agree with package.json: one build per napi target (and
// no other), each built for its own target, tests on the platforms GitHub
// has runners for, publishing with provenance on a version tag only.
import test from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs'
import { parse } from 'yaml'

const read = (file) => parse(fs.readFileSync(new URL(`../.github/workflows/${file}`, import.meta.url), 'utf8'))
const pkg = JSON.parse(fs.readFileSync(new URL('../package.json', import.meta.url), 'utf8'))
const targets = pkg.napi.targets

test('release: one build per napi target, each for its target', () => {
  const release = read('release.yml')
  const builds = release.jobs.build.strategy.matrix.settings
  assert.deepEqual(builds.map((b) => b.target).sort(), [...targets].sort())
  for (const b of builds) {
    assert.match(b.build, new RegExp(`^npm run build -- --target ${b.target}( |$)`), b.target)
    if (b.target.includes('musl')) assert.match(b.build, / -x$/, `${b.target} cross-compiles with zig`)
    if (b.target.includes('linux-gnu')) assert.match(b.build, /--use-napi-cross$/, b.target)
    if (b.target.includes('apple')) assert.match(b.host, /^macos/)
    if (b.target.includes('windows')) assert.match(b.host, /^windows/)
  }
  assert.deepEqual(release.jobs.build.steps.at(-1).with.name, 'bindings-${{ matrix.settings.target }}')
})

test('release: every built target is tested on its platform, on Node 20, 22 and 24 where runners exist', () => {
  const release = read('release.yml')
  const tested = release.jobs.test.strategy.matrix.settings.map((s) => s.target)
  const musl = release.jobs['test-musl'].strategy.matrix.include.map((s) => s.target)
  assert.deepEqual([...tested, ...musl].sort(), [...targets].sort())
  assert.deepEqual(release.jobs.test.strategy.matrix.node, [20, 22, 24])
  assert.deepEqual(pkg.engines, { node: '>=20' })
  for (const job of [release.jobs.test, release.jobs['test-musl']]) {
    assert.ok(job.needs === 'build' || job.needs.includes('build'))
    assert.ok(job.steps.some((s) => s.uses?.startsWith('actions/download-artifact')))
  }
})

test('release: publishes with provenance on a version tag, after the tests', () => {
  const release = read('release.yml')
  assert.deepEqual(release.on.push.tags, ['v*'])
  const publish = release.jobs.publish
  assert.deepEqual(publish.needs, ['test', 'test-musl'])
  assert.equal(publish.if, "startsWith(github.ref, 'refs/tags/v')")
  assert.equal(publish.permissions['id-token'], 'write')
  const script = publish.steps.map((s) => s.run ?? '').join('\n')
  assert.match(script, /npm run artifacts/)
  assert.match(script, /npm run prepublishOnly/)
  assert.match(script, /npm publish --provenance --access public/)
  assert.match(pkg.scripts.prepublishOnly, /^napi prepublish/)
  assert.match(pkg.scripts.artifacts, /^napi artifacts/)
})

test('CI: pull requests run .ci/run and the other platforms', () => {
  const ci = read('ci.yml')
  assert.ok('pull_request' in ci.on)
  assert.ok(ci.jobs.linux.steps.some((s) => s.run === 'bash .ci/run'))
  assert.deepEqual(ci.jobs.platforms.strategy.matrix.host.sort(), ['macos-latest', 'windows-latest'])
})

test('platform packages: one per target, named as the loader requires them', () => {
  const loader = fs.readFileSync(new URL('../binding.js', import.meta.url), 'utf8')
  const dirs = fs.readdirSync(new URL('../npm/', import.meta.url))
  assert.equal(dirs.length, targets.length)
  for (const dir of dirs) {
    const p = JSON.parse(fs.readFileSync(new URL(`../npm/${dir}/package.json`, import.meta.url), 'utf8'))
    assert.equal(p.name, `workspace-search-${dir}`)
    assert.equal(p.version, pkg.version)
    assert.deepEqual(p.files, [`workspace-search.${dir}.node`])
    assert.ok(loader.includes(`require('${p.name}')`), `binding.js loads ${p.name}`)
  }
})
