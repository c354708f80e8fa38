// The ES module in headless Chromium (WebGL2 over SwiftShader) against the Hugging Face fixture, in
// both modes: the engine in the module's Worker (the default) and on the page's thread.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { evaluateCheck, root, serveSite, siteDir, startSite, testModelsDir, tinyModelDir } from './harness.mjs';
import {
  assertConstraintCheck,
  assertInterventionsCheck,
  assertLensCheck,
  CONSTRAINT_CASES,
  CONSTRAINT_SETTINGS,
  constraintCheck,
  fixtureCheck,
  interventionsCheck,
  lensCheck,
} from './page-checks.mjs';

const reference = JSON.parse(readFileSync(join(root, 'tests/fixtures/gpt2-tiny/reference.json'), 'utf8'));
const prompts = Object.values(reference.prompts);
let site;
let page;

before(async () => {
  // The checkpoint as a GGUF F32 file (native gpt2-gguf: Conv1D weights stored transposed, as
  // llama.cpp stores them), and a file in the retired packed format: a safetensors header whose
  // metadata names it, which is all a load reads before it refuses the file.
  const models = testModelsDir;
  mkdirSync(models, { recursive: true });
  execFileSync(join(root, 'build/native/gpt2-gguf'), [tinyModelDir, join(models, 'tiny-f32.gguf'), '--type', 'F32']);
  const header = Buffer.from(
    JSON.stringify({
      __metadata__: { format: 'gpt2-webgl-packed', format_version: '1' },
      wte: { dtype: 'F32', shape: [1, 4], data_offsets: [0, 16] },
    }),
  );
  const length = Buffer.alloc(8);
  length.writeBigUInt64LE(BigInt(header.length));
  writeFileSync(join(models, 'old.gpt2'), Buffer.concat([length, header, Buffer.alloc(16)]));
  site = await startSite();
  page = await site.page();
  // Headless CI can pass on a blank canvas when WebGL silently fails: assert the context first.
  const renderer = await page.evaluate(() => {
    const gl = document.createElement('canvas').getContext('webgl2');
    return gl?.getParameter(gl.VERSION);
  });
  assert.match(renderer ?? 'none', /WebGL 2/, 'the browser must provide WebGL2');
});
after(() => site?.close());

// Runs the fixture checks inside the page; returns the measured maxima.
function checkFixture(options) {
  return page.evaluate(fixtureCheck, { options, prompts });
}

const modes = [
  { worker: true, name: 'worker' },
  { worker: false, name: 'same thread' },
];

for (const { worker, name } of modes)
  for (const maxTextureSize of [0, 256]) {
    test(`${name}: fp32 weights, max texture ${maxTextureSize || 'native'}: logits, greedy tokens and attention match Hugging Face`, async () => {
      const r = await checkFixture({ weights: 'fp32', maxTextureSize, worker });
      console.log(
        `[ measured ] browser ${name} fp32 max ${maxTextureSize}: max |dlogit| ${r.logitDiff}, max |dprob| ${r.attentionDiff}`,
      );
      assert.ok(r.logitDiff <= 1e-4, `max |dlogit| ${r.logitDiff}`);
      assert.ok(r.greedyEqual, 'greedy continuation differs');
      assert.ok(r.attentionDiff <= 1e-4, `max |dprob| ${r.attentionDiff}`);
      assert.deepEqual(r.shape, [4, 5]);
    });
  }

