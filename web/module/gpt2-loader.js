// Fetching a model's files and streaming safetensors bytes into the engine, one tensor in the wasm
// heap at a time. Used by gpt2-engine.js on whichever thread runs the engine.
import { abortError } from './gpt2-errors.js';

export async function fetchResponse(url, signal, { optional = false } = {}) {
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

// Reads a response body in order: exact byte ranges, skipping what is not needed.
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

// Bytes received against the total: the files' Content-Length, or the end of their last tensor;
// `fromCache` counts those read from the browser's cache (`cachedUrls`). A warning (nothing cached)
// goes out once in its own event.
export class Progress {
  constructor(onProgress, cachedUrls = new Set()) {
    this.onProgress = onProgress;
    this.cachedUrls = cachedUrls;
    this.sizes = new Map();
    this.loaded = 0;
    this.fromCache = 0;
    this.warnings = new Set();
  }
  bytesOf(url) {
    return (n) => {
      this.loaded += n;
      if (this.cachedUrls.has(url)) this.fromCache += n;
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
  // The bytes of the model's textures, known once it is made (before any weight is uploaded): every
  // event from then on carries them.
  plan(gpuBytes) {
    this.gpuBytes = gpuBytes;
    this.report();
  }
  report(extra = {}) {
    const total = [...this.sizes.values()].reduce((a, b) => a + b, 0);
    const plan = this.gpuBytes === undefined ? {} : { gpuBytes: this.gpuBytes };
    if (total > 0 || extra.warning) this.onProgress?.({ loaded: Math.min(this.loaded, total), total, fromCache: this.fromCache, ...plan, ...extra });
  }
  warn(text) {
    if (this.warnings.has(text)) return;
    this.warnings.add(text);
    this.report({ warning: text });
  }
}

// Copies `bytes` into a fresh wasm heap block for `use(pointer)`, freed afterwards.
export function withHeapCopy(M, bytes, use) {
  const ptr = M._malloc(Math.max(bytes.length, 1));
  try {
    M.HEAPU8.set(bytes, ptr);
    return use(ptr);
  } finally {
    M._free(ptr);
  }
}

// Streams one safetensors file into a model's textures. `open(headerPtr, headerLength, fileSize)`
// hands the header to C++ (which checks it) and returns the model; its beginFile lists the tensors
// to send, in file order.
export async function streamSafetensors(M, url, response, progress, open, signal) {
  const stream = new ByteStream(url, response, progress.bytesOf(url));
  try {
    const prefix = new Uint8Array(8);
    await stream.read(8, (bytes, at) => prefix.set(bytes, at));
    const headerLength = Number(new DataView(prefix.buffer).getBigUint64(0, true));
    if (headerLength > 100 * 1024 * 1024) throw new Error(`${url}: header length ${headerLength} is implausible; not a safetensors file`);
    const header = new Uint8Array(8 + headerLength);
    header.set(prefix);
    await stream.read(headerLength, (bytes, at) => header.set(bytes, 8 + at));
    const fileSize = progress.sizeOf(url) ?? Number.MAX_SAFE_INTEGER;
    let model = null;
    const tensors = withHeapCopy(M, header, (ptr) => {
      model = open(ptr, header.length, fileSize);
      return model.beginFile(ptr, header.length, fileSize, url);
    });
    progress.knowEnd(url, tensors.reduce((end, t) => Math.max(end, t.end), header.length));
    for (const tensor of tensors) {
      if (signal?.aborted) throw abortError(signal);
      await stream.skipTo(tensor.begin);
      const size = tensor.end - tensor.begin;
      const ptr = M._malloc(Math.max(size, 1));
      try {
        await stream.read(size, (bytes, at) => M.HEAPU8.set(bytes, ptr + at));
        model.uploadTensor(tensor.name, ptr, size);
      } finally {
        M._free(ptr);
      }
    }
    model.endFile();
    return model;
  } finally {
    stream.cancel();
  }
}
