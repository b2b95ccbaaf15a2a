"""What the `dmlc serve` tests share (python3 standard library only): the
checks' tally, .npy files, the fashion_mlp package and the runtime's own
answer for its saved rows, starting a server, request bodies and bit-exact
reply checks, and the server's memory from /proc."""
import json
import os
import random
import struct
import subprocess

FAILS = []


def check(cond, what):
    """Records a failed check (the test fails at the end) and prints it."""
    if not cond:
        FAILS.append(what)
        print("FAILED:", what, flush=True)


def read_npy(path):
    """(shape, values) of a little-endian float32 C-order .npy file."""
    with open(path, "rb") as f:
        b = f.read()
    assert b[:6] == b"\x93NUMPY", path
    hl = struct.unpack("<H", b[8:10])[0] if b[6] == 1 else struct.unpack("<I", b[8:12])[0]
    off = 10 + hl if b[6] == 1 else 12 + hl
    header = b[off - hl:off].decode("latin1")
    assert "'<f4'" in header and "False" in header, header
    shape = tuple(int(x) for x in header.split("(")[1].split(")")[0].split(",") if x.strip())
    n = 1
    for d in shape:
        n *= d
    return shape, list(struct.unpack("<%df" % n, b[off:off + 4 * n]))


def write_npy(path, shape, vals):
    """Writes float32 values as a C-order .npy file of `shape`."""
    header = "{'descr': '<f4', 'fortran_order': False, 'shape': (%s), }" % (
        ", ".join(str(d) for d in shape) + ("," if len(shape) == 1 else ""))
    header += " " * (63 - (10 + len(header)) % 64) + "\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode("latin1"))
        f.write(struct.pack("<%df" % len(vals), *vals))


class Fashion:
    """fashion_mlp compiled into WORK, its input rows X (ROWS x 784: the
    saved rows of ../shared, else seeded random ones) and REF, `dmlc run`'s
    logits for them (ROWS x 10): the answer every reply must equal bit for
    bit."""

    def __init__(self, dmlc, shared, source, work):
        os.makedirs(work, exist_ok=True)
        onnx = os.path.join(shared, "models", "fashion_mlp.onnx")
        if not os.path.exists(onnx):
            onnx = os.path.join(source, "examples", "fashion_mlp.onnx")
        self.pkg = os.path.join(work, "fashion_mlp.dmlpkg")
        subprocess.run([dmlc, "compile", onnx, "-o", self.pkg], check=True,
                       stdout=subprocess.DEVNULL)
        xin = os.path.join(shared, "models", "fashion_mlp_io", "input_1.npy")
        if os.path.exists(xin):
            shape, self.X = read_npy(xin)
        else:
            rnd = random.Random(7)
            shape, self.X = (64, 784), [rnd.random() for _ in range(64 * 784)]
            xin = os.path.join(work, "x.npy")
            write_npy(xin, shape, self.X)
        self.xin = xin
        self.ROWS = shape[0]
        subprocess.run([dmlc, "run", self.pkg, "--input", xin, "--output-dir", work],
                       check=True, stdout=subprocess.DEVNULL)
        _, self.REF = read_npy(os.path.join(work, "logits.npy"))
        self.REF_BITS = struct.pack("<%df" % len(self.REF), *self.REF)

    def infer_body(self, r0, n):
        """A KServe v2 request for rows r0..r0+n-1 (values as %.9g text)."""
        data = [float("%.9g" % v) for v in self.X[r0 * 784:(r0 + n) * 784]]
        return json.dumps({"inputs": [{"name": "input", "shape": [n, 784],
                                       "datatype": "FP32", "data": data}]}).encode()

    def reply_ok(self, js, r0, n):
        """True when reply `js` holds exactly REF's rows r0..r0+n-1."""
        try:
            out = js["outputs"][0]
            if out["name"] != "logits" or out["shape"] != [n, 10]:
                return False
            return (struct.pack("<%df" % (n * 10), *out["data"]) ==
                    self.REF_BITS[r0 * 40:(r0 + n) * 40])
        except (KeyError, TypeError, IndexError, struct.error):
            return False


def start_server(dmlc, args, log_path):
    """Starts `dmlc serve ARGS`; returns (process, the first stdout line,
    the port it listens on, or None)."""
    srv = subprocess.Popen([dmlc, "serve"] + args, stdout=subprocess.PIPE,
                           stderr=open(log_path, "w"), text=True)
    line = srv.stdout.readline()
    print(line.strip(), flush=True)
    port = None
    if "://127.0.0.1:" in line:
        port = int(line.split("127.0.0.1:")[1].split(" ")[0])
    return srv, line, port


def vm(pid, field):
    """A /proc/PID/status size field (VmRSS, VmHWM) in MiB."""
    with open("/proc/%d/status" % pid) as f:
        for ln in f:
            if ln.startswith(field + ":"):
                return int(ln.split()[1]) / 1024.0
    return 0.0
