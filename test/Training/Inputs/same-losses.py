"""Compares the 'step K/N  loss V' lines of two tc-run --train logs: same -> prints the count.
   same-losses.py A B RTOL [--tail]   (--tail: B's steps are A's last ones)
   same-losses.py --eval A B RTOL     (two tc-run --eval lines: loss within RTOL, same hits)"""
import re
import sys

if sys.argv[1] == "--eval":
    pattern = r"^eval: (\d+) batches, \d+ samples  loss (\S+)  top-1 \S+ \((\d+)/(\d+)\)"
    a, b = [re.search(pattern, open(p).read(), re.M) for p in sys.argv[2:4]]
    if not a or not b:
        sys.exit("no eval line in %s" % sys.argv[2 if not a else 3])
    x, y, rtol = float(a.group(2)), float(b.group(2)), float(sys.argv[4])
    if not abs(x - y) <= rtol * max(abs(x), abs(y)) or a.group(3, 4) != b.group(3, 4):
        sys.exit("%s against %s" % (a.group(0), b.group(0)))
    print("eval: %s batches, losses within %g, same top-1 hits" % (a.group(1), rtol))
    sys.exit(0)


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
