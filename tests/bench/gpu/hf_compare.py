#!/usr/bin/env python3
"""Hugging Face transformers baseline for `gpt2 bench`, on the same checkpoint folder.

For each dtype and mode, and each prompt length P: prefill P tokens (plus the first token's
argmax), then N greedy decode steps one token at a time through the KV cache, each step timed
with torch.cuda.synchronize(). Prints one JSON line per (size, dtype, mode, P) to stdout, as
soon as it is measured, so a run cut short by `timeout` keeps what it finished.

Modes:
  eager     GPT2LMHeadModel as loaded (default attention implementation), DynamicCache.
  compiled  StaticCache sized for max(P)+N, decode step through
            torch.compile(model.forward, mode="reduce-overhead", fullgraph=True)
            (CUDA graphs); the prefill runs the uncompiled forward into the same static cache,
            as transformers' generate() does with a compiled decode step.
            If the manual static-cache loop fails, falls back to timing model.generate() with
            generation_config.cache_implementation="static" and the compiled forward
            (decode then is a mean, not a median: see "method").

The prompt is the same id sequence the native bench uses: (i*7919 + 464) % vocab.
Each (dtype, mode, P) is run once untimed (warm-up) and once timed.
"""
import argparse
import inspect
import json
import os
import statistics
import sys
import time
import traceback


def emit(row):
    print(json.dumps(row), flush=True)


