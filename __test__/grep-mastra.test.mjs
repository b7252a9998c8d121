// Mastra's grep tool (mastra_workspace_grep) through a real Mastra Agent,
// once over Mastra's own Workspace (its JavaScript walk) and once over
// workspace-search/mastra's (the native grep() hook of the LocalFilesystem),
// on one folder of real files: the outputs must be the same strings, and the
// native hook must really have answered where it can.
import test from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs'
import path from 'node:path'
import { execFileSync } from 'node:child_process'
import { Agent } from '@mastra/core/agent'
import * as mastra from '@mastra/core/workspace'
// Our entry by relative path: the code under test is this checkout's.
import * as ours from '../lib/mastra/index.mjs'
import { tree, Workspace, lib } from './helpers.mjs'
import { scriptedModel, call } from './mock-model.mjs'

const { UnsupportedGrepPatternError } = lib

/** A 100,000-character line: one needle inside Mastra's 500-character cut, one far past it. */
const LONG_LINE = `${'z'.repeat(300)} needle100k ${'y'.repeat(89_000)} farneedle `.padEnd(100_000, 'w')

const numbered = (n, f) => Array.from({ length: n }, (_, i) => f(i + 1)).join('\n') + '\n'

const FILES = {
  // Mastra applies the root .gitignore only (case-insensitively: the `ignore` package's default).
  '.gitignore': 'dist/\n*.log\n!keep.log\n/secret.ts\nlogs/\nbroken/\n# a comment\n',
  '.git/notes.md': 'foo inside .git\n',
  'secret.ts': 'export const secret = "root secret, ignored"\n',
  'app.log': 'foo in an ignored log\n',
  'keep.log': 'foo in a log kept by negation\n',
  'dist/bundle.js': 'var foo = "bundle"\n',
  'dist/sub/x.ts': 'const foo = "dist sub"\n',
  'dist/sub/debug.log': 'debug foo line\n',
  'Logs/app.ts': 'const logs = "foo in Logs"\n',
  'Logs/trace.log': 'trace foo\n',
  'other/outside.ts': 'outside foo of autoIndexPaths\n',
  '.config/settings.json': '{ "setting": "foo hidden folder" }\n',
  '.env': 'SECRET=foo\n',
  '.hidden.md': 'hidden foo file\n',
  'nested/.gitignore': '*.md\n',
  'nested/readme.md': 'nested foo readme (ignored by the nested .gitignore, which Mastra does not apply)\n',
  'nested/secret.ts': 'export const secret = "nested secret, not ignored: /secret.ts is anchored"\n',
  'src/index.ts': [
    "import { foo } from './a'",
    'export function fooBar(a, b) {',
    '  return foo(a) // TODO: simplify',
    '}',
    'function  spaced ( x ) { return x }',
    "const word = 'word'; const words = 'wordy'",
    '// FIXME later',
    'aa bb cc dd',
    'foobar foobaz',
    'zz with zz and qzzq',
    'p{L} literally',
    '',
  ].join('\n'),
  'src/util.js': 'module.exports = function foo() { return "Foo FOO foo" }\n',
  'src/a-b.ts': 'export const ab = "foo a-b"\n',
  'src/a.ts': 'export const a = "foo a.ts"\n',
  'src/a/x.ts': 'export const x = "foo in a/"\n',
  'src/A.ts': 'export const A = "foo upper A"\n',
  'src/B.ts': 'export const B = "foo upper B"\n',
  'src/b.ts': 'export const b = "foo lower b"\n',
  'src/é.ts': 'export const e = "foo accented name"\n',
  'src/empty.ts': '',
  'src/noeol.ts': 'foo without a final line feed',
  'src/bom.ts': '\uFEFFimport x from "y" // foo\nexport const y = 1\n',
  'src/lib/deep/nested.ts': 'export const deep = "foo deep"\n',
  'src/.hidden.ts': 'export const hidden = "foo hidden file"\n',
  'src/.cache/c.ts': 'export const cached = "foo hidden folder"\n',
  'src/image.png': 'foo inside a png\n',
  'src/data.bin': 'foo inside a bin\n',
  'src/notes.md': [
    '# 笔记',
    '如何重置密码：打开设置，点击重置密码',
    'emoji 🎉 party 🎉🎉',
    '😀x marks the spot',
    '😀',
    '😀😀',
    '😃 grin',
    'degrees \u212Aelvin, a temperature',
    'long s: \u017Fecret',
    'capital sharp s: \u1E9E',
    'nbsp:\u00A0here',
    '\u{10400} deseret capital',
    '',
  ].join('\n'),
  'src/lookbehind.md': 'xob\nfOo mixed\n',
  'src/with space.ts': 'foo in a name with a space\n',
  'src/seps.txt': 'sep\u2028here\nnel\u0085here\nvt\u000Bhere\n',
  'broken/ok.ts': 'foo next to a broken link\n',
  'src/emoji/one.md': '😀\nplain\n',
  'src/crlf.txt': 'first line\r\nword end\r\nfoo bar\r\n  indented\r\nlast\r\n',
  'src/bad.txt': Buffer.concat([
    Buffer.from('ok line foo\n'),
    Buffer.from([0xff]),
    Buffer.from(' bad ff\n'),
    Buffer.from([0xe2, 0x82]),
    Buffer.from(' truncated\n'),
    Buffer.from([0xed, 0xa0, 0x80]),
    Buffer.from(' surrogate\n'),
    Buffer.from([0xc0, 0xaf]),
    Buffer.from(' overlong\n'),
    Buffer.from([0xf0, 0x9f, 0x98]),
    Buffer.from('x four\n'),
  ]),
  'src/big.txt': `before\n${LONG_LINE}\nafter foo\n`,
  'src/ctx.md': numbered(22, (i) => ([3, 5, 12, 21].includes(i) ? `hit ${i}` : `line ${i}`)),
  'src/many/m1.txt': numbered(700, (i) => `match one ${i}`),
  'src/many/m2.md': numbered(700, (i) => `match two ${i}`),
}

