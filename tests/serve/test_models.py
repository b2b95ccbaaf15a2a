#!/usr/bin/python3
"""`dmlc serve` with several models, /metrics and the binary tensor data
extension (python3 standard library only).

    test_models.py DMLC SHARED_DIR SOURCE_DIR WORK_DIR

Serves fashion_mlp (the package argument) and lenet5 (`--model lenet=PKG`)
from one server and checks:
- the flags' errors (--model without NAME=, a name twice, a bad name, a
  package that does not load);
- each model's metadata, readiness and stats, the model list
  (/v2/models, /v2/repository/index), 404 with a JSON error for an unknown
  model;
- concurrent requests to both models from 6 threads: every reply bit for
  bit equal to `dmlc run`'s answer for the same rows;
- /metrics parsed by a small parser of Prometheus' text format 0.0.4
  (HELP/TYPE before a family's samples, one family's samples together,
  label syntax, histogram buckets cumulative and ending at +Inf = _count):
  the counters of each model move by what was sent;
- the binary tensor data extension: 335 rows of fashion_mlp (1,050,560
  bytes of FP32) as raw bytes give the same answer, bit for bit, as the
  JSON path and as `dmlc run`; binary outputs (binary_data_output, per
  output binary_data) hold the same bits; hostile lengths are 400 with a
  clear error and the server keeps serving;
- --metrics-public with a token: /metrics open, the rest 401.
"""
import http.client
import json
import os
import re
import struct
import subprocess
import sys
import threading

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from serve_util import FAILS, Fashion, check, read_npy, start_server  # noqa: E402

DMLC, SHARED, SOURCE, WORK = sys.argv[1:5]
F = Fashion(DMLC, SHARED, SOURCE, WORK)

# lenet5: [B,1,28,28] -> [B,10], `dmlc run`'s answer on its 64 saved rows
LENET_ONNX = os.path.join(SHARED, "models", "lenet5.onnx")
if not os.path.exists(LENET_ONNX):
    print("FAILED: %s is missing (the project's shared/ folder)" % LENET_ONNX)
    sys.exit(1)
LPKG = os.path.join(WORK, "lenet5.dmlpkg")
subprocess.run([DMLC, "compile", LENET_ONNX, "-o", LPKG], check=True,
               stdout=subprocess.DEVNULL)
LXIN = os.path.join(SHARED, "models", "lenet5_io", "input_1.npy")
lshape, LX = read_npy(LXIN)
LROWS = lshape[0]
LOUT = os.path.join(WORK, "lenet_out")
os.makedirs(LOUT, exist_ok=True)
subprocess.run([DMLC, "run", LPKG, "--input", LXIN, "--output-dir", LOUT], check=True,
               stdout=subprocess.DEVNULL)
_, LREF = read_npy(os.path.join(LOUT, "logits.npy"))
LREF_BITS = struct.pack("<%df" % len(LREF), *LREF)

# ---- flag errors ----
for args, rc_want, msg in [
        (["--model", "lenet"], 2, "--model takes NAME=PKG, not 'lenet'"),
        (["--model", "=x"], 2, "bad model name ''"),
        (["--model", "a b=" + LPKG], 2, "bad model name 'a b'"),
        ([F.pkg, "--model", "fashion_mlp=" + LPKG], 2, "model name 'fashion_mlp' given twice"),
        (["--name", "x", "--model", "l=" + LPKG], 2, "--name names the PKG argument"),
        ([F.pkg, "--model", "gone=" + os.path.join(WORK, "missing.dmlpkg")], 1,
         "model 'gone'")]:
    p = subprocess.run([DMLC, "serve"] + args, capture_output=True, text=True, timeout=60)
    check(p.returncode == rc_want and msg in p.stderr,
          "serve %s: want exit %d and '%s', got %d: %s" % (args, rc_want, msg, p.returncode,
                                                          p.stderr.strip()[:300]))

srv, line, PORT = start_server(
    DMLC, [F.pkg, "--model", "lenet=" + LPKG, "--port", "0", "--batch-size", "16",
           "--batch-timeout-ms", "2", "--max-body-bytes", str(8 << 20)],
    os.path.join(WORK, "serve.log"))
check(PORT is not None and "models 'fashion_mlp', batched, batch size 16; 'lenet', batched"
      in line, "listening line names both models: " + line.strip())
if PORT is None:
    srv.kill()
    sys.exit(1)


