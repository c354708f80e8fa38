// The docs name files and code that exist: every repository path the README and docs/ write in
// backticks (src/..., tests/..., web/..., ...) is in the tree, and so is every file they name by
// itself; every `Class::member` they name is in the code; and docs/architecture.md's file map has a
// row for every folder of src/ and names none that is gone.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { root, siteDir } from '../browser/harness.mjs';

// The worked example of adding an op names the shader it would add.
const EXAMPLES = new Set(['shaders/add.frag']);
const TOP = ['src', 'tests', 'web', 'shaders', 'docs', 'cmake', 'weights-tools', '.ci'];
const docs = [
  'README.md',
  ...readdirSync(join(root, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`),
];

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
  const pattern = new RegExp(
    `^${path
      .slice(slash + 1)
      .replace(/[.]/g, '\\.')
      .replace(/\*/g, '.*')}$`,
  );
  return existsSync(dir) && readdirSync(dir).some((f) => pattern.test(f));
}

test('every repository path the docs name exists', () => {
  const missing = [];
  for (const doc of docs)
    for (const path of pathsIn(readFileSync(join(root, doc), 'utf8')))
      if (!exists(path) && !EXAMPLES.has(path)) missing.push(`${doc}: ${path}`);
  assert.deepEqual(missing, []);
});

test("docs/architecture.md's file map has a row for every folder of src/, and no other", () => {
  const text = readFileSync(join(root, 'docs/architecture.md'), 'utf8');
  const table = text.slice(text.indexOf('| folder | job |')).split('\n').slice(2);
  const rows = table
    .slice(
      0,
      table.findIndex((line) => !line.startsWith('|')),
    )
    .map((line) => line.match(/^\| `([^`]+)` \|/)[1]);
  const folders = (dir) => readdirSync(join(root, dir)).filter((f) => statSync(join(root, dir, f)).isDirectory());
  const src = folders('src').flatMap((f) =>
    f === 'platform' ? folders('src/platform').map((p) => `platform/${p}`) : [f],
  );
  for (const folder of src) assert.ok(rows.includes(folder), `the file map has a row for src/${folder}`);
  for (const row of rows)
    assert.ok(
      existsSync(join(root, 'src', row)) || existsSync(join(root, row)),
      `${row} (a row of the file map) exists`,
    );
});

// The repository's source files (tracked or not, outside build output and node_modules), read once.
const SOURCE_DIRS = ['src', 'tests', 'web', 'shaders', 'weights-tools', 'cmake'];
const SOURCE_EXT = /\.(h|cpp|js|mjs|ts|frag|vert|glsl|cmake|sh|py|json|html|css)$/;
function sourceFiles(dir = '') {
  return readdirSync(join(root, dir), { withFileTypes: true }).flatMap((entry) => {
    const path = dir ? `${dir}/${entry.name}` : entry.name;
    if (entry.isDirectory())
      return entry.name === 'node_modules' || entry.name.startsWith('.') || /^(corpus|fixtures)$/.test(entry.name)
        ? []
        : sourceFiles(path);
    return SOURCE_EXT.test(entry.name) ? [path] : [];
  });
}
const sources = SOURCE_DIRS.flatMap((dir) => sourceFiles(dir));
const sourceText = new Map(
  sources.filter((f) => /\.(h|cpp|js|mjs|ts)$/.test(f)).map((f) => [f, readFileSync(join(root, f), 'utf8')]),
);

// `Class::member` within backticks (C++ names, as the docs write them: a type, then a member).
function membersIn(text) {
  const out = new Set();
  for (const [, span] of text.matchAll(/`([^`\n]+)`/g)) {
    for (const [name] of span.matchAll(/\b[A-Z]\w*(?:::\w+)+/g)) out.add(name.replace(/::$/, ''));
  }
  return [...out];
}

// Whether the code has `Type::member`: written so, or a member of that name in the body of the type's
// declaration (a class or struct, or an enum's value).
function memberExists(name) {
  const parts = name.split('::');
  const member = parts.pop();
  const type = parts.pop();
  for (const text of sourceText.values()) {
    if (text.includes(name) || text.includes(`${type}::${member}`)) return true;
    const declared = new RegExp(`(?:class|struct|enum class|enum|namespace) ${type}\\b[^;{]*\\{`, 'g');
    for (const match of text.matchAll(declared)) {
      let depth = 0;
      let end = match.index + match[0].length - 1;
      for (; end < text.length; end += 1) {
        if (text[end] === '{') depth += 1;
        else if (text[end] === '}' && --depth === 0) break;
      }
      if (new RegExp(`\\b${member}\\b`).test(text.slice(match.index, end))) return true;
    }
  }
  return false;
}

test('every `Class::member` the docs name is in the code', () => {
  const missing = [];
  for (const doc of docs)
    for (const name of membersIn(readFileSync(join(root, doc), 'utf8')))
      if (!memberExists(name)) missing.push(`${doc}: ${name}`);
  assert.deepEqual(missing, []);
});

// Files the build writes (src/CMakeLists.txt, cmake/generate_options.cmake), named by the docs too.
const BUILT = [
  'gpt2-options.js',
  'option_defaults.h',
  'gpt2-wasm.js',
  'gpt2-wasm-threads.js',
  'gpt2-wasm-threads.worker.js',
];

test('every source file the docs name by itself (`gpt2-engine.js`, `matmul.frag`) is in the tree', () => {
  const names = new Set([...sources.map((f) => f.slice(f.lastIndexOf('/') + 1)), ...BUILT]);
  const missing = [];
  for (const doc of docs) {
    for (const [, span] of readFileSync(join(root, doc), 'utf8').matchAll(/`([^`\n]+)`/g)) {
      for (const word of span.split(/[\s,()]+/)) {
        const name = word.replace(/[.:;]+$/, '');
        if (
          !name.includes('/') &&
          /^[\w.-]+\.(h|cpp|js|mjs|frag|vert|glsl|cmake|sh|py)$/.test(name) &&
          !names.has(name) &&
          !EXAMPLES.has(`shaders/${name}`)
        )
          missing.push(`${doc}: ${name}`);
      }
    }
  }
  assert.deepEqual(missing, []);
});

test("every method of the module (the methods table, GPT2's own) is declared in gpt2.d.ts and described in docs/api.md", async () => {
  const { METHODS } = await import(pathToFileURL(join(siteDir, 'gpt2-methods.js')).href);
  const module = readFileSync(join(root, 'web/module/gpt2.js'), 'utf8');
  const own = [...module.matchAll(/^ {2}(?:static )?(?:async )?\*?(\w+)\(/gm)]
    .map((m) => m[1])
    .filter((name) => !name.startsWith('_') && name !== 'constructor');
  const dts = readFileSync(join(root, 'web/module/gpt2.d.ts'), 'utf8');
  const api = readFileSync(join(root, 'docs/api.md'), 'utf8');
  const missing = [];
  for (const name of new Set([...Object.keys(METHODS), ...own])) {
    if (!new RegExp(`^\\s+(?:static )?${name}\\(`, 'm').test(dts)) missing.push(`gpt2.d.ts: ${name}`);
    if (!new RegExp(`\`[^\`\\n]*\\b(?:model|GPT2)\\.${name}\\(`).test(api)) missing.push(`docs/api.md: ${name}`);
  }
  assert.ok(
    own.includes('load') && own.includes('generate') && Object.keys(METHODS).includes('logits'),
    `methods found: ${own}`,
  );
  assert.deepEqual(missing, []);
});

// The values the README and docs/api.md list for an option are the ones src/options.json has: a CLI
// flag written with its values (`--weights fp32|fp16|int8|int4`, `|` escaped as `\|` in a table)
// lists every value of an enum option and no other (on|off for a boolean one), and docs/api.md's row
// of an enum option names each value as `'value'` and no other.
test('the option values the README and docs/api.md list are those of src/options.json', () => {
  const schema = JSON.parse(readFileSync(join(root, 'src/options.json'), 'utf8'));
  const options = Object.entries(schema)
    .filter(([, group]) => group && typeof group === 'object' && !Array.isArray(group))
    .flatMap(([group, entries]) =>
      Object.entries(entries).map(([name, spec]) => ({ key: group === 'tuning' ? `tuning.${name}` : name, spec })),
    );
  const enums = options.filter(({ spec }) => spec.type === 'enum');
  assert.ok(
    enums.some(({ key }) => key === 'weights') && enums.some(({ key }) => key === 'kvCache'),
    `enum options found: ${enums.map(({ key }) => key)}`,
  );
  const literal = (s) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const same = (listed, values) => listed.length === values.length && values.every((v) => listed.includes(v));
  const wrong = [];
  let listings = 0;
  for (const doc of ['README.md', 'docs/api.md']) {
    const text = readFileSync(join(root, doc), 'utf8');
    for (const { spec } of options) {
      if (!spec.cli || (spec.type !== 'enum' && spec.type !== 'boolean')) continue;
      const values = spec.type === 'enum' ? spec.values : ['on', 'off'];
      const flag = new RegExp(`(?<![\\w-])${literal(spec.cli)} ([\\w.-]+(?:\\\\?\\|[\\w.-]+)+)`, 'g');
      for (const [, list] of text.matchAll(flag)) {
        listings += 1;
        const listed = list.split(/\\?\|/);
        if (!same(listed, values))
          wrong.push(`${doc}: ${spec.cli} ${listed.join('|')}, options.json: ${values.join('|')}`);
      }
    }
    if (doc !== 'docs/api.md') continue;
    for (const { key, spec } of enums) {
      const row = text.match(new RegExp(`^\\| \`${literal(key)}\` \\|.*$`, 'm'));
      if (!row) {
        wrong.push(`${doc}: no row for ${key}`);
        continue;
      }
      listings += 1;
      const listed = [...new Set([...row[0].matchAll(/`'([^'`\s]+)'`/g)].map((m) => m[1]))];
      if (!same(listed, spec.values))
        wrong.push(`${doc}: the row of ${key} names ${listed.join(', ')}, options.json: ${spec.values.join(', ')}`);
    }
  }
  assert.ok(listings >= 4, `value listings found: ${listings}`);
  assert.deepEqual(wrong, []);
});
