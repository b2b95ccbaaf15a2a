#!/usr/bin/env bash
# The machine-readable and visual output of `dmlc` (issue 18 item 5), each
# parsed as a program would: --json of inspect, summary, devices, train and
# eval (one JSON object on stdout, nothing else there); bench --trace (a
# Chrome trace whose kernel spans carry the graph nodes' names); train
# --plot (an SVG that parses, one polyline per series); strip (a smaller
# inference package giving the same outputs bit for bit, never over its
# input); --threads on run, bench, serve; the compile progress line (only
# on a terminal or with --progress).
#   test_cli_out.sh DMLC SHARED_DIR WORKDIR
set -u
DMLC=$1 SHARED=$2 WORK=$3
rm -rf "$WORK" && mkdir -p "$WORK"
. "$(dirname "$0")/../sh_test_util.sh"
PY="env PYTHONUTF8=1 python3" # JSON text is UTF-8 whatever the locale

# py FILE CODE: runs CODE with the JSON object in FILE as d
py() { $PY - "$@"; }

# ---- inspect / summary / devices --json ----
PKG=$WORK/lenet5.dmlpkg
"$DMLC" compile "$SHARED/models/lenet5.onnx" -o "$PKG" --batch-bound 8 >/dev/null
check "compile lenet5" test -f "$PKG"
"$DMLC" inspect "$PKG" --json >"$WORK/inspect.json" 2>"$WORK/inspect.err"
check "inspect --json parses, fields" py "$WORK/inspect.json" <<'EOF'
import json, os, sys
d = json.load(open(sys.argv[1]))
assert d["format_version"] >= 1 and d["file_size"] == os.path.getsize(d["package"]), d
assert [s["tag"] for s in d["sections"]][:3] == ["meta", "graph", "weights"], d["sections"]
assert d["symbols"] == [{"name": "batch", "bound": 8}], d["symbols"]
assert d["functions"] == ["forward"] and d["targets"] == ["cpu"], d
i = d["inputs"][0]
assert i["dtype"] == "f32" and i["shape"][0] == "batch" and i["max_shape"][0] == 8, i
assert d["trainable_params"] == 61706 and d["meta"]["batch-bound"] == "8", d
assert d["arena_bytes"] > 0 and d["nodes"] > 0
EOF
"$DMLC" summary "$PKG" --json >"$WORK/summary.json"
"$DMLC" summary "$SHARED/models/lenet5.onnx" --json >"$WORK/summary_onnx.json"
check "summary --json parses, fields" py "$WORK/summary.json" "$WORK/summary_onnx.json" "$WORK/inspect.json" <<'EOF'
import json, sys
p, o, i = (json.load(open(f)) for f in sys.argv[1:4])
assert p["total_params"] == 61706 == o["trainable_params"], (p, o)
assert len(p["layers"]) == i["nodes"], (len(p["layers"]), i["nodes"])
assert p["arena_bytes"] == i["arena_bytes"] and o["arena_bytes"] is None
assert sum(l["params"] for l in p["layers"]) == p["total_params"]
assert any(l["op"] == "Conv" and l["output_shape"].startswith("[batch,") for l in p["layers"])
EOF
"$DMLC" devices --json >"$WORK/devices.json"
check "devices --json parses" py "$WORK/devices.json" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
assert d["devices"][0]["id"] == "cpu" and d["devices"][0]["default"] is True
for x in d["devices"][1:]:
    assert x["backend"] in ("vulkan", "cuda") and x["id"].startswith(x["backend"] + ":"), x
assert (d["vulkan_error"] is None) == any(x["backend"] == "vulkan" for x in d["devices"])
EOF

# names JSON must escape (quote, backslash, newline, 0x01) or replace (an
# invalid UTF-8 byte): fixtures/gen_json_names.py
JN=$WORK/json_names.dmlpkg
"$DMLC" compile "$(dirname "$0")/fixtures/json_names.onnx" -o "$JN" >/dev/null
"$DMLC" inspect --json "$JN" >"$WORK/jn_inspect.json"
"$DMLC" summary --json "$JN" >"$WORK/jn_summary.json"
"$DMLC" bench "$JN" --iterations 1 --warmup 0 --trace "$WORK/jn_trace.json" >/dev/null 2>&1
check "--json and --trace escape odd names" py "$WORK/jn_inspect.json" "$WORK/jn_summary.json" "$WORK/jn_trace.json" <<'EOF'
import json, sys
i, s, t = (json.load(open(f)) for f in sys.argv[1:4])
assert i["outputs"][0]["name"] == 'y"\\\x01\ufffd', i["outputs"]
relu = 'r"\\\n\x01\ufffd\u00e9'
assert [l["name"] for l in s["layers"]] == [relu, "neg"], s["layers"]
# (the CPU runs Relu -> Neg as one elementwise chain, named "relu+neg")
names = [e["name"] for e in t["traceEvents"] if e.get("cat") == "kernel"]
assert any(n == relu or n.startswith(relu + "+") for n in names), names
EOF

