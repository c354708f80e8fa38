// What the browser itself allows a load, with no engine in the way: how fast the page's thread
// reads a file from the Cache API (only reading, then copying each chunk into one buffer as a load
// copies into the wasm heap), and how fast texSubImage3D takes that file's bytes into a texture
// (16 MB at a time, as RGBA16F halves and as RG32UI words, the two ways fp16 weights go up; timed
// until getError, which waits for the GPU process to take them all), and both at once: each 16 MB
// uploaded as soon as it is read, on this thread or with a Worker reading. A load that reads and
// uploads every byte of its file on one thread can be no faster than the first of these.
// Query: file (URL), rounds (default 3), post (1: POST each row to /result, as
// ../../shared/gpubrowser collects them).
import { postRows } from './posted.js';

const query = new URLSearchParams(location.search);
const CACHE = 'gpt2-webgl-ceilings';

async function read(cache, url, into) {
  const reader = (await cache.match(url)).body.getReader();
  let bytes = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return bytes;
    into?.set(value, bytes);
    bytes += value.length;
  }
}

const WIDTH = 2048; // texels of 8 bytes a row
const PIECE_ROWS = 1024; // 16 MB a piece and a layer

// A texture array of 8-byte texels for `rows` rows, 16 MB a layer; past 16 layers, pieces write over
// the first ones (the rate is what is measured, not the memory).
function arrayFor(gl, rows, half) {
  const layers = Math.min(16, Math.ceil(rows / PIECE_ROWS));
  const texture = gl.createTexture();
  gl.bindTexture(gl.TEXTURE_2D_ARRAY, texture);
  gl.texStorage3D(gl.TEXTURE_2D_ARRAY, 1, half ? gl.RGBA16F : gl.RG32UI, WIDTH, PIECE_ROWS, layers);
  gl.getError();
  const put = (bytes, offset, row, count) => {
    const words = count * WIDTH * (half ? 4 : 2);
    const view = half
      ? new Uint16Array(bytes.buffer, bytes.byteOffset + offset, words)
      : new Uint32Array(bytes.buffer, bytes.byteOffset + offset, words);
    const [format, type] = half ? [gl.RGBA, gl.HALF_FLOAT] : [gl.RG_INTEGER, gl.UNSIGNED_INT];
    gl.texSubImage3D(gl.TEXTURE_2D_ARRAY, 0, 0, 0, (row / PIECE_ROWS) % layers, WIDTH, count, 1, format, type, view);
  };
  // Waits for the GPU process to take every upload, and frees the texture.
  const finish = () => {
    const error = gl.getError();
    gl.deleteTexture(texture);
    if (error !== gl.NO_ERROR) throw new Error(`texSubImage3D: GL error ${error}`);
  };
  return { put, finish };
}

// Uploads `bytes` (whole rows of it) 16 MB at a time.
function upload(gl, bytes, half) {
  const rows = Math.floor(bytes.length / (8 * WIDTH));
  const array = arrayFor(gl, rows, half);
  const start = performance.now();
  for (let row = 0; row < rows; row += PIECE_ROWS)
    array.put(bytes, row * WIDTH * 8, row, Math.min(PIECE_ROWS, rows - row));
  array.finish();
  return { ms: performance.now() - start, bytes: rows * WIDTH * 8 };
}

// Chunks of the cached file, read on this thread or, `inWorker`, read by a Worker and transferred.
async function* chunks(cache, url, inWorker) {
  if (!inWorker) {
    const reader = (await cache.match(url)).body.getReader();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      yield value;
    }
  }
  const source = `onmessage = async ({ data }) => {
    const reader = (await (await caches.open(data.cache)).match(data.url)).body.getReader();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return postMessage(null);
      postMessage(value, [value.buffer]);
    }
  };`;
  const worker = new Worker(URL.createObjectURL(new Blob([source], { type: 'text/javascript' })));
  const queue = [];
  let wake = null;
  worker.onmessage = ({ data }) => {
    queue.push(data);
    wake?.();
  };
  worker.postMessage({ cache: CACHE, url: new URL(url, location.href).href });
  try {
    for (;;) {
      if (queue.length === 0) await new Promise((resolve) => (wake = resolve));
      const chunk = queue.shift();
      if (chunk === null) return;
      yield chunk;
    }
  } finally {
    worker.terminate();
  }
}

// Reads the cached file and uploads each 16 MB as soon as it has arrived: the most a load could
// overlap reading with uploading, with both on this thread or with the reading on a second one.
async function readAndUpload(gl, cache, url, size, inWorker) {
  const rows = Math.floor(size / (8 * WIDTH));
  const array = arrayFor(gl, rows, true);
  const piece = new Uint8Array(PIECE_ROWS * WIDTH * 8);
  const start = performance.now();
  let filled = 0;
  let row = 0;
  for await (const value of chunks(cache, url, inWorker)) {
    for (let at = 0; at < value.length && row < rows; ) {
      const n = Math.min(value.length - at, piece.length - filled);
      piece.set(value.subarray(at, at + n), filled);
      filled += n;
      at += n;
      const count = Math.min(PIECE_ROWS, rows - row);
      if (filled >= count * WIDTH * 8) {
        array.put(piece, 0, row, count);
        row += count;
        filled = 0;
      }
    }
  }
  array.finish();
  return { ms: performance.now() - start, bytes: size };
}

export async function run(post) {
  const url = query.get('file');
  const cache = await caches.open(CACHE);
  await cache.put(url, await fetch(url));
  const size = Number((await cache.match(url)).headers.get('Content-Length'));
  const buffer = new Uint8Array(size);
  const gl = new OffscreenCanvas(1, 1).getContext('webgl2');
  const debug = gl.getExtension('WEBGL_debug_renderer_info');
  const renderer = debug ? gl.getParameter(debug.UNMASKED_RENDERER_WEBGL) : gl.getParameter(gl.RENDERER);
  const row = (what, ms, bytes, round) =>
    post({
      kind: 'ceiling',
      what,
      round,
      file: url,
      bytes,
      ms: Math.round(ms),
      gb_per_s: +(bytes / 1e6 / ms).toFixed(3),
      renderer,
    });
  for (let round = 0; round < Number(query.get('rounds') ?? 3); round += 1) {
    for (const [what, into] of [
      ['cache read', null],
      ['cache read + copy', buffer],
    ]) {
      const start = performance.now();
      const bytes = await read(cache, url, into);
      await row(what, performance.now() - start, bytes, round);
    }
    for (const half of [true, false]) {
      const { ms, bytes } = upload(gl, buffer, half);
      await row(half ? 'texSubImage3D RGBA16F' : 'texSubImage3D RG32UI', ms, bytes, round);
    }
    for (const inWorker of [false, true]) {
      const both = await readAndUpload(gl, cache, url, size, inWorker);
      await row(
        inWorker ? 'a Worker reads, this thread uploads' : 'read, then upload each 16 MB',
        both.ms,
        both.bytes,
        round,
      );
    }
  }
  await caches.delete(CACHE);
}

if (query.get('post') === '1') await postRows('ceiling', run);
