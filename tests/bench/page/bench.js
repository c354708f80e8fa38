// Worker mode against same-thread mode through the public API, as a page sees it: prefill is the
// time to the first token of a greedy generation (the prompt's chunks plus one top-1 readback),
// decode the median time between later tokens. Modes alternate, so both see the same machine state.
// Query: model (URL), weights, prompts (comma-separated P), tokens (new tokens), rounds, post
// (1: POST each result to /result, as ../../shared/gpubrowser collects them), module (the module's
// URL, default /gpt2.js: another build of it for an A/B run; one without worker mode runs both
// rounds on the page's thread), live (comma-separated 0/1: generations without and with the live
// views, the logit lens's top 5 and layer 0's attention captured at every position), profile (1:
// after each prompt length's rounds, `benchmark({ profile: true })` in each mode and for each
// sampling configuration made of sampling options alone, as a row of kind 'benchmark' with its
// per-pass profile), tuning (JSON: the load's `tuning` option, e.g.
// {"maxColorBits":512}), sampling (comma-separated names of SAMPLING: what each generation samples
// with, steer-ablate for interventions, or json-schema for constrained output; default greedy), modes (comma-separated worker, same-thread: default both). Each generation's row has its passes per token: the draws of the steps
// after the first token, from stats().passDraws.
const query = new URLSearchParams(location.search);
const { GPT2 } = await import(query.get('module') ?? '/gpt2.js');
const { DEMO_SAMPLING, DEMO_LENS_TOP_K } = await import('/demo-settings.js');

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

// lensPositions (query): the live lens's prompt positions, where not the module's default.
const LIVE_VIEWS = {
  lensTopK: DEMO_LENS_TOP_K,
  attentionLayer: 0,
  ...(query.get('lensPositions') ? { lensPositions: Number(query.get('lensPositions')) } : {}),
};
// What users run beside greedy: the demo's defaults, the demo's former defaults (no repetition
// penalty), and temperature or a repetition penalty alone.
export const SAMPLING = {
  greedy: {},
  demo: { ...DEMO_SAMPLING, seed: 1 },
  'topk-topp': { temperature: 0.8, topK: 40, topP: 0.95, seed: 1 },
  temperature: { temperature: 0.8, seed: 1 },
  penalty: { repetitionPenalty: 1.2 },
  // Greedy JSON of a schema (an array of at least three objects): what a constraint costs a step. A
  // run may end early where the model closes the array (its row says how many tokens came).
  'json-schema': {
    jsonSchema: {
      type: 'array',
      minItems: 3,
      items: {
        type: 'object',
        properties: { name: { type: 'string', maxLength: 24 }, n: { type: 'integer' } },
        required: ['name', 'n'],
      },
    },
  },
  // Greedy with a steering vector and an ablated head: what interventions cost a step.
  'steer-ablate': (config) => ({
    interventions: [
      {
        steer: {
          layer: config.n_layer >> 1,
          vector: Float32Array.from({ length: config.n_embd }, (_, i) => Math.sin(i)),
          scale: 4,
        },
      },
      { ablateHead: { layer: config.n_layer - 1, head: 1 } },
    ],
  }),
};

async function measure(model, prompt, newTokens, live = false, sampling = 'greedy') {
  const options = {
    maxNewTokens: newTokens,
    stopAtEndOfText: false,
    ...(typeof SAMPLING[sampling] === 'function' ? SAMPLING[sampling](model.config) : SAMPLING[sampling]),
    ...(live ? LIVE_VIEWS : {}),
  };
  const start = performance.now();
  const times = [];
  let drawsAtFirst = 0;
  for await (const t of model.generate(prompt, options)) {
    void t;
    times.push(performance.now());
    if (times.length === 1) drawsAtFirst = (await model.stats()).passDraws;
  }
  const draws = (await model.stats()).passDraws - drawsAtFirst;
  const gaps = times.slice(1).map((t, i) => t - times[i]);
  return {
    tokens: times.length,
    prefill_ms: times[0] - start,
    decode_ms_per_token: median(gaps),
    passes_per_token: draws / (times.length - 1),
  };
}

