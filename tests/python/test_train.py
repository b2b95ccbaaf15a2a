"""Training and serving through the Python package (python/, docs/python.md
"Training" and "Serving"), run by tests/python/test_python.sh after
test_dmlc.py:

    DMLC_SHARED_DIR=SHARED_DIR DMLC_BIN=prefix/bin/dmlc python test_train.py

Data: the first 1,000 Fashion-MNIST training images (Debian's
dataset-fashion-mnist under /usr/share/datasets/fashion-mnist, else
SHARED_DIR/datasets/fashion-mnist), scaled to [0, 1]; the fit tests are
skipped saying so when neither exists. Tolerances: the Python fit against
`dmlc train` with the same data, settings and seed: every history value
within 1e-6 (the same C trainer runs both: they should be equal); predict
against Session.run of the saved package and Server replies against
Session.run: bit-equal (rows are computed independently, dml_serve.h).
"""
import gzip
import math
import os
import struct
import subprocess
import tempfile
import threading
import unittest

import numpy as np

import dmlc

SHARED = os.environ.get("DMLC_SHARED_DIR", "")
DMLC_BIN = os.environ.get("DMLC_BIN", "")
HERE = os.path.dirname(os.path.abspath(__file__))
UNTRAINED = os.path.join(SHARED, "models", "fashion_mlp_untrained.onnx")
TRAINED = os.path.join(SHARED, "models", "fashion_mlp.onnx")
TWO_HEAD = os.path.join(HERE, "..", "train", "two_head.onnx")
ROWS = 1000


def _idx(path):
    with gzip.open(path, "rb") as f:
        data = f.read()
    magic, = struct.unpack(">i", data[:4])
    ndim = magic & 0xFF
    dims = struct.unpack(">" + "i" * ndim, data[4:4 + 4 * ndim])
    return np.frombuffer(data, np.uint8, offset=4 + 4 * ndim).reshape(dims)


def fashion():
    """(x f32 [ROWS, 784] in [0, 1], y uint8 [ROWS]) or None."""
    for d in ("/usr/share/datasets/fashion-mnist",
              os.path.join(SHARED, "datasets", "fashion-mnist")):
        img = os.path.join(d, "train-images-idx3-ubyte.gz")
        lab = os.path.join(d, "train-labels-idx1-ubyte.gz")
        if os.path.exists(img) and os.path.exists(lab):
            x = _idx(img)[:ROWS].reshape(ROWS, 784).astype(np.float32) / np.float32(255)
            return np.ascontiguousarray(x), _idx(lab)[:ROWS].copy()
    return None


DATA = fashion()
NO_DATA = "Fashion-MNIST not found (/usr/share/datasets/fashion-mnist: apt install " \
          "dataset-fashion-mnist)"

_PKG = {}


def train_package():
    if "mlp" not in _PKG:
        _PKG["mlp"] = dmlc.compile(UNTRAINED, loss="cross_entropy", optimizer="adam")
    return _PKG["mlp"]


def read_csv(path):
    with open(path) as f:
        lines = f.read().strip().split("\n")
    head = lines[0].split(",")
    rows = []
    for line in lines[1:]:
        rows.append(dict(zip(head, line.split(","))))
    return rows


