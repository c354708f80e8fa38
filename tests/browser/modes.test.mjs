// Where the engine runs, in Chromium: by default a Worker, and the page's thread where the browser
// gives a Worker no WebGL2 (forced here as WebKit has it); one contract in both modes, aborts at every
// point of a load, a restore and a generation included; and a WebGL2 that offers no more than the
// spec's minimums, as a conformant low-end phone may.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startSite } from './harness.mjs';
import { assertMisuseAnswers, misuseCheck } from './misuse.mjs';

let site;
before(async () => {
  site = await startSite();
});
after(() => site?.close());

// An OffscreenCanvas that gives no webgl2 context, as in WebKitGTK and Safari before 17: in the page
// (an init script) and in the module's worker (its script served with the same patch in front).
const noOffscreenWebgl2 = `if (globalThis.OffscreenCanvas) {
  const original = OffscreenCanvas.prototype.getContext;
  OffscreenCanvas.prototype.getContext = function getContext(type, ...rest) {
    return type === 'webgl2' ? null : original.call(this, type, ...rest);
  };
}\n`;

test("without WebGL2 on an OffscreenCanvas, the default load runs on the page's thread, warns once, and generates as a Worker does", async () => {
  const page = await site.page();
  const inWorker = await page.evaluate(async () => {
    const { GPT2 } = await import('/gpt2.js');
    const model = await GPT2.load('/models/default/', { backend: 'webgl' });
    const ids = [];
    for await (const t of model.generate('The jury said that', { maxNewTokens: 12, stopAtEndOfText: false }))
      ids.push(t.id);
    await model.dispose();
    return { mode: model.mode, ids };
  });
  assert.deepEqual(inWorker.mode, {
    worker: true,
    canvas: 'OffscreenCanvas',
    reason: 'the default: a Worker with WebGL2 on an OffscreenCanvas',
    backend: 'webgl',
    backendReason: 'backend: webgl',
  });
  await page.close();

  const fallback = await site.scriptedPage(noOffscreenWebgl2);
  const r = await fallback.evaluate(async () => {
    const { GPT2 } = await import('/gpt2.js');
    const warnings = [];
    const model = await GPT2.load('/models/default/', {
      backend: 'webgl',
      onProgress: ({ warning }) => warning && warnings.push(warning),
    });
    const ids = [];
    for await (const t of model.generate('The jury said that', { maxNewTokens: 12, stopAtEndOfText: false }))
      ids.push(t.id);
    const canvases = document.querySelectorAll('canvas').length;
    await model.dispose();
    const forced = await GPT2.load('/models/default/', { backend: 'webgl', worker: true }).then(
      () => 'loaded',
      (e) => e.message,
    );
    return {
      mode: model.mode,
      warnings,
      ids,
      canvases,
      canvasesAfter: document.querySelectorAll('canvas').length,
      forced,
    };
  });
  assert.deepEqual(r.mode, {
    worker: false,
    canvas: 'HTMLCanvasElement',
    reason: 'this browser has no WebGL2 in workers: this browser gives an OffscreenCanvas no WebGL2 context',
    backend: 'webgl',
    backendReason: 'backend: webgl',
  });
  assert.deepEqual(r.warnings, [
    "the engine runs on this page's thread, not in a Worker: this browser gives an OffscreenCanvas no WebGL2 context",
  ]);
  assert.deepEqual(r.ids, inWorker.ids);
  assert.equal(r.canvases, 1, 'the engine made one hidden page canvas');
  assert.equal(r.canvasesAfter, 0, 'dispose removed it');
  assert.equal(
    r.forced,
    'worker: true, but this browser gives an OffscreenCanvas no WebGL2 context; leave worker unset to run the engine on this thread instead',
  );
  await fallback.close();
});

for (const worker of [true, false])
  test(`${worker ? 'worker' : 'same thread'}: misuse of a model gets the same answers in both modes`, async () => {
    const page = await site.page();
    assertMisuseAnswers(await page.evaluate(misuseCheck, { options: { worker } }), { worker });
    await page.close();
  });

