#!/usr/bin/env python3
"""scripts/zoo/run.py end to end on one model of the CI subset, on the CPU
and on a GPU target (docs/zoo.md's check): the folder's model, inputs and
ONNX Runtime's outputs are laid out as export.py's cache lays them out (an
<model>.<exporter>.entry.json beside the files), run.py compiles and runs
it with the given dmlc into a scratch JSON, and every (model, target) must
pass; on the GPU target the same package's CPU run must have been compared
too (`vs_cpu`, `cpu_vs_ort`). It failed before run.py deleted a GPU
package only after that CPU run ("the CPU run of the same package:
pkg.load: cannot open ...": every vulkan row of the zoo).

usage: check_run_py.py DMLC FOLDER WORK [TARGET]   (TARGET vulkan by default)
Exit 77 (skipped) without a device of TARGET, saying so.
"""
import json
import os
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    dmlc, folder, work = sys.argv[1:4]
    target = sys.argv[4] if len(sys.argv) > 4 else "vulkan"
    devs = json.loads(subprocess.run([dmlc, "devices", "--json"], capture_output=True, text=True).stdout)
    if not any(d["backend"] == target for d in devs["devices"]):
        print(f"SKIP: no {target} device: {devs.get(target + '_error')}")
        return 77
    shutil.rmtree(work, ignore_errors=True)
    mdir = os.path.join(work, "models")
    os.makedirs(mdir)
    name = os.path.basename(os.path.normpath(folder))
    model, exporter = name.rsplit(".", 1)
    import numpy as np

    e = {"model": model, "exporter": exporter, "status": "ok", "file": name + ".onnx",
         "inputs": {}, "graph_inputs": [], "refs": []}
    shutil.copy(os.path.join(folder, "model.onnx"), os.path.join(mdir, e["file"]))
    for line in open(os.path.join(folder, "spec")):
        w = line.split()
        if w and w[0] in ("input", "ref"):
            dst = f"{name}.{w[2]}"
            shutil.copy(os.path.join(folder, w[2]), os.path.join(mdir, dst))
            a = np.load(os.path.join(mdir, dst))
            if w[0] == "input":
                # no dim names: run.py bounds every symbolic dim with --dim-bound 64
                e["inputs"][w[1]] = {"file": dst, "shape": list(a.shape), "dtype": str(a.dtype)}
                e["graph_inputs"].append({"name": w[1], "shape": list(a.shape)})
            else:  # the spec names the output's file; its name is the file's stem
                e["refs"].append({"name": w[1][: -len(".npy")], "file": dst, "shape": list(a.shape)})
    with open(os.path.join(mdir, name + ".entry.json"), "w") as f:
        json.dump(e, f)
    out = os.path.join(work, "zoo.json")
    cmd = [sys.executable, os.path.join(ROOT, "scripts", "zoo", "run.py"), "--models", mdir,
           "--dmlc", dmlc, "--targets", "cpu," + target, "--json", out,
           "--doc", os.path.join(work, "zoo.md"), "--timeout", "600"]
    print(" ".join(cmd), flush=True)
    p = subprocess.run(cmd)
    if p.returncode != 0:
        print(f"FAIL: run.py exited {p.returncode}")
        return 1
    res = json.load(open(out))["entries"][name]["targets"]
    bad = 0
    for t in ("cpu", target):
        r = res.get(t, {})
        print(f"{name} on {t}: {r.get('result')} {r.get('error', '')} "
              f"(scaled error {r.get('max_scaled_error')}, vs cpu {r.get('vs_cpu')})")
        if r.get("result") != "pass":
            bad = 1
    if "vs_cpu" not in res.get(target, {}) or "cpu_vs_ort" not in res.get(target, {}):
        print(f"FAIL: the {target} row has no comparison with the same package's CPU run")
        bad = 1
    return bad


if __name__ == "__main__":
    sys.exit(main())
