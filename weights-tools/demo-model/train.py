#!/usr/bin/env python3
"""Train the bundled demo model: a small GPT-2 (GPT2LMHeadModel, GPT-2's own tokenizer) on the Brown corpus.

Input is what prepare_corpus.mjs wrote (tokens.bin, meta.json, encoder.json). One command does it all:

    python3 train.py all --data DIR --out OUT [--budget-s 330]

  1. trains the configurations in CONFIGS at the same time on one GPU (one process each; every run follows
     a cosine learning rate over its epochs or its wall-clock budget, whichever ends first, and keeps the
     weights of its lowest validation loss),
  2. takes the run with the lowest validation loss, casts it to float16 and saves it with
     save_pretrained(safe_serialization=True) into OUT/brown-demo,
  3. reloads that float16 checkpoint in float32 (eager attention) and reports validation and test loss and
     perplexity next to an add-one unigram baseline fitted on the training tokens (OUT/results.json),
  4. writes the engine's reference fixture (OUT/reference.json) on the CPU in float32, eager attention,
     from the same float16 weights, and sample generations.

`python3 train.py run --name NAME ...` is one training run (what step 1 starts).
"""
import argparse
import copy
import json
import math
import os
import subprocess
import sys
import time

import numpy as np
import torch
import torch.nn.functional as F

VOCAB = 50257
EOT = 50256

# Every run: n_embd 128, n_head 4, n_positions 512, gelu_new, tied lm_head; windows of 512 tokens.
BASE = dict(n_embd=128, n_head=4, n_positions=512, seq_len=512, batch=32, warmup=150, weight_decay=0.1,
            beta1=0.9, beta2=0.95, grad_clip=1.0, min_lr_frac=0.1)
CONFIGS = {
    "L6-d0.1-e15": dict(n_layer=6, dropout=0.1, lr=2e-3, epochs=15),
    "L6-d0.1-e30": dict(n_layer=6, dropout=0.1, lr=2e-3, epochs=30),
    "L6-d0.2-e40": dict(n_layer=6, dropout=0.2, lr=2e-3, epochs=40),
    "L6-d0.2-e25-lr3": dict(n_layer=6, dropout=0.2, lr=3e-3, epochs=25),
    "L4-d0.1-e25": dict(n_layer=4, dropout=0.1, lr=2e-3, epochs=25),
}
SEED = 1234


def log(*a):
    print(*a, flush=True)


# ---------------------------------------------------------------- data
def load_splits(data_dir):
    meta = json.load(open(os.path.join(data_dir, "meta.json")))
    tokens = np.fromfile(os.path.join(data_dir, "tokens.bin"), dtype="<u2")
    assert len(tokens) == meta["n_tokens"], (len(tokens), meta["n_tokens"])
    splits = {}
    for s in ("train", "val", "test"):
        parts = [tokens[d["start"]:d["start"] + d["length"]] for d in meta["docs"] if d["split"] == s]
        splits[s] = np.concatenate(parts).astype(np.int64)
    return meta, splits


def make_config(cfg):
    from transformers import GPT2Config
    return GPT2Config(vocab_size=VOCAB, n_positions=cfg["n_positions"], n_embd=cfg["n_embd"], n_layer=cfg["n_layer"],
                      n_head=cfg["n_head"], activation_function="gelu_new", resid_pdrop=cfg["dropout"],
                      embd_pdrop=cfg["dropout"], attn_pdrop=cfg["dropout"], layer_norm_epsilon=1e-5,
                      bos_token_id=EOT, eos_token_id=EOT, tie_word_embeddings=True)


