// Checks that run inside a page of the site, shared by the browser engines' tests: each is an async
// function of one JSON argument, passed to page.evaluate (Playwright's, or webkit.mjs's), so it may
// use nothing from this module's scope. Each returns plain JSON for the test to assert on; where
// every engine asserts the same, the assertions are here too (assert...).
import assert from 'node:assert/strict';
import { copyFileSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

// The Hugging Face fixture (tests/fixtures/gpt2-tiny/reference.json): the largest |Δlogit| of the
// last position, whether greedy continuations are identical, and the largest |Δprob| of the first
// prompt's attention. `module` and `source` name the module and the fixture where they are not the
// site's (Node).
export async function fixtureCheck({ options, prompts, module = '/gpt2.js', source = '/models/gpt2-tiny/' }) {
  const { GPT2 } = await import(module);
  const model = await GPT2.load(source, { backend: 'webgl', ...options });
  const out = {
    logitDiff: 0,
    greedyEqual: true,
    attentionDiff: 0,
    mode: model.mode,
    renderer: (await model.stats()).renderer,
  };
  for (const p of prompts) {
    const logits = await model.logits(p.ids);
    p.last_logits.forEach((v, i) => {
      out.logitDiff = Math.max(out.logitDiff, Math.abs(v - logits[i]));
    });
    const ids = [];
    for await (const t of model.generate(p.ids, { maxNewTokens: p.greedy.length, stopAtEndOfText: false }))
      ids.push(t.id);
    if (JSON.stringify(ids) !== JSON.stringify(p.greedy)) out.greedyEqual = false;
  }
  const p1 = prompts[0];
  await model.logits(p1.ids);
  for (let layer = 0; layer < p1.attentions.length; layer += 1) {
    const { heads, tokens, data } = await model.attention(layer);
    p1.attentions[layer].flat(2).forEach((v, i) => {
      out.attentionDiff = Math.max(out.attentionDiff, Math.abs(v - data[i]));
    });
    out.shape = [heads, tokens];
  }
  await model.dispose();
  return out;
}

// The logit lens and hidden states against Hugging Face's (tests/fixtures/gpt2-tiny/hidden_states.json).
export async function lensCheck({ options, prompts, module = '/gpt2.js', source = '/models/gpt2-tiny/' }) {
  const { GPT2 } = await import(module);
  const model = await GPT2.load(source, { backend: 'webgl', ...options });
  const out = { probDiff: 0, idMismatches: [], stateDiff: 0, shapes: [] };
  for (const [key, p] of Object.entries(prompts)) {
    const lens = await model.lens(p.ids, { topK: 5 });
    out.shapes.push([lens.layers, lens.tokens, lens.topK, lens.ids.length, lens.probs.length]);
    for (const [l, layer] of p.lens_top5.entries()) {
      for (const [t, cell] of layer.entries()) {
        for (const [rank, id] of cell.ids.entries()) {
          const at = (l * lens.tokens + t) * lens.topK + rank;
          out.probDiff = Math.max(out.probDiff, Math.abs(lens.probs[at] - cell.probs[rank]));
          // Ids may swap only where Hugging Face's own probabilities tie.
          const tied =
            (rank > 0 && cell.probs[rank - 1] - cell.probs[rank] <= 1e-4) ||
            (rank < 4 && cell.probs[rank] - cell.probs[rank + 1] <= 1e-4);
          if (!tied && lens.ids[at] !== id) out.idMismatches.push([key, l, t, rank, lens.ids[at], id]);
        }
      }
    }
    // The lens leaves its ids as the sequence: attention() reads it.
    out.attentionTokens = (await model.attention(0)).tokens;
    for (let l = 0; l < p.block_outputs.length; l += 1) {
      const states = await model.hiddenStates(p.ids, { layer: l });
      out.stateDiff = Math.max(out.stateDiff, ...p.block_outputs[l].flat().map((v, i) => Math.abs(v - states[i])));
      out.shapes.push(states.length);
    }
  }
  try {
    await model.hiddenStates([1, 2], { layer: 2 });
  } catch (e) {
    out.refused = e.message;
  }
  await model.dispose();
  return out;
}

// What lensCheck must find on the fixture's prompts, in any engine and mode: Hugging Face's shapes,
// ids (but at near-ties), probabilities and hidden states within 1e-4.
export function assertLensCheck(r) {
  assert.deepEqual(r.shapes, [
    [2, 5, 5, 50, 50],
    160,
    160,
    [2, 40, 5, 400, 400],
    1280,
    1280,
    [2, 1, 5, 10, 10],
    32,
    32,
  ]);
  assert.deepEqual(r.idMismatches, []);
  assert.ok(r.probDiff <= 1e-4, `${r.probDiff}`);
  assert.ok(r.stateDiff <= 1e-4, `${r.stateDiff}`);
  assert.equal(r.attentionTokens, 1);
  assert.match(r.refused, /hiddenStates: layer 2 outside \[0, 2\)/);
}

// Interventions against Hugging Face's hooks (tests/fixtures/gpt2-tiny/interventions.json): for each
// case, the largest |difference| of the last logits at the fixture's ids, of perplexity's nll, of the
// residual stream after each block and of layer 1's attention (the sequence run plain first, so that
// attention() must run it again); whether the greedy continuation and the lens's last prediction
// differ; whether an empty list gives the logits of none bitwise; and the messages of bad lists. Half
// the cases pass their vectors as Float32Arrays, half as the fixture's arrays. What it is doing goes
// to globalThis.checkProgress, which evaluateCheck (harness.mjs) reports when the page stops answering.
export async function interventionsCheck({ options, fixture, module = '/gpt2.js', source = '/models/gpt2-tiny/' }) {
  const progress = ['load'];
  globalThis.checkProgress = progress;
  const { GPT2 } = await import(module);
  const model = await GPT2.load(source, { backend: 'webgl', ...options });
  const { ids } = fixture;
  const out = { logitDiff: 0, nllDiff: 0, stateDiff: 0, attentionDiff: 0, differs: [], errors: {}, mode: model.mode };
  const largest = (key, expected, got) => {
    expected.forEach((v, i) => {
      out[key] = Math.max(out[key], Math.abs(v - got[i]));
    });
  };
  const plain = await model.logits(ids);
  const empty = await model.logits(ids, { interventions: [] });
  out.emptyBitwise = plain.length === empty.length && plain.every((v, i) => Object.is(v, empty[i]));
  for (const [index, [name, c]] of Object.entries(fixture.cases).entries()) {
    const asTyped = (item) => {
      const [kind, body] = Object.entries(item)[0];
      return { [kind]: body.vector ? { ...body, vector: Float32Array.from(body.vector) } : body };
    };
    const interventions = index % 2 ? c.interventions.map(asTyped) : c.interventions;
    progress.push(`${name}: logits, perplexity, hidden states`);
    const logits = await model.logits(ids, { interventions });
    largest(
      'logitDiff',
      c.last_logits_at,
      Array.from(fixture.logit_ids, (id) => logits[id]),
    );
    largest('nllDiff', [c.nll], [(await model.perplexity(ids, { interventions })).nll]);
    for (const [layer, rows] of c.block_outputs.entries())
      largest('stateDiff', rows.flat(), await model.hiddenStates(ids, { layer, interventions }));
    progress.push(`${name}: attention, lens, generate`);
    await model.logits(ids);
    largest('attentionDiff', c.attention.flat(2), (await model.attention(1, { interventions })).data);
    const lens = await model.lens(ids, { topK: 1, interventions });
    if (lens.ids[lens.layers * lens.tokens - 1] !== c.greedy[0]) out.differs.push(`${name}: lens`);
    const generated = [];
    for await (const t of model.generate(ids, { maxNewTokens: c.greedy.length, stopAtEndOfText: false, interventions }))
      generated.push(t.id);
    if (JSON.stringify(generated) !== JSON.stringify(c.greedy)) out.differs.push(`${name}: greedy ${generated}`);
  }
  progress.push('refusals');
  const refusal = async (interventions) => {
    try {
      await model.logits(ids, { interventions });
      return 'accepted';
    } catch (e) {
      return e.message;
    }
  };
  out.errors.shape = await refusal([{ ablateHead: { layer: 0, head: -1 } }]);
  out.errors.kind = await refusal([{ ablate: { layer: 0 } }]);
  out.errors.layer = await refusal([{ ablateHead: { layer: 0, head: 1 } }, { steer: { layer: 2, vector: [1] } }]);
  out.errors.width = await refusal([{ patch: { layer: 1, position: 0, vector: new Float32Array(3) } }]);
  const after = await model.logits(ids);
  out.plainAfterErrors = after.every((v, i) => Object.is(v, plain[i]));
  await model.dispose();
  return out;
}

// What interventionsCheck must find on gpt2-tiny with fp32 weights, in any engine and mode.
export function assertInterventionsCheck(r) {
  assert.deepEqual(r.differs, []);
  assert.ok(r.emptyBitwise, 'an empty list changes the logits');
  assert.ok(r.plainAfterErrors, 'a refused list changed what runs');
  assert.ok(r.logitDiff <= 1e-4, `logits ${r.logitDiff}`);
  assert.ok(r.nllDiff <= 1e-5, `nll ${r.nllDiff}`);
  assert.ok(r.stateDiff <= 1e-4, `hidden states ${r.stateDiff}`);
  assert.ok(r.attentionDiff <= 1e-5, `attention ${r.attentionDiff}`);
  assert.deepEqual(r.errors, {
    shape: 'logits: interventions[0].ablateHead.head must be an integer >= 0, got -1',
    kind:
      'logits: interventions[0] must be an object with one key, one of { ablateHead: { layer, head } }, ' +
      '{ ablateNeurons: { layer, neurons } }, { steer: { layer, vector, scale? } }, { patch: { layer, position, vector } }',
    layer: 'interventions[1].steer: layer 2 is outside [0, 2) (n_layer)',
    width: 'interventions[0].patch: vector has 3 values, expected n_embd 32',
  });
}

// The GGUF fixtures (tests/fixtures/gguf), served at /test-models/gguf/ (copied there, with the
// broken files of BROKEN_GGUF beside them), and what the page needs of their references.
export function ggufFixtures(root) {
  const source = join(root, 'tests/fixtures/gguf');
  const served = join(root, 'build/test-site/test-models/gguf');
  mkdirSync(served, { recursive: true });
  const names = readdirSync(source)
    .filter((f) => f.endsWith('.gguf'))
    .map((f) => f.slice(0, -5))
    .sort();
  for (const name of names) copyFileSync(join(source, `${name}.gguf`), join(served, `${name}.gguf`));
  for (const [name, bytes] of Object.entries(brokenGgufFiles(readFileSync(join(source, 'narrow-Q4_0.gguf'))))) {
    writeFileSync(join(served, `${name}.gguf`), bytes);
  }
  return names.map((name) => {
    const { prompts } = JSON.parse(readFileSync(join(source, `${name}.json`), 'utf8'));
    return {
      name,
      prompts: prompts.map((p) => ({
        ids: p.ids,
        text: p.text,
        llamaCppIds: p.llama_cpp_ids,
        logits: p.reference_last_logits,
        greedy: p.reference_greedy,
        margins: p.reference_greedy_margins,
      })),
    };
  });
}

// llama.cpp's narrow-Q4_0.gguf broken as docs/bad-inputs.md lists (the same changes as
// tests/format/gguf_test.cpp), by name, with what the load's error must say.
export const BROKEN_GGUF = {
  truncated: /truncated\.gguf: .*(past the end|truncated)/,
  'unknown-type':
    /blk\.0\.ffn_up\.weight has type IQ2_XXS, which this engine does not read; supported types are F32, F16, BF16, Q8_0/,
  'size-disagrees': /tensors blk\.0\.ffn_up\.weight and .* overlap|past the end/,
  'missing-tensor': /tensor blk\.1\.ffn_up\.weight \(Hugging Face h\.1\.mlp\.c_fc\.weight\) is missing/,
  'wrong-architecture': /general\.architecture is "llam"; this engine runs GPT-2/,
  'lying-count': /the metadata count says 1099511627776 at byte \d+, more than the \d+ bytes left/,
  'string-past-end': /a metadata string's length says \d+ at byte \d+, more than the \d+ bytes left/,
};

function brokenGgufFiles(whole) {
  const at = (text) => whole.indexOf(Buffer.from(text));
  const changed = (change) => {
    const copy = Buffer.from(whole);
    change(copy);
    return copy;
  };
  const typeField = (_b, name) => at(name) + name.length + 4 + 16; // name, dimension count, two dimensions
  return {
    truncated: whole.subarray(0, whole.length - 1000),
    'unknown-type': changed((b) => b.writeUInt32LE(16, typeField(b, 'blk.0.ffn_up.weight'))),
    'size-disagrees': changed((b) => b.writeUInt32LE(8, typeField(b, 'blk.0.ffn_up.weight'))),
    'missing-tensor': changed((b) => {
      b[at('blk.1.ffn_up.weight') + 9] = 0x58;
    }),
    'wrong-architecture': changed((b) => b.write('llam', at('general.architecture') + 20 + 4 + 8)),
    'lying-count': changed((b) => b.writeBigUInt64LE(1n << 40n, 16)),
    'string-past-end': changed((b) => b.writeBigUInt64LE(1n << 50n, at('general.architecture') + 20 + 4)),
  };
}

// Each GGUF fixture planned (GPT2.gpuBytes) and loaded from its URL: the largest |Δlogit| against the
// float64 forward over its weights, the ids its metadata's tokenizer gives the prompts that have a text
// (llama.cpp's, which for GPT-2's vocabulary are Hugging Face's), where a plan differs from the loaded
// model's bytes, the first fixture loaded from a File, and the errors of the broken files (`broken`:
// BROKEN_GGUF's names), on `backend` (a load option); `module` and `base` (the fixtures' folder URL) where
// they are not the site's (Node).
export async function ggufCheck({
  worker,
  fixtures,
  broken,
  backend = 'webgl',
  module = '/gpt2.js',
  base = '/test-models/gguf/',
}) {
  const { GPT2 } = await import(module);
  const out = { files: 0, logitDiff: {}, tokenizerMismatches: [], planMismatches: [], modes: new Set() };
  const options = { backend, weights: 'fp32', ...(worker === undefined ? {} : { worker }) };
  for (const f of fixtures) {
    const url = `${base}${f.name}.gguf`;
    const planned = await GPT2.gpuBytes(url, options);
    const model = await GPT2.load(url, options);
    const { gpuBytes } = await model.stats();
    if (planned !== gpuBytes) out.planMismatches.push(`${f.name}: planned ${planned}, loaded ${gpuBytes}`);
    out.modes.add(model.mode.worker);
    out.logitDiff[f.name] = 0;
    for (const p of f.prompts) {
      const logits = await model.logits(p.ids);
      p.logits.forEach((v, i) => {
        out.logitDiff[f.name] = Math.max(out.logitDiff[f.name], Math.abs(v - logits[i]));
      });
      if (p.text !== undefined && JSON.stringify(await model.tokenize(p.text)) !== JSON.stringify(p.llamaCppIds)) {
        out.tokenizerMismatches.push(f.name);
      }
    }
    out.files += 1;
    await model.dispose();
  }
  // The first fixture again as a File the page holds (one a user picked): planned and loaded from
  // the device, with the same logits; a File that is no model fails naming it.
  const first = fixtures[0];
  const bytes = await (await fetch(`${base}${first.name}.gguf`)).arrayBuffer();
  const file = new File([bytes], `picked-${first.name}.gguf`);
  const planned = await GPT2.gpuBytes(file, options);
  const model = await GPT2.load(file, options);
  const logits = await model.logits(first.prompts[0].ids);
  out.fileDiff = Math.max(...first.prompts[0].logits.map((v, i) => Math.abs(v - logits[i])));
  const { gpuBytes } = await model.stats();
  if (planned !== gpuBytes) out.planMismatches.push(`${file.name}: planned ${planned}, loaded ${gpuBytes}`);
  if (worker && model.mode.backend === 'webgl') {
    // restore() after a lost context loads the same File again.
    await model.simulateContextLoss();
    await model.restore();
    const restored = await model.logits(first.prompts[0].ids);
    out.fileDiff = Math.max(out.fileDiff, ...first.prompts[0].logits.map((v, i) => Math.abs(v - restored[i])));
  }
  await model.dispose();
  out.notAModel = await GPT2.load(new File([new Uint8Array(64)], 'notes.txt'), options).then(
    () => 'loaded',
    (e) => e.message,
  );
  out.broken = {};
  for (const name of broken) {
    try {
      await GPT2.load(`${base}${name}.gguf`, { backend, ...(worker === undefined ? {} : { worker }) });
      out.broken[name] = 'no error';
    } catch (e) {
      out.broken[name] = e.message;
    }
  }
  out.modes = [...out.modes];
  return out;
}

// What ggufCheck must find in any engine and mode: every file within 2e-4 of the float64 forward
// (fp32 activations; the native build's error is 2e-5), the tokenizers right, GPT2.gpuBytes of the
// file (planned from its header) equal to what the loaded model takes, each broken file's error
// naming what is wrong.
export function assertGgufCheck(r, worker) {
  assert.equal(r.files, 13);
  for (const [name, diff] of Object.entries(r.logitDiff)) assert.ok(diff <= 2e-4, `${name}: max |dlogit| ${diff}`);
  assert.deepEqual(r.tokenizerMismatches, []);
  assert.deepEqual(r.planMismatches, [], 'gpuBytes from the header is what the loaded model takes');
  assert.ok(r.fileDiff <= 2e-4, `the fixture as a File: max |dlogit| ${r.fileDiff}`);
  assert.match(r.notAModel, /^notes\.txt: /);
  for (const [name, pattern] of Object.entries(BROKEN_GGUF)) assert.match(r.broken[name], pattern, name);
  if (worker !== undefined) assert.deepEqual(r.modes, [worker]);
}

// Decode steps as GPUs run them, forced on software renderers (which run no split-K by default): 16
// input texels an instance, as GPUs take for int8 and 4-bit weights, over GGUF fixtures whose widths
// write the one-row loop out as runs of 16, 8, 4 and 2 texels, with 4-bit and 8-bit codes, each with
// and without block offsets.
export const SPLIT_DECODE = { tuning: { splitTexels: 16 }, fixtures: ['narrow-Q4_0', 'narrow-Q5_1', 'wide-Q4_K_M'] };

// SPLIT_DECODE's fixtures under its tuning (one-row matmuls compiled by the browser's own shader
// translator). Each prompt's last position as a decode step: the prompt but its last token, that
// token forced as the first draw (logitBias), and the live lens of the step that follows it, whose
// last layer is the model's own distribution: the largest |Δ log-probability| of its top 8 against
// the float64 forward's last logits (log-probabilities: the wide fixture's top-1 probabilities lie
// within 1e-7 of 1), and whether a top-8 token ranks below the reference's eighth
// by more than 4e-4. Then the greedy continuations, up to the first step whose reference top two
// logits are within 4e-4. And the varying vectors the page's WebGL2 gives (the one-row pass takes
// `splitTexels` + 1).
export async function ggufSplitDecodeCheck({ worker, fixtures, tuning, base = '/test-models/gguf/' }) {
  const { GPT2 } = await import('/gpt2.js');
  const gl = document.createElement('canvas').getContext('webgl2');
  const out = { varyingVectors: gl.getParameter(gl.MAX_VARYING_VECTORS), logProbDiff: {}, compared: {}, differs: [] };
  const topK = 8;
  for (const f of fixtures) {
    const model = await GPT2.load(`${base}${f.name}.gguf`, {
      backend: 'webgl',
      weights: 'fp32',
      tuning,
      ...(worker === undefined ? {} : { worker }),
    });
    const layers = model.config.n_layer;
    out.logProbDiff[f.name] = 0;
    out.compared[f.name] = 0;
    for (const p of f.prompts) {
      const last = p.ids[p.ids.length - 1];
      const steps = [];
      const forced = { maxNewTokens: 2, stopAtEndOfText: false, logitBias: { [last]: 1000 }, lensTopK: topK };
      for await (const t of model.generate(p.ids.slice(0, -1), forced)) steps.push(t);
      const { ids, probs } = steps[1].captured[0].lens;
      const max = Math.max(...p.logits);
      const logSumExp = max + Math.log(p.logits.reduce((sum, z) => sum + Math.exp(z - max), 0));
      const eighth = [...p.logits].sort((a, b) => b - a)[topK - 1];
      for (let rank = 0; rank < topK; rank += 1) {
        const id = ids[(layers - 1) * topK + rank];
        const diff = Math.abs(Math.log(probs[(layers - 1) * topK + rank]) - (p.logits[id] - logSumExp));
        out.logProbDiff[f.name] = Math.max(out.logProbDiff[f.name], diff);
        if (p.logits[id] < eighth - 4e-4) out.differs.push(`${f.name}: token ${id} in the step's top ${topK}`);
      }
      const compared = p.margins.findIndex((m) => m <= 4e-4);
      const want = p.greedy.slice(0, compared < 0 ? p.greedy.length : compared);
      const got = [];
      for await (const t of model.generate(p.ids, { maxNewTokens: want.length, stopAtEndOfText: false }))
        got.push(t.id);
      if (JSON.stringify(got) !== JSON.stringify(want)) out.differs.push(`${f.name}: ${got} against ${want}`);
      out.compared[f.name] += want.length;
    }
    await model.dispose();
  }
  return out;
}

// ggufSplitDecodeCheck's arguments for SPLIT_DECODE in `worker` mode (undefined: the load's default).
export function splitDecodeArguments(root, worker) {
  const fixtures = ggufFixtures(root).filter((f) => SPLIT_DECODE.fixtures.includes(f.name));
  return { worker, fixtures, tuning: SPLIT_DECODE.tuning };
}

export function assertGgufSplitDecodeCheck(r) {
  const { splitTexels } = SPLIT_DECODE.tuning;
  assert.ok(
    r.varyingVectors > splitTexels,
    `the one-row pass over ${splitTexels} input texels needs ${splitTexels + 1} varying vectors; this WebGL2 gives ${r.varyingVectors}`,
  );
  assert.deepEqual(Object.keys(r.compared).sort(), [...SPLIT_DECODE.fixtures].sort());
  // |Δlogit| <= 2e-4 (ggufCheck's bound) moves a log-probability by at most 4e-4.
  for (const [name, diff] of Object.entries(r.logProbDiff)) assert.ok(diff <= 4e-4, `${name}: max |dlogprob| ${diff}`);
  for (const [name, steps] of Object.entries(r.compared)) assert.ok(steps >= 4, `${name}: ${steps} steps compared`);
  assert.deepEqual(r.differs, []);
}

// Constrained generation on a model with GPT-2's tokenizer (the bundled one by default): the outputs
// of each case's `regex` or `jsonSchema` under each of `settings` (the caller checks them), and the
// messages of bad constraints. Its progress, as interventionsCheck's, names the generation running.
export async function constraintCheck({ options, cases, settings, module = '/gpt2.js', source = '/models/default/' }) {
  const progress = ['load'];
  globalThis.checkProgress = progress;
  const { GPT2 } = await import(module);
  const model = await GPT2.load(source, { backend: 'webgl', ...options });
  const outputs = [];
  for (const c of cases)
    for (const s of settings) {
      let text = '';
      progress.push(`${c.name} with ${JSON.stringify(s)}`);
      for await (const t of model.generate(c.prompt, { maxNewTokens: 80, ...s, ...c.constraint })) {
        text += t.text;
        progress[progress.length - 1] = `${c.name} with ${JSON.stringify(s)}: ${JSON.stringify(text)}`;
      }
      outputs.push({ case: c.name, setting: s, text });
    }
  progress.push('refusals and bans');
  const refusal = async (options) => {
    try {
      for await (const _ of model.generate('The', { maxNewTokens: 4, ...options }));
      return 'accepted';
    } catch (e) {
      return e.message;
    }
  };
  const errors = {
    regex: await refusal({ regex: '(?=a)b' }),
    schema: await refusal({ jsonSchema: { type: 'integer', minimum: 3 } }),
    both: await refusal({ regex: 'a', jsonSchema: '{"type":"string"}' }),
    bias: await refusal({ logitBias: { 11: 'high' } }),
  };
  // A banned token never comes, and the model still generates after the refusals.
  let banned = 0;
  for await (const t of model.generate('The jury said that', {
    maxNewTokens: 12,
    logitBias: { 262: -Infinity, 13: -Infinity },
  }))
    banned += t.id === 262 || t.id === 13;
  await model.dispose();
  return { outputs, errors, banned, mode: model.mode };
}

// What constraintCheck runs: patterns and schemas the bundled model can complete within 80 tokens, under
// greedy decoding and the demo's sampling with three seeds, and hotter sampling.
export const CONSTRAINT_CASES = [
  {
    name: 'date',
    prompt: 'The date was',
    constraint: { regex: ' (19|20)\\d{2}-(0[1-9]|1[0-2])-(0[1-9]|[12]\\d|3[01])' },
  },
  { name: 'answer', prompt: 'Is it true? The answer is', constraint: { regex: ' (yes|no|maybe)\\.' } },
  { name: 'words', prompt: 'He said', constraint: { regex: '( [a-z]{1,10}){3,6}[.!?]' } },
  {
    name: 'person',
    prompt: 'A person:',
    constraint: {
      jsonSchema: {
        type: 'object',
        properties: {
          name: { type: 'string', maxLength: 12 },
          age: { type: 'integer' },
          city: { enum: ['Boston', 'Chicago', 'Dallas'] },
          tags: { type: 'array', items: { type: 'string', maxLength: 8 }, maxItems: 3 },
        },
        required: ['name', 'age'],
        additionalProperties: false,
      },
    },
  },
  {
    name: 'numbers',
    prompt: 'The numbers:',
    constraint: { jsonSchema: JSON.stringify({ type: 'array', items: { type: 'number' }, minItems: 1, maxItems: 4 }) },
  },
];
export const CONSTRAINT_SETTINGS = [
  {},
  ...[1, 2, 3].map((seed) => ({ temperature: 0.8, topK: 40, topP: 0.95, repetitionPenalty: 1.2, seed })),
  { temperature: 1.5, seed: 4 },
];

// Every output matches its regex whole (JavaScript's RegExp) or parses and fits its schema (Ajv); the
// bad constraints are refused with their messages; banned tokens never come.
export async function assertConstraintCheck(r) {
  const { default: Ajv } = await import('ajv');
  const ajv = new Ajv({ strict: false });
  assert.equal(r.outputs.length, CONSTRAINT_CASES.length * CONSTRAINT_SETTINGS.length);
  for (const o of r.outputs) {
    const { constraint } = CONSTRAINT_CASES.find((c) => c.name === o.case);
    const where = `${o.case} with ${JSON.stringify(o.setting)}: ${JSON.stringify(o.text)}`;
    if (constraint.regex) {
      assert.match(o.text, new RegExp(`^(?:${constraint.regex})$`, 'u'), where);
      continue;
    }
    const schema =
      typeof constraint.jsonSchema === 'string' ? JSON.parse(constraint.jsonSchema) : constraint.jsonSchema;
    let value;
    assert.doesNotThrow(() => {
      value = JSON.parse(o.text);
    }, where);
    assert.ok(ajv.validate(schema, value), `${where}: ${ajv.errorsText()}`);
  }
  assert.deepEqual(r.errors, {
    regex: 'regex /(?=a)b/: lookaround and named groups are not supported at position 0',
    schema: 'jsonSchema at #: the keyword minimum is not supported',
    both: 'give regex or jsonSchema, not both',
    bias: 'logitBias must be an object of token ids to numbers (-Infinity bans a token), got {"11":"high"}',
  });
  assert.equal(r.banned, 0);
}
