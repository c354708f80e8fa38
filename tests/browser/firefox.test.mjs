// The module and the demo in Firefox ESR (tests/browser/firefox.mjs): Hugging Face parity, generation
// and abort in both modes, the demo page, no WebGL warnings, and Firefox's own reason when it refuses
// a context. Chromium runs the same kinds of checks in the other files of this folder.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { artifactsDir, evaluateCheck, root } from './harness.mjs';
import { firefoxPath, hasFirefox, startFirefox } from './firefox.mjs';
import {
  assertConstraintCheck,
  assertGgufCheck,
  assertGgufSplitDecodeCheck,
  assertInterventionsCheck,
  BROKEN_GGUF,
  CONSTRAINT_CASES,
  CONSTRAINT_SETTINGS,
  constraintCheck,
  fixtureCheck,
  ggufCheck,
  ggufFixtures,
  ggufSplitDecodeCheck,
  interventionsCheck,
  splitDecodeArguments,
} from './page-checks.mjs';

const reference = JSON.parse(readFileSync(join(root, 'tests/fixtures/gpt2-tiny/reference.json'), 'utf8'));
const prompts = Object.values(reference.prompts);
const interventions = JSON.parse(readFileSync(join(root, 'tests/fixtures/gpt2-tiny/interventions.json'), 'utf8'));
let firefox;

before(async () => {
  assert.ok(hasFirefox, `${firefoxPath} not found: tests/run-all.sh installs firefox-esr`);
  firefox = await startFirefox();
});
// Firefox's own output (its WebGL and GPU-process messages) stays in build/test-artifacts: what to
// read when a test here times out.
after(async () => {
  if (firefox) writeFileSync(join(artifactsDir, 'firefox.log'), firefox.log());
  await firefox?.close();
});

const modes = [
  { worker: true, name: 'worker' },
  { worker: false, name: 'same thread' },
];

for (const { worker, name } of modes)
  test(`Firefox, ${name}: fp32 logits, greedy tokens and attention match Hugging Face`, async () => {
    const page = await firefox.page();
    const r = await page.evaluate(fixtureCheck, { options: { weights: 'fp32', worker }, prompts });
    console.log(
      `[ measured ] Firefox ${name} (${r.renderer}): max |dlogit| against Hugging Face ${r.logitDiff}, max |dprob| ${r.attentionDiff}`,
    );
    // 1e-4: 25 times the measured error (4.0e-6 on llvmpipe), as in Chromium.
    assert.ok(r.logitDiff <= 1e-4, `max |dlogit| ${r.logitDiff}`);
    assert.ok(r.greedyEqual, 'greedy continuation differs');
    assert.ok(r.attentionDiff <= 1e-4, `max |dprob| ${r.attentionDiff}`);
    assert.equal(r.mode.worker, worker);
    await page.close();
  });

test("Firefox: interventions match Hugging Face's hooks", async () => {
  const page = await firefox.page();
  assertInterventionsCheck(
    await evaluateCheck(page, interventionsCheck, {
      options: { weights: 'fp32', worker: true },
      fixture: interventions,
    }),
  );
  await page.close();
});

test('Firefox: constrained outputs match their regex or schema', async () => {
  const page = await firefox.page();
  await assertConstraintCheck(
    await evaluateCheck(page, constraintCheck, {
      options: { worker: true },
      cases: CONSTRAINT_CASES,
      settings: CONSTRAINT_SETTINGS,
    }),
  );
  await page.close();
});

for (const { worker, name } of modes)
  test(`Firefox, ${name}: every GGUF tensor type gives the float64 forward's logits, with the file's own tokenizer`, async () => {
    const page = await firefox.page();
    const r = await page.evaluate(ggufCheck, {
      worker,
      fixtures: ggufFixtures(root),
      broken: Object.keys(BROKEN_GGUF),
    });
    console.log(
      `[ measured ] Firefox ${name}: GGUF max |dlogit| against the float64 forward ${Math.max(...Object.values(r.logitDiff))}`,
    );
    assertGgufCheck(r, worker);
    await page.close();
  });

test("Firefox: decode steps split over 16 input texels, as on GPUs, give the float64 forward's distribution and greedy tokens", async () => {
  const page = await firefox.page();
  const r = await page.evaluate(ggufSplitDecodeCheck, splitDecodeArguments(root, true));
  console.log(
    `[ measured ] Firefox: a decode step's max |dlogprob| against the float64 forward ${Math.max(...Object.values(r.logProbDiff))}`,
  );
  assertGgufSplitDecodeCheck(r);
  await page.close();
});

for (const { worker, name } of modes)
  test(`Firefox, ${name}: generation streams text and an abort ends it`, async () => {
    const page = await firefox.page();
    const r = await page.evaluate(async (worker) => {
      const { GPT2 } = await import('/gpt2.js');
      const model = await GPT2.load('/models/default/', { backend: 'webgl', worker });
      let text = '';
      for await (const t of model.generate('The jury said that', { maxNewTokens: 12, seed: 5, temperature: 0.8 }))
        text += t.text;
      const controller = new AbortController();
      let count = 0;
      let error = null;
      try {
        for await (const t of model.generate('The jury said that', { maxNewTokens: 200, signal: controller.signal })) {
          void t;
          count += 1;
          if (count === 3) controller.abort();
        }
      } catch (e) {
        error = e.name;
      }
      await model.dispose();
      return { text, count, error };
    }, worker);
    assert.ok(r.text.length > 10, r.text);
    assert.equal(r.error, 'AbortError');
    assert.equal(r.count, 3);
    await page.close();
  });

