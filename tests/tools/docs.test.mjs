// The docs name files that exist: every repository path the README and docs/ write in backticks
// (src/..., tests/..., web/..., ...) is in the tree, and docs/architecture.md's file map has a row
// for every folder of src/ and names none that is gone.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { root } from '../browser/harness.mjs';

// The worked example of adding an op names the shader it would add.
const EXAMPLES = new Set(['shaders/add.frag']);
const TOP = ['src', 'tests', 'web', 'shaders', 'docs', 'cmake', 'weights-tools', '.ci'];
const docs = ['README.md', ...readdirSync(join(root, 'docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)];

// `a/b/c.ext`, `a/b/`, `a/b/*.ext` within backticks, starting at a top-level folder of the repository.
function pathsIn(text) {
  const out = new Set();
  for (const [, span] of text.matchAll(/`([^`\n]+)`/g)) {
    for (const word of span.split(/[\s,()]+/)) {
      const path = word.replace(/[.:;]+$/, '');
      if (TOP.some((top) => path.startsWith(`${top}/`)) && !/[{}<>$=|]|\.\.\./.test(path)) out.add(path);
    }
  }
  return [...out];
}

function exists(path) {
  if (!path.includes('*')) return existsSync(join(root, path));
  const slash = path.lastIndexOf('/');
  const dir = join(root, path.slice(0, slash));
  const pattern = new RegExp(`^${path.slice(slash + 1).replace(/[.]/g, '\\.').replace(/\*/g, '.*')}$`);
  return existsSync(dir) && readdirSync(dir).some((f) => pattern.test(f));
}

test('every repository path the docs name exists', () => {
  const missing = [];
  for (const doc of docs) for (const path of pathsIn(readFileSync(join(root, doc), 'utf8'))) if (!exists(path) && !EXAMPLES.has(path)) missing.push(`${doc}: ${path}`);
  assert.deepEqual(missing, []);
});

test("docs/architecture.md's file map has a row for every folder of src/, and no other", () => {
  const text = readFileSync(join(root, 'docs/architecture.md'), 'utf8');
  const table = text.slice(text.indexOf('| folder | job |')).split('\n').slice(2);
  const rows = table.slice(0, table.findIndex((line) => !line.startsWith('|'))).map((line) => line.match(/^\| `([^`]+)` \|/)[1]);
  const folders = (dir) => readdirSync(join(root, dir)).filter((f) => statSync(join(root, dir, f)).isDirectory());
  const src = folders('src').flatMap((f) => (f === 'platform' ? folders('src/platform').map((p) => `platform/${p}`) : [f]));
  for (const folder of src) assert.ok(rows.includes(folder), `the file map has a row for src/${folder}`);
  for (const row of rows) assert.ok(existsSync(join(root, 'src', row)) || existsSync(join(root, row)), `${row} (a row of the file map) exists`);
});
