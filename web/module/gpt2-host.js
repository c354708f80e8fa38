// What the module needs from where it runs and does differently under Node: set by gpt2-node.js,
// the package's entry point there (package.json's "node" export). Browsers keep these defaults, so no
// browser bundle carries anything of Node's.
export const host = {
  // Under Node: the engine runs on the calling thread, on the CPU backend (Node has no WebGL).
  node: false,
  // `source` (a path or a file: URL) as the absolute file: URL of a file, or of a folder (ending in
  // '/'); null where it is neither (an http(s) URL or a hub id, resolved as in a browser).
  fileUrl: (_source) => null,
  // The file at a file: URL as a Response whose Content-Length is its size; null for a missing
  // optional file.
  openFile: async (url, _options) => {
    throw new Error(`${url}: file: URLs are read under Node only`);
  },
  // The first `length` bytes of the file at a file: URL (fewer where it is shorter) and its size, as
  // fetchPrefix answers.
  filePrefix: async (url, _length) => {
    throw new Error(`${url}: file: URLs are read under Node only`);
  },
  // The bytes of gpt2-wasm.wasm (at `wasmUrl`, else beside the module), where the glue cannot fetch
  // them itself; null: it fetches them.
  wasmBinary: async (_wasmUrl) => null,
};
