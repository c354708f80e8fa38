// The bundled demo model (served as models/default) writes English in the browser: of 200 tokens
// sampled at temperature 0.8 with a fixed seed, at least 80% of the words are in Debian's wamerican list.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { startSite } from './harness.mjs';

const dictionary = new Set(readFileSync('/usr/share/dict/american-english', 'utf8').split('\n'));
let site;
before(async () => {
  site = await startSite();
});
after(() => site?.close());

function isWord(word) {
  const bare = word.replace(/'s$/i, '');
  return [word, word.toLowerCase(), bare, bare.toLowerCase()].some((w) => dictionary.has(w));
}

test('200 sampled tokens are mostly English dictionary words', async () => {
  const page = await site.page();
  const text = await page.evaluate(async () => {
    const { GPT2 } = await import('/gpt2.js');
    const model = await GPT2.load('/models/default/', { backend: 'webgl' });
    let out = '';
    for await (const t of model.generate('The jury said that', {
      maxNewTokens: 200,
      temperature: 0.8,
      seed: 1234,
      stopAtEndOfText: false,
    }))
      out += t.text;
    model.dispose();
    return out;
  });
  const words = text.match(/[A-Za-z]+(?:'[A-Za-z]+)*/g) ?? [];
  const known = words.filter(isWord).length;
  console.log(
    `[ measured ] ${known} of ${words.length} words (${((100 * known) / words.length).toFixed(1)}%) are dictionary words`,
  );
  console.log(`[ sample ] The jury said that${text.slice(0, 300)}`);
  assert.ok(words.length >= 100, `only ${words.length} words in 200 tokens`);
  assert.ok(known / words.length >= 0.8, `${known} of ${words.length} words are dictionary words`);
});
