"""Writes the small ONNX models of tests/check (dmlc check's op packages).

    python3 tests/check/gen_check_models.py tests/check

Each model exercises a family of GPU kernels on a symbolic batch:
  elementwise.onnx  Pow with negative bases, Exp, Tanh, Sigmoid, Erf, Sqrt,
                    Div, Abs, Neg, Max/Min, Where on a computed mask, Floor
                    and Cast to int32 and back
  reduce.onnx       ReduceSum/Mean, Softmax, LayerNormalization over a row of
                    700 elements, MatMul
They are what `dmlc check` passes on lavapipe. Left out because it found
them wrong there (2026-12-06, main at 0cb9116): Log of a subnormal (e.g.
log(1.4e-45) gave -88.03, not -103.28 or, flushed, -inf) and ReduceMax of
a row holding NaN (inf, not NaN); both pass since (ONNX's test_log and
test_reduce_max_* node tests under `dmlc check`, h/edges), and
tests/check/every_op.c checks every elementwise op and reduction.
  move.onnx         Transpose, Concat, Slice, ArgMax feeding Gather (indices
                    computed in the graph), Reshape
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def save(model, out_dir, name):
    model.opset_import[0].version = 17
    model.ir_version = 8
    inferred = onnx.shape_inference.infer_shapes(model)
    types = {vi.name: vi.type for vi in list(inferred.graph.value_info) + list(inferred.graph.output)}
    for o in model.graph.output:  # the outputs' shapes, as inferred
        o.type.CopyFrom(types[o.name])
    onnx.checker.check_model(model)
    onnx.save(model, os.path.join(out_dir, name))


def elementwise(out_dir):
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 64])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 64])
    outs = [helper.make_tensor_value_info(f"o{i}", TensorProto.FLOAT, None) for i in range(5)]
    three = numpy_helper.from_array(np.array([3.0], np.float32), "three")
    nodes = [
        helper.make_node("Pow", ["x", "three"], ["p"]),  # negative bases, integral exponent
        helper.make_node("Pow", ["x", "y"], ["pxy"]),  # NaN for negative bases
        helper.make_node("Exp", ["x"], ["e"]),
        helper.make_node("Abs", ["y"], ["ay"]),
        helper.make_node("Neg", ["ay"], ["l"]),
        helper.make_node("Add", ["p", "e"], ["pe"]),
        helper.make_node("Tanh", ["pe"], ["t"]),
        helper.make_node("Sigmoid", ["l"], ["s"]),
        helper.make_node("Mul", ["t", "s"], ["o0"]),
        helper.make_node("Erf", ["x"], ["er"]),
        helper.make_node("Sqrt", ["ay"], ["sq"]),
        helper.make_node("Div", ["er", "sq"], ["o1"]),
        helper.make_node("Less", ["x", "y"], ["mask"]),
        helper.make_node("Neg", ["x"], ["nx"]),
        helper.make_node("Where", ["mask", "nx", "y"], ["w"]),
        helper.make_node("Max", ["w", "x"], ["o2"]),
        helper.make_node("Min", ["pxy", "y"], ["o3"]),
        helper.make_node("Floor", ["x"], ["fx"]),
        helper.make_node("Cast", ["fx"], ["ix"], to=TensorProto.INT32),
        helper.make_node("Cast", ["ix"], ["o4"], to=TensorProto.FLOAT),
    ]
    g = helper.make_graph(nodes, "elementwise", [x, y], outs, [three])
    save(helper.make_model(g), out_dir, "elementwise.onnx")


def reduce(out_dir):
    rng = np.random.default_rng(0)
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 700])
    outs = [helper.make_tensor_value_info(f"o{i}", TensorProto.FLOAT, None) for i in range(5)]
    inits = [
        numpy_helper.from_array(np.array([1], np.int64), "axes"),
        numpy_helper.from_array(rng.standard_normal(700).astype(np.float32), "gamma"),
        numpy_helper.from_array(rng.standard_normal(700).astype(np.float32), "beta"),
        numpy_helper.from_array(rng.standard_normal((700, 16)).astype(np.float32), "w"),
    ]
    nodes = [
        helper.make_node("ReduceSum", ["x", "axes"], ["o0"], keepdims=1),
        helper.make_node("ReduceMean", ["x"], ["o1"], axes=[1], keepdims=1),
        helper.make_node("ReduceL2", ["x"], ["o2"], axes=[1], keepdims=1),
        helper.make_node("Softmax", ["x"], ["o3"], axis=1),
        helper.make_node("LayerNormalization", ["x", "gamma", "beta"], ["ln"], axis=1),
        helper.make_node("MatMul", ["ln", "w"], ["o4"]),
    ]
    g = helper.make_graph(nodes, "reduce", [x], outs, inits)
    save(helper.make_model(g), out_dir, "reduce.onnx")


def move(out_dir):
    rng = np.random.default_rng(1)
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 8, 12])
    outs = [helper.make_tensor_value_info(f"o{i}", TensorProto.FLOAT, None) for i in range(3)]
    inits = [
        numpy_helper.from_array(rng.standard_normal((12, 5)).astype(np.float32), "table"),
        numpy_helper.from_array(np.array([1], np.int64), "s_start"),
        numpy_helper.from_array(np.array([7], np.int64), "s_end"),
        numpy_helper.from_array(np.array([1], np.int64), "s_axes"),
        numpy_helper.from_array(np.array([0, -1], np.int64), "shape"),
    ]
    nodes = [
        helper.make_node("Transpose", ["x"], ["xt"], perm=[0, 2, 1]),
        helper.make_node("Slice", ["x", "s_start", "s_end", "s_axes"], ["xs"]),
        helper.make_node("Concat", ["xs", "xs"], ["o0"], axis=1),
        helper.make_node("ArgMax", ["x"], ["am"], axis=2, keepdims=0),  # [batch, 8] in [0, 12)
        helper.make_node("Gather", ["table", "am"], ["o1"], axis=0),  # [batch, 8, 5]
        helper.make_node("Reshape", ["xt", "shape"], ["o2"]),
    ]
    g = helper.make_graph(nodes, "move", [x], outs, inits)
    save(helper.make_model(g), out_dir, "move.onnx")


if __name__ == "__main__":
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__))
    elementwise(out)
    reduce(out)
    move(out)
