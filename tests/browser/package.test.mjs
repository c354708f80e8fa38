// The installable package: `npm pack ./build/site` gives a tarball with the module, its worker, the
// wasm, the types, a README and the LICENSE, and nothing of the demo; installed into an empty folder, it is imported by a
// page through an import map, loads a model and generates, and TypeScript
// resolves its types by the package name. No network: the tarball has no dependencies.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { serve } from '../../web/dev/serve.mjs';
import { root, siteDir, startSite, tinyModelDir } from './harness.mjs';

const reference = JSON.parse(readFileSync(join(root, 'tests/fixtures/gpt2-tiny/reference.json'), 'utf8'));
const p1 = Object.values(reference.prompts)[0];
let site;
let app;
let dir;

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'gpt2-tarball-'));
  execFileSync('npm', ['pack', siteDir, '--pack-destination', dir, '--silent'], { encoding: 'utf8' });
  const tarball = readdirSync(dir).find((f) => f.endsWith('.tgz'));
  writeFileSync(
    join(dir, 'package.json'),
    JSON.stringify({ name: 'app', version: '1.0.0', private: true, type: 'module' }),
  );
  execFileSync('npm', ['install', '--offline', '--no-audit', '--no-fund', '--silent', `./${tarball}`], { cwd: dir });
  writeFileSync(
    join(dir, 'index.html'),
    `<!doctype html><meta charset="utf-8">
<script type="importmap">{"imports": {"gpt2-webgl": "/node_modules/gpt2-webgl/gpt2.js"}}</script><p id="out"></p>`,
  );
  cpSync(tinyModelDir, join(dir, 'model'), { recursive: true });
  site = await startSite();
  app = await serve(dir, 0, '127.0.0.1', { cors: true });
});
after(async () => {
  await site?.close();
  await new Promise((ok) => app?.close(ok));
});

