// The C++ sources follow .clang-format: `clang-format --dry-run --Werror` finds nothing to change in
// any tracked .cpp or .h file, except generated ones (first line "// GENERATED ...", rewritten by
// their generator).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { root } from '../browser/harness.mjs';

test('the C++ sources are formatted as .clang-format says', () => {
  const files = execFileSync('git', ['ls-files', '*.cpp', '*.h'], { cwd: root, encoding: 'utf8' })
    .split('\n')
    .filter(Boolean)
    .filter((file) => !readFileSync(join(root, file), 'utf8').startsWith('// GENERATED'));
  assert.ok(files.length > 100, `${files.length} C++ files tracked`);
  const run = spawnSync('clang-format', ['--dry-run', '--Werror', ...files], { cwd: root, encoding: 'utf8' });
  assert.ok(!run.error, `clang-format did not run (${run.error?.message}); .ci/install-deps.sh installs it`);
  const unformatted = [...new Set([...run.stderr.matchAll(/^(\S+?):\d+:\d+: error/gm)].map((m) => m[1]))];
  assert.equal(
    run.status,
    0,
    `not formatted (run clang-format -i on them): ${unformatted.join(', ') || run.stderr.slice(0, 2000)}`,
  );
});

// Biome formats and lints every tracked JS and TypeScript file (biome.json; git's ignore file keeps
// out node_modules and the builds). `npx biome check --write .` fixes what it can.
test('the JS and TypeScript sources are formatted and linted as biome.json says', () => {
  const run = spawnSync(
    join(root, 'node_modules/.bin/biome'),
    ['ci', '--colors=off', '--error-on-warnings', '--max-diagnostics=20', '.'],
    {
      cwd: root,
      encoding: 'utf8',
    },
  );
  assert.ok(!run.error, `biome did not run (${run.error?.message}); npm ci installs it`);
  const checked = Number(/Checked (\d+) files?/.exec(run.stdout + run.stderr)?.[1]);
  assert.ok(checked > 60, `biome checked ${checked} files`);
  assert.equal(
    run.status,
    0,
    `not formatted or not clean (run npx biome check --write .):\n${(run.stdout + run.stderr).slice(0, 4000)}`,
  );
});
