// Engines on the CPU, timed as a page sees them: prefill is the time to the first token of a greedy
// generation (the prompt plus one step), decode the median time between later tokens. Query: runs
// (JSON: [{engine, model, threads}], one after the other; or engine, model and threads for one run),
// where engine is gpt2 (this module with backend 'cpu') or wllama (llama.cpp's CPU path, its WebGPU
// off), model a GGUF URL and threads wllama's n_threads (this module's CPU backend runs a thread
// per core, at most 16, the page being cross-origin isolated: its rows report the count);
// prompts (JSON: texts keyed by their GPT-2 token count, which tests/bench/cpu.mjs and
// tests/bench/gpu/stage_cpu.sh make), tokens (new tokens), rounds, wllama (the URL of wllama's
// esm/index.js), post (1: POST rows to /result, as posted.js does).
import { postRows } from './posted.js';

const query = new URLSearchParams(location.search);
const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

// { prefill_ms, decode_ms_per_token, tokens } from the times at which the tokens of one generation
// arrived, since `start`.
function timed(start, times) {
  const gaps = times.slice(1).map((t, i) => t - times[i]);
  return { prefill_ms: times[0] - start, decode_ms_per_token: median(gaps), tokens: times.length };
}

// The engines: load(model, threads) resolves to { generate(prompt, tokens) -> times, info, dispose }.
const ENGINES = {
  async gpt2(model) {
    const { GPT2 } = await import('/gpt2.js');
    const m = await GPT2.load(model, { backend: 'cpu' });
    return {
      info: { renderer: (await m.stats()).renderer, mode: m.mode },
      async generate(prompt, tokens) {
        const times = [];
        for await (const _ of m.generate(prompt, { maxNewTokens: tokens, stopAtEndOfText: false }))
          times.push(performance.now());
        return { times };
      },
      dispose: () => m.dispose(),
    };
  },
  async wllama(model, threads) {
    const { Wllama } = await import(query.get('wllama'));
    const wasm = new URL('wasm/wllama.wasm', new URL(query.get('wllama'), location.href)).href;
    const w = new Wllama({ default: wasm }, { suppressNativeLog: true });
    await w.loadModelFromUrl(model, { n_gpu_layers: 0, n_threads: threads, n_ctx: 1024 });
    return {
      info: { threads: w.getNumThreads?.(), multiThread: w.isMultithread?.(), crossOriginIsolated },
      async generate(prompt, tokens) {
        const times = [];
        let timings = null;
        const stream = await w.createCompletion({
          prompt,
          max_tokens: tokens,
          temperature: 0,
          ignore_eos: true,
          stream: true,
          cache_prompt: false,
        });
        for await (const chunk of stream) {
          if (chunk.choices?.[0]?.text) times.push(performance.now());
          timings = chunk.timings ?? timings;
        }
        return { times, timings };
      },
      dispose: () => w.exit(),
    };
  },
};

async function runOne(report, { engine: name, model, threads }) {
  const tokens = Number(query.get('tokens') ?? 16);
  const rounds = Number(query.get('rounds') ?? 3);
  const prompts = JSON.parse(query.get('prompts'));
  const start = performance.now();
  const engine = await ENGINES[name](model, threads);
  const row = { engine: name, model, threads };
  await report({ kind: 'load', ...row, load_ms: performance.now() - start, ...engine.info });
  for (const [count, text] of Object.entries(prompts)) {
    await engine.generate(text, 2); // warm-up
    for (let round = 0; round < rounds; round += 1) {
      const begin = performance.now();
      const { times, timings } = await engine.generate(text, tokens);
      await report({
        kind: 'generate',
        ...row,
        prompt_tokens: Number(count),
        new_tokens: tokens,
        round,
        ...timed(begin, times),
        ...(timings ? { own_timings: timings } : {}),
      });
    }
  }
  await engine.dispose();
}

async function run(report) {
  const runs = query.get('runs')
    ? JSON.parse(query.get('runs'))
    : [{ engine: query.get('engine'), model: query.get('model'), threads: Number(query.get('threads') ?? 1) }];
  for (const one of runs) await runOne(report, one);
}

const rows = [];
window.benchDone = (
  query.get('post') === '1' ? postRows('cpu', (post) => run(post)) : run(async (row) => rows.push(row))
)
  .then(() => rows)
  .catch((error) => [...rows, { kind: 'error', error: String(error?.stack ?? error) }]);
