#!/usr/bin/python3
"""Malformed-request fuzz pass against a running `dmlc serve` (fashion_mlp).

    serve_fuzz.py PORT [N [SEED]]     (default 3000 requests, seed 1)

Sends N requests drawn from: random bytes as the body, valid infer bodies
cut at a random byte, valid bodies with one byte flipped, JSON mutations
(wrong datatype, shape, counts, value types, names, nesting), random
headers (Content-Type, Content-Encoding, bogus or lying Content-Length,
Transfer-Encoding), random methods and paths, raw garbage on the socket and
connections closed mid-body. Every answer must be an HTTP status below 500
(a 4xx carrying a JSON {"error": ...}, or 200 for a mutation that stays
valid), or no answer where the connection was cut on purpose; the server
must answer /v2/health/live after every 100 requests and at the end.
Prints counts per outcome; exits 1 on a 5xx, a non-JSON 4xx from the
application, or a dead server.
"""
import http.client
import json
import random
import socket
import sys

PORT = int(sys.argv[1])
N = int(sys.argv[2]) if len(sys.argv) > 2 else 3000
rnd = random.Random(int(sys.argv[3]) if len(sys.argv) > 3 else 1)
INFER = "/v2/models/fashion_mlp/infer"
PATHS = [INFER, "/v2/models/fashion_mlp", "/v2/models/fashion_mlp/ready", "/v2/health/live",
         "/v2/health/ready", "/v2", "/v2/models/fashion_mlp/versions/1/infer",
         "/v2/models/other/infer", "/v2/models//infer", "/" + "a" * 3000, "/v2/models/fashion_mlp/infer?x=1",
         "/v2/models/fashion_mlp/stats", "/%00", "/v2/../etc/passwd"]
counts = {}
failures = []


def count(k):
    counts[k] = counts.get(k, 0) + 1


def valid_body(rows=None):
    rows = rows or rnd.randint(1, 4)
    return {"id": str(rnd.random()), "inputs": [{"name": "input", "shape": [rows, 784],
                                                "datatype": "FP32",
                                                "data": [rnd.random() for _ in range(rows * 784)]}]}


def mutate(b):
    i = b["inputs"][0]
    k = rnd.randrange(16)
    if k == 0:
        i["datatype"] = rnd.choice(["FP64", "INT64", "BOOL", "BYTES", "fp32", "", "UINT8"])
    elif k == 1:
        i["shape"] = [rnd.choice([-1, 0, 1, 2, 783, 785, 10 ** 12, 2 ** 63]) for _ in range(rnd.randint(0, 4))]
    elif k == 2:
        del i["data"][rnd.randrange(len(i["data"])):]
    elif k == 3:
        i["data"][rnd.randrange(len(i["data"]))] = rnd.choice(["x", None, {}, [], True, 1e309 if False else 1e38])
    elif k == 4:
        i["name"] = rnd.choice(["", "inputs", "input ", 5, None])
    elif k == 5:
        i["data"] = [i["data"]] * rnd.randint(1, 3)
    elif k == 6:
        b["inputs"] = rnd.choice([[], {}, None, "input", [i, i]])
    elif k == 7:
        b["outputs"] = rnd.choice([[{"name": "logits"}], [{"name": "nope"}], [{}], "logits", [5]])
    elif k == 8:
        del b["inputs"]
    elif k == 9:
        b["id"] = rnd.choice([5, None, [], "\u0000\u2028"])
    elif k == 10:
        i["data"] = [[[[[[[[[[1.0]]]]]]]]]]
    elif k == 11:
        i.pop(rnd.choice(["name", "shape", "datatype", "data"]))
    elif k == 12:
        i["shape"] = "[1,784]"
    elif k == 13:
        i["data"] = {"a": 1}
    elif k == 14:
        b["parameters"] = {"binary_data_output": True}
    else:
        b = rnd.choice([[], 5, "str", None, True])
    return json.dumps(b)


def http_request(method, path, body, headers):
    c = http.client.HTTPConnection("127.0.0.1", PORT, timeout=30)
    c.putrequest(method, path, skip_accept_encoding=True)
    for k, v in headers.items():
        c.putheader(k, v)
    c.endheaders()
    if body:
        c.send(body)
    r = c.getresponse()
    data = r.read()
    c.close()
    return r.status, data, r.getheader("Content-Type") or ""


def raw(data, read=True):
    s = socket.create_connection(("127.0.0.1", PORT), timeout=30)
    try:
        s.sendall(data)
        s.shutdown(socket.SHUT_WR)
        got = b""
        while read:
            b = s.recv(65536)
            if not b:
                break
            got += b
        return got
    except OSError:
        return b""
    finally:
        s.close()