/** The fixture folder: FILES, three links (a file, a folder, a broken one), and every time an hour back (the native index keeps files that are not "racy"). */
function fixture(t) {
  const basePath = tree(t, FILES)
  fs.symlinkSync('index.ts', path.join(basePath, 'src/link.ts'))
  fs.symlinkSync('lib', path.join(basePath, 'src/linkdir'))
  fs.symlinkSync('/nonexistent/target.ts', path.join(basePath, 'broken/dead.ts'))
  const past = new Date(Date.now() - 3600_000)
  const walk = (dir) => {
    for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
      const p = path.join(dir, e.name)
      if (e.isSymbolicLink()) continue
      if (e.isDirectory()) walk(p)
      fs.utimesSync(p, past, past)
    }
  }
  walk(basePath)
  return basePath
}

/**
 * The argument sets of mastra_workspace_grep, and how our workspace must
 * answer each: 'native' (the hook answered), 'fallback' (the hook threw,
 * Mastra's walk answered) or 'none' (the tool does not call the hook: a
 * file path, an error, nothing to search).
 */
const CASES = [
  ['literal', { pattern: 'foo' }, 'native'],
  ['regex \\s \\w', { pattern: 'function\\s+\\w+\\(' }, 'native'],
  ['alternation', { pattern: 'TODO|FIXME|HACK' }, 'native'],
  ['case-insensitive', { pattern: 'todo|foo', caseSensitive: false }, 'native'],
  ['contextLines 2, overlapping hunks', { pattern: 'hit', contextLines: 2 }, 'native'],
  ['contextLines 1.7', { pattern: 'hit', contextLines: 1.7 }, 'native'],
  ['contextLines above 10000', { pattern: 'hit', contextLines: 20_000 }, 'fallback'],
  ['maxCount 1', { pattern: 'foo', maxCount: 1 }, 'native'],
  ['maxCount 3', { pattern: 'match', maxCount: 3 }, 'native'],
  ['maxCount 0', { pattern: 'foo', maxCount: 0 }, 'native'],
  ['maxCount 600, past the 1000 cap', { pattern: 'match', maxCount: 600 }, 'native'],
  ['over 1000 matches', { pattern: 'match' }, 'native'],
  ['over 1000 matches with context: the last one\'s after', { pattern: 'match', contextLines: 2 }, 'native'],
  ['includeHidden', { pattern: 'foo|secret', includeHidden: true }, 'native'],
  ['glob **/*.ts', { pattern: 'foo', path: '**/*.ts' }, 'native'],
  ['glob **/*.ts with hidden', { pattern: 'foo', path: '**/*.ts', includeHidden: true }, 'native'],
  ['glob src/**/*.{ts,js}', { pattern: 'foo', path: 'src/**/*.{ts,js}' }, 'native'],
  ['glob {src,other}/*.ts', { pattern: 'foo', path: '{src,other}/*.ts' }, 'native'],
  ['folder src', { pattern: 'foo', path: 'src' }, 'native'],
  ['folder ./src/', { pattern: 'foo', path: './src/' }, 'native'],
  ['folder ././src', { pattern: 'foo', path: '././src' }, 'native'],
  ['folder ./', { pattern: 'foo', path: './' }, 'native'],
  ['a file', { pattern: 'foo', path: 'src/index.ts' }, 'none'],
  ['a file, not text', { pattern: 'foo', path: 'src/image.png' }, 'none'],
  ['an ignored folder', { pattern: 'foo|bundle|debug', path: 'dist' }, 'native'],
  ['in an ignored folder', { pattern: 'foo|debug', path: 'dist/sub' }, 'native'],
  ['an ignored folder, other case', { pattern: 'foo|trace', path: 'Logs' }, 'native'],
  ['a hidden folder', { pattern: 'foo', path: '.config' }, 'native'],
  ['a linked folder', { pattern: 'foo', path: 'src/linkdir' }, 'native'],
  ['outside autoIndexPaths', { pattern: 'outside', path: 'other' }, 'native'],
  ['nested .gitignore', { pattern: 'foo|secret', path: 'nested' }, 'native'],
  ['.git', { pattern: 'foo', path: '.git' }, 'none'],
  ['CJK', { pattern: '重置密码' }, 'native'],
  ['emoji', { pattern: '🎉' }, 'native'],
  ['the 100k line', { pattern: 'needle100k' }, 'native'],
  ['the 100k line, past 500', { pattern: 'farneedle' }, 'native'],
  ['no match', { pattern: 'zzqqxx_nothing' }, 'native'],
  ['invalid regex', { pattern: '(' }, 'none'],
  ['1,001 characters', { pattern: 'a'.repeat(1001) }, 'none'],
  ['1,000 characters', { pattern: 'a?'.repeat(500) }, 'native'],
  ['look-ahead', { pattern: 'foo(?=bar)' }, 'native'],
  ['negative look-ahead', { pattern: 'foo(?!bar|baz|\\w)' }, 'native'],
  ['look-behind', { pattern: '(?<=foo)ba[rz]' }, 'native'],
  ['back-reference', { pattern: '(\\w)\\1' }, 'native'],
  ['back-reference, case-insensitive', { pattern: 'f(o)\\1 ', caseSensitive: false }, 'native'],
  // JavaScript matches a reference to a group that did not match as empty
  // (and look-behinds right to left), the native engine not at all: refused up front.
  ['back-reference to an unset group', { pattern: '(q)?zz\\1 ' }, 'fallback'],
  ['back-reference in a look-behind', { pattern: '(?<=(o)\\1)b' }, 'fallback'],
  // Annex B's \8 is an "8" in JavaScript; the native rewrite refuses it.
  ['Annex B \\8', { pattern: 'one \\8\\b' }, 'fallback'],
  ['^ anchor', { pattern: '^word' }, 'native'],
  ['$ anchor, and on CRLF', { pattern: 'foobaz$|end$' }, 'native'],
  ['\\r$ on CRLF', { pattern: 'end\\r$' }, 'native'],
  ['.$ on CRLF', { pattern: 'line.$' }, 'native'],
  ['\\bword\\b', { pattern: '\\bword\\b' }, 'native'],
  ['empty match x*', { pattern: 'x*' }, 'native'],
  ['nonexistent path', { pattern: 'foo', path: 'nope/missing' }, 'none'],
  ['\\s and a no-break space', { pattern: 'nbsp:\\s' }, 'native'],
  ['\\s and the BOM', { pattern: '^\\s*import' }, 'native'],
  ['\\p{L} without the u flag', { pattern: '\\p{L}' }, 'native'],
  ['U+FFFD of invalid UTF-8', { pattern: '\\uFFFD' }, 'native'],
  // The native engine folds case by Unicode's simple folding (K, ſ, ẞ),
  // JavaScript without `u` by toUpperCase within the BMP: the hook checks
  // each native match with Mastra's RegExp and falls back when one is not
  // JavaScript's.
  ['case-insensitive Kelvin sign', { pattern: 'kelvin', caseSensitive: false }, 'fallback'],
  ['case-insensitive long s', { pattern: 'secret', caseSensitive: false }, 'fallback'],
  ['case-insensitive sharp s', { pattern: 'ß', caseSensitive: false }, 'fallback'],
  // Beyond U+FFFF, JavaScript sees two UTF-16 units: the native side
  // matches the same units (stand-ins for surrogates), so `.` is half an
  // emoji there too, and a class or a quantifier takes one unit.
  ['case-insensitive Deseret', { pattern: '\u{10428}', caseSensitive: false }, 'native'],
  ['^.$ and an emoji', { pattern: '^.$' }, 'native'],
  ['^..$ and an emoji', { pattern: '^..$' }, 'native'],
  ['.x after an emoji', { pattern: '.x marks' }, 'native'],
  ['an emoji in a class', { pattern: '[😀]' }, 'native'],
  ['an emoji quantified', { pattern: '^😀{2}' }, 'native'],
  ['a lone surrogate escape', { pattern: '\\uD83D' }, 'native'],
  // Only a miss (the one line is "😀"): nothing to check.
  ['^..$, an emoji line alone', { pattern: '^..$', path: 'src/emoji' }, 'native'],
  // Mastra's walk of '' reads '/src/...' (outside the base: read errors); the hook leaves it to that walk.
  ['path ""', { pattern: 'foo', path: '' }, 'fallback'],
  // Under a root .gitignore Mastra tests `src/./a.ts` against its rules as written: its walk answers.
  ['path src/.', { pattern: 'foo', path: 'src/.' }, 'fallback'],
  ['path src/../src', { pattern: 'foo', path: 'src/../src' }, 'fallback'],
  ['contextLines 3 and maxCount 2', { pattern: 'hit', contextLines: 3, maxCount: 2 }, 'native'],
  ['contextLines -1', { pattern: 'hit', contextLines: -1 }, 'native'],
  ['maxCount 1.5', { pattern: 'foo', maxCount: 1.5 }, 'native'],
  ['the 100k line as context', { pattern: 'before|after', contextLines: 1 }, 'native'],
  ['^$ on empty lines', { pattern: '^$' }, 'native'],
  ['\\n never in a line', { pattern: 'foo\\n' }, 'native'],
  ['\\d+ and \\D', { pattern: 'one \\d+\\D*$', maxCount: 2 }, 'native'],
  ['many alternatives', { pattern: Array.from({ length: 120 }, (_, i) => `word${i}x`).join('|') + '|wordy' }, 'native'],
  ['line separators and \\s', { pattern: '(?:sep|nel|vt)\\shere' }, 'native'],
  ['. and U+2028', { pattern: 'sep.here' }, 'native'],
  ['named back-reference', { pattern: '(?<q>z)\\k<q>' }, 'fallback'],
  ['an unreadable file (broken link)', { pattern: 'foo', path: 'broken' }, 'fallback'],
]

