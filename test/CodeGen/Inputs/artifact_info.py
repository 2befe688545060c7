#!/usr/bin/env python3
"""Prints a .tcx artifact's header lines and its sections with their sizes
(the layout include/tc/CodeGen/Artifact.h documents), for lit checks."""
import struct, sys

data = open(sys.argv[1], "rb").read()
count = struct.unpack_from("<I", data, 8)[0]
for i in range(count):
    entry = 16 + 40 * i
    name = bytes(data[entry:entry + 24]).rstrip(b"\0").decode()
    off, size = struct.unpack_from("<QQ", data, entry + 24)
    print(f"section {name}: {size} bytes")
    if name in ("header", "kernels"):
        for line in data[off:off + size].decode().splitlines():
            print(f"  {name}: {line}")
