// The module where the browser gives no WebGL at all, as Chrome 144 and later do on a machine without a
// usable GPU (Chromium with --disable-gpu --disable-software-rasterizer): the default load runs on the
// CPU backend, says why once, and gives Hugging Face's logits, greedy tokens, attention, lens and interventions, and
// the float64 forward's logits for every GGUF type, in both modes. Firefox with webgl.disabled runs
// the same checks (firefox.test.mjs).
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { artifactsDir, evaluateCheck, root, startSite, waitForDemoModel } from './harness.mjs';
import {
  assertGgufCheck,
  assertInterventionsCheck,
  assertLensCheck,
  BROKEN_GGUF,
  fixtureCheck,
  ggufCheck,
  ggufFixtures,
  interventionsCheck,
  lensCheck,
} from './page-checks.mjs';

const reference = JSON.parse(readFileSync(join(root, 'tests/fixtures/gpt2-tiny/reference.json'), 'utf8'));
const hiddenStates = JSON.parse(readFileSync(join(root, 'tests/fixtures/gpt2-tiny/hidden_states.json'), 'utf8'));
const interventions = JSON.parse(readFileSync(join(root, 'tests/fixtures/gpt2-tiny/interventions.json'), 'utf8'));
const fixtures = ggufFixtures(root);
let site;
let page;

before(async () => {
  site = await startSite({ webgl: false });
  page = await site.page();
});
after(() => site?.close());

test('without WebGL the default load runs on the CPU in a Worker, and says why once', async () => {
  const r = await page.evaluate(async () => {
    const { GPT2 } = await import('/gpt2.js');
    const warnings = [];
    const out = { textureWarnings: [] };
    const planned = await GPT2.gpuBytes('/models/gpt2-tiny/');
    out.plannedHalfCache = await GPT2.gpuBytes('/models/gpt2-tiny/', { kvCache: 'fp16' });
    const model = await GPT2.load('/models/gpt2-tiny/', {
      onProgress: ({ warning }) => warning && warnings.push(warning),
    });
    const again = await GPT2.load('/models/gpt2-tiny/', {
      worker: false,
      weights: 'int8',
      kvCache: 'fp16',
      onProgress: ({ warning }) => warning && out.textureWarnings.push(warning),
    });
    Object.assign(out, { mode: model.mode, sameThread: again.mode, warnings, planned, stats: await model.stats() });
    await Promise.all([model.dispose(), again.dispose()]);
    out.forced = await GPT2.load('/models/gpt2-tiny/', { backend: 'webgl' }).then(
      () => 'loaded',
      (e) => `${e.name}: ${e.message}`,
    );
    return out;
  });
  assert.equal(r.mode.backend, 'cpu');
  assert.equal(r.mode.worker, true);
  assert.equal(r.mode.canvas, null);
  assert.match(r.mode.backendReason, /^no usable WebGL2: this browser gives an? \w+ no WebGL2 context/);
  assert.equal(r.sameThread.backend, 'cpu');
  assert.equal(r.sameThread.worker, false);
  // Said once, in an event of its own.
  assert.deepEqual(r.warnings, [`the model runs on the CPU: ${r.mode.backendReason}`]);
  assert.equal(r.stats.backend, 'cpu');
  assert.match(r.stats.renderer, /^CPU \(WebAssembly SIMD, \d+ threads?\)$/);
  assert.equal(r.planned, r.stats.gpuBytes, 'the plan is what the loaded model takes');
  assert.match(r.forced, /^WebGL2UnavailableError: /);
  // A texture format asked of the CPU backend is said, after why the CPU runs; kvCache applies there.
  assert.deepEqual(r.textureWarnings.slice(1), [
    "weights chooses WebGL2's texture formats; the CPU backend keeps the weights as the file stores them",
  ]);
  // gpt2-tiny: 2 layers, 64 positions of 32 keys and 32 values, at 4 bytes or 2.
  assert.equal(r.planned - r.plannedHalfCache, 2 * 64 * 2 * 32 * 2, 'an fp16 K/V cache is planned at half the bytes');
});

for (const worker of [true, false]) {
  const name = worker ? 'worker' : 'same thread';
  test(`${name}: on the CPU, logits, greedy tokens and attention match Hugging Face`, async () => {
    const r = await page.evaluate(fixtureCheck, {
      options: { backend: 'auto', worker },
      prompts: Object.values(reference.prompts),
    });
    console.log(
      `[ measured ] Chromium without WebGL, ${name}: max |dlogit| ${r.logitDiff}, max |dprob| ${r.attentionDiff}`,
    );
    assert.equal(r.mode.backend, 'cpu');
    assert.ok(r.logitDiff <= 1e-4, `max |dlogit| ${r.logitDiff}`);
    assert.ok(r.greedyEqual, 'greedy continuation differs');
    assert.ok(r.attentionDiff <= 1e-4, `max |dprob| ${r.attentionDiff}`);
  });

  test(`${name}: on the CPU, lens() and hiddenStates() match Hugging Face`, async () => {
    const r = await page.evaluate(lensCheck, { options: { backend: 'auto', worker }, prompts: hiddenStates.prompts });
    assertLensCheck(r);
  });

  test(`${name}: on the CPU, interventions match Hugging Face's hooks`, async () => {
    const r = await evaluateCheck(page, interventionsCheck, {
      options: { backend: 'auto', worker },
      fixture: interventions,
    });
    assert.equal(r.mode.backend, 'cpu');
    assertInterventionsCheck(r);
  });

  test(`${name}: on the CPU, every GGUF tensor type gives the float64 forward's logits`, async () => {
    const r = await page.evaluate(ggufCheck, { worker, fixtures, broken: Object.keys(BROKEN_GGUF), backend: 'auto' });
    console.log(
      `[ measured ] Chromium without WebGL, ${name}: max |dlogit| against the float64 forward ${Math.max(...Object.values(r.logitDiff))}`,
    );
    assertGgufCheck(r, worker);
  });
}

