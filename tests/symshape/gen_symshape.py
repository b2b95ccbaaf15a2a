#!/usr/bin/env python3
"""Generates the run-time shape arithmetic fixtures of tests/symshape
(checked in; run from anywhere with a Python of onnx 1.23.2, onnxruntime
1.31.1 and numpy 2.3.5). Each graph computes a shape at run time the way
PyTorch's exporters write it (Shape -> Gather -> Sub/Div/Add/Mul -> Concat
-> Resize sizes, Reshape shape, Slice ends, Pad pads), from symbolic input
dims:

  resize_sizes.onnx   x f32[N,3,H,W] -> Conv(s2) c1 -> Conv(s2) c2; Resize(c2,
                      sizes = [N, 8, (H-1)//2+1, (W-1)//2+1] from Shape(x)) ->
                      Concat with c1 -> Conv(1x1) -> y (deeplabv3/lraspp dynamo)
  reshape_shape.onnx  x f32[N,8,H,W] -> Conv(s2) -> Reshape to [N, 2, 4, h, w]
                      (h = (H-1)//2+1 from Shape(x)) -> Transpose -> Reshape to
                      [N, 8, h*w] (a product of symbols) -> y (shufflenet
                      channel shuffle; wav2vec2's views)
  reshape_infer.onnx  x f32[B,1,T] -> Conv1d(k10, s5) -> Transpose [B,F,8] ->
                      Reshape [B, (T-10)//5+1, 2, 4] -> Transpose -> Reshape
                      [-1, F, 4] (the -1 is 2*B) -> y (wav2vec2 attention)
  slice_shift.onnx    x f32[B,S] -> Concat([zeros[B,1], x]) [B,S+1] ->
                      Slice [:, 1:S+1] (end = Shape(x)[1] + 1) - x -> y
                      (whisper's shifted decoder ids)
  pad_multiple.onnx   x f32[1,3,H,W] -> Pad to multiples of 8 with pads
                      Concat([0,0,0,0, 0,0,ph,pw]) where ph = (8 - H % 8) % 8
                      (run-time: data-dependent dims) -> Mul by a [1,3,1,1]
                      weight -> y (ssdlite's image padding: the channel pads
                      are known zeros, so the channel dim stays 3)
  pad_ceil.onnx       x f32[3,H,W] -> Pad to multiples of 32 as torchvision's
                      GeneralizedRCNNTransform exports it (float ceil(H/32)*32
                      - H, pads reordered by Reshape/Slice(step -1)/
                      Transpose) -> Unsqueeze -> Conv(3 -> 4, s2) -> y: the
                      padded extents are the derived 32*((H+31)/32)
  dd_concat.onnx      x f32[S] -> Concat of two Compress results (a sum of
                      data-dependent extents, summed at run time), a second
                      Concat of the same extents added to it, and a Slice
                      [:3] of it -> y1, y2
  if_capture.onnx     x f32[S] -> If (cond sum(x) > 0) whose branches capture
                      a = x[x > 0] (empty in case a), returning [2K] or
                      [K] -> y
  dd_reshape.onnx     x f32[S] -> Reshape [-1] of the outer product of two
                      Compress results (a product of data-dependent extents)

and for each model the inputs at several sizes with onnxruntime's outputs
(<model>.<case>.x.npy / .y.npy)."""
import os

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
rng = np.random.default_rng(20261207)
OPSET = 18


def init(name, shape, scale=0.3):
    return numpy_helper.from_array((rng.standard_normal(shape) * scale).astype(np.float32), name)


def i64(name, vals):
    return numpy_helper.from_array(np.array(vals, dtype=np.int64), name)


def save(model, name, cases):
    onnx.checker.check_model(model)
    path = os.path.join(HERE, name + ".onnx")
    onnx.save(model, path)
    sess = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    for tag, shape in cases:
        x = rng.standard_normal(shape).astype(np.float32)
        (y,) = sess.run(None, {"x": x})
        np.save(os.path.join(HERE, f"{name}.{tag}.x.npy"), x)
        np.save(os.path.join(HERE, f"{name}.{tag}.y.npy"), y)


