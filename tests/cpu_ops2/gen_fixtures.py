#!/usr/bin/python3
"""Generates the small ONNX models that tests/cpu_ops2/test_onnx_ops2.c imports.

Run with Debian's python3-onnx:  /usr/bin/python3 tests/cpu_ops2/gen_fixtures.py
The outputs (tests/cpu_ops2/fixtures/) are committed and deterministic.
"""
import os

import onnx
from onnx import TensorProto, helper

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures")


def save(nodes, inputs, outputs, opset, fname, inits=()):
    g = helper.make_graph(nodes, "g", inputs, outputs, list(inits))
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)],
                          producer_name="gen_fixtures")
    m.ir_version = 7
    onnx.checker.check_model(m)
    with open(os.path.join(OUT, fname), "wb") as f:
        f.write(m.SerializeToString())


def vi(name, elem, shape):
    return helper.make_tensor_value_info(name, elem, shape)


F = TensorProto.FLOAT
# Add-6 with legacy broadcast: B [3] placed at axis 1 of A [2,3,4].
save([helper.make_node("Add", ["a", "b"], ["y"], name="add", broadcast=1, axis=1)],
     [vi("a", F, [2, 3, 4]), vi("b", F, [3])], [vi("y", F, [2, 3, 4])], 6,
     "add6_axis.onnx")
# Mul-1 with consumed_inputs and trailing broadcast (no axis).
save([helper.make_node("Mul", ["a", "b"], ["y"], name="mul", broadcast=1,
                       consumed_inputs=[0, 0])],
     [vi("a", F, [2, 3]), vi("b", F, [3])], [vi("y", F, [2, 3])], 1, "mul1.onnx")
# Relu-1 with consumed_inputs, then Hardmax-1 (2-D coercion at axis 1).
save([helper.make_node("Relu", ["x"], ["r"], name="relu", consumed_inputs=[0]),
      helper.make_node("Hardmax", ["r"], ["y"], name="hardmax")],
     [vi("x", F, [2, 3, 4])], [vi("y", F, [2, 3, 4])], 1, "relu1_hardmax1.onnx")
# CastLike-15: to a graph input's dtype (known: Cast) and to a result's
# (CastLike kept).
save([helper.make_node("CastLike", ["x", "like"], ["c"], name="castlike_known"),
      helper.make_node("Abs", ["like"], ["l2"], name="abs"),
      helper.make_node("CastLike", ["x", "l2"], ["y"], name="castlike_result")],
     [vi("x", F, [3]), vi("like", TensorProto.INT64, [1])],
     [vi("c", TensorProto.INT64, [3]), vi("y", TensorProto.INT64, [3])], 15,
     "castlike.onnx")
