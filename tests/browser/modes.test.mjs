// Where the engine runs, in Chromium: by default a Worker, and the page's thread where the browser
// gives a Worker no WebGL2 (forced here as WebKit has it); one contract in both modes; and a WebGL2
// that offers no more than the spec's minimums, as a conformant low-end phone may.
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
    const model = await GPT2.load('/models/default/');
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
  });
  await page.close();

  const fallback = await site.scriptedPage(noOffscreenWebgl2);
  const r = await fallback.evaluate(async () => {
    const { GPT2 } = await import('/gpt2.js');
    const warnings = [];
    const model = await GPT2.load('/models/default/', {
      onProgress: ({ warning }) => warning && warnings.push(warning),
    });
    const ids = [];
    for await (const t of model.generate('The jury said that', { maxNewTokens: 12, stopAtEndOfText: false }))
      ids.push(t.id);
    const canvases = document.querySelectorAll('canvas').length;
    await model.dispose();
    const forced = await GPT2.load('/models/default/', { worker: true }).then(
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
        const model = await GPT2.load('/models/default/', { weights, worker: false });
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
