#!/usr/bin/env python3
"""Prints a .tcx artifact's header lines and its sections with their sizes
(the layout include/tc/CodeGen/Artifact.h documents), for lit checks;
`sections(path)` gives them to other scripts, `table(data)` the section
table, `seal(data)` rewrites every checksum (for tests that edit a file on
purpose), and `hash64` is an independent Python version of
lib/Support/Hash64.cpp (XXH64) that test/unit/Hash64Test.cpp's vectors came
from."""
import struct, sys

PROLOGUE, ENTRY, NAME = 16, 48, 24
M = (1 << 64) - 1
P1, P2, P3, P4, P5 = (0x9E3779B185EBCA87, 0xC2B2AE3D27D4EB4F, 0x165667B19E3779F9,
                      0x85EBCA77C2B2AE63, 0x27D4EB2F165667C5)


def _rotl(x, r):
    return ((x << r) | (x >> (64 - r))) & M


def _round(acc, v):
    return _rotl((acc + v * P2) & M, 31) * P1 & M


def hash64(data, seed=0):
    n, p = len(data), 0
    if n >= 32:
        v = [(seed + P1 + P2) & M, (seed + P2) & M, seed, (seed - P1) & M]
        while n - p >= 32:
            for i in range(4):
                v[i] = _round(v[i], struct.unpack_from("<Q", data, p + 8 * i)[0])
            p += 32
        h = (_rotl(v[0], 1) + _rotl(v[1], 7) + _rotl(v[2], 12) + _rotl(v[3], 18)) & M
        for x in v:
            h = ((h ^ _round(0, x)) * P1 + P4) & M
    else:
        h = (seed + P5) & M
    h = (h + n) & M
    while n - p >= 8:
        h = (_rotl(h ^ _round(0, struct.unpack_from("<Q", data, p)[0]), 27) * P1 + P4) & M
        p += 8
    if n - p >= 4:
        h = (_rotl(h ^ (struct.unpack_from("<I", data, p)[0] * P1 & M), 23) * P2 + P3) & M
        p += 4
    while p < n:
        h = _rotl(h ^ (data[p] * P5 & M), 11) * P1 & M
        p += 1
    h = (h ^ (h >> 33)) * P2 & M
    h = (h ^ (h >> 29)) * P3 & M
    return h ^ (h >> 32)


def table(data):
    """[(name, offset, size, checksum, entry offset)] in file order."""
    count = struct.unpack_from("<I", data, 8)[0]
    result = []
    for i in range(count):
        entry = PROLOGUE + ENTRY * i
        name = bytes(data[entry:entry + NAME]).rstrip(b"\0").decode()
        off, size, checksum = struct.unpack_from("<QQQ", data, entry + NAME)
        result.append((name, off, size, checksum, entry))
    return result


def seal(data):
    """Rewrites every section's checksum, then the table's, in place."""
    entries = table(data)
    for name, off, size, _, entry in entries:
        struct.pack_into("<Q", data, entry + NAME + 16, hash64(bytes(data[off:off + size])))
    end = PROLOGUE + ENTRY * len(entries)
    struct.pack_into("<Q", data, end, hash64(bytes(data[:end])))


def sections(path):
    data = open(path, "rb").read()
    return {name: data[off:off + size] for name, off, size, _, _ in table(data)}


if __name__ == "__main__":
    for name, data in sections(sys.argv[1]).items():
        print(f"section {name}: {len(data)} bytes")
        if name in ("header", "kernels", "kernel-variants"):
            for line in data.decode().splitlines():
                print(f"  {name}: {line}")
