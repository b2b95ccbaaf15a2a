#!/usr/bin/env python3
"""Weight-only int8 / int4 GEMM: dmlc against ONNX Runtime, side by side on
the same models, inputs and thread counts (issue 19 part 4).

  .cache/onnx-1.23.2/venv/bin/python bench/wq_bench.py [--out DIR]
      [--models mm768x3072,transformer_tiny] [--batches 1,32] [--threads 1]
      [--group 32] [--rounds 5] [--iterations 30] [--warmup 5]
      [--dmlc build/compiler/dmlc] [--bench build/bench/dml_bench] [--json OUT]

Needs onnx, onnxruntime and numpy (the venv above) and a build with dmlc and
dml_bench. Models (random weights, batch symbolic), written once into --out
(default .cache/wq-bench):

- mm768x3072: input [batch, 768], one MatMul by a [768, 3072] weight (a BERT-
  base FFN's first layer), output [batch, 3072].
- transformer_tiny: bench/make_cpu_models.py's (2 encoder layers, hidden
  128, FFN 512; input [batch, 64, 128]: batch 32 is 2,048 rows a MatMul).

Each f32 model is quantized by `dmlc quantize --weight-only int8|int4
--group-size G` into X_w8.onnx / X_w4.onnx (opset-21 blocked
DequantizeLinear -> MatMul), and each of the three is compiled by `dmlc
compile`: the w8 / w4 packages hold MatMulWQ nodes (the wq-fuse pass); the
X_w8_dq / X_w4_dq packages are compiled with DMLC_NO_WQ_FUSE=1 (the
dequantize-then-f32-MatMul form dmlc ran before). ONNX Runtime runs the same
three .onnx files, and X_nb8.onnx / X_nb4.onnx: the same quantized values
and scales as com.microsoft MatMulNBits (what onnxruntime.quantization's
MatMulNBitsQuantizer writes; made here because that quantizer needs the
onnx_ir package, which the pinned venv lacks), accuracy_level 0 (f32
activations: weight-only, like dmlc) and, for int4, accuracy_level 4
(nb4a4: activations quantized to int8 per block, ORT's fastest CPU path).

Timing: --rounds rounds, each running every peer in turn (dmlc through
dml_bench: set_input + run per iteration, --warmup then --iterations, the
median; ORT in this process: CPU provider, ORT_ENABLE_ALL, intra-op threads
= threads, inter-op 1, session.run per iteration). A peer's figure is the
median of its round medians (ms), and the fastest single run (min, which
preemption on a loaded machine distorts less). Outputs: dmlc's on the
quantized packages against ORT's on the same .onnx with graph optimizations
off (the DequantizeLinear -> MatMul as written), max abs diff / max
|output|; also ORT's own error with its optimizations (it fuses the pair
into MatMulNBits, quantizing activations) and of the MatMulNBits models.
Package and .onnx sizes are printed per model.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

from cpu_bench import dml_times, ort_times  # bench/cpu_bench.py: (median, min) ms

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)


def mm_model(rng, K=768, N=3072):
    w = (rng.standard_normal((K, N)) / np.sqrt(K)).astype(np.float32)
    g = helper.make_graph(
        [helper.make_node('MatMul', ['input', 'W'], ['output'], name='mm')], 'mm',
        [helper.make_tensor_value_info('input', TensorProto.FLOAT, ['batch', K])],
        [helper.make_tensor_value_info('output', TensorProto.FLOAT, ['batch', N])],
        [numpy_helper.from_array(w, 'W')])
    return helper.make_model(g, opset_imports=[helper.make_opsetid('', 17)], ir_version=8)


def input_shape(name):
    return {'mm768x3072': (768,), 'transformer_tiny': (64, 128)}[name]


def make_model(name, path):
    if name == 'mm768x3072':
        m = mm_model(np.random.default_rng(7))
    else:
        import make_cpu_models
        m = make_cpu_models.transformer_tiny(np.random.default_rng(3))
    onnx.save(m, path)


def int_values(t):
    """Integer values of an INT8 / INT4 initializer as int8 numpy."""
    if t.data_type == TensorProto.INT8:
        return numpy_helper.to_array(t).astype(np.int8)
    assert t.data_type == TensorProto.INT4, t.data_type
    n = int(np.prod(t.dims))
    raw = np.frombuffer(t.raw_data, dtype=np.uint8) if t.raw_data else \
        np.asarray(t.int32_data, dtype=np.uint8)
    v = np.empty(raw.size * 2, dtype=np.int16)
    v[0::2] = raw & 15
    v[1::2] = raw >> 4
    v = np.where(v >= 8, v - 16, v)[:n]
    return v.astype(np.int8).reshape(tuple(t.dims))


def to_matmulnbits(src, dst, bits, accuracy_level):
    """DequantizeLinear(W_q [K,N] blocked along K, no zero point) -> MatMul
    into com.microsoft MatMulNBits with the same values and scales (zero
    point default 2^(bits-1), so u = q + 2^(bits-1))."""
    m = onnx.load(src)
    g = m.graph
    inits = {t.name: t for t in g.initializer}
    dq = {n.output[0]: n for n in g.node if n.op_type == 'DequantizeLinear'}
    nodes, drop = [], set()
    for n in g.node:
        if n.op_type == 'MatMul' and n.input[1] in dq:
            d = dq[n.input[1]]
            q = int_values(inits[d.input[0]]).astype(np.int32)  # [K, N]
            s = numpy_helper.to_array(inits[d.input[1]]).astype(np.float32)  # [G, N]
            bs = next(a.i for a in d.attribute if a.name == 'block_size')
            K, N = q.shape
            G = (K + bs - 1) // bs
            u = q + (1 << (bits - 1))
            up = np.full((G * bs, N), 1 << (bits - 1), dtype=np.int32)
            up[:K] = u
            blk = up.reshape(G, bs, N).transpose(2, 0, 1)  # [N, G, bs]
            if bits == 4:
                b = (blk[..., 0::2] | (blk[..., 1::2] << 4)).astype(np.uint8)
            else:
                b = blk.astype(np.uint8)
            bname, sname = n.output[0] + '_nbB', n.output[0] + '_nbS'
            g.initializer.extend([numpy_helper.from_array(b, bname),
                                  numpy_helper.from_array(np.ascontiguousarray(s.T).reshape(-1),
                                                          sname)])
            nodes.append(helper.make_node('MatMulNBits', [n.input[0], bname, sname],
                                          list(n.output), name=n.name, domain='com.microsoft',
                                          K=K, N=N, bits=bits, block_size=bs,
                                          accuracy_level=accuracy_level))
            drop.add(d.output[0])
        else:
            nodes.append(n)
    nodes = [n for n in nodes if not (n.op_type == 'DequantizeLinear' and n.output[0] in drop)]
    del g.node[:]
    g.node.extend(nodes)
    used = {i for n in g.node for i in n.input}
    keep = [t for t in g.initializer if t.name in used]
    del g.initializer[:]
    g.initializer.extend(keep)
    m.opset_import.append(helper.make_opsetid('com.microsoft', 1))
    onnx.save(m, dst)


def ort_session(path, threads, optimize=True):
    so = ort.SessionOptions()
    so.intra_op_num_threads = threads
    so.inter_op_num_threads = 1
    so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    so.graph_optimization_level = (ort.GraphOptimizationLevel.ORT_ENABLE_ALL if optimize else
                                   ort.GraphOptimizationLevel.ORT_DISABLE_ALL)
    return ort.InferenceSession(path, so, providers=['CPUExecutionProvider'])


def dml_output(dmlc, pkg, npy, outdir):
    os.makedirs(outdir, exist_ok=True)
    subprocess.run([dmlc, 'run', pkg, '--input', 'input=' + npy, '--output-dir', outdir],
                   check=True, capture_output=True, text=True)
    outs = sorted(f for f in os.listdir(outdir) if f.endswith('.npy'))
    return np.load(os.path.join(outdir, outs[0]))


def run(cmd, env=None):
    r = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if r.returncode != 0:
        raise SystemExit('error: %s\n%s%s' % (' '.join(cmd), r.stdout, r.stderr))
    return r.stdout


def main():
    root = os.path.dirname(HERE)
    ap = argparse.ArgumentParser()
    ap.add_argument('--out', default=os.path.join(root, '.cache', 'wq-bench'))
    ap.add_argument('--models', default='mm768x3072,transformer_tiny')
    ap.add_argument('--batches', default='1,32')
    ap.add_argument('--threads', default='1')
    ap.add_argument('--group', type=int, default=32)
    ap.add_argument('--rounds', type=int, default=5)
    ap.add_argument('--iterations', type=int, default=30)
    ap.add_argument('--warmup', type=int, default=5)
    ap.add_argument('--dmlc', default=os.path.join(root, 'build', 'compiler', 'dmlc'))
    ap.add_argument('--bench', default=os.path.join(root, 'build', 'bench', 'dml_bench'))
    ap.add_argument('--json')
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    results = []
    for name in a.models.split(','):
        p = lambda suffix: os.path.join(a.out, '%s%s' % (name, suffix))
        if not os.path.exists(p('.onnx')):
            make_model(name, p('.onnx'))
        g = str(a.group)
        for b in (8, 4):
            run([a.dmlc, 'quantize', p('.onnx'), '--weight-only', 'int%d' % b, '--group-size', g,
                 '-o', p('_w%d.onnx' % b)])
            to_matmulnbits(p('_w%d.onnx' % b), p('_nb%d.onnx' % b), b, 0)
        to_matmulnbits(p('_w4.onnx'), p('_nb4a4.onnx'), 4, 4)
        for v in ('', '_w8', '_w4'):
            run([a.dmlc, 'compile', p(v + '.onnx'), '-o', p(v + '.dmlpkg')])
        env = dict(os.environ, DMLC_NO_WQ_FUSE='1')
        for v in ('_w8', '_w4'):
            run([a.dmlc, 'compile', p(v + '.onnx'), '-o', p(v + '_dq.dmlpkg')], env=env)
        sizes = {os.path.basename(p(v)): os.path.getsize(p(v))
                 for v in ('.onnx', '_w8.onnx', '_w4.onnx', '_nb4.onnx', '.dmlpkg', '_w8.dmlpkg',
                           '_w4.dmlpkg', '_w8_dq.dmlpkg', '_w4_dq.dmlpkg')}
        print('%s sizes (bytes): %s' % (name, ', '.join('%s %d' % kv for kv in sizes.items())))
        for batch in [int(x) for x in a.batches.split(',')]:
            rng = np.random.default_rng(batch)
            x = rng.standard_normal((batch,) + input_shape(name)).astype(np.float32)
            npy = p('_in_b%d.npy' % batch)
            np.save(npy, x)
            feeds = {'input': x}
            # outputs: dmlc on the packages vs ORT on the same .onnx without
            # graph optimizations (the DequantizeLinear -> MatMul as written;
            # ORT_ENABLE_ALL fuses it into MatMulNBits, whose error is shown
            # as ort_opt)
            def rel(y, r):
                return float(np.max(np.abs(y - r)) / max(np.max(np.abs(r)), 1e-30))
            with tempfile.TemporaryDirectory() as td:
                checks = []
                for v in ('_w8', '_w4', '_w8_dq', '_w4_dq'):
                    y = dml_output(a.dmlc, p(v + '.dmlpkg'), npy, os.path.join(td, v))
                    onnx_v = v.replace('_dq', '')
                    r = ort_session(p(onnx_v + '.onnx'), 1, optimize=False).run(None, feeds)[0]
                    checks.append('dmlc%s %.1e' % (v, rel(y, r)))
                    if not v.endswith('_dq'):
                        ro = ort_session(p(onnx_v + '.onnx'), 1).run(None, feeds)[0]
                        checks.append('ort_opt%s %.1e' % (v, rel(ro, r)))
                for v in ('_nb4', '_nb4a4'):
                    ro = ort_session(p(v + '.onnx'), 1).run(None, feeds)[0]
                    r = ort_session(p('_w4.onnx'), 1, optimize=False).run(None, feeds)[0]
                    checks.append('ort%s %.1e' % (v, rel(ro, r)))
            print('  batch %d: vs ORT unoptimized on the same model (max abs diff / max |y|): %s'
                  % (batch, ', '.join(checks)))
            for threads in [int(t) for t in a.threads.split(',')]:
                peers = [('dmlc_f32', 'd', ''), ('dmlc_w8', 'd', '_w8'), ('dmlc_w4', 'd', '_w4'),
                         ('dmlc_w8_dq', 'd', '_w8_dq'), ('dmlc_w4_dq', 'd', '_w4_dq'),
                         ('ort_f32', 'o', ''), ('ort_w8_dq', 'o', '_w8'), ('ort_w4_dq', 'o', '_w4'),
                         ('ort_nb8', 'o', '_nb8'), ('ort_nb4', 'o', '_nb4'),
                         ('ort_nb4a4', 'o', '_nb4a4')]
                sess = {}
                for label, kind, v in peers:
                    if kind == 'o':
                        try:
                            sess[label] = ort_session(p(v + '.onnx'), threads)
                        except Exception as e:  # an op this ORT build lacks
                            print('  %s: ORT cannot run it: %s' % (label, str(e).splitlines()[0]))
                times = {label: [] for label, _, _ in peers}
                for _ in range(a.rounds):
                    for label, kind, v in peers:
                        if kind == 'd':
                            times[label].append(dml_times(a.bench, p(v + '.dmlpkg'), npy,
                                                          a.warmup, a.iterations, threads))
                        elif label in sess:
                            times[label].append(ort_times(sess[label], feeds, a.warmup,
                                                          a.iterations))
                med = {k: statistics.median(t[0] for t in v) for k, v in times.items() if v}
                mn = {k: min(t[1] for t in v) for k, v in times.items() if v}
                load = open('/proc/loadavg').read().split()[:3]
                print('  batch %d threads %d (load %s), ms median / min:' % (
                    batch, threads, ' '.join(load)))
                for k in med:
                    print('    %-12s %9.3f %9.3f' % (k, med[k], mn[k]))
                results.append({'model': name, 'batch': batch, 'threads': threads,
                                'median_ms': med, 'min_ms': mn, 'sizes': sizes})
    if a.json:
        with open(a.json, 'w') as f:
            json.dump(results, f, indent=1)


if __name__ == '__main__':
    main()
