// The model cache (Cache API) in headless Chromium: a second load in a new page transfers no weight
// bytes and gives the same logits; clearCache() makes the next load fetch again; a truncated or
// corrupted entry is detected, dropped and fetched again; a full quota loads without the cache and
// warns. The model is served by a second server on another port that counts the weight bytes it
// sends. No network beyond localhost.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createServer } from 'node:http';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { root, startSite, testModelsDir, tinyModelDir } from './harness.mjs';

const reference = JSON.parse(readFileSync(join(root, 'tests/fixtures/gpt2-tiny/reference.json'), 'utf8'));
const p1 = Object.values(reference.prompts)[0];
const files = {};
let weightBytes = 0;
let site;
let context; // one browser profile: its pages share the origin's cache, as a user's tabs do
let models;
let base;

before(async () => {
  for (const f of ['config.json', 'model.safetensors', 'vocab.json', 'merges.txt'])
    files[`/tiny/${f}`] = readFileSync(join(tinyModelDir, f));
  const gguf = join(testModelsDir, 'cache-tiny.gguf');
  execFileSync(join(root, 'build/native/gpt2-gguf'), [tinyModelDir, gguf, '--type', 'F32']);
  files['/tiny.gguf'] = readFileSync(gguf);
  models = createServer((req, res) => {
    res.setHeader('Access-Control-Allow-Origin', '*');
    const body = files[new URL(req.url, 'http://x').pathname];
    if (!body) return res.writeHead(404).end('not found');
    if (/\.(safetensors|gguf)$/.test(req.url)) weightBytes += body.length;
    res.writeHead(200, { 'Content-Length': body.length, 'Content-Type': 'application/octet-stream' }).end(body);
  });
  await new Promise((ok) => models.listen(0, '127.0.0.1', ok));
  base = `http://127.0.0.1:${models.address().port}`;
  site = await startSite();
  context = await site.browser.newContext();
});

async function newPage() {
  const page = await context.newPage();
  await page.goto(`${site.url}examples/blank.html`);
  return page;
}
after(async () => {
  await site?.close();
  await new Promise((ok) => models?.close(ok));
});

// Loads `source` in a new page and returns what the page saw; `before` runs in the page first.
async function load(source, { worker = true, before: setUp } = {}) {
  const page = await newPage();
  if (setUp) await page.evaluate(setUp);
  const sent = weightBytes;
  const r = await page.evaluate(
    async ({ source, ids, worker }) => {
      const { GPT2 } = await import('/gpt2.js');
      const events = [];
      const start = performance.now();
      const model = await GPT2.load(source, {
        backend: 'webgl',
        weights: 'fp32',
        worker,
        onProgress: (e) => events.push(e),
      });
      const ms = performance.now() - start;
      const logits = Array.from(await model.logits(ids));
      await model.dispose();
      return {
        logits,
        last: events.at(-1),
        warnings: events.filter((e) => e.warning).map((e) => e.warning),
        ms,
        cached: await GPT2.cachedModels(),
      };
    },
    { source, ids: p1.ids, worker },
  );
  await page.close();
  return { ...r, sent: weightBytes - sent, diff: Math.max(...p1.last_logits.map((v, i) => Math.abs(v - r.logits[i]))) };
}

async function clear() {
  const page = await newPage();
  await page.evaluate(async () => (await import('/gpt2.js')).GPT2.clearCache());
  await page.close();
}

