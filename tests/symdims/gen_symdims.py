#!/usr/bin/env python3
"""Generates the symbolic-dims fixtures of tests/symdims (checked in; run
from anywhere with a Python of onnx 1.23.2, onnxruntime 1.31.1 and numpy 2.3.5):

  fcn_pool.onnx     x f32[N,3,H,W] -> Conv(3x3, stride 2, pad 1) -> Relu ->
                    MaxPool(2x2, stride 2) -> Conv(3x3, pad 0, dilation 2) ->
                    Relu -> GlobalAveragePool -> Flatten -> Gemm -> y f32[N,5]
  fcn_spatial.onnx  x f32[N,3,H,W] -> Conv(5x3, stride (2,1), pads 2,1,1,0) ->
                    Relu -> MaxPool(3x3, stride 2, pad 1) -> Conv(1x1) ->
                    AveragePool(2x2, stride 1) -> y f32[N,4,H',W'] (spatial)
  attn.onnx         x f32[N,S,8] -> one attention head block with symbolic
                    sequence length S: q,k,v = x@W; softmax(q@k^T/sqrt(8))@v,
                    Reshape/Transpose of the sequence dim, residual -> y f32[N,S,8]

and for each model the inputs at several sizes with onnxruntime's outputs
(<model>.<case>.x.npy / .y.npy)."""
import os

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
rng = np.random.default_rng(20261206)


def init(name, shape, scale=0.3):
    return numpy_helper.from_array((rng.standard_normal(shape) * scale).astype(np.float32), name)


def save(model, name, cases, gen=None):
    """Checks and writes tests/symdims/NAME.onnx, and for each (tag, shape) of
    CASES a random x of that shape (from GEN, default this file's rng) with
    onnxruntime's y as NAME.TAG.x.npy / NAME.TAG.y.npy (gen_symexpr.py uses it
    with its own rng)."""
    onnx.checker.check_model(model)
    path = os.path.join(HERE, name + ".onnx")
    onnx.save(model, path)
    sess = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    for tag, shape in cases:
        x = (gen or rng).standard_normal(shape).astype(np.float32)
        (y,) = sess.run(None, {"x": x})
        np.save(os.path.join(HERE, f"{name}.{tag}.x.npy"), x)
        np.save(os.path.join(HERE, f"{name}.{tag}.y.npy"), y)


def fcn_pool():
    nodes = [
        helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], strides=[2, 2], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c1"], ["r1"]),
        helper.make_node("MaxPool", ["r1"], ["p1"], kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("Conv", ["p1", "w2", "b2"], ["c2"], dilations=[2, 2]),
        helper.make_node("Relu", ["c2"], ["r2"]),
        helper.make_node("GlobalAveragePool", ["r2"], ["g"]),
        helper.make_node("Flatten", ["g"], ["f"]),
        helper.make_node("Gemm", ["f", "wf", "bf"], ["y"], transB=1),
    ]
    g = helper.make_graph(
        nodes, "fcn_pool",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 3, "H", "W"])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 5])],
        [init("w1", (8, 3, 3, 3)), init("b1", (8,)), init("w2", (6, 8, 3, 3)),
         init("b2", (6,)), init("wf", (5, 6)), init("bf", (5,))])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    save(m, "fcn_pool", [("a", (1, 3, 20, 20)), ("b", (2, 3, 23, 40)),
                         ("c", (3, 3, 64, 27)), ("d", (1, 3, 37, 19))])


def fcn_spatial():
    nodes = [
        helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], strides=[2, 1], pads=[2, 1, 1, 0]),
        helper.make_node("Relu", ["c1"], ["r1"]),
        helper.make_node("MaxPool", ["r1"], ["p1"], kernel_shape=[3, 3], strides=[2, 2],
                         pads=[1, 1, 1, 1]),
        helper.make_node("Conv", ["p1", "w2"], ["c2"]),
        helper.make_node("AveragePool", ["c2"], ["y"], kernel_shape=[2, 2]),
    ]
    g = helper.make_graph(
        nodes, "fcn_spatial",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 3, "H", "W"])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 4, None, None])],
        [init("w1", (6, 3, 5, 3)), init("b1", (6,)), init("w2", (4, 6, 1, 1))])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    save(m, "fcn_spatial", [("a", (1, 3, 12, 9)), ("b", (2, 3, 31, 20)),
                            ("c", (1, 3, 64, 33))])