@unittest.skipIf(DATA is None, NO_DATA)
class Fit(unittest.TestCase):
    def test_defaults_from_c(self):
        d = dmlc.TRAIN_DEFAULTS
        self.assertEqual(d["loss"], "cross_entropy")
        self.assertEqual(d["optimizer"], "adam")
        for k in ("epochs", "batch_size", "learning_rate", "validation_split"):
            self.assertIn(k, d)

    def test_fit_matches_cli(self):
        """2 epochs: the loss falls, the history equals `dmlc train`'s CSV
        with the same data, settings and seed, predict equals the CLI's
        trained package run by a Session, evaluate equals the last epoch's
        val_loss on the held-out rows."""
        if not DMLC_BIN:
            self.skipTest("DMLC_BIN not set (the dmlc command to compare with)")
        x, y = DATA
        pkg = train_package()
        self.assertTrue(pkg.trainable)
        tr = pkg.trainer()
        h = tr.fit(x, y, epochs=2, batch_size=32, seed=7)
        self.assertEqual(len(h), 2)
        self.assertLess(h.epochs[1]["loss"], h.epochs[0]["loss"])
        self.assertEqual(h.history["epoch"], [1, 2])
        self.assertEqual(h.validation, "split")
        with tempfile.TemporaryDirectory() as td:
            xp, yp = os.path.join(td, "x.npy"), os.path.join(td, "y.npy")
            np.save(xp, x)
            np.save(yp, y.astype(np.int64))
            csv, out = os.path.join(td, "h.csv"), os.path.join(td, "cli.dmlpkg")
            subprocess.run([DMLC_BIN, "train", UNTRAINED, "--data", "%s,%s" % (xp, yp),
                            "--loss", "cross_entropy", "--optimizer", "adam",
                            "--epochs", "2", "--batch-size", "32", "--seed", "7",
                            "--history", csv, "-o", out, "--quiet"], check=True)
            rows = read_csv(csv)
            self.assertEqual(len(rows), 2)
            for e, r in zip(h.epochs, rows):
                for col in ("loss", "accuracy", "val_loss", "val_accuracy", "lr"):
                    self.assertLessEqual(abs(e[col] - float(r[col])), 1e-6, (col, e, r))
                self.assertEqual(r["validation"], "split")
            cli = dmlc.load(out)
            mine = os.path.join(td, "py.dmlpkg")
            tr.save(mine)
            loaded = dmlc.load(mine)
            self.assertTrue(loaded.trainable)
            # predict over 200 rows (in chunks of the bound 64) == Session.run
            pred = tr.predict(x[:200])
            self.assertEqual(pred.shape, (200, 10))
            for sess in (cli.session(), loaded.session()):
                ref = np.concatenate([sess.run({"input": x[i:i + 50]})["logits"]
                                      for i in range(0, 200, 50)])
                np.testing.assert_array_equal(pred, ref)
            # evaluate on the split's rows (the last 10%) == the last val_loss
            ev = tr.evaluate(x[900:], y[900:])
            self.assertLessEqual(abs(ev["loss"] - h.epochs[-1]["val_loss"]), 1e-6)
            self.assertLessEqual(abs(ev["accuracy"] - h.epochs[-1]["val_accuracy"]), 1e-6)
            # the saved package trains on from its parameters
            ev2 = loaded.trainer().evaluate(x[900:], y[900:])
            self.assertLessEqual(abs(ev2["loss"] - ev["loss"]), 1e-6)

    def test_callbacks(self):
        x, y = DATA[0][:320], DATA[1][:320]
        seen = []

        def stop_after_first(logs):
            seen.append(dict(logs))
            return logs["epoch"] < 1  # False at epoch 1: stop

        tr = train_package().trainer()
        h = tr.fit(x, y, epochs=3, batch_size=32, callbacks=[stop_after_first],
                   validation_data=(DATA[0][900:], DATA[1][900:]))
        self.assertEqual(len(h), 1)
        self.assertTrue(h.stopped_early)
        self.assertEqual(len(seen), 1)
        self.assertEqual(seen[0]["epoch"], 1)
        self.assertEqual(h.validation, "validation")
        self.assertLessEqual(abs(seen[0]["loss"] - h.epochs[0]["loss"]), 0)
        # StopTraining from a per-batch callback: the epoch ends after 3 steps
        batches = []

        def stop_at_three(logs):
            batches.append(logs)
            if logs["batch"] == 3:
                raise dmlc.StopTraining()

        tr2 = train_package().trainer()
        h2 = tr2.fit({"input": x}, {"logits": y}, epochs=2, batch_size=32, validation_split=0,
                     batch_callbacks=[stop_at_three])
        self.assertEqual(len(h2), 1)
        self.assertTrue(h2.stopped_early)
        self.assertEqual([b["batch"] for b in batches], [1, 2, 3])
        self.assertEqual(tr2.step, 3)
        self.assertTrue(math.isnan(h2.epochs[0]["val_loss"]))

    def test_callback_exception_propagates(self):
        x, y = DATA[0][:256], DATA[1][:256]

        def boom(logs):
            raise ValueError("boom at epoch %d" % logs["epoch"])

        tr = train_package().trainer()
        with self.assertRaises(ValueError) as cm:
            tr.fit(x, y, epochs=3, batch_size=64, callbacks=[boom])
        self.assertIn("boom at epoch 1", str(cm.exception))
        self.assertEqual(tr.epoch, 1)  # stopped cleanly after that epoch
        ev = tr.evaluate(x, y)          # and still usable
        self.assertTrue(math.isfinite(ev["loss"]))

        def calls_trainer(logs):
            tr.predict(x[:2])

        with self.assertRaises(dmlc.FailedPreconditionError) as cm:
            tr.fit(x, y, epochs=3, batch_size=64, callbacks=[calls_trainer])
        self.assertIn("inside a fit callback", cm.exception.reason)

    def test_keyboard_interrupt(self):
        """Ctrl-C (here _thread.interrupt_main, the same flag SIGINT sets)
        during a fit without callbacks ends it within about 100 ms."""
        import _thread
        x, y = DATA
        tr = train_package().trainer()
        timer = threading.Timer(0.3, _thread.interrupt_main)
        timer.start()
        try:
            with self.assertRaises(KeyboardInterrupt):
                tr.fit(x, y, epochs=200, batch_size=32, validation_split=0)
        finally:
            timer.cancel()
        self.assertLess(tr.epoch, 200)
        self.assertTrue(math.isfinite(tr.evaluate(x[:100], y[:100])["loss"]))

    def test_schedule_metrics_checkpoint(self):
        x, y = DATA
        tr = train_package().trainer()
        with tempfile.TemporaryDirectory() as td:
            h = tr.fit(x[:500], y[:500], epochs=2, batch_size=50,
                       lr_schedule="step:0.01,1,0.5", metrics=["f1", "top2"],
                       early_stopping={"patience": 5, "monitor": "val_loss"},
                       checkpoint={"dir": td, "every": 1})
            self.assertEqual(h.history["lr"], [0.01, 0.005])
            self.assertIn("val_f1", h.epochs[0])
            self.assertIn("val_top2", h.epochs[0])
            self.assertTrue(os.path.exists(os.path.join(td, "epoch-0002.safetensors")))
            tr2 = train_package().trainer()
            tr2.load_checkpoint(os.path.join(td, "epoch-0002.safetensors"))
            self.assertEqual(tr2.epoch, 2)
            np.testing.assert_array_equal(tr2.predict(x[:10]), tr.predict(x[:10]))

    def test_errors(self):
        x, y = DATA
        with self.assertRaises(dmlc.FailedPreconditionError):
            dmlc.compile(TRAINED).trainer()
        with self.assertRaises(dmlc.InvalidArgumentError) as cm:
            dmlc.compile(UNTRAINED, loss="crossentropy")
        self.assertTrue(cm.exception.reason)
        tr = train_package().trainer()
        with self.assertRaises(dmlc.Error) as cm:
            tr.fit(x[:100], y[:100], epochs=1, batch_size=tr.batch_bound + 1)
        self.assertTrue(cm.exception.op)
        with self.assertRaises(dmlc.InvalidArgumentError):
            tr.fit(x[:100].astype(np.float64), y[:100], epochs=1)  # no unsafe cast
        with self.assertRaises(dmlc.InvalidArgumentError):
            tr.fit(x[:100], y[:100].astype(np.float32), epochs=1)


