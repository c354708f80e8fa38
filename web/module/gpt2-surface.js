// The canvas a model renders with: the caller's, else one the engine makes for itself on this
// thread, registered for the C++ side under a name of its own.
import { WebGL2UnavailableError } from './gpt2-errors.js';
import { probeOffscreenCanvas } from './gpt2-webgl-probe.js';

let canvasCounter = 0;
// Whether an OffscreenCanvas on this thread has WebGL2, probed once: what a browser offers does not
// change while a page lives.
let offscreenWebgl2 = null;

// An OffscreenCanvas where that gives WebGL2 with float render targets, else, in a page, a hidden
// page canvas (WebKit gives OffscreenCanvas no WebGL2 context). Without a page, the
// OffscreenCanvas's own failure is the load's error.
function ownCanvas() {
  if (typeof document === 'undefined') {
    if (typeof OffscreenCanvas === 'undefined')
      throw new Error('this thread has no page and no OffscreenCanvas to render on; pass { canvas }');
    return new OffscreenCanvas(1, 1);
  }
  offscreenWebgl2 ??= probeOffscreenCanvas().ok;
  if (offscreenWebgl2) return new OffscreenCanvas(1, 1);
  const canvas = Object.assign(document.createElement('canvas'), { width: 1, height: 1, hidden: true });
  return (document.body ?? document.documentElement).appendChild(canvas);
}

// What a model on the CPU backend has in a Surface's place: no canvas, no context to lose.
const NO_SURFACE = Object.freeze({
  target: '',
  canvas: null,
  lost: false,
  explain: (error) => error,
  loseContext() {
    throw new Error('the CPU backend has no WebGL context to lose');
  },
  release() {},
});

export class Surface {
  // The surface of a model with `options` (resolved): a canvas (the caller's, or one made here) for
  // WebGL2, none for the CPU backend.
  static for(M, options, canvas, onLost) {
    return options.backend === 'cpu' ? NO_SURFACE : new Surface(M, canvas, onLost);
  }

  // `M`: the wasm module; `canvas`: the caller's, or null; `onLost`: called when the browser drops
  // the context.
  constructor(M, canvas, onLost) {
    this.M = M;
    this.owned = !canvas;
    this.canvas = canvas ?? ownCanvas();
    this.target = `!gpt2-canvas-${++canvasCounter}`;
    M.specialHTMLTargets[this.target] = this.canvas;
    this.lost = false;
    this.onLost = (event) => {
      event.preventDefault();
      this.lost = true;
      onLost?.();
    };
    this.canvas.addEventListener('webglcontextlost', this.onLost);
    // A context the browser refuses comes with its reason in this event (Firefox: "AllowWebgl2:false
    // restricts context creation on this system"), not in the failed getContext call.
    this.refusal = '';
    this.onRefused = (event) => {
      this.refusal = (event.statusMessage ?? '').replace(/\s+/g, ' ').trim();
    };
    this.canvas.addEventListener('webglcontextcreationerror', this.onRefused);
  }
  // The error of a failed load, with the browser's own reason when it refused the context.
  explain(error) {
    if (!(error instanceof WebGL2UnavailableError) || !this.refusal) return error;
    return new WebGL2UnavailableError({ ...error.detail, browserSaid: this.refusal });
  }
  loseContext() {
    const lose = this.canvas.getContext('webgl2')?.getExtension('WEBGL_lose_context');
    if (!lose) throw new Error('this context cannot simulate a loss (no WEBGL_lose_context)');
    lose.loseContext();
  }
  release() {
    this.canvas.removeEventListener('webglcontextlost', this.onLost);
    this.canvas.removeEventListener('webglcontextcreationerror', this.onRefused);
    delete this.M.specialHTMLTargets[this.target];
    if (this.owned && this.canvas.remove) this.canvas.remove();
  }
}