def request(method, path, body=None, headers=None, port=None):
    """(status, body bytes, headers dict) of one request on a new connection."""
    c = http.client.HTTPConnection("127.0.0.1", port or PORT, timeout=120)
    h = {"Content-Type": "application/json"} if body is not None else {}
    h.update(headers or {})
    c.request(method, path, body=body, headers=h)
    r = c.getresponse()
    data = r.read()
    hdrs = {k.lower(): v for k, v in r.getheaders()}
    c.close()
    return r.status, data, hdrs


def jreq(method, path, body=None, headers=None, port=None):
    st, data, hdrs = request(method, path, body, headers, port)
    try:
        js = json.loads(data) if data else None
    except ValueError:
        js = None
    return st, js


def lenet_body(r0, n):
    data = [float("%.9g" % v) for v in LX[r0 * 784:(r0 + n) * 784]]
    return json.dumps({"inputs": [{"name": "input", "shape": [n, 1, 28, 28],
                                   "datatype": "FP32", "data": data}]}).encode()


def lenet_ok(js, r0, n):
    try:
        out = js["outputs"][0]
        return (js["model_name"] == "lenet" and out["shape"] == [n, 10] and
                struct.pack("<%df" % (n * 10), *out["data"]) ==
                LREF_BITS[r0 * 40:(r0 + n) * 40])
    except (KeyError, TypeError, IndexError, struct.error):
        return False


# ---- metadata, model list, unknown model ----
st, js = jreq("GET", "/v2/models/lenet")
check(st == 200 and js["name"] == "lenet" and
      js["inputs"] == [{"name": "input", "datatype": "FP32", "shape": [-1, 1, 28, 28]}],
      "lenet metadata: %s" % js)
st, js = jreq("GET", "/v2/models/fashion_mlp/versions/1")
check(st == 200 and js["inputs"][0]["shape"] == [-1, 784], "fashion_mlp metadata")
for m in ("lenet", "fashion_mlp"):
    st, js = jreq("GET", "/v2/models/%s/ready" % m)
    check(st == 200 and js == {"name": m, "ready": True}, m + " ready")
want_index = [{"name": "fashion_mlp", "version": "1", "state": "READY"},
              {"name": "lenet", "version": "1", "state": "READY"}]
st, js = jreq("POST", "/v2/repository/index", b"{}")
check(st == 200 and js == want_index, "POST /v2/repository/index: %s" % js)
st, js = jreq("GET", "/v2/repository/index")
check(st == 200 and js == want_index, "GET /v2/repository/index")
st, js = jreq("GET", "/v2/models")
check(st == 200 and js == {"models": want_index}, "GET /v2/models: %s" % js)
st, js = jreq("GET", "/v2")
check(st == 200 and "binary_tensor_data" in js.get("extensions", []), "server extensions")
st, js = jreq("POST", "/v2/models/resnet/infer", lenet_body(0, 1))
check(st == 404 and isinstance(js, dict) and
      "unknown model 'resnet'; this server serves 'fashion_mlp', 'lenet'" in js.get("error", ""),
      "unknown model: %d %s" % (st, js))
st, js = jreq("DELETE", "/v2/repository/index")
check(st == 405, "DELETE /v2/repository/index: 405")


# ---- /metrics: a small parser of the text format (0.0.4) ----
SAMPLE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(?:[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\n]|\\.)*"'
                    r'(?:,[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\n]|\\.)*")*)?\})? '
                    r'(-?[0-9.eE+-]+|\+Inf|-Inf|NaN)$')
LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\\n]|\\.)*)"')


