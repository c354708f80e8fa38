// Typed use of gpt2.d.ts, checked by `tsc --noEmit` (tests/tools/types.test.mjs): every call a
// user makes compiles, and the mistakes marked @ts-expect-error do not.
import GPT2Default, {
  BusyError,
  ContextLostError,
  DisposedError,
  GPT2,
  type Attention,
  type GenerateOptions,
  type Intervention,
  type Lens,
  type LoadOptions,
  type ModelStats,
  type Perplexity,
} from '../../web/module/gpt2.js';

export async function typedUse(output: HTMLElement): Promise<void> {
  const controller = new AbortController();
  const options: LoadOptions = {
    weights: 'fp32',
    maxTextureSize: 4096,
    worker: false,
    canvas: new OffscreenCanvas(1, 1),
    tuning: { halfPairs: true, splitTexels: 8 },
    onProgress: ({ loaded, total }) => {
      output.textContent = `${loaded} / ${total}`;
    },
    signal: controller.signal,
  };
  const model: GPT2 = await GPT2.load(new URL('https://example.com/gpt2/'), options);
  const fromHub: GPT2 = await GPT2.load('openai-community/gpt2', {
    hubUrl: 'https://hub.example.com',
    revision: 'v1',
    maxGpuBytes: 1.5e9,
  });
  const planned: number = await GPT2.gpuBytes(
    { n_embd: 768, n_layer: 12, n_head: 12, n_positions: 1024, vocab_size: 50257 },
    { weights: 'int8' },
  );
  const plans: number[] = await GPT2.gpuBytes([{ n_embd: 768, n_layer: 12, n_head: 12 }], {
    tuning: { maxColorBits: 512 },
  });
  const fromFiles: number[] = await GPT2.gpuBytes(
    ['QuantFactory/gpt2-GGUF/gpt2.Q4_K_M.gguf', new URL('https://example.com/gpt2/'), { n_embd: 768 }],
    { hubUrl: 'https://hub.example.com' },
  );
  const phone: boolean = GPT2.isPhone();
  const picked = new File([new Uint8Array(8)], 'gpt2.Q4_K_M.gguf');
  const fromFile: GPT2 = await GPT2.load(picked, { worker: true });
  const pickedBytes: number = await GPT2.gpuBytes(picked);
  void pickedBytes;
  await fromFile.dispose();
  void planned;
  void plans;
  void fromFiles;
  void phone;
  await fromHub.dispose();
  const same: typeof GPT2 = GPT2Default;
  void same;
  const ids: number[] = await model.tokenize('Hello', { allowSpecial: false });
  const text: string = await model.decode(ids);
  const settings: GenerateOptions = {
    maxNewTokens: 8,
    temperature: 0.8,
    topK: 40,
    topP: 0.95,
    repetitionPenalty: 1.1,
    seed: 1,
    stop: ['\n'],
    stopAtEndOfText: true,
    slideWindow: false,
    signal: controller.signal,
  };
  for await (const token of model.generate(text, settings)) output.textContent += `${token.id}:${token.text}`;
  for await (const { id } of model.generate(Int32Array.from(ids))) void id;
  const logits: Float32Array = await model.logits(ids);
  const attention: Attention = await model.attention(0);
  const heads: number = attention.heads;
  const stats: ModelStats = await model.stats();
  const renderer: string = stats.renderer;
  const result: Record<string, unknown> = await model.benchmark({ promptTokens: 32, newTokens: 16, profile: true });
  const lost: boolean = model.contextLost;
  const where: string = model.mode.worker
    ? 'a Worker'
    : `this thread, on an ${model.mode.canvas}: ${model.mode.reason}`;
  void where;
  if (lost) await model.restore({ onProgress: () => {}, signal: controller.signal });
  await model.simulateContextLoss();
  const live: number = await GPT2.liveGlObjects();
  const layers: number = model.config.n_layer;
  const scored: Perplexity = await model.perplexity('Some text.', { window: 64 });
  const nll: number = (await model.perplexity([464, 318, 257])).nll;
  const quantized = await GPT2.load('/m/', { weights: 'int8' });
  const lens: Lens = await model.lens('The cat', { topK: 3 });
  const firstId: number = lens.ids[0];
  const states: Float32Array = await model.hiddenStates(ids, { layer: 1 });
  // Activation patching: another prompt's residual stream at one position, with a head ablated.
  const patched: Intervention[] = [
    { patch: { layer: 1, position: 2, vector: states.subarray(0, model.config.n_embd) } },
    { ablateHead: { layer: 0, head: 3 } },
    { steer: { layer: 0, vector: [0.5, -1], scale: 2 } },
    { ablateNeurons: { layer: 1, neurons: [7] } },
  ];
  await model.logits(ids, { interventions: patched });
  await model.attention(1, { interventions: patched });
  for await (const { id } of model.generate('The', { interventions: patched })) void id;
  for await (const { captured } of model.generate('The', { lensTopK: 3, attentionLayer: 0 }))
    for (const { position, lens: live, attention: row } of captured ?? []) void [position, live?.ids[0], row?.[0]];
  void [logits, heads, renderer, result, live, layers, scored, nll, quantized, firstId, states, await model.lens(ids)];
  await model.dispose();
  // What a page does with each failure it can act on.
  const next: string = await model.logits(ids).then(
    () => 'ok',
    (error: unknown) => {
      if (error instanceof ContextLostError) return `restore: ${error.message}`;
      if (error instanceof DisposedError) return 'load the model again';
      if (error instanceof BusyError) return 'abort the generation first';
      return String(error);
    },
  );
  const name: 'ContextLostError' = new ContextLostError().name;
  void [next, name];

  // @ts-expect-error: weights are fp16, fp32, int8 or int4
  await GPT2.load('/m/', { weights: 'fp8' });
  // @ts-expect-error: tokenize returns a Promise
  const notAwaited: number[] = model.tokenize('x');
  void notAwaited;
  // @ts-expect-error: unknown generate option
  model.generate('x', { maxTokens: 3 });
  // @ts-expect-error: a window is a number of tokens
  model.perplexity('x', { window: '64' });
  // @ts-expect-error: an intervention names one kind
  model.logits(ids, { interventions: [{ ablateHead: { layer: 0 } }] });
  // @ts-expect-error: hiddenStates needs a layer
  model.hiddenStates('x');
  // @ts-expect-error: the config is read-only
  model.config.n_layer = 3;
  // @ts-expect-error: each error class has its own name
  const wrongName: 'BusyError' = new DisposedError().name;
  void wrongName;
}
