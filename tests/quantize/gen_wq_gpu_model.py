#!/usr/bin/env python3
"""Writes wq_gpu_model.onnx, the model of test_quantize_wq_gpu.sh (MatMulWQ
on the GPU targets; checked in, rerun only to change it):
python3 gen_wq_gpu_model.py [OUT_DIR]   (needs onnx and numpy)

  opset 13, x[batch, 37] -> MatMul(W1 [37, 45]) -> Relu
                         -> Gemm(W2 [3, 45], transB=1, bias [3]) -> y [batch, 3]

K = 37 and 45 are odd and not multiples of the groups (8, 16, 32); N = 45
fills one 32-column panel and part of a second (int4: an odd count of
nibbles in the last panel row); N = 3 less than a panel. W1's column 5 is
all zero (scale 1), column 6 holds a single nonzero value.
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

out = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__))
rng = np.random.default_rng(1945)
w1 = (rng.standard_normal((37, 45)) * 0.2).astype(np.float32)
w1[:, 5] = 0.0
w1[:, 6] = 0.0
w1[17, 6] = -3.5
w2 = (rng.standard_normal((3, 45)) * 0.2).astype(np.float32)
b2 = np.array([0.1, -0.2, 0.3], np.float32)
g = helper.make_graph(
    [
        helper.make_node("MatMul", ["x", "W1"], ["h"], name="mm1"),
        helper.make_node("Relu", ["h"], ["r"], name="relu"),
        helper.make_node("Gemm", ["r", "W2", "B2"], ["y"], name="gemm2", transB=1),
    ],
    "wq_gpu",
    [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 37])],
    [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 3])],
    [numpy_helper.from_array(w1, "W1"), numpy_helper.from_array(w2, "W2"),
     numpy_helper.from_array(b2, "B2")],
)
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
m.ir_version = 8
onnx.checker.check_model(m)
onnx.save(m, os.path.join(out, "wq_gpu_model.onnx"))
