#!/usr/bin/env bash
# Fuzzes one target (tests/fuzz/README.md).
#   tests/fuzz/run.sh TARGET [SECONDS] [LIBFUZZER_FLAGS...]   fuzz TARGET for SECONDS (default 60)
#   tests/fuzz/run.sh TARGET merge                            minimise what fuzzing found into the
#                                                              committed corpus (tests/fuzz/corpus/TARGET)
#   tests/fuzz/run.sh all SECONDS                             every target for SECONDS each, one line
#                                                              each, then "fuzz: N passed, N failed"
# TARGET: safetensors config tokenizer vocab gguf.
# Configures and builds build/fuzz (clang++, libFuzzer, ASan + UBSan) when needed. Fuzzing runs on a
# copy of the committed corpus in build/fuzz/corpus/TARGET, so the committed one only grows by merge;
# crashing inputs are saved as build/fuzz/artifacts/TARGET/crash-*, the run's log as
# build/fuzz/logs/TARGET/fuzz-0.log.
# Environment: GPT2_FUZZ_BUILD_DIR (default build/fuzz), GPT2_FUZZ_BUILD_JOBS (default nproc).
set -euo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
targets="safetensors config tokenizer vocab gguf"
target=${1:-}
if [[ $target == all ]]; then
  seconds=${2:-10}
  passed=0 failed=0
  for each in $targets; do
    log=${GPT2_FUZZ_BUILD_DIR:-$root/build/fuzz}/logs/$each-smoke.log
    mkdir -p "$(dirname "$log")"
    if "$0" "$each" "$seconds" >"$log" 2>&1; then
      passed=$((passed + 1))
      echo "fuzz $each: ok, $(grep -o 'number_of_executed_units: [0-9]*' "$log" | tail -1 | grep -o '[0-9]*') inputs in $seconds s"
    else
      failed=$((failed + 1))
      echo "fuzz $each: FAILED ($log):"
      tail -n 40 "$log"
    fi
  done
  echo "fuzz: $passed passed, $failed failed"
  [[ $failed -eq 0 ]]
  exit
fi
if [[ -z $target || " $targets " != *" $target "* ]]; then
  sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//' >&2
  exit 2
fi
mode=${2:-60}
build=${GPT2_FUZZ_BUILD_DIR:-$root/build/fuzz}
jobs=${GPT2_FUZZ_BUILD_JOBS:-$(nproc)}
committed=$root/tests/fuzz/corpus/$target
work=$build/corpus/$target
artifacts=$build/artifacts/$target

if ! grep -qE '^[[:space:]]*add_subdirectory\(fuzz\)' "$root/tests/CMakeLists.txt"; then
  echo "tests/CMakeLists.txt lacks add_subdirectory(fuzz)" >&2
  exit 1
fi
if [[ ! -f $build/CMakeCache.txt ]]; then
  cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER=clang++ \
    -DGPT2_FUZZ=ON -DGPT2_SANITIZE=ON
fi
cmake --build "$build" --target "fuzz_$target" -j "$jobs"
exe=$build/tests/fuzz/fuzz_$target

dict=()
case $target in
  safetensors|config) dict=(-dict="$root/tests/fuzz/json.dict") ;;
  gguf) dict=(-dict="$root/tests/fuzz/gguf.dict") ;;
esac

mkdir -p "$work" "$artifacts"
if [[ $mode == merge ]]; then
  # Adds to the committed corpus only the inputs that bring new coverage: new edges for the file
  # formats (-use_counters=0 keeps their corpus small), new edges or hit counts for prompt text.
  counters=(-use_counters=0)
  [[ $target == tokenizer ]] && counters=()
  exec "$exe" -merge=1 "${counters[@]}" -rss_limit_mb=2048 -timeout=10 "${dict[@]}" "$committed" "$work"
fi
[[ $mode =~ ^[0-9]+$ ]] || { echo "SECONDS must be a number or 'merge', got '$mode'" >&2; exit 2; }
cp -n "$committed"/* "$work"/ 2>/dev/null || true
# -jobs=1 -workers=1: one fuzzing process at a time. In that mode libFuzzer writes the run's output to
# ./fuzz-0.log, so it runs in logs/TARGET and the log is printed at the end.
logs=$build/logs/$target
mkdir -p "$logs"
rc=0
(cd "$logs" && "$exe" -max_total_time="$mode" -jobs=1 -workers=1 -rss_limit_mb=2048 -timeout=10 -print_final_stats=1 \
  -artifact_prefix="$artifacts/" "${dict[@]}" "${@:3}" "$work") || rc=$?
cat "$logs/fuzz-0.log"
exit $rc
