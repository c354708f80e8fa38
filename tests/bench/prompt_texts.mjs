// Prompts of exactly P GPT-2 tokens, the same text for every engine a benchmark compares (each
// tokenizes it itself): Brown-like prose cut at a token boundary, by gpt-3-encoder (GPT-2's BPE).
import { decode, encode } from 'gpt-3-encoder';

const PROSE =
  'The Fulton County Grand Jury said Friday an investigation of recent primary elections produced no evidence that any irregularities took place. ';

// { P: text } for each of `counts`.
export function promptTexts(counts) {
  return Object.fromEntries(
    counts.map((count) => {
      const text = decode(encode(PROSE.repeat(Math.ceil(count / 20) + 1)).slice(0, count));
      if (encode(text).length !== count)
        throw new Error(`the prompt of ${count} tokens does not tokenize back to ${count}`);
      return [count, text];
    }),
  );
}
