// The module and the demo in WebKit, Safari's engine (tests/browser/webkit.mjs: WebKitGTK's
// MiniBrowser under Xvfb, WebGL2 on Mesa's software rasterizer). This WebKit, like Safari before 17,
// gives an OffscreenCanvas no WebGL2 context, so with default options the module must find its own
// way: the page's thread on a page canvas, with a warning. Every check runs with default load
// options (no `worker`, no `canvas`), as a new user's code would.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { artifactsDir, evaluateCheck, root } from './harness.mjs';
import { assertMisuseAnswers, misuseCheck } from './misuse.mjs';
import {
  assertConstraintCheck,
  assertGgufCheck,
  assertGgufSplitDecodeCheck,
  assertInterventionsCheck,
  assertLensCheck,
  BROKEN_GGUF,
  CONSTRAINT_CASES,
  CONSTRAINT_SETTINGS,
  constraintCheck,
  fixtureCheck,
  ggufCheck,
  ggufFixtures,
  ggufSplitDecodeCheck,
  interventionsCheck,
  lensCheck,
  splitDecodeArguments,
} from './page-checks.mjs';
import { hasWebKit, miniBrowserPath, startWebKit } from './webkit.mjs';

const reference = JSON.parse(readFileSync(join(root, 'tests/fixtures/gpt2-tiny/reference.json'), 'utf8'));
const prompts = Object.values(reference.prompts);
const hiddenStates = JSON.parse(readFileSync(join(root, 'tests/fixtures/gpt2-tiny/hidden_states.json'), 'utf8'));
const interventions = JSON.parse(readFileSync(join(root, 'tests/fixtures/gpt2-tiny/interventions.json'), 'utf8'));
let webkit;
let page;

before(async () => {
  assert.ok(
    hasWebKit,
    `${miniBrowserPath}, WebKitWebDriver or xvfb-run not found: .ci/install-deps.sh installs webkit2gtk-driver, xvfb and xauth`,
  );
  webkit = await startWebKit();
  page = await webkit.page();
  const gl = await page.evaluate(() => {
    const context = document.createElement('canvas').getContext('webgl2');
    return (
      context && { version: context.getParameter(context.VERSION), renderer: context.getParameter(context.RENDERER) }
    );
  });
  assert.match(gl?.version ?? 'none', /WebGL 2/, 'WebKit must provide WebGL2 on a page canvas');
});
after(async () => {
  await webkit?.close();
});

// Each test ends with the page's own record: nothing uncaught, no unhandled rejection.
async function assertNoPageErrors() {
  assert.deepEqual(await webkit.errors(), []);
}

test("WebKit, default options: the engine runs on the page's thread, says why, and fp32 matches Hugging Face", async () => {
  const warnings = await page.evaluate(async () => {
    const { GPT2 } = await import('/gpt2.js');
    const seen = [];
    const model = await GPT2.load('/models/gpt2-tiny/', {
      backend: 'webgl',
      onProgress: ({ warning }) => warning && seen.push(warning),
    });
    await model.dispose();
    return seen;
  });
  assert.equal(warnings.length, 1, warnings.join(' | '));
  assert.match(
    warnings[0],
    /^the engine runs on this page's thread, not in a Worker: this browser gives an OffscreenCanvas no WebGL2 context/,
  );
  const r = await page.evaluate(fixtureCheck, { options: { weights: 'fp32' }, prompts });
  console.log(
    `[ measured ] WebKit (${JSON.stringify(r.mode)}): fp32 max |dlogit| against Hugging Face ${r.logitDiff}, attention max |dprob| ${r.attentionDiff}`,
  );
  assert.deepEqual(r.mode, {
    worker: false,
    canvas: 'HTMLCanvasElement',
    reason: 'this browser has no WebGL2 in workers: this browser gives an OffscreenCanvas no WebGL2 context',
    backend: 'webgl',
    backendReason: 'backend: webgl',
  });
  // 1e-4: 22 times the measured error (4.5e-6), as in Chromium and Firefox.
  assert.ok(r.logitDiff <= 1e-4, `max |dlogit| ${r.logitDiff}`);
  assert.ok(r.greedyEqual, 'greedy continuation differs');
  assert.ok(r.attentionDiff <= 1e-4, `max |dprob| ${r.attentionDiff}`);
  assert.deepEqual(r.shape, [4, 5]);
  await assertNoPageErrors();
});

