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

// The engine built without SIMD, for browsers without it: named here as a literal so that bundlers
// copy it as they copy gpt2-wasm.wasm, which the glue names.
const NO_SIMD_WASM = () => new URL('./gpt2-wasm-nosimd.wasm', import.meta.url).href;

// `wasmUrl` (absolute) names gpt2-wasm.wasm where a bundler left it elsewhere (the build without SIMD
// is then beside it, named gpt2-wasm-nosimd.wasm); unset, the glue finds it beside itself. The module
// throws the error classes a caller acts on itself (bindings.cpp): it is handed them here.
export function nativeModule(wasmUrl) {
  if (!WebAssembly.validate(SIMD_PROBE))
    wasmUrl = wasmUrl ? wasmUrl.replace(/\.wasm$/, '-nosimd.wasm') : NO_SIMD_WASM();
  const locate = wasmUrl ? { locateFile: (file, folder) => (file.endsWith('.wasm') ? wasmUrl : folder + file) } : {};
  modulePromise ??= host
    .wasmBinary(wasmUrl)
    .then((binary) =>
      createGpt2Module({
        ContextLostError,
        WebGL2UnavailableError,
        ...locate,
        ...(binary ? { wasmBinary: binary } : {}),
      }),
    )
    .catch((error) => {
      modulePromise = null;
      throw new Error(
        `gpt2-wasm.wasm (${wasmUrl ?? 'beside gpt2-wasm.js'}) could not be loaded: ${error?.message ?? error}; ` +
          'where a bundler did not copy it there, pass its URL as the wasmUrl option (docs/api.md, "Bundlers")',
      );
    });
  return modulePromise;
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
