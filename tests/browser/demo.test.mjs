// The demo page and the embedding example, driven like a person would: load, generate, heatmap,
// and the errors a user sees on the page for bad model sources and missing WebGL2.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { join } from 'node:path';
import { artifactsDir, root, startSite, testModelsDir, tinyModelDir, waitForDemoModel } from './harness.mjs';

let site;

before(async () => {
  // A model folder whose weights file was cut in half, as an interrupted download leaves it.
  const truncated = join(testModelsDir, 'truncated');
  mkdirSync(truncated, { recursive: true });
  for (const f of ['config.json', 'vocab.json', 'merges.txt']) copyFileSync(join(tinyModelDir, f), join(truncated, f));
  const weights = readFileSync(join(tinyModelDir, 'model.safetensors'));
  writeFileSync(join(truncated, 'model.safetensors'), weights.subarray(0, weights.length >> 1));
  site = await startSite();
});
after(() => site?.close());

// With live views (the default) the heatmap is drawn from the first token on: the generation has
// ended once it is drawn and Generate is enabled again.
function generationDone(page) {
  return page.waitForFunction(
    () => document.getElementById('heatmap').dataset.drawn === 'true' && !document.getElementById('generate').disabled,
    null,
    { timeout: 60000 },
  );
}

// A hovered cell or token is described once its tokens' texts come back from the model, which is
// asynchronous: wait for the description, then check it whole (the message shows what was there).
async function hoverAndRead(page, target, infoId, pattern) {
  await target.hover();
  await page
    .waitForFunction(
      ([id, source]) => new RegExp(source).test(document.getElementById(id).textContent),
      [infoId, pattern.source],
    )
    .catch(() => {});
  assert.match(await page.locator(`#${infoId}`).textContent(), pattern);
}

test('the demo page streams text with tokens/s and draws an attention heatmap', async () => {
  const page = await site.page('?backend=webgl');
  await waitForDemoModel(page);
  await page.fill('#prompt', 'The jury said that');
  await page.fill('#max-new-tokens', '24');
  await page.fill('#seed', '7');
  await page.click('#generate');
  await generationDone(page);
  const output = await page.locator('#output').textContent();
  assert.ok(output.startsWith('The jury said that') && output.length > 'The jury said that'.length, output);
  assert.match(await page.locator('#speed').textContent(), /24 tokens, [\d.]+ tokens\/s/);
  // The heatmap is not blank: its pixels differ across the lower triangle.
  const distinct = await page.evaluate(() => {
    const c = document.getElementById('heatmap');
    const data = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
    const colours = new Set();
    for (let i = 0; i < data.length; i += 4 * 97) colours.add(`${data[i]},${data[i + 1]},${data[i + 2]}`);
    return colours.size;
  });
  assert.ok(distinct > 5, `heatmap has ${distinct} colours`);
  const box = await page.locator('#heatmap').boundingBox();
  await page.locator('#heatmap').hover({ position: { x: box.width * 0.2, y: box.height * 0.8 } });
  assert.match(await page.locator('#heatmap-tooltip').textContent(), /query \d+ ".*" → key \d+ ".*": \d\.\d{4}/);
  await page.screenshot({ path: join(artifactsDir, 'demo.png'), fullPage: true });
  await page.close();
});

