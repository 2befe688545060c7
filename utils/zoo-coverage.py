#!/usr/bin/env python3
"""Coverage survey of the model zoo: which ops of which models run on the host.

    python3 models/export_torch_models.py /tmp/zoo --suite vision,text,generative --small --exporters dynamo
    python3 utils/zoo-coverage.py /tmp/zoo build/bin [--fast] [--models a,b] [--merge] \\
        [--md docs/zoo-coverage.md] [--json docs/bench/zoo-coverage.json]
    # numerics too (issue 16's fp32 floor), both targets at fp32, 12 models at once:
    python3 utils/zoo-coverage.py /tmp/zoo build/bin --check --cuda-precision fp32 -j 12 --md X.md --json X.json

For every exported model (MODELS_DIR/<name>.dynamo.onnx, or <name>/model.onnx)
compiles, for CUDA
    tc-import m.onnx | tc-opt -O2 --target=cuda --precision fp16 | tc-codegen --target=cuda --stats
and for CPU the same in fp32 (no --precision), and collects every
`tc-codegen: warning: @group runs on the host (reason): nodes N (Op), ...`,
and `no shape plan stored (why)` (the tools plan each shape at run time,
libtcrt refuses the artifact: "no shape plan" in the cells).
Export failures come from MODELS_DIR/export-status.json (written by the
exporter). Writes the JSON (per model: export, per target: status, failing
tool's error line, kernel counts, host steps) and the markdown: per model,
then host steps aggregated by (op types, reason) with the models affected --
the to-do list of kernel work. The JSON and markdown are rewritten after every
model (a run cut short keeps what it did); --merge keeps the models of an
existing JSON that this run does not survey. Needs no torch.

--check also runs each artifact (`tc-run --inputs`) on the export's inputs
(MODEL.dynamo.in/input_N.pb) and compares every output with PyTorch's fp32
one (torch_output_N.pb, computed on the CPU at export): max |tc - torch| over
max |torch|, at most 1e-3 for an fp32 artifact (5e-3 where its library
calls may round through TF32: CUDA convs by default, tc-codegen
--allow-tf32) and 2e-2 for fp16 (utils/bench-gpu.py's rel_err; NaN or a
shape mismatch never passes).
"""
import argparse, functools, importlib.util, json, os, re, subprocess, sys, tempfile, threading, time
from concurrent.futures import ThreadPoolExecutor

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "models"))
from committed_models import manifest_zoo

SUITES = ["vision", "text", "generative"]
HOST = re.compile(r"warning: [@%](\S+) runs on the host \((.*)\): nodes (.*)$")
NODE = re.compile(r"(\S+) \(([^()]*)\)(?:, |$)")
STATS = re.compile(r"^kernels: .*host steps?$", re.M)
# No stored shape plan: the tools plan each shape at run time, libtcrt refuses the artifact.
UNPLANNED = re.compile(r"warning: no shape plan stored \((.*)\): ")


def zoo_suites():
    """name -> suite from models/zoo_models.py when it imports (it needs torch), else from the manifest."""
    try:
        import zoo_models
        return {n: r.suite for n, r in zoo_models.ZOO.items()}
    except ImportError:
        return manifest_zoo()


def find_onnx(d, name):
    for p in (f"{name}.dynamo.onnx", f"{name}.onnx", f"{name}/model.onnx"):
        if os.path.isfile(os.path.join(d, p)):
            return os.path.join(d, p)
    return None


def error_line(tool, text, rc):
    lines = [l for l in text.strip().splitlines() if l.strip()]
    errs = [l for l in lines if "error" in l.lower()]
    line = (errs or lines or [f"exit {rc}"])[0][:400] if rc >= 0 else f"killed by signal {-rc}"
    return line if line.startswith(f"{tool}:") else f"{tool}: {line}"


# The fp32 and fp16 tolerances of --check (issue 16's floor); an fp32
# artifact whose library calls may round through TF32 (tc-run --print-info;
# tc-codegen --allow-tf32, convs by default) is held to PyTorch's own TF32
# tolerance, the bench's rule (lib/Bench/Tf32Rule.h, kTf32ErrFloor).
TOLERANCE = {"fp32": 1e-3, "fp16": 2e-2, "tf32": 5e-3}


def may_use_tf32(bindir, tcx):
    p = subprocess.run([f"{bindir}/tc-run", "--print-info", tcx], capture_output=True, text=True)
    return "may round through TF32: yes" in p.stdout


