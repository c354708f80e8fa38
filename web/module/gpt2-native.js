// The WebAssembly module of the thread that runs the engine, made on first use, and the load options
// as its C++ side reads them.
import createGpt2Module from './gpt2-wasm.js';
import { ContextLostError, WebGL2UnavailableError } from './gpt2-errors.js';
import { host } from './gpt2-host.js';

let modulePromise = null;

// The smallest module that uses WebAssembly SIMD: (func (result v128) (i32x4.splat (i32.const 0))).
// Every current browser validates it; Safari before 16.4 does not.
// biome-ignore format: the bytes a section to a line
const SIMD_PROBE = new Uint8Array([
  0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, // magic, version
  0x01, 0x05, 0x01, 0x60, 0x00, 0x01, 0x7b, // types: () -> v128
  0x03, 0x02, 0x01, 0x00, // one function of that type
  0x0a, 0x08, 0x01, 0x06, 0x00, 0x41, 0x00, 0xfd, 0x11, 0x0b, // its body: i32.const 0, i32x4.splat, end
]);

// The threads build's CPU kernels run on this many threads, the calling one included: the decode
// reads every weight from memory once a token, which more cores than this do not read faster.
const MAX_THREADS = 16;

// The files of the builds other than the SIMD one (whose glue, imported above, names its .wasm), as
// literals beside this module that bundlers copy as they are: the threads build's glue is imported
// from its URL only where it runs, so that no bundler parses it (its workers are made from a file
// that imports the glue again).
const FILES = {
  nosimd: () => ({ wasm: new URL('./gpt2-wasm-nosimd.wasm', import.meta.url).href }),
  threads: () => ({
    wasm: new URL('./gpt2-wasm-threads.wasm', import.meta.url).href,
    glue: new URL('./gpt2-wasm-threads.js', import.meta.url).href,
    worker: sameOrigin(new URL('./gpt2-wasm-threads.worker.js', import.meta.url).href),
  }),
};

// Vite inlines files this small as data: URLs. A worker made from one has an opaque origin, which
// may not import the glue; one from a blob: URL made here has this page's.
function sameOrigin(url) {
  if (!url.startsWith('data:')) return url;
  const comma = url.indexOf(',');
  const body = url.slice(comma + 1);
  const text = url.slice(0, comma).endsWith(';base64') ? atob(body) : decodeURIComponent(body);
  return URL.createObjectURL(new Blob([text], { type: 'text/javascript' }));
}

// Which build this thread runs: the one with a worker per core where the page is cross-origin
// isolated (it shares its memory with them), else one thread, with SIMD where the browser has it.
// Under Node the module runs on one thread (its glue is the browser's: web and worker only).
export function nativeBuild() {
  const simd = WebAssembly.validate(SIMD_PROBE);
  const threads = Math.min(MAX_THREADS, globalThis.navigator?.hardwareConcurrency ?? 1);
  if (simd && !host.node && globalThis.crossOriginIsolated === true && threads > 1)
    return { name: 'threads', threads, wasm: 'gpt2-wasm-threads.wasm' };
  return simd
    ? { name: 'simd', threads: 1, wasm: 'gpt2-wasm.wasm' }
    : { name: 'nosimd', threads: 1, wasm: 'gpt2-wasm-nosimd.wasm' };
}

// The URLs of `build`'s files: where `wasmUrl` (gpt2-wasm.wasm's, absolute) is given, each beside it
// under its own name; else beside this module (none for the SIMD build: its glue finds its .wasm).
function filesOf(build, wasmUrl) {
  if (!wasmUrl) return FILES[build.name]?.() ?? {};
  const beside = (name) => new URL(name, wasmUrl).href;
  if (build.name === 'simd') return { wasm: wasmUrl };
  if (build.name === 'nosimd') return { wasm: beside(build.wasm) };
  return {
    wasm: beside(build.wasm),
    glue: beside('gpt2-wasm-threads.js'),
    worker: beside('gpt2-wasm-threads.worker.js'),
  };
}

// `wasmUrl` (absolute) names gpt2-wasm.wasm where a bundler left it elsewhere; the other builds' files
// are then beside it. The module throws the error classes a caller acts on itself (bindings.cpp):
// it is handed them here.
export function nativeModule(wasmUrl) {
  if (modulePromise) return modulePromise;
  const build = nativeBuild();
  const files = filesOf(build, wasmUrl);
  // Without files of its own, the glue finds its .wasm by a URL that bundlers rewrite: no locateFile.
  const locate = files.wasm
    ? {
        locateFile: (file, folder) =>
          file.endsWith('.wasm') ? files.wasm : file.endsWith('.worker.js') ? files.worker : folder + file,
      }
    : {};
  modulePromise = Promise.all([
    host.wasmBinary(files.wasm),
    files.glue
      ? import(/* webpackIgnore: true */ /* turbopackIgnore: true */ /* @vite-ignore */ files.glue).then(
          (m) => m.default,
        )
      : createGpt2Module,
  ])
    .then(([binary, create]) =>
      create({
        ContextLostError,
        WebGL2UnavailableError,
        ...locate,
        // The threads build: the workers it starts with the module, and the glue they import.
        pthreadPoolSize: build.threads - 1,
        ...(files.glue ? { mainScriptUrlOrBlob: files.glue } : {}),
        ...(binary ? { wasmBinary: binary } : {}),
      }),
    )
    .catch((error) => {
      modulePromise = null;
      throw new Error(
        `${build.wasm} (${files.wasm ?? 'beside gpt2-wasm.js'}) could not be loaded: ${error?.message ?? error}; ` +
          'where a bundler did not copy it there, pass the URL of gpt2-wasm.wasm as the wasmUrl option (docs/api.md, "Bundlers")',
      );
    });
  return modulePromise;
}

// The wasm heap as bytes. In the threads build a worker that grew the memory leaves this thread's
// view short; the memory's own buffer is the whole heap.
export function heapBytes(M) {
  const buffer = M.wasmMemory?.buffer;
  return buffer && M.HEAPU8.buffer !== buffer ? new Uint8Array(buffer) : M.HEAPU8;
}

// The module if this thread has made it, else null.
export function loadedModule() {
  return modulePromise;
}

// The load options as the C++ side reads them (platform/web/js_options.h): every option of
// options.json by its name, the tuning's beside the others, null where unset.
export function nativeOptions(options) {
  return { ...options, ...options.tuning };
}
