// Types of gpt2.js. Reference: docs/api.md.

export interface LoadProgress {
  /** Bytes of weight files received so far. */
  loaded: number;
  /** Bytes of all weight files (Content-Length, or the end of the last tensor). */
  total: number;
  /** How many of the loaded bytes were read from the browser's cache rather than the network. */
  fromCache: number;
  /**
   * GPU bytes the model's textures take (weights, KV cache, activations): on every event from the one
   * after the model's config or GGUF header is read, before any weight is uploaded. `maxGpuBytes`
   * refuses a model above it before allocating any texture.
   */
  gpuBytes?: number;
  /**
   * Set on an event of its own when something the user should know of happened: the model runs on
   * the CPU because the browser has no usable WebGL2, or was given WebGL2's texture formats there
   * (model.mode); the engine runs on
   * this thread because the browser gives a Worker no WebGL2 (model.mode), the model's files are
   * not being cached (no Cache API, storage quota full), or cached files are read on the loading
   * thread (no Worker for reading them, e.g. a worker-src policy without blob:).
   */
  warning?: string;
}

// Options and their defaults come from src/options.json (tests/tools/options.test.mjs checks this
// file against it): @default is the value used when an option is left out; options without one are
// unset by default.
export interface LoadOptions {
  onProgress?: (progress: LoadProgress) => void;
  /**
   * What runs the model: webgl, WebGL2's (natively GLES3's) fragment-shader passes; cpu, the CPU backend (weights kept as stored, fp32 activations; in a browser or Node, WebAssembly); auto, WebGL2 where a hardware context can be made, else the CPU (no context, or a software rasterizer: SwiftShader, llvmpipe, WARP), with a warning that says why (natively: the GPU where an EGL context can be made, else the CPU, said on stderr). Node always runs the CPU.
   * @default 'auto'
   */
  backend?: 'auto' | 'webgl' | 'cpu';
  /**
   * Texture format of the weight matrices; activations are fp32, except that with fp16 or int8 weights on a GPU the rows a prompt's matmuls read after a LayerNorm or activation are fp16. int8: symmetric, one scale per output channel, quantized on the GPU at load. int4: 4-bit codes with a scale and an offset per block of 32 inputs, quantized on the GPU at load (the layout of 4-bit GGUF tensors, which stay as they are whatever this says).
   * @default 'fp16'
   */
  weights?: 'fp16' | 'fp32' | 'int8' | 'int4';
  /**
   * Format of the K/V cache, in textures on a GPU and in memory on the CPU: fp16 halves it (38 MB of
   * GPT-2 124M's 1,024 positions; on the CPU, 124M at 4 bits takes 136 MB of wasm memory at its full
   * context, not 176) at the cost of rounding keys and values to fp16 (logits within fp16 weights'
   * bound of a float64 forward, not fp32's).
   * @default 'fp32'
   */
  kvCache?: 'fp32' | 'fp16';
  /**
   * Pretend the GPU allows no larger textures (forces folded layouts); 0: the GPU's own limit.
   * @default 0
   */
  maxTextureSize?: number;
  /**
   * Refuse, before allocating any texture, a model whose textures would take more GPU bytes than this (a phone's tab dies near 1.5 GB on iOS); 0: no cap.
   * @default 0
   */
  maxGpuBytes?: number;
  /**
   * true: run the engine in a dedicated module Worker on an OffscreenCanvas, so this thread never
   * waits for it, or fail with the reason; false: on the calling thread (a page, or your own
   * worker); unset: in a Worker where the browser gives it WebGL2 with float render targets on an
   * OffscreenCanvas, else on the calling thread, with a warning. `model.mode` says which and why.
   */
  worker?: boolean;
  /**
   * Keep the model's files in the browser's Cache API and read them from there on later loads.
   * @default true
   */
  cache?: boolean;
  /**
   * Where a hub id (owner/name) is resolved: {hubUrl}/{id}/resolve/{revision}/.
   * @default 'https://huggingface.co'
   */
  hubUrl?: string;
  /**
   * The branch, tag or commit of a hub id.
   * @default 'main'
   */
  revision?: string;
  /**
   * URL of the module's worker script (gpt2-worker.js, or the app's bundle of it), resolved against
   * the page, for bundlers that do not follow `new Worker(new URL(..., import.meta.url))` (esbuild,
   * Rollup); unset: gpt2-worker.js beside the module. Models loaded with the same workerUrl share
   * one Worker.
   */
  workerUrl?: string;
  /**
   * URL of gpt2-wasm.wasm, resolved against the page, for bundlers that do not copy it (a browser
   * without WebAssembly SIMD loads gpt2-wasm-nosimd.wasm from beside it); unset: beside the module's
   * gpt2-wasm.js. The first model loaded on a thread fixes it for that thread.
   */
  wasmUrl?: string;
  /** Override the engine's choices for this GPU (benchmarks, tests, a misbehaving driver). */
  tuning?: Tuning;
  /**
   * The canvas to create the WebGL2 context on, which runs the engine on the calling thread (not
   * with worker: true). By default the engine makes its own: an OffscreenCanvas where that has
   * WebGL2, else a hidden canvas in the page.
   */
  canvas?: HTMLCanvasElement | OffscreenCanvas;
  signal?: AbortSignal;
}

