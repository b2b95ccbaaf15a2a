#!/usr/bin/env python3
"""Generates the fixtures of dim_params of the form K*name (checked in; run
from anywhere with a Python of onnx 1.23.1, onnxruntime 1.30.0 and numpy):

  pixel_unshuffle.onnx  x f32[batch,3,2*h,2*w] -> pixel_unshuffle(x, 2) ->
                        Conv(3x3, pad 1, 12 -> 4) -> y f32[batch,4,h,w]; the
                        node list is the one torch 2.11's dynamo exporter
                        writes for torch.nn.functional.pixel_unshuffle with
                        dynamic_shapes {0: batch, 2: 2*h, 3: 2*w} (opset 20:
                        Shape slices, Div by 2, Concat, Reshape [-1,3,H/2,2,
                        W/2,2], Transpose, Reshape [-1,12,H/2,W/2], a last
                        Reshape with allowzero=1), weights random
  reshape_pairs.onnx    x f32[N] -> Reshape [-1,2] -> y f32[N/2,2]
  opaque_expr.onnx      x f32[batch,h+1] -> Relu -> y (a dim_param not of the
                        form K*name: one opaque symbol "h+1"; no cases)

and the inputs at two sizes with onnxruntime's outputs
(<model>.<case>.x.npy / .y.npy)."""
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

import gen_symdims  # noqa: E402 (this folder: its save())

HERE = os.path.dirname(os.path.abspath(__file__))
rng = np.random.default_rng(20261207)


def i64(name, vals):
    return numpy_helper.from_array(np.array(vals, dtype=np.int64), name)


def save(model, name, cases):
    gen_symdims.save(model, name, cases, rng)


def pixel_unshuffle():
    N = helper.make_node
    nodes = [
        N("Shape", ["x"], ["s_batch"], start=0, end=-3),
        N("Shape", ["x"], ["s_chw"], start=-3),
        N("Concat", ["m1", "s_chw"], ["t1"], axis=0),
        N("Reshape", ["x", "t1"], ["x4"], allowzero=0),
        N("Shape", ["x4"], ["s_c"], start=1, end=2),
        N("Shape", ["x4"], ["s_h"], start=2, end=3),
        N("Shape", ["x4"], ["s_w"], start=3, end=4),
        N("Div", ["s_h", "two"], ["h2"]),
        N("Div", ["s_w", "two"], ["w2"]),
        N("Concat", ["m1", "s_c", "h2", "two", "w2", "two"], ["t2"], axis=0),
        N("Reshape", ["x4", "t2"], ["x6"], allowzero=0),
        N("Transpose", ["x6"], ["xt"], perm=[0, 1, 3, 5, 2, 4]),
        N("Mul", ["s_c", "four"], ["c4"]),
        N("Concat", ["m1", "c4", "h2", "w2"], ["t3"], axis=0),
        N("Reshape", ["xt", "t3"], ["xu"], allowzero=0),
        N("Shape", ["xu"], ["s_rest"], start=1),
        N("Concat", ["s_batch", "s_rest"], ["t4"], axis=0),
        N("Reshape", ["xu", "t4"], ["pu"], allowzero=1),
        N("Conv", ["pu", "w", "b"], ["y"], pads=[1, 1, 1, 1], kernel_shape=[3, 3]),
    ]
    w = (rng.standard_normal((4, 12, 3, 3)) * 0.3).astype(np.float32)
    b = (rng.standard_normal((4,)) * 0.3).astype(np.float32)
    g = helper.make_graph(
        nodes, "pixel_unshuffle",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 3, "2*h", "2*w"])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 4, "h", "w"])],
        [i64("m1", [-1]), i64("two", [2]), i64("four", [4]),
         numpy_helper.from_array(w, "w"), numpy_helper.from_array(b, "b")])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 20)])
    m.ir_version = 10
    save(m, "pixel_unshuffle", [("a", (1, 3, 16, 24)), ("b", (3, 3, 64, 38))])


def reshape_pairs():
    g = helper.make_graph(
        [helper.make_node("Reshape", ["x", "shape"], ["y"])], "reshape_pairs",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N"])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [None, 2])],
        [i64("shape", [-1, 2])])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    save(m, "reshape_pairs", [("a", (8,)), ("b", (64,))])


def opaque_expr():
    g = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["y"])], "opaque_expr",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", "h+1"])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", "h+1"])])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    onnx.checker.check_model(m)
    onnx.save(m, os.path.join(HERE, "opaque_expr.onnx"))


if __name__ == "__main__":
    pixel_unshuffle()
    reshape_pairs()
    opaque_expr()