test('live views: the logit lens and attention follow generation, and a generated token shows its probability', async () => {
  const page = await site.page('?backend=webgl');
  await page.setViewportSize({ width: 1100, height: 1400 });
  await waitForDemoModel(page);
  assert.equal(await page.locator('#live-views').isChecked(), true, 'live views are on by default');
  await page.fill('#prompt', 'The jury said that');
  await page.fill('#max-new-tokens', '12');
  await page.fill('#seed', '3');
  await page.selectOption('#layer', '2');
  await page.click('#generate');
  await page.waitForFunction(() => /12 tokens/.test(document.getElementById('speed').textContent), null, {
    timeout: 60000,
  });
  await page.waitForFunction(() => document.getElementById('generate').disabled === false);
  const prompt = 4; // "The jury said that"
  const grid = await page.evaluate(() => {
    const rows = [...document.querySelectorAll('#lens-grid tr')];
    return {
      rows: rows.length,
      header: [...rows[0].cells].map((c) => c.textContent),
      cells: rows.slice(1).map((r) => r.querySelectorAll('td').length),
      filled: [...document.querySelectorAll('#lens-grid td')].every(
        (td) => td.textContent.length > 0 && td.style.background,
      ),
    };
  });
  // 6 layers by the prompt's positions and one per generated token but the last (it never ran).
  assert.equal(grid.rows, 7);
  assert.deepEqual(grid.cells, Array(6).fill(prompt + 11));
  assert.deepEqual(grid.header.slice(1, 5), ['The', '␣jury', '␣said', '␣that']);
  assert.ok(grid.filled);
  assert.equal(await page.locator('#heatmap').getAttribute('data-tokens'), String(prompt + 11));
  await hoverAndRead(
    page,
    page.locator('#lens-grid tr:nth-child(2) td:nth-of-type(3)'),
    'lens-info',
    /^Layer 5, position 2: (".*" 0\.\d{3}, ){4}".*" 0\.\d{3}$/,
  );
  await hoverAndRead(
    page,
    page.locator('#output span').nth(3),
    'token-info',
    /^".*": p [=<] 0\.\d{3}.*\. Top 5: (".*" 0\.\d{3}, ){4}".*" 0\.\d{3}$/,
  );
  // The heatmap carries the tokens on both axes (labels next to 16 px cells) and is not blank.
  const heatmap = await page.evaluate(() => {
    const c = document.getElementById('heatmap');
    const data = c.getContext('2d').getImageData(0, 0, 72, c.height).data;
    let ink = 0;
    for (let i = 3; i < data.length; i += 4) if (data[i] > 0) ink += 1;
    return { width: c.width, ink };
  });
  assert.ok(heatmap.width > 480 && heatmap.ink > 200, JSON.stringify(heatmap));
  await page
    .locator('#lens-heading')
    .locator('..')
    .screenshot({ path: join(artifactsDir, 'demo-lens.png') });
  await page
    .locator('#attention-heading')
    .locator('..')
    .screenshot({ path: join(artifactsDir, 'demo-attention.png') });
  await page
    .locator('#generate-heading')
    .locator('..')
    .screenshot({ path: join(artifactsDir, 'demo-token-info.png') });
  await page.close();
});

// The attention map covers every position; the lens grid the prompt's last lensPositions (the
// option's default) and then one position per generated token after the first.
test('live views of a long context scroll instead of shrinking cells', async () => {
  const lensPositions = JSON.parse(readFileSync(join(root, 'src/options.json'), 'utf8')).generate.lensPositions.default;
  const newTokens = 24;
  const page = await site.page('?backend=webgl');
  await page.setViewportSize({ width: 600, height: 900 });
  await waitForDemoModel(page);
  await page.fill('#prompt', 'The jury said that the election was conducted. '.repeat(16));
  await page.fill('#max-new-tokens', String(newTokens));
  await page.click('#generate');
  await page.waitForFunction(
    (n) => new RegExp(`${n} tokens`).test(document.getElementById('speed').textContent),
    newTokens,
    { timeout: 120000 },
  );
  await page.waitForFunction(() => document.getElementById('generate').disabled === false);
  const r = await page.evaluate(() => {
    const c = document.getElementById('heatmap');
    const wrap = c.parentElement,
      lens = document.querySelector('.lens-wrap');
    return {
      tokens: Number(c.dataset.tokens),
      width: c.width,
      shown: c.getBoundingClientRect().width,
      wrapScrolls: wrap.scrollWidth > wrap.clientWidth,
      lensScrolls: lens.scrollWidth > lens.clientWidth,
      cellWidth: document.querySelector('#lens-grid td').getBoundingClientRect().width,
      lensColumns: document.querySelector('#lens-grid tr').cells.length - 1,
    };
  });
  assert.ok(r.tokens > 120, JSON.stringify(r));
  assert.ok(
    r.width >= 4 * r.tokens && r.shown >= r.width,
    `cells of at least 4 px, not scaled down: ${JSON.stringify(r)}`,
  );
  assert.equal(r.lensColumns, lensPositions + newTokens - 1, JSON.stringify(r));
  assert.ok(r.wrapScrolls && r.lensScrolls && r.cellWidth > 20, JSON.stringify(r));
  await page.close();
});

