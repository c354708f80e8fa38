#!/usr/bin/env bash
# Here, before tests/bench/gpu/transformersjs.sh (and after stage_browser.sh, which empties
# build/gpubench): installs transformers.js (npm, pinned below) into the throwaway folder
# build/tfjs-npm (not the repo's package.json: onnxruntime-node alone is ~290 MB, and the test
# command's `npm ci` need not carry it; --ignore-scripts skips onnxruntime-node's download of CUDA
# libraries, the CPU one ships in the package), then copies into build/gpubench what the page
# tests/bench/page/transformersjs.html loads:
#   tfjs/transformers.min.js                      the browser build (onnxruntime-web bundled in it)
#   tfjs/ort-wasm-simd-threaded.asyncify.mjs      onnxruntime-web's wasm glue for WebGPU and wasm
#   tfjs/ort-wasm-simd-threaded.asyncify.wasm.gz  its binary, gzipped (27 MB to ~6.6 MB): the
#                                                 kit's server sends FILE.gz as FILE
#   bench/transformersjs.{html,js}, demo-settings.js
# and prints what a device call would carry.
set -eu
cd "$(git rev-parse --show-toplevel)"
VERSION=${TFJS_VERSION:-4.3.2}
NPM=build/tfjs-npm
PKG=$NPM/node_modules/@huggingface/transformers
if [ "$(node -p "require('./$PKG/package.json').version" 2>/dev/null)" != "$VERSION" ]; then
    mkdir -p "$NPM"
    echo '{"name":"tfjs-npm-throwaway","private":true}' >"$NPM/package.json"
    (cd "$NPM" && npm install --no-audit --no-fund --ignore-scripts "@huggingface/transformers@$VERSION" >/dev/null)
fi
ORT=$NPM/node_modules/onnxruntime-web/dist
# The ORT version bundled in transformers.min.js must be the one whose wasm is copied.
ORT_VERSION=$(node -p "require('./$NPM/node_modules/onnxruntime-web/package.json').version")
grep -q "$ORT_VERSION" "$PKG/dist/transformers.min.js" || echo "warning: transformers.min.js does not name onnxruntime-web $ORT_VERSION"
rm -rf build/gpubench/tfjs
mkdir -p build/gpubench/tfjs build/gpubench/bench
cp "$PKG/dist/transformers.min.js" "$ORT/ort-wasm-simd-threaded.asyncify.mjs" build/gpubench/tfjs/
gzip -9 -c "$ORT/ort-wasm-simd-threaded.asyncify.wasm" >build/gpubench/tfjs/ort-wasm-simd-threaded.asyncify.wasm.gz
cp tests/bench/page/transformersjs.html tests/bench/page/transformersjs.js build/gpubench/bench/
cp web/demo/demo-settings.js build/gpubench/demo-settings.js
echo "transformers.js $VERSION, onnxruntime-web $ORT_VERSION"
mib() { awk -v b="$1" 'BEGIN { printf "%.1f MiB", b / 1048576 }'; }
checkout=$( (git ls-files -z; git ls-files -z -o --exclude-standard) | du -cb --files0-from=- 2>/dev/null | tail -1 | cut -f1)
tfjs=$(du -sb build/gpubench/tfjs | cut -f1)
site=$(du -sb build/gpubench | cut -f1)
bin=$(du -sb .device-bin 2>/dev/null | cut -f1 || echo 0)
synth=$(du -sb .device-bin/gpt2-synth 2>/dev/null | cut -f1 || echo 0)
echo "checkout $(mib "$checkout"), build/gpubench $(mib "$site") (tfjs/ $(mib "$tfjs")), .device-bin $(mib "$bin") (gpt2-synth $(mib "$synth"))"
echo "carry [.device-bin, build/gpubench]: $(mib $((checkout + site + bin))) of 64 MiB"
echo "carry [.device-bin/gpt2-synth, build/gpubench]: $(mib $((checkout + site + synth))) of 64 MiB"