def alive():
    try:
        c = http.client.HTTPConnection("127.0.0.1", PORT, timeout=30)
        c.request("GET", "/v2/health/live")
        ok = c.getresponse().status == 200
        c.close()
        return ok
    except OSError:
        return False


for it in range(N):
    kind = rnd.randrange(8)
    try:
        if kind == 0:  # random bytes
            body = bytes(rnd.randrange(256) for _ in range(rnd.randint(0, 4000)))
            st, data, ct = http_request("POST", INFER, body, {"Content-Length": str(len(body)),
                                                              "Content-Type": "application/json"})
        elif kind == 1:  # valid body cut short (Content-Length tells the truth)
            body = json.dumps(valid_body()).encode()
            body = body[:rnd.randrange(len(body))]
            st, data, ct = http_request("POST", INFER, body, {"Content-Length": str(len(body))})
        elif kind == 2:  # one byte flipped
            body = bytearray(json.dumps(valid_body(1)).encode())
            body[rnd.randrange(len(body))] = rnd.randrange(256)
            st, data, ct = http_request("POST", INFER, bytes(body), {"Content-Length": str(len(body))})
        elif kind == 3:  # JSON mutations
            body = mutate(valid_body()).encode()
            st, data, ct = http_request("POST", INFER, body, {"Content-Length": str(len(body)),
                                                              "Content-Type": "application/json"})
        elif kind == 4:  # random headers on a valid body
            body = json.dumps(valid_body(1)).encode()
            h = {"Content-Length": str(len(body))}
            for _ in range(rnd.randint(1, 3)):
                name = rnd.choice(["Content-Type", "Content-Encoding", "Accept", "Expect",
                                   "Inference-Header-Content-Length", "X-" + "a" * 100,
                                   "Connection"])
                h[name] = rnd.choice(["application/json", "text/plain", "gzip", "multipart/form-data",
                                      "100-continue", "close", "", "\x01", "a" * 2000, "-1"])
            st, data, ct = http_request("POST", INFER, body, h)
        elif kind == 5:  # random method and path
            method = rnd.choice(["GET", "POST", "PUT", "DELETE", "PATCH", "OPTIONS", "HEAD", "FOO"])
            body = b"{}" if method in ("POST", "PUT") else None
            h = {"Content-Length": "2"} if body else {}
            st, data, ct = http_request(method, rnd.choice(PATHS), body, h)
            if method == "HEAD":  # no body by HTTP's rules
                count(st)
                continue
        elif kind == 6:  # lying Content-Length, closed mid-body: no answer expected
            body = json.dumps(valid_body(1)).encode()
            cut = rnd.randrange(len(body))
            raw(b"POST %s HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n" % (INFER.encode(), len(body))
                + body[:cut], read=rnd.random() < 0.5)
            count("cut connection")
            continue
        else:  # raw garbage / broken framing
            junk = rnd.choice([
                bytes(rnd.randrange(256) for _ in range(rnd.randint(1, 2000))),
                b"POST " + INFER.encode() + b" HTTP/1.1\r\nContent-Length: -5\r\n\r\n",
                b"POST " + INFER.encode() + b" HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
                b"GET /v2 HTTP/9.9\r\n\r\n",
                b"POST " + INFER.encode() + b" HTTP/1.1\r\nHost: x\r\n" + b"X: y\r\n" * 2000 + b"\r\n",
                b"\r\n\r\n\r\n",
            ])
            got = raw(junk)
            # libmicrohttpd's own protocol errors (400, 413, 431, 505 for
            # HTTP/9.9) are right; a 500 would not be.
            if got.startswith(b"HTTP/1.1 500") or got.startswith(b"HTTP/1.0 500"):
                failures.append("raw: %r -> %r" % (junk[:60], got[:60]))
            count("raw")
            continue
    except (OSError, http.client.HTTPException) as e:
        # A reply the server refused to finish (e.g. an oversized header) is
        # a closed connection; the liveness check below is what counts.
        count("connection closed (%s)" % type(e).__name__)
        continue
    if st >= 500 and st != 503:
        failures.append("kind %d: %d %r" % (kind, st, data[:200]))
    if 400 <= st < 500 and "application/json" in ct:
        try:
            if "error" not in json.loads(data):
                failures.append("kind %d: %d without an error message" % (kind, st))
        except ValueError:
            failures.append("kind %d: %d with a body that is not JSON" % (kind, st))
    count(st)
    if it % 100 == 99 and not alive():
        failures.append("server not alive after request %d" % it)
        break

if not alive():
    failures.append("server not alive at the end")
print("fuzz: %d requests, outcomes %s" % (N, dict(sorted(counts.items(), key=str))))
for f in failures[:20]:
    print("FAILURE:", f)
print("fuzz: %s" % ("FAILED" if failures else "ok: no 5xx, every 4xx a JSON error, server alive"))
sys.exit(1 if failures else 0)
