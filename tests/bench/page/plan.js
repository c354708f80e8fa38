// GPT2.gpuBytes of each GGUF file from its header, in the browser on the GPU, beside what the loaded
// model takes (stats().gpuBytes) and the file's later load from the Cache API: how long a plan takes,
// whether it is what the load takes, and how fast the file loads.
// Query: models (URLs, comma-separated), kvCache (fp32 or fp16, default fp32), post (1: POST each
// row to /result, as ../../shared/gpubrowser collects them).
import { postRows } from './posted.js';

const query = new URLSearchParams(location.search);
const { GPT2 } = await import('/gpt2.js');
const options = { kvCache: query.get('kvCache') ?? 'fp32' };

await postRows('plan', async (post) => {
  for (const model of (query.get('models') ?? '').split(',').filter(Boolean)) {
    let start = performance.now();
    const planned = await GPT2.gpuBytes(model, options);
    const planMs = performance.now() - start;
    const loadMs = [];
    let loaded = null;
    let renderer = null;
    for (let visit = 0; visit < 2; visit += 1) {
      start = performance.now();
      const m = await GPT2.load(model, options);
      loadMs.push(Math.round(performance.now() - start));
      ({ gpuBytes: loaded, renderer } = await m.stats());
      await m.dispose();
    }
    await post({
      kind: 'plan',
      model,
      kv_cache: options.kvCache,
      planned,
      loaded,
      plan_ms: Math.round(planMs),
      load_ms: loadMs,
      renderer,
    });
  }
});
