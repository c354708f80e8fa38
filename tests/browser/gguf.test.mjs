// GGUF files made by llama.cpp (tests/fixtures/gguf) in the browser, both modes: every tensor type
// against the float64 forward over the same file's weights, the tokenizer of the file's metadata, and
// a broken file's clear error; decode steps as GPUs run them. Firefox and WebKit run the same checks
// (firefox.test.mjs, webkit.test.mjs).
import { test, before, after } from 'node:test';
import { root, startSite } from './harness.mjs';
import {
  assertGgufCheck,
  assertGgufSplitDecodeCheck,
  BROKEN_GGUF,
  ggufCheck,
  ggufFixtures,
  ggufSplitDecodeCheck,
  splitDecodeArguments,
} from './page-checks.mjs';

let site;
let page;

const fixtures = ggufFixtures(root);

before(async () => {
  site = await startSite();
  page = await site.page();
});
after(() => site?.close());

const modes = [
  { worker: true, name: 'worker' },
  { worker: false, name: 'same thread' },
];

for (const { worker, name } of modes)
  test(`${name}: every GGUF tensor type gives the float64 forward's logits, with the file's own tokenizer`, async () => {
    const r = await page.evaluate(ggufCheck, { worker, fixtures, broken: Object.keys(BROKEN_GGUF) });
    console.log(
      `[ measured ] Chromium ${name}: max |dlogit| against the float64 forward ${Math.max(...Object.values(r.logitDiff))}`,
    );
    assertGgufCheck(r, worker);
  });

test("worker: decode steps split over 16 input texels, as on GPUs, give the float64 forward's distribution and greedy tokens", async () => {
  const r = await page.evaluate(ggufSplitDecodeCheck, splitDecodeArguments(root, true));
  console.log(
    `[ measured ] Chromium: a decode step's max |dlogprob| against the float64 forward ${Math.max(...Object.values(r.logProbDiff))}`,
  );
  assertGgufSplitDecodeCheck(r);
});