def model(nodes, name, xshape, yshape, inits):
    g = helper.make_graph(
        nodes, name, [helper.make_tensor_value_info("x", TensorProto.FLOAT, xshape)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, yshape)], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", OPSET)])
    m.ir_version = 8
    return m


def dim(src, k, out):
    """out = Shape(src)[k] as a 1-element i64 tensor (Shape with start/end,
    as the dynamo exporter writes it)."""
    return [helper.make_node("Shape", [src], [out], start=k, end=k + 1)]


def conv_out(src, out, tag):
    """out = (src - 1) // 2 + 1: the extent of a 3x3 stride-2 pad-1 Conv,
    as torch's symbolic shapes spell it."""
    return [helper.make_node("Sub", [src, "one"], [tag + "_m1"]),
            helper.make_node("Div", [tag + "_m1", "two"], [tag + "_q"]),
            helper.make_node("Add", [tag + "_q", "one"], [out])]


def resize_sizes():
    nodes = [
        helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], strides=[2, 2], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c1"], ["r1"]),
        helper.make_node("Conv", ["r1", "w2", "b2"], ["c2"], strides=[2, 2], pads=[1, 1, 1, 1]),
    ]
    nodes += dim("x", 0, "n") + dim("x", 2, "h") + dim("x", 3, "w")
    nodes += conv_out("h", "h1", "h") + conv_out("w", "w1_", "w")
    nodes += [
        helper.make_node("Concat", ["n", "eight", "h1", "w1_"], ["sizes"], axis=0),
        helper.make_node("Resize", ["c2", "", "", "sizes"], ["up"], mode="linear",
                         coordinate_transformation_mode="half_pixel"),
        helper.make_node("Concat", ["r1", "up"], ["cat"], axis=1),
        helper.make_node("Conv", ["cat", "w3", "b3"], ["y"]),
    ]
    m = model(nodes, "resize_sizes", ["N", 3, "H", "W"], ["N", 4, "H2", "W2"],
              [init("w1", (8, 3, 3, 3)), init("b1", (8,)), init("w2", (8, 8, 3, 3)),
               init("b2", (8,)), init("w3", (4, 16, 1, 1)), init("b3", (4,)),
               i64("one", [1]), i64("two", [2]), i64("eight", [8])])
    save(m, "resize_sizes", [("a", (1, 3, 9, 14)), ("b", (2, 3, 32, 21)),
                             ("c", (1, 3, 5, 40))])


def reshape_shape():
    nodes = [helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], strides=[2, 2],
                              pads=[1, 1, 1, 1])]
    nodes += dim("x", 0, "n") + dim("x", 2, "h") + dim("x", 3, "w")
    nodes += conv_out("h", "h1", "h") + conv_out("w", "w1_", "w")
    nodes += [
        helper.make_node("Concat", ["n", "two", "four", "h1", "w1_"], ["s5"], axis=0),
        helper.make_node("Reshape", ["c1", "s5"], ["v5"]),
        helper.make_node("Transpose", ["v5"], ["t5"], perm=[0, 2, 1, 3, 4]),
        helper.make_node("Mul", ["h1", "w1_"], ["hw"]),
        helper.make_node("Concat", ["n", "eight", "hw"], ["s3"], axis=0),
        helper.make_node("Reshape", ["t5", "s3"], ["v3"]),
        helper.make_node("Softmax", ["v3"], ["y"], axis=-1),
    ]
    m = model(nodes, "reshape_shape", ["N", 8, "H", "W"], ["N", 8, "HW"],
              [init("w1", (8, 8, 3, 3)), init("b1", (8,)), i64("one", [1]),
               i64("two", [2]), i64("four", [4]), i64("eight", [8])])
    save(m, "reshape_shape", [("a", (1, 8, 9, 14)), ("b", (2, 8, 32, 21)),
                              ("c", (1, 8, 5, 40))])


