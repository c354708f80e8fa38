// GPT-2 in the browser over WebGL2 fragment shaders: the ES module other sites import.
// API reference: docs/api.md. Types: gpt2.d.ts. Options and their defaults: src/options.json.
//
// By default the engine runs in a module Worker on an OffscreenCanvas (gpt2-remote.js, gpt2-worker.js)
// and this thread stays free; { worker: false } runs it here (gpt2-engine.js, imported only then, so a
// page whose engine runs in the Worker does not download the engine's glue twice). Both have the same
// methods, so this class does not care which it holds. Its request/response methods (tokenize,
// logits, lens, ...) and their documentation come from the table in gpt2-methods.js.
import { cachedModels, clearCache } from './gpt2-cache.js';
import { abortError, ContextLostError, DisposedError } from './gpt2-errors.js';
import { defineMethods } from './gpt2-methods.js';
import { resolveOptions } from './gpt2-option-check.js';
import { RemoteEngine } from './gpt2-remote.js';
import { host } from './gpt2-host.js';
import { probeThisThread } from './gpt2-webgl-probe.js';

// A Hugging Face hub id: owner/name, nothing else (a relative folder is written ./owner/name or
// with a trailing slash), optionally followed by the path of a GGUF file in that repository.
const HUB_ID = /^([A-Za-z0-9][\w.-]*\/[A-Za-z0-9][\w.-]*)((?:\/[\w.-]+)*\/[\w.-]+\.gguf)?$/;

// A model file the page holds (a File a user picked or dropped, or any Blob): loaded as it is.
function isBlob(source) {
  return typeof Blob !== 'undefined' && source instanceof Blob;
}

// `source` as an absolute URL: a single-file model (GGUF) keeps its name; a folder ends in
// '/'; a hub id becomes its resolve folder, or that folder's GGUF file, which the hub may redirect
// to another origin (fetch follows). A Blob stays as it is.
function modelUrl(source, { hubUrl, revision }) {
  if (isBlob(source)) return source;
  const text = String(source);
  const hubId = HUB_ID.exec(text);
  if (hubId) {
    const hub = new URL(hubUrl);
    if (hub.protocol !== 'http:' && hub.protocol !== 'https:')
      throw new Error(`hubUrl: ${hubUrl} is not an http(s) URL`);
    const file = (hubId[2] ?? '/').slice(1).split('/').map(encodeURIComponent).join('/');
    return new URL(`${hub.href.replace(/\/$/, '')}/${hubId[1]}/resolve/${encodeURIComponent(revision)}/${file}`).href;
  }
  const file = host.fileUrl(source);
  if (file) return file;
  const base = globalThis.document?.baseURI ?? globalThis.location?.href;
  const target = new URL(text, base);
  if (target.protocol !== 'http:' && target.protocol !== 'https:')
    throw new Error(`${source}: only http(s) model URLs are supported`);
  const singleFile = !target.pathname.endsWith('/') && target.pathname.split('/').pop().includes('.');
  if (!singleFile && !target.pathname.endsWith('/')) target.pathname += '/';
  return target.href;
}

// A phone or tablet, as the page's navigator tells it (iPadOS presents itself as a Mac with touch):
// there Apple GPUs keep textures to 4096 (docs/architecture.md, "Textures on phones").
function isPhone() {
  const agent = globalThis.navigator?.userAgent ?? '';
  return (
    /iPhone|iPad|iPod|Android/.test(agent) || (/Macintosh/.test(agent) && globalThis.navigator?.maxTouchPoints > 1)
  );
}

// The engine on this thread, loaded on first use.
let localEngine = null;
function engineHere() {
  localEngine ??= import('./gpt2-engine.js').then(({ Engine }) => Engine);
  return localEngine;
}

// `url` as an absolute URL, resolved against the page (the worker that reads it has another base).
function absolute(name, url) {
  if (url === null) return null;
  try {
    return new URL(url, globalThis.document?.baseURI ?? globalThis.location?.href).href;
  } catch {
    throw new Error(`${name}: ${url} is not a URL`);
  }
}

