"""Tests of dmlc.Tensor and dmlc.ops (python/dmlc/_tensor.py, ops.py; the C
API runtime/dml_tensor.h), run by tests/python/test_python.sh.

    python test_tensor.py [SHARED_DIR]   (the session tests need ../shared's models)

References: NumPy. Tolerances: copies, views, creation by value, the
elementwise Add/Sub/Mul/Neg/Abs/Relu and integer ops are exact (bit-equal);
Div, Exp, Log, Sqrt, Sigmoid, Tanh, Softmax, the reductions and MatMul f32
within 1e-6 * max(1, |ref|) relative (f64: 1e-12), against NumPy in f64.
"""
import os
import sys
import unittest

import numpy as np

import dmlc
from dmlc import ops

SHARED = os.environ.get("DMLC_SHARED_DIR", "")
EDGE = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1e-40, -1e-40, 1e30, -1e30, 1e-30,
                 1.0, -2.5], dtype=np.float32)


def close(test, got, ref, tol, what=""):
    got = np.asarray(got, dtype=np.float64)
    ref = np.asarray(ref, dtype=np.float64)
    test.assertEqual(got.shape, ref.shape, what)
    both_nan = np.isnan(got) & np.isnan(ref)
    err = np.where(both_nan, 0.0, np.abs(got - ref) / np.maximum(1.0, np.abs(ref)))
    test.assertTrue(np.all(np.isfinite(err) | both_nan), what)
    test.assertLessEqual(float(np.max(err, initial=0.0)), tol, what)


def bits(a):
    a = np.ascontiguousarray(a)
    return a.view(np.uint8).tobytes()


