#!/usr/bin/python3
"""Generates the small ONNX models that tests/onnx/ imports.

Run with Debian's python3-onnx (apt-get install -y python3-onnx):
    /usr/bin/python3 scripts/gen_onnx_fixtures.py [OUT_DIR]
OUT_DIR defaults to tests/onnx/fixtures. The outputs are committed; rerun
this script after changing it. Every file is deterministic.
"""
import os
import struct
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OUT = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "..", "tests", "onnx", "fixtures")


def vi(name, elem, shape):
    return helper.make_tensor_value_info(name, elem, shape)


def model(nodes, inputs, outputs, inits=(), opset=13, name="g", check=True, domains=()):
    graph = helper.make_graph(nodes, name, list(inputs), list(outputs), list(inits))
    ops = [helper.make_opsetid("", opset)] + [helper.make_opsetid(d, 1) for d in domains]
    m = helper.make_model(graph, opset_imports=ops, producer_name="gen_onnx_fixtures")
    if check:
        onnx.checker.check_model(m)
    return m


def save(m, fname):
    path = os.path.join(OUT, fname)
    with open(path, "wb") as f:
        f.write(m.SerializeToString())
    return path


def typed(name, dtype, dims, field, values):
    """A TensorProto whose data sits in one typed field (not raw_data)."""
    t = TensorProto()
    t.name = name
    t.data_type = dtype
    t.dims.extend(dims)
    getattr(t, field).extend(values)
    return t


def gen_typed_fields():
    """Initializers in every typed field, one in raw_data; outputs that are
    directly a graph input and an initializer."""
    f16 = np.array([1.0, -2.0, 0.5], dtype=np.float16).view(np.uint16).tolist()
    bf16 = [0x3F80, 0xC000, 0x3F00]  # 1.0, -2.0, 0.5
    inits = [
        typed("w_f32", TensorProto.FLOAT, [2, 2], "float_data", [1.5, -2.0, 3.25, 4.0]),
        typed("w_f64", TensorProto.DOUBLE, [3], "double_data", [0.5, -1.25, 1e10]),
        typed("w_i32", TensorProto.INT32, [3], "int32_data", [7, -8, 2147483647]),
        typed("w_i16", TensorProto.INT16, [2], "int32_data", [-300, 300]),
        typed("w_i8", TensorProto.INT8, [3], "int32_data", [-128, 0, 127]),
        typed("w_u16", TensorProto.UINT16, [2], "int32_data", [65535, 1]),
        typed("w_u8", TensorProto.UINT8, [3], "int32_data", [0, 200, 255]),
        typed("w_bool", TensorProto.BOOL, [4], "int32_data", [1, 0, 0, 1]),
        typed("w_f16", TensorProto.FLOAT16, [3], "int32_data", f16),
        typed("w_bf16", TensorProto.BFLOAT16, [3], "int32_data", bf16),
        typed("w_i64", TensorProto.INT64, [2], "int64_data", [-(2**40), 2**62]),
        typed("w_u32", TensorProto.UINT32, [2], "uint64_data", [4000000000, 5]),
        typed("w_u64", TensorProto.UINT64, [2], "uint64_data", [2**64 - 1, 3]),
        typed("w_scalar", TensorProto.FLOAT, [], "float_data", [42.0]),
        typed("w_empty", TensorProto.FLOAT, [0, 3], "float_data", []),
        numpy_helper.from_array(np.arange(6, dtype=np.float32).reshape(2, 3) / 4, "w_raw"),
        numpy_helper.from_array(np.array([[1, -1], [2, -2]], dtype=np.int64), "w_raw_i64"),
        numpy_helper.from_array(np.array([True, False, True]), "w_raw_bool"),
    ]
    inits[-1].raw_data = b"\x01\x00\x07"  # a non-canonical true: read as 1
    nodes = [helper.make_node("Add", ["x", "w_f32"], ["y"], name="add0")]
    m = model(nodes, [vi("x", TensorProto.FLOAT, ["batch", 2, 2])],
              [vi("y", TensorProto.FLOAT, None), vi("w_f64", TensorProto.DOUBLE, [3]),
               vi("x", TensorProto.FLOAT, None)], inits, check=False)
    return save(m, "typed_fields.onnx")


def gen_external():
    """Two initializers in external.bin: one at offset 16 with a length, one
    with neither (the rest of the file)."""
    a = np.array([[1, 2, 3], [4, 5, 6]], dtype=np.float32)
    b = np.array([10, 20], dtype=np.int64)
    blob = b"PADPADPADPADPAD!" + a.tobytes() + b.tobytes()
    with open(os.path.join(OUT, "external.bin"), "wb") as f:
        f.write(blob)

    def ext(name, dtype, dims, kv):
        t = TensorProto()
        t.name = name
        t.data_type = dtype
        t.dims.extend(dims)
        t.data_location = TensorProto.EXTERNAL
        for k, v in kv:
            e = t.external_data.add()
            e.key, e.value = k, v
        return t

    w = ext("w", TensorProto.FLOAT, [2, 3], [("location", "external.bin"), ("offset", "16"),
                                           ("length", "24")])
    tail = ext("tail", TensorProto.INT64, [2], [("location", "external.bin"), ("offset", "40")])
    nodes = [helper.make_node("MatMul", ["x", "w"], ["y"], name="mm")]
    m = model(nodes, [vi("x", TensorProto.FLOAT, [None, 2])], [vi("y", TensorProto.FLOAT, None)],
              [w, tail], check=False)
    save(m, "external.onnx")

    for fname, loc, off, length in [
            ("external_escape.onnx", "../fixtures/external.bin", "16", "24"),
            ("external_absolute.onnx", "/etc/hostname", "0", "24"),
            ("external_range.onnx", "external.bin", "40", "24"),
            ("external_missing.onnx", "missing.bin", "0", "24"),
            ("external_badlen.onnx", "external.bin", "16", "20")]:
        w = ext("w", TensorProto.FLOAT, [2, 3], [("location", loc), ("offset", off),
                                               ("length", length)])
        save(model(nodes, [vi("x", TensorProto.FLOAT, [None, 2])],
                   [vi("y", TensorProto.FLOAT, None)], [w], check=False), fname)


def gen_constants():
    """Every Constant form; the results feed nodes or are graph outputs."""
    nodes = [
        helper.make_node("Constant", [], ["c_tensor"], name="ct",
                         value=numpy_helper.from_array(np.array([[2.0, 3.0]], np.float32))),
        helper.make_node("Constant", [], ["c_float"], name="cf", value_float=0.25),
        helper.make_node("Constant", [], ["c_floats"], name="cfs", value_floats=[1.0, 2.0, 3.0]),
        helper.make_node("Constant", [], ["c_int"], name="ci", value_int=7),
        helper.make_node("Constant", [], ["c_ints"], name="cis", value_ints=[-1, 2]),
        helper.make_node("Mul", ["x", "c_tensor"], ["m"], name="mul"),
        helper.make_node("Add", ["m", "c_float"], ["a"], name="add"),
        helper.make_node("Reshape", ["a", "c_ints"], ["y"], name="reshape"),
    ]
    m = model(nodes, [vi("x", TensorProto.FLOAT, [4, 2])],
              [vi("y", TensorProto.FLOAT, [-1, 2]), vi("c_int", TensorProto.INT64, []),
               vi("c_floats", TensorProto.FLOAT, [3])])
    return save(m, "constants.onnx")


def gen_init_as_input():
    """IR version 3 style: the initializer w is also a graph input."""
    w = numpy_helper.from_array(np.ones((3, 2), np.float32), "w")
    nodes = [helper.make_node("MatMul", ["x", "w"], ["y"], name="mm")]
    g = helper.make_graph(nodes, "g", [vi("x", TensorProto.FLOAT, ["n", 3]),
                                       vi("w", TensorProto.FLOAT, [3, 2])],
                          [vi("y", TensorProto.FLOAT, None)], [w])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 9)])
    m.ir_version = 3
    return save(m, "init_as_input.onnx")


