// Downloads over a network that fails, in Chromium, against a local server that serves the gpt2-tiny
// folder with CORS and Range as the hub's CDN does, and fails on purpose: a connection cut at 90% of
// the weights, a body that stops short of its Content-Length, 429 and 503 answered once, a server
// that ignores Range, and one that cuts every time. Each load that succeeds gives the logits of a
// clean load; bytes sent are counted to show that a resume costs the missing part, not the file again.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { root, startSite, tinyModelDir } from './harness.mjs';

const reference = JSON.parse(readFileSync(join(root, 'tests/fixtures/gpt2-tiny/reference.json'), 'utf8'));
const ids = Object.values(reference.prompts)[0].ids;
const files = Object.fromEntries(
  ['config.json', 'model.safetensors', 'vocab.json', 'merges.txt'].map((f) => [f, readFileSync(join(tinyModelDir, f))]),
);
const weights = files['model.safetensors'].length;

// What the server does to the next requests of a file: a queue of faults per file name, each used
// once: { cut: fraction } (send that part, then drop the connection), { short: fraction } (send that
// part, then close the connection cleanly), { status, retryAfter }, and `ignoreRange` for every
// request while set.
const faults = {};
let ignoreRange = false;
let sent = 0; // body bytes of model.safetensors sent
const ranges = []; // Range headers received for model.safetensors
let server;
let site;