// What GPUs run by default (split-K blends instances into float targets: EXT_float_blend must be
// enabled in WebGL; prompt matmuls write groups of rows through multiple render targets) and fp16 row
// pairs, forced on SwiftShader through `tuning`.
for (const { worker, name } of modes)
  test(`${name}: split-K, row-tiled prompts and fp16 row pairs, as on GPUs: logits, greedy tokens and attention match Hugging Face`, async () => {
    const split = await checkFixture({ weights: 'fp32', tuning: { splitTexels: 3, halfPairs: false }, worker });
    console.log(
      `[ measured ] browser fp32 split 3: max |dlogit| ${split.logitDiff}, max |dprob| ${split.attentionDiff}`,
    );
    assert.ok(split.logitDiff <= 1e-4, `max |dlogit| ${split.logitDiff}`);
    assert.ok(split.greedyEqual, 'greedy continuation differs');
    assert.ok(split.attentionDiff <= 1e-4, `max |dprob| ${split.attentionDiff}`);
    // fp16: the tolerance of tests/model/fixture_logits_test.cpp (weight rounding only).
    const tiled = await checkFixture({ weights: 'fp32', tuning: { splitTexels: 3, rowsPerFragment: 4 }, worker });
    console.log(
      `[ measured ] browser fp32 split 3, 4 rows per fragment: max |dlogit| ${tiled.logitDiff}, max |dprob| ${tiled.attentionDiff}`,
    );
    assert.ok(tiled.logitDiff <= 1e-4, `max |dlogit| ${tiled.logitDiff}`);
    assert.ok(tiled.greedyEqual, 'greedy continuation differs');
    assert.ok(tiled.attentionDiff <= 1e-4, `max |dprob| ${tiled.attentionDiff}`);
    const pairs = await checkFixture({ weights: 'fp16', tuning: { splitTexels: 3, halfPairs: true }, worker });
    console.log(`[ measured ] browser fp16 row pairs, split 3: max |dlogit| ${pairs.logitDiff}`);
    assert.ok(pairs.logitDiff <= 0.01, `max |dlogit| ${pairs.logitDiff}`);
    const bad = await page.evaluate(async (worker) => {
      const { GPT2 } = await import('/gpt2.js');
      const errors = [];
      for (const tuning of [{ splitTexel: 3 }, { halfPairs: 'yes' }, { splitTexels: -1 }, { rowsPerFragment: 3 }]) {
        try {
          await (await GPT2.load('/models/gpt2-tiny/', { backend: 'webgl', tuning, worker })).dispose();
          errors.push('no error');
        } catch (e) {
          errors.push(e.message);
        }
      }
      return errors;
    }, worker);
    assert.match(bad[0], /tuning: unknown option splitTexel/);
    assert.match(bad[1], /tuning.halfPairs must be true or false/);
    assert.match(bad[2], /tuning.splitTexels must be an integer >= 0/);
    assert.match(bad[3], /rowsPerFragment must be 1, 2, 4 or 8/);
  });

for (const { worker, name } of modes)
  test(`${name}: benchmark() reports draws and readback per token and a profile of every pass, greedy or sampled`, async () => {
    const r = await page.evaluate(async (worker) => {
      const { GPT2 } = await import('/gpt2.js');
      const model = await GPT2.load('/models/gpt2-tiny/', { backend: 'webgl', worker });
      const result = await model.benchmark({ promptTokens: 5, newTokens: 3, profile: true });
      // The demo's sampling: its steps draw as generate() does, and the profile shows the sampler's passes.
      const demo = { temperature: 0.8, topK: 40, topP: 0.95, repetitionPenalty: 1.2, seed: 1 };
      result.sampled = await model.benchmark({ promptTokens: 5, newTokens: 3, profile: true, ...demo });
      await model.dispose();
      return result;
    }, worker);
    assert.ok(
      r.sampled.profile_ms_per_token['sample_choose.frag -> chosen token'] > 0,
      JSON.stringify(r.sampled.profile_ms_per_token),
    );
    assert.ok(r.sampled.passes_per_token > r.passes_per_token, `${r.sampled.passes_per_token} passes`);
    // Per layer 8 passes, and 2 more for K and V on a software renderer (Tuning::passPerOutput); then
    // the embedding, the final LayerNorm, lm_head and 2 top-k passes.
    assert.equal(r.passes_per_token, 10 * 2 + 3 + 2);
    assert.equal(r.readback_bytes_per_token, 16);
    assert.deepEqual([r.prompt_tokens, r.new_tokens], [5, 3]);
    for (const field of ['prefill_ms', 'decode_ms_per_token', 'decode_latency_ms'])
      assert.ok(Number.isFinite(r[field]) && r[field] > 0, `${field}: ${r[field]}`);
    // Two tokens may arrive within one tick of the page's clock.
    for (const field of ['decode_ms_first', 'decode_ms_last'])
      assert.ok(Number.isFinite(r[field]) && r[field] >= 0, `${field}: ${r[field]}`);
    // SwiftShader is a software renderer, whose passes the page times by wall clock (GPU timer queries
    // are for hardware GPUs: tests/bench/page/bench.js reports them from the GPU machine).
    assert.equal(r.profile_source, 'wall clock, each pass waiting for its result');
    const entries = Object.entries(r.profile_ms_per_token);
    assert.ok(entries.length >= 8, JSON.stringify(r.profile_ms_per_token));
    for (const [pass, ms] of entries) assert.ok(ms > 0, `${pass}: ${ms} ms`);
    assert.deepEqual(Object.keys(r.profile_matmuls).sort(), [
      'attn.c_attn',
      'attn.c_proj',
      'lm_head',
      'mlp.c_fc',
      'mlp.c_proj',
    ]);
    for (const [kind, m] of Object.entries(r.profile_matmuls))
      assert.ok(m.ms_per_token > 0 && m.weights > 0 && m.g_weights_per_s > 0, `${kind}: ${JSON.stringify(m)}`);
    assert.ok(
      r.profile_prefill_ms['attention_apply.frag -> attention output'] > 0,
      JSON.stringify(r.profile_prefill_ms),
    );
  });

