#!/usr/bin/python3
"""`dmlc serve` end to end (python3 standard library only).

    test_http.py DMLC SHARED_DIR SOURCE_DIR WORK_DIR

Compiles fashion_mlp, computes the runtime's answer with `dmlc run` on the
64 saved input rows (../shared/models/fashion_mlp_io/input_1.npy, else
random rows), starts `dmlc serve --port 0`, queries every endpoint,
compares every inference reply bit for bit with the runtime's answer
(float32 values read back from the reply's %.9g text), sends malformed
requests expecting the protocol's 4xx JSON error while the server keeps
serving, and stops it with SIGTERM expecting a clean exit and the
statistics on stderr.
"""
import http.client
import json
import os
import random
import socket
import struct
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from serve_util import FAILS, Fashion, check  # noqa: E402

DMLC, SHARED, SOURCE, WORK = sys.argv[1:5]


def f32bits(v):
    return struct.pack("<f", v)


F = Fashion(DMLC, SHARED, SOURCE, WORK)
pkg, X, ROWS, REF = F.pkg, F.X, F.ROWS, F.REF

# ---- command-line errors: usage (2) and start-up failures (1) ----
for args, rc_want, msg in [
        (["--bogus"], 2, "unknown flag '--bogus'"),
        ([], 2, "no package given (PKG or --model NAME=PKG)\nsee 'dmlc serve --help' for the "
         "usage and flags"),
        ([pkg, "--port", "70000"], 2, "--port takes 0..65535"),
        ([pkg, "--batch-size", "0"], 2, "--batch-size takes a positive number"),
        ([pkg, "--instances", "0"], 2, "--instances takes 1..256"),
        ([pkg, "--batch-timeout-ms", "-1"], 2, "--batch-timeout-ms takes 0..3600000"),
        ([pkg, "--host", "localhost"], 2, "--host takes an IPv4 address"),
        ([pkg, "--batch-size", "65"], 1, "batch size 65 exceeds the package's batch bound 64"),
        ([pkg, "--device", "tpu"], 1, "device 'tpu' is not available"),
        ([os.path.join(WORK, "missing.dmlpkg")], 1, "missing.dmlpkg")]:
    p = subprocess.run([DMLC, "serve"] + args, capture_output=True, text=True, timeout=60)
    check(p.returncode == rc_want and msg in p.stderr,
          "serve %s: want exit %d and '%s', got %d: %s" % (args, rc_want, msg, p.returncode,
                                                          p.stderr.strip()[:200]))

LIMIT = 1 << 20
srv = subprocess.Popen([DMLC, "serve", pkg, "--name", "fashion_mlp", "--port", "0",
                        "--batch-size", "8", "--batch-timeout-ms", "2", "--instances", "2",
                        "--max-body-bytes", str(LIMIT), "--verbose"],
                       stdout=subprocess.PIPE, stderr=open(os.path.join(WORK, "serve.log"), "w"),
                       text=True)
line = srv.stdout.readline()
print(line.strip())
check(line.startswith("listening on http://127.0.0.1:"), "listening line")
PORT = int(line.split("127.0.0.1:")[1].split(" ")[0])


def request(method, path, body=None, headers=None, timeout=60):
    c = http.client.HTTPConnection("127.0.0.1", PORT, timeout=timeout)
    if isinstance(body, str):
        body = body.encode()
    h = {"Content-Type": "application/json"} if body is not None else {}
    h.update(headers or {})
    c.request(method, path, body=body, headers=h)
    r = c.getresponse()
    data = r.read()
    c.close()
    try:
        js = json.loads(data) if data else None
    except ValueError:
        js = None
    return r.status, js, r.getheader("Content-Type")


def infer_body(r0, n, nested=False, extra=None):
    rows = [X[(r0 + i) * 784:(r0 + i + 1) * 784] for i in range(n)]
    data = rows if nested else [v for row in rows for v in row]
    body = {"inputs": [{"name": "input", "shape": [n, 784], "datatype": "FP32",
                        "data": [float("%.9g" % v) for v in data] if not nested else
                        [[float("%.9g" % v) for v in row] for row in rows]}]}
    body.update(extra or {})
    return json.dumps(body)


def reply_matches(js, r0, n):
    try:
        out = js["outputs"][0]
        if out["name"] != "logits" or out["datatype"] != "FP32" or out["shape"] != [n, 10]:
            return False
        got = b"".join(f32bits(v) for v in out["data"])
        want = b"".join(f32bits(v) for v in REF[r0 * 10:(r0 + n) * 10])
        return got == want
    except (KeyError, TypeError, IndexError):
        return False


