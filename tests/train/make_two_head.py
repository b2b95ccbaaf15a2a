"""Writes two_head.onnx (beside this script): the two-input, two-output model
of test_train_multi.c. Run with onnx 1.23 and numpy:
    python3 tests/train/make_two_head.py

  a f32[N,4] -> MatMul(4x8) + Add -> Relu -\
                                             Concat (N,16) -> MatMul(16x3) + Add -> cls f32[N,3]
  b f32[N,3] -> MatMul(3x8) + Add -> Relu -/               -> MatMul(16x1) + Add -> reg f32[N,1]

Weights: Glorot-uniform from numpy's default_rng(22), biases zero (untrained).
"""
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

rng = np.random.default_rng(22)


def glorot(fan_in, fan_out):
    lim = np.sqrt(6.0 / (fan_in + fan_out))
    return rng.uniform(-lim, lim, size=(fan_in, fan_out)).astype(np.float32)


inits = [
    numpy_helper.from_array(glorot(4, 8), "wa"),
    numpy_helper.from_array(np.zeros(8, np.float32), "ba"),
    numpy_helper.from_array(glorot(3, 8), "wb"),
    numpy_helper.from_array(np.zeros(8, np.float32), "bb"),
    numpy_helper.from_array(glorot(16, 3), "wc"),
    numpy_helper.from_array(np.zeros(3, np.float32), "bc"),
    numpy_helper.from_array(glorot(16, 1), "wr"),
    numpy_helper.from_array(np.zeros(1, np.float32), "br"),
]
nodes = [
    helper.make_node("MatMul", ["a", "wa"], ["a1"], name="dense_a"),
    helper.make_node("Add", ["a1", "ba"], ["a2"], name="dense_a_bias"),
    helper.make_node("Relu", ["a2"], ["ha"], name="relu_a"),
    helper.make_node("MatMul", ["b", "wb"], ["b1"], name="dense_b"),
    helper.make_node("Add", ["b1", "bb"], ["b2"], name="dense_b_bias"),
    helper.make_node("Relu", ["b2"], ["hb"], name="relu_b"),
    helper.make_node("Concat", ["ha", "hb"], ["h"], axis=1, name="concat"),
    helper.make_node("MatMul", ["h", "wc"], ["c1"], name="head_cls"),
    helper.make_node("Add", ["c1", "bc"], ["cls"], name="head_cls_bias"),
    helper.make_node("MatMul", ["h", "wr"], ["r1"], name="head_reg"),
    helper.make_node("Add", ["r1", "br"], ["reg"], name="head_reg_bias"),
]
graph = helper.make_graph(
    nodes,
    "two_head",
    [
        helper.make_tensor_value_info("a", TensorProto.FLOAT, ["N", 4]),
        helper.make_tensor_value_info("b", TensorProto.FLOAT, ["N", 3]),
    ],
    [
        helper.make_tensor_value_info("cls", TensorProto.FLOAT, ["N", 3]),
        helper.make_tensor_value_info("reg", TensorProto.FLOAT, ["N", 1]),
    ],
    inits,
)
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)],
                          producer_name="make_two_head.py")
model.ir_version = 8
onnx.checker.check_model(model)
onnx.save(model, os.path.join(os.path.dirname(os.path.abspath(__file__)), "two_head.onnx"))