for (const { worker, name } of modes)
  test(`${name}: a GGUF F32 file of the checkpoint loads with its tokenizer and the same logits; a packed model file or a lone safetensors file is refused with what to load instead`, async () => {
    const r = await page.evaluate(
      async ({ p1, worker }) => {
        const { GPT2 } = await import('/gpt2.js');
        const model = await GPT2.load('/test-models/tiny-f32.gguf', { backend: 'webgl', weights: 'fp32', worker });
        const logits = await model.logits(p1.ids);
        const out = {
          ids: await model.tokenize(p1.text),
          diff: Math.max(...p1.last_logits.map((v, i) => Math.abs(v - logits[i]))),
        };
        await model.dispose();
        const refusal = (source) =>
          GPT2.load(source, { backend: 'webgl', worker }).then(
            (m) => m.dispose().then(() => 'loaded'),
            (e) => e.message,
          );
        out.packed = await refusal('/test-models/old.gpt2');
        out.lone = await refusal('/models/gpt2-tiny/model.safetensors');
        return out;
      },
      { p1: prompts[0], worker },
    );
    assert.deepEqual(r.ids, prompts[0].ids);
    assert.ok(r.diff <= 1e-4, `max |dlogit| ${r.diff}`);
    assert.match(
      r.packed,
      /old\.gpt2: a packed model file, a format this engine no longer reads; make a GGUF file from the checkpoint folder it was packed from: gpt2-gguf DIR model\.gguf/,
    );
    assert.match(r.lone, /model\.safetensors: a safetensors file is a model only with its checkpoint folder/);
  });

test("worker: int8 weights, quantized at load from a checkpoint or a GGUF F32 file, keep the fixture's greedy tokens", async () => {
  const r = await page.evaluate(async (prompts) => {
    const { GPT2 } = await import('/gpt2.js');
    const fp32 = await GPT2.load('/models/gpt2-tiny/', { backend: 'webgl', weights: 'fp32' });
    const int8 = await GPT2.load('/models/gpt2-tiny/', { backend: 'webgl', weights: 'int8' });
    const gguf = await GPT2.load('/test-models/tiny-f32.gguf', { backend: 'webgl', weights: 'int8' });
    const out = { firstEqual: true, agreed: 0, total: 0, logitDiff: 0, ggufDiff: 0 };
    for (const p of prompts) {
      const greedy = async (model) => {
        const ids = [];
        for await (const t of model.generate(p.ids, { maxNewTokens: 20, stopAtEndOfText: false })) ids.push(t.id);
        return ids;
      };
      const [a, b] = [await greedy(fp32), await greedy(int8)];
      if (a[0] !== b[0]) out.firstEqual = false;
      let same = 0;
      while (same < a.length && a[same] === b[same]) same += 1;
      out.agreed += same;
      out.total += a.length;
      const [la, lb, lc] = [await fp32.logits(p.ids), await int8.logits(p.ids), await gguf.logits(p.ids)];
      la.forEach((v, i) => {
        out.logitDiff = Math.max(out.logitDiff, Math.abs(v - lb[i]));
      });
      lb.forEach((v, i) => {
        out.ggufDiff = Math.max(out.ggufDiff, Math.abs(v - lc[i]));
      });
    }
    out.bytes = [(await fp32.stats()).gpuBytes, (await int8.stats()).gpuBytes];
    for (const model of [fp32, int8, gguf]) await model.dispose();
    return out;
  }, prompts);
  console.log(
    `[ measured ] browser int8: ${r.agreed} of ${r.total} greedy tokens as fp32's before the first difference, max |dlogit| against fp32 ${r.logitDiff}, GPU bytes ${r.bytes[1]} against fp32's ${r.bytes[0]}`,
  );
  assert.ok(r.firstEqual, 'the first greedy token of each prompt');
  // A GGUF F32 file (transposed on the GPU, then quantized there) holds the same int8 values as the
  // checkpoint quantized at load.
  assert.equal(r.ggufDiff, 0);
  assert.ok(r.bytes[1] < r.bytes[0] / 2, JSON.stringify(r.bytes));
});

