"""Writes the two models of tests/vulkan/test_vulkan_precision's 16-bit
kernel cases (dmlc compile --precision f16|bf16; docs/kernels.md "Reduced
precision"), checked in beside this script:

cnn_small.onnx  X [N, 3, 20, 20] -> Conv 3x3 (8, pads 1) -> BatchNormalization
                -> Relu -> MaxPool 2x2 -> Conv depthwise 3x3 (group 8, pads 1,
                bias) -> InstanceNormalization -> Conv 1x1 grouped (group 2,
                8 -> 16) -> Relu -> AveragePool 3x3 stride 2 (pads 1) ->
                GlobalAveragePool -> Flatten -> Gemm (16 -> 10) -> Y [N, 10]
ln_block.onnx   X [N, 6, 32] -> MatMul (32 x 48) -> Add -> LayerNormalization
                (axis -1, scale, B) -> Relu -> MatMul (48 x 16) -> Y [N, 6, 16]

Weights: numpy's default_rng(19), normal with He-like scales; the
BatchNormalization statistics are random (mean ~ N(0, 0.3), var in
[0.5, 1.5)), so it is not an identity. Run with the shared venv:
  /work/venv/bin/python tests/vulkan/precision/gen_precision_models.py
"""
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
rng = np.random.default_rng(19)


def w(name, *shape, scale=None):
    fan_in = int(np.prod(shape[1:])) if len(shape) > 1 else shape[0]
    s = scale if scale is not None else np.sqrt(2.0 / max(fan_in, 1))
    return numpy_helper.from_array((rng.standard_normal(shape) * s).astype(np.float32), name)


def save(graph, name):
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)],
                          producer_name="gen_precision_models.py")
    m.ir_version = 8
    onnx.checker.check_model(m, full_check=True)
    onnx.save(m, os.path.join(HERE, name))


def cnn():
    inits = [
        w("c1_w", 8, 3, 3, 3), w("c1_b", 8, scale=0.1),
        numpy_helper.from_array(rng.uniform(0.5, 1.5, 8).astype(np.float32), "bn_s"),
        numpy_helper.from_array((rng.standard_normal(8) * 0.1).astype(np.float32), "bn_b"),
        numpy_helper.from_array((rng.standard_normal(8) * 0.3).astype(np.float32), "bn_m"),
        numpy_helper.from_array(rng.uniform(0.5, 1.5, 8).astype(np.float32), "bn_v"),
        w("dw_w", 8, 1, 3, 3), w("dw_b", 8, scale=0.1),
        numpy_helper.from_array(rng.uniform(0.5, 1.5, 8).astype(np.float32), "in_s"),
        numpy_helper.from_array((rng.standard_normal(8) * 0.1).astype(np.float32), "in_b"),
        w("pw_w", 16, 4, 1, 1), w("pw_b", 16, scale=0.1),
        w("fc_w", 10, 16), w("fc_b", 10, scale=0.1),
    ]
    nodes = [
        helper.make_node("Conv", ["X", "c1_w", "c1_b"], ["c1"], pads=[1, 1, 1, 1],
                         kernel_shape=[3, 3]),
        helper.make_node("BatchNormalization", ["c1", "bn_s", "bn_b", "bn_m", "bn_v"],
                         ["bn"], epsilon=1e-5),
        helper.make_node("Relu", ["bn"], ["r1"]),
        helper.make_node("MaxPool", ["r1"], ["p1"], kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("Conv", ["p1", "dw_w", "dw_b"], ["dw"], group=8, pads=[1, 1, 1, 1],
                         kernel_shape=[3, 3]),
        helper.make_node("InstanceNormalization", ["dw", "in_s", "in_b"], ["in"],
                         epsilon=1e-5),
        helper.make_node("Conv", ["in", "pw_w", "pw_b"], ["pw"], group=2,
                         kernel_shape=[1, 1]),
        helper.make_node("Relu", ["pw"], ["r2"]),
        helper.make_node("AveragePool", ["r2"], ["ap"], kernel_shape=[3, 3],
                         strides=[2, 2], pads=[1, 1, 1, 1]),
        helper.make_node("GlobalAveragePool", ["ap"], ["gap"]),
        helper.make_node("Flatten", ["gap"], ["flat"]),
        helper.make_node("Gemm", ["flat", "fc_w", "fc_b"], ["Y"], transB=1),
    ]
    g = helper.make_graph(
        nodes, "cnn_small",
        [helper.make_tensor_value_info("X", TensorProto.FLOAT, ["N", 3, 20, 20])],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, ["N", 10])], inits)
    save(g, "cnn_small.onnx")


def ln_block():
    w1 = numpy_helper.from_array(
        (rng.standard_normal((32, 48)) * np.sqrt(2.0 / 32)).astype(np.float32), "w1")
    b1 = numpy_helper.from_array((rng.standard_normal(48) * 0.1).astype(np.float32), "b1")
    sc = numpy_helper.from_array(rng.uniform(0.5, 1.5, 48).astype(np.float32), "ln_s")
    lb = numpy_helper.from_array((rng.standard_normal(48) * 0.1).astype(np.float32), "ln_b")
    w2 = numpy_helper.from_array(
        (rng.standard_normal((48, 16)) * np.sqrt(2.0 / 48)).astype(np.float32), "w2")
    inits = [w1, b1, sc, lb, w2]
    nodes = [
        helper.make_node("MatMul", ["X", "w1"], ["h"]),
        helper.make_node("Add", ["h", "b1"], ["hb"]),
        helper.make_node("LayerNormalization", ["hb", "ln_s", "ln_b"], ["ln"], axis=-1,
                         epsilon=1e-5),
        helper.make_node("Relu", ["ln"], ["r"]),
        helper.make_node("MatMul", ["r", "w2"], ["Y"]),
    ]
    g = helper.make_graph(
        nodes, "ln_block",
        [helper.make_tensor_value_info("X", TensorProto.FLOAT, ["N", 6, 32])],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, ["N", 6, 16])], inits)
    save(g, "ln_block.onnx")


if __name__ == "__main__":
    cnn()
    ln_block()
