#!/usr/bin/env python3
"""CPU latency: dmlc against ONNX Runtime, side by side on the same models,
inputs and thread counts (bench/run_cpu_bench.sh sets up the venv).

  python3 bench/cpu_bench.py [--models fashion_mlp,lenet5,resnet_small]
      [--batches 1,32] [--threads 1,2] [--rounds 7] [--iterations 30]
      [--warmup 10] [--dmlc build/compiler/dmlc] [--bench build/bench/dml_bench]
      [--shared ../shared] [--json OUT.json]

For each (model, batch, threads) cell: the ONNX model is compiled once with
`dmlc compile` (default pipeline); the input is the model's saved
`<model>_io/input_*.npy` of that batch, or the first `batch` rows of the
largest saved input (written to a temporary .npy so both peers read the same
bytes). Then `--rounds` rounds alternate the two peers: dmlc through
`dml_bench` (`dml_rt_session_set_input` + `dml_rt_session_run`, --warmup then
--iterations runs, its median), ONNX Runtime in this process (CPU execution
provider, ORT_ENABLE_ALL, intra-op threads = threads, inter-op 1,
`session.run` per iteration, same warm-up and iteration counts, the median).
The cell's figure for each peer is the median of its round medians; the ratio
is dmlc / ORT (below 1: dmlc faster); min_rat is the ratio of the fastest
single runs over all rounds, which preemption on a loaded machine distorts
less. /proc/loadavg is printed before each
cell: on a loaded machine the figures are noisy, the ratio less so since the
peers alternate.

dmlc's output is checked against ONNX Runtime's on the same input (max abs
difference printed; above 1e-3 relative to the output's scale the cell is
marked MISMATCH), so a fast wrong kernel cannot pass unnoticed.

int8: a model named X_qdq (a QDQ model, bench/make_cpu_models.py --qdq) whose
f32 original X.onnx sits beside it is timed with a third peer in the same
rounds: dmlc on X (f32). The cell then also prints f32_ms (that peer's median
of round medians) and f32/i8 (f32_ms / dmlc_ms: the int8 speed-up); ratio is
dmlc int8 / ORT int8 on the same QDQ model. Its output check allows 2% of the
output's scale (ORT requantizes in f32, dmlc in double: an intermediate value
may land one quantization step apart).
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np
import onnxruntime as ort


def loadavg():
    try:
        with open('/proc/loadavg') as f:
            return ' '.join(f.read().split()[:3])
    except OSError:
        return 'n/a'


def pick_input(model_dir, model, batch, tmpdir):
    """Path of an .npy holding `batch` rows for `model` (see the module doc)."""
    io = os.path.join(model_dir, model + '_io')
    best = None
    for name in sorted(os.listdir(io)):
        if not (name.startswith('input_') and name.endswith('.npy')):
            continue
        path = os.path.join(io, name)
        x = np.load(path)
        if x.shape[0] == batch:
            return path
        if best is None or x.shape[0] > best[1].shape[0]:
            best = (path, x)
    if best is None or best[1].shape[0] < batch:
        raise SystemExit('error: cpu_bench: no saved input of %s has %d rows' % (model, batch))
    path = os.path.join(tmpdir, '%s_b%d.npy' % (model, batch))
    np.save(path, np.ascontiguousarray(best[1][:batch]))
    return path


def ort_session(onnx_path, threads):
    so = ort.SessionOptions()
    so.intra_op_num_threads = threads
    so.inter_op_num_threads = 1
    so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    return ort.InferenceSession(onnx_path, so, providers=['CPUExecutionProvider'])


def ort_times(sess, feeds, warmup, iterations):
    """(median, min) ms of session.run."""
    for _ in range(warmup):
        sess.run(None, feeds)
    times = []
    for _ in range(iterations):
        t0 = time.perf_counter()
        sess.run(None, feeds)
        times.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(times), min(times)


def dml_times(bench, pkg, npy, warmup, iterations, threads):
    """(median, min) ms of dml_bench's runs."""
    r = subprocess.run([bench, pkg, npy, '--iterations', str(iterations), '--warmup',
                        str(warmup), '--threads', str(threads)],
                       check=True, capture_output=True, text=True)
    j = json.loads(r.stdout.strip().splitlines()[-1])
    return j['median_ms'], j['min_ms']