def metrics(port=None, headers=None):
    """{(name, frozenset(labels)): value} of /metrics, after checking its
    syntax: TYPE/HELP lines, each sample in a declared family whose
    samples are contiguous, histograms cumulative with +Inf == _count."""
    st, data, hdrs = request("GET", "/metrics", headers=headers, port=port)
    check(st == 200 and hdrs.get("content-type", "").startswith("text/plain; version=0.0.4"),
          "/metrics 200 text/plain 0.0.4 (%d %s)" % (st, hdrs.get("content-type")))
    types, done, cur, out = {}, set(), None, {}
    for ln in data.decode().split("\n")[:-1]:
        if ln.startswith("# HELP ") or ln.startswith("# TYPE "):
            parts = ln.split(" ", 3)
            check(len(parts) == 4 and re.match(r"^[a-zA-Z_:][a-zA-Z0-9_:]*$", parts[2]),
                  "metrics comment %r" % ln)
            if parts[1] == "TYPE":
                check(parts[3] in ("counter", "gauge", "histogram", "summary", "untyped"),
                      "metric type %r" % ln)
                check(parts[2] not in types, "family %s declared twice" % parts[2])
                types[parts[2]] = parts[3]
            continue
        m = SAMPLE.match(ln)
        check(m is not None, "metrics line does not parse: %r" % ln)
        if not m:
            continue
        name = m.group(1)
        fam = name
        for suf in ("_bucket", "_sum", "_count"):
            if name.endswith(suf) and name[:-len(suf)] in types and \
                    types[name[:-len(suf)]] in ("histogram", "summary"):
                fam = name[:-len(suf)]
        check(fam in types, "sample %s before its # TYPE" % name)
        if fam != cur:
            check(fam not in done, "family %s's samples are not together" % fam)
            done.add(cur)
            cur = fam
        labels = frozenset(LABEL.findall(m.group(2) or ""))
        out[(name, labels)] = float(m.group(3))
    # histograms: cumulative buckets, the last +Inf == _count
    series = {}
    for (name, labels), v in out.items():
        if name.endswith("_bucket"):
            d = dict(labels)
            le = float(d.pop("le"))
            series.setdefault((name, frozenset(d.items())), []).append((le, v))
    for (name, rest), bk in series.items():
        bk.sort()
        check(all(a[1] <= b[1] for a, b in zip(bk, bk[1:])),
              "%s %s: buckets cumulative" % (name, dict(rest)))
        check(bk[-1][0] == float("inf") and out.get((name[:-7] + "_count", rest)) == bk[-1][1],
              "%s %s: +Inf bucket == _count" % (name, dict(rest)))
    return out


def mv(ms, name, **labels):
    return ms.get((name, frozenset(labels.items())), 0.0)


m0 = metrics()
check(mv(m0, "process_resident_memory_bytes") > 1 << 20, "process_resident_memory_bytes")
check(mv(m0, "dmlc_http_connections") >= 1, "dmlc_http_connections counts this one")
check(mv(m0, "dmlc_batch_size_max", model="lenet") == 16, "dmlc_batch_size_max{lenet}")
check(("dmlc_queue_requests", frozenset({("model", "lenet")})) in m0, "queue depth gauge")

# ---- concurrent requests to both models, bit for bit ----
bad = []
counts = {"fashion_mlp": [0, 0], "lenet": [0, 0]}  # requests, rows
lock = threading.Lock()


def client(tid):
    for i in range(12):
        r0 = (tid * 7 + i * 5) % 60
        n = 1 + (tid + i) % 4
        if (tid + i) % 2:
            st, js = jreq("POST", "/v2/models/lenet/infer", lenet_body(r0, n))
            ok, m = st == 200 and lenet_ok(js, r0, n), "lenet"
        else:
            st, js = jreq("POST", "/v2/models/fashion_mlp/versions/1/infer", F.infer_body(r0, n))
            ok, m = st == 200 and F.reply_ok(js, r0, n), "fashion_mlp"
        with lock:
            counts[m][0] += 1
            counts[m][1] += n
            if not ok:
                bad.append((m, r0, n, st))


threads = [threading.Thread(target=client, args=(t,)) for t in range(6)]
for t in threads:
    t.start()
for t in threads:
    t.join(300)
check(not bad, "concurrent replies of both models equal `dmlc run`'s: %s" % bad[:5])

m1 = metrics()
for m in ("lenet", "fashion_mlp"):
    nreq, nrows = counts[m]
    check(mv(m1, "dmlc_inference_requests_total", model=m, result="ok") -
          mv(m0, "dmlc_inference_requests_total", model=m, result="ok") == nreq,
          "%s: inference_requests_total moved by %d" % (m, nreq))
    check(mv(m1, "dmlc_inference_rows_total", model=m) -
          mv(m0, "dmlc_inference_rows_total", model=m) == nrows,
          "%s: inference_rows_total moved by %d" % (m, nrows))
    check(mv(m1, "dmlc_model_requests_total", model=m, code="200") -
          mv(m0, "dmlc_model_requests_total", model=m, code="200") == nreq,
          "%s: model_requests_total{200} moved by %d" % (m, nreq))
    check(mv(m1, "dmlc_inference_duration_seconds_count", model=m) -
          mv(m0, "dmlc_inference_duration_seconds_count", model=m) == nreq,
          "%s: inference latency histogram counted %d" % (m, nreq))
    check(mv(m1, "dmlc_batch_rows_sum", model=m) - mv(m0, "dmlc_batch_rows_sum", model=m)
          == nrows, "%s: batch rows histogram summed %d rows" % (m, nrows))
    check(mv(m1, "dmlc_batch_rows_count", model=m) > mv(m0, "dmlc_batch_rows_count", model=m),
          "%s: batch rows histogram counted runs" % m)
    check(mv(m1, "dmlc_queue_requests", model=m) == 0, "%s: queue empty at rest" % m)
