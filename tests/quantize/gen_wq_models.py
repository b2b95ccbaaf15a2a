#!/usr/bin/env python3
"""Writes the models of the weight-only tests (test_quantize_wq.sh; checked
in, rerun only to change them): python3 gen_wq_models.py [OUT_DIR]

Needs onnx and numpy (e.g. the venv of scripts/onnx_node_suite.sh).
  wq_model.onnx   opset 13, x[N,40] ->
                    MatMul(W1 [40,24]; K=40: groups of 32 end in one of 8;
                           column 0 all zero, column 1 denormals, column 2
                           around 1e30, column 3 -0 and 1, a tie 0.5*s)
                    -> Relu -> Gemm(W2 [16,24], transB=1, bias) = h2
                    -> MatMul(W3 [16,16]) -> MatMul(W3) (one weight, two nodes)
                    -> Gemm(W4 [16,8], transB=0) -> y
                  r = ReduceMean(h2, axes=[1]) (an `axes` attribute, which
                  opset 18 moved to an input: the move to opset 21 rewrites it)
  wq_nan.onnx     x[N,8] -> MatMul(W [8,4] holding a NaN) -> y (left f32)
  wq_no_weights.onnx  MatMul of two graph inputs, Add: nothing to quantize
  wq_bad_block.onnx  DequantizeLinear(block_size 4) of W [8,4] with a [3,4] scale
                  (2 rows wanted): dmlc compile's error
  wq_user_4bit.onnx  a user's blocked QDQ model (opset 21, onnx.helper's own
                  int32_data packing): x[N,40] -> MatMul(DQ(UINT4 [40,6], scale
                  [3,6], UINT4 zero point, axis 0, block 16)) -> MatMul(DQ(INT4
                  [6,20], scale [6,3], axis 1, block 8)) -> MatMul(DQ(INT8
                  [20,5], scale [2,5], INT8 zero point, axis 0, block 16)) -> y
  wq_dft.onnx     opset 17 DFT (its axis became an input at 20: refused)
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

out = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__))
rng = np.random.default_rng(194)


def f32(a):
    return np.asarray(a, dtype=np.float32)


def save(model, name, opset):
    model.opset_import[0].version = opset
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save(model, os.path.join(out, name))


def init(name, a):
    return numpy_helper.from_array(f32(a), name)


def vi(name, shape):
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, shape)


def model():
    w1 = rng.standard_normal((40, 24)) * 0.3
    w1[:, 0] = 0.0
    w1[:, 1] = rng.standard_normal(40) * 1e-39  # denormals: scale < FLT_MIN -> 1
    w1[:, 2] = rng.standard_normal(40) * 1e30
    w1[:, 3] = 1.0
    w1[0:16, 3] = -0.0
    w1[32:40, 4] = [1.0, 0.5 / 127, 1.5 / 127, 0, 0, 0, 0, 0]  # ties in the tail group
    w2 = rng.standard_normal((16, 24)) * 0.2
    b2 = rng.standard_normal(16) * 0.1
    w3 = rng.standard_normal((16, 16)) * 0.25
    w4 = rng.standard_normal((16, 8)) * 0.25
    nodes = [
        helper.make_node("MatMul", ["x", "W1"], ["h1"], name="mm1"),
        helper.make_node("Relu", ["h1"], ["a1"], name="relu1"),
        helper.make_node("Gemm", ["a1", "W2", "B2"], ["h2"], name="fc2", transB=1),
        helper.make_node("MatMul", ["h2", "W3"], ["h3"], name="mm3a"),
        helper.make_node("MatMul", ["h3", "W3"], ["h4"], name="mm3b"),
        helper.make_node("Gemm", ["h4", "W4"], ["y"], name="fc4"),
        helper.make_node("ReduceMean", ["h2"], ["r"], name="mean", axes=[1], keepdims=1),
    ]
    g = helper.make_graph(nodes, "wq_model", [vi("x", ["N", 40])],
                          [vi("y", ["N", 8]), vi("r", ["N", 1])],
                          [init("W1", w1), init("W2", w2), init("B2", b2),
                           init("W3", w3), init("W4", w4)])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])


def nan_model():
    w = rng.standard_normal((8, 4))
    w[3, 1] = np.nan
    g = helper.make_graph([helper.make_node("MatMul", ["x", "W"], ["y"], name="mm")],
                          "wq_nan", [vi("x", ["N", 8])], [vi("y", ["N", 4])], [init("W", w)])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])


def no_weights():
    nodes = [helper.make_node("MatMul", ["a", "b"], ["m"], name="mm"),
             helper.make_node("Add", ["m", "c"], ["y"], name="add")]
    g = helper.make_graph(nodes, "wq_no_weights", [vi("a", [2, 3]), vi("b", [3, 4])],
                          [vi("y", [2, 4])], [init("c", np.ones(4))])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])


def dft():
    nodes = [helper.make_node("MatMul", ["x", "W"], ["m"], name="mm"),
             helper.make_node("Reshape", ["m", "shp"], ["m3"], name="rs"),
             helper.make_node("DFT", ["m3"], ["y"], name="dft", axis=1)]
    g = helper.make_graph(nodes, "wq_dft", [vi("x", [1, 8])], [vi("y", [1, 4, 2])],
                          [init("W", rng.standard_normal((8, 4))),
                           numpy_helper.from_array(np.array([1, 4, 1], np.int64), "shp")])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])


def bad_block():
    w = numpy_helper.from_array(rng.integers(-7, 8, (8, 4)).astype(np.int8), "Wq")
    sc = init("Ws", np.full((3, 4), 0.1))  # ceil(8 / 4) = 2 rows wanted
    nodes = [helper.make_node("DequantizeLinear", ["Wq", "Ws"], ["W"], name="dq", axis=0,
                              block_size=4),
             helper.make_node("MatMul", ["x", "W"], ["y"], name="mm")]
    g = helper.make_graph(nodes, "wq_bad_block", [vi("x", ["N", 8])], [vi("y", ["N", 4])],
                          [w, sc])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 21)])
    m.ir_version = 10
    onnx.save(m, os.path.join(out, "wq_bad_block.onnx"))  # the checker has no shapes


save(model(), "wq_model.onnx", 13)
save(nan_model(), "wq_nan.onnx", 13)
save(no_weights(), "wq_no_weights.onnx", 13)
save(dft(), "wq_dft.onnx", 17)
bad_block()


def user_4bit():
    def t(name, dt, a):
        return helper.make_tensor(name, dt, a.shape, a.flatten().tolist())
    w1 = rng.integers(0, 16, (40, 6))
    z1 = rng.integers(0, 16, (3, 6))
    w2 = rng.integers(-8, 8, (6, 20))
    w3 = rng.integers(-128, 128, (20, 5))
    z3 = rng.integers(-10, 10, (2, 5))
    inits = [t("W1q", TensorProto.UINT4, w1), init("W1s", rng.uniform(0.01, 0.1, (3, 6))),
             t("W1z", TensorProto.UINT4, z1),
             t("W2q", TensorProto.INT4, w2), init("W2s", rng.uniform(0.05, 0.2, (6, 3))),
             numpy_helper.from_array(w3.astype(np.int8), "W3q"),
             init("W3s", rng.uniform(0.001, 0.01, (2, 5))),
             numpy_helper.from_array(z3.astype(np.int8), "W3z")]
    nodes = [
        helper.make_node("DequantizeLinear", ["W1q", "W1s", "W1z"], ["W1"], name="dq1",
                         axis=0, block_size=16),
        helper.make_node("DequantizeLinear", ["W2q", "W2s"], ["W2"], name="dq2", axis=1,
                         block_size=8),
        helper.make_node("DequantizeLinear", ["W3q", "W3s", "W3z"], ["W3"], name="dq3",
                         axis=0, block_size=16),
        helper.make_node("MatMul", ["x", "W1"], ["h1"], name="mm1"),
        helper.make_node("MatMul", ["h1", "W2"], ["h2"], name="mm2"),
        helper.make_node("MatMul", ["h2", "W3"], ["y"], name="mm3"),
    ]
    g = helper.make_graph(nodes, "wq_user_4bit", [vi("x", ["N", 40])], [vi("y", ["N", 5])],
                          inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 21)])
    m.ir_version = 10
    onnx.checker.check_model(m)
    onnx.save(m, os.path.join(out, "wq_user_4bit.onnx"))


user_4bit()
