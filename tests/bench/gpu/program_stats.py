"""What NVIDIA's GL compiler made of the engine's one-row matmuls: instructions per weight.

    python3 tests/bench/gpu/program_stats.py DIR

DIR holds a folder per weight format, each written by build/native/program_binaries (index.jsonl and
a binary per program). NVIDIA's program binaries carry the assembly its GLSL compiler made
("!!NVfp5.0" ... "END"), the form before its last compiler. That form turns each early return of a
function into the exit of a one-pass loop (REP) taken on a constant condition, and leaves the code
after it; these counts skip that code, which never runs, and count what remains once, whether a
branch runs it or not. They describe the assembly: the last compiler still reworks it, and a shorter
assembly has run slower (docs/benchmarks/journal.md, run BZ). One JSON line per one-row matmul (the
decode steps' passes): its kind, the weights a fragment multiplies, and the fragment program's
instructions in all and per weight, by class. Drivers without such text get a line saying so.
"""

import json
import re
import sys
from pathlib import Path

FETCH = {"TXF", "TEX", "TXL", "TXB", "TXD", "TXG", "TXQ", "TXFMS", "LOADIM"}
FLOW = {"IF", "ELSE", "ENDIF", "REP", "ENDREP", "BRK", "CONT", "KIL", "CAL", "RET"}
MOVE = {"MOV", "PK64"}
DECLARATIONS = ("OPTION", "PARAM", "ATTRIB", "FLAT", "TEMP", "SHORT", "LONG", "OUTPUT", "!!NV")


def fragment_assembly(binary):
    start = binary.find(b"!!NVfp")
    if start < 0:
        return None
    end = re.compile(rb"\nEND(?![A-Z])").search(binary, start)
    return binary[start : end.start() if end else len(binary)].decode("latin-1")


CONSTANT = r"\{(-?[\d.]+), [^}]*\}(?:\.x)?"


def known_condition(line):
    """The condition code a .CC instruction leaves where it is a constant (NE.x true or false), else None."""
    m = re.match(r"MOV\.\w+\.CC \w+\.x, " + CONSTANT + ";", line)
    if m:
        return float(m.group(1)) != 0
    m = re.match(r"S(EQ|NE)\.\w+\.CC \w+\.x, " + CONSTANT + ", " + CONSTANT + ";", line)
    if m:
        return (m.group(2) == m.group(3)) == (m.group(1) == "EQ")
    return None


def counts(assembly):
    """Instructions by class, leaving out those after a loop exit taken on a constant condition."""
    out = {"fetch": 0, "alu": 0, "move": 0, "flow": 0}
    condition = None  # what the last .CC instruction left, where known
    skipping = 0  # > 0: inside a loop left for good, this many REPs deep
    for line in assembly.splitlines():
        line = line.strip()
        if not line.endswith(";") or line.startswith(DECLARATIONS):
            continue
        op = re.split(r"[ .;]", line, maxsplit=1)[0]
        if skipping:
            skipping += {"REP": 1, "ENDREP": -1}.get(op, 0)
            if skipping:
                continue
        out["fetch" if op in FETCH else "flow" if op in FLOW else "move" if op in MOVE else "alu"] += 1
        if op == "BRK" and line == "BRK (NE.x);" and condition is True:
            skipping = 1
        if ".CC " in line:
            condition = known_condition(line)
    return out


def defines(key):
    return dict(re.findall(r"#define (\w+) (.*)", key))


def kind(key, d):
    """The matmul of the GPT-2 block a one-row program serves, from what the forward declares it with."""
    if d.get("PARTS") == "3":
        return "attn.c_attn"
    if "matmul_weight_transposed" in key or "TRANSPOSED_WEIGHT" in d:
        return "lm_head"
    if d.get("INPUT_ACTIVATION", "0") != "0":
        return "mlp.c_proj"
    return "mlp.c_fc" if "matmul_input_norm" in key else "attn.c_proj"


def main(root):
    for index in sorted(Path(root).glob("*/index.jsonl")):
        for line in index.read_text().splitlines():
            program = json.loads(line)
            key = program["key"]
            if "matmul_row.vert" not in key.split("\n")[0]:
                continue
            d = defines(key)
            assembly = fragment_assembly((index.parent / program["file"]).read_bytes())
            row = {"weights": index.parent.name, "kind": kind(key, d), "file": program["file"]}
            if assembly is None:
                row["error"] = "no assembly text in the program binary (not an NVIDIA driver?)"
                print(json.dumps(row))
                continue
            texels = int(d.get("SPLIT_TEXELS", "0"))
            per_fragment = texels * 16 * int(d.get("PARTS", "1"))
            c = counts(assembly)
            row.update({"input_texels": texels, "weights_per_fragment": per_fragment, "instructions": c})
            row["per_weight"] = {k: round(v / per_fragment, 3) for k, v in c.items()}
            print(json.dumps(row))


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(sys.argv[1])
