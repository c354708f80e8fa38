// The errors a model's calls reject with where the caller may want to act on which one it is, each
// message written here only. In worker mode the worker sends an error's name across and the page
// rebuilds the same class from it (fromRemote), so `instanceof` answers alike in both modes.

/** The browser dropped the model's WebGL context: restore() brings the model back. */
export class ContextLostError extends Error {
  constructor() {
    super('WebGL context lost (the browser reclaimed the GPU); call restore() or load the model again');
    this.name = 'ContextLostError';
  }
}

/** The model was disposed, before or during the call. */
export class DisposedError extends Error {
  constructor() {
    super('this model has been disposed');
    this.name = 'DisposedError';
  }
}

/** A generation of this model is running: one call at a time per model. */
export class BusyError extends Error {
  constructor() {
    super('this model is generating; abort that generation or wait for it');
    this.name = 'BusyError';
  }
}

/**
 * The browser gave the engine's canvas no WebGL2 context: WebGL2 or hardware acceleration is off, or
 * the browser has none. `detail.code` is the context creation's error code, `detail.browserSaid` the
 * browser's own reason where it gave one.
 */
export class WebGL2UnavailableError extends Error {
  constructor({ code, browserSaid = '' } = {}) {
    super(
      `WebGL2 is not available (the browser gave no WebGL2 context on the engine's canvas, error ${code}); ` +
        "turn on WebGL2 and hardware acceleration in the browser's settings, or try another browser" +
        (browserSaid ? `. The browser said: "${browserSaid}"` : ''),
    );
    this.name = 'WebGL2UnavailableError';
    this.detail = { code, browserSaid };
  }
}

// An AbortSignal's reason, as fetch rejects with it: the reason the caller gave, else the DOM's
// AbortError.
export function abortError(signal) {
  return signal.reason instanceof Error ? signal.reason : new DOMException('The operation was aborted', 'AbortError');
}

const BY_NAME = { ContextLostError, DisposedError, BusyError, WebGL2UnavailableError };

// An error as the worker sends it: its name, message and `detail` (what the classes above are made
// from).
export function toRemote(error) {
  return { name: error?.name ?? 'Error', message: error?.message ?? String(error), detail: error?.detail };
}

// An error the worker sent (toRemote), as the class it was thrown as there. Other errors carry
// their message only (Error), as an AbortError carries its name (DOMException).
export function fromRemote({ name, message, detail }) {
  if (Object.hasOwn(BY_NAME, name)) return new BY_NAME[name](detail);
  return name === 'AbortError' ? new DOMException(message, 'AbortError') : new Error(message);
}