for (const { worker, name } of modes)
  test(`${name}: kvCache 'fp16' keeps the logits within the fp16 bound of Hugging Face and halves the cache`, async () => {
    const r = await page.evaluate(
      async ({ prompts, worker }) => {
        const { GPT2 } = await import('/gpt2.js');
        const out = { diff: 0, bytes: [] };
        for (const kvCache of ['fp32', 'fp16']) {
          const model = await GPT2.load('/models/gpt2-tiny/', { backend: 'webgl', weights: 'fp32', kvCache, worker });
          out.bytes.push((await model.stats()).gpuBytes);
          if (kvCache === 'fp16') {
            for (const p of prompts) {
              const logits = await model.logits(p.ids);
              p.last_logits.forEach((v, j) => {
                out.diff = Math.max(out.diff, Math.abs(v - logits[j]));
              });
            }
          }
          await model.dispose();
        }
        out.refused = await GPT2.load('/models/gpt2-tiny/', { backend: 'webgl', kvCache: 'int8', worker }).then(
          () => 'loaded',
          (e) => e.message,
        );
        return out;
      },
      { prompts, worker },
    );
    console.log(
      `[ measured ] browser ${name} fp16 K/V: max |dlogit| against Hugging Face ${r.diff}, GPU bytes ${r.bytes.join(' -> ')}`,
    );
    assert.ok(r.diff <= 0.01, `max |dlogit| ${r.diff}`);
    const { n_layer: layers, n_positions: positions, n_embd: embed } = reference.config;
    const saved = r.bytes[0] - r.bytes[1];
    assert.ok(
      saved >= layers * 2 * positions * embed * 2 && saved <= 1.25 * layers * 2 * positions * embed * 2,
      `saved ${saved} bytes`,
    );
    assert.equal(r.refused, "kvCache must be 'fp32' or 'fp16', got \"int8\"");
  });

for (const { worker, name } of modes)
  test(`${name}: int4 weights, quantized on the GPU at load from a checkpoint or a GGUF F32 file, give the native engine's int4 logits`, async () => {
    // The native engine's int4 logits are checked against the CPU reference over the same 4-bit weights
    // (tests/model/int4_weights_test.cpp).
    const native = prompts.map(
      (p) =>
        JSON.parse(
          execFileSync(
            join(root, 'build/native/gpt2'),
            [
              'logits',
              '--model',
              tinyModelDir,
              '--ids',
              p.ids.join(','),
              '--weights',
              'int4',
              '--half-prompt-inputs',
              'off',
            ],
            { encoding: 'utf8' },
          ),
        ).logits,
    );
    const r = await page.evaluate(
      async ({ prompts, native, worker }) => {
        const { GPT2 } = await import('/gpt2.js');
        const out = { diff: 0, bytes: [] };
        for (const source of ['/models/gpt2-tiny/', '/test-models/tiny-f32.gguf']) {
          // SwiftShader is a software renderer: its prompt inputs are fp32, as the native run's here.
          const model = await GPT2.load(source, { backend: 'webgl', weights: 'int4', worker });
          for (const [i, p] of prompts.entries()) {
            const logits = await model.logits(p.ids);
            native[i].forEach((v, j) => {
              out.diff = Math.max(out.diff, Math.abs(v - logits[j]));
            });
          }
          out.bytes.push((await model.stats()).gpuBytes);
          await model.dispose();
        }
        const fp16 = await GPT2.load('/models/gpt2-tiny/', { backend: 'webgl', worker });
        out.bytes.push((await fp16.stats()).gpuBytes);
        await fp16.dispose();
        return out;
      },
      { prompts, native, worker },
    );
    console.log(
      `[ measured ] browser ${name} int4: max |dlogit| against the native engine's ${r.diff}, GPU bytes ${r.bytes.join(', ')} (the last fp16's)`,
    );
    // The same codes and scales on every conformant GPU (quantize_block_params.frag): only fp32 error is left.
    assert.ok(r.diff <= 1e-4, `max |dlogit| ${r.diff}`);
    assert.equal(r.bytes[0], r.bytes[1]);
    assert.ok(r.bytes[0] < r.bytes[2], JSON.stringify(r.bytes));
  });