st, js = jreq("GET", "/v2/models/lenet/stats")
check(st == 200 and js["name"] == "lenet" and js["requests"] == counts["lenet"][0] and
      js["rows"] == counts["lenet"][1] and js["model_http"]["2xx"] >= counts["lenet"][0] + 2 and
      js["http"]["2xx"] > js["model_http"]["2xx"], "lenet stats: %s" % js)
check(mv(m1, "dmlc_http_requests_total", code="404") >= 1, "the 404 counted")
check(mv(m1, "dmlc_http_request_duration_seconds_count") >
      mv(m0, "dmlc_http_request_duration_seconds_count"), "http latency histogram moved")

# ---- the binary tensor data extension ----
BIN_ROWS = 335  # 335 x 784 x 4 = 1,050,560 bytes (> 1 MB)
rows = [r % F.ROWS for r in range(BIN_ROWS)]
xb = b"".join(struct.pack("<784f", *F.X[r * 784:(r + 1) * 784]) for r in rows)
want = b"".join(F.REF_BITS[r * 40:(r + 1) * 40] for r in rows)
INFER = "/v2/models/fashion_mlp/infer"


def bin_request(header, raw, extra_headers=None, ct="application/octet-stream"):
    js = json.dumps(header).encode()
    h = {"Inference-Header-Content-Length": str(len(js)), "Content-Type": ct}
    h.update(extra_headers or {})
    return request("POST", INFER, js + raw, h)


def bin_input(shape, size, **kw):
    inp = {"name": "input", "shape": shape, "datatype": "FP32",
           "parameters": {"binary_data_size": size}}
    inp.update(kw)
    return {"inputs": [inp]}


# JSON path for the same rows
body = json.dumps({"inputs": [{"name": "input", "shape": [BIN_ROWS, 784], "datatype": "FP32",
                               "data": [float("%.9g" % v) for r in rows
                                        for v in F.X[r * 784:(r + 1) * 784]]}]}).encode()
st, data, _ = request("POST", INFER, body)
js = json.loads(data) if st == 200 else {}
json_bits = struct.pack("<%df" % (BIN_ROWS * 10), *js["outputs"][0]["data"]) if st == 200 else b""
check(json_bits == want, "JSON path, %d rows: equal to `dmlc run`" % BIN_ROWS)
# binary in, JSON out
st, data, hdrs = bin_request(bin_input([BIN_ROWS, 784], len(xb)), xb)
js = json.loads(data) if st == 200 else {}
got = struct.pack("<%df" % (BIN_ROWS * 10), *js["outputs"][0]["data"]) if st == 200 else b""
check(st == 200 and got == json_bits and "inference-header-content-length" not in hdrs,
      "binary input (%d bytes) = the JSON path's answer (%d %s)" % (len(xb), st, data[:200]))
# binary in, binary out (request-wide)
hdr = bin_input([BIN_ROWS, 784], len(xb))
hdr["parameters"] = {"binary_data_output": True}
hdr["id"] = "b-1"
st, data, hdrs = bin_request(hdr, xb)
jl = int(hdrs.get("inference-header-content-length", "-1"))
ok = st == 200 and 0 < jl <= len(data) and \
    hdrs.get("content-type") == "application/octet-stream"
if ok:
    js = json.loads(data[:jl])
    out = js["outputs"][0]
    ok = (js.get("id") == "b-1" and out["shape"] == [BIN_ROWS, 10] and "data" not in out and
          out["parameters"] == {"binary_data_size": BIN_ROWS * 40} and data[jl:] == want)
