// The page stays responsive while the bundled model works on a long prompt: the longest gap between
// animation frames during a ~490-token prefill and 16 decoded tokens, and how soon an abort in the
// middle of that prefill ends the iteration. Bounds are generous (SwiftShader on a shared CPU) and
// hold for worker mode; same-thread mode is measured and reported.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startSite } from './harness.mjs';

const PROMPT_TOKENS = 490; // with 16 new tokens, within the bundled model's 512 positions
let site;
before(async () => {
  site = await startSite();
});
after(() => site?.close());

// Loads the bundled model and returns a prompt of PROMPT_TOKENS ids of English text.
async function setUp(page, worker) {
  await page.evaluate(
    async ({ worker, tokens }) => {
      const { GPT2 } = await import('/gpt2.js');
      window.model = await GPT2.load('/models/default/', { backend: 'webgl', worker });
      const sentence = await window.model.tokenize(
        'The jury said that the city of Atlanta had done a fine job of running the election, and that the report was sound. ',
      );
      window.prompt = Array.from({ length: tokens }, (_, i) => sentence[i % sentence.length]);
    },
    { worker, tokens: PROMPT_TOKENS },
  );
}

async function longestFrameGap(page) {
  return page.evaluate(async () => {
    let last = performance.now();
    let longest = 0;
    let running = true;
    const frame = () => {
      const now = performance.now();
      longest = Math.max(longest, now - last);
      last = now;
      if (running) requestAnimationFrame(frame);
    };
    await new Promise((resolve) =>
      requestAnimationFrame(() => {
        last = performance.now();
        resolve();
      }),
    );
    requestAnimationFrame(frame);
    const start = performance.now();
    let firstToken = 0;
    let count = 0;
    for await (const t of window.model.generate(window.prompt, { maxNewTokens: 16, stopAtEndOfText: false })) {
      void t;
      count += 1;
      firstToken ||= performance.now() - start;
    }
    running = false;
    return { longest, count, firstTokenMs: firstToken, totalMs: performance.now() - start };
  });
}

async function abortDuringPrefill(page) {
  return page.evaluate(async () => {
    const controller = new AbortController();
    let abortedAt = 0;
    setTimeout(() => {
      abortedAt = performance.now();
      controller.abort();
    }, 50);
    let tokens = 0;
    let error = null;
    try {
      for await (const _t of window.model.generate(window.prompt, { maxNewTokens: 16, signal: controller.signal }))
        tokens += 1;
    } catch (e) {
      error = e.name;
    }
    const latency = performance.now() - abortedAt;
    const again = [];
    for await (const t of window.model.generate('The jury said that', { maxNewTokens: 5, stopAtEndOfText: false }))
      again.push(t.id);
    return { tokens, error, latency, again: again.length };
  });
}

for (const worker of [true, false]) {
  const name = worker ? 'worker' : 'same thread';
  test(`${name}: frames keep coming during a ${PROMPT_TOKENS}-token prefill, and an abort 50 ms into it is prompt`, async () => {
    const page = await site.page();
    await setUp(page, worker);
    const frames = await longestFrameGap(page);
    console.log(
      `[ measured ] ${name}: longest frame gap ${frames.longest.toFixed(1)} ms over ${frames.totalMs.toFixed(0)} ms ` +
        `(first token after ${frames.firstTokenMs.toFixed(0)} ms, ${frames.count} tokens)`,
    );
    assert.equal(frames.count, 16);
    const abort = await abortDuringPrefill(page);
    console.log(
      `[ measured ] ${name}: AbortError ${abort.latency.toFixed(1)} ms after abort(), ${abort.tokens} tokens before it`,
    );
    assert.equal(abort.error, 'AbortError');
    assert.equal(abort.tokens, 0, 'the abort came during the prefill');
    assert.equal(abort.again, 5, 'the model generates normally afterwards');
    if (worker) {
      assert.ok(frames.longest <= 100, `longest frame gap ${frames.longest} ms`);
      assert.ok(abort.latency <= 300, `AbortError ${abort.latency} ms after abort()`);
    }
    await page.evaluate(() => window.model.dispose());
    await page.close();
  });
}