for (const { worker, name } of modes)
  test(`${name}: perplexity() of held-out Brown text equals the native CLI's`, async () => {
    const textFile = join(root, 'tests/fixtures/brown-heldout/ca19-opening.txt');
    // The native engine's perplexity is checked against the CPU reference (tests/engine/perplexity_test.cpp).
    const native = JSON.parse(
      execFileSync(join(root, 'build/native/gpt2'), [
        'perplexity',
        '--model',
        join(siteDir, 'models/default'),
        '--text-file',
        textFile,
        '--weights',
        'fp32',
        '--window',
        '300',
      ]).toString(),
    );
    const r = await page.evaluate(
      async ({ text, worker }) => {
        const { GPT2 } = await import('/gpt2.js');
        const model = await GPT2.load('/models/default/', { backend: 'webgl', weights: 'fp32', worker });
        const out = {
          windowed: await model.perplexity(text, { window: 300 }),
          whole: await model.perplexity(await model.tokenize(text)),
        };
        try {
          await model.perplexity(text, { window: 1 });
        } catch (e) {
          out.refused = e.message;
        }
        out.context = model.config.n_positions;
        await model.dispose();
        return out;
      },
      { text: readFileSync(textFile, 'utf8'), worker },
    );
    console.log(
      `[ measured ] browser ${name}: perplexity ${r.windowed.perplexity} (native ${native.perplexity}), window of the context: ${r.whole.perplexity}`,
    );
    assert.equal(r.windowed.tokens, native.tokens);
    assert.ok(
      Math.abs(r.windowed.perplexity - native.perplexity) <= 1e-4 * native.perplexity,
      JSON.stringify({ r, native }),
    );
    assert.ok(Math.abs(r.windowed.perplexity - Math.exp(r.windowed.nll)) <= 1e-9 * r.windowed.perplexity);
    assert.equal(r.whole.tokens, 582 - Math.ceil(582 / r.context));
    assert.match(r.refused, /^perplexity: window must be an integer >= 2, got /);
  });

for (const { worker, name } of modes)
  test(`${name}: progress events rise monotonically to the total`, async () => {
    const events = await page.evaluate(async (worker) => {
      const { GPT2 } = await import('/gpt2.js');
      const events = [];
      const model = await GPT2.load('/models/gpt2-tiny/', {
        backend: 'webgl',
        onProgress: (e) => events.push(e),
        worker,
      });
      await model.dispose();
      return events;
    }, worker);
    assert.ok(events.length >= 3, `only ${events.length} events`);
    for (let i = 1; i < events.length; i += 1) {
      assert.ok(events[i].loaded >= events[i - 1].loaded, 'loaded never decreases');
      assert.equal(events[i].total, events[0].total, 'the total is known from the start');
    }
    assert.equal(events.at(-1).loaded, events.at(-1).total);
    assert.equal(events.at(-1).total, readFileSync(join(root, 'tests/fixtures/gpt2-tiny/model.safetensors')).length);
  });

// The GPU bytes a model's textures take come with the progress events before its weights are
// uploaded, and maxGpuBytes refuses a model above it before allocating any texture.
for (const { worker, name } of modes)
  test(`${name}: progress tells the model's GPU bytes before its weights arrive, and maxGpuBytes refuses up front`, async () => {
    const r = await page.evaluate(async (worker) => {
      const { GPT2 } = await import('/gpt2.js');
      const events = [];
      const model = await GPT2.load('/models/default/', {
        backend: 'webgl',
        onProgress: (e) => events.push(e),
        worker,
        cache: false,
      });
      const { gpuBytes } = await model.stats();
      await model.dispose();
      const before = await GPT2.liveGlObjects();
      const refused = await GPT2.load('/models/default/', { backend: 'webgl', worker, maxGpuBytes: gpuBytes - 1 }).then(
        () => 'loaded',
        (e) => e.message,
      );
      return { events, gpuBytes, refused, before, after: await GPT2.liveGlObjects() };
    }, worker);
    const first = r.events.findIndex((e) => e.gpuBytes !== undefined);
    assert.ok(first >= 0, 'an event carries gpuBytes');
    assert.ok(
      r.events[first].loaded < r.events[first].total,
      `known at ${r.events[first].loaded} of ${r.events[first].total} bytes`,
    );
    assert.ok(
      r.events.slice(first).every((e) => e.gpuBytes === r.gpuBytes),
      `the figure is stats().gpuBytes, ${r.gpuBytes}`,
    );
    assert.match(
      r.refused,
      /^this model's textures would take [\d,]+\.\d MB of GPU memory \(weights [\d,.]+ MB, activations and KV cache [\d,.]+ MB\), more than maxGpuBytes [\d,.]+ MB; try int8 or int4 weights, a 4-bit GGUF file, or a smaller model/,
    );
    assert.equal(r.after, r.before, 'the refused load left no GL object');
  });

