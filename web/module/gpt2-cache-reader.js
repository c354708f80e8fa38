// A cached file's bytes, read on a second thread. Reading a file from the Cache API costs the thread
// that reads it about as much time as the GPU process takes to upload it, and on one thread the two
// do not overlap (docs/benchmarks.md, "What the browser allows a load"): a small Worker reads the
// file's Blob and transfers its chunks to the loading thread, at most WINDOW bytes ahead of it.

const WINDOW = 64 << 20;

// The reader: a plain script (no module, no file of its own), so that bundlers have nothing to find.
const READER = `let credit = 0;
let wake = null;
onmessage = async ({ data }) => {
  if (data.credit) {
    credit += data.credit;
    wake?.();
    return;
  }
  try {
    const reader = data.blob.stream().getReader();
    for (;;) {
      while (credit <= 0) await new Promise((resolve) => (wake = resolve));
      const { done, value } = await reader.read();
      if (done) return postMessage({ done: true });
      credit -= value.byteLength;
      // A chunk that is part of a larger buffer is copied: only what it views may be handed over.
      const own = value.byteLength === value.buffer.byteLength ? value : value.slice();
      postMessage({ value: own }, [own.buffer]);
    }
  } catch (error) {
    postMessage({ error: String(error?.message ?? error) });
  }
};`;

let readerUrl = null;

// A ReadableStream of `blob`'s bytes read by a Worker, made at the first read (a folder's shards are
// all opened before the first is read); where no Worker can be made here (none in this context, or
// a content security policy without blob: workers), of `blob.stream()`, with `warn(text)` told why.
export function cachedFileStream(blob, warn) {
  let worker = null;
  let here = null; // the reader of blob.stream(), where the Worker could not be made or failed at once
  let received = false;
  const queue = [];
  let wake = null;
  const receive = (message) => {
    queue.push(message);
    wake?.();
    wake = null;
  };
  const readHere = (why) => {
    warn(`cached files are read on the loading thread (${why}); a later visit loads slower`);
    here = blob.stream().getReader();
  };
  const start = () => {
    try {
      if (typeof Worker === 'undefined') return readHere('no Worker here');
      readerUrl ??= URL.createObjectURL(new Blob([READER], { type: 'text/javascript' }));
      worker = new Worker(readerUrl);
    } catch (error) {
      return readHere(error?.message ?? String(error));
    }
    worker.onmessage = ({ data }) => receive(data);
    worker.onerror = (event) => {
      event.preventDefault();
      receive({ failed: event.message || 'the reader Worker could not start' });
    };
    worker.postMessage({ credit: WINDOW });
    worker.postMessage({ blob });
  };
  async function pull(controller) {
    if (!worker && !here) start();
    if (here) {
      const { done, value } = await here.read();
      return done ? controller.close() : controller.enqueue(value);
    }
    while (queue.length === 0) await new Promise((resolve) => (wake = resolve));
    const message = queue.shift();
    if (message.failed && !received) {
      worker.terminate();
      readHere(message.failed);
      return pull(controller);
    }
    if (message.failed || message.error) {
      worker.terminate();
      return controller.error(new Error(`reading a cached file failed: ${message.failed ?? message.error}`));
    }
    if (message.done) {
      worker.terminate();
      return controller.close();
    }
    received = true;
    worker.postMessage({ credit: message.value.byteLength });
    controller.enqueue(message.value);
  }
  const cancel = () => {
    worker?.terminate();
    here?.cancel();
  };
  return new ReadableStream({ pull, cancel }, { highWaterMark: 0 });
}
