#!/usr/bin/env bash
# Interleaved A/B of two native builds on this machine: for each round, each size, each binary, one
# `gpt2 bench` process. Rows go to stdout as {"binary", "size", "round", "row": <gpt2 bench's row>}.
#
#   tests/bench/native_ab.sh OLD_GPT2 NEW_GPT2 [ROUNDS]
#   env MODELS="124M:/tmp/s124 355M:/tmp/s355" (size:checkpoint folder, from gpt2-synth),
#       PROMPTS (default 32,32,256: the first is the cold run), NEW_TOKENS (8), WEIGHTS (fp16)
set -eu
old=$1 new=$2 rounds=${3:-2}
MODELS=${MODELS:-"124M:/tmp/s124 355M:/tmp/s355"}
for round in $(seq "$rounds"); do
    for model in $MODELS; do
        for bin in "$old" "$new"; do
            "$bin" bench --model "${model#*:}" --prompt-tokens "${PROMPTS:-32,32,256}" --new-tokens "${NEW_TOKENS:-8}" \
                --weights "${WEIGHTS:-fp16}" |
                sed "s|^|{\"binary\":\"$bin\",\"size\":\"${model%%:*}\",\"round\":$round,\"row\":|; s|\$|}|"
        done
    done
done
