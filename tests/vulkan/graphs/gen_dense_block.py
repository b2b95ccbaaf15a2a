#!/usr/bin/env python3
"""Generates dense_block.onnx and its onnxruntime outputs (issue 23).

A DenseNet-style block as torchvision's DenseNet-121 builds it, scaled
down: 3 layers, each BatchNorm -> Relu -> 1x1 Conv (to 4 * growth) ->
BatchNorm -> Relu -> 3x3 Conv (pad 1, to growth = 8) over the Concat of
the input and every earlier layer's output, then a transition (BatchNorm
-> Relu -> 1x1 Conv halving the channels -> 2x2 AveragePool). Input
f32[N, 16, 14, 14]; BatchNorm statistics and weights random (seeded), so
each layer changes the values. Planned for the CPU alone (then given Vulkan
kernels by dml_compile_add_kernels), the BatchNorm+Relu kernels after the
Concats of 32 and 40 channels (6272 * N and 7840 * N elements) are planned
in place over the Concat's output, unrolled 4 elements per invocation (1568
* N and 1960 * N invocations, not multiples of the workgroup): the form that
applied BatchNorm+Relu twice to some elements on lavapipe before the fix
(docs/kernels.md, "Scheduling"). test_vulkan_graphs asserts that plan; a
package compiled for a GPU target plans fusion-aware, never in place.

Needs onnx, onnxruntime and numpy (not needed by CI: the outputs are
committed):
    python3 tests/vulkan/graphs/gen_dense_block.py
writes tests/vulkan/graphs/dense_block.onnx and
dense_block_io/{input,output}_{0,1}.npy (batch 1 and 3).
"""
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
CIN, HW, GROWTH, LAYERS = 16, 14, 8, 3


def build():
    rng = np.random.default_rng(23)
    inits, nodes = [], []

    def init(name, arr):
        inits.append(numpy_helper.from_array(arr.astype(np.float32), name))
        return name

    def bn(x, c, name):
        ins = [x, init(name + "_scale", rng.uniform(0.5, 1.5, c)),
               init(name + "_bias", rng.normal(0, 0.2, c)),
               init(name + "_mean", rng.normal(0, 0.3, c)),
               init(name + "_var", rng.uniform(0.5, 2.0, c))]
        nodes.append(helper.make_node("BatchNormalization", ins, [name], epsilon=1e-5))
        return name

    def relu(x, name):
        nodes.append(helper.make_node("Relu", [x], [name]))
        return name

    def conv(x, cin, cout, k, name):
        w = init(name + "_w", rng.normal(0, np.sqrt(2.0 / (cin * k * k)), (cout, cin, k, k)))
        nodes.append(helper.make_node("Conv", [x, w], [name], kernel_shape=[k, k],
                                      pads=[k // 2] * 4))
        return name

    feats, c = ["x"], CIN
    for i in range(LAYERS):
        cat = feats[0]
        if len(feats) > 1:
            cat = f"cat{i}"
            nodes.append(helper.make_node("Concat", feats, [cat], axis=1))
        h = conv(relu(bn(cat, c, f"l{i}_bn1"), f"l{i}_relu1"), c, 4 * GROWTH, 1, f"l{i}_conv1")
        h = conv(relu(bn(h, 4 * GROWTH, f"l{i}_bn2"), f"l{i}_relu2"), 4 * GROWTH, GROWTH, 3,
                 f"l{i}_conv2")
        feats.append(h)
        c += GROWTH
    nodes.append(helper.make_node("Concat", feats, ["block"], axis=1))
    h = conv(relu(bn("block", c, "t_bn"), "t_relu"), c, c // 2, 1, "t_conv")
    nodes.append(helper.make_node("AveragePool", [h], ["y"], kernel_shape=[2, 2],
                                  strides=[2, 2]))
    graph = helper.make_graph(
        nodes, "dense_block",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", CIN, HW, HW])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", c // 2, HW // 2, HW // 2])],
        inits)
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)],
                          producer_name="gen_dense_block")
    m.ir_version = 8
    onnx.checker.check_model(m)
    return m


def main():
    import onnxruntime as ort
    m = build()
    path = os.path.join(HERE, "dense_block.onnx")
    with open(path, "wb") as f:
        f.write(m.SerializeToString())
    io = os.path.join(HERE, "dense_block_io")
    os.makedirs(io, exist_ok=True)
    sess = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    rng = np.random.default_rng(2323)
    for i, batch in enumerate((1, 3)):
        x = rng.normal(0, 1, (batch, CIN, HW, HW)).astype(np.float32)
        (y,) = sess.run(None, {"x": x})
        np.save(os.path.join(io, f"input_{i}.npy"), x)
        np.save(os.path.join(io, f"output_{i}.npy"), y)


if __name__ == "__main__":
    main()