test('the demo says it runs on the CPU and why, offers the models usable there, and generates', async () => {
  const demo = await site.page('');
  await waitForDemoModel(demo);
  assert.match(await demo.locator('#backend-note').textContent(), /^Runs on the CPU: no usable WebGL2: /);
  // The server sends no COOP/COEP (as GitHub Pages): the demo's service worker adds them, the page
  // reloads once, and the CPU backend runs a thread per core.
  assert.equal(await demo.evaluate(() => crossOriginIsolated), true, 'the demo made itself cross-origin isolated');
  const threads = Math.min(16, cpus().length);
  assert.match(
    await demo.locator('#model-status').textContent(),
    new RegExp(
      `of memory on the CPU \\(WebAssembly SIMD, ${threads} ${threads > 1 ? 'threads' : 'thread'}\\), running in a Worker\\.$`,
    ),
  );
  const listed = await demo.locator('#model-source option').allTextContents();
  assert.deepEqual(
    listed.map((text) => text.split(',')[0]),
    ['Bundled demo model (7.7M parameters)', 'GPT-2 124M', 'GPT-2 124M', 'A URL…', 'A GGUF file on this device…'],
  );
  await demo.fill('#prompt', 'The jury said that');
  await demo.fill('#max-new-tokens', '24');
  await demo.click('#generate');
  await demo.waitForFunction(
    () =>
      /^24 tokens/.test(document.getElementById('speed').textContent) && !document.getElementById('generate').disabled,
    null,
    { timeout: 60000 },
  );
  const output = await demo.locator('#output').textContent();
  assert.ok(output.startsWith('The jury said that') && output.length > 'The jury said that'.length, output);
  assert.match(await demo.locator('#speed').textContent(), /24 tokens, [\d.]+ tokens\/s/);
  await demo.screenshot({ path: join(artifactsDir, 'demo-cpu.png'), fullPage: true });
  await demo.close();
});

test('without WebAssembly SIMD (Safari before 16.4) the module loads its build without SIMD, exact all the same', async () => {
  // Such a browser validates no module that uses SIMD, which is how the module tells.
  const page = await site.scriptedPage('WebAssembly.validate = () => false;');
  const wasm = [];
  page.on('request', (request) => request.url().endsWith('.wasm') && wasm.push(new URL(request.url()).pathname));
  for (const worker of [true, false]) {
    const r = await page.evaluate(fixtureCheck, {
      options: { backend: 'auto', worker },
      prompts: Object.values(reference.prompts),
    });
    assert.equal(r.renderer, 'CPU (WebAssembly without SIMD, 1 thread)');
    assert.ok(r.logitDiff <= 1e-4, `max |dlogit| ${r.logitDiff}`);
    assert.ok(r.greedyEqual, 'greedy continuation differs');
  }
  assert.deepEqual([...new Set(wasm)], ['/gpt2-wasm-nosimd.wasm']);
  await page.close();
});

test('cross-origin isolated, the CPU backend runs its threads build, a thread per core, exact all the same; WebGL2 runs on that build too', async () => {
  // COOP and COEP make the page cross-origin isolated, which SharedArrayBuffer and so wasm threads need.
  const isolated = await startSite({
    serving: {
      headers: { 'Cross-Origin-Opener-Policy': 'same-origin', 'Cross-Origin-Embedder-Policy': 'require-corp' },
    },
  });
  try {
    const page = await isolated.page();
    const wasm = [];
    page.on('request', (request) => request.url().endsWith('.wasm') && wasm.push(new URL(request.url()).pathname));
    const cores = await page.evaluate(() => crossOriginIsolated && navigator.hardwareConcurrency);
    assert.ok(cores, 'the page is cross-origin isolated');
    const threads = Math.min(16, cores);
    for (const worker of [true, false]) {
      const r = await page.evaluate(fixtureCheck, {
        options: { backend: 'cpu', worker },
        prompts: Object.values(reference.prompts),
      });
      assert.equal(r.renderer, `CPU (WebAssembly SIMD, ${threads} ${threads === 1 ? 'thread' : 'threads'})`);
      assert.ok(r.logitDiff <= 1e-4, `max |dlogit| ${r.logitDiff}`);
      assert.ok(r.greedyEqual, 'greedy continuation differs');
      assert.ok(r.attentionDiff <= 1e-4, `max |dprob| ${r.attentionDiff}`);
    }
    const gguf = await page.evaluate(ggufCheck, {
      worker: true,
      fixtures,
      broken: Object.keys(BROKEN_GGUF),
      backend: 'cpu',
    });
    console.log(
      `[ measured ] threads build: max |dlogit| against the float64 forward ${Math.max(...Object.values(gguf.logitDiff))}`,
    );
    assertGgufCheck(gguf, true);
    const gpu = await page.evaluate(fixtureCheck, {
      options: { backend: 'webgl', weights: 'fp32', worker: true },
      prompts: Object.values(reference.prompts),
    });
    assert.ok(gpu.logitDiff <= 1e-4 && gpu.greedyEqual, `WebGL2 on the threads build: max |dlogit| ${gpu.logitDiff}`);
    assert.deepEqual([...new Set(wasm)], [threads > 1 ? '/gpt2-wasm-threads.wasm' : '/gpt2-wasm.wasm']);
  } finally {
    await isolated.close();
  }
});
