// What an iPhone's WebGL2 refuses, emulated in Chromium by a script that wraps the context as ANGLE's
// Metal back end (Safari's WebGL) answers: a framebuffer of more colour bits than the GPU family
// takes (512 on A11 and later, 256 on A7-A10) is FRAMEBUFFER_UNSUPPORTED while MAX_DRAW_BUFFERS says
// 8, and drawing into one throws; EXT_float_blend is gone (iOS 16+) and blending into a 32-bit float
// target throws; the renderer reads "Apple GPU", so the engine takes its GPU policy. The same script
// goes in front of the module's worker. Each capped run must give what the same emulation without
// the cap gives.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startSite } from './harness.mjs';

let site;
before(async () => {
  site = await startSite();
});
after(() => site?.close());

// `bits`: the cap, or 0 for none (everything else the same). `layeredOnly`: the cap holds only for
// framebuffers of array-texture layers (the engine's passes), not for the load's probe: a limit the
// probe cannot see, to check the error of a framebuffer still refused.
function appleGpu(bits, { layeredOnly = false } = {}) {
  return `(() => {
  const CAP = ${bits};
  const LAYERED_ONLY = ${layeredOnly};
  const layered = new WeakSet();
  for (const C of [globalThis.WebGL2RenderingContext?.prototype].filter(Boolean)) {
    const original = {};
    for (const name of ['getParameter', 'getExtension', 'getSupportedExtensions', 'checkFramebufferStatus', 'framebufferTexture2D',
      'framebufferTextureLayer', 'bindFramebuffer', 'enable', 'disable', 'drawArrays', 'drawArraysInstanced']) original[name] = C[name];
    C.getParameter = function (p) { return p === 0x9246 ? 'Apple GPU' : original.getParameter.call(this, p); };
    C.getExtension = function (name) { return name === 'EXT_float_blend' ? null : original.getExtension.call(this, name); };
    C.getSupportedExtensions = function () { return original.getSupportedExtensions.call(this)?.filter((e) => e !== 'EXT_float_blend') ?? null; };
    // What the bound draw framebuffer carries, kept per framebuffer and forgotten when it changes.
    const described = new WeakMap();
    const state = (gl) => (gl.__apple ??= { framebuffer: null, blend: false });
    const describe = (gl) => {
      const fb = state(gl).framebuffer;
      if (!fb) return { bits: 0, float32: false };
      if (described.has(fb)) return described.get(fb);
      let bits = 0;
      let float32 = false;
      for (let i = 0; i < original.getParameter.call(gl, gl.MAX_COLOR_ATTACHMENTS); i += 1) {
        const at = gl.COLOR_ATTACHMENT0 + i;
        if (!gl.getFramebufferAttachmentParameter(gl.DRAW_FRAMEBUFFER, at, gl.FRAMEBUFFER_ATTACHMENT_OBJECT_NAME)) continue;
        const sizes = [gl.FRAMEBUFFER_ATTACHMENT_RED_SIZE, gl.FRAMEBUFFER_ATTACHMENT_GREEN_SIZE, gl.FRAMEBUFFER_ATTACHMENT_BLUE_SIZE,
          gl.FRAMEBUFFER_ATTACHMENT_ALPHA_SIZE].map((q) => gl.getFramebufferAttachmentParameter(gl.DRAW_FRAMEBUFFER, at, q));
        bits += sizes.reduce((a, b) => a + b, 0);
        if (sizes[0] === 32 && gl.getFramebufferAttachmentParameter(gl.DRAW_FRAMEBUFFER, at, gl.FRAMEBUFFER_ATTACHMENT_COMPONENT_TYPE) === gl.FLOAT) float32 = true;
      }
      const d = { bits, float32 };
      described.set(fb, d);
      return d;
    };
    C.bindFramebuffer = function (target, fb) {
      if (target === this.FRAMEBUFFER || target === this.DRAW_FRAMEBUFFER) state(this).framebuffer = fb;
      return original.bindFramebuffer.call(this, target, fb);
    };
    for (const name of ['framebufferTexture2D', 'framebufferTextureLayer']) {
      C[name] = function (...args) {
        const fb = state(this).framebuffer;
        if (fb) described.delete(fb);
        if (fb && name === 'framebufferTextureLayer') layered.add(fb);
        return original[name].apply(this, args);
      };
    }
    const capped = (gl) => CAP > 0 && describe(gl).bits > CAP && (!LAYERED_ONLY || layered.has(state(gl).framebuffer));
    C.checkFramebufferStatus = function (target) {
      const status = original.checkFramebufferStatus.call(this, target);
      return status === this.FRAMEBUFFER_COMPLETE && capped(this) ? this.FRAMEBUFFER_UNSUPPORTED : status;
    };
    C.enable = function (cap) { if (cap === this.BLEND) state(this).blend = true; return original.enable.call(this, cap); };
    C.disable = function (cap) { if (cap === this.BLEND) state(this).blend = false; return original.disable.call(this, cap); };
    for (const name of ['drawArrays', 'drawArraysInstanced']) {
      C[name] = function (...args) {
        const d = describe(this);
        if (capped(this)) throw new Error('emulated Apple GPU: drawing into ' + d.bits + ' colour bits, above ' + CAP);
        if (state(this).blend && d.float32) throw new Error('emulated Apple GPU: blending into a 32-bit float target without EXT_float_blend');
        return original[name].apply(this, args);
      };
    }
  }
})();\n`;
}