const config = (basePath) => ({
  filesystem: new mastra.LocalFilesystem({ basePath }),
  bm25: true,
  autoIndexPaths: ['src'],
  // The whole output, not Mastra's first ~2000 tokens.
  tools: { mastra_workspace_grep: { maxOutputTokens: 1e9 } },
})

const text = (output) => (typeof output?.value === 'string' ? output.value : JSON.stringify(output))

/** The grep() options Mastra's tool passes for `args` (as createGrepTool builds them). */
function hookKey({ pattern, path: p = '.', contextLines = 0, maxCount, caseSensitive = true, includeHidden = false }) {
  const searchPath = mastra.isGlobPattern(p) ? mastra.extractGlobBase(p) : p
  return JSON.stringify([pattern, searchPath, caseSensitive, includeHidden, maxCount, Math.max(0, Math.floor(contextLines))])
}

/**
 * Runs the cases through a Mastra Agent over `workspace`: one model step
 * per expectation ('native', 'fallback', 'none'), all its cases as tool
 * calls of that step. Returns each case's output, what the grep() hook did
 * (by its options) and the files Mastra's walk read in each step.
 */
async function runTool(workspace, cases) {
  const filesystem = workspace.filesystem
  const hookCalls = new Map()
  const reads = { native: [], fallback: [], none: [] }
  let current
  const hook = Object.prototype.hasOwnProperty.call(filesystem, 'grep') ? filesystem.grep : undefined
  if (hook) {
    Object.defineProperty(filesystem, 'grep', {
      configurable: true,
      writable: true,
      enumerable: false,
      value: async function grep(options) {
        const { pattern, path: p, caseSensitive, includeHidden, maxCountPerFile, contextLines } = options
        const key = JSON.stringify([pattern, p, caseSensitive, includeHidden, maxCountPerFile, contextLines])
        const log = hookCalls.get(key) ?? []
        hookCalls.set(key, log)
        assert.equal(options.maxTotalMatches, 1000)
        try {
          const answer = await hook.call(this, options)
          log.push('native')
          return answer
        } catch (err) {
          log.push(`threw ${err?.name}: ${err?.message}`)
          throw err
        }
      },
    })
  }
  const readFile = filesystem.readFile
  filesystem.readFile = function (p, o) {
    if (p !== '.gitignore') reads[current].push(p)
    return readFile.call(this, p, o)
  }
  const groups = ['native', 'fallback', 'none']
  const steps = groups.map((g) => cases.flatMap(([, args, expected], i) => (expected === g ? [call(`c${i}`, 'mastra_workspace_grep', args)] : [])))
  const { model, results } = scriptedModel(steps)
  let step = 0
  for (const method of ['doStream', 'doGenerate']) {
    const original = model[method]
    model[method] = (options) => {
      current = groups[step++] ?? 'none'
      return original.call(model, options)
    }
  }
  try {
    const agent = new Agent({ id: 'grepper', name: 'grepper', instructions: 'Grep the workspace.', model, workspace })
    const out = await agent.generate('Grep.', { maxSteps: steps.length + 2 })
    assert.equal(out.text, 'done')
  } finally {
    delete filesystem.readFile
    if (hook) Object.defineProperty(filesystem, 'grep', { value: hook, configurable: true, writable: true, enumerable: false })
  }
  return {
    outputs: cases.map((_, i) => text(results[`c${i}`])),
    hook: (args) => hookCalls.get(hookKey(args)) ?? [],
    reads,
  }
}