def alive():
    return request("GET", "/v2/health/live")[0] == 200


# ---- endpoints ----
st, js, ct = request("GET", "/v2/health/live")
check(st == 200 and js == {"live": True} and ct == "application/json", "live")
st, js, _ = request("GET", "/v2/health/ready")
check(st == 200 and js == {"ready": True}, "ready")
st, js, _ = request("GET", "/v2")
check(st == 200 and js["name"] == "dmlc", "server metadata")
for path in ("/v2/models/fashion_mlp", "/v2/models/fashion_mlp/versions/1"):
    st, js, _ = request("GET", path)
    check(st == 200 and js["name"] == "fashion_mlp" and
          js["inputs"] == [{"name": "input", "datatype": "FP32", "shape": [-1, 784]}] and
          js["outputs"] == [{"name": "logits", "datatype": "FP32", "shape": [-1, 10]}],
          "model metadata " + path)
st, js, _ = request("GET", "/v2/models/fashion_mlp/ready")
check(st == 200 and js == {"name": "fashion_mlp", "ready": True}, "model ready")
st, js, _ = request("HEAD", "/v2/health/ready")
check(st == 200, "HEAD ready")

# ---- inference, bit for bit ----
st, js, _ = request("POST", "/v2/models/fashion_mlp/infer", infer_body(0, ROWS))
check(st == 200 and reply_matches(js, 0, ROWS), "infer all %d rows (split over batches of 8)" % ROWS)
st, js, _ = request("POST", "/v2/models/fashion_mlp/versions/1/infer",
                    infer_body(3, 2, nested=True,
                               extra={"id": "r-1", "outputs": [{"name": "logits"}]}))
check(st == 200 and js.get("id") == "r-1" and js.get("model_name") == "fashion_mlp" and
      reply_matches(js, 3, 2), "infer nested data, id, outputs")
st, js, _ = request("POST", "/v2/models/fashion_mlp/infer", infer_body(5, 1),
                    headers={"Content-Type": "application/x-www-form-urlencoded"})
check(st == 200 and reply_matches(js, 5, 1), "infer with curl's default content type")

bad_threads = []


def client(tid):
    rnd = random.Random(tid)
    for _ in range(12):
        # 1..12 rows: bodies of ~9 to ~110 KB, so both the inline parse
        # (<= 64 KiB) and the parse threads (larger) serve while others run
        n = rnd.randint(1, 12)
        r0 = rnd.randint(0, ROWS - n)
        s, j, _ = request("POST", "/v2/models/fashion_mlp/infer", infer_body(r0, n))
        if s != 200 or not reply_matches(j, r0, n):
            bad_threads.append((tid, r0, n, s))


ths = [threading.Thread(target=client, args=(t,)) for t in range(16)]
for t in ths:
    t.start()
for t in ths:
    t.join()
check(not bad_threads, "16 concurrent clients x 12 requests bit-identical %s" % bad_threads[:3])
log_now = open(os.path.join(WORK, "serve.log")).read()
check(" 400 " not in log_now and " 500 " not in log_now,
      "no request of the concurrent clients refused (a request's state used after its "
      "reply would show as a corrupt body)")

# ---- malformed requests: 4xx JSON errors, and the server keeps serving ----
INFER = "/v2/models/fashion_mlp/infer"
good = json.loads(infer_body(0, 1))


def with_input(**kw):
    b = json.loads(json.dumps(good))
    b["inputs"][0].update(kw)
    return json.dumps(b)


