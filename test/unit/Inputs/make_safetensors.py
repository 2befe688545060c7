#!/usr/bin/env python3
"""Writes the safetensors files SafetensorsTest.cpp checks tc's reader and
writer against, with Hugging Face's own implementation (pip install
safetensors numpy; these came from safetensors 0.8.0, numpy 2.4). Run once,
from anywhere; the outputs beside this script are committed:

  python-numpy.safetensors  safetensors.numpy.save_file: every NumPy dtype,
                            a 0-d and an empty tensor, one metadata entry
  python-bf16.safetensors   safetensors.serialize_file with a BF16 tensor
                            (NumPy has no bfloat16)

The values are spelled out again in SafetensorsTest.cpp (pythonTensors):
change both together.
"""
import os

import numpy as np
import safetensors
from safetensors.numpy import save_file

here = os.path.dirname(os.path.abspath(__file__))

tensors = {
    "f64": np.array([[1.5, -2.25, 1e300]], dtype=np.float64),
    "f32": (np.arange(6, dtype=np.float32) * 0.5 - 1).reshape(2, 3),
    "f16": np.array([1.0, -0.5, 65504.0, 0.0], dtype=np.float16),
    "i64": np.array([-(2**63), 2**63 - 1], dtype=np.int64),
    "i32": np.array([-7, 0, 2**31 - 1], dtype=np.int32),
    "i16": np.array([[-32768], [32767]], dtype=np.int16),
    "i8": np.array([-128, 5, 127], dtype=np.int8),
    "u64": np.array([2**64 - 1, 3], dtype=np.uint64),
    "u32": np.array([4000000000], dtype=np.uint32),
    "u16": np.array([65535, 1], dtype=np.uint16),
    "u8": np.array([0, 200, 255], dtype=np.uint8),
    "bool": np.array([True, False, True]),
    "scalar": np.array(42.0, dtype=np.float32),
    "empty": np.zeros((0, 4), dtype=np.float32),
}
save_file(tensors, os.path.join(here, "python-numpy.safetensors"),
          metadata={"producer": "make_safetensors.py"})

# bf16 bit patterns: 1.0, -2.0, +inf, 0.15625.
bf16 = np.array([[0x3F80, 0xC000], [0x7F80, 0x3E20]], dtype=np.uint16)
spec = safetensors.TensorSpec(dtype="bfloat16", shape=bf16.shape, data_ptr=bf16.ctypes.data,
                              data_len=bf16.nbytes)
safetensors.serialize_file({"bf16": spec}, os.path.join(here, "python-bf16.safetensors"))
