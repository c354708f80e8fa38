// The web module's option checker (gpt2-option-check.js, as built into build/site) against
// src/options.json, by property: for any value fast-check makes, an option is either refused with an
// error that names it or accepted as a value its spec allows (checked here by a validator of the
// test's own); unknown names are refused; every value the spec allows passes unchanged. What the
// checker accepts is all that reaches the engine (GPT2.load and generate call it first).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import fc from 'fast-check';
import { root, siteDir } from '../browser/harness.mjs';

const schema = JSON.parse(readFileSync(join(root, 'src/options.json'), 'utf8'));
const { resolveOptions } = await import(pathToFileURL(join(siteDir, 'gpt2-option-check.js')).href);
const groups = { load: '', tuning: 'tuning.', generate: '' };
// The methods' options, named in messages by their method (gpt2-methods.js).
for (const group of ['tokenize', 'logits', 'attention', 'perplexity', 'lens', 'hiddenStates', 'benchmark'])
  groups[group] = `${group}: `;
const options = Object.entries(groups).flatMap(([group, prefix]) =>
  Object.entries(schema[group]).map(([name, spec]) => ({ group, prefix, name, spec })),
);

// An intervention as docs/api.md defines it: one key naming its kind, whose object holds exactly that
// kind's fields (steer's scale may be left out); indices are integers >= 0, vectors are arrays or
// typed arrays of finite numbers, not empty.
const INTERVENTION_FIELDS = {
  ablateHead: { layer: 'index', head: 'index' },
  ablateNeurons: { layer: 'index', neurons: 'indices' },
  steer: { layer: 'index', vector: 'vector', scale: 'optional number' },
  patch: { layer: 'index', position: 'index', vector: 'vector' },
};
const plain = (v) => typeof v === 'object' && v !== null && [Object.prototype, null].includes(Object.getPrototypeOf(v));
const isIndex = (v) => typeof v === 'number' && Number.isInteger(v) && v >= 0;
function fieldAllowed(type, v) {
  if (type === 'index') return isIndex(v);
  if (type === 'indices') return Array.isArray(v) && v.every(isIndex);
  if (type === 'optional number') return v === undefined || (typeof v === 'number' && Number.isFinite(v));
  const list = Array.isArray(v) ? v : ArrayBuffer.isView(v) && !(v instanceof DataView) ? Array.from(v) : null;
  return list !== null && list.length > 0 && list.every((x) => typeof x === 'number' && Number.isFinite(x));
}
function interventionAllowed(item) {
  if (!plain(item) || Object.keys(item).length !== 1) return false;
  const [kind, body] = Object.entries(item)[0];
  const fields = INTERVENTION_FIELDS[kind];
  return (
    fields !== undefined &&
    plain(body) &&
    Object.keys(body).every((k) => k in fields) &&
    Object.entries(fields).every(([name, type]) => fieldAllowed(type, body[name]))
  );
}

// What each type allows, written from options.json's "type" and "min", not from the checker.
function allowed(spec, value) {
  const atLeastMin = (v) => spec.min === undefined || v >= spec.min;
  switch (spec.type) {
    case 'enum':
      return spec.values.includes(value);
    case 'integer':
      return typeof value === 'number' && Number.isInteger(value) && atLeastMin(value);
    case 'number':
      return typeof value === 'number' && Number.isFinite(value) && atLeastMin(value);
    case 'boolean':
      return value === true || value === false;
    case 'string':
      return typeof value === 'string' && value.length > 0;
    case 'strings':
      return typeof value === 'string' || (Array.isArray(value) && value.every((s) => typeof s === 'string'));
    case 'interventions':
      return Array.isArray(value) && value.every(interventionAllowed);
    case 'jsonSchema': {
      if (plain(value)) return true;
      if (typeof value !== 'string') return false;
      try {
        return plain(JSON.parse(value));
      } catch {
        return false;
      }
    }
    case 'logitBias':
      return (
        plain(value) &&
        Object.entries(value).every(
          ([id, bias]) =>
            String(Number(id)) === id &&
            Number.isInteger(Number(id)) &&
            Number(id) >= 0 &&
            Number(id) < 1e9 &&
            typeof bias === 'number' &&
            !Number.isNaN(bias) &&
            bias !== Infinity,
        )
      );
    default:
      throw new Error(`options.json: a type this test does not know: ${spec.type}`);
  }
}

