#!/usr/bin/env python3
"""Per-node times, dmlc against ONNX Runtime, at 1 thread (bench/RESULTS.md,
"CPU: the zoo's CNNs and transformers against ONNX Runtime (issue 16)").

  python3 bench/node_profile.py trace T.json
      each node span of a `dmlc bench PKG ... --trace T.json` run on the
      cpu (process 2 of the trace; fused nodes share a span, names joined
      by '+'), in run order: the minimum and the median over the timed
      runs, us, and the sum of the minima
  python3 bench/node_profile.py ort MODEL.onnx --shape 32,3,96,96 [--runs 12]
      ONNX Runtime's own profile (enable_profiling, CPU execution
      provider, ORT_ENABLE_ALL, 1 intra-op thread) of MODEL.onnx on one
      f32 input of that shape, uniform in [-1, 1) (seed 0): each node's
      kernel time, minimum and median over the runs after the first two,
      us, in run order, with the op type, and the sum of the minima

ORT names a fused node after its output (`..._nchwc`: its NCHWc layout);
dmlc after the graph nodes it runs. Exit status 2 on bad arguments or an
unreadable file.
"""
import argparse
import collections
import json
import os
import statistics
import sys
import tempfile


def report(order, times, label=None):
    tot = 0.0
    for n in order:
        v = sorted(times[n])
        tot += v[0]
        print('%9.0f %9.0f  %s%s' % (v[0], statistics.median(v),
                                     (label[n] + ' ') if label else '', n))
    print('%9.0f total (sum of minima)' % tot)


def from_trace(path):
    with open(path) as f:
        d = json.load(f)
    ev = d['traceEvents'] if isinstance(d, dict) else d
    times, order = collections.defaultdict(list), []
    for e in ev:
        if e.get('ph') == 'X' and e.get('pid') == 2:
            if e['name'] not in times:
                order.append(e['name'])
            times[e['name']].append(e['dur'])
    report(order, times)


def from_ort(model, shape, runs):
    import numpy as np
    import onnxruntime as ort
    so = ort.SessionOptions()
    so.intra_op_num_threads = so.inter_op_num_threads = 1
    so.enable_profiling = True
    so.profile_file_prefix = os.path.join(tempfile.mkdtemp(), 'ortprof')
    s = ort.InferenceSession(model, so, providers=['CPUExecutionProvider'])
    x = np.random.default_rng(0).uniform(-1, 1, shape).astype(np.float32)
    for _ in range(runs):
        s.run(None, {s.get_inputs()[0].name: x})
    with open(s.end_profiling()) as f:
        d = json.load(f)
    seen, times, order, ops = collections.defaultdict(int), collections.defaultdict(list), [], {}
    for e in d:
        if e.get('cat') == 'Node' and e['name'].endswith('_kernel_time'):
            n = e['name'][:-len('_kernel_time')]
            if n not in ops:
                order.append(n)
            ops[n] = e['args'].get('op_name', '?')
            seen[n] += 1
            if seen[n] > 2:  # the first two runs warm up
                times[n].append(e['dur'])
    report([n for n in order if times[n]], times, ops)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    sub = ap.add_subparsers(dest='cmd', required=True)
    t = sub.add_parser('trace')
    t.add_argument('trace')
    o = sub.add_parser('ort')
    o.add_argument('model')
    o.add_argument('--shape', required=True, help='N,C,H,W,... of the input')
    o.add_argument('--runs', type=int, default=12)
    a = ap.parse_args()
    try:
        if a.cmd == 'trace':
            from_trace(a.trace)
        else:
            shape = tuple(int(v) for v in a.shape.split(','))
            if a.runs < 3 or any(v < 1 for v in shape):
                raise ValueError('--runs must be >= 3 and the shape positive')
            from_ort(a.model, shape, a.runs)
    except (OSError, ValueError, KeyError) as e:
        print('node_profile.py: %s' % e, file=sys.stderr)
        sys.exit(2)


if __name__ == '__main__':
    main()
