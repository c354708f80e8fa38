// GPT-2 in the browser over WebGL2 fragment shaders: the ES module other sites import.
// API reference: docs/api.md. Types: gpt2.d.ts.
import createGpt2Module from './gpt2-wasm.js';

let modulePromise = null;
function nativeModule() {
  modulePromise ??= createGpt2Module();
  return modulePromise;
}

let canvasCounter = 0;

// Lets the page (and an AbortSignal's listeners) run between tokens, without setTimeout's clamping.
function yieldToEventLoop() {
  return new Promise((resolve) => {
    const channel = new MessageChannel();
    channel.port1.onmessage = () => resolve();
    channel.port2.postMessage(null);
  });
}

function abortError(signal) {
  return signal.reason instanceof Error ? signal.reason : new DOMException('The operation was aborted', 'AbortError');
}

// Calls an exported C function; string arguments are copied into the wasm heap for the call.
function call(M, name, ...args) {
  const allocated = [];
  try {
    const converted = args.map((a) => {
      if (typeof a !== 'string') return a;
      const size = M.lengthBytesUTF8(a) + 1;
      const ptr = M._malloc(size);
      allocated.push(ptr);
      M.stringToUTF8(a, ptr, size);
      return ptr;
    });
    const rc = M[`_${name}`](...converted);
    if (rc < 0) throw new Error(M.UTF8ToString(M._gpt2_last_error()));
    return rc;
  } finally {
    allocated.forEach((ptr) => M._free(ptr));
  }
}

const result = (M) => M.UTF8ToString(M._gpt2_result());
const floats = (M) => new Float32Array(M.HEAPF32.buffer, M._gpt2_float_ptr(), M._gpt2_float_count()).slice();

async function fetchResponse(url, signal, { optional = false } = {}) {
  let response;
  try {
    response = await fetch(url, { signal });
  } catch (error) {
    if (signal?.aborted) throw abortError(signal);
    throw new Error(`${url}: could not be fetched (${error.message}); is the URL reachable?`);
  }
  if (optional && response.status === 404) return null;
  if (!response.ok) throw new Error(`${url}: HTTP ${response.status} ${response.statusText}`.trim());
  return response;
}

async function fetchText(url, signal, options) {
  const response = await fetchResponse(url, signal, options);
  return response && response.text();
}

// Reads a response body in order: exact byte ranges into the wasm heap, skipping what is not needed.
class ByteStream {
  constructor(url, response, onBytes) {
    this.url = url;
    this.reader = response.body.getReader();
    this.onBytes = onBytes;
    this.position = 0;  // file offset of this.chunk[this.offset]
    this.chunk = new Uint8Array(0);
    this.offset = 0;
  }

  async nextChunk(needed) {
    const { done, value } = await this.reader.read();
    if (done) {
      throw new Error(`${this.url}: the file ends after ${this.position} bytes but ${needed} are needed (truncated download?)`);
    }
    this.chunk = value;
    this.offset = 0;
    this.onBytes(value.length);
  }

  // Copies `length` bytes at the current position into `write(bytes, at)`.
  async read(length, write) {
    let done = 0;
    while (done < length) {
      if (this.offset === this.chunk.length) await this.nextChunk(this.position + length - done);
      const n = Math.min(length - done, this.chunk.length - this.offset);
      write(this.chunk.subarray(this.offset, this.offset + n), done);
      this.offset += n;
      this.position += n;
      done += n;
    }
  }

  async skipTo(position) {
    while (this.position < position) {
      if (this.offset === this.chunk.length) await this.nextChunk(position);
      const n = Math.min(position - this.position, this.chunk.length - this.offset);
      this.offset += n;
      this.position += n;
    }
  }

  cancel() {
    this.reader.cancel().catch(() => {});
  }
}