@unittest.skipIf(DATA is None, NO_DATA)
class Vulkan(unittest.TestCase):
    def setUp(self):
        if not any(d["id"].startswith("vulkan") for d in dmlc.devices()):
            self.skipTest("no Vulkan device (lavapipe: apt install mesa-vulkan-drivers)")

    def test_fit_and_serve_on_vulkan(self):
        """train_step's kernels on the Vulkan device: the same history as the
        CPU within 1e-4 * max(1, |v|) (2 epochs of 512 rows; lavapipe
        measured 2e-5); a Server on Vulkan answers as the CPU session within
        1e-4 relative (as tests/vulkan)."""
        x, y = DATA[0][:512], DATA[1][:512]
        pkg = dmlc.compile(UNTRAINED, target="cpu,vulkan", loss="cross_entropy")
        hc = pkg.trainer("cpu").fit(x, y, epochs=2, batch_size=32)
        tv = pkg.trainer("vulkan")
        hv = tv.fit(x, y, epochs=2, batch_size=32)
        for ec, ev in zip(hc.epochs, hv.epochs):
            for col in ("loss", "val_loss", "accuracy", "val_accuracy"):
                self.assertLessEqual(abs(ec[col] - ev[col]), 1e-4 * max(1, abs(ec[col])),
                                     (col, ec, ev))
        ref = pkg.session().run({"input": x[:9]})["logits"]
        with dmlc.Server(pkg, device="vulkan", batch_size=16) as srv:
            got = srv.run({"input": x[:9]})["logits"]
        self.assertLessEqual(float(np.max(np.abs(got - ref) / np.maximum(1, np.abs(ref)))),
                             1e-4)


