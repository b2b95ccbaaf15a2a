#!/usr/bin/env python3
"""Copies the zoo's CI subset into tests/zoo: for each named (model,
exporter) of the export cache, its model, inputs and ONNX Runtime's outputs
into tests/zoo/<model>.<exporter>/ with a `spec` (the dmlc compile flags
run.py uses, the inputs, the output files), and the list into
tests/zoo/models.txt. CTest's zoo_ci runs them (tests/zoo/test_zoo_ci.sh).

Usage: python3 scripts/zoo/ci_subset.py [--models DIR] KEY...
       (KEY as model.exporter, e.g. bert_tiny.dynamo)
Then python3 tests/zoo/gen_sets.py tests/zoo/<text model>... (with
onnxruntime) adds the input sets of other batch and sequence sizes that
test_zoo_ci.sh also runs (this script replaces the folders, sets included).
"""
import argparse
import json
import os
import shutil
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import run  # noqa: E402  (bounds() and out_file(): one definition)

MAX_BYTES = 8 << 20  # the repository's growth limit for the subset


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models", default=None)
    ap.add_argument("keys", nargs="+")
    a = ap.parse_args()
    mdir = a.models or run.default_models()
    man = json.load(open(os.path.join(mdir, "manifest.json")))
    dst = os.path.join(run.ROOT, "tests", "zoo")
    total = 0
    for key in a.keys:
        e = man["entries"][key]
        d = os.path.join(dst, key)
        shutil.rmtree(d, ignore_errors=True)
        os.makedirs(d)
        shutil.copy(os.path.join(mdir, e["file"]), os.path.join(d, "model.onnx"))
        b = run.bounds(e)
        spec = ["compile " + " ".join(["--dim-bound", ",".join(f"{k}={v}" for k, v in sorted(b.items())), "--dim-bound", "64"] if b else ["--dim-bound", "64"])]
        for i, gi in enumerate(e["graph_inputs"]):
            fn = f"in.{i}.npy"
            shutil.copy(os.path.join(mdir, e["inputs"][gi["name"]]["file"]), os.path.join(d, fn))
            spec.append(f"input {gi['name']} {fn}")
        for i, r in enumerate(e["refs"]):
            fn = f"ref.{i}.npy"
            shutil.copy(os.path.join(mdir, r["file"]), os.path.join(d, fn))
            spec.append(f"ref {run.out_file(r['name'])} {fn}")
        with open(os.path.join(d, "spec"), "w") as f:
            f.write("\n".join(spec) + "\n")
        total += sum(os.path.getsize(os.path.join(d, x)) for x in os.listdir(d))
    if total > MAX_BYTES:
        sys.exit(f"ci_subset: {total} bytes > {MAX_BYTES}: pick smaller models")
    with open(os.path.join(dst, "models.txt"), "w") as f:
        f.write("# written by scripts/zoo/ci_subset.py; folders run by test_zoo_ci.sh\n")
        f.write("\n".join(a.keys) + "\n")
    print(f"ci_subset: {len(a.keys)} models, {total} bytes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
