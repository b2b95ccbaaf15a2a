"""Writes fcn_sym.onnx (beside this script): the fully-convolutional
classifier of test_train_symdims.c, whose batch N and image size H, W are
symbolic. Run with onnx 1.23 and numpy:
    python3 tests/train/make_fcn_sym.py

  x f32[N,3,H,W] -> Conv(8, 3x3, stride 1, pads 1) -> Relu
                 -> Conv(12, 3x3, stride 2, pads 1,1,0,0) -> Relu
                 -> Conv(5, 1x1) -> GlobalAveragePool -> Flatten -> y f32[N,5]

The stride-2 Conv takes the first Conv's output, so training needs its
input gradient over symbolic H, W (ConvInputGrad); with begin pads only,
an odd extent leaves one input row no window reaches (output_padding 1),
an even one none. Weights: He-normal from numpy's default_rng(14), biases
zero (untrained).
"""
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

rng = np.random.default_rng(14)


def he(shape):
    fan_in = int(np.prod(shape[1:]))
    return (rng.standard_normal(shape) * np.sqrt(2.0 / fan_in)).astype(np.float32)


inits = [
    numpy_helper.from_array(he((8, 3, 3, 3)), "w1"),
    numpy_helper.from_array(np.zeros(8, np.float32), "b1"),
    numpy_helper.from_array(he((12, 8, 3, 3)), "w2"),
    numpy_helper.from_array(np.zeros(12, np.float32), "b2"),
    numpy_helper.from_array(he((5, 12, 1, 1)), "w3"),
    numpy_helper.from_array(np.zeros(5, np.float32), "b3"),
]
nodes = [
    helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], pads=[1, 1, 1, 1]),
    helper.make_node("Relu", ["c1"], ["r1"]),
    helper.make_node("Conv", ["r1", "w2", "b2"], ["c2"], strides=[2, 2], pads=[1, 1, 0, 0]),
    helper.make_node("Relu", ["c2"], ["r2"]),
    helper.make_node("Conv", ["r2", "w3", "b3"], ["c3"]),
    helper.make_node("GlobalAveragePool", ["c3"], ["g"]),
    helper.make_node("Flatten", ["g"], ["y"]),
]
graph = helper.make_graph(
    nodes, "fcn_sym",
    [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 3, "H", "W"])],
    [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 5])], inits)
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)],
                          producer_name="make_fcn_sym.py")
model.ir_version = 8
onnx.checker.check_model(model)
onnx.save(model, os.path.join(os.path.dirname(os.path.abspath(__file__)), "fcn_sym.onnx"))
