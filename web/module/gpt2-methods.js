// The model's request/response methods, each defined once: `args` turns the arguments of the public
// call (GPT2 in gpt2.js) into those of the engine's method of the same name (Engine in
// gpt2-engine.js), checking them on the caller's thread, so that what crosses to the worker is
// already plain and valid; a method's options object is checked against its group of
// src/options.json, whose `interventions` each method that runs the model hands the engine. GPT2, the page's proxy of a worker's engine (gpt2-remote.js) and the worker's
// handlers (gpt2-worker.js) are all made from this table. Adding such a method takes seven places (and
// its options' group): an entry here, the Engine method, the C++ Engine's method, its WebModel method
// and its .function line in bindings.cpp, its type in gpt2.d.ts and docs/api.md.
// load, generate (streamed), dispose and the static methods are written out where they live.

import { resolveOptions } from './gpt2-option-check.js';

// A text or token ids as the engine takes it: a string, or an array (a typed array is copied).
const textOrIds = (text) => (typeof text === 'string' ? text : Array.from(text));

// The options object of method `name`, checked against its group of src/options.json.
const optionsOf = (name, given) => resolveOptions(name, given, { prefix: `${name}: ` });

export const METHODS = {
  /** Token ids of `text`. `allowSpecial: false` encodes "<|endoftext|>" as plain text. */
  tokenize: { args: (text, options) => [String(text), optionsOf('tokenize', options).allowSpecial] },

  /** The text of token ids. */
  decode: { args: (ids) => [Array.from(ids)] },

  /** Logits of the last position after running `ids` as a new sequence. */
  logits: { args: (ids, options) => [Array.from(ids), optionsOf('logits', options).interventions] },

  /**
   * Attention probabilities of `layer` over the current sequence: data is heads x T x T. The
   * sequence runs again with the call's interventions where they differ from those it ran with.
   */
  attention: { args: (layer, options) => [layer, optionsOf('attention', options).interventions] },

  /**
   * Perplexity of `text` (a string or token ids): its tokens in consecutive windows of `window`
   * tokens (default: the model's context), each run as a new sequence, every token but a window's
   * first scored. Returns { tokens, nll (mean negative log-likelihood, nats), perplexity }. It ends
   * the current sequence, and blocks the thread the engine runs on (the worker, by default) while
   * it reads back.
   */
  perplexity: {
    args: (text, options) => {
      const { window, interventions } = optionsOf('perplexity', options);
      return [textOrIds(text), window ?? 0, interventions];
    },
  },

  /**
   * The logit lens of `text` (a string or token ids), which becomes the current sequence as after a
   * prompt: for each layer l and position t, the `topK` (default 5) most likely next tokens of
   * softmax(lm_head(ln_f(the residual stream after block l)))), best first. Returns
   * { layers, tokens, topK, ids: Int32Array, probs: Float32Array }, ids and probs indexed
   * [(l * tokens + t) * topK + rank]; the last layer's is the model's own prediction. Only the top-k
   * is read back, blocking the thread the engine runs on while it does.
   */
  lens: {
    args: (text, options) => {
      const { topK, interventions } = optionsOf('lens', options);
      return [textOrIds(text), topK, interventions];
    },
  },

  /**
   * The residual stream after block `layer` (0-based) for `text` (a string or token ids): a
   * Float32Array of tokens x n_embd. It ends the current sequence.
   */
  hiddenStates: {
    args: (text, options) => {
      const { layer, interventions } = optionsOf('hiddenStates', options);
      if (layer === null) throw new TypeError('hiddenStates: layer is required (the block after which to read)');
      return [textOrIds(text), layer, interventions];
    },
  },

  /** GPU bytes allocated, bytes read back so far, the renderer. */
  stats: { args: () => [] },

  /**
   * The benchmark of `gpt2 bench`: a prompt of `promptTokens` ids, then `newTokens` steps timed as
   * generate() runs them, then one at a time (`decode_latency_ms`), each drawing its token as
   * generate() does with the sampling options (greedy by default); `profile` adds
   * `profile_ms_per_token` and `profile_prefill_ms`, each pass's time from a run of their own (GPU
   * timer queries where the context has them, else waiting per pass), and `profile_matmuls`, those
   * times and rates per matmul kind.
   */
  benchmark: {
    args: (options) => {
      const { temperature, topK, topP, repetitionPenalty, seed, ...rest } = optionsOf('benchmark', options);
      // As generate's options reach the engine: every one of the group, the others at their defaults.
      return [{ ...rest, sampling: optionsOf('generate', { temperature, topK, topP, repetitionPenalty, seed }) }];
    },
  },

  /** Loses the WebGL context as a browser under memory pressure would, to test a recovery path. */
  simulateContextLoss: { args: () => [] },
};

// Puts each method of the table on `prototype` as `make(name, args)` builds it, named as the method
// (stack traces and the console show it).
export function defineMethods(prototype, make) {
  for (const [name, { args }] of Object.entries(METHODS)) {
    const method = Object.defineProperty(make(name, args), 'name', { value: name });
    Object.defineProperty(prototype, name, { value: method, writable: true, configurable: true });
  }
}
