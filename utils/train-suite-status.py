#!/usr/bin/env python3
"""Where each model of the training suites stands (issue 35: every zoo model
that trains): its latest timed AMP row in docs/bench/bench.db (status, ratio
to torch.compile), else its latest pass/fail check (docs/bench/train-*-check.db:
several workers on one GPU, so their times are contended and only the status
counts), else unmeasured.

    python3 utils/train-suite-status.py                 # a table, suite by suite
    python3 utils/train-suite-status.py --unmeasured    # names never timed nor checked, in suite order
    python3 utils/train-suite-status.py --untimed       # names never timed (checked or not)

The name lists go straight to utils/gpu-zoo-sweep.sh (TRAIN=1)."""
import argparse, glob, json, os, sqlite3

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SUITES = ("train-zoo-vision", "train-zoo-text", "train-zoo-generative")


def latest(db, where):
    """model -> (status, vs torch.compile, date) of its latest AMP train row."""
    out = {}
    con = sqlite3.connect(db)
    q = ("select model, status, speedup_torch_compile, date from results where kind = 'train' and "
         "precision = 'amp' and mode = 'default' and " + where + " order by date")
    for model, status, ratio, date in con.execute(q):
        out[model] = (status, ratio, date)
    return out


ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
ap.add_argument("--unmeasured", action="store_true")
ap.add_argument("--untimed", action="store_true")
args = ap.parse_args()
manifest = json.load(open(os.path.join(ROOT, "models", "manifest.json")))
timed = latest(os.path.join(ROOT, "docs", "bench", "bench.db"), "run_id not like '%check%'")
checked = {}
for db in sorted(glob.glob(os.path.join(ROOT, "docs", "bench", "train-*-check.db"))):
    checked.update(latest(db, "1"))
names = []
for suite in SUITES:
    models = manifest["suites"][suite]["models"]
    if args.unmeasured or args.untimed:
        names += [m for m in models if m not in timed and (args.untimed or m not in checked)]
        continue
    print("%s (%d models)" % (suite, len(models)))
    for m in models:
        if m in timed:
            s, r, d = timed[m]
            print("  %-32s timed    %-5s %s  (%s)" % (m, s, "%.2fx" % r if r else "  -  ", d[:10]))
        elif m in checked:
            s, _, d = checked[m]
            print("  %-32s checked  %-5s        (%s)" % (m, s, d[:10]))
        else:
            print("  %-32s unmeasured" % m)
if names:
    print(" ".join(names))