const IPHONE =
  'Mozilla/5.0 (iPhone; CPU iPhone OS 18_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.0 Mobile/15E148 Safari/604.1';

function emulatedPage(bits, { userAgent, ...options } = {}) {
  return site.scriptedPage(appleGpu(bits, options), undefined, userAgent ? { userAgent } : {});
}

// Logits of two prompts, greedy tokens and the lens, for each weight format, in one mode.
function run(page, worker) {
  return page.evaluate(async (worker) => {
    const { GPT2 } = await import('/gpt2.js');
    const out = {};
    for (const weights of ['fp32', 'fp16', 'int8', 'int4']) {
      const model = await GPT2.load('/models/default/', { backend: 'webgl', weights, worker });
      const stats = await model.stats();
      const logits = [
        ...(await model.logits([464, 9116, 531, 326])),
        ...(await model.logits([383, 3139, 373, 257, 1588, 286])),
      ];
      const greedy = [];
      for await (const t of model.generate('The jury said that', { maxNewTokens: 12, stopAtEndOfText: false }))
        greedy.push(t.id);
      const lens = await model.lens('The jury said that', { topK: 3 });
      out[weights] = {
        logits,
        greedy,
        lensIds: Array.from(lens.ids),
        lensProbs: Array.from(lens.probs),
        renderer: stats.renderer,
        colorBits: stats.colorBits,
        renderTargets: stats.renderTargets,
        mode: model.mode,
      };
      await model.dispose();
    }
    return out;
  }, worker);
}