class MultiOutput(unittest.TestCase):
    def test_two_head_dicts(self):
        """tests/train/two_head.onnx: inputs a [N,4], b [N,3]; outputs cls
        [N,3] (cross_entropy) and reg [N,1] (mse, weight 0.5)."""
        rng = np.random.default_rng(18)
        n = 512
        a = rng.standard_normal((n, 4)).astype(np.float32)
        b = rng.standard_normal((n, 3)).astype(np.float32)
        cls = np.argmax(a[:, :3] + b, axis=1).astype(np.int64)
        reg = (a.sum(1, keepdims=True) - b[:, :1]).astype(np.float32)
        pkg = dmlc.compile(TWO_HEAD, loss={"cls": "cross_entropy", "reg": ("mse", 0.5)},
                           learning_rate=0.01)
        tr = pkg.trainer()
        self.assertEqual(tr.target_names, ["cls", "reg"])
        h = tr.fit({"a": a, "b": b}, {"cls": cls, "reg": reg}, epochs=4, batch_size=32,
                   validation_split=0.25, metrics=["cls=top2"])
        self.assertTrue(all(0 <= v <= 1 for v in h.history["val_cls_top2"]))
        self.assertLess(h.epochs[-1]["loss"], h.epochs[0]["loss"])
        self.assertLess(h.epochs[-1]["val_cls_loss"], h.epochs[0]["val_cls_loss"])
        for e in h.epochs:
            self.assertLessEqual(
                abs(e["loss"] - (e["cls_loss"] + 0.5 * e["reg_loss"])), 1e-5 * e["loss"])
            self.assertIn("cls_accuracy", e)
            self.assertNotIn("reg_accuracy", e)
        ev = tr.evaluate({"a": a, "b": b}, {"cls": cls, "reg": reg})
        self.assertEqual(sorted(ev), ["accuracy", "cls_accuracy", "cls_loss", "loss",
                                      "reg_loss"])
        pred = tr.predict({"a": a[:100], "b": b[:100]})
        self.assertEqual(sorted(pred), ["cls", "reg"])
        self.assertEqual(pred["reg"].shape, (100, 1))
        with tempfile.TemporaryDirectory() as td:
            p = tr.save(os.path.join(td, "two.dmlpkg"))
            out = dmlc.load(p).session().run({"a": a[:50], "b": b[:50]})
            np.testing.assert_array_equal(out["cls"], pred["cls"][:50])
            np.testing.assert_array_equal(out["reg"], pred["reg"][:50])
        if DMLC_BIN:  # the same history as `dmlc train` with named data
            with tempfile.TemporaryDirectory() as td:
                spec = []
                for k, v in (("a", a), ("b", b), ("cls", cls), ("reg", reg)):
                    np.save(os.path.join(td, k + ".npy"), v)
                    spec.append("%s=%s" % (k, os.path.join(td, k + ".npy")))
                csv = os.path.join(td, "h.csv")
                subprocess.run([DMLC_BIN, "train", TWO_HEAD, "--data", ",".join(spec),
                                "--loss", "cls=cross_entropy,reg=mse:0.5", "--lr", "0.01",
                                "--epochs", "4", "--batch-size", "32",
                                "--validation-split", "0.25", "--metrics", "cls=top2",
                                "--history", csv, "-o", os.path.join(td, "t.dmlpkg"),
                                "--quiet"], check=True, stdout=subprocess.DEVNULL)
                rows = read_csv(csv)
                self.assertEqual(len(rows), 4)
                for e, r in zip(h.epochs, rows):
                    for col in ("loss", "accuracy", "val_loss", "cls_loss", "cls_accuracy",
                                "val_cls_loss", "val_cls_accuracy", "reg_loss",
                                "val_reg_loss", "val_cls_top2"):
                        self.assertLessEqual(abs(e[col] - float(r[col])), 1e-6, (col, e, r))
        with self.assertRaises(dmlc.InvalidArgumentError):
            tr.fit({"a": a, "b": b}, {"cls": cls, "reg": reg}, epochs=5,
                   validation_data=({"a": a, "b": b}, {"cls": cls, "reg": reg}),
                   validation_split=0.5)
        with self.assertRaises(dmlc.FailedPreconditionError):
            tr.fit({"a": a}, {"cls": cls, "reg": reg}, epochs=5)
        with self.assertRaises(dmlc.InvalidArgumentError):
            tr.fit(a, {"cls": cls, "reg": reg}, epochs=5)


