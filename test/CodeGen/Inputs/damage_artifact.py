#!/usr/bin/env python3
"""Damages an artifact COUNT ways and runs a command on each variant; every
one must end in exactly one `TOOL: error:` line on stderr, exit code 1, and
nothing on stdout (no run): issue 19's "a damaged artifact is an error,
never a crash".

  damage_artifact.py ARTIFACT COUNT WORKDIR -- TOOL ARGS... {} ARGS...

`{}` is the variant's path. The damage (seeded, so failures reproduce):
single byte flips anywhere, flips in the prologue and section table, runs of
16 zeroed bytes, truncations, two table entries swapped, two sections'
contents swapped, and bytes appended."""
import os, random, subprocess, sys
from concurrent.futures import ThreadPoolExecutor

sys.path.insert(0, os.path.dirname(__file__))
from artifact_info import ENTRY, PROLOGUE, table

path, count, work = sys.argv[1], int(sys.argv[2]), sys.argv[3]
command = sys.argv[sys.argv.index("--") + 1:]
tool = os.path.basename(command[0])
data = bytes(open(path, "rb").read())
entries = table(data)
table_end = PROLOGUE + ENTRY * len(entries) + 8
rng = random.Random(19)


def flip(d, at):
    d[at] ^= 1 << rng.randrange(8)


def damage(kind):
    d = bytearray(data)
    if kind == "flip":
        flip(d, rng.randrange(len(d)))
    elif kind == "flip-table":
        flip(d, rng.randrange(table_end))
    elif kind == "zero16":
        at = rng.randrange(len(d) - 16)
        if d[at:at + 16] == bytes(16):  # already zero: zero the table's bytes instead
            at = rng.randrange(table_end - 16)
        d[at:at + 16] = bytes(16)
    elif kind == "truncate":
        del d[rng.randrange(len(d)):]
    elif kind == "swap-entries":
        i, j = rng.sample(range(len(entries)), 2)
        a, b = entries[i][4], entries[j][4]
        d[a:a + ENTRY], d[b:b + ENTRY] = d[b:b + ENTRY], d[a:a + ENTRY]
    elif kind == "swap-contents":  # two sections' first bytes exchanged
        (_, a, sa, _, _), (_, b, sb, _, _) = rng.sample(entries, 2)
        n = min(sa, sb, 64)
        if d[a:a + n] == d[b:b + n]:  # equal prefixes: flip one byte instead
            d[a] ^= 0xFF
        else:
            d[a:a + n], d[b:b + n] = d[b:b + n], d[a:a + n]
    elif kind == "append":
        d += bytes(rng.randrange(1, 100))
    return bytes(d)


kinds = (["flip"] * 40 + ["flip-table"] * 15 + ["zero16"] * 20 + ["truncate"] * 15 +
         ["swap-entries"] * 4 + ["swap-contents"] * 4 + ["append"] * 2)
variants = []
for i in range(count):
    kind = kinds[i % len(kinds)]
    d = damage(kind)
    assert d != data, kind
    variant = os.path.join(work, f"damaged-{i:03d}-{kind}.tcx")
    open(variant, "wb").write(d)
    variants.append((kind, variant))


def check(v):
    kind, variant = v
    argv = [variant if a == "{}" else a for a in command]
    r = subprocess.run(argv, capture_output=True, text=True, errors="replace", timeout=60)
    errors = [l for l in r.stderr.splitlines() if "error:" in l]
    ok = (r.returncode == 1 and len(errors) == 1 and errors[0].startswith(tool + ": error: ")
          and not r.stdout)
    return None if ok else (f"{variant} ({kind}): exit {r.returncode}, "
                            f"stdout {r.stdout[:200]!r}, stderr {r.stderr[-600:]!r}")


with ThreadPoolExecutor(2) as pool:
    failures = [f for f in pool.map(check, variants) if f]
for f in failures:
    print("FAIL", f)
print(f"{len(variants)} damaged variants of {os.path.basename(path)}: "
      f"{len(variants) - len(failures)} one-line errors, {len(failures)} not")
sys.exit(1 if failures else 0)
