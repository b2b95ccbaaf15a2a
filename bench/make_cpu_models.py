#!/usr/bin/env python3
"""Extra models for bench/cpu_bench.py beyond ../shared/models: a small
MobileNet-like CNN (depthwise-separable blocks: 3x3 depthwise Conv +
BatchNormalization + Relu, 1x1 Conv + BatchNormalization + Relu) with random
weights, input [batch,3,64,64] (batch symbolic), and its saved inputs at
batch 1 and 32, written as OUTDIR/mobilenet_tiny.onnx and
OUTDIR/mobilenet_tiny_io/input_{0,1}.npy (the layout cpu_bench.py reads with
--model-dir OUTDIR).

  python3 bench/make_cpu_models.py OUTDIR
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def mobilenet_tiny(rng):
    nodes, inits = [], []

    def const(name, arr):
        inits.append(numpy_helper.from_array(arr.astype(np.float32), name))
        return name

    def conv_bn_relu(x, cin, cout, k, stride, group, tag):
        w = const(tag + '.w', rng.standard_normal((cout, cin // group, k, k)) *
                  np.sqrt(2.0 / (cin // group * k * k)))
        nodes.append(helper.make_node('Conv', [x, w], [tag + '.c'], kernel_shape=[k, k],
                                      strides=[stride, stride], pads=[k // 2] * 4,
                                      group=group))
        bn = [const(tag + s, v) for s, v in
              (('.g', 1 + 0.1 * rng.standard_normal(cout)), ('.b', 0.1 * rng.standard_normal(cout)),
               ('.m', 0.1 * rng.standard_normal(cout)), ('.v', 1 + 0.1 * rng.random(cout)))]
        nodes.append(helper.make_node('BatchNormalization', [tag + '.c'] + bn, [tag + '.n'],
                                      epsilon=1e-5))
        nodes.append(helper.make_node('Relu', [tag + '.n'], [tag + '.r']))
        return tag + '.r'

    x = conv_bn_relu('input', 3, 16, 3, 2, 1, 'stem')  # 32x32
    c = 16
    for i, (cout, stride) in enumerate([(32, 1), (64, 2), (64, 1), (128, 2), (128, 1)]):
        x = conv_bn_relu(x, c, c, 3, stride, c, 'dw%d' % i)
        x = conv_bn_relu(x, c, cout, 1, 1, 1, 'pw%d' % i)
        c = cout
    nodes.append(helper.make_node('GlobalAveragePool', [x], ['gap']))
    nodes.append(helper.make_node('Flatten', ['gap'], ['flat'], axis=1))
    fw = const('fc.w', rng.standard_normal((10, c)) / np.sqrt(c))
    fb = const('fc.b', np.zeros(10))
    nodes.append(helper.make_node('Gemm', ['flat', fw, fb], ['logits'], transB=1))
    g = helper.make_graph(nodes, 'mobilenet_tiny',
                          [helper.make_tensor_value_info('input', TensorProto.FLOAT,
                                                         ['batch', 3, 64, 64])],
                          [helper.make_tensor_value_info('logits', TensorProto.FLOAT,
                                                         ['batch', 10])], inits)
    # IR version 8 (onnx 1.10+): what every onnxruntime of the last years loads.
    return helper.make_model(g, opset_imports=[helper.make_opsetid('', 13)], ir_version=8)


def main():
    out = sys.argv[1]
    rng = np.random.default_rng(0)
    onnx.save(mobilenet_tiny(rng), os.path.join(out, 'mobilenet_tiny.onnx'))
    io = os.path.join(out, 'mobilenet_tiny_io')
    os.makedirs(io, exist_ok=True)
    for k, b in enumerate((1, 32)):
        np.save(os.path.join(io, 'input_%d.npy' % k),
                rng.standard_normal((b, 3, 64, 64)).astype(np.float32))


if __name__ == '__main__':
    main()
