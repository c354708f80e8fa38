// A cached file's bytes, read on a second thread. Reading a file from the Cache API costs the thread
// that reads it about as much time as the GPU process takes to upload it, and on one thread the two
// do not overlap (docs/benchmarks.md, "What the browser allows a load"): a small Worker reads the
// file's Blob and transfers its chunks to the loading thread, at most WINDOW bytes ahead of it.
//
// Firefox at times never returns from making a Worker inside a Worker, or from its reads: cached loads
// in the module's Worker stalled for good in 6 of about 320 with a nested reader, in none of 400
// without one and in none of 330 with readers the page made (Firefox 153 ESR on llvmpipe). So the module's Worker has the page make its readers
// (readersFromPage, set by gpt2-worker.js; the page's side: startReaderFor) and speaks to each over
// a MessageChannel.

const WINDOW = 64 << 20;

// The reader: a plain script (no module, no file of its own), so that bundlers have nothing to find.
// Made for the module's Worker, it is first sent { port }, the end of the channel it then reads and
// answers on, and on { stop } tells its page { ended } and ends itself.
const READER = `let credit = 0;
let wake = null;
let out = self;
const handle = async ({ data }) => {
  if (data.stop) {
    postMessage({ ended: true });
    return close();
  }
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
      if (done) return out.postMessage({ done: true });
      credit -= value.byteLength;
      // A chunk that is part of a larger buffer is copied: only what it views may be handed over.
      const own = value.byteLength === value.buffer.byteLength ? value : value.slice();
      out.postMessage({ value: own }, [own.buffer]);
    }
  } catch (error) {
    out.postMessage({ error: String(error?.message ?? error) });
  }
};
onmessage = (event) => {
  if (!event.data.port) return handle(event);
  out = event.data.port;
  out.onmessage = handle;
};`;

let readerUrl = null;
let viaPage = null;

// How a module Worker asks its page for a reader: `request(receive)` returns what readerHere does.
export function readersFromPage(request) {
  viaPage = request;
}

// A reader Worker made on this thread: { post(message, transfer), stop() }, `receive(message)` told
// its messages, { failed } where it could not start. Throws where no Worker can be made here.
function readerHere(receive) {
  if (typeof Worker === 'undefined') throw new Error('no Worker here');
  readerUrl ??= URL.createObjectURL(new Blob([READER], { type: 'text/javascript' }));
  const worker = new Worker(readerUrl);
  worker.onmessage = ({ data }) => receive(data);
  worker.onerror = (event) => {
    event.preventDefault();
    receive({ failed: event.message || 'the reader Worker could not start' });
  };
  return { post: (message, transfer) => worker.postMessage(message, transfer), stop: () => worker.terminate() };
}

// The page's side of readersFromPage: a reader for the module's Worker, which holds the other end of
// `port`; `failed(reason)` where none can be made. The page holds each until it ends or fails.
const readersOfWorkers = new Set();
export function startReaderFor(port, failed) {
  let reader;
  try {
    reader = readerHere((message) => {
      if (message.failed !== undefined || message.ended) readersOfWorkers.delete(reader);
      if (message.failed !== undefined) failed(message.failed);
    });
    reader.post({ port }, [port]);
  } catch (error) {
    failed(error?.message ?? String(error));
    return;
  }
  readersOfWorkers.add(reader);
}

// A ReadableStream of `blob`'s bytes read by a reader Worker, made at the first read (a folder's
// shards are all opened before the first is read); where none can be made (no Worker in this
// context, a content security policy without blob: workers), of `blob.stream()`, with `warn(text)`
// told why.
export function cachedFileStream(blob, warn) {
  let reader = null;
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
      reader = viaPage ? viaPage(receive) : readerHere(receive);
    } catch (error) {
      return readHere(error?.message ?? String(error));
    }
    reader.post({ credit: WINDOW });
    reader.post({ blob });
  };
  async function pull(controller) {
    if (!reader && !here) start();
    if (here) {
      const { done, value } = await here.read();
      return done ? controller.close() : controller.enqueue(value);
    }
    while (queue.length === 0) await new Promise((resolve) => (wake = resolve));
    const message = queue.shift();
    if (message.failed && !received) {
      reader.stop();
      readHere(message.failed);
      return pull(controller);
    }
    if (message.failed || message.error) {
      reader.stop();
      return controller.error(new Error(`reading a cached file failed: ${message.failed ?? message.error}`));
    }
    if (message.done) {
      reader.stop();
      return controller.close();
    }
    received = true;
    reader.post({ credit: message.value.byteLength });
    controller.enqueue(message.value);
  }
  const cancel = () => {
    reader?.stop();
    here?.cancel();
  };
  return new ReadableStream({ pull, cancel }, { highWaterMark: 0 });
}
