"""tc-prof --format=csv: a multi-tensor launch's row counts every member's
bytes (its members have no events of their own). The row's signature is its
first member's; the members here have the same types, so the row's bytes are
N times what that signature moves (each operand and result once).
    check_mt_bytes.py PROFILE.csv"""
import csv
import re
import sys

DTYPE_BYTES = {"f32": 4, "f16": 2, "bf16": 2, "i64": 8, "i32": 4, "bool": 1}


def type_bytes(t):
    m = re.fullmatch(r"(\w+)\[([0-9,]*)\]", t.strip())
    n = 1
    for d in filter(None, m.group(2).split(",")):
        n *= int(d)
    return n * DTYPE_BYTES[m.group(1)]


rows = [r for r in csv.DictReader(open(sys.argv[1])) if "tensors in 1 launch" in r["detail"]]
assert rows, "no multi-tensor launch in the profile"
for r in rows:
    n = int(re.search(r"(\d+) tensors in 1 launch", r["detail"]).group(1))
    ins, outs = r["signature"].split("->")
    one = sum(type_bytes(t) for t in re.findall(r"\w+\[[0-9,]*\]", ins + "," + outs))
    got = int(float(r["bytes"]))
    print("%s: %d tensors, %d bytes (one member %d): %s" % (r["kernel"], n, got, one,
          "ok" if got == n * one else "WRONG"))
