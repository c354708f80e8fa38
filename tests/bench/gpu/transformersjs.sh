#!/usr/bin/env bash
# On the GPU machine, after ../shared/gpubrowser's two calls (its browser in /tmp/gpubrowser):
# transformers.js on WebGPU (tests/bench/page/transformersjs.js) beside this engine, in the same
# machine session, on one synthetic GPT-2 checkpoint (gpt2-synth, fp16, in $SITE/bench/model):
#   1. ENGINE=1 (default, where $SITE/gpt2.js is staged): tests/bench/gpu/browser_modes.sh, the
#      engine in Chromium (worker mode, greedy and the demo's sampling) and natively
#      -> $OUT/browser.jsonl, $OUT/native.jsonl; it writes the checkpoint.
#   2. make_onnx_gpt2.py writes onnx/model.onnx and onnx/model_fp16.onnx into the same folder.
#   3. the page, through /tmp/gpubrowser/run.sh -> $OUT/transformersjs.jsonl.
# Stage here first: tests/bench/gpu/stage_browser.sh (the engine's site; it empties build/gpubench),
# then tests/bench/gpu/stage_transformersjs.sh. Carry build/gpubench and .device-bin's gpt2-synth
# (and gpt2 for the native bench); the whole .device-bin may not fit in 64 MiB with the rest.
# python3 there needs numpy only (onnx, where importable, checks the graph).
set -u
cd "$(git rev-parse --show-toplevel 2>/dev/null || pwd)"
SITE=${SITE:-build/gpubench}
SIZE=${SIZE:-124M}
ROUNDS=${ROUNDS:-3}
TOKENS=${TOKENS:-16}
PROMPTS=${PROMPTS:-32,256}
SAMPLING=${SAMPLING:-greedy,demo}
DTYPES=${DTYPES:-fp16,fp32}
DEVICE=${DEVICE:-webgpu}
ENGINE=${ENGINE:-$([ -f "$SITE/gpt2.js" ] && [ -x .device-bin/gpt2 ] && echo 1 || echo 0)}
MODEL_DIR=$SITE/bench/model
if [ "$ENGINE" = 1 ]; then
    SITE="$SITE" SIZE="$SIZE" ROUNDS="$ROUNDS" TOKENS="$TOKENS" PROMPTS="$PROMPTS" SAMPLING="$SAMPLING" MODES=${MODES:-worker} \
        bash tests/bench/gpu/browser_modes.sh || echo "browser_modes.sh failed"
fi
if [ ! -f "$MODEL_DIR/model.safetensors" ]; then
    mkdir -p "$MODEL_DIR"
    .device-bin/gpt2-synth "$MODEL_DIR" --size "$SIZE" --dtype fp16 >/dev/null || exit 1
fi
start=$(date +%s)
python3 tests/bench/gpu/make_onnx_gpt2.py "$MODEL_DIR" --fp16 || exit 1
echo "ONNX written in $(($(date +%s) - start)) s"; du -sh "$MODEL_DIR"/onnx/*
SITE="$SITE" PAGE="bench/transformersjs.html?post=1&models=/bench/&model=model&device=$DEVICE&dtypes=$DTYPES&prompts=$PROMPTS&tokens=$TOKENS&rounds=$ROUNDS&sampling=$SAMPLING" \
    TIMEOUT_S=${TIMEOUT_S:-300} bash /tmp/gpubrowser/run.sh
rc=$?
mv "$OUT/results.jsonl" "$OUT/transformersjs.jsonl" 2>/dev/null
exit $rc