// Streams one safetensors file into a model's textures, one tensor in the wasm heap at a time.
// `open(headerPtr, headerLength, fileSize)` hands the header to C++ (which checks it) and returns the
// model handle; C++ then lists the tensors to send, in file order.
async function streamSafetensors(M, url, response, progress, open) {
  const stream = new ByteStream(url, response, progress.add);
  try {
    const prefix = new Uint8Array(8);
    await stream.read(8, (bytes, at) => prefix.set(bytes, at));
    const headerLength = Number(new DataView(prefix.buffer).getBigUint64(0, true));
    if (headerLength > 100 * 1024 * 1024) throw new Error(`${url}: header length ${headerLength} is implausible; not a safetensors file`);
    const header = new Uint8Array(8 + headerLength);
    header.set(prefix);
    await stream.read(headerLength, (bytes, at) => header.set(bytes, 8 + at));
    const fileSize = progress.sizeOf(url) ?? Number.MAX_SAFE_INTEGER;
    const headerPtr = M._malloc(header.length);
    M.HEAPU8.set(header, headerPtr);
    let handle;
    try {
      handle = open(headerPtr, header.length, fileSize);
    } finally {
      M._free(headerPtr);
    }
    const tensors = JSON.parse(result(M));
    progress.knowEnd(url, tensors.reduce((end, t) => Math.max(end, t.end), header.length));
    for (const tensor of tensors) {
      await stream.skipTo(tensor.begin);
      const size = tensor.end - tensor.begin;
      const ptr = M._malloc(Math.max(size, 1));
      try {
        await stream.read(size, (bytes, at) => M.HEAPU8.set(bytes, ptr + at));
        call(M, 'gpt2_upload_tensor', handle, tensor.name, ptr, size);
      } finally {
        M._free(ptr);
      }
    }
    call(M, 'gpt2_end_file', handle);
    return handle;
  } finally {
    stream.cancel();
  }
}

// Bytes received against the total: the files' Content-Length, or the end of their last tensor.
class Progress {
  constructor(onProgress) {
    this.onProgress = onProgress;
    this.sizes = new Map();
    this.loaded = 0;
    this.add = (n) => {
      this.loaded += n;
      this.report();
    };
  }
  expect(url, response) {
    const length = Number(response.headers.get('Content-Length'));
    if (length > 0 && !response.headers.get('Content-Encoding')) this.sizes.set(url, length);
  }
  sizeOf(url) {
    return this.sizes.get(url);
  }
  knowEnd(url, end) {
    if (!this.sizes.has(url)) this.sizes.set(url, end);
  }
  report() {
    const total = [...this.sizes.values()].reduce((a, b) => a + b, 0);
    if (total > 0) this.onProgress?.({ loaded: Math.min(this.loaded, total), total });
  }
}

// The engine's per-GPU choices, overridden (benchmarks, tests, or a driver that misbehaves).
function checkedTuning(tuning) {
  const { halfPairs, splitTexels, ...unknown } = tuning;
  const names = Object.keys(unknown);
  if (names.length) throw new Error(`tuning: unknown option ${names[0]}; known: halfPairs, splitTexels`);
  if (halfPairs !== undefined && typeof halfPairs !== 'boolean') throw new Error(`tuning.halfPairs must be true or false, got ${JSON.stringify(halfPairs)}`);
  if (splitTexels !== undefined && !(Number.isInteger(splitTexels) && splitTexels >= 0)) {
    throw new Error(`tuning.splitTexels must be an integer >= 0, got ${JSON.stringify(splitTexels)}`);
  }
  return { halfPairs, splitTexels };
}

