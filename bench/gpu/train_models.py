#!/usr/bin/env python3
"""Training steps/s of torchvision's ResNet-18 and a BERT encoder classifier
(transformers' BertForSequenceClassification) by dmlc, PyTorch eager and
torch.compile, side by side in one process (issue 20 item 4).
bench/gpu/train_models.sh runs it on the GPU machine; docs/training.md
("Training speed of ResNet-18 and BERT") says what it measures.

  train_models.py export --model resnet18|bert --size full|small|tiny --out DIR
      [--batch 32] [--batches K] [--seed 0]
    Builds the model with random weights (torch.manual_seed(seed)), exports it
    with torch.onnx's default (dynamo) exporter, opset 18, batch dim dynamic,
    in eval form with optimize=False (the exporter's optimizer folds each
    BatchNormalization into its Conv in eval form, which leaves nothing to
    train; dmlc puts the kept BatchNormalizations in training mode), and
    writes DIR/NAME.onnx, NAME.x.npy and NAME.y.npy (K batches of seeded
    random inputs and int64 labels) and NAME.json (the configuration);
    NAME = MODEL_SIZE.

  train_models.py bench --name NAME --dir DIR --pkg PKG --train-bench PATH
      [--device cuda|cpu] [--sides dmlc,eager,compile] [--rounds 5]
      [--round-s 2.0] [--warmup 3] [--lr 0.01] [--momentum 0.9]
      [--threads N] [--tf32] [--json OUT.json] [--max-first-loss-diff R]
    Trains NAME from the same weights (the torch module's parameters and
    BatchNorm statistics are loaded from the ONNX initializers, by name) on
    the same batches in the same order, with cross-entropy and SGD with
    momentum (lr, momentum; no weight decay, dampening 0): dmlc through
    PATH (bench/train/dml_train_bench --rounds-stdin on PKG, `dmlc compile
    --train --loss cross_entropy --optimizer momentum`), PyTorch eager and
    torch.compile (inductor, default mode, the model's forward and the loss
    compiled, backward by AOTAutograd, the optimizer step eager). Each side
    first runs --warmup steps (dmlc: two warm-up rounds of that many steps,
    the first loading kernels and capturing the CUDA graph; torch.compile:
    the compilation), whose first losses are printed side by side (the same
    weights and batches: they agree to rounding), then --rounds interleaved
    rounds (dmlc, eager, compile, dmlc, ...), each side running as many steps
    per round as its warm-up speed says fill --round-s seconds (dmlc: at
    most the K batches of the data). A round's time: dmlc's epoch time
    (dml_trainer_fit: per step the batch upload, train_step, the loss read
    back), PyTorch's from a synchronize before its first step to one after
    its last (per step the batch copied to the device, forward, loss,
    backward, optimizer step). Reports the median steps/s and samples/s of
    the rounds, the load average and GPU utilization before and after, and
    writes OUT.json (after every round too, with rounds_done, so that a run
    stopped by a time limit keeps its rounds).

  train_models.py table OUT1.json ...
    A markdown table of bench results.

  train_models.py summary --dir DIR --names NAME... --json J --md M
    train_models.sh's last step: the per-model export, compile and bench
    files of DIR merged into J and the table M.
"""
import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import time

import numpy as np

# Model configurations: one definition each (export, bench and the docs
# read them from here).
CONFIGS = {
    ("resnet18", "full"): dict(side=224, classes=1000),
    ("resnet18", "small"): dict(side=64, classes=10),
    ("resnet18", "tiny"): dict(side=32, classes=10),
    # bert-base
    ("bert", "full"): dict(hidden=768, layers=12, heads=12, inter=3072, seq=128, vocab=30522, classes=2),
    # 4 layers of 256 (BERT-mini's shape), bert-base's vocabulary and length
    ("bert", "small"): dict(hidden=256, layers=4, heads=4, inter=1024, seq=128, vocab=30522, classes=2),
    ("bert", "tiny"): dict(hidden=64, layers=2, heads=2, inter=256, seq=32, vocab=1000, classes=2),
}