test('Firefox: load and 50 tokens leave no WebGL warnings in its log, in either mode', async () => {
  const page = await firefox.page();
  const from = firefox.mark();
  const tokens = await page.evaluate(async () => {
    const { GPT2 } = await import('/gpt2.js');
    let count = 0;
    const warnings = [];
    for (const worker of [true, false]) {
      const model = await GPT2.load('/models/default/', {
        backend: 'webgl',
        worker,
        onProgress: ({ warning }) => warning && warnings.push(warning),
      });
      for await (const t of model.generate('The jury said that', {
        maxNewTokens: 50,
        stopAtEndOfText: false,
        lensTopK: 5,
        attentionLayer: 0,
      }))
        count += t.id >= 0;
      await model.attention(1);
      await model.dispose();
    }
    return { count, warnings };
  });
  await page.close();
  await new Promise((ok) => setTimeout(ok, 500)); // Firefox's output is written asynchronously
  const warnings = firefox
    .log(from)
    .split('\n')
    .filter((line) => /WebGL warning|WEBGL_debug_renderer_info/.test(line));
  assert.equal(tokens.count, 100);
  assert.deepEqual(warnings, []);
  // The second load comes from the cache, its weights read by a Worker (gpt2-cache-reader.js).
  assert.deepEqual(tokens.warnings, []);
});

test('Firefox: the demo page loads the bundled model and generates with its live views', async () => {
  const page = await firefox.page('?backend=webgl');
  await page.setViewport({ width: 1000, height: 1400 });
  // 11 s alone; llvmpipe compiles the demo's shaders on the CPU, and in the test command another test
  // file shares the 2 cores (it passed 60 s there once): the bound is for a hang, not for speed.
  await page.waitForFunction(
    () =>
      /^Loaded/.test(document.getElementById('model-status').textContent) ||
      !document.getElementById('load-error').hidden,
    { timeout: 180000 },
  );
  assert.equal(
    await page.$eval('#load-error', (e) => e.hidden),
    true,
    await page.$eval('#load-error', (e) => e.textContent),
  );
  await page.$eval('#max-new-tokens', (e) => {
    e.value = '10';
  });
  await page.click('#generate');
  await page.waitForFunction(
    () =>
      /10 tokens/.test(document.getElementById('speed').textContent) && !document.getElementById('generate').disabled,
    { timeout: 60000 },
  );
  const cells = await page.$$eval('#lens-grid td', (tds) => tds.length);
  assert.equal(cells % 6, 0);
  assert.ok(cells >= 6 * 12, `${cells} lens cells`);
  assert.equal(await page.$eval('#heatmap', (c) => c.dataset.drawn), 'true');
  await page.screenshot({ path: join(artifactsDir, 'demo-firefox.png'), fullPage: true });
  await page.close();
});

test("Firefox without its WebGL settings: the load error carries Firefox's own reason", async () => {
  const bare = await startFirefox({ webgl: false });
  try {
    const page = await bare.page();
    const r = await page.evaluate(async () => {
      const { GPT2, WebGL2UnavailableError } = await import('/gpt2.js');
      try {
        await GPT2.load('/models/gpt2-tiny/', { backend: 'webgl', worker: false });
        return { message: 'loaded' };
      } catch (e) {
        return { message: e.message, typed: e instanceof WebGL2UnavailableError, said: e.detail?.browserSaid };
      }
    });
    assert.match(
      r.message,
      /^WebGL2 is not available .*\. The browser said: ".*AllowWebgl2:false restricts context creation on this system.*"$/,
    );
    assert.ok(r.typed, 'a WebGL2UnavailableError');
    assert.match(r.said, /AllowWebgl2:false/);
  } finally {
    await bare.close();
  }
});

test('Firefox with webgl.disabled: the default load runs on the CPU, matches Hugging Face, and the demo generates', async () => {
  const bare = await startFirefox({ webgl: 'disabled' });
  try {
    const page = await bare.page();
    for (const worker of [true, false]) {
      const r = await page.evaluate(fixtureCheck, { options: { backend: 'auto', worker }, prompts });
      console.log(`[ measured ] Firefox without WebGL, worker ${worker}: max |dlogit| ${r.logitDiff}`);
      assert.equal(r.mode.backend, 'cpu');
      assert.equal(r.mode.worker, worker);
      assert.match(r.mode.backendReason, /^no usable WebGL2: /);
      assert.ok(r.logitDiff <= 1e-4, `max |dlogit| ${r.logitDiff}`);
      assert.ok(r.greedyEqual, 'greedy continuation differs');
      assert.ok(r.attentionDiff <= 1e-4, `max |dprob| ${r.attentionDiff}`);
    }
    const demo = await bare.page('');
    await demo.waitForFunction(() => /^Loaded/.test(document.getElementById('model-status').textContent), {
      timeout: 60000,
    });
    assert.match(await demo.$eval('#backend-note', (e) => e.textContent), /^Runs on the CPU: no usable WebGL2: /);
    // Served without COOP/COEP, the demo isolates itself with its service worker and runs its threads
    // build, a thread per core.
    const isolated = await demo.evaluate(() => ({
      crossOriginIsolated,
      status: document.getElementById('model-status').textContent,
      cores: navigator.hardwareConcurrency,
    }));
    assert.equal(isolated.crossOriginIsolated, true, 'the demo made itself cross-origin isolated');
    const threads = Math.min(16, isolated.cores);
    assert.ok(
      isolated.status.includes(`on the CPU (WebAssembly SIMD, ${threads} ${threads > 1 ? 'threads' : 'thread'})`),
      isolated.status,
    );
    await demo.$eval('#max-new-tokens', (e) => {
      e.value = '10';
    });
    await demo.click('#generate');
    await demo.waitForFunction(() => /10 tokens/.test(document.getElementById('speed').textContent), {
      timeout: 60000,
    });
  } finally {
    await bare.close();
  }
});
