"""host_kernels.py M.tcx OUT.so: the CUDA kernels of an artifact (its source
section) built for the host against cuda_host_shim.h, each with an entry
`host_launch_<symbol>(param, grid, block)` that fake_libcuda.c calls for
cuLaunchKernel (FAKE_CUDA_KERNELS=OUT.so): the generated kernels then run
under CudaModel::run without a GPU."""
import os, re, subprocess, sys

tcx, out = sys.argv[1], sys.argv[2]
here = os.path.dirname(os.path.abspath(__file__))
root = os.path.abspath(os.path.join(here, "..", "..", ".."))
sys.path.insert(0, os.path.join(root, "test", "CodeGen", "Inputs"))
from artifact_info import sections

s = sections(tcx)
source = re.sub(r"#include <cuda_\w+\.h>\n", "", s["source"].decode())
# Library groups' epilogue kernels too ("-": a library group without one),
# and every geometry variant (tc-codegen --tune: field 5 of its line).
symbols = sorted({line.split()[1] for line in s["kernels"].decode().splitlines()
                  if line.strip() and line.split()[1] != "-"} |
                 {line.split()[4] for line in s.get("kernel-variants", b"").decode().splitlines()
                  if line.strip()})
code = ['#include "cuda_host_shim.h"', source]
for sym in symbols:
    code.append(f'extern "C" void host_launch_{sym}(void *p, unsigned grid, unsigned block) '
                f"{{ tc_launch_bytes({sym}, p, grid, block); }}")
# fake_libcuda.c's cuCtxSynchronize: a trapped kernel fails the launch.
code.append('extern "C" int host_traps() { return tc_traps.exchange(0); }')
cpp = out + ".cpp"
open(cpp, "w").write("\n".join(code) + "\n")
# -O0 unless TC_HOST_OPT says otherwise: the stand-in's runs are short,
# and -O1 builds took ~5x as long (run_cuda_on_host.py).
subprocess.run(f"clang++ -std=c++20 {os.environ.get('TC_HOST_OPT', '-O0')} -w -pthread -shared -fPIC "
               f"-I{root}/test/CodeGen/Inputs -I{root}/include {cpp} -o {out}",
               shell=True, check=True)
