"""Compares the 'step K/N  loss V' lines of two tc-run --train logs: same -> prints the count.
   same-losses.py A B RTOL [--tail]   (--tail: B's steps are A's last ones)"""
import re
import sys

def losses(path):
    return [float(m.group(1)) for m in re.finditer(r"^step \d+/\d+  loss (\S+)", open(path).read(), re.M)]

a, b, rtol = losses(sys.argv[1]), losses(sys.argv[2]), float(sys.argv[3])
if "--tail" in sys.argv:
    a = a[len(a) - len(b):]
if not a or len(a) != len(b):
    sys.exit("%d losses against %d" % (len(a), len(b)))
for i, (x, y) in enumerate(zip(a, b)):
    if not abs(x - y) <= rtol * max(abs(x), abs(y)):
        sys.exit("step %d: %r against %r" % (i + 1, x, y))
print("%d steps, losses within %g" % (len(a), rtol))
