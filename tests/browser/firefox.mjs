// Firefox for the browser tests: Debian's firefox-esr, headless, driven over WebDriver BiDi by
// puppeteer-core (Playwright drives only its own patched Firefox builds; BiDi works with a stock
// one). Headless Firefox refuses WebGL under a default profile: `webgl.force-enabled` and
// MOZ_WEBGL_FORCE_EGL give it a context on Mesa's llvmpipe (a headful run under Xvfb needs neither).
// Firefox writes its WebGL warnings to its own output, which is collected as `log()`.
import puppeteer from 'puppeteer-core';
import { existsSync } from 'node:fs';
import { serveSite, session } from './harness.mjs';

export const firefoxPath = process.env.FIREFOX ?? '/usr/bin/firefox-esr';
export const hasFirefox = existsSync(firefoxPath);

// `webgl: false` starts Firefox with the default profile's WebGL settings (headless: refused);
// 'disabled' with WebGL turned off (the webgl.disabled pref), as a user or an administrator does.
export async function startFirefox({ webgl = true } = {}) {
  const server = await serveSite();
  const url = `http://127.0.0.1:${server.address().port}/`;
  const browser = await puppeteer.launch({
    browser: 'firefox',
    executablePath: firefoxPath,
    headless: true,
    extraPrefsFirefox: webgl === 'disabled' ? { 'webgl.disabled': true } : webgl ? { 'webgl.force-enabled': true } : {},
    env: webgl === true ? { ...process.env, MOZ_WEBGL_FORCE_EGL: '1' } : { ...process.env, MOZ_WEBGL_FORCE_EGL: '' },
  });
  const output = [];
  for (const stream of [browser.process()?.stdout, browser.process()?.stderr])
    stream?.on('data', (chunk) => output.push(String(chunk)));
  return session(server, url, browser, {
    // Firefox's output since `from` (an index into it: mark()).
    log: (from = 0) => output.slice(from).join(''),
    mark: () => output.length,
  });
}