for (const worker of [true, false]) {
  test(`${worker ? 'worker' : 'same thread'}: a second load reads the cache: no weight bytes sent, the same logits; clearCache() fetches again`, async () => {
    await clear();
    const first = await load(`${base}/tiny/`, { worker });
    const second = await load(`${base}/tiny/`, { worker });
    console.log(
      `[ measured ] ${worker ? 'worker' : 'same thread'}: gpt2-tiny load ${first.ms.toFixed(0)} ms first, ${second.ms.toFixed(0)} ms from the cache`,
    );
    assert.deepEqual(first.warnings, []);
    assert.equal(first.sent, files['/tiny/model.safetensors'].length);
    assert.equal(first.last.fromCache, 0);
    assert.ok(first.diff <= 1e-3, `max |dlogit| ${first.diff}`);
    assert.equal(second.sent, 0, 'no weight bytes over the network');
    assert.deepEqual(second.warnings, [], 'the cached weights were read by a Worker');
    assert.equal(second.last.fromCache, second.last.total);
    assert.deepEqual(second.logits, first.logits);
    const bytes = ['config.json', 'model.safetensors', 'vocab.json', 'merges.txt'].reduce(
      (n, f) => n + files[`/tiny/${f}`].length,
      0,
    );
    assert.deepEqual(second.cached, [{ source: `${base}/tiny/`, bytes }]);
    await clear();
    const third = await load(`${base}/tiny/`, { worker });
    assert.equal(
      third.sent,
      files['/tiny/model.safetensors'].length,
      'after clearCache() the weights come over the network',
    );
    assert.deepEqual(third.logits, first.logits);
  });
}

// A cached file's weights are read by a second thread (gpt2-cache-reader.js) that the page makes in
// either mode (for the module's Worker too: Firefox may never return from making a Worker inside a
// Worker), counted here as the Workers the page makes from blob: URLs. Where no Worker can be made,
// the load reads them itself, says so, and gives the same logits.
async function cachedLoadReaders(worker) {
  await clear();
  const first = await load(`${base}/tiny/`, { worker });
  const countReaders = () => {
    const Base = globalThis.Worker;
    globalThis.readers = 0;
    globalThis.Worker = class extends Base {
      constructor(url, options) {
        super(url, options);
        if (String(url).startsWith('blob:')) globalThis.readers += 1;
      }
    };
  };
  const page = await newPage();
  await page.evaluate(countReaders);
  const read = await page.evaluate(
    async ({ source, ids, worker }) => {
      const { GPT2 } = await import('/gpt2.js');
      const warnings = [];
      const model = await GPT2.load(source, {
        backend: 'webgl',
        weights: 'fp32',
        worker,
        onProgress: (e) => e.warning && warnings.push(e.warning),
      });
      const logits = Array.from(await model.logits(ids));
      await model.dispose();
      return { logits, warnings, readers: globalThis.readers, mode: model.mode };
    },
    { source: `${base}/tiny/`, ids: p1.ids, worker },
  );
  await page.close();
  assert.equal(read.mode.worker, worker);
  assert.equal(read.readers, 1, 'one reader Worker for model.safetensors');
  assert.deepEqual(read.warnings, []);
  assert.deepEqual(read.logits, first.logits);
  return first;
}

test('worker: cached weights are read by a Worker the page makes for it', async () => {
  await cachedLoadReaders(true);
});

test('same thread: cached weights are read by a Worker, or here with a warning where there is none', async () => {
  const first = await cachedLoadReaders(false);
  const here = await load(`${base}/tiny/`, {
    worker: false,
    before: () => {
      globalThis.Worker = undefined;
    },
  });
  assert.equal(here.sent, 0, 'still from the cache');
  assert.deepEqual(here.warnings, [
    'cached files are read on the loading thread (no Worker here); a later visit loads slower',
  ]);
  assert.deepEqual(here.logits, first.logits);
});

test('a truncated cache entry is detected and fetched again', async () => {
  await clear();
  await load(`${base}/tiny/`);
  const r = await load(`${base}/tiny/`, {
    before: async () => {
      const cache = await caches.open('gpt2-webgl-models');
      const url = (await cache.keys()).map((k) => k.url).find((u) => u.endsWith('model.safetensors'));
      const full = await (await cache.match(url)).arrayBuffer();
      await cache.put(
        url,
        new Response(full.slice(0, full.byteLength >> 1), { headers: { 'X-Gpt2-Bytes': String(full.byteLength) } }),
      );
    },
  });
  assert.equal(r.sent, files['/tiny/model.safetensors'].length, 'the weights were fetched again');
  assert.ok(r.diff <= 1e-3, `max |dlogit| ${r.diff}`);
  assert.equal((await load(`${base}/tiny/`)).sent, 0, 'and cached whole again');
});

