// Whether a canvas gives the engine what it needs: a WebGL2 context with float render targets
// (EXT_color_buffer_float). Asked before choosing where the engine runs: WebKit before Safari 17,
// and WebKitGTK today, give an OffscreenCanvas no WebGL2 context, in a worker or in a page, while a
// page's canvas has one. The probe's context is released at once.

// { ok: true } or { ok: false, reason } with the browser's own words where it gave any (the
// webglcontextcreationerror event's statusMessage).
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
  gl.getExtension('WEBGL_lose_context')?.loseContext();
  if (!floatTargets)
    return { ok: false, reason: `WebGL2 on an ${kind} lacks EXT_color_buffer_float (float render targets)` };
  return { ok: true };
}

// The same question for the thread this runs on, about the canvas the engine would make for itself.
export function probeOffscreenCanvas() {
  if (typeof OffscreenCanvas === 'undefined') return { ok: false, reason: 'this browser has no OffscreenCanvas' };
  return probeWebgl2(new OffscreenCanvas(1, 1));
}
