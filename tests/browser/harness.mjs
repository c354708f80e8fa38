// Shared by the browser tests: serves build/site on a free localhost port and drives Debian's
// Chromium (headless, WebGL2 through SwiftShader) with playwright-core. No network beyond localhost.
import { chromium } from 'playwright-core';
import { mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { serve } from '../../web/dev/serve.mjs';

export const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const siteDir = process.env.GPT2_SITE_DIR ?? join(root, 'build', 'site');
export const artifactsDir = join(root, 'build', 'test-artifacts');
mkdirSync(artifactsDir, { recursive: true });

export async function startSite() {
  const server = await serve(siteDir, 0);
  const url = `http://127.0.0.1:${server.address().port}/`;
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--enable-unsafe-swiftshader', '--use-angle=swiftshader', '--disable-background-networking',
      '--disable-component-update', '--disable-sync', '--no-first-run', '--disable-gpu-sandbox', '--js-flags=--expose-gc'],
  });
  return session(server, url, browser);
}

// A browser on the served site, Playwright's or puppeteer's (the same calls): `page(path)` opens a
// page of the site, `close()` ends the browser and the server. `extra` joins the result.
export function session(server, url, browser, extra = {}) {
  return {
    url,
    browser,
    async page(path = 'examples/blank.html') {
      const page = await browser.newPage();
      page.on('pageerror', (error) => console.log(`[page error] ${error.message}`));
      await page.goto(url + path);
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
