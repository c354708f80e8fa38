// What the browser itself allows a load, with no engine in the way: how fast the page's thread
// reads a file from the Cache API (only reading, then copying each chunk into one buffer as a load
// copies into the wasm heap), and how fast texSubImage3D takes that file's bytes into a texture
// (16 MB at a time, as RGBA16F halves and as RG32UI words, the two ways fp16 weights go up; timed
// until getError, which waits for the GPU process to take them all). A load that reads and uploads
// every byte of its file can be no faster than the slower of the two.
// Query: file (URL), rounds (default 3), post (1: POST each row to /result, as
// ../../shared/gpubrowser collects them).
const query = new URLSearchParams(location.search);

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

// Uploads `bytes` (a multiple of 8 bytes long) into a texture array of 8-byte texels, 2048 wide.
function upload(gl, bytes, half) {
  const width = 2048;
  const pieceRows = 1024; // 16 MB
  const rows = Math.floor(bytes.length / (8 * width));
  const texture = gl.createTexture();
  gl.bindTexture(gl.TEXTURE_2D_ARRAY, texture);
  gl.texStorage3D(gl.TEXTURE_2D_ARRAY, 1, half ? gl.RGBA16F : gl.RG32UI, width, pieceRows, Math.ceil(rows / pieceRows));
  gl.getError();
  const start = performance.now();
  for (let row = 0; row < rows; row += pieceRows) {
    const count = Math.min(pieceRows, rows - row);
    const words = count * width * (half ? 4 : 2);
    const view = half
      ? new Uint16Array(bytes.buffer, row * width * 8, words)
      : new Uint32Array(bytes.buffer, row * width * 8, words);
    const [format, type] = half ? [gl.RGBA, gl.HALF_FLOAT] : [gl.RG_INTEGER, gl.UNSIGNED_INT];
    gl.texSubImage3D(gl.TEXTURE_2D_ARRAY, 0, 0, 0, row / pieceRows, width, count, 1, format, type, view);
  }
  const error = gl.getError();
  const ms = performance.now() - start;
  gl.deleteTexture(texture);
  if (error !== gl.NO_ERROR) throw new Error(`texSubImage3D: GL error ${error}`);
  return { ms, bytes: rows * width * 8 };
}

export async function run(post) {
  const url = query.get('file');
  const cache = await caches.open('gpt2-webgl-ceilings');
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
  }
  await caches.delete('gpt2-webgl-ceilings');
}

if (query.get('post') === '1') {
  const post = (body) => fetch('/result?stage=ceiling', { method: 'POST', body: JSON.stringify(body) });
  try {
    await run(post);
  } catch (error) {
    await post({ kind: 'error', error: String(error?.stack ?? error) });
  }
  await fetch('/result?stage=done', { method: 'POST', body: '{}' });
}