test('npm pack holds the module, its worker, the wasm and the types, and no demo or model', () => {
  const listing = execFileSync(
    'tar',
    [
      'tzf',
      join(
        dir,
        readdirSync(dir).find((f) => f.endsWith('.tgz')),
      ),
    ],
    { encoding: 'utf8' },
  )
    .split('\n')
    .filter(Boolean)
    .map((f) => f.replace(/^package\//, ''))
    .sort();
  for (const f of [
    'gpt2.js',
    'gpt2-worker.js',
    'gpt2-engine.js',
    'gpt2-options.js',
    'gpt2-wasm.js',
    'gpt2-wasm.wasm',
    'gpt2.d.ts',
    'package.json',
    'README.md',
    'LICENSE',
  ]) {
    assert.ok(listing.includes(f), `${f} is in the package: ${listing}`);
  }
  assert.ok(!listing.some((f) => /index\.html|demo|models\/|examples\//.test(f)), `no demo files: ${listing}`);
  const installed = join(dir, 'node_modules/gpt2-webgl');
  assert.equal(readFileSync(join(installed, 'LICENSE'), 'utf8'), readFileSync(join(root, 'LICENSE'), 'utf8'));
  assert.match(readFileSync(join(installed, 'README.md'), 'utf8'), /import \{ GPT2 \} from 'gpt2-webgl'/);
});

test('the manifest says what the package is, exports its worker and wasm, and publishes without a warning', () => {
  const published = JSON.parse(readFileSync(join(dir, 'node_modules/gpt2-webgl/package.json'), 'utf8'));
  assert.equal(published.license, 'MIT');
  assert.ok(published.keywords.includes('gpt2') && published.keywords.includes('webgl2'), published.keywords);
  assert.equal(published.exports['./gpt2-worker.js'], './gpt2-worker.js');
  assert.equal(published.exports['./gpt2-wasm.wasm'], './gpt2-wasm.wasm');
  assert.equal(published.exports['./gpt2-wasm-nosimd.wasm'], './gpt2-wasm-nosimd.wasm');
  // Conditions match in order: types first, Node's entry before every other runtime's.
  assert.deepEqual(Object.keys(published.exports['.']), ['types', 'node', 'default']);
  assert.equal(published.exports['.'].node, './gpt2-node.js');
  // A registry on a closed localhost port: a dry run must not need one. Asked once (npm retries a
  // refused registry for a minute by default).
  const run = spawnSync(
    'npm',
    ['publish', '--dry-run', '--fetch-retries=0', '--registry', 'http://127.0.0.1:9/', siteDir],
    {
      encoding: 'utf8',
    },
  );
  assert.equal(run.status, 0, run.stderr);
  const warnings = run.stderr.split('\n').filter((line) => /warn/i.test(line) && !/logged in/.test(line));
  assert.deepEqual(warnings, [], 'npm publish --dry-run warns of nothing but the missing login');
});

test("the README's npm commands work as written: pack the built site, install the tarball", () => {
  const readme = readFileSync(join(root, 'README.md'), 'utf8');
  const commands = [...readme.matchAll(/^ {4}(npm (?:pack|install) \S+)/gm)].map((m) => m[1]);
  assert.deepEqual(
    commands.map((c) => c.split(' ')[1]),
    ['pack', 'install'],
    commands.join(' | '),
  );
  const app = mkdtempSync(join(tmpdir(), 'gpt2-readme-'));
  writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'readme-app', version: '1.0.0', private: true }));
  // Settings through the environment, so the commands stay as written: the tarball goes to the app's
  // folder, and nothing asks the registry.
  const env = {
    ...process.env,
    npm_config_pack_destination: app,
    npm_config_offline: 'true',
    npm_config_audit: 'false',
    npm_config_fund: 'false',
  };
  const sh = (command, cwd) =>
    execFileSync('sh', ['-c', command], { cwd, env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  sh(commands[0], root);
  sh(commands[1], app);
  const installed = JSON.parse(readFileSync(join(app, 'node_modules/gpt2-webgl/package.json'), 'utf8'));
  assert.equal(installed.name, 'gpt2-webgl');
});

test('the manifest names the GitHub repository, its issues and the demo on GitHub Pages when the build knows them', () => {
  const out = join(dir, 'manifest.json');
  const write = (repository) =>
    execFileSync('cmake', [
      `-DSOURCE=${join(root, 'web/module/package.json')}`,
      `-DOUT=${out}`,
      `-DREPOSITORY=${repository}`,
      '-P',
      join(root, 'cmake/package_manifest.cmake'),
    ]);
  write('Some-Owner/gpt2-webgl');
  const named = JSON.parse(readFileSync(out, 'utf8'));
  assert.deepEqual(named.repository, { type: 'git', url: 'git+https://github.com/Some-Owner/gpt2-webgl.git' });
  assert.equal(named.homepage, 'https://some-owner.github.io/gpt2-webgl/');
  assert.equal(named.bugs, 'https://github.com/Some-Owner/gpt2-webgl/issues');
  write('');
  assert.equal(
    readFileSync(out, 'utf8'),
    readFileSync(join(root, 'web/module/package.json'), 'utf8'),
    'no guessed owner',
  );
});

test("the package is gpt2-webgl, a name of its own: the repository's manifest is the private dev workspace", () => {
  const published = JSON.parse(readFileSync(join(dir, 'node_modules/gpt2-webgl/package.json'), 'utf8'));
  const workspace = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
  assert.equal(published.name, 'gpt2-webgl');
  assert.equal(published.private, undefined, 'the package can be published');
  assert.notEqual(workspace.name, published.name, 'two manifests, two names');
  assert.equal(workspace.private, true, 'the workspace is never published');
});

test('the installed package is imported by its name in a page and generates', async () => {
  const page = await site.browser.newPage();
  await page.goto(`http://127.0.0.1:${app.address().port}/`);
  const ids = await page.evaluate(async (prompt) => {
    const { GPT2 } = await import('gpt2-webgl');
    const m = await GPT2.load('/model/', { backend: 'webgl', weights: 'fp32' });
    const out = [];
    for await (const t of m.generate(prompt, { maxNewTokens: 3, stopAtEndOfText: false })) out.push(t.id);
    await m.dispose();
    return out;
  }, p1.ids);
  assert.deepEqual(ids, p1.greedy.slice(0, 3), 'the greedy tokens of the Hugging Face fixture');
  await page.close();
});

test('TypeScript finds the types by the package name', () => {
  writeFileSync(
    join(dir, 'use.ts'),
    `import { GPT2, type GenerateOptions } from 'gpt2-webgl';
const options: GenerateOptions = { maxNewTokens: 4 };
export const load = (): Promise<GPT2> => GPT2.load('openai-community/gpt2', { backend: 'webgl' });
export { options };
`,
  );
  writeFileSync(
    join(dir, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: {
        strict: true,
        noEmit: true,
        module: 'ES2022',
        target: 'ES2022',
        moduleResolution: 'bundler',
        lib: ['ES2022', 'DOM'],
      },
      files: ['use.ts'],
    }),
  );
  execFileSync(join(root, 'node_modules/.bin/tsc'), ['-p', join(dir, 'tsconfig.json')], { encoding: 'utf8' });
});
