#!/usr/bin/env python3
"""Test-set accuracy of ONNX models on Fashion-MNIST with ONNX Runtime (the
peer users compare `dmlc quantize`'s QDQ models with; docs/quantize.md):

  python3 ort_accuracy.py DATASET_DIR MODEL.onnx...

DATASET_DIR holds t10k-images-idx3-ubyte.gz / t10k-labels-idx1-ubyte.gz
(Debian's dataset-fashion-mnist: /usr/share/datasets/fashion-mnist). Pixels
are scaled to [0, 1] (byte / 255) and shaped as the model's input ([N, 784]
or [N, 1, 28, 28]), as `dmlc eval` does; accuracy is argmax(output 0) ==
label over the 10,000 images. Needs numpy and onnxruntime.
"""
import gzip
import os
import sys

import numpy as np
import onnxruntime as ort


def idx(path):
    with gzip.open(path, "rb") as f:
        b = f.read()
    rank = b[3]
    dims = [int.from_bytes(b[4 + 4 * i:8 + 4 * i], "big") for i in range(rank)]
    return np.frombuffer(b, dtype=np.uint8, offset=4 + 4 * rank).reshape(dims)


d = sys.argv[1]
x = idx(os.path.join(d, "t10k-images-idx3-ubyte.gz")).astype(np.float32) / 255
y = idx(os.path.join(d, "t10k-labels-idx1-ubyte.gz")).astype(np.int64)
for path in sys.argv[2:]:
    s = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    inp = s.get_inputs()[0]
    shape = [len(x)] + [int(v) for v in inp.shape[1:]]
    out = s.run(None, {inp.name: x.reshape(shape)})[0]
    acc = float((out.argmax(1) == y).mean())
    print("%s: onnxruntime %s accuracy %.4f (%.2f%%)" % (path, ort.__version__, acc, 100 * acc))