class Creation(unittest.TestCase):
    def test_zeros_ones_full(self):
        for dt in ("f32", "f64", "f16", "i8", "u8", "i16", "i32", "i64", "u64", "bool"):
            nd = dmlc._NP_DTYPES[dt]
            z = dmlc.zeros((2, 3), dtype=dt)
            self.assertEqual(z.shape, (2, 3))
            self.assertEqual(z.dtype, dt)
            np.testing.assert_array_equal(z.numpy(), np.zeros((2, 3), nd))
            self.assertEqual(z.numpy().dtype, nd)
            np.testing.assert_array_equal(dmlc.ones(4, dtype=dt).numpy(), np.ones(4, nd))
            np.testing.assert_array_equal(dmlc.full([3], 7, dtype=dt).numpy(),
                                          np.full(3, 7, nd))
        self.assertEqual(dmlc.zeros((0, 5)).shape, (0, 5))
        self.assertEqual(dmlc.full((), 2.5).numpy().shape, ())
        self.assertEqual(bits(dmlc.full([2], -0.0).numpy()), bits(np.full(2, -0.0, np.float32)))
        self.assertTrue(np.isnan(dmlc.full([1], float("nan")).numpy()[0]))
        # bf16: its bits (ml_dtypes.bfloat16 when installed); 1.5 is 0x3FC0
        self.assertEqual(dmlc.full([2], 1.5, dtype="bf16").numpy().view(np.uint16).tolist(),
                         [0x3FC0, 0x3FC0])
        # numpy dtypes are taken too
        self.assertEqual(dmlc.zeros(2, dtype=np.int32).dtype, "i32")

    def test_arange(self):
        np.testing.assert_array_equal(dmlc.arange(5, dtype="i64").numpy(), np.arange(5))
        np.testing.assert_array_equal(dmlc.arange(1.0, 2.0, 0.25).numpy(),
                                      np.arange(1.0, 2.0, 0.25, dtype=np.float32))
        self.assertEqual(dmlc.arange(3, 1).shape, (0,))
        # the dtype as NumPy infers it: integers give i64, a float f32
        # (NumPy's f64: dmlc's default float), an explicit dtype wins
        for args, kw, want in (((5,), {}, "i64"), ((2, 9, 3), {}, "i64"),
                               ((np.int32(4),), {}, "i64"), ((-3, 3), {}, "i64"),
                               ((5.0,), {}, "f32"), ((0, 1, 0.25), {}, "f32"),
                               ((1, 4.5), {}, "f32"), ((5,), {"dtype": "f32"}, "f32"),
                               ((5,), {"dtype": np.int32}, "i32"),
                               ((0.0, 3.0), {"dtype": "i64"}, "i64")):
            t = dmlc.arange(*args, **kw)
            self.assertEqual(t.dtype, want, (args, kw))
            ref = np.arange(*args)
            np.testing.assert_array_equal(t.numpy(), ref.astype(t.numpy().dtype))
        self.assertEqual(dmlc.arange(5, device="vulkan" if vulkan_available() else "cpu")
                         .dtype, "i64")
        np.testing.assert_array_equal(dmlc.arange(1 << 52, (1 << 52) + 3).numpy(),
                                      np.arange(1 << 52, (1 << 52) + 3))
        with self.assertRaises(dmlc.InvalidArgumentError):
            dmlc.arange((1 << 53) + 1)
        with self.assertRaises(dmlc.InvalidArgumentError):
            dmlc.arange(0, 1, 0)

    def test_random(self):
        a = dmlc.random((1000,), seed=7).numpy()
        b = dmlc.random((1000,), seed=7).numpy()
        c = dmlc.random((1000,), seed=8).numpy()
        self.assertEqual(bits(a), bits(b))
        self.assertNotEqual(bits(a), bits(c))
        self.assertTrue(np.all((a >= 0) & (a < 1)))
        self.assertLess(abs(float(a.mean()) - 0.5), 0.05)
        n = dmlc.random((20000,), dtype="f64", seed=1, distribution="normal", mean=2.0,
                        scale=3.0).numpy()
        self.assertLess(abs(float(n.mean()) - 2.0), 0.1)
        self.assertLess(abs(float(n.std()) - 3.0), 0.1)
        with self.assertRaises(dmlc.Error):
            dmlc.random((2,), dtype="i32")

    def test_from_numpy_bit_exact(self):
        with np.errstate(over="ignore"):
            half = EDGE.astype(np.float16)
        for arr in (EDGE, EDGE.astype(np.float64), half,
                    np.array([-128, 0, 127], np.int8), np.array([True, False]),
                    np.arange(24, dtype=np.int64).reshape(2, 3, 4),
                    np.zeros((3, 0), np.float32)):
            t = dmlc.tensor(arr)
            self.assertEqual(t.shape, arr.shape)
            got = t.numpy()
            self.assertEqual(got.dtype, arr.dtype)
            self.assertEqual(bits(got), bits(arr))
        # lists, a dtype, a non-contiguous source
        np.testing.assert_array_equal(dmlc.tensor([[1, 2], [3, 4]], dtype="f64").numpy(),
                                      np.array([[1, 2], [3, 4]], np.float64))
        src = np.arange(12, dtype=np.float32).reshape(3, 4)[:, ::2]
        np.testing.assert_array_equal(dmlc.tensor(src).numpy(), src)

    def test_bad_arguments(self):
        with self.assertRaises(dmlc.InvalidArgumentError):
            dmlc.zeros((2, -1))
        with self.assertRaises(dmlc.InvalidArgumentError):
            dmlc.zeros((1,) * 9)
        with self.assertRaises(dmlc.InvalidArgumentError):
            dmlc.zeros(2, dtype="complex64")
        with self.assertRaises(dmlc.UnimplementedError) as cm:
            dmlc.zeros(2, device="tpu")
        self.assertIn("no such device", str(cm.exception))


