// The engine on the thread that runs it: the page (GPT2.load with worker: false), the module's own
// Worker (gpt2-worker.js), or a user's worker. Every method is async and never blocks on the GPU:
// prefill runs a chunk per turn of the event loop and readback waits on a fence (Generation::poll
// in C++), so the thread keeps handling events and an abort takes effect within one chunk.
import { abortError, BusyError, ContextLostError, DisposedError } from './gpt2-errors.js';
import { sleep, yieldToEventLoop } from './gpt2-event-loop.js';
import { loadModel } from './gpt2-loader.js';
import { loadedModule, nativeModule, nativeOptions } from './gpt2-native.js';
import { isSource, plannedSourceBytes } from './gpt2-plan.js';
import { Surface } from './gpt2-surface.js';

export class Engine {
  // `source`: an absolute http(s) URL of a GGUF file or a Hugging Face folder (ending in '/'), or a
  // Blob of a GGUF file. `options`: the load options resolved against
  // options.json (gpt2-option-check.js). `canvas`: the caller's canvas, else the engine makes its own.
  // `onContextLost` is called when the browser drops the model's WebGL context.
  // An abort at any time before the returned promise settles rejects it with the signal's reason
  // (abortError), freeing what was loaded: the loader checks the signal between tensors, and an
  // abort from the load's last progress event, which the loader no longer checks, is caught here.
  static async load(source, options, { onProgress, signal, canvas, onContextLost } = {}) {
    if (signal?.aborted) throw abortError(signal);
    const M = await nativeModule(options.wasmUrl);
    if (signal?.aborted) throw abortError(signal);
    const surface = Surface.for(M, options, canvas, onContextLost);
    let loaded;
    try {
      loaded = await loadModel(M, surface.target, source, options, { onProgress, signal });
    } catch (error) {
      surface.release();
      throw signal?.aborted ? abortError(signal) : surface.explain(error);
    }
    const engine = new Engine(loaded.model, loaded.config, surface);
    if (signal?.aborted) {
      await engine.dispose();
      throw abortError(signal);
    }
    return engine;
  }

  // The GPU bytes each of `models` would take with `options` (the load options, resolved), planned on a
  // canvas made for it and released at once: a model is a config.json object, or the absolute URL of
  // a folder or a GGUF file, or a Blob of a GGUF file, whose config.json or header is read
  // (gpt2-plan.js).
  static async plannedGpuBytes(models, options) {
    const M = await nativeModule(options.wasmUrl);
    const surface = Surface.for(M, options, null);
    const native = nativeOptions(options);
    try {
      const bytes = [];
      for (const model of models)
        bytes.push(
          isSource(model)
            ? await plannedSourceBytes(M, surface.target, model, native, options)
            : M.plannedGpuBytes(surface.target, JSON.stringify(model), native),
        );
      return bytes;
    } catch (error) {
      throw surface.explain(error);
    } finally {
      surface.canvas?.getContext('webgl2')?.getExtension('WEBGL_lose_context')?.loseContext();
      surface.release();
    }
  }

  // The load and generate options (resolved) as the engine reads them, written back: what a test
  // compares with what it sent, to see that every option crosses the seam.
  static async optionsSeen(load, generate) {
    const M = await nativeModule(load.wasmUrl);
    return M.optionsSeen(nativeOptions(load), generate);
  }

  // Live GL objects of every model on this thread; 0 before any was loaded here.
  static async liveGlObjects() {
    const M = loadedModule();
    return M ? (await M).liveGlObjects() : 0;
  }

  constructor(model, config, surface) {
    this._model = model;
    this._pause = model.softwareRenderer() ? sleep : yieldToEventLoop;
    this._surface = surface;
    this._running = null; // { signal, done: Promise } of the generation under way
    this._queue = Promise.resolve();
    this.config = config;
  }

  // The kind of canvas the engine renders with: OffscreenCanvas or HTMLCanvasElement; null on the CPU.
  get canvasKind() {
    return this._surface.canvas?.constructor.name ?? null;
  }

  get contextLost() {
    return this._surface.lost || this._model?.contextLost() === true;
  }

  _check() {
    if (!this._model) throw new DisposedError();
    if (this.contextLost) throw new ContextLostError();
  }