def build_module(model, size, seed, attn="sdpa"):
    """The torch module (a wrapper returning the logits) of CONFIGS[(model,
    size)], random weights from torch.manual_seed(seed). BERT's dropouts
    are 0, so both sides train the same function (dmlc's Dropout would draw
    other masks); `attn` is its attention implementation: "eager" for the
    export (MatMul, Softmax, MatMul), "sdpa" (transformers' default, the
    same function) for PyTorch's sides."""
    import torch

    c = CONFIGS[(model, size)]
    torch.manual_seed(seed)
    if model == "resnet18":
        import torchvision

        return torchvision.models.resnet18(weights=None, num_classes=c["classes"])
    import transformers

    cfg = transformers.BertConfig(
        vocab_size=c["vocab"],
        hidden_size=c["hidden"],
        num_hidden_layers=c["layers"],
        num_attention_heads=c["heads"],
        intermediate_size=c["inter"],
        max_position_embeddings=max(512, c["seq"]),
        hidden_dropout_prob=0.0,
        attention_probs_dropout_prob=0.0,
        num_labels=c["classes"],
    )
    cfg._attn_implementation = attn
    bert = transformers.BertForSequenceClassification(cfg)

    class Logits(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.m = bert

        def forward(self, input_ids):
            return self.m(input_ids=input_ids).logits

    return Logits()


def make_data(model, size, batch, batches, seed):
    c = CONFIGS[(model, size)]
    r = np.random.default_rng(seed + 1000)
    n = batch * batches
    if model == "resnet18":
        x = r.standard_normal((n, 3, c["side"], c["side"]), dtype=np.float32)
    else:
        x = r.integers(0, c["vocab"], (n, c["seq"]), dtype=np.int64)
    y = r.integers(0, c["classes"], (n,), dtype=np.int64)
    return x, y


def cmd_export(a):
    import torch

    name = f"{a.model}_{a.size}"
    os.makedirs(a.out, exist_ok=True)
    m = build_module(a.model, a.size, a.seed, attn="eager").eval()
    x, y = make_data(a.model, a.size, a.batch, a.batches, a.seed)
    in_name = "x" if a.model == "resnet18" else "input_ids"
    t0 = time.time()
    prog = torch.onnx.export(
        m,
        (torch.from_numpy(x[:2]),),
        dynamo=True,
        opset_version=18,
        optimize=False,
        input_names=[in_name],
        output_names=["logits"],
        dynamic_shapes=({0: torch.export.Dim("batch")},),
        external_data=False,
    )
    path = os.path.join(a.out, name + ".onnx")
    prog.save(path, external_data=False)
    export_s = time.time() - t0
    np.save(os.path.join(a.out, name + ".x.npy"), x)
    np.save(os.path.join(a.out, name + ".y.npy"), y)
    meta = dict(
        name=name,
        model=a.model,
        size=a.size,
        config=CONFIGS[(a.model, a.size)],
        batch=a.batch,
        batches=a.batches,
        seed=a.seed,
        input=in_name,
        export_s=round(export_s, 2),
        parameters=sum(p.numel() for p in m.parameters()),
        onnx_bytes=os.path.getsize(path),
        torch=torch.__version__,
    )
    json.dump(meta, open(os.path.join(a.out, name + ".json"), "w"), indent=1)
    print(f"exported {path}: {meta['parameters']} parameters, {meta['onnx_bytes']} bytes, "
          f"{export_s:.1f} s; data {x.shape} {x.dtype}")


def load_onnx_weights(module, path):
    """Copies the ONNX initializers named as the module's parameters and
    buffers into it; every parameter must be found (the exporter names
    initializers after them). Returns (loaded, missing_buffers)."""
    import onnx
    import torch
    from onnx import numpy_helper

    inits = {i.name: i for i in onnx.load(path).graph.initializer}
    sd = module.state_dict()
    params = {n for n, _ in module.named_parameters()}
    loaded, missing = 0, []
    with torch.no_grad():
        for k, v in sd.items():
            if k in inits:
                w = torch.from_numpy(numpy_helper.to_array(inits[k]).copy())
                if tuple(w.shape) != tuple(v.shape):
                    raise SystemExit(f"error: initializer {k} is {tuple(w.shape)}, the module's {tuple(v.shape)}")
                v.copy_(w.to(v.dtype))
                loaded += 1
            elif k in params:
                raise SystemExit(f"error: parameter {k} is not an initializer of {path}")
            else:
                missing.append(k)
    return loaded, missing


def gpu_state():
    try:
        return subprocess.run(
            ["nvidia-smi", "--query-gpu=utilization.gpu,memory.used,temperature.gpu,clocks.sm",
             "--format=csv,noheader"], capture_output=True, text=True, timeout=20).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return "no nvidia-smi"


def machine_load():
    return dict(loadavg=[round(v, 2) for v in os.getloadavg()], gpu=gpu_state())


class DmlcSide:
    """bench/train/dml_train_bench --rounds-stdin: one process, one package
    load; each round a line on its stdin (the steps), answered by its epoch
    line (the steps' seconds)."""

    def __init__(self, a, meta, xpath, ypath):
        cmd = [a.train_bench, a.pkg, "--data", f"{xpath},{ypath}", "--device", a.device,
               "--batch-size", str(meta["batch"]), "--lr", repr(a.lr), "--no-shuffle",
               "--rounds-stdin", "--step-losses", str(a.warmup), "--threads", str(a.threads)]
        print("dmlc:", " ".join(cmd), flush=True)
        self.t_start = time.time()
        self.p = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1)
        self.batch = meta["batch"]
        self.max_steps = meta["batches"]
        self.losses = []
        self.lines = []

    def round(self, steps):
        steps = min(steps, self.max_steps)
        self.p.stdin.write(f"{steps}\n")
        self.p.stdin.flush()
        while True:
            line = self.p.stdout.readline()
            if not line:
                rc = self.p.wait()
                raise RuntimeError(f"dml_train_bench ended (exit status {rc}) before its round's epoch line")
            self.lines.append(line)
            e = json.loads(line)
            if e.get("event") == "step":
                self.losses.append(e["loss"])
            elif e.get("event") == "epoch":
                secs = steps * self.batch / e["samples_per_s"]
                return steps, secs, e["loss"]

    def close(self):
        try:
            self.p.stdin.write("0\n")
            self.p.stdin.close()
        except OSError:
            pass
        tail = self.p.stdout.read()
        self.lines.extend(tail.splitlines(True))
        return self.p.wait()


