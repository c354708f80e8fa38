// node tests/bench/cache_load.mjs --model PATH [--weights fp16|fp32] [--rounds R]
// Load time of a model on a first visit (cache empty, weights over localhost) against a cached visit
// (weights from the browser's Cache API), in headless Chromium (Debian's, SwiftShader), each visit
// a new page of one browser profile, worker mode. One JSON line per visit and a summary of medians.
import { benchArgs, serveModel } from './bench_args.mjs';
import { startSite } from '../browser/harness.mjs';

const { flag, model } = benchArgs('node tests/bench/cache_load.mjs --model PATH [--weights fp16|fp32] [--rounds R]');
const served = serveModel(model, 'bench-model');
const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const site = await startSite();
try {
  const context = await site.browser.newContext();
  const visit = async (clear) => {
    const page = await context.newPage();
    await page.goto(`${site.url}examples/blank.html`);
    const r = await page.evaluate(
      async ({ source, weights, clear }) => {
        const { GPT2 } = await import('/gpt2.js');
        if (clear) await GPT2.clearCache();
        let last = null;
        const start = performance.now();
        const m = await GPT2.load(source, {
          weights,
          onProgress: (e) => {
            last = e;
          },
        });
        const ms = performance.now() - start;
        await m.dispose();
        return { load_ms: ms, bytes: last.total, from_cache: last.fromCache };
      },
      { source: served.source, weights: flag('--weights', 'fp16'), clear },
    );
    await page.close();
    return r;
  };
  const rows = { first: [], cached: [] };
  for (let round = 0; round < Number(flag('--rounds', 3)); round += 1) {
    const first = await visit(true);
    const cached = await visit(false);
    console.log(JSON.stringify({ round, visit: 'first', ...first }));
    console.log(JSON.stringify({ round, visit: 'cached', ...cached }));
    rows.first.push(first.load_ms);
    rows.cached.push(cached.load_ms);
  }
  console.log(JSON.stringify({ summary: { first_ms: median(rows.first), cached_ms: median(rows.cached) }, model }));
} finally {
  await site.close();
  served.remove();
}