# ---- bench --trace ----
# check_trace TRACE SUMMARY ITERATIONS GPU: host steps per iteration, kernel
# spans named after the graph's nodes (summary --json's layer names)
check_trace() {
  py "$@" <<'EOF'
import json, sys
t, s = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
iters, gpu = int(sys.argv[3]), sys.argv[4] == "1"
names = {l["name"] for l in s["layers"]}
ev = t["traceEvents"]
x = [e for e in ev if e["ph"] == "X"]
assert all(e["dur"] >= 0 and e["ts"] >= 0 for e in x)
for step in ("set inputs", "run", "get outputs"):
    n = [e for e in x if e["name"] == step and e["pid"] == 1]
    assert len(n) == iters, (step, len(n))
k = [e for e in x if e["cat"] == "kernel"]
assert k and all(e["pid"] == 2 for e in k)
per_iter = len(k) // iters
assert per_iter * iters == len(k), len(k)
for e in k:
    for n in e["name"].split("+"):
        assert n in names, (n, names)
    assert ("kernel" in e["args"]) == gpu, e
runs = [e for e in x if e["name"] == "run"]
for e in k:  # each kernel inside its iteration's run span (the cpu's measured)
    r = runs[e["args"]["iteration"]]
    assert gpu or r["ts"] <= e["ts"] and e["ts"] + e["dur"] <= r["ts"] + r["dur"] + 1e-3, (e, r)
meta = {(e["pid"], e["name"]) for e in ev if e["ph"] == "M"}
assert (1, "process_name") in meta and (2, "process_name") in meta
EOF
}
"$DMLC" bench "$PKG" --iterations 3 --warmup 1 --batch 4 --threads 2 --trace "$WORK/trace.json" \
  >"$WORK/bench.out" 2>"$WORK/bench.err"
check "bench --trace (cpu) wrote it" has "wrote $WORK/trace.json" "$WORK/bench.err"
check "bench --trace (cpu): spans named after the nodes" check_trace "$WORK/trace.json" "$WORK/summary.json" 3 0
"$DMLC" bench "$PKG" --iterations 2 --warmup 0 --json --trace "$WORK/trace2.json" >"$WORK/bench.json" 2>/dev/null
check "bench --json stays one JSON object with --trace" py "$WORK/bench.json" <<'EOF'
import json, sys
assert json.load(open(sys.argv[1]))["iterations"] == 2
EOF
out=$("$DMLC" bench "$PKG" --trace "$PKG" 2>&1)
check "bench --trace over the package refused" test $? -eq 2
check "  saying so" grep -q "would overwrite the package" <<<"$out"
if $PY -c 'import json,sys; sys.exit(0 if any(x["backend"]=="vulkan" for x in json.load(open(sys.argv[1]))["devices"]) else 1)' "$WORK/devices.json"; then
  "$DMLC" compile "$SHARED/models/lenet5.onnx" -o "$WORK/lenet5_vk.dmlpkg" --batch-bound 8 --target vulkan >/dev/null
  "$DMLC" bench "$WORK/lenet5_vk.dmlpkg" --device vulkan --iterations 2 --warmup 1 \
    --trace "$WORK/trace_vk.json" >/dev/null 2>&1
  check "bench --trace (vulkan): device-time spans named after the nodes" \
    check_trace "$WORK/trace_vk.json" "$WORK/summary.json" 2 1
else
  echo "note: no Vulkan device: the Vulkan trace is not checked"
fi

