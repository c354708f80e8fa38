// The engine on the thread that runs it: the page (GPT2.load with worker: false), the module's own
// Worker (gpt2-worker.js), or a user's worker. Every method is async and never blocks on the GPU:
// prefill runs a chunk per turn of the event loop and readback waits on a fence (Generation::poll
// in C++), so the thread keeps handling events and an abort takes effect within one chunk.
import createGpt2Module from './gpt2-wasm.js';
import { ModelFiles } from './gpt2-cache.js';
import { abortError, BusyError, ContextLostError, DisposedError } from './gpt2-errors.js';
import { Progress, streamModelFile, streamSafetensors } from './gpt2-loader.js';
import { probeOffscreenCanvas } from './gpt2-webgl-probe.js';

let modulePromise = null;
// The wasm module of this thread, made on first use. `wasmUrl` (absolute) names the .wasm where a
// bundler left it elsewhere; unset, the glue finds it beside itself.
function nativeModule(wasmUrl) {
  // The module throws the class of a lost context itself (bindings.cpp): it is handed the class here.
  const locate = wasmUrl ? { locateFile: (file, folder) => (file.endsWith('.wasm') ? wasmUrl : folder + file) } : {};
  modulePromise ??= createGpt2Module({ ContextLostError, ...locate }).catch((error) => {
    modulePromise = null;
    throw new Error(`gpt2-wasm.wasm (${wasmUrl ?? 'beside gpt2-wasm.js'}) could not be loaded: ${error?.message ?? error}; ` +
      'where a bundler did not copy it there, pass its URL as the wasmUrl option (docs/api.md, "Bundlers")');
  });
  return modulePromise;
}

// Lets the thread handle events (messages, input, an AbortSignal's listeners) between polls,
// without setTimeout's clamping. One channel serves every yield: a port with a listener stays alive
// until closed, so a channel per poll would pile up.
const ticks = new MessageChannel();
const waiting = [];
ticks.port1.onmessage = () => waiting.shift()();
function yieldToEventLoop() {
  return new Promise((resolve) => {
    waiting.push(resolve);
    ticks.port2.postMessage(null);
  });
}

// Between polls of a software renderer (SwiftShader, llvmpipe): a timer, so that this thread does
// not spin on a CPU core the renderer needs; its steps take hundreds of milliseconds, so a timer's
// few milliseconds of latency do not show. A GPU answers within a few milliseconds: polls follow
// each other as fast as the event loop allows.
function sleep() {
  return new Promise((resolve) => setTimeout(resolve, 1));
}

// The load options as the C++ side reads them (platform/web/js_options.h): every option of
// options.json by its name, the tuning's beside the others, null where unset.
function nativeOptions(options) {
  return { ...options, ...options.tuning };
}

let canvasCounter = 0;
// Whether an OffscreenCanvas on this thread has WebGL2, probed once: what a browser offers does not
// change while a page lives.
let offscreenWebgl2 = null;

// The canvas the engine makes for itself on this thread: an OffscreenCanvas where that gives WebGL2
// with float render targets, else, in a page, a hidden page canvas (WebKit gives OffscreenCanvas no
// WebGL2 context). Without a page, the OffscreenCanvas's own failure is the load's error.
function ownCanvas() {
  if (typeof document === 'undefined') {
    if (typeof OffscreenCanvas === 'undefined') throw new Error('this thread has no page and no OffscreenCanvas to render on; pass { canvas }');
    return new OffscreenCanvas(1, 1);
  }
  offscreenWebgl2 ??= probeOffscreenCanvas().ok;
  if (offscreenWebgl2) return new OffscreenCanvas(1, 1);
  const canvas = Object.assign(document.createElement('canvas'), { width: 1, height: 1, hidden: true });
  return (document.body ?? document.documentElement).appendChild(canvas);
}

