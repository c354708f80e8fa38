// transformers.js (its browser build, onnxruntime-web inside) decoding GPT-2 as this engine's
// bench.js does: for each prompt length P, a warm-up generation per sampling setting, then ROUNDS
// rounds of `generate` with TOKENS new tokens, greedy and with the demo's sampling. Prefill is the
// time to the first token (generate's call to the streamer's second put: the first is the prompt),
// decode the time from the first token to the last divided by TOKENS - 1 (and the median gap beside
// it). The prompt is the native bench's ids, (i * 7919 + 464) % vocab; end-of-text never stops a
// generation (eos_token_id: null). The model is an ONNX graph made by
// tests/bench/gpu/make_onnx_gpt2.py, served under MODELS (its onnx/model.onnx, onnx/model_fp16.onnx).
// Query: post (1: POST each row to /result, as ../../shared/gpubrowser collects them, and stage=done
// last), module (transformers.js's browser build, default /tfjs/transformers.min.js), wasm (the
// folder of onnxruntime-web's ort-wasm-simd-threaded.asyncify.{mjs,wasm}, default /tfjs/), models
// (the models' folder, default /bench/), model (its name there, default model), device (webgpu;
// wasm to try the page without a GPU), dtypes (comma-separated, each run in turn if it loads;
// default fp16,fp32: fp16 needs WebGPU's shader-f16), prompts, tokens, rounds, sampling
// (comma-separated: greedy, demo).
const query = new URLSearchParams(location.search);
const wasmFolder = query.get('wasm') ?? '/tfjs/';
const transformers = await import(query.get('module') ?? '/tfjs/transformers.min.js');
const { AutoModelForCausalLM, Tensor, env } = transformers;
const { DEMO_SAMPLING } = await import('/demo-settings.js');

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

// generate()'s options for the engine's SAMPLING names (bench.js).
export const SAMPLING = {
  greedy: { do_sample: false },
  demo: {
    do_sample: true,
    temperature: DEMO_SAMPLING.temperature,
    top_k: DEMO_SAMPLING.topK,
    top_p: DEMO_SAMPLING.topP,
    repetition_penalty: DEMO_SAMPLING.repetitionPenalty,
  },
};

async function measure(model, ids, newTokens, sampling) {
  const inputIds = new Tensor('int64', BigInt64Array.from(ids, BigInt), [1, ids.length]);
  const mask = new Tensor('int64', new BigInt64Array(ids.length).fill(1n), [1, ids.length]);
  const times = [];
  let puts = 0;
  const streamer = {
    put() {
      puts += 1;
      if (puts > 1) times.push(performance.now()); // the first put is the prompt
    },
    end() {},
  };
  const start = performance.now();
  const out = await model.generate({
    input_ids: inputIds,
    attention_mask: mask,
    max_new_tokens: newTokens,
    eos_token_id: null,
    streamer,
    ...SAMPLING[sampling],
  });
  const end = performance.now();
  const gaps = times.slice(1).map((t, i) => t - times[i]);
  return {
    prefill_ms: times[0] - start,
    decode_ms_per_token: (times.at(-1) - times[0]) / (times.length - 1),
    decode_ms_median: median(gaps),
    total_ms: end - start,
    tokens_generated: out.dims[1] - ids.length,
    last_token: Number(out.data[out.data.length - 1]),
  };
}

async function adapterInfo() {
  if (!navigator.gpu) return { webgpu: false };
  const adapter = await navigator.gpu.requestAdapter({ powerPreference: 'high-performance' });
  if (!adapter) return { webgpu: true, adapter: null };
  const info = adapter.info ?? {};
  return {
    webgpu: true,
    vendor: info.vendor,
    architecture: info.architecture,
    device: info.device,
    description: info.description,
    shader_f16: adapter.features.has('shader-f16'),
    max_buffer_size: adapter.limits.maxBufferSize,
  };
}

export async function runBench({
  models = '/bench/',
  model: name = 'model',
  device = 'webgpu',
  dtypes = ['fp16', 'fp32'],
  prompts = [32, 256],
  tokens = 16,
  rounds = 3,
  sampling = ['greedy', 'demo'],
  threads = 0,
  report = async () => {},
}) {
  for (const s of sampling) if (!SAMPLING[s]) throw new Error(`sampling: no configuration "${s}"`);
  env.allowRemoteModels = false;
  env.allowLocalModels = true;
  env.localModelPath = models;
  env.useBrowserCache = false;
  env.backends.onnx.wasm.wasmPaths = {
    mjs: `${wasmFolder}ort-wasm-simd-threaded.asyncify.mjs`,
    wasm: `${wasmFolder}ort-wasm-simd-threaded.asyncify.wasm`,
  };
  // 0 keeps onnxruntime-web's own choice (half the cores, at most 4, where the page is isolated).
  if (threads > 0) env.backends.onnx.wasm.numThreads = threads;
  const common = {
    library: 'transformers.js',
    version: env.version,
    device,
    threads: env.backends.onnx.wasm.numThreads ?? 0,
  };
  const rows = [];
  const add = async (row) => {
    rows.push(row);
    await report(row);
  };
  for (const dtype of dtypes) {
    let model;
    const start = performance.now();
    try {
      model = await AutoModelForCausalLM.from_pretrained(name, { device, dtype });
    } catch (error) {
      await add({ kind: 'load-error', ...common, dtype, message: String(error?.message ?? error) });
      continue;
    }
    await add({ kind: 'load', ...common, dtype, load_ms: performance.now() - start });
    const vocab = model.config.vocab_size;
    for (const P of prompts) {
      const ids = Array.from({ length: P }, (_, i) => (i * 7919 + 464) % vocab);
      for (const s of sampling) await measure(model, ids, tokens, s); // warm-up
      for (let round = 0; round < rounds; round += 1) {
        for (const s of sampling) {
          await add({
            kind: 'generate',
            ...common,
            dtype,
            sampling: s,
            prompt_tokens: P,
            new_tokens: tokens,
            round,
            ...(await measure(model, ids, tokens, s)),
          });
        }
      }
    }
    await model.dispose();
  }
  return {
    ...common,
    onnxruntime_web: env.backends.onnx.versions?.web,
    adapter: await adapterInfo(),
    cross_origin_isolated: globalThis.crossOriginIsolated,
    user_agent: navigator.userAgent,
    model: `${models}${name}`,
    rows,
  };
}

if (query.get('post') === '1') {
  const post = (stage, body) => fetch(`/result?stage=${stage}`, { method: 'POST', body: JSON.stringify(body) });
  try {
    await post('adapter', await adapterInfo());
    const result = await runBench({
      models: query.get('models') ?? '/bench/',
      model: query.get('model') ?? 'model',
      device: query.get('device') ?? 'webgpu',
      dtypes: (query.get('dtypes') ?? 'fp16,fp32').split(','),
      prompts: (query.get('prompts') ?? '32,256').split(',').map(Number),
      tokens: Number(query.get('tokens') ?? 16),
      rounds: Number(query.get('rounds') ?? 3),
      sampling: (query.get('sampling') ?? 'greedy,demo').split(','),
      threads: Number(query.get('threads') ?? 0),
      report: (row) => post('row', row),
    });
    await post('summary', result);
  } catch (error) {
    await post('error', { message: String(error?.message ?? error), stack: error?.stack });
  }
  await post('done', {});
}
