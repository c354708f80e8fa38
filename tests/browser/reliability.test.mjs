// Reliability in the browser: a lost WebGL context mid-generation, a GPU without float render
// targets, long runs (5,000 tokens sliding past the context; 20 load/dispose cycles) with GL objects,
// wasm memory and JS heap bounded, and the demo page's Content-Security-Policy.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { root, startSite, testModelsDir } from './harness.mjs';

let site;
before(async () => {
  // A small random model (vocabulary 512, context 64) so that 5,000 tokens take seconds, not minutes.
  const small = join(testModelsDir, 'small');
  mkdirSync(small, { recursive: true });
  execFileSync(join(root, 'build/native/gpt2-synth'), [
    small,
    '--n-embd',
    '64',
    '--n-layer',
    '2',
    '--n-head',
    '4',
    '--n-positions',
    '64',
    '--vocab-size',
    '512',
    '--seed',
    '5',
  ]);
  copyFileSync(join(root, 'tests/browser/pages/csp-probe.js'), join(testModelsDir, 'csp-probe.js'));
  site = await startSite();
});
after(() => site?.close());

// Worker mode loses the worker's context through simulateContextLoss(); same-thread mode loses a
// canvas the page gave the model, through WEBGL_lose_context, as a browser would.
for (const worker of [true, false]) {
  test(`${worker ? 'worker' : 'same thread'}: a context lost during generation rejects clearly, and restore() brings the model back`, async () => {
    const page = await site.page();
    const r = await page.evaluate(async (worker) => {
      const { GPT2, ContextLostError } = await import('/gpt2.js');
      const canvas = worker ? undefined : document.body.appendChild(document.createElement('canvas'));
      const model = await GPT2.load('/models/gpt2-tiny/', { backend: 'webgl', canvas, worker });
      const lose = worker
        ? () => model.simulateContextLoss()
        : () => canvas.getContext('webgl2').getExtension('WEBGL_lose_context').loseContext();
      let seen = 0;
      let error = null;
      try {
        for await (const t of model.generate('Hello', { maxNewTokens: 30, stopAtEndOfText: false })) {
          void t;
          seen += 1;
          if (seen === 3) await lose();
        }
      } catch (e) {
        error = { message: e.message, contextLost: e instanceof ContextLostError };
      }
      const later = await model.logits([1, 2]).then(
        () => 'no error',
        (e) => ({ message: e.message, contextLost: e instanceof ContextLostError }),
      );
      const lost = model.contextLost;
      await model.restore();
      const again = [];
      for await (const t of model.generate('Hello', { maxNewTokens: 4, stopAtEndOfText: false })) again.push(t.id);
      const logits = await model.logits([15496, 11, 616, 1438, 318]);
      await model.dispose();
      return { seen, error, later, lost, again: again.length, first: logits[0] };
    }, worker);
    // Worker mode streams tokens ahead of the page: the loss may land a few tokens later there.
    if (worker) assert.ok(r.seen >= 3 && r.seen < 30, `${r.seen} tokens`);
    else assert.equal(r.seen, 3, 'no token after the loss');
    assert.match(r.error.message, /WebGL context lost/);
    assert.match(r.later.message, /WebGL context lost/);
    assert.equal(r.error.contextLost, true, 'the generation rejects with a ContextLostError');
    assert.equal(r.later.contextLost, true, 'a later call rejects with a ContextLostError');
    assert.equal(r.lost, true);
    assert.equal(r.again, 4);
    assert.ok(Math.abs(r.first - -0.304575) < 1e-3, `restored logits ${r.first}`);
    await page.close();
  });
}