class Buffers(unittest.TestCase):
    def test_zero_copy(self):
        t = dmlc.tensor(np.arange(6, dtype=np.float32).reshape(2, 3))
        a = np.asarray(t)
        m = memoryview(t)
        self.assertEqual(m.format, "f")
        self.assertEqual(m.shape, (2, 3))
        a[1, 2] = 42.0  # the tensor's own memory
        self.assertEqual(t.numpy()[1, 2], 42.0)
        self.assertTrue(np.shares_memory(a, np.asarray(t)))
        m.release()

    def test_strided_views_share_memory(self):
        ref = np.arange(24, dtype=np.int32).reshape(4, 6)
        t = dmlc.tensor(ref)
        base = np.asarray(t)
        for view, want in ((t.T, ref.T), (t[1:3, ::2], ref[1:3, ::2]),
                           (t[::-1, 5:0:-2], ref[::-1, 5:0:-2]), (t[2], ref[2]),
                           (t[..., 1:2], ref[..., 1:2]), (t[None, 0], ref[None, 0])):
            got = np.asarray(view)
            np.testing.assert_array_equal(got, want)
            np.testing.assert_array_equal(view.numpy(), want)
            self.assertTrue(np.shares_memory(got, base), str(view))
        self.assertFalse(t.T.is_contiguous)
        self.assertEqual(t.T.strides, (1, 6))
        # ints drop dims without a copy, even of strided views
        for view, want in ((t.T[2], ref.T[2]), (t[:, 1], ref[:, 1]),
                           (t[::2, ::-1][1], ref[::2, ::-1][1])):
            np.testing.assert_array_equal(view.numpy(), want)
            self.assertTrue(np.shares_memory(np.asarray(view), base), str(view))
        # reshape: a view where the strides allow (NumPy's rule), else a copy
        s = t.T.reshape(3, 2, 4)  # splits a strided dim: a view
        np.testing.assert_array_equal(s.numpy(), ref.T.reshape(3, 2, 4))
        self.assertTrue(np.shares_memory(np.asarray(s), base))
        c = t.T.reshape(24)  # merges non-contiguous dims: a copy
        np.testing.assert_array_equal(c.numpy(), ref.T.reshape(24))
        self.assertFalse(np.shares_memory(np.asarray(c), base))
        e = dmlc.tensor(np.arange(4, dtype=np.int32)).expand(3, 4).reshape(3, 2, 2)
        np.testing.assert_array_equal(e.numpy(), np.broadcast_to(np.arange(4), (3, 4))
                                      .reshape(3, 2, 2))
        self.assertEqual(e.strides, (0, 2, 1))

    def test_buffer_outlives_free(self):
        t = dmlc.tensor(np.arange(4, dtype=np.float64))
        a = np.asarray(t)
        t.free()
        np.testing.assert_array_equal(a, np.arange(4.0))  # the bytes stay while exported
        with self.assertRaises(dmlc.FailedPreconditionError):
            memoryview(t)


class Views(unittest.TestCase):
    def test_views_share_storage(self):
        before = dmlc.device_memory("cpu")
        t = dmlc.tensor(np.arange(24, dtype=np.float32))
        one = dmlc.device_memory("cpu")
        self.assertEqual(one["storages"], before["storages"] + 1)
        r = t.reshape(2, 3, 4)
        p = r.transpose(2, 0, 1)
        s = p[1:, :, ::2]
        self.assertEqual(dmlc.device_memory("cpu")["storages"], one["storages"])
        e = dmlc.tensor(np.ones((1, 4), np.float32)).expand(3, 4)
        ref = np.arange(24, dtype=np.float32).reshape(2, 3, 4).transpose(2, 0, 1)[1:, :, ::2]
        np.testing.assert_array_equal(s.numpy(), ref)
        np.testing.assert_array_equal(e.numpy(), np.ones((3, 4), np.float32))
        self.assertEqual(e.strides, (0, 1))
        t.free()  # the views keep the storage
        np.testing.assert_array_equal(s.numpy(), ref)
        del r, p, s, e
        self.assertEqual(dmlc.device_memory("cpu"), before)

    def test_to_copies(self):
        t = dmlc.tensor(np.arange(6, dtype=np.float32).reshape(2, 3))
        c = t.T.to("cpu")
        self.assertTrue(c.is_contiguous)
        np.asarray(t)[0, 0] = 9
        np.testing.assert_array_equal(c.numpy(), np.arange(6, dtype=np.float32).reshape(2, 3).T)

    def test_reshape_errors(self):
        t = dmlc.zeros((2, 3))
        with self.assertRaises(dmlc.InvalidArgumentError) as cm:
            t.reshape(4, 2)
        self.assertIn("[2,3]", str(cm.exception))
        with self.assertRaises(IndexError):
            t[2]
        with self.assertRaises(IndexError):
            t[0, 0, 0]


