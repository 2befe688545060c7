#!/usr/bin/env python3
"""target_strings.py SRC TARGETS.DEF: prints every comparison of a target or
backend against the name of a target in TARGETS.DEF, in SRC/lib and SRC/include outside the registry
(lib/Target: the runtimes get their name from it); then "N comparisons"."""
import os, re, sys

src = sys.argv[1]
names = re.findall(r'^TC_TARGET\(\w+,\s*"(\w+)"', open(sys.argv[2]).read(), re.M)
if not names:
    sys.exit("no TC_TARGET lines in " + sys.argv[2])
alt = "|".join(names)
# `target == "cuda"`, `a.target != "cpu"`, `trace.backend == "cuda"`, and the literal first.
pattern = re.compile(r'\b(target|backend)\s*[!=]=\s*"(%s)"|"(%s)"\s*[!=]=\s*[\w.]*(target|backend)\b'
                     % (alt, alt))
allowed = [os.path.join("lib", "Target")]
found = 0
for top in ("lib", "include"):
    for root, _, files in os.walk(os.path.join(src, top)):
        rel = os.path.relpath(root, src)
        if any(rel == a or rel.startswith(a + os.sep) for a in allowed):
            continue
        for f in sorted(files):
            if not f.endswith((".cpp", ".h")):
                continue
            for n, line in enumerate(open(os.path.join(root, f), encoding="utf-8"), 1):
                if pattern.search(line):
                    print("%s:%d: %s" % (os.path.join(rel, f), n, line.strip()))
                    found += 1
print("%d comparisons" % found)
