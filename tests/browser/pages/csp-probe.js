// Loaded by the CSP test as a same-origin script (allowed): reports whether eval is blocked.
try {
  window.cspProbe = String(eval('1 + 1'));
} catch (error) {
  window.cspProbe = error.name;
}