cases = [
    ("bad JSON", "POST", INFER, '{"inputs": [', None, 400, "malformed JSON"),
    ("truncated JSON", "POST", INFER, infer_body(0, 1)[:-40], None, 400, "malformed JSON"),
    ("not an object", "POST", INFER, "[1, 2]", None, 400, "must be a JSON object"),
    ("no inputs", "POST", INFER, '{"outputs": []}', None, 400, "needs an \"inputs\" array"),
    ("empty body", "POST", INFER, "", None, 400, "malformed JSON"),
    ("input not an object", "POST", INFER, '{"inputs": [5]}', None, 400, "each input needs"),
    ("unknown model", "POST", "/v2/models/nope/infer", infer_body(0, 1), None, 404,
     "unknown model 'nope'"),
    ("unknown version", "GET", "/v2/models/fashion_mlp/versions/7", None, None, 404,
     "unknown version '7'"),
    ("unknown input", "POST", INFER, with_input(name="image"), None, 400,
     "unknown input 'image'"),
    ("duplicate input", "POST", INFER,
     json.dumps({"inputs": [good["inputs"][0], good["inputs"][0]]}), None, 400, "given twice"),
    ("wrong datatype", "POST", INFER, with_input(datatype="INT64"), None, 400,
     "datatype INT64 does not match the model's FP32"),
    ("unknown datatype", "POST", INFER, with_input(datatype="FLOAT"), None, 400,
     "datatype FLOAT does not match"),
    ("wrong shape", "POST", INFER, with_input(shape=[1, 783]), None, 400,
     "shape [1,783] does not fit the model's f32[batch,784]"),
    ("wrong rank", "POST", INFER, with_input(shape=[784]), None, 400, "does not fit"),
    ("negative dim", "POST", INFER, with_input(shape=[-1, 784]), None, 400, "does not fit"),
    ("zero rows", "POST", INFER, with_input(shape=[0, 784], data=[]), None, 400,
     "at least one row"),
    ("too few values", "POST", INFER, with_input(data=[0.5] * 700), None, 400,
     "shape needs 784 values, data has 700"),
    ("too many values", "POST", INFER, with_input(data=[0.5] * 800), None, 400,
     "data has 800"),
    ("string data", "POST", INFER, with_input(data=["a"] * 784), None, 400, "not a number"),
    ("unknown output", "POST", INFER,
     json.dumps(dict(good, outputs=[{"name": "probs"}])), None, 400, "unknown output 'probs'"),
    ("id not a string", "POST", INFER, json.dumps(dict(good, id=5)), None, 400,
     "\"id\" must be a string"),
    ("GET infer", "GET", INFER, None, None, 405, "infer takes POST"),
    ("POST metadata", "POST", "/v2/models/fashion_mlp", "{}", None, 405, "takes GET"),
    ("POST health", "POST", "/v2/health/live", "{}", None, 405, "takes GET"),
    ("unknown path", "GET", "/v1/models", None, None, 404, "unknown path"),
    ("unknown model path", "GET", "/v2/models/fashion_mlp/explain", None, None, 404,
     "unknown path"),
    ("trailing data", "POST", INFER, infer_body(0, 1) + " x", None, 400,
     "data after the JSON value"),
    ("two values", "POST", INFER, infer_body(0, 1) + infer_body(0, 1), None, 400,
     "data after the JSON value"),
    ("duplicate key", "POST", INFER, infer_body(0, 1)[:-1] + ', "inputs": []}', None, 400,
     "key \"inputs\" given twice in one object"),
    ("duplicate input key", "POST", INFER,
     with_input().replace('"name": "input"', '"name": "input", "name": "other"'), None, 400,
     "key \"name\" given twice"),
    ("NUL escape", "POST", INFER, with_input(name="input\u0000x"), None, 400,
     "\\u0000 (NUL) in a string is not accepted"),
    ("over f32", "POST", INFER, with_input(data=[3.5e38] + [0.5] * 783), None, 400,
     "out of the datatype's finite range"),
    ("JSON 1e999", "POST", INFER, with_input(data=[0.5] * 783).replace("0.5]", "1e999]"), None,
     400, "out of the datatype's finite range"),
    ("wrong content type", "POST", INFER, infer_body(0, 1), {"Content-Type": "text/xml"}, 415,
     "Content-Type 'text/xml' is not supported"),
    ("content encoding", "POST", INFER, infer_body(0, 1), {"Content-Encoding": "gzip"}, 415,
     "Content-Encoding 'gzip' is not supported"),
    ("binary header inside the JSON", "POST", INFER, infer_body(0, 1),
     {"Inference-Header-Content-Length": "10"}, 400, "malformed JSON"),
]
for what, method, path, body, headers, want, msg in cases:
    st, js, ct = request(method, path, body, headers)
    ok = st == want and isinstance(js, dict) and msg in js.get("error", "") and \
        ct == "application/json"
    check(ok, "%s: want %d '%s', got %d %s" % (what, want, msg, st, js))
    check(alive(), "alive after " + what)


def raw(data, shut=True, read=True):
    """Sends `data` on a new connection and reads until the server closes
    (b"" when it closed or reset the connection without a reply)."""
    s = socket.create_connection(("127.0.0.1", PORT), timeout=10)
    try:
        s.sendall(data)
        if shut:
            s.shutdown(socket.SHUT_WR)
    except OSError:  # the server closed the connection while we sent
        pass
    got = b""
    if read:
        try:
            while True:
                b = s.recv(65536)
                if not b:
                    break
                got += b
        except (socket.timeout, ConnectionResetError):
            pass
    s.close()
    return got


