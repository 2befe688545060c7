#!/usr/bin/env python3
"""cubin_parts.py M.tcx WORD: for each of the artifact's sm_90 cubins
(cubin.sm_90, cubin.sm_90.1, ...), whether it holds the kernel whose symbol
contains WORD ("WORD kernel") or else how many kernel symbols it names."""
import os, re, sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "CodeGen", "Inputs"))
from artifact_info import sections

s = sections(sys.argv[1])
word = sys.argv[2].encode()
for name in sorted((n for n in s if n.startswith("cubin.sm_90")), key=lambda n: (len(n), n)):
    symbols = set(re.findall(rb"\.text\.(tc_\w+)\0", s[name]))
    hit = [k for k in symbols if word in k]
    print(f"{name}: {word.decode()} kernel" if hit else f"{name}: {len(symbols)} kernels")
