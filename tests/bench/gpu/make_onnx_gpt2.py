#!/usr/bin/env python3
"""Writes a GPT-2 ONNX graph with a KV cache, by hand, for transformers.js (model_type gpt2).

    python3 tests/bench/gpu/make_onnx_gpt2.py CHECKPOINT_DIR [--fp16] [--no-fp32]

CHECKPOINT_DIR holds a Hugging Face GPT2LMHeadModel checkpoint (config.json and model.safetensors,
or model.safetensors.index.json and its shards; F32, F16 or BF16 tensors). Writes into it
onnx/model.onnx (fp32) and, with --fp16, onnx/model_fp16.onnx (every float tensor fp16, LayerNorm
and Softmax included; logits cast back to fp32), and generation_config.json.

The layout is optimum's export of gpt2 with a cache ("text-generation-with-past"), which
transformers.js runs: inputs input_ids [batch, seq] int64, attention_mask [batch, past + seq] int64,
position_ids [batch, seq] int64, past_key_values.{i}.key / .value [batch, n_head, past, head_dim];
outputs logits [batch, seq, vocab] and present.{i}.key / .value [batch, n_head, past + seq,
head_dim]. The lm_head is a MatMul with wte^T stored as its own initializer (as optimum's export
stores it, so the file holds the embedding twice).

Needs only numpy: the protobuf is written here (the few ONNX messages it needs), so neither the
`onnx` package nor torch is required. Where `onnx` is importable, the result is checked with
onnx.checker (skip with --no-check).
"""
import argparse
import json
import math
import os
import struct
import sys

import numpy as np

# ----------------------------------------------------------------------------- protobuf writer
# Field numbers from onnx/onnx.proto (IR version 8).
FLOAT, INT64, BOOL, FLOAT16 = 1, 7, 9, 10
ATTR_FLOAT, ATTR_INT, ATTR_STRING, ATTR_TENSOR, ATTR_INTS = 1, 2, 3, 4, 7


def varint(n):
    if n < 0:
        n += 1 << 64
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def key(field, wire):
    return varint((field << 3) | wire)


def f_varint(field, n):
    return key(field, 0) + varint(n)


def f_bytes(field, data):
    if isinstance(data, str):
        data = data.encode()
    return key(field, 2) + varint(len(data)) + data


def f_float(field, x):
    return key(field, 5) + struct.pack("<f", x)


def tensor_proto(name, array):
    array = np.ascontiguousarray(array)
    dtype = {np.dtype(np.float32): FLOAT, np.dtype(np.float16): FLOAT16, np.dtype(np.int64): INT64, np.dtype(np.bool_): BOOL}[array.dtype]
    out = b"".join(f_varint(1, d) for d in array.shape)
    out += f_varint(2, dtype) + f_bytes(8, name) + f_bytes(9, array.astype(array.dtype.newbyteorder("<"), copy=False).tobytes())
    return out


def attribute(name, value):
    out = f_bytes(1, name)
    if isinstance(value, float):
        return out + f_float(2, value) + f_varint(20, ATTR_FLOAT)
    if isinstance(value, bool) or isinstance(value, int):
        return out + f_varint(3, int(value)) + f_varint(20, ATTR_INT)
    if isinstance(value, str):
        return out + f_bytes(4, value) + f_varint(20, ATTR_STRING)
    if isinstance(value, np.ndarray):
        return out + f_bytes(5, tensor_proto("", value)) + f_varint(20, ATTR_TENSOR)
    if isinstance(value, (list, tuple)):
        return out + b"".join(f_varint(8, int(v)) for v in value) + f_varint(20, ATTR_INTS)
    raise TypeError(f"attribute {name}: {type(value)}")


def value_info(name, elem_type, dims):
    shape = b""
    for d in dims:
        shape += f_bytes(1, f_varint(1, d) if isinstance(d, int) else f_bytes(2, d))
    tensor_type = f_varint(1, elem_type) + f_bytes(2, shape)
    return f_bytes(1, name) + f_bytes(2, f_bytes(1, tensor_type))


