#!/usr/bin/python3
"""`dmlc serve` under hostile clients, for a bounded time (python3 standard
library only; 127.0.0.1 only).

    test_soak.py DMLC SHARED_DIR SOURCE_DIR WORK_DIR [SECONDS (default 12)]
                 [SANITIZER (CMake's DMLC_SANITIZE)]

Compiles fashion_mlp, takes the runtime's answer from `dmlc run` on the 64
saved input rows (random rows when ../shared is absent), starts
`dmlc serve --port 0` with a connection limit of 48, header/body
timeouts of 2/3 s and a 2 MiB body limit, then for SECONDS runs at once:
  - slowloris: 12 connections sending their request headers a byte a
    second (the header timeout must cut them; they reconnect);
  - idle: connections opened and left silent, up to the limit minus 8,
    re-opened when the server closes them;
  - beyond the limit: bursts of connections sending a request, which
    must get 503 (or be closed by the server);
  - oversized: a Content-Length of 1 GB, which must get 413 within 1 s;
  - heavy: 1.9 MB bodies of 950,000 numbers (400: the shape needs 784)
    from 4 threads, beyond --max-inflight-body-bytes getting 503;
  - malformed: truncated JSON, trailing data, NUL, wrong types (400);
while a well-behaved client keeps sending 1..4-row inference requests on
one kept-alive connection: every reply must be 200 and bit-identical to
`dmlc run`'s, the p99 latency under 1 s. The server's resident memory
(VmRSS, sampled every 50 ms; VmHWM at the end) must stay under
RSS_BOUND_MB (docs/serving.md, "Memory"). Then /metrics must parse as
Prometheus text (`name{labels} value` lines) and count each kind of
rejection. Prints the figures. Under a sanitizer (ASan, TSan: a slower
server with shadow memory) the latency and memory bounds are printed, not
checked; everything else is.
"""
import http.client
import json
import os
import random
import re
import socket
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from serve_util import FAILS, Fashion, check, start_server, vm as vm_of  # noqa: E402

DMLC, SHARED, SOURCE, WORK = sys.argv[1:5]
SECONDS = float(sys.argv[5]) if len(sys.argv) > 5 else 12.0
SANITIZED = len(sys.argv) > 6 and sys.argv[6].upper() not in ("", "OFF", "0", "FALSE", "NO")
MAX_CONN = 48
MAX_BODY = 2 << 20
# The bound of docs/serving.md ("Memory"), set below from the server's
# resident size at rest.
RSS_BOUND_MB = None

F = Fashion(DMLC, SHARED, SOURCE, WORK)
X, ROWS, infer_body, reply_ok = F.X, F.ROWS, F.infer_body, F.reply_ok
srv, line, PORT = start_server(
    DMLC, [F.pkg, "--name", "fashion_mlp", "--port", "0", "--batch-size", "8",
           "--max-connections", str(MAX_CONN), "--header-timeout", "2", "--body-timeout", "3",
           "--max-body-bytes", str(MAX_BODY), "--quiet"], os.path.join(WORK, "soak.log"))
check(line.startswith("listening on http://127.0.0.1:"), "listening line")
INFER = "/v2/models/fashion_mlp/infer"


def vm(field):
    return vm_of(srv.pid, field)


def one_request(method, path, body=None, headers=None, timeout=10):
    c = http.client.HTTPConnection("127.0.0.1", PORT, timeout=timeout)
    h = {"Content-Type": "application/json"} if body is not None else {}
    h.update(headers or {})
    c.request(method, path, body=body, headers=h)
    r = c.getresponse()
    data = r.read()
    c.close()
    return r.status, data


