#!/usr/bin/env python3
"""CPU latency: dmlc against ONNX Runtime, side by side on the same models,
inputs and thread counts (bench/run_cpu_bench.sh sets up the venv).

  python3 bench/cpu_bench.py [--models fashion_mlp,lenet5,resnet_small]
      [--batches 1,32] [--threads 1,2] [--rounds 7] [--iterations 30]
      [--warmup 10] [--dmlc build/compiler/dmlc] [--bench build/bench/dml_bench]
      [--shared ../shared] [--json OUT.json]
  python3 bench/cpu_bench.py --zoo [DIR] --models resnet18.torchscript,minilm_l6_real.dynamo ...

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

The zoo (--zoo DIR, default .cache/zoo-<key>/models of scripts/zoo/setup.sh:
the exports of scripts/zoo/export.py): a model is MODEL.EXPORTER, read
through its entry.json; its inputs (every graph input: a text model's
input_ids and attention_mask too) are the saved seeded inputs with their
rows repeated (row i of batch B is saved row i mod n) to the cell's batch;
it is compiled as scripts/zoo/run.py compiles it, symbolic dims kept, with
`--dim-bound batch=MAX` (MAX the largest of --batches), every other named
symbolic input dim bounded by its saved size (the size the cells run:
height/width 96, seq 16) and `--dim-bound 64` for the rest. dml_bench then
binds each input by name. The output check compares ONNX Runtime's first
output with dmlc's output of the same name.

int8: a model named X_qdq (a QDQ model, bench/make_cpu_models.py --qdq) whose
f32 original X.onnx sits beside it is timed with a third peer in the same
rounds: dmlc on X (f32). The cell then also prints f32_ms (that peer's median
of round medians) and f32/i8 (f32_ms / dmlc_ms: the int8 speed-up); ratio is
dmlc int8 / ORT int8 on the same QDQ model. Its output check allows 2% of the
output's scale (ORT requantizes in f32, dmlc in double: an intermediate value
may land one quantization step apart).
"""
import argparse
import functools
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np
import onnxruntime as ort

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@functools.lru_cache(maxsize=None)
def zoo_run_module():
    """scripts/zoo/run.py as a module (its out_file: dmlc run's file names)."""
    import importlib.util
    spec = importlib.util.spec_from_file_location('zoo_run', os.path.join(ROOT, 'scripts', 'zoo',
                                                                          'run.py'))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def zoo_out_file(name):
    """dmlc run's file name (NAME.npy, escaped) of output `name`
    (scripts/zoo/run.py's out_file)."""
    return zoo_run_module().out_file(name)


def zoo_default_dir():
    """.cache/zoo-<key>/models, the key from scripts/zoo/versions.sh."""
    key = subprocess.run(['bash', os.path.join(ROOT, 'scripts', 'zoo', 'versions.sh'), 'key'],
                         check=True, capture_output=True, text=True).stdout.strip()
    return os.path.join(ROOT, '.cache', 'zoo-' + key, 'models')


class ZooModel:
    """One export of the zoo (see the module doc): its ONNX file, compile
    flags and per-batch inputs."""

    def __init__(self, zoo_dir, key, max_batch):
        path = os.path.join(zoo_dir, key + '.entry.json')
        if not os.path.exists(path):
            raise SystemExit('error: cpu_bench: %s not exported (no %s; scripts/zoo/export.py '
                             '--only %s)' % (key, path, key.split('.')[0]))
        with open(path) as f:
            self.entry = json.load(f)
        if self.entry.get('status') not in (None, 'ok') or 'graph_inputs' not in self.entry:
            raise SystemExit('error: cpu_bench: %s did not export: %s' %
                             (key, self.entry.get('error', self.entry.get('status'))))
        self.dir = zoo_dir
        self.onnx = os.path.join(zoo_dir, self.entry['file'])
        self.saved = {gi['name']: np.load(os.path.join(zoo_dir, self.entry['inputs'][gi['name']]
                                                       ['file']))
                      for gi in self.entry['graph_inputs']}
        b = {}
        for gi in self.entry['graph_inputs']:
            for ax, d in enumerate(gi['shape']):
                if isinstance(d, str) and d != '?':
                    b[d] = max_batch if d == 'batch' else max(b.get(d, 1),
                                                               self.saved[gi['name']].shape[ax])
        self.flags = (['--dim-bound', ','.join('%s=%d' % kv for kv in sorted(b.items()))]
                      if b else []) + ['--dim-bound', '64']

    def inputs(self, batch, tmpdir):
        """[(name, .npy path)] at `batch` rows (saved rows repeated)."""
        got = []
        for name, x in self.saved.items():
            if x.ndim and x.shape[0] != batch and any(
                    gi['name'] == name and gi['shape'] and gi['shape'][0] == 'batch'
                    for gi in self.entry['graph_inputs']):
                x = np.ascontiguousarray(x[np.arange(batch) % x.shape[0]])
            p = os.path.join(tmpdir, '%s.%s.b%d.%s' % (self.entry['model'], self.entry['exporter'],
                                                      batch, zoo_out_file(name)))
            np.save(p, x)
            got.append((name, p))
        return got


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


