#!/usr/bin/env python3
"""run_cuda_on_host.py MODEL.tcir WORKDIR [N]: the generated CUDA kernels of a
module, run on the host (cuda_host_shim.h) against the reference executor,
with the module's symbolic dim N at N (5 unless given), on random inputs
or (environment TC_INPUTS) those of a folder.

The module is fused with every op in a group (fuse{singles=1,moves=1}, as
tc-codegen does); each Fused step must read model inputs or earlier results
and every result must be a model output, so every tensor's shape is known
from the reference data. Each kernel runs at its launch rule's block size
(KernelEmitter.h) and a grid of at most 3 blocks, which the grid-stride
loops must cover. Prints one line per output and "N outputs match" (with
TC_EXACT set, only outputs equal bit for bit match)."""
import os, re, subprocess, sys
import numpy as np
import onnx
from onnx import numpy_helper

src, work = sys.argv[1], sys.argv[2]
batch = int(sys.argv[3]) if len(sys.argv) > 3 else 5
here = os.path.dirname(os.path.abspath(__file__))
root = os.path.abspath(os.path.join(here, "..", "..", ".."))
sys.path.insert(0, here)
from artifact_info import sections

def run(cmd):
    subprocess.run(cmd, shell=True, check=True)

os.makedirs(work, exist_ok=True)
m = os.path.join(work, "m.tcbc")
run(f"tc-opt --passes='fuse{{singles=1,moves=1}}' {src} -o {m}")
# TC_CODEGEN_FLAGS: tc-codegen flags of the run (--conv-kernels=grouped).
# Each group's own kernel is checked: no multi-tensor launches, which would
# gather the independent groups of a gathered module (multi-tensor.test).
flags = "--multi-tensor=off " + os.environ.get("TC_CODEGEN_FLAGS", "")
run(f"tc-codegen --target=cuda {flags} --emit=source {m} -o {work}/kernels.cu")
run(f"tc-codegen --target=cuda {flags} {m} -o {work}/m.tcx")
# The module codegen prepared (the artifact's): its Fused ops pass the
# constants a kernel reads as operands, as the runtime's launches do.
open(f"{work}/prepared.tcbc", "wb").write(sections(f"{work}/m.tcx")["module"])
text = subprocess.run(f"tc-opt --passes=dce {work}/prepared.tcbc -S", shell=True, check=True,
                      capture_output=True, text=True).stdout
main = text[text.index("func @main("):]
main = main[:main.index("\n  }\n")]
args = re.findall(r"%(\w+): \w+\[", main[:main.index("->")])
rets = re.findall(r"%(\w+)", main[main.index("return "):])
# Every tensor a kernel reads or writes must have reference data: values
# passed between groups, results only a view reads, and constants become extra
# outputs of the module the reference runs.
types = {}
for names, tys in re.findall(r"^\s*((?:%\w+(?:, )?)+) = .*? : ([^:]*?)(?: loc\(.*)?$", main, re.M):
    types.update(zip(re.findall(r"%(\w+)", names), re.findall(r"\w+\[[^\]]*\]", tys)))
types.update(re.findall(r"^\s*%(\w+) = const (\w+\[[^\]]*\])", main, re.M))  # constant operands too
extra = []
for results, operands in re.findall(r"^\s*((?:%\w+(?:, )?)+) = Fused\(([^)]*)\)", main, re.M):
    extra += [v for v in re.findall(r"%(\w+)", operands + " " + results)
              if v not in args and v not in rets and v not in extra and v in types]
ref_src = m
if extra:
    sig_end = text.index(") {", text.index("func @main("))
    ret_at = text.index("return ", text.index("func @main("))
    ret_end = text.index("\n", ret_at)
    text_ref = (text[:sig_end] + "".join(", " + types[v] for v in extra) + text[sig_end:ret_end] +
                "".join(", %" + v for v in extra) + text[ret_end:])
    ref_src = os.path.join(work, "m.ref.tcir")
    open(ref_src, "w").write(text_ref)
    rets = rets + extra
