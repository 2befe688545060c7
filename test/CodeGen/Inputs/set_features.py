#!/usr/bin/env python3
"""Rewrites a .tcx artifact for error tests without changing its layout:
   set_features.py IN OUT +feature   the header's feature list names `feature`
   set_features.py IN OUT --corrupt-object   the object section's bytes (the kernels' shared object) scrambled
"""
import struct, sys

src, dst, what = sys.argv[1:4]
data = bytearray(open(src, "rb").read())
count = struct.unpack_from("<I", data, 8)[0]
sections = {}
for i in range(count):
    off = 16 + 40 * i
    name = bytes(data[off:off + 24]).rstrip(b"\0").decode()
    sections[name] = struct.unpack_from("<QQ", data, off + 24)
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
open(dst, "wb").write(data)
