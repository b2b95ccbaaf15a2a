#!/usr/bin/env python3
"""The zoo's models on the GPU: dmlc's CUDA package against PyTorch eager and
torch.compile (inductor, default mode) on the same GPU, in one run
(issue 20 item 4). Runs on the GPU machine after scripts/gpu_zoo.sh has
exported the models there (their ONNX files in --models) and unpacked the
dmlc toolchain (--dmlc).

For each model of --only and each batch of --batches:
  - dmlc: `dmlc compile MODEL.torchscript.onnx --target cpu,cuda
    --input-shape NAME=BxD1x...` (every dim static: the export's sample shape
    with the batch dim set to B; compiled for all cells first, in parallel),
    timed by `dmlc bench PKG --device cuda --json` (end to end: inputs copied
    in, outputs copied out; its median over --iterations runs);
  - PyTorch: the module export.py builds (same builder, same seed; f32, TF32
    off in matmul and cuDNN, as dmlc's f32), eager and torch.compile'd,
    each iteration end to end as dmlc's: the host inputs copied to the GPU,
    the forward pass, the outputs copied back (which synchronizes).
Rounds interleave the three (dmlc, eager, compiled) --rounds times; a cell's
figure is the median of its round medians. The machine's load (1-minute
load average) is printed with each round.

--precisions f32,f16 adds, per model and batch, an f16 cell: dmlc compiled
with `--precision f16` (16-bit storage and arithmetic, f32 accumulation;
the package's inputs and outputs stay f32) against the module and its
floating-point inputs in half precision (`.half()`), eager and compiled;
each f16 cell also gives its speed-up over the f32 cell of the same model
and batch (issue 19: f16 at least 1.6x f32).

  python3 bench/gpu/zoo_speed.py --models /tmp/zoo/models --dmlc /tmp/dmlc-tc/bin/dmlc \
      --only resnet18,mobilenet_v2 --batches 1,32 --rounds 5 --json OUT.json
"""
import argparse
import concurrent.futures as cf
import copy
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "scripts", "zoo"))


def shapes_at(inputs, dims, b):
    """Each input's shape with its marked batch dim set to b (others as exported)."""
    out = {}
    for k, v in inputs.items():
        s = list(v.shape)
        for ax, sym in dims.get(k, {}).items():
            if sym == "batch":
                s[int(ax)] = b
        out[k] = s
    return out


def batch_of(inputs, dims, b):
    import numpy as np

    out = {}
    for k, v in inputs.items():
        ax = [int(a) for a, s in dims.get(k, {}).items() if s == "batch"]
        if ax:
            idx = np.arange(b) % v.shape[ax[0]]
            v = np.take(v, idx, axis=ax[0])
        out[k] = np.ascontiguousarray(v)
    return out


def compile_cell(a, name, b, shapes, pkg, precision):
    onnx_path = os.path.join(a.models, f"{name}.{a.exporter}.onnx")
    spec = [x for k, s in shapes.items() for x in ("--input-shape", f"{k}={'x'.join(map(str, s))}")]
    t0 = time.time()
    r = subprocess.run([a.dmlc, "compile", onnx_path, "-o", pkg, "--target", "cpu,cuda",
                        "--precision", precision] + spec, capture_output=True, text=True)
    return r.returncode, (r.stderr or r.stdout).strip()[-400:], time.time() - t0


def dmlc_ms(a, pkg):
    r = subprocess.run([a.dmlc, "bench", pkg, "--device", "cuda", "--iterations", str(a.iterations),
                        "--warmup", "5", "--json"], capture_output=True, text=True)
    if r.returncode:
        raise RuntimeError((r.stderr or r.stdout).strip()[-400:])
    return json.loads(r.stdout)["median_ms"]