class Ops(unittest.TestCase):
    def setUp(self):
        rng = np.random.default_rng(3)
        self.a = rng.standard_normal((4, 5)).astype(np.float32)
        self.b = rng.standard_normal((5,)).astype(np.float32)
        self.m = rng.standard_normal((5, 3)).astype(np.float32)

    def test_elementwise_exact(self):
        a, b = dmlc.tensor(self.a), dmlc.tensor(self.b)
        for got, ref in ((a + b, self.a + self.b), (a - b, self.a - self.b),
                         (a * b, self.a * self.b), (-a, -self.a), (abs(a), np.abs(self.a)),
                         (ops.relu(a), np.maximum(self.a, 0)), (a + 1, self.a + 1),
                         (2 * a, 2 * self.a), (ops.add(a, b), self.a + self.b)):
            self.assertEqual(got.dtype, "f32")
            self.assertEqual(bits(got.numpy()), bits(ref.astype(np.float32)))
        x = dmlc.tensor(EDGE)
        self.assertEqual(bits((x * 1).numpy()), bits(EDGE * np.float32(1)))
        self.assertEqual(bits(ops.neg(x).numpy()), bits(-EDGE))
        i = dmlc.tensor(np.array([7, -7, 3], np.int32))
        np.testing.assert_array_equal((i + i).numpy(), np.array([14, -14, 6], np.int32))
        np.testing.assert_array_equal((i < 0).numpy(), np.array([False, True, False]))

    def test_transcendental(self):
        a = dmlc.tensor(self.a)
        pos = dmlc.tensor(np.abs(self.a) + 0.5)
        ref = self.a.astype(np.float64)
        rp = np.abs(ref) + 0.5
        for got, want in ((a / 3, ref / 3), (ops.exp(a), np.exp(ref)),
                          (ops.log(pos), np.log(rp)), (ops.sqrt(pos), np.sqrt(rp)),
                          (ops.sigmoid(a), 1 / (1 + np.exp(-ref))),
                          (ops.tanh(a), np.tanh(ref))):
            close(self, got.numpy(), want, 1e-6)
        e = np.exp(ref - ref.max(axis=-1, keepdims=True))
        close(self, ops.run("Softmax", [a], axis=-1).numpy(), e / e.sum(-1, keepdims=True),
              1e-6)
        close(self, ops.softmax(a, axis=0).numpy(),
              np.exp(ref) / np.exp(ref).sum(0, keepdims=True), 1e-6)

    def test_matmul_and_reductions(self):
        a, m = dmlc.tensor(self.a), dmlc.tensor(self.m)
        ref = self.a.astype(np.float64)
        close(self, (a @ m).numpy(), ref @ self.m.astype(np.float64), 1e-6)
        d = dmlc.tensor(self.a.astype(np.float64))
        close(self, (d @ dmlc.tensor(self.m.astype(np.float64))).numpy(),
              ref @ self.m.astype(np.float64), 1e-12)
        close(self, ops.sum(a).numpy(), ref.sum(), 1e-6)
        close(self, ops.sum(a, axis=1).numpy(), ref.sum(1), 1e-6)
        close(self, ops.mean(a, axis=(0, 1), keepdims=True).numpy(),
              ref.mean(axis=(0, 1), keepdims=True), 1e-6)
        self.assertEqual(bits(ops.max(a, axis=0).numpy()), bits(self.a.max(0)))
        self.assertEqual(bits(ops.min(a, axis=-1).numpy()), bits(self.a.min(-1)))
        np.testing.assert_array_equal(ops.argmax(a, axis=1).numpy(), self.a.argmax(1))
        # on a strided view
        close(self, ops.sum(a.T, axis=1).numpy(), ref.T.sum(1), 1e-6)
        # several outputs
        vals, idx = ops.run("TopK", [a, dmlc.tensor(np.array([2], np.int64))], n_outputs=2,
                            axis=1)
        np.testing.assert_array_equal(idx.numpy(), np.argsort(-self.a, axis=1)[:, :2])
        self.assertEqual(bits(ops.cast(a, "f64").numpy()), bits(ref))

    def test_comparisons_elementwise(self):
        # == != < <= > >= are elementwise (Equal, Not(Equal), Less, ...) and
        # give bool tensors, as NumPy's; on the CPU and on Vulkan
        devs = ["cpu"] + (["vulkan"] if vulkan_available() else [])
        for dev in devs:
            # a GPU may flush subnormals (Vulkan allows it): not compared there
            e = EDGE if dev == "cpu" else EDGE[~((EDGE != 0) & (np.abs(EDGE) < 1.2e-38))]
            r = e[::-1].copy()
            x, y = dmlc.tensor(e, device=dev), dmlc.tensor(r, device=dev)
            for got, ref in ((x == x, e == e), (x != x, e != e), (x == y, e == r),
                             (x != y, e != r), (x < y, e < r), (x <= y, e <= r),
                             (x > y, e > r), (x >= y, e >= r), (x == 1, e == 1),
                             (x != 1.0, e != 1), (0 < x, 0 < e), (1 == x, 1 == e),
                             (x >= 0, e >= 0)):
                self.assertEqual(got.dtype, "bool", dev)
                self.assertEqual(got.device, dev)
                np.testing.assert_array_equal(got.numpy(), ref, dev)
            # broadcasting
            a = dmlc.tensor(self.a, device=dev)
            np.testing.assert_array_equal((a == a[0]).numpy(), self.a == self.a[0])
        # None is not an element: identity, as for any object
        x = dmlc.tensor(EDGE)
        self.assertIs(x == None, False)  # noqa: E711
        self.assertIs(x != None, True)  # noqa: E711

    def test_hash_and_truth_value(self):
        x, y = dmlc.tensor(EDGE), dmlc.tensor(EDGE)
        # hashable by identity (as torch.Tensor): sets and dict keys
        self.assertEqual(hash(x), object.__hash__(x))
        d = {x: "x", y: "y"}
        self.assertEqual((d[x], d[y]), ("x", "y"))
        self.assertEqual(len({x, y, x}), 2)
        # one element: its value; more or none: ambiguous, as in NumPy
        self.assertIs(bool(dmlc.tensor(3.0)), True)
        self.assertIs(bool(dmlc.tensor([0.0])), False)
        self.assertIs(bool(dmlc.tensor(np.array([[2]], np.int64))), True)
        self.assertIs(bool(dmlc.tensor(1.0) == 1), True)
        self.assertIs(bool(dmlc.tensor(1.0) != 1), False)
        for t in (x, dmlc.zeros((0,)), x == x):
            with self.assertRaises(ValueError) as cm:
                bool(t)
            self.assertIsInstance(cm.exception, dmlc.InvalidArgumentError)
            self.assertIn("ambiguous", cm.exception.reason)
            with self.assertRaises(ValueError):
                if t:
                    pass

    def test_shape_mismatch_names_op_and_shapes(self):
        with self.assertRaises(dmlc.InvalidArgumentError) as cm:
            dmlc.zeros((3, 4)) @ dmlc.zeros((5, 6))
        e = cm.exception
        self.assertEqual(e.op, "MatMul")
        self.assertIn("shape mismatch", e.reason)
        self.assertIn("[3,4]", e.details)
        self.assertIn("[5,6]", e.details)
        with self.assertRaises(dmlc.InvalidArgumentError) as cm:
            dmlc.zeros((2, 3)) + dmlc.zeros((4,))
        self.assertEqual(cm.exception.op, "Add")
        self.assertIn("[2,3]", str(cm.exception))
        self.assertIn("[4]", str(cm.exception))

    def test_op_errors(self):
        with self.assertRaises(dmlc.NotFoundError):
            ops.run("NoSuchOp", [dmlc.zeros(2)])
        with self.assertRaises(dmlc.InvalidArgumentError) as cm:
            ops.run("Add", [dmlc.zeros(2), "x"])
        self.assertIn("input 1", str(cm.exception))
        with self.assertRaises(dmlc.InvalidArgumentError) as cm:
            ops.run("Softmax", [dmlc.zeros(2)], axis=[1, "a"])
        self.assertIn("axis", str(cm.exception))


