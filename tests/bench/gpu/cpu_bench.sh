#!/usr/bin/env bash
# On the GPU machine, carrying build/cpubench (tests/bench/gpu/stage_cpu.sh), after
# ../shared/gpubrowser's two calls: writes a synthetic GPT-2 124M (gpt2-synth, fp32) as GGUF Q8_0 and
# Q4_0 files (gpt2-gguf) into the site, then opens the page of query.txt in Chromium, cross-origin
# isolated (so wllama runs threads), with TIMEOUT_S for the browser run. Rows in $OUT/results.jsonl.
set -eu
SITE=build/cpubench
BIN=$SITE/bin
MODEL=/tmp/cpubench-124M
echo "cores: $(nproc)"
rm -rf "$MODEL"
"$BIN/gpt2-synth" "$MODEL" --size 124M
cp "$BIN/vocab.json" "$BIN/merges.txt" "$MODEL/"
for type in Q8_0 Q4_0; do "$BIN/gpt2-gguf" "$MODEL" "$SITE/bench/s124-$type.gguf" --type "$type"; done
ls -la "$SITE/bench"
SITE=$SITE PAGE="$(cat "$SITE/query.txt")" TIMEOUT_S=${TIMEOUT_S:-480} bash /tmp/gpubrowser/run.sh
