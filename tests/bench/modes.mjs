// node tests/bench/modes.mjs --model PATH [--weights fp16|fp32] [--prompts 32,256] [--tokens N] [--rounds R] [--live 0,1] [--sampling greedy,demo] [--module URL] [--browser firefox]
// Worker mode against same-thread mode in headless Chromium (Debian's, WebGL2 over SwiftShader),
// measured through the public API by tests/bench/page/bench.js: one JSON line per measurement and a
// summary line of medians. --live 0,1 measures generations without and with the live views;
// --sampling names bench.js's SAMPLING configurations (greedy, demo, topk-topp, temperature, penalty);
// --module another build of the module served with the site (an A/B run: e.g. /before/gpt2.js);
// --browser firefox runs Debian's Firefox ESR (WebGL2 over llvmpipe, tests/browser/firefox.mjs). PATH (a GGUF file or a Hugging Face folder) is served from
// localhost beside build/site. On the GPU machine the same page runs through ../shared/gpubrowser
// (tests/bench/gpu/README.md).
import { cpSync } from 'node:fs';
import { basename, join } from 'node:path';
import { benchArgs, serveModel } from './bench_args.mjs';
import { root, startSite } from '../browser/harness.mjs';
import { startFirefox } from '../browser/firefox.mjs';

const { flag, model } = benchArgs(
  'node tests/bench/modes.mjs --model PATH [--weights fp16|fp32] [--prompts 32,256] [--tokens N] [--rounds R] [--live 0,1] [--sampling greedy,demo] [--module URL] [--browser firefox]',
);
const served = serveModel(model, 'bench');
cpSync(join(root, 'tests/bench/page'), served.dir, { recursive: true });
const source = served.source;

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const site = flag('--browser', 'chromium') === 'firefox' ? await startFirefox() : await startSite();
try {
  const module = flag('--module', '');
  const page = await site.page(module ? `bench/bench.html?module=${encodeURIComponent(module)}` : 'bench/bench.html');
  const result = await page.evaluate(async (params) => (await import('/bench/bench.js')).runBench(params), {
    model: source,
    weights: flag('--weights', 'fp16'),
    prompts: flag('--prompts', '32,256').split(',').map(Number),
    tokens: Number(flag('--tokens', 16)),
    rounds: Number(flag('--rounds', 3)),
    live: flag('--live', '0')
      .split(',')
      .map((v) => v === '1'),
    sampling: flag('--sampling', 'greedy').split(','),
  });
  for (const row of result.rows) console.log(JSON.stringify(row));
  const summary = {};
  for (const row of result.rows.filter((r) => r.kind === 'generate')) {
    const key = `${row.worker ? 'worker' : 'same_thread'}_P${row.prompt_tokens}_${row.sampling}${row.live ? '_live' : ''}`;
    summary[key] ??= { prefill_ms: [], decode_ms_per_token: [], passes_per_token: [] };
    summary[key].prefill_ms.push(row.prefill_ms);
    summary[key].decode_ms_per_token.push(row.decode_ms_per_token);
    summary[key].passes_per_token.push(row.passes_per_token);
  }
  const medians = Object.fromEntries(
    Object.entries(summary).map(([k, v]) => [
      k,
      {
        prefill_ms: median(v.prefill_ms),
        decode_ms_per_token: median(v.decode_ms_per_token),
        passes_per_token: median(v.passes_per_token),
      },
    ]),
  );
  console.log(
    JSON.stringify({
      summary: medians,
      renderer: result.renderer,
      weights: result.weights,
      model: basename(model),
      browser: result.user_agent,
    }),
  );
} finally {
  await site.close();
  served.remove();
}
