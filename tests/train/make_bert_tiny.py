"""Writes bert_tiny.onnx (beside this script): a one-layer BERT-class
encoder classifier small enough to train on lavapipe, for
test_train_cnn_device.c. Run with onnx 1.23 and numpy:
    python3 tests/train/make_bert_tiny.py

  ids i64[N,8] (tokens < 50) -> Gather(embedding [50,16]) + positions [8,16]
    -> LayerNormalization
    -> self-attention, 2 heads of 8 (MatMul + bias for q, k, v; Reshape,
       Transpose, MatMul, Mul by 1/sqrt(8), Softmax, MatMul, output
       projection), + residual, LayerNormalization
    -> feed-forward 16 -> 32 -> 16 with GELU as torch.onnx writes it
       (Div by sqrt 2, Erf, Add 1, Mul, Mul 0.5), + residual,
       LayerNormalization
    -> ReduceMean over the sequence -> Gemm(16 -> 5) -> y f32[N,5]

The embedding's gradient is a ScatterND over the [N, 8] token ids (N
symbolic). Weights: normal(0, 0.1) from numpy's default_rng(0), biases
zero, LayerNormalization scale 1 and bias 0 (untrained).
"""
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

rng = np.random.default_rng(0)
V, D, S, H, F = 50, 16, 8, 2, 32
inits = []
nodes = []


def weight(name, shape):
    inits.append(numpy_helper.from_array(
        (rng.standard_normal(shape) * 0.1).astype(np.float32), name))
    return name


def const(name, value):
    inits.append(numpy_helper.from_array(np.array(value), name))
    return name


def node(op, ins, out, **attrs):
    nodes.append(helper.make_node(op, ins, [out], **attrs))
    return out


def layer_norm(x, name):
    const(name + ".s", np.ones(D, np.float32))
    const(name + ".b", np.zeros(D, np.float32))
    return node("LayerNormalization", [x, name + ".s", name + ".b"], name, axis=-1)


def linear(x, name, fan_in, fan_out):
    weight(name + ".w", (fan_in, fan_out))
    const(name + ".b", np.zeros(fan_out, np.float32))
    return node("Add", [node("MatMul", [x, name + ".w"], name + ".mm"), name + ".b"], name)


weight("emb", (V, D))
weight("pos", (S, D))
x = layer_norm(node("Add", [node("Gather", ["emb", "ids"], "tok"), "pos"], "x0"), "ln1")
heads = {}
for n in "qkv":
    r = node("Reshape", [linear(x, n, D, D), const(n + ".shape",
                                                    np.array([0, S, H, D // H], np.int64))],
             n + ".r")
    heads[n] = node("Transpose", [r], n + ".t", perm=[0, 2, 3, 1] if n == "k" else [0, 2, 1, 3])
scores = node("Mul", [node("MatMul", [heads["q"], heads["k"]], "qk"),
                      const("scale", np.array(1 / np.sqrt(D // H), np.float32))], "scores")
ctx = node("MatMul", [node("Softmax", [scores], "p", axis=-1), heads["v"]], "ctx")
ctx = node("Reshape", [node("Transpose", [ctx], "ctx.t", perm=[0, 2, 1, 3]),
                       const("ctx.shape", np.array([0, S, D], np.int64))], "ctx.r")
x = layer_norm(node("Add", [linear(ctx, "o", D, D), x], "x2"), "ln2")
f = linear(x, "f1", D, F)
g = node("Div", [f, const("sqrt2", np.array(np.sqrt(2), np.float32))], "g0")
g = node("Add", [node("Erf", [g], "g1"), const("one", np.array(1, np.float32))], "g2")
g = node("Mul", [node("Mul", [f, g], "g3"), const("half", np.array(0.5, np.float32))], "gelu")
x = layer_norm(node("Add", [linear(g, "f2", F, D), x], "x4"), "ln3")
pooled = node("ReduceMean", [x], "pool", axes=[1], keepdims=0)
weight("fc.w", (5, D))
const("fc.b", np.zeros(5, np.float32))
node("Gemm", [pooled, "fc.w", "fc.b"], "y", transB=1)
graph = helper.make_graph(
    nodes, "bert_tiny",
    [helper.make_tensor_value_info("ids", TensorProto.INT64, ["N", S])],
    [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 5])], inits)
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)],
                          producer_name="make_bert_tiny.py")
model.ir_version = 8
onnx.checker.check_model(model)
onnx.save(model, os.path.join(os.path.dirname(os.path.abspath(__file__)), "bert_tiny.onnx"))
