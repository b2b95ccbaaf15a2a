#!/usr/bin/env python3
"""The edge cases of issues 15 and 23 on a GPU device, end to end.

Models that gave wrong answers on the GPU targets (Pow of negative bases,
Softplus at large |x|, Sign/ReduceMax/ReduceMin/MaxPool of NaN, sums and
Softmax over rows longer than 65,535, LogSoftmax of huge logits, a
DenseNet-style block, SoftmaxCrossEntropyLoss of two equal maxima 1e15 and
of ignored rows holding inf/NaN) are built with onnx.helper, compiled for
cpu,cuda and run on the device and the CPU; outputs are compared with the CPU's (NaN
matches NaN, an infinity the same infinity; else scaled error
|d - c| / max(1, |c|) <= 1e-4) and, where one is given, with a numpy f64
reference.

  prepare (build machine: onnx, numpy, build/compiler/dmlc):
    python3 tests/cuda/edge_cases.py prepare DIR [--dmlc PATH] [--targets cpu,cuda]
  check (GPU machine: numpy and a runtime-only dmlc):
    python3 tests/cuda/edge_cases.py check DIR --dmlc PATH [--device cuda]
Exit status 1 when any case disagrees.
"""
import json, os, subprocess, sys
import numpy as np


def cases():
    import onnx
    from onnx import TensorProto as T, helper as h
    out = []

    def model(name, nodes, ins, outs, inits=(), opset=17):
        g = h.make_graph(nodes, name, ins, outs, list(inits))
        m = h.make_model(g, opset_imports=[h.make_opsetid('', opset)], ir_version=8)
        return m

    vi = h.make_tensor_value_info
    edge = np.array([0.0, -0.0, 1.0, -1.0, 2.0, -2.0, 3.5, -3.5, 1e-30, -1e-30, 1e30, -1e30,
                     np.inf, -np.inf, np.nan, 1e-40, -1e-40, 0.5, -0.5, 88.0, 89.0, 100.0,
                     -20.0, -100.0], np.float32)
    exps = np.array([[2.0], [3.0], [0.5], [-1.0], [-2.0], [0.0], [1.0], [-3.0], [0.3]], np.float32)
    n = edge.size
    with np.errstate(all='ignore'):
        # rounded to f32 (1e30 ** 2 is inf there)
        ref = np.power(edge.astype(np.float64)[None, :], exps.astype(np.float64)).astype(np.float32)
    out.append(('pow_edges', model('pow', [h.make_node('Pow', ['x', 'y'], ['z'])],
                                   [vi('x', T.FLOAT, [n]), vi('y', T.FLOAT, [9, 1])],
                                   [vi('z', T.FLOAT, [9, n])]),
                {'x': edge, 'y': exps}, [ref]))
    with np.errstate(all='ignore'):
        sp = np.logaddexp(0.0, edge.astype(np.float64))
        sg = np.sign(edge.astype(np.float64))
    out.append(('softplus_sign', model('sp', [h.make_node('Softplus', ['x'], ['s']),
                                              h.make_node('Sign', ['x'], ['g'])],
                                       [vi('x', T.FLOAT, [n])],
                                       [vi('s', T.FLOAT, [n]), vi('g', T.FLOAT, [n])]),
                {'x': edge}, [sp, sg]))
    nanrows = np.array([[np.nan, 1.0, 2.0], [1.0, np.nan, -1.0], [np.nan, np.nan, np.nan],
                        [1.0, 2.0, 3.0]], np.float32)
    out.append(('reduce_nan', model('rn', [h.make_node('ReduceMax', ['x'], ['a'], axes=[1], keepdims=0),
                                           h.make_node('ReduceMin', ['x'], ['b'], axes=[1], keepdims=0)],
                                    [vi('x', T.FLOAT, [4, 3])],
                                    [vi('a', T.FLOAT, [4]), vi('b', T.FLOAT, [4])], opset=13),
                {'x': nanrows},
                [np.array([np.nan, np.nan, np.nan, 3.0]), np.array([np.nan, np.nan, np.nan, 1.0])]))
    img = np.arange(32, dtype=np.float32).reshape(1, 2, 4, 4)
    img[0, 0, 1, 1] = np.nan
    out.append(('maxpool_nan', model('mp', [h.make_node('MaxPool', ['x'], ['y'], kernel_shape=[2, 2], strides=[2, 2]),
                                            h.make_node('GlobalMaxPool', ['x'], ['g'])],
                                     [vi('x', T.FLOAT, [1, 2, 4, 4])],
                                     [vi('y', T.FLOAT, [1, 2, 2, 2]), vi('g', T.FLOAT, [1, 2, 1, 1])]),
                {'x': img}, None))
    big = 1 << 22
    out.append(('reduce_sum_4m', model('rs', [h.make_node('ReduceSum', ['x', 'ax'], ['s'], keepdims=0)],
                                       [vi('x', T.FLOAT, [1, big])], [vi('s', T.FLOAT, [1])],
                                       [onnx.numpy_helper.from_array(np.array([1], np.int64), 'ax')]),
                {'x': -np.ones((1, big), np.float32)}, [np.array([-float(big)])]))
    row = np.full((2, 100000), -3.0, np.float32)
    row[0, 77777] = 10.0
    row[1, :70000] = -np.inf
    e = np.exp(row.astype(np.float64) - row.max(axis=1, keepdims=True))
    out.append(('softmax_100k', model('sm', [h.make_node('Softmax', ['x'], ['y'], axis=1)],
                                      [vi('x', T.FLOAT, [2, 100000])], [vi('y', T.FLOAT, [2, 100000])]),
                {'x': row}, [e / e.sum(axis=1, keepdims=True)]))
    logits = np.array([[1e8, 1e8, 1e8, 1e8], [1e6, 1e6 + 1, 1e6 - 1, 1e6], [1e15, 1e15, 0.5, 0.0]],
                      np.float32)
    l64 = logits.astype(np.float64)
    mx = l64.max(axis=1, keepdims=True)
    ref = l64 - mx - np.log(np.exp(l64 - mx).sum(axis=1, keepdims=True))
    out.append(('logsoftmax_large', model('ls', [h.make_node('LogSoftmax', ['x'], ['y'], axis=1)],
                                          [vi('x', T.FLOAT, [3, 4])], [vi('y', T.FLOAT, [3, 4])]),
                {'x': logits}, [ref]))
    # SoftmaxCrossEntropyLoss: two equal maxima 1e15 (log_prob -log 2, not 0),
    # rows whose target is ignore_index holding +inf / NaN scores (loss +0, left
    # out of the mean and the sum; the GPUs' -logp * 0 made them NaN)
    sc = np.array([[1e15, 1e15, 0.5], [np.inf, 1.0, 2.0], [np.nan, 0.0, 0.0], [1.0, 2.0, 3.0]],
                  np.float32)
    tg = np.array([0, 1, 1, 2], np.int64)
    l2, l3 = np.log(2.0), np.log(1.0 + np.exp(-1.0) + np.exp(-2.0))
    lp_ref = np.array([[-l2, -l2, -1e15], [np.nan] * 3, [np.nan] * 3, [-2 - l3, -1 - l3, -l3]])
    sce = [h.make_node('SoftmaxCrossEntropyLoss', ['x', 't'], ['z', 'lp'], ignore_index=1,
                       reduction='none'),
           h.make_node('SoftmaxCrossEntropyLoss', ['x', 't'], ['m'], ignore_index=1),
           h.make_node('SoftmaxCrossEntropyLoss', ['x', 't'], ['s'], ignore_index=1,
                       reduction='sum')]
    out.append(('sce_edges', model('sce', sce, [vi('x', T.FLOAT, [4, 3]), vi('t', T.INT64, [4])],
                                   [vi('z', T.FLOAT, [4]), vi('lp', T.FLOAT, [4, 3]),
                                    vi('m', T.FLOAT, []), vi('s', T.FLOAT, [])], opset=13),
                {'x': sc, 't': tg},
                [np.array([l2, 0.0, 0.0, l3]), lp_ref, np.array((l2 + l3) / 2), np.array(l2 + l3)]))
    # found by dml_every_op: PRelu with an infinite slope at x >= 0 (inf * 0 was
    # NaN), Shrink of +-inf and NaN (0 for NaN: ONNX's "otherwise"), fmod of a
    # huge ratio, by +-inf and by a subnormal (C99 fmod), Relu of i32 / f64
    xs = np.array([2.0, 0.0, -0.0, -3.0, np.inf, -np.inf, np.nan, 0.25], np.float32)
    sl = np.array([np.inf, np.inf, -np.inf, 0.5, np.inf, 2.0, 1.0, -np.inf], np.float32)
    with np.errstate(all='ignore'):
        pr = np.where(xs.astype(np.float64) < 0, sl.astype(np.float64) * xs, xs)
        sh = np.where(xs < -0.5, xs + 0.0, np.where(xs > 0.5, xs - 0.0, 0.0)).astype(np.float64)
    ma = np.array([3e38, -1e15, 7.5, -7.5, 1e-40, 5.0, np.inf, 0.0], np.float32)
    mb = np.array([1e-30, 3.0, np.inf, -np.inf, 3e-41, 0.0, 2.0, 1.0], np.float32)
    with np.errstate(all='ignore'):
        fm = np.fmod(ma.astype(np.float64), mb.astype(np.float64))
    ri = np.array([-3, 0, 5, -2147483647], np.int32)
    out.append(('prelu_shrink_mod', model('psm', [
        h.make_node('PRelu', ['x', 's'], ['p']), h.make_node('Shrink', ['x'], ['k']),
        h.make_node('Mod', ['a', 'b'], ['m'], fmod=1), h.make_node('Relu', ['i'], ['r'])],
        [vi('x', T.FLOAT, [8]), vi('s', T.FLOAT, [8]), vi('a', T.FLOAT, [8]),
         vi('b', T.FLOAT, [8]), vi('i', T.INT32, [4])],
        [vi('p', T.FLOAT, [8]), vi('k', T.FLOAT, [8]), vi('m', T.FLOAT, [8]),
         vi('r', T.INT32, [4])]),
        {'x': xs, 's': sl, 'a': ma, 'b': mb, 'i': ri},
        [pr, sh, fm, np.maximum(ri, 0).astype(np.float64)]))
    # LRN next to -inf and NaN (test_lrn's attributes): the GPUs' pow of an
    # infinite base (undefined in GLSL) made x / den inf where it is NaN; now
    # kernel_math's C99 pow
    lx = np.array([[[[1.0]], [[-np.inf]], [[2.0]], [[np.nan]], [[3e38]], [[-1e30]]]], np.float32)
    with np.errstate(all='ignore'):
        l64 = lx.astype(np.float64)
        sq = np.stack([(l64[:, max(0, c - 1):c + 2] ** 2).sum(axis=1) for c in range(6)], 1)
        lref = l64 / (2.0 + 2e-4 / 3 * sq) ** 0.5
    out.append(('lrn_inf', model('lrn', [h.make_node('LRN', ['x'], ['y'], size=3, alpha=2e-4,
                                                     beta=0.5, bias=2.0)],
                                 [vi('x', T.FLOAT, [1, 6, 1, 1])], [vi('y', T.FLOAT, [1, 6, 1, 1])]),
                {'x': lx}, [lref]))
    return out