def gen_opset11():
    """Attribute forms that later opsets turned into inputs."""
    nodes = [
        helper.make_node("Unsqueeze", ["x"], ["u"], name="unsq", axes=[0]),
        helper.make_node("Squeeze", ["u"], ["s"], name="sq", axes=[0]),
        helper.make_node("Squeeze", ["s"], ["s_all"], name="sq_all"),
        helper.make_node("ReduceMean", ["s_all"], ["rm"], name="rmean", axes=[1, -1], keepdims=0),
        helper.make_node("ReduceSum", ["x"], ["rs"], name="rsum", axes=[2]),
        helper.make_node("ReduceMax", ["x"], ["rmax"], name="rmax"),
        helper.make_node("Split", ["x"], ["sp0", "sp1"], name="split", axis=1, split=[1, 2]),
        helper.make_node("Resize", ["x", "roi", "scales"], ["rz"], name="resize",
                         mode="linear"),
    ]
    inits = [numpy_helper.from_array(np.array([], np.float32), "roi"),
             numpy_helper.from_array(np.array([1, 1, 2], np.float32), "scales")]
    m = model(nodes, [vi("x", TensorProto.FLOAT, [2, 3, 4])],
              [vi("rm", TensorProto.FLOAT, [2]), vi("rs", TensorProto.FLOAT, [2, 3, 1]),
               vi("rmax", TensorProto.FLOAT, [1, 1, 1]), vi("sp0", TensorProto.FLOAT, [2, 1, 4]),
               vi("sp1", TensorProto.FLOAT, [2, 2, 4]), vi("rz", TensorProto.FLOAT, [2, 3, 8])],
              inits, opset=11)
    return save(m, "opset11.onnx")


def gen_opset7():
    """Opset 7 forms: Slice/Pad/Clip/Dropout attributes, BatchNormalization
    spatial, Upsample with a scales attribute, Softmax coercion."""
    c = 2
    inits = [numpy_helper.from_array(np.full(c, v, np.float32), n)
             for n, v in [("scale", 1.0), ("bias", 0.0), ("mean", 0.5), ("var", 2.0)]]
    nodes = [
        helper.make_node("BatchNormalization", ["x", "scale", "bias", "mean", "var"], ["bn"],
                         name="bn", epsilon=1e-3, spatial=1),
        helper.make_node("Clip", ["bn"], ["clip"], name="clip", min=-1.0, max=6.0),
        helper.make_node("Clip", ["clip"], ["clip_hi"], name="clip_hi", max=3.0),
        helper.make_node("Slice", ["clip_hi"], ["sl"], name="slice", starts=[0, 1], ends=[1, 3],
                         axes=[0, 2]),
        helper.make_node("Pad", ["sl"], ["pad"], name="pad", pads=[0, 0, 1, 1, 0, 0, 1, 1],
                         mode="constant", value=1.5),
        helper.make_node("Dropout", ["pad"], ["drop"], name="drop", ratio=0.25),
        helper.make_node("Upsample", ["drop"], ["up"], name="up", scales=[1.0, 1.0, 2.0, 2.0]),
        helper.make_node("Softmax", ["up"], ["y"], name="sm"),
    ]
    m = model(nodes, [vi("x", TensorProto.FLOAT, [1, c, 4, 4])],
              [vi("y", TensorProto.FLOAT, [1, c, 8, 12])],
              inits, opset=7)
    return save(m, "opset7.onnx")


def gen_opset9_10():
    """Upsample-9 (scales input) and Resize-10, Slice-10 inputs, Dropout-10."""
    scales = numpy_helper.from_array(np.array([1, 1, 2, 3], np.float32), "scales")
    nodes = [helper.make_node("Upsample", ["x", "scales"], ["y"], name="up", mode="linear")]
    save(model(nodes, [vi("x", TensorProto.FLOAT, [1, 1, 2, 2])],
               [vi("y", TensorProto.FLOAT, [1, 1, 4, 6])], [scales], opset=9), "opset9.onnx")
    inits = [scales] + [numpy_helper.from_array(np.array(v, np.int64), n)
                        for n, v in [("starts", [0]), ("ends", [1]), ("axes", [3])]]
    nodes = [
        helper.make_node("Resize", ["x", "scales"], ["r"], name="rz"),
        helper.make_node("Slice", ["r", "starts", "ends", "axes"], ["s"], name="slice"),
        helper.make_node("Dropout", ["s"], ["y"], name="drop"),
    ]
    save(model(nodes, [vi("x", TensorProto.FLOAT, [1, 1, 2, 2])],
               [vi("y", TensorProto.FLOAT, [1, 1, 4, 1])], inits, opset=10), "opset10.onnx")


def gen_ops13():
    """Most supported ops in their opset-13 form, in one valid model."""
    rng = np.random.default_rng(0)

    def w(name, *shape):
        return numpy_helper.from_array(rng.standard_normal(shape).astype(np.float32), name)

    def i64(name, v):
        return numpy_helper.from_array(np.array(v, np.int64), name)

    def f32(name, v):
        return numpy_helper.from_array(np.array(v, np.float32), name)

    inits = [w("W", 4, 3, 3, 3), w("B", 4), w("Wt", 4, 2, 2, 2), w("Wm", 32, 5), w("Wg", 5, 6),
             w("Bg", 6), f32("lo", -0.5), f32("hi", 0.5), f32("two", 2.0),
             i64("zero", 0), i64("axis0", [0]), i64("minus1", [-1]), i64("axis1", [1]),
             i64("starts", [0]), i64("ends", [3]), f32("roi", []),
             f32("scales", [1, 1, 2, 2])]
    N = helper.make_node
    nodes = [
        N("Conv", ["x", "W", "B"], ["conv"], name="conv", pads=[1, 1, 1, 1], strides=[1, 1],
          kernel_shape=[3, 3]),
        N("ConvTranspose", ["conv", "Wt"], ["ct"], name="ct", strides=[2, 2]),
        N("AveragePool", ["ct"], ["ap"], name="ap", kernel_shape=[2, 2], strides=[2, 2]),
        N("MaxPool", ["ap"], ["mp"], name="mp", kernel_shape=[2, 2], strides=[2, 2]),
        N("GlobalAveragePool", ["mp"], ["gap"], name="gap"),
        N("LeakyRelu", ["mp"], ["lr"], name="lr", alpha=0.1),
        N("Sigmoid", ["lr"], ["sg"], name="sg"),
        N("Tanh", ["sg"], ["th"], name="th"),
        N("Erf", ["th"], ["er"], name="er"),
        N("Clip", ["er", "lo", "hi"], ["cl"], name="cl"),
        N("Sqrt", ["sg"], ["sq"], name="sq"),
        N("Exp", ["th"], ["ex"], name="ex"),
        N("Log", ["sg"], ["lg"], name="lg"),
        N("Sub", ["ex", "lg"], ["sub"], name="sub"),
        N("Mul", ["sub", "cl"], ["mul"], name="mul"),
        N("Div", ["mul", "sq"], ["div"], name="div"),
        N("Pow", ["div", "two"], ["pw"], name="pw"),
        N("Relu", ["pw"], ["relu"], name="relu"),
        N("Shape", ["relu"], ["shape"], name="shape"),
        N("Gather", ["shape", "zero"], ["batch"], name="gather", axis=0),
        N("Unsqueeze", ["batch", "axis0"], ["batch1"], name="unsq"),
        N("Concat", ["batch1", "minus1"], ["newshape"], name="concat", axis=0),
        N("Reshape", ["relu", "newshape"], ["rs"], name="reshape"),
        N("Transpose", ["rs"], ["tr"], name="tr", perm=[1, 0]),
        N("MatMul", ["rs", "Wm"], ["mm"], name="mm"),
        N("Gemm", ["mm", "Wg", "Bg"], ["gm"], name="gemm", alpha=1.0, beta=1.0),
        N("Softmax", ["gm"], ["smx"], name="smx", axis=-1),
        N("LogSoftmax", ["gm"], ["lsm"], name="lsm", axis=1),
        N("Slice", ["gm", "starts", "ends", "axis1"], ["sl"], name="slice"),
        N("ReduceSum", ["sl", "axis1"], ["rsum"], name="rsum", keepdims=1),
        N("ReduceMean", ["sl"], ["rmean"], name="rmean", axes=[1]),
        N("ReduceMax", ["sl"], ["rmax"], name="rmax", axes=[0], keepdims=0),
        N("Squeeze", ["rsum", "axis1"], ["sqz"], name="sqz"),
        N("Equal", ["sqz", "sqz"], ["eq"], name="eq"),
        N("Where", ["eq", "sqz", "sqz"], ["wh"], name="where"),
        N("Cast", ["wh"], ["cast"], name="cast", to=TensorProto.INT64),
        N("Shape", ["gm"], ["gshape"], name="gshape"),
        N("ConstantOfShape", ["gshape"], ["cos"], name="cos",
          value=numpy_helper.from_array(np.array([0.5], np.float32))),
        N("Expand", ["Bg", "gshape"], ["exp"], name="expand"),
        N("Add", ["cos", "exp"], ["add"], name="add"),
        N("Resize", ["x", "roi", "scales"], ["rz"], name="resize", mode="nearest",
          coordinate_transformation_mode="asymmetric", nearest_mode="floor"),
        N("Flatten", ["rz"], ["flat"], name="flat", axis=1),
        N("Identity", ["flat"], ["ident"], name="ident"),
    ]
    outs = [("gap", [None, 2, 1, 1]), ("tr", [32, None]), ("smx", [None, 6]),
            ("lsm", [None, 6]), ("rmean", [None, 1]), ("rmax", [3]), ("cast", [None]),
            ("add", [None, 6]), ("ident", [None, 768])]
    m = model(nodes, [vi("x", TensorProto.FLOAT, ["N", 3, 8, 8])],
              [vi(n, TensorProto.INT64 if n == "cast" else TensorProto.FLOAT, sh)
               for n, sh in outs], inits, opset=13)
    onnx.shape_inference.infer_shapes(m, check_type=True, strict_mode=True)
    return save(m, "ops13.onnx")