# TC_INPUTS: a folder of the module's inputs (input_<i>.pb) instead of random ones.
given = os.environ.get("TC_INPUTS")
source_of_inputs = f"--inputs {given}" if given else "--random-inputs"
run(f"tc-run --target=ref {ref_src} {source_of_inputs} --dim N={batch} --output-dir {work}/ref > /dev/null")
tensors = {}
for i, name in enumerate(args):
    tensors[name] = numpy_helper.to_array(onnx.load_tensor(f"{work}/ref/input_{i}.pb"))
expected = {n: numpy_helper.to_array(onnx.load_tensor(f"{work}/ref/output_{i}.pb"))
            for i, n in enumerate(rets)}
table = {}
for line in sections(f"{work}/m.tcx")["kernels"].decode().splitlines():
    group, symbol, kind, launch, block, vec, *library = line.split()
    if library:  # a cuBLASLt/cuDNN call (and its epilogue's kernel): needs the GPU's library
        continue
    table[group] = (symbol, launch, int(block), int(vec))

# The shim defines the half types: the toolkit's headers are not for the host.
source = open(f"{work}/kernels.cu").read()
open(f"{work}/kernels.host.cu", "w").write(re.sub(r"#include <cuda_\w+\.h>\n", "", source))
code = ['#include "cuda_host_shim.h"', '#include "kernels.host.cu"', "#include <cstdio>",
        "static std::vector<char> load(const char *f, size_t n) { std::vector<char> b(n);",
        "  FILE *p = fopen(f, \"rb\"); if (fread(b.data(), 1, n, p) != n) return {}; fclose(p); return b; }",
        "int main() {"]
buffers, decls, launches = {}, [], []
halfGroup = set()  # outputs of groups that compute on half floats
reference = set()  # outputs of groups without a kernel: the reference's values
# Values between groups that no generated kernel makes (host ops): the reference's.
made = {o for results, _, callee in re.findall(
    r"^\s*((?:%\w+(?:, )?)+) = Fused\(([^)]*)\) \{callee = \"(\w+)\"", main, re.M)
    if callee in table for o in re.findall(r"%(\w+)", results)}
reference.update(v for v in extra if v not in made)
# Outputs of ops that are not kernels (a Range folded per shape ...): the reference's too.
fused = re.findall(r"^\s*((?:%\w+(?:, )?)+) = Fused\(", main, re.M)
reference.update(set(expected) - {n for r in fused for n in re.findall(r"%(\w+)", r)})
def buffer(name, array):
    if name not in buffers:
        buffers[name] = array
        path = f"{work}/{name}.in"
        array.tobytes() and open(path, "wb").write(array.tobytes())
        decls.append(f'  std::vector<char> t_{name} = load("{path}", {array.nbytes});'
                     if name in tensors or name in reference
                     else f"  std::vector<char> t_{name}({max(array.nbytes, 1)});")
    return f"t_{name}.data()"

