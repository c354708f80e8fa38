#!/usr/bin/env bash
# On the GPU machine, carrying .device-bin and .gl (tests/bench/gpu/stage.sh): what the driver made of
# the engine's programs. For a synthetic checkpoint (SIZE, default 124M) in each weight format
# (FORMATS, default "fp16 int8 int4", --weights values), program_binaries dumps every program that a
# prompt and decode steps use into binaries/FORMAT/ (in $OUT/binaries.tar.gz), and
# program_stats.py counts what each one-row matmul does per weight into $OUT/program-stats.jsonl.
set -u
cd "$(git rev-parse --show-toplevel 2>/dev/null || pwd)"
SIZE=${SIZE:-124M}
FORMATS=${FORMATS:-fp16 int8 int4}
BIN=${BIN:-.device-bin}
OUT=${OUT:-/tmp/program-stats}
MD=/tmp/gpt2-models
DUMPS=/tmp/program-binaries/binaries
rm -rf "$DUMPS"
mkdir -p "$OUT" "$MD" "$DUMPS"
for f in .gl/*.deb; do dpkg -x "$f" /; done
ldconfig
VENDOR=/usr/local/nvidia/share/glvnd/egl_vendor.d/10_nvidia.json
if [ -f "$VENDOR" ]; then export __EGL_VENDOR_LIBRARY_FILENAMES=$VENDOR; fi
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
[ -d "$MD/$SIZE" ] || "$BIN/gpt2-synth" "$MD/$SIZE" --size "$SIZE" --dtype fp16 >/dev/null
for format in $FORMATS; do
    "$BIN/program_binaries" "$MD/$SIZE" "$DUMPS/$format" --weights "$format"
done
tar -czf "$OUT/binaries.tar.gz" -C "$DUMPS/.." binaries
python3 tests/bench/gpu/program_stats.py "$DUMPS" >"$OUT/program-stats.jsonl"
cat "$OUT/program-stats.jsonl"