function loadOptions(options) {
  const resolved = resolveOptions('load', options, { passThrough: ['tuning', 'onProgress', 'signal', 'canvas'] });
  resolved.tuning = resolveOptions('tuning', options.tuning, { prefix: 'tuning.' });
  resolved.workerUrl = absolute('workerUrl', resolved.workerUrl);
  resolved.wasmUrl = absolute('wasmUrl', resolved.wasmUrl);
  resolved.phone = isPhone();
  if (resolved.worker && resolved.canvas) {
    throw new Error(
      'canvas: the engine renders on its own OffscreenCanvas in worker mode; ' +
        'leave worker unset or pass worker: false to render on this canvas',
    );
  }
  return resolved;
}

const warned = new Set();

// Logs a fallback of `kind` ('cpu', 'thread') once per page with console.warn; returns `warning` for
// the load's warning event, which every load that falls back sends.
function warnOnce(kind, warning) {
  if (!warned.has(kind)) console.warn(`gpt2-webgl: ${warning}`);
  warned.add(kind);
  return warning;
}

// What runs the model: { backend: 'webgl' | 'cpu', reason[, warning] }. `webgl` is the probe of the
// context the engine would get (gpt2-webgl-probe.js). 'auto' takes WebGL2 where a GPU draws it, and
// the CPU where the browser gives no context or a software rasterizer's, saying why.
function chooseBackend(backend, webgl) {
  if (backend !== 'auto') return { backend, reason: `backend: ${backend}` };
  if (webgl.ok && !webgl.software) return { backend: 'webgl', reason: `WebGL2 on ${webgl.renderer || 'the GPU'}` };
  const reason = webgl.ok
    ? `WebGL2 here is a software rasterizer (${webgl.renderer}), slower than the CPU backend`
    : `no usable WebGL2: ${webgl.reason}`;
  return { backend: 'cpu', reason, warning: warnOnce('cpu', `the model runs on the CPU: ${reason}`) };
}

// `weights`, given to a load that runs on the CPU: it chooses WebGL2's texture formats, which the CPU
// backend has no use for (said, not ignored in silence).
function textureOptionsOnTheCpu(options, backend) {
  if (backend !== 'cpu' || options.weights === undefined) return [];
  return ["weights chooses WebGL2's texture formats; the CPU backend keeps the weights as the file stores them"];
}

// Under Node: the CPU backend on the calling thread, the only engine there.
function nodeMode({ worker, backend }) {
  if (backend === 'webgl') throw new Error("backend: webgl, but Node has no WebGL; leave backend unset or pass 'cpu'");
  if (worker === true) throw new Error('worker: true, but under Node the engine runs on the calling thread');
  return {
    worker: false,
    reason: 'Node: the calling thread',
    backend: 'cpu',
    backendReason: backend === 'cpu' ? 'backend: cpu' : 'Node has no WebGL',
    warnings: [],
  };
}

// Where the engine runs and on what: { worker, backend, reason, backendReason, warnings }. The
// thread, unset: a Worker where the browser gives one WebGL2 with float render targets on an
// OffscreenCanvas (or, for the CPU backend, where a Worker starts), else this thread, with a warning
// that says why (a worker that has no WebGL2, or one whose script did not start: a 404, a MIME
// type, a CSP), logged once with console.warn; `worker: true` fails instead, with the same reason.
async function chooseMode({ worker, workerUrl, backend }, canvas) {
  if (host.node) return nodeMode({ worker, backend });
  const probe = worker === false || canvas ? null : await RemoteEngine.probe(workerUrl);
  const chosen = chooseBackend(backend, backend === 'cpu' ? null : probe?.ok ? probe : probeThisThread());
  const mode = {
    backend: chosen.backend,
    backendReason: chosen.reason,
    warnings: chosen.warning ? [chosen.warning] : [],
  };
  if (worker === false) return { ...mode, worker: false, reason: 'worker: false' };
  if (canvas) return { ...mode, worker: false, reason: 'a canvas was given' };
  const fits = chosen.backend === 'cpu' ? probe.started : probe.ok;
  if (worker === true) {
    if (!fits)
      throw new Error(`worker: true, but ${probe.reason}; leave worker unset to run the engine on this thread instead`);
    return { ...mode, worker: true, reason: 'worker: true' };
  }
  if (fits)
    return {
      ...mode,
      worker: true,
      reason:
        chosen.backend === 'cpu' ? 'the default: a Worker' : 'the default: a Worker with WebGL2 on an OffscreenCanvas',
    };
  mode.warnings.push(warnOnce('thread', `the engine runs on this page's thread, not in a Worker: ${probe.reason}`));
  return {
    ...mode,
    worker: false,
    reason: probe.started ? `this browser has no WebGL2 in workers: ${probe.reason}` : probe.reason,
  };
}

