// Tries tests/bench/page/transformersjs.html here, without a GPU: serves build/gpubench as the
// gpubrowser kit does (FILE.gz as FILE, COOP/COEP, the page's /result POSTs printed) and opens the
// page in headless Chromium (CHROMIUM, default /usr/bin/chromium). After stage_transformersjs.sh and
// check_onnx_gpt2.mjs (which writes build/onnx-check/gpt2-tiny); gpt2-tiny has 64 positions:
//   mkdir -p build/gpubench/bench/tiny && cp -r build/onnx-check/gpt2-tiny/{config.json,generation_config.json,onnx} build/gpubench/bench/tiny/
//   node tests/bench/gpu/transformersjs_local.mjs 'model=tiny&device=wasm&rounds=1&prompts=32,40'
import { createServer } from 'node:http';
import { existsSync, readFileSync } from 'node:fs';
import { extname, join } from 'node:path';
import { chromium } from 'playwright-core';
const root = new URL('../../../build/gpubench', import.meta.url).pathname;
const TYPES = {
  '.html': 'text/html',
  '.js': 'text/javascript',
  '.mjs': 'text/javascript',
  '.wasm': 'application/wasm',
  '.json': 'application/json',
};
let done;
const finished = new Promise((r) => (done = r));
const server = createServer((req, res) => {
  const url = new URL(req.url, 'http://x');
  if (req.method === 'POST') {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      const stage = url.searchParams.get('stage');
      console.log('RESULT', stage, body.slice(0, 600));
      res.end('ok');
      if (stage === 'done') done();
    });
    return;
  }
  const file = join(root, decodeURIComponent(url.pathname));
  const headers = {
    'Cross-Origin-Opener-Policy': 'same-origin',
    'Cross-Origin-Embedder-Policy': 'require-corp',
    'Cache-Control': 'no-store',
    'Content-Type': TYPES[extname(file)] ?? 'application/octet-stream',
  };
  if (existsSync(file) && !file.endsWith('/')) {
    res.writeHead(200, headers);
    res.end(readFileSync(file));
  } else if (existsSync(`${file}.gz`)) {
    res.writeHead(200, { ...headers, 'Content-Encoding': 'gzip' });
    res.end(readFileSync(`${file}.gz`));
  } else {
    console.log('404', url.pathname);
    res.writeHead(404);
    res.end();
  }
});
server.listen(8791, '127.0.0.1');
const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
  args: ['--no-sandbox'],
});
const page = await browser.newPage();
page.on('console', (m) => console.log('CONSOLE', m.type(), m.text().slice(0, 300)));
page.on('pageerror', (e) => console.log('PAGEERROR', e.message));
await page.goto(`http://127.0.0.1:8791/bench/transformersjs.html?post=1&${process.argv[2] ?? ''}`);
await Promise.race([finished, new Promise((r) => setTimeout(r, 240000))]);
await browser.close();
server.close();
