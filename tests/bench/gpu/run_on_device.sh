#!/usr/bin/env bash
# Runs on the GPU machine, from the repository root, with .device-bin/ and .gl/ carried
# (see tests/bench/gpu/README.md and stage.sh). Writes $OUT/results.jsonl and $OUT/log.txt.
#
#   bash tests/bench/gpu/run_on_device.sh            # whole plan, ends within BENCH_BUDGET_S
#   BENCH_BUDGET_S=300 SIZES="124M 355M" bash tests/bench/gpu/run_on_device.sh
#   ENGINE_ARGS="--profile on" HF=0 SWEEP="--split-texels 0;--split-texels 32" bash tests/bench/gpu/run_on_device.sh
#   PLAN=0 SWEEP_SIZES="124M 355M" SWEEP="gpt2-old:;--half-pairs off;--profile on" bash tests/bench/gpu/run_on_device.sh
#
# ENGINE_ARGS are added to every `gpt2 bench`; HF=0 skips Hugging Face; PLAN=0 skips the plan (engine
# and Hugging Face rows of every size); SWEEP runs fp16 once more per ';'-separated set of bench
# arguments, for each size of SWEEP_SIZES (default 124M), after the plan. A set that starts with
# NAME: runs the binary $BIN/NAME instead of $BIN/gpt2 (an older build, carried beside it); a set
# with its own --prompt-tokens replaces PROMPTS.
#
# Every step runs under `timeout`, capped by what is left of the budget; a step that no longer
# fits is skipped and says so (a {"skipped": ...} row in results.jsonl and a SKIP line in the log).
set -u
T0=$(date +%s)
BUDGET=${BENCH_BUDGET_S:-530}
SIZES=${SIZES:-"124M 355M 774M 1.5B"}
PROMPTS=${PROMPTS:-"32,32,256,1000"}   # the first 32 is the cold run (first use of every shader)
NEW=${NEW_TOKENS:-16}
ENGINE_ARGS=${ENGINE_ARGS:-}
HF=${HF:-1}
PLAN=${PLAN:-1}
SWEEP=${SWEEP:-}
SWEEP_SIZES=${SWEEP_SIZES:-124M}
OUT=${OUT:-/tmp/gpt2-bench-out}
MD=${MODEL_DIR:-/tmp/gpt2-models}
BIN=${BIN:-.device-bin}
HERE=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$OUT" "$MD"
RES=$OUT/results.jsonl
LOG=$OUT/log.txt
: >"$RES"
: >"$LOG"
exec > >(tee -a "$LOG") 2>&1
export PYTHONUNBUFFERED=1

left() { echo $((BUDGET - ($(date +%s) - T0))); }
note() { echo "[$(($(date +%s) - T0))s] $*"; }
skip() { # name reason
    note "SKIP $1: $2"
    printf '{"skipped":"%s","reason":"%s","at_s":%d}\n' "$1" "$2" $(($(date +%s) - T0)) >>"$RES"
}
# cap NEED CAP -> prints the timeout to use, or nothing if fewer than NEED seconds are left
cap() {
    local l
    l=$(left)
    ((l < $1)) && return 1
    ((l < $2)) && echo "$l" || echo "$2"
}