class TorchSide:
    """PyTorch on --device: the module loaded from the ONNX initializers,
    train mode, SGD with momentum; compiled with torch.compile when
    `compiled`."""

    def __init__(self, a, meta, path, x, y, compiled):
        import torch

        self.torch = torch
        self.dev = torch.device(a.device)
        m = build_module(meta["model"], meta["size"], meta["seed"] + 1)  # other init: the load must set it
        self.loaded, self.not_loaded = load_onnx_weights(m, path)
        m = m.to(self.dev).train()
        self.opt = torch.optim.SGD(m.parameters(), lr=a.lr, momentum=a.momentum)
        self.fwd = torch.compile(m) if compiled else m
        self.x = torch.from_numpy(x)
        self.y = torch.from_numpy(y)
        self.batch = meta["batch"]
        self.n_batches = meta["batches"]
        self.next = 0
        self.losses = []
        self.record = a.warmup

    def step(self):
        F = self.torch.nn.functional
        b = self.next % self.n_batches
        self.next += 1
        xb = self.x[b * self.batch:(b + 1) * self.batch].to(self.dev)
        yb = self.y[b * self.batch:(b + 1) * self.batch].to(self.dev)
        loss = F.cross_entropy(self.fwd(xb), yb)
        self.opt.zero_grad(set_to_none=True)
        loss.backward()
        self.opt.step()
        return loss

    def sync(self):
        if self.dev.type == "cuda":
            self.torch.cuda.synchronize(self.dev)

    def round(self, steps):
        self.next = 0  # the batches of dmlc's round: from the first, in order
        self.sync()
        t0 = time.perf_counter()
        last = None
        for _ in range(steps):
            last = self.step()
            if self.record > 0:
                self.losses.append(float(last.item()))
                self.record -= 1
        self.sync()
        return steps, time.perf_counter() - t0, float(last.item())


