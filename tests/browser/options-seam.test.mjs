// Every option of src/options.json that the web module hands the engine reaches the C++ side, in the
// Worker and on the page's thread: each is set to a value other than its default, and the engine
// writes back what it read (Engine.optionsSeen, platform/web/js_options.h). Nothing here lists the
// options: an option added to options.json is checked as it is added.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { root, startSite } from './harness.mjs';

const schema = JSON.parse(readFileSync(join(root, 'src/options.json'), 'utf8'));
let site;

before(async () => {
  site = await startSite();
});
after(() => site?.close());

// A value of `spec`'s type other than its default, within its range.
function otherValue(spec) {
  switch (spec.type) {
    case 'enum':
      return spec.values.find((v) => v !== spec.default);
    case 'integer':
      return Math.max(spec.min ?? 0, (spec.default ?? 0) + 3);
    case 'number':
      return (spec.default ?? 0) === 0.5 ? 0.25 : 0.5;
    case 'boolean':
      return spec.default !== true;
    case 'string':
      return `${spec.default ?? 'x'}-other`;
    case 'strings':
      return ['one', 'two'];
    case 'jsonSchema':
      return '{"type":"boolean"}';
    case 'logitBias':
      return { 11: 2.5, 13: -1 };
    default:
      throw new Error(`options.json: a type this test does not know: ${spec.type}`);
  }
}

// The options the engine reads ("web": true ones are the module's own; nativeTuning the C++ API's).
const crossing = (group) => Object.entries(schema[group]).filter(([, spec]) => !spec.web);

for (const worker of [true, false]) {
  test(`${worker ? 'worker' : 'same thread'}: every option the engine reads arrives with the value set, and unset ones as unset`, async () => {
    const sent = {
      load: Object.fromEntries(crossing('load').map(([name, spec]) => [name, otherValue(spec)])),
      tuning: Object.fromEntries(crossing('tuning').map(([name, spec]) => [name, otherValue(spec)])),
      generate: Object.fromEntries(crossing('generate').map(([name, spec]) => [name, otherValue(spec)])),
    };
    const page = await site.page();
    const seen = await page.evaluate(
      async ({ sent, worker }) => {
        const { resolveOptions } = await import('/gpt2-option-check.js');
        const { Engine } = await import('/gpt2-engine.js');
        const { RemoteEngine } = await import('/gpt2-remote.js');
        const engine = worker ? RemoteEngine : Engine;
        // As GPT2.load and generate resolve them (gpt2.js): checked, defaults filled in.
        const load = (given, tuning) => ({
          ...resolveOptions('load', given),
          tuning: resolveOptions('tuning', tuning),
          phone: true,
        });
        return {
          set: await engine.optionsSeen(load(sent.load, sent.tuning), resolveOptions('generate', sent.generate)),
          unset: await engine.optionsSeen(load({}, {}), resolveOptions('generate', {})),
        };
      },
      { sent, worker },
    );
    await page.close();
    const expected = { load: { ...sent.load, ...sent.tuning }, generate: sent.generate };
    for (const group of ['load', 'generate']) {
      assert.deepEqual(
        Object.keys(seen.set[group]).sort(),
        Object.keys(expected[group]).sort(),
        `${group}: the options the engine reads`,
      );
      for (const [name, value] of Object.entries(expected[group])) {
        const got = seen.set[group][name];
        if (typeof value === 'number' && !Number.isInteger(value))
          assert.ok(Math.abs(got - value) < 1e-6, `${name}: sent ${value}, the engine read ${got}`);
        else
          assert.deepEqual(
            got,
            value,
            `${name}: sent ${JSON.stringify(value)}, the engine read ${JSON.stringify(got)}`,
          );
      }
    }
    for (const [group, names] of [
      ['load', [...crossing('load'), ...crossing('tuning')]],
      ['generate', crossing('generate')],
    ]) {
      for (const [name, spec] of names) assert.deepEqual(seen.unset[group][name], spec.default, `${name}: the default`);
    }
  });
}
