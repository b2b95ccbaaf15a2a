"""Tests of the Python package `dmlc` (python/, docs/python.md), run by
tests/python/test_python.sh in a venv where the package was pip-installed.

    python test_dmlc.py SHARED_DIR        (SHARED_DIR: ../shared, the reference models)

Tolerances: the reference models' outputs vs PyTorch's saved ones, max
|dmlc - saved| <= 1e-4 (as tests/models and tests/arm64); Vulkan vs the
saved outputs <= 1e-4 * max(1, |saved|) (as tests/vulkan/test_vulkan.c),
CUDA likewise (f32 kernels, no TF32);
the dtypes model's ops are exact (bit-equal).
"""
import os
import sys
import tempfile
import threading
import unittest

import numpy as np

import dmlc

SHARED = os.environ.get("DMLC_SHARED_DIR", "")
HERE = os.path.dirname(os.path.abspath(__file__))
MODELS = ("fashion_mlp", "lenet5", "resnet_small")


def model_path(name):
    return os.path.join(SHARED, "models", name + ".onnx")


def saved_pairs(name):
    d = os.path.join(SHARED, "models", name + "_io")
    return [(np.load(os.path.join(d, "input_%d.npy" % k)),
             np.load(os.path.join(d, "output_%d.npy" % k))) for k in range(3)]


_PKGS = {}


def package(name, target="cpu"):
    key = (name, target)
    if key not in _PKGS:
        _PKGS[key] = dmlc.compile(model_path(name), target=target)
    return _PKGS[key]


def vulkan_available():
    return any(d["id"].startswith("vulkan") for d in dmlc.devices())


class ReferenceModels(unittest.TestCase):
    def test_saved_outputs_cpu(self):
        for name in MODELS:
            sess = package(name).session("cpu")
            for k, (x, y) in enumerate(saved_pairs(name)):
                out = sess.run({"input": x})
                self.assertEqual(list(out), ["logits"])
                got = out["logits"]
                self.assertEqual(got.shape, y.shape, name)
                self.assertEqual(got.dtype, np.float32)
                err = float(np.max(np.abs(got - y)))
                self.assertLessEqual(err, 1e-4, "%s pair %d: max abs err %g" % (name, k, err))

    def test_save_and_load(self):
        pkg = package("lenet5")
        x, y = saved_pairs("lenet5")[1]
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "lenet5.dmlpkg")
            pkg.save(path)
            loaded = dmlc.load(path)
            self.assertEqual(loaded.path, path)
            got = loaded.session().run({"input": x})["logits"]
            self.assertLessEqual(float(np.max(np.abs(got - y))), 1e-4)
            with open(path, "rb") as f:
                from_bytes = dmlc.load(f.read())
            got2 = from_bytes.session().run({"input": x})["logits"]
            np.testing.assert_array_equal(got, got2)

    def test_inspect(self):
        pkg = package("fashion_mlp")
        self.assertEqual([i.name for i in pkg.inputs], ["input"])
        i = pkg.inputs[0]
        self.assertEqual(i.dtype, "f32")
        self.assertEqual(i.np_dtype, np.float32)
        self.assertEqual(i.shape, ("batch", 784))
        self.assertEqual(i.bounds, (64, 784))
        self.assertEqual(i.type, "f32[batch,784]")
        self.assertEqual(pkg.outputs[0].shape, ("batch", 10))
        self.assertEqual(pkg.symbols, {"batch": 64})
        self.assertIn("forward", pkg.functions)
        info = pkg.info()
        self.assertEqual(info["param_count"], 235146)
        self.assertGreater(info["arena_bytes"], 0)
        self.assertIn("graph", [t for t, _ in info["sections"]])
        self.assertGreater(pkg.compile_report["num_nodes"], 0)


class SymbolicBatch(unittest.TestCase):
    def test_two_batch_sizes_one_session(self):
        pairs = saved_pairs("fashion_mlp")
        sess = package("fashion_mlp").session()
        x1, y1 = pairs[0]  # batch 1
        x64, y64 = pairs[1]  # batch 64
        for x, y in ((x64, y64), (x1, y1), (x64[:7], y64[:7]), (x64, y64)):
            got = sess.run({"input": x})["logits"]
            self.assertEqual(got.shape, (x.shape[0], 10))
            self.assertLessEqual(float(np.max(np.abs(got - y))), 1e-4)

    def test_bounds_from_options(self):
        x, y = saved_pairs("fashion_mlp")[1]
        pkg = dmlc.compile(model_path("fashion_mlp"), dim_bounds={"batch": 8})
        self.assertEqual(pkg.inputs[0].bounds, (8, 784))
        sess = pkg.session()
        got = sess.run({"input": x[:8]})["logits"]
        self.assertLessEqual(float(np.max(np.abs(got - y[:8]))), 1e-4)
        with self.assertRaises(dmlc.OutOfRangeError) as cm:
            sess.run({"input": x[:9]})
        self.assertIn("bound", str(cm.exception))
        pkg2 = dmlc.compile(model_path("fashion_mlp"), input_shapes={"input": ((1, 16), 784)})
        self.assertEqual(pkg2.inputs[0].bounds, (16, 784))
        pkg3 = dmlc.compile(model_path("fashion_mlp"), input_shapes={"input": "5x784"})
        self.assertEqual(pkg3.inputs[0].shape, (5, 784))
        got = pkg3.session().run({"input": x[:5]})["logits"]
        self.assertLessEqual(float(np.max(np.abs(got - y[:5]))), 1e-4)