// WebGL2's guaranteed minimums, reported by getParameter and enforced: a texture, a draw-buffer
// list, an attachment or a texture unit beyond them throws, so that a load relying on more fails.
const minimumLimits = `(() => {
  const C = WebGL2RenderingContext.prototype;
  const limits = new Map([[C.MAX_TEXTURE_SIZE, 2048], [C.MAX_DRAW_BUFFERS, 4], [C.MAX_COLOR_ATTACHMENTS, 4],
    [C.MAX_ARRAY_TEXTURE_LAYERS, 256], [C.MAX_TEXTURE_IMAGE_UNITS, 16], [C.MAX_VERTEX_TEXTURE_IMAGE_UNITS, 16],
    [C.MAX_COMBINED_TEXTURE_IMAGE_UNITS, 32]]);
  const refuse = (what) => { throw new Error('beyond WebGL2 minimum limits: ' + what); };
  const wrap = (name, check) => {
    const original = C[name];
    C[name] = function (...args) { check(...args); return original.apply(this, args); };
  };
  const getParameter = C.getParameter;
  C.getParameter = function (p) { return limits.has(p) ? limits.get(p) : getParameter.call(this, p); };
  const size = (w, h) => { if (w > 2048 || h > 2048) refuse('texture ' + w + 'x' + h); };
  wrap('texStorage2D', (target, levels, format, w, h) => size(w, h));
  wrap('texImage2D', (target, level, format, w, h) => { if (typeof w === 'number') size(w, h); });
  wrap('texStorage3D', (target, levels, format, w, h, d) => { size(w, h); if (d > 256) refuse(d + ' layers'); });
  wrap('texImage3D', (target, level, format, w, h, d) => { size(w, h); if (d > 256) refuse(d + ' layers'); });
  wrap('drawBuffers', (list) => { if (list.length > 4) refuse(list.length + ' draw buffers'); });
  const attachment = (a) => { if (a >= C.COLOR_ATTACHMENT0 + 4 && a <= C.COLOR_ATTACHMENT0 + 15) refuse('attachment ' + (a - C.COLOR_ATTACHMENT0)); };
  wrap('framebufferTexture2D', (target, a) => attachment(a));
  wrap('framebufferTextureLayer', (target, a) => attachment(a));
  wrap('activeTexture', (unit) => { if (unit >= C.TEXTURE0 + 32) refuse('texture unit ' + (unit - C.TEXTURE0)); });
  // A program may sample at most 16 textures per stage: counted over both stages, after linking.
  const samplers = new Set(['SAMPLER_2D', 'SAMPLER_3D', 'SAMPLER_CUBE', 'SAMPLER_2D_ARRAY', 'SAMPLER_2D_SHADOW',
    'SAMPLER_2D_ARRAY_SHADOW', 'SAMPLER_CUBE_SHADOW', 'INT_SAMPLER_2D', 'INT_SAMPLER_3D', 'INT_SAMPLER_CUBE',
    'INT_SAMPLER_2D_ARRAY', 'UNSIGNED_INT_SAMPLER_2D', 'UNSIGNED_INT_SAMPLER_3D', 'UNSIGNED_INT_SAMPLER_CUBE',
    'UNSIGNED_INT_SAMPLER_2D_ARRAY'].map((name) => C[name]));
  const linkProgram = C.linkProgram;
  C.linkProgram = function (program) {
    linkProgram.call(this, program);
    let units = 0;
    for (let i = 0; i < this.getProgramParameter(program, this.ACTIVE_UNIFORMS); i += 1) {
      const info = this.getActiveUniform(program, i);
      if (samplers.has(info.type)) units += info.size;
    }
    if (units > 16) refuse(units + ' textures in one program');
  };
})();\n`;