QAT_MODEL = os.path.join(HERE, "..", "quantize", "tiny_mlp.onnx")
QAT_X = os.path.join(HERE, "..", "quantize", "qat_x.npy")
QAT_Y = os.path.join(HERE, "..", "quantize", "qat_y.npy")


class Qat(unittest.TestCase):
    """compile(qat=True) (docs/quantize.md, "Quantization-aware training"):
    tests/quantize's tiny_mlp (3 Gemms) with gen_qat_data.py's 512 rows, as
    tests/quantize/test_qat.sh trains it with `dmlc train --qat`: the
    fake-quantized package trains (the loss falls over 5 epochs), its
    history equals the CLI's with the same data, settings and seed within
    1e-6 (the same C quantizer and trainer), the QDQ export is the CLI's
    byte for byte, and the errors."""

    def setUp(self):
        self.x, self.y = np.load(QAT_X), np.load(QAT_Y)

    def test_qat_matches_cli(self):
        pkg = dmlc.compile(QAT_MODEL, qat=True, calibration=self.x)
        self.assertTrue(pkg.trainable)
        rep = pkg.compile_report["qat"]
        self.assertEqual((rep["layers_quantized"], rep["layers"], rep["activations"]),
                         (3, 3, 3))
        tr = pkg.trainer()
        h = tr.fit(self.x, self.y, epochs=5, learning_rate=1e-2, validation_split=0,
                   shuffle=False, seed=3)
        self.assertLess(h.epochs[-1]["loss"], 0.8 * h.epochs[0]["loss"])
        with tempfile.TemporaryDirectory() as td:
            q = os.path.join(td, "py_int8.onnx")
            er = tr.export_qat_onnx(q)
            self.assertEqual((er["trained_initializers"], er["trained_ranges"]), (4, 3))
            with open(q, "rb") as f:
                mine = f.read()
            self.assertIn(b"QuantizeLinear", mine)
            self.assertNotIn(b"FakeQuantize", mine)
            # the QDQ export compiles and runs
            out = dmlc.compile(q).session().run({"x": self.x[:8]})
            self.assertEqual(list(out.values())[0].shape[0], 8)
            # the model given as bytes: the same graph and weights (forward's
            # outputs bit-equal before training)
            with open(QAT_MODEL, "rb") as f:
                again = dmlc.compile(f.read(), qat=True, calibration=self.x)
            a = again.session().run({"x": self.x[:16]})
            b = pkg.session().run({"x": self.x[:16]})
            for k in b:
                np.testing.assert_array_equal(a[k], b[k])
            if not DMLC_BIN:
                return
            csv, cq = os.path.join(td, "h.csv"), os.path.join(td, "cli_int8.onnx")
            subprocess.run([DMLC_BIN, "train", QAT_MODEL, "--qat", "--data",
                            "%s,%s" % (QAT_X, QAT_Y), "--epochs", "5", "--lr", "1e-2",
                            "--validation-split", "0", "--no-shuffle", "--seed", "3",
                            "--history", csv, "-o", os.path.join(td, "cli.dmlpkg"),
                            "--export-onnx", cq, "--quiet"], check=True,
                           stdout=subprocess.DEVNULL)
            rows = read_csv(csv)
            self.assertEqual(len(rows), 5)
            for e, r in zip(h.epochs, rows):
                self.assertLessEqual(abs(e["loss"] - float(r["loss"])), 1e-6, (e, r))
            with open(cq, "rb") as f:
                self.assertEqual(f.read(), mine)

    def test_errors(self):
        with self.assertRaisesRegex(dmlc.InvalidArgumentError, "needs calibration="):
            dmlc.compile(QAT_MODEL, qat=True)
        with self.assertRaisesRegex(dmlc.InvalidArgumentError, "train=False given"):
            dmlc.compile(QAT_MODEL, qat=True, train=False, calibration=self.x)
        with self.assertRaisesRegex(dmlc.InvalidArgumentError, "calibration= is for qat"):
            dmlc.compile(QAT_MODEL, calibration=self.x)
        with self.assertRaisesRegex(dmlc.InvalidArgumentError, "no rows|empty|0 rows"):
            dmlc.compile(QAT_MODEL, qat=True, calibration=np.zeros((0, 16), np.float32))
        with self.assertRaisesRegex(dmlc.FailedPreconditionError, "already quantized"):
            dmlc.compile(os.path.join(HERE, "..", "quantize", "already_qdq.onnx"), qat=True,
                         calibration=self.x)
        plain = dmlc.compile(QAT_MODEL, loss="cross_entropy")
        with self.assertRaisesRegex(dmlc.FailedPreconditionError, "not compiled with qat"):
            plain.trainer().export_qat_onnx(os.path.join(tempfile.gettempdir(), "x.onnx"))


