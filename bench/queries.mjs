// Writes the bench's query set for a corpus, one per line (for the Rust
// top-k example: crates/core/examples/topk.rs).
//   node bench/queries.mjs <files> > queries.txt
import { corpus, documents, queries } from './corpus.mjs'
console.log(queries(documents(corpus(Number(process.argv[2] ?? 50000)))).join('\n'))
