// Fetching a model's files over a network that fails: a request answered 408, 429 or 5xx, or that
// cannot connect, is retried with backoff; a body cut short (a dropped connection, a server that
// stops early) is resumed with a Range request from the first byte not yet received, so a file that
// breaks at 90% costs about 10% more, not 190%. Each retry is reported through `onRetry(text)`.
import { host } from './gpt2-host.js';
import { abortError } from './gpt2-errors.js';

// Retries after the first try, per request and per body; the wait doubles from BACKOFF_MS, or is
// what a Retry-After header asks, up to MAX_WAIT_MS.
export const RETRIES = 4;
const BACKOFF_MS = 250;
const MAX_WAIT_MS = 10000;
const RETRY_STATUS = new Set([408, 429, 500, 502, 503, 504]);

function wait(ms, signal) {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(done, ms);
    function done() {
      signal?.removeEventListener('abort', stop);
      resolve();
    }
    function stop() {
      clearTimeout(timer);
      reject(abortError(signal));
    }
    signal?.addEventListener('abort', stop, { once: true });
  });
}

// The wait before retry `attempt` (1, 2, ...): what the answer's Retry-After asks (in seconds), else
// BACKOFF_MS doubled each time.
function backoff(attempt, response) {
  const asked = response?.headers.get('Retry-After');
  const ms =
    asked !== null && asked !== undefined && Number(asked) >= 0
      ? Number(asked) * 1000
      : BACKOFF_MS * 2 ** (attempt - 1);
  return Math.min(ms, MAX_WAIT_MS);
}

// One request with retries: the last response (ok or not), or the error of the last try.
async function request(url, signal, headers, onRetry) {
  for (let attempt = 0; ; attempt += 1) {
    let response = null;
    let failure;
    try {
      response = await fetch(url, { signal, headers });
      if (!RETRY_STATUS.has(response.status)) return response;
      failure = `HTTP ${response.status}`;
    } catch (error) {
      if (signal?.aborted) throw abortError(signal);
      failure = error.message;
    }
    if (attempt === RETRIES) {
      if (response) return response;
      throw new Error(`${url}: could not be fetched (${failure}, ${RETRIES + 1} tries); is the URL reachable?`);
    }
    const ms = backoff(attempt + 1, response);
    response?.body?.cancel().catch(() => {});
    onRetry?.(`${url}: ${failure}; trying again in ${(ms / 1000).toFixed(1)} s (retry ${attempt + 1} of ${RETRIES})`);
    await wait(ms, signal);
  }
}

// Where a 206 answer to `bytes=from-` of a `size`-byte file starts: its Content-Range's first byte,
// or, where CORS hides that header, `from` if its length is the rest of the file.
function rangeStart(response, from, size) {
  const match = /^bytes (\d+)-/.exec(response.headers.get('Content-Range') ?? '');
  if (match) return Number(match[1]);
  return Number(response.headers.get('Content-Length')) === size - from ? from : null;
}

// The bytes at the start of `next`, the answer to a Range request from byte `received` of a `size`-byte
// file of `version`, that were already received: none for the rest of the same file (206), all
// `received` for the whole file again (200). Any other answer means the file changed.
function alreadyReceived(url, next, { received, size, version }) {
  const nextVersion = next.headers.get('ETag') ?? next.headers.get('Last-Modified');
  const sameFile = !version || !nextVersion || nextVersion === version;
  if (next.status === 206 && sameFile && rangeStart(next, received, size) === received) return 0;
  if (next.status === 200 && sameFile && Number(next.headers.get('Content-Length')) === size) return received;
  next.body?.cancel().catch(() => {});
  const why = next.status === 200 ? 'its size or version changed' : `HTTP ${next.status} to a Range request`;
  throw new Error(`${url}: the file changed on the server while it downloaded (${why}); load the model again`);
}

