// Builds the app in app/ with each bundler as its documentation says to, from a folder where the
// packed gpt2-webgl tarball is installed (node_modules/gpt2-webgl). Vite, webpack and Next.js place
// the package's worker and wasm themselves; esbuild and Rollup take the worker as a second entry point
// and the wasm as a copied file, as docs/api.md ("Bundlers") tells their users.
import { execFileSync } from 'node:child_process';
import { copyFileSync, cpSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

// The files that bundlers without asset handling copy, as docs/api.md ("Bundlers") says: the wasm, and
// the threads build's files for pages that are cross-origin isolated.
const COPIED = ['gpt2-wasm.wasm', 'gpt2-wasm-threads.wasm', 'gpt2-wasm-threads.js', 'gpt2-wasm-threads.worker.js'];
const copyEngineFiles = (appDir, to) => {
  for (const file of COPIED) copyFileSync(join(appDir, 'node_modules/gpt2-webgl', file), join(to, file));
};

export const BUNDLERS = {
  async vite(appDir, outDir) {
    const { build } = await import('vite');
    await build({ root: appDir, logLevel: 'warn', configFile: false, build: { outDir, emptyOutDir: true } });
  },

  async webpack(appDir, outDir) {
    const { default: webpack } = await import('webpack');
    const stats = await new Promise((resolve, reject) =>
      webpack(
        {
          mode: 'production',
          context: appDir,
          entry: './main.js',
          output: { path: outDir, filename: 'main.js', clean: true },
        },
        (error, result) => (error ? reject(error) : resolve(result)),
      ),
    );
    if (stats.hasErrors()) throw new Error(stats.toString({ all: false, errors: true }));
    copyFileSync(join(appDir, 'index.html'), join(outDir, 'index.html'));
  },

  // The worker beside the bundle under its own name and the wasm beside it: no option needed.
  async esbuild(appDir, outDir) {
    const { build } = await import('esbuild');
    rmSync(outDir, { recursive: true, force: true });
    await build({
      absWorkingDir: appDir,
      bundle: true,
      splitting: true,
      format: 'esm',
      minify: true,
      outdir: outDir,
      logLevel: 'warning',
      entryPoints: { main: './main.js', 'gpt2-worker': 'gpt2-webgl/gpt2-worker.js' },
    });
    copyEngineFiles(appDir, outDir);
    copyFileSync(join(appDir, 'index.html'), join(outDir, 'index.html'));
  },

  // Files where the app wants them (assets/, wasm/), so the page passes workerUrl and wasmUrl.
  async rollup(appDir, outDir) {
    const { rollup } = await import('rollup');
    const { nodeResolve } = await import('@rollup/plugin-node-resolve');
    rmSync(outDir, { recursive: true, force: true });
    const bundle = await rollup({
      input: { main: join(appDir, 'main.js'), worker: 'gpt2-webgl/gpt2-worker.js' },
      plugins: [nodeResolve({ rootDir: appDir })],
    });
    await bundle.write({ dir: join(outDir, 'assets'), format: 'es' });
    await bundle.close();
    mkdirSync(join(outDir, 'wasm'));
    copyEngineFiles(appDir, join(outDir, 'wasm'));
    const page = readFileSync(join(appDir, 'index.html'), 'utf8');
    if (!page.includes('"./main.js"')) throw new Error('app/index.html no longer loads ./main.js');
    writeFileSync(join(outDir, 'index.html'), page.replace('"./main.js"', '"./assets/main.js"'));
  },

  // The app as a client component of a Next.js app (tests/bundlers/next), exported as a static site.
  async next(appDir, outDir) {
    const project = join(appDir, '..', 'next-app');
    rmSync(project, { recursive: true, force: true });
    cpSync(join(dirname(fileURLToPath(import.meta.url)), 'next'), project, { recursive: true });
    cpSync(join(appDir, 'node_modules'), join(project, 'node_modules'), { recursive: true });
    copyFileSync(join(appDir, 'main.js'), join(project, 'app', 'main.js'));
    const next = createRequire(import.meta.url).resolve('next/dist/bin/next');
    execFileSync(process.execPath, [next, 'build'], {
      cwd: project,
      env: { ...process.env, NEXT_TELEMETRY_DISABLED: '1' },
      stdio: 'pipe',
    });
    rmSync(outDir, { recursive: true, force: true });
    cpSync(join(project, 'out'), outDir, { recursive: true });
  },
};

// The page query an app of `bundler` needs besides the model and prompt.
export const FILES_QUERY = { rollup: 'workerUrl=./assets/worker.js&wasmUrl=./wasm/gpt2-wasm.wasm' };
