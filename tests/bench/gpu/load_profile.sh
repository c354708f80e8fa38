#!/usr/bin/env bash
# On the GPU machine, after ../shared/gpubrowser's two calls (its browser in /tmp/gpubrowser): where a
# load's time goes in Chromium on the GPU (tests/bench/page/load.html), for synthetic checkpoint
# folders from gpt2-synth (MODELS: size:dtype pairs; MODELS="" none) and any GGUF files in $SITE/bench, each with
# this build and with the build before (build/gpubench/old/, OLD; OLD=" " leaves it out). Then, for
# each checkpoint folder, what the browser itself allows (tests/bench/page/ceilings.html): reading
# its model.safetensors from the Cache API, and uploading it with texSubImage3D.
# GGUF (size:type pairs, e.g. "124M:Q4_0 1.5B:Q4_0") first writes such files there with gpt2-gguf, from
# gpt2-synth's weights and the bundled model's tokenizer.
# WORKER=1 loads in the module's Worker (its WebGL calls are not timed) instead of on the page's thread.
# Carry [".device-bin", "build/gpubench"] as tests/bench/gpu/stage_browser.sh leaves them.
# Results: $OUT/load.jsonl.
set -u
cd "$(git rev-parse --show-toplevel 2>/dev/null || pwd)"
SITE=${SITE:-build/gpubench}
MODELS=${MODELS-124M:fp16 124M:fp32 774M:fp16}
ROUNDS=${ROUNDS:-3}
WEIGHTS=${WEIGHTS:-fp16}
: >"$OUT/load.jsonl"
page() {  # page and query
    SITE="$SITE" PAGE="$1" TIMEOUT_S=${TIMEOUT_S:-200} bash /tmp/gpubrowser/run.sh >/dev/null
    cat "$OUT/results.jsonl" >>"$OUT/load.jsonl" && rm "$OUT/results.jsonl"
}
load() {  # model URL path, module
    page "bench/load.html?post=1&model=$1&weights=$WEIGHTS&rounds=$ROUNDS&module=$2&worker=${WORKER:-0}"
}
for g in ${GGUF:-}; do
    file="$SITE/bench/${g/:/-}.gguf" source=/tmp/gguf-source
    [ -e "$file" ] && continue
    rm -rf "$source"
    .device-bin/gpt2-synth "$source" --size "${g%:*}" --dtype fp16 >/dev/null || exit 1
    cp web/models/brown-demo/vocab.json web/models/brown-demo/merges.txt "$source/"
    .device-bin/gpt2-gguf "$source" "$file" --type "${g#*:}" >/dev/null || exit 1
    rm -rf "$source"
done
for m in $MODELS; do
    dir="$SITE/bench/${m/:/-}"
    [ -d "$dir" ] || .device-bin/gpt2-synth "$dir" --size "${m%:*}" --dtype "${m#*:}" >/dev/null || exit 1
    for module in /gpt2.js ${OLD:-/old/gpt2.js}; do load "/bench/${m/:/-}/" "$module"; done
    page "bench/ceilings.html?post=1&file=/bench/${m/:/-}/model.safetensors&rounds=$ROUNDS"
done
for f in "$SITE"/bench/*.gguf; do
    [ -e "$f" ] || continue
    for module in /gpt2.js ${OLD:-/old/gpt2.js}; do load "/bench/$(basename "$f")" "$module"; done
done
python3 - "$OUT/load.jsonl" <<'PY'
import json, sys
for line in open(sys.argv[1]):
    r = json.loads(line)
    r = r.get('body', r)
    if r.get('kind') == 'ceiling':
        print(f"{r['file']:<28} {r['what']:<22} {r['ms']:>5} ms  {r['gb_per_s']:.3f} GB/s"); continue
    if r.get('kind') != 'load': print(line.strip()[:300]); continue
    gl = ' '.join(f"{k}:{v['calls']}/{v['ms']:.0f}" for k, v in list(r['webgl'].items())[:5])
    print(f"{r['model']:<28} {r['module']:<14} {r['visit']:<6} load {r['load_ms']:>5} made {r['made_ms']:>5} read {r['read_ms']:>5}  {gl}")
PY