  // Refuses while a generation that was not aborted runs (a call from inside a generation's loop
  // would otherwise wait for it forever). Checked when a call starts, before it waits for anything.
  _refuseWhileGenerating() {
    this._check();
    if (this._running && !this._running.signal?.aborted) throw new BusyError();
  }

  // Runs `work` after the calls before it (an aborted generation included).
  async _exclusive(work) {
    this._refuseWhileGenerating();
    const turn = this._queue.then(async () => {
      this._check();
      return work();
    });
    this._queue = turn.catch(() => {});
    return turn;
  }

  async tokenize(text, allowSpecial = true) {
    this._check();
    return Array.from(this._model.tokenize(String(text), allowSpecial));
  }

  async decode(ids) {
    this._check();
    return this._model.decode(Array.from(ids));
  }

  // Streams { id, text[, captured] } for `prompt` (text or ids) with the generate options resolved against
  // options.json. An abort ends the iteration with the signal's reason before the next token or
  // prefill chunk. The generation claims the model as its iteration starts, before it waits for the
  // calls before it, so that a second generation started at once is refused as a later one is.
  async *generate(prompt, options, signal) {
    this._refuseWhileGenerating();
    let finished;
    const running = {
      signal,
      done: new Promise((resolve) => {
        finished = resolve;
      }),
    };
    const before = this._queue;
    this._running = running;
    this._queue = running.done;
    let active = false;
    try {
      await before;
      this._check();
      const ids = typeof prompt === 'string' ? this._model.tokenize(prompt, true) : Array.from(prompt);
      if (signal?.aborted) throw abortError(signal);
      this._model.setInterventions(options.interventions);
      this._model.beginGeneration(ids, options);
      active = true;
      for (;;) {
        await this._pause();
        if (signal?.aborted) throw abortError(signal);
        this._check();
        const step = this._model.pollGeneration();
        if (step.kind === 'pending') continue;
        if (step.kind === 'done') {
          active = false;
          return;
        }
        yield step.captured
          ? { id: step.id, text: step.text, captured: step.captured }
          : { id: step.id, text: step.text };
      }
    } finally {
      if (active && this._model && !this.contextLost) this._model.cancelGeneration();
      if (this._running === running) this._running = null;
      finished();
    }
  }

  // Logits of the last position after running `ids` as a new sequence. Each method that runs the
  // model first sets the call's interventions (checked: gpt2-interventions.js); the C++ engine ends
  // the sequence where they change what runs.
  logits(ids, interventions) {
    return this._exclusive(async () => {
      this._model.setInterventions(interventions);
      this._model.beginLogits(Array.from(ids));
      for (;;) {
        await this._pause();
        this._check();
        if (this._model.pollLogits()) return this._model.takeLogits();
      }
    });
  }

  attention(layer, interventions) {
    return this._exclusive(async () => this._model.attention(layer, interventions));
  }

  perplexity(input, window, interventions) {
    return this._exclusive(async () => {
      this._model.setInterventions(interventions);
      return this._model.perplexity(input, window);
    });
  }

  lens(input, topK, interventions) {
    return this._exclusive(async () => {
      this._model.setInterventions(interventions);
      return this._model.lens(input, topK);
    });
  }

  hiddenStates(input, layer, interventions) {
    return this._exclusive(async () => {
      this._model.setInterventions(interventions);
      return this._model.hiddenStates(input, layer);
    });
  }

  // Counters only: allowed while a generation runs.
  async stats() {
    this._check();
    return this._model.stats();
  }

  // Polled as generate() is, a turn of the event loop between polls: the decode runs ahead of its
  // readback as generation's does, and a profile's GPU timer results arrive (only after the task).
  benchmark({ promptTokens, newTokens, profile, interventions, sampling }) {
    return this._exclusive(async () => {
      this._model.setInterventions(interventions);
      this._model.startBench(promptTokens, newTokens, profile, sampling);
      for (;;) {
        await this._pause();
        this._check();
        if (this._model.benchReady()) return this._model.takeBench();
      }
    });
  }

  // Loses the WebGL context as a browser under memory pressure would (WEBGL_lose_context): for
  // testing an application's recovery path.
  async simulateContextLoss() {
    this._check();
    this._surface.loseContext();
  }

  async dispose() {
    if (!this._model) return;
    this._model.delete();
    this._model = null;
    this._surface.release();
  }
}
