// A model's files through the browser's Cache API: read from the cache when a complete entry is
// there, else fetched and written to the cache as they stream into the engine. An entry is only
// committed once its whole body has arrived (Cache.put), carries its size, and is checked against
// it when read; one that fails the check (or the load) is dropped and
// fetched again, never used. Without a Cache API, or past the storage quota, the model loads all
// the same and a warning says so.
import { cachedFileStream } from './gpt2-cache-reader.js';
import { fetchResponse } from './gpt2-download.js';
import { host } from './gpt2-host.js';

export const CACHE_NAME = 'gpt2-webgl-models';
const SIZE_HEADER = 'X-Gpt2-Bytes';

function cacheStorage() {
  return typeof caches === 'undefined' ? null : caches;
}

export class ModelFiles {
  // `cache`: the load option; `readCache` false fetches every file (after a bad entry); `warn(text)`
  // reports why something was not cached.
  constructor({ cache, readCache = true, signal, warn }) {
    this.enabled = cache;
    this.readCache = readCache;
    this.signal = signal;
    this.warn = warn;
    this.store = null;
    this.cachedUrls = new Set(); // files this load read from the cache
    this.writes = [];
  }

  async open() {
    if (!this.enabled) return;
    const storage = cacheStorage();
    // Node has no Cache API and reads its files where they are: nothing to say.
    if (!storage && host.node) return;
    if (!storage) {
      this.warn(
        'the Cache API is not available here (it needs a secure context: https or localhost); ' +
          'the model loads without caching',
      );
      return;
    }
    try {
      this.store = await storage.open(CACHE_NAME);
    } catch (error) {
      this.warn(`the model cache could not be opened (${error.message}); the model loads without caching`);
    }
  }

  // The file at `url` (weights: streamed, never held whole) as a Response whose Content-Length is its
  // size; null for a missing optional file. A compressed response is not cached: its Content-Length
  // is not the size of what it decodes to.
  async response(url, { optional = false } = {}) {
    const cached = await this.fromCache(url);
    if (cached)
      return new Response(cachedFileStream(cached, this.warn), { headers: { 'Content-Length': String(cached.size) } });
    const response = await fetchResponse(url, this.signal, { optional, onRetry: this.warn });
    if (!response || !this.store) return response;
    const size = Number(response.headers.get('Content-Length'));
    if (!(size > 0) || response.headers.get('Content-Encoding')) return response;
    const [mine, entry] = response.body.tee();
    this.writes.push(this.put(url, new Response(entry, { headers: this.entryHeaders(size, response) })));
    return new Response(mine, { headers: response.headers });
  }

  // A small file (config, tokenizer) read whole: cached with the size of its decoded bytes, so that
  // a server that compresses it (Content-Encoding) does not keep it out of the cache.
  async text(url, { optional = false } = {}) {
    const cached = await this.fromCache(url);
    if (cached) return cached.text();
    const response = await fetchResponse(url, this.signal, { optional, onRetry: this.warn });
    if (!response) return null;
    const bytes = new Uint8Array(await response.arrayBuffer());
    if (this.store)
      this.writes.push(this.put(url, new Response(bytes, { headers: this.entryHeaders(bytes.length, response) })));
    return new TextDecoder().decode(bytes);
  }

  entryHeaders(size, response) {
    return {
      'Content-Type': response.headers.get('Content-Type') ?? 'application/octet-stream',
      'Content-Length': String(size),
      [SIZE_HEADER]: String(size),
    };
  }

  put(url, entry) {
    return this.store.put(url, entry).catch((error) => {
      if (error?.name === 'QuotaExceededError')
        this.warn(
          "the browser's storage quota is full: the model's files were not cached; the model loads without caching",
        );
      else if (!this.signal?.aborted) this.warn(`${url} was not cached (${error?.message ?? error})`);
    });
  }

  // The cached entry of `url` as a Blob, when it is there whole.
  async fromCache(url) {
    if (!this.store || !this.readCache) return null;
    const hit = await this.store.match(url);
    if (!hit) return null;
    const expected = Number(hit.headers.get(SIZE_HEADER));
    const blob = await hit.blob();
    if (!(expected > 0) || blob.size !== expected) {
      await this.store.delete(url);
      return null;
    }
    this.cachedUrls.add(url);
    return blob;
  }

  // Waits until every file fetched by this load is in the cache (or has failed to get there).
  async settle() {
    await Promise.all(this.writes);
  }

  // Drops the entries this load read, so that the next load fetches them again.
  async dropCached() {
    await Promise.all([...this.cachedUrls].map((url) => this.store.delete(url)));
  }
}

// Every cached model: { source, bytes } per folder or GGUF file.
export async function cachedModels() {
  const storage = cacheStorage();
  if (!storage || !(await storage.has(CACHE_NAME))) return [];
  const store = await storage.open(CACHE_NAME);
  const models = new Map();
  for (const request of await store.keys()) {
    const url = new URL(request.url);
    const singleFile =
      !url.pathname.endsWith('.json') && !url.pathname.endsWith('.txt') && !url.pathname.endsWith('.safetensors');
    const source = singleFile ? url.href : new URL('./', url).href;
    const response = await store.match(request);
    models.set(source, (models.get(source) ?? 0) + Number(response.headers.get(SIZE_HEADER) ?? 0));
  }
  return [...models].map(([source, bytes]) => ({ source, bytes }));
}

export async function clearCache() {
  const storage = cacheStorage();
  return storage ? storage.delete(CACHE_NAME) : false;
}