// Interventions of every kind, vectors as arrays or Float32Arrays.
const index = fc.nat(100);
const finite = { noNaN: true, noDefaultInfinity: true };
const vector = fc.oneof(
  fc.array(fc.double(finite), { minLength: 1, maxLength: 8 }),
  fc.float32Array({ ...finite, minLength: 1, maxLength: 8 }),
);
// Plain objects: the checker's copies are, so objects without a prototype would not compare equal.
const record = (model, keys = {}) => fc.record(model, { noNullPrototype: true, ...keys });
const intervention = fc.oneof(
  record({ ablateHead: record({ layer: index, head: index }) }),
  record({ ablateNeurons: record({ layer: index, neurons: fc.array(index) }) }),
  record({ steer: record({ layer: index, vector, scale: fc.double(finite) }, { requiredKeys: ['layer', 'vector'] }) }),
  record({ patch: record({ layer: index, position: index, vector }) }),
);

// Values a spec allows.
function validValues(spec) {
  const min = spec.min ?? -1e9;
  switch (spec.type) {
    case 'enum':
      return fc.constantFrom(...spec.values);
    case 'integer':
      return fc.integer({ min: Math.ceil(min), max: Math.ceil(min) + 1e6 });
    case 'number':
      return fc.double({ min, max: min + 1e6, noNaN: true, noDefaultInfinity: true });
    case 'boolean':
      return fc.boolean();
    case 'string':
      return fc.string({ minLength: 1 });
    case 'strings':
      return fc.oneof(fc.string(), fc.array(fc.string()));
    case 'interventions':
      return fc.array(intervention, { maxLength: 4 });
    case 'jsonSchema': {
      const schema = record({ type: fc.constantFrom('string', 'integer', 'object'), maxLength: fc.nat(20) });
      return fc.oneof(
        schema,
        schema.map((s) => JSON.stringify(s)),
      );
    }
    case 'logitBias':
      return fc.dictionary(
        fc.nat(60000).map(String),
        fc.oneof(fc.double({ noNaN: true, noDefaultInfinity: true }), fc.constant(-Infinity)),
      );
    default:
      throw new Error(spec.type);
  }
}

// Anything (BigInts and objects that refuse to become strings too), with the edge cases of numbers
// and near-misses of each type weighted in.
const cyclic = {};
cyclic.self = cyclic;
const anyValue = fc.oneof(
  fc.anything({
    withBigInt: true,
    withBoxedValues: true,
    withMap: true,
    withSet: true,
    withTypedArray: true,
    withSparseArray: true,
  }),
  fc.constantFrom(10n, cyclic, () => 1, Symbol('s'), { toString: {} }, Object.create(null)),
  fc.constantFrom(NaN, Infinity, -Infinity, -0, 0.5, -1, 2 ** 53, '', '1', 'fp64', [], [1], {}, true, false),
  fc.double(),
  fc.integer(),
  fc.string(),
  fc.array(fc.oneof(fc.string(), fc.integer())),
);

for (const { group, prefix, name, spec } of options) {
  test(`${prefix}${name}: any value is refused with an error naming it, or is one the spec allows`, () => {
    fc.assert(
      fc.property(anyValue, (value) => {
        let out;
        try {
          out = resolveOptions(group, { [name]: value }, { prefix });
        } catch (error) {
          // An intervention's message names its item and field: "interventions[1].steer.vector must be".
          assert.match(error.message, new RegExp(`^${prefix}${name}(\\[\\d+\\](\\.\\w+)*)? must be `), error.message);
          assert.ok(
            !allowed(spec, value) || value === null || value === undefined,
            `an allowed value was refused: ${error.message}`,
          );
          return;
        }
        if (value === null || value === undefined) assert.deepEqual(out[name], spec.default);
        else
          assert.ok(
            allowed(spec, value),
            `accepted a ${typeof value} for ${spec.type}: ${String(out[name]?.constructor?.name)}`,
          );
      }),
      { numRuns: 300 },
    );
  });

  test(`${prefix}${name}: every value the spec allows passes unchanged`, () => {
    fc.assert(
      fc.property(validValues(spec), (value) => {
        const out = resolveOptions(group, { [name]: value }, { prefix })[name];
        assert.deepEqual(out, spec.type === 'strings' && typeof value === 'string' ? [value] : value);
      }),
      { numRuns: 100 },
    );
  });
}

test('an option name the schema does not have is refused, naming it', () => {
  for (const group of Object.keys(groups)) {
    fc.assert(
      fc.property(
        fc.string({ minLength: 1 }).filter((n) => !(n in schema[group]) && n !== '__proto__'),
        (name) => {
          assert.throws(
            () => resolveOptions(group, { [name]: 1 }),
            (error) => error.message.startsWith(`${group}: unknown option ${name};`),
          );
        },
      ),
      { numRuns: 200 },
    );
  }
});
