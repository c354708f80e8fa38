// src/options.json is the one source of every option and its default: the declarations
// (gpt2.d.ts), the documentation (docs/api.md) and the CLI (`gpt2 help`) must say what it says.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { root } from '../browser/harness.mjs';

const schema = JSON.parse(readFileSync(join(root, 'src/options.json'), 'utf8'));
// The web module's groups (load's, generate's and its methods' options); nativeTuning is the C++
// API's and the CLI's only.
const METHOD_GROUPS = ['tokenize', 'logits', 'attention', 'perplexity', 'lens', 'hiddenStates', 'benchmark'];
const groups = ['load', 'tuning', 'generate', ...METHOD_GROUPS];
// How docs/api.md names an option of `group`: load's and generate's by name, the others' as group.name.
const docKey = (group, name) => (group === 'load' || group === 'generate' ? name : `${group}.${name}`);
const optionsOf = (names) =>
  names.flatMap((group) => Object.entries(schema[group]).map(([name, spec]) => ({ group, name, spec })));
const options = optionsOf(groups);
// The options the C++ side generates defaults and flags for (the methods' are the web module's only).
const allOptions = optionsOf(['load', 'tuning', 'generate', 'nativeTuning']);

// A default as TypeScript and the docs write it: 'fp16', 50, true, []; undefined when unset.
function written(value) {
  if (value === null) return undefined;
  return typeof value === 'string' ? `'${value}'` : JSON.stringify(value);
}

test('every option in gpt2.d.ts has the @default of options.json, and unset ones have none', () => {
  const dts = readFileSync(join(root, 'web/module/gpt2.d.ts'), 'utf8');
  const interfaces = {
    load: 'LoadOptions',
    tuning: 'Tuning',
    generate: 'GenerateOptions',
    tokenize: 'TokenizeOptions',
    logits: 'LogitsOptions',
    attention: 'AttentionOptions',
    perplexity: 'PerplexityOptions',
    lens: 'LensOptions',
    hiddenStates: 'HiddenStatesOptions',
    benchmark: 'BenchmarkOptions',
  };
  for (const { group, name, spec } of options) {
    const body = dts.match(new RegExp(`export interface ${interfaces[group]} \\{([\\s\\S]*?)\\n\\}`))[1];
    const member = body.match(new RegExp(`(/\\*\\*(?:(?!\\*/)[\\s\\S])*\\*/)\\s*${name}\\??:`));
    assert.ok(member, `${interfaces[group]}.${name} is declared with a doc comment`);
    const stated = member[1].match(/@default (.+)/)?.[1].trim();
    assert.equal(stated, written(spec.default), `${interfaces[group]}.${name}`);
    if (spec.type === 'enum')
      for (const v of spec.values) assert.match(dts, new RegExp(`${name}\\?: [^;]*'${v}'`), `${name} lists '${v}'`);
  }
});

test('docs/api.md lists every option with the default of options.json', () => {
  const doc = readFileSync(join(root, 'docs/api.md'), 'utf8');
  for (const { group, name, spec } of options) {
    const key = docKey(group, name);
    const row = doc.match(new RegExp(`^\\| \`${key.replace('.', '\\.')}\` \\| ([^|]+) \\|`, 'm'));
    assert.ok(row, `docs/api.md has a row for ${key}`);
    const stated = row[1].trim();
    assert.equal(stated, spec.default === null ? 'unset' : `\`${written(spec.default)}\``, key);
  }
});

test('gpt2 help states each CLI flag with the default of options.json', () => {
  const help = execFileSync(join(root, 'build/native/gpt2'), ['help'], { encoding: 'utf8' });
  const flags = allOptions.filter(({ spec }) => spec.cli);
  assert.ok(flags.length >= 20);
  for (const { spec } of flags) {
    const line = help.split('\n').find((l) => l.trim().startsWith(`${spec.cli} (default:`));
    assert.ok(line, `gpt2 help lists ${spec.cli}`);
    const onOff = spec.type === 'boolean' && spec.default !== null ? (spec.default ? 'on' : 'off') : undefined;
    const expected = spec.default === null || spec.type === 'strings' ? 'unset' : (onOff ?? String(spec.default));
    assert.match(line, new RegExp(`\\(default: ${expected}\\)`), line);
  }
});

test('the C++ API and the CLI use the defaults of options.json', () => {
  const header = readFileSync(join(root, 'build/native/generated/option_defaults.h'), 'utf8');
  for (const { name, spec } of allOptions) {
    if (spec.default === null || spec.type === 'strings' || spec.web) continue;
    const value =
      spec.type === 'enum'
        ? `"${spec.default}"`
        : spec.type === 'number'
          ? `float(${spec.default})`
          : String(spec.default);
    assert.match(header, new RegExp(`constexpr [a-z* ]+ ${name} = ${value.replace(/[()]/g, '\\$&')};`), name);
  }
  // The CLI's weights default is the schema's: fp16 weights give logits off fp32's by more than
  // rounding noise on the fixture, so the two runs differ unless --weights is the default.
  const model = join(root, 'tests/fixtures/gpt2-tiny');
  const logits = (...flags) =>
    JSON.parse(
      execFileSync(join(root, 'build/native/gpt2'), ['logits', '--model', model, '--ids', '15496,11', ...flags], {
        encoding: 'utf8',
        maxBuffer: 64 << 20,
      }),
    ).logits;
  const plain = logits();
  assert.deepEqual(plain, logits('--weights', schema.load.weights.default));
  assert.notDeepEqual(
    plain,
    logits(
      '--weights',
      schema.load.weights.values.find((v) => v !== schema.load.weights.default),
    ),
  );
});

test('every knob of ModelOptions is an option of options.json, and the CLI takes each', () => {
  const header = readFileSync(join(root, 'src/model/tuning.h'), 'utf8');
  const body = header.match(/struct ModelOptions \{([\s\S]*?)\n\};/)[1];
  const fields = [...body.matchAll(/^\s+[\w:]+ (\w+) =/gm)].map((m) => m[1]);
  assert.ok(fields.length >= 15, fields.join(', '));
  const help = execFileSync(join(root, 'build/native/gpt2'), ['help'], { encoding: 'utf8' });
  // phone is not a user's knob: the web module asks the page, the CLI runs on no phone.
  for (const field of fields.filter((f) => f !== 'phone')) {
    const found = ['load', 'tuning', 'nativeTuning'].map((group) => schema[group][field]).find(Boolean);
    assert.ok(found, `ModelOptions::${field} is in options.json`);
    assert.ok(!found.web && found.cli && help.includes(`  ${found.cli} (default:`), `gpt2 help lists ${field}`);
  }
});