test('a cached GGUF file that fails the load (a corrupted header) is dropped and fetched again', async () => {
  await clear();
  const first = await load(`${base}/tiny.gguf`);
  assert.ok(first.diff <= 1e-3, `max |dlogit| ${first.diff}`);
  const r = await load(`${base}/tiny.gguf`, {
    before: async () => {
      const cache = await caches.open('gpt2-webgl-models');
      const [url] = (await cache.keys()).map((k) => k.url);
      const bytes = new Uint8Array(await (await cache.match(url)).arrayBuffer());
      bytes[4] ^= 0x10; // the format version
      await cache.put(url, new Response(bytes, { headers: { 'X-Gpt2-Bytes': String(bytes.length) } }));
    },
  });
  assert.equal(r.sent, files['/tiny.gguf'].length, 'the GGUF file was fetched again');
  assert.deepEqual(r.logits, first.logits);
});

// Same thread only: the init script that fills the quota patches the page, which a worker does not share.
test('a full storage quota loads without the cache and warns', async () => {
  await clear();
  const page = await context.newPage();
  await page.addInitScript(() => {
    Cache.prototype.put = () => Promise.reject(new DOMException('Quota exceeded', 'QuotaExceededError'));
  });
  await page.goto(`${site.url}examples/blank.html`);
  const r = await page.evaluate(
    async ({ source, ids }) => {
      const { GPT2 } = await import('/gpt2.js');
      const warnings = [];
      const model = await GPT2.load(source, {
        backend: 'webgl',
        worker: false,
        onProgress: (e) => e.warning && warnings.push(e.warning),
      });
      const logits = await model.logits(ids);
      await model.dispose();
      return { warnings, first: logits[0], cached: await GPT2.cachedModels() };
    },
    { source: `${base}/tiny/`, ids: p1.ids },
  );
  await page.close();
  assert.equal(r.warnings.length, 1, JSON.stringify(r.warnings));
  assert.match(
    r.warnings[0],
    /storage quota is full: the model's files were not cached; the model loads without caching/,
  );
  assert.ok(Math.abs(r.first - p1.last_logits[0]) < 1e-2);
  assert.deepEqual(r.cached, []);
});

test('restore() after a lost context reloads from the cache', async () => {
  await clear();
  const page = await newPage();
  const sent = weightBytes;
  const r = await page.evaluate(async (source) => {
    const { GPT2 } = await import('/gpt2.js');
    const model = await GPT2.load(source, { backend: 'webgl', weights: 'fp32' });
    await model.simulateContextLoss();
    const events = [];
    await model.restore({ onProgress: (e) => events.push(e) });
    const logits = await model.logits([15496, 11, 616, 1438, 318]);
    await model.dispose();
    return { last: events.at(-1), first: logits[0] };
  }, `${base}/tiny/`);
  await page.close();
  assert.equal(
    weightBytes - sent,
    files['/tiny/model.safetensors'].length,
    'the weights came over the network once, for the first load',
  );
  assert.equal(r.last.fromCache, r.last.total);
  assert.ok(Math.abs(r.first - p1.last_logits[0]) < 1e-3, `restored logits ${r.first}`);
});

// Same thread only, as the quota test: the init script takes the Cache API away from the page.
test('without a Cache API the model loads all the same and warns', async () => {
  const page = await context.newPage();
  await page.addInitScript(() => {
    Object.defineProperty(globalThis, 'caches', { value: undefined, configurable: true });
  });
  await page.goto(`${site.url}examples/blank.html`);
  const r = await page.evaluate(async (source) => {
    const { GPT2 } = await import('/gpt2.js');
    const warnings = [];
    const model = await GPT2.load(source, {
      backend: 'webgl',
      worker: false,
      onProgress: (e) => e.warning && warnings.push(e.warning),
    });
    const ok = (await model.logits([1, 2])).length;
    await model.dispose();
    return { warnings, ok, cached: await GPT2.cachedModels() };
  }, `${base}/tiny/`);
  await page.close();
  assert.deepEqual(r.warnings, [
    'the Cache API is not available here (it needs a secure context: https or localhost); the model loads without caching',
  ]);
  assert.equal(r.ok, 50257);
  assert.deepEqual(r.cached, []);
});
