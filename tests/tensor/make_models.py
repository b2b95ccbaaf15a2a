"""Writes the one-node ONNX models test_tensor_compiled.c compiles and runs
against the eager ops (checked in beside this script; regenerate with
    .cache/onnx-1.23.2/venv/bin/python tests/tensor/make_models.py tests/tensor
). Every operand is a graph input except ReduceSum's axes."""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def model(name, node, inputs, outputs, inits=()):
    g = helper.make_graph([node], name, inputs, outputs, list(inits))
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    onnx.checker.check_model(m)
    return m


def vi(name, shape):
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, shape)


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "."
    ms = {
        "add_bcast": model("add_bcast", helper.make_node("Add", ["A", "B"], ["Y"]),
                           [vi("A", [16, 1]), vi("B", [16])], [vi("Y", [16, 16])]),
        "exp": model("exp", helper.make_node("Exp", ["X"], ["Y"]), [vi("X", [16])],
                     [vi("Y", [16])]),
        "matmul": model("matmul", helper.make_node("MatMul", ["A", "B"], ["Y"]),
                        [vi("A", [2, 3, 5]), vi("B", [5, 4])], [vi("Y", [2, 3, 4])]),
        "conv": model("conv",
                      helper.make_node("Conv", ["X", "W", "B"], ["Y"], pads=[1, 1, 1, 1],
                                       strides=[2, 2]),
                      [vi("X", [1, 2, 5, 5]), vi("W", [3, 2, 3, 3]), vi("B", [3])],
                      [vi("Y", [1, 3, 3, 3])]),
        # ceil_mode whose last window would start in the end padding: ONNX
        # and PyTorch drop it (3 windows -> 2; issue 15's eager/compiled drift)
        "maxpool_ceil": model("maxpool_ceil",
                              helper.make_node("MaxPool", ["X"], ["Y"], kernel_shape=[2, 2],
                                               strides=[2, 2], pads=[0, 0, 1, 1],
                                               ceil_mode=1),
                              [vi("X", [1, 1, 4, 4])], [vi("Y", [1, 1, 2, 2])]),
        # Slice with a start before the axis and a negative step: the
        # operator text clamps the start to [0, dim - 1] (onnxruntime 1.31.1:
        # [x0]; numpy and onnx.reference: []); constants, so the dims are
        # static at compile time (issue 15: the CPU kernel clamped otherwise)
        "slice_neg_start": model("slice_neg_start",
                                 helper.make_node("Slice", ["X", "s", "e", "a", "p"], ["Y"]),
                                 [vi("X", [3])], [vi("Y", [1])],
                                 [numpy_helper.from_array(np.array([v], np.int64), k)
                                  for k, v in (("s", -4), ("e", -10), ("a", 0), ("p", -1))]),
        "reducesum": model("reducesum",
                           helper.make_node("ReduceSum", ["X", "axes"], ["Y"], keepdims=0),
                           [vi("X", [3, 16])], [vi("Y", [3])],
                           [numpy_helper.from_array(np.array([1], np.int64), "axes")]),
        "concat": model("concat", helper.make_node("Concat", ["A", "B"], ["Y"], axis=1),
                        [vi("A", [2, 3]), vi("B", [2, 5])], [vi("Y", [2, 8])]),
        "gather": model("gather", helper.make_node("Gather", ["X", "I"], ["Y"], axis=1),
                        [vi("X", [4, 5]),
                         helper.make_tensor_value_info("I", TensorProto.INT64, [2, 3])],
                        [vi("Y", [4, 2, 3])]),
        # Softmax over rows of 16 (one invocation per row) and of 1000 (a
        # workgroup per row): the eager library's kernels are the compiled
        # path's (scheduled for run-time dims)
        "softmax": model("softmax", helper.make_node("Softmax", ["X"], ["Y"], axis=-1),
                         [vi("X", [4, 16])], [vi("Y", [4, 16])]),
        "softmax_long": model("softmax_long",
                              helper.make_node("LogSoftmax", ["X"], ["Y"], axis=1),
                              [vi("X", [3, 1000])], [vi("Y", [3, 1000])]),
        "flatten": model("flatten", helper.make_node("Flatten", ["X"], ["Y"], axis=2),
                         [vi("X", [2, 3, 4])], [vi("Y", [6, 4])]),
        "layernorm": model("layernorm",
                           helper.make_node("LayerNormalization", ["X", "S", "B"], ["Y"],
                                            axis=-1, epsilon=1e-5),
                           [vi("X", [3, 8]), vi("S", [8]), vi("B", [8])], [vi("Y", [3, 8])]),
        "batchnorm": model("batchnorm",
                           helper.make_node("BatchNormalization",
                                            ["X", "S", "B", "M", "V"], ["Y"], epsilon=1e-5),
                           [vi("X", [2, 3, 4]), vi("S", [3]), vi("B", [3]), vi("M", [3]),
                            vi("V", [3])], [vi("Y", [2, 3, 4])]),
    }
    for k, m in ms.items():
        onnx.save(m, os.path.join(out, k + ".onnx"))


if __name__ == "__main__":
    main()
