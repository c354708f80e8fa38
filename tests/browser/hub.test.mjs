// Hub ids ('owner/name') in the browser, against a local server laid out like the Hugging Face hub:
// {hub}/{id}/resolve/{revision}/{file}, with model.safetensors answered by a 302 to a "CDN" on
// another port, as the hub sends large files. Both servers send CORS headers, as the real ones do.
// No network beyond localhost.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { root, startSite, tinyModelDir } from './harness.mjs';

const reference = JSON.parse(readFileSync(join(root, 'tests/fixtures/gpt2-tiny/reference.json'), 'utf8'));
const p1 = Object.values(reference.prompts)[0];
const files = Object.fromEntries(
  ['config.json', 'model.safetensors', 'vocab.json', 'merges.txt'].map((f) => [f, readFileSync(join(tinyModelDir, f))]),
);
// A repository of GGUF files, as the community's GPT-2 GGUF repositories are laid out.
const ggufFiles = {
  'gguf/tiny.Q8_0.gguf': readFileSync(join(root, 'tests/fixtures/gguf/tiny-Q8_0.gguf')),
  'gguf/wide.Q4_K_M.gguf': readFileSync(join(root, 'tests/fixtures/gguf/wide-Q4_K_M.gguf')),
  'gguf/not.gguf': files['config.json'],
};
const ggufReference = JSON.parse(readFileSync(join(root, 'tests/fixtures/gguf/tiny-Q8_0.json'), 'utf8')).prompts[0];
let site;
let hub;
let cdn;
const requests = [];

function listen(handler) {
  const server = createServer((req, res) => {
    res.setHeader('Access-Control-Allow-Origin', '*');
    handler(req, res);
  });
  return new Promise((ok) => server.listen(0, '127.0.0.1', () => ok(server)));
}
const ranged = (req) => (req.headers.range ? ` ${req.headers.range}` : '');
const origin = (server) => `http://127.0.0.1:${server.address().port}`;

before(async () => {
  // The CDN answers a Range request of the first bytes as the hub's does (206); the hub redirects it.
  cdn = await listen((req, res) => {
    requests.push(`cdn ${req.url}${ranged(req)}`);
    const m = req.url.match(/^\/blobs\/([\w./]+)$/);
    const file = m && (files[m[1]] ?? ggufFiles[m[1]]);
    if (!file) return res.writeHead(404).end('not found');
    const range = /^bytes=0-(\d+)$/.exec(req.headers.range ?? '');
    if (!range) return res.writeHead(200, { 'Content-Length': file.length }).end(file);
    const part = file.subarray(0, Number(range[1]) + 1);
    res.setHeader('Access-Control-Expose-Headers', 'Content-Range');
    res.writeHead(206, { 'Content-Length': part.length, 'Content-Range': `bytes 0-${part.length - 1}/${file.length}` });
    res.end(part);
  });
  hub = await listen((req, res) => {
    requests.push(`hub ${req.url}${ranged(req)}`);
    const gguf = req.url.match(/^\/QuantFactory\/gpt2-tiny-GGUF\/resolve\/main\/([\w./]+)$/);
    if (gguf && ggufFiles[gguf[1]]) return res.writeHead(302, { Location: `${origin(cdn)}/blobs/${gguf[1]}` }).end();
    const m = req.url.match(/^\/openai-community\/gpt2-tiny\/resolve\/(main|v1\.0)\/([\w.]+)$/);
    if (!m || !files[m[2]]) return res.writeHead(404, { 'X-Error-Code': 'EntryNotFound' }).end('Entry not found');
    if (m[2] === 'model.safetensors')
      return res.writeHead(302, { Location: `${origin(cdn)}/blobs/model.safetensors` }).end();
    res.writeHead(200, { 'Content-Length': files[m[2]].length }).end(files[m[2]]);
  });
  site = await startSite();
});
after(async () => {
  await site?.close();
  await Promise.all([hub, cdn].map((s) => new Promise((ok) => s?.close(ok))));
});

