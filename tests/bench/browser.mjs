// node tests/bench/browser.mjs --model PATH [--prompt-tokens P] [--new-tokens N] [--weights fp16|fp32] [--profile]
//                              [--half-pairs on|off] [--split-texels N] [--rows-per-fragment N]
// The `gpt2 bench` measurements from headless Chromium (Debian's, WebGL2 over SwiftShader): one JSON
// line with load_ms added, run in the module's worker (the default mode). PATH is a GGUF file or a
// Hugging Face folder; it is served from localhost next to build/site. tests/bench/modes.mjs
// compares worker and same-thread mode through the public API.
import { benchArgs, serveModel } from './bench_args.mjs';
import { startSite } from '../browser/harness.mjs';

const { args, flag, model } = benchArgs(
  'node tests/bench/browser.mjs --model PATH [--prompt-tokens P] [--new-tokens N] [--weights fp16|fp32] [--profile] [--half-pairs on|off] [--split-texels N] [--rows-per-fragment N]',
);
const served = serveModel(model, 'bench-model');
const source = served.source;
const tuning = {};
if (flag('--half-pairs')) tuning.halfPairs = flag('--half-pairs') === 'on';
if (flag('--split-texels')) tuning.splitTexels = Number(flag('--split-texels'));
if (flag('--rows-per-fragment')) tuning.rowsPerFragment = Number(flag('--rows-per-fragment'));

const site = await startSite();
try {
  const page = await site.page();
  const result = await page.evaluate(
    async ({ source, profile, weights, tuning, promptTokens, newTokens }) => {
      const { GPT2 } = await import('/gpt2.js');
      const start = performance.now();
      const m = await GPT2.load(source, { weights, tuning });
      const loadMs = performance.now() - start;
      const r = await m.benchmark({ promptTokens, newTokens, profile });
      await m.dispose();
      return { ...r, load_ms: loadMs, tuning, browser: navigator.userAgent };
    },
    {
      source,
      profile: args.includes('--profile'),
      weights: flag('--weights', 'fp16'),
      tuning,
      promptTokens: Number(flag('--prompt-tokens', 32)),
      newTokens: Number(flag('--new-tokens', 16)),
    },
  );
  console.log(JSON.stringify(result));
} finally {
  await site.close();
  served.remove();
}