def attn():
    d = 8
    shape_s = helper.make_tensor("shp", TensorProto.INT64, [4], [0, 0, 2, 4])
    nodes = [
        helper.make_node("MatMul", ["x", "wq"], ["q"]),
        helper.make_node("MatMul", ["x", "wk"], ["k"]),
        helper.make_node("MatMul", ["x", "wv"], ["v"]),
        # [N,S,8] -> [N,S,2,4] -> [N,2,S,4] (two heads)
        helper.make_node("Reshape", ["q", "shp"], ["q4"]),
        helper.make_node("Reshape", ["k", "shp"], ["k4"]),
        helper.make_node("Reshape", ["v", "shp"], ["v4"]),
        helper.make_node("Transpose", ["q4"], ["qh"], perm=[0, 2, 1, 3]),
        helper.make_node("Transpose", ["k4"], ["kh"], perm=[0, 2, 3, 1]),
        helper.make_node("Transpose", ["v4"], ["vh"], perm=[0, 2, 1, 3]),
        helper.make_node("MatMul", ["qh", "kh"], ["s"]),
        helper.make_node("Mul", ["s", "scale"], ["ss"]),
        helper.make_node("Softmax", ["ss"], ["a"], axis=-1),
        helper.make_node("MatMul", ["a", "vh"], ["o"]),
        helper.make_node("Transpose", ["o"], ["ot"], perm=[0, 2, 1, 3]),
        # back to [N,S,8] through Shape -> Slice -> Concat (the exporter's chain)
        helper.make_node("Shape", ["x"], ["xs"]),
        helper.make_node("Reshape", ["ot", "xs"], ["o3"]),
        helper.make_node("MatMul", ["o3", "wo"], ["p"]),
        helper.make_node("Add", ["p", "x"], ["y"]),
    ]
    g = helper.make_graph(
        nodes, "attn",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", "S", d])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", "S", d])],
        [init("wq", (d, d)), init("wk", (d, d)), init("wv", (d, d)), init("wo", (d, d)),
         shape_s, numpy_helper.from_array(np.array(0.5, np.float32), "scale")])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    save(m, "attn", [("a", (1, 1, d)), ("b", (2, 7, d)), ("c", (1, 33, d))])


def seq_ops():
    """x f32[N,S,8]: Pad/Slice/Concat over the symbolic S and a Reshape of the
    product N*(S+2):  y1 = Slice(Pad(x, S by (1,2)), 1:-2) + x   [N,S,8]
                      y2 = Reshape(Concat(x, x[:, 0:2]), [-1,8]) @ W  [N*(S+2),4]
                      y3 = Flatten(x[:, ::2], axis=1)   [N, 8*ceil(S/2)]"""
    i64 = lambda name, v: helper.make_tensor(name, TensorProto.INT64, [len(v)], v)
    nodes = [
        helper.make_node("Pad", ["x", "pads"], ["xp"], mode="constant"),
        helper.make_node("Slice", ["xp", "s1", "e1", "a1"], ["xs"]),
        helper.make_node("Add", ["xs", "x"], ["y1"]),
        helper.make_node("Slice", ["x", "s0", "e2", "a1"], ["head"]),
        helper.make_node("Concat", ["x", "head"], ["xc"], axis=1),
        helper.make_node("Reshape", ["xc", "m1"], ["xr"]),
        helper.make_node("MatMul", ["xr", "w"], ["y2"]),
        helper.make_node("Slice", ["x", "s0", "big", "a1", "two"], ["xe"]),
        helper.make_node("Flatten", ["xe"], ["y3"], axis=1),
    ]
    g = helper.make_graph(
        nodes, "seq_ops",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", "S", 8])],
        [helper.make_tensor_value_info("y1", TensorProto.FLOAT, ["N", "S", 8]),
         helper.make_tensor_value_info("y2", TensorProto.FLOAT, [None, 4]),
         helper.make_tensor_value_info("y3", TensorProto.FLOAT, ["N", None])],
        [i64("pads", [0, 1, 0, 0, 2, 0]), i64("s1", [1]), i64("e1", [-2]), i64("a1", [1]),
         i64("s0", [0]), i64("e2", [2]), i64("m1", [-1, 8]), i64("big", [1 << 40]),
         i64("two", [2]), init("w", (8, 4))])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    onnx.checker.check_model(m)
    path = os.path.join(HERE, "seq_ops.onnx")
    onnx.save(m, path)
    sess = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    for tag, shape in [("a", (1, 2, 8)), ("b", (2, 7, 8)), ("c", (3, 20, 8))]:
        x = rng.standard_normal(shape).astype(np.float32)
        ys = sess.run(None, {"x": x})
        np.save(os.path.join(HERE, f"seq_ops.{tag}.x.npy"), x)
        for k, y in enumerate(ys):
            np.save(os.path.join(HERE, f"seq_ops.{tag}.y{k + 1}.npy"), y)


def upsample():
    """x f32[N,3,H,W] -> Conv(3x3, stride 2, pad 1) -> Resize(nearest, x2) ->
    Relu -> Resize(linear, scales 1.5 and 0.75) -> y f32[N,4,H'',W'']: the
    decoder half of a segmentation or text-detection model."""
    f32 = lambda name, v: numpy_helper.from_array(np.array(v, np.float32), name)
    nodes = [
        helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], strides=[2, 2], pads=[1, 1, 1, 1]),
        helper.make_node("Resize", ["c1", "", "sc2"], ["u1"], mode="nearest"),
        helper.make_node("Relu", ["u1"], ["r1"]),
        helper.make_node("Resize", ["r1", "", "sc3"], ["y"], mode="linear"),
    ]
    g = helper.make_graph(
        nodes, "upsample",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 3, "H", "W"])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 4, None, None])],
        [init("w1", (4, 3, 3, 3)), init("b1", (4,)), f32("sc2", [1, 1, 2, 2]),
         f32("sc3", [1, 1, 1.5, 0.75])])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    save(m, "upsample", [("a", (1, 3, 9, 14)), ("b", (2, 3, 32, 21)), ("c", (1, 3, 5, 40))])


