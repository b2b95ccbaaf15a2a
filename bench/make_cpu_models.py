#!/usr/bin/env python3
"""Extra models for bench/cpu_bench.py beyond ../shared/models, with random
weights, batch symbolic, and their saved inputs at batch 1 and 32, written as
OUTDIR/MODEL.onnx and OUTDIR/MODEL_io/input_{0,1}.npy (the layout
cpu_bench.py reads with --model-dir OUTDIR):

- mobilenet_tiny: a small MobileNet-like CNN (depthwise-separable blocks: 3x3
  depthwise Conv + BatchNormalization + Relu, 1x1 Conv + BatchNormalization +
  Relu), input [batch,3,64,64].
- gru_classifier / lstm_classifier: input [batch,32,64] (batch first, as
  PyTorch's batch_first exports: Transpose to [seq,batch,64]), one ONNX GRU /
  LSTM of hidden 128 (biases, PyTorch's uniform(+-1/sqrt(128)) init,
  GRU linear_before_reset=1 as PyTorch exports), its last state Y_h squeezed,
  Gemm to 10 classes.
- transformer_tiny: input [batch,64,128], 2 post-norm encoder layers written
  as the PyTorch exporter writes them: Q/K/V MatMul + Add, Reshape
  [0,-1,4,32] + Transpose to 4 heads, MatMul Q K^T, Div by sqrt(32), Softmax,
  MatMul V, Transpose + Reshape back, MatMul + Add, residual Add,
  LayerNormalization; FFN MatMul 128->512, GELU as x * 0.5 * (1 + Erf(x /
  sqrt 2)), MatMul 512->128, residual, LayerNormalization. Output
  [batch,64,128].

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


def rnn_classifier(rng, cell):
    B, S, I, H, C = 'batch', 32, 64, 128, 10
    G = 3 if cell == 'GRU' else 4
    k = 1.0 / np.sqrt(H)

    def u(*shape):
        return numpy_helper.from_array(rng.uniform(-k, k, shape).astype(np.float32))

    inits = []
    for name, shape in (('W', (1, G * H, I)), ('R', (1, G * H, H)), ('B', (1, 2 * G * H)),
                        ('fc.w', (C, H)), ('fc.b', (C,))):
        t = u(*shape)
        t.name = name
        inits.append(t)
    inits.append(numpy_helper.from_array(np.array([0], np.int64), 'axes0'))
    attrs = dict(hidden_size=H)
    if cell == 'GRU':
        attrs['linear_before_reset'] = 1
    nodes = [helper.make_node('Transpose', ['input'], ['x_sbi'], perm=[1, 0, 2]),
             helper.make_node(cell, ['x_sbi', 'W', 'R', 'B'], ['', 'y_h'], **attrs),
             helper.make_node('Squeeze', ['y_h', 'axes0'], ['h_last']),
             helper.make_node('Gemm', ['h_last', 'fc.w', 'fc.b'], ['logits'], transB=1)]
    name = cell.lower() + '_classifier'
    g = helper.make_graph(nodes, name,
                          [helper.make_tensor_value_info('input', TensorProto.FLOAT,
                                                         [B, S, I])],
                          [helper.make_tensor_value_info('logits', TensorProto.FLOAT,
                                                         [B, C])], inits)
    return helper.make_model(g, opset_imports=[helper.make_opsetid('', 17)], ir_version=8)


def transformer_tiny(rng):
    S, D, NH, F = 64, 128, 4, 512
    DH = D // NH
    nodes, inits = [], []

    def const(name, arr, dtype=np.float32):
        inits.append(numpy_helper.from_array(np.asarray(arr).astype(dtype), name))
        return name

    def node(op, ins, out, **kw):
        nodes.append(helper.make_node(op, ins, [out], **kw))
        return out

    def linear(x, din, dout, tag):
        w = const(tag + '.w', rng.standard_normal((din, dout)) / np.sqrt(din))
        b = const(tag + '.b', 0.02 * rng.standard_normal(dout))
        return node('Add', [node('MatMul', [x, w], tag + '.mm'), b], tag + '.out')

    def layer_norm(x, tag):
        g = const(tag + '.g', 1 + 0.1 * rng.standard_normal(D))
        b = const(tag + '.b', 0.1 * rng.standard_normal(D))
        return node('LayerNormalization', [x, g, b], tag + '.out', axis=-1, epsilon=1e-5)

    heads = const('shape.heads', [0, -1, NH, DH], np.int64)
    merged = const('shape.merged', [0, -1, D], np.int64)
    scale = const('attn.scale', np.sqrt(DH))
    half, one, sqrt2 = const('c.half', 0.5), const('c.one', 1.0), const('c.sqrt2', np.sqrt(2))
    x = 'input'
    for li in range(2):
        t = 'l%d' % li
        q, k, v = (node('Reshape', [linear(x, D, D, t + n), heads], t + n + '.h')
                   for n in ('.q', '.k', '.v'))
        q = node('Transpose', [q], t + '.qt', perm=[0, 2, 1, 3])
        k = node('Transpose', [k], t + '.kt', perm=[0, 2, 3, 1])
        v = node('Transpose', [v], t + '.vt', perm=[0, 2, 1, 3])
        s = node('Div', [node('MatMul', [q, k], t + '.qk'), scale], t + '.scores')
        p = node('Softmax', [s], t + '.probs', axis=-1)
        a = node('MatMul', [p, v], t + '.ctx')
        a = node('Reshape', [node('Transpose', [a], t + '.ctxt', perm=[0, 2, 1, 3]), merged],
                 t + '.ctxm')
        a = linear(a, D, D, t + '.o')
        x = layer_norm(node('Add', [x, a], t + '.res1'), t + '.ln1')
        h = linear(x, D, F, t + '.ff1')
        erf = node('Erf', [node('Div', [h, sqrt2], t + '.gd')], t + '.erf')
        h = node('Mul', [node('Mul', [h, half], t + '.gh'),
                         node('Add', [erf, one], t + '.ge')], t + '.gelu')
        h = linear(h, F, D, t + '.ff2')
        x = layer_norm(node('Add', [x, h], t + '.res2'), t + '.ln2')
    nodes[-1].output[0] = 'output'
    g = helper.make_graph(nodes, 'transformer_tiny',
                          [helper.make_tensor_value_info('input', TensorProto.FLOAT,
                                                         ['batch', S, D])],
                          [helper.make_tensor_value_info('output', TensorProto.FLOAT,
                                                         ['batch', S, D])], inits)
    return helper.make_model(g, opset_imports=[helper.make_opsetid('', 17)], ir_version=8)


def save(out, name, model, rng, shape):
    onnx.checker.check_model(model)
    onnx.save(model, os.path.join(out, name + '.onnx'))
    io = os.path.join(out, name + '_io')
    os.makedirs(io, exist_ok=True)
    for k, b in enumerate((1, 32)):
        np.save(os.path.join(io, 'input_%d.npy' % k),
                rng.standard_normal((b,) + shape).astype(np.float32))


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
    for seed, cell in ((1, 'GRU'), (2, 'LSTM')):
        r = np.random.default_rng(seed)
        save(out, cell.lower() + '_classifier', rnn_classifier(r, cell), r, (32, 64))
    r = np.random.default_rng(3)
    save(out, 'transformer_tiny', transformer_tiny(r), r, (64, 128))
    if len(sys.argv) == 5 and sys.argv[2] == '--qdq':
        qdq_models(out, sys.argv[3].split(','), sys.argv[4].split(','))
    elif len(sys.argv) != 2:
        raise SystemExit('usage: make_cpu_models.py OUTDIR [--qdq SRCDIR,.. MODEL,..]')


if __name__ == '__main__':
    main()
