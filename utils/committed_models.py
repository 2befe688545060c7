"""The committed models (models/ci/*.onnx, models/small/*/model.onnx) that the
report and benchmark scripts in utils/ walk, and their short names; the zoo's
models as models/manifest.json lists them."""
import glob, json, os

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def committed_models():
    ms = sorted(glob.glob(os.path.join(ROOT, "models", "ci", "*.onnx")))
    ms += sorted(glob.glob(os.path.join(ROOT, "models", "small", "*", "model.onnx")))
    return ms


def name_of(path):
    """models/small/bert_tiny/model.onnx -> small/bert_tiny; models/ci/cnn.onnx -> ci/cnn."""
    rel = os.path.relpath(path, os.path.join(ROOT, "models"))
    return rel[: -len("/model.onnx")] if rel.endswith("/model.onnx") else rel[: -len(".onnx")]


def manifest_zoo():
    """name -> suite of the zoo models in models/manifest.json (the entries with a suite)."""
    with open(os.path.join(ROOT, "models", "manifest.json")) as f:
        m = json.load(f)
    return {e["name"]: e["suite"] for e in m["models"] if "suite" in e}
