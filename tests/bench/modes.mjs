// node tests/bench/modes.mjs --model PATH [--weights fp16|fp32] [--prompts 32,256] [--tokens N] [--rounds R]
// Worker mode against same-thread mode in headless Chromium (Debian's, WebGL2 over SwiftShader),
// measured through the public API by tests/bench/page/bench.js: one JSON line per measurement and a
// summary line of medians. PATH (a packed .gpt2 file or a Hugging Face folder) is served from
// localhost beside build/site. On the GPU machine the same page runs through ../shared/gpubrowser
// (tests/bench/gpu/README.md).
import { cpSync, existsSync, mkdirSync, rmSync, symlinkSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import { root, siteDir, startSite } from '../browser/harness.mjs';

const args = process.argv.slice(2);
const flag = (name, fallback) => {
  const at = args.indexOf(name);
  return at >= 0 ? args[at + 1] : fallback;
};
const model = flag('--model');
if (!model || !existsSync(model)) {
  console.error('usage: node tests/bench/modes.mjs --model PATH [--weights fp16|fp32] [--prompts 32,256] [--tokens N] [--rounds R]');
  process.exit(1);
}
const benchDir = join(siteDir, 'bench');
rmSync(benchDir, { recursive: true, force: true });
mkdirSync(benchDir);
cpSync(join(root, 'tests/bench/page'), benchDir, { recursive: true });
symlinkSync(resolve(model), join(benchDir, basename(model)));
const source = `/bench/${basename(model)}${existsSync(join(model, 'config.json')) ? '/' : ''}`;

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const site = await startSite();
try {
  const page = await site.page('bench/bench.html');
  const result = await page.evaluate(async (params) => (await import('/bench/bench.js')).runBench(params), {
    model: source, weights: flag('--weights', 'fp16'), prompts: flag('--prompts', '32,256').split(',').map(Number),
    tokens: Number(flag('--tokens', 16)), rounds: Number(flag('--rounds', 3)),
  });
  for (const row of result.rows) console.log(JSON.stringify(row));
  const summary = {};
  for (const row of result.rows.filter((r) => r.kind === 'generate')) {
    const key = `${row.worker ? 'worker' : 'same_thread'}_P${row.prompt_tokens}`;
    (summary[key] ??= { prefill_ms: [], decode_ms_per_token: [] });
    summary[key].prefill_ms.push(row.prefill_ms);
    summary[key].decode_ms_per_token.push(row.decode_ms_per_token);
  }
  const medians = Object.fromEntries(Object.entries(summary).map(([k, v]) => [k, { prefill_ms: median(v.prefill_ms), decode_ms_per_token: median(v.decode_ms_per_token) }]));
  console.log(JSON.stringify({ summary: medians, renderer: result.renderer, weights: result.weights, model: basename(model), browser: result.user_agent }));
} finally {
  await site.close();
  rmSync(benchDir, { recursive: true, force: true });
}
