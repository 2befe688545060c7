#!/usr/bin/env python3
"""Prints a .tcx artifact's header lines and its sections with their sizes
(the layout include/tc/CodeGen/Artifact.h documents), for lit checks;
`sections(path)` gives them to other scripts."""
import struct, sys


def sections(path):
    data = open(path, "rb").read()
    count = struct.unpack_from("<I", data, 8)[0]
    result = {}
    for i in range(count):
        entry = 16 + 40 * i
        name = bytes(data[entry:entry + 24]).rstrip(b"\0").decode()
        off, size = struct.unpack_from("<QQ", data, entry + 24)
        result[name] = data[off:off + size]
    return result


if __name__ == "__main__":
    for name, data in sections(sys.argv[1]).items():
        print(f"section {name}: {len(data)} bytes")
        if name in ("header", "kernels"):
            for line in data.decode().splitlines():
                print(f"  {name}: {line}")
