"""train_torch.py — the PyTorch side of bench/train_bench.sh: one epoch of
fashion_mlp (784-256-dropout 0.2-128-10, the architecture of
../shared/models/fashion_mlp_untrained.onnx) on Fashion-MNIST, Adam 1e-3,
cross-entropy, batch 32, shuffled, on the CPU with torch.set_num_threads(T).

    python3 bench/train_torch.py DATA_DIR [threads] [epochs]

Prints one JSON line: samples_per_s (training rows / training time, data
loading excluded), seconds, final epoch loss, test accuracy.
"""
import gzip
import json
import os
import struct
import sys
import time

import numpy as np
import torch


def idx(path):
    with gzip.open(path, 'rb') as f:
        b = f.read()
    ndim = b[3]
    dims = struct.unpack('>' + 'I' * ndim, b[4:4 + 4 * ndim])
    return np.frombuffer(b, dtype=np.uint8, offset=4 + 4 * ndim).reshape(dims)


def main():
    d = sys.argv[1]
    threads = int(sys.argv[2]) if len(sys.argv) > 2 else 2
    epochs = int(sys.argv[3]) if len(sys.argv) > 3 else 1
    torch.set_num_threads(threads)
    torch.manual_seed(0)
    x = torch.from_numpy(idx(os.path.join(d, 'train-images-idx3-ubyte.gz')).reshape(-1, 784)
                         .astype(np.float32) / 255.0)
    y = torch.from_numpy(idx(os.path.join(d, 'train-labels-idx1-ubyte.gz')).astype(np.int64))
    xt = torch.from_numpy(idx(os.path.join(d, 't10k-images-idx3-ubyte.gz')).reshape(-1, 784)
                          .astype(np.float32) / 255.0)
    yt = torch.from_numpy(idx(os.path.join(d, 't10k-labels-idx1-ubyte.gz')).astype(np.int64))
    model = torch.nn.Sequential(
        torch.nn.Flatten(), torch.nn.Linear(784, 256), torch.nn.ReLU(), torch.nn.Dropout(0.2),
        torch.nn.Linear(256, 128), torch.nn.ReLU(), torch.nn.Linear(128, 10))
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    loss_fn = torch.nn.CrossEntropyLoss()
    n, bs = x.shape[0], 32
    model.train()
    t0 = time.perf_counter()
    for _ in range(epochs):
        perm = torch.randperm(n)
        total = 0.0
        for s in range(0, n, bs):
            idx_b = perm[s:s + bs]
            opt.zero_grad()
            loss = loss_fn(model(x[idx_b]), y[idx_b])
            loss.backward()
            opt.step()
            total += loss.item() * idx_b.shape[0]
    secs = time.perf_counter() - t0
    model.eval()
    with torch.no_grad():
        acc = (model(xt).argmax(1) == yt).float().mean().item()
    print(json.dumps({'samples_per_s': n * epochs / secs, 'seconds': secs,
                      'loss': total / n, 'test_accuracy': acc, 'threads': threads,
                      'torch': torch.__version__}))


if __name__ == '__main__':
    main()
