#!/usr/bin/env bash
# The demo command (README): installs what is missing, builds the WebAssembly module, assembles the
# static site in build/site with the bundled default model, and serves it on http://localhost:8080.
# --build-only stops before serving: CI publishes build/site (.github/workflows/pages.yml) with the
# same steps as the README's command.
set -euo pipefail
cd "$(dirname "$0")/../.."
bash .ci/install-deps.sh
NODE_PATH=/usr/share/nodejs emcmake cmake -S . -B build/wasm -DCMAKE_BUILD_TYPE=Release >/dev/null
NODE_PATH=/usr/share/nodejs cmake --build build/wasm -j"$(nproc)"
[ "${1:-}" = --build-only ] && exit 0
exec node web/dev/serve.mjs build/site --port "${PORT:-8080}"