export class GPT2 {
  /**
   * Loads a model from `source`: a single-file model (the last path segment has a dot), a GGUF file
   * (e.g. gpt2.Q4_K_M.gguf); a Hugging Face GPT-2 checkpoint folder (config.json, model.safetensors
   * or a sharded index, vocab.json, merges.txt); or a hub id such as 'openai-community/gpt2' (that
   * folder on the hub) or 'QuantFactory/gpt2-GGUF/gpt2.Q4_K_M.gguf' (that file); or a File or Blob of
   * a GGUF file (one a user picked or dropped), streaming the weights into GPU textures.
   */
  static async load(source, options = {}) {
    const { onProgress, signal, canvas, hubUrl, revision, ...settings } = loadOptions(options);
    const url = modelUrl(source, { hubUrl, revision });
    // An abort at any time before this promise settles rejects it with the signal's reason and frees
    // what was loaded, in both modes, whatever the engine had done by then: an abort from the load's
    // last progress event comes after the engine's last check of the signal (in worker mode its
    // reply may already be on its way), so the backends check again once they have the model.
    let backend;
    let mode;
    try {
      if (signal?.aborted) throw abortError(signal);
      const chosen = await chooseMode(settings, canvas);
      const warnings = [...chosen.warnings, ...textureOptionsOnTheCpu(options, chosen.backend)];
      for (const warning of warnings) onProgress?.({ loaded: 0, total: 0, fromCache: 0, warning });
      const engineOptions = { ...settings, backend: chosen.backend };
      backend = chosen.worker
        ? await RemoteEngine.load(url, engineOptions, { onProgress, signal })
        : await (await engineHere()).load(url, engineOptions, { onProgress, signal, canvas });
      mode = {
        worker: chosen.worker,
        canvas: chosen.backend === 'cpu' ? null : chosen.worker ? 'OffscreenCanvas' : backend.canvasKind,
        reason: chosen.reason,
        backend: chosen.backend,
        backendReason: chosen.backendReason,
      };
    } catch (error) {
      throw signal?.aborted ? abortError(signal) : error;
    }
    if (signal?.aborted) {
      await backend.dispose();
      throw abortError(signal);
    }
    return new GPT2(backend, mode, {
      url,
      options: { ...options, onProgress: undefined, signal: undefined, canvas: undefined },
    });
  }

  /**
   * The GPU bytes a model would take in this browser (on the CPU backend, its memory at the full
   * context), before its weights are downloaded and before anything is allocated or compiled: `model` is a config.json object, or a source as load takes it
   * (a URL or hub id of a folder, whose config.json is read, or of a GGUF file, or a File or Blob of
   * one, whose header alone is read: about 2 MB for GPT-2, from the cache where it is there); an
   * array of them is answered in order. `options` are load options (weights, maxTextureSize, tuning,
   * hubUrl, revision, cache). Planned on the thread a load would use.
   */
  static async gpuBytes(model, options = {}) {
    const { onProgress, signal, canvas, hubUrl, revision, ...settings } = loadOptions(options);
    const models = (Array.isArray(model) ? model : [model]).map((m) =>
      typeof m === 'string' || m instanceof URL || isBlob(m) ? modelUrl(m, { hubUrl, revision }) : m,
    );
    // Planning holds nothing once done: an abort rejects at once, and what runs finishes unheard.
    const bytes = await unlessAborted(signal, async () => {
      const { worker, backend } = await chooseMode(settings, canvas);
      const engineOptions = { ...settings, backend };
      return worker
        ? RemoteEngine.plannedGpuBytes(models, engineOptions)
        : (await engineHere()).plannedGpuBytes(models, engineOptions);
    });
    return Array.isArray(model) ? bytes : bytes[0];
  }

  /**
   * Where and on what a load with `options` would run, decided as a load decides and without loading
   * anything: { worker, backend, reason, backendReason }, as `model.mode` says them.
   */
  static async plannedMode(options = {}) {
    const { canvas, ...settings } = loadOptions(options);
    const { worker, backend, reason, backendReason } = await chooseMode(settings, canvas);
    return { worker, backend, reason, backendReason };
  }

  /** Deletes every model file this origin keeps in the browser's cache. */
  static async clearCache() {
    await clearCache();
  }