def fpn():
    """x f32[N,3,H,W], H and W multiples of 8: three stride-2 Convs, then
    top-down: Resize x2 (nearest) of each level added to the 1x1 Conv of the
    level above (a feature pyramid, as text detectors have) -> y f32[N,4,H/2,W/2].
    The sums meet only when the sizes are multiples of 8 (--input-shape
    x=...x[16:64:8]x[16:64:8])."""
    f32 = lambda name, v: numpy_helper.from_array(np.array(v, np.float32), name)
    conv = lambda i, w, b, o: helper.make_node("Conv", [i, w, b], [o], strides=[2, 2],
                                               pads=[1, 1, 1, 1])
    nodes = [
        conv("x", "w1", "b1", "c1"), helper.make_node("Relu", ["c1"], ["r1"]),
        conv("r1", "w2", "b2", "c2"), helper.make_node("Relu", ["c2"], ["r2"]),
        conv("r2", "w3", "b3", "c3"),
        helper.make_node("Resize", ["c3", "", "up"], ["u3"], mode="nearest"),
        helper.make_node("Conv", ["r2", "l2"], ["lat2"]),
        helper.make_node("Add", ["u3", "lat2"], ["p2"]),
        helper.make_node("Resize", ["p2", "", "up"], ["u2"], mode="nearest"),
        helper.make_node("Conv", ["r1", "l1"], ["lat1"]),
        helper.make_node("Add", ["u2", "lat1"], ["y"]),
    ]
    g = helper.make_graph(
        nodes, "fpn",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 3, "H", "W"])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 4, None, None])],
        [init("w1", (4, 3, 3, 3)), init("b1", (4,)), init("w2", (6, 4, 3, 3)),
         init("b2", (6,)), init("w3", (4, 6, 3, 3)), init("b3", (4,)),
         init("l2", (4, 6, 1, 1)), init("l1", (4, 4, 1, 1)), f32("up", [1, 1, 2, 2])])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    save(m, "fpn", [("a", (1, 3, 16, 24)), ("b", (2, 3, 40, 64)), ("c", (1, 3, 64, 32))])


def audio():
    """x f32[batch,1,samples] (an audio front end): Conv1d(k=64, stride 32,
    8 filters) -> Relu -> Conv1d(k=3, pad 1) -> MaxPool1d(2) -> Transpose to
    [batch, frames, 8] -> MatMul [8,4] -> y f32[batch, frames, 4]."""
    nodes = [
        helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], strides=[32]),
        helper.make_node("Relu", ["c1"], ["r1"]),
        helper.make_node("Conv", ["r1", "w2", "b2"], ["c2"], pads=[1, 1]),
        helper.make_node("MaxPool", ["c2"], ["p2"], kernel_shape=[2], strides=[2]),
        helper.make_node("Transpose", ["p2"], ["t"], perm=[0, 2, 1]),
        helper.make_node("MatMul", ["t", "wo"], ["y"]),
    ]
    g = helper.make_graph(
        nodes, "audio",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 1, "samples"])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", None, 4])],
        [init("w1", (8, 1, 64), 0.1), init("b1", (8,)), init("w2", (8, 8, 3)),
         init("b2", (8,)), init("wo", (8, 4))])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    save(m, "audio", [("a", (1, 1, 160)), ("b", (2, 1, 1000)), ("c", (3, 1, 4001))])


def deconv():
    """x f32[N,4,H,W] -> ConvTranspose(3x3, stride 2, pads 1, output_padding 1:
    2H x 2W) -> Relu -> ConvTranspose(2x2, stride 1, dilation 2, no pads:
    2H+2 x 2W+2) -> y f32[N,3,2H+2,2W+2]."""
    nodes = [
        helper.make_node("ConvTranspose", ["x", "w1", "b1"], ["d1"], strides=[2, 2],
                         pads=[1, 1, 1, 1], output_padding=[1, 1]),
        helper.make_node("Relu", ["d1"], ["r1"]),
        helper.make_node("ConvTranspose", ["r1", "w2"], ["y"], dilations=[2, 2]),
    ]
    g = helper.make_graph(
        nodes, "deconv",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 4, "H", "W"])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 3, None, None])],
        [init("w1", (4, 5, 3, 3)), init("b1", (5,)), init("w2", (5, 3, 2, 2))])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    save(m, "deconv", [("a", (1, 4, 1, 3)), ("b", (2, 4, 7, 5)), ("c", (1, 4, 12, 16))])


if __name__ == "__main__":
    fcn_pool()
    fcn_spatial()
    attn()
    seq_ops()
    upsample()
    fpn()
    audio()
    deconv()