# warm up, and the resident size at rest
st, _ = one_request("POST", INFER, infer_body(0, 1))
check(st == 200, "warm-up request")
time.sleep(0.3)
RSS_REST = vm("VmRSS")
INFLIGHT = 2 * MAX_BODY
RSS_BOUND_MB = (RSS_REST + 6 * INFLIGHT / 2**20 + 0.5 * (MAX_CONN + MAX_CONN // 4 + 8)
                + 16)

stop = threading.Event()
count = {}
count_lock = threading.Lock()


def tally(key, n=1):
    with count_lock:
        count[key] = count.get(key, 0) + n


def guarded(fn):
    def run(*a):
        try:
            fn(*a)
        except Exception as e:  # a thread's failure is the test's
            check(False, "%s: %r" % (fn.__name__, e))
    return run


lat = []
good_bad = []


@guarded
def good_client():
    rnd = random.Random(1)
    c = http.client.HTTPConnection("127.0.0.1", PORT, timeout=10)
    while not stop.is_set():
        n = rnd.randint(1, 4)
        r0 = rnd.randint(0, ROWS - n)
        body = infer_body(r0, n)
        t0 = time.monotonic()
        c.request("POST", INFER, body=body, headers={"Content-Type": "application/json"})
        r = c.getresponse()
        data = r.read()
        lat.append(time.monotonic() - t0)
        if r.status != 200 or not reply_ok(json.loads(data), r0, n):
            good_bad.append((r0, n, r.status, data[:200]))
        time.sleep(0.005)
    c.close()


@guarded
def slowloris(i):
    req = b"POST " + INFER.encode() + b" HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
    while not stop.is_set():
        s = socket.create_connection(("127.0.0.1", PORT), timeout=5)
        t0 = time.monotonic()
        try:
            for k in range(len(req) * 100):
                if stop.wait(1.0):
                    break
                s.sendall(req[k % len(req):k % len(req) + 1])
        except OSError:  # cut by the server
            tally("slowloris_cut")
            tally("slowloris_cut_after_s", time.monotonic() - t0)
        s.close()


@guarded
def idle_flood():
    socks = []
    while not stop.is_set():
        alive = []
        for s in socks:
            try:
                s.setblocking(False)
                if s.recv(1) == b"":
                    raise ConnectionResetError
                alive.append(s)
            except BlockingIOError:
                alive.append(s)
            except OSError:
                s.close()
                tally("idle_closed_by_server")
        socks = alive
        while len(socks) < MAX_CONN - 8 - 13 and not stop.is_set():
            try:
                socks.append(socket.create_connection(("127.0.0.1", PORT), timeout=5))
                tally("idle_opened")
            except OSError:
                break
        stop.wait(0.2)
    for s in socks:
        s.close()


@guarded
def beyond_limit():
    while not stop.is_set():
        # fill the limit, then one more that must be refused
        extra = []
        try:
            for _ in range(20):
                extra.append(socket.create_connection(("127.0.0.1", PORT), timeout=5))
            probe = socket.create_connection(("127.0.0.1", PORT), timeout=5)
            probe.sendall(b"GET /v2/models/fashion_mlp HTTP/1.1\r\nHost: x\r\n\r\n")
            got = probe.recv(64)
            if got.startswith(b"HTTP/1.1 503"):
                tally("beyond_limit_503")
            elif got == b"":
                tally("beyond_limit_closed")
            else:
                tally("beyond_limit_served")
            probe.close()
        except OSError:
            tally("beyond_limit_closed")
        for s in extra:
            s.close()
        stop.wait(0.5)


@guarded
def oversized():
    while not stop.is_set():
        s = socket.create_connection(("127.0.0.1", PORT), timeout=5)
        t0 = time.monotonic()
        s.sendall(b"POST " + INFER.encode() + b" HTTP/1.1\r\nHost: x\r\n"
                  b"Content-Type: application/json\r\nContent-Length: 1000000000\r\n\r\n{")
        got = s.recv(64)
        dt = time.monotonic() - t0
        s.close()
        # 503 while the limit is filled (a new connection), else 413
        check(got[:12] in (b"HTTP/1.1 413", b"HTTP/1.1 503") and dt < 1.0,
              "1 GB Content-Length: %r after %.3f s" % (got[:20], dt))
        tally("oversized_" + got[9:12].decode())
        stop.wait(0.5)


HEAVY = (b'{"inputs": [{"name": "input", "shape": [1, 784], "datatype": "FP32", "data": ['
         + b",".join([b"0"] * 950000) + b"]}]}")
assert len(HEAVY) < MAX_BODY


@guarded
def heavy():
    while not stop.is_set():
        try:
            st, data = one_request("POST", INFER, HEAVY, timeout=20)
        except (BrokenPipeError, ConnectionResetError):
            # 503 (in-flight bytes or connections) sent and the connection
            # closed before the body was read: the rest of it is refused
            tally("heavy_refused_while_sending")
            stop.wait(0.01)
            continue
        tally("heavy_%d" % st)
        check(st in (400, 503), "heavy body: %d %r" % (st, data[:100]))


MALFORMED = [b'{"inputs": [', b'{"inputs": []} x', b'{"inputs"\x00: []}', b"[1,2,3]",
             b'{"inputs": [{"name": "input", "shape": [1, 784], "datatype": "FP32", '
             b'"data": "abc"}]}', b"", b"{" * 5000, b'{"inputs": [{"name": 7}]}']


@guarded
def malformed():
    rnd = random.Random(3)
    while not stop.is_set():
        body = rnd.choice(MALFORMED)
        st, _ = one_request("POST", INFER, body)
        check(st in (400, 503), "malformed body %r: %d" % (body[:40], st))
        tally("malformed_%d" % st)
        stop.wait(0.02)


rss_peak = [0.0]


def rss_watch():
    while not stop.wait(0.05):
        try:
            rss_peak[0] = max(rss_peak[0], vm("VmRSS"))
        except OSError:
            return


threads = [threading.Thread(target=good_client)]
threads += [threading.Thread(target=slowloris, args=(i,)) for i in range(12)]
threads += [threading.Thread(target=f) for f in (idle_flood, beyond_limit, oversized,
                                                  malformed, rss_watch)]
threads += [threading.Thread(target=heavy) for _ in range(4)]
t_start = time.monotonic()
for t in threads:
    t.start()
stop.wait(SECONDS)
stop.set()
for t in threads:
    t.join(30)
    check(not t.is_alive(), "a client thread did not stop")
elapsed = time.monotonic() - t_start

# the server still serves, and /metrics counts what happened
st, _ = one_request("GET", "/v2/health/ready")
check(st == 200, "ready after the soak")
st, text = one_request("GET", "/metrics")
check(st == 200, "/metrics")
metrics = {}
line_re = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[a-zA-Z_][a-zA-Z0-9_]*="[^"]*"'
                     r'(,[a-zA-Z_][a-zA-Z0-9_]*="[^"]*")*\})? (-?[0-9.eE+-]+|\+Inf|NaN)$')