def gen_softmax12():
    nodes = [
        helper.make_node("Softmax", ["x"], ["y"], name="sm", axis=1),
        helper.make_node("LogSoftmax", ["x"], ["z"], name="lsm", axis=2),
    ]
    m = model(nodes, [vi("x", TensorProto.FLOAT, ["batch", 3, 4])],
              [vi("y", TensorProto.FLOAT, ["batch", 3, 4]), vi("z", TensorProto.FLOAT, ["batch", 3, 4])],
              opset=12)
    return save(m, "softmax12.onnx")


def gen_unsupported():
    """Two distinct unsupported op types (one used twice) and an unknown
    attribute on a supported op."""
    nodes = [
        helper.make_node("Relu", ["x"], ["r"], name="relu", bogus=1),
        helper.make_node("Foo", ["r"], ["f1"], name="foo_a"),
        helper.make_node("Foo", ["f1"], ["f2"], name="foo_b"),
        helper.make_node("NonMaxSuppression", ["boxes", "scores"], ["nms"], name="nms"),
        helper.make_node("Add", ["f2", "x"], ["y"], name="add"),
    ]
    m = model(nodes, [vi("x", TensorProto.FLOAT, [1, 4]), vi("boxes", TensorProto.FLOAT, [1, 4, 4]),
                      vi("scores", TensorProto.FLOAT, [1, 1, 4])],
              [vi("y", TensorProto.FLOAT, None), vi("nms", TensorProto.INT64, None)], check=False)
    save(m, "unsupported.onnx")
    nodes = [
        helper.make_node("FusedGemm", ["x", "x"], ["g"], name="fg", domain="com.microsoft"),
        helper.make_node("Cast", ["g"], ["y"], name="cs", to=TensorProto.STRING),
    ]
    m = model(nodes, [vi("x", TensorProto.FLOAT, [4, 4])],
              [vi("y", TensorProto.STRING, None)], check=False, domains=["com.microsoft"])
    save(m, "custom_domain.onnx")


def gen_legacy6():
    """Opset 1..6 forms that need normalizing: PRelu-6 with a per-channel
    slope, BatchNormalization-6 (is_test), Dropout-6 (is_test); Concat-1
    without axis, Reshape-1's shape attribute, Cast-1's type name, Split-1's
    lengths as input; and the training forms (is_test=0), refused."""
    F = TensorProto.FLOAT
    c = [numpy_helper.from_array(np.full([3], v, dtype=np.float32), n)
         for n, v in (("scale", 1.0), ("bias", 0.0), ("mean", 0.0), ("var", 1.0))]
    nodes = [
        helper.make_node("PRelu", ["x", "slope"], ["p"], name="prelu"),
        helper.make_node("BatchNormalization", ["p", "scale", "bias", "mean", "var"], ["b"],
                         name="bn", is_test=1, epsilon=1e-5),
        helper.make_node("Dropout", ["b"], ["y"], name="drop", is_test=1, ratio=0.25),
    ]
    inits = [numpy_helper.from_array(np.array([0.1, 0.2, 0.3], dtype=np.float32), "slope")]
    m = model(nodes, [vi("x", F, [2, 3, 4, 5])], [vi("y", F, [2, 3, 4, 5])], inits + c,
              opset=6, check=False)
    save(m, "legacy6.onnx")
    for op, fname in (("BatchNormalization", "bn6_train.onnx"), ("Dropout", "dropout6_train.onnx")):
        ins = ["x", "scale", "bias", "mean", "var"] if op == "BatchNormalization" else ["x"]
        nodes = [helper.make_node(op, ins, ["y"], name="train", is_test=0)]
        save(model(nodes, [vi("x", F, [2, 3, 4, 5])], [vi("y", F, None)], c, opset=6,
                   check=False), fname)
    nodes = [
        helper.make_node("Concat", ["x", "x"], ["c"], name="concat"),
        helper.make_node("Reshape", ["c"], ["r"], name="reshape", shape=[3, 4]),
        helper.make_node("Cast", ["r"], ["d"], name="cast", to="DOUBLE"),
        helper.make_node("Split", ["d", "lens"], ["s1", "s2"], name="split", axis=0),
    ]
    inits = [numpy_helper.from_array(np.array([1, 2], dtype=np.float64), "lens")]
    m = model(nodes, [vi("x", F, [2, 3])],
              [vi("s1", TensorProto.DOUBLE, None), vi("s2", TensorProto.DOUBLE, None)], inits,
              opset=1, check=False)
    save(m, "legacy1.onnx")