export class GPT2 {
  /**
   * Loads a model from `source`: a packed model file (gpt2-pack; the last path segment has a dot,
   * e.g. model.gpt2) or a Hugging Face GPT-2 checkpoint folder (config.json, model.safetensors or a
   * sharded index, vocab.json, merges.txt), streaming the weights into GPU textures.
   */
  static async load(source, options = {}) {
    const { onProgress, weights = 'fp16', maxTextureSize = 0, tuning = {}, canvas, signal } = options;
    if (weights !== 'fp16' && weights !== 'fp32') throw new Error(`weights must be 'fp16' or 'fp32', got ${JSON.stringify(weights)}`);
    if (!Number.isInteger(maxTextureSize) || maxTextureSize < 0) throw new Error(`maxTextureSize must be a positive integer, got ${maxTextureSize}`);
    const engineOptions = JSON.stringify({ weights, maxTextureSize, ...checkedTuning(tuning) });
    const target = new URL(String(source), document.baseURI);
    if (target.protocol !== 'http:' && target.protocol !== 'https:') throw new Error(`${source}: only http(s) model URLs are supported`);
    const packed = !target.pathname.endsWith('/') && target.pathname.split('/').pop().includes('.');
    if (!packed && !target.pathname.endsWith('/')) target.pathname += '/';

    const M = await nativeModule();
    const progress = new Progress(onProgress);
    const surface = new Surface(canvas);
    let handle = -1;
    try {
      let vocab = '';
      let merges = '';
      if (packed) {
        const response = await fetchResponse(target.href, signal);
        progress.expect(target.href, response);
        handle = await streamSafetensors(M, target.href, response, progress, (headerPtr, length, fileSize) =>
          call(M, 'gpt2_open_packed', surface.selector, headerPtr, length, fileSize, engineOptions, target.href));
      } else {
        const url = (name) => new URL(name, target).href;
        const [config, vocabText, mergesText] = await Promise.all([
          fetchText(url('config.json'), signal),
          fetchText(url('vocab.json'), signal, { optional: true }),
          fetchText(url('merges.txt'), signal, { optional: true }),
        ]);
        if ((vocabText === null) !== (mergesText === null)) throw new Error(`${target.href}: has only one of vocab.json and merges.txt`);
        vocab = vocabText ?? '';
        merges = mergesText ?? '';
        handle = call(M, 'gpt2_create', surface.selector, config, engineOptions);
        // One file, or the shards of model.safetensors.index.json; all opened first so the total is known.
        const files = [];
        const single = await fetchResponse(url('model.safetensors'), signal, { optional: true });
        if (single) {
          files.push([url('model.safetensors'), single]);
        } else {
          const indexUrl = url('model.safetensors.index.json');
          const index = JSON.parse(await fetchText(indexUrl, signal));
          for (const shard of new Set(Object.values(index.weight_map ?? {}))) {
            if (typeof shard !== 'string' || shard.includes('/')) throw new Error(`${indexUrl}: bad shard name ${shard}`);
            files.push([url(shard), await fetchResponse(url(shard), signal)]);
          }
        }
        files.forEach(([fileUrl, response]) => progress.expect(fileUrl, response));
        for (const [fileUrl, response] of files) {
          if (signal?.aborted) throw abortError(signal);
          await streamSafetensors(M, fileUrl, response, progress, (headerPtr, length, fileSize) => {
            call(M, 'gpt2_begin_file', handle, headerPtr, length, fileSize, fileUrl);
            return handle;
          });
        }
      }
      call(M, 'gpt2_finish_load', handle, vocab, merges, target.href);
      progress.report();
      return new GPT2(M, handle, JSON.parse(result(M)), surface, { source: target.href, weights, maxTextureSize, tuning });
    } catch (error) {
      if (handle > 0) call(M, 'gpt2_destroy', handle);
      surface.release();
      throw error;
    }
  }

  /** Live WebGL objects made by all models of this page (a leak check). */
  static async liveGlObjects() {
    return (await nativeModule())._gpt2_live_gl_objects();
  }

  constructor(M, handle, config, surface, loadedWith) {
    this._M = M;
    this._handle = handle;
    this._surface = surface;
    this._loadedWith = loadedWith;
    this._busy = false;
    this.config = Object.freeze(config);
  }

  _check() {
    if (this._handle < 0) throw new Error('this model has been disposed');
    if (this._surface.lost) throw new Error('WebGL context lost (the browser reclaimed the GPU); call restore() or load the model again');
  }

  /** True after the browser dropped this model's WebGL context; restore() brings the model back. */
  get contextLost() {
    return this._surface.lost;
  }

  /**
   * After a lost context: loads the model again from the same source with the same options, on a
   * fresh hidden canvas, and takes its place (this object stays valid). The sequence starts empty.
   */
  async restore({ onProgress, signal } = {}) {
    if (this._handle < 0) throw new Error('this model has been disposed');
    const fresh = await GPT2.load(this._loadedWith.source, {
      ...this._loadedWith, onProgress, signal,
    });
    this.dispose();
    Object.assign(this, { _handle: fresh._handle, _surface: fresh._surface, _busy: false });
    fresh._handle = -1;
  }

