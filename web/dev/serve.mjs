// A small static server for build/site (or any folder): node web/dev/serve.mjs [DIR] [--port N].
// Serves .wasm as application/wasm (needed for streaming compilation) and nothing outside DIR.
import { createServer } from 'node:http';
import { createReadStream, statSync } from 'node:fs';
import { extname, join, normalize, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const TYPES = {
  '.html': 'text/html; charset=utf-8', '.js': 'text/javascript; charset=utf-8', '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8', '.json': 'application/json', '.wasm': 'application/wasm', '.txt': 'text/plain; charset=utf-8',
  '.ts': 'text/plain; charset=utf-8', '.md': 'text/plain; charset=utf-8', '.png': 'image/png',
};

// `root`: a folder, or folders whose files are looked up in order (the tests serve their fixtures
// beside the site, never in it). `cors`: let pages of other origins import the module and fetch its
// files, as a CDN does.
export function serve(root, port = 8080, host = '127.0.0.1', { cors = false } = {}) {
  const bases = [root].flat().map((folder) => resolve(folder));
  // The file a URL path names in `base` and its size, or null.
  const find = (base, path) => {
    try {
      let file = join(base, path);
      let stats = statSync(file);
      if (stats.isDirectory()) stats = statSync((file = join(file, 'index.html')));
      return stats.isFile() ? { file, size: stats.size } : null;
    } catch {
      return null;
    }
  };
  const server = createServer((req, res) => {
    // Normalized as an absolute path, it cannot climb out of a folder ('/../x' is '/x').
    const path = normalize(decodeURIComponent(new URL(req.url, 'http://x').pathname));
    let found = null;
    for (const base of bases) if ((found = find(base, path))) break;
    if (!found) {
      res.writeHead(404, { 'Content-Type': 'text/plain' }).end('not found');
      return;
    }
    const { file, size } = found;
    res.writeHead(200, {
      'Content-Type': TYPES[extname(file)] ?? 'application/octet-stream', 'Content-Length': size, 'Cache-Control': 'no-cache',
      ...(cors ? { 'Access-Control-Allow-Origin': '*' } : {}),
    });
    if (req.method === 'HEAD') res.end();
    else createReadStream(file).pipe(res);
  });
  return new Promise((ok) => server.listen(port, host, () => ok(server)));
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const args = process.argv.slice(2);
  const portAt = args.indexOf('--port');
  const port = portAt >= 0 ? Number(args[portAt + 1]) : 8080;
  const dir = args.find((a, i) => !a.startsWith('--') && i !== portAt + 1) ?? 'build/site';
  const server = await serve(dir, port);
  console.log(`Serving ${resolve(dir)} on http://localhost:${server.address().port}/`);
}
