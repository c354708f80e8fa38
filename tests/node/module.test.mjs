// The package under Node: `import { GPT2 } from 'gpt2-webgl'` resolves to gpt2-node.js (package.json's
// "node" export) and runs the CPU backend on the calling thread, loading folders and GGUF files from
// paths, file: URLs and http(s) URLs, with Hugging Face's logits, greedy tokens, attention and lens,
// and the float64 forward's logits for every GGUF type: the checks the browsers run (page-checks.mjs).
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { pathToFileURL } from 'node:url';
import { root, serveSite, siteDir, tinyModelDir } from '../browser/harness.mjs';
import {
  assertConstraintCheck,
  assertGgufCheck,
  assertInterventionsCheck,
  assertLensCheck,
  BROKEN_GGUF,
  CONSTRAINT_CASES,
  CONSTRAINT_SETTINGS,
  constraintCheck,
  fixtureCheck,
  ggufCheck,
  ggufFixtures,
  interventionsCheck,
  lensCheck,
} from '../browser/page-checks.mjs';

const reference = JSON.parse(readFileSync(join(root, 'tests/fixtures/gpt2-tiny/reference.json'), 'utf8'));
const hiddenStates = JSON.parse(readFileSync(join(root, 'tests/fixtures/gpt2-tiny/hidden_states.json'), 'utf8'));
const interventions = JSON.parse(readFileSync(join(root, 'tests/fixtures/gpt2-tiny/interventions.json'), 'utf8'));
const fixtures = ggufFixtures(root);
const module = pathToFileURL(join(siteDir, 'gpt2-node.js')).href;
let server;
let url;

before(async () => {
  server = await serveSite();
  url = `http://127.0.0.1:${server.address().port}/`;
});
after(() => new Promise((ok) => server?.close(ok)));

test("an app's import of the package resolves to the Node entry and generates on the CPU", () => {
  // An app folder with the package installed, as npm would (a link to the built package).
  const app = join(root, 'build', 'node-app');
  rmSync(app, { recursive: true, force: true });
  mkdirSync(join(app, 'node_modules'), { recursive: true });
  symlinkSync(siteDir, join(app, 'node_modules', 'gpt2-webgl'), 'dir');
  writeFileSync(
    join(app, 'main.mjs'),
    `import { GPT2 } from 'gpt2-webgl';
const model = await GPT2.load(process.argv[2]);
let text = '';
for await (const token of model.generate('The jury said that', { maxNewTokens: 8 })) text += token.text;
console.log(JSON.stringify({ mode: model.mode, text }));
await model.dispose();
`,
  );
  const out = JSON.parse(execFileSync(process.execPath, [join(app, 'main.mjs'), tinyModelDir], { cwd: app }));
  assert.deepEqual(out.mode, {
    worker: false,
    canvas: null,
    reason: 'Node: the calling thread',
    backend: 'cpu',
    backendReason: 'Node has no WebGL',
  });
  assert.ok(out.text.length > 0, out.text);
});

const sources = () => [
  ['a path without its slash', tinyModelDir],
  ['a file: URL', pathToFileURL(`${tinyModelDir}/`).href],
  ['an http URL', `${url}models/gpt2-tiny/`],
];

test('from a path, a file: URL and an http URL: logits, greedy tokens and attention match Hugging Face', async () => {
  for (const [name, source] of sources()) {
    const r = await fixtureCheck({
      options: { backend: 'auto' },
      prompts: Object.values(reference.prompts),
      module,
      source,
    });
    console.log(`[ measured ] Node, ${name}: max |dlogit| ${r.logitDiff}, max |dprob| ${r.attentionDiff}`);
    assert.equal(r.mode.backend, 'cpu', name);
    assert.ok(r.logitDiff <= 1e-4, `${name}: max |dlogit| ${r.logitDiff}`);
    assert.ok(r.greedyEqual, `${name}: greedy continuation differs`);
    assert.ok(r.attentionDiff <= 1e-4, `${name}: max |dprob| ${r.attentionDiff}`);
  }
});