  /** Token ids of `text`. `allowSpecial: false` encodes "<|endoftext|>" as plain text. */
  tokenize(text, { allowSpecial = true } = {}) {
    this._check();
    call(this._M, 'gpt2_tokenize', this._handle, String(text), allowSpecial ? 1 : 0);
    return JSON.parse(result(this._M));
  }

  decode(ids) {
    this._check();
    call(this._M, 'gpt2_decode', this._handle, JSON.stringify(Array.from(ids)));
    return result(this._M);
  }

  /**
   * Streams new tokens as { id, text }. Greedy unless `temperature` > 0. An AbortSignal stops it
   * before the next token; the iteration then throws the signal's reason (an AbortError).
   */
  async *generate(prompt, options = {}) {
    this._check();
    if (this._busy) throw new Error('this model is already generating; abort that generation or wait for it');
    const { signal, stop, ...rest } = options;
    const ids = typeof prompt === 'string' ? this.tokenize(prompt) : Array.from(prompt);
    const native = {
      ...rest,
      stop: stop === undefined ? [] : Array.isArray(stop) ? stop : [stop],
    };
    this._busy = true;
    let active = false;
    try {
      if (signal?.aborted) throw abortError(signal);
      call(this._M, 'gpt2_generate_begin', this._handle, JSON.stringify(ids), JSON.stringify(native));
      active = true;
      for (;;) {
        await yieldToEventLoop();
        if (signal?.aborted) throw abortError(signal);
        this._check();
        call(this._M, 'gpt2_generate_next', this._handle);
        const step = JSON.parse(result(this._M));
        if (step.done) {
          active = false;
          return;
        }
        yield { id: step.id, text: step.text };
      }
    } finally {
      if (active && this._handle > 0 && !this._surface.lost) call(this._M, 'gpt2_generate_cancel', this._handle);
      this._busy = false;
    }
  }

  /** Logits of the last position after running `ids` as a new sequence. */
  async logits(ids) {
    this._check();
    call(this._M, 'gpt2_logits', this._handle, JSON.stringify(Array.from(ids)));
    return floats(this._M);
  }

  /** Attention probabilities of `layer` over the current sequence: data is heads x T x T. */
  async attention(layer) {
    this._check();
    call(this._M, 'gpt2_attention', this._handle, layer);
    const { heads, tokens } = JSON.parse(result(this._M));
    return { heads, tokens, data: floats(this._M) };
  }

  /** GPU bytes allocated, bytes read back so far, the renderer. */
  stats() {
    this._check();
    call(this._M, 'gpt2_stats', this._handle);
    return JSON.parse(result(this._M));
  }

  /**
   * The benchmark of `gpt2 bench`: a prompt of `promptTokens` ids, then `newTokens` greedy steps;
   * `profile` adds `profile_ms_per_token`, each pass's time from a second run that waits per pass.
   */
  benchmark({ promptTokens = 32, newTokens = 16, profile = false } = {}) {
    this._check();
    call(this._M, 'gpt2_bench', this._handle, promptTokens, newTokens, profile ? 1 : 0);
    return JSON.parse(result(this._M));
  }

  /** Frees every GL object and the canvas this model made. Safe to call twice. */
  dispose() {
    if (this._handle < 0) return;
    call(this._M, 'gpt2_destroy', this._handle);
    this._handle = -1;
    this._surface.release();
  }
}

// The canvas a model renders with: the caller's, or a hidden one it owns. Watches for context loss.
class Surface {
  constructor(canvas) {
    this.owned = !canvas;
    this.canvas = canvas ?? Object.assign(document.createElement('canvas'), { width: 1, height: 1 });
    if (this.owned) {
      this.canvas.style.display = 'none';
      document.body.appendChild(this.canvas);
    }
    if (!this.canvas.id) this.canvas.id = `gpt2-canvas-${++canvasCounter}`;
    this.selector = `#${CSS.escape(this.canvas.id)}`;
    this.lost = false;
    this.onLost = (event) => {
      event.preventDefault();
      this.lost = true;
    };
    this.canvas.addEventListener('webglcontextlost', this.onLost);
  }
  release() {
    this.canvas.removeEventListener('webglcontextlost', this.onLost);
    if (this.owned) this.canvas.remove();
  }
}

export default GPT2;
