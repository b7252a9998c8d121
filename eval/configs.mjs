// Workspace configurations compared by eval/run.mjs.
export const CONFIGS = {
  // Mastra 1.71's exact tokenization and parameters (checks the harness: SciFact 0.661, CoSQA 0.598).
  mastra: { bm25: { tokenize: { cjkBigrams: false } } },
  // This package's defaults.
  default: { bm25: true },
}
CONFIGS.stem = { bm25: { tokenize: { stem: 'english' } } }
CONFIGS.stem_k12 = { bm25: { k1: 1.2, b: 0.75, tokenize: { stem: 'english' } } }
CONFIGS.stem_ident = { bm25: { tokenize: { stem: 'english', splitIdentifiers: true } } }
CONFIGS.stem_ident_fold = { bm25: { tokenize: { stem: 'english', splitIdentifiers: true, foldDiacritics: true } } }