// Interventions on a phone-width screen: a head ablated by its button and by a click on the
// heatmap, a steering vector from two prompts, and the comparison with the same seed. A strong steer
// changes the next token's top 5 and the continuation; the attention view then runs with the list.
test('the demo ablates heads and steers, side by side with the original, at 390 px', async () => {
  const page = await site.browser.newPage({ viewport: { width: 390, height: 844 } });
  await page.goto(new URL('?backend=webgl', site.url).href);
  await waitForDemoModel(page);
  await page.fill('#prompt', 'The jury said that');
  await page.fill('#max-new-tokens', '12');
  await page.fill('#temperature', '0');
  await page.click('#head-buttons button:nth-child(2)');
  assert.equal(await page.getAttribute('#head-buttons button:nth-child(2)', 'aria-pressed'), 'true');
  await page.locator('#steer-scale').fill('8');
  assert.match(
    await page.locator('#interventions-summary').textContent(),
    /heads ablated: 0\.1; steering ×8\.0 after layer \d/,
  );
  await page.click('#generate');
  await generationDone(page);
  const [withText, withoutText, nextWith, nextWithout] = await Promise.all(
    ['compare-with', 'compare-without', 'next-with', 'next-without'].map((id) => page.locator(`#${id}`).textContent()),
  );
  assert.ok(withText.length > 0 && withoutText.length > 0, `${withText} | ${withoutText}`);
  assert.notEqual(withText, withoutText, 'the steer changed nothing');
  assert.match(nextWith, /^Next token: (".*" \d\.\d{3}(, |$)){5}/);
  assert.notEqual(nextWith, nextWithout);
  // The main output is the run with the interventions.
  assert.equal(await page.locator('#output').textContent(), `The jury said that${withText}`);
  // A click on the heatmap ablates the head it shows (head 0 of layer 0).
  await page.locator('#heatmap').click();
  assert.equal(await page.getAttribute('#head-buttons button:nth-child(1)', 'aria-pressed'), 'true');
  await page.click('#clear-ablations');
  assert.match(await page.locator('#interventions-summary').textContent(), /^Active: steering/);
  assert.ok(await page.evaluate(() => document.documentElement.scrollWidth <= 390), 'no horizontal scrolling');
  await page.screenshot({ path: join(artifactsDir, 'demo-interventions.png'), fullPage: true });
  await page.close();
});

// The format box: a JSON schema constrains the output, which then parses and has the required
// properties; a schema that is not JSON is refused on the page.
test('the format box constrains the output to a JSON schema', async () => {
  const page = await site.page('?backend=webgl');
  await waitForDemoModel(page);
  await page.fill('#prompt', 'A person:');
  await page.fill('#max-new-tokens', '80');
  await page.selectOption('#format-kind', 'jsonSchema');
  const schema = JSON.parse(await page.inputValue('#format'));
  assert.deepEqual(schema.required, ['name', 'age']);
  await page.click('#generate');
  await generationDone(page);
  const output = await page.locator('#output').textContent();
  const value = JSON.parse(output.slice('A person:'.length));
  assert.equal(typeof value.name, 'string');
  assert.ok(Number.isInteger(value.age), output);
  await page.fill('#format', '{"type": ');
  await page.click('#generate');
  await page.waitForFunction(() => !document.getElementById('error').hidden);
  assert.match(await page.locator('#error').textContent(), /^Error: Format: the schema is not JSON/);
  await page.close();
});

test('the demo loads a model with int8 weights, in less GPU memory than fp16, and generates', async () => {
  const page = await site.page('?backend=webgl');
  await waitForDemoModel(page);
  const megabytes = async () =>
    Number((await page.locator('#model-status').textContent()).match(/([\d.]+) MB of textures/)[1]);
  const fp16 = await megabytes();
  await page.selectOption('#weights', 'int8');
  await page.evaluate(() => {
    document.getElementById('model-status').textContent = '';
  });
  await page.click('#load');
  await waitForDemoModel(page);
  const int8 = await megabytes();
  assert.ok(int8 < 0.75 * fp16, `int8 ${int8} MB against fp16 ${fp16} MB`);
  await page.fill('#prompt', 'The jury said that');
  await page.fill('#max-new-tokens', '8');
  await page.click('#generate');
  await page.waitForFunction(() => /^8 tokens,/.test(document.getElementById('speed').textContent), null, {
    timeout: 60000,
  });
  const output = await page.locator('#output').textContent();
  assert.ok(output.startsWith('The jury said that') && output.length > 'The jury said that'.length, output);
  console.log(`[ measured ] demo: bundled model ${fp16} MB of textures with fp16 weights, ${int8} MB with int8`);
  await page.close();
});

