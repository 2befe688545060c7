"""Checks utils/kernel-grid.py's JSON lines: every point of the smoke grid is
there once per family and dtype; a point that ran has a finite, positive time,
bytes and roofline fraction; a failed point (the injected mismatch) has no
time. Prints one line per family and the failed points, for FileCheck."""
import json, math, sys

rows = [json.loads(line) for line in open(sys.argv[1])]
families = {}
for r in rows:
    families.setdefault(r["family"], []).append(r)
    if r["status"] == "ok":
        for k in ("tc_us", "bytes", "roofline"):
            assert isinstance(r[k], (int, float)) and math.isfinite(r[k]) and r[k] > 0, (k, r)
        assert r["bound"] in ("memory", "compute"), r
        assert r["verified"], r
    else:
        assert "tc_us" not in r and "roofline" not in r, r
        print("failed %s %s" % (r["name"], r["status"]))
for fam, mine in families.items():
    print("family %s %s" % (fam, " ".join(sorted(r["dtype"] for r in mine))))