export interface Tuning {
  /** fp16 weights as row pairs in RGBA32UI textures (true) or as RGBA16F (false); unset: row pairs except on llvmpipe. */
  halfPairs?: boolean;
  /** Split-K: input texels per blended instance of a matmul (0: one loop; > 0 needs EXT_float_blend); unset: 8 on GPUs with EXT_float_blend, else 0. */
  splitTexels?: number;
  /** Register tiling of the matmuls over prompt chunks: rows each fragment computes, written through multiple render targets (1, 2, 4 or 8; 1: off); unset: as many as the renderer draws to at once, up to 8. */
  rowsPerFragment?: number;
  /** Pretend one framebuffer may carry no more colour bits (R+G+B+A over its render targets; 128 per target) than this, as ANGLE on Metal allows 512 (256 on A7-A10 iPhones); unset: what the context takes, probed at load. */
  maxColorBits?: number;
}

/** Where a model's engine runs, on what, and why (GPT2.mode). */
export interface RunMode {
  /** true: in the module's Worker; false: on the thread that called GPT2.load. */
  worker: boolean;
  /** The kind of canvas the engine renders with; null on the CPU backend. */
  canvas: 'OffscreenCanvas' | 'HTMLCanvasElement' | null;
  /** Why: the option that chose it, or what the browser lacked (for the Worker). */
  reason: string;
  /** What runs the model: WebGL2's passes or the CPU backend. */
  backend: 'webgl' | 'cpu';
  /** Why: the option that chose it, the GPU WebGL2 runs on, or why WebGL2 was not used, in the browser's words. */
  backendReason: string;
}

/** Zeroes head `head` of block `layer`: its columns of the attention output, before attn.c_proj, at every position (TransformerLens's zero ablation of hook_z). */
export interface AblateHead {
  ablateHead: { layer: number; head: number };
}
/** Zeroes those MLP hidden units of block `layer` after the activation, at every position. */
export interface AblateNeurons {
  ablateNeurons: { layer: number; neurons: number[] };
}
/** Adds `scale` (default 1) times `vector` (n_embd values) to the residual stream after block `layer`, at every position. */
export interface Steer {
  steer: { layer: number; vector: Float32Array | number[]; scale?: number };
}
/** Replaces the residual stream after block `layer` at `position` with `vector` (n_embd values), as hiddenStates() gives it. */
export interface Patch {
  patch: { layer: number; position: number; vector: Float32Array | number[] };
}
/** A change made inside the forward; a list of them applies in its order. */
export type Intervention = AblateHead | AblateNeurons | Steer | Patch;

