#!/usr/bin/env python3
"""cache_entries.py DIR [damage|truncate|same A.tcx B.tcx SECTION]: the
compile cache's entries (lib/Support/CompileCache.cpp) for lit checks:
prints how many there are; `damage` flips a payload byte of each and
`truncate` cuts each in half (the next compile must not take them);
`same` says whether two artifacts' SECTION bytes are equal."""
import os, sys

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, here)
from artifact_info import sections

folder, what = sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else "count"
if what == "same":
    a, b, name = sys.argv[3], sys.argv[4], sys.argv[5]
    print(f"{name}: {'same' if sections(a)[name] == sections(b)[name] else 'DIFFERENT'}")
    sys.exit(0)
entries = sorted(f for f in os.listdir(folder) if f.endswith(".bin")) if os.path.isdir(folder) else []
for e in entries:
    path = os.path.join(folder, e)
    data = bytearray(open(path, "rb").read())
    if what == "damage":
        data[len(data) - 7] ^= 0x40
    elif what == "truncate":
        data = data[: len(data) // 2]
    open(path, "wb").write(data)
print(f"{len(entries)} entries")