// `first`'s body, resumed where it breaks. Its length must be known and its bytes the file's own (no
// Content-Encoding: a Range counts encoded bytes). A server that ignores Range sends the whole file
// again, whose bytes already received are dropped; one whose file changed (another size, ETag or
// Last-Modified) fails the load rather than splice two files. No If-Range: across origins it would
// need a CORS preflight that many static hosts do not answer.
function resumable(url, first, signal, onRetry) {
  const size = Number(first.headers.get('Content-Length'));
  if (!(size > 0) || first.headers.get('Content-Encoding') || !first.body) return first;
  const version = first.headers.get('ETag') ?? first.headers.get('Last-Modified');
  let reader = first.body.getReader();
  let received = 0;
  let skip = 0; // bytes of a whole-file answer that were already received
  let retries = 0;
  let cancelled = false; // the reader wants no more: what the body still holds is not a break

  async function resume(reason) {
    if (signal?.aborted) throw abortError(signal);
    if (retries === RETRIES)
      throw new Error(
        `${url}: the download broke at byte ${received} of ${size} (${reason}) ` +
          `and did not resume after ${RETRIES} retries`,
      );
    retries += 1;
    const ms = backoff(retries);
    onRetry?.(
      `${url}: the download broke at byte ${received} of ${size} (${reason}); ` +
        `resuming in ${(ms / 1000).toFixed(1)} s (retry ${retries} of ${RETRIES})`,
    );
    await wait(ms, signal);
    const next = await request(url, signal, { Range: `bytes=${received}-` }, onRetry);
    skip = alreadyReceived(url, next, { received, size, version });
    reader = next.body.getReader();
  }

  const body = new ReadableStream({
    async pull(controller) {
      for (;;) {
        let chunk;
        try {
          const { done, value } = await reader.read();
          if (cancelled) return;
          if (done && received < size) throw new Error(`the body ended after ${received} bytes`);
          if (done) {
            controller.close();
            return;
          }
          chunk = value;
        } catch (error) {
          if (cancelled) return;
          if (signal?.aborted) throw abortError(signal);
          await resume(error.message);
          continue;
        }
        const dropped = Math.min(skip, chunk.length);
        skip -= dropped;
        if (dropped === chunk.length) continue;
        received += chunk.length - dropped;
        controller.enqueue(chunk.subarray(dropped));
        return;
      }
    },
    cancel(reason) {
      cancelled = true;
      return reader.cancel(reason);
    },
  });
  return new Response(body, { status: first.status, statusText: first.statusText, headers: first.headers });
}

// The file at `url` as a Response that retries and resumes; null for a 404 when `optional`. Any
// other status after the retries fails with it.
export async function fetchResponse(url, signal, { optional = false, onRetry } = {}) {
  if (url.startsWith('file:')) return host.openFile(url, { optional });
  const response = await request(url, signal, undefined, onRetry);
  if (optional && response.status === 404) return null;
  if (!response.ok) throw new Error(`${url}: HTTP ${response.status} ${response.statusText}`.trim());
  return resumable(url, response, signal, onRetry);
}

// The first `length` bytes of the file at `url` (fewer where the file is shorter) and the file's size
// where the answer tells it (else null): a Range request, or the start of the whole file from a
// server that ignores Range, whose body is cancelled after those bytes.
export async function fetchPrefix(url, length, signal, { onRetry } = {}) {
  if (url.startsWith('file:')) return host.filePrefix(url, length);
  const response = await request(url, signal, { Range: `bytes=0-${length - 1}` }, onRetry);
  if (response.status === 416) return { bytes: new Uint8Array(0), size: 0 }; // an empty file
  if (!response.ok) throw new Error(`${url}: HTTP ${response.status} ${response.statusText}`.trim());
  const size =
    response.status === 206
      ? Number(/\/(\d+)$/.exec(response.headers.get('Content-Range') ?? '')?.[1])
      : response.headers.get('Content-Encoding')
        ? Number.NaN
        : Number(response.headers.get('Content-Length') ?? Number.NaN);
  const bytes = new Uint8Array(length);
  let received = 0;
  const reader = response.body.getReader();
  try {
    while (received < length) {
      const { done, value } = await reader.read();
      if (done) break;
      const used = Math.min(value.length, length - received);
      bytes.set(value.subarray(0, used), received);
      received += used;
    }
  } finally {
    reader.cancel().catch(() => {});
  }
  return { bytes: bytes.subarray(0, received), size: size >= 0 ? size : null };
}