for (const { worker, name } of modes)
  test(`${name}: abort stops generation within one token, and generation starts again afterwards`, async () => {
    const r = await page.evaluate(async (worker) => {
      const { GPT2 } = await import('/gpt2.js');
      const model = await GPT2.load('/models/gpt2-tiny/', { backend: 'webgl', worker });
      const controller = new AbortController();
      const seen = [];
      let error = null;
      try {
        for await (const t of model.generate('Hello', {
          maxNewTokens: 40,
          stopAtEndOfText: false,
          signal: controller.signal,
        })) {
          seen.push(t.id);
          if (seen.length === 3) controller.abort();
        }
      } catch (e) {
        error = e.name;
      }
      const again = [];
      for await (const t of model.generate('Hello', { maxNewTokens: 5, stopAtEndOfText: false })) again.push(t.id);
      await model.dispose();
      return { seen: seen.length, error, again: again.length };
    }, worker);
    assert.equal(r.seen, 3, 'no token after the abort');
    assert.equal(r.error, 'AbortError');
    assert.equal(r.again, 5);
  });

for (const { worker, name } of modes)
  test(`${name}: five load/dispose cycles leave the live GL object count where it started`, async () => {
    const counts = await page.evaluate(async (worker) => {
      const { GPT2 } = await import('/gpt2.js');
      const counts = [await GPT2.liveGlObjects()];
      for (let i = 0; i < 5; i += 1) {
        const model = await GPT2.load('/models/gpt2-tiny/', {
          backend: 'webgl',
          maxTextureSize: i % 2 ? 256 : 0,
          worker,
        });
        for await (const t of model.generate('Hi', { maxNewTokens: 3 })) void t;
        await model.attention(1);
        counts.push(await GPT2.liveGlObjects());
        await model.dispose();
        counts.push(await GPT2.liveGlObjects());
      }
      return counts;
    }, worker);
    assert.ok(counts[1] > counts[0] + 50, `a loaded model holds GL objects (${counts[1]})`);
    for (let i = 2; i < counts.length; i += 2) assert.equal(counts[i], counts[0], `after dispose ${i / 2}: ${counts}`);
  });

for (const { worker, name } of modes)
  test(`${name}: bad input rejects with a clear Error`, async () => {
    const errors = await page.evaluate(async (worker) => {
      const { GPT2 } = await import('/gpt2.js');
      const attempt = async (f) => {
        try {
          await f();
          return 'no error';
        } catch (e) {
          return e.message;
        }
      };
      const model = await GPT2.load('/models/gpt2-tiny/', { backend: 'webgl', worker });
      const out = {
        unreachable: await attempt(() => GPT2.load('http://127.0.0.1:9/nothing/', { backend: 'webgl', worker })),
        missing: await attempt(() => GPT2.load('/models/missing/', { backend: 'webgl', worker })),
        scheme: await attempt(() => GPT2.load('file:///etc/', { backend: 'webgl', worker })),
        weights: await attempt(() => GPT2.load('/models/gpt2-tiny/', { backend: 'webgl', weights: 'fp8', worker })),
        badToken: await attempt(() => model.logits([50257])),
        topP: await attempt(async () => {
          for await (const t of model.generate('a', { topP: 2, temperature: 1 })) void t;
        }),
        emptyPrompt: await attempt(async () => {
          for await (const t of model.generate('')) void t;
        }),
        unknownOption: await attempt(async () => {
          for await (const t of model.generate('a', { maxTokens: 3 })) void t;
        }),
        // Every method's options object is checked as generate's is, none dropped unread.
        logitsOption: await attempt(() => model.logits([1], { intervention: [] })),
        lensOption: await attempt(() => model.lens([1], { topk: 3 })),
        lensTopK: await attempt(() => model.lens([1], { topK: 0 })),
        hiddenStatesLayer: await attempt(() => model.hiddenStates([1], {})),
        tokenizeOption: await attempt(() => model.tokenize('a', { special: false })),
        benchmarkOption: await attempt(() => model.benchmark({ tokens: 4 })),
      };
      await model.dispose();
      out.disposed = await attempt(() => model.logits([1]));
      return out;
    }, worker);
    assert.match(errors.unreachable, /127\.0\.0\.1:9\/nothing\/config\.json: could not be fetched/);
    assert.match(errors.missing, /models\/missing\/config\.json: HTTP 404/);
    assert.match(errors.scheme, /only http\(s\) model URLs/);
    assert.match(errors.weights, /weights must be 'fp16' or 'fp32'/);
    assert.match(errors.badToken, /token id 50257 at position 0 is outside the vocabulary/);
    assert.match(errors.topP, /topP must be in \(0, 1\]/);
    assert.match(errors.emptyPrompt, /the prompt is empty/);
    assert.match(errors.unknownOption, /generate: unknown option maxTokens/);
    assert.equal(errors.logitsOption, 'logits: unknown option intervention; known: interventions');
    assert.equal(errors.lensOption, 'lens: unknown option topk; known: topK, interventions');
    assert.equal(errors.lensTopK, 'lens: topK must be an integer >= 1, got 0');
    assert.match(errors.hiddenStatesLayer, /^hiddenStates: layer is required/);
    assert.equal(errors.tokenizeOption, 'tokenize: unknown option special; known: allowSpecial');
    assert.equal(
      errors.benchmarkOption,
      'benchmark: unknown option tokens; known: promptTokens, newTokens, profile, temperature, topK, topP, repetitionPenalty, seed, interventions',
    );
    assert.match(errors.disposed, /disposed/);
  });

