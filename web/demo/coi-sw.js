// The demo's service worker: it makes the site's pages cross-origin isolated where the server sends no
// COOP/COEP headers (GitHub Pages cannot), so that the CPU backend runs its threads build on every
// core. It adds the headers to the site's own responses and lets every other origin's pass as they
// are. demo.js registers it only when the model runs on the CPU.
const ISOLATION = {
  'Cross-Origin-Opener-Policy': 'same-origin',
  'Cross-Origin-Embedder-Policy': 'require-corp',
  'Cross-Origin-Resource-Policy': 'same-origin',
};

self.addEventListener('install', () => self.skipWaiting());
self.addEventListener('activate', (event) => event.waitUntil(self.clients.claim()));
self.addEventListener('fetch', (event) => {
  if (new URL(event.request.url).origin !== self.location.origin) return;
  event.respondWith(
    fetch(event.request).then((response) => {
      if (response.type === 'opaque' || response.type === 'opaqueredirect') return response;
      const headers = new Headers(response.headers);
      for (const [name, value] of Object.entries(ISOLATION)) headers.set(name, value);
      return new Response(response.body, { status: response.status, statusText: response.statusText, headers });
    }),
  );
});
