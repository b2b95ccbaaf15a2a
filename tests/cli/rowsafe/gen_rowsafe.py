#!/usr/bin/python3
"""Writes the models and arrays of tests/cli/test_rowsafe.sh (committed;
rerun after changing this script; every file is deterministic):

    python3 tests/cli/rowsafe/gen_rowsafe.py

softmax0.onnx     x f32[N,4] -> Softmax(axis=0) 'sm' -> y: mixes rows
reducesum0.onnx   x f32[N,4] -> y = x - ReduceSum(x, axes=[0], keepdims=1)
                  ('rs'): mixes rows
transpose.onnx    x f32[N,4] -> Transpose(perm=[1,0]) 't' -> y f32[4,N]
batchnorm.onnx    x f32[N,3,2,2] -> BatchNormalization (inference) 'bn' ->
                  Relu -> Softmax(axis=1) -> y: rows independent
two.onnx          a, b f32[N,4] -> y = a * b: rows independent
x100.npy          f32[100,4] (normal, seed 1); x1000_bn.npy f32[1000,3,2,2]
a400.npy, b40.npy f32[400,4] and f32[40,4]
"""
import os

import numpy as np
import onnx
from onnx import TensorProto, helper

OUT = os.path.dirname(os.path.abspath(__file__))


def model(nodes, inputs, outputs, inits=()):
    g = helper.make_graph(nodes, "g", inputs, outputs, list(inits))
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    onnx.checker.check_model(m)
    return m


def save(m, name):
    with open(os.path.join(OUT, name), "wb") as f:
        f.write(m.SerializeToString())


def vi(name, shape):
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, shape)


X = vi("x", ["N", 4])
save(model([helper.make_node("Softmax", ["x"], ["y"], name="sm", axis=0)], [X], [vi("y", ["N", 4])]),
     "softmax0.onnx")
axes = helper.make_tensor("axes", TensorProto.INT64, [1], [0])
save(model([helper.make_node("ReduceSum", ["x", "axes"], ["s"], name="rs", keepdims=1),
            helper.make_node("Sub", ["x", "s"], ["y"], name="sub")],
           [X], [vi("y", ["N", 4])], [axes]), "reducesum0.onnx")
save(model([helper.make_node("Transpose", ["x"], ["y"], name="t", perm=[1, 0])], [X],
           [vi("y", [4, "N"])]), "transpose.onnx")
rng = np.random.default_rng(1)
bn = [helper.make_tensor(n, TensorProto.FLOAT, [3], v.tolist())
      for n, v in (("sc", rng.uniform(0.5, 2, 3)), ("bi", rng.normal(size=3)),
                   ("mu", rng.normal(size=3)), ("var", rng.uniform(0.5, 2, 3)))]
save(model([helper.make_node("BatchNormalization", ["x", "sc", "bi", "mu", "var"], ["b"], name="bn"),
            helper.make_node("Relu", ["b"], ["r"], name="relu"),
            helper.make_node("Softmax", ["r"], ["y"], name="sm1", axis=1)],
           [vi("x", ["N", 3, 2, 2])], [vi("y", ["N", 3, 2, 2])], bn), "batchnorm.onnx")
save(model([helper.make_node("Mul", ["a", "b"], ["y"], name="mul")], [vi("a", ["N", 4]), vi("b", ["N", 4])],
           [vi("y", ["N", 4])]), "two.onnx")

x100 = rng.normal(size=(100, 4)).astype(np.float32)
xbn = rng.normal(size=(1000, 3, 2, 2)).astype(np.float32)
np.save(os.path.join(OUT, "x100.npy"), x100)
np.save(os.path.join(OUT, "x1000_bn.npy"), xbn)
np.save(os.path.join(OUT, "a400.npy"), rng.normal(size=(400, 4)).astype(np.float32))
np.save(os.path.join(OUT, "b40.npy"), rng.normal(size=(40, 4)).astype(np.float32))
