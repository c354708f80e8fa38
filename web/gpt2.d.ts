// Types of gpt2.js. Reference: docs/api.md.

export interface LoadProgress {
  /** Bytes of weight files received so far. */
  loaded: number;
  /** Bytes of all weight files (Content-Length, or the end of the last tensor). */
  total: number;
}

export interface LoadOptions {
  onProgress?: (progress: LoadProgress) => void;
  /** Texture format of the weight matrices. Activations are always fp32. Default 'fp16'. */
  weights?: 'fp16' | 'fp32';
  /** Pretend the GPU allows no larger textures (forces folded layouts); 0 = the GPU's limit. */
  maxTextureSize?: number;
  /** Override the engine's choices for this GPU (benchmarks, tests, a misbehaving driver). */
  tuning?: Tuning;
  /** Canvas to create the WebGL2 context on; by default a hidden one is made and removed on dispose. */
  canvas?: HTMLCanvasElement;
  signal?: AbortSignal;
}

export interface Tuning {
  /** fp16 weights as row pairs in RGBA32UI textures (true) or as RGBA16F (false). */
  halfPairs?: boolean;
  /** Split-K: input texels per blended instance of a matmul (0: one loop; > 0 needs EXT_float_blend). */
  splitTexels?: number;
}

export interface GenerateOptions {
  /** Default 50. */
  maxNewTokens?: number;
  /** 0 (default) is greedy; > 0 samples. */
  temperature?: number;
  /** Keep the k most likely tokens (k >= 1); unset disables top-k. */
  topK?: number;
  /** Nucleus sampling threshold in (0, 1]. Default 1. */
  topP?: number;
  /** Hugging Face's repetition penalty (> 0, 1 disables). */
  repetitionPenalty?: number;
  /** The same seed gives the same tokens. */
  seed?: number;
  /** Stop strings; the text stops before them. */
  stop?: string | string[];
  /** Stop at <|endoftext|>. Default true. */
  stopAtEndOfText?: boolean;
  /** When the context is full, keep its last half and go on (default true); false: an error. */
  slideWindow?: boolean;
  /** Aborting stops generation before the next token; the iteration throws an AbortError. */
  signal?: AbortSignal;
}

export interface GeneratedToken {
  id: number;
  /** Complete UTF-8 text this token adds (may be empty while a character is unfinished). */
  text: string;
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

export interface Attention {
  heads: number;
  tokens: number;
  /** heads x tokens x tokens probabilities, row-major: data[(h * T + query) * T + key]. */
  data: Float32Array;
}

export interface ModelStats {
  /** Bytes of every texture of this model (weights, KV cache, activations). */
  gpuBytes: number;
  readbackBytes: number;
  passDraws: number;
  renderer: string;
  maxTextureSize: number;
  /** Size of the WebAssembly heap (it grows to hold the largest tensor while loading, never the file). */
  wasmHeapBytes: number;
}

export declare class GPT2 {
  /** Loads a Hugging Face GPT-2 checkpoint folder (config.json, model.safetensors, vocab.json, merges.txt). */
  static load(source: string | URL, options?: LoadOptions): Promise<GPT2>;
  /** Live WebGL objects of all models on the page. */
  static liveGlObjects(): Promise<number>;

  readonly config: Readonly<GPT2Config>;
  tokenize(text: string, options?: { allowSpecial?: boolean }): number[];
  decode(ids: ArrayLike<number>): string;
  generate(prompt: string | ArrayLike<number>, options?: GenerateOptions): AsyncGenerator<GeneratedToken, void, undefined>;
  /** Last-position logits after running `ids` as a new sequence. */
  logits(ids: ArrayLike<number>): Promise<Float32Array>;
  /** Attention probabilities of `layer` over the current sequence. */
  attention(layer: number): Promise<Attention>;
  stats(): ModelStats;
  /**
   * The benchmark of `gpt2 bench`: prefill of `promptTokens`, then `newTokens` greedy steps;
   * `profile` adds `profile_ms_per_token` (ms per decode token of each pass, from a run that waits per pass).
   */
  benchmark(options?: { promptTokens?: number; newTokens?: number; profile?: boolean }): Record<string, unknown>;
  /** True after the browser dropped this model's WebGL context. */
  readonly contextLost: boolean;
  /** Loads the model again (same source and options, fresh canvas) after a lost context. */
  restore(options?: { onProgress?: (progress: LoadProgress) => void; signal?: AbortSignal }): Promise<void>;
  dispose(): void;
}

export default GPT2;
