#!/usr/bin/env python3
"""Runs an ONNX model with ONNX Runtime (CPU) on a .npy input and compares its
first output with a .npy file (e.g. what `dmlc run` wrote for the same input).

  python3 bench/tools/ort_compare.py MODEL.onnx INPUT.npy EXPECTED.npy [tolerance]

Prints one JSON line {"max_abs_diff":..,"elements":..,"shape":..,"ok":..};
exits 1 when a difference exceeds the tolerance (absolute, default 1e-5) or
the shapes differ.
"""
import json
import sys

import numpy as np
import onnxruntime as ort


def main(argv):
    if len(argv) < 4:
        print('usage: ort_compare.py MODEL.onnx INPUT.npy EXPECTED.npy [tol]', file=sys.stderr)
        return 2
    tol = float(argv[4]) if len(argv) > 4 else 1e-5
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    sess = ort.InferenceSession(argv[1], so, providers=['CPUExecutionProvider'])
    x, want = np.load(argv[2]), np.load(argv[3])
    got = sess.run(None, {sess.get_inputs()[0].name: x})[0]
    same = got.shape == want.shape
    diff = float(np.max(np.abs(got - want))) if same and want.size else 0.0
    ok = same and diff <= tol
    print(json.dumps({'max_abs_diff': diff, 'elements': int(want.size),
                      'shape': list(got.shape), 'ok': ok}))
    return 0 if ok else 1


if __name__ == '__main__':
    sys.exit(main(sys.argv))