def gen_bad_graphs():
    nodes = [helper.make_node("Relu", ["x"], ["y"], name="relu")]
    m = model(nodes, [vi("x", TensorProto.FLOAT, [2])], [vi("y", TensorProto.FLOAT, [2])],
              opset=13)
    m.opset_import[0].version = 18
    save(m, "opset18.onnx")
    m.opset_import[0].version = 6
    save(m, "opset6.onnx")
    m.opset_import[0].version = 29
    save(m, "opset29.onnx")

    # Nodes in reverse order: the importer sorts them.
    nodes = [
        helper.make_node("Sigmoid", ["b"], ["y"], name="third"),
        helper.make_node("Tanh", ["a"], ["b"], name="second"),
        helper.make_node("Relu", ["x"], ["a"], name="first"),
    ]
    save(model(nodes, [vi("x", TensorProto.FLOAT, [2])], [vi("y", TensorProto.FLOAT, None)],
               check=False), "unsorted.onnx")

    nodes = [helper.make_node("Add", ["x", "nowhere"], ["y"], name="adder")]
    save(model(nodes, [vi("x", TensorProto.FLOAT, [2])], [vi("y", TensorProto.FLOAT, None)],
               check=False), "undefined_input.onnx")

    nodes = [helper.make_node("Add", ["x", "b"], ["a"], name="n1"),
             helper.make_node("Relu", ["a"], ["b"], name="n2"),
             helper.make_node("Relu", ["a"], ["y"], name="n3")]
    save(model(nodes, [vi("x", TensorProto.FLOAT, [2])], [vi("y", TensorProto.FLOAT, None)],
               check=False), "cycle.onnx")

    # A real model cut in the middle of its weights.
    src = open(os.path.join(OUT, "typed_fields.onnx"), "rb").read()
    with open(os.path.join(OUT, "truncated.onnx"), "wb") as f:
        f.write(src[: len(src) * 2 // 3])

    # raw_data one byte short of its dims.
    t = numpy_helper.from_array(np.ones((2, 2), np.float32), "w")
    t.raw_data = t.raw_data[:-1]
    nodes = [helper.make_node("Add", ["x", "w"], ["y"], name="add")]
    save(model(nodes, [vi("x", TensorProto.FLOAT, [2, 2])], [vi("y", TensorProto.FLOAT, None)], [t],
               check=False), "bad_size.onnx")

    t = typed("s", TensorProto.STRING, [1], "string_data", [b"hello"])
    nodes = [helper.make_node("Identity", ["s"], ["y"], name="id")]
    save(model(nodes, [], [vi("y", TensorProto.STRING, None)], [t], check=False), "string.onnx")


def gen_strings():
    """String tensors on the CPU (tests/onnx/test_onnx_strings.c): string
    constants (an initializer, Constant value_strings and value_string, a
    StringConcat of two constants that the compiler folds), StringConcat,
    Equal, Cast both ways, StringSplit and LabelEncoder (ai.onnx.ml)."""
    init = typed("suffix", TensorProto.STRING, [3], "string_data",
                 [b"-a", "-\u00e9".encode(), b""])
    nodes = [
        helper.make_node("Constant", [], ["pre"], name="pre", value_strings=[b"<", b"[", b"("]),
        helper.make_node("Constant", [], ["one"], name="one", value_string=b"x"),
        helper.make_node("Constant", [], ["two"], name="two", value_string="\u7684".encode()),
        helper.make_node("StringConcat", ["one", "two"], ["folded"], name="fold"),
        helper.make_node("StringConcat", ["pre", "x"], ["px"], name="cat1"),
        helper.make_node("StringConcat", ["px", "suffix"], ["pxs"], name="cat2"),
        helper.make_node("StringConcat", ["pxs", "folded"], ["y"], name="cat3"),
        helper.make_node("Equal", ["x", "one"], ["eq"], name="eq"),
        helper.make_node("Cast", ["f"], ["fs"], name="f2s", to=TensorProto.STRING),
        helper.make_node("Cast", ["fs"], ["back"], name="s2f", to=TensorProto.FLOAT),
        helper.make_node("StringSplit", ["x"], ["parts", "counts"], name="split",
                         delimiter=b" "),
        helper.make_node("LabelEncoder", ["x"], ["ids"], name="enc", domain="ai.onnx.ml",
                         keys_strings=[b"x", b"a b"], values_int64s=[7, 8], default_int64=-5),
    ]
    m = model(nodes, [vi("x", TensorProto.STRING, [3]), vi("f", TensorProto.FLOAT, [4])],
              [vi("y", TensorProto.STRING, [3]), vi("eq", TensorProto.BOOL, [3]),
               vi("fs", TensorProto.STRING, [4]), vi("back", TensorProto.FLOAT, [4]),
               vi("parts", TensorProto.STRING, [3, "k"]), vi("counts", TensorProto.INT64, [3]),
               vi("ids", TensorProto.INT64, [3])],
              [init], opset=20, domains=("ai.onnx.ml",), check=False)
    m.opset_import[1].version = 4
    onnx.checker.check_model(m)
    save(m, "strings.onnx")
    # ai.onnx.ml only: no default-domain opset
    nodes = [helper.make_node("LabelEncoder", ["x"], ["y"], name="enc", domain="ai.onnx.ml",
                              keys_int64s=[1, 2], values_strings=[b"one", b"two"])]
    graph = helper.make_graph(nodes, "g", [vi("x", TensorProto.INT64, [4])],
                              [vi("y", TensorProto.STRING, [4])])
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("ai.onnx.ml", 2)],
                          producer_name="gen_onnx_fixtures")
    onnx.checker.check_model(m)
    save(m, "ml_only.onnx")


def gen_more_errors():
    """Attribute values and graphs the importer refuses, one file each."""
    c = numpy_helper.from_array(np.ones(2, np.float32), "c")
    nodes = [helper.make_node("BatchNormalization", ["x", "c", "c", "c", "c"], ["y"], name="bn",
                              spatial=0)]
    save(model(nodes, [vi("x", TensorProto.FLOAT, [1, 2, 3])], [vi("y", TensorProto.FLOAT, None)],
               [c], opset=7, check=False), "bn_spatial0.onnx")

    sparse = onnx.SparseTensorProto()
    sparse.values.CopyFrom(numpy_helper.from_array(np.ones(1, np.float32), "v"))
    sparse.indices.CopyFrom(numpy_helper.from_array(np.zeros(1, np.int64), "i"))
    sparse.dims.extend([4])
    nodes = [
        helper.make_node("Cast", ["x"], ["s"], name="to_string", to=TensorProto.STRING),
        helper.make_node("Constant", [], ["cs"], name="const_str", value_string="hi"),
        helper.make_node("Constant", [], ["csp"], name="const_sparse", sparse_value=sparse),
        helper.make_node("Identity", ["x"], ["y"], name="id"),
    ]
    save(model(nodes, [vi("x", TensorProto.FLOAT, [2])], [vi("y", TensorProto.FLOAT, None)],
               check=False), "bad_values.onnx")

    # QuantizeLinear to 4 bits (its y_zero_point an INT4 / UINT4
    # initializer): refused; a 4-bit DequantizeLinear weight imports (widened)
    sc = helper.make_tensor("sc", TensorProto.FLOAT, [], [0.5])
    nodes = [helper.make_node("QuantizeLinear", ["x", "sc", "zi"], ["qi"], name="q_int4"),
             helper.make_node("QuantizeLinear", ["x", "sc", "zu"], ["qu"], name="q_uint4"),
             helper.make_node("DequantizeLinear", ["w", "sc"], ["y"], name="dq_int4")]
    save(model(nodes, [vi("x", TensorProto.FLOAT, [4])],
               [vi("qi", TensorProto.INT4, [4]), vi("qu", TensorProto.UINT4, [4]),
                vi("y", TensorProto.FLOAT, [4])],
               [sc, helper.make_tensor("zi", TensorProto.INT4, [], [0]),
                helper.make_tensor("zu", TensorProto.UINT4, [], [3]),
                helper.make_tensor("w", TensorProto.INT4, [4], [1, -2, 7, -8])], opset=21),
         "q_int4.onnx")
    nodes = [helper.make_node("DequantizeLinear", ["w", "sc"], ["y"], name="dq_int4")]
    save(model(nodes, [], [vi("y", TensorProto.FLOAT, [4])],
               [sc, helper.make_tensor("w", TensorProto.INT4, [4], [1, -2, 7, -8])], opset=21),
         "dq_int4.onnx")

    seq = helper.make_tensor_sequence_value_info("xs", TensorProto.FLOAT, None)
    nodes = [helper.make_node("Identity", ["x"], ["y"], name="id")]
    save(model(nodes, [vi("x", TensorProto.FLOAT, [2]), seq], [vi("y", TensorProto.FLOAT, None)],
               check=False), "sequence_input.onnx")

    nodes = [helper.make_node("Relu", ["x"], ["a"], name="r1"),
             helper.make_node("Tanh", ["x"], ["a"], name="r2")]
    save(model(nodes, [vi("x", TensorProto.FLOAT, [2])], [vi("a", TensorProto.FLOAT, None)],
               check=False), "defined_twice.onnx")

    nodes = [helper.make_node("Relu", ["x"], ["a"], name="r1")]
    save(model(nodes, [vi("x", TensorProto.FLOAT, [2])], [vi("b", TensorProto.FLOAT, None)],
               check=False), "undefined_output.onnx")