@functools.lru_cache(maxsize=None)
def bench_gpu():
    """utils/bench-gpu.py as a module (loaded once): its load_pb and rel_err are the rule."""
    spec = importlib.util.spec_from_file_location("bench_gpu", os.path.join(ROOT, "utils", "bench-gpu.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def check_one(bindir, tcx, indir, tmp, timeout, precision):
    """Runs the artifact on indir's inputs; max relative error of its outputs vs torch_output_N.pb."""
    bg = bench_gpu()
    out = os.path.join(tmp, os.path.basename(tcx) + ".out")
    try:
        p = subprocess.run([f"{bindir}/tc-run", tcx, "--inputs", indir, "--output-dir", out],
                           capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return dict(numerics="failed", error=f"tc-run: timed out after {timeout} s")
    if p.returncode:
        return dict(numerics="failed", error=error_line("tc-run", p.stderr, p.returncode))
    errs, i = [], 0
    while os.path.exists(os.path.join(indir, f"torch_output_{i}.pb")):
        want = bg.load_pb(os.path.join(indir, f"torch_output_{i}.pb"))
        got = os.path.join(out, f"output_{i}.pb")
        errs.append(bg.rel_err(bg.load_pb(got), want) if os.path.exists(got) else float("inf"))
        i += 1
    if not errs:
        return dict(numerics="failed", error=f"no torch_output_0.pb in {indir}")
    err = max(errs)
    rule = "tf32" if precision == "fp32" and may_use_tf32(bindir, tcx) else precision
    return dict(numerics="ok" if err <= TOLERANCE[rule] else "failed", err=err, precision=precision,
                rule=rule)


def compile_one(bindir, onnx, target, tmp, timeout, fast=False, precision="fp16"):
    """tc-import | tc-opt | tc-codegen as three steps; returns the target's result dict."""
    ir, opt, tcx = (os.path.join(tmp, f"{target}.{x}") for x in ("tcbc", "opt.tcbc", "tcx"))
    prec = ["--precision", precision] if target == "cuda" and precision != "fp32" else []
    steps = [("import", [f"{bindir}/tc-import", onnx, "-o", ir]),
             ("opt", [f"{bindir}/tc-opt", "-O2", f"--target={target}", *prec, ir, "-o", opt]),
             ("codegen", [f"{bindir}/tc-codegen", f"--target={target}", "--stats", opt, "-o", tcx]
             + (["--emit", "source"] if fast else []))]
    res = dict(status="ok", host=[])
    t0 = time.time()
    for stage, cmd in steps:
        try:
            p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
        except OSError as e:  # e.g. the bin dir being relinked: say so, do not guess
            res.update(status="failed", stage=stage, error=f"tc-{stage}: cannot run: {e}")
            break
        except subprocess.TimeoutExpired:
            res.update(status="failed", stage=stage, error=f"tc-{stage}: timed out after {timeout} s")
            break
        if p.returncode:
            res.update(status="failed", stage=stage, error=error_line(f"tc-{stage}", p.stderr, p.returncode))
            break
        if stage == "codegen":
            for line in p.stderr.splitlines():
                m = HOST.search(line)
                if m:
                    nodes = [dict(node=n, types=[t.strip() for t in ts.split(",")]) for n, ts in NODE.findall(m[3])]
                    res["host"].append(dict(group=m[1], reason=m[2], nodes=nodes))
                u = UNPLANNED.search(line)
                if u:
                    res["unplanned"] = u[1]
            s = STATS.search(p.stderr)
            res["kernels"] = s[0] if s else ""
    res["seconds"] = round(time.time() - t0, 1)
    res["tcx"] = tcx
    return res


def op_types(step):
    seen = []
    for n in step["nodes"]:
        for t in n["types"]:
            if t not in seen:
                seen.append(t)
    return "+".join(seen)


def culprit(step):
    """The op types the reason names ("no code for BatchNormalization"), else
    the group's: what the step is aggregated by."""
    types = op_types(step).split("+")
    named = [t for t in types if re.search(r"\b%s\b" % re.escape(t), step["reason"])]
    return "+".join(named or types)


def general(reason):
    """The reason without value names and dims, for aggregation:
    "argument %val_80 of type i64[?,1,1,16]" -> "argument of type i64[...]"."""
    return re.sub(r"\b([a-z]+\d*)\[[^\]]*\]", r"\1[...]", re.sub(r"%[\w.]+ ", "", reason))


def aggregate(models, target):
    """(op types, general reason) -> {models: [...], steps: n}."""
    agg = {}
    for name, m in models.items():
        for step in m.get("targets", {}).get(target, {}).get("host", []):
            a = agg.setdefault((culprit(step), general(step["reason"])), dict(models=[], steps=0))
            a["steps"] += 1
            if name not in a["models"]:
                a["models"].append(name)
    return sorted(agg.items(), key=lambda kv: (-len(kv[1]["models"]), -kv[1]["steps"], kv[0]))


def cell(r):
    if not r:
        return "-"
    if r["status"] != "ok":
        return f"**failed** ({r['stage']})"
    c = f"{len(r['host'])} host" if r["host"] else "ok, 0 host"
    if r.get("unplanned"):
        c += ", no shape plan"
    if "numerics" in r:
        c += (f", err {r['err']:.1e}" if "err" in r else "") + ("" if r["numerics"] == "ok" else " **wrong**")
    return c


def esc(s):
    return s.replace("|", "\\|")


def markdown(models, fast, note="", json_link="bench/zoo-coverage.json", cuda_prec="fp16", check=False):
    out = ["# Zoo coverage: what runs on the host",
           "",
           "Generated by `utils/zoo-coverage.py` (rerun it after kernels land; the raw data is "
           f"[{json_link}]({json_link})). Models: the zoo of "
           "`models/zoo_models.py` exported with `models/export_torch_models.py --small --exporters dynamo` "
           "(small configs / images, batch 2 symbolic). CUDA: `tc-opt -O2 --target=cuda --precision fp16 | "
           "tc-codegen --target=cuda`" + (" (this run: fp32, no --precision)" if cuda_prec == "fp32" else "") + "; CPU: `tc-opt -O2 --target=cpu | tc-codegen --target=cpu` (fp32). "
           "A host step is a fused group that runs on the reference kernels on the host "
           "(docs/architecture.md, \"Host steps\")."
           + (" This run: `--fast` (tc-codegen `--emit source`: the host-step decisions without compiling the "
              "kernels, so a clang/NVRTC failure would not show)." if fast else "")
           + (" Numerics (`--check`): each artifact run on the export's inputs against PyTorch's fp32 outputs, "
              "max relative error at most 1e-3 (fp32), 5e-3 (fp32 whose convs may use TF32: tc-codegen's "
              "default --allow-tf32=conv) or 2e-2 (fp16); \"err\" in the cells." if check else "")
           + (" " + note if note else ""),
           ""]
    n = len(models)
    exp_ok = sum(m["export"]["status"] == "ok" for m in models.values())
    line = [f"{n} models, {exp_ok} exported"]
    for t in ("cuda", "cpu"):
        rs = [m["targets"][t] for m in models.values() if t in m.get("targets", {})]
        ok = [r for r in rs if r["status"] == "ok"]
        line.append(f"{t}: {len(ok)}/{len(rs)} compile, {sum(not r['host'] for r in ok)} with no host step")
        line[-1] += f", {sum(len(r['host']) for r in ok)} host steps in all"
        line[-1] += f", {sum(bool(r.get('unplanned')) for r in ok)} with no shape plan"
    out += ["; ".join(line) + ".", ""]
    for t in ("cuda", "cpu"):
        out += [f"## To do on {t.upper()}: host steps by (op types, reason)", "",
                "Op types: those the reason names, else the group's. Reasons without value names and dims "
                "(per model below: verbatim). Steps: host steps over all models.", "",
                "| op types | reason | models | steps | which |", "|---|---|---|---|---|"]
        for (ops, why), a in aggregate(models, t):
            out.append(f"| {esc(ops)} | {esc(why)} | {len(a['models'])} | {a['steps']} | "
                       f"{', '.join(a['models'])} |")
        out.append("")
    out += ["## Per model", "", f"| model | suite | export | CUDA {cuda_prec} | CPU fp32 |", "|---|---|---|---|---|"]
    for name, m in models.items():
        e = m["export"]
        ex = "ok" if e["status"] == "ok" else "**failed**"
        out.append(f"| {name} | {m['suite']} | {ex} | {cell(m.get('targets', {}).get('cuda'))} | "
                   f"{cell(m.get('targets', {}).get('cpu'))} |")
    out += ["", "## Failures and host steps per model", ""]
    for name, m in models.items():
        lines = []
        if m["export"]["status"] != "ok":
            lines.append(f"- export failed: `{m['export'].get('error', '?')}`")
        for t, r in m.get("targets", {}).items():
            if r["status"] != "ok":
                lines.append(f"- {t}: {r['stage']} failed: `{r['error']}`")
            elif r.get("numerics") == "failed":
                lines.append(f"- {t}: wrong result: " + (f"err {r['err']:.1e}" if "err" in r else f"`{r['error']}`"))
            groups = {}
            for s in r["host"]:
                groups.setdefault((op_types(s), s["reason"]), []).append(s)  # the whole group's types
            for (ops, why), ss in groups.items():
                nodes = ", ".join(n["node"] for s in ss for n in s["nodes"])
                lines.append(f"- {t}: {len(ss)} x {ops}: {why} (nodes {nodes[:300]}{'...' if len(nodes) > 300 else ''})")
        if lines:
            out += [f"### {name}", ""] + lines + [""]
    return "\n".join(out) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("models_dir")
    ap.add_argument("bindir")
    ap.add_argument("--models", help="comma-separated names (default: every zoo model)")
    ap.add_argument("--targets", default="cuda,cpu")
    ap.add_argument("--md", default=os.path.join(ROOT, "docs", "zoo-coverage.md"))
    ap.add_argument("--json", default=os.path.join(ROOT, "docs", "bench", "zoo-coverage.json"))
    ap.add_argument("--merge", action="store_true", help="keep the other models of an existing --json")
    ap.add_argument("--timeout", type=int, default=900, help="seconds per tool run")
    ap.add_argument("--note", default="", help="a sentence added to the markdown's introduction")
    ap.add_argument("--check", action="store_true",
                    help="run each artifact on the export's inputs and compare with PyTorch's fp32 outputs")
    ap.add_argument("--cuda-precision", choices=["fp16", "fp32"], default="fp16", help="the CUDA artifacts'")
    ap.add_argument("-j", "--jobs", type=int, default=1, help="models surveyed at once")
    ap.add_argument("--fast", action="store_true",
                    help="tc-codegen --emit source: the same host-step decisions without compiling the kernels "
                         "(seconds instead of minutes a model; misses clang/NVRTC errors)")
    args = ap.parse_args()
    if args.check and args.fast:
        ap.error("--check runs the artifacts: it needs them compiled (no --fast)")
    suites = zoo_suites()
    names = args.models.split(",") if args.models else sorted(suites, key=lambda n: SUITES.index(suites[n]))
    status_path = os.path.join(args.models_dir, "export-status.json")
    exported = json.load(open(status_path)) if os.path.exists(status_path) else {}
    models = json.load(open(args.json))["models"] if args.merge and os.path.exists(args.json) else {}
    order = {n: i for i, n in enumerate(suites)}

    def save():
        ms = dict(sorted(models.items(), key=lambda kv: (SUITES.index(kv[1]["suite"]) if kv[1]["suite"] in SUITES
                                                         else 9, order.get(kv[0], 999), kv[0])))
        os.makedirs(os.path.dirname(os.path.abspath(args.json)), exist_ok=True)
        with open(args.json, "w") as f:
            json.dump(dict(bindir=args.bindir, fast=args.fast, date=time.strftime("%Y-%m-%d"), models=ms), f,
                      indent=1)
        with open(args.md, "w") as f:
            f.write(markdown(ms, args.fast, args.note,
                             os.path.relpath(os.path.abspath(args.json), os.path.dirname(os.path.abspath(args.md))),
                             args.cuda_precision, args.check))

    lock = threading.Lock()

    def say(line):  # whole lines, whatever the threads
        with lock:
            print(line, flush=True)

    def survey(name):
        onnx = find_onnx(args.models_dir, name)
        st = exported.get(name, {}).get("exporters", {}).get("dynamo")
        m = dict(suite=suites.get(name, "?"), targets={})
        if onnx is None or (st and st["status"] != "ok"):
            err = st["error"] if st and st.get("error") else f"no ONNX file for {name} in {args.models_dir}"
            m["export"] = dict(status="failed", error=err)
            say(f"{name}: export failed: {err}")
        else:
            m["export"] = dict(status="ok", file=os.path.basename(onnx), kib=os.path.getsize(onnx) >> 10)
            with tempfile.TemporaryDirectory(prefix="zoo-coverage-") as tmp:
                for t in args.targets.split(","):
                    prec = args.cuda_precision if t == "cuda" else "fp32"
                    r = m["targets"][t] = compile_one(args.bindir, onnx, t, tmp, args.timeout, args.fast, prec)
                    if args.check and r["status"] == "ok":
                        r.update(check_one(args.bindir, r["tcx"], onnx[:-len(".onnx")] + ".in", tmp,
                                           args.timeout, prec))
                    r.pop("tcx", None)
                    say(f"{name} {t}: {r['status']}"
                          + (f" ({r['error']})" if r["status"] != "ok" else f", {len(r['host'])} host steps")
                          + (f", no shape plan ({r['unplanned']})" if r.get("unplanned") else "")
                          + (f", numerics {r['numerics']}" + (f" (err {r['err']:.1e})" if "err" in r else
                                                              f" ({r.get('error')})") if "numerics" in r else "")
                          + f", {r['seconds']} s")
        with lock:
            models[name] = m
            save()

    with ThreadPoolExecutor(max(1, args.jobs)) as pool:
        list(pool.map(survey, names))
    save()


if __name__ == "__main__":
    main()
