#!/usr/bin/env python3
"""Checks a dashboard page as a browser rendered it (chromium --dump-dom)
against the database it was built from: for every suite/target/mode/
precision of the landing table, the pass rate, geomean speedup, mean compile
time and compression ratio of its latest run, recomputed here from the rows
with SQL and Python (not with tc's code).

    check_dashboard.py bench.db dom.html [suite-dom.html]
Prints one line per checked row; exits 1 on the first difference.
"""
import math, sqlite3, sys
from html.parser import HTMLParser


class Cells(HTMLParser):
    """data-key rows -> {metric: text}, and data-model rows of a suite page."""

    def __init__(self):
        super().__init__()
        self.rows, self.models, self.key, self.metric, self.svgs = {}, [], None, None, 0

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "svg":
            self.svgs += 1
        if tag == "tr" and "data-key" in a:
            self.key = a["data-key"]
            self.rows[self.key] = {"class": a.get("class", "")}
        if tag == "tr" and "data-model" in a:
            self.models.append(a["data-model"])
        if tag == "td" and self.key and "data-metric" in a:
            self.metric = a["data-metric"]
            self.rows[self.key][self.metric] = ""

    def handle_endtag(self, tag):
        if tag == "td":
            self.metric = None
        if tag == "tr":
            self.key = None

    def handle_data(self, data):
        if self.key and self.metric:
            self.rows[self.key][self.metric] += data


def geomean(xs):
    xs = [x for x in xs if x is not None and x > 0 and math.isfinite(x)]
    return math.exp(sum(map(math.log, xs)) / len(xs)) if xs else None


def fmt(v, digits, suffix=""):
    return "\u2013" if v is None else "%.*f%s" % (digits, v, suffix)


def expected(db):
    con = sqlite3.connect(db)
    out = {}
    # The inference table (id="summary"); training rows have their own (id="training").
    keys = con.execute("SELECT DISTINCT suite, target, mode, precision FROM results "
                       "WHERE kind = 'inference'").fetchall()
    for suite, target, mode, precision in keys:
        where = "suite=? AND target=? AND mode=? AND precision=? AND kind='inference'"
        args = (suite, target, mode, precision)
        # The latest run of the group: the dashboard's "latest run".
        run = con.execute("SELECT run_id FROM results WHERE %s ORDER BY date DESC, run_id DESC, id DESC LIMIT 1"
                          % where, args).fetchone()[0]
        rows = con.execute("SELECT status, speedup, compile_s, compression, speedup_torch_eager, "
                           "speedup_torch_ro, memory_vs_torch, host_steps FROM results WHERE %s AND run_id=?"
                           % where, args + (run,)).fetchall()
        passed = [r for r in rows if r[0] == "pass"]
        compiles = [r[2] for r in passed if r[2] is not None]
        out["%s/%s/%s/%s" % args] = {
            "rows": len(rows),
            "pass_rate": "%d/%d (%.0f%%)" % (len(passed), len(rows), 100.0 * len(passed) / len(rows)),
            "speedup": fmt(geomean([r[1] for r in passed]), 2, "x"),
            "compile_s": fmt(sum(compiles) / len(compiles) if compiles else None, 2),
            "compression": fmt(geomean([r[3] for r in passed]), 2, "x"),
            "vs_torch_eager": fmt(geomean([r[4] for r in passed]), 2, "x"),
            "vs_torch_ro": fmt(geomean([r[5] for r in passed]), 2, "x"),
            "memory_vs_torch": fmt(geomean([r[6] for r in passed]), 2, "x"),
            "slow": str(sum(1 for r in passed if r[5] is not None and r[5] < 0.5)),
            "host_steps": str(sum(1 for r in rows if (r[7] or 0) > 0)),
        }
    return out


def main():
    db, dom = sys.argv[1], sys.argv[2]
    page = Cells()
    page.feed(open(dom, encoding="utf-8").read())
    want = expected(db)
    if sorted(page.rows) != sorted(want):
        print("FAIL: rows on the page %s, groups in the database %s" % (sorted(page.rows), sorted(want)))
        return 1
    for key in sorted(want):
        for metric, value in want[key].items():
            if metric == "rows":
                continue
            got = page.rows[key].get(metric)
            if got != value:
                print("FAIL: %s %s: page shows %r, database gives %r" % (key, metric, got, value))
                return 1
        print("ok %s: %s" % (key, ", ".join("%s %s" % kv for kv in want[key].items() if kv[0] != "rows")))
    print("svg charts: %d" % page.svgs)
    if len(sys.argv) > 3:
        # The suite page lists, per mode and precision, every row of that
        # group's latest run (the database holds one suite on one target).
        suite = Cells()
        suite.feed(open(sys.argv[3], encoding="utf-8").read())
        n = sum(v["rows"] for v in want.values())
        print("suite page: %d model rows, %d in the groups' latest runs, %d svg" % (len(suite.models), n, suite.svgs))
        if len(suite.models) != n:
            print("FAIL: suite page rows differ from the database")
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
