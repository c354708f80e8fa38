// The demo's default generation settings, also what the benchmarks time as "the demo's defaults"
// (tests/bench/page/bench.js). Chosen on the bundled model (docs/benchmarks/journal.md, "What users
// run", "The demo's repetition penalty").
export const DEMO_SAMPLING = { temperature: 0.8, topK: 40, topP: 0.95, repetitionPenalty: 1.2 };
// The live views: the logit lens's top 5 at every layer, and one layer's attention.
export const DEMO_LENS_TOP_K = 5;