test('generated text goes into the page as text, never as HTML', async () => {
  const page = await site.page('?backend=webgl');
  await waitForDemoModel(page);
  await page.fill('#prompt', '<img src=x onerror="window.pwned=1"><b>bold</b>');
  await page.fill('#max-new-tokens', '2');
  await page.click('#generate');
  await page.waitForFunction(() => document.getElementById('heatmap').dataset.drawn === 'true', null, {
    timeout: 60000,
  });
  assert.equal(await page.locator('#output img, #output b').count(), 0);
  assert.equal(await page.evaluate(() => window.pwned), undefined);
  await page.close();
});

test('the demo works from the keyboard on a phone-width screen', async () => {
  const page = await site.browser.newPage({ viewport: { width: 375, height: 800 } });
  await page.goto(site.url);
  await waitForDemoModel(page);
  assert.ok(
    await page.evaluate(() => document.documentElement.scrollWidth <= 375),
    'no horizontal scrolling at 375 px',
  );
  await page.fill('#max-new-tokens', '8');
  await page.focus('#generate');
  await page.keyboard.press('Enter');
  await generationDone(page);
  assert.match(await page.locator('#speed').textContent(), /8 tokens/);
  await page.screenshot({ path: join(artifactsDir, 'demo-phone.png'), fullPage: true });
  await page.close();
});

test('the embedding example imports the module and generates', async () => {
  const page = await site.page('examples/embed.html');
  await page.waitForFunction(() => document.getElementById('out').dataset.done, null, { timeout: 60000 });
  const text = await page.locator('#out').textContent();
  assert.equal(await page.locator('#out').getAttribute('data-done'), 'true', text);
  assert.ok(text.startsWith('Once upon a time') && text.length > 'Once upon a time'.length, text);
  await page.close();
});

async function loadError(page, url) {
  await page.selectOption('#model-source', 'url');
  await page.fill('#model-url', url);
  await page.click('#load');
  await page.waitForFunction(() => !document.getElementById('load-error').hidden, null, { timeout: 60000 });
  return page.locator('#load-error').textContent();
}

test('bad model sources show a clear error on the page', async () => {
  // Choosing "A URL…" uses the picker, which then plans the hub's GGUF files: from a local "hub"
  // that has none (each plan fails with a console warning), never from the internet.
  const page = await site.page(`?backend=webgl&hub=${encodeURIComponent(`${site.url}no-hub`)}`);
  await waitForDemoModel(page);
  assert.match(
    await loadError(page, 'http://127.0.0.1:9/gpt2/'),
    /127\.0\.0\.1:9\/gpt2\/config\.json: could not be fetched/,
  );
  assert.match(await loadError(page, `${site.url}models/none/`), /models\/none\/config\.json: HTTP 404/);
  assert.match(
    await loadError(page, `${site.url}test-models/truncated/`),
    /truncated\/model\.safetensors: .*\(truncated (file|download)\?\)/,
  );
  assert.match(await loadError(page, 'javascript:alert(1)'), /only http\(s\) model URLs are allowed/);
  await page.close();
});

test('a GGUF file picked on this device, or dropped on the page, loads and generates', async () => {
  const page = await site.page('?backend=webgl');
  await waitForDemoModel(page);
  await page.selectOption('#model-source', 'file');
  assert.equal(await page.locator('#model-file').isVisible(), true);
  await page.click('#load');
  await page.waitForFunction(() => !document.getElementById('load-error').hidden, null, { timeout: 10000 });
  assert.match(await page.locator('#load-error').textContent(), /choose a \.gguf file on this device first/);
  await page.setInputFiles('#model-file', join(root, 'tests/fixtures/gguf/wide-Q4_K_M.gguf'));
  await page.click('#load');
  await waitForDemoModel(page);
  assert.match(await page.locator('#model-status').textContent(), /^Loaded: 2 layers, 4 heads, 256 wide/);
  await page.fill('#max-new-tokens', '4');
  await page.click('#generate');
  await page.waitForFunction(() => /^4 tokens,/.test(document.getElementById('speed').textContent), null, {
    timeout: 60000,
  });
  // A file dropped on the page loads the same way.
  copyFileSync(join(root, 'tests/fixtures/gguf/narrow-Q4_0.gguf'), join(testModelsDir, 'dropped.gguf'));
  await page.evaluate(async () => {
    const bytes = await (await fetch('/test-models/dropped.gguf')).arrayBuffer();
    const dropped = new DataTransfer();
    dropped.items.add(new File([bytes], 'narrow-Q4_0.gguf'));
    document.getElementById('model-status').textContent = '';
    document.body.dispatchEvent(new DragEvent('drop', { dataTransfer: dropped, bubbles: true, cancelable: true }));
  });
  await waitForDemoModel(page);
  assert.match(await page.locator('#model-status').textContent(), /^Loaded: 2 layers, 4 heads, 64 wide/);
  await page.close();
});

