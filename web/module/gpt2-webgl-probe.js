// Whether a canvas gives the engine what it needs: a WebGL2 context with float render targets
// (EXT_color_buffer_float), and whether a GPU or a software rasterizer draws it. Asked before choosing
// where the engine runs and on what: WebKit before Safari 17, and WebKitGTK today, give an
// OffscreenCanvas no WebGL2 context, in a worker or in a page, while a page's canvas has one; Chrome
// 144 and later give none at all on a machine without a usable GPU. The probe's context is released
// at once.

// Renderers that run shaders on the CPU, slower there than the CPU backend (docs/benchmarks.md).
const SOFTWARE_RENDERERS = /SwiftShader|llvmpipe|softpipe|Software Rasterizer|Microsoft Basic Render Driver|WARP/i;

// The renderer as the browser names it: RENDERER, unless that is masked as "WebKit WebGL" (Chromium),
// where WEBGL_debug_renderer_info gives ANGLE's string; Firefox deprecates that extension and needs
// it not, its RENDERER being the driver's (as the engine reads it: src/gl/capabilities.cpp).
function rendererOf(gl) {
  const renderer = String(gl.getParameter(gl.RENDERER) ?? '');
  if (renderer !== 'WebKit WebGL') return renderer;
  const info = gl.getExtension('WEBGL_debug_renderer_info');
  return info ? String(gl.getParameter(info.UNMASKED_RENDERER_WEBGL) ?? renderer) : renderer;
}

// { ok: true, renderer, software } or { ok: false, reason } with the browser's own words where it
// gave any (the webglcontextcreationerror event's statusMessage).
export function probeWebgl2(canvas) {
  const kind = canvas.constructor?.name ?? 'canvas';
  let said = '';
  const listen = (event) => {
    said = (event.statusMessage ?? '').replace(/\s+/g, ' ').trim();
  };
  canvas.addEventListener?.('webglcontextcreationerror', listen);
  let gl = null;
  try {
    gl = canvas.getContext('webgl2');
  } catch (error) {
    said = error.message;
  } finally {
    canvas.removeEventListener?.('webglcontextcreationerror', listen);
  }
  const browserSaid = said ? ` (the browser said: "${said}")` : '';
  if (!gl) return { ok: false, reason: `this browser gives an ${kind} no WebGL2 context${browserSaid}` };
  const floatTargets = gl.getExtension('EXT_color_buffer_float') !== null;
  const renderer = rendererOf(gl);
  gl.getExtension('WEBGL_lose_context')?.loseContext();
  if (!floatTargets)
    return { ok: false, reason: `WebGL2 on an ${kind} lacks EXT_color_buffer_float (float render targets)` };
  return { ok: true, renderer, software: SOFTWARE_RENDERERS.test(renderer) };
}

// The same question for the thread this runs on, about the canvas the engine would make for itself.
export function probeOffscreenCanvas() {
  if (typeof OffscreenCanvas === 'undefined') return { ok: false, reason: 'this browser has no OffscreenCanvas' };
  return probeWebgl2(new OffscreenCanvas(1, 1));
}

// WebGL2 on this thread as the engine on it would get it: an OffscreenCanvas, else a page's canvas
// (gpt2-surface.js chooses alike).
export function probeThisThread() {
  const offscreen = probeOffscreenCanvas();
  if (offscreen.ok || typeof document === 'undefined') return offscreen;
  return probeWebgl2(document.createElement('canvas'));
}
