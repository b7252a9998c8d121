// Workspace configurations compared by eval/run.mjs.
export const CONFIGS = {
  // Mastra 1.71's exact tokenization and parameters (checks the harness: SciFact 0.661, CoSQA 0.598).
  mastra: { bm25: { tokenize: { preset: 'mastra' } } },
  // The defaults before this measurement: Mastra's tokenization plus CJK bigrams.
  before: { bm25: { tokenize: { preset: 'mastra', cjkBigrams: true } } },
  // This package's defaults: + English stemming + identifier splitting.
  default: { bm25: true },
}