# ---------------------------------------------------------------- GL loader, GPU
if ls .gl/*.deb >/dev/null 2>&1; then
    for f in .gl/*.deb; do dpkg -x "$f" /; done
    ldconfig
else
    note "no .gl/*.deb carried: relying on the image's GL loader"
fi
VENDOR=/usr/local/nvidia/share/glvnd/egl_vendor.d/10_nvidia.json
if [ -f "$VENDOR" ]; then export __EGL_VENDOR_LIBRARY_FILENAMES=$VENDOR; fi
note "date: $(date -u +%FT%TZ)"
nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.max.sm --format=csv,noheader
note "__EGL_VENDOR_LIBRARY_FILENAMES=${__EGL_VENDOR_LIBRARY_FILENAMES:-unset}"
ldconfig -p | grep -Ei 'libEGL|libGLESv2' | sed 's/^/  /'
GPU_NAME=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
printf '{"env":"device","gpu":"%s","date":"%s","budget_s":%d}\n' "$GPU_NAME" "$(date -u +%FT%TZ)" "$BUDGET" >>"$RES"

# ---------------------------------------------------------------- synthetic checkpoints
# All sizes are written at once, in the background (one process each, fp16 files); each bench
# waits only for its own size. Each synth is timed on its own (they run side by side).
for s in $SIZES; do
    # A warm machine keeps the markers of an earlier run: clear them before anything waits on them.
    rm -f "$MD/$s.done" "$MD/$s.logged" "$MD/$s.synth.json"
    (
        rm -rf "$MD/$s"
        a=$(date +%s.%N)
        if "$BIN/gpt2-synth" "$MD/$s" --size "$s" --dtype fp16 >"$MD/$s.synth.out" 2>&1; then rc=0; else rc=$?; fi
        b=$(date +%s.%N)
        bytes=$(stat -c %s "$MD/$s/model.safetensors" 2>/dev/null || echo 0)
        printf '{"synth":"%s","dtype":"fp16","rc":%d,"seconds":%.2f,"file_bytes":%s,"concurrent_with_other_synths":true}\n' \
            "$s" "$rc" "$(awk -v a="$a" -v b="$b" 'BEGIN{print b-a}')" "$bytes" >"$MD/$s.synth.json"
        touch "$MD/$s.done"
    ) &
done

wait_synth() { # size -> 0 when the checkpoint is there
    local s=$1
    while [ ! -f "$MD/$s.done" ]; do
        (($(left) < 20)) && return 1
        sleep 0.5
    done
    if [ ! -f "$MD/$s.logged" ]; then
        touch "$MD/$s.logged"
        cat "$MD/$s.synth.json" >>"$RES"
        note "synth $s: $(cat "$MD/$s.synth.json")"
    fi
    grep -q '"rc":0' "$MD/$s.synth.json"
}

# ---------------------------------------------------------------- native engine
engine() { # size weights need cap [[binary:]extra bench args]
    local s=$1 w=$2 t rc extra="${5:-}" binary=gpt2 prompts
    case "$extra" in *:*) binary=${extra%%:*}; extra=${extra#*:} ;; esac
    prompts=(--prompt-tokens "$PROMPTS")
    case " $extra " in *" --prompt-tokens "*) prompts=() ;; esac
    t=$(cap "$3" "$4") || { skip "engine $s $w" "$(left)s left, need $3s"; return; }
    wait_synth "$s" || { skip "engine $s $w" "no checkpoint"; return; }
    t=$(cap 10 "$t") || { skip "engine $s $w" "budget spent waiting for synth"; return; }
    note "$binary $s --weights $w $ENGINE_ARGS $extra (timeout ${t}s)"
    local tmp=$OUT/.engine.tmp
    # shellcheck disable=SC2086 # the extra arguments are words
    timeout --kill-after=5 "$t" "$BIN/$binary" bench --model "$MD/$s" "${prompts[@]}" \
        --new-tokens "$NEW" --weights "$w" $ENGINE_ARGS $extra >"$tmp" 2>"$tmp.err"
    rc=$?
    sed 's/^/  /' "$tmp"
    [ -s "$tmp.err" ] && sed 's/^/  stderr: /' "$tmp.err"
    awk -v s="$s" -v w="$w" -v b="$binary" -v a="$ENGINE_ARGS $extra" 'index($0,"{")==1 {printf "{\"engine\":\"gpt2-gles\",\"binary\":\"%s\",\"size\":\"%s\",\"weights_requested\":\"%s\",\"args\":\"%s\",\"checkpoint_dtype\":\"fp16\",\"seq\":%d,\"cold\":%s,%s\n", b, s, w, a, n, (n==0?"true":"false"), substr($0,2); n++}' "$tmp" >>"$RES"
    if [ "$rc" != 0 ]; then
        printf '{"engine":"gpt2-gles","size":"%s","weights_requested":"%s","error":"rc=%d%s","rows_done":%d}\n' \
            "$s" "$w" "$rc" "$( [ "$rc" = 124 ] && echo ' (timeout)')" "$(grep -c '^{' "$tmp")" >>"$RES"
        note "engine $s $w rc=$rc"
    fi
}

# ---------------------------------------------------------------- transformers baseline
hf() { # size modes dtypes need cap [compile budget]
    local s=$1 t rc
    t=$(cap "$4" "$5") || { skip "hf $s $2 $3" "$(left)s left, need $4s"; return; }
    wait_synth_quiet "$s" || { skip "hf $s $2 $3" "no checkpoint"; return; }
    note "hf $s modes=$2 dtypes=$3 (timeout ${t}s)"
    timeout --kill-after=10 "$t" python3 "$HERE/hf_compare.py" --model "$MD/$s" --size "$s" \
        --modes "$2" --dtypes "$3" --prompt-tokens 32,256,1000 --new-tokens "$NEW" \
        --compile-budget-s "${6:-150}" >"$OUT/.hf.tmp" 2>"$OUT/.hf.err"
    rc=$?
    cat "$OUT/.hf.tmp" >>"$RES"
    sed 's/^/  /' "$OUT/.hf.tmp"
    grep -v '^\s*$' "$OUT/.hf.err" | tail -n 40 | sed 's/^/  stderr: /'
    [ "$rc" != 0 ] && {
        printf '{"engine":"hf-transformers","size":"%s","modes":"%s","dtypes":"%s","error":"rc=%d%s"}\n' \
            "$s" "$2" "$3" "$rc" "$( [ "$rc" = 124 ] && echo ' (timeout)')" >>"$RES"
        note "hf $s rc=$rc"
    }
}
wait_synth_quiet() {
    while [ ! -f "$MD/$1.done" ]; do (($(left) < 20)) && return 1; sleep 0.5; done
    grep -q '"rc":0' "$MD/$1.synth.json"
}
has() { case " $SIZES " in *" $1 "*) return 0 ;; *) return 1 ;; esac; }
hf_on() { [ "$HF" != 0 ]; }

# ---------------------------------------------------------------- EGL sanity check (tiny model, seconds)
# Which renderer does the engine get? If not the NVIDIA GPU with the vendor file forced, try without it.
"$BIN/gpt2-synth" "$MD/tiny" --n-embd 64 --n-layer 2 --n-head 2 --dtype fp16 >/dev/null 2>&1
egl_probe() { timeout 60 "$BIN/gpt2" bench --model "$MD/tiny" --prompt-tokens 8 --new-tokens 2 --weights fp16 2>&1 | tail -n 5; }
PROBE=$(egl_probe)
note "EGL probe (vendor file ${__EGL_VENDOR_LIBRARY_FILENAMES:-unset}): $PROBE"
if ! echo "$PROBE" | grep -qi '"renderer":"[^"]*nvidia'; then
    ls -la /usr/local/nvidia/share/glvnd/egl_vendor.d /usr/share/glvnd/egl_vendor.d 2>&1 | sed 's/^/  /'
    ldconfig -p | grep -i nvidia | head -n 20 | sed 's/^/  /'
    if [ -n "${__EGL_VENDOR_LIBRARY_FILENAMES:-}" ]; then
        saved=$__EGL_VENDOR_LIBRARY_FILENAMES
        unset __EGL_VENDOR_LIBRARY_FILENAMES
        PROBE2=$(egl_probe)
        note "EGL probe without the vendor file: $PROBE2"
        echo "$PROBE2" | grep -qi '"renderer":"[^"]*nvidia' || export __EGL_VENDOR_LIBRARY_FILENAMES=$saved
    fi
    EGL_LOG_LEVEL=debug egl_probe 2>&1 | grep -Ei 'error|warn|vendor|driver|device|platform|renderer|fail' | head -n 30 | sed 's/^/  debug: /'
fi
printf '{"egl_probe":%s}\n' "$(echo "$PROBE" | grep '^{' | tail -n 1 | grep . || echo '"failed"')" >>"$RES"

# ---------------------------------------------------------------- plan: small first, biggest last
plan() { [ "$PLAN" != 0 ]; }
#            size weights need cap
plan && has 124M && engine 124M fp16 15 90
plan && has 124M && engine 124M fp32 15 90
plan && has 355M && engine 355M fp16 20 120
plan && has 355M && engine 355M fp32 20 120
#         size modes  dtypes     need cap
plan && has 124M && hf_on && hf 124M eager fp16,fp32 40 90
plan && has 355M && hf_on && hf 355M eager fp16,fp32 40 90
plan && has 774M && engine 774M fp16 30 150
plan && has 774M && engine 774M fp32 30 150
plan && has 1.5B && engine 1.5B fp16 40 180
plan && has 1.5B && engine 1.5B fp32 40 180
#                                    need cap compile-budget
plan && has 124M && hf_on && hf 124M compiled fp16 60 150 100
plan && has 355M && hf_on && hf 355M compiled fp16 60 120 80
plan && has 774M && hf_on && hf 774M eager fp16,fp32 40 90
plan && has 1.5B && hf_on && hf 1.5B eager fp16,fp32 40 90
plan && has 124M && hf_on && hf 124M compiled fp32 60 100 60
IFS=';' read -r -a sweep <<<"$SWEEP"
for s in $SWEEP_SIZES; do
    for v in "${sweep[@]}"; do has "$s" && engine "$s" fp16 15 60 "$v"; done
done

for s in $SIZES; do wait_synth_quiet "$s" >/dev/null 2>&1 || true; done
for s in $SIZES; do [ -f "$MD/$s.synth.out" ] && sed "s/^/  synth $s: /" "$MD/$s.synth.out"; done
for s in $SIZES; do [ -f "$MD/$s.done" ] && [ ! -f "$MD/$s.logged" ] && cat "$MD/$s.synth.json" >>"$RES"; done
note "done; $(grep -c . "$RES") rows in $RES"
sleep 1