class Lifetime(unittest.TestCase):
    def test_use_after_free(self):
        t = dmlc.ones((2, 2))
        t.free()
        for use in (t.numpy, lambda: t.shape, lambda: t + t, lambda: t.reshape(4),
                    lambda: t.to("cpu"), lambda: np.asarray(t), t.free,
                    lambda: ops.run("Relu", [t])):
            with self.assertRaises(dmlc.FailedPreconditionError) as cm:
                use()
            self.assertEqual(cm.exception.reason, "use after free")
            self.assertIn("was freed", cm.exception.details)
        self.assertIn("use after free", repr(t))
        # a freed tensor beside a number: the error of the op called (the
        # number's conversion reads the tensor's dtype), not tensor.info's
        for use, op, k in ((lambda: t + 1, "Add", 0), (lambda: 2 * t, "Mul", 1),
                           (lambda: t - 1.5, "Sub", 0), (lambda: t < 1, "Less", 0),
                           (lambda: ops.add(t, [1, 2]), "Add", 0)):
            with self.assertRaises(dmlc.FailedPreconditionError) as cm:
                use()
            e = cm.exception
            self.assertEqual((e.op, e.reason), (op, "use after free"))
            self.assertIn("was freed", e.details)
            self.assertIn("input %d" % k, e.details)
            self.assertTrue(str(e).startswith(op + ": use after free"), str(e))

    def test_memory_back_at_start(self):
        before = dmlc.device_memory("cpu")
        ts = [dmlc.random((64, 64), seed=i) for i in range(20)]
        ys = [ops.softmax(t @ t) for t in ts]
        self.assertGreaterEqual(dmlc.device_memory("cpu")["bytes"],
                                before["bytes"] + 40 * 64 * 64 * 4)
        for t in ts:
            t.free()
        del ts, ys  # the others by reference counting
        self.assertEqual(dmlc.device_memory("cpu"), before)