class Serve(unittest.TestCase):
    def test_threads_match_session(self):
        pkg = dmlc.compile(TRAINED)
        other = dmlc.compile(os.path.join(SHARED, "models", "lenet5.onnx"))
        sess = pkg.session()
        rng = np.random.default_rng(5)
        reqs = [[rng.random((1 + (t * 20 + k) % 5, 784), dtype=np.float32)
                 for k in range(20)] for t in range(16)]
        got = [[None] * 20 for _ in range(16)]
        errors = []
        with dmlc.Server({"mlp": pkg, "lenet": other}, batch_size=32, batch_timeout_ms=2,
                         instances=2) as srv:
            def worker(t):
                try:
                    for k, x in enumerate(reqs[t]):
                        got[t][k] = srv.run({"input": x}, model="mlp")["logits"]
                except Exception as e:  # reported below
                    errors.append(e)

            ths = [threading.Thread(target=worker, args=(t,)) for t in range(16)]
            for th in ths:
                th.start()
            for th in ths:
                th.join()
            self.assertEqual(errors, [])
            st = srv.stats("mlp")
            self.assertEqual(st["requests"], 320)
            self.assertEqual(st["requests_failed"], 0)
            # requests were batched together: the GIL is released while one waits
            self.assertLess(st["runs"], st["requests"])
            x5 = np.zeros((2, 1, 28, 28), np.float32)
            np.testing.assert_array_equal(srv.run({"input": x5}, model="lenet")["logits"],
                                          other.session().run({"input": x5})["logits"])
            with self.assertRaises(dmlc.InvalidArgumentError):
                srv.run({"input": reqs[0][0]})  # two models: name one
            with self.assertRaises(dmlc.InvalidArgumentError):
                srv.run({"input": reqs[0][0].astype(np.float64)}, model="mlp")
        for t in range(16):
            for k in range(20):
                np.testing.assert_array_equal(got[t][k],
                                              sess.run({"input": reqs[t][k]})["logits"])
        with self.assertRaises(dmlc.FailedPreconditionError):
            srv.run({"input": reqs[0][0]}, model="mlp")


if __name__ == "__main__":
    unittest.main(verbosity=2)  # arguments: unittest's (test names to run)
