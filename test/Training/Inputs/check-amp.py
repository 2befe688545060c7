"""Checks an fp16 train run (amp.test).
   check-amp.py LOG OPTIMIZER_CKPT STEPS: the loss fell; the step count and the scale are consistent.
   check-amp.py --skipped OPTIMIZER_CKPT MODEL_CKPT MODEL.onnx: every step was skipped."""
import re
import sys

import numpy as np
from safetensors.numpy import load_file

if sys.argv[1] == "--skipped":
    import onnx
    from onnx import numpy_helper
    opt, model = load_file(sys.argv[2]), load_file(sys.argv[3])
    init = {t.name: numpy_helper.to_array(t) for t in onnx.load(sys.argv[4]).graph.initializer}
    same = all(np.array_equal(v, init[k]) for k, v in model.items() if "running" not in k)
    if float(opt["optimizer.step"]) != 0 or not same:
        sys.exit("a step was taken: step %s, weights unchanged %s" % (opt["optimizer.step"], same))
    print("every step skipped: step 0, loss scale %.3g, weights %s" %
          (float(opt["amp.loss_scale"]), "unchanged" if same else "changed"))
    sys.exit(0)
losses = [float(m) for m in re.findall(r"^step \d+/\d+  loss (\S+)", open(sys.argv[1]).read(), re.M)]
opt, steps = load_file(sys.argv[2]), int(sys.argv[3])
taken, scale = int(opt["optimizer.step"]), float(opt["amp.loss_scale"])
skipped = steps - taken
# Each skipped step halved the scale from 65536; no growth within 2000 steps.
if not (0 < taken <= steps and scale == 65536.0 / 2 ** skipped and losses[-1] < losses[0]):
    sys.exit("inconsistent: losses %s, %d taken of %d, scale %g" % (losses, taken, steps, scale))
print("loss fell from %.4f to %.4f; %d steps, %d taken; loss scale %g" % (losses[0], losses[-1], steps, taken, scale))
