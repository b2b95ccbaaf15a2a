#!/usr/bin/env python3
"""Extra models for bench/cpu_bench.py beyond ../shared/models: a small
MobileNet-like CNN (depthwise-separable blocks: 3x3 depthwise Conv +
BatchNormalization + Relu, 1x1 Conv + BatchNormalization + Relu) with random
weights, input [batch,3,64,64] (batch symbolic), and its saved inputs at
batch 1 and 32, written as OUTDIR/mobilenet_tiny.onnx and
OUTDIR/mobilenet_tiny_io/input_{0,1}.npy (the layout cpu_bench.py reads with
--model-dir OUTDIR).

  python3 bench/make_cpu_models.py OUTDIR

With --qdq SRCDIR[,SRCDIR...] MODEL[,MODEL...] it also writes, for each MODEL
(MODEL.onnx found in OUTDIR or a SRCDIR), OUTDIR/MODEL_qdq.onnx: the model
quantized by onnxruntime.quantization.quantize_static (QDQ format, u8
activations, per-channel s8 weights, min-max calibration on up to 32 rows of
the model's saved inputs, after onnxruntime's quant_pre_process), with
OUTDIR/MODEL_qdq_io holding the same inputs, and links OUTDIR/MODEL.onnx and
MODEL_io to the f32 originals (cpu_bench.py times the f32 model beside its
_qdq form). This needs onnx and onnxruntime (the shared venv .cache/onnx-1.23.2/venv);
OUTDIR is a cache (bench/run_cpu_bench.sh --int8 uses .cache/bench-models):

  .cache/onnx-1.23.2/venv/bin/python bench/make_cpu_models.py OUTDIR --qdq ../shared/models \
      lenet5,resnet_small,mobilenet_tiny
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


def qdq_models(out, srcdirs, models):
    import shutil
    import tempfile

    from onnxruntime.quantization import (CalibrationDataReader, QuantFormat, QuantType,
                                          quantize_static)
    from onnxruntime.quantization.shape_inference import quant_pre_process

    class Reader(CalibrationDataReader):
        def __init__(self, name, rows):
            self.it = iter([{name: r[None]} for r in rows])

        def get_next(self):
            return next(self.it, None)

    for model in models:
        src = next((d for d in [out] + srcdirs
                    if os.path.exists(os.path.join(d, model + '.onnx'))), None)
        if src is None:
            raise SystemExit('error: make_cpu_models: %s.onnx not found' % model)
        f32, io = os.path.join(src, model + '.onnx'), os.path.join(src, model + '_io')
        if src != out:  # the f32 original beside its _qdq form
            for a, b in ((f32, model + '.onnx'), (io, model + '_io')):
                dst = os.path.join(out, b)
                if not os.path.lexists(dst):
                    os.symlink(os.path.abspath(a), dst)
        inputs = sorted(f for f in os.listdir(io) if f.startswith('input_'))
        rows = np.concatenate([np.load(os.path.join(io, f)) for f in inputs])[:32]
        name = onnx.load(f32).graph.input[0].name
        qio = os.path.join(out, model + '_qdq_io')
        os.makedirs(qio, exist_ok=True)
        for f in inputs:
            shutil.copy(os.path.join(io, f), os.path.join(qio, f))
        with tempfile.TemporaryDirectory() as tmp:
            pre = os.path.join(tmp, 'pre.onnx')
            quant_pre_process(f32, pre, skip_symbolic_shape=True)
            quantize_static(pre, os.path.join(out, model + '_qdq.onnx'), Reader(name, rows),
                            quant_format=QuantFormat.QDQ, activation_type=QuantType.QUInt8,
                            weight_type=QuantType.QInt8, per_channel=True)


def main():
    out = sys.argv[1]
    rng = np.random.default_rng(0)
    onnx.save(mobilenet_tiny(rng), os.path.join(out, 'mobilenet_tiny.onnx'))
    io = os.path.join(out, 'mobilenet_tiny_io')
    os.makedirs(io, exist_ok=True)
    for k, b in enumerate((1, 32)):
        np.save(os.path.join(io, 'input_%d.npy' % k),
                rng.standard_normal((b, 3, 64, 64)).astype(np.float32))
    if len(sys.argv) == 5 and sys.argv[2] == '--qdq':
        qdq_models(out, sys.argv[3].split(','), sys.argv[4].split(','))
    elif len(sys.argv) != 2:
        raise SystemExit('usage: make_cpu_models.py OUTDIR [--qdq SRCDIR,.. MODEL,..]')


if __name__ == '__main__':
    main()