  /**
   * True on a phone or tablet, as the user agent tells them: where the module keeps textures within
   * Apple's phone limits, and where a tab that takes much more than 1.5 GB is killed.
   */
  static isPhone() {
    return isPhone();
  }

  /**
   * The URL a load of `source` with `options` (hubUrl, revision) fetches: a hub id becomes its
   * resolve URL, a folder ends in '/'. cachedModels() lists a cached model under it.
   */
  static resolveSource(source, options = {}) {
    const { hubUrl, revision } = loadOptions(options);
    return modelUrl(source, { hubUrl, revision });
  }

  /** The models this origin keeps in the browser's cache: { source, bytes } each. */
  static async cachedModels() {
    return cachedModels();
  }

  /** Live WebGL objects made by all models of this page, in both modes (a leak check). */
  static async liveGlObjects() {
    const here = localEngine ? await (await localEngine).liveGlObjects() : 0;
    return here + (await RemoteEngine.liveGlObjects());
  }

  constructor(backend, mode, loadedWith) {
    this._backend = backend;
    this._loadedWith = loadedWith;
    this._disposed = false;
    this.config = Object.freeze(backend.config);
    this.mode = Object.freeze(mode);
  }

  _check() {
    if (this._disposed) throw new DisposedError();
    if (this._backend.contextLost) throw new ContextLostError();
  }

  /** True after the browser dropped this model's WebGL context; restore() brings the model back. */
  get contextLost() {
    return this._backend.contextLost;
  }

  /**
   * After a lost context: loads the model again from the same source with the same options, on a
   * fresh canvas of the engine's own (a lost one cannot be used again), and takes its place (this
   * object stays valid). The sequence starts empty.
   */
  async restore({ onProgress, signal } = {}) {
    if (this._disposed) throw new DisposedError();
    // The same thread as before: a model given a canvas of the page's stays on the page's thread.
    // An abort before this promise settles rejects it (as load does) and leaves the model as it was.
    const fresh = await GPT2.load(this._loadedWith.url, {
      ...this._loadedWith.options,
      worker: this.mode.worker,
      onProgress,
      signal,
    });
    if (this._disposed || signal?.aborted) {
      await fresh._backend.dispose();
      throw signal?.aborted ? abortError(signal) : new DisposedError();
    }
    // Nothing waits between this check and the promise's settling: the lost backend is freed after
    // (its dispose is sent, or done, before any later call of this model can start).
    const lost = this._backend;
    this._backend = fresh._backend;
    this.mode = fresh.mode;
    lost.dispose().catch(() => {});
  }

  /**
   * Streams new tokens as { id, text }. Greedy unless `temperature` > 0. An AbortSignal stops it
   * before the next token or prefill chunk; the iteration then throws the signal's reason (an
   * AbortError).
   */
  async *generate(prompt, options = {}) {
    const signal = options?.signal;
    try {
      this._check();
      const { signal: _signal, ...settings } = resolveOptions('generate', options, { passThrough: ['signal'] });
      const input = typeof prompt === 'string' ? prompt : Array.from(prompt);
      yield* this._backend.generate(input, settings, signal);
    } catch (error) {
      // Whatever ended the iteration (a dispose, the generation's end racing the abort in the
      // worker), an abort before it ended is what it reports.
      throw signal?.aborted ? abortError(signal) : error;
    }
  }

  /** Frees every GL object and the canvas this model made. Safe to call twice. */
  async dispose() {
    if (this._disposed) return;
    this._disposed = true;
    await this._backend.dispose();
  }
}

// Runs `work`, rejecting with the signal's reason at once when it is aborted before `work` settles.
function unlessAborted(signal, work) {
  if (!signal) return work();
  if (signal.aborted) return Promise.reject(abortError(signal));
  return new Promise((resolve, reject) => {
    const onAbort = () => reject(abortError(signal));
    signal.addEventListener('abort', onAbort, { once: true });
    work()
      .then(resolve, reject)
      .finally(() => signal.removeEventListener('abort', onAbort));
  });
}

// Each checks the model's state, then its arguments (the table's `args`), before the engine sees them.
defineMethods(
  GPT2.prototype,
  (name, args) =>
    async function (...given) {
      this._check();
      return this._backend[name](...args(...given));
    },
);

export { BusyError, ContextLostError, DisposedError, WebGL2UnavailableError } from './gpt2-errors.js';
export default GPT2;