# A body cut short (Content-Length promises more, then the client closes).
raw(b"POST " + INFER.encode() + b" HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
    b"Content-Length: 5000\r\n\r\n{\"inputs\": [")
check(alive(), "alive after a truncated body")
# Chunked upload over the limit (no Content-Length to refuse early).
got = raw(b"POST " + INFER.encode() + b" HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n"
          b"Connection: close\r\n\r\n" +
          b"".join(b"%x\r\n%s\r\n" % (65536, b"1" * 65536) for _ in range(20)) + b"0\r\n\r\n")
# HTTP allows no reply before the body ends: the server closes the
# connection as soon as the limit is passed instead of reading on
check(got == b"", "chunked body over the limit: connection closed, no reply (%r)" % got[:40])
check(alive(), "alive after an oversized chunked body")
t0 = time.time()
s_ = socket.create_connection(("127.0.0.1", PORT), timeout=10)
s_.sendall(b"POST " + INFER.encode() + b" HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n")
sent = 0
try:
    while sent < 64 * LIMIT:  # an endless chunked body: cut at the limit
        s_.sendall(b"%x\r\n%s\r\n" % (65536, b"1" * 65536))
        sent += 65536
except OSError:
    pass
s_.close()
check(sent <= 4 * LIMIT, "an endless chunked body cut after %d bytes (limit %d), %.2f s" %
      (sent, LIMIT, time.time() - t0))
# Nested data must have the shape's structure; the body must be UTF-8.
row = [float("%.9g" % v) for v in X[:784]]
for data, shape, want in [([row[:392], row[392:]], [1, 784], 400),
                          ([row], [1, 784], 200),
                          ([[row[:392], row[392:]]], [1, 784], 400),
                          ([row, row], [2, 784], 200),
                          ([row[:1], row[1:]], [1, 784], 400)]:
    st, js, _ = request("POST", INFER, json.dumps(
        {"inputs": [{"name": "input", "shape": shape, "datatype": "FP32", "data": data}]}))
    check(st == want and (want == 200 or "does not match the shape" in js["error"] or
                          "nests deeper than the tensor" in js["error"]),
          "nested data %s as %s: want %d, got %d %s" % (
              [len(d) if isinstance(d, list) else 1 for d in data], shape, want, st, js))
st, js, _ = request("POST", INFER, b'{"id": "\xff\xc0\x80", ' + infer_body(0, 1).encode()[1:])
check(st == 400 and "not valid UTF-8" in js["error"], "invalid UTF-8: %d %s" % (st, js))
st, js, _ = request("POST", INFER, b'{"id": "a\x01b", ' + infer_body(0, 1).encode()[1:])
check(st == 400 and "control character" in js["error"], "raw control character: %d %s" % (st, js))
st, js, _ = request("POST", INFER, b'{"id": "a\\u0001b", ' + infer_body(0, 1).encode()[1:])
check(st == 200 and js.get("id") == "a\x01b", "escaped control character: %d %s" % (st, js))
# A Content-Length over the limit is refused before the body is sent (the
# client sends headers only and gets 413 at once).
t0 = time.time()
got = raw(b"POST " + INFER.encode() + b" HTTP/1.1\r\nHost: x\r\nContent-Type: application/json"
          b"\r\nContent-Length: %d\r\n\r\n" % (LIMIT + 1), shut=False)
check(got.startswith(b"HTTP/1.1 413") and b"over the limit of 1048576 bytes" in got and
      time.time() - t0 < 5, "early 413 from Content-Length: %r" % got[:200])
got = raw(b"POST " + INFER.encode() + b" HTTP/1.1\r\nHost: x\r\nContent-Type: application/json"
          b"\r\nContent-Length: 99999999999999999999999\r\n\r\n", shut=False)
check(got.startswith(b"HTTP/1.1 4"), "huge Content-Length: %r" % got[:80])
check(alive(), "alive after early 413s")
# Garbage request line, bad Content-Length header.
got = raw(b"HELLO WORLD\r\n\r\n")
check(got == b"" or got.startswith(b"HTTP/1.1 4"), "garbage request line")
got = raw(b"POST " + INFER.encode() + b" HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n{}")
check(got == b"" or got.startswith(b"HTTP/1.1 4"), "bad Content-Length: %r" % got[:40])
check(alive(), "alive after garbage")
st, js, _ = request("POST", INFER, infer_body(7, 3))
check(st == 200 and reply_matches(js, 7, 3), "infer after the malformed requests")