class Dtypes(unittest.TestCase):
    def test_every_dtype(self):
        pkg = dmlc.compile(os.path.join(HERE, "dtypes.onnx"))
        want = {"x": "f32", "h": "f16", "g": "bf16", "d": "f64", "a": "i8", "b": "u8",
                "c": "i32", "i": "i64", "m": "bool"}
        self.assertEqual({i.name: i.dtype for i in pkg.inputs}, want)
        n = 5
        bf16_bits = np.array([0x3f80, 0x4000, 0xc040, 0x0000, 0x8000], np.uint16)  # 1 2 -3 0 -0
        ins = {
            "x": np.array([[-1, 0, 2]] * n, np.float32) * np.arange(1, n + 1, dtype=np.float32)[:, None],
            "h": np.array([0.5, -1.25, 65504, np.inf, 6e-8], np.float16),
            "g": bf16_bits,
            "d": np.array([1e300, -0.0, np.nan, 5e-324, -2.5]),
            "a": np.array([1, -2, 63, -64, 0], np.int8),
            "b": np.array([0, 1, 127, 200, 255], np.uint8),
            "c": np.array([-3, 46340, 0, 7, -1], np.int32),
            "i": np.array([2**61, -(2**62), 0, 1, -1], np.int64),
            "m": np.array([True, False, True, True, False]),
        }
        out = pkg.session().run(ins)
        np.testing.assert_array_equal(out["relu"], np.maximum(ins["x"], 0))
        self.assertEqual(out["h2"].dtype, np.float16)
        with np.errstate(over="ignore"):  # 65504 + 65504 = inf in f16
            np.testing.assert_array_equal(out["h2"], ins["h"] + ins["h"])
        # bf16 travels as its bits (uint16), or as ml_dtypes.bfloat16
        g2 = out["g2"].view(np.uint16)
        np.testing.assert_array_equal(g2, np.array([0x4000, 0x4080, 0xc0c0, 0, 0x8000], np.uint16))
        self.assertEqual(out["d2"].dtype, np.float64)
        np.testing.assert_array_equal(out["d2"], -ins["d"])
        self.assertTrue(np.signbit(out["d2"][0]) and not np.signbit(out["d2"][1]))
        with np.errstate(over="ignore"):
            np.testing.assert_array_equal(out["a2"], ins["a"] + ins["a"])
            np.testing.assert_array_equal(out["b2"], ins["b"] + ins["b"])  # wraps mod 256
        np.testing.assert_array_equal(out["c2"], ins["c"] * ins["c"])
        np.testing.assert_array_equal(out["i2"], ins["i"] + ins["i"])
        self.assertEqual(out["n"].dtype, np.bool_)
        np.testing.assert_array_equal(out["n"], ~ins["m"])
        for k, v in out.items():
            self.assertEqual(v.shape[0], n, k)

    def test_zero_copy_views_and_layouts(self):
        x, y = saved_pairs("fashion_mlp")[1]
        sess = package("fashion_mlp").session()
        view = sess.run({"input": x}, copy=False)["logits"]
        self.assertFalse(view.flags.writeable)
        self.assertLessEqual(float(np.max(np.abs(view - y))), 1e-4)
        kept = view.copy()
        # A view is the session's memory: the next run overwrites it.
        sess.run({"input": x[::-1]}, copy=False)
        np.testing.assert_allclose(view, kept[::-1], atol=1e-4)
        # Non-contiguous and Fortran-order arrays are made contiguous.
        xf = np.asfortranarray(x)
        got = sess.run({"input": xf})["logits"]
        self.assertLessEqual(float(np.max(np.abs(got - y))), 1e-4)
        got = sess.run({"input": np.repeat(x, 2, axis=0)[::2]})["logits"]
        self.assertLessEqual(float(np.max(np.abs(got - y))), 1e-4)
        # Big-endian arrays are read as their values.
        got = sess.run({"input": x.astype(">f4")})["logits"]
        self.assertLessEqual(float(np.max(np.abs(got - y))), 1e-4)
        # Lists are converted to the input's dtype.
        got = sess.run({"input": x[:2].tolist()})["logits"]
        self.assertLessEqual(float(np.max(np.abs(got - y[:2]))), 1e-4)

    def test_threads(self):
        x, y = saved_pairs("resnet_small")[1]
        pkg = package("resnet_small")
        shared = pkg.session()
        errors = []

        def work(sess):
            try:
                for _ in range(3):
                    got = sess.run({"input": x})["logits"]
                    if float(np.max(np.abs(got - y))) > 1e-4:
                        errors.append("wrong result")
            except Exception as e:  # noqa: BLE001 - reported below
                errors.append(repr(e))

        ts = [threading.Thread(target=work, args=(s,))
              for s in (pkg.session(), pkg.session(), shared, shared)]
        for t in ts:
            t.start()
        for t in ts:
            t.join()
        self.assertEqual(errors, [])


