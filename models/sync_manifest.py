#!/usr/bin/env python3
"""Keeps models/manifest.json's zoo entries in step with the recipes of
models/zoo_models.py (which need torch to import; tc-bench and the utils/
scripts read the manifest without it):

    python3 models/sync_manifest.py [--check]

Adds an entry for every recipe the manifest lacks (after the last zoo entry,
group zoo-<suite>) and rewrites the suite, source and input of entries that
differ; other fields (train_batch, tolerances) stay. One entry a line, as the
file is written by hand. --check changes nothing and exits 1 if it would.
"""
import json, os, sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import zoo_models  # noqa: E402

PATH = os.path.join(HERE, "manifest.json")
DTYPE = {"tokens": "i64"}  # every other kind is f32 (images, clips, features, samples)


def entry_for(name, r, old=None):
    """The manifest entry of recipe r: the fields the recipe decides, over old's."""
    e = dict(old or dict(name=name, suite=r.suite, group=f"zoo-{r.suite}"))
    inputs = [dict(name="x", dtype=DTYPE.get(r.kind, "f32"), shape=["batch", *r.full])]
    if r.mask:  # zoo_models.padded_mask: the ids' shape
        inputs.append(dict(name="mask", dtype="i64", shape=["batch", *r.full]))
    e.update(suite=r.suite, source=r.source, recipe=name, inputs=inputs)
    if r.seq_dynamic and old is None:  # descriptive: nothing reads it yet
        e["seq_dynamic"] = True
    e.setdefault("rtol", 0.001)
    e.setdefault("atol", 0.0001)
    return e


def main():
    check = "--check" in sys.argv[1:]
    lines = open(PATH).read().split("\n")
    start = lines.index('  "models": [') + 1
    end = start + next(i for i, l in enumerate(lines[start:]) if l.strip().startswith("]"))
    entries = [json.loads(l.strip().rstrip(",")) for l in lines[start:end]]
    text = [l.strip().rstrip(",") for l in lines[start:end]]  # unchanged entries keep their text
    by_name = {e["name"]: i for i, e in enumerate(entries)}
    changed = []
    for name, r in zoo_models.ZOO.items():
        i = by_name.get(name)
        new = entry_for(name, r, entries[i] if i is not None else None)
        if i is None:
            last_zoo = max(j for j, e in enumerate(entries) if e.get("group", "").startswith("zoo-") or "suite" in e)
            entries.insert(last_zoo + 1, new)
            text.insert(last_zoo + 1, json.dumps(new))
            by_name = {e["name"]: j for j, e in enumerate(entries)}
            changed.append(f"added {name}")
        elif new != entries[i]:
            entries[i], text[i] = new, json.dumps(new)
            changed.append(f"updated {name}")
    for c in changed:
        print(f"sync_manifest: {c}")
    if check:
        sys.exit(1 if changed else 0)
    if changed:
        body = [f"    {t}," for t in text]
        body[-1] = body[-1].rstrip(",")
        tmp = PATH + ".tmp"
        with open(tmp, "w") as f:
            f.write("\n".join(lines[:start] + body + lines[end:]))
        os.replace(tmp, PATH)
    print(f"sync_manifest: {len(zoo_models.ZOO)} recipes, {len(changed)} entries changed")


if __name__ == "__main__":
    main()
