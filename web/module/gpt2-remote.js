// The page's side of worker mode: RemoteEngine has the methods of Engine (gpt2-engine.js) and runs
// them in the module Worker (gpt2-worker.js) that every model of the page shares.
import { abortError, ContextLostError, DisposedError, fromRemote } from './gpt2-errors.js';
import { defineMethods } from './gpt2-methods.js';

// A module served from another origin (a CDN) cannot start a worker from its own URL; a same-origin
// blob that imports it by absolute URL can (the page's CSP then needs worker-src blob:).
function startWorker() {
  const url = new URL('./gpt2-worker.js', import.meta.url);
  if (typeof location === 'undefined' || url.origin === location.origin) return new Worker(url, { type: 'module' });
  const blob = new Blob([`import ${JSON.stringify(url.href)};`], { type: 'text/javascript' });
  return new Worker(URL.createObjectURL(blob), { type: 'module' });
}

class WorkerHost {
  constructor() {
    if (typeof Worker === 'undefined') throw new Error('this browser has no Worker');
    this.worker = startWorker();
    this.calls = new Map();
    this.nextCall = 1;
    this.lost = new Set();
    this.worker.onmessage = ({ data }) => {
      if (data.lost !== undefined) {
        this.lost.add(data.lost);
        return;
      }
      const pending = this.calls.get(data.call);
      if (!pending) return;
      if ('event' in data) {
        pending.onEvent?.(data.event);
        return;
      }
      this.calls.delete(data.call);
      if (data.error) pending.reject(fromRemote(data.error));
      else pending.resolve(data.result);
    };
    this.worker.onerror = (event) => {
      const error = new Error(`the GPT-2 worker failed: ${event.message ?? 'it could not start'} (${new URL('./gpt2-worker.js', import.meta.url)})`);
      for (const pending of this.calls.values()) pending.reject(error);
      this.calls.clear();
    };
  }

  static shared() {
    WorkerHost.instance ??= new WorkerHost();
    return WorkerHost.instance;
  }

  // Sends a request; returns { call, promise }. `onEvent` receives its progress or token events.
  start(method, { model, args = [], onEvent, transfer = [] } = {}) {
    const call = this.nextCall++;
    const promise = new Promise((resolve, reject) => this.calls.set(call, { resolve, reject, onEvent }));
    this.worker.postMessage({ call, method, model, args }, transfer);
    return { call, promise };
  }

  request(method, options) {
    return this.start(method, options).promise;
  }

  abort(call) {
    this.worker.postMessage({ abort: call });
  }
}

export class RemoteEngine {
  // Whether the worker gets what the engine needs on an OffscreenCanvas: { ok: true } or
  // { ok: false, reason }, asked once per page. A worker that cannot start answers with why.
  static probe() {
    RemoteEngine.probed ??= (async () => {
      try {
        return await WorkerHost.shared().request('probe');
      } catch (error) {
        return { ok: false, reason: error.message };
      }
    })();
    return RemoteEngine.probed;
  }

  static async load(source, options, { onProgress, signal } = {}) {
    const host = WorkerHost.shared();
    if (signal?.aborted) throw abortError(signal);
    const { call, promise } = host.start('load', { args: [source, options, Boolean(onProgress)], onEvent: onProgress });
    const onAbort = () => host.abort(call);
    signal?.addEventListener('abort', onAbort);
    try {
      const { model, config } = await promise;
      return new RemoteEngine(host, model, config);
    } finally {
      signal?.removeEventListener('abort', onAbort);
    }
  }

  static plannedGpuBytes(configs, options) {
    return WorkerHost.shared().request('plannedGpuBytes', { args: [configs, options] });
  }

  // Live GL objects in the shared worker; 0 before it has started.
  static async liveGlObjects() {
    return WorkerHost.instance ? WorkerHost.instance.request('liveGlObjects') : 0;
  }

  constructor(host, model, config) {
    this._host = host;
    this._model = model;
    this.config = config;
  }

  get contextLost() {
    return this._host.lost.has(this._model);
  }

  async _request(method, args = []) {
    if (this._model === null) throw new DisposedError();
    try {
      return await this._host.request(method, { model: this._model, args });
    } catch (error) {
      if (error instanceof ContextLostError) this._host.lost.add(this._model);
      throw error;
    }
  }

  // Tokens stream from the worker as they come; an abort ends the iteration at once and stops the
  // worker's generation within one prefill chunk or token.
  async *generate(prompt, options, signal) {
    if (this._model === null) throw new DisposedError();
    const tokens = [];
    let wake = null;
    let outcome = null;  // { error } or { done: true }
    const notify = () => wake?.();
    const { call, promise } = this._host.start('generate', {
      model: this._model,
      args: [typeof prompt === 'string' ? prompt : Array.from(prompt), options],
      onEvent: (token) => { tokens.push(token); notify(); },
    });
    promise.then(() => { outcome = { done: true }; notify(); }, (error) => { outcome = { error }; notify(); });
    signal?.addEventListener('abort', notify);
    try {
      for (;;) {
        if (signal?.aborted) throw abortError(signal);
        if (tokens.length) {
          yield tokens.shift();
          continue;
        }
        if (outcome?.error) {
          if (outcome.error instanceof ContextLostError) this._host.lost.add(this._model);
          throw outcome.error;
        }
        if (outcome?.done) return;
        await new Promise((resolve) => { wake = resolve; });
        wake = null;
      }
    } finally {
      signal?.removeEventListener('abort', notify);
      if (!outcome) this._host.abort(call);
    }
  }

  async dispose() {
    if (this._model === null) return;
    const model = this._model;
    this._model = null;
    await this._host.request('dispose', { model });
  }
}

// The engine's request/response methods, each a request to the worker with the same arguments.
defineMethods(RemoteEngine.prototype, (name) => function (...args) {
  return this._request(name, args);
});
