#!/usr/bin/env python3
"""Writes the hand-made seed inputs of tests/fuzz/corpus/<target>/seed_*.

The other files of the corpus are what libFuzzer found (tests/fuzz/run.sh TARGET merge), named by
their SHA-1. Run from anywhere: python3 tests/fuzz/make_seeds.py
"""
import json
import os
import struct

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def write(target, name, data):
    folder = os.path.join(HERE, "corpus", target)
    os.makedirs(folder, exist_ok=True)
    if isinstance(data, str):
        data = data.encode("utf-8")
    assert len(data) <= 64 * 1024, name
    with open(os.path.join(folder, "seed_" + name), "wb") as f:
        f.write(data)


def safetensors(header, data=b"", length=None):
    text = header if isinstance(header, (bytes, str)) else json.dumps(header, separators=(",", ":"))
    if isinstance(text, str):
        text = text.encode("utf-8")
    return struct.pack("<Q", len(text) if length is None else length) + text + data


def bytes_to_unicode():
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(0xA1, 0xAC + 1)) + list(range(0xAE, 0xFF + 1))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return dict(zip(bs, map(chr, cs)))


B2U = bytes_to_unicode()


def tok(text):
    return "".join(B2U[b] for b in text.encode("utf-8"))


def tiny_tokenizer(extra_merges=()):
    """A byte-level vocab (256 byte tokens, a few merged ones, <|endoftext|>) and its merges."""
    merges = [("h", "e"), ("l", "l"), ("he", "ll"), ("hell", "o"), (" ", "w"), ("o", "r"), (" w", "or"),
              (" wor", "l"), (" worl", "d"), ("t", "h"), (" ", "th"), ("é", "!")] + list(extra_merges)
    vocab = {B2U[b]: b for b in range(256)}
    for left, right in merges:
        vocab.setdefault(tok(left + right), len(vocab))
    vocab["<|endoftext|>"] = len(vocab)
    merges_text = "#version: 0.2\n" + "".join(f"{tok(a)} {tok(b)}\n" for a, b in merges)
    return vocab, merges_text


