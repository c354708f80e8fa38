#!/usr/bin/env bash
# Stages what tests/bench/gpu/run_on_device.sh needs on the GPU machine, here, in the repo root:
#   .device-bin/  copies of build/native/gpt2, gpt2-synth, gpt2-gguf, fragment_rates and program_binaries (x86-64 build outputs)
#   .gl/          the GL/EGL loader packages (glvnd), downloaded once (Debian/Ubuntu amd64 .debs)
# Both folders are kept out of git through .git/info/exclude (never committed).
set -eu
cd "$(git rev-parse --show-toplevel)"
ex=.git/info/exclude
for p in /.device-bin/ /.gl/; do grep -qxF "$p" "$ex" || echo "$p" >>"$ex"; done
mkdir -p .device-bin
cp build/native/gpt2 build/native/gpt2-synth build/native/gpt2-gguf build/native/fragment_rates build/native/program_binaries .device-bin/
if ! ls .gl/*.deb >/dev/null 2>&1; then
    mkdir -p .gl /tmp/amd64/partial
    o='-oAPT::Architecture=amd64 -oAPT::Architectures=amd64 -oDir::State::Lists=/tmp/amd64'
    apt-get $o update
    (cd .gl && apt-get $o download libvulkan1 libegl1 libglvnd0 libopengl0 libgl1 libglx0 libgles2)
fi
ls -la .device-bin .gl
git status --short --ignored .device-bin .gl
