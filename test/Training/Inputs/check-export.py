"""Checks tc-import --export-onnx (export-weights.test).
   check-export.py same MODEL.onnx CKPT TRAINED.onnx: TRAINED is MODEL with the
       checkpoint's tensors as initializers, everything else unchanged.
   check-export.py ort TRAINED.onnx X.pb OUTDIR: OUTDIR/input_0.pb (X) and
       OUTDIR/output_0.pb, onnxruntime's outputs of TRAINED (for tc-run --compare).
   check-export.py external MODEL.onnx OUT.onnx: MODEL with every initializer in
       external data (OUT.data beside OUT)."""
import os
import sys

import numpy as np
import onnx
from onnx import numpy_helper

if sys.argv[1] == "external":
    onnx.save(onnx.load(sys.argv[2]), sys.argv[3], save_as_external_data=True,
              location=os.path.basename(sys.argv[3]) + ".data", size_threshold=0)
    sys.exit(0)
if sys.argv[1] == "same":
    from safetensors.numpy import load_file
    model, ckpt, trained = onnx.load(sys.argv[2]), load_file(sys.argv[3]), onnx.load(sys.argv[4])
    before = {t.name: numpy_helper.to_array(t) for t in model.graph.initializer}
    after = {t.name: numpy_helper.to_array(t) for t in trained.graph.initializer}
    if list(before) != list(after):
        sys.exit("initializers differ: %s vs %s" % (list(before), list(after)))
    for name, v in after.items():
        want = ckpt.get(name, before[name])
        if v.dtype != want.dtype or not np.array_equal(v, want):
            sys.exit("initializer %s is not the %s" % (name, "checkpoint's" if name in ckpt else "model's"))
    del model.graph.initializer[:]
    del trained.graph.initializer[:]
    if model.SerializeToString() != trained.SerializeToString():
        sys.exit("the graph changed")
    changed = sum(not np.array_equal(before[k], after[k]) for k in ckpt)
    print("%d initializers from the checkpoint (%d changed by training), %d kept, graph unchanged" %
          (len(ckpt), changed, len(after) - len(ckpt)))
else:
    import onnxruntime as ort
    x = numpy_helper.to_array(onnx.load_tensor(sys.argv[3]))
    os.makedirs(sys.argv[4], exist_ok=True)
    sess = ort.InferenceSession(sys.argv[2], providers=["CPUExecutionProvider"])
    for i, (prefix, t) in enumerate([("input", x)] + [("output", y) for y in sess.run(None, {"x": x})]):
        name = "%s_%d.pb" % (prefix, 0 if prefix == "input" else i - 1)
        onnx.save_tensor(numpy_helper.from_array(t), os.path.join(sys.argv[4], name))