def torch_ms(fn, host, iterations):
    import torch

    ts = []
    for _ in range(iterations):
        t0 = time.perf_counter()
        fn(host)
        ts.append((time.perf_counter() - t0) * 1e3)
    torch.cuda.synchronize()
    return statistics.median(ts)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models", required=True, help="export.py's output folder")
    ap.add_argument("--dmlc", required=True)
    ap.add_argument("--only", required=True, help="comma-separated model names")
    ap.add_argument("--exporter", default="torchscript")
    ap.add_argument("--batches", default="1,32")
    ap.add_argument("--precisions", default="f32", help="f32, f16 or f32,f16")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--iterations", type=int, default=20)
    ap.add_argument("--jobs", type=int, default=12, help="parallel dmlc compiles")
    ap.add_argument("--json", required=True)
    a = ap.parse_args()
    import torch
    import export as zoo

    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    names = [n for n in a.only.split(",") if n]
    batches = [int(b) for b in a.batches.split(",")]
    precs = [p for p in a.precisions.split(",") if p]
    for p in precs:
        if p not in ("f32", "f16"):
            ap.error(f"--precisions: {p} is not f32 or f16")
    work = tempfile.mkdtemp(prefix="zoo-speed-")
    res = {"gpu": torch.cuda.get_device_name(), "torch": torch.__version__, "cells": []}
    built = {}
    for n in names:
        torch.manual_seed(0)
        built[n] = zoo.MODELS[n][0]()
    jobs = {}
    with cf.ThreadPoolExecutor(a.jobs) as ex:
        for n in names:
            _, inputs, dims, _ = built[n]
            for b in batches:
                for p in precs:
                    pkg = os.path.join(work, f"{n}.b{b}.{p}.dmlpkg")
                    jobs[(n, b, p)] = (pkg, ex.submit(compile_cell, a, n, b, shapes_at(inputs, dims, b), pkg, p))
    for n, p in [(n, p) for n in names for p in precs]:
        model, inputs, dims, _ = built[n]
        if p == "f16":
            model = copy.deepcopy(model).half()  # .half() converts in place
        model = model.cuda().eval()
        compiled = torch.compile(model)

        def run(m):
            def f(host):
                with torch.no_grad():
                    y = m(**{k: v.cuda(non_blocking=False) for k, v in host.items()})
                ys = y if isinstance(y, (tuple, list)) else [y]
                if isinstance(y, dict):
                    ys = list(y.values())
                elif hasattr(y, "to_tuple"):
                    ys = list(y.to_tuple())
                return [t.cpu() for t in ys if torch.is_tensor(t)]

            return f

        for b in batches:
            pkg, fut = jobs[(n, b, p)]
            rc, err, compile_s = fut.result()
            host = {k: torch.from_numpy(v) for k, v in batch_of(inputs, dims, b).items()}
            if p == "f16":
                host = {k: v.half() if v.is_floating_point() else v for k, v in host.items()}
            cell = {"model": n, "exporter": a.exporter, "batch": b, "precision": p,
                    "dmlc_compile_s": round(compile_s, 1)}
            fe, fc = run(model), run(compiled)
            try:
                t0 = time.time()
                for _ in range(3):
                    fc(host)  # torch.compile's compile (and its recompiles per batch)
                cell["torch_compile_s"] = round(time.time() - t0, 1)
                for _ in range(3):
                    fe(host)
            except Exception as e:  # noqa: BLE001
                cell["torch_error"] = f"{type(e).__name__}: {e}"[:300]
            rounds = {"dmlc": [], "eager": [], "compiled": []}
            for r in range(a.rounds):
                load = os.getloadavg()[0]
                if rc == 0:
                    try:
                        rounds["dmlc"].append(dmlc_ms(a, pkg))
                    except RuntimeError as e:
                        cell["dmlc_error"] = str(e)
                if "torch_error" not in cell:
                    rounds["eager"].append(torch_ms(fe, host, a.iterations))
                    rounds["compiled"].append(torch_ms(fc, host, a.iterations))
                print(f"  {n} b{b} {p} round {r}: load {load:.1f} "
                      + " ".join(f"{k} {v[-1]:.3f} ms" for k, v in rounds.items() if v), flush=True)
            if rc:
                cell["dmlc_error"] = err
            for k, v in rounds.items():
                if v:
                    cell[f"{k}_ms"] = round(statistics.median(v), 4)
            if "dmlc_ms" in cell and "compiled_ms" in cell:
                cell["dmlc_vs_compiled"] = round(cell["compiled_ms"] / cell["dmlc_ms"], 3)
                cell["dmlc_vs_eager"] = round(cell["eager_ms"] / cell["dmlc_ms"], 3)
            if p != "f32":
                ref = [c for c in res["cells"] if c["model"] == n and c["batch"] == b and c["precision"] == "f32"]
                for k in ("dmlc", "eager", "compiled"):
                    if ref and f"{k}_ms" in ref[0] and f"{k}_ms" in cell:
                        cell[f"{k}_speedup_vs_f32"] = round(ref[0][f"{k}_ms"] / cell[f"{k}_ms"], 3)
            print(json.dumps(cell), flush=True)
            res["cells"].append(cell)
            with open(a.json, "w") as f:
                json.dump(res, f, indent=1)
        del model, compiled
        torch.cuda.empty_cache()
        torch._dynamo.reset()
    return 0


if __name__ == "__main__":
    sys.exit(main())