# ---- train --json --plot, eval --json ----
$PY - "$WORK/d.csv" <<'EOF'
import random, sys
r = random.Random(1)
with open(sys.argv[1], "w") as f:
    for i in range(160):
        lab = i % 4
        row = [r.random() * 0.3 + (0.7 if k // 196 == lab else 0) for k in range(784)]
        f.write(",".join("%.3f" % v for v in row) + ",%d\n" % lab)
EOF
UNTRAINED=$SHARED/models/fashion_mlp_untrained.onnx
"$DMLC" train "$UNTRAINED" --data "$WORK/d.csv" --epochs 3 --batch-size 32 -o "$WORK/tr.dmlpkg" \
  --plot "$WORK/tr.svg" --json >"$WORK/train.json" 2>"$WORK/train.err"
check "train --json: exit 0" test $? -eq 0
check "train --json: progress on stderr" has "epoch 3/3" "$WORK/train.err"
check "train --json: one object, the history per epoch" py "$WORK/train.json" <<'EOF'
import json, math, sys
d = json.load(open(sys.argv[1]))
h = d["history"]
assert [e["epoch"] for e in h] == [1, 2, 3], h
for e in h:
    for k in ("loss", "accuracy", "val_loss", "val_accuracy", "lr", "seconds"):
        assert isinstance(e[k], float) or isinstance(e[k], int), (k, e)
assert d["final"] == h[-1] and d["validation"] == "split" and d["stopped_early"] is False
assert h[-1]["loss"] < h[0]["loss"], h
assert d["loss"] == "cross_entropy" and d["peak_memory"]["planned_bytes"] > 0
EOF
# check_svg SVG SERIES...: parses as XML, exactly these polylines, one point per epoch
check_svg() {
  py "$@" <<'EOF'
import sys, xml.etree.ElementTree as ET
ns = "{http://www.w3.org/2000/svg}"
root = ET.parse(sys.argv[1]).getroot()
want, epochs = sys.argv[3:], int(sys.argv[2])
lines = list(root.iter(ns + "polyline"))
assert [p.get("data-series") for p in lines] == want, [p.get("data-series") for p in lines]
for p in lines:
    pts = p.get("points").split()
    assert len(pts) == epochs and all(len(q.split(",")) == 2 for q in pts), pts
texts = [t.text for t in root.iter(ns + "text")]
assert texts.count("epoch") == 2 and "loss" in texts and "accuracy" in texts, texts
assert sum(1 for t in root.iter(ns + "text") if t.get("class") == "ytick") >= 4
assert sum(1 for t in root.iter(ns + "text") if t.get("class") == "xtick") >= 2
EOF
}
check "train --plot: an SVG with the four series" check_svg "$WORK/tr.svg" 3 loss val_loss accuracy val_accuracy
"$DMLC" train "$UNTRAINED" --data "$WORK/d.csv" --epochs 2 --batch-size 32 --validate-on none \
  -o "$WORK/tr_nv.dmlpkg" --plot "$WORK/tr_nv.svg" --json --quiet >"$WORK/train_nv.json" 2>/dev/null
check "train --plot without validation: two series" check_svg "$WORK/tr_nv.svg" 2 loss accuracy
check "train --json without validation: val_ null" py "$WORK/train_nv.json" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
assert d["validation"] == "" and all(e["val_loss"] is None for e in d["history"]), d
EOF
# A model of two inputs and two outputs, a loss per output (issue 22):
# the losses and weights, each output's losses and accuracy, and the table
# metrics named OUTPUT_METRIC as in the CSV.
TWO_HEAD=$(cd "$(dirname "$0")/../train" && pwd)/two_head.onnx
py "$WORK" <<'EOF'
import random, struct, sys
w = sys.argv[1]; r = random.Random(0)
def save(name, descr, fmt, rows, cols, vals):  # a .npy file without numpy
    shape = "(%d,)" % rows if cols is None else "(%d, %d)" % (rows, cols)
    h = "{'descr': '%s', 'fortran_order': False, 'shape': %s, }" % (descr, shape)
    h += " " * (63 - (10 + len(h)) % 64) + "\n"
    with open(w + "/" + name, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(h)) + h.encode())
        f.write(struct.pack("<%d%s" % (len(vals), fmt), *vals))
a = [[r.gauss(0, 1) for _ in range(4)] for _ in range(120)]
b = [[r.gauss(0, 1) for _ in range(3)] for _ in range(120)]
save("ta.npy", "<f4", "f", 120, 4, [v for row in a for v in row])
save("tb.npy", "<f4", "f", 120, 3, [v for row in b for v in row])
save("tc.npy", "<i8", "q", 120, None, [(x[0] > 0) + (y[0] > 0) for x, y in zip(a, b)])
save("tr.npy", "<f4", "f", 120, 1, [x[0] + y[0] for x, y in zip(a, b)])
EOF
"$DMLC" train "$TWO_HEAD" --data "a=$WORK/ta.npy,b=$WORK/tb.npy,cls=$WORK/tc.npy,reg=$WORK/tr.npy" \
  --loss cls=cross_entropy,reg=mse:0.5 --metrics cls=accuracy,f1,reg=mae --epochs 2 \
  -o "$WORK/th.dmlpkg" --json --quiet >"$WORK/train_th.json" 2>/dev/null
check "train --json, two outputs: losses, outputs, OUTPUT_METRIC" py "$WORK/train_th.json" <<'EOF'
import json, math, sys
d = json.load(open(sys.argv[1]))
assert d["losses"] == {"cls": {"loss": "cross_entropy", "weight": 1}, "reg": {"loss": "mse", "weight": 0.5}}, d["losses"]
assert d["loss"] is None, d["loss"]  # a loss per output: in "losses" only
for e in d["history"]:
    o = e["outputs"]
    assert set(o) == {"cls", "reg"} and o["reg"]["accuracy"] is None, o
    assert abs(e["loss"] - (o["cls"]["loss"] + 0.5 * o["reg"]["loss"])) <= 1e-5 * max(1, e["loss"]), e
    assert set(e["metrics"]) == {"cls_f1", "reg_mae"}, e["metrics"]  # accuracy: in outputs
    assert all(math.isfinite(v) for v in e["metrics"].values()), e["metrics"]
EOF
out=$("$DMLC" train "$UNTRAINED" --data "$WORK/d.csv" -o "$WORK/x.dmlpkg" --plot "$WORK/x.png" 2>&1)
check "train --plot FILE.png refused" test $? -eq 2
check "  saying only SVG" grep -q "only SVG" <<<"$out"
out=$("$DMLC" train "$UNTRAINED" --data "$WORK/d.csv" -o "$WORK/x.dmlpkg" --plot "$WORK/x.dmlpkg.svg" \
  --history "$WORK/x.dmlpkg.svg" 2>&1)
check "train --plot over another output refused" test $? -eq 2
check "  saying so" grep -q "is another input or output of this run" <<<"$out"
out=$("$DMLC" train "$UNTRAINED" --data "$WORK/nothing.csv" -o "$WORK/x.dmlpkg" --json 2>"$WORK/train_bad.err")
check "train --json failing: exit 1, nothing on stdout" test $? -eq 1 -a -z "$out"
check "  the error on stderr" grep -q "^error:" "$WORK/train_bad.err"
"$DMLC" eval "$WORK/tr.dmlpkg" --data "$WORK/d.csv" --json >"$WORK/eval.json" 2>"$WORK/eval.err"
check "eval --json (eval_step)" py "$WORK/eval.json" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
assert d["function"] == "eval_step" and d["rows"] == 160 and d["loss"] >= 0, d
assert 0 <= d["accuracy"] <= 1 and d["rows_not_run"] == 0
EOF

# ---- strip ----
cp "$WORK/tr.dmlpkg" "$WORK/tr_copy.dmlpkg"
out=$("$DMLC" strip "$WORK/tr.dmlpkg" -o "$WORK/tr.dmlpkg" 2>&1)
check "strip -o IN refused" test $? -eq 2
check "  saying so" grep -q "is the input package" <<<"$out"
check "  IN untouched" cmp -s "$WORK/tr.dmlpkg" "$WORK/tr_copy.dmlpkg"
check "strip" "$DMLC" strip "$WORK/tr.dmlpkg" -o "$WORK/st.dmlpkg"
check "  IN untouched" cmp -s "$WORK/tr.dmlpkg" "$WORK/tr_copy.dmlpkg"
"$DMLC" inspect --json "$WORK/st.dmlpkg" >"$WORK/st.json"
"$DMLC" inspect --json "$WORK/tr.dmlpkg" >"$WORK/tr.json"
check "strip: forward only, smaller, same parameters" py "$WORK/st.json" "$WORK/tr.json" <<'EOF'
import json, sys
s, t = (json.load(open(f)) for f in sys.argv[1:3])
assert t["functions"] == ["forward", "train_step", "eval_step"] or len(t["functions"]) > 1, t
assert s["functions"] == ["forward"], s["functions"]
assert s["file_size"] * 2 < t["file_size"], (s["file_size"], t["file_size"])
assert s["trainable_params"] == 235146 and s["meta"]["stripped-from"].endswith("tr.dmlpkg")
assert s["inputs"] == t["inputs"] and s["outputs"] == t["outputs"]
EOF
out=$("$DMLC" strip "$WORK/d.csv" -o "$WORK/x.dmlpkg" 2>&1)
check "strip of a file that is no package fails" test $? -eq 1
check "  saying why" grep -q "dmlc strip $WORK/d.csv" <<<"$out"
check "  writing nothing" test ! -e "$WORK/x.dmlpkg"
# eval of a stripped two-input package: says what eval of an inference
# package takes and where NAME=FILE.npy data goes (the training package)
check "strip two_head" "$DMLC" strip "$WORK/th.dmlpkg" -o "$WORK/th_st.dmlpkg"
out=$("$DMLC" eval "$WORK/th_st.dmlpkg" --data "a=$WORK/ta.npy,b=$WORK/tb.npy,cls=$WORK/tc.npy" 2>&1)
check "eval of a stripped two-input package fails" test $? -eq 1
check "  naming the training package" grep -q "evaluate the package dmlc train wrote (before dmlc strip)" <<<"$out"
I=$SHARED/models/fashion_mlp_io/input_0.npy
"$DMLC" run "$WORK/tr.dmlpkg" --input "input=$I" --output-dir "$WORK/o_tr" >/dev/null
"$DMLC" run "$WORK/st.dmlpkg" --input "input=$I" --output-dir "$WORK/o_st" >/dev/null
check "strip: forward's outputs bit for bit" cmp "$WORK/o_tr/logits.npy" "$WORK/o_st/logits.npy"
"$DMLC" eval "$WORK/st.dmlpkg" --data "$WORK/d.csv" --json >"$WORK/eval_st.json" 2>/dev/null
check "eval --json of the stripped (inference) package" py "$WORK/eval_st.json" "$WORK/eval.json" <<'EOF'
import json, sys
s, t = (json.load(open(f)) for f in sys.argv[1:3])
assert s["function"] == "forward" and s["loss"] is None and s["accuracy"] == t["accuracy"], (s, t)
EOF

# ---- --threads ----
"$DMLC" run "$WORK/st.dmlpkg" --input "input=$I" --output-dir "$WORK/o_t3" --threads 3 >/dev/null
check "run --threads 3: the same outputs" cmp "$WORK/o_st/logits.npy" "$WORK/o_t3/logits.npy"
for c in "run $PKG --input x.npy" "bench $PKG" "serve $PKG" "train m.onnx" "eval $PKG"; do
  # shellcheck disable=SC2086
  out=$("$DMLC" $c --threads 0 2>&1)
  check "$c --threads 0 refused" test $? -eq 2
  check "  saying so" grep -q "bad --threads '0'" <<<"$out"
done

# ---- compile progress ----
DMLC_PROGRESS_AFTER_MS=0 "$DMLC" compile "$SHARED/models/lenet5.onnx" -o "$WORK/p.dmlpkg" \
  >/dev/null 2>"$WORK/p_none.err"
check "no progress line off a terminal without --progress" test ! -s "$WORK/p_none.err"
DMLC_PROGRESS_AFTER_MS=0 "$DMLC" compile "$SHARED/models/lenet5.onnx" -o "$WORK/p.dmlpkg" \
  --progress >/dev/null 2>"$WORK/p_forced.err"
check "--progress off a terminal: plain lines" grep -q "^dmlc compile: .* s$" "$WORK/p_forced.err"
check "  no carriage return or escape" py "$WORK/p_forced.err" <<'EOF'
import sys
b = open(sys.argv[1], "rb").read()
assert b"\r" not in b and b"\x1b" not in b, b
EOF
check "a terminal: one line rewritten and cleared" py "$DMLC" "$SHARED/models/lenet5.onnx" "$WORK/p.dmlpkg" <<'EOF'
import os, pty, sys
def on_pty(*extra):
    pid, fd = pty.fork()
    if pid == 0:
        os.environ["DMLC_PROGRESS_AFTER_MS"] = "0"
        os.execv(sys.argv[1], [sys.argv[1], "compile", sys.argv[2], "-o", sys.argv[3]] + list(extra))
    buf = b""
    while True:
        try:
            d = os.read(fd, 4096)
        except OSError:
            break
        if not d:
            break
        buf += d
    _, st = os.waitpid(pid, 0)
    assert st == 0, st
    return buf
buf = on_pty()
assert b"\rdmlc compile: " in buf and buf.count(b"\r\x1b[K") == 1, buf
# with IR dumps on the terminal: no progress line among them
buf = on_pty("--print-ir-after=dce")
assert b"dmlc compile: " not in buf and b"\x1b[K" not in buf and b"func" in buf, buf[-300:]
EOF

[ "$fails" -eq 0 ] && echo "test_cli_out: all passed" || { echo "test_cli_out: $fails failed"; exit 1; }