def gen_if():
    """If (issue #3): branches imported inline, outputs selected by Where."""
    B, F = TensorProto.BOOL, TensorProto.FLOAT
    cond = vi("cond", B, [])

    def branch(nodes, outputs, name, inits=()):
        return helper.make_graph(nodes, name, [], list(outputs), list(inits))

    def const(name, values, dims):
        return helper.make_node("Constant", [], [name], name="c_" + name,
                                value=helper.make_tensor(name + "_v", F, dims, values))

    # Constant branches (as ONNX's node/test_if).
    then_g = branch([const("then_out", [1, 2, 3, 4, 5], [5])],
                    [vi("then_out", F, [5])], "then_body")
    else_g = branch([const("else_out", [5, 4, 3, 2, 1], [5])],
                    [vi("else_out", F, [5])], "else_body")
    nodes = [helper.make_node("If", ["cond"], ["res"], name="if",
                              then_branch=then_g, else_branch=else_g)]
    save(model(nodes, [cond], [vi("res", F, [5])], opset=11), "if_const_branches.onnx")

    # Branches read outer values (a graph input, a node output), have their
    # own initializers and Constants, reuse each other's local names ("w",
    # "tmp"), and output an outer value directly.
    then_g = branch(
        [helper.make_node("Add", ["a", "w"], ["tmp"], name="t_add"),
         helper.make_node("Mul", ["tmp", "x"], ["t_out"], name="t_mul")],
        [vi("t_out", F, [2, 3]), vi("a", F, [2, 3])], "then_body",
        [numpy_helper.from_array(np.array([1, 2, 3], np.float32), "w")])
    else_g = branch(
        [const("k", [0.5], []),
         helper.make_node("Sub", ["a", "w"], ["tmp"], name="e_sub"),
         helper.make_node("Mul", ["tmp", "k"], ["e_out"], name="e_mul")],
        [vi("e_out", F, [2, 3]), vi("x", F, [2, 3])], "else_body",
        [numpy_helper.from_array(np.array([10, 20, 30], np.float32), "w")])
    nodes = [helper.make_node("Relu", ["x"], ["a"], name="relu"),
             helper.make_node("If", ["cond"], ["y", "z"], name="if",
                              then_branch=then_g, else_branch=else_g)]
    ins = [cond, vi("x", F, [2, 3])]
    outs = [vi("y", F, [2, 3]), vi("z", F, [2, 3])]
    save(model(nodes, ins, outs), "if_outer.onnx")
    # The same with the If listed before the node it reads implicitly.
    save(model(nodes[::-1], ins, outs, check=False), "if_unsorted.onnx")

    # Nested: the inner If reads the outer branch's local "p", an outer-graph
    # input, and its own initializer; cond2 is an outer-graph input.
    inner_then = branch([helper.make_node("Add", ["p", "c"], ["q"], name="tt_add")],
                        [vi("q", F, [3])], "tt",
                        [numpy_helper.from_array(np.array([100, 200, 300], np.float32), "c")])
    inner_else = branch([helper.make_node("Mul", ["p", "x"], ["q"], name="te_mul")],
                        [vi("q", F, [3])], "te")
    outer_then = branch(
        [helper.make_node("Neg", ["x"], ["p"], name="t_neg"),
         helper.make_node("If", ["cond2"], ["r"], name="inner",
                          then_branch=inner_then, else_branch=inner_else)],
        [vi("r", F, [3])], "t")
    outer_else = branch([helper.make_node("Abs", ["x"], ["r"], name="e_abs")],
                        [vi("r", F, [3])], "e")
    nodes = [helper.make_node("If", ["cond"], ["y"], name="outer",
                              then_branch=outer_then, else_branch=outer_else)]
    save(model(nodes, [cond, vi("cond2", B, []), vi("x", F, [3])], [vi("y", F, [3])]),
         "if_nested.onnx")

    # Constant conds: an initializer (true) and a Constant node (false).
    def pick(tag):
        t = branch([helper.make_node("Neg", ["x"], [tag + "_t"], name=tag + "_neg")],
                   [vi(tag + "_t", F, [2])], tag + "_then")
        e = branch([helper.make_node("Abs", ["x"], [tag + "_e"], name=tag + "_abs")],
                   [vi(tag + "_e", F, [2])], tag + "_else")
        return t, e
    t1, e1 = pick("i")
    t2, e2 = pick("c")
    nodes = [helper.make_node("Constant", [], ["cond_c"], name="cc",
                              value=helper.make_tensor("cv", B, [], [False])),
             helper.make_node("If", ["cond_i"], ["y1"], name="if_init",
                              then_branch=t1, else_branch=e1),
             helper.make_node("If", ["cond_c"], ["y2"], name="if_const",
                              then_branch=t2, else_branch=e2)]
    save(model(nodes, [vi("x", F, [2])], [vi("y1", F, [2]), vi("y2", F, [2])],
               [helper.make_tensor("cond_i", B, [], [True])]), "if_const_cond.onnx")

    # Errors.
    def two(then_nodes, then_outs, else_nodes, else_outs, fname, n_out=1):
        nodes = [helper.make_node("If", ["cond"], ["y%d" % i for i in range(n_out)],
                                  name="sel", then_branch=branch(then_nodes, then_outs, "t"),
                                  else_branch=branch(else_nodes, else_outs, "e"))]
        save(model(nodes, [cond, vi("x", F, [2, 3])],
                   [vi("y%d" % i, F, None) for i in range(n_out)], check=False), fname)

    relu = [helper.make_node("Relu", ["x"], ["a"], name="t_relu")]
    two(relu, [vi("a", F, [2, 3])],
        [helper.make_node("ReduceSum", ["x"], ["b"], name="e_sum", keepdims=0)],
        [vi("b", F, [3])], "if_shape_mismatch.onnx")
    two(relu, [vi("a", F, [2, 3])],
        [helper.make_node("Cast", ["x"], ["b"], name="e_cast", to=TensorProto.INT64)],
        [vi("b", TensorProto.INT64, [2, 3])], "if_dtype_mismatch.onnx")
    two(relu, [vi("a", F, [2, 3])],
        [helper.make_node("RandomUniformLike", ["x"], ["b"], name="e_rand")],
        [vi("b", F, [2, 3])], "if_random.onnx")
    two([helper.make_node("SequenceConstruct", ["x"], ["s"], name="t_seq")],
        [helper.make_tensor_sequence_value_info("s", F, None)],
        [helper.make_node("SequenceConstruct", ["x"], ["s"], name="e_seq")],
        [helper.make_tensor_sequence_value_info("s", F, None)], "if_sequence.onnx")
    two(relu, [vi("a", F, [2, 3])], relu, [vi("a", F, [2, 3]), vi("x", F, [2, 3])],
        "if_output_count.onnx")
    two([helper.make_node("Relu", ["nowhere"], ["a"], name="t_relu")],
        [vi("a", F, [2, 3])], relu, [vi("a", F, [2, 3])], "if_undefined.onnx")
    two([helper.make_node("Foo", ["x"], ["a"], name="t_foo")], [vi("a", F, [2, 3])],
        relu, [vi("a", F, [2, 3])], "if_unsupported.onnx")


