"""same-files.py A B: every file of folder A is in folder B with the same bytes."""
import os
import sys

a, b = sys.argv[1], sys.argv[2]
names = sorted(os.listdir(a))
for n in names:
    if open(os.path.join(a, n), "rb").read() != open(os.path.join(b, n), "rb").read():
        sys.exit("%s differs from %s" % (os.path.join(a, n), os.path.join(b, n)))
if not names:
    sys.exit("%s is empty" % a)