def reshape_infer():
    nodes = [helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], strides=[5]),
             helper.make_node("Transpose", ["c1"], ["t1"], perm=[0, 2, 1])]
    nodes += dim("x", 0, "b") + dim("x", 2, "t")
    nodes += [
        helper.make_node("Sub", ["t", "ten"], ["t_m"]),
        helper.make_node("Div", ["t_m", "five"], ["t_q"]),
        helper.make_node("Add", ["t_q", "one"], ["f"]),
        helper.make_node("Concat", ["b", "f", "two", "four"], ["s4"], axis=0),
        helper.make_node("Reshape", ["t1", "s4"], ["v4"]),
        helper.make_node("Transpose", ["v4"], ["t4"], perm=[0, 2, 1, 3]),
        helper.make_node("Concat", ["m1", "f", "four"], ["s3"], axis=0),
        helper.make_node("Reshape", ["t4", "s3"], ["v3"]),
        helper.make_node("Transpose", ["v3"], ["k3"], perm=[0, 2, 1]),
        helper.make_node("MatMul", ["v3", "k3"], ["att"]),
        helper.make_node("Softmax", ["att"], ["y"], axis=-1),
    ]
    m = model(nodes, "reshape_infer", ["B", 1, "T"], ["BH", "F", "F2"],
              [init("w1", (8, 1, 10)), init("b1", (8,)), i64("one", [1]), i64("two", [2]),
               i64("four", [4]), i64("five", [5]), i64("ten", [10]), i64("m1", [-1])])
    save(m, "reshape_infer", [("a", (1, 1, 10)), ("b", (2, 1, 163)), ("c", (3, 1, 400))])


def slice_shift():
    nodes = dim("x", 0, "b") + dim("x", 1, "s") + [
        helper.make_node("Concat", ["b", "one"], ["zs"], axis=0),
        helper.make_node("ConstantOfShape", ["zs"], ["z"],
                         value=helper.make_tensor("v", TensorProto.FLOAT, [1], [0.5])),
        helper.make_node("Concat", ["z", "x"], ["sh"], axis=1),
        helper.make_node("Add", ["s", "one"], ["end"]),
        helper.make_node("Slice", ["sh", "one", "end", "one"], ["cut"]),
        helper.make_node("Slice", ["sh", "zero", "s", "one"], ["head"]),
        helper.make_node("Sub", ["cut", "head"], ["y"]),
    ]
    m = model(nodes, "slice_shift", ["B", "S"], ["B", "S"],
              [i64("one", [1]), i64("zero", [0])])
    save(m, "slice_shift", [("a", (1, 1)), ("b", (2, 7)), ("c", (3, 40))])


def pad_multiple():
    nodes = dim("x", 2, "h") + dim("x", 3, "w") + [
        helper.make_node("Mod", ["h", "eight"], ["hm"]),
        helper.make_node("Sub", ["eight", "hm"], ["hr"]),
        helper.make_node("Mod", ["hr", "eight"], ["ph"]),
        helper.make_node("Mod", ["w", "eight"], ["wm"]),
        helper.make_node("Sub", ["eight", "wm"], ["wr"]),
        helper.make_node("Mod", ["wr", "eight"], ["pw"]),
        helper.make_node("Concat", ["zeros6", "ph", "pw"], ["pads"], axis=0),
        helper.make_node("Pad", ["x", "pads"], ["xp"]),
        helper.make_node("Mul", ["xp", "wc"], ["y"]),
    ]
    m = model(nodes, "pad_multiple", [1, 3, "H", "W"], [1, 3, "H2", "W2"],
              [init("wc", (1, 3, 1, 1)), i64("eight", [8]), i64("zeros6", [0] * 6)])
    save(m, "pad_multiple", [("a", (1, 3, 8, 13)), ("b", (1, 3, 31, 16)),
                             ("c", (1, 3, 5, 40))])