export interface GenerateOptions {
  /**
   * How many tokens to generate at most.
   * @default 50
   */
  maxNewTokens?: number;
  /**
   * 0 is greedy; > 0 samples.
   * @default 0
   */
  temperature?: number;
  /** Keep the k most likely tokens (k >= 1); unset: no top-k. */
  topK?: number;
  /**
   * Nucleus sampling threshold in (0, 1].
   * @default 1
   */
  topP?: number;
  /**
   * Hugging Face's repetition penalty (> 0; 1 disables).
   * @default 1
   */
  repetitionPenalty?: number;
  /** The same seed gives the same tokens; unset: a random seed. */
  seed?: number;
  /**
   * Stop strings; the text stops before them.
   * @default []
   */
  stop?: string | string[];
  /**
   * Stop at <|endoftext|>.
   * @default true
   */
  stopAtEndOfText?: boolean;
  /**
   * When the context is full, keep its last half and go on; false: an error.
   * @default true
   */
  slideWindow?: boolean;
  /**
   * Live logit lens: each token comes with the lens's lensTopK most likely tokens at every layer for each position run since the token before (0: off).
   * @default 0
   */
  lensTopK?: number;
  /**
   * Live attention: each token comes with this layer's attention probabilities for each position run since the token before (-1: off).
   * @default -1
   */
  attentionLayer?: number;
  /**
   * The live lens covers the last lensPositions positions of a prompt (every generated token's position is covered); 0: every position, at the cost of the output head over every layer of each.
   * @default 8
   */
  lensPositions?: number;
  /**
   * Constrained output: the text matches this regular expression whole (ECMAScript syntax without lookaround, backreferences or lazy quantifiers); generation ends where the match can go no further, or at maxNewTokens. An impossible or unsupported pattern rejects before anything runs.
   */
  regex?: string;
  /**
   * Constrained output: compact JSON that fits this JSON schema (an object, or its JSON text); docs/api.md lists the keywords supported. Not with regex.
   */
  jsonSchema?: object | string;
  /** Added to the logits of these token ids after the repetition penalty, before the temperature (OpenAI's logit_bias); -Infinity bans a token. A finite bias makes each step read back the logits and draw on the CPU. */
  logitBias?: Record<number, number>;
  /**
   * Changes made inside the forward, in list order, at every position run (prompt and generated); the live views see them too. See Intervention.
   * @default []
   */
  interventions?: Intervention[];
  /** Aborting stops generation before the next token or prefill chunk; the iteration throws an AbortError. */
  signal?: AbortSignal;
}

/** Options of tokenize() (src/options.json, "tokenize"). */
export interface TokenizeOptions {
  /**
   * false: "<|endoftext|>" is encoded as plain text.
   * @default true
   */
  allowSpecial?: boolean;
}

/** Options of logits() (src/options.json, "logits"). */
export interface LogitsOptions {
  /**
   * As generate's, for this call.
   * @default []
   */
  interventions?: Intervention[];
}

/** Options of attention() (src/options.json, "attention"). */
export interface AttentionOptions {
  /**
   * As generate's: the current sequence's tokens run again with them where they differ from those it ran with.
   * @default []
   */
  interventions?: Intervention[];
}

/** Options of perplexity() (src/options.json, "perplexity"). */
export interface PerplexityOptions {
  /** Tokens per window (at least 2), each run as a new sequence, every token but a window's first scored; unset: the model's context. */
  window?: number;
  /**
   * As generate's, for this call.
   * @default []
   */
  interventions?: Intervention[];
}

/** Options of lens() (src/options.json, "lens"). */
export interface LensOptions {
  /**
   * How many of the most likely next tokens are read back at each layer and position (at least 1).
   * @default 5
   */
  topK?: number;
  /**
   * As generate's, for this call.
   * @default []
   */
  interventions?: Intervention[];
}

/** Options of hiddenStates() (src/options.json, "hiddenStates"). */
export interface HiddenStatesOptions {
  /** The block (0-based) after which the residual stream is read; required. */
  layer: number;
  /**
   * As generate's, for this call.
   * @default []
   */
  interventions?: Intervention[];
}

/** Options of benchmark() (src/options.json, "benchmark"). */
export interface BenchmarkOptions {
  /**
   * The prompt's length in tokens.
   * @default 32
   */
  promptTokens?: number;
  /**
   * Steps timed after the prompt.
   * @default 16
   */
  newTokens?: number;
  /**
   * Also each pass's time per token and for the prompt, from runs of their own.
   * @default false
   */
  profile?: boolean;
  /**
   * As generate's: every run draws its tokens as generate() does with these sampling options
   * (greedy by default), so that a profile shows what a setting costs a step.
   * @default 0
   */
  temperature?: number;
  /** As generate's. */
  topK?: number;
  /**
   * As generate's.
   * @default 1
   */
  topP?: number;
  /**
   * As generate's.
   * @default 1
   */
  repetitionPenalty?: number;
  /** As generate's; unset: a random seed, the same for every run of the call. */
  seed?: number;
  /**
   * As generate's: what an intervention costs a decode step.
   * @default []
   */
  interventions?: Intervention[];
}

/** What one position captured for the live views (GenerateOptions.lensTopK, attentionLayer). */
export interface CapturedPosition {
  /** The position in the sequence (after a sliding window: in the window kept). */
  position: number;
  /** The logit lens at this position: ids and probabilities [layer * lensTopK + rank]; none for prompt positions before GenerateOptions.lensPositions. */
  lens?: { ids: Int32Array; probs: Float32Array };
  /** attentionLayer's probabilities of this query over keys 0..position: [head * (position + 1) + key]. */
  attention?: Float32Array;
}

