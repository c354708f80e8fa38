// Minimal use of the module from another page: load, generate a few tokens, dispose.
import { GPT2 } from '../gpt2.js';

const out = /** @type {HTMLElement} */ (document.getElementById('out'));
try {
  const model = await GPT2.load(new URL('../models/default/', import.meta.url));
  out.textContent = 'Once upon a time';
  for await (const { text } of model.generate('Once upon a time', {
    maxNewTokens: 12,
    temperature: 0.8,
    topK: 40,
    seed: 1,
  })) {
    out.textContent += text;
  }
  await model.dispose();
  out.dataset.done = 'true';
} catch (error) {
  out.textContent = `Error: ${error instanceof Error ? error.message : error}`;
  out.dataset.done = 'error';
}
