"""train_torch.py — the PyTorch side of bench/train_bench.sh (CPU) and of
bench/gpu/train_h200.sh (GPU): fashion_mlp (784-256-dropout 0.2-128-10, the
architecture of ../shared/models/fashion_mlp_untrained.onnx) on
Fashion-MNIST, Adam 1e-3, cross-entropy, shuffled, eager mode.

    python3 bench/train_torch.py DATA_DIR [threads] [epochs]
            [--device cpu|cuda[:N]] [--batch-size N] [--seed N] [--per-epoch]
            [--limit N] [--dropout P]

DATA_DIR holds the four Fashion-MNIST IDX files, gzipped (Debian's
dataset-fashion-mnist) or plain (bench/gpu/train_prepare.sh).

Timing: training steps only (data loading and the move to the device
excluded, as for dmlc). On cuda the data sets are on the GPU before the
clock starts (PyTorch's strongest eager form: no host-to-device copy per
step), the epoch's loss is summed on the device and read once per epoch,
and each epoch's time ends with torch.cuda.synchronize(). On the CPU the
loop is the one bench/train_bench.sh has always measured (loss.item() per
step).

Prints one JSON line: samples_per_s (training rows / training time over all
epochs), seconds, final epoch loss, test accuracy; with --per-epoch also one
JSON line per epoch before it ({"event": "epoch", ..., "samples_per_s": S}).
--limit N keeps the first N rows of each split (smoke tests); --dropout P
sets the Dropout layer's probability (default 0.2, the model's; 0 for
bench/gpu/train_prepare.sh's DROPOUT=remove).
"""
import argparse
import gzip
import json
import os
import struct
import time

import numpy as np
import torch


def idx(path):
    """Reads an IDX file, gzipped or plain (by its magic bytes 1f 8b)."""
    with open(path, 'rb') as f:
        b = f.read()
    if b[:2] == b'\x1f\x8b':
        b = gzip.decompress(b)
    ndim = b[3]
    dims = struct.unpack('>' + 'I' * ndim, b[4:4 + 4 * ndim])
    return np.frombuffer(b, dtype=np.uint8, offset=4 + 4 * ndim).reshape(dims)


def find(d, prefix, kind):
    """The split's file in d (a plain file over a gzipped one)."""
    names = sorted(n for n in os.listdir(d) if n.startswith(prefix) and kind in n)
    if not names:
        raise SystemExit('no %s*%s* file in %s' % (prefix, kind, d))
    plain = [n for n in names if not n.endswith('.gz')]
    return os.path.join(d, (plain or names)[0])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('data')
    ap.add_argument('threads', nargs='?', type=int, default=2)
    ap.add_argument('epochs', nargs='?', type=int, default=1)
    ap.add_argument('--device', default='cpu')
    ap.add_argument('--batch-size', type=int, default=32)
    ap.add_argument('--seed', type=int, default=0)
    ap.add_argument('--per-epoch', action='store_true')
    ap.add_argument('--limit', type=int, default=0)
    ap.add_argument('--dropout', type=float, default=0.2)
    a = ap.parse_args()
    dev = torch.device(a.device)
    cuda = dev.type == 'cuda'
    torch.set_num_threads(a.threads)
    torch.manual_seed(a.seed)

    def load(prefix):
        x = idx(find(a.data, prefix, 'images')).reshape(-1, 784).astype(np.float32) / 255.0
        y = idx(find(a.data, prefix, 'labels')).astype(np.int64)
        if a.limit > 0:
            x, y = x[:a.limit], y[:a.limit]
        return torch.from_numpy(x).to(dev), torch.from_numpy(y).to(dev)

    x, y = load('train-')
    xt, yt = load('t10k-')
    model = torch.nn.Sequential(
        torch.nn.Flatten(), torch.nn.Linear(784, 256), torch.nn.ReLU(),
        torch.nn.Dropout(a.dropout), torch.nn.Linear(256, 128), torch.nn.ReLU(), torch.nn.Linear(128, 10)).to(dev)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    loss_fn = torch.nn.CrossEntropyLoss()
    n, bs = x.shape[0], a.batch_size
    model.train()
    if cuda:
        torch.cuda.synchronize(dev)
    secs = 0.0
    for e in range(a.epochs):
        t0 = time.perf_counter()
        perm = torch.randperm(n, device=dev)
        total = torch.zeros((), device=dev) if cuda else 0.0
        for s in range(0, n, bs):
            idx_b = perm[s:s + bs]
            opt.zero_grad()
            loss = loss_fn(model(x[idx_b]), y[idx_b])
            loss.backward()
            opt.step()
            if cuda:
                total += loss.detach() * idx_b.shape[0]
            else:
                total += loss.item() * idx_b.shape[0]
        if cuda:
            torch.cuda.synchronize(dev)
        dt = time.perf_counter() - t0
        secs += dt
        total = float(total)
        if a.per_epoch:
            print(json.dumps({'event': 'epoch', 'device': a.device, 'batch_size': bs,
                              'epoch': e + 1, 'epochs': a.epochs, 'loss': total / n,
                              'seconds': dt, 'samples_per_s': n / dt}), flush=True)
    model.eval()
    with torch.no_grad():
        acc = (model(xt).argmax(1) == yt).float().mean().item()
    print(json.dumps({'samples_per_s': n * a.epochs / secs, 'seconds': secs,
                      'loss': total / n, 'test_accuracy': acc, 'threads': a.threads,
                      'device': a.device, 'batch_size': bs, 'epochs': a.epochs,
                      'torch': torch.__version__,
                      'gpu': torch.cuda.get_device_name(dev) if cuda else None}))


if __name__ == '__main__':
    main()