export async function runBench({
  model: source,
  weights = 'fp16',
  prompts = [32, 256],
  tokens = 16,
  rounds = 3,
  live = [false],
  sampling = ['greedy'],
  workers = [true, false],
  profile = false,
  tuning = {},
  report = () => {},
}) {
  for (const name of sampling)
    if (!SAMPLING[name])
      throw new Error(`sampling: no configuration "${name}" (known: ${Object.keys(SAMPLING).join(', ')})`);
  const models = {};
  const rows = [];
  for (const worker of workers) {
    const start = performance.now();
    models[worker] = await GPT2.load(source, { weights, worker, tuning });
    rows.push({ kind: 'load', worker, load_ms: performance.now() - start });
  }
  const stats = await models[workers[0]].stats(); // a Promise since worker mode; a plain object before
  const vocab = models[workers[0]].config.vocab_size;
  for (const P of prompts) {
    const prompt = Array.from({ length: P }, (_, i) => (i * 7919 + 13) % vocab);
    for (const views of live) {
      // warm-up: every program has run once
      for (const name of sampling) for (const worker of workers) await measure(models[worker], prompt, 2, views, name);
    }
    for (let round = 0; round < rounds; round += 1) {
      for (const worker of workers) {
        for (const views of live) {
          for (const name of sampling) {
            const row = {
              kind: 'generate',
              worker,
              live: views,
              sampling: name,
              prompt_tokens: P,
              new_tokens: tokens,
              round,
              module: query.get('module') ?? '/gpt2.js',
              tuning,
              ...(await measure(models[worker], prompt, tokens, views, name)),
            };
            rows.push(row);
            await report(row);
          }
        }
      }
    }
    // A profile per sampling configuration that benchmark() takes (its sampling options alone).
    const profiled = sampling.filter((name) => typeof SAMPLING[name] === 'object' && !SAMPLING[name].jsonSchema);
    for (const worker of profile ? workers : []) {
      for (const name of profiled) {
        const { seed, temperature, topK, topP, repetitionPenalty } = SAMPLING[name];
        const row = {
          kind: 'benchmark',
          worker,
          sampling: name,
          ...(await models[worker].benchmark({
            promptTokens: P,
            newTokens: tokens,
            profile: true,
            seed,
            temperature,
            topK,
            topP,
            repetitionPenalty,
          })),
        };
        rows.push(row);
        await report(row);
      }
    }
  }
  for (const model of Object.values(models)) await model.dispose();
  return {
    mode: models[workers[0]].mode,
    renderer: stats.renderer,
    color_bits: stats.colorBits,
    weights,
    model: source,
    module: query.get('module') ?? '/gpt2.js',
    tuning,
    user_agent: navigator.userAgent,
    rows,
  };
}

if (query.get('post') === '1') {
  const post = (stage, body) => fetch(`/result?stage=${stage}`, { method: 'POST', body: JSON.stringify(body) });
  try {
    const result = await runBench({
      model: query.get('model'),
      weights: query.get('weights') ?? 'fp16',
      prompts: (query.get('prompts') ?? '32,256').split(',').map(Number),
      tokens: Number(query.get('tokens') ?? 16),
      rounds: Number(query.get('rounds') ?? 3),
      live: (query.get('live') ?? '0').split(',').map((v) => v === '1'),
      sampling: (query.get('sampling') ?? 'greedy').split(','),
      workers: (query.get('modes') ?? 'worker,same-thread').split(',').map((m) => m === 'worker'),
      profile: query.get('profile') === '1',
      tuning: JSON.parse(query.get('tuning') ?? '{}'),
      report: (row) => post('row', row),
    });
    await post('summary', result);
  } catch (error) {
    await post('error', { message: error.message, stack: error.stack });
  }
  await post('done', {});
}