test("at WebGL2's minimum limits the engine gives the logits of an unrestricted run, in fp32, fp16, int8 and int4", async () => {
  const page = await site.page();
  const run = (where) =>
    where.evaluate(async () => {
      const { GPT2 } = await import('/gpt2.js');
      const out = {};
      for (const weights of ['fp32', 'fp16', 'int8', 'int4']) {
        const model = await GPT2.load('/models/default/', { backend: 'webgl', weights, worker: false });
        const stats = await model.stats();
        out[weights] = {
          logits: Array.from(await model.logits([464, 9116, 531, 326, 262, 1578, 373])),
          maxTextureSize: stats.maxTextureSize,
        };
        await model.dispose();
      }
      return out;
    });
  const unrestricted = await run(page);
  await page.close();
  const low = await site.browser.newPage();
  await low.addInitScript(minimumLimits);
  await low.goto(`${site.url}examples/blank.html`);
  const limited = await run(low).catch((e) => ({ error: e.message }));
  assert.equal(limited.error, undefined, limited.error);
  for (const weights of ['fp32', 'fp16', 'int8', 'int4']) {
    assert.equal(limited[weights].maxTextureSize, 2048, 'the engine read the reported limit');
    const diff = Math.max(...limited[weights].logits.map((v, i) => Math.abs(v - unrestricted[weights].logits[i])));
    console.log(`[ measured ] minimum limits, ${weights}: max |dlogit| against an unrestricted run ${diff}`);
    assert.ok(diff <= 1e-5, `${weights}: max |dlogit| ${diff}`);
  }
  await low.close();
});

// Aborts at every point of a call, in both modes, without timing luck: a load's weights arrive in a
// fixed number of chunks (fetch re-chunks the fixture's model.safetensors into CHUNKS pieces, in the
// page and in the module's worker), so a load has the same progress events every time; the page's
// Worker lets a test act on a worker's reply before the module reads it (onWorkerReply), which is
// how a load or a generation whose worker has finished is aborted on purpose.
const CHUNKS = 3;
const fixedChunks = `(() => {
  const fetchOriginal = globalThis.fetch;
  globalThis.fetch = async function fetch(input, init) {
    const response = await fetchOriginal.call(this, input, init);
    const url = new URL(typeof input === 'string' ? input : input.url, location.href);
    if (url.pathname !== '/models/gpt2-tiny/model.safetensors' || response.status !== 200) return response;
    const bytes = new Uint8Array(await response.arrayBuffer());
    const size = Math.ceil(bytes.length / ${CHUNKS});
    const body = new ReadableStream({
      start(controller) {
        for (let at = 0; at < bytes.length; at += size) controller.enqueue(bytes.slice(at, at + size));
        controller.close();
      },
    });
    return new Response(body, { status: 200, headers: response.headers });
  };
  if (globalThis.document && globalThis.Worker) {
    const WorkerOriginal = globalThis.Worker;
    globalThis.Worker = class Worker extends WorkerOriginal {
      constructor(...args) {
        super(...args);
        this.addEventListener('message', ({ data }) => globalThis.onWorkerReply?.(data));
      }
    };
  }
})();\n`;