def run(dmlc, pkg, inputs, dev, outdir):
    os.makedirs(outdir, exist_ok=True)
    cmd = [dmlc, 'run', pkg, '--device', dev, '--output-dir', outdir]
    for k, f in inputs.items():
        cmd += ['--input', f'{k}={f}']
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode:
        raise RuntimeError(f'{dev}: {p.stderr.strip()}')


def scaled(a, b):
    a = a.astype(np.float64); b = b.astype(np.float64)
    both_nan = np.isnan(a) & np.isnan(b)
    same_inf = np.isinf(a) & np.isinf(b) & (a == b)
    with np.errstate(all='ignore'):
        e = np.abs(a - b) / np.maximum(1.0, np.abs(b))
    e = np.where(both_nan | same_inf, 0.0, e)
    e = np.where(np.isnan(e), np.inf, e)
    return float(e.max()) if e.size else 0.0


def main():
    mode, d = sys.argv[1], sys.argv[2]
    opts = dict(zip(sys.argv[3::2], sys.argv[4::2]))
    dmlc = opts.get('--dmlc', 'build/compiler/dmlc')
    if mode == 'prepare':
        import onnx
        os.makedirs(d, exist_ok=True)
        meta = []
        for name, m, inputs, ref in cases():
            onnx.save(m, f'{d}/{name}.onnx')
            p = subprocess.run([dmlc, 'compile', f'{d}/{name}.onnx', '-o', f'{d}/{name}.dmlpkg',
                                '--target', opts.get('--targets', 'cpu,cuda')], capture_output=True, text=True)
            if p.returncode:
                sys.exit(f'{name}: {p.stderr}')
            files = {}
            for k, v in inputs.items():
                np.save(f'{d}/{name}.in.{k}.npy', v); files[k] = f'{name}.in.{k}.npy'
            if ref is not None:
                for i, r in enumerate(ref):
                    np.save(f'{d}/{name}.ref{i}.npy', r)
            meta.append({'name': name, 'inputs': files, 'outputs': [o.name for o in m.graph.output],
                         'refs': 0 if ref is None else len(ref)})
        json.dump(meta, open(f'{d}/cases.json', 'w'), indent=1)
        print(f'prepared {len(meta)} cases in {d}')
        return
    dev = opts.get('--device', 'cuda')
    bad = 0
    for c in json.load(open(f'{d}/cases.json')):
        name = c['name']
        ins = {k: f'{d}/{v}' for k, v in c['inputs'].items()}
        try:
            run(dmlc, f'{d}/{name}.dmlpkg', ins, dev, f'/tmp/edge_{dev}/{name}')
            run(dmlc, f'{d}/{name}.dmlpkg', ins, 'cpu', f'/tmp/edge_cpu/{name}')
        except RuntimeError as ex:
            print(f'FAIL {name}: {ex}'); bad += 1; continue
        for i, o in enumerate(c['outputs']):
            g = np.load(f'/tmp/edge_{dev}/{name}/{o}.npy'); cp = np.load(f'/tmp/edge_cpu/{name}/{o}.npy')
            e_dev = scaled(g, cp)
            msg = f'{name}/{o}: {dev} vs cpu {e_dev:.3g}'
            ok = e_dev <= 1e-4
            if i < c['refs']:
                r = np.load(f'{d}/{name}.ref{i}.npy')
                e_ref = scaled(cp, r)
                msg += f', cpu vs f64 reference {e_ref:.3g}'
                ok = ok and e_ref <= 1e-4
            print(('ok   ' if ok else 'FAIL ') + msg)
            bad += not ok
    print(f'{bad} disagreement(s)')
    sys.exit(1 if bad else 0)


if __name__ == '__main__':
    main()
