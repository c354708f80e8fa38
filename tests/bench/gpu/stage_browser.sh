#!/usr/bin/env bash
# Here, before tests/bench/gpu/browser_modes.sh: copies the site (without its models) and the
# benchmark page into build/gpubench, and the native tools into .device-bin (tests/bench/gpu/stage.sh).
set -eu
cd "$(git rev-parse --show-toplevel)"
bash tests/bench/gpu/stage.sh >/dev/null
rm -rf build/gpubench
mkdir -p build/gpubench/bench
cp build/site/*.js build/site/*.wasm build/gpubench/
cp tests/bench/page/* build/gpubench/bench/
# GPT-2's tokenizer, for the synthetic checkpoints (constrained generation needs one).
mkdir -p build/gpubench/bench/tokenizer
cp build/site/models/default/vocab.json build/site/models/default/merges.txt build/gpubench/bench/tokenizer/
du -sh build/gpubench .device-bin
