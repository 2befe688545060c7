"""non-finite.py DIR: per output_<i>.pb of DIR, "output i: N NaN, M inf" for
those that hold any, "output i: finite" for the others."""
import glob
import os
import sys

import numpy as np
import onnx
from onnx import numpy_helper

for i in range(len(glob.glob(os.path.join(sys.argv[1], "output_*.pb")))):
    x = numpy_helper.to_array(onnx.load_tensor(os.path.join(sys.argv[1], "output_%d.pb" % i)))
    nan, inf = int(np.isnan(x).sum()), int(np.isinf(x).sum())
    print("output %d: %s" % (i, "%d NaN, %d inf" % (nan, inf) if nan or inf else "finite"))
