#!/usr/bin/env bash
# Runs the native GL test suites on the GPU machine, from the repository root, with .gl/ and the test
# binaries carried (tests/bench/gpu/README.md): the engine's GPU paths (split-K, fp16 row pairs,
# LayerNorm row moments in a pass of their own, one-row decode matmuls) checked against the CPU
# reference and Hugging Face on a real GPU.
# The binaries find fixtures through the source folder compiled into them (SOURCE_DIR, by default
# this workplace's /work/main), which is linked to this tree when it is missing there.
set -u
SOURCE_DIR=${SOURCE_DIR:-/work/main}
for f in .gl/*.deb; do dpkg -x "$f" /; done
ldconfig
VENDOR=/usr/local/nvidia/share/glvnd/egl_vendor.d/10_nvidia.json
[ -f "$VENDOR" ] && export __EGL_VENDOR_LIBRARY_FILENAMES=$VENDOR
[ -e "$SOURCE_DIR" ] || { mkdir -p "$(dirname "$SOURCE_DIR")" && ln -s "$PWD" "$SOURCE_DIR"; }
OUT=${OUT:-/tmp}
status=0
build/native/tests/op_tests >"$OUT/op-tests.txt" 2>&1 || status=1
build/native/tests/op_cases >"$OUT/op-cases.txt" 2>&1 || status=1
# The same table timed at GPT-2 124M's shapes, one JSON line per op case.
build/native/tests/op_cases --time --dims 124M --runs 50 --gtest_brief=1 >"$OUT/op-cases-124M.txt" 2>&1 || status=1
grep '^{"op_case"' "$OUT/op-cases-124M.txt" >"$OUT/op-cases-124M.jsonl"
# GlResources exhausts GPU memory on purpose: on a 141 GB GPU that takes minutes, not a moment.
build/native/tests/model_tests --gtest_filter=-GlResources* >"$OUT/model-tests.txt" 2>&1 || status=1
build/native/tests/engine_tests >"$OUT/engine-tests.txt" 2>&1 || status=1
grep -hE "^\[  (PASSED|FAILED) |Failure" "$OUT/op-tests.txt" "$OUT/op-cases.txt" "$OUT/op-cases-124M.txt" "$OUT/model-tests.txt" \
  "$OUT/engine-tests.txt"
exit $status