/** The differing lines of two outputs, for a readable failure. */
function difference(want, got) {
  const x = want.split('\n')
  const y = got.split('\n')
  const lines = []
  for (let i = 0; i < Math.max(x.length, y.length) && lines.length < 6; i++) {
    if (x[i] !== y[i]) lines.push(`line ${i + 1}: mastra ${JSON.stringify(x[i])?.slice(0, 200)}, ours ${JSON.stringify(y[i])?.slice(0, 200)}`)
  }
  return lines.join('\n')
}

/** One subtest per case: the same output as Mastra's, answered as expected. */
async function compare(t, label, cases, want, got) {
  // The native step read nothing but .gitignore: every file was the hook's.
  await t.test(`${label}: Mastra’s walk read no file in the native cases`, () => assert.deepEqual(got.reads.native, []))
  for (const [i, [name, args, expected]] of cases.entries()) {
    await t.test(`${label}: ${name} ${JSON.stringify(args).slice(0, 80)}`, () => {
      assert.ok(got.outputs[i] === want.outputs[i], `outputs differ:\n${difference(want.outputs[i], got.outputs[i])}`)
      // (Cases whose hook options are the same, e.g. a glob and its folder, share a log.)
      const hook = got.hook(args)
      if (expected === 'none') assert.deepEqual(hook, [], 'the tool does not call the hook')
      else assert.ok(hook.length > 0, 'the tool called the hook')
      if (expected === 'native') assert.deepEqual(hook.filter((h) => h !== 'native'), [], 'the hook answered')
      if (expected === 'fallback') assert.deepEqual(hook.filter((h) => !h.startsWith('threw ')), [], 'the hook threw')
    })
  }
  if (cases.some(([, , e]) => e === 'fallback')) assert.ok(got.reads.fallback.length > 0, 'the fallback cases were read by Mastra’s walk')
}