check(ok, "binary output: raw bytes = `dmlc run` (%d %s)" % (st, data[:200]))
# per output: binary_data false overrides binary_data_output
hdr["outputs"] = [{"name": "logits", "parameters": {"binary_data": False}}]
st, data, hdrs = bin_request(hdr, xb)
check(st == 200 and "inference-header-content-length" not in hdrs and
      struct.pack("<%df" % (BIN_ROWS * 10), *json.loads(data)["outputs"][0]["data"]) == want,
      "binary_data false on the output: JSON data")
# JSON in, binary out (per output)
st, data, hdrs = request("POST", INFER, json.dumps(
    {"inputs": [{"name": "input", "shape": [2, 784], "datatype": "FP32",
                 "data": [float("%.9g" % v) for v in F.X[0:2 * 784]]}],
     "outputs": [{"name": "logits", "parameters": {"binary_data": True}}]}).encode())
jl = int(hdrs.get("inference-header-content-length", "-1"))
check(st == 200 and jl > 0 and data[jl:] == F.REF_BITS[:80], "JSON in, binary_data out")
# lenet through the binary extension too
lx = struct.pack("<%df" % (3 * 784), *LX[5 * 784:8 * 784])
js = json.dumps({"inputs": [{"name": "input", "shape": [3, 1, 28, 28], "datatype": "FP32",
                             "parameters": {"binary_data_size": len(lx)}}],
                 "parameters": {"binary_data_output": True}}).encode()
st, data, hdrs = request("POST", "/v2/models/lenet/infer", js + lx,
                         {"Inference-Header-Content-Length": str(len(js))})
jl = int(hdrs.get("inference-header-content-length", "-1"))
check(st == 200 and data[jl:] == LREF_BITS[5 * 40:8 * 40], "lenet binary in and out")

# hostile lengths: 400 with a clear error, never a crash
one = xb[:3136]
hj = json.dumps(bin_input([1, 784], 3136)).encode()
cases = [
    ("header beyond the body", hj + one, {"Inference-Header-Content-Length": str(len(hj) + 3137)},
     "beyond the end of the request body"),
    ("header huge", hj + one, {"Inference-Header-Content-Length": "18446744073709551617"},
     "must be a decimal byte count"),
    ("header negative", hj + one, {"Inference-Header-Content-Length": "-5"},
     "must be a decimal byte count"),
    ("header not a number", hj + one, {"Inference-Header-Content-Length": "0x10"},
     "must be a decimal byte count"),
    ("header empty", hj + one, {"Inference-Header-Content-Length": ""},
     "must be a decimal byte count"),
    ("header 0", hj + one, {"Inference-Header-Content-Length": "0"}, "malformed JSON"),
    ("header inside the JSON", hj + one, {"Inference-Header-Content-Length": "20"},
     "malformed JSON"),
]
for size, msg in [(3135, "does not match the shape"), (3140, "does not match the shape"),
                  (-4, "must be a byte count"), (1e30, "must be a byte count"),
                  (3136.5, "must be a byte count"), ("3136", "must be a number"),
                  (2 ** 62, "must be a byte count"), (2 ** 50, "does not match the shape")]:
    j = json.dumps(bin_input([1, 784], size)).encode()
    cases.append(("binary_data_size %r" % (size,), j + one,
                  {"Inference-Header-Content-Length": str(len(j))}, msg))
j = json.dumps(bin_input([2, 784], 6272)).encode()
cases.append(("data past the end", j + one, {"Inference-Header-Content-Length": str(len(j))},
              "runs past the end"))
j = json.dumps(bin_input([1, 784], 3136)).encode()
cases.append(("trailing bytes", j + one + b"xyz", {"Inference-Header-Content-Length": str(len(j))},
              "3 bytes of binary data after the inputs'"))
cases.append(("binary_data_size without the header", j, {"Content-Type": "application/json"},
              "has no Inference-Header-Content-Length header"))
j = json.dumps(bin_input([1, 784], 3136, data=[0.0] * 784)).encode()
cases.append(("data and binary_data_size", j + one,
              {"Inference-Header-Content-Length": str(len(j))}, "both \"data\" and"))
j = json.dumps({"inputs": [{"name": "input", "shape": [1, 784], "datatype": "FP32",
                            "parameters": 5}]}).encode()
cases.append(("parameters not an object", j + one,
              {"Inference-Header-Content-Length": str(len(j))}, "\"parameters\""))
j = json.dumps(bin_input([1 << 40, 784], 3136)).encode()
cases.append(("huge shape", j + one, {"Inference-Header-Content-Length": str(len(j))},
              "does not match the shape"))
