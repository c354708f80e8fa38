// Loading a model's files into the engine: a GGUF file or a Hugging Face folder,
// streamed one tensor in the wasm heap at a time (the files come from gpt2-cache.js and
// gpt2-download.js). Used by gpt2-engine.js on whichever thread runs the engine.
import { ModelFiles } from './gpt2-cache.js';
import { abortError } from './gpt2-errors.js';
import { sleep } from './gpt2-event-loop.js';
import { heapBytes, nativeOptions } from './gpt2-native.js';

// Loads `source`, an absolute http(s) URL of a GGUF file or of a Hugging Face folder (ending in
// '/'), or a Blob (a File) of a GGUF file, into a model of the wasm module `M`
// rendering on the canvas registered as `target`, with `options` (the load options, resolved).
// Resolves to { model, config }.
export async function loadModel(M, target, source, options, { onProgress, signal }) {
  let files = new ModelFiles({ cache: options.cache, signal, warn: (text) => progress.warn(text) });
  let progress = new Progress(onProgress, files.cachedUrls);
  await files.open();
  try {
    return await loadFiles(M, target, source, options, files, progress, signal);
  } catch (error) {
    if (!error.cachedFile || signal?.aborted) throw error;
    // A file read from the cache failed the load (a corrupt GGUF header, say): drop what
    // came from the cache and fetch everything again.
    await files.dropCached();
    const warn = files.warn;
    files = new ModelFiles({ cache: options.cache, readCache: false, signal, warn });
    progress = new Progress(onProgress, files.cachedUrls);
    await files.open();
    return loadFiles(M, target, source, options, files, progress, signal);
  }
}

async function loadFiles(M, target, source, options, files, progress, signal) {
  const native = nativeOptions(options);
  let model = null;
  // Marks a failure while reading a file that came from the cache, which loadModel then fetches again.
  const reading = async (url, work) => {
    try {
      return await work();
    } catch (error) {
      if (files.cachedUrls.has(url) && error instanceof Error) error.cachedFile = url;
      throw error;
    }
  };
  try {
    const made = (created) => {
      model = created;
      if (model) progress.plan(model.gpuBytes());
      return model;
    };
    let tokenizer = { vocab: '', merges: '' };
    const label = sourceLabel(source);
    if (typeof source !== 'string' || !source.endsWith('/')) {
      // A file on its own is a whole model (a GGUF file: config, tokenizer and weights). The
      // page's own file is read as it is, never cached.
      const response =
        typeof source === 'string'
          ? await files.response(source)
          : new Response(source.stream(), { headers: { 'Content-Length': String(source.size) } });
      progress.expect(label, response);
      await reading(label, () =>
        streamFile(M, label, response, progress, signal, (ptr, length, fileSize) =>
          made(M.openModelFile(target, ptr, length, fileSize, native, label)),
        ),
      );
    } else {
      tokenizer = await loadFolder(M, target, source, native, files, progress, signal, { reading, made });
    }
    // The programs have been linking since the model was made; wait for them without blocking.
    while (!model.programsLinked()) await sleep();
    const config = model.finishLoad(tokenizer.vocab, tokenizer.merges, label);
    await files.settle();
    progress.report();
    return { model, config };
  } catch (error) {
    model?.delete();
    throw error;
  }
}

// A Hugging Face folder: config.json, the tokenizer's vocab.json and merges.txt (optional, both or
// neither), and model.safetensors or the shards of model.safetensors.index.json. Resolves to the
// tokenizer's files ('' where absent).
async function loadFolder(M, target, source, native, files, progress, signal, { reading, made }) {
  const url = (name) => new URL(name, source).href;
  const [config, vocab, merges] = await Promise.all([
    files.text(url('config.json')),
    files.text(url('vocab.json'), { optional: true }),
    files.text(url('merges.txt'), { optional: true }),
  ]);
  if ((vocab === null) !== (merges === null)) throw new Error(`${source}: has only one of vocab.json and merges.txt`);
  const model = await reading(url('config.json'), async () => made(M.createModel(target, config, native)));
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
  for (const [fileUrl, response] of weightFiles) progress.expect(fileUrl, response);
  for (const [fileUrl, response] of weightFiles) {
    if (signal?.aborted) throw abortError(signal);
    await reading(fileUrl, () =>
      streamFile(M, fileUrl, response, progress, signal, (ptr, length, fileSize) =>
        model.beginFile(ptr, length, fileSize, fileUrl) ? model : null,
      ),
    );
  }
  return { vocab: vocab ?? '', merges: merges ?? '' };
}