ran = 0
for results, operands, callee in re.findall(
        r"^\s*((?:%\w+(?:, )?)+) = Fused\(([^)]*)\) \{callee = \"(\w+)\"", main, re.M):
    if callee not in table:  # a library group (MatMul ...), integer math: not generated
        reference.update(re.findall(r"%(\w+)", results))
        continue
    outs = re.findall(r"%(\w+)", results)
    ins = re.findall(r"%(\w+)", operands)
    symbol, launch, block, vec = table[callee]
    if any((tensors[v] if v in tensors else expected[v]).dtype.itemsize == 2 and
           (tensors[v] if v in tensors else expected[v]).dtype.kind not in "iu" for v in ins + outs):
        halfGroup.update(outs)
    launches.append(f"  {{ {symbol}_params p;")
    dims = []
    for k, name in enumerate(ins + outs):
        array = tensors[name] if name in tensors else expected[name]
        launches.append(f"    p.bufs[{k}] = {buffer(name, array)};")
        dims += list(array.shape)
    for k, d in enumerate(dims):
        launches.append(f"    p.dims[{k}] = {d};")
    shape = expected[outs[0]].shape
    n = int(np.prod(shape)); inner = shape[-1] if shape else 1
    if launch == "rows":
        grid, threads = n // inner, min(max(-(-inner // 128), 1), block // 32) * 32
    elif launch == "lanes":  # `vec` lanes a row, block / vec rows a block
        grid, threads = max(-(-(n // inner) // (block // vec)), 1), block
    elif launch == "reduce":
        grid, threads = n, block
    elif launch == "columns":
        grid, threads = vec, block
    elif launch == "split":  # `vec` passes of a fixed grid
        grid, threads = 1024, block
    else:
        grid, threads = -(-n // (block * vec)), block
    # `split` blocks split few rows: enough of them that a row takes several.
    grid = min(grid, 16 if launch == "split" else 3)
    if launch == "split":
        # The scratch as for `columns`; each pass a launch; a second run over
        # cleared results checks every pass left the counters zero.
        launches.append(f"    std::vector<char> scratch({grid * threads * 8 + grid * 4});")
        launches.append(f"    p.bufs[{len(ins + outs)}] = scratch.data();")
        for again in range(2):
            if again:
                launches += [f"    std::memset(t_{name}.data(), 0xff, t_{name}.size());" for name in outs]
            launches += [f"    p.pass = {k}; tc_launch({symbol}, p, {grid}, {threads});" for k in range(vec)]
        launches.append("  }")
    elif launch == "columns":
        # The runtime's zeroed scratch after the results (CudaLaunch.h); a
        # second launch over cleared results checks the counters were left zero.
        launches.append(f"    std::vector<char> scratch({grid * threads * 8 + grid * 4});")
        launches.append(f"    p.bufs[{len(ins + outs)}] = scratch.data();")
        launches.append(f"    tc_launch({symbol}, p, {grid}, {threads});")
        launches += [f"    std::memset(t_{name}.data(), 0xff, t_{name}.size());" for name in outs]
    if launch != "split":
        launches.append(f"    tc_launch({symbol}, p, {grid}, {threads}); }}")
    for name in outs:
        launches.append(f'  {{ FILE *f = fopen("{work}/{name}.out", "wb"); '
                    f"fwrite(t_{name}.data(), 1, {expected[name].nbytes}, f); fclose(f); }}")
    ran += 1
# A kernel's __trap (an out-of-range index) fails the run, as a launch would.
code += decls + launches + ['  if (tc_traps) { printf("a kernel trapped (__trap)\\n"); return 3; }', "}"]
open(f"{work}/harness.cpp", "w").write("\n".join(code) + "\n")
# -O0: at -O1 clang took ~5x the time to build a harness that then runs
# in well under a second (TC_HOST_OPT=-O1 for long runs).
run(f"clang++ -std=c++20 {os.environ.get('TC_HOST_OPT', '-O0')} -w -pthread -I{here} -I{root}/include -I{work} "
    f"{work}/harness.cpp -o {work}/harness")
run(f"{work}/harness")
ok = 0
for name, want in expected.items():
    if not os.path.exists(f"{work}/{name}.out"):
        continue
    got = np.fromfile(f"{work}/{name}.out", dtype=want.dtype).reshape(want.shape)
    # A group on half floats computes in float and rounds once where the
    # reference rounds every op's result: half-float tolerance.
    # TC_EXACT: every output bit for bit (dropout masks).
    tol = 0 if os.environ.get("TC_EXACT") else 1e-2 if name in halfGroup else 1e-4
    err = float(np.max(np.abs(got.astype(np.float64) - want.astype(np.float64)))) if want.size else 0
    good = np.allclose(got.astype(np.float64), want.astype(np.float64), rtol=tol, atol=tol / 10,
                       equal_nan=True)
    ok += good
    print(f"output '{name}' {want.dtype}{list(want.shape)}: max abs err {err:.3g} "
          f"[{'ok' if good else 'MISMATCH'}]")
print(f"{ran} kernels ran, {ok} outputs match")