j = json.dumps(bin_input([1, 784], 3136)).encode()
cases.append(("text/plain", j + one, {"Inference-Header-Content-Length": str(len(j)),
                                      "Content-Type": "text/plain"}, "not supported"))
for what, raw, h, msg in cases:
    hh = {"Content-Type": "application/octet-stream"}
    hh.update(h)
    st, data, _ = request("POST", INFER, raw, hh)
    try:
        err = json.loads(data).get("error", "")
    except ValueError:
        err = ""
    check(st in (400, 415) and msg in err, "%s: want 400 '%s', got %d %s" % (what, msg, st,
                                                                            data[:300]))
# two Inference-Header-Content-Length headers (http.client sends both)
c = http.client.HTTPConnection("127.0.0.1", PORT, timeout=60)
c.putrequest("POST", INFER)
for k, v in [("Content-Type", "application/octet-stream"), ("Content-Length", str(len(hj) + 3136)),
             ("Inference-Header-Content-Length", str(len(hj))),
             ("Inference-Header-Content-Length", "1")]:
    c.putheader(k, v)
c.endheaders(hj + one)
r = c.getresponse()
check(r.status == 400 and b"given more than once" in r.read(), "two header lengths: 400")
c.close()
# the body limit applies to the whole body (8 MiB here): 413 on the headers
c = http.client.HTTPConnection("127.0.0.1", PORT, timeout=60)
c.putrequest("POST", INFER)
for k, v in [("Content-Type", "application/octet-stream"), ("Content-Length", str((8 << 20) + 1)),
             ("Inference-Header-Content-Length", str(len(hj)))]:
    c.putheader(k, v)
c.endheaders()
r = c.getresponse()
check(r.status == 413, "binary body over --max-body-bytes: 413 (got %d)" % r.status)
c.close()
# BOOL bytes other than 0/1 cannot come through fashion_mlp (FP32), so the
# NaN/inf bytes of FP32 do: they are values, not errors
nan_row = struct.pack("<f", float("nan")) * 784
st, data, _ = bin_request(bin_input([1, 784], 3136), nan_row)
check(st == 200, "NaN bytes are FP32 values (got %d)" % st)
st, js = jreq("GET", "/v2/health/ready")
check(st == 200, "ready after the hostile requests")
st, data, _ = bin_request(bin_input([1, 784], 3136), one)
check(st == 200 and F.reply_ok(json.loads(data), 0, 1), "serving after the hostile requests")

srv.terminate()
check(srv.wait(60) == 0, "clean exit on SIGTERM")
log = open(os.path.join(WORK, "serve.log")).read()
check("model 'lenet': requests" in log and "model 'fashion_mlp': requests" in log,
      "statistics of each model printed on exit")

# ---- --metrics-public with a token ----
tok = os.path.join(WORK, "token")
with open(tok, "w") as f:
    f.write("metrics-test-token-0123456789\n")
for public in (False, True):
    # the second one with --model alone (no package argument)
    name = "fm" if public else "fashion_mlp"
    args = (["--model", "fm=" + F.pkg] if public else [F.pkg]) + \
        ["--port", "0", "--auth-token-file", tok, "--quiet"]
    srv, line, port = start_server(DMLC, args + (["--metrics-public"] if public else []),
                                   os.path.join(WORK, "tok.log"))
    st, _, _ = request("GET", "/metrics", port=port)
    check(st == (200 if public else 401), "/metrics without the token, public=%s: %d" %
          (public, st))
    st, _, _ = request("GET", "/metrics", port=port,
                       headers={"Authorization": "Bearer metrics-test-token-0123456789"})
    check(st == 200, "/metrics with the token")
    st, _, _ = request("POST", "/v2/models/%s/infer" % name, F.infer_body(0, 1), port=port)
    check(st == 401, "infer without the token: 401 (public=%s)" % public)
    st, data, _ = request("POST", "/v2/models/%s/infer" % name, F.infer_body(2, 3), port=port,
                          headers={"Authorization": "Bearer metrics-test-token-0123456789"})
    check(st == 200 and F.reply_ok(json.loads(data), 2, 3), "infer with the token on " + name)
    srv.terminate()
    check(srv.wait(60) == 0, "clean exit")

print("%d checks failed" % len(FAILS) if FAILS else "all checks passed")
sys.exit(1 if FAILS else 0)
