// The page's side of worker mode: RemoteEngine has the methods of Engine (gpt2-engine.js) and runs
// them in the module Worker (gpt2-worker.js) that every model of the page shares.
import { startReaderFor } from './gpt2-cache-reader.js';
import { abortError, ContextLostError, DisposedError, fromRemote } from './gpt2-errors.js';
import { defineMethods } from './gpt2-methods.js';

// The worker script beside this module, as a name the bundlers below do not rewrite.
const WORKER_FILE = './gpt2-worker.js';

// Shortens what a reason quotes: a bundler may have inlined a worker as a data: URL of kilobytes.
function brief(text, limit = 300) {
  const urls = String(text).replace(/\b(?:data|blob|https?|file):[^\s'")]{80,}/g, (url) => `${url.slice(0, 60)}…`);
  return urls.length > limit ? `${urls.slice(0, limit)}…` : urls;
}

// Starts the worker at `url` (absolute), or this module's own. Vite and webpack find and bundle the
// worker only from the literal `new Worker(new URL('./x.js', import.meta.url), { type: 'module' })`:
// keep it whole. A script of another origin (a module served from a CDN) cannot be a worker: the
// browser throws a SecurityError, and a same-origin blob imports the script instead (the page's CSP
// then needs worker-src blob:). The blob holds the page's messages until the import has run, and
// tells why it failed (a CSP violation, a 404), which a worker's error event does not.
function spawnWorker(url) {
  try {
    return url
      ? new Worker(url, { type: 'module' })
      : new Worker(new URL('./gpt2-worker.js', import.meta.url), { type: 'module' });
  } catch (error) {
    if (error?.name !== 'SecurityError') throw error;
  }
  const target = url ?? new URL(WORKER_FILE, import.meta.url).href;
  const source = `const early = [], blocked = [];
self.onmessage = (event) => early.push(event);
self.addEventListener('securitypolicyviolation',
  (e) => blocked.push(\`Content-Security-Policy \${e.effectiveDirective} blocked \${e.blockedURI}\`));
import(${JSON.stringify(target)}).then(() => { for (const event of early) self.onmessage(event); },
  (error) => postMessage({ startError: [...blocked, error?.message ?? String(error)].join('; ') }));`;
  return new Worker(URL.createObjectURL(new Blob([source], { type: 'text/javascript' })), { type: 'module' });
}

// Why a worker script failed before it ran, where the error event says nothing (Chromium's never
// does): what the page's CSP blocked, else what fetching the script shows.
async function whyNotStarted(url, event, violations) {
  if (violations.length) return `the page's ${violations.join('; ')}`;
  if (event?.message) return event.message;
  if (!/^https?:/.test(url)) return 'the browser gave no reason (see its console)';
  try {
    const response = await fetch(url);
    if (!response.ok) return `${url} answered HTTP ${response.status}`;
    const type = response.headers.get('content-type') ?? '';
    if (!/javascript|ecmascript/i.test(type)) return `${url} is served as ${type || 'no type'}, not JavaScript`;
    return `${url} or one of its imports failed to load or run (the browser gave no reason; see its console)`;
  } catch (error) {
    return `${url} could not be fetched: ${error.message}`;
  }
}

// One Worker per worker URL, shared by the models of the page loaded with it. Until the worker says
// it is ready, an error is a failure to start: every request then fails with the reason.
class WorkerHost {
  static hosts = new Map();

  constructor(url) {
    this.url = url;
    this.calls = new Map();
    this.nextCall = 1;
    this.lost = new Set();
    this.failure = null;
    this.isReady = false;
    // What the page's CSP blocks while the worker starts (a same-origin script under worker-src).
    this.violations = [];
    const noteViolation = (e) =>
      this.violations.push(`Content-Security-Policy ${e.effectiveDirective} blocked ${e.blockedURI || 'the worker'}`);
    globalThis.addEventListener?.('securitypolicyviolation', noteViolation);
    this.stopWatching = () => globalThis.removeEventListener?.('securitypolicyviolation', noteViolation);
    try {
      if (typeof Worker === 'undefined') throw new Error('this browser has no Worker');
      this.worker = spawnWorker(url);
    } catch (error) {
      this.fail(error.message);
      return;
    }
    this.worker.onmessage = ({ data }) => this.receive(data);
    this.worker.onerror = async (event) => {
      if (this.failure) return;
      if (this.isReady) {
        this.rejectAll(new Error(`the GPT-2 worker failed: ${brief(event.message ?? 'an error with no message')}`));
        return;
      }
      this.fail(await whyNotStarted(this.scriptUrl(), event, this.violations));
    };
  }

  // The script's URL for messages: the given one, else where this module's own would be.
  scriptUrl() {
    return this.url ?? new URL(WORKER_FILE, import.meta.url).href;
  }

  receive(data) {
    if (data.ready) {
      this.isReady = true;
      this.stopWatching();
      return;
    }
    if (data.startError !== undefined) {
      this.fail(data.startError);
      return;
    }
    if (data.lost !== undefined) {
      this.lost.add(data.lost);
      return;
    }
    if (data.reader !== undefined) {
      startReaderFor(data.port, (reason) => this.worker.postMessage({ readerFailed: data.reader, reason }));
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
  }

  fail(reason) {
    this.failure = new Error(brief(`the GPT-2 worker (${this.scriptUrl()}) could not start: ${reason}`));
    this.worker?.terminate();
    this.stopWatching();
    this.rejectAll(this.failure);
  }

  rejectAll(error) {
    for (const pending of this.calls.values()) pending.reject(error);
    this.calls.clear();
  }

  // The host of the worker at `url` (unset: this module's own), started on first use.
  static for(url = null) {
    const key = url ?? '';
    if (!WorkerHost.hosts.has(key)) WorkerHost.hosts.set(key, new WorkerHost(url));
    return WorkerHost.hosts.get(key);
  }

  // Sends a request; returns { call, promise }. `onEvent` receives its progress or token events.
  start(method, { model, args = [], onEvent, transfer = [] } = {}) {
    const call = this.nextCall++;
    if (this.failure) return { call, promise: Promise.reject(this.failure) };
    const promise = new Promise((resolve, reject) => this.calls.set(call, { resolve, reject, onEvent }));
    this.worker.postMessage({ call, method, model, args }, transfer);
    return { call, promise };
  }

  request(method, options) {
    return this.start(method, options).promise;
  }

  abort(call) {
    this.worker?.postMessage({ abort: call });
  }
}

export class RemoteEngine {
  // Whether the worker at `workerUrl` (unset: the module's own) starts and gets what the engine
  // needs on an OffscreenCanvas: { ok: true }, { ok: false, started: true, reason } (no WebGL2 there)
  // or { ok: false, started: false, reason } (the script did not run), asked once per worker.
  static probe(workerUrl) {
    const host = WorkerHost.for(workerUrl);
    host.probed ??= host.request('probe').then(
      (answer) => ({ ...answer, started: true }),
      (error) => ({ ok: false, started: false, reason: error.message }),
    );
    return host.probed;
  }

  // An abort before the returned promise settles rejects it with the signal's reason, whatever the
  // worker had done: the worker stops at its next check of the signal, and a model it had already
  // loaded (its reply was on its way when the page aborted, from the load's last progress event,
  // say) is disposed there.
  static async load(source, options, { onProgress, signal } = {}) {
    const host = WorkerHost.for(options.workerUrl);
    if (signal?.aborted) throw abortError(signal);
    const { call, promise } = host.start('load', { args: [source, options, Boolean(onProgress)], onEvent: onProgress });
    const onAbort = () => host.abort(call);
    signal?.addEventListener('abort', onAbort);
    let loaded;
    try {
      loaded = await promise;
    } catch (error) {
      throw signal?.aborted ? abortError(signal) : error;
    } finally {
      signal?.removeEventListener('abort', onAbort);
    }
    const engine = new RemoteEngine(host, loaded.model, loaded.config);
    if (signal?.aborted) {
      await engine.dispose();
      throw abortError(signal);
    }
    return engine;
  }

  static plannedGpuBytes(models, options) {
    return WorkerHost.for(options.workerUrl).request('plannedGpuBytes', { args: [models, options] });
  }

  static optionsSeen(load, generate) {
    return WorkerHost.for(load.workerUrl).request('optionsSeen', { args: [load, generate] });
  }

  // Live GL objects in the workers that started; 0 before any has.
  static async liveGlObjects() {
    const running = [...WorkerHost.hosts.values()].filter((host) => !host.failure);
    const counts = await Promise.all(running.map((host) => host.request('liveGlObjects')));
    return counts.reduce((sum, count) => sum + count, 0);
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
    let outcome = null; // { error } or { done: true }
    const notify = () => wake?.();
    const { call, promise } = this._host.start('generate', {
      model: this._model,
      args: [typeof prompt === 'string' ? prompt : Array.from(prompt), options],
      onEvent: (token) => {
        tokens.push(token);
        notify();
      },
    });
    promise.then(
      () => {
        outcome = { done: true };
        notify();
      },
      (error) => {
        outcome = { error };
        notify();
      },
    );
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
        await new Promise((resolve) => {
          wake = resolve;
        });
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
defineMethods(
  RemoteEngine.prototype,
  (name) =>
    function (...args) {
      return this._request(name, args);
    },
);
