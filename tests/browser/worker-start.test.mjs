// Starting the module's Worker, in Chromium: under a strict Content-Security-Policy from the page's
// origin, and from another origin (a CDN) under the policy docs/api.md gives; and when the worker
// cannot start (a 404, a wrong MIME type, a CSP without blob:), the fallback's warning says why.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { serve } from '../../web/dev/serve.mjs';
import { root, siteDir, startSite, testSiteDir } from './harness.mjs';

const reference = JSON.parse(readFileSync(join(root, 'tests/fixtures/gpt2-tiny/reference.json'), 'utf8'));
const prompt = Object.values(reference.prompts)[0];
const servers = [];
let site;

before(async () => {
  site = await startSite();
});
after(async () => {
  await site?.close();
  for (const server of servers) await new Promise((ok) => server.close(ok));
});

// Serves the site and the test models with `headers`, on `host`; returns its origin.
async function origin(host, options) {
  const server = await serve([testSiteDir, siteDir], 0, '127.0.0.1', options);
  servers.push(server);
  return `http://${host}:${server.address().port}`;
}

// The policy docs/api.md gives for a module served from another origin, for CDN origin `cdn`.
function cdnPolicy(cdn) {
  const api = readFileSync(join(root, 'docs/api.md'), 'utf8');
  const policy = /CDN policy: `([^`]+)`/.exec(api)?.[1];
  assert.ok(policy, 'docs/api.md states the CDN policy as "CDN policy: `...`"');
  return policy.replaceAll('https://cdn.example', cdn);
}

// Loads the fixture model with the module at `moduleUrl` and generates 3 tokens greedily.
function generate(page, moduleUrl, options = {}) {
  return page.evaluate(
    async ([url, ids, settings]) => {
      const { GPT2 } = await import(url);
      // What importing the module fetched (the worker's scripts, fetched later, show here too in Chromium).
      const imported = performance.getEntriesByType('resource').map((entry) => new URL(entry.name).pathname);
      const warnings = [];
      const model = await GPT2.load('/models/gpt2-tiny/', {
        backend: 'webgl',
        weights: 'fp32',
        ...settings,
        onProgress: ({ warning }) => warning && warnings.push(warning),
      });
      const out = [];
      for await (const t of model.generate(ids, { maxNewTokens: 3, stopAtEndOfText: false })) out.push(t.id);
      await model.dispose();
      const fetched = performance.getEntriesByType('resource').map((entry) => new URL(entry.name).pathname);
      return { ids: out, mode: model.mode, warnings, imported, fetched };
    },
    [moduleUrl, prompt.ids, options],
  );
}

test("served from the page's origin, the module runs in its Worker under script-src 'self' 'wasm-unsafe-eval'; worker-src 'self'", async () => {
  const policy = "default-src 'self'; script-src 'self' 'wasm-unsafe-eval'; worker-src 'self'";
  const page = await site.page(
    `${await origin('127.0.0.1', { headers: { 'Content-Security-Policy': policy } })}/examples/blank.html`,
  );
  const violations = [];
  page.on('console', (message) => /Content Security Policy/.test(message.text()) && violations.push(message.text()));
  const r = await generate(page, '/gpt2.js');
  assert.deepEqual(r.ids, prompt.greedy.slice(0, 3));
  assert.equal(r.mode.worker, true, r.mode.reason);
  assert.deepEqual(violations, []);
  assert.ok(r.imported.includes('/gpt2-remote.js'), `the module's imports are recorded: ${r.imported}`);
  const glue = r.imported.filter((path) => /gpt2-engine|gpt2-wasm/.test(path));
  assert.deepEqual(glue, [], 'importing the module does not fetch the same-thread engine');
  await page.close();
});

// The reader of cached files (gpt2-cache-reader.js) is a blob: Worker: refused under worker-src
// 'self', so a later visit reads on the loading thread, gives the same tokens, and says why.
test("under worker-src 'self', a cached model is read on the loading thread, with a warning", async () => {
  const policy = "default-src 'self'; script-src 'self' 'wasm-unsafe-eval'; worker-src 'self'";
  const page = await site.page(
    `${await origin('127.0.0.1', { headers: { 'Content-Security-Policy': policy } })}/examples/blank.html`,
  );
  for (const worker of [false, true]) {
    const first = await generate(page, '/gpt2.js', { worker });
    const second = await generate(page, '/gpt2.js', { worker });
    assert.deepEqual(second.ids, prompt.greedy.slice(0, 3));
    assert.equal(second.mode.worker, worker, second.mode.reason);
    assert.equal(second.warnings.length, 1, second.warnings.join('; '));
    assert.match(
      second.warnings[0],
      /^cached files are read on the loading thread \(.+\); a later visit loads slower$/,
    );
    await page.evaluate(async () => (await import('/gpt2.js')).GPT2.clearCache());
    assert.ok(first.warnings.every((w) => !w.startsWith('cached files')));
  }
  await page.close();
});