// A browser that refuses WebGL2 (getContext gives null, a webglcontextcreationerror says why): the
// load rejects with the typed error, carrying the browser's words, with no message matched anywhere.
test("same thread: a canvas without WebGL2 fails the load with a WebGL2UnavailableError and the browser's reason", async () => {
  const refuse = `const original = HTMLCanvasElement.prototype.getContext;
    HTMLCanvasElement.prototype.getContext = function getContext(type, ...rest) {
      if (type !== 'webgl2') return original.call(this, type, ...rest);
      this.dispatchEvent(Object.assign(new Event('webglcontextcreationerror'), { statusMessage: 'simulated: no GPU here' }));
      return null;
    };\n`;
  const page = await site.scriptedPage(refuse);
  const r = await page.evaluate(async () => {
    const { GPT2, WebGL2UnavailableError } = await import('/gpt2.js');
    try {
      await GPT2.load('/models/gpt2-tiny/', {
        backend: 'webgl',
        worker: false,
        canvas: document.body.appendChild(document.createElement('canvas')),
      });
      return { loaded: true };
    } catch (e) {
      return { typed: e instanceof WebGL2UnavailableError, name: e.name, message: e.message, detail: e.detail };
    }
  });
  assert.equal(r.typed, true, JSON.stringify(r));
  assert.equal(r.name, 'WebGL2UnavailableError');
  assert.equal(r.detail.browserSaid, 'simulated: no GPU here');
  assert.ok(Number.isInteger(r.detail.code) && r.detail.code <= 0, `error code ${r.detail.code}`);
  assert.match(
    r.message,
    /^WebGL2 is not available \(the browser gave no WebGL2 context on the engine's canvas, error -?\d+\); .*\. The browser said: "simulated: no GPU here"$/,
  );
  await page.close();
});

// The C++ side throws the module's ContextLostError itself (bindings.cpp, handed the class by
// gpt2-native.js). The engine's JS checks the context before every native call, so a
// loss is first seen in C++ only when it strikes within a call: here the native call is made
// directly, after the loss, to reach that path.
test('same thread: a context lost as the C++ side sees it rejects with a ContextLostError', async () => {
  const page = await site.page();
  const r = await page.evaluate(async () => {
    const { GPT2, ContextLostError } = await import('/gpt2.js');
    const canvas = document.body.appendChild(document.createElement('canvas'));
    const model = await GPT2.load('/models/gpt2-tiny/', { backend: 'webgl', canvas, worker: false });
    canvas.getContext('webgl2').getExtension('WEBGL_lose_context').loseContext();
    let outcome = 'no error';
    try {
      model._backend._model.stats();
    } catch (e) {
      outcome = { message: e.message, contextLost: e instanceof ContextLostError };
    }
    await model.dispose();
    return outcome;
  });
  assert.equal(r.message, 'WebGL context lost (the browser reclaimed the GPU); call restore() or load the model again');
  assert.equal(r.contextLost, true, `${JSON.stringify(r)}: the C++ side throws the module's class`);
  await page.close();
});

// Same thread only: the init script patches the page's WebGL, which a worker does not share.
test('a GPU without float render targets gets a clear error', async () => {
  const page = await site.browser.newPage();
  await page.addInitScript(() => {
    const original = WebGL2RenderingContext.prototype.getExtension;
    WebGL2RenderingContext.prototype.getExtension = function getExtension(name) {
      return name === 'EXT_color_buffer_float' ? null : original.call(this, name);
    };
  });
  await page.goto(`${site.url}examples/blank.html`);
  const message = await page.evaluate(async () => {
    const { GPT2 } = await import('/gpt2.js');
    return GPT2.load('/models/gpt2-tiny/', { backend: 'webgl', worker: false }).then(
      () => 'loaded',
      (e) => e.message,
    );
  });
  assert.match(message, /lacks EXT_color_buffer_float/);
  await page.close();
});

for (const worker of [true, false])
  test(`${worker ? 'worker' : 'same thread'}: 5,000 tokens slide past the context with GL objects, wasm memory and JS heap bounded`, async () => {
    const page = await site.page();
    const r = await page.evaluate(async (worker) => {
      const { GPT2 } = await import('/gpt2.js');
      const model = await GPT2.load('/test-models/small/', { backend: 'webgl', worker });
      const samples = [];
      let count = 0;
      for await (const t of model.generate([1, 2, 3], {
        maxNewTokens: 5000,
        temperature: 1,
        seed: 3,
        stopAtEndOfText: false,
      })) {
        void t;
        count += 1;
        if (count % 1000 === 0) {
          window.gc();
          const stats = await model.stats();
          samples.push({
            gl: await GPT2.liveGlObjects(),
            heap: performance.memory.usedJSHeapSize,
            gpu: stats.gpuBytes,
            wasm: stats.wasmHeapBytes,
          });
        }
      }
      await model.dispose();
      return { count, samples };
    }, worker);
    assert.equal(r.count, 5000);
    const first = r.samples[0];
    for (const s of r.samples) {
      assert.equal(s.gl, first.gl, 'no GL object is made per token');
      assert.equal(s.gpu, first.gpu, 'no texture memory is added per token');
      assert.equal(s.wasm, first.wasm, 'the wasm heap does not grow per token');
      assert.ok(s.heap < first.heap + 4e6, `JS heap grew from ${first.heap} to ${s.heap}`);
    }
    console.log(
      `[ measured ] 5000 tokens: GL objects ${first.gl}, JS heap ${r.samples.map((s) => (s.heap / 1e6).toFixed(1)).join(' → ')} MB`,
    );
    await page.close();
  });

for (const worker of [true, false])
  test(`${worker ? 'worker' : 'same thread'}: 20 load/dispose cycles leave GL objects where they started and the heaps bounded`, async () => {
    const page = await site.page();
    const r = await page.evaluate(async (worker) => {
      const { GPT2 } = await import('/gpt2.js');
      const gl = [await GPT2.liveGlObjects()];
      const heap = [];
      for (let i = 0; i < 20; i += 1) {
        const model = await GPT2.load('/test-models/small/', { backend: 'webgl', worker });
        for await (const t of model.generate([1], { maxNewTokens: 2 })) void t;
        await model.dispose();
        gl.push(await GPT2.liveGlObjects());
        window.gc();
        heap.push(performance.memory.usedJSHeapSize);
      }
      return { gl, heap, canvases: document.querySelectorAll('canvas').length };
    }, worker);
    assert.ok(
      r.gl.every((n) => n === r.gl[0]),
      `live GL objects: ${r.gl}`,
    );
    assert.equal(r.canvases, 0, 'disposed models remove their hidden canvases');
    assert.ok(r.heap.at(-1) < r.heap[0] + 4e6, `JS heap grew from ${r.heap[0]} to ${r.heap.at(-1)}`);
    await page.close();
  });

test('the demo page forbids inline script and eval', async () => {
  const page = await site.page('?backend=webgl');
  // Code injected by the test driver is exempt from CSP; the probes run as the page's own scripts.
  const r = await page.evaluate(async () => {
    const policy = document.querySelector('meta[http-equiv="Content-Security-Policy"]').content;
    const probe = document.createElement('script');
    probe.src = '/test-models/csp-probe.js';
    await new Promise((ok) => {
      probe.onload = ok;
      document.body.appendChild(probe);
    });
    const inline = document.createElement('script');
    inline.textContent = 'window.inlineRan = true';
    document.body.appendChild(inline);
    return { policy, evalResult: window.cspProbe, inlineRan: window.inlineRan === true };
  });
  assert.match(r.policy, /script-src 'self' 'wasm-unsafe-eval'/);
  assert.doesNotMatch(r.policy, /unsafe-inline|'unsafe-eval'/);
  assert.equal(r.evalResult, 'EvalError');
  assert.equal(r.inlineRan, false);
  await page.close();
});