class Errors(unittest.TestCase):
    def assert_error(self, cls, fn, *needles):
        with self.assertRaises(cls) as cm:
            fn()
        e = cm.exception
        self.assertIsInstance(e, dmlc.Error)
        msg = str(e)
        for n in needles:
            self.assertIn(n, msg)
        self.assertTrue(e.op, "no op in %r" % msg)
        self.assertTrue(e.reason, "no reason in %r" % msg)
        if cls is not dmlc.Error:
            self.assertEqual(e.code, cls.code)
        return e

    def test_bad_inputs(self):
        sess = package("fashion_mlp").session()
        x = saved_pairs("fashion_mlp")[0][0]
        e = self.assert_error(dmlc.InvalidArgumentError,
                              lambda: sess.run({"input": x.astype(np.float64)}),
                              "input", "f64", "f32")
        self.assertEqual(e.op, "rt.session")
        self.assert_error(dmlc.InvalidArgumentError,
                          lambda: sess.run({"input": x[:, :783]}), "input", "783")
        self.assert_error(dmlc.InvalidArgumentError,
                          lambda: sess.run({"input": x.reshape(1, 28, 28)}), "input")
        self.assert_error(dmlc.OutOfRangeError,
                          lambda: sess.run({"input": np.zeros((65, 784), np.float32)}),
                          "65", "64")
        self.assert_error(dmlc.FailedPreconditionError, lambda: sess.run({}), "input")
        self.assert_error(dmlc.NotFoundError,
                          lambda: sess.run({"input": x, "nope": x}), "nope", "input")
        self.assert_error(dmlc.InvalidArgumentError,
                          lambda: sess.run({"input": np.zeros((1, 784), np.complex64)}),
                          "complex64")
        self.assert_error(dmlc.InvalidArgumentError,
                          lambda: sess.run({"input": np.array([["a"] * 784])}), "input",
                          "<U1")
        self.assert_error(dmlc.InvalidArgumentError, lambda: sess.run([x]), "dict")
        self.assert_error(dmlc.InvalidArgumentError, lambda: sess.run({"input": None}),
                          "input", "None")
        self.assert_error(dmlc.InvalidArgumentError, lambda: sess.run({"input": object()}),
                          "input", "object")
        # the session still runs after errors
        got = sess.run({"input": x})["logits"]
        self.assertLessEqual(float(np.max(np.abs(got - saved_pairs("fashion_mlp")[0][1]))), 1e-4)

    def test_not_a_package(self):
        with tempfile.TemporaryDirectory() as d:
            p = os.path.join(d, "model.dmlpkg")
            with open(p, "wb") as f:
                f.write(b"this is not a dmlc package, only some text" * 10)
            e = self.assert_error(dmlc.Error, lambda: dmlc.load(p))
            self.assertTrue(e.op.endswith("load"), e.op)
            self.assertIn("not a .dmlpkg", e.reason)
            self.assertIsInstance(e, dmlc.DataLossError)
            self.assert_error(dmlc.NotFoundError, lambda: dmlc.load(os.path.join(d, "none")),
                              "none")
            # a real package cut short
            pkg_path = os.path.join(d, "lenet5.dmlpkg")
            package("lenet5").save(pkg_path)
            with open(pkg_path, "rb") as f:
                whole = f.read()
            self.assert_error(dmlc.DataLossError, lambda: dmlc.load(whole[:-100]))
            self.assert_error(dmlc.DataLossError, lambda: dmlc.load(whole[:40]))

    def test_compile_errors(self):
        self.assert_error(dmlc.DataLossError, lambda: dmlc.compile(b"not an onnx model at all"))
        self.assert_error(dmlc.NotFoundError, lambda: dmlc.compile("/nonexistent/m.onnx"),
                          "/nonexistent/m.onnx")
        self.assert_error(dmlc.InvalidArgumentError,
                          lambda: dmlc.compile(model_path("fashion_mlp"),
                                               input_shapes={"input": "1x[5:2]"}), "input")
        self.assert_error(dmlc.InvalidArgumentError,
                          lambda: dmlc.compile(model_path("fashion_mlp"),
                                               dim_bounds={"batch": 0}), "0")
        self.assert_error(dmlc.Error,
                          lambda: dmlc.compile(model_path("fashion_mlp"), target="tpu"), "tpu")

    def test_bad_device(self):
        pkg = package("fashion_mlp")
        self.assert_error(dmlc.UnimplementedError, lambda: pkg.session("tpu"), "tpu")
        self.assert_error(dmlc.InvalidArgumentError, lambda: pkg.session("vulkan:x"), "vulkan")
        self.assert_error(dmlc.InvalidArgumentError, lambda: dmlc.check(pkg, "cpu"), "cpu")
        if vulkan_available():
            # a CPU-only package has no Vulkan kernels
            self.assert_error(dmlc.FailedPreconditionError, lambda: pkg.session("vulkan"),
                              "vulkan")