def gen_seq():
    """Sequences (issue #3): lowered at import time into lists of tensors."""
    F, I = TensorProto.FLOAT, TensorProto.INT64

    def ci(name, values, dims):
        return helper.make_node("Constant", [], [name], name="c_" + name,
                                value=helper.make_tensor(name + "_v", I, dims, values))

    seq_f = helper.make_tensor_sequence_value_info
    # Construct, Empty, Insert (front and end), Erase (last), Length, At (-1),
    # ConcatFromSequence.
    nodes = [
        ci("zero", [0], []), ci("minus1", [-1], []),
        helper.make_node("SequenceConstruct", ["a", "b"], ["s"], name="construct"),
        helper.make_node("SequenceEmpty", [], ["e"], name="empty", dtype=F),
        helper.make_node("SequenceInsert", ["e", "b"], ["e2"], name="insert_end"),
        helper.make_node("SequenceInsert", ["s", "b", "zero"], ["s3"], name="insert_front"),
        helper.make_node("SequenceErase", ["s3", "minus1"], ["s4"], name="erase_last"),
        helper.make_node("SequenceLength", ["s4"], ["len"], name="length"),
        helper.make_node("SequenceAt", ["s4", "minus1"], ["at"], name="at_last"),
        helper.make_node("ConcatFromSequence", ["s4"], ["cat"], name="concat", axis=0),
        helper.make_node("SequenceAt", ["e2", "zero"], ["first"], name="at_first"),
    ]
    save(model(nodes, [vi("a", F, [2, 3]), vi("b", F, [1, 3])],
               [vi("len", I, []), vi("at", F, [2, 3]), vi("cat", F, [3, 3]),
                vi("first", F, [1, 3])], opset=17), "seq_ops.onnx")

    # SplitToSequence: chunks of 1 with keepdims=0, stacked back with
    # new_axis=1; static split sizes, the sequence a graph output.
    nodes = [
        ci("sizes", [1, 3], [2]),
        helper.make_node("SplitToSequence", ["x"], ["rows"], name="split_rows", axis=0,
                         keepdims=0),
        helper.make_node("ConcatFromSequence", ["rows"], ["xt"], name="stack", axis=1,
                         new_axis=1),
        helper.make_node("SplitToSequence", ["x", "sizes"], ["parts"], name="split_sizes"),
    ]
    save(model(nodes, [vi("x", F, [4, 2])],
               [vi("xt", F, [2, 4]), seq_f("parts", F, None)], opset=17), "seq_split.onnx")

    # SequenceMap over a sequence graph input and a tensor; output sequence.
    body = helper.make_graph(
        [helper.make_node("Add", ["xi", "wi"], ["yi"], name="body_add")], "body",
        [vi("xi", F, None), vi("wi", F, [3])], [vi("yi", F, None)])
    nodes = [helper.make_node("SequenceMap", ["xs", "w"], ["ys"], name="map", body=body)]
    save(model(nodes, [seq_f("xs", F, None), vi("w", F, [3])], [seq_f("ys", F, None)],
               opset=17), "seq_map.onnx")

    # Errors: a position that is a graph input; a position out of range; a
    # sequence read by a tensor op.
    nodes = [helper.make_node("SequenceConstruct", ["a"], ["s"], name="construct"),
             helper.make_node("SequenceAt", ["s", "pos"], ["y"], name="at_dyn")]
    save(model(nodes, [vi("a", F, [2]), vi("pos", I, [])], [vi("y", F, [2])], opset=17),
         "seq_dynamic_pos.onnx")
    nodes = [ci("five", [5], []),
             helper.make_node("SequenceConstruct", ["a"], ["s"], name="construct"),
             helper.make_node("SequenceAt", ["s", "five"], ["y"], name="at_5")]
    save(model(nodes, [vi("a", F, [2])], [vi("y", F, [2])], opset=17),
         "seq_bad_pos.onnx")
    nodes = [helper.make_node("SequenceConstruct", ["a"], ["s"], name="construct"),
             helper.make_node("Relu", ["s"], ["y"], name="relu_seq")]
    save(model(nodes, [vi("a", F, [2])], [vi("y", F, [2])], opset=17, check=False),
         "seq_consumed.onnx")
    # SplitToSequence whose length is not known at compile time: a symbolic
    # dim (imported as a stacked sequence of run-time length), a split fed
    # as a graph input (refused).
    nodes = [helper.make_node("SplitToSequence", ["x"], ["s"], name="split_sym"),
             helper.make_node("ConcatFromSequence", ["s"], ["y"], name="cat", axis=0)]
    save(model(nodes, [vi("x", F, ["n"])], [vi("y", F, ["n"])], opset=17),
         "seq_split_symbolic.onnx")
    nodes = [helper.make_node("SplitToSequence", ["x", "sp"], ["s"], name="split_dyn"),
             helper.make_node("ConcatFromSequence", ["s"], ["y"], name="cat", axis=0)]
    save(model(nodes, [vi("x", F, [4]), vi("sp", I, [2])], [vi("y", F, [4])], opset=17),
         "seq_split_dynamic.onnx")


def gen_loop():
    """Loop and Scan (issue #3): unrolled at import time (onnx_loop.c)."""
    F, I, B = TensorProto.FLOAT, TensorProto.INT64, TensorProto.BOOL

    def loop_body(cond_node):
        # y_out = y + x (x from the outer graph); scan s = y_out * iter.
        return helper.make_graph(
            [cond_node,
             helper.make_node("Add", ["y", "x"], ["y_out"], name="body_add"),
             helper.make_node("Cast", ["iter"], ["iter_f"], name="body_cast", to=F),
             helper.make_node("Mul", ["y_out", "iter_f"], ["s"], name="body_mul")],
            "body", [vi("iter", I, []), vi("cond", B, []), vi("y", F, [2])],
            [vi("cond_out", B, []), vi("y_out", F, [2]), vi("s", F, [2])])

    same = helper.make_node("Identity", ["cond"], ["cond_out"], name="body_cond")
    ins = [vi("x", F, [2]), vi("y0", F, [2])]
    outs = [vi("y_final", F, [2]), vi("scans", F, ["n", 2])]

    def loop_model(m_init, body, fname, m_input=None, cond=""):
        inits = [] if m_init is None else [helper.make_tensor("m", I, [], [m_init])]
        nodes = [helper.make_node("Loop", ["m", cond, "y0"], ["y_final", "scans"],
                                  name="loop", body=body)]
        graph_ins = ins + ([vi("m", I, [])] if m_input else [])
        save(model(nodes, graph_ins, outs, inits, opset=13), fname)

    loop_model(3, loop_body(same), "loop_sum.onnx")
    loop_model(0, loop_body(same), "loop_zero.onnx")
    loop_model(None, loop_body(same), "loop_dynamic_m.onnx", m_input=True)
    loop_model(70000, loop_body(same), "loop_too_many.onnx")
    loop_model(40000, loop_body(same), "loop_too_many_nodes.onnx")
    # The body's cond output can turn false: y_out[0] < 10.
    less = helper.make_graph(
        [helper.make_node("Add", ["y", "x"], ["y_out"], name="body_add"),
         helper.make_node("ReduceSum", ["y_out"], ["tot"], name="body_sum", keepdims=0),
         helper.make_node("Less", ["tot", "ten"], ["cond_out"], name="body_less"),
         helper.make_node("Identity", ["y_out"], ["s"], name="body_scan")],
        "body", [vi("iter", I, []), vi("cond", B, []), vi("y", F, [2])],
        [vi("cond_out", B, []), vi("y_out", F, [2]), vi("s", F, [2])],
        [helper.make_tensor("ten", F, [], [10.0])])
    loop_model(3, less, "loop_cond_false.onnx")

    # Scan-9: a running sum over the columns of x ([2, 3], scan_input_axes 1);
    # the scan output stacked along axis 1 in reverse order.
    body = helper.make_graph(
        [helper.make_node("Add", ["s", "xi"], ["s_out"], name="body_add"),
         helper.make_node("Identity", ["s_out"], ["y"], name="body_id")],
        "body", [vi("s", F, [2]), vi("xi", F, [2])], [vi("s_out", F, [2]), vi("y", F, [2])])
    nodes = [helper.make_node("Scan", ["s0", "x"], ["s_final", "ys"], name="scan", body=body,
                              num_scan_inputs=1, scan_input_axes=[1],
                              scan_output_axes=[1], scan_output_directions=[1])]
    save(model(nodes, [vi("s0", F, [2]), vi("x", F, [2, 3])],
               [vi("s_final", F, [2]), vi("ys", F, [2, 3])], opset=11), "scan_sum.onnx")
    # Scan-8: batch 2, the same body over x [2, 3, 2] read in reverse.
    nodes = [helper.make_node("Scan", ["", "s0", "x"], ["s_final", "ys"], name="scan8",
                              body=body, num_scan_inputs=1, directions=[1])]
    save(model(nodes, [vi("s0", F, [2, 2]), vi("x", F, [2, 3, 2])],
               [vi("s_final", F, [2, 2]), vi("ys", F, [2, 3, 2])], opset=8), "scan8_sum.onnx")