// The canvas a model renders with, registered for the C++ side under a name of its own: the
// caller's, else one of its own (ownCanvas).
class Surface {
  constructor(M, canvas, onLost) {
    this.M = M;
    this.owned = !canvas;
    this.canvas = canvas ?? ownCanvas();
    this.target = `!gpt2-canvas-${++canvasCounter}`;
    M.specialHTMLTargets[this.target] = this.canvas;
    this.lost = false;
    this.onLost = (event) => {
      event.preventDefault();
      this.lost = true;
      onLost?.();
    };
    this.canvas.addEventListener('webglcontextlost', this.onLost);
    // A context the browser refuses comes with its reason in this event (Firefox: "AllowWebgl2:false
    // restricts context creation on this system"), not in the failed getContext call.
    this.refusal = '';
    this.onRefused = (event) => { this.refusal = (event.statusMessage ?? '').replace(/\s+/g, ' ').trim(); };
    this.canvas.addEventListener('webglcontextcreationerror', this.onRefused);
  }
  // The error of a failed load, with the browser's own reason when it refused the context.
  explain(error) {
    if (this.refusal && error instanceof Error && /WebGL2 is not available/.test(error.message))
      error.message += `. The browser said: "${this.refusal}"`;
    return error;
  }
  loseContext() {
    const lose = this.canvas.getContext('webgl2')?.getExtension('WEBGL_lose_context');
    if (!lose) throw new Error('this context cannot simulate a loss (no WEBGL_lose_context)');
    lose.loseContext();
  }
  release() {
    this.canvas.removeEventListener('webglcontextlost', this.onLost);
    this.canvas.removeEventListener('webglcontextcreationerror', this.onRefused);
    delete this.M.specialHTMLTargets[this.target];
    if (this.owned && this.canvas.remove) this.canvas.remove();
  }
}

export class Engine {
  // `source`: an absolute http(s) URL of a packed file or a Hugging Face folder (ending in '/').
  // `options`: the load options resolved against options.json (gpt2-option-check.js).
  // `onContextLost` is called when the browser drops the model's WebGL context.
  static async load(source, options, { onProgress, signal, canvas, onContextLost } = {}) {
    let files = new ModelFiles({ cache: options.cache, signal, warn: (text) => progress.warn(text) });
    let progress = new Progress(onProgress, files.cachedUrls);
    await files.open();
    try {
      return await Engine.loadFiles(source, options, files, progress, { signal, canvas, onContextLost });
    } catch (error) {
      if (!error.cachedFile || signal?.aborted) throw error;
      // A file read from the cache failed the load (a packed payload's checksum, say): drop what
      // came from the cache and fetch everything again.
      await files.dropCached();
      const warn = files.warn;
      files = new ModelFiles({ cache: options.cache, readCache: false, signal, warn });
      progress = new Progress(onProgress, files.cachedUrls);
      await files.open();
      return Engine.loadFiles(source, options, files, progress, { signal, canvas, onContextLost });
    }
  }

  // The GPU bytes a model of each of `configs` (config.json objects) would take with `options` (the
  // load options, resolved), planned on a canvas made for it and released at once.
  static async plannedGpuBytes(configs, options) {
    const M = await nativeModule(options.wasmUrl);
    const surface = new Surface(M, null);
    try {
      return configs.map((config) => M.plannedGpuBytes(surface.target, JSON.stringify(config), nativeOptions(options)));
    } finally {
      surface.canvas.getContext('webgl2')?.getExtension('WEBGL_lose_context')?.loseContext();
      surface.release();
    }
  }

  // The load and generate options (resolved) as the engine reads them, written back: what a test
  // compares with what it sent, to see that every option crosses the seam.
  static async optionsSeen(load, generate) {
    const M = await nativeModule(load.wasmUrl);
    return M.optionsSeen(nativeOptions(load), generate);
  }