@torch.no_grad()
def evaluate(model, stream, seq_len, device, batch=16, autocast=True):
    """Mean next-token cross-entropy over the whole stream: windows of seq_len+1 tokens, stride seq_len, so
    every token after the first is predicted once (with 0..seq_len-1 tokens of context)."""
    was_training = model.training
    model.eval()
    t = torch.from_numpy(stream)
    wins = []
    for s in range(0, len(t) - 1, seq_len):
        wins.append(t[s:s + seq_len + 1])
    total, count = 0.0, 0
    for i in range(0, len(wins), batch):
        chunk = wins[i:i + batch]
        full = [w for w in chunk if len(w) == seq_len + 1]
        rest = [w for w in chunk if len(w) != seq_len + 1]
        groups = ([torch.stack(full)] if full else []) + [w[None] for w in rest]
        for g in groups:
            g = g.to(device)
            x, y = g[:, :-1], g[:, 1:]
            with torch.autocast("cuda", dtype=torch.bfloat16, enabled=autocast and device.type == "cuda"):
                logits = model(input_ids=x).logits
            loss = F.cross_entropy(logits.float().reshape(-1, logits.shape[-1]), y.reshape(-1), reduction="sum")
            total += loss.item()
            count += y.numel()
    model.train(was_training)
    return total / count, count


# ---------------------------------------------------------------- one training run
def run(args):
    from transformers import GPT2LMHeadModel
    cfg = dict(BASE, **CONFIGS[args.name])
    torch.manual_seed(SEED)
    np.random.seed(SEED)
    torch.backends.cuda.matmul.allow_tf32 = True
    torch.backends.cudnn.allow_tf32 = True
    device = torch.device("cuda")
    meta, splits = load_splits(args.data)
    train = torch.from_numpy(splits["train"]).to(device)
    T, B = cfg["seq_len"], cfg["batch"]
    steps_per_epoch = len(train) // (B * T)
    total_steps = cfg["epochs"] * steps_per_epoch
    eval_every = max(1, steps_per_epoch // 2)

    model = GPT2LMHeadModel(make_config(cfg)).to(device)
    n_params = sum(p.numel() for p in model.parameters())
    decay = [p for n, p in model.named_parameters() if p.dim() >= 2]
    no_decay = [p for n, p in model.named_parameters() if p.dim() < 2]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": cfg["weight_decay"]},
                             {"params": no_decay, "weight_decay": 0.0}],
                            lr=cfg["lr"], betas=(cfg["beta1"], cfg["beta2"]), fused=True)
    gen = torch.Generator(device=device)
    gen.manual_seed(SEED)
    offs = torch.arange(T + 1, device=device)

    def lr_at(progress, step):
        if step < cfg["warmup"]:
            return cfg["lr"] * (step + 1) / cfg["warmup"]
        p = min(1.0, progress)
        return cfg["lr"] * (cfg["min_lr_frac"] + (1 - cfg["min_lr_frac"]) * 0.5 * (1 + math.cos(math.pi * p)))

    log(f"[{args.name}] params {n_params} train tokens {len(train)} steps/epoch {steps_per_epoch} "
        f"planned steps {total_steps} budget {args.budget_s}s cfg {json.dumps(cfg)}")
    best = (float("inf"), None, -1)
    history = []
    t0 = time.time()
    step = 0
    model.train()
    while True:
        elapsed = time.time() - t0
        progress = max(step / total_steps, elapsed / args.budget_s)
        if progress >= 1.0:
            break
        lr = lr_at(progress, step)
        for g in opt.param_groups:
            g["lr"] = lr
        starts = torch.randint(0, len(train) - T - 1, (B,), device=device, generator=gen)
        batch = train[starts[:, None] + offs]
        x, y = batch[:, :-1], batch[:, 1:]
        with torch.autocast("cuda", dtype=torch.bfloat16):
            logits = model(input_ids=x).logits
        loss = F.cross_entropy(logits.float().reshape(-1, VOCAB), y.reshape(-1))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), cfg["grad_clip"])
        opt.step()
        step += 1
        if step % eval_every == 0:
            vl, _ = evaluate(model, splits["val"], T, device)
            tl = loss.item()
            history.append(dict(step=step, epoch=round(step / steps_per_epoch, 2), time_s=round(time.time() - t0, 1),
                                lr=lr, train_loss=round(tl, 4), val_loss=round(vl, 4)))
            log(f"[{args.name}] step {step} ep {step / steps_per_epoch:.2f} t {time.time() - t0:.0f}s lr {lr:.2e} "
                f"train {tl:.4f} val {vl:.4f} ppl {math.exp(vl):.1f}")
            if vl < best[0]:
                best = (vl, {k: v.detach().clone() for k, v in model.state_dict().items()}, step)
    train_time = time.time() - t0
    vl, _ = evaluate(model, splits["val"], T, device)
    if vl < best[0]:
        best = (vl, {k: v.detach().clone() for k, v in model.state_dict().items()}, step)
    log(f"[{args.name}] done: {step} steps ({step / steps_per_epoch:.2f} epochs) in {train_time:.0f}s, "
        f"final val {vl:.4f}, best val {best[0]:.4f} at step {best[2]}")
    model.load_state_dict(best[1])
    out = os.path.join(args.runs, args.name)
    os.makedirs(out, exist_ok=True)
    model.save_pretrained(os.path.join(out, "model"), safe_serialization=True)
    json.dump(dict(name=args.name, cfg=cfg, n_params=n_params, steps=step, epochs=step / steps_per_epoch,
                   steps_per_epoch=steps_per_epoch, tokens_per_step=B * T, train_time_s=train_time,
                   best_val_loss_bf16=best[0], best_step=best[2], best_epoch=best[2] / steps_per_epoch,
                   history=history, gpu=torch.cuda.get_device_name(0)),
              open(os.path.join(out, "result.json"), "w"), indent=1)


