#!/usr/bin/env python3
"""scripts/zoo/run.py's bookkeeping of cells, without dmlc (issue 23): a
model over --vulkan-max-mb gets a "skipped" vulkan cell saying why instead
of keeping the previous docs/zoo.json's vulkan result as if it were this
run's; --resume keeps results and runs skipped cells again; --merge does not
let a skipped cell replace a result; docs/zoo.md shows skipped cells as such
and neither counts them as checked nor lists them as failures.

run.py's check() (which runs dmlc) is replaced by a stub that records its
calls and returns a pass. Exit 0 when every expectation holds, 1 otherwise.

usage: test_run_py_plan.py
"""
import argparse
import json
import os
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "scripts", "zoo"))
import run  # noqa: E402

FAILS = []


def expect(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        FAILS.append(what)


def fake_pass(t, err):
    return {"target": t, "result": "pass", "max_scaled_error": err, "ref_max": 1.0, "compile_s": 1, "run_s": 1}


def main_with(argv, calls):
    """run.main() with argv, check() stubbed: each call appended to calls."""

    def check(entry, target, a, mdir, work):
        calls.append((entry["model"], target))
        return fake_pass(target, 1e-7)

    saved_check, saved_argv = run.check, sys.argv
    run.check, sys.argv = check, ["run.py"] + argv
    try:
        return run.main()
    finally:
        run.check, sys.argv = saved_check, saved_argv


def test_plan():
    a = argparse.Namespace(resume=False, vulkan_max_mb=30.0)
    big, small = {"bytes": 45e6}, {"bytes": 3e6}
    old = fake_pass("vulkan", 2e-6)
    r = run.plan(big, "vulkan", old, a)
    expect(isinstance(r, dict) and r["result"] == "skipped" and r["reason"] == "45.0 MB > --vulkan-max-mb 30",
           f"plan: 45 MB on vulkan over 30 MB, with an earlier result -> skipped cell ({r})")
    expect(run.plan(big, "cpu", old, a) == "run", "plan: 45 MB on cpu -> run")
    expect(run.plan(small, "vulkan", old, a) == "run", "plan: 3 MB on vulkan -> run")
    a.resume = True
    expect(run.plan(big, "vulkan", old, a) == "keep", "plan --resume: an earlier result -> keep")
    skipped = run.plan(big, "vulkan", None, argparse.Namespace(resume=False, vulkan_max_mb=30.0))
    a.vulkan_max_mb = 1000.0
    expect(run.plan(big, "vulkan", skipped, a) == "run", "plan --resume: a skipped cell, now within the limit -> run")
    a.vulkan_max_mb = 30.0
    expect(isinstance(run.plan(big, "vulkan", skipped, a), dict), "plan --resume: a skipped cell, still over -> skipped")


def test_main(work):
    mdir = os.path.join(work, "models")
    os.makedirs(mdir)
    for model, mb in (("bigm", 45), ("smallm", 3)):
        e = {"model": model, "exporter": "dynamo", "status": "ok", "file": model + ".onnx", "bytes": mb * 1e6,
             "inputs": {}, "graph_inputs": [], "refs": []}
        with open(os.path.join(mdir, model + ".dynamo.entry.json"), "w") as f:
            json.dump(e, f)
    js, doc = os.path.join(work, "zoo.json"), os.path.join(work, "zoo.md")
    stale = fake_pass("vulkan", 5e-6)
    stale["stale"] = True
    with open(js, "w") as f:
        json.dump({"entries": {"bigm.dynamo": {"model": "bigm", "exporter": "dynamo", "status": "ok",
                                               "targets": {"vulkan": stale, "cpu": fake_pass("cpu", 3e-7)}}}}, f)
    base = ["--models", mdir, "--dmlc", os.path.join(work, "no-dmlc"), "--json", js, "--doc", doc]

    calls = []
    rc = main_with(base + ["--targets", "cpu,vulkan", "--vulkan-max-mb", "30"], calls)
    ents = json.load(open(js))["entries"]
    bv = ents["bigm.dynamo"]["targets"].get("vulkan", {})
    expect(rc == 0, "cpu,vulkan: exit status 0 (a skipped cell is no failure)")
    expect(sorted(calls) == [("bigm", "cpu"), ("smallm", "cpu"), ("smallm", "vulkan")],
           f"cpu,vulkan --vulkan-max-mb 30: ran cpu on both, vulkan on the small one only ({calls})")
    expect(bv.get("result") == "skipped" and not bv.get("stale"),
           f"cpu,vulkan: the 45 MB model's earlier vulkan pass replaced by a skipped cell ({bv})")
    md = open(doc).read()
    expect("skipped (45.0 MB > --vulkan-max-mb 30)" in md, "zoo.md: the cell says skipped and why")
    expect("| vulkan | 1 | 1 | 0 | 0 | 0 | 0 | 1 |" in md, "zoo.md: vulkan 1 checked, 1 pass, 1 skipped")
    expect("**bigm.dynamo** on vulkan" not in md, "zoo.md: a skipped cell is not listed as a failure")

    calls = []
    main_with(base + ["--targets", "vulkan", "--vulkan-max-mb", "1000", "--resume"], calls)
    bv = json.load(open(js))["entries"]["bigm.dynamo"]["targets"].get("vulkan", {})
    expect(calls == [("bigm", "vulkan")], f"vulkan --resume: only the skipped cell ran again ({calls})")
    expect(bv.get("result") == "pass", "vulkan --resume: the 45 MB model's vulkan cell is now this run's pass")

    calls = []
    main_with(base + ["--targets", "vulkan", "--vulkan-max-mb", "30", "--resume"], calls)
    bv = json.load(open(js))["entries"]["bigm.dynamo"]["targets"].get("vulkan", {})
    expect(calls == [] and bv.get("result") == "pass", "vulkan --resume under a lower limit: results kept")

    # --merge: a skipped cell of FILE does not replace a result of --json, fills a missing one
    other = os.path.join(work, "other.json")
    sk = {"target": "vulkan", "result": "skipped", "reason": "45.0 MB > --vulkan-max-mb 1"}
    with open(other, "w") as f:
        json.dump({"entries": {"bigm.dynamo": {"targets": {"vulkan": sk, "cuda": fake_pass("cuda", 4e-7)}},
                               "smallm.dynamo": {"targets": {"cuda": dict(sk, target="cuda")}}}}, f)
    main_with(["--merge", other, "--json", js, "--doc", doc], [])
    ents = json.load(open(js))["entries"]
    expect(ents["bigm.dynamo"]["targets"]["vulkan"]["result"] == "pass", "--merge: a skipped cell keeps the result")
    expect(ents["bigm.dynamo"]["targets"]["cuda"]["result"] == "pass", "--merge: a result is copied")
    expect(ents["smallm.dynamo"]["targets"]["cuda"]["result"] == "skipped", "--merge: a skipped cell fills a gap")


def main():
    test_plan()
    with tempfile.TemporaryDirectory(prefix="dmlc-zoo-plan-") as work:
        test_main(work)
    print(f"{len(FAILS)} failed")
    return 1 if FAILS else 0


if __name__ == "__main__":
    sys.exit(main())
