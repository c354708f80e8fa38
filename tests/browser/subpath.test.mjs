// The site served under a sub-path, as GitHub Pages serves a project (https://USER.github.io/REPO/):
// the demo loads the bundled model and generates, and no request leaves the prefix (a URL written
// from the site's root, '/gpt2.js' say, would 404 there).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { cpus } from 'node:os';
import { serve } from '../../web/dev/serve.mjs';
import { siteDir, startSite, waitForDemoModel } from './harness.mjs';

const PREFIX = '/gpt2-webgl/';
let site, server, origin;
const served = []; // every path the server was asked for, workers' requests included

before(async () => {
  site = await startSite(); // for its browser; the site itself is served below, under PREFIX only
  server = await serve(siteDir, 0, '127.0.0.1', { prefix: PREFIX });
  server.on('request', (req) => served.push(req.url));
  origin = `http://127.0.0.1:${server.address().port}`;
});
after(async () => {
  await new Promise((ok) => server?.close(ok));
  await site?.close();
});

test('the server finds nothing outside the prefix, and redirects the prefix without its slash', async () => {
  assert.equal((await fetch(`${origin}/index.html`)).status, 404);
  assert.equal((await fetch(`${origin}/gpt2.js`)).status, 404);
  assert.equal((await fetch(`${origin}${PREFIX}gpt2.js`)).status, 200);
  const bare = await fetch(`${origin}${PREFIX.slice(0, -1)}`, { redirect: 'manual' });
  assert.equal(bare.status, 301);
  assert.equal(bare.headers.get('location'), PREFIX);
});

test('under a sub-path the demo loads the bundled model and generates, with every request inside the prefix', async () => {
  served.length = 0;
  const page = await site.browser.newPage();
  const requested = [];
  page.on('request', (request) => requested.push(request.url()));
  page.on('pageerror', (error) => console.log(`[page error] ${error.message}`));
  await page.goto(`${origin}${PREFIX}`);
  await waitForDemoModel(page);
  await page.fill('#max-new-tokens', '4');
  await page.uncheck('#live-views');
  await page.click('#generate');
  await page.waitForFunction(
    () => /4 tokens/.test(document.getElementById('speed').textContent) || !document.getElementById('error').hidden,
    null,
    { timeout: 60000 },
  );
  assert.equal(await page.locator('#error').isHidden(), true, await page.locator('#error').textContent());
  const output = await page.locator('#output').textContent();
  assert.ok(output.startsWith('The jury said that') && output.length > 'The jury said that'.length, output);
  await page.close();

  // The browser's own favicon request is for the origin's root whatever the page says.
  const paths = served.map((url) => new URL(url, origin).pathname).filter((path) => path !== '/favicon.ico');
  // SwiftShader's WebGL2 is a software rasterizer, so the model runs on the CPU: the demo's service
  // worker (inside the prefix, as its scope) makes the page cross-origin isolated, and the threads
  // build runs where there is more than one core.
  const wasm = cpus().length > 1 ? 'gpt2-wasm-threads.wasm' : 'gpt2-wasm.wasm';
  for (const file of ['', 'gpt2.js', 'coi-sw.js', wasm, 'models/default/model.safetensors']) {
    assert.ok(paths.includes(PREFIX + file), `${PREFIX + file} was requested: ${paths.join(' ')}`);
  }
  assert.deepEqual(
    paths.filter((path) => !path.startsWith(PREFIX)),
    [],
    'requests outside the prefix',
  );
  const outside = requested.filter((url) => !url.startsWith(origin + PREFIX) && !/^(data|blob):/.test(url));
  assert.deepEqual(outside, [], 'requests the page made outside the prefix');
});
