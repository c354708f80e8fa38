// The WebAssembly module of the thread that runs the engine, made on first use, and the load options
// as its C++ side reads them.
import createGpt2Module from './gpt2-wasm.js';
import { ContextLostError, WebGL2UnavailableError } from './gpt2-errors.js';

let modulePromise = null;

// `wasmUrl` (absolute) names the .wasm where a bundler left it elsewhere; unset, the glue finds it
// beside itself. The module throws the error classes a caller acts on itself (bindings.cpp): it is
// handed them here.
export function nativeModule(wasmUrl) {
  const locate = wasmUrl ? { locateFile: (file, folder) => (file.endsWith('.wasm') ? wasmUrl : folder + file) } : {};
  modulePromise ??= createGpt2Module({ ContextLostError, WebGL2UnavailableError, ...locate }).catch((error) => {
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
