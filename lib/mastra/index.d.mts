// Types of `import ... from 'workspace-search/mastra'`: the same as for
// `require` (index.d.ts).
export * from './index.js'
