// The package under Node 20 and later: the same GPT2 class, loading from paths and file: URLs as well
// as http(s) URLs and hub ids, on the CPU backend, on the calling thread. package.json's "node" export
// makes `import { GPT2 } from 'gpt2-webgl'` resolve here under Node and to gpt2.js in browsers.
import { createReadStream, statSync } from 'node:fs';
import { open, readFile, stat } from 'node:fs/promises';
import { resolve } from 'node:path';
import { Readable } from 'node:stream';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { host } from './gpt2-host.js';

host.node = true;

host.fileUrl = (source) => {
  const text = String(source);
  if (/^[a-z][a-z0-9+.-]+:/i.test(text) && !text.startsWith('file:')) return null;
  const url = text.startsWith('file:') ? new URL(text) : pathToFileURL(resolve(text));
  // A folder is named with or without its trailing slash, as a path usually is: one that exists is
  // asked, one that does not is a folder when its last segment has no dot (as in a browser).
  const stats = statSync(fileURLToPath(url), { throwIfNoEntry: false });
  const folder = /[/\\]$/.test(text) || (stats ? stats.isDirectory() : !url.pathname.split('/').pop().includes('.'));
  if (folder && !url.pathname.endsWith('/')) url.pathname += '/';
  return url.href;
};

host.openFile = async (url, { optional }) => {
  const path = fileURLToPath(url);
  let size;
  try {
    size = (await stat(path)).size;
  } catch (error) {
    if (error.code === 'ENOENT' && optional) return null;
    throw new Error(`${path}: ${error.code === 'ENOENT' ? 'no such file' : error.message}`);
  }
  return new Response(Readable.toWeb(createReadStream(path)), { headers: { 'Content-Length': String(size) } });
};

host.filePrefix = async (url, length) => {
  const path = fileURLToPath(url);
  const file = await open(path).catch((error) => {
    throw new Error(`${path}: ${error.code === 'ENOENT' ? 'no such file' : error.message}`);
  });
  try {
    const bytes = new Uint8Array(length);
    const { bytesRead } = await file.read(bytes, 0, length, 0);
    return { bytes: bytes.subarray(0, bytesRead), size: (await file.stat()).size };
  } finally {
    await file.close();
  }
};

host.wasmBinary = (wasmUrl) => readFile(new URL(wasmUrl ?? './gpt2-wasm.wasm', import.meta.url));

export * from './gpt2.js';
export { default } from './gpt2.js';
