// gpt2.d.ts against typed use: `tsc --noEmit` over tests/types/usage.ts (calls that must compile and
// mistakes that must not) and the embedding example, checked as JavaScript.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { root } from '../browser/harness.mjs';

test('tsc --noEmit accepts the typed usage and the embedding example against gpt2.d.ts', () => {
  const r = spawnSync(
    join(root, 'node_modules/.bin/tsc'),
    ['--noEmit', '-p', join(root, 'tests/types/tsconfig.json')],
    { encoding: 'utf8' },
  );
  assert.equal(r.status, 0, `tsc failed:\n${r.stdout}${r.stderr}`);
});