test("a folder's plan from its config.json (the dtype it names) is what the loaded model takes", async () => {
  const { GPT2 } = await import(module);
  for (const folder of [tinyModelDir, join(root, 'web/models/brown-demo')]) {
    const model = await GPT2.load(folder);
    assert.equal(await GPT2.gpuBytes(folder), (await model.stats()).gpuBytes, folder);
    await model.dispose();
  }
});

test('lens() and hiddenStates() match Hugging Face', async () => {
  assertLensCheck(
    await lensCheck({ options: { backend: 'auto' }, prompts: hiddenStates.prompts, module, source: tinyModelDir }),
  );
});

test('every output of a regex or a JSON schema matches it, greedy and sampled', async () => {
  const r = await constraintCheck({
    options: { backend: 'auto' },
    cases: CONSTRAINT_CASES,
    settings: CONSTRAINT_SETTINGS,
    module,
    source: join(siteDir, 'models/default'),
  });
  assert.equal(r.mode.backend, 'cpu');
  await assertConstraintCheck(r);
});

test("interventions match Hugging Face's hooks", async () => {
  const r = await interventionsCheck({
    options: { backend: 'auto' },
    fixture: interventions,
    module,
    source: tinyModelDir,
  });
  assert.equal(r.mode.backend, 'cpu');
  assertInterventionsCheck(r);
});

test("every GGUF tensor type gives the float64 forward's logits, from http and from paths, planned from its header", async () => {
  const r = await ggufCheck({
    fixtures,
    broken: Object.keys(BROKEN_GGUF),
    backend: 'auto',
    module,
    base: `${url}test-models/gguf/`,
  });
  console.log(`[ measured ] Node: max |dlogit| against the float64 forward ${Math.max(...Object.values(r.logitDiff))}`);
  assertGgufCheck(r);
  const { GPT2 } = await import(module);
  for (const f of fixtures) {
    const path = join(root, 'tests/fixtures/gguf', `${f.name}.gguf`);
    const planned = await GPT2.gpuBytes(path);
    const model = await GPT2.load(path);
    assert.equal(planned, (await model.stats()).gpuBytes, `${f.name}: the plan from its header is what it takes`);
    const logits = await model.logits(f.prompts[0].ids);
    const diff = Math.max(...f.prompts[0].logits.map((v, i) => Math.abs(v - logits[i])));
    assert.ok(diff <= 2e-4, `${f.name} from its path: max |dlogit| ${diff}`);
    await model.dispose();
  }
});

test('what Node cannot do is refused with the reason', async () => {
  const { GPT2 } = await import(module);
  const attempt = (source, options) =>
    GPT2.load(source, options).then(
      (model) => model.dispose().then(() => 'loaded'),
      (e) => e.message,
    );
  assert.match(await attempt(tinyModelDir, { backend: 'webgl' }), /^backend: webgl, but Node has no WebGL/);
  assert.match(
    await attempt(tinyModelDir, { worker: true }),
    /^worker: true, but under Node the engine runs on the calling thread/,
  );
  // GPT-2 1.5B as fp32 weights: 6.6 GB at its full context, refused from its config.json alone, before
  // any weight file is read.
  const xl = join(root, 'build', 'node-xl-config');
  mkdirSync(xl, { recursive: true });
  writeFileSync(
    join(xl, 'config.json'),
    JSON.stringify({ model_type: 'gpt2', vocab_size: 50257, n_positions: 1024, n_embd: 1600, n_layer: 48, n_head: 25 }),
  );
  assert.match(
    await attempt(xl),
    /^this model would take 6,[\d,.]+ MB of memory on the CPU backend at its full context, more than 32-bit WebAssembly addresses \(3,[\d,.]+ MB for the model\); try a 4-bit GGUF file/,
  );
  // A folder whose name has a dot is still a folder.
  const dotted = join(root, 'build', 'node-gpt2.tiny');
  mkdirSync(dotted, { recursive: true });
  for (const name of ['config.json', 'model.safetensors', 'vocab.json', 'merges.txt'])
    copyFileSync(join(tinyModelDir, name), join(dotted, name));
  assert.equal(await attempt(dotted), 'loaded');
  const missing = join(root, 'build', 'no-such-model');
  assert.equal(await attempt(missing), `${missing}/config.json: no such file`);
  assert.equal(await attempt(`${missing}.gguf`), `${missing}.gguf: no such file`);
});