class Graph:
    def __init__(self, float_type):
        self.float_type = float_type  # np.float32 or np.float16
        self.nodes = []
        self.initializers = []  # serialized TensorProto messages
        self.count = 0

    def init(self, name, array):
        array = np.asarray(array)
        if array.dtype.kind == "f":
            array = array.astype(self.float_type)
        self.initializers.append(tensor_proto(name, array))
        return name

    def const(self, array, name=None):
        self.count += 1
        return self.init(name or f"const_{self.count}", array)

    def op(self, op_type, inputs, outputs=1, **attrs):
        self.count += 1
        if isinstance(outputs, int):
            outputs = [f"{op_type.lower()}_{self.count}" + (f"_{i}" if outputs > 1 else "") for i in range(outputs)]
        node = b"".join(f_bytes(1, i) for i in inputs) + b"".join(f_bytes(2, o) for o in outputs)
        node += f_bytes(3, f"{op_type}_{self.count}") + f_bytes(4, op_type)
        node += b"".join(f_bytes(5, attribute(k, v)) for k, v in sorted(attrs.items()))
        self.nodes.append(node)
        return outputs[0] if len(outputs) == 1 else outputs

    def write(self, path, inputs, outputs, opset=17):
        """inputs/outputs: serialized ValueInfoProto messages. Streams the graph into the file."""
        head = [f_bytes(1, n) for n in self.nodes] + [f_bytes(2, "gpt2")]
        inits = [key(5, 2) + varint(len(t)) for t in self.initializers]
        tail = [f_bytes(11, v) for v in inputs] + [f_bytes(12, v) for v in outputs]
        graph_len = sum(map(len, head)) + sum(len(a) + len(b) for a, b in zip(inits, self.initializers)) + sum(map(len, tail))
        with open(path, "wb") as f:
            f.write(f_varint(1, 8))  # ir_version 8 (opset 17)
            f.write(f_bytes(2, "gpt2-webgl make_onnx_gpt2.py"))
            f.write(f_bytes(8, f_bytes(1, "") + f_varint(2, opset)))
            f.write(key(7, 2) + varint(graph_len))
            for chunk in head:
                f.write(chunk)
            for a, b in zip(inits, self.initializers):
                f.write(a)
                f.write(b)
            for chunk in tail:
                f.write(chunk)


# ----------------------------------------------------------------------------- checkpoint
def read_safetensors(path):
    dtypes = {"F32": np.float32, "F16": np.float16, "F64": np.float64, "BF16": np.uint16, "I64": np.int64, "U8": np.uint8, "BOOL": np.bool_}
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(n))
    data = np.memmap(path, dtype=np.uint8, mode="r", offset=8 + n)
    tensors = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        begin, end = info["data_offsets"]
        raw = np.frombuffer(data[begin:end], dtype=np.dtype(dtypes[info["dtype"]]).newbyteorder("<"))
        if info["dtype"] == "BF16":
            raw = (raw.astype(np.uint32) << 16).view(np.float32)
        tensors[name] = raw.reshape(info["shape"])
    return tensors


def read_checkpoint(folder):
    index = os.path.join(folder, "model.safetensors.index.json")
    tensors = {}
    if os.path.exists(index):
        for shard in sorted(set(json.load(open(index))["weight_map"].values())):
            tensors.update(read_safetensors(os.path.join(folder, shard)))
    else:
        tensors = read_safetensors(os.path.join(folder, "model.safetensors"))
    out = {}
    for name, t in tensors.items():
        out[name.removeprefix("transformer.")] = t
    return out