for (const worker of [true, false]) {
  test(`${worker ? 'worker' : 'same thread'}: a hub id loads through the resolve URLs and the CDN redirect and matches the fixture`, async () => {
    requests.length = 0;
    const page = await site.page();
    const r = await page.evaluate(
      async ({ hubUrl, ids, worker }) => {
        const { GPT2 } = await import('/gpt2.js');
        const model = await GPT2.load('openai-community/gpt2-tiny', {
          backend: 'webgl',
          hubUrl,
          revision: 'v1.0',
          weights: 'fp32',
          worker,
        });
        const logits = await model.logits(ids);
        const text = await model.decode(ids);
        await model.dispose();
        const resolved = GPT2.resolveSource('openai-community/gpt2-tiny', { hubUrl, revision: 'v1.0' });
        const cached = (await GPT2.cachedModels()).map((m) => m.source);
        const missing = await GPT2.load('openai-community/gpt2-none', { backend: 'webgl', hubUrl, worker }).then(
          () => 'loaded',
          (e) => e.message,
        );
        return { logits: Array.from(logits), text, missing, resolved, cached };
      },
      { hubUrl: origin(hub), ids: p1.ids, worker },
    );
    const diff = Math.max(...p1.last_logits.map((v, i) => Math.abs(v - r.logits[i])));
    assert.ok(diff <= 1e-4, `max |dlogit| ${diff}`);
    assert.equal(r.text, p1.text);
    // The URL resolveSource gives is the one the load fetched and cached the model under.
    assert.equal(r.resolved, `${origin(hub)}/openai-community/gpt2-tiny/resolve/v1.0/`);
    assert.ok(r.cached.includes(r.resolved), `${r.resolved} in ${r.cached}`);
    assert.ok(requests.includes('hub /openai-community/gpt2-tiny/resolve/v1.0/model.safetensors'), requests.join('\n'));
    assert.ok(requests.includes('cdn /blobs/model.safetensors'), 'the redirect was followed to the other port');
    assert.match(r.missing, /openai-community\/gpt2-none\/resolve\/main\/config\.json: HTTP 404/);
    await page.close();
  });
}

for (const worker of [true, false]) {
  test(`${worker ? 'worker' : 'same thread'}: a hub id with the path of a GGUF file loads that file, config and tokenizer included`, async () => {
    requests.length = 0;
    const page = await site.page();
    const r = await page.evaluate(
      async ({ hubUrl, text, worker }) => {
        const { GPT2 } = await import('/gpt2.js');
        const model = await GPT2.load('QuantFactory/gpt2-tiny-GGUF/gguf/tiny.Q8_0.gguf', {
          backend: 'webgl',
          hubUrl,
          weights: 'fp32',
          worker,
        });
        const ids = Array.from(await model.tokenize(text));
        const logits = Array.from(await model.logits(ids));
        await model.dispose();
        return { ids, logits };
      },
      { hubUrl: origin(hub), text: ggufReference.text, worker },
    );
    assert.deepEqual(r.ids, ggufReference.llama_cpp_ids);
    const diff = Math.max(...ggufReference.reference_last_logits.map((v, i) => Math.abs(v - r.logits[i])));
    assert.ok(diff <= 2e-4, `max |dlogit| ${diff}`);
    assert.deepEqual(requests, [
      'hub /QuantFactory/gpt2-tiny-GGUF/resolve/main/gguf/tiny.Q8_0.gguf',
      'cdn /blobs/gguf/tiny.Q8_0.gguf',
    ]);
    await page.close();
  });
}

// GPT2.gpuBytes plans a hub GGUF file from its header alone (one Range request of 2 MiB for a file of
// 3.5 MB), a cached one from the cache, and a hub folder from its config.json: the figures the loaded
// models then take.
for (const worker of [true, false]) {
  test(`${worker ? 'worker' : 'same thread'}: gpuBytes plans hub GGUF files from their headers and a hub folder from its config, as loaded`, async () => {
    const page = await site.page();
    const ids = {
      q8: 'QuantFactory/gpt2-tiny-GGUF/gguf/tiny.Q8_0.gguf',
      q4: 'QuantFactory/gpt2-tiny-GGUF/gguf/wide.Q4_K_M.gguf',
      folder: 'openai-community/gpt2-tiny',
    };
    const loaded = (id) =>
      page.evaluate(
        async ({ hubUrl, id, worker }) => {
          const { GPT2 } = await import('/gpt2.js');
          const model = await GPT2.load(id, { backend: 'webgl', hubUrl, worker });
          const { gpuBytes } = await model.stats();
          await model.dispose();
          return gpuBytes;
        },
        { hubUrl: origin(hub), id, worker },
      );
    const plan = (models) =>
      page.evaluate(
        async ({ hubUrl, models, worker }) => {
          const { GPT2 } = await import('/gpt2.js');
          return GPT2.gpuBytes(models, { backend: 'webgl', hubUrl, worker }).catch((e) => e.message);
        },
        { hubUrl: origin(hub), models, worker },
      );
    const q4 = await loaded(ids.q4); // now in the cache
    requests.length = 0;
    const planned = await plan([ids.q8, ids.q4, ids.folder]);
    assert.deepEqual(requests, [
      'hub /QuantFactory/gpt2-tiny-GGUF/resolve/main/gguf/tiny.Q8_0.gguf bytes=0-2097151',
      'cdn /blobs/gguf/tiny.Q8_0.gguf bytes=0-2097151',
      'hub /openai-community/gpt2-tiny/resolve/main/config.json',
    ]);
    assert.deepEqual(planned, [await loaded(ids.q8), q4, await loaded(ids.folder)]);
    assert.match(
      await plan(['QuantFactory/gpt2-tiny-GGUF/gguf/not.gguf']),
      /gguf\/not\.gguf: is not a GGUF file; GPT2\.gpuBytes plans a config object, a folder \(from its config\.json\) or a GGUF file/,
    );
    await page.close();
  });
}
