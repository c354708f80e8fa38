// The module Worker that runs the engine for GPT2.load's default worker mode: one per page, hosting
// every model the page loads (gpt2-remote.js speaks to it). Each request carries a call number; the
// reply is { call, result } or { call, error }, with { call, event } messages before it for
// progress and tokens; { abort: call } aborts a request; { lost: model } reports a lost context;
// { reader, port } and { readerFailed } make readers of cached files;
// { ready: true }, sent once this script and its imports have run, tells the page it started.
import { readersFromPage } from './gpt2-cache-reader.js';
import { Engine } from './gpt2-engine.js';
import { DisposedError, toRemote } from './gpt2-errors.js';
import { METHODS } from './gpt2-methods.js';
import { probeOffscreenCanvas } from './gpt2-webgl-probe.js';

const models = new Map();
const controllers = new Map();
let nextModel = 1;

function engine(id) {
  const model = models.get(id);
  if (!model) throw new DisposedError();
  return model;
}

// Readers of cached files, made by the page (gpt2-cache-reader.js says why): { reader, port } asks for
// one, which then speaks over `port`; { readerFailed, reason } answers where the page could make none.
const readers = new Map();
let nextReader = 1;
readersFromPage((receive) => {
  const id = nextReader++;
  const { port1, port2 } = new MessageChannel();
  port1.onmessage = ({ data }) => receive(data);
  readers.set(id, receive);
  postMessage({ reader: id, port: port2 }, [port2]);
  return {
    post: (message, transfer) => port1.postMessage(message, transfer),
    stop: () => {
      readers.delete(id);
      port1.postMessage({ stop: true });
    },
  };
});

// The transferable buffers of a result: typed arrays move to the page instead of being copied.
function transfers(result) {
  if (ArrayBuffer.isView(result)) return [result.buffer];
  if (result && ArrayBuffer.isView(result.data)) return [result.data.buffer];
  return [];
}

// The table's methods (gpt2-methods.js) arrive with their arguments checked on the page.
const handlers = {
  ...Object.fromEntries(Object.keys(METHODS).map((name) => [name, (id, args) => engine(id)[name](...args)])),
  async load(_, [source, options, wantsProgress], { signal, call }) {
    const id = nextModel++;
    const model = await Engine.load(source, options, {
      signal,
      onProgress: wantsProgress ? (progress) => postMessage({ call, event: progress }) : undefined,
      onContextLost: () => postMessage({ lost: id }),
    });
    models.set(id, model);
    return { model: id, config: model.config };
  },
  probe: () => probeOffscreenCanvas(),
  plannedGpuBytes: (_, [models, options]) => Engine.plannedGpuBytes(models, options),
  optionsSeen: (_, [load, generate]) => Engine.optionsSeen(load, generate),
  liveGlObjects: () => Engine.liveGlObjects(),
  async generate(id, [prompt, options], { signal, call }) {
    for await (const token of engine(id).generate(prompt, options, signal)) postMessage({ call, event: token });
    return null;
  },
  dispose(id) {
    models.get(id)?.dispose();
    models.delete(id);
    return null;
  },
};

self.onmessage = async ({ data }) => {
  if (data.abort !== undefined) {
    controllers.get(data.abort)?.abort();
    return;
  }
  if (data.readerFailed !== undefined) {
    readers.get(data.readerFailed)?.({ failed: data.reason });
    return;
  }
  const { call, method, model, args = [] } = data;
  const controller = new AbortController();
  controllers.set(call, controller);
  try {
    const handler = handlers[method];
    if (!handler) throw new Error(`gpt2-worker: unknown request ${method}`);
    const result = await handler(model, args, { signal: controller.signal, call });
    postMessage({ call, result }, transfers(result));
  } catch (error) {
    postMessage({ call, error: toRemote(error) });
  } finally {
    controllers.delete(call);
  }
};

postMessage({ ready: true });