before(async () => {
  server = createServer((req, res) => {
    // no-store: every load reaches this server, not the browser's HTTP cache.
    const cors = {
      'Access-Control-Allow-Origin': '*',
      'Access-Control-Expose-Headers': 'ETag, Content-Range, Retry-After',
      'Cache-Control': 'no-store',
    };
    const name = req.url.replace(/^\/model\//, '');
    const file = files[name];
    if (!file) return res.writeHead(404, cors).end();
    const fault = faults[name]?.shift();
    if (fault?.status)
      return res.writeHead(fault.status, { ...cors, 'Retry-After': String(fault.retryAfter ?? 0) }).end();
    const range = /^bytes=(\d+)-$/.exec(req.headers.range ?? '');
    if (name === 'model.safetensors') ranges.push(req.headers.range ?? null);
    const from = range && !ignoreRange ? Number(range[1]) : 0;
    const body = file.subarray(from);
    res.writeHead(from ? 206 : 200, {
      ...cors,
      'Content-Length': body.length,
      ETag: '"tiny-v1"',
      'Accept-Ranges': 'bytes',
      ...(from ? { 'Content-Range': `bytes ${from}-${file.length - 1}/${file.length}` } : {}),
    });
    const part = fault?.cut ?? fault?.short;
    const count = (n) => {
      if (name === 'model.safetensors') sent += n;
    };
    if (part === undefined) {
      count(body.length);
      return res.end(body);
    }
    const n = Math.floor(body.length * part);
    count(n);
    // The connection is reset (cut) or closed (short) once what was written has had time to reach
    // the page: an error discards what the browser holds unread, which would make the bytes it got
    // depend on timing.
    res.write(body.subarray(0, n), () =>
      setTimeout(() => (fault.cut !== undefined ? res.socket.resetAndDestroy() : res.socket.end()), 200),
    );
  });
  await new Promise((ok) => server.listen(0, '127.0.0.1', ok));
  site = await startSite();
});
after(async () => {
  await site?.close();
  await new Promise((ok) => server?.close(ok));
});

const modelUrl = () => `http://127.0.0.1:${server.address().port}/model/`;

// Loads the model (no cache unless `cache`), reads the logits of the fixture prompt; returns them
// with the load's warnings and its last progress event, or the load's error.
async function load(page, { cache = false, worker = true } = {}) {
  sent = 0;
  ranges.length = 0;
  return page.evaluate(
    async ([url, prompt, options]) => {
      const { GPT2 } = await import('/gpt2.js');
      const warnings = [];
      let last = null;
      try {
        const model = await GPT2.load(url, {
          backend: 'webgl',
          weights: 'fp32',
          ...options,
          onProgress: (p) => {
            if (p.warning) warnings.push(p.warning);
            else last = p;
          },
        });
        const logits = Array.from(await model.logits(prompt));
        await model.dispose();
        return { logits, warnings, last };
      } catch (error) {
        return { error: error.message, warnings };
      }
    },
    [modelUrl(), ids, { cache, worker }],
  );
}

let clean;
test('a clean load from the faulty server: the reference for the others', async () => {
  const page = await site.page();
  clean = await load(page);
  assert.equal(clean.error, undefined, clean.error);
  assert.deepEqual(clean.warnings, []);
  assert.equal(sent, weights);
  await page.close();
});

for (const worker of [true, false]) {
  test(`${worker ? 'worker' : 'same thread'}: a connection cut at 90% of the weights resumes at the byte where its data ended: only the rest is fetched again, the logits are the same`, async () => {
    const page = await site.page();
    faults['model.safetensors'] = [{ cut: 0.9 }];
    const r = await load(page, { worker });
    assert.equal(r.error, undefined, r.error);
    assert.deepEqual(r.logits, clean.logits);
    console.log(
      `[${worker ? 'worker' : 'same thread'}] cut at 90%: ${sent} bytes sent for a ${weights}-byte file (${(sent / weights).toFixed(3)}x)`,
    );
    assert.equal(ranges.length, 2);
    assert.equal(r.warnings.length, 1, r.warnings.join('\n'));
    const broke =
      /model\.safetensors: the download broke at byte (\d+) of \d+ .*; resuming in [\d.]+ s \(retry 1 of 4\)/.exec(
        r.warnings[0],
      );
    assert.ok(broke, r.warnings[0]);
    // It resumes at the byte where its data ended, and only the rest is sent again: how much of the
    // cut response reached the page before the reset depends on the machine's load, not on the module.
    const received = Number(broke[1]);
    const cutAt = Math.floor(weights * 0.9);
    assert.ok(received > 0 && received <= cutAt, `broke at byte ${received} of the ${cutAt} sent`);
    assert.equal(ranges[1], `bytes=${received}-`);
    assert.equal(sent, cutAt + (weights - received), `${sent} bytes sent for a ${weights}-byte file`);
    assert.equal(r.last.loaded, r.last.total, 'progress counts each byte once');
    await page.close();
  });
}

test('a body that stops short of its Content-Length resumes; a resumed file is cached whole', async () => {
  const page = await site.page();
  await page.evaluate(() => import('/gpt2.js').then(({ GPT2 }) => GPT2.clearCache()));
  faults['model.safetensors'] = [{ short: 0.5 }];
  const r = await load(page, { cache: true });
  assert.equal(r.error, undefined, r.error);
  assert.deepEqual(r.logits, clean.logits);
  // As after a cut: it resumes where its data ended, and only the rest is sent again.
  const broke = /model\.safetensors: the download broke at byte (\d+) of \d+/.exec(r.warnings.join('\n'));
  assert.ok(broke, r.warnings.join('\n'));
  const received = Number(broke[1]);
  const shortAt = Math.floor(weights * 0.5);
  assert.ok(received > 0 && received <= shortAt, `broke at byte ${received} of the ${shortAt} sent`);
  assert.equal(sent, shortAt + (weights - received), `${sent} bytes sent for a ${weights}-byte file`);
  const again = await load(page, { cache: true });
  assert.deepEqual(again.logits, clean.logits);
  assert.equal(sent, 0, 'the second load read every byte from the cache');
  assert.equal(again.last.fromCache, again.last.total);
  await page.evaluate(() => import('/gpt2.js').then(({ GPT2 }) => GPT2.clearCache()));
  await page.close();
});

test('429 and 503 answered once are retried after the wait they ask, and reported', async () => {
  const page = await site.page();
  faults['config.json'] = [{ status: 429, retryAfter: 0 }];
  faults['model.safetensors'] = [{ status: 503, retryAfter: 0 }];
  const r = await load(page);
  assert.equal(r.error, undefined, r.error);
  assert.deepEqual(r.logits, clean.logits);
  assert.ok(
    r.warnings.some((w) => /config\.json: HTTP 429; trying again in 0\.0 s \(retry 1 of 4\)/.test(w)),
    r.warnings.join('\n'),
  );
  assert.ok(
    r.warnings.some((w) => /model\.safetensors: HTTP 503; trying again/.test(w)),
    r.warnings.join('\n'),
  );
  await page.close();
});

test('a server that ignores Range sends the file again; the bytes already received are dropped, not doubled', async () => {
  const page = await site.page();
  ignoreRange = true;
  faults['model.safetensors'] = [{ cut: 0.5 }];
  const r = await load(page);
  ignoreRange = false;
  assert.equal(r.error, undefined, r.error);
  assert.deepEqual(r.logits, clean.logits);
  assert.ok(sent > weights * 1.4 && sent < weights * 1.6, `${sent} bytes: half, then the whole file`);
  await page.close();
});

test('a connection that breaks on every try fails the load after 4 retries, saying where it broke', async () => {
  const page = await site.page();
  faults['model.safetensors'] = Array.from({ length: 5 }, () => ({ cut: 0.05 }));
  const r = await load(page);
  assert.match(
    r.error ?? '',
    /model\.safetensors: the download broke at byte \d+ of \d+ \(.*\) and did not resume after 4 retries/,
  );
  assert.equal(faults['model.safetensors'].length, 0, 'the first try and 4 retries');
  await page.close();
});