def dml_output(dmlc, pkg, npy, outdir):
    subprocess.run([dmlc, 'run', pkg, '--input', 'input=' + npy, '--output-dir', outdir],
                   check=True, capture_output=True, text=True)
    outs = sorted(f for f in os.listdir(outdir) if f.endswith('.npy'))
    return np.load(os.path.join(outdir, outs[0]))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    ap.add_argument('--models', default='fashion_mlp,lenet5,resnet_small')
    ap.add_argument('--batches', default='1,32')
    ap.add_argument('--threads', default='1,2')
    ap.add_argument('--rounds', type=int, default=7)
    ap.add_argument('--iterations', type=int, default=30)
    ap.add_argument('--warmup', type=int, default=10)
    ap.add_argument('--dmlc', default=os.path.join(root, 'build', 'compiler', 'dmlc'))
    ap.add_argument('--bench', default=os.path.join(root, 'build', 'bench', 'dml_bench'))
    ap.add_argument('--shared', default=os.environ.get('DMLC_SHARED_DIR',
                                                       os.path.join(root, '..', 'shared')))
    ap.add_argument('--model-dir', default=None,
                    help='where MODEL.onnx and MODEL_io/input_*.npy live (default '
                         'SHARED/models; bench/make_cpu_models.py writes more)')
    ap.add_argument('--pkg-dir', default=None,
                    help='take MODEL.dmlpkg from here instead of compiling (a machine '
                         'without dmlc; the output check then needs --dmlc to run)')
    ap.add_argument('--json', default=None, help='also write the cells as JSON here')
    a = ap.parse_args()
    if a.rounds < 5:
        raise SystemExit('error: cpu_bench: --rounds must be >= 5 (median of rounds)')
    have_dmlc = os.access(a.dmlc, os.X_OK)
    for exe in (a.bench,) if a.pkg_dir else (a.dmlc, a.bench):
        if not os.access(exe, os.X_OK):
            raise SystemExit('error: cpu_bench: %s is not built (cmake --build build '
                             '--target dmlc dml_bench)' % exe)
    model_dir = a.model_dir or os.path.join(a.shared, 'models')
    cells = []
    print('onnxruntime %s, numpy %s, %d CPUs; %d rounds x %d iterations (+%d warm-up)' %
          (ort.__version__, np.__version__, os.cpu_count(), a.rounds, a.iterations,
           a.warmup))
    print('%-20s %5s %3s %10s %10s %7s %7s %9s %10s %7s  %s' %
          ('model', 'batch', 'thr', 'dmlc_ms', 'ort_ms', 'ratio', 'min_rat', 'max_diff',
           'f32_ms', 'f32/i8', 'loadavg'))
    with tempfile.TemporaryDirectory() as tmp:
        for model in a.models.split(','):
            onnx_path = os.path.join(model_dir, model + '.onnx')
            if a.pkg_dir:
                pkg = os.path.join(a.pkg_dir, model + '.dmlpkg')
            else:
                pkg = os.path.join(tmp, model + '.dmlpkg')
                subprocess.run([a.dmlc, 'compile', onnx_path, '-o', pkg], check=True,
                               capture_output=True)
            # int8: the f32 original of a QDQ model, timed in the same rounds.
            f32_pkg = None
            base = model[:-4] if model.endswith('_qdq') else None
            if base and os.path.exists(os.path.join(model_dir, base + '.onnx')):
                if a.pkg_dir:
                    f32_pkg = os.path.join(a.pkg_dir, base + '.dmlpkg')
                else:
                    f32_pkg = os.path.join(tmp, base + '.dmlpkg')
                    subprocess.run([a.dmlc, 'compile', os.path.join(model_dir, base + '.onnx'),
                                    '-o', f32_pkg], check=True, capture_output=True)
            for batch in (int(b) for b in a.batches.split(',')):
                npy = pick_input(model_dir, model, batch, tmp)
                x = np.load(npy)
                got = dml_output(a.dmlc, pkg, npy, os.path.join(tmp, 'o_%s_%d' % (model, batch))) \
                    if have_dmlc else None
                for threads in (int(t) for t in a.threads.split(',')):
                    sess = ort_session(onnx_path, threads)
                    feeds = {sess.get_inputs()[0].name: x}
                    want = sess.run(None, feeds)[0]
                    if got is None:
                        diff = float('nan')  # not checked: no dmlc here
                    elif got.shape == want.shape:
                        diff = float(np.max(np.abs(got - want)))
                    else:
                        diff = float('inf')
                    scale = max(1.0, float(np.max(np.abs(want))))
                    load = loadavg()
                    dm, om, dmin, omin, fm = [], [], [], [], []
                    for _ in range(a.rounds):
                        med, mn = dml_times(a.bench, pkg, npy, a.warmup, a.iterations, threads)
                        dm.append(med)
                        dmin.append(mn)
                        med, mn = ort_times(sess, feeds, a.warmup, a.iterations)
                        om.append(med)
                        omin.append(mn)
                        if f32_pkg:
                            fm.append(dml_times(a.bench, f32_pkg, npy, a.warmup,
                                                a.iterations, threads)[0])
                    d, o = statistics.median(dm), statistics.median(om)
                    dn, on = min(dmin), min(omin)
                    f = statistics.median(fm) if fm else float('nan')
                    tol = 2e-2 if model.endswith('_qdq') else 1e-3
                    flag = '' if got is None or diff <= tol * scale else '  MISMATCH'
                    print('%-20s %5d %3d %10.4f %10.4f %7.2f %7.2f %9.2e %10.4f %7.2f  %s%s' %
                          (model, batch, threads, d, o, d / o, dn / on, diff, f, f / d, load,
                           flag), flush=True)
                    cells.append(dict(model=model, batch=batch, threads=threads, dmlc_ms=d,
                                      ort_ms=o, ratio=d / o, dmlc_min_ms=dn, ort_min_ms=on,
                                      min_ratio=dn / on, max_abs_diff=diff,
                                      mismatch=bool(flag),
                                      loadavg=load, dmlc_rounds=dm, ort_rounds=om,
                                      f32_ms=f if fm else None, f32_rounds=fm))
    print('ratio = dmlc / onnxruntime median ms (below 1: dmlc faster); min_rat = the same '
          'for the fastest run of all rounds (less sensitive to a loaded machine); '
          'f32_ms = dmlc on the f32 original of an X_qdq model, f32/i8 = f32_ms / dmlc_ms; '
          'loadavg now %s' % loadavg())
    if a.json:
        with open(a.json, 'w') as f:
            json.dump(cells, f, indent=1)
    return 1 if any(c['mismatch'] for c in cells) else 0


if __name__ == '__main__':
    sys.exit(main())