// A site that loads the module from another origin (a CDN): the worker starts from a same-origin
// blob that imports the module's worker by its absolute URL.
test('worker: the module served from another origin starts its worker and generates', async () => {
  const cdn = await serveSite({ cors: true });
  try {
    const moduleBase = `http://127.0.0.1:${cdn.address().port}/`;
    assert.notEqual(new URL(moduleBase).origin, new URL(site.url).origin);
    const r = await page.evaluate(async (base) => {
      const { GPT2 } = await import(`${base}gpt2.js`);
      const model = await GPT2.load(`${base}models/gpt2-tiny/`, { backend: 'webgl', weights: 'fp32' });
      const ids = [];
      for await (const t of model.generate([15496, 11, 616, 1438, 318], { maxNewTokens: 4, stopAtEndOfText: false }))
        ids.push(t.id);
      await model.dispose();
      return ids;
    }, moduleBase);
    assert.deepEqual(r, prompts[0].greedy.slice(0, 4));
  } finally {
    // close() waits for every open connection: the browser's kept-alive ones, or one whose response
    // it stopped reading, must not hold the run.
    cdn.closeAllConnections();
    await new Promise((ok) => cdn.close(ok));
  }
});

// The logit lens and hidden states against Hugging Face's (tests/fixtures/gpt2-tiny/
// hidden_states.json, made by transformers with make_hidden_states.py), fp32 weights, both modes.
const hiddenStates = JSON.parse(readFileSync(join(root, 'tests/fixtures/gpt2-tiny/hidden_states.json'), 'utf8'));
for (const { worker, name } of modes)
  test(`${name}: lens() and hiddenStates() match Hugging Face's logit lens and hidden states`, async () => {
    const r = await page.evaluate(lensCheck, { options: { weights: 'fp32', worker }, prompts: hiddenStates.prompts });
    console.log(
      `[ measured ] browser ${name}: lens max |dprob| against Hugging Face ${r.probDiff}, hidden states max |diff| ${r.stateDiff}`,
    );
    assertLensCheck(r);
  });

// Interventions against Hugging Face's hooks (tests/fixtures/gpt2-tiny/interventions.json, made by
// make_interventions.py), fp32 weights, through every method that takes them, both modes.
const interventions = JSON.parse(readFileSync(join(root, 'tests/fixtures/gpt2-tiny/interventions.json'), 'utf8'));
for (const { worker, name } of modes)
  test(`${name}: interventions match Hugging Face's hooks in logits, perplexity, hidden states, attention, lens and generate`, async () => {
    const r = await evaluateCheck(page, interventionsCheck, {
      options: { weights: 'fp32', worker },
      fixture: interventions,
    });
    console.log(
      `[ measured ] browser ${name} interventions: max |dlogit| ${r.logitDiff}, |dnll| ${r.nllDiff}, hidden ${r.stateDiff}, attention ${r.attentionDiff}`,
    );
    assertInterventionsCheck(r);
  });

// Constrained output on the bundled model, both modes: every output matches its regex or fits its
// schema, across sampling settings and seeds.
for (const { worker, name } of modes)
  test(`${name}: every output of a regex or a JSON schema matches it, greedy and sampled`, async () => {
    const r = await evaluateCheck(page, constraintCheck, {
      options: { worker },
      cases: CONSTRAINT_CASES,
      settings: CONSTRAINT_SETTINGS,
    });
    await assertConstraintCheck(r);
  });