for (const worker of [false, true]) {
  test(`${worker ? 'worker' : 'same thread'}: an iPhone-class WebGL2 (512 and 256 colour bits, no float blending) gives the uncapped run's logits, greedy tokens and lens`, async () => {
    const results = {};
    for (const bits of [0, 512, 256]) {
      const page = await emulatedPage(bits);
      // The emulation bites: a framebuffer of 8 RGBA32F targets is refused above the cap.
      const status = await page.evaluate(() => {
        const gl = document.createElement('canvas').getContext('webgl2');
        gl.getExtension('EXT_color_buffer_float');
        gl.bindFramebuffer(gl.FRAMEBUFFER, gl.createFramebuffer());
        for (let i = 0; i < 8; i += 1) {
          const t = gl.createTexture();
          gl.bindTexture(gl.TEXTURE_2D, t);
          gl.texStorage2D(gl.TEXTURE_2D, 1, gl.RGBA32F, 1, 1);
          gl.framebufferTexture2D(gl.FRAMEBUFFER, gl.COLOR_ATTACHMENT0 + i, gl.TEXTURE_2D, t, 0);
        }
        return gl.checkFramebufferStatus(gl.FRAMEBUFFER);
      });
      assert.equal(status, bits ? 0x8cdd : 0x8cd5, `${bits} bits: 8 RGBA32F targets`);
      results[bits] = await run(page, worker).catch((e) => ({ error: e.message }));
      await page.close();
      assert.equal(results[bits].error, undefined, `${bits} bits: ${results[bits].error}`);
    }
    for (const weights of ['fp32', 'fp16', 'int8', 'int4']) {
      const free = results[0][weights];
      assert.equal(free.renderer, 'Apple GPU');
      assert.equal(free.mode.worker, worker);
      for (const bits of [512, 256]) {
        const capped = results[bits][weights];
        assert.equal(capped.colorBits, bits, `the probe found the cap (${weights})`);
        assert.equal(capped.renderTargets, bits / 128);
        const diff = Math.max(...capped.logits.map((v, i) => Math.abs(v - free.logits[i])));
        const lensDiff = Math.max(...capped.lensProbs.map((v, i) => Math.abs(v - free.lensProbs[i])));
        console.log(
          `[ measured ] ${worker ? 'worker' : 'same thread'}, emulated Apple GPU, ${weights}, ${bits} colour bits: max |dlogit| against uncapped ${diff}, lens max |dprob| ${lensDiff}`,
        );
        assert.ok(diff <= 1e-5, `${weights}, ${bits} bits: max |dlogit| ${diff}`);
        assert.deepEqual(capped.greedy, free.greedy, `${weights}, ${bits} bits: greedy`);
        assert.deepEqual(capped.lensIds, free.lensIds, `${weights}, ${bits} bits: lens ids`);
        assert.ok(lensDiff <= 1e-5, `${weights}, ${bits} bits: lens max |dprob| ${lensDiff}`);
      }
    }
  });
}

test("a framebuffer the GPU still refuses fails with its status by name and its targets' formats and bits", async () => {
  const page = await emulatedPage(512, { layeredOnly: true });
  const message = await page.evaluate(async () => {
    const { GPT2 } = await import('/gpt2.js');
    try {
      const model = await GPT2.load('/models/default/', { backend: 'webgl', weights: 'fp32', worker: false });
      await model.logits([464, 9116, 531, 326, 262, 1578, 373, 257, 1588]);
      await model.dispose();
      return 'no error';
    } catch (e) {
      return e.message;
    }
  });
  assert.match(
    message,
    /^matmul\.frag: the GPU refuses this pass's framebuffer: FRAMEBUFFER_UNSUPPORTED \(0x8cdd\): 8 RGBA32F targets, 1,024 colour bits; some GPUs take fewer colour bits in one pass than MAX_DRAW_BUFFERS suggests: try a lower tuning\.maxColorBits/,
  );
  await page.close();
});

// One report has an iPhone claim MAX_TEXTURE_SIZE 16384 and crash above 4096: on an Apple GPU in a
// phone the engine keeps to 4096, which folds the bundled model's 50,257-row embedding into more
// panels and changes no logit. A desktop with the same renderer (a Mac) keeps the context's limit.
test("an Apple GPU in a phone keeps textures to 4096, with the logits of a Mac's larger ones, in both modes", async () => {
  const measure = async (userAgent) => {
    const page = await emulatedPage(0, { userAgent });
    const r = await page.evaluate(async () => {
      const { GPT2 } = await import('/gpt2.js');
      const out = [];
      for (const worker of [false, true]) {
        const model = await GPT2.load('/models/default/', { backend: 'webgl', weights: 'fp32', worker });
        out.push({
          maxTextureSize: (await model.stats()).maxTextureSize,
          logits: Array.from(await model.logits([464, 9116, 531, 326])),
        });
        await model.dispose();
      }
      return out;
    });
    await page.close();
    return r;
  };
  const mac = await measure(undefined);
  const phone = await measure(IPHONE);
  for (const [i, mode] of ['same thread', 'worker'].entries()) {
    assert.ok(mac[i].maxTextureSize > 4096, `${mode}: a desktop keeps the context's ${mac[i].maxTextureSize}`);
    assert.equal(phone[i].maxTextureSize, 4096, mode);
    const diff = Math.max(...phone[i].logits.map((v, j) => Math.abs(v - mac[i].logits[j])));
    assert.ok(diff <= 1e-5, `${mode}: max |dlogit| ${diff}`);
  }
});
