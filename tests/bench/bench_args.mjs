// Shared by the browser benchmarks: their command-line flags, and the model PATH served beside
// build/site (a GGUF file or a Hugging Face folder, linked into `folder` of the tests' folder that
// harness.mjs serves beside the site).
import { existsSync, mkdirSync, rmSync, symlinkSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import { testSiteDir } from '../browser/harness.mjs';

export function benchArgs(usage) {
  const args = process.argv.slice(2);
  const flag = (name, fallback) => {
    const at = args.indexOf(name);
    return at >= 0 ? args[at + 1] : fallback;
  };
  const model = flag('--model');
  if (!model || !existsSync(model)) {
    console.error(`usage: ${usage}`);
    process.exit(1);
  }
  return { args, flag, model };
}

// Links `model` into `folder` of what the tests serve; returns its URL path there and a function
// that unlinks it.
export function serveModel(model, folder) {
  const dir = join(testSiteDir, folder);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir);
  symlinkSync(resolve(model), join(dir, basename(model)));
  const source = `/${folder}/${basename(model)}${existsSync(join(model, 'config.json')) ? '/' : ''}`;
  return { dir, source, remove: () => rmSync(dir, { recursive: true, force: true }) };
}
