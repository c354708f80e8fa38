// The package in the apps people build: tests/bundlers/app built by Vite, webpack, esbuild, Rollup and
// Next.js (as a client component) from the packed tarball (npm pack of build/site, installed like any
// dependency), each served as a static site and run in Chromium, Firefox and WebKit. Each must
// generate the Hugging Face fixture's greedy tokens, with the engine in its Worker wherever the browser gives a Worker WebGL2 (WebKit
// does not: there the warning must say so). Each bundle's files and sizes are printed.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { join, relative } from 'node:path';
import { serve } from '../../web/dev/serve.mjs';
import { BUNDLERS, FILES_QUERY } from '../bundlers/build.mjs';
import { firefoxPath, hasFirefox, startFirefox } from './firefox.mjs';
import { artifactsDir, root, siteDir, startSite, testSiteDir } from './harness.mjs';
import { hasWebKit, startWebKit } from './webkit.mjs';

const reference = JSON.parse(readFileSync(join(root, 'tests/fixtures/gpt2-tiny/reference.json'), 'utf8'));
const prompt = Object.values(reference.prompts)[0];
const work = join(artifactsDir, 'bundlers');
const appDir = join(work, 'app');
const apps = {}; // bundler -> { server, url }

function filesOf(dir) {
  return readdirSync(dir, { recursive: true })
    .map((f) => join(dir, f))
    .filter((f) => statSync(f).isFile());
}

// Builds every app from the tarball and serves each beside the test models (/models/gpt2-tiny/).
before(async () => {
  rmSync(work, { recursive: true, force: true });
  mkdirSync(work, { recursive: true });
  cpSync(join(root, 'tests/bundlers/app'), appDir, { recursive: true });
  execFileSync('npm', ['pack', siteDir, '--pack-destination', work, '--silent'], { encoding: 'utf8' });
  const tarball = readdirSync(work).find((f) => f.endsWith('.tgz'));
  writeFileSync(
    join(appDir, 'package.json'),
    JSON.stringify({ name: 'app', version: '1.0.0', private: true, type: 'module' }),
  );
  execFileSync('npm', ['install', '--offline', '--no-audit', '--no-fund', '--silent', join(work, tarball)], {
    cwd: appDir,
  });
  for (const [name, bundle] of Object.entries(BUNDLERS)) {
    const outDir = join(work, 'dist', name);
    await bundle(appDir, outDir);
    const sizes = filesOf(outDir)
      .filter((f) => /\.(js|wasm)$/.test(f))
      .map((f) => `${relative(outDir, f)} ${(statSync(f).size / 1000).toFixed(1)} kB`);
    console.log(`[${name}] ${sizes.join(', ')}`);
    const server = await serve([outDir, testSiteDir], 0, '127.0.0.1');
    apps[name] = { server, url: `http://127.0.0.1:${server.address().port}/` };
  }
});
after(async () => {
  for (const { server } of Object.values(apps)) await new Promise((ok) => server.close(ok));
});

// The app's page for `bundler` at `url` with the fixture's model and prompt.
function appUrl(bundler, url = apps[bundler].url, model = '/models/gpt2-tiny/') {
  const query = `model=${encodeURIComponent(model)}&prompt=${encodeURIComponent(JSON.stringify(prompt.ids))}`;
  return `${url}?${[query, FILES_QUERY[bundler]].filter(Boolean).join('&')}`;
}

// Polls the page for the app's outcome (the three drivers wait for functions differently).
async function resultOf(page) {
  for (const end = Date.now() + 120000; Date.now() < end; await new Promise((ok) => setTimeout(ok, 200))) {
    const result = await page.evaluate(() => window.result ?? null);
    if (result) return result;
  }
  throw new Error('the app gave no result within 120 s');
}

async function runApp(browser, bundler, url = appUrl(bundler)) {
  const page = await browser.page(url);
  const result = await resultOf(page);
  await page.close();
  assert.equal(result.error, undefined, `${bundler}: ${result.error}`);
  assert.deepEqual(result.ids, prompt.greedy.slice(0, 3), `${bundler}: the Hugging Face fixture's greedy tokens`);
  return result;
}