// The demo runs the engine in a worker, which an init script patching the page cannot reach: the
// worker script is served with the same patch in front (a worker that has no WebGL2).
test('asked for WebGL2 where the browser has none, the page shows a clear error', async () => {
  // Refused as a browser refuses: getContext gives null and a webglcontextcreationerror says why.
  // (Left to choose, the page runs on the CPU there: no-webgl.test.mjs.)
  const noWebgl2 = `for (const C of [globalThis.HTMLCanvasElement, globalThis.OffscreenCanvas].filter(Boolean)) {
    const original = C.prototype.getContext;
    C.prototype.getContext = function getContext(type, ...rest) {
      if (type !== 'webgl2') return original.call(this, type, ...rest);
      this.dispatchEvent(Object.assign(new Event('webglcontextcreationerror'), { statusMessage: 'simulated:\\n  no GPU here' }));
      return null;
    };
  }\n`;
  const page = await site.scriptedPage(noWebgl2, '?backend=webgl', { viewport: { width: 1000, height: 700 } });
  await page.waitForFunction(() => !document.getElementById('load-error').hidden, null, { timeout: 60000 });
  assert.match(
    await page.locator('#load-error').textContent(),
    /WebGL2 is not available .*\. The browser said: "simulated: no GPU here"$/,
  );
  // At the top, next to the Load button: on the first screen, without scrolling.
  const box = await page.locator('#load-error').boundingBox();
  const button = await page.locator('#load').boundingBox();
  assert.ok(
    box.y + box.height <= 700 && box.y - (button.y + button.height) < 120,
    `error at ${JSON.stringify(box)}, Load at ${JSON.stringify(button)}`,
  );
  await page.screenshot({ path: join(artifactsDir, 'demo-load-error.png') });
  await page.close();
});

// The picker's GPU figure for a model is what the model takes once loaded (stats().gpuBytes, shown in
// the status as "N MB of textures"), in each weight format and with an fp16 K/V cache; the hub sizes
// are planned alike.
test("the model picker shows each model's GPU memory per weight format and K/V cache, as the loaded model takes it", async () => {
  const page = await site.page('?backend=webgl');
  await waitForDemoModel(page);
  const figures = {};
  // fp16 weights and an fp32 cache are what the page started with.
  const settings = { fp16: ['fp16', 'fp32'], fp32: ['fp32', 'fp32'], int8: ['int8', 'fp32'], int4: ['int4', 'fp32'] };
  settings['int4, fp16 K/V'] = ['int4', 'fp16'];
  for (const [name, [weights, kvCache]] of Object.entries(settings)) {
    const before = await page.locator('#model-source option').first().textContent();
    if (name !== 'fp16') {
      await page.selectOption('#weights', weights);
      await page.selectOption('#kv-cache', kvCache);
      await page.waitForFunction(
        (text) => document.querySelector('#model-source option').textContent !== text,
        before,
        { timeout: 30000 },
      );
    }
    assert.match(await page.locator('#model-source option').first().textContent(), /GPU memory/);
    const entries = (await page.locator('#model-source option').allTextContents()).filter((text) =>
      /^Bundled|fp32 safetensors/.test(text),
    );
    figures[name] = entries.map((text) => text.match(/, ([\d.]+ [MG]B) of GPU memory/)?.[1]);
    await page.click('#load');
    await page.waitForFunction(
      () =>
        /^Loaded/.test(document.getElementById('model-status').textContent) &&
        !document.getElementById('load').disabled,
      null,
      { timeout: 60000 },
    );
    const status = await page.locator('#model-status').textContent();
    assert.equal(
      status.match(/([\d.]+ MB) of textures/)[1],
      figures[name][0],
      `${name}: picker ${figures[name][0]}, loaded ${status}`,
    );
  }
  const mb = (text) => parseFloat(text) * (text.endsWith('GB') ? 1000 : 1);
  for (let i = 0; i < 5; i += 1) {
    assert.ok(
      mb(figures.fp32[i]) > mb(figures.fp16[i]) && mb(figures.fp16[i]) > mb(figures.int8[i]),
      JSON.stringify(figures),
    );
    assert.ok(mb(figures.int8[i]) > mb(figures.int4[i]), JSON.stringify(figures));
    assert.ok(mb(figures.int4[i]) > mb(figures['int4, fp16 K/V'][i]), JSON.stringify(figures));
    if (i > 0) assert.ok(mb(figures.fp16[i]) > mb(figures.fp16[i - 1]), 'larger models take more');
  }
  console.log(`[ measured ] planned GPU memory (bundled, 124M, 355M, 774M, 1.5B): ${JSON.stringify(figures)}`);
  await page.close();
});

