#!/usr/bin/env python3
"""The demo's sampling defaults, chosen by measurement: the bundled model continues the demo's prompt
with the demo's settings under each repetition penalty, over several seeds, through the native CLI
(build/native/gpt2). Prints one JSON line per penalty: distinct-2 and distinct-3 (distinct n-grams over
all n-grams of the continuation's tokens, averaged over seeds; 1 means no n-gram repeats) and the
longest run of a repeated 4-gram loop, and one sample continuation.

    python3 tests/bench/demo_defaults.py [--penalties 1,1.1,1.2,1.3] [--seeds 8] [--tokens 60]
"""
import argparse
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PROMPT = "The jury said that"  # web/demo/index.html's prompt


def distinct(ids, n):
    grams = [tuple(ids[i:i + n]) for i in range(len(ids) - n + 1)]
    return len(set(grams)) / len(grams) if grams else 1.0


def repeated_fourgrams(ids):
    """Tokens that close a 4-gram already seen in the continuation."""
    seen, repeats = set(), 0
    for i in range(len(ids) - 3):
        gram = tuple(ids[i:i + 4])
        repeats += gram in seen
        seen.add(gram)
    return repeats


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--penalties", default="1,1.1,1.2,1.3")
    parser.add_argument("--seeds", type=int, default=8)
    parser.add_argument("--tokens", type=int, default=60)
    parser.add_argument("--temperature", default="0.8")
    parser.add_argument("--top-k", default="40")
    parser.add_argument("--top-p", default="0.95")
    args = parser.parse_args()
    cli = os.path.join(ROOT, "build/native/gpt2")
    model = os.path.join(ROOT, "web/models/brown-demo")
    for penalty in args.penalties.split(","):
        d2 = d3 = loops = 0.0
        sample = ""
        for seed in range(1, args.seeds + 1):
            out = subprocess.run([cli, "generate", "--model", model, "--prompt", PROMPT, "--max-new-tokens", str(args.tokens),
                                  "--temperature", args.temperature, "--top-k", args.top_k, "--top-p", args.top_p,
                                  "--repetition-penalty", penalty, "--seed", str(seed), "--json", "1"],
                                 check=True, capture_output=True, text=True).stdout
            result = json.loads(out)
            ids = result["ids"]
            d2 += distinct(ids, 2) / args.seeds
            d3 += distinct(ids, 3) / args.seeds
            loops += repeated_fourgrams(ids) / args.seeds
            if seed == 1:
                sample = result["text"]
        print(json.dumps({"repetition_penalty": float(penalty), "seeds": args.seeds, "tokens": args.tokens,
                          "temperature": float(args.temperature), "top_k": int(args.top_k), "top_p": float(args.top_p),
                          "distinct_2": round(d2, 3), "distinct_3": round(d3, 3), "repeated_4grams": round(loops, 2),
                          "sample": PROMPT + sample}))
        sys.stdout.flush()


if __name__ == "__main__":
    main()