test('served from another origin, the module runs in its Worker under the CDN policy of docs/api.md', async () => {
  const cdn = await origin('localhost', { cors: true });
  const policy = cdnPolicy(cdn);
  const page = await site.page(
    `${await origin('127.0.0.1', { headers: { 'Content-Security-Policy': policy } })}/examples/blank.html`,
  );
  const r = await generate(page, `${cdn}/gpt2.js`);
  assert.deepEqual(r.ids, prompt.greedy.slice(0, 3));
  assert.equal(r.mode.worker, true, `${r.mode.reason} (policy: ${policy})`);
  await page.close();

  // Without blob: in worker-src the worker cannot start; the page's thread runs it and says why.
  const strict = policy.replace(/worker-src [^;]*/, "worker-src 'self'");
  const blocked = await site.page(
    `${await origin('127.0.0.1', { headers: { 'Content-Security-Policy': strict } })}/examples/blank.html`,
  );
  const fallback = await generate(blocked, `${cdn}/gpt2.js`);
  assert.deepEqual(fallback.ids, prompt.greedy.slice(0, 3));
  assert.equal(fallback.mode.worker, false);
  assert.match(fallback.mode.reason, /could not start: .*(Content.Security.Policy|worker-src)/i, fallback.mode.reason);
  await blocked.close();
});

test('a worker script that cannot start: the warning, the mode, console.warn (once) and worker: true say why', async () => {
  const page = await site.page();
  const warned = [];
  page.on('console', (message) => message.type() === 'warning' && warned.push(message.text()));
  const notFound = await generate(page, '/gpt2.js', { workerUrl: '/no-such-worker.js' });
  assert.deepEqual(notFound.ids, prompt.greedy.slice(0, 3), "the page's thread generates");
  assert.equal(notFound.mode.worker, false);
  assert.match(
    notFound.mode.reason,
    /^the GPT-2 worker \(http:\/\/127\.0\.0\.1:\d+\/no-such-worker\.js\) could not start: .*answered HTTP 404/,
  );
  assert.deepEqual(notFound.warnings, [
    `the engine runs on this page's thread, not in a Worker: ${notFound.mode.reason}`,
  ]);
  assert.ok(
    notFound.fetched.includes('/gpt2-engine.js') && notFound.fetched.includes('/gpt2-wasm.wasm'),
    'the page loaded the engine itself',
  );

  const wrongType = await generate(page, '/gpt2.js', { workerUrl: '/models/gpt2-tiny/config.json' });
  assert.match(wrongType.mode.reason, /is served as application\/json, not JavaScript/);

  const forced = await page.evaluate(() =>
    import('/gpt2.js').then(({ GPT2 }) =>
      GPT2.load('/models/gpt2-tiny/', { backend: 'webgl', worker: true, workerUrl: '/no-such-worker.js' }).then(
        () => 'loaded',
        (e) => e.message,
      ),
    ),
  );
  assert.match(forced, /^worker: true, but the GPT-2 worker .* could not start: .*HTTP 404; leave worker unset/);

  // A worker a bundler inlined as a data: URL of kilobytes is quoted by its start only.
  const inlined = `data:text/javascript;base64,${Buffer.from(`throw new Error('broken'); // ${'x'.repeat(4000)}`).toString('base64')}`;
  const long = await generate(page, '/gpt2.js', { workerUrl: inlined });
  assert.equal(long.mode.worker, false);
  assert.ok(long.mode.reason.length <= 301, `${long.mode.reason.length} characters: ${long.mode.reason}`);
  assert.match(long.mode.reason, /data:text\/javascript;base64,\S{20,}…/);

  assert.equal(warned.filter((text) => text.startsWith('gpt2-webgl:')).length, 1, `one console.warn: ${warned}`);
  assert.match(
    warned.find((text) => text.startsWith('gpt2-webgl:')),
    /HTTP 404/,
  );
  await page.close();
});
