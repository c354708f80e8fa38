// Loaded by the CSP test as a same-origin script (allowed): reports whether eval is blocked.
try {
  // biome-ignore lint/security/noGlobalEval: whether the page's policy blocks eval is what this probes.
  window.cspProbe = String(eval('1 + 1'));
} catch (error) {
  window.cspProbe = error.name;
}