def pad_ceil():
    """torchvision's _onnx_batch_images: each size as a float max over the
    images (one here), H and W rounded up to a multiple of 32 in float, the
    pads [0, pw, 0, ph, 0, pc] turned into ONNX order by Reshape(-1, 2),
    Slice(step -1), Transpose, Reshape(-1)."""
    f = TensorProto.FLOAT
    nodes = [helper.make_node("Shape", ["x"], ["shp"])]
    pads = []
    for i in range(3):
        n = f"d{i}"
        nodes += [
            helper.make_node("Gather", ["shp", f"i{i}"], [n + "_s"], axis=0),
            helper.make_node("Unsqueeze", [n + "_s", "zero"], [n + "_u"]),
            helper.make_node("Concat", [n + "_u"], [n + "_st"], axis=0),
            helper.make_node("Cast", [n + "_st"], [n + "_f"], to=f),
            helper.make_node("ReduceMax", [n + "_f"], [n + "_mf"], keepdims=0),
            helper.make_node("Cast", [n + "_mf"], [n + "_m"], to=TensorProto.INT64),
        ]
        top = n + "_m"
        if i > 0:
            nodes += [
                helper.make_node("Cast", [top], [n + "_f2"], to=f),
                helper.make_node("Div", [n + "_f2", "f32"], [n + "_q"]),
                helper.make_node("Ceil", [n + "_q"], [n + "_c"]),
                helper.make_node("Mul", [n + "_c", "f32"], [n + "_r"]),
                helper.make_node("Cast", [n + "_r"], [n + "_ri"], to=TensorProto.INT64),
            ]
            top = n + "_ri"
        nodes += [helper.make_node("Sub", [top, n + "_s"], [n + "_p"]),
                  helper.make_node("Unsqueeze", [n + "_p", "zero"], [n + "_pu"])]
        pads.append(n + "_pu")
    nodes += [
        helper.make_node("Concat", ["z1", pads[2], "z1", pads[1], "z1", pads[0]], ["tp"],
                         axis=0),
        helper.make_node("Reshape", ["tp", "m1x2"], ["tab"]),
        helper.make_node("Slice", ["tab", "m1", "big", "zero", "m1"], ["rev"]),
        helper.make_node("Transpose", ["rev"], ["tr"], perm=[1, 0]),
        helper.make_node("Reshape", ["tr", "m1"], ["pads"]),
        helper.make_node("Pad", ["x", "pads"], ["xp"]),
        helper.make_node("Unsqueeze", ["xp", "zero"], ["xb"]),
        helper.make_node("Conv", ["xb", "w1", "b1"], ["y"], strides=[2, 2], pads=[1, 1, 1, 1]),
    ]
    inits = [init("w1", (4, 3, 3, 3)), init("b1", (4,)), i64("zero", [0]), i64("z1", [0]),
             i64("m1", [-1]), i64("m1x2", [-1, 2]), i64("big", [-(2**63) + 1]),
             numpy_helper.from_array(np.array(32.0, dtype=np.float32), "f32")]
    inits += [numpy_helper.from_array(np.array(i, dtype=np.int64), f"i{i}") for i in range(3)]
    m = model(nodes, "pad_ceil", [3, "H", "W"], [1, 4, "H2", "W2"], inits)
    save(m, "pad_ceil", [("a", (3, 32, 33)), ("b", (3, 70, 64)), ("c", (3, 5, 100))])


def dd_concat():
    """Concat of data-dependent extents (torchvision's per-class detections):
    a = x[x > 0], b = x[x < -0.5]; y1 = Concat(a, b) + Concat(2a, 2b) (the
    two sums are one symbol), y2 = Concat(a, b)[:3] (a slice of a
    data-dependent extent)."""
    nodes = [
        helper.make_node("Greater", ["x", "zero"], ["pos"]),
        helper.make_node("Less", ["x", "mhalf"], ["neg"]),
        helper.make_node("Compress", ["x", "pos"], ["a"], axis=0),
        helper.make_node("Compress", ["x", "neg"], ["b"], axis=0),
        helper.make_node("Concat", ["a", "b"], ["c"], axis=0),
        helper.make_node("Mul", ["a", "two"], ["a2"]),
        helper.make_node("Mul", ["b", "two"], ["b2"]),
        helper.make_node("Concat", ["a2", "b2"], ["c2"], axis=0),
        helper.make_node("Add", ["c", "c2"], ["y1"]),
        helper.make_node("Slice", ["c", "s0", "s3"], ["y2"]),
    ]
    g = helper.make_graph(
        nodes, "dd_concat", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["S"])],
        [helper.make_tensor_value_info("y1", TensorProto.FLOAT, ["K"]),
         helper.make_tensor_value_info("y2", TensorProto.FLOAT, ["K2"])],
        [numpy_helper.from_array(np.array(0, np.float32), "zero"),
         numpy_helper.from_array(np.array(-0.5, np.float32), "mhalf"),
         numpy_helper.from_array(np.array(2, np.float32), "two"),
         i64("s0", [0]), i64("s3", [3])])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", OPSET)])
    m.ir_version = 8
    onnx.checker.check_model(m)
    path = os.path.join(HERE, "dd_concat.onnx")
    onnx.save(m, path)
    sess = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    for tag, n in [("a", 1), ("b", 9), ("c", 40)]:
        x = rng.standard_normal(n).astype(np.float32)
        if tag == "a":
            x[:] = 0.25  # b is empty
        for k, y in enumerate(sess.run(None, {"x": x})):
            np.save(os.path.join(HERE, f"dd_concat.{tag}.y{k + 1}.npy"), y)
        np.save(os.path.join(HERE, f"dd_concat.{tag}.x.npy"), x)


