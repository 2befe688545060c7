"""The C API examples' inputs and outputs, for c-api.test and c-api-cuda.test.

    c_api_inputs.py fill DIR
        refills each DIR/input_K.pb (tc-run --random-inputs --output-dir) as
        docs/examples/example_io.h fills the examples' inputs (element k:
        f32 (k % 11) / 8 - 0.5, i64 k % 3), keeping dtype and shape
    c_api_inputs.py compare PRINTED DIR
        checks each "output I 'NAME': DTYPE[DIMS] V0 V1 ..." line an example
        printed against DIR/output_I.pb (tc-run --target=ref --output-dir):
        the dims, and the values within 1e-5; prints "N outputs match".
"""
import os
import re
import sys

import numpy as np
import onnx
from onnx import numpy_helper


def fill(folder):
    k = 0
    while os.path.exists(path := os.path.join(folder, f"input_{k}.pb")):
        t = onnx.TensorProto()
        with open(path, "rb") as f:
            t.ParseFromString(f.read())
        old = numpy_helper.to_array(t)
        idx = np.arange(old.size)
        if old.dtype == np.float32:
            data = ((idx % 11) / 8 - 0.5).astype(np.float32)
        elif old.dtype == np.int64:
            data = (idx % 3).astype(np.int64)
        else:
            sys.exit(f"c_api_inputs.py: no fill for {path}'s dtype {old.dtype}")
        with open(path, "wb") as f:
            f.write(numpy_helper.from_array(data.reshape(old.shape), t.name).SerializeToString())
        k += 1
    if not k:
        sys.exit(f"c_api_inputs.py: no input_0.pb in {folder}")


def compare(printed, ref):
    lines = re.findall(r"^output (\d+) '[^']*': \w+\[([^\]]*)\]((?: \S+)*)$",
                       open(printed).read(), re.M)
    if not lines:
        sys.exit(f"c_api_inputs.py: no output lines in {printed}")
    for i, dims, values in lines:
        t = onnx.TensorProto()
        with open(os.path.join(ref, f"output_{i}.pb"), "rb") as f:
            t.ParseFromString(f.read())
        want = numpy_helper.to_array(t)
        got_dims = [int(d) for d in dims.split(",") if d]
        if got_dims != list(want.shape):
            sys.exit(f"output {i}: dims {got_dims}, the reference has {list(want.shape)}")
        got = np.array([float(v) for v in values.split()])
        if not len(got) or not np.allclose(got, want.flatten()[:len(got)], rtol=1e-5, atol=1e-5):
            sys.exit(f"output {i}: {got} differs from {want.flatten()[:len(got)]}")
    print(f"{len(lines)} outputs match")


if sys.argv[1] == "fill":
    fill(sys.argv[2])
else:
    compare(sys.argv[2], sys.argv[3])