def gen_optional():
    """Optionals (issue #3): present or none at compile time (onnx_optional.c)."""
    F, B, I = TensorProto.FLOAT, TensorProto.BOOL, TensorProto.INT64

    def opt_vi(name, inner):
        return helper.make_value_info(name, helper.make_optional_type_proto(inner))

    t_f = helper.make_tensor_type_proto(F, [2])
    s_f = helper.make_sequence_type_proto(helper.make_tensor_type_proto(F, None))
    # Optional of a tensor and of a sequence, Optional() of a type, Identity of
    # a none; HasElement and GetElement of each; optional outputs.
    nodes = [
        helper.make_node("Optional", ["x"], ["ox"], name="wrap_x"),
        helper.make_node("OptionalHasElement", ["ox"], ["has_x"], name="has_x"),
        helper.make_node("OptionalGetElement", ["ox"], ["gx"], name="get_x"),
        helper.make_node("Optional", [], ["none"], name="make_none", type=t_f),
        helper.make_node("Identity", ["none"], ["none2"], name="copy_none"),
        helper.make_node("OptionalHasElement", ["none2"], ["has_none"], name="has_none"),
        helper.make_node("SequenceConstruct", ["x", "x"], ["s"], name="construct"),
        helper.make_node("Optional", ["s"], ["os"], name="wrap_s"),
        helper.make_node("OptionalGetElement", ["os"], ["gs"], name="get_s"),
        helper.make_node("SequenceLength", ["gs"], ["len"], name="length"),
    ]
    save(model(nodes, [vi("x", F, [2])],
               [vi("has_x", B, []), vi("gx", F, [2]), vi("has_none", B, []),
                vi("len", I, []), opt_vi("ox", t_f), opt_vi("none2", t_f)], opset=16),
         "opt_ops.onnx")

    # Optional graph inputs (a tensor, a sequence); an If whose cond is
    # Not(OptionalHasElement(o)), known at compile time, with optional outputs.
    def branch(nodes, out, name):
        return helper.make_graph(nodes, name, [], [opt_vi(out, t_f)])

    nodes = [
        helper.make_node("OptionalHasElement", ["o"], ["has_o"], name="has_o"),
        helper.make_node("OptionalHasElement", ["so"], ["has_so"], name="has_so"),
        helper.make_node("Not", ["has_o"], ["no_o"], name="not_o"),
        helper.make_node(
            "If", ["no_o"], ["y"], name="sel",
            then_branch=branch([helper.make_node("Optional", [], ["t_none"], name="t_none",
                                                 type=t_f)], "t_none", "t"),
            else_branch=branch([helper.make_node("Identity", ["o"], ["e_o"], name="e_id")],
                               "e_o", "e")),
    ]
    save(model(nodes, [opt_vi("o", t_f), opt_vi("so", s_f)],
               [vi("has_o", B, []), vi("has_so", B, []), opt_vi("y", t_f)], opset=16),
         "opt_inputs.onnx")

    # Errors: GetElement of a none; a none read by a tensor op.
    nodes = [helper.make_node("Optional", [], ["n"], name="make_none", type=t_f),
             helper.make_node("OptionalGetElement", ["n"], ["y"], name="get_none")]
    save(model(nodes, [], [vi("y", F, [2])], opset=16), "opt_get_none.onnx")
    nodes = [helper.make_node("Optional", [], ["n"], name="make_none", type=t_f),
             helper.make_node("Relu", ["n"], ["y"], name="relu_none")]
    save(model(nodes, [], [vi("y", F, [2])], opset=16, check=False),
         "opt_none_consumed.onnx")


def gen_tfidf():
    """TfIdfVectorizer (opset 9): an integer pool and weights (imports and
    runs), and the string forms dmlc refuses (no string dtype)."""
    S, I64 = TensorProto.STRING, TensorProto.INT64
    attrs = dict(mode="TFIDF", min_gram_length=1, max_gram_length=2, max_skip_count=1,
                 ngram_counts=[0, 3], ngram_indexes=[2, 0, 1, 3])
    nodes = [helper.make_node("TfIdfVectorizer", ["x"], ["y"], name="tfidf",
                              pool_int64s=[7, 3, 5, 3, 5], weights=[0.5, 2.0, 1.5, 4.0],
                              **attrs)]
    save(model(nodes, [vi("x", I64, [2, 4])], [vi("y", TensorProto.FLOAT, [2, 4])], opset=9),
         "tfidf_ints.onnx")
    nodes = [helper.make_node("TfIdfVectorizer", ["x"], ["y"], name="tfidf_str",
                              pool_strings=["a", "b", "c", "b", "c"], **attrs)]
    save(model(nodes, [vi("x", I64, [4])], [vi("y", TensorProto.FLOAT, [4])], opset=9,
               check=False), "tfidf_pool_strings.onnx")
    save(model(nodes, [vi("x", S, [4])], [vi("y", TensorProto.FLOAT, [4])], opset=9),
         "tfidf_string_input.onnx")


def gen_gradient():
    """ai.onnx.preview.training Gradient (lowered by the expand-gradient pass)."""
    F, I = TensorProto.FLOAT, TensorProto.INT64
    T = "ai.onnx.preview.training"

    def grad(inputs, outputs, xs, y, zs=None, name="grad"):
        kw = {"zs": zs} if zs is not None else {}
        return helper.make_node("Gradient", inputs, outputs, name=name, domain=T, xs=xs,
                                y=y, **kw)

    # A non-scalar y over a symbolic batch (the gradient of sum(z)): z =
    # Tanh(MatMul(x, W) + b) with W an initializer, b in zs; u is not used by
    # z (zeros); the gradient with respect to x is not asked for (empty
    # output name); z is itself an output.
    w = numpy_helper.from_array(
        np.array([[0.5, -1.0], [0.25, 2.0], [-0.75, 0.125]], dtype=np.float32), "W")
    nodes = [
        helper.make_node("MatMul", ["x", "W"], ["xw"], name="mm"),
        helper.make_node("Add", ["xw", "b"], ["pre"], name="add"),
        helper.make_node("Tanh", ["pre"], ["z"], name="tanh"),
        grad(["W", "x", "u", "b"], ["dW", "", "du"], ["W", "x", "u"], "z", zs=["b"]),
    ]
    save(model(nodes, [vi("x", F, ["N", 3]), vi("b", F, [2]), vi("u", F, [4])],
               [vi("z", F, ["N", 2]), vi("dW", F, [3, 2]), vi("du", F, [4])], [w],
               domains=[T]), "grad_batch.onnx")

    # Errors. xs names an unknown tensor; y is computed after the node; an
    # input is not the tensor xs names; y is an integer tensor; the path
    # from x to y goes through an op without a VJP rule.
    add = helper.make_node("Add", ["a", "b"], ["c"], name="add")
    ab = [vi("a", F, [2]), vi("b", F, [2])]
    out = [vi("da", F, [2])]
    save(model([add, grad(["a"], ["da"], ["nope"], "c")], ab, out, domains=[T],
               check=False), "grad_unknown_x.onnx")
    save(model([grad(["a"], ["da"], ["a"], "c"), add], ab, out, domains=[T], check=False),
         "grad_y_late.onnx")
    save(model([add, grad(["b"], ["da"], ["a"], "c")], ab, out, domains=[T], check=False),
         "grad_input_differs.onnx")
    nodes = [helper.make_node("Cast", ["a"], ["ai"], name="cast", to=I),
             grad(["a"], ["da"], ["a"], "ai")]
    save(model(nodes, [vi("a", F, [2])], out, domains=[T]), "grad_y_int.onnx")
    gw = numpy_helper.from_array(np.full((1, 6, 3), 0.1, dtype=np.float32), "gw")
    gr = numpy_helper.from_array(np.full((1, 6, 2), 0.2, dtype=np.float32), "gr")
    nodes = [helper.make_node("GRU", ["a", "gw", "gr"], ["h"], name="gru", hidden_size=2),
             grad(["a"], ["da"], ["a"], "h")]
    save(model(nodes, [vi("a", F, [2, 1, 3])], [vi("da", F, [2, 1, 3])], [gw, gr],
               domains=[T]), "grad_no_rule.onnx")


def gen_gpu_missing():
    """An op no GPU target emits (Multinomial), for tests/cli's list of the
    ops a --target cannot emit."""
    nodes = [helper.make_node("Multinomial", ["x"], ["y"], name="draw", sample_size=2,
                              dtype=TensorProto.INT32, seed=1.0)]
    save(model(nodes, [vi("x", TensorProto.FLOAT, [3, 3])],
               [vi("y", TensorProto.INT32, [3, 2])]), "gpu_missing_op.onnx")



