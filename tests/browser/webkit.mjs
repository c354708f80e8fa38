// WebKit (Safari's engine) for the browser tests: Debian's WebKitGTK MiniBrowser, driven by
// WebKitWebDriver over plain W3C WebDriver HTTP (Playwright's own WebKit build cannot be installed
// here). MiniBrowser has no headless mode, so the driver runs under Xvfb; WebGL2 then runs on Mesa's
// software rasterizer, and WebKit masks its renderer as "Apple GPU", as Safari does.
// `page(path)` navigates the session's one window and returns the calls the tests use from
// Playwright's pages: evaluate, waitForFunction, screenshot.
import { spawn } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { serveSite } from './harness.mjs';

export const webkitDriverPath = process.env.WEBKIT_DRIVER ?? '/usr/bin/WebKitWebDriver';
export const miniBrowserPath = process.env.MINIBROWSER ?? '/usr/lib/x86_64-linux-gnu/webkit2gtk-4.1/MiniBrowser';
export const hasWebKit = existsSync(webkitDriverPath) && existsSync(miniBrowserPath) && existsSync('/usr/bin/xvfb-run');

function freePort() {
  return new Promise((ok, fail) => {
    const probe = createServer()
      .listen(0, '127.0.0.1', () => {
        const { port } = probe.address();
        probe.close(() => ok(port));
      })
      .on('error', fail);
  });
}

const sleep = (ms) => new Promise((ok) => setTimeout(ok, ms));

// One WebDriver command; a W3C error answer throws with the driver's message.
async function command(base, method, path, body) {
  const response = await fetch(base + path, {
    method,
    headers: body ? { 'Content-Type': 'application/json' } : {},
    body: body ? JSON.stringify(body) : undefined,
  });
  const { value } = await response.json();
  if (!response.ok || value?.error) throw new Error(`WebDriver ${method} ${path}: ${value?.error}: ${value?.message}`);
  return value;
}

// `fn` runs in the page as an async function of `arg`; its result comes back as JSON. A rejection
// comes back as an error whose message is the page's.
function asyncScript(fn) {
  return `const done = arguments[arguments.length - 1];
    Promise.resolve().then(() => (${fn})(arguments[0])).then(
      (value) => done({ value: value === undefined ? null : value }),
      (error) => done({ error: String(error && error.stack ? error.message + '\\n' + error.stack : error) }));`;
}

export async function startWebKit({ width = 1000, height = 1400 } = {}) {
  const server = await serveSite();
  const url = `http://127.0.0.1:${server.address().port}/`;
  const port = await freePort();
  const driver = spawn(
    'xvfb-run',
    ['-a', '-s', `-screen 0 ${width + 100}x${height + 200}x24`, webkitDriverPath, `--port=${port}`],
    { stdio: ['ignore', 'pipe', 'pipe'], detached: true },
  );
  const output = [];
  for (const stream of [driver.stdout, driver.stderr]) stream.on('data', (chunk) => output.push(String(chunk)));
  const base = `http://127.0.0.1:${port}`;
  let sessionId = null;
  const stop = async () => {
    if (sessionId) await command(base, 'DELETE', `/session/${sessionId}`).catch(() => {});
    // xvfb-run's children (the driver, Xvfb) leave with their process group.
    try {
      process.kill(-driver.pid, 'SIGTERM');
    } catch {
      driver.kill('SIGTERM');
    }
    await new Promise((ok) => server.close(ok));
  };
  try {
    for (let tries = 0; ; tries += 1) {
      const ready = await command(base, 'GET', '/status').then(
        (v) => v.ready,
        () => false,
      );
      if (ready) break;
      if (tries === 100) throw new Error(`WebKitWebDriver did not start: ${output.join('')}`);
      await sleep(100);
    }
    const session = await command(base, 'POST', '/session', {
      capabilities: {
        alwaysMatch: { 'webkitgtk:browserOptions': { binary: miniBrowserPath, args: ['--automation'] } },
      },
    });
    sessionId = session.sessionId;
  } catch (error) {
    await stop();
    throw error;
  }
  const run = (method, path, body) => command(base, method, `/session/${sessionId}${path}`, body);
  await run('POST', '/timeouts', { script: 600000, pageLoad: 60000 });
  await run('POST', '/window/rect', { width, height }).catch(() => {});

  const page = {
    async evaluate(fn, arg) {
      const result = await run('POST', '/execute/async', { script: asyncScript(fn), args: [arg ?? null] });
      if (result?.error !== undefined) throw new Error(`in WebKit: ${result.error}`);
      return result?.value;
    },
    async waitForFunction(fn, { timeout = 60000 } = {}) {
      const end = Date.now() + timeout;
      while (!(await page.evaluate(fn))) {
        if (Date.now() > end) throw new Error(`waitForFunction timed out after ${timeout} ms: ${fn}`);
        await sleep(200);
      }
    },
    async screenshot({ path }) {
      writeFileSync(path, Buffer.from(await run('GET', '/screenshot'), 'base64'));
    },
    async close() {},
  };
  return {
    url,
    // Opens `path` of the site (or an absolute URL); the page records its uncaught errors and
    // unhandled rejections from then on, which `errors()` returns.
    async page(path = 'examples/blank.html') {
      await run('POST', '/url', { url: new URL(path, url).href });
      await page.evaluate(() => {
        window.uncaught = [];
        window.addEventListener('error', (e) => window.uncaught.push(`error: ${e.message}`));
        window.addEventListener('unhandledrejection', (e) =>
          window.uncaught.push(`unhandled rejection: ${e.reason?.message ?? e.reason}`),
        );
      });
      return page;
    },
    errors: () => page.evaluate(() => window.uncaught ?? ['the page lost its error log (navigated?)']),
    log: () => output.join(''),
    close: stop,
  };
}