class Vulkan(unittest.TestCase):
    def setUp(self):
        if not vulkan_available():
            self.skipTest("no Vulkan device (dmlc.devices() lists none): Vulkan not tested")

    def test_saved_outputs_vulkan(self):
        for name in MODELS:
            pkg = package(name, "cpu,vulkan")
            sess = pkg.session("vulkan")
            self.assertTrue(sess.device.startswith("vulkan:"), sess.device)
            for k, (x, y) in enumerate(saved_pairs(name)):
                got = sess.run({"input": x})["logits"]
                err = float(np.max(np.abs(got - y) / np.maximum(1, np.abs(y))))
                self.assertLessEqual(err, 1e-4, "%s pair %d on %s: %g" % (name, k, sess.device, err))

    def test_cpu_fallback(self):
        # LpNormalization, which no GPU target emits, between GPU ops
        # (tests/fallback/gen_fallback_models.py): on the host by default,
        # bit for bit the CPU's; cpu_fallback=False refuses the model
        path = os.path.join(HERE, "..", "fallback", "lp_mid.onnx")
        x = np.load(os.path.join(HERE, "..", "fallback", "x_lp.npy"))
        pkg = dmlc.compile(path, target="cpu,vulkan")
        got = pkg.session("vulkan").run({"x": x})["y"]
        want = pkg.session("cpu").run({"x": x})["y"]
        np.testing.assert_array_equal(got, want)
        with self.assertRaises(dmlc.UnimplementedError) as cm:
            dmlc.compile(path, target="cpu,vulkan", cpu_fallback=False)
        self.assertIn("cannot emit every op", str(cm.exception))

    def test_check(self):
        rep = dmlc.check(package("lenet5", "cpu,vulkan"), "vulkan", iterations=1)
        self.assertEqual(rep["n_failed"], 0, rep)
        self.assertEqual(rep["kernels"][-1]["name"], "end-to-end")
        self.assertTrue(rep["kernels"][-1]["passed"])


def cuda_available():
    return any(d["id"].startswith("cuda") for d in dmlc.devices())


class Cuda(unittest.TestCase):
    def test_cuda_target_compiles(self):
        pkg = package("fashion_mlp", "cpu,cuda")
        self.assertIn("kernels.cuda", [t for t, _ in pkg.info()["sections"]])
        if "cuda" not in dmlc.built_devices():  # -DDMLC_WITH_CUDA=OFF
            with self.assertRaises(dmlc.UnimplementedError) as cm:
                pkg.session("cuda")
            self.assertIn("DMLC_WITH_CUDA=OFF", str(cm.exception))
        elif not cuda_available():
            with self.assertRaises(dmlc.NotFoundError) as cm:
                pkg.session("cuda")
            self.assertIn("CUDA", str(cm.exception))

    def test_saved_outputs_cuda(self):
        if not cuda_available():
            self.skipTest("no CUDA device (dmlc.devices() lists none): CUDA runs not tested")
        for name in MODELS:
            sess = package(name, "cpu,cuda").session("cuda")
            for k, (x, y) in enumerate(saved_pairs(name)):
                got = sess.run({"input": x})["logits"]
                err = float(np.max(np.abs(got - y) / np.maximum(1, np.abs(y))))
                self.assertLessEqual(err, 1e-4, "%s pair %d on %s: %g" % (name, k, sess.device, err))


if __name__ == "__main__":
    if len(sys.argv) > 1:
        SHARED = sys.argv.pop(1)
    if not os.path.exists(model_path("fashion_mlp")):
        sys.exit("test_dmlc.py: no reference models under %s/models" % SHARED)
    print("dmlc", dmlc.__version__, "from", os.path.dirname(dmlc.__file__), file=sys.stderr)
    print("devices:", [d["id"] for d in dmlc.devices()], file=sys.stderr)
    unittest.main(verbosity=2)
