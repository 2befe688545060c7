"""check-skipped.py OPTIMIZER_CKPT MODEL_CKPT PARAMS.npz: a one-step fp16 run
whose step overflowed: not taken (optimizer.step 0), the loss scale halved
from 65536, every parameter its initial value bit for bit."""
import sys

import numpy as np
from safetensors.numpy import load_file

opt, model, init = load_file(sys.argv[1]), load_file(sys.argv[2]), np.load(sys.argv[3])
step, scale = float(opt["optimizer.step"]), float(opt["amp.loss_scale"])
changed = [k for k in init.files if not np.array_equal(model[k], init[k])]
if step != 0 or scale != 32768 or changed:
    sys.exit("step %g, loss scale %g, changed: %s" % (step, scale, changed))
print("skipped: step 0, loss scale %g, %d parameters unchanged" % (scale, len(init.files)))