def gen_empty_init():
    """An empty initializer (Resize's roi, 0 elements) listed before other
    initializers: its zero bytes share a weights offset with the next one,
    which once made the package fail to load (issue 15)."""
    roi = numpy_helper.from_array(np.zeros((0,), np.float32), "roi")
    scales = numpy_helper.from_array(np.array([1, 1, 2, 2], np.float32), "scales")
    w = numpy_helper.from_array(np.array([0.5], np.float32), "w")
    nodes = [helper.make_node("Resize", ["x", "roi", "scales"], ["r"], mode="nearest"),
             helper.make_node("Mul", ["r", "w"], ["y"])]
    save(model(nodes, [vi("x", TensorProto.FLOAT, [1, 1, 2, 2])],
               [vi("y", TensorProto.FLOAT, [1, 1, 4, 4])], [roi, scales, w]),
         "empty_initializer.onnx")
def gen_opset18_23():
    """Forms of opsets 18..23 (Debian's checker predates them: not checked):
    Pad-18 with constant axes (imported), and forms the importer refuses."""
    f, i64 = TensorProto.FLOAT, TensorProto.INT64
    pads = numpy_helper.from_array(np.array([1, 1], np.int64), "pads")
    axes = numpy_helper.from_array(np.array([1], np.int64), "axes")
    nodes = [helper.make_node("Pad", ["x", "pads", "", "axes"], ["y"], name="pad")]
    save(model(nodes, [vi("x", f, [2, 3])], [vi("y", f, [2, 5])], [pads, axes], opset=18,
               check=False), "pad18_axes.onnx")
    scale = numpy_helper.from_array(np.ones([3, 2], np.float32), "scale")
    nodes = [helper.make_node("QuantizeLinear", ["x", "scale"], ["y"], name="q",
                              block_size=2)]
    save(model(nodes, [vi("x", f, [3, 4])], [vi("y", TensorProto.UINT8, [3, 4])], [scale],
               opset=21, check=False), "quantize21_block.onnx")
    scale = numpy_helper.from_array(np.array(0.5, np.float32), "scale")
    nodes = [helper.make_node("DequantizeLinear", ["x", "scale"], ["y"], name="dq",
                              output_dtype=TensorProto.FLOAT16)]
    save(model(nodes, [vi("x", TensorProto.UINT8, [4])], [vi("y", TensorProto.FLOAT16, [4])],
               [scale], opset=23, check=False), "dequantize23_dtype.onnx")
    # Opset 18's reductions take axes as input 1; Split-18's num_outputs.
    nodes = [helper.make_node("ReduceMax", ["x", "axes"], ["r"], name="rmax", keepdims=0),
             helper.make_node("Split", ["x"], ["s0", "s1"], name="split", axis=1,
                              num_outputs=2)]
    save(model(nodes, [vi("x", f, [2, 3])],
               [vi("r", f, [2]), vi("s0", f, [2, 2]), vi("s1", f, [2, 1])], [axes],
               opset=18, check=False), "reduce_split18.onnx")
    # LpPool without kernel_shape (required).
    nodes = [helper.make_node("LpPool", ["x"], ["y"], name="lp", p=2)]
    save(model(nodes, [vi("x", f, [1, 1, 4, 4])], [vi("y", f, [1, 1, 3, 3])], opset=18,
               check=False), "lppool_nokernel.onnx")


def gen_opset24_28():
    """Forms of opsets 24..28 (gen_opset24_28 needs an onnx with their
    dtypes, >= 1.20: the onnx venv's (scripts/onnx_node_suite.sh) 1.23.2 wrote them, ir_version 12; the
    other fixtures keep Debian's). Codes of the newer dtypes as numbers."""
    f, f16 = TensorProto.FLOAT, TensorProto.FLOAT16
    INT2, FLOAT8E8M0, FLOAT4E2M1 = 26, 24, 23

    def m12(*args, **kw):
        m = model(*args, check=False, **kw)
        m.ir_version = 12
        return m

    # Swish-24 and SwiGLU-28: expanded into CastLike/Mul/Sigmoid/Mul.
    nodes = [helper.make_node("Swish", ["x"], ["y"], name="swish", alpha=0.5),
             helper.make_node("SwiGLU", ["x", "b"], ["z"], name="glu")]
    save(m12(nodes, [vi("x", f, [2, 3]), vi("b", f, [2, 3])],
             [vi("y", f, [2, 3]), vi("z", f, [2, 3])], opset=28), "swish28.onnx")
    # Cast-24's round_mode (float8e8m0 targets only) is dropped.
    nodes = [helper.make_node("Cast", ["x"], ["y"], name="c", to=f16, round_mode="nearest")]
    save(m12(nodes, [vi("x", f, [2])], [vi("y", f16, [2])], opset=24), "cast24_round.onnx")
    # ... and kept for a float8e8m0 target; a round_mode other than
    # up/down/nearest is an error.
    nodes = [helper.make_node("Cast", ["x"], ["y"], name="c", to=FLOAT8E8M0,
                              round_mode="nearest")]
    save(m12(nodes, [vi("x", f, [2])], [vi("y", FLOAT8E8M0, [2])], opset=24),
         "cast24_e8m0.onnx")
    nodes = [helper.make_node("Cast", ["x"], ["y"], name="c", to=FLOAT8E8M0,
                              round_mode="sideways")]
    save(m12(nodes, [vi("x", f, [2])], [vi("y", FLOAT8E8M0, [2])], opset=24),
         "cast24_bad_round.onnx")
    # Dtypes dmlc lacks: refused by name.
    nodes = [helper.make_node("Cast", ["x"], ["y"], name="c", to=INT2)]
    save(m12(nodes, [vi("x", f, [2])], [vi("y", INT2, [2])], opset=25), "cast25_int2.onnx")
    nodes = [helper.make_node("Cast", ["x"], ["y"], name="c", to=f)]
    save(m12(nodes, [vi("x", FLOAT8E8M0, [2])], [vi("y", f, [2])], opset=24),
         "input_e8m0.onnx")
    nodes = [helper.make_node("BitCast", ["x"], ["y"], name="bc", to=FLOAT4E2M1)]
    save(m12(nodes, [vi("x", TensorProto.UINT8, [2])], [vi("y", FLOAT4E2M1, [2])],
             opset=26), "bitcast26_f4.onnx")
    # Pad-25 with axes fed at run time: imports (the pads for every dim are
    # computed); with a symbolic number of axes it is refused.
    pads = numpy_helper.from_array(np.array([1, 2], np.int64), "pads")
    nodes = [helper.make_node("Pad", ["x", "pads", "", "axes"], ["y"], name="pad")]
    save(m12(nodes, [vi("x", f, [2, 3]), vi("axes", TensorProto.INT64, [1])],
             [vi("y", f, None)], [pads], opset=25), "pad25_axes_input.onnx")
    save(m12(nodes, [vi("x", f, [2, 3]), vi("axes", TensorProto.INT64, ["n"])],
             [vi("y", f, None)], [pads], opset=25), "pad25_axes_symlen.onnx")
    # Range-27 stash_type=0 on float16 (accumulation in float16): refused.
    nodes = [helper.make_node("Range", ["s", "l", "d"], ["y"], name="r", stash_type=0)]
    save(m12(nodes, [vi("s", f16, []), vi("l", f16, []), vi("d", f16, [])],
             [vi("y", f16, None)], opset=27), "range27_stash0.onnx")


def main():
    os.makedirs(OUT, exist_ok=True)
    gen_typed_fields()
    gen_external()
    gen_constants()
    gen_init_as_input()
    gen_opset11()
    gen_opset7()
    gen_softmax12()
    gen_opset9_10()
    gen_ops13()
    gen_unsupported()
    gen_legacy6()
    gen_bad_graphs()
    gen_more_errors()
    gen_if()
    gen_seq()
    gen_loop()
    gen_optional()
    gen_tfidf()
    gen_gradient()
    gen_gpu_missing()
    gen_empty_init()
    gen_opset18_23()
    gen_opset24_28()
    gen_strings()
    for f in sorted(os.listdir(OUT)):
        print("%-24s %6d bytes" % (f, os.path.getsize(os.path.join(OUT, f))))


if __name__ == "__main__":
    main()