// In a page (page.evaluate): loads of gpt2-tiny, each aborted from one of its progress events, the
// last included (the one after which the engine checks the signal no more), then, in worker mode,
// one aborted as the worker's reply arrives; a load aborted after it resolved, whose model then
// generates; generations aborted from their last token, and, in worker mode, as the worker's reply
// that the generation ended arrives; a restore() aborted from its last progress event. Returns what
// each call settled as, and the GL objects left.
async function abortEverywhere({ worker }) {
  const { GPT2 } = await import('/gpt2.js');
  const source = '/models/gpt2-tiny/';
  const options = { worker, cache: false };
  const outcome = (promise) =>
    promise.then(
      async (model) => {
        await model?.dispose();
        return 'settled';
      },
      (e) => e.name,
    );
  const out = { mode: null, loads: [] };

  const events = [];
  const settledFirst = new AbortController();
  const model = await GPT2.load(source, {
    backend: 'webgl',
    ...options,
    signal: settledFirst.signal,
    onProgress: (e) => events.push(e),
  });
  settledFirst.abort();
  out.mode = model.mode;
  out.events = events.map(({ loaded, total }) => ({ loaded, total }));
  out.gl = { loaded: await GPT2.liveGlObjects() };

  for (let at = 0; at < events.length; at += 1) {
    const controller = new AbortController();
    let seen = 0;
    const result = await outcome(
      GPT2.load(source, {
        backend: 'webgl',
        ...options,
        signal: controller.signal,
        onProgress: () => {
          if (seen === at) controller.abort();
          seen += 1;
        },
      }),
    );
    out.loads.push({ at, result, gl: await GPT2.liveGlObjects() });
  }
  if (worker) {
    // The worker has loaded the model and sent its reply: the page aborts before it reads it.
    const controller = new AbortController();
    globalThis.onWorkerReply = (data) => 'result' in data && controller.abort();
    out.replyAbortedLoad = await outcome(
      GPT2.load(source, { backend: 'webgl', ...options, signal: controller.signal }),
    );
    globalThis.onWorkerReply = null;
  }

  const greedy = { maxNewTokens: 4, stopAtEndOfText: false };
  const generate = async (options, onToken) => {
    const ids = [];
    try {
      for await (const t of model.generate('Hello', options)) {
        ids.push(t.id);
        onToken?.(ids);
      }
      return { ids, result: 'settled' };
    } catch (e) {
      return { ids, result: e.name };
    }
  };
  out.alone = await generate(greedy);
  const last = new AbortController();
  out.lastTokenAborted = await generate({ ...greedy, signal: last.signal }, (ids) => {
    if (ids.length === greedy.maxNewTokens) last.abort();
  });
  if (worker) {
    // The worker has generated every token and sent the reply that the generation ended.
    const controller = new AbortController();
    globalThis.onWorkerReply = (data) => 'result' in data && controller.abort();
    out.replyAbortedGeneration = await generate({ ...greedy, signal: controller.signal });
    globalThis.onWorkerReply = null;
  }
  const after = new AbortController();
  out.abortedAfterEnd = await generate({ ...greedy, signal: after.signal });
  after.abort();
  out.afterAborts = await generate(greedy);

  await model.simulateContextLoss();
  const restoring = new AbortController();
  let seen = 0;
  out.restore = await outcome(
    model.restore({
      signal: restoring.signal,
      onProgress: () => {
        seen += 1;
        if (seen === events.length) restoring.abort();
      },
    }),
  );
  out.lostAfterRestore = model.contextLost;
  await model.dispose();
  out.gl.end = await GPT2.liveGlObjects();
  return out;
}

for (const worker of [true, false])
  test(`${worker ? 'worker' : 'same thread'}: an abort before a load, a restore or a generation settles rejects it with AbortError, from every progress event and the last token, whatever the worker had finished`, async () => {
    const page = await site.scriptedPage(fixedChunks);
    const r = await page.evaluate(abortEverywhere, { worker });
    await page.close();
    assert.equal(r.mode.worker, worker, JSON.stringify(r.mode));
    // The chunks, then the event after the model is complete.
    assert.equal(r.events.length, CHUNKS + 1, JSON.stringify(r.events));
    const { total } = r.events.at(-1);
    assert.deepEqual(r.events.at(-1), { loaded: total, total });
    assert.deepEqual(
      r.loads,
      r.events.map((_, at) => ({ at, result: 'AbortError', gl: r.gl.loaded })),
      'every aborted load rejects and frees what it had loaded',
    );
    if (worker) assert.equal(r.replyAbortedLoad, 'AbortError');
    assert.equal(r.alone.result, 'settled');
    assert.equal(r.alone.ids.length, 4);
    assert.deepEqual(r.lastTokenAborted, { ids: r.alone.ids, result: 'AbortError' });
    if (worker) assert.equal(r.replyAbortedGeneration.result, 'AbortError');
    assert.deepEqual(r.abortedAfterEnd, r.alone, 'an abort after the load or the generation settled changes nothing');
    assert.deepEqual(r.afterAborts, r.alone);
    assert.equal(r.restore, 'AbortError');
    assert.equal(r.lostAfterRestore, true, 'an aborted restore leaves the model as it was');
    assert.equal(r.gl.end, 0, 'every model of the check was freed');
  });
