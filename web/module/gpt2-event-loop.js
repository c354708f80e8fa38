// How the thread that runs the engine waits between polls of the GPU without blocking its events.

// Lets the thread handle events (messages, input, an AbortSignal's listeners) between polls,
// without setTimeout's clamping. One channel serves every yield: a port with a listener stays alive
// until closed, so a channel per poll would pile up. Under Node a listening port keeps the process
// alive: it is held (ref) only while a yield waits on it.
const ticks = new MessageChannel();
const waiting = [];
ticks.port1.onmessage = () => {
  waiting.shift()();
  if (waiting.length === 0) ticks.port1.unref?.();
};
ticks.port1.unref?.();
export function yieldToEventLoop() {
  return new Promise((resolve) => {
    waiting.push(resolve);
    ticks.port1.ref?.();
    ticks.port2.postMessage(null);
  });
}

// Between polls of a software renderer (SwiftShader, llvmpipe): a timer, so that this thread does
// not spin on a CPU core the renderer needs; its steps take hundreds of milliseconds, so a timer's
// few milliseconds of latency do not show. A GPU answers within a few milliseconds: polls follow
// each other as fast as the event loop allows (yieldToEventLoop).
export function sleep() {
  return new Promise((resolve) => setTimeout(resolve, 1));
}