export interface GeneratedToken {
  id: number;
  /** Complete UTF-8 text this token adds (may be empty while a character is unfinished). */
  text: string;
  /**
   * With live views: the positions run since the token before, which led to this one (the whole
   * prompt for the first token, then the one position that predicted it).
   */
  captured?: CapturedPosition[];
}

export interface GPT2Config {
  model_type: 'gpt2';
  vocab_size: number;
  n_positions: number;
  n_embd: number;
  n_layer: number;
  n_head: number;
  n_inner: number;
  layer_norm_epsilon: number;
  activation_function: string;
  scale_attn_weights: boolean;
  scale_attn_by_inverse_layer_idx: boolean;
  tie_word_embeddings: boolean;
}

export interface Perplexity {
  /** Tokens scored. */
  tokens: number;
  /** Mean negative log-likelihood of the scored tokens, in nats. */
  nll: number;
  /** exp(nll). */
  perplexity: number;
}

export interface Attention {
  heads: number;
  tokens: number;
  /** heads x tokens x tokens probabilities, row-major: data[(h * T + query) * T + key]. */
  data: Float32Array;
}

export interface Lens {
  layers: number;
  tokens: number;
  topK: number;
  /** The topK most likely next tokens of each layer and position, best first: ids[(l * tokens + t) * topK + rank]. */
  ids: Int32Array;
  /** Their probabilities, indexed as ids. */
  probs: Float32Array;
}

export interface ModelStats {
  /** Bytes of every texture of this model (weights, KV cache, activations). */
  gpuBytes: number;
  readbackBytes: number;
  passDraws: number;
  renderer: string;
  maxTextureSize: number;
  /** Colour bits one framebuffer may carry, probed at load (within tuning.maxColorBits). */
  colorBits: number;
  /** Render targets one pass writes at most: MAX_DRAW_BUFFERS, within colorBits (128 bits each). */
  renderTargets: number;
  /** Size of the WebAssembly heap (it grows to hold the largest tensor while loading, never the file). */
  wasmHeapBytes: number;
}

/** The browser dropped the model's WebGL context; `restore()` brings the model back. */
export declare class ContextLostError extends Error {
  constructor();
  readonly name: 'ContextLostError';
}
/**
 * The browser gave the engine's canvas no WebGL2 context (WebGL2 or hardware acceleration is off, or
 * the browser has none): the load fails with this.
 */
export declare class WebGL2UnavailableError extends Error {
  constructor(detail?: { code?: number; browserSaid?: string });
  readonly name: 'WebGL2UnavailableError';
  /** The context creation's error code, and the browser's own reason where it gave one ('' if none). */
  readonly detail: { code: number; browserSaid: string };
}
/** The model was disposed, before or during the call. */
export declare class DisposedError extends Error {
  constructor();
  readonly name: 'DisposedError';
}
/** A generation of this model is running: abort it or wait for it (one call at a time per model). */
export declare class BusyError extends Error {
  constructor();
  readonly name: 'BusyError';
}

/** What GPT2.gpuBytes plans: a config.json object, or a model source (URL, hub id, or a GGUF file's Blob). */
export type ModelToPlan = (Partial<GPT2Config> & Record<string, unknown>) | string | URL | Blob;

