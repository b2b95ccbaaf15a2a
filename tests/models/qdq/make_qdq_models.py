#!/usr/bin/env python3
"""The QDQ test model of tests/models/test_qdq_models.c: a small CNN (3x3 Conv +
Relu, depthwise 3x3 stride 2 + Relu, 1x1 Conv + Relu, MaxPool, 3x3 Conv + Clip,
residual Add, GlobalAveragePool, Gemm and MatMul heads) with random weights,
quantized by onnxruntime.quantization.quantize_static (QDQ format, u8
activations, per-channel s8 weights, min-max calibration on 16 random
inputs), and ONNX Runtime's outputs on two saved inputs.

Writes into this script's folder: qdq_cnn.onnx, qdq_cnn_io/input_{0,1}.npy,
qdq_cnn_io/output_{0,1}.npy (ORT, CPU execution provider, all graph
optimizations off: the QDQ graph as written), qdq_cnn_io/step.npy (the
output's quantization step: the scale of the last DequantizeLinear).

  .cache/onnx-1.23.2/venv/bin/python tests/models/qdq/make_qdq_models.py   # onnx 1.23.2, onnxruntime 1.31.1
"""
import os
import tempfile

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper
from onnxruntime.quantization import (CalibrationDataReader, QuantFormat, QuantType,
                                      quantize_static)

HERE = os.path.dirname(os.path.abspath(__file__))


def f32_model(rng):
    nodes, inits = [], []

    def const(name, arr):
        inits.append(numpy_helper.from_array(np.asarray(arr, np.float32), name))
        return name

    def conv(x, cin, cout, k, stride, group, tag, act='Relu'):
        w = const(tag + '.w', rng.standard_normal((cout, cin // group, k, k)) *
                  np.sqrt(2.0 / (cin // group * k * k)))
        b = const(tag + '.b', 0.1 * rng.standard_normal(cout))
        nodes.append(helper.make_node('Conv', [x, w, b], [tag + '.c'], kernel_shape=[k, k],
                                      strides=[stride, stride], pads=[k // 2] * 4, group=group))
        if act == 'Relu':
            nodes.append(helper.make_node('Relu', [tag + '.c'], [tag + '.r']))
        else:
            lo, hi = const(tag + '.lo', np.float32(0)), const(tag + '.hi', np.float32(6))
            nodes.append(helper.make_node('Clip', [tag + '.c', lo, hi], [tag + '.r']))
        return tag + '.r'

    x = conv('input', 3, 8, 3, 1, 1, 'c1')
    x = conv(x, 8, 8, 3, 2, 8, 'dw')
    x = conv(x, 8, 16, 1, 1, 1, 'pw')
    nodes.append(helper.make_node('MaxPool', [x], ['mp'], kernel_shape=[2, 2], strides=[2, 2]))
    y = conv('mp', 16, 16, 3, 1, 1, 'c2', act='Clip')
    nodes.append(helper.make_node('Add', ['mp', y], ['res']))
    nodes.append(helper.make_node('GlobalAveragePool', ['res'], ['gap']))
    nodes.append(helper.make_node('Flatten', ['gap'], ['flat'], axis=1))
    fw = const('fc.w', rng.standard_normal((10, 16)) / 4)
    fb = const('fc.b', 0.1 * rng.standard_normal(10))
    nodes.append(helper.make_node('Gemm', ['flat', fw, fb], ['g'], transB=1))
    mw = const('mm.w', rng.standard_normal((16, 10)) / 4)
    nodes.append(helper.make_node('MatMul', ['flat', mw], ['mm']))
    nodes.append(helper.make_node('Add', ['g', 'mm'], ['logits']))
    g = helper.make_graph(nodes, 'qdq_cnn',
                          [helper.make_tensor_value_info('input', TensorProto.FLOAT,
                                                         ['batch', 3, 16, 16])],
                          [helper.make_tensor_value_info('logits', TensorProto.FLOAT,
                                                         ['batch', 10])], inits)
    return helper.make_model(g, opset_imports=[helper.make_opsetid('', 13)], ir_version=8)


class Reader(CalibrationDataReader):
    def __init__(self, rng):
        self.data = iter([{'input': rng.standard_normal((1, 3, 16, 16)).astype(np.float32)}
                          for _ in range(16)])

    def get_next(self):
        return next(self.data, None)


def main():
    rng = np.random.default_rng(19)
    with tempfile.TemporaryDirectory() as tmp:
        f32 = os.path.join(tmp, 'f32.onnx')
        onnx.save(f32_model(rng), f32)
        out = os.path.join(HERE, 'qdq_cnn.onnx')
        quantize_static(f32, out, Reader(rng), quant_format=QuantFormat.QDQ,
                        activation_type=QuantType.QUInt8, weight_type=QuantType.QInt8,
                        per_channel=True)
    m = onnx.load(out)
    last_dq = [n for n in m.graph.node if n.op_type == 'DequantizeLinear'
               and n.output[0] == m.graph.output[0].name]
    inits = {i.name: numpy_helper.to_array(i) for i in m.graph.initializer}
    io = os.path.join(HERE, 'qdq_cnn_io')
    os.makedirs(io, exist_ok=True)
    if last_dq:
        np.save(os.path.join(io, 'step.npy'), inits[last_dq[0].input[1]].astype(np.float32))
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    sess = ort.InferenceSession(out, so, providers=['CPUExecutionProvider'])
    for k, b in enumerate((1, 3)):
        x = rng.standard_normal((b, 3, 16, 16)).astype(np.float32)
        np.save(os.path.join(io, 'input_%d.npy' % k), x)
        np.save(os.path.join(io, 'output_%d.npy' % k), sess.run(None, {'input': x})[0])
    print('ops:', sorted({n.op_type for n in m.graph.node}))


if __name__ == '__main__':
    main()
