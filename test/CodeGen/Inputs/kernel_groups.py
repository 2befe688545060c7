#!/usr/bin/env python3
"""kernel_groups.py FUSED.tcir: one module whose main holds every fusion
group of FUSED.tcir (the text of a module after fuse{singles=1,moves=1})
that CUDA generates a kernel for, each reading its own arguments and
returning its results, values renamed apart. Groups with a library op (left
to cuBLASLt/cuDNN), an argument other than float, bool or i32/i64 (indices),
or a non-scalar constant (but Slice's starts and the like) are left out. run_cuda_on_host.py then checks every kernel of a real model."""
import re, sys

text = open(sys.argv[1]).read()
args, body, results, kept = [], [], [], 0
for m in re.finditer(r"^  func @(fused_\w+)\(([^\n]*)\) -> \(([^\n]*)\) \{\n(.*?)^  \}\n", text, re.M | re.S):
    sig, ops = m.group(2), m.group(4)
    if re.search(r"= (MatMul|Gemm|Conv)\(", ops) or re.search(r"%[\w./-]+: (?!f16|bf16|f32|f64|i32|i64|bool)", sig):
        continue
    # A non-scalar constant, but those that only fix positions (Slice's starts).
    if re.search(r"= const \w+\[[^\]]+\] ", ops) and not re.search(r"= (Slice|Expand|Tile|Pad)\(", ops):
        continue
    kept += 1
    prefix = f"k{kept}_"
    def rename(s):
        # Value names of dynamo exports hold "/" and "-" (%/m/layers.0/Add_output_0).
        return re.sub(r"%([\w./-]+)", lambda v: "%" + prefix + re.sub(r"[./-]", "_", v.group(1)), s)
    if sig.strip():  # a group of constants only reads nothing
        args.append(rename(sig))
    lines = [rename(l) for l in ops.splitlines()]
    body += lines[:-1]
    results += re.findall(r"%[\w./-]+", lines[-1])  # the return line
# A result's type: from the op that defines it ("%a, %b = Op(...) : T1, T2").
types = []
for r in results:
    d = next(l for l in body if r in re.findall(r"%[\w./-]+", l.split(" = ")[0]))
    outs = re.findall(r"%[\w./-]+", d.split(" = ")[0])
    types.append(re.findall(r"\w+\[[^\]]*\]", d.rsplit(" : ", 1)[1])[outs.index(r)])
print("module @m {")
print(f"  func @main({', '.join(args)}) -> ({', '.join(types)}) {{")
print("\n".join(body))
print(f"    return {', '.join(results)}")
print("  }\n}")