# ---------------------------------------------------------------- decoding (GPT-2 byte-level BPE)
def make_decoder(encoder_path):
    enc = json.load(open(encoder_path))
    inv = {v: k for k, v in enc.items()}
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), ord("ÿ") + 1))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    byte_of = {chr(c): b for b, c in zip(bs, cs)}

    def decode(ids):
        return bytes(byte_of[ch] for i in ids for ch in inv[int(i)]).decode("utf-8", errors="replace")
    return decode


def r7(x):
    return float(f"{x:.7g}")


@torch.no_grad()
def greedy_nocache(model, ids, n):
    seq = list(ids)
    out, margins, top1 = [], [], []
    for _ in range(n):
        logits = model(input_ids=torch.tensor([seq])).logits[0, -1]
        v, i = torch.topk(logits, 2)
        out.append(int(i[0]))
        margins.append(r7((v[0] - v[1]).item()))
        top1.append(r7(v[0].item()))
        seq.append(int(i[0]))
    return out, margins, top1


@torch.no_grad()
def greedy_cache(model, ids, n):
    past = None
    x = torch.tensor([ids])
    out, lasts = [], []
    for _ in range(n):
        o = model(input_ids=x, past_key_values=past, use_cache=True)
        past = o.past_key_values
        last = o.logits[0, -1]
        lasts.append(last)
        nxt = int(torch.argmax(last))
        out.append(nxt)
        x = torch.tensor([[nxt]])
    return out, lasts


@torch.no_grad()
def sample(model, ids, n, temperature=None, top_k=None, seed=0):
    g = torch.Generator().manual_seed(seed)
    seq = list(ids)
    for _ in range(n):
        logits = model(input_ids=torch.tensor([seq[-512:]])).logits[0, -1]
        if temperature is None:
            nxt = int(torch.argmax(logits))
        else:
            logits = logits / temperature
            if top_k:
                kth = torch.topk(logits, top_k).values[-1]
                logits = torch.where(logits < kth, torch.full_like(logits, -float("inf")), logits)
            nxt = int(torch.multinomial(torch.softmax(logits, -1), 1, generator=g))
        seq.append(nxt)
    return seq[len(ids):]


