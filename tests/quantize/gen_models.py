#!/usr/bin/env python3
"""Writes the small models and calibration files of tests/quantize (checked
in; rerun only to change them): python3 gen_models.py [OUT_DIR]

Needs onnx and numpy (e.g. the venv of scripts/onnx_node_suite.sh).
  tiny_mlp.onnx       x[N,16] -> Gemm(16->8) -> Relu -> Gemm(transB, 8->4) -> y
  tiny_cnn.onnx       x[N,1,8,8] -> Conv(4, 3x3, pad 1) -> Relu -> MaxPool 2
                      -> Flatten -> MatMul(64->3) -> Add(const) -> y
  tiny_mlp_opset11.onnx  tiny_mlp at opset 11 (per-channel needs 13)
  already_qdq.onnx    x -> QuantizeLinear -> DequantizeLinear -> Relu -> y
  name_clash.onnx     tiny_mlp with the Relu's output named 'h1_scale' (a name
                      the QDQ model would give to h1's scale)
  calib_mlp.npy       f32 [64,16]       calib_cnn.npy  f32 [32,1,8,8]
  calib_mlp.csv       17 columns (16 values and a label)
  calib_i64.npy       i64 [8,16]        calib_empty.npy f32 [0,16]
  calib_short.npy     f32 [8,15]
  calib_edge.npy      calib_mlp.npy and three rows of NaN, +inf, -inf (left out
                      of the ranges: the scales are calib_mlp.npy's)
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

out = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__))
rng = np.random.default_rng(19)


def save(model, name, opset=13):
    model.opset_import[0].version = opset
    model.ir_version = 7
    onnx.checker.check_model(model)
    onnx.save(model, os.path.join(out, name))


def f32(a):
    return np.asarray(a, dtype=np.float32)


def mlp():
    w1 = numpy_helper.from_array(f32(rng.normal(0, 0.4, (16, 8))), "fc1.weight")
    b1 = numpy_helper.from_array(f32(rng.normal(0, 0.1, (8,))), "fc1.bias")
    # per-channel matters: output column 3 is 20x smaller
    w2a = rng.normal(0, 0.5, (4, 8))
    w2a[3] *= 0.05
    w2 = numpy_helper.from_array(f32(w2a), "fc2.weight")
    b2 = numpy_helper.from_array(f32(rng.normal(0, 0.1, (4,))), "fc2.bias")
    nodes = [
        helper.make_node("Gemm", ["x", "fc1.weight", "fc1.bias"], ["h1"], name="fc1"),
        helper.make_node("Relu", ["h1"], ["r1"], name="relu1"),
        helper.make_node("Gemm", ["r1", "fc2.weight", "fc2.bias"], ["y"], name="fc2",
                         transB=1),
    ]
    g = helper.make_graph(
        nodes, "tiny_mlp",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 16])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 4])],
        [w1, b1, w2, b2])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])


def cnn():
    w = numpy_helper.from_array(f32(rng.normal(0, 0.3, (4, 1, 3, 3))), "conv.weight")
    b = numpy_helper.from_array(f32(rng.normal(0, 0.1, (4,))), "conv.bias")
    m = numpy_helper.from_array(f32(rng.normal(0, 0.2, (64, 3))), "fc.weight")
    a = numpy_helper.from_array(f32(rng.normal(0, 0.1, (3,))), "fc.bias")
    nodes = [
        helper.make_node("Conv", ["x", "conv.weight", "conv.bias"], ["c"], name="conv",
                         pads=[1, 1, 1, 1], kernel_shape=[3, 3]),
        helper.make_node("Relu", ["c"], ["r"], name="relu"),
        helper.make_node("MaxPool", ["r"], ["p"], name="pool", kernel_shape=[2, 2],
                         strides=[2, 2]),
        helper.make_node("Flatten", ["p"], ["f"], name="flatten"),
        helper.make_node("MatMul", ["f", "fc.weight"], ["mm"], name="fc"),
        helper.make_node("Add", ["mm", "fc.bias"], ["y"], name="fc_bias"),
    ]
    g = helper.make_graph(
        nodes, "tiny_cnn",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 1, 8, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 3])],
        [w, b, m, a])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])


def qdq():
    s = numpy_helper.from_array(f32(0.05), "s")
    z = numpy_helper.from_array(np.array(0, dtype=np.int8), "z")
    nodes = [
        helper.make_node("QuantizeLinear", ["x", "s", "z"], ["q"], name="q"),
        helper.make_node("DequantizeLinear", ["q", "s", "z"], ["d"], name="dq"),
        helper.make_node("Relu", ["d"], ["y"], name="relu"),
    ]
    g = helper.make_graph(
        nodes, "already_qdq",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 16])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 16])], [s, z])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])


save(mlp(), "tiny_mlp.onnx")
save(mlp(), "tiny_mlp_opset11.onnx", opset=11)
save(cnn(), "tiny_cnn.onnx")
save(qdq(), "already_qdq.onnx")
clash = onnx.load(os.path.join(out, "tiny_mlp.onnx"))
clash.graph.node[1].output[0] = "h1_scale"
clash.graph.node[2].input[0] = "h1_scale"
save(clash, "name_clash.onnx")
xm = f32(rng.normal(0, 1, (64, 16)))
np.save(os.path.join(out, "calib_mlp.npy"), xm)
np.save(os.path.join(out, "calib_cnn.npy"), f32(rng.uniform(0, 1, (32, 1, 8, 8))))
np.save(os.path.join(out, "calib_i64.npy"), np.arange(8 * 16, dtype=np.int64).reshape(8, 16))
np.save(os.path.join(out, "calib_empty.npy"), np.zeros((0, 16), dtype=np.float32))
np.save(os.path.join(out, "calib_short.npy"), np.zeros((8, 15), dtype=np.float32))
edge = np.concatenate([xm, np.full((1, 16), np.nan), np.full((1, 16), np.inf),
                       np.full((1, 16), -np.inf)]).astype(np.float32)
np.save(os.path.join(out, "calib_edge.npy"), edge)
with open(os.path.join(out, "calib_mlp.csv"), "w") as f:
    for r in xm[:16]:
        f.write(",".join("%.6f" % v for v in r) + ",%d\n" % (int(abs(r[0]) * 3) % 4))