class Sessions(unittest.TestCase):
    def test_tensor_inputs_and_outputs(self):
        path = os.path.join(SHARED, "models", "fashion_mlp.onnx")
        if not os.path.exists(path):
            self.skipTest("no reference models under %s" % SHARED)
        sess = dmlc.compile(path).session("cpu")
        x = np.load(os.path.join(SHARED, "models", "fashion_mlp_io", "input_0.npy"))
        x = np.concatenate([x, x[::-1] * 0.5, x])  # rows > 1: a transpose is strided
        ref = sess.run({"input": x})["logits"]
        before = dmlc.device_memory("cpu")
        xt = dmlc.tensor(x)
        out = sess.run({"input": xt}, device="cpu")
        self.assertIsInstance(out["logits"], dmlc.Tensor)
        self.assertEqual(bits(out["logits"].numpy()), bits(ref))
        # a strided view as input; then the output feeds an eager op
        xx = dmlc.tensor(np.ascontiguousarray(x.T)).T
        self.assertFalse(xx.is_contiguous)
        got = sess.run({"input": xx}, device="cpu")["logits"]
        self.assertEqual(bits(ops.softmax(got).numpy()),
                         bits(ops.softmax(dmlc.tensor(ref)).numpy()))
        with self.assertRaises(dmlc.InvalidArgumentError):
            sess.run({"input": dmlc.zeros((2, 5))})
        with self.assertRaises(dmlc.NotFoundError):
            sess.run({"nope": xt})
        del xt, out, xx, got
        self.assertEqual(dmlc.device_memory("cpu"), before)


def vulkan_available():
    return any(d["id"].startswith("vulkan") for d in dmlc.devices())