def main():
    # --- safetensors: whole files -------------------------------------------------------------
    f32 = struct.pack("<6f", 0.0, 1.0, -2.5, 3.25, float("inf"), float("nan"))
    f16 = struct.pack("<4H", 0x3C00, 0x0001, 0x7C00, 0xFE00)  # 1, subnormal, inf, nan
    bf16 = struct.pack("<4H", 0x3F80, 0x8000, 0x7F80, 0x0001)
    scalar = struct.pack("<H", 0xC000)  # -2
    data = f32 + f16 + bf16 + scalar
    good = {
        "__metadata__": {"format": "pt"},
        "a": {"dtype": "F32", "shape": [2, 3], "data_offsets": [0, 24]},
        "b": {"dtype": "F16", "shape": [4], "data_offsets": [24, 32]},
        "c": {"dtype": "BF16", "shape": [2, 2], "data_offsets": [32, 40]},
        "scalar": {"dtype": "F16", "shape": [], "data_offsets": [40, 42]},
        "empty": {"dtype": "F32", "shape": [0, 5], "data_offsets": [42, 42]},
        "empty_bf16": {"dtype": "BF16", "shape": [3, 0], "data_offsets": [0, 0]},
    }
    write("safetensors", "valid_mixed.safetensors", safetensors(good, data))
    write("safetensors", "valid_empty.safetensors", safetensors({}))
    write("safetensors", "valid_padded_header.safetensors", safetensors(json.dumps(good) + "        ", data))
    write("safetensors", "too_short", b"\x02\x00\x00")
    write("safetensors", "length_past_end.safetensors", safetensors({}, length=1000))
    write("safetensors", "length_huge.safetensors", safetensors({}, length=(1 << 64) - 1))
    write("safetensors", "not_json.safetensors", safetensors("{\"a\": [1, 2"))
    write("safetensors", "not_object.safetensors", safetensors("[1,2,3]"))
    bad = {
        "bad_dtype": {"a": {"dtype": "I64", "shape": [1], "data_offsets": [0, 8]}},
        "negative_dim": {"a": {"dtype": "F32", "shape": [-1], "data_offsets": [0, 4]}},
        "float_dim": {"a": {"dtype": "F32", "shape": [1.5], "data_offsets": [0, 4]}},
        "huge_shape": {"a": {"dtype": "F32", "shape": [65536, 65536, 2], "data_offsets": [0, 4]}},
        "zero_then_huge_dim": {"a": {"dtype": "F32", "shape": [0, 18446744073709551615], "data_offsets": [0, 0]}},
        "wrong_size": {"a": {"dtype": "F32", "shape": [3], "data_offsets": [0, 8]}},
        "reversed_offsets": {"a": {"dtype": "F32", "shape": [1], "data_offsets": [8, 4]}},
        "past_end": {"a": {"dtype": "F32", "shape": [100], "data_offsets": [0, 400]}},
        "overlap": {"a": {"dtype": "F32", "shape": [4], "data_offsets": [0, 16]},
                    "b": {"dtype": "F32", "shape": [4], "data_offsets": [8, 24]}},
        "missing_field": {"a": {"dtype": "F32", "shape": [1]}},
        "three_offsets": {"a": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4, 8]}},
        "metadata_not_strings": {"__metadata__": {"n": 1}},
        "metadata_not_object": {"__metadata__": "x"},
    }
    for name, header in bad.items():
        write("safetensors", name + ".safetensors", safetensors(header, data))
    write("safetensors", "fixture_header_prefix.safetensors", fixture_header_prefix())

    # --- config: config.json text ---------------------------------------------------------------
    with open(os.path.join(ROOT, "tests", "fixtures", "gpt2-tiny", "config.json"), encoding="utf-8") as f:
        fixture = f.read()
    write("config", "fixture.json", fixture)
    base = json.loads(fixture)
    variants = {
        "minimal": {"model_type": "gpt2"},
        "empty": {},
        "n_ctx": {"n_ctx": 128, "n_embd": 64, "n_head": 8, "n_inner": 100},
        "gelu_relu": dict(base, activation_function="relu", scale_attn_by_inverse_layer_idx=True),
        "gelu_erf": dict(base, activation_function="gelu", tie_word_embeddings=False),
        "bad_activation": dict(base, activation_function="swish"),
        "activation_not_string": dict(base, activation_function=3),
        "heads_not_dividing": dict(base, n_embd=30, n_head=4),
        "zero_layers": dict(base, n_layer=0),
        "huge_vocab": dict(base, vocab_size=1 << 40),
        "float_size": dict(base, n_embd=32.0),
        "string_size": dict(base, n_head="4"),
        "epsilon_zero": dict(base, layer_norm_epsilon=0),
        "epsilon_string": dict(base, layer_norm_epsilon="1e-5"),
        "epsilon_tiny": dict(base, layer_norm_epsilon=1e-300),
        "epsilon_huge": dict(base, layer_norm_epsilon=1e300),
        "flag_not_bool": dict(base, scale_attn_weights=1),
        "cross_attention": dict(base, add_cross_attention=True),
        "other_model": dict(base, model_type="llama"),
        "model_type_null": dict(base, model_type=None),
        "big_embed": {"n_embd": 8388608, "n_head": 1},
    }
    for name, value in variants.items():
        write("config", name + ".json", json.dumps(value))
    write("config", "array.json", "[1, 2]")
    write("config", "truncated.json", fixture[: len(fixture) // 2])
    write("config", "invalid_utf8.json", b'{"model_type": "gp\xff2"}')

    # --- tokenizer: text -------------------------------------------------------------------------
    texts = {
        "english": "Hello, world! It's a test: the quick brown fox jumps over the lazy dog. I'll've we're.",
        "spaces": "  leading and    multiple   spaces\t\ttabs\n\nnewlines \r\n trailing   ",
        "numbers": "3.14159 1,000,000 12345678901234567890 ١٢٣ ⅓ 0x1F",
        "german_french": "Größenwahn straße Ärger — l'été où ça «va»",
        "greek_cyrillic": "Καλημέρα κόσμε. Привет, мир! Ђорђе",
        "cjk": "你好，世界。日本語のテキスト、カタカナ。한국어 문장입니다.",
        "arabic_hebrew_hindi": "مرحبا بالعالم שלום עולם नमस्ते दुनिया ไทย",
        "emoji": "👍🏽 👨‍👩‍👧‍👦 🇩🇪 ❤️ 🙂🙃 ✨x",
        "special": "<|endoftext|>Once upon<|endoftext|><|endoftext|> a time <|endoftext <|endoftext|>",
        "code": "def f(x):\n    return x**2  # comment\n\tif (a && b) { c[i] = 'q'; }",
        "combining": "e\u0301 n\u0303 \u200b\u200d\ufeff \u00a0\u2003\u3000 \U0010FFFD",
        "control": "".join(chr(c) for c in range(0, 32)) + "\x7f",
        "apostrophes": "'s 't 're 've 'm 'll 'd 'S 'T 'x '' ''s",
    }
    for name, text in texts.items():
        write("tokenizer", name + ".txt", text)
    invalid = {
        "lone_continuation": b"abc\x80def",
        "truncated_2": b"abc\xc3",
        "truncated_4": b"\xf0\x9f\x99",
        "overlong": b"\xc0\xaf \xe0\x80\xaf",
        "surrogate": b"\xed\xa0\x80",
        "above_max": b"\xf4\x90\x80\x80",
        "ff": b"\xff\xfe",
        "mixed": "ok ".encode() + b"\xe2\x82" + " ok".encode(),
    }
    for name, data in invalid.items():
        write("tokenizer", "invalid_" + name, data)

    # --- vocab: vocab.json NUL merges.txt ----------------------------------------------------------
    def vocab_input(v, m):
        return json.dumps(v, ensure_ascii=False).encode("utf-8") + b"\0" + m.encode("utf-8")

    write("vocab", "valid.bin", vocab_input(vocab, merges))
    write("vocab", "valid_no_merges.bin", vocab_input(vocab, ""))
    write("vocab", "valid_crlf.bin", vocab_input(vocab, merges.replace("\n", "\r\n")))
    write("vocab", "valid_ascii_escapes.bin", json.dumps(vocab).encode() + b"\0" + merges.encode())
    missing_eot = {k: v for k, v in vocab.items() if k != "<|endoftext|>"}
    write("vocab", "missing_eot.bin", vocab_input(missing_eot, merges))
    without_a = [k for k in vocab if k != B2U[ord("A")]]
    write("vocab", "missing_byte.bin", vocab_input({k: i for i, k in enumerate(without_a)}, ""))
    write("vocab", "duplicate_id.bin", vocab_input(dict(vocab, extra=0), merges))
    write("vocab", "id_out_of_range.bin", vocab_input(dict(vocab, extra=100000), merges))
    write("vocab", "non_byte_char.bin", vocab_input(dict(vocab, **{"日本": len(vocab)}), merges))
    write("vocab", "merge_not_in_vocab.bin", vocab_input(vocab, merges + "x y\n"))
    write("vocab", "merge_three_tokens.bin", vocab_input(vocab, merges + "a b c\n"))
    write("vocab", "merge_one_token.bin", vocab_input(vocab, merges + "ab\n"))
    write("vocab", "not_object.bin", b"[]\0")
    write("vocab", "empty.bin", b"{}\0")


def fixture_header_prefix():
    """The header of the test fixture's model.safetensors with a zero-filled data section, cut to
    the tensors that fit in 64 KB."""
    path = os.path.join(ROOT, "tests", "fixtures", "gpt2-tiny", "model.safetensors")
    with open(path, "rb") as f:
        (length,) = struct.unpack("<Q", f.read(8))
        header = json.loads(f.read(length))
    kept = {"__metadata__": header.get("__metadata__", {})}
    offset = 0
    for name, info in sorted(header.items(), key=lambda kv: kv[1].get("data_offsets", [0])[0] if isinstance(kv[1], dict) else 0):
        if name == "__metadata__":
            continue
        size = info["data_offsets"][1] - info["data_offsets"][0]
        if offset + size > 16 * 1024:
            continue
        kept[name] = dict(info, data_offsets=[offset, offset + size])
        offset += size
    return safetensors(kept, bytes(offset))


if __name__ == "__main__":
    main()