def cmd_bench(a):
    import torch

    meta = json.load(open(os.path.join(a.dir, a.name + ".json")))
    path = os.path.join(a.dir, a.name + ".onnx")
    xpath, ypath = (os.path.join(a.dir, f"{a.name}.{k}.npy") for k in "xy")
    x, y = np.load(xpath), np.load(ypath)
    if a.device == "cpu":
        torch.set_num_threads(a.threads)
    # fp32 (the default) as dmlc's kernels compute; --tf32 as `dmlc compile
    # --allow-tf32` (TF32 tensor cores for matrix products and convolutions)
    torch.backends.cuda.matmul.allow_tf32 = a.tf32
    torch.backends.cudnn.allow_tf32 = a.tf32
    sides = [s for s in a.sides.split(",") if s]
    for s in sides:
        if s not in ("dmlc", "eager", "compile"):
            raise SystemExit(f"error: --sides takes dmlc, eager and compile, not '{s}'")
    res = dict(name=a.name, model=meta["model"], size=meta["size"], config=meta["config"],
               parameters=meta["parameters"], batch=meta["batch"], device=a.device, lr=a.lr,
               momentum=a.momentum, rounds=a.rounds, round_s=a.round_s, warmup=a.warmup,
               torch=torch.__version__,
               tf32=dict(matmul=torch.backends.cuda.matmul.allow_tf32,
                         cudnn=torch.backends.cudnn.allow_tf32),
               load_before=machine_load(), sides={})
    if a.device == "cuda":
        res["gpu"] = torch.cuda.get_device_name(0)
    print(f"== {a.name}: {meta['parameters']} parameters, batch {meta['batch']}, {a.device}; "
          f"load {res['load_before']}", flush=True)
    objs = {}
    for s in sides:
        t0 = time.time()
        o = None
        try:
            if s == "dmlc":
                o = DmlcSide(a, meta, xpath, ypath)
            else:
                o = TorchSide(a, meta, path, x, y, s == "compile")
            # warm-up: dmlc twice (kernels load and the CUDA graph is
            # captured in the first), the speed from the last
            n, secs, _ = o.round(a.warmup)
            if s == "dmlc":
                n, secs, _ = o.round(a.warmup)
            per = secs / n
            steps = max(3, int(math.ceil(a.round_s / per)))
            if s == "dmlc":
                steps = min(steps, meta["batches"])
            objs[s] = (o, steps)
            res["sides"][s] = dict(warmup_s=round(time.time() - t0, 2), steps_per_round=steps,
                                   first_losses=o.losses[:a.warmup], rounds=[])
            if s != "dmlc":
                res["sides"][s]["onnx_initializers_loaded"] = o.loaded
            print(f"{s}: warm-up {time.time() - t0:.1f} s, {per * 1e3:.2f} ms/step after it, "
                  f"{steps} steps a round; first losses {o.losses[:a.warmup]}", flush=True)
        except Exception as e:  # a side that fails is a cell of the result, never a stop
            res["sides"][s] = dict(error=f"{type(e).__name__}: {e}")
            print(f"{s}: FAILED: {e}", flush=True)
            if isinstance(o, DmlcSide):
                o.p.kill()
                o.p.wait()
    def medians(done):
        for s, d in res["sides"].items():
            if d.get("rounds"):
                sps = statistics.median(r["steps_per_s"] for r in d["rounds"])
                d["steps_per_s"] = sps
                d["samples_per_s"] = sps * meta["batch"]
                d["spread"] = (max(r["steps_per_s"] for r in d["rounds"]) -
                               min(r["steps_per_s"] for r in d["rounds"])) / sps
        res["rounds_done"] = done
        if a.json:  # after every round: a run stopped by its time limit keeps what it measured
            json.dump(res, open(a.json, "w"), indent=1)

    for r in range(a.rounds):
        medians(r)
        for s, (o, steps) in list(objs.items()):
            try:
                n, secs, loss = o.round(steps)
            except Exception as e:
                res["sides"][s]["error"] = f"round {r + 1}: {type(e).__name__}: {e}"
                print(f"{s}: round {r + 1} FAILED: {e}", flush=True)
                del objs[s]
                continue
            res["sides"][s]["rounds"].append(dict(steps=n, seconds=secs, steps_per_s=n / secs, loss=loss))
            print(f"round {r + 1} {s}: {n} steps {secs:.3f} s = {n / secs:.2f} steps/s "
                  f"({n * meta['batch'] / secs:.1f} samples/s), loss {loss:.5g}", flush=True)
    for s, (o, _) in objs.items():
        if s == "dmlc":
            rc = o.close()
            if rc:
                res["sides"][s]["error"] = f"dml_train_bench exit status {rc}"
    medians(a.rounds)
    d0 = res["sides"].get("dmlc", {}).get("first_losses") or []
    for s in ("eager", "compile"):
        ds = res["sides"].get(s, {}).get("first_losses") or []
        if d0 and ds:
            res["sides"][s]["first_loss_rel_diff_to_dmlc"] = abs(ds[0] - d0[0]) / max(1.0, abs(ds[0]))
    res["load_after"] = machine_load()
    print(f"load after: {res['load_after']}", flush=True)
    print(table([res]), flush=True)
    if a.json:
        json.dump(res, open(a.json, "w"), indent=1)
    bad = [s for s, d in res["sides"].items() if "error" in d]
    if a.max_first_loss_diff is not None:
        for s in ("eager", "compile"):
            dd = res["sides"].get(s, {}).get("first_loss_rel_diff_to_dmlc")
            if dd is not None and dd > a.max_first_loss_diff:
                print(f"error: {s}'s first loss differs from dmlc's by {dd:.3g} relative "
                      f"(> {a.max_first_loss_diff})", flush=True)
                bad.append(s)
    return 1 if bad else 0