# ---- statistics, then SIGTERM ----
st, js, _ = request("GET", "/v2/models/fashion_mlp/stats")
check(st == 200 and js["requests"] >= 3 + 16 * 12 and js["batch_size"] == 8 and
      js["runs"] >= 1 and js["latency_ms"]["p50"] <= js["latency_ms"]["p99"] and
      js["http"]["4xx"] >= len(cases), "stats %s" % js)
srv.send_signal(15)
try:
    rc = srv.wait(timeout=60)
except subprocess.TimeoutExpired:
    srv.kill()
    rc = "hung"
check(rc == 0, "clean exit on SIGTERM (rc %s)" % rc)
log = open(os.path.join(WORK, "serve.log")).read()
check("SIGTERM: finishing the requests in flight" in log, "shut-down line")
check("rows/run" in log and "http 2xx" in log, "statistics printed on exit")
check("POST /v2/models/fashion_mlp/infer 200" in log, "one log line per request (--verbose)")
check("400 in" in log and "malformed JSON" in log, "error lines carry the message")

# ---- a server under abuse: connection limit (503), header and body
# deadlines that a client sending a byte now and then cannot stretch ----
srv = subprocess.Popen([DMLC, "serve", pkg, "--name", "fashion_mlp", "--port", "0",
                        "--max-connections", "2", "--header-timeout", "1",
                        "--body-timeout", "1"],
                       stdout=subprocess.PIPE, stderr=open(os.path.join(WORK, "serve2.log"), "w"),
                       text=True)
line = srv.stdout.readline()
PORT = int(line.split("127.0.0.1:")[1].split(" ")[0])
idle = [socket.create_connection(("127.0.0.1", PORT), timeout=10) for _ in range(2)]
time.sleep(0.3)
got = raw(b"GET /v2/models/fashion_mlp HTTP/1.1\r\nHost: x\r\n\r\n", shut=False)
check(got.startswith(b"HTTP/1.1 503") and b"the limit is 2 (--max-connections)" in got,
      "503 beyond --max-connections: %r" % got[:300])
# health checks are answered even beyond the limit (a failing probe would
# restart a server that serves its clients)
got = raw(b"GET /v2/health/live HTTP/1.1\r\nHost: x\r\n\r\n", shut=False)
check(got.startswith(b"HTTP/1.1 200"), "health check beyond --max-connections: %r" % got[:100])
for s_ in idle:
    s_.close()
time.sleep(0.5)
check(alive(), "served again once connections closed")


def cut_after(data, drip):
    """Sends `data`, then a byte of `drip` every 0.3 s; the seconds until the
    server closes the connection (None: still open after 6 s)."""
    s_ = socket.create_connection(("127.0.0.1", PORT), timeout=10)
    s_.sendall(data)
    t0 = time.time()
    s_.settimeout(0.3)
    k = 0
    while time.time() - t0 < 6:
        try:
            if s_.recv(4096) == b"":
                s_.close()
                return time.time() - t0
        except socket.timeout:
            pass
        except OSError:
            s_.close()
            return time.time() - t0
        try:
            s_.sendall(drip[k % len(drip):k % len(drip) + 1])
        except OSError:
            s_.close()
            return time.time() - t0
        k += 1
    s_.close()
    return None


t = cut_after(b"GET /v2/health/live HTTP/1.1\r\n", b"X-Slow: aaaaaaaaaaaaaaaaaaaaaaaaaaaa")
check(t is not None and t < 3, "slow headers closed after --header-timeout 1 (%s s)" % t)
t = cut_after(b"POST " + INFER.encode() + b" HTTP/1.1\r\nHost: x\r\nContent-Type: "
              b"application/json\r\nContent-Length: 5000\r\n\r\n{", b"[[[[[[[[[[[[")
check(t is not None and t < 3, "slow body closed after --body-timeout 1 (%s s)" % t)
check(alive(), "alive after cutting slow connections")
srv.send_signal(15)
try:
    srv.wait(timeout=60)
except subprocess.TimeoutExpired:
    srv.kill()
log2 = open(os.path.join(WORK, "serve2.log")).read()
check("closing a connection: its request headers took over 1 s" in log2 and
      "closing a connection: its request body took over 1 s" in log2, "cut lines in the log")

if FAILS:
    print("%d failed" % len(FAILS))
    print(log[-3000:])
    sys.exit(1)
print("all passed")
