// Checks that run inside a page of the site, shared by the browser engines' tests: each is an async
// function of one JSON argument, passed to page.evaluate (Playwright's, or webkit.mjs's), so it may
// use nothing from this module's scope. Each returns plain JSON for the test to assert on; where
// every engine asserts the same, the assertions are here too (assert...).
import assert from 'node:assert/strict';

// The Hugging Face fixture (tests/fixtures/gpt2-tiny/reference.json): the largest |Δlogit| of the
// last position, whether greedy continuations are identical, and the largest |Δprob| of the first
// prompt's attention.
export async function fixtureCheck({ options, prompts }) {
  const { GPT2 } = await import('/gpt2.js');
  const model = await GPT2.load('/models/gpt2-tiny/', options);
  const out = { logitDiff: 0, greedyEqual: true, attentionDiff: 0, mode: model.mode };
  for (const p of prompts) {
    const logits = await model.logits(p.ids);
    p.last_logits.forEach((v, i) => { out.logitDiff = Math.max(out.logitDiff, Math.abs(v - logits[i])); });
    const ids = [];
    for await (const t of model.generate(p.ids, { maxNewTokens: p.greedy.length, stopAtEndOfText: false })) ids.push(t.id);
    if (JSON.stringify(ids) !== JSON.stringify(p.greedy)) out.greedyEqual = false;
  }
  const p1 = prompts[0];
  await model.logits(p1.ids);
  for (let layer = 0; layer < p1.attentions.length; layer += 1) {
    const { heads, tokens, data } = await model.attention(layer);
    p1.attentions[layer].flat(2).forEach((v, i) => { out.attentionDiff = Math.max(out.attentionDiff, Math.abs(v - data[i])); });
    out.shape = [heads, tokens];
  }
  await model.dispose();
  return out;
}

// The logit lens and hidden states against Hugging Face's (tests/fixtures/gpt2-tiny/hidden_states.json).
export async function lensCheck({ options, prompts }) {
  const { GPT2 } = await import('/gpt2.js');
  const model = await GPT2.load('/models/gpt2-tiny/', options);
  const out = { probDiff: 0, idMismatches: [], stateDiff: 0, shapes: [] };
  for (const [key, p] of Object.entries(prompts)) {
    const lens = await model.lens(p.ids, { topK: 5 });
    out.shapes.push([lens.layers, lens.tokens, lens.topK, lens.ids.length, lens.probs.length]);
    p.lens_top5.forEach((layer, l) => layer.forEach((cell, t) => cell.ids.forEach((id, rank) => {
      const at = (l * lens.tokens + t) * lens.topK + rank;
      out.probDiff = Math.max(out.probDiff, Math.abs(lens.probs[at] - cell.probs[rank]));
      // Ids may swap only where Hugging Face's own probabilities tie.
      const tied = (rank > 0 && cell.probs[rank - 1] - cell.probs[rank] <= 1e-4) || (rank < 4 && cell.probs[rank] - cell.probs[rank + 1] <= 1e-4);
      if (!tied && lens.ids[at] !== id) out.idMismatches.push([key, l, t, rank, lens.ids[at], id]);
    })));
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
  assert.deepEqual(r.shapes, [[2, 5, 5, 50, 50], 160, 160, [2, 40, 5, 400, 400], 1280, 1280, [2, 1, 5, 10, 10], 32, 32]);
  assert.deepEqual(r.idMismatches, []);
  assert.ok(r.probDiff <= 1e-4, `${r.probDiff}`);
  assert.ok(r.stateDiff <= 1e-4, `${r.stateDiff}`);
  assert.equal(r.attentionTokens, 1);
  assert.match(r.refused, /hiddenStates: layer 2 outside \[0, 2\)/);
}