class Vulkan(unittest.TestCase):
    def test_copies_and_views(self):
        if not vulkan_available():
            self.skipTest("no Vulkan device: Vulkan tensors not tested")
        before = dmlc.device_memory("vulkan")
        t = dmlc.tensor(EDGE, device="vulkan")
        self.assertEqual(t.device, "vulkan")
        self.assertEqual(bits(t.numpy()), bits(EDGE))
        self.assertEqual(bits(np.asarray(t)), bits(EDGE))  # a copy: no host bytes
        self.assertEqual(bits(t[::-3].numpy()), bits(EDGE[::-3]))
        back = t.to("cpu")
        self.assertEqual(bits(np.asarray(back)), bits(EDGE))
        z = dmlc.random((3, 5), seed=4, device="vulkan")
        self.assertEqual(bits(z.numpy()), bits(dmlc.random((3, 5), seed=4).numpy()))
        with self.assertRaises(dmlc.FailedPreconditionError):
            memoryview(t)
        try:
            y = t + t
        except dmlc.UnimplementedError as e:  # eager GPU ops absent in this build
            self.assertIn("Add", str(e))
        else:
            self.assertEqual(bits(y.numpy()), bits(EDGE + EDGE))
            del y
        del t, back, z
        self.assertEqual(dmlc.device_memory("vulkan")["bytes"], before["bytes"])

    def test_rule_errors_name_the_device(self):
        # the GPU's eager path reads the CPU's shape rule; its errors name
        # the op and the device the op ran on, not the CPU rule (rt.cpu.*)
        devs = ["cpu"] + (["vulkan"] if vulkan_available() else [])
        for dev in devs:
            x = dmlc.zeros((3, 4), device=dev)
            with self.assertRaises(dmlc.InvalidArgumentError) as cm:
                ops.argmax(x, axis=5)
            e = cm.exception
            self.assertEqual(e.op, "ArgMax")
            self.assertIn("axis out of range", e.reason)
            self.assertIn("(on %s" % dev, e.reason)
            with self.assertRaises(dmlc.InvalidArgumentError) as cm:
                x + dmlc.zeros((5,), device=dev)
            self.assertEqual(cm.exception.op, "Add")
            self.assertIn("(on %s" % dev, cm.exception.reason)

    def test_session_inputs_outputs_on_device(self):
        # a session on "vulkan" runs on the Tensors' device: inputs and
        # outputs copied on the device, never through the host
        if not vulkan_available():
            self.skipTest("no Vulkan device: Vulkan sessions not tested")
        src = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tensor",
                           "add_bcast.onnx")  # Y[16,16] = A[16,1] + B[16]
        pkg = dmlc.compile(src, target="cpu,vulkan")
        a = np.concatenate([EDGE, EDGE[:4]]).reshape(16, 1)
        b = np.ascontiguousarray(a.reshape(16)[::-1])
        ref = pkg.session("cpu").run({"A": a, "B": b})["Y"]
        before = dmlc.device_memory("vulkan")
        sess = pkg.session("vulkan")
        ta, tb = dmlc.tensor(a, device="vulkan"), dmlc.tensor(b, device="vulkan")
        out = sess.run({"A": ta, "B": tb}, device=True)
        y = out["Y"]
        self.assertIsInstance(y, dmlc.Tensor)
        self.assertEqual(y.device, "vulkan")
        st = sess.transfer_stats()
        self.assertEqual(st["to_host_bytes"], 0)
        self.assertEqual(st["to_device_bytes"], 0)
        self.assertEqual(st["on_device_bytes"], a.nbytes + b.nbytes + ref.nbytes)
        self.assertEqual(bits(y.numpy()), bits(ref))
        # host arrays out of the same session: the same bits
        self.assertEqual(bits(sess.run({"A": ta, "B": tb})["Y"]), bits(ref))
        del sess, ta, tb, out, y
        self.assertEqual(dmlc.device_memory("vulkan")["bytes"], before["bytes"])


if __name__ == "__main__":
    if len(sys.argv) > 1 and not sys.argv[1].startswith("-"):
        SHARED = sys.argv.pop(1)
    unittest.main(verbosity=2)