# ----------------------------------------------------------------------------- the model
def build(config, weights, float_type):
    E, H, L = config["n_embd"], config["n_head"], config["n_layer"]
    D = E // H
    V = config["vocab_size"]
    eps = float(config.get("layer_norm_epsilon", 1e-5))
    act = config.get("activation_function", "gelu_new")
    if config.get("scale_attn_by_inverse_layer_idx") or config.get("reorder_and_upcast_attn"):
        sys.exit("scale_attn_by_inverse_layer_idx / reorder_and_upcast_attn are not supported")
    if not config.get("scale_attn_weights", True):
        sys.exit("scale_attn_weights false is not supported")
    g = Graph(float_type)
    w = lambda name: g.init(name, weights[name].astype(np.float32))  # noqa: E731
    fdtype = FLOAT16 if float_type == np.float16 else FLOAT
    lowest = float(np.finfo(float_type).min)

    # Shapes and the mask: [batch, 1, seq, past + seq], true where a query may attend a key.
    shape_past = g.op("Shape", ["past_key_values.0.key"])
    past = g.op("Gather", [shape_past, g.const(np.array(2, np.int64))], axis=0)
    shape_mask = g.op("Shape", ["attention_mask"])
    total = g.op("Gather", [shape_mask, g.const(np.array(1, np.int64))], axis=0)
    one = g.const(np.array(1, np.int64))
    kpos = g.op("Range", [g.const(np.array(0, np.int64)), total, one])
    qpos = g.op("Range", [past, total, one])
    causal = g.op("LessOrEqual", [g.op("Unsqueeze", [kpos, g.const(np.array([0], np.int64))]), g.op("Unsqueeze", [qpos, g.const(np.array([1], np.int64))])])
    padding = g.op("Cast", [g.op("Unsqueeze", ["attention_mask", g.const(np.array([1, 2], np.int64))])], to=BOOL)
    allowed = g.op("And", [causal, padding])
    masked_value = g.const(np.array(lowest, float_type))

    wte = weights["wte.weight"]
    x = g.op("Add", [g.op("Gather", [w("wte.weight"), "input_ids"], axis=0), g.op("Gather", [w("wpe.weight"), "position_ids"], axis=0)])
    heads_shape = g.const(np.array([0, 0, H, D], np.int64))
    merged_shape = g.const(np.array([0, 0, E], np.int64))
    split_sizes = g.const(np.array([E, E, E], np.int64))
    scale = g.const(np.array(1.0 / math.sqrt(D), float_type))
    present = []

    def linear(x, prefix):
        return g.op("Add", [g.op("MatMul", [x, w(prefix + ".weight")]), w(prefix + ".bias")])

    def layer_norm(x, prefix):
        return g.op("LayerNormalization", [x, w(prefix + ".weight"), w(prefix + ".bias")], axis=-1, epsilon=eps)

    def gelu(x):
        if act in ("gelu_new", "gelu_pytorch_tanh", "gelu_fast"):
            cube = g.op("Mul", [g.op("Mul", [x, x]), x])
            inner = g.op("Mul", [g.op("Add", [x, g.op("Mul", [cube, g.const(np.array(0.044715, float_type))])]), g.const(np.array(math.sqrt(2 / math.pi), float_type))])
            t = g.op("Add", [g.op("Tanh", [inner]), g.const(np.array(1.0, float_type))])
        elif act == "gelu":
            t = g.op("Add", [g.op("Erf", [g.op("Mul", [x, g.const(np.array(1 / math.sqrt(2), float_type))])]), g.const(np.array(1.0, float_type))])
        else:
            sys.exit(f"activation_function {act} is not supported")
        return g.op("Mul", [g.op("Mul", [x, t]), g.const(np.array(0.5, float_type))])

    for i in range(L):
        p = f"h.{i}"
        qkv = linear(layer_norm(x, p + ".ln_1"), p + ".attn.c_attn")
        q, k, v = g.op("Split", [qkv, split_sizes], outputs=3, axis=2)
        q, k, v = (g.op("Transpose", [g.op("Reshape", [t, heads_shape])], perm=[0, 2, 1, 3]) for t in (q, k, v))
        k = g.op("Concat", [f"past_key_values.{i}.key", k], outputs=[f"present.{i}.key"], axis=2)
        v = g.op("Concat", [f"past_key_values.{i}.value", v], outputs=[f"present.{i}.value"], axis=2)
        present += [k, v]
        scores = g.op("Mul", [g.op("MatMul", [q, g.op("Transpose", [k], perm=[0, 1, 3, 2])]), scale])
        probs = g.op("Softmax", [g.op("Where", [allowed, scores, masked_value])], axis=-1)
        attn = g.op("Reshape", [g.op("Transpose", [g.op("MatMul", [probs, v])], perm=[0, 2, 1, 3]), merged_shape])
        x = g.op("Add", [x, linear(attn, p + ".attn.c_proj")])
        x = g.op("Add", [x, linear(gelu(linear(layer_norm(x, p + ".ln_2"), p + ".mlp.c_fc")), p + ".mlp.c_proj")])
    x = layer_norm(x, "ln_f")
    tied = config.get("tie_word_embeddings", True) or "lm_head.weight" not in weights
    lm_head = wte if tied else weights["lm_head.weight"]
    logits = g.op("MatMul", [x, g.init("lm_head.weight_transposed", np.ascontiguousarray(lm_head.astype(np.float32).T))], outputs=["logits" if float_type == np.float32 else "logits_fp16"])
    if float_type != np.float32:
        g.op("Cast", [logits], outputs=["logits"], to=FLOAT)

    inputs = [
        value_info("input_ids", INT64, ["batch_size", "sequence_length"]),
        value_info("attention_mask", INT64, ["batch_size", "past_sequence_length + sequence_length"]),
        value_info("position_ids", INT64, ["batch_size", "sequence_length"]),
    ]
    outputs = [value_info("logits", FLOAT, ["batch_size", "sequence_length", V])]
    for i in range(L):
        for kind in ("key", "value"):
            inputs.append(value_info(f"past_key_values.{i}.{kind}", fdtype, ["batch_size", H, "past_sequence_length", D]))
            outputs.append(value_info(f"present.{i}.{kind}", fdtype, ["batch_size", H, "past_sequence_length + sequence_length", D]))
    return g, inputs, outputs


