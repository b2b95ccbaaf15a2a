#!/usr/bin/python3
"""`dmlc serve` holding 10,000 idle connections (python3 standard library
only; 127.0.0.1 only).

    test_idle_flood.py DMLC SHARED_DIR SOURCE_DIR WORK_DIR [N (10000)]
                       [SANITIZER (CMake's DMLC_SANITIZE)]

Starts `dmlc serve` with its default connection limit and a 60 s header
timeout (so nothing is cut during the test), opens N connections that send
nothing (N is lowered to what this process's open-file limit allows, and
to 1,000 under a sanitizer, saying so), and while they are all open:
  - a health checker opens a new connection every 20 ms for
    GET /v2/health/ready;
  - an inference client opens a new connection per request (1..4 rows);
for 8 s. Every reply must be 200 (inference bit-identical to `dmlc run`),
the p99 latency under 1 s, the idle connections all still open, and the
server must not have started a thread per connection (it runs epoll with
a few threads: docs/serving.md). Prints the figures: latencies, the
server's threads and resident memory at rest and with the connections
open (per connection).
"""
import http.client
import json
import os
import random
import resource
import socket
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from serve_util import FAILS, Fashion, check, start_server, vm  # noqa: E402

DMLC, SHARED, SOURCE, WORK = sys.argv[1:5]
N = int(sys.argv[5]) if len(sys.argv) > 5 else 10000
SANITIZED = len(sys.argv) > 6 and sys.argv[6].upper() not in ("", "OFF", "0", "FALSE", "NO")
if SANITIZED and N > 1000:
    print("under a sanitizer: %d idle connections, not %d" % (1000, N))
    N = 1000
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
want = N + 256
if soft < want:
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(want, hard), hard))
    soft = min(want, hard)
if soft < want:
    print("open-file limit %d: %d idle connections, not %d" % (soft, soft - 256, N))
    N = soft - 256

F = Fashion(DMLC, SHARED, SOURCE, WORK)
srv, line, PORT = start_server(
    DMLC, [F.pkg, "--name", "fashion_mlp", "--port", "0", "--header-timeout", "60", "--quiet"],
    os.path.join(WORK, "flood.log"))
check(line.startswith("listening on http://127.0.0.1:"), "listening line")
INFER = "/v2/models/fashion_mlp/infer"


def threads_of(pid):
    with open("/proc/%d/status" % pid) as f:
        for ln in f:
            if ln.startswith("Threads:"):
                return int(ln.split()[1])
    return 0


def get(path, body=None):
    c = http.client.HTTPConnection("127.0.0.1", PORT, timeout=10)
    c.request("POST" if body else "GET", path, body=body,
              headers={"Content-Type": "application/json"} if body else {})
    r = c.getresponse()
    data = r.read()
    c.close()
    return r.status, data


try:
    check(get(INFER, F.infer_body(0, 1))[0] == 200, "warm-up request")
    time.sleep(0.3)
    rss0, thr0 = vm(srv.pid, "VmRSS"), threads_of(srv.pid)
    t0 = time.monotonic()
    idle = []
    for i in range(N):
        idle.append(socket.create_connection(("127.0.0.1", PORT), timeout=10))
    t_open = time.monotonic() - t0
    time.sleep(1.0)  # the server accepts them all
    stop = threading.Event()
    lat = {"health": [], "infer": []}
    bad = []

    def health():
        while not stop.is_set():
            t = time.monotonic()
            try:
                st, data = get("/v2/health/ready")
                ok = st == 200 and json.loads(data) == {"ready": True}
            except OSError as e:
                ok, data = False, repr(e).encode()
            lat["health"].append(time.monotonic() - t)
            if not ok:
                bad.append(("health", data[:100]))
            time.sleep(0.02)

    def infer():
        rnd = random.Random(5)
        while not stop.is_set():
            n = rnd.randint(1, 4)
            r0 = rnd.randint(0, F.ROWS - n)
            t = time.monotonic()
            try:
                st, data = get(INFER, F.infer_body(r0, n))
                ok = st == 200 and F.reply_ok(json.loads(data), r0, n)
            except OSError as e:
                ok, data = False, repr(e).encode()
            lat["infer"].append(time.monotonic() - t)
            if not ok:
                bad.append(("infer", data[:100]))

    ths = [threading.Thread(target=health), threading.Thread(target=infer)]
    for t in ths:
        t.start()
    time.sleep(8)
    rss1, thr1 = vm(srv.pid, "VmRSS"), threads_of(srv.pid)
    stop.set()
    for t in ths:
        t.join()
    # every idle connection still open: the server has not closed any
    closed = 0
    for s in idle:
        s.setblocking(False)
        try:
            if s.recv(1) == b"":
                closed += 1
        except BlockingIOError:
            pass
        except OSError:
            closed += 1
    for s in idle:
        s.close()
    check(not bad, "%d failed replies while %d connections were idle: %s" %
          (len(bad), N, bad[:3]))
    check(closed == 0, "%d of the idle connections were closed" % closed)
    check(thr1 <= thr0 + 4, "threads %d at rest, %d with %d connections open: a thread per "
          "connection?" % (thr0, thr1, N))
    for k in ("health", "infer"):
        v = sorted(lat[k])
        check(len(v) >= 10, "%s: only %d requests in 8 s" % (k, len(v)))
        if v:
            p50, p99 = v[len(v) // 2], v[min(len(v) - 1, int(len(v) * 0.99))]
            print("%s: %d requests with %d idle connections open, p50 %.1f ms, p99 %.1f ms, "
                  "max %.1f ms" % (k, len(v), N, p50 * 1e3, p99 * 1e3, v[-1] * 1e3))
            check(SANITIZED or p99 < 1.0, "%s p99 %.3f s over 1 s" % (k, p99))
    print("opened %d connections in %.2f s; server threads %d at rest, %d with them open; "
          "RSS %.1f MiB at rest, %.1f MiB with them open (%.1f KiB per connection)" %
          (N, t_open, thr0, thr1, rss0, rss1, (rss1 - rss0) * 1024 / max(N, 1)))
finally:
    srv.terminate()
    rc = srv.wait(timeout=60)
check(rc == 0, "SIGTERM: exit 0, got %s" % rc)
if FAILS:
    print("%d FAILED" % len(FAILS))
    sys.exit(1)
print("OK")