def log(*a):
    print(*a, file=sys.stderr, flush=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", required=True, help="Hugging Face GPT-2 folder (config.json + model.safetensors)")
    ap.add_argument("--size", default="", help="label copied into each row (124M, 355M, ...)")
    ap.add_argument("--dtypes", default="fp16,fp32")
    ap.add_argument("--modes", default="eager,compiled")
    ap.add_argument("--prompt-tokens", default="32,256,1000")
    ap.add_argument("--new-tokens", type=int, default=16)
    ap.add_argument("--compile-budget-s", type=float, default=180.0,
                    help="skip further compiled work once this many seconds went into compiled mode")
    args = ap.parse_args()

    import torch
    import transformers
    from transformers import GPT2LMHeadModel

    prompts = [int(x) for x in args.prompt_tokens.split(",") if x]
    N = args.new_tokens
    dev = torch.device("cuda")
    base = {
        "engine": "hf-transformers",
        "size": args.size,
        "torch": torch.__version__,
        "transformers": transformers.__version__,
        "gpu": torch.cuda.get_device_name(0),
        "new_tokens": N,
    }

    def load(dtype):
        t0 = time.perf_counter()
        try:
            m = GPT2LMHeadModel.from_pretrained(args.model, dtype=dtype)
        except TypeError:
            m = GPT2LMHeadModel.from_pretrained(args.model, torch_dtype=dtype)
        m = m.to(dev).eval()
        torch.cuda.synchronize()
        return m, (time.perf_counter() - t0) * 1000.0

    def fwd_kwargs(fn):
        try:
            params = inspect.signature(fn).parameters
        except (TypeError, ValueError):
            params = {}
        if "logits_to_keep" in params:
            return {"logits_to_keep": 1}
        if "num_logits_to_keep" in params:
            return {"num_logits_to_keep": 1}
        return {}

    def prompt_ids(P, vocab):
        return torch.tensor([[(i * 7919 + 464) % vocab for i in range(P)]], dtype=torch.long, device=dev)

    # ---------------- eager ----------------
    def run_eager(model, P, kw):
        ids = prompt_ids(P, model.config.vocab_size)
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        out = model(input_ids=ids, use_cache=True, **kw)
        nxt = out.logits[:, -1, :].argmax(-1, keepdim=True)
        torch.cuda.synchronize()
        prefill = (time.perf_counter() - t0) * 1000.0
        past = out.past_key_values
        steps = []
        for _ in range(N):
            t0 = time.perf_counter()
            out = model(input_ids=nxt, past_key_values=past, use_cache=True, **kw)
            past = out.past_key_values
            nxt = out.logits[:, -1, :].argmax(-1, keepdim=True)
            torch.cuda.synchronize()
            steps.append((time.perf_counter() - t0) * 1000.0)
        return prefill, steps

    # ---------------- compiled (static cache) ----------------
    def make_static_cache(model, max_len, dtype):
        from transformers import StaticCache
        tries = [
            dict(config=model.config, max_cache_len=max_len),
            dict(config=model.config, max_batch_size=1, max_cache_len=max_len, device=dev, dtype=dtype),
            dict(config=model.config, batch_size=1, max_cache_len=max_len, device=dev, dtype=dtype),
        ]
        errs = []
        for kw in tries:
            try:
                return StaticCache(**kw)
            except Exception as e:  # signature differs between transformers versions
                errs.append(f"{sorted(kw)}: {type(e).__name__}: {e}")
        raise RuntimeError("StaticCache: " + " | ".join(errs))

    def run_static(model, eager_fwd, compiled_fwd, cache, P, kw):
        cache.reset()
        ids = prompt_ids(P, model.config.vocab_size)
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        out = eager_fwd(input_ids=ids, past_key_values=cache, use_cache=True,
                        cache_position=torch.arange(P, device=dev), **kw)
        nxt = out.logits[:, -1, :].argmax(-1, keepdim=True)
        torch.cuda.synchronize()
        prefill = (time.perf_counter() - t0) * 1000.0
        steps = []
        for i in range(N):
            pos = torch.tensor([P + i], device=dev)
            t0 = time.perf_counter()
            out = compiled_fwd(input_ids=nxt, past_key_values=cache, use_cache=True, cache_position=pos, **kw)
            nxt = out.logits[:, -1, :].argmax(-1, keepdim=True).clone()
            torch.cuda.synchronize()
            steps.append((time.perf_counter() - t0) * 1000.0)
        return prefill, steps

    def run_generate(model, P):
        ids = prompt_ids(P, model.config.vocab_size)
        mask = torch.ones_like(ids)

        def gen(n):
            torch.cuda.synchronize()
            t0 = time.perf_counter()
            model.generate(input_ids=ids, attention_mask=mask, max_new_tokens=n, min_new_tokens=n,
                           do_sample=False, pad_token_id=0)
            torch.cuda.synchronize()
            return (time.perf_counter() - t0) * 1000.0

        t1 = gen(1)
        tn = gen(N + 1)
        return t1, [(tn - t1) / N] * N

    compiled_spent = 0.0
    for dname in [d for d in args.dtypes.split(",") if d]:
        dtype = {"fp16": torch.float16, "fp32": torch.float32, "bf16": torch.bfloat16}[dname]
        for mode in [m for m in args.modes.split(",") if m]:
            row0 = dict(base, dtype=dname, mode=mode)
            if mode == "compiled" and compiled_spent > args.compile_budget_s:
                emit(dict(row0, error=f"skipped: compile budget {args.compile_budget_s}s spent"))
                continue
            try:
                model, load_ms = load(dtype)
            except Exception as e:
                emit(dict(row0, error=f"load: {type(e).__name__}: {e}"))
                continue
            row0["load_ms"] = round(load_ms, 1)
            row0["attn_implementation"] = getattr(model.config, "_attn_implementation", None)
            row0["gpu_param_bytes"] = sum(p.numel() * p.element_size() for p in model.parameters())
            kw = fwd_kwargs(model.forward)
            try:
                with torch.no_grad():
                    if mode == "eager":
                        for P in prompts:
                            run_eager(model, P, kw)  # warm-up
                            pre, steps = run_eager(model, P, kw)
                            emit(dict(row0, method="manual loop, DynamicCache", prompt_tokens=P,
                                      prefill_ms=round(pre, 3),
                                      decode_ms_per_token=round(statistics.median(steps), 3),
                                      decode_ms_first=round(steps[0], 3), decode_ms_last=round(steps[-1], 3),
                                      torch_max_alloc_bytes=torch.cuda.max_memory_allocated()))
                    else:
                        t_start = time.perf_counter()
                        eager_fwd = model.forward
                        model.generation_config.cache_implementation = "static"
                        compiled_fwd = torch.compile(model.forward, mode="reduce-overhead", fullgraph=True)
                        method = "manual loop, StaticCache, decode step torch.compile(reduce-overhead, fullgraph)"
                        try:
                            cache = make_static_cache(model, max(prompts) + N, dtype)
                            tc = time.perf_counter()
                            run_static(model, eager_fwd, compiled_fwd, cache, prompts[0], kw)  # compiles
                            run_static(model, eager_fwd, compiled_fwd, cache, prompts[0], kw)  # cudagraph record
                            compile_s = time.perf_counter() - tc
                            runner = lambda P: run_static(model, eager_fwd, compiled_fwd, cache, P, kw)
                        except Exception as e:
                            first_err = f"{type(e).__name__}: {str(e)[:600]}"
                            log(f"[hf_compare] manual static loop failed ({first_err}); trying generate()")
                            traceback.print_exc(file=sys.stderr)
                            torch._dynamo.reset()
                            model.forward = compiled_fwd
                            method = ("model.generate, cache_implementation=static, forward=torch.compile("
                                      "reduce-overhead, fullgraph); decode = (t(N+1)-t(1))/N; manual loop failed: "
                                      + first_err)
                            tc = time.perf_counter()
                            run_generate(model, prompts[0])
                            compile_s = time.perf_counter() - tc
                            runner = lambda P: run_generate(model, P)
                        for P in prompts:
                            runner(P)  # warm-up (may re-record graphs)
                            pre, steps = runner(P)
                            emit(dict(row0, method=method, prompt_tokens=P, compile_and_warmup_s=round(compile_s, 2),
                                      prefill_ms=round(pre, 3),
                                      decode_ms_per_token=round(statistics.median(steps), 3),
                                      decode_ms_first=round(steps[0], 3), decode_ms_last=round(steps[-1], 3),
                                      torch_max_alloc_bytes=torch.cuda.max_memory_allocated()))
                        compiled_spent += time.perf_counter() - t_start
            except Exception as e:
                traceback.print_exc(file=sys.stderr)
                emit(dict(row0, error=f"{type(e).__name__}: {str(e)[:800]}"))
                if mode == "compiled":
                    compiled_spent += time.perf_counter() - t_start
            del model
            try:
                torch._dynamo.reset()
            except Exception:
                pass
            torch.cuda.empty_cache()
            torch.cuda.reset_peak_memory_stats()


if __name__ == "__main__":
    main()