test("WebKit: every GGUF tensor type gives the float64 forward's logits, with the file's own tokenizer", async () => {
  const r = await page.evaluate(ggufCheck, { fixtures: ggufFixtures(root), broken: Object.keys(BROKEN_GGUF) });
  console.log(
    `[ measured ] WebKit: GGUF max |dlogit| against the float64 forward ${Math.max(...Object.values(r.logitDiff))}`,
  );
  assertGgufCheck(r, false);
  await assertNoPageErrors();
});

test("WebKit: decode steps split over 16 input texels, as on GPUs, give the float64 forward's distribution and greedy tokens", async () => {
  const r = await page.evaluate(ggufSplitDecodeCheck, splitDecodeArguments(root));
  console.log(
    `[ measured ] WebKit: a decode step's max |dlogprob| against the float64 forward ${Math.max(...Object.values(r.logProbDiff))}`,
  );
  assertGgufSplitDecodeCheck(r);
  await assertNoPageErrors();
});

test('WebKit, default options: fp16 within the fp16 tolerance, int8 loads and generates', async () => {
  const fp16 = await page.evaluate(fixtureCheck, { options: {}, prompts });
  console.log(`[ measured ] WebKit fp16: max |dlogit| ${fp16.logitDiff}`);
  // The tolerance of tests/model/fixture_logits_test.cpp (weight rounding only).
  assert.ok(fp16.logitDiff <= 0.01, `max |dlogit| ${fp16.logitDiff}`);
  const int8 = await page.evaluate(async (p) => {
    const { GPT2 } = await import('/gpt2.js');
    const warnings = [];
    let fromCache = 0;
    const model = await GPT2.load('/models/gpt2-tiny/', {
      backend: 'webgl',
      weights: 'int8',
      onProgress: (e) => {
        if (e.warning) warnings.push(e.warning);
        fromCache = e.fromCache;
      },
    });
    const ids = [];
    for await (const t of model.generate(p.ids, { maxNewTokens: p.greedy.length, stopAtEndOfText: false }))
      ids.push(t.id);
    const { gpuBytes } = await model.stats();
    await model.dispose();
    return { ids, gpuBytes, warnings, fromCache };
  }, prompts[0]);
  // The earlier loads cached the model: a Worker read its weights (gpt2-cache-reader.js).
  assert.ok(int8.fromCache > 0, 'the int8 load read the cache');
  assert.deepEqual(
    int8.warnings.filter((w) => w.startsWith('cached files')),
    [],
  );
  assert.equal(int8.ids.length, prompts[0].greedy.length);
  assert.ok(
    int8.ids.every((id) => Number.isInteger(id) && id >= 0 && id < 50257),
    int8.ids.join(),
  );
  assert.ok(int8.gpuBytes > 0);
  await assertNoPageErrors();
});

test('WebKit: worker: true fails with the reason, and says what to do', async () => {
  const message = await page.evaluate(async () => {
    const { GPT2 } = await import('/gpt2.js');
    return GPT2.load('/models/gpt2-tiny/', { backend: 'webgl', worker: true }).then(
      () => 'loaded',
      (e) => e.message,
    );
  });
  assert.equal(
    message,
    'worker: true, but this browser gives an OffscreenCanvas no WebGL2 context; leave worker unset to run the engine on this thread instead',
  );
  await assertNoPageErrors();
});