# ---------------------------------------------------------------- everything
def finalize(args, names):
    import transformers
    from transformers import GPT2LMHeadModel
    results = []
    for name in names:
        p = os.path.join(args.runs, name, "result.json")
        if os.path.exists(p):
            results.append(json.load(open(p)))
        else:
            log(f"run {name} left no result")
    results.sort(key=lambda r: r["best_val_loss_bf16"])
    for r in results:
        log(f"sweep: {r['name']:18s} best val {r['best_val_loss_bf16']:.4f} (ppl {math.exp(r['best_val_loss_bf16']):.1f}) "
            f"at epoch {r['best_epoch']:.1f} of {r['epochs']:.1f}, {r['steps']} steps in {r['train_time_s']:.0f}s")
    win = results[0]
    log(f"chosen: {win['name']}")

    # float16 checkpoint, as shipped
    model = GPT2LMHeadModel.from_pretrained(os.path.join(args.runs, win["name"], "model"))
    model = model.half()
    out_model = os.path.join(args.out, "brown-demo")
    model.save_pretrained(out_model, safe_serialization=True)
    log("saved", out_model, {f: os.path.getsize(os.path.join(out_model, f)) for f in os.listdir(out_model)})

    def load_f32(device, attn):
        try:
            m = GPT2LMHeadModel.from_pretrained(out_model, dtype=torch.float32, attn_implementation=attn)
        except TypeError:
            m = GPT2LMHeadModel.from_pretrained(out_model, torch_dtype=torch.float32, attn_implementation=attn)
        return m.to(device).eval()

    meta, splits = load_splits(args.data)
    summary = dict(chosen=win["name"], sweep=results, data=dict(
        n_tokens=meta["n_tokens"], by_split=meta["n_tokens_by_split"], docs=meta["n_docs_by_split"],
        split_seed=meta["split_seed"]), transformers_version=transformers.__version__,
        torch_version=torch.__version__, gpu=torch.cuda.get_device_name(0))
    try:
        stages(args, meta, splits, out_model, load_f32, summary)
    except Exception:  # noqa: BLE001
        import traceback
        traceback.print_exc()
        summary["error"] = traceback.format_exc()
    json.dump(summary, open(os.path.join(args.out, "results.json"), "w"), indent=1)
    if "error" in summary:
        sys.exit(1)


