#!/usr/bin/env bash
# On the GPU machine: GPT-2 as the hub's community GGUF files that the demo's picker offers were made,
# with `output.weight`, the copy of `token_embd` that llama.cpp's GPT-2 converter wrote until March
# 2025 (make_fixtures.py convert --output-copy), from synthetic weights of each real shape
# (gpt2-synth), quantized by llama-quantize. Per file: its size, to set beside the size the hub lists,
# and the GPU bytes the engine takes for it (gpt2 bench, natively: what GPT2.gpuBytes plans from the
# header), with an fp32 and an fp16 K/V cache.
# Carry [".device-bin", ".gl"] as tests/bench/gpu/stage.sh leaves them, plus llama-quantize, gguf-py/
# and tokenizer/ in .device-bin as for gguf_bench.sh. Results: $OUT/hub_gguf.jsonl.
# KEEP=DIR keeps each file as DIR/SIZE-TYPE.gguf, for tests/bench/page/plan.html to plan and load in
# Chromium on the GPU (after ../shared/gpubrowser's two calls, carrying build/gpubench as
# tests/bench/gpu/stage_browser.sh leaves it): `ln -s DIR build/gpubench/bench/hub`, then
# `SITE=build/gpubench PAGE="bench/plan.html?post=1&models=/bench/hub/124M-Q4_0.gguf,…" bash
# /tmp/gpubrowser/run.sh`.
set -u
cd "$(git rev-parse --show-toplevel 2>/dev/null || pwd)"
for f in .gl/*.deb; do dpkg -x "$f" /; done
ENTRIES=${ENTRIES:-124M:Q4_K_M,Q4_0 355M:Q4_K_M 774M:Q4_K_M 1.5B:Q4_0,Q4_K_M}
VENDOR=/usr/local/nvidia/share/glvnd/egl_vendor.d/10_nvidia.json
[ -f "$VENDOR" ] && export __EGL_VENDOR_LIBRARY_FILENAMES=$VENDOR
DIR=/tmp/hub_gguf
touch "$OUT/hub_gguf.jsonl"
for entry in $ENTRIES; do
    size=${entry%%:*}
    rm -rf "$DIR" && mkdir -p "$DIR/model"
    .device-bin/gpt2-synth "$DIR/model" --size "$size" --dtype fp16 >/dev/null || exit 1
    python3 tests/fixtures/gguf/make_fixtures.py convert .device-bin/gguf-py "$DIR/model" .device-bin/tokenizer \
        "$DIR/f32.gguf" --output-copy || exit 1
    IFS=, read -ra types <<<"${entry#*:}"
    for type in "${types[@]}"; do
        .device-bin/llama-quantize "$DIR/f32.gguf" "$DIR/$type.gguf" "$type" >/dev/null 2>&1 || echo "quantize $size $type failed"
        [ -z "${KEEP:-}" ] || { mkdir -p "$KEEP" && cp "$DIR/$type.gguf" "$KEEP/$size-$type.gguf"; }
        for kv in fp32 fp16; do
            .device-bin/gpt2 bench --model "$DIR/$type.gguf" --prompt-tokens 1 --new-tokens 1 --kv-cache "$kv" 2>>"$OUT/hub_gguf.err" |
                python3 -c 'import json, os, sys; r = json.loads(sys.stdin.readline()); print(json.dumps({"size": sys.argv[1], "type": sys.argv[2], "file_bytes": os.path.getsize(sys.argv[3]), "kv_cache": sys.argv[4], "gpu_bytes": r["gpu_bytes"]}))' \
                    "$size" "$type" "$DIR/$type.gguf" "$kv" | tee -a "$OUT/hub_gguf.jsonl"
        done
    done
done
rm -rf "$DIR"
