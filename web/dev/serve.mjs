// A small static server for build/site (or any folder): node web/dev/serve.mjs [DIR] [--port N] [--prefix /P/].
// Serves .wasm as application/wasm (needed for streaming compilation) and nothing outside DIR; run as
// a command, it sends the headers that make its pages cross-origin isolated.
import { createServer } from 'node:http';
import { createReadStream, statSync } from 'node:fs';
import { extname, join, normalize, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const TYPES = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json',
  '.wasm': 'application/wasm',
  '.txt': 'text/plain; charset=utf-8',
  '.ts': 'text/plain; charset=utf-8',
  '.md': 'text/plain; charset=utf-8',
  '.png': 'image/png',
};

// '/a/' from 'a', '/a' or 'a/'.
const slashed = (prefix) => `/${prefix}/`.replace(/\/+/g, '/');

// `root`: a folder, or folders whose files are looked up in order (the tests serve their fixtures
// beside the site, never in it). `cors`: let pages of other origins import the module and fetch its
// files, as a CDN does. `headers`: sent with every file (a Content-Security-Policy, say). `prefix`: the
// URL path the folder is served under, as GitHub Pages serves a project at /REPO/; any other path is
// not found.
export function serve(root, port = 8080, host = '127.0.0.1', { cors = false, headers = {}, prefix = '/' } = {}) {
  const bases = [root].flat().map((folder) => resolve(folder));
  prefix = slashed(prefix);
  // The file a URL path names in `base` and its size, or null.
  const find = (base, path) => {
    try {
      let file = join(base, path);
      let stats = statSync(file);
      if (stats.isDirectory()) {
        file = join(file, 'index.html');
        stats = statSync(file);
      }
      return stats.isFile() ? { file, size: stats.size } : null;
    } catch {
      return null;
    }
  };
  const server = createServer((req, res) => {
    const { pathname, search } = new URL(req.url, 'http://x');
    // The prefix without its slash redirects, as Pages does: the page's relative URLs need the slash.
    if (prefix !== '/' && pathname === prefix.slice(0, -1)) {
      res.writeHead(301, { Location: prefix + search }).end();
      return;
    }
    // Normalized as an absolute path, it cannot climb out of a folder ('/../x' is '/x').
    const path = pathname.startsWith(prefix) ? normalize(decodeURIComponent(pathname.slice(prefix.length - 1))) : null;
    let found = null;
    for (const base of path === null ? [] : bases) {
      found = find(base, path);
      if (found) break;
    }
    if (!found) {
      res.writeHead(404, { 'Content-Type': 'text/plain' }).end('not found');
      return;
    }
    const { file, size } = found;
    res.writeHead(200, {
      'Content-Type': TYPES[extname(file)] ?? 'application/octet-stream',
      'Content-Length': size,
      'Cache-Control': 'no-cache',
      ...(cors ? { 'Access-Control-Allow-Origin': '*' } : {}),
      ...headers,
    });
    if (req.method === 'HEAD') res.end();
    else createReadStream(file).pipe(res);
  });
  return new Promise((ok) => server.listen(port, host, () => ok(server)));
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const args = process.argv.slice(2);
  const option = (name) => (args.includes(name) ? args[args.indexOf(name) + 1] : undefined);
  const port = Number(option('--port') ?? 8080);
  const prefix = option('--prefix') ?? '/';
  const dir = args.find((a, i) => !a.startsWith('--') && !args[i - 1]?.startsWith('--')) ?? 'build/site';
  // Cross-origin isolated, so that the CPU backend runs its threads build (docs/api.md).
  const isolated = { 'Cross-Origin-Opener-Policy': 'same-origin', 'Cross-Origin-Embedder-Policy': 'require-corp' };
  const server = await serve(dir, port, '127.0.0.1', { prefix, headers: isolated });
  console.log(`Serving ${resolve(dir)} on http://localhost:${server.address().port}${slashed(prefix)}`);
}