def dml_times(bench, pkg, npys, warmup, iterations, threads):
    """(median, min) ms of dml_bench's runs; npys: the .npy paths, or [(name, path)]."""
    if isinstance(npys, str):
        npys = [npys]
    ins = [n if isinstance(n, str) else '%s=%s' % n for n in npys]
    r = subprocess.run([bench, pkg] + ins + ['--iterations', str(iterations), '--warmup',
                        str(warmup), '--threads', str(threads)],
                       check=True, capture_output=True, text=True)
    j = json.loads(r.stdout.strip().splitlines()[-1])
    return j['median_ms'], j['min_ms']


def dml_output(dmlc, pkg, npys, outdir, out_name=None):
    """dmlc run's output `out_name` (else its first output file by name);
    npys: one .npy path (the input named 'input') or [(name, path)]."""
    if isinstance(npys, str):
        npys = [('input', npys)]
    cmd = [dmlc, 'run', pkg, '--output-dir', outdir]
    for n, p in npys:
        cmd += ['--input', '%s=%s' % (n, p)]
    subprocess.run(cmd, check=True, capture_output=True, text=True)
    if out_name is not None:
        return np.load(os.path.join(outdir, zoo_out_file(out_name)))
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
    ap.add_argument('--zoo', nargs='?', const='', default=None, metavar='DIR',
                    help='models are the zoo\'s MODEL.EXPORTER exports in DIR (default '
                         '.cache/zoo-<key>/models; see the module doc)')
    a = ap.parse_args()
    if a.rounds < 5:
        raise SystemExit('error: cpu_bench: --rounds must be >= 5 (median of rounds)')
    have_dmlc = os.access(a.dmlc, os.X_OK)
    for exe in (a.bench,) if a.pkg_dir else (a.dmlc, a.bench):
        if not os.access(exe, os.X_OK):
            raise SystemExit('error: cpu_bench: %s is not built (cmake --build build '
                             '--target dmlc dml_bench)' % exe)
    model_dir = a.model_dir or os.path.join(a.shared, 'models')
    zoo_dir = None
    if a.zoo is not None:
        zoo_dir = a.zoo or zoo_default_dir()
        if a.pkg_dir:
            raise SystemExit('error: cpu_bench: --zoo compiles its packages (no --pkg-dir)')
    cells = []
    print('onnxruntime %s, numpy %s, %d CPUs; %d rounds x %d iterations (+%d warm-up)' %
          (ort.__version__, np.__version__, os.cpu_count(), a.rounds, a.iterations,
           a.warmup))
    print('%-20s %5s %3s %10s %10s %7s %7s %9s %10s %7s  %s' %
          ('model', 'batch', 'thr', 'dmlc_ms', 'ort_ms', 'ratio', 'min_rat', 'max_diff',
           'f32_ms', 'f32/i8', 'loadavg'))
    with tempfile.TemporaryDirectory() as tmp:
        for model in a.models.split(','):
            zm = ZooModel(zoo_dir, model, max(int(b) for b in a.batches.split(','))) \
                if zoo_dir else None
            onnx_path = zm.onnx if zm else os.path.join(model_dir, model + '.onnx')
            if zm:
                pkg = os.path.join(tmp, model + '.dmlpkg')
                subprocess.run([a.dmlc, 'compile', onnx_path, '-o', pkg] + zm.flags, check=True,
                               capture_output=True)
            elif a.pkg_dir:
                pkg = os.path.join(a.pkg_dir, model + '.dmlpkg')
            else:
                pkg = os.path.join(tmp, model + '.dmlpkg')
                subprocess.run([a.dmlc, 'compile', onnx_path, '-o', pkg], check=True,
                               capture_output=True)
            # int8: the f32 original of a QDQ model, timed in the same rounds.
            f32_pkg = None
            base = model[:-4] if model.endswith('_qdq') and not zm else None
            if base and os.path.exists(os.path.join(model_dir, base + '.onnx')):
                if a.pkg_dir:
                    f32_pkg = os.path.join(a.pkg_dir, base + '.dmlpkg')
                else:
                    f32_pkg = os.path.join(tmp, base + '.dmlpkg')
                    subprocess.run([a.dmlc, 'compile', os.path.join(model_dir, base + '.onnx'),
                                    '-o', f32_pkg], check=True, capture_output=True)
            for batch in (int(b) for b in a.batches.split(',')):
                if zm:
                    npy = zm.inputs(batch, tmp)
                    feeds = {n: np.load(p) for n, p in npy}
                    out_name = zm.entry['graph_outputs'][0]['name']
                else:
                    npy = pick_input(model_dir, model, batch, tmp)
                    feeds, out_name = None, None
                got = dml_output(a.dmlc, pkg, npy, os.path.join(tmp, 'o_%s_%d' % (model, batch)),
                                 out_name) if have_dmlc else None
                for threads in (int(t) for t in a.threads.split(',')):
                    sess = ort_session(onnx_path, threads)
                    if not zm:
                        feeds = {sess.get_inputs()[0].name: np.load(npy)}
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