for (const [browserName, start, available, why] of [
  ['Chromium', startSite, true, ''],
  ['Firefox', startFirefox, hasFirefox, `${firefoxPath} not found`],
  ['WebKit', startWebKit, hasWebKit, 'WebKitGTK MiniBrowser, its driver or xvfb-run not found'],
]) {
  test(`${browserName}: every bundler's app generates, with the engine in its Worker where the browser allows`, async () => {
    assert.ok(available, `${why}: tests/run-all.sh installs it`);
    const browser = await start();
    try {
      for (const bundler of Object.keys(BUNDLERS)) {
        const { mode, warnings } = await runApp(browser, bundler);
        if (browserName === 'WebKit') {
          assert.equal(mode.worker, false, `${bundler}: WebKit gives a Worker no WebGL2`);
          assert.match(mode.reason, /no WebGL2 in workers/, `${bundler}: the reason says why`);
          assert.match(warnings.join(), /not in a Worker/, `${bundler}: a warning tells the page`);
        } else {
          assert.equal(mode.worker, true, `${bundler}: ${mode.reason}`);
          assert.deepEqual(warnings, [], `${bundler}: no fallback warning`);
        }
      }
    } finally {
      await browser.close();
    }
  });
}

test("Chromium: Vite's dev server runs the app with the engine in its Worker, and the production build does so under a strict CSP", async () => {
  const { createServer } = await import('vite');
  const dev = await createServer({
    root: appDir,
    configFile: false,
    logLevel: 'warn',
    server: { host: '127.0.0.1', port: 0 },
  });
  await dev.listen();
  const models = await serve(testSiteDir, 0, '127.0.0.1', { cors: true });
  const strict = await serve([join(work, 'dist', 'vite'), testSiteDir], 0, '127.0.0.1', {
    headers: {
      'Content-Security-Policy': "default-src 'self'; script-src 'self' 'wasm-unsafe-eval'; worker-src 'self'",
    },
  });
  const browser = await startSite();
  try {
    const model = `http://127.0.0.1:${models.address().port}/models/gpt2-tiny/`;
    const served = await runApp(browser, 'vite', appUrl('vite', dev.resolvedUrls.local[0], model));
    assert.equal(served.mode.worker, true, `dev server: ${served.mode.reason}`);
    const underCsp = await runApp(browser, 'vite', appUrl('vite', `http://127.0.0.1:${strict.address().port}/`));
    assert.equal(underCsp.mode.worker, true, `production build under CSP: ${underCsp.mode.reason}`);
  } finally {
    await browser.close();
    await dev.close();
    for (const server of [models, strict]) await new Promise((ok) => server.close(ok));
  }
});

test("Chromium, cross-origin isolated: every bundler's app runs the CPU backend's threads build", async () => {
  const isolation = { 'Cross-Origin-Opener-Policy': 'same-origin', 'Cross-Origin-Embedder-Policy': 'require-corp' };
  const servers = await Promise.all(
    Object.keys(BUNDLERS).map((name) =>
      serve([join(work, 'dist', name), testSiteDir], 0, '127.0.0.1', { headers: isolation }),
    ),
  );
  const browser = await startSite();
  try {
    for (const [i, bundler] of Object.keys(BUNDLERS).entries()) {
      const url = `${appUrl(bundler, `http://127.0.0.1:${servers[i].address().port}/`)}&backend=cpu`;
      const { renderer, mode } = await runApp(browser, bundler, url);
      assert.equal(mode.worker, true, `${bundler}: ${mode.reason}`);
      // The browser's navigator.hardwareConcurrency is this machine's logical CPUs; one thread builds no pool.
      const threads = Math.min(16, cpus().length);
      assert.equal(renderer, `CPU (WebAssembly SIMD, ${threads} ${threads > 1 ? 'threads' : 'thread'})`, bundler);
    }
  } finally {
    await browser.close();
    for (const server of servers) await new Promise((ok) => server.close(ok));
  }
});