// Live views: tokens carry what their positions captured while generating; it equals the lens and
// attention of the whole sequence computed afterwards.
for (const { worker, name } of modes)
  test(`${name}: generate() with live views hands out the lens and attention of each position once`, async () => {
    const r = await page.evaluate(
      async ({ p, worker }) => {
        const { GPT2 } = await import('/gpt2.js');
        const model = await GPT2.load('/models/gpt2-tiny/', { backend: 'webgl', weights: 'fp32', worker });
        const sequence = [...p.ids];
        const captured = [];
        const out = { positions: [], lensDiff: 0, idsDiffer: 0, attentionDiff: 0 };
        for await (const token of model.generate(p.ids, {
          maxNewTokens: 8,
          stopAtEndOfText: false,
          lensTopK: 4,
          attentionLayer: 1,
        })) {
          out.positions.push(token.captured.map((c) => c.position));
          captured.push(...token.captured);
          sequence.push(token.id);
        }
        sequence.pop();
        const lens = await model.lens(sequence, { topK: 4 });
        const attention = await model.attention(1);
        const T = sequence.length;
        for (const c of captured) {
          for (let l = 0; l < lens.layers; l += 1)
            for (let rank = 0; rank < 4; rank += 1) {
              const at = (l * T + c.position) * 4 + rank;
              if (c.lens.ids[l * 4 + rank] !== lens.ids[at]) out.idsDiffer += 1;
              out.lensDiff = Math.max(out.lensDiff, Math.abs(c.lens.probs[l * 4 + rank] - lens.probs[at]));
            }
          for (let h = 0; h < attention.heads; h += 1)
            for (let k = 0; k <= c.position; k += 1)
              out.attentionDiff = Math.max(
                out.attentionDiff,
                Math.abs(c.attention[h * (c.position + 1) + k] - attention.data[(h * T + c.position) * T + k]),
              );
        }
        const plain = [];
        for await (const token of model.generate(p.ids, { maxNewTokens: 2 })) plain.push('captured' in token);
        out.plain = plain;
        await model.dispose();
        return out;
      },
      { p: prompts[0], worker },
    );
    const P = prompts[0].ids.length;
    assert.deepEqual(r.positions, [[...Array(P).keys()], ...Array.from({ length: 7 }, (_, i) => [P + i])]);
    assert.equal(r.idsDiffer, 0);
    assert.ok(r.lensDiff <= 1e-5 && r.attentionDiff <= 1e-5, JSON.stringify(r));
    assert.deepEqual(r.plain, [false, false]);
  });

// A seed gives the same tokens in the Worker, on the page's thread and in the native engine, for
// every way the engine draws: Gumbel noise over the vocabulary (temperature alone, with a repetition
// penalty), top-k and top-p among the GPU's candidates (the demo's settings), top-p alone where the
// GPU's 64 candidates fall short of p (the CPU draws from all the logits), and a top-k beyond them.
test("a seed gives the same tokens in the Worker, on the page's thread and natively", async () => {
  const settings = [
    { temperature: 0.8, repetitionPenalty: 1.2, seed: 3 },
    { temperature: 0.8, topK: 40, topP: 0.95, repetitionPenalty: 1.2, seed: 4 },
    { temperature: 1, topP: 0.9, seed: 5 },
    { temperature: 0.9, topK: 100, seed: 6 },
  ];
  const ids = prompts[0].ids;
  const native = settings.map((s) => {
    const args = [
      'generate',
      '--model',
      tinyModelDir,
      '--weights',
      'fp32',
      '--ids',
      ids.join(','),
      '--max-new-tokens',
      '20',
      '--json',
      '1',
      '--temperature',
      String(s.temperature),
      '--seed',
      String(s.seed),
      '--repetition-penalty',
      String(s.repetitionPenalty ?? 1),
      '--top-p',
      String(s.topP ?? 1),
    ];
    if (s.topK) args.push('--top-k', String(s.topK));
    return JSON.parse(execFileSync(join(root, 'build/native/gpt2'), args).toString()).ids;
  });
  const browser = await page.evaluate(
    async ({ ids, settings, modes }) => {
      const { GPT2 } = await import('/gpt2.js');
      const out = {};
      for (const { worker, name } of modes) {
        const model = await GPT2.load('/models/gpt2-tiny/', { backend: 'webgl', weights: 'fp32', worker });
        out[name] = [];
        for (const s of settings) {
          const got = [];
          for await (const t of model.generate(ids, { maxNewTokens: 20, stopAtEndOfText: false, ...s })) got.push(t.id);
          out[name].push(got);
        }
        await model.dispose();
      }
      return out;
    },
    { ids, settings, modes },
  );
  for (const [i, s] of settings.entries()) {
    assert.equal(native[i].length, 20);
    for (const { name } of modes) assert.deepEqual(browser[name][i], native[i], `${name}, ${JSON.stringify(s)}`);
  }
});