// Reads a response body in order: exact byte ranges, skipping what is not needed.
class ByteStream {
  constructor(url, response, onBytes) {
    this.url = url;
    this.reader = response.body.getReader();
    this.onBytes = onBytes;
    this.position = 0; // file offset of this.chunk[this.offset]
    this.chunk = new Uint8Array(0);
    this.offset = 0;
  }

  // The next chunk of the body; false where the file ends.
  async pull() {
    const { done, value } = await this.reader.read();
    if (done) return false;
    this.chunk = value;
    this.offset = 0;
    this.onBytes(value.length);
    return true;
  }

  truncated(needed) {
    return new Error(
      `${this.url}: the file ends after ${this.position} bytes but ${needed} are needed (truncated download?)`,
    );
  }

  // Copies up to `length` bytes at the current position into `write(bytes, at)`, fewer where the
  // file ends first; resolves to how many.
  async readUpTo(length, write) {
    let done = 0;
    while (done < length) {
      if (this.offset === this.chunk.length && !(await this.pull())) break;
      const n = Math.min(length - done, this.chunk.length - this.offset);
      write(this.chunk.subarray(this.offset, this.offset + n), done);
      this.offset += n;
      this.position += n;
      done += n;
    }
    return done;
  }

  // Copies exactly `length` bytes.
  async read(length, write) {
    const done = await this.readUpTo(length, write);
    if (done < length) throw this.truncated(this.position + length - done);
  }

  async skipTo(position) {
    while (this.position < position) {
      if (this.offset === this.chunk.length && !(await this.pull())) throw this.truncated(position);
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
class Progress {
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
    if (total > 0 || extra.warning)
      this.onProgress?.({ loaded: Math.min(this.loaded, total), total, fromCache: this.fromCache, ...plan, ...extra });
  }
  warn(text) {
    if (this.warnings.has(text)) return;
    this.warnings.add(text);
    this.report({ warning: text });
  }
}

// What errors call `source`: its URL, or a File's name (a Blob's size).
export function sourceLabel(source) {
  if (typeof source === 'string') return source;
  return source.name ? source.name : `a Blob of ${source.size} bytes`;
}

// Copies `bytes` into a fresh wasm heap block for `use(pointer)`, freed afterwards.
export function withHeapCopy(M, bytes, use) {
  const ptr = M._malloc(Math.max(bytes.length, 1));
  try {
    heapBytes(M).set(bytes, ptr);
    return use(ptr);
  } finally {
    M._free(ptr);
  }
}

const FIRST_PREFIX = 1 << 20;

// Streams one model file into a model's textures. The file's first bytes are read in growing
// prefixes until `open(headerPtr, prefixLength, fileSize)` (C++, which tells the formats apart and
// checks the header) returns the model, not null; its tensors() lists the tensors to send, in file
// order. Each then goes through a heap block of its own, from the prefix as far as it reaches, then
// from the stream.
async function streamFile(M, url, response, progress, signal, open) {
  const stream = new ByteStream(url, response, progress.bytesOf(url));
  try {
    let fileSize = progress.sizeOf(url) ?? Number.MAX_SAFE_INTEGER;
    let header = new Uint8Array(0);
    let model = null;
    while (!model) {
      const grown = new Uint8Array(Math.min(Math.max(2 * header.length, FIRST_PREFIX), fileSize));
      grown.set(header);
      const read = await stream.readUpTo(grown.length - header.length, (bytes, at) =>
        grown.set(bytes, header.length + at),
      );
      header = grown.subarray(0, header.length + read);
      if (header.length < grown.length) fileSize = header.length; // the whole file
      model = withHeapCopy(M, header, (ptr) => open(ptr, header.length, fileSize));
    }
    const tensors = model.tensors();
    progress.knowEnd(
      url,
      tensors.reduce((end, t) => Math.max(end, t.end), header.length),
    );
    for (const tensor of tensors) {
      if (signal?.aborted) throw abortError(signal);
      const size = tensor.end - tensor.begin;
      const ptr = model.tensorBuffer(size);
      const held = header.subarray(Math.min(tensor.begin, header.length), Math.min(tensor.end, header.length));
      heapBytes(M).set(held, ptr);
      await stream.skipTo(tensor.begin + held.length);
      await stream.read(size - held.length, (bytes, at) => heapBytes(M).set(bytes, ptr + held.length + at));
      model.uploadTensor(tensor.name);
    }
    model.endFile();
    return model;
  } finally {
    stream.cancel();
  }
}
