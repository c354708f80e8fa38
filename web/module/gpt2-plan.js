// Planning a model's GPU memory from its source before a load (GPT2.gpuBytes): a Hugging Face
// folder's config.json, or a GGUF file's header, which carries the config and every tensor's type.
// A GGUF header has no length field: it is read in growing prefixes, from the page's own file (a
// Blob), from the cached file where the browser keeps it, else by Range requests, until the engine
// can parse it. GPT-2's header holds its tokenizer, about 1.8 MB: one read of FIRST_PREFIX; the
// weights are never read. The last KEPT_HEADERS headers fetched stay in memory, so planning again
// with other options reads nothing.
import { ModelFiles } from './gpt2-cache.js';
import { fetchPrefix, fetchResponse } from './gpt2-download.js';
import { sourceLabel, withHeapCopy } from './gpt2-loader.js';

const FIRST_PREFIX = 2 << 20;
const KEPT_HEADERS = 8;
const fileHeaders = new Map(); // URL -> { bytes, size } of a GGUF file's header, oldest first

// Whether `model` (of GPT2.gpuBytes, resolved) is a source to read rather than a config object.
export function isSource(model) {
  return typeof model === 'string' || (typeof Blob !== 'undefined' && model instanceof Blob);
}

// The GPU bytes of the model at `source` (an absolute URL: a folder ending in '/', or a GGUF file; or
// a Blob of a GGUF file) with `native` (the engine's options), planned by the wasm module `M` on the
// canvas registered as `target`; `cache` (the load option) allows reading the browser's cached copy.
export async function plannedSourceBytes(M, target, source, native, { cache, signal }) {
  if (typeof source !== 'string') return wholeFileBytes(M, target, sourceLabel(source), blobPrefix(source), native);
  const kept = fileHeaders.get(source);
  if (kept) return planFile(M, target, source, kept, native);
  const files = new ModelFiles({ cache, signal, warn: () => {} });
  await files.open();
  if (source.endsWith('/')) {
    const url = new URL('config.json', source).href;
    const cached = await files.fromCache(url);
    const config = cached ? await cached.text() : await (await fetchResponse(url, signal)).text();
    return M.plannedGpuBytes(target, config, native);
  }
  const cached = await files.fromCache(source);
  const read = cached ? blobPrefix(cached) : (length) => fetchPrefix(source, length, signal);
  return wholeFileBytes(M, target, source, read, native, { keep: true });
}

// Reads the first bytes of a Blob as fetchPrefix answers.
function blobPrefix(blob) {
  return async (length) => ({ bytes: new Uint8Array(await blob.slice(0, length).arrayBuffer()), size: blob.size });
}

// The plan of the GGUF file `label` from its header, read by `read(length)` (fetchPrefix's answer) in
// growing prefixes; `keep` keeps the header for planning again.
async function wholeFileBytes(M, target, label, read, native, { keep = false } = {}) {
  for (let length = FIRST_PREFIX; ; length *= 2) {
    const prefix = await read(length);
    if (prefix.bytes.length < length) {
      if (prefix.size !== null && prefix.size > prefix.bytes.length)
        throw new Error(
          `${label}: ${prefix.bytes.length} bytes came of the first ${length} asked, in a file of ${prefix.size}`,
        );
      prefix.size = prefix.bytes.length; // the whole file
    }
    const bytes = planFile(M, target, label, prefix, native);
    if (bytes >= 0) {
      if (keep) {
        fileHeaders.set(label, prefix);
        if (fileHeaders.size > KEPT_HEADERS) fileHeaders.delete(fileHeaders.keys().next().value);
      }
      return bytes;
    }
  }
}

// The plan from `bytes`, the first bytes of a GGUF file of `size` bytes (null: unknown); -1 while they
// end inside the header.
function planFile(M, target, label, { bytes, size }, native) {
  return withHeapCopy(M, bytes, (ptr) =>
    M.plannedFileGpuBytes(target, ptr, bytes.length, size ?? Number.MAX_SAFE_INTEGER, native, label),
  );
}
