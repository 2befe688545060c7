#!/usr/bin/env python3
"""Rewrites a .tcx artifact for error tests without changing its layout:
   set_features.py IN OUT +feature   the header's feature list names `feature`
                                     (checksums rewritten: a valid artifact)
   set_features.py IN OUT --corrupt-object   the object section's bytes (the
                                     kernels' shared object) scrambled, its
                                     checksum left as it was
"""
import os, sys

sys.path.insert(0, os.path.dirname(__file__))
from artifact_info import seal, table

src, dst, what = sys.argv[1:4]
data = bytearray(open(src, "rb").read())
sections = {name: (off, size) for name, off, size, _, _ in table(data)}
if what == "--corrupt-object":
    off, size = sections["object"]
    for i in range(off, off + size):
        data[i] = (data[i] * 7 + 13) & 0xFF
else:
    off, size = sections["header"]
    header = bytes(data[off:off + size]).decode()
    start = header.index("features=") + len("features=")
    end = header.index("\n", start)
    length = end - start
    assert len(what) <= length, "feature list too short to rewrite"
    value = what + "," * (length - len(what))  # empty entries are skipped
    data[off + start:off + end] = value.encode()
    seal(data)
open(dst, "wb").write(data)