  static async loadFiles(source, options, files, progress, { signal, canvas, onContextLost }) {
    const M = await nativeModule(options.wasmUrl);
    const surface = new Surface(M, canvas, onContextLost);
    const native = nativeOptions(options);
    let model = null;
    // Marks a failure while reading a file that came from the cache, which load() then fetches again.
    const reading = async (url, work) => {
      try {
        return await work();
      } catch (error) {
        if (files.cachedUrls.has(url) && error instanceof Error) error.cachedFile = url;
        throw error;
      }
    };
    try {
      let vocab = '';
      let merges = '';
      if (!source.endsWith('/')) {
        const response = await files.response(source);
        progress.expect(source, response);
        // A GGUF or packed file: one file with the config, the tokenizer and the weights.
        const opened = (made) => {
          model = made;
          if (model) progress.plan(model.gpuBytes());
          return model;
        };
        await reading(source, () => streamModelFile(M, source, response, progress, {
          openGguf: (ptr, length, fileSize) => opened(M.openGguf(surface.target, ptr, length, fileSize, native, source)),
          openPacked: (ptr, length, fileSize) => opened(M.openPacked(surface.target, ptr, length, fileSize, native, source)),
        }, signal));
      } else {
        const url = (name) => new URL(name, source).href;
        const [config, vocabText, mergesText] = await Promise.all([
          files.text(url('config.json')),
          files.text(url('vocab.json'), { optional: true }),
          files.text(url('merges.txt'), { optional: true }),
        ]);
        if ((vocabText === null) !== (mergesText === null)) throw new Error(`${source}: has only one of vocab.json and merges.txt`);
        vocab = vocabText ?? '';
        merges = mergesText ?? '';
        model = await reading(url('config.json'), async () => M.createModel(surface.target, config, native));
        progress.plan(model.gpuBytes());
        // One file, or the shards of model.safetensors.index.json; all opened first so the total is known.
        const weightFiles = [];
        const single = await files.response(url('model.safetensors'), { optional: true });
        if (single) {
          weightFiles.push([url('model.safetensors'), single]);
        } else {
          const indexUrl = url('model.safetensors.index.json');
          const index = JSON.parse(await files.text(indexUrl));
          for (const shard of new Set(Object.values(index.weight_map ?? {}))) {
            if (typeof shard !== 'string' || shard.includes('/')) throw new Error(`${indexUrl}: bad shard name ${shard}`);
            weightFiles.push([url(shard), await files.response(url(shard))]);
          }
        }
        weightFiles.forEach(([fileUrl, response]) => progress.expect(fileUrl, response));
        for (const [fileUrl, response] of weightFiles) {
          if (signal?.aborted) throw abortError(signal);
          await reading(fileUrl, () => streamSafetensors(M, fileUrl, response, progress, () => model, signal));
        }
      }
      // The programs have been linking since the model was made; wait for them without blocking.
      while (!model.programsLinked()) await sleep();
      const config = model.finishLoad(vocab, merges, source);
      await files.settle();
      progress.report();
      return new Engine(model, config, surface);
    } catch (error) {
      model?.delete();
      surface.release();
      throw surface.explain(error);
    }
  }

  // Live GL objects of every model on this thread; 0 before any was loaded here.
  static async liveGlObjects() {
    return modulePromise ? (await modulePromise).liveGlObjects() : 0;
  }

  constructor(model, config, surface) {
    this._model = model;
    this._pause = model.softwareRenderer() ? sleep : yieldToEventLoop;
    this._surface = surface;
    this._running = null;  // { signal, done: Promise } of the generation under way
    this._queue = Promise.resolve();
    this.config = config;
  }

  // The kind of canvas the engine renders with: OffscreenCanvas or HTMLCanvasElement.
  get canvasKind() {
    return this._surface.canvas.constructor.name;
  }

  get contextLost() {
    return this._surface.lost || (this._model !== null && this._model.contextLost());
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
    const running = { signal, done: new Promise((resolve) => { finished = resolve; }) };
    const before = this._queue;
    this._running = running;
    this._queue = running.done;
    let active = false;
    try {
      await before;
      this._check();
      const ids = typeof prompt === 'string' ? this._model.tokenize(prompt, true) : Array.from(prompt);
      if (signal?.aborted) throw abortError(signal);
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
        yield step.captured ? { id: step.id, text: step.text, captured: step.captured } : { id: step.id, text: step.text };
      }
    } finally {
      if (active && this._model && !this.contextLost) this._model.cancelGeneration();
      if (this._running === running) this._running = null;
      finished();
    }
  }

  // Logits of the last position after running `ids` as a new sequence.
  logits(ids) {
    return this._exclusive(async () => {
      this._model.beginLogits(Array.from(ids));
      for (;;) {
        await this._pause();
        this._check();
        if (this._model.pollLogits()) return this._model.takeLogits();
      }
    });
  }

  attention(layer) {
    return this._exclusive(async () => this._model.attention(layer));
  }

  perplexity(input, window) {
    return this._exclusive(async () => this._model.perplexity(input, window));
  }

  lens(input, topK) {
    return this._exclusive(async () => this._model.lens(input, topK));
  }

  hiddenStates(input, layer) {
    return this._exclusive(async () => this._model.hiddenStates(input, layer));
  }

  // Counters only: allowed while a generation runs.
  async stats() {
    this._check();
    return this._model.stats();
  }

  benchmark({ promptTokens, newTokens, profile }) {
    return this._exclusive(async () => {
      this._model.startBench(promptTokens, newTokens, profile);
      // A profile's GPU timer results arrive only after this task has returned to the event loop.
      while (!this._model.benchReady()) await sleep();
      return this._model.takeBench();
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