test('WebKit: generation streams, an abort ends it, and the next generation works; decode speed measured', async () => {
  const r = await page.evaluate(async () => {
    const { GPT2 } = await import('/gpt2.js');
    const model = await GPT2.load('/models/default/', { backend: 'webgl' });
    const controller = new AbortController();
    const seen = [];
    let error = null;
    try {
      for await (const t of model.generate('The jury said that', { maxNewTokens: 200, signal: controller.signal })) {
        seen.push(t.id);
        if (seen.length === 3) controller.abort();
      }
    } catch (e) {
      error = e.name;
    }
    // Decode time: the gap between the first and the last of 33 tokens (the prompt is before the first).
    const times = [];
    let text = '';
    for await (const t of model.generate('The jury said that', { maxNewTokens: 33, stopAtEndOfText: false })) {
      times.push(performance.now());
      text += t.text;
    }
    await model.dispose();
    return {
      seen: seen.length,
      error,
      text,
      count: times.length,
      msPerToken: (times.at(-1) - times[0]) / (times.length - 1),
    };
  });
  console.log(`[ measured ] WebKit, bundled model: ${r.msPerToken.toFixed(1)} ms/token decoding`);
  assert.equal(r.seen, 3, 'no token after the abort');
  assert.equal(r.error, 'AbortError');
  assert.equal(r.count, 33);
  assert.ok(r.text.length > 20, r.text);
  await assertNoPageErrors();
});

test("WebKit: lens() and hiddenStates() match Hugging Face's", async () => {
  const r = await page.evaluate(lensCheck, { options: { weights: 'fp32' }, prompts: hiddenStates.prompts });
  console.log(
    `[ measured ] WebKit: lens max |dprob| against Hugging Face ${r.probDiff}, hidden states max |diff| ${r.stateDiff}`,
  );
  assertLensCheck(r);
  await assertNoPageErrors();
});

test("WebKit: interventions match Hugging Face's hooks", async () => {
  assertInterventionsCheck(
    await evaluateCheck(page, interventionsCheck, { options: { weights: 'fp32' }, fixture: interventions }),
  );
  await assertNoPageErrors();
});

test('WebKit: constrained outputs match their regex or schema', async () => {
  await assertConstraintCheck(
    await evaluateCheck(page, constraintCheck, { options: {}, cases: CONSTRAINT_CASES, settings: CONSTRAINT_SETTINGS }),
  );
  await assertNoPageErrors();
});

test('WebKit: misuse gets the answers it gets in Chromium, in either mode', async () => {
  assertMisuseAnswers(await page.evaluate(misuseCheck, { options: {} }), { worker: false });
  await assertNoPageErrors();
});

test('WebKit: the demo page loads the bundled model, says where it runs, and generates with its live views', async () => {
  const demo = await webkit.page('?backend=webgl');
  await demo.waitForFunction(
    () =>
      (/^Loaded/.test(document.getElementById('model-status').textContent) &&
        !document.getElementById('generate').disabled) ||
      !document.getElementById('load-error').hidden,
    { timeout: 120000 },
  );
  const status = await demo.evaluate(() => ({
    error: document.getElementById('load-error').hidden ? null : document.getElementById('load-error').textContent,
    model: document.getElementById('model-status').textContent,
  }));
  assert.equal(status.error, null);
  assert.match(status.model, /on this page's thread: this browser has no WebGL2 in workers/);
  assert.match(status.model, /Apple GPU/);
  await demo.evaluate(() => {
    document.getElementById('max-new-tokens').value = '10';
    document.getElementById('generate').click();
  });
  await demo.waitForFunction(
    () =>
      /10 tokens/.test(document.getElementById('speed').textContent) && !document.getElementById('generate').disabled,
    { timeout: 120000 },
  );
  const views = await demo.evaluate(() => ({
    cells: document.querySelectorAll('#lens-grid td').length,
    drawn: document.getElementById('heatmap').dataset.drawn,
    error: document.getElementById('error').hidden ? null : document.getElementById('error').textContent,
  }));
  assert.equal(views.error, null);
  assert.equal(views.cells % 6, 0, `${views.cells} lens cells: 6 layers per position`);
  assert.ok(views.cells >= 6 * 12, `${views.cells} lens cells`);
  assert.equal(views.drawn, 'true');
  await demo.screenshot({ path: join(artifactsDir, 'demo-webkit.png') });
  await assertNoPageErrors();
});
