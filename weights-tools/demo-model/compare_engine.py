#!/usr/bin/env python3
"""Compare the native engine with the transformers reference fixture (standard library only).

    python3 weights-tools/demo-model/compare_engine.py [--weights fp32|fp16] [--gpt2 build/native/gpt2]

For each prompt of tests/fixtures/brown-demo/reference.json: max |engine logit - reference logit| over all
50257 last-position logits, the argmax of both, and whether the engine's 20-token greedy continuation equals
the reference's. Exit status 1 when a difference is above --tol (default 1e-3).
"""
import argparse
import json
import os
import subprocess
import sys

repo = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
ap = argparse.ArgumentParser()
ap.add_argument("--weights", default="fp32")
ap.add_argument("--gpt2", default=os.path.join(repo, "build", "native", "gpt2"))
ap.add_argument("--model", default=os.path.join(repo, "web", "models", "brown-demo"))
ap.add_argument("--reference", default=os.path.join(repo, "tests", "fixtures", "brown-demo", "reference.json"))
ap.add_argument("--tol", type=float, default=1e-3)
args = ap.parse_args()

ref = json.load(open(args.reference))
worst = 0.0
for key, p in ref["prompts"].items():
    ids = ",".join(map(str, p["ids"]))
    out = subprocess.run([args.gpt2, "logits", "--model", args.model, "--ids", ids, "--weights", args.weights],
                         capture_output=True, text=True, check=True).stdout
    logits = json.loads(out)["logits"]
    d = max(abs(a - b) for a, b in zip(logits, p["last_logits"]))
    worst = max(worst, d)
    gen = subprocess.run([args.gpt2, "generate", "--model", args.model, "--ids", ids, "--max-new-tokens",
                          str(len(p["greedy"])), "--temperature", "0", "--json", "1", "--weights", args.weights],
                         capture_output=True, text=True, check=True).stdout
    greedy_ok = json.loads(gen)["ids"] == p["greedy"]
    print(f"{key}: {len(p['ids'])} tokens, max|dlogit| {d:.3g}, argmax engine "
          f"{max(range(len(logits)), key=logits.__getitem__)} reference "
          f"{max(range(len(logits)), key=p['last_logits'].__getitem__)}, greedy 20 equal: {greedy_ok}")
print(f"worst max|dlogit| ({args.weights} weights): {worst:.3g} (tolerance {args.tol})")
sys.exit(0 if worst <= args.tol else 1)
