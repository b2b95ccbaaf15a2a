#!/usr/bin/python3
"""`dmlc serve`'s resident memory over rounds of large requests (python3
standard library only; 127.0.0.1 only).

    test_memory.py DMLC SHARED_DIR SOURCE_DIR WORK_DIR [SANITIZER]

Six rounds of three concurrent 13 MB requests (1,920 rows each, answered
200); VmRSS is read 0.6 s after each round. Freed bodies, tensors and
replies must go back to the system: the resident size after the last round
within 8 MiB of the size after the first (before the fix: 23, 91, 143,
155, 172, 205 MiB; after: 11.4 to 11.8 MiB). Under a sanitizer (its own
allocator) the figures are printed, not checked.
"""
import http.client
import json
import os
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from serve_util import FAILS, Fashion, check, start_server, vm  # noqa: E402

DMLC, SHARED, SOURCE, WORK = sys.argv[1:5]
SANITIZED = len(sys.argv) > 5 and sys.argv[5].upper() not in ("", "OFF", "0", "FALSE", "NO")
F = Fashion(DMLC, SHARED, SOURCE, WORK)
srv, line, PORT = start_server(
    DMLC, [F.pkg, "--name", "fashion_mlp", "--port", "0", "--quiet", "--max-body-bytes",
           str(32 << 20), "--max-inflight-body-bytes", str(128 << 20)],
    os.path.join(WORK, "memory.log"))
big = json.loads(F.infer_body(0, 64))
big["inputs"][0]["data"] = big["inputs"][0]["data"] * 30
big["inputs"][0]["shape"] = [64 * 30, 784]
big = json.dumps(big).encode()
status = []


def post():
    c = http.client.HTTPConnection("127.0.0.1", PORT, timeout=300)
    c.request("POST", "/v2/models/fashion_mlp/infer", body=big,
              headers={"Content-Type": "application/json"})
    r = c.getresponse()
    r.read()
    c.close()
    status.append(r.status)


rss = []
try:
    for rnd in range(6):
        ths = [threading.Thread(target=post) for _ in range(3)]
        for t in ths:
            t.start()
        for t in ths:
            t.join()
        time.sleep(0.6)  # the server trims every 0.25 s
        rss.append(vm(srv.pid, "VmRSS"))
    hwm = vm(srv.pid, "VmHWM")
finally:
    srv.terminate()
    rc = srv.wait(timeout=60)
print("body %.1f MB; VmRSS after each round (MiB): %s; VmHWM %.1f MiB" %
      (len(big) / 1e6, ", ".join("%.1f" % r for r in rss), hwm))
check(status == [200] * 18, "every request answered 200: %s" % status)
check(SANITIZED or rss[-1] - rss[0] < 8, "resident memory grew by %.1f MiB over the rounds" %
      (rss[-1] - rss[0]))
check(rc == 0, "SIGTERM: exit 0, got %s" % rc)
if FAILS:
    print("%d FAILED" % len(FAILS))
    sys.exit(1)
print("OK")