def fmt(v, nd=1):
    return "—" if v is None else f"{v:.{nd}f}"


def table(results):
    rows = ["| model | params | device | side | steps/s | samples/s | × dmlc | rounds | spread | warm-up s | first losses |",
            "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in results:
        base = r["sides"].get("dmlc", {}).get("steps_per_s")
        for s in ("dmlc", "eager", "compile"):
            d = r["sides"].get(s)
            if d is None:
                continue
            if "error" in d and not d.get("steps_per_s"):
                rows.append(f"| {r['name']} | {r['parameters'] / 1e6:.1f}M | {r['device']} | {s} | "
                            f"failed: {d['error'][:120]} | | | | | | |")
                continue
            sps = d.get("steps_per_s")
            ratio = sps / base if sps and base else None
            fl = ", ".join(f"{v:.6g}" for v in d.get("first_losses", [])[:3])
            rows.append(f"| {r['name']} | {r['parameters'] / 1e6:.1f}M | {r['device']} | {s} | {fmt(sps, 2)} | "
                        f"{fmt(d.get('samples_per_s'))} | {fmt(ratio, 2)} | {len(d.get('rounds', []))} | "
                        f"{fmt(100 * d['spread'] if 'spread' in d else None, 0)}% | "
                        f"{fmt(d.get('warmup_s'))} | {fl} |")
    return "\n".join(rows)


def cmd_table(a):
    print(table([json.load(open(p)) for p in a.results]))


def cmd_summary(a):
    """Merges train_models.sh's per-model files of --dir (NAME.json from
    export, NAME.export.status, NAME.compile.status, NAME.bench.json) into
    one JSON and a markdown table."""
    def load(path):
        try:
            return json.load(open(path))
        except (OSError, ValueError):
            return None

    out = dict(precision=a.precision, target=a.target, machine=machine_load(), models={})
    try:
        out["gpu_name"] = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"],
                                         capture_output=True, text=True, timeout=20).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        out["gpu_name"] = None
    results, lines = [], []
    for n in a.names:
        d = dict(export=load(os.path.join(a.dir, n + ".export.status")),
                 meta=load(os.path.join(a.dir, n + ".json")),
                 compile=load(os.path.join(a.dir, n + ".compile.status")),
                 bench=load(os.path.join(a.dir, n + ".bench.json")))
        out["models"][n] = d
        ex, co = d["export"] or {}, d["compile"] or {}
        why = ("export failed" if ex.get("rc") else "compile failed" if co.get("rc")
               else "not benchmarked" if not d["bench"] else None)
        lines.append(f"- {n}: export {ex.get('seconds', '—')} s (rc {ex.get('rc', '—')}), "
                     f"dmlc compile --train {co.get('seconds', '—')} s (rc {co.get('rc', '—')}, "
                     f"{co.get('jobs', '—')} clang/ptxas jobs)" + (f": {why} (log: train_models.log)" if why else ""))
        if d["bench"]:
            results.append(d["bench"])
    json.dump(out, open(a.json, "w"), indent=1)
    md = [f"Precision {a.precision}, dmlc --target {a.target}; GPU: {out['gpu_name']}; batch 32, cross-entropy, "
          "SGD momentum 0.9 (bench/gpu/train_models.sh; median of the rounds; × dmlc: steps/s over dmlc's)",
          "", table(results) if results else "(no model was benchmarked)", ""] + lines
    open(a.md, "w").write("\n".join(md) + "\n")
    return 0 if results and len(results) == len(a.names) else 1


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    e = sub.add_parser("export")
    e.add_argument("--model", required=True, choices=["resnet18", "bert"])
    e.add_argument("--size", required=True, choices=["full", "small", "tiny"])
    e.add_argument("--out", required=True)
    e.add_argument("--batch", type=int, default=32)
    e.add_argument("--batches", type=int, default=16)
    e.add_argument("--seed", type=int, default=0)
    b = sub.add_parser("bench")
    b.add_argument("--name", required=True)
    b.add_argument("--dir", required=True)
    b.add_argument("--pkg", required=True)
    b.add_argument("--train-bench", required=True)
    b.add_argument("--device", default="cuda")
    b.add_argument("--sides", default="dmlc,eager,compile")
    b.add_argument("--rounds", type=int, default=5)
    b.add_argument("--round-s", type=float, default=2.0)
    b.add_argument("--warmup", type=int, default=3)
    b.add_argument("--lr", type=float, default=0.01)
    b.add_argument("--momentum", type=float, default=0.9)
    b.add_argument("--threads", type=int, default=4)
    b.add_argument("--tf32", action="store_true",
                   help="PyTorch with TF32 matrix products and convolutions (dmlc: compile --allow-tf32)")
    b.add_argument("--json")
    b.add_argument("--max-first-loss-diff", type=float, default=None,
                   help="fail when a PyTorch side's first loss differs from dmlc's by more (relative)")
    t = sub.add_parser("table")
    t.add_argument("results", nargs="+")
    m = sub.add_parser("summary")
    m.add_argument("--dir", required=True)
    m.add_argument("--names", nargs="+", required=True)
    m.add_argument("--precision", default="fp32")
    m.add_argument("--target", default="cpu,cuda")
    m.add_argument("--json", required=True)
    m.add_argument("--md", required=True)
    a = ap.parse_args()
    if a.cmd == "export":
        cmd_export(a)
    elif a.cmd == "bench":
        sys.exit(cmd_bench(a))
    elif a.cmd == "summary":
        sys.exit(cmd_summary(a))
    else:
        cmd_table(a)


if __name__ == "__main__":
    main()
