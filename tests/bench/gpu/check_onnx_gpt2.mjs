// Checks tests/bench/gpu/make_onnx_gpt2.py's graph against Hugging Face, through transformers.js in
// node (onnxruntime-node, CPU): the last position's logits of reference.json's prompts within
// TOLERANCE, and `generate` (greedy, 20 new tokens: the KV cache path) giving its `greedy` ids.
// A bench tool, not part of the test command.
//   bash tests/bench/gpu/stage_transformersjs.sh   # installs transformers.js into build/tfjs-npm
//   node tests/bench/gpu/check_onnx_gpt2.mjs [FIXTURE_DIR] [fp32|fp16]
// FIXTURE_DIR (default tests/fixtures/gpt2-tiny) is copied to build/onnx-check/, and the ONNX files
// are written into the copy (PYTHON: the python with numpy, default python3).
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, readFileSync, rmSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const root = resolve(import.meta.dirname, '../../..');
const fixture = resolve(process.argv[2] ?? join(root, 'tests/fixtures/gpt2-tiny'));
const dtypes = process.argv[3] ? [process.argv[3]] : ['fp32', 'fp16'];
const TOLERANCE = { fp32: 1e-4, fp16: 0.05 };
const moduleUrl = join(root, 'build/tfjs-npm/node_modules/@huggingface/transformers/dist/transformers.node.mjs');
if (!existsSync(moduleUrl)) throw new Error(`${moduleUrl} missing: run tests/bench/gpu/stage_transformersjs.sh`);
const { AutoModelForCausalLM, Tensor, env } = await import(pathToFileURL(moduleUrl).href);

const work = join(root, 'build/onnx-check');
const model = join(work, basename(fixture));
rmSync(model, { recursive: true, force: true });
cpSync(fixture, model, { recursive: true, filter: (src) => !src.includes('__pycache__') });
execFileSync(process.env.PYTHON ?? 'python3', [join(root, 'tests/bench/gpu/make_onnx_gpt2.py'), model, '--fp16'], {
  stdio: 'inherit',
});

env.allowRemoteModels = false;
env.localModelPath = `${work}/`;
const reference = JSON.parse(readFileSync(join(fixture, 'reference.json'), 'utf8'));
let failures = 0;
for (const dtype of dtypes) {
  const lm = await AutoModelForCausalLM.from_pretrained(basename(fixture), { dtype, device: 'cpu' });
  for (const [name, prompt] of Object.entries(reference.prompts)) {
    const ids = prompt.ids;
    const inputIds = new Tensor('int64', BigInt64Array.from(ids.map(BigInt)), [1, ids.length]);
    const mask = new Tensor('int64', new BigInt64Array(ids.length).fill(1n), [1, ids.length]);
    const { logits } = await lm({ input_ids: inputIds, attention_mask: mask });
    const vocab = logits.dims[2];
    const last = logits.data.subarray((ids.length - 1) * vocab, ids.length * vocab);
    let maxDiff = 0;
    for (let i = 0; i < vocab; i += 1) maxDiff = Math.max(maxDiff, Math.abs(last[i] - prompt.last_logits[i]));
    const out = await lm.generate({
      input_ids: inputIds,
      attention_mask: mask,
      max_new_tokens: prompt.greedy.length,
      do_sample: false,
      eos_token_id: null,
    });
    const generated = Array.from(out.data.slice(ids.length), Number);
    const agree = generated.filter((t, i) => t === prompt.greedy[i]).length;
    const firstDiff = generated.findIndex((t, i) => t !== prompt.greedy[i]);
    const ok = maxDiff <= TOLERANCE[dtype] && (dtype === 'fp16' || agree === prompt.greedy.length);
    if (!ok) failures += 1;
    console.log(
      JSON.stringify({
        dtype,
        prompt: name,
        prompt_tokens: ids.length,
        last_logits_max_abs_diff: maxDiff,
        tolerance: TOLERANCE[dtype],
        greedy_agree: `${agree}/${prompt.greedy.length}`,
        greedy_first_difference: firstDiff,
        ok,
      }),
    );
  }
  await lm.dispose();
}
console.log(failures ? `FAIL: ${failures}` : 'all ok');
process.exit(failures ? 1 : 0);