def stages(args, meta, splits, out_model, load_f32, summary):
    import transformers
    # reported losses: the float16 weights run in float32 (no autocast)
    gpu = load_f32(torch.device("cuda"), "eager")
    ev = {}
    for s in ("val", "test"):
        loss, count = evaluate(gpu, splits[s], 512, torch.device("cuda"), batch=16, autocast=False)
        ev[s] = dict(loss=loss, ppl=math.exp(loss), tokens_scored=count)
    counts = np.bincount(splits["train"], minlength=VOCAB).astype(np.float64) + 1.0
    logp = np.log(counts / counts.sum())
    uni = {}
    for s in ("val", "test"):
        tgt = splits[s][1:]
        loss = float(-logp[tgt].mean())
        uni[s] = dict(loss=loss, ppl=math.exp(loss), tokens_scored=int(len(tgt)))
    log(f"float16 checkpoint in float32: val loss {ev['val']['loss']:.4f} ppl {ev['val']['ppl']:.1f} | "
        f"test loss {ev['test']['loss']:.4f} ppl {ev['test']['ppl']:.1f}")
    summary.update(eval_fp16_in_fp32=ev, unigram_add_one=uni)
    log(f"unigram (add-one, train counts): val loss {uni['val']['loss']:.4f} ppl {uni['val']['ppl']:.1f} | "
        f"test loss {uni['test']['loss']:.4f} ppl {uni['test']['ppl']:.1f}")
    del gpu

    # reference fixture on the CPU, float32, eager attention, from the float16 checkpoint
    torch.set_num_threads(4)
    cpu = load_f32(torch.device("cpu"), "eager")
    summary["n_params"] = sum(p.numel() for p in cpu.parameters())
    decode = make_decoder(os.path.join(args.data, "encoder.json"))
    ref = dict(transformers_version=transformers.__version__, torch_version=torch.__version__,
               computed_on="cpu, float32, eager attention, from the float16 checkpoint (weights widened to float32)",
               config=json.loads(cpu.config.to_json_string()), fixture="brown-demo",
               weights_dtype="float16", prompts={})
    for k, p in enumerate(meta["prompts"]["fixture"], 1):
        ids = p["ids"]
        with torch.no_grad():
            logits = cpu(input_ids=torch.tensor([ids])).logits[0]
        top5 = []
        for row in logits:
            v, i = torch.topk(row, 5)
            top5.append(dict(ids=[int(a) for a in i], values=[r7(a) for a in v.tolist()]))
        greedy, margins, top1 = greedy_nocache(cpu, ids, 20)
        g2, lasts = greedy_cache(cpu, ids, 20)
        # the cached path's logits against the uncached path's, step by step
        diffs = []
        seq = list(ids)
        with torch.no_grad():
            for step, last in enumerate(lasts):
                full = cpu(input_ids=torch.tensor([seq])).logits[0, -1]
                diffs.append(float((full - last).abs().max()))
                seq.append(greedy[step])
        gen_ok = None
        try:
            gout = cpu.generate(torch.tensor([ids]), max_new_tokens=20, do_sample=False, pad_token_id=EOT)
            gen_ok = [int(a) for a in gout[0, len(ids):]] == greedy
        except Exception as e:  # noqa: BLE001
            log("generate() failed:", repr(e))
        ref["prompts"][f"p{k}"] = dict(
            text=p["text"], ids=ids, last_logits=[r7(a) for a in logits[-1].tolist()], all_logits_top5=top5,
            greedy=greedy, greedy_margins=margins, greedy_top1_logits=top1, greedy_text=decode(greedy),
            max_abs_diff_cache_vs_nocache=max(diffs), cache_greedy_agrees=(g2 == greedy), generate_agrees=gen_ok)
        log(f"fixture p{k}: {p['text']!r} -> {decode(greedy)!r} min margin {min(margins):.4f} "
            f"cache-vs-nocache {max(diffs):.2e} generate agrees {gen_ok}")
    with open(os.path.join(args.out, "reference.json"), "w") as f:
        json.dump(ref, f, separators=(",", ":"))

    samples = []
    for p in meta["prompts"]["samples"]:
        g = sample(cpu, p["ids"], 40)
        s = sample(cpu, p["ids"], 60, temperature=0.8, top_k=40, seed=SEED)
        samples.append(dict(prompt=p["text"], prompt_ids=p["ids"], greedy_ids=g, greedy=decode(g),
                            t08_k40_seed1234_ids=s, t08_k40_seed1234=decode(s)))
        summary["samples"] = samples
        log(f"sample greedy  {p['text']!r}: {decode(g)!r}")
        log(f"sample t0.8k40 {p['text']!r}: {decode(s)!r}")
    long_eot = sample(cpu, [EOT], 200, temperature=0.8, top_k=40, seed=SEED)
    samples.append(dict(prompt="<|endoftext|>", prompt_ids=[EOT], t08_k40_seed1234_ids=long_eot,
                        t08_k40_seed1234=decode(long_eot)))
    log(f"sample 200 tokens from <|endoftext|>: {decode(long_eot)!r}")




def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("mode", choices=["all", "run"])
    ap.add_argument("--data", required=True)
    ap.add_argument("--out", default="out")
    ap.add_argument("--runs", default="/tmp/brown-runs")
    ap.add_argument("--name")
    ap.add_argument("--budget-s", type=float, default=330)
    ap.add_argument("--only", default="", help="comma-separated config names (default: all)")
    args = ap.parse_args()
    if args.mode == "run":
        run(args)
        return
    names = [n for n in CONFIGS if not args.only or n in args.only.split(",")]
    os.makedirs(args.out, exist_ok=True)
    log(f"torch {torch.__version__} cuda {torch.cuda.is_available()} {torch.cuda.get_device_name(0)}")
    procs = []
    env = dict(os.environ, OMP_NUM_THREADS="2", PYTORCH_CUDA_ALLOC_CONF="expandable_segments:True")
    for n in names:
        procs.append(subprocess.Popen([sys.executable, __file__, "run", "--name", n, "--data", args.data,
                                       "--runs", args.runs, "--budget-s", str(args.budget_s)], env=env))
    for p in procs:
        p.wait()
    log("run exit codes:", [p.returncode for p in procs])
    finalize(args, names)


if __name__ == "__main__":
    main()