for ln in text.decode().splitlines():
    if ln.startswith("# HELP ") or ln.startswith("# TYPE "):
        continue
    m = line_re.match(ln)
    check(m is not None, "/metrics line does not parse: %r" % ln)
    if m:
        metrics[m.group(1) + (m.group(2) or "")] = float(m.group(4))


def metric(name):
    return metrics.get(name, 0)


for reason in ("body_too_large", "connection_limit", "timeout", "bad_json"):
    check(metric('dmlc_http_rejected_total{reason="%s"}' % reason) > 0,
          "/metrics counts rejections for %s" % reason)
check(metric('dmlc_http_requests_total{code="200"}') >= len(lat) - len(good_bad),
      "/metrics counts the good client's 200s")
check(metric("dmlc_http_request_duration_seconds_count") > 0, "/metrics latency histogram")

rss_peak[0] = max(rss_peak[0], vm("VmHWM"))  # the kernel's peak, between samples too
srv.terminate()
check(srv.wait(30) == 0, "clean exit on SIGTERM")

lat.sort()
p50 = lat[len(lat) // 2] if lat else float("inf")
p99 = lat[min(len(lat) - 1, int(len(lat) * 0.99))] if lat else float("inf")
check(len(lat) >= 20, "the good client got only %d replies in %.0f s" % (len(lat), elapsed))
check(not good_bad, "good client: %d wrong or failed replies, first %r" %
      (len(good_bad), good_bad[:1]))
check(SANITIZED or p99 < 1.0, "good client p99 %.3f s >= 1 s" % p99)
check(SANITIZED or rss_peak[0] < RSS_BOUND_MB, "server RSS peak %.1f MiB over the bound %.1f MiB" %
      (rss_peak[0], RSS_BOUND_MB))
check(count.get("slowloris_cut", 0) > 0, "slowloris connections were cut")
# (a probe is served when the deadlines cut idle connections meanwhile)
check(count.get("beyond_limit_503", 0) > 0, "connections beyond the limit get 503")
check(count.get("heavy_503", 0) + count.get("heavy_400", 0) > 0, "heavy bodies answered")
check(count.get("oversized_413", 0) > 0, "oversized bodies refused with 413")
check(count.get("malformed_400", 0) > 0, "malformed bodies refused with 400")

print("soak %.1f s: good client %d requests, p50 %.1f ms, p99 %.1f ms, max %.1f ms, wrong %d"
      % (elapsed, len(lat), p50 * 1e3, p99 * 1e3, (lat[-1] if lat else 0) * 1e3,
         len(good_bad)))
print("server RSS: at rest %.1f MiB, peak %.1f MiB (bound %.1f MiB)%s"
      % (RSS_REST, rss_peak[0], RSS_BOUND_MB,
         " (sanitizer build: latency and memory not checked)" if SANITIZED else ""))
if count.get("slowloris_cut"):
    count["slowloris_cut_mean_s"] = count.pop("slowloris_cut_after_s") / count["slowloris_cut"]
print("clients: " + ", ".join("%s %s" % (k, ("%.1f" % v) if isinstance(v, float) else v)
                               for k, v in sorted(count.items())))
print("metrics: " + ", ".join("%s %g" % (k, v) for k, v in sorted(metrics.items())
                               if "rejected" in k or "requests_total" in k))
if FAILS:
    print("%d FAILED" % len(FAILS))
    sys.exit(1)
print("OK")
