#!/usr/bin/env bash
# On the GPU machine, after ../shared/gpubrowser's two calls (its browser in /tmp/gpubrowser): the
# worker-against-same-thread benchmark (tests/bench/page/bench.js) in Chromium on the GPU, for
# synthetic GPT-2 124M (fp16 checkpoint, written here by gpt2-synth), and the native `gpt2 bench` on
# the same checkpoint in the same machine session. Carry [".device-bin", "build/gpubench"] (made by
# tests/bench/gpu/stage_browser.sh); results in $OUT/browser.jsonl (every module's run in turn; each summary names its module) and $OUT/native.jsonl.
set -u
cd "$(git rev-parse --show-toplevel 2>/dev/null || pwd)"
SITE=${SITE:-build/gpubench}
SIZE=${SIZE:-124M}
ROUNDS=${ROUNDS:-3}
TOKENS=${TOKENS:-16}
PROMPTS=${PROMPTS:-32,256}
WEIGHTS=${WEIGHTS:-fp16}
LIVE=${LIVE:-0}  # 0,1: also with the live views (bench.js)
SAMPLING=${SAMPLING:-greedy}  # comma-separated configurations of bench.js's SAMPLING, e.g. greedy,demo,temperature
MODES=${MODES:-worker,same-thread}  # worker, same-thread or both
LENS_POSITIONS=${LENS_POSITIONS:-}  # the live lens's prompt positions (default: the module's)
PROFILE=${PROFILE:-0}  # 1: also benchmark({ profile: true }) per prompt length and mode (bench.js)
# The native bench reaches the NVIDIA driver through glvnd's vendor file (run_on_device.sh does the same);
# the GL loaders are in / since the kit's run.sh of call 2.
VENDOR=/usr/local/nvidia/share/glvnd/egl_vendor.d/10_nvidia.json
[ -f "$VENDOR" ] && export __EGL_VENDOR_LIBRARY_FILENAMES=$VENDOR
# MODEL: a model folder already in SITE (a URL path, e.g. /bench/bundled/ copied there by hand)
# instead of the synthetic checkpoint, which is then neither written nor benched natively.
if [ -z "${MODEL:-}" ]; then
    MODEL=/bench/model/
    mkdir -p "$SITE/bench/model"
    .device-bin/gpt2-synth "$SITE/bench/model" --size "$SIZE" --dtype fp16 >/dev/null || exit 1
    cp "$SITE"/bench/tokenizer/* "$SITE/bench/model/"
    for P in ${PROMPTS//,/ }; do
        .device-bin/gpt2 bench --model "$SITE/bench/model" --prompt-tokens "$P" --new-tokens 16 --weights "$WEIGHTS" >>"$OUT/native.jsonl" 2>>"$OUT/native.err" ||
            echo "native bench failed (see native.err)"
    done
    cat "$OUT/native.jsonl"
fi
# MODULES: the module builds to measure, each a URL path in SITE (an older build copied into a folder
# of SITE by hand gives an A/B comparison in one machine session). TUNINGS: the load's `tuning` for
# each module's runs, space-separated JSON objects without spaces (default {}: the engine's own), e.g.
# '{} {"maxColorBits":512}'.
# One file for all runs: the device machine hands back only a few files per call.
: >"$OUT/browser.jsonl"
for module in ${MODULES:-/gpt2.js}; do
    for tuning in ${TUNINGS:-"{}"}; do
        encoded=$(python3 -c 'import sys, urllib.parse; print(urllib.parse.quote(sys.argv[1]))' "$tuning")
        SITE="$SITE" PAGE="bench/bench.html?post=1&model=$MODEL&weights=$WEIGHTS&prompts=$PROMPTS&tokens=$TOKENS&rounds=$ROUNDS&module=$module&live=$LIVE&sampling=$SAMPLING&modes=$MODES${LENS_POSITIONS:+&lensPositions=$LENS_POSITIONS}&profile=$PROFILE&tuning=$encoded" \
            TIMEOUT_S=${TIMEOUT_S:-240} bash /tmp/gpubrowser/run.sh
        cat "$OUT/results.jsonl" >>"$OUT/browser.jsonl" && rm "$OUT/results.jsonl"
    done
done
