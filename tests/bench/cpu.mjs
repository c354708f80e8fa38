// node tests/bench/cpu.mjs --models A.gguf[,B.gguf] [--engines gpt2,wllama] [--threads 1,2] [--prompts 32,256]
//                          [--tokens 16] [--rounds 3] [--out FILE.jsonl]
// The CPU backend against wllama (llama.cpp's CPU path in wasm) on the same GGUF files, in headless
// Chromium without WebGL (what Chrome 144 and later give a machine without a usable GPU), one page per
// engine, file and thread count, cross-origin isolated so that wllama may run threads. Prompts are
// the same text for both, of exactly P GPT-2 tokens. Needs wllama in build/wllama-npm
// (`npm install --ignore-scripts @wllama/wllama@3.8.1` there: a throwaway folder, not the project's
// package.json). One JSON line per row, printed and appended to --out.
import { appendFileSync, cpSync, existsSync, rmSync, symlinkSync } from 'node:fs';
import { cpus } from 'node:os';
import { join } from 'node:path';
import { root, startSite, testSiteDir } from '../browser/harness.mjs';
import { serveModel } from './bench_args.mjs';
import { promptTexts } from './prompt_texts.mjs';

const args = process.argv.slice(2);
const flag = (name, fallback) => (args.includes(name) ? args[args.indexOf(name) + 1] : fallback);
const list = (name, fallback) => flag(name, fallback).split(',');
const models = list('--models', '');
const wllama = join(root, 'build/wllama-npm/node_modules/@wllama/wllama/esm');
if (!models[0] || !models.every(existsSync) || !existsSync(wllama)) {
  console.error(`usage: see the top of tests/bench/cpu.mjs (models: ${models}; wllama in ${wllama})`);
  process.exit(1);
}

const prompts = promptTexts(list('--prompts', '32,256').map(Number));

const wllamaLink = join(testSiteDir, 'wllama');
rmSync(wllamaLink, { force: true, recursive: true });
symlinkSync(wllama, wllamaLink, 'dir');
const site = await startSite({
  webgl: false,
  serving: { headers: { 'Cross-Origin-Opener-Policy': 'same-origin', 'Cross-Origin-Embedder-Policy': 'require-corp' } },
});
try {
  for (const model of models) {
    const served = serveModel(model, 'bench');
    cpSync(join(root, 'tests/bench/page'), served.dir, { recursive: true });
    for (const threads of list('--threads', '1,2'))
      for (const engine of list('--engines', 'gpt2,wllama')) {
        const query = new URLSearchParams({
          engine,
          model: served.source,
          prompts: JSON.stringify(prompts),
          tokens: flag('--tokens', '16'),
          rounds: flag('--rounds', '3'),
          threads,
          wllama: '/wllama/index.js',
        });
        const page = await site.page(`bench/cpu.html?${query}`);
        const rows = await page.evaluate(() => window.benchDone);
        await page.close();
        for (const row of rows) {
          const line = JSON.stringify({ model: model.split('/').pop(), cores: cpus().length, ...row });
          console.log(line);
          if (flag('--out')) appendFileSync(flag('--out'), `${line}\n`);
        }
      }
    served.remove();
  }
} finally {
  await site.close();
  rmSync(wllamaLink, { force: true, recursive: true });
}
