// Where a load's time goes, on the page's thread (or in the module's Worker, whose WebGL calls are
// not timed): each load's wall time (with when the model was
// made and when its files' last byte was read), and the time spent inside
// each WebGL2 call the engine made meanwhile (a call that returns a value, such as getError, waits
// for the GPU process to run everything issued before it). The first load fills the Cache API;
// the later ones read from it, as a later visit does.
// Query: model (URL), weights, worker (1: load in the module's Worker; default: on the page's
// thread), module (the module's URL, default /gpt2.js: another build of it for
// an A/B run), rounds (cached loads, default 3), post (1: POST each row to /result, as
// ../../shared/gpubrowser collects them).
import { postRows } from './posted.js';

const query = new URLSearchParams(location.search);
const { GPT2 } = await import(query.get('module') ?? '/gpt2.js');

// Times every method of WebGL2RenderingContext; `take()` returns and resets the tally.
function timeWebgl() {
  let tally = new Map();
  const proto = WebGL2RenderingContext.prototype;
  for (const name of Object.getOwnPropertyNames(proto)) {
    const descriptor = Object.getOwnPropertyDescriptor(proto, name);
    if (typeof descriptor.value !== 'function' || name === 'constructor') continue;
    const call = descriptor.value;
    proto[name] = function (...args) {
      const start = performance.now();
      try {
        return call.apply(this, args);
      } finally {
        const t = tally.get(name) ?? { calls: 0, ms: 0 };
        t.calls += 1;
        t.ms += performance.now() - start;
        tally.set(name, t);
      }
    };
  }
  return () => {
    const top = [...tally].sort((a, b) => b[1].ms - a[1].ms).slice(0, 12);
    tally = new Map();
    return Object.fromEntries(top.map(([name, t]) => [name, { calls: t.calls, ms: Math.round(t.ms * 10) / 10 }]));
  };
}

export async function run(post) {
  const source = query.get('model');
  const weights = query.get('weights') ?? 'fp16';
  const worker = query.get('worker') === '1';
  const module = query.get('module') ?? '/gpt2.js';
  const take = timeWebgl();
  await GPT2.clearCache();
  for (let round = 0; round <= Number(query.get('rounds') ?? 3); round += 1) {
    let last = {};
    let planned = null;
    let read = null;
    const start = performance.now();
    const onProgress = (e) => {
      last = e;
      if (planned === null && e.gpuBytes !== undefined) planned = performance.now() - start;
      if (read === null && e.total > 0 && e.loaded === e.total) read = performance.now() - start;
    };
    const model = await GPT2.load(source, { weights, worker, onProgress });
    const loadMs = performance.now() - start;
    const stats = await model.stats();
    await model.dispose();
    await post({
      kind: 'load',
      visit: round === 0 ? 'first' : 'cached',
      round,
      module,
      model: source,
      weights,
      worker,
      load_ms: Math.round(loadMs),
      // when the model was made (its textures planned), and when the last byte of the files was read
      made_ms: Math.round(planned),
      read_ms: Math.round(read),
      bytes: last.total,
      from_cache: last.fromCache,
      renderer: stats.renderer,
      // the wasm heap never shrinks: after a page's first load, that load's peak
      wasm_heap_bytes: stats.wasmHeapBytes,
      webgl: take(),
    });
  }
}

if (query.get('post') === '1') await postRows('load', run);