def check(path):
    try:
        import onnx
    except ImportError:
        print(f"  (onnx not importable: {path} not checked by onnx.checker)")
        return
    onnx.checker.check_model(path, full_check=True)
    print(f"  onnx.checker {onnx.__version__}: ok")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("checkpoint")
    ap.add_argument("--fp16", action="store_true", help="also write onnx/model_fp16.onnx")
    ap.add_argument("--no-fp32", action="store_true", help="do not write onnx/model.onnx")
    ap.add_argument("--no-check", action="store_true")
    args = ap.parse_args()
    config = json.load(open(os.path.join(args.checkpoint, "config.json")))
    weights = read_checkpoint(args.checkpoint)
    os.makedirs(os.path.join(args.checkpoint, "onnx"), exist_ok=True)
    for float_type, name, wanted in ((np.float32, "model.onnx", not args.no_fp32), (np.float16, "model_fp16.onnx", args.fp16)):
        if not wanted:
            continue
        path = os.path.join(args.checkpoint, "onnx", name)
        g, inputs, outputs = build(config, weights, float_type)
        g.write(path, inputs, outputs)
        print(f"{path}: {os.path.getsize(path) / 2**20:.1f} MiB, {len(g.nodes)} nodes")
        if not args.no_check:
            check(path)
    generation = {"bos_token_id": config.get("bos_token_id", 50256), "eos_token_id": config.get("eos_token_id", 50256)}
    with open(os.path.join(args.checkpoint, "generation_config.json"), "w") as f:
        json.dump(generation, f, indent=2)


if __name__ == "__main__":
    main()