async function workspaces(t, basePath) {
  const theirs = new mastra.Workspace(config(basePath))
  const mine = new ours.Workspace(config(basePath))
  t.after(() => Promise.all([theirs.destroy(), mine.destroy()]))
  await Promise.all([theirs.init(), mine.init()])
  return { theirs, mine }
}

test('mastra_workspace_grep: the same output over Mastra’s Workspace and ours, the native hook answering', async (t) => {
  const basePath = fixture(t)
  const { theirs, mine } = await workspaces(t, basePath)
  assert.equal(typeof mine.filesystem.grep, 'function')
  assert.equal(Object.prototype.propertyIsEnumerable.call(mine.filesystem, 'grep'), false)
  assert.equal(theirs.filesystem.grep, undefined)

  const want = await runTool(theirs, CASES)
  // Mastra's own walk read the files (it has no hook).
  assert.ok(want.reads.native.length > 10)
  const out = (name) => want.outputs[CASES.findIndex(([n]) => n === name)]
  // The cases say what they are meant to.
  assert.match(out('over 1000 matches'), /^1000 matches across 2 files \(truncated at 1000\)/)
  assert.match(out('maxCount 600, past the 1000 cap'), /^1000 matches across 2 files \(truncated at 1000\)/)
  assert.match(out('empty match x*'), /^1000 matches .* \(truncated at 1000\)/)
  assert.match(out('the 100k line, past 500'), /^\.\/src\/big\.txt:2:89314: z{300} needle100k y+\.\.\.$/m)
  assert.match(out('contextLines 2, overlapping hunks'), /ctx\.md:1- line 1\n(.*\n){5}.*ctx\.md:7- line 7\n--\n/)
  assert.match(out('in an ignored folder'), /debug\.log/)
  assert.match(out('an ignored folder, other case'), /trace\.log/)
  assert.match(out('invalid regex'), /^Error: Invalid regex pattern/)
  assert.match(out('1,001 characters'), /^Error: Pattern too long/)
  assert.match(out('nonexistent path'), /target path not found/)
  assert.match(out('nested .gitignore'), /nested\/readme\.md/)
  assert.match(out('literal'), /\.\/src\/A\.ts.*\n.*\.\/src\/B\.ts.*\n.*\.\/src\/a\/x\.ts.*\n.*\.\/src\/a-b\.ts.*\n.*\.\/src\/a\.ts/)
  assert.doesNotMatch(out('literal'), /linkdir|\.hidden|\.cache|\.config|\.git\/|image\.png|data\.bin|secret\.ts|app\.log|dist\/|Logs\//)
  assert.match(out('literal'), /\.\/src\/link\.ts:1:10:/)
  assert.match(out('includeHidden'), /\.\/src\/\.cache\/c\.ts.*\n(.*\n)*\.\/src\/\.hidden\.ts/)
  assert.doesNotMatch(out('includeHidden'), /linkdir|\.git\/|image\.png|data\.bin|\.env/)
  assert.match(out('U+FFFD of invalid UTF-8'), /bad\.txt:2:1: \uFFFD bad ff\n.*bad\.txt:3:1: \uFFFD truncated\n.*bad\.txt:4:1: \uFFFD{3} surrogate/)
  assert.match(out('\\r$ on CRLF'), /crlf\.txt:2:6: word end\r$/m)
  assert.match(out('^..$, an emoji line alone'), /^1 match across 1 file/)
  assert.match(out('back-reference in a look-behind'), /lookbehind\.md:1:3: xob/)
  assert.match(out('Annex B \\8'), /m1\.txt:8:7: match one 8$/m)

  // Twice: the first grep builds the native trigram index, the second prunes files with it.
  await compare(t, 'cold', CASES, want, await runTool(mine, CASES))
  await compare(t, 'warm', CASES, want, await runTool(mine, CASES))
})

test('an edit on disk is seen by the next grep, as Mastra’s walk sees it', async (t) => {
  const basePath = fixture(t)
  const { theirs, mine } = await workspaces(t, basePath)
  const cases = [
    ['foo', { pattern: 'foo' }, 'native'],
    ['qux', { pattern: 'qux|added' }, 'native'],
    ['qux with context', { pattern: 'qux', contextLines: 1, path: 'src' }, 'native'],
  ]
  const before = await runTool(theirs, cases)
  // Twice: the second grep answers from the trigram index (every time an hour back: kept).
  await compare(t, 'before', cases, before, await runTool(mine, cases))
  await compare(t, 'before, indexed', cases, before, await runTool(mine, cases))

  // The same size with a new time, a longer file, a new file, a removed file.
  const later = new Date(Date.now() - 1800_000)
  const index = path.join(basePath, 'src/index.ts')
  const edited = fs.readFileSync(index, 'utf8').replaceAll('foo', 'qux')
  assert.equal(edited.length, FILES['src/index.ts'].length)
  fs.writeFileSync(index, edited)
  fs.appendFileSync(path.join(basePath, 'src/util.js'), 'qux appended\n')
  fs.writeFileSync(path.join(basePath, 'src/lib/added.ts'), 'export const added = "qux foo"\n')
  fs.rmSync(path.join(basePath, 'src/a.ts'))
  for (const f of ['src/index.ts', 'src/util.js', 'src/lib/added.ts']) fs.utimesSync(path.join(basePath, f), later, later)

  const after = await runTool(theirs, cases)
  assert.notEqual(after.outputs[0], before.outputs[0])
  assert.match(after.outputs[1], /\.\/src\/index\.ts:1:10: import \{ qux \}/)
  assert.match(after.outputs[1], /\.\/src\/lib\/added\.ts:1:14: export const added/)
  assert.match(after.outputs[1], /\.\/src\/util\.js:2:1: qux appended/)
  assert.doesNotMatch(after.outputs[0], /src\/a\.ts/)
  await compare(t, 'after', cases, after, await runTool(mine, cases))
  await compare(t, 'after, indexed', cases, after, await runTool(mine, cases))
})

test('Workspace#grep of the root entry: results, errors, a FIFO, the base, destroy()', async (t) => {
  const basePath = tree(t, {
    'src/a.ts': 'a foo\n😀x foo\nline\n',
    'src/b.md': 'nothing\n',
    'src/i.png': 'foo in a png\n',
    'top.ts': 'foo at the top\n',
  })
  const ws = new Workspace({ filesystem: { basePath } })
  t.after(() => ws.destroy())

  await t.test('results: paths relative to basePath, 1-based lines, 0-based UTF-16 columns', async () => {
    assert.deepEqual(await ws.grep('foo'), [
      { path: 'src/a.ts', matches: [{ line: 1, column: 2, text: 'a foo' }, { line: 2, column: 4, text: '😀x foo' }] },
      { path: 'top.ts', matches: [{ line: 1, column: 0, text: 'foo at the top' }] },
    ])
    const [file] = await ws.grep('x', { path: 'src', contextLines: 1, maxCount: 1 })
    assert.deepEqual(file, { path: 'src/a.ts', matches: [{ line: 2, column: 2, text: '😀x foo', before: ['a foo'], after: ['line'] }] })
    assert.deepEqual((await ws.grep('FOO', { caseSensitive: false, path: 'src/*.ts' })).map((f) => f.path), ['src/a.ts'])
    assert.deepEqual((await ws.grep('foo', { allFiles: true, path: 'src' })).map((f) => f.path), ['src/a.ts', 'src/i.png'])
  })

  await t.test('an invalid pattern is a SyntaxError, as new RegExp throws it', async () => {
    await assert.rejects(ws.grep('('), (err) => err instanceof SyntaxError && /Invalid regular expression/.test(err.message))
    await assert.rejects(ws.grep('a', { caseSensitive: false, nope: 1 }), TypeError)
  })

  await t.test('a pattern the native engine cannot match as JavaScript does: UnsupportedGrepPatternError', async () => {
    // Annex B escapes (JavaScript: "8", "\c1" as it is, an octal in a class).
    for (const pattern of ['\\8', '\\c1', '[\\1]']) {
      assert.doesNotThrow(() => new RegExp(pattern))
      await assert.rejects(ws.grep(pattern), (err) => {
        assert.ok(err instanceof UnsupportedGrepPatternError, `${pattern}: ${err}`)
        assert.equal(err.code, 'UNSUPPORTED_GREP_PATTERN')
        assert.equal(err.name, 'UnsupportedGrepPatternError')
        return true
      })
    }
  })

  await t.test('group modifiers (?i:a): unsupported natively where Node.js has them', { skip: regexModifiers() ? false : 'this Node.js has no RegExp modifiers' }, async () => {
    await assert.rejects(ws.grep('(?i:a)'), UnsupportedGrepPatternError)
  })

  await t.test('an unknown option is a TypeError, a bad one a RangeError', async () => {
    await assert.rejects(ws.grep('foo', { nope: true }), { name: 'TypeError', message: /Unknown option 'nope' in grep options/ })
    await assert.rejects(ws.grep('foo', { maxCount: 0 }), RangeError)
    await assert.rejects(ws.grep(5), TypeError)
  })

  await t.test('a path leaving basePath is refused', async () => {
    for (const p of ['../x', 'src/../../x', '/etc']) await assert.rejects(ws.grep('foo', { path: p }), { name: 'RangeError', message: /inside basePath/ })
    await assert.rejects(ws.grep('foo', { path: 'missing' }), /no such file or folder/)
  })

  await t.test('a FIFO in the tree is skipped and does not block', { skip: mkfifo(path.join(basePath, 'src/pipe.ts')) }, async () => {
    const fifo = path.join(basePath, 'src/pipe.ts')
    let timer
    const hung = new Promise((resolve) => {
      timer = setTimeout(() => resolve('hung'), 5000)
    })
    const found = await Promise.race([ws.grep('foo', { path: 'src' }), hung])
    clearTimeout(timer)
    if (found === 'hung') fs.writeFileSync(fifo, 'unblock') // lets a blocked read end
    assert.deepEqual(found.map((f) => f.path), ['src/a.ts'])
    assert.deepEqual((await ws.grep('foo', { path: 'src', allFiles: true })).map((f) => f.path), ['src/a.ts', 'src/i.png'])
  })

  // Not a file that could not be read, but no file at all (walk.rs leaves
  // FIFOs, sockets and devices out): strict, as Mastra's hook asks, answers.
  await t.test('a FIFO is no unreadable file to strict', { skip: fs.existsSync(path.join(basePath, 'src/pipe.ts')) ? false : 'no FIFO' }, async () => {
    assert.deepEqual((await ws.grep('foo', { path: 'src', strict: true })).map((f) => f.path), ['src/a.ts'])
    assert.deepEqual((await ws.grep('foo', { path: 'src', strict: true, allFiles: true })).map((f) => f.path), ['src/a.ts', 'src/i.png'])
  })

  await t.test('an unreadable file: skipped, or a rejection with strict', async () => {
    fs.symlinkSync('/nonexistent/target', path.join(basePath, 'src/broken.ts'))
    assert.deepEqual((await ws.grep('foo', { path: 'src' })).map((f) => f.path), ['src/a.ts'])
    await assert.rejects(ws.grep('foo', { path: 'src', strict: true }), /could not be read.*\(strict\)/)
    fs.rmSync(path.join(basePath, 'src/broken.ts'))
  })

  await t.test('rejects after destroy()', async () => {
    const other = new Workspace({ filesystem: { basePath } })
    assert.equal((await other.grep('foo')).length, 2)
    await other.destroy()
    await assert.rejects(other.grep('foo'), { name: 'WorkspaceNotReadyError' })
  })
})

function regexModifiers() {
  try {
    new RegExp('(?i:a)')
    return true
  } catch {
    return false
  }
}

/** Makes a FIFO at `p`; a skip reason when it cannot. */
function mkfifo(p) {
  try {
    execFileSync('mkfifo', [p])
    return false
  } catch (err) {
    return `no mkfifo: ${err.message}`
  }
}

test('mastra_workspace_grep: names that are not ASCII under root .gitignore rules that count characters, and a pattern holding a lone surrogate, answer as Mastra’s (a file was dropped; the pattern read as U+FFFD found nothing)', async (t) => {
  const files = { 'é.ts': 'needle\n', 'é/f.ts': 'needle\n', '😀.ts': 'needle\n', '😀/f.ts': 'needle\n', 'ab/f.ts': 'needle\n', 'ab/g.ts': '\u{10428}todo needle\n', '.gitignore': '?\n[!a]?.ts\n' }
  const basePath = tree(t, files)
  const { theirs, mine } = await workspaces(t, basePath)
  const cases = [
    ['non-ASCII names', { pattern: 'needle' }, 'native'],
    ['a lone surrogate', { pattern: '\udc28' }, 'fallback'],
  ]
  const want = await runTool(theirs, cases)
  assert.match(want.outputs[0], /\.\/é\.ts/, 'Mastra keeps é.ts')
  assert.match(want.outputs[1], /^1 match/, 'Mastra matches half of the pair')
  await compare(t, 'unicode', cases, want, await runTool(mine, cases))
})

test('mastra_workspace_grep: a file or folder not named in UTF-8 is a read error, as in Mastra (the native walk left it out silently): the hook throws and Mastra’s walk answers', { skip: process.platform !== 'linux' }, async (t) => {
  const basePath = tree(t, { 'a.ts': 'needle here\n', 'ok/b.ts': 'needle there\n' })
  const raw = (...parts) => Buffer.concat([Buffer.from(basePath + '/'), ...parts.map((p) => Buffer.from(p))])
  fs.writeFileSync(raw('b', [0xff], '.ts'), 'needle too\n')
  fs.mkdirSync(raw('d', [0xfe]))
  fs.writeFileSync(raw('d', [0xfe], '/in.ts'), 'needle inside\n')
  const { theirs, mine } = await workspaces(t, basePath)
  const cases = [
    ['the whole tree', { pattern: 'needle' }, 'fallback'],
    ['a folder without such names', { pattern: 'needle', path: 'ok' }, 'native'],
  ]
  const want = await runTool(theirs, cases)
  assert.match(want.outputs[0], /paths? skipped: read error/, 'Mastra reports them')
  await compare(t, 'not UTF-8', cases, want, await runTool(mine, cases))
})

test('mastra_workspace_grep: a searched folder Mastra ignores by folding the case of a letter beyond ASCII turns the root .gitignore off, as in Mastra (the native walk kept it on and lost files)', async (t) => {
  const basePath = tree(t, { 'é/a.log': 'needle\n', 'é/b.ts': 'needle\n', 'x/é/c.log': 'needle\n', '.gitignore': 'É/\n*.log\n' })
  const { theirs, mine } = await workspaces(t, basePath)
  const cases = [
    ['the folder itself', { pattern: 'needle', path: 'é' }, 'native'],
    ['a folder below', { pattern: 'needle', path: 'x/é' }, 'native'],
    ['the whole tree', { pattern: 'needle' }, 'native'],
  ]
  const want = await runTool(theirs, cases)
  assert.match(want.outputs[0], /^2 matches/, 'Mastra searches é with the .gitignore off')
  await compare(t, 'folding', cases, want, await runTool(mine, cases))
})

test('mastra_workspace_grep: braces in the root .gitignore name themselves, as in git and Mastra (they were alternatives: files dropped); a folder re-included under an ignored one stays ignored, so the rules go off for its search as in Mastra (a file was lost)', async (t) => {
  for (const [label, files, cases] of [
    ['braces', { '.gitignore': '*.py{}\n/{a,b}\n{x,y}.md\n', 'pkg/mod.py': 'needle = 1\n', 'a/f.md': 'needle a\n', 'b/f.md': 'needle b\n', 'x.md': 'needle x\n', '{x,y}.md': 'needle literal\n' },
      [['braces read literally', { pattern: 'needle' }, 'native']]],
    ['re-included', { '.gitignore': 'dist/\n!dist/sub/\n*.log\n', 'dist/sub/a.md': 'needle a\n', 'dist/sub/app.log': 'needle log\n', 'top.log': 'needle top\n' },
      [['the folder', { pattern: 'needle', path: 'dist/sub' }, 'native'], ['a glob in it', { pattern: 'needle', path: 'dist/sub/*.log' }, 'native']]],
    // Mastra tests `src//n.txt` and `dist/./sub/app.log` against the rules as written: its walk answers.
    ['spelled with // or /.', { '.gitignore': 'src/*.txt\ndist/\n*.log\n', 'src/n.txt': 'needle n\n', 'src/ok.md': 'needle ok\n', 'dist/sub/app.log': 'needle log\n' },
      [['a doubled slash', { pattern: 'needle', path: 'src//' }, 'fallback'], ['a dot segment', { pattern: 'needle', path: 'dist/.' }, 'fallback']]],
  ]) {
    const basePath = tree(t, files)
    const { theirs, mine } = await workspaces(t, basePath)
    const want = await runTool(theirs, cases)
    assert.ok(want.outputs.every((o) => !o.startsWith('0 matches')), want.outputs.join('\n'))
    await compare(t, label, cases, want, await runTool(mine, cases))
  }
})
