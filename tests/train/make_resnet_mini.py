"""Writes resnet_mini.onnx (beside this script): a ResNet-18-shaped
classifier small enough to train on lavapipe, for test_train_cnn_device.c.
Run with onnx 1.23 and numpy:
    python3 tests/train/make_resnet_mini.py

  x f32[N,3,32,32] -> Conv(8, 7x7, stride 2, pads 3) -> BatchNormalization
                   -> Relu -> MaxPool(3x3, stride 2, pads 1)          [N,8,8,8]
  block 1 (8 -> 8):   Conv 3x3 -> BN -> Relu -> Conv 3x3 -> BN, + x, Relu
  block 2 (8 -> 16, stride 2): Conv 3x3 s2 -> BN -> Relu -> Conv 3x3 -> BN,
                   + shortcut, Relu                                   [N,16,4,4]
      shortcut: AveragePool(2x2, stride 2) -> Conv 1x1 -> BN (ResNet-D's
      downsampling, so that training runs AveragePool's gradient too)
  -> GlobalAveragePool -> Flatten -> Gemm(16 -> 5) -> y f32[N,5]

torchvision's resnet18 is this with 64..512 channels, four stages of two
blocks and a 1x1 stride-2 Conv as the shortcut. The BatchNormalization
nodes are in inference form (one output), as torch.onnx exports them;
`dmlc train` puts them in training mode (batch statistics, running
mean/variance updated). Weights: He-normal from numpy's default_rng(18),
BN scale 1, bias 0, mean 0, variance 1; biases zero (untrained).
"""
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

rng = np.random.default_rng(18)
inits = []
nodes = []


def he(name, shape):
    fan_in = int(np.prod(shape[1:]))
    inits.append(numpy_helper.from_array(
        (rng.standard_normal(shape) * np.sqrt(2.0 / fan_in)).astype(np.float32), name))
    return name


def conv(x, name, cin, cout, k, stride=1, pad=0):
    w = he(name + ".w", (cout, cin, k, k))
    nodes.append(helper.make_node("Conv", [x, w], [name], kernel_shape=[k, k],
                                  strides=[stride, stride], pads=[pad] * 4))
    return name


def bn(x, name, c):
    for suffix, value in (("s", 1.0), ("b", 0.0), ("m", 0.0), ("v", 1.0)):
        inits.append(numpy_helper.from_array(np.full(c, value, np.float32),
                                             name + "." + suffix))
    nodes.append(helper.make_node("BatchNormalization",
                                  [x] + [name + "." + s for s in "sbmv"], [name],
                                  epsilon=1e-5, momentum=0.9))
    return name


def relu(x, name):
    nodes.append(helper.make_node("Relu", [x], [name]))
    return name


def block(x, name, cin, cout, stride):
    h = relu(bn(conv(x, name + ".c1", cin, cout, 3, stride, 1), name + ".bn1", cout),
             name + ".r1")
    h = bn(conv(h, name + ".c2", cout, cout, 3, 1, 1), name + ".bn2", cout)
    s = x
    if stride != 1 or cin != cout:
        nodes.append(helper.make_node("AveragePool", [x], [name + ".ap"],
                                      kernel_shape=[stride, stride],
                                      strides=[stride, stride]))
        s = bn(conv(name + ".ap", name + ".sc", cin, cout, 1), name + ".bnsc", cout)
    nodes.append(helper.make_node("Add", [h, s], [name + ".add"]))
    return relu(name + ".add", name + ".out")


h = relu(bn(conv("x", "stem", 3, 8, 7, 2, 3), "stem.bn", 8), "stem.r")
nodes.append(helper.make_node("MaxPool", [h], ["pool"], kernel_shape=[3, 3],
                              strides=[2, 2], pads=[1, 1, 1, 1]))
h = block("pool", "l1", 8, 8, 1)
h = block(h, "l2", 8, 16, 2)
nodes.append(helper.make_node("GlobalAveragePool", [h], ["gap"]))
nodes.append(helper.make_node("Flatten", ["gap"], ["flat"]))
inits.append(numpy_helper.from_array(
    (rng.standard_normal((5, 16)) * np.sqrt(1.0 / 16)).astype(np.float32), "fc.w"))
inits.append(numpy_helper.from_array(np.zeros(5, np.float32), "fc.b"))
nodes.append(helper.make_node("Gemm", ["flat", "fc.w", "fc.b"], ["y"], transB=1))
graph = helper.make_graph(
    nodes, "resnet_mini",
    [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 3, 32, 32])],
    [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 5])], inits)
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)],
                          producer_name="make_resnet_mini.py")
model.ir_version = 8
onnx.checker.check_model(model)
onnx.save(model, os.path.join(os.path.dirname(os.path.abspath(__file__)), "resnet_mini.onnx"))
