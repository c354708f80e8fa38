"""A plain numpy GPT-2 decode step with a KV cache: the CPU reference row of docs/benchmarks.md.

/usr/bin/python3 tests/bench/numpy_reference.py [--size 124M|355M] [--context 32] [--steps 8]
Random weights of the official shape (the speed does not depend on their values). Prints one JSON line.
"""
import argparse
import json
import time

import numpy as np

SIZES = {"124M": (768, 12, 12), "355M": (1024, 24, 16)}


def layer_norm(x, g, b, eps=1e-5):
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * g + b


def gelu(x):
    return 0.5 * x * (1 + np.tanh(0.7978845608028654 * (x + 0.044715 * x ** 3)))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--size", default="124M", choices=SIZES)
    p.add_argument("--context", type=int, default=32)
    p.add_argument("--steps", type=int, default=8)
    a = p.parse_args()
    C, L, H = SIZES[a.size]
    V, D = 50257, C // H
    rng = np.random.default_rng(0)
    w = lambda *shape: (rng.standard_normal(shape, dtype=np.float32) * 0.02)
    wte, wpe = w(V, C), w(1024, C)
    layers = [dict(attn=w(C, 3 * C), proj=w(C, C), fc=w(C, 4 * C), mproj=w(4 * C, C)) for _ in range(L)]
    ones, zeros = np.ones(C, np.float32), np.zeros(C, np.float32)
    k_cache = np.zeros((L, 1024, C), np.float32)
    v_cache = np.zeros((L, 1024, C), np.float32)

    def step(token, pos):
        x = wte[token] + wpe[pos]
        for i, lw in enumerate(layers):
            q, k, v = np.split(layer_norm(x, ones, zeros) @ lw["attn"], 3)
            k_cache[i, pos], v_cache[i, pos] = k, v
            keys, values = k_cache[i, : pos + 1].reshape(pos + 1, H, D), v_cache[i, : pos + 1].reshape(pos + 1, H, D)
            scores = np.einsum("hd,thd->ht", q.reshape(H, D), keys) / np.sqrt(D)
            probs = np.exp(scores - scores.max(-1, keepdims=True))
            probs /= probs.sum(-1, keepdims=True)
            x = x + np.einsum("ht,thd->hd", probs, values).reshape(C) @ lw["proj"]
            x = x + gelu(layer_norm(x, ones, zeros) @ lw["fc"]) @ lw["mproj"]
        return int(np.argmax(wte @ layer_norm(x, ones, zeros)))

    for pos in range(a.context):  # fill the cache (not timed)
        step(pos % V, pos)
    times, token = [], 0
    for s in range(a.steps):
        start = time.perf_counter()
        token = step(token, a.context + s)
        times.append((time.perf_counter() - start) * 1000)
    print(json.dumps({"size": a.size, "context": a.context, "decode_ms_per_token": float(np.median(times)),
                      "numpy": np.__version__}))


if __name__ == "__main__":
    main()