def if_capture():
    """An If whose branches capture a data-dependent extent (a = x[x > 0],
    empty in case a) and return different shapes (so it runs as control
    flow): then Concat(a, a), else a + 2, chosen by sum(x) > 0."""
    a2 = helper.make_graph([helper.make_node("Concat", ["a", "a"], ["t"], axis=0)], "then",
                           [], [helper.make_tensor_value_info("t", TensorProto.FLOAT, ["K2"])])
    a1 = helper.make_graph([helper.make_node("Add", ["a", "two"], ["e"])], "else", [],
                           [helper.make_tensor_value_info("e", TensorProto.FLOAT, ["K"])])
    nodes = [
        helper.make_node("Greater", ["x", "zero"], ["pos"]),
        helper.make_node("Compress", ["x", "pos"], ["a"], axis=0),
        helper.make_node("ReduceSum", ["x"], ["sum"], keepdims=0),
        helper.make_node("Greater", ["sum", "zero"], ["cond"]),
        helper.make_node("If", ["cond"], ["y"], then_branch=a2, else_branch=a1),
    ]
    g = helper.make_graph(
        nodes, "if_capture", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["S"])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["K"])],
        [numpy_helper.from_array(np.array(0, np.float32), "zero"),
         numpy_helper.from_array(np.array(2, np.float32), "two")])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", OPSET)])
    m.ir_version = 8
    onnx.checker.check_model(m)
    path = os.path.join(HERE, "if_capture.onnx")
    onnx.save(m, path)
    sess = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    for tag, n in [("a", 5), ("b", 9), ("c", 40)]:
        x = rng.standard_normal(n).astype(np.float32)
        if tag == "a":
            x = -np.abs(x)  # no element > 0: the capture is empty
        (y,) = sess.run(None, {"x": x})
        np.save(os.path.join(HERE, f"if_capture.{tag}.x.npy"), x)
        np.save(os.path.join(HERE, f"if_capture.{tag}.y.npy"), y)


def dd_reshape():
    """Reshape to [-1] of a product of two data-dependent extents: the outer
    product of a = x[x > 0] and b = x[x < -0.5], flattened."""
    nodes = [
        helper.make_node("Greater", ["x", "zero"], ["pos"]),
        helper.make_node("Less", ["x", "mhalf"], ["neg"]),
        helper.make_node("Compress", ["x", "pos"], ["a"], axis=0),
        helper.make_node("Compress", ["x", "neg"], ["b"], axis=0),
        helper.make_node("Unsqueeze", ["a", "one"], ["ac"]),
        helper.make_node("Unsqueeze", ["b", "zero_i"], ["br"]),
        helper.make_node("Mul", ["ac", "br"], ["outer"]),
        helper.make_node("Reshape", ["outer", "m1"], ["y"]),
    ]
    g = helper.make_graph(
        nodes, "dd_reshape", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["S"])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["K"])],
        [numpy_helper.from_array(np.array(0, np.float32), "zero"),
         numpy_helper.from_array(np.array(-0.5, np.float32), "mhalf"),
         i64("one", [1]), i64("zero_i", [0]), i64("m1", [-1])])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", OPSET)])
    m.ir_version = 8
    save(m, "dd_reshape", [("a", (3,)), ("b", (9,)), ("c", (40,))])


if __name__ == "__main__":
    resize_sizes()
    reshape_shape()
    reshape_infer()
    slice_shift()
    pad_multiple()
    pad_ceil()
    dd_concat()
    if_capture()
    dd_reshape()