test('the model picker offers the bundled model, the hub GGUF files and the hub folders, marks what is cached, and clears the cache', async () => {
  const page = await site.page('?backend=webgl');
  await waitForDemoModel(page);
  const options = async () => page.locator('#model-source option').allTextContents();
  await page.waitForFunction(() => /cached/.test(document.querySelector('#model-source option').textContent), null, {
    timeout: 10000,
  });
  const listed = await options();
  assert.equal(listed.length, 13, listed.join(' | '));
  assert.match(listed[0], /^Bundled demo model .*, 15\.4 MB download, [\d.]+ MB of GPU memory, cached$/);
  // A GGUF file's GPU memory is planned from its header, read once the picker is used.
  assert.equal(listed[1], 'GPT-2 124M, Q4_K_M GGUF from QuantFactory/gpt2-GGUF, 113 MB download');
  assert.equal(listed[2], 'GPT-2 124M, Q8_0 GGUF from QuantFactory/gpt2-GGUF, 137 MB download');
  assert.equal(listed[5], 'GPT-2 1.5B, Q4_0 GGUF from RichardErkhov/openai-community_-_gpt2-xl-gguf, 969 MB download');
  assert.match(
    listed[7],
    /^GPT-2 124M, fp32 safetensors from openai-community\/gpt2, 548 MB download, [\d.]+ MB of GPU memory$/,
  );
  assert.match(
    listed[10],
    /^GPT-2 1\.5B, fp32 safetensors from openai-community\/gpt2-xl, 6\.43 GB download, [\d.]+ GB of GPU memory \(more than a phone's tab survives\)$/,
  );
  assert.equal(listed[11], 'A URL…');
  assert.equal(listed[12], 'A GGUF file on this device…');
  assert.equal(await page.locator('#model-source').inputValue(), 'bundled');
  await page.screenshot({ path: join(artifactsDir, 'demo-picker.png') });
  await page.click('#clear-cache');
  await page.waitForFunction(() => !/cached/.test(document.querySelector('#model-source option').textContent), null, {
    timeout: 10000,
  });
  assert.deepEqual(await page.evaluate(async () => (await import('/gpt2.js')).GPT2.cachedModels()), []);
  await page.close();
});

// A stand-in for the hub on another port: each GGUF entry of the picker is answered with a small
// llama.cpp-made fixture, after the hub's redirect, with CORS and without Range (so the header is read
// from the start of a whole-file answer). `?hub=` points the demo at it. It closes when test `t` ends,
// passed or failed: a server left open keeps the test process alive.
async function standInHub(t) {
  const fixture = (name) => readFileSync(join(root, 'tests/fixtures/gguf', name));
  const files = {
    '/QuantFactory/gpt2-GGUF/resolve/main/gpt2.Q4_K_M.gguf': fixture('wide-Q4_K_M.gguf'),
    '/QuantFactory/gpt2-GGUF/resolve/main/gpt2.Q8_0.gguf': fixture('narrow-Q8_0.gguf'),
    '/mradermacher/gpt2-medium-GGUF/resolve/main/gpt2-medium.Q4_K_M.gguf': fixture('wide-Q4_K_S.gguf'),
    '/RichardErkhov/openai-community_-_gpt2-large-gguf/resolve/main/gpt2-large.Q4_K_M.gguf': fixture('tiny-Q8_0.gguf'),
    '/RichardErkhov/openai-community_-_gpt2-xl-gguf/resolve/main/gpt2-xl.Q4_0.gguf': fixture('narrow-Q4_0.gguf'),
    '/RichardErkhov/openai-community_-_gpt2-xl-gguf/resolve/main/gpt2-xl.Q4_K_M.gguf': fixture('narrow-Q4_1.gguf'),
  };
  const requests = [];
  const server = createServer((req, res) => {
    requests.push(req.url);
    res.setHeader('Access-Control-Allow-Origin', '*');
    if (req.url.startsWith('/cdn/')) {
      const file = files[req.url.slice(4)];
      return file ? res.writeHead(200, { 'Content-Length': file.length }).end(file) : res.writeHead(404).end();
    }
    if (!files[req.url]) return res.writeHead(404, { 'X-Error-Code': 'EntryNotFound' }).end('Entry not found');
    res.writeHead(302, { Location: `/cdn${req.url}` }).end();
  });
  await new Promise((ok) => server.listen(0, '127.0.0.1', ok));
  t.after(() => {
    server.closeAllConnections();
    return new Promise((ok) => server.close(ok));
  });
  return { requests, url: `http://127.0.0.1:${server.address().port}` };
}

const ggufPlanned = (page) =>
  page.waitForFunction(
    () =>
      [...document.querySelectorAll('#model-source option')].filter((o) => /GGUF.*GPU memory/.test(o.text)).length ===
      6,
    null,
    { timeout: 60000 },
  );

test('the picker plans the hub GGUF files once used, on a phone once loaded and suggests the largest model that fits, and loads a 4-bit one', async (t) => {
  const hub = await standInHub(t);
  const hubQuery = `?backend=webgl&hub=${encodeURIComponent(hub.url)}`;
  const desktop = await site.page(hubQuery);
  await waitForDemoModel(desktop);
  assert.deepEqual(hub.requests, [], 'no file of the hub is read before the picker is used');
  await desktop.focus('#model-source');
  await ggufPlanned(desktop);
  const desktopListed = await desktop.locator('#model-source option').allTextContents();
  assert.ok(!desktopListed.some((text) => /fits this phone/.test(text)), desktopListed.join('\n'));
  await desktop.close();

  const page = await site.browser.newPage({
    viewport: { width: 390, height: 844 },
    userAgent:
      'Mozilla/5.0 (iPhone; CPU iPhone OS 18_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.0 Mobile/15E148 Safari/604.1',
  });
  page.on('pageerror', (error) => console.log(`[page error] ${error.message}`));
  await page.goto(site.url + hubQuery);
  // On a phone the GGUF files are planned once the first model has loaded, for the suggestion.
  await waitForDemoModel(page);
  await ggufPlanned(page);
  const listed = await page.locator('#model-source option').allTextContents();
  // Every stand-in fits a phone: the largest model is 1.5B, and of its files the smaller download.
  const suggested = listed.filter((text) => text.endsWith(', the largest that fits this phone'));
  assert.deepEqual(
    suggested.map((text) => text.split(',').slice(0, 2).join(',')),
    ['GPT-2 1.5B, Q4_0 GGUF from RichardErkhov/openai-community_-_gpt2-xl-gguf'],
    listed.join('\n'),
  );
  assert.match(listed[10], /fp32 safetensors from openai-community\/gpt2-xl, .*\(more than a phone's tab survives\)$/);
  const planned = suggested[0].match(/, ([\d.]+ MB) of GPU memory/)[1];
  await page.selectOption('#model-source', 'RichardErkhov/openai-community_-_gpt2-xl-gguf/gpt2-xl.Q4_0.gguf');
  await page.click('#load');
  await waitForDemoModel(page);
  const status = await page.locator('#model-status').textContent();
  assert.equal(status.match(/([\d.]+ MB) of textures/)[1], planned, status);
  assert.ok(
    hub.requests.includes('/cdn/RichardErkhov/openai-community_-_gpt2-xl-gguf/resolve/main/gpt2-xl.Q4_0.gguf'),
    hub.requests.join('\n'),
  );
  await page.fill('#max-new-tokens', '8');
  await page.click('#generate');
  await generationDone(page);
  assert.match(await page.locator('#speed').textContent(), /^8 tokens,/);
  assert.ok(await page.evaluate(() => document.documentElement.scrollWidth <= 390), 'no horizontal scrolling');
  await page.screenshot({ path: join(artifactsDir, 'demo-phone-gguf.png'), fullPage: true });
  await page.close();
});
