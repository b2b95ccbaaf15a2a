#!/usr/bin/env python3
"""CPU time per run, dmlc against ONNX Runtime, at 1 thread: the
load-insensitive companion of cpu_bench.py (bench/RESULTS.md's CPU-time
tables, stop 19 on).

  python3 bench/cpu_time.py --model-dir DIR [--models mobilenet_tiny,resnet_small]
      [--batches 1,32] [--builds new=build,base=OTHER/build] [--rounds 3]
      [--iterations-1 2000] [--iterations-32 40]
  python3 bench/cpu_time.py --zoo [DIR] --models efficientnet_b0.torchscript,... [flags]

A wall-clock median on a shared machine measures the other tenants as much
as the code; the CPU time a run consumes does not count the time it was
preempted (cache and core sharing still count). For each (model, batch)
cell and each round, every build's dml_bench (BUILD/bench/dml_bench, the
package compiled by BUILD/compiler/dmlc) runs N iterations with no warm-up
and 1 iteration, and its CPU time (user + system, all threads, from the
child's rusage: what `perf stat -e task-clock` counts) for the difference,
divided by N - 1, is the per-run figure (the process start, the package
load and the first run's page faults cancel); then ONNX Runtime (CPU
execution provider, ORT_ENABLE_ALL, 1 intra-op thread) in this process:
time.process_time() over N session.run after 10 warm-up runs. N is
--iterations-1 at batch 1 and --iterations-32 otherwise. The builds and
ORT alternate within each round; the table gives the median of the
rounds, each build's ratio to ORT's median, and /proc/loadavg per round.
Inputs are cpu_bench.py's (the model's saved `<model>_io/input_*.npy`);
with --zoo, the zoo's exports MODEL.EXPORTER as cpu_bench.py --zoo takes
them (every graph input, saved rows repeated to the batch, compiled with
its --dim-bound flags).
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np
import onnxruntime as ort

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cpu_bench import ZooModel, loadavg, pick_input, zoo_default_dir  # noqa: E402


def child_cpu_s(cmd):
    """CPU seconds (user + system) of the command, which must succeed."""
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, ru = os.wait4(p.pid, 0)
    err = p.stderr.read().decode(errors='replace')
    p.stderr.close()
    code = os.waitstatus_to_exitcode(status)
    if code != 0:
        raise SystemExit('error: cpu_time: %s exited %d: %s' % (cmd[0], code, err.strip()))
    return ru.ru_utime + ru.ru_stime


def dml_ms(bench, pkg, npys, n):
    """CPU ms per run of dml_bench (see the module doc); npys: dml_bench's
    INPUT arguments (FILE.npy or NAME=FILE.npy)."""
    def run(k):
        return child_cpu_s([bench, pkg] + npys + ['--iterations', str(k), '--warmup', '0',
                                                  '--threads', '1'])
    return (run(n) - run(1)) / (n - 1) * 1e3


def ort_ms(sess, feeds, n):
    for _ in range(10):
        sess.run(None, feeds)
    t0 = time.process_time()
    for _ in range(n):
        sess.run(None, feeds)
    return (time.process_time() - t0) / n * 1e3


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    ap.add_argument('--model-dir', default=None)
    ap.add_argument('--zoo', nargs='?', const='', default=None, metavar='DIR',
                    help='models are the zoo\'s MODEL.EXPORTER exports in DIR (default '
                         '.cache/zoo-<key>/models; cpu_bench.py --zoo)')
    ap.add_argument('--models', default='mobilenet_tiny,resnet_small')
    ap.add_argument('--batches', default='1,32')
    ap.add_argument('--builds', default='new=' + os.path.join(root, 'build'),
                    help='NAME=BUILD_DIR,... (each with compiler/dmlc and bench/dml_bench)')
    ap.add_argument('--rounds', type=int, default=3)
    ap.add_argument('--iterations-1', type=int, default=2000)
    ap.add_argument('--iterations-32', type=int, default=40)
    a = ap.parse_args()
    if (a.model_dir is None) == (a.zoo is None):
        raise SystemExit('error: cpu_time: give --model-dir or --zoo')
    zoo_dir = (a.zoo or zoo_default_dir()) if a.zoo is not None else None
    max_batch = max(int(b) for b in a.batches.split(','))
    builds = [tuple(b.split('=', 1)) for b in a.builds.split(',')]
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    so.inter_op_num_threads = 1
    so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for model in a.models.split(','):
            zm = ZooModel(zoo_dir, model, max_batch) if zoo_dir else None
            onnx_path = zm.onnx if zm else os.path.join(a.model_dir, model + '.onnx')
            pkgs = {}
            for name, bdir in builds:
                pkgs[name] = os.path.join(tmp, '%s_%s.dmlpkg' % (model, name))
                subprocess.run([os.path.join(bdir, 'compiler', 'dmlc'), 'compile', onnx_path,
                                '-o', pkgs[name]] + (zm.flags if zm else []), check=True,
                               capture_output=True)
            sess = ort.InferenceSession(onnx_path, so, providers=['CPUExecutionProvider'])
            iname = sess.get_inputs()[0].name
            for batch in [int(b) for b in a.batches.split(',')]:
                if zm:
                    ins = zm.inputs(batch, tmp)
                    npy = ['%s=%s' % kv for kv in ins]
                    feeds = {k: np.load(v) for k, v in ins}
                else:
                    path = pick_input(a.model_dir, model, batch, tmp)
                    npy = [path]
                    feeds = {iname: np.load(path)}
                n = a.iterations_1 if batch == 1 else a.iterations_32
                got = {name: [] for name, _ in builds}
                got['ort'] = []
                loads = []
                for _ in range(a.rounds):
                    loads.append(loadavg().split()[0])
                    for name, bdir in builds:
                        got[name].append(dml_ms(os.path.join(bdir, 'bench', 'dml_bench'),
                                                pkgs[name], npy, n))
                    got['ort'].append(ort_ms(sess, feeds, n))
                med = {k: statistics.median(v) for k, v in got.items()}
                rows.append((model, batch, med, loads, got))
                line = '%-16s b%-3d ort %.4f ms' % (model, batch, med['ort'])
                for name, _ in builds:
                    line += ' | %s %.4f ms (%.2fx)' % (name, med[name], med[name] / med['ort'])
                print(line + ' | load ' + ','.join(loads), flush=True)
    print('\n| model | batch | ' + ' | '.join(n for n, _ in builds) + ' | ORT | ' +
          ' | '.join(n + ' / ORT' for n, _ in builds) + ' |')
    print('| --- | ---: |' + ' ---: |' * (2 * len(builds) + 1))
    for model, batch, med, _, _ in rows:
        cells = ['%.3f' % med[n] if batch > 1 else '%.4f' % med[n] for n, _ in builds]
        ratios = ['%.2f' % (med[n] / med['ort']) for n, _ in builds]
        print('| %s | %d | %s | %s | %s |' % (model, batch, ' | '.join(cells),
                                             '%.3f' % med['ort'] if batch > 1 else
                                             '%.4f' % med['ort'], ' | '.join(ratios)))


if __name__ == '__main__':
    main()