export declare class GPT2 {
  /**
   * Loads a GGUF file (llama.cpp's GPT-2, any of its tensor types, quantized weights kept quantized),
   * a Hugging Face GPT-2 checkpoint folder (config.json, model.safetensors or a sharded index,
   * vocab.json, merges.txt), a hub id ('owner/name', or 'owner/name/FILE.gguf' for a GGUF file in that
   * repository), or a File or Blob of a GGUF file that the page holds (one a user picked or dropped).
   */
  static load(source: string | URL | Blob, options?: LoadOptions): Promise<GPT2>;
  /**
   * The GPU bytes a model would take in this browser (weights, KV cache, activations; on the CPU
   * backend, its memory), before its
   * weights are downloaded and before anything is allocated or compiled: `model` is a config.json
   * object, or a source as `load` takes it (a URL or hub id of a folder, whose config.json is read, or
   * of a GGUF file, or a File or Blob of one, whose header alone is read); an array of them is
   * answered in order. `options` are
   * load options (weights, maxTextureSize, tuning, hubUrl, revision, cache).
   */
  static gpuBytes(model: ModelToPlan, options?: LoadOptions): Promise<number>;
  static gpuBytes(models: ModelToPlan[], options?: LoadOptions): Promise<number[]>;
  /**
   * Where and on what a load with `options` would run, decided as a load decides and without loading
   * anything, as `model.mode` says them.
   */
  static plannedMode(options?: LoadOptions): Promise<Omit<RunMode, 'canvas'>>;
  /** Deletes every model file this origin keeps in the browser's cache. */
  static clearCache(): Promise<void>;
  /** The models this origin keeps in the browser's cache. */
  static cachedModels(): Promise<{ source: string; bytes: number }[]>;
  /** True on a phone or tablet, as the user agent tells them (where a tab is killed near 1.5 GB). */
  static isPhone(): boolean;
  /**
   * The URL a load of `source` with `options` (hubUrl, revision) fetches: a hub id becomes its
   * resolve URL, a folder ends in '/'. cachedModels() lists a cached model under it.
   */
  static resolveSource(source: string | URL, options?: Pick<LoadOptions, 'hubUrl' | 'revision'>): string;
  /** Live WebGL objects of all models of this page, in both modes (a leak check). */
  static liveGlObjects(): Promise<number>;

  readonly config: Readonly<GPT2Config>;
  /** Where the engine runs (a Worker or this thread), on which canvas, and why. */
  readonly mode: Readonly<RunMode>;
  tokenize(text: string, options?: TokenizeOptions): Promise<number[]>;
  decode(ids: ArrayLike<number>): Promise<string>;
  generate(
    prompt: string | ArrayLike<number>,
    options?: GenerateOptions,
  ): AsyncGenerator<GeneratedToken, void, undefined>;
  /** Last-position logits after running `ids` as a new sequence. */
  logits(ids: ArrayLike<number>, options?: LogitsOptions): Promise<Float32Array>;
  /** Attention probabilities of `layer` over the current sequence, run with the call's interventions. */
  attention(layer: number, options?: AttentionOptions): Promise<Attention>;
  /**
   * Perplexity of `text` (a string or token ids) in consecutive windows of `window` tokens (default:
   * the model's context), each a new sequence; every token but a window's first is scored. Ends the
   * current sequence; blocks the engine's thread (the worker, by default) while it reads back.
   */
  perplexity(text: string | ArrayLike<number>, options?: PerplexityOptions): Promise<Perplexity>;
  /**
   * The logit lens of `text` (a string or token ids), which becomes the current sequence: for each
   * layer l and position t, the `topK` (default 5) most likely next tokens of
   * softmax(lm_head(ln_f(the residual stream after block l))). The last layer's is the model's own.
   */
  lens(text: string | ArrayLike<number>, options?: LensOptions): Promise<Lens>;
  /** The residual stream after block `layer` (0-based) for `text`: tokens x n_embd. Ends the current sequence. */
  hiddenStates(text: string | ArrayLike<number>, options: HiddenStatesOptions): Promise<Float32Array>;
  stats(): Promise<ModelStats>;
  /**
   * The benchmark of `gpt2 bench`: prefill of `promptTokens`, then `newTokens` greedy steps timed as
   * generate() runs them (`prefill_ms`, `decode_ms_per_token`), then one at a time, each waiting for
   * its token (`decode_latency_ms`); `profile` adds `profile_ms_per_token` (ms per decode token of each pass) and `profile_prefill_ms`
   * (ms of each pass over the prompt), from a run of their own, timed by GPU timer queries where the context
   * has them, else by waiting per pass (`profile_source`), and `profile_matmuls`: per matmul kind
   * (`attn.c_attn`, `attn.c_proj`, `mlp.c_fc`, `mlp.c_proj`, `lm_head`) its passes' `ms_per_token`, the
   * `weights` a token reads and `g_weights_per_s`.
   */
  benchmark(options?: BenchmarkOptions): Promise<Record<string, unknown>>;
  /** True after the browser dropped this model's WebGL context. */
  readonly contextLost: boolean;
  /** Loses the WebGL context as a browser under memory pressure would (to test a recovery path). */
  simulateContextLoss(): Promise<void>;
  /** Loads the model again (same source and options, fresh canvas) after a lost context. */
  restore(options?: { onProgress?: (progress: LoadProgress) => void; signal?: AbortSignal }): Promise<void>;
  /** Frees every GL object of this model; safe to call twice. */
  dispose(): Promise<void>;
}

export default GPT2;
