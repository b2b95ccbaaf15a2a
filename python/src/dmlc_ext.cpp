// dmlc_ext.cpp — the extension module `dmlc._core`: nanobind bindings of the
// runtime (dml_rt.h: load, sessions, run, inspect, devices, check) and of the
// compile driver (dml_driver.h + dml_dim_spec.h), of the trainer
// (dml_trainer.h: fit with Python callbacks, evaluate, predict, checkpoints,
// saving), of the batching server core (dml_serve.h) and of eager tensors
// (dml_tensor.h: the class dmlc.Tensor itself, with the buffer protocol). The Python API
// users call is python/dmlc/__init__.py, which wraps these; docs/python.md describes it.
//
// Errors: every dml_status_t that is not OK becomes a StatusError, which the
// translator registered below raises as the dmlc.Error subclass of its code
// (python/dmlc/_errors.py) carrying code, op, reason and details. The
// binding's own checks build their errors with dml_status_make too, so there
// is one kind of error.
//
// Threading: the GIL is released around load, compile, session creation,
// run and check. A session belongs to one thread at a time (dml_rt.h), so
// each Session holds a mutex taken (after the GIL is released, never while
// holding it) around binding inputs, running and reading outputs.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <shared_mutex>
#include <string>
#include <thread>
#include <vector>

#include "dml_dim_spec.h"
#include "dml_driver.h"
#include "dml_quantize.h"
#include "dml_rt.h"
#include "dml_serve.h"
#include "dml_tensor.h"
#include "dml_train.h"
#include "dml_trainer.h"

namespace nb = nanobind;
using namespace nb::literals;

namespace {

struct StatusError {
  int code;
  std::string code_name, op, reason, details, message;
};

// The error of a status that is not OK (freeing it).
StatusError status_error(dml_status_t st) {
  StatusError e;
  e.code = (int)dml_status_code(st);
  e.code_name = dml_status_code_name(dml_status_code(st));
  e.op = dml_status_op(st);
  e.reason = dml_status_reason(st);
  e.details = dml_status_details(st);
  char *f = dml_status_format(st);
  e.message = f ? f : e.reason;
  free(f);
  dml_status_free(st);
  // "error: " prefix and the trailing newline belong to the CLI's output.
  if (e.message.rfind("error: ", 0) == 0) e.message.erase(0, 7);
  while (!e.message.empty() && e.message.back() == '\n') e.message.pop_back();
  return e;
}

// Throws the status (freeing it) when it is not OK.
void check(dml_status_t st) {
  if (st) throw status_error(st);
}

// Sets the Python exception of `e`: the dmlc.Error subclass of its code
// (python/dmlc/_errors.py).
void set_python_error(const StatusError &e) {
  nb::object make = nb::module_::import_("dmlc._errors").attr("_make");
  nb::object exc = make(e.code_name, e.op, e.reason, e.details, e.message);
  PyErr_SetObject((PyObject *)Py_TYPE(exc.ptr()), exc.ptr());
}

// Sets d[key] = value for each pair: dicts are built from one table of
// fields, not statement by statement.
void dict_set(nb::dict &d,
              std::initializer_list<std::pair<const char *, nb::object>> kv) {
  for (const auto &p : kv) d[p.first] = p.second;
}

// The one table between dmlc dtypes and DLPack (NumPy) dtypes. bf16 travels
// as uint16 (NumPy has no bfloat16; python/dmlc views it as ml_dtypes'
// bfloat16 when that package is installed).
bool dl_of(dml_dtype_t dt, nb::dlpack::dtype *out) {
  using C = nb::dlpack::dtype_code;
  C code;
  switch (dt) {
    case DML_DTYPE_F32:
    case DML_DTYPE_F16:
    case DML_DTYPE_F64: code = C::Float; break;
    case DML_DTYPE_I8:
    case DML_DTYPE_I16:
    case DML_DTYPE_I32:
    case DML_DTYPE_I64: code = C::Int; break;
    case DML_DTYPE_U8:
    case DML_DTYPE_U16:
    case DML_DTYPE_U32:
    case DML_DTYPE_U64:
    case DML_DTYPE_BF16: code = C::UInt; break;
    case DML_DTYPE_BOOL: code = C::Bool; break;
    default: return false;
  }
  out->code = (uint8_t)code;
  out->bits = (uint8_t)(8 * dml_dtype_size(dt));
  out->lanes = 1;
  return true;
}

// The dmlc dtype of an array's DLPack dtype; `want` (the input's declared
// dtype) decides uint16 -> bf16. DML_DTYPE_INVALID when none.
dml_dtype_t dml_of(nb::dlpack::dtype d, dml_dtype_t want) {
  if (d.lanes != 1) return DML_DTYPE_INVALID;
  for (int i = 1; i < DML_DTYPE_COUNT_; i++) {
    dml_dtype_t dt = (dml_dtype_t)i;
    nb::dlpack::dtype e;
    if (dt == DML_DTYPE_BF16 || !dl_of(dt, &e)) continue;
    if (e == d) return (dt == DML_DTYPE_U16 && want == DML_DTYPE_BF16) ? want : dt;
  }
  return DML_DTYPE_INVALID;
}

const char *dl_name(nb::dlpack::dtype d, char *buf, size_t cap) {
  static const char *codes[] = {"int", "uint", "float", "?", "bfloat", "complex", "bool"};
  snprintf(buf, cap, "%s%u", d.code < 7 ? codes[d.code] : "?", (unsigned)d.bits);
  return buf;
}

nb::dict io_info_dict(const dml_rt_io_info_t &info) {
  nb::dict d;
  d["name"] = info.name ? info.name : "";
  d["dtype"] = dml_dtype_name(info.dtype);
  nb::list shape, bounds, mult;
  for (int32_t k = 0; k < info.rank; k++) {
    if (info.dim_symbol[k]) {
      std::string s = info.dim_symbol[k];
      if (info.dim_multiplier[k] != 1)
        s = std::to_string((long long)info.dim_multiplier[k]) + "*" + s;
      shape.append(s);
    } else {
      shape.append(info.dims[k]);
    }
    bounds.append(info.dim_bound[k]);
    mult.append(info.dim_multiplier[k]);
  }
  dict_set(d, {{"shape", nb::cast(nb::tuple(shape))},
               {"bounds", nb::cast(nb::tuple(bounds))},
               {"multipliers", nb::cast(nb::tuple(mult))}});
  char buf[512];
  d["type"] = dml_rt_io_info_str(&info, buf, sizeof buf);
  return d;
}

struct Model {
  dml_rt_model_t *m = nullptr;
  explicit Model(dml_rt_model_t *mm) : m(mm) {}
  Model(const Model &) = delete;
  Model &operator=(const Model &) = delete;
  ~Model() { dml_rt_model_release(m); }
};

Model *load_file(const std::string &path) {
  dml_rt_model_t *m = nullptr;
  dml_status_t st;
  {
    nb::gil_scoped_release r;
    st = dml_rt_model_load_file(path.c_str(), &m);
  }
  check(st);
  return new Model(m);
}

Model *load_bytes(nb::bytes b) {
  dml_rt_model_t *m = nullptr;
  dml_status_t st;
  const void *p = b.c_str();
  size_t n = b.size();
  {
    nb::gil_scoped_release r;  // `b` stays referenced (immutable) meanwhile
    st = dml_rt_model_load_memory(p, n, &m);
  }
  check(st);
  return new Model(m);
}

nb::list model_io(const Model &md, bool outputs) {
  nb::list l;
  uint32_t n = outputs ? dml_rt_model_num_outputs(md.m) : dml_rt_model_num_inputs(md.m);
  for (uint32_t i = 0; i < n; i++) {
    dml_rt_io_info_t info;
    check(outputs ? dml_rt_model_output_info(md.m, i, &info)
                  : dml_rt_model_input_info(md.m, i, &info));
    l.append(io_info_dict(info));
  }
  return l;
}

nb::dict model_summary(const Model &md) {
  nb::dict d;
  nb::list syms, fns;
  for (uint32_t i = 0; i < dml_rt_model_num_symbols(md.m); i++) {
    const char *name;
    int64_t bound;
    check(dml_rt_model_symbol(md.m, i, &name, &bound));
    syms.append(nb::make_tuple(name, bound));
  }
  for (uint32_t i = 0; i < dml_rt_model_num_functions(md.m); i++)
    fns.append(dml_rt_model_function_name(md.m, i));
  dict_set(d, {{"symbols", nb::cast(syms)},
               {"functions", nb::cast(fns)},
               {"meta", nb::cast(dml_rt_model_meta(md.m))},
               {"format_version", nb::cast(dml_rt_model_format_version(md.m))},
               {"file_size", nb::cast(dml_rt_model_file_size(md.m))},
               {"arena_bytes", nb::cast(dml_rt_model_arena_bytes(md.m))},
               {"scratch_bytes", nb::cast(dml_rt_model_scratch_bytes(md.m))},
               {"weights_bytes", nb::cast(dml_rt_model_weights_bytes(md.m))},
               {"param_count", nb::cast(dml_rt_model_param_count(md.m))},
               {"num_nodes", nb::cast(dml_rt_model_num_nodes(md.m))}});
  nb::list secs;
  for (uint32_t i = 0; i < dml_rt_model_num_sections(md.m); i++) {
    dml_rt_section_info_t s;
    check(dml_rt_model_section_info(md.m, i, &s));
    secs.append(nb::make_tuple(s.tag, s.size));
  }
  d["sections"] = secs;
  return d;
}

dml_status_t device_try(const std::string &name, dml_rt_device_t **out);

// A session. On a GPU ("vulkan[:N]", "cuda[:N]") it runs on the process's
// tensor device of that name (device_of, dml_rt_session_create_on_device),
// so that dmlc.Tensors on that device are bound and outputs made on it
// without the host (docs/tensor.md "Sessions"); where that device cannot
// hold the package (a Vulkan feature it was not opened with) the session
// opens a device of its own, as dml_rt_session_create_function does.
struct Session {
  dml_rt_session_t *s = nullptr;
  std::mutex mu;
  Session(Model &md, const std::string &device, const std::string &function) {
    const char *fn = function.empty() ? nullptr : function.c_str();
    bool gpu = device.rfind("vulkan", 0) == 0 || device.rfind("cuda", 0) == 0;
    dml_rt_device_t *d = nullptr;
    if (gpu) dml_status_free(device_try(device, &d)); /* else the session says why */
    dml_status_t st = DML_OK;
    {
      nb::gil_scoped_release r;
      if (d) st = dml_rt_session_create_on_device(md.m, d, fn, nullptr, &s);
      if (d && st && dml_status_code(st) == DML_STATUS_UNIMPLEMENTED) {
        dml_status_free(st);
        st = dml_rt_session_create_function(md.m, device.c_str(), fn, nullptr, &s);
      } else if (!d) {
        st = dml_rt_session_create_function(md.m, device.c_str(), fn, nullptr, &s);
      }
    }
    check(st);
  }
  Session(const Session &) = delete;
  Session &operator=(const Session &) = delete;
  ~Session() { dml_rt_session_release(s); }
};

nb::list session_io(const Session &se, bool outputs) {
  nb::list l;
  uint32_t n =
      outputs ? dml_rt_session_num_outputs(se.s) : dml_rt_session_num_inputs(se.s);
  for (uint32_t i = 0; i < n; i++) {
    dml_rt_io_info_t info;
    check(outputs ? dml_rt_session_output_info(se.s, i, &info)
                  : dml_rt_session_input_info(se.s, i, &info));
    l.append(io_info_dict(info));
  }
  return l;
}

using InArray = nb::ndarray<nb::ro, nb::c_contig, nb::device::cpu>;

// The array `v` (C-contiguous, CPU) as a tensor lent by `keep`; `want` (the
// declared dtype, or DML_DTYPE_INVALID) decides uint16 -> bf16. Raises
// INVALID_ARGUMENT (op `op`) naming `name` for a value that is not a
// numeric array or of a rank beyond DML_MAX_RANK.
dml_tensor_t tensor_of(nb::handle v, const std::string &name, dml_dtype_t want,
                       const char *op, InArray &keep) {
  InArray &a = keep;
  if (!nb::try_cast(v, a, true)) {
    std::string what = nb::cast<std::string>(nb::str(v.type().attr("__name__")));
    if (nb::hasattr(v, "dtype"))
      what += " of dtype " + nb::cast<std::string>(nb::steal<nb::str>(
                                 PyObject_Str(nb::object(v.attr("dtype")).ptr())));
    check(dml_status_detail(
        dml_status_make(DML_STATUS_INVALID_ARGUMENT, op,
                        "input '%s': a %s is not a numeric array", name.c_str(),
                        what.c_str()),
        "arrays of bool, int8..int64, uint8..uint64, float16/32/64 are taken "
        "(bfloat16 as uint16 or ml_dtypes.bfloat16)"));
  }
  dml_tensor_t t;
  memset(&t, 0, sizeof t);
  t.dtype = dml_of(a.dtype(), want);
  char buf[32];
  if (t.dtype == DML_DTYPE_INVALID)
    check(dml_status_make(DML_STATUS_INVALID_ARGUMENT, op,
                          "input '%s': NumPy dtype %s has no dmlc dtype", name.c_str(),
                          dl_name(a.dtype(), buf, sizeof buf)));
  if (a.ndim() > DML_MAX_RANK)
    check(dml_status_make(DML_STATUS_INVALID_ARGUMENT, op,
                          "input '%s': rank %zu exceeds dmlc's maximum %d", name.c_str(),
                          a.ndim(), DML_MAX_RANK));
  t.rank = (int32_t)a.ndim();
  for (int32_t k = 0; k < t.rank; k++) t.dims[k] = (int64_t)a.shape(k);
  t.data = const_cast<void *>(a.data());
  return t;
}

// A tensor's data handed to NumPy as an array owned by `owner`. Raises
// UNIMPLEMENTED (op `op`) for a dtype NumPy lacks.
nb::object array_of(const dml_tensor_t &t, void *data, nb::handle owner, const char *op,
                    const char *name) {
  nb::dlpack::dtype dl;
  if (!dl_of(t.dtype, &dl))
    check(dml_status_make(DML_STATUS_UNIMPLEMENTED, op,
                          "output '%s': dtype %s has no NumPy dtype", name,
                          dml_dtype_name(t.dtype)));
  size_t shape[DML_MAX_RANK];
  for (int32_t k = 0; k < t.rank; k++) shape[k] = (size_t)t.dims[k];
  nb::ndarray<nb::numpy> arr(data, (size_t)t.rank, shape, owner, nullptr, dl);
  return nb::cast(arr);
}

// ---------------------------------------------------------------------------
// Eager tensors (dml_tensor.h)
// ---------------------------------------------------------------------------

// The devices tensors live on, opened on first use by name ("cpu",
// "vulkan:0", ...) and kept open for the process: closing one would free
// its tensors. Called with the GIL held (which guards the map).
dml_status_t device_try(const std::string &name, dml_rt_device_t **out) {
  static std::map<std::string, dml_rt_device_t *> devs;
  std::string key = name.empty() ? "cpu" : name;
  auto it = devs.find(key);
  if (it != devs.end()) {
    *out = it->second;
    return DML_OK;
  }
  dml_rt_device_t *d = nullptr;
  DML_RETURN_IF_ERROR(dml_rt_device_open(key.c_str(), &d));
  devs[key] = d;
  *out = d;
  return DML_OK;
}

dml_rt_device_t *device_of(const std::string &name) {
  dml_rt_device_t *d = nullptr;
  check(device_try(name, &d));
  return d;
}

// A dmlc.Tensor: one reference to a dml_rt_tensor_t handle (dropped when
// the Python object dies) and the name of its device as given. After
// free() the handle is stale and every call raises "use after free".
// Tensor calls keep the GIL (a device and its tensors are used by one
// thread at a time, dml_tensor.h).
struct Tensor {
  dml_rt_tensor_t h{0};
  std::string dev;
  Tensor(dml_rt_tensor_t t, std::string d) : h(t), dev(std::move(d)) {}
  Tensor(const Tensor &) = delete;
  Tensor &operator=(const Tensor &) = delete;
  ~Tensor() { dml_status_free(dml_rt_tensor_release(h)); }
  dml_rt_tensor_info_t info() const {
    dml_rt_tensor_info_t i;
    check(dml_rt_tensor_info(h, &i));
    return i;
  }
};

nb::object wrap(dml_rt_tensor_t t, const std::string &dev) {
  return nb::cast(new Tensor(t, dev), nb::rv_policy::take_ownership);
}

dml_dtype_t dtype_named(const std::string &name, const char *op) {
  dml_dtype_t dt = dml_dtype_from_name(name.c_str(), name.size());
  if (dt == DML_DTYPE_INVALID)
    check(dml_status_make(DML_STATUS_INVALID_ARGUMENT, op, "unknown dtype '%s'",
                          name.c_str()));
  return dt;
}

int32_t rank_of(const std::vector<int64_t> &shape, const char *op) {
  if (shape.size() > DML_MAX_RANK)
    check(dml_status_make(DML_STATUS_INVALID_ARGUMENT, op,
                          "rank %zu exceeds dmlc's maximum %d", shape.size(),
                          DML_MAX_RANK));
  return (int32_t)shape.size();
}

// A new tensor on `device` holding a copy of the array `v`; `dtype` ("" or
// "bf16" to take uint16 bits as bf16).
nb::object tensor_from_array(nb::handle v, const std::string &device,
                             const std::string &dtype) {
  InArray keep;
  dml_dtype_t want =
      dtype.empty() ? DML_DTYPE_INVALID : dtype_named(dtype, "python.tensor");
  dml_tensor_t t = tensor_of(v, "data", want, "python.tensor", keep);
  dml_rt_tensor_t out;
  check(dml_rt_tensor_from_host(device_of(device), &t, &out));
  return wrap(out, device);
}

// kind: "empty", "zeros", "ones", "full" (a = value), "uniform" (a = low,
// b = high), "normal" (a = mean, b = scale).
nb::object tensor_create(const std::string &kind, const std::vector<int64_t> &shape,
                         const std::string &dtype, const std::string &device, double a,
                         double b, uint64_t seed) {
  const char *op = "python.tensor";
  dml_dtype_t dt = dtype_named(dtype, op);
  int32_t r = rank_of(shape, op);
  dml_rt_device_t *d = device_of(device);
  dml_rt_tensor_t out;
  const int64_t *dims = shape.data();
  dml_status_t st;
  if (kind == "empty")
    st = dml_rt_tensor_empty(d, dt, r, dims, &out);
  else if (kind == "zeros")
    st = dml_rt_tensor_zeros(d, dt, r, dims, &out);
  else if (kind == "ones")
    st = dml_rt_tensor_ones(d, dt, r, dims, &out);
  else if (kind == "full")
    st = dml_rt_tensor_full(d, dt, r, dims, a, &out);
  else if (kind == "uniform")
    st = dml_rt_tensor_random_uniform(d, dt, r, dims, a, b, seed, &out);
  else if (kind == "normal")
    st = dml_rt_tensor_random_normal(d, dt, r, dims, a, b, seed, &out);
  else
    st = dml_status_make(DML_STATUS_INVALID_ARGUMENT, op, "unknown kind '%s'",
                         kind.c_str());
  check(st);
  return wrap(out, device);
}

nb::object tensor_arange(double start, double limit, double step,
                         const std::string &dtype, const std::string &device) {
  dml_rt_tensor_t out;
  check(dml_rt_tensor_arange(device_of(device), dtype_named(dtype, "python.arange"),
                             start, limit, step, &out));
  return wrap(out, device);
}

// A copy of t's elements as a new NumPy array (from any device).
nb::object tensor_numpy(const Tensor &t) {
  dml_rt_tensor_info_t i = t.info();
  dml_tensor_t host;
  memset(&host, 0, sizeof host);
  host.dtype = i.dtype;
  host.rank = i.rank;
  memcpy(host.dims, i.dims, sizeof host.dims);
  size_t bytes = dml_tensor_bytes(&host);
  if (bytes == SIZE_MAX)
    check(dml_status_make(DML_STATUS_RESOURCE_EXHAUSTED, "python.numpy",
                          "tensor too large"));
  host.data = malloc(bytes ? bytes : 1);
  if (!host.data)
    check(dml_status_make(DML_STATUS_RESOURCE_EXHAUSTED, "python.numpy",
                          "cannot allocate %zu bytes", bytes));
  nb::capsule owner(host.data, [](void *p) noexcept { free(p); });
  check(dml_rt_tensor_to_host(t.h, &host));
  return array_of(host, host.data, owner, "python.numpy", "tensor");
}

nb::dict tensor_info_dict(const Tensor &t) {
  dml_rt_tensor_info_t i = t.info();
  nb::list shape, strides;
  for (int32_t k = 0; k < i.rank; k++) {
    shape.append(i.dims[k]);
    strides.append(i.strides[k]);
  }
  nb::dict d;
  dict_set(d, {{"dtype", nb::cast(dml_dtype_name(i.dtype))},
               {"shape", nb::cast(nb::tuple(shape))},
               {"strides", nb::cast(nb::tuple(strides))},
               {"offset", nb::cast(i.offset)},
               {"contiguous", nb::cast((bool)i.contiguous)},
               {"refs", nb::cast(i.refs)},
               {"device", nb::cast(t.dev)},
               {"device_name", nb::cast(dml_rt_device_name(i.device))}});
  return d;
}

nb::object tensor_to(const Tensor &t, const std::string &device) {
  dml_rt_tensor_t out;
  check(dml_rt_tensor_to_device(t.h, device_of(device), &out));
  return wrap(out, device);
}

nb::object tensor_reshape(const Tensor &t, const std::vector<int64_t> &shape) {
  dml_rt_tensor_t out;
  check(dml_rt_tensor_reshape(t.h, rank_of(shape, "tensor.reshape"), shape.data(), &out));
  return wrap(out, t.dev);
}

nb::object tensor_expand(const Tensor &t, const std::vector<int64_t> &shape) {
  dml_rt_tensor_t out;
  check(dml_rt_tensor_expand(t.h, rank_of(shape, "tensor.expand"), shape.data(), &out));
  return wrap(out, t.dev);
}

// perm empty: the dims reversed.
nb::object tensor_transpose(const Tensor &t, const std::vector<int64_t> &perm) {
  dml_rt_tensor_info_t i = t.info();
  if (!perm.empty() && (int32_t)perm.size() != i.rank)
    check(dml_status_make(DML_STATUS_INVALID_ARGUMENT, "tensor.transpose",
                          "perm has %zu entries; the tensor has rank %d", perm.size(),
                          (int)i.rank));
  dml_rt_tensor_t out;
  check(dml_rt_tensor_transpose(t.h, perm.empty() ? nullptr : perm.data(), &out));
  return wrap(out, t.dev);
}

nb::object tensor_slice(const Tensor &t, const std::vector<int64_t> &axes,
                        const std::vector<int64_t> &starts,
                        const std::vector<int64_t> &ends,
                        const std::vector<int64_t> &steps) {
  if (starts.size() != axes.size() || ends.size() != axes.size() ||
      steps.size() != axes.size())
    check(dml_status_make(DML_STATUS_INVALID_ARGUMENT, "tensor.slice",
                          "axes, starts, ends and steps differ in length"));
  dml_rt_tensor_t out;
  check(dml_rt_tensor_slice(t.h, (uint32_t)axes.size(), axes.data(), starts.data(),
                            ends.data(), steps.data(), &out));
  return wrap(out, t.dev);
}

// Attribute names and values kept alive for one call (deques: what they
// hold stays in place as they grow).
struct AttrStore {
  std::deque<std::string> strs;
  std::deque<std::vector<int64_t>> ints;
  std::deque<std::vector<double>> floats;
  std::deque<std::vector<const char *>> strings;
  std::deque<InArray> arrays;
  std::vector<dml_attr_t> attrs;
  const char *keep(nb::handle v) {
    strs.push_back(nb::cast<std::string>(nb::str(v)));
    return strs.back().c_str();
  }
};

bool is_int(nb::handle v) {
  return PyBool_Check(v.ptr()) || PyLong_Check(v.ptr());
}

// One attribute (ONNX's name and meaning): bool/int, float, str, a list or
// tuple of numbers or of strs, or an array (a TENSOR attribute).
void attr_of(AttrStore &as, const char *op, nb::handle k, nb::handle v) {
  dml_attr_t a;
  memset(&a, 0, sizeof a);
  a.name = as.keep(k);
  if (is_int(v)) {
    a.kind = DML_ATTR_INT;
    a.i = nb::cast<int64_t>(v);
  } else if (PyFloat_Check(v.ptr())) {
    a.kind = DML_ATTR_FLOAT;
    a.f = nb::cast<double>(v);
  } else if (nb::isinstance<nb::str>(v)) {
    a.kind = DML_ATTR_STRING;
    a.s = as.keep(v);
  } else if (nb::isinstance<nb::list>(v) || nb::isinstance<nb::tuple>(v)) {
    std::vector<int64_t> iv;
    std::vector<double> fv;
    std::vector<const char *> sv;
    size_t n_int = 0, n_num = 0;
    for (nb::handle e : v) {
      if (nb::isinstance<nb::str>(e)) {
        sv.push_back(as.keep(e));
      } else if (is_int(e) || PyFloat_Check(e.ptr())) {
        n_int += is_int(e);
        n_num++;
        iv.push_back(is_int(e) ? nb::cast<int64_t>(e) : 0);
        fv.push_back(nb::cast<double>(e));
      }
    }
    a.n = nb::len(v);
    if (a.n && sv.size() == a.n) {
      as.strings.push_back(sv);
      a.kind = DML_ATTR_STRINGS;
      a.strings = as.strings.back().data();
    } else if (n_num == a.n) {
      as.ints.push_back(iv);
      as.floats.push_back(fv);
      a.kind = n_int == a.n ? DML_ATTR_INTS : DML_ATTR_FLOATS;
      a.ints = as.ints.back().data();
      a.floats = as.floats.back().data();
    } else {
      check(dml_status_make(DML_STATUS_INVALID_ARGUMENT, op,
                            "attribute '%s': a list of numbers or of strings", a.name));
    }
  } else {
    as.arrays.emplace_back();
    std::string what = std::string("attribute '") + a.name + "'";
    a.kind = DML_ATTR_TENSOR;
    a.tensor = tensor_of(v, what, DML_DTYPE_INVALID, op, as.arrays.back());
  }
  as.attrs.push_back(a);
}

// Runs ONNX op `op` eagerly (dml_rt_tensor_op) on `inputs` (Tensors, None
// for an absent optional input) with attributes `kw`; n_outputs new
// Tensors on the inputs' device.
nb::list tensor_op(const std::string &op, nb::list inputs, nb::dict kw,
                   uint32_t n_outputs) {
  // Fixed arrays and no attribute store without attributes: a small op's
  // call costs little beyond dml_rt_tensor_op's own.
  enum { MAX_IO = 64 };
  dml_rt_tensor_t in[MAX_IO], out[MAX_IO];
  size_t n_in = inputs.size();
  if (n_in > MAX_IO || n_outputs < 1 || n_outputs > MAX_IO)
    check(dml_status_make(DML_STATUS_INVALID_ARGUMENT, op.c_str(),
                          "%zu inputs, %u outputs asked (at most %d each)", n_in,
                          n_outputs, (int)MAX_IO));
  const std::string *dev = nullptr;
  for (size_t i = 0; i < n_in; i++) {
    nb::handle v = inputs[i];
    in[i] = DML_RT_TENSOR_NONE;
    if (v.is_none()) continue;
    Tensor *t = nullptr;
    if (!nb::try_cast<Tensor *>(v, t) || !t)
      check(dml_status_make(
          DML_STATUS_INVALID_ARGUMENT, op.c_str(), "input %zu is a %s, not a dmlc.Tensor",
          i, nb::cast<std::string>(nb::str(v.type().attr("__name__"))).c_str()));
    in[i] = t->h;
    if (!dev) dev = &t->dev;
  }
  std::optional<AttrStore> as;
  if (kw.size()) {
    as.emplace();
    for (auto [k, v] : kw) attr_of(*as, op.c_str(), k, v);
  }
  check(dml_rt_tensor_op(op.c_str(), in, (uint32_t)n_in, as ? as->attrs.data() : nullptr,
                         as ? (uint32_t)as->attrs.size() : 0, out, n_outputs));
  nb::list l;
  std::string d = dev ? *dev : std::string("cpu");
  for (uint32_t i = 0; i < n_outputs; i++) l.append(wrap(out[i], d));
  return l;
}

nb::dict device_memory(const std::string &device) {
  dml_rt_device_t *d = device_of(device);
  nb::dict r;
  dict_set(r, {{"bytes", nb::cast(dml_rt_device_bytes(d))},
               {"storages", nb::cast(dml_rt_device_num_storages(d))},
               {"name", nb::cast(dml_rt_device_name(d))}});
  return r;
}

// The buffer protocol of a CPU tensor: its own bytes, no copy, at its
// strides. A private view handle keeps the storage alive while the buffer
// is exported (t.free() meanwhile leaves the bytes in place). A device
// tensor or a freed one raises its dmlc.Error (np.asarray then calls
// __array__, a copy, which raises for a freed one).
struct BufState {
  dml_rt_tensor_t keep;
  Py_ssize_t shape[DML_MAX_RANK], strides[DML_MAX_RANK];
};

const char *buffer_format(dml_dtype_t dt) {
  switch (dt) {
    case DML_DTYPE_F32: return "f";
    case DML_DTYPE_F64: return "d";
    case DML_DTYPE_F16: return "e";
    case DML_DTYPE_I8: return "b";
    case DML_DTYPE_U8: return "B";
    case DML_DTYPE_I16: return "h";
    case DML_DTYPE_U16:
    case DML_DTYPE_BF16: return "H"; /* bf16 as its bits */
    case DML_DTYPE_I32: return "i";
    case DML_DTYPE_U32: return "I";
    case DML_DTYPE_I64: return "q";
    case DML_DTYPE_U64: return "Q";
    case DML_DTYPE_BOOL: return "?";
    default: return nullptr;
  }
}

int tensor_getbuffer(PyObject *self, Py_buffer *view, int flags) {
  Tensor *t = nb::inst_ptr<Tensor>(self);
  auto fail = [&](dml_status_t st) {
    set_python_error(status_error(st));
    view->obj = nullptr;
    return -1;
  };
  dml_rt_tensor_info_t i;
  dml_status_t st = dml_rt_tensor_info(t->h, &i);
  if (st) return fail(st);
  void *data = nullptr;
  if ((st = dml_rt_tensor_host_data(t->h, &data))) return fail(st);
  const char *fmt = buffer_format(i.dtype);
  if (!fmt)
    return fail(dml_status_make(DML_STATUS_UNIMPLEMENTED, "python.buffer",
                                "dtype %s has no buffer format",
                                dml_dtype_name(i.dtype)));
  if (!i.contiguous && (flags & PyBUF_STRIDES) != PyBUF_STRIDES)
    return fail(dml_status_make(DML_STATUS_FAILED_PRECONDITION, "python.buffer",
                                "the tensor is a strided view; ask for strides or "
                                "call .contiguous()"));
  if (!i.contiguous && (flags & (PyBUF_C_CONTIGUOUS & ~PyBUF_STRIDES)) ==
                           (PyBUF_C_CONTIGUOUS & ~PyBUF_STRIDES))
    return fail(dml_status_make(DML_STATUS_FAILED_PRECONDITION, "python.buffer",
                                "a C-contiguous buffer was asked of a strided view; "
                                "call .contiguous()"));
  BufState *bs = new BufState;
  int64_t perm[DML_MAX_RANK];
  for (int32_t k = 0; k < i.rank; k++) perm[k] = k;
  if ((st = dml_rt_tensor_transpose(t->h, perm, &bs->keep))) {
    delete bs;
    return fail(st);
  }
  Py_ssize_t es = (Py_ssize_t)dml_dtype_size(i.dtype), n = 1;
  for (int32_t k = 0; k < i.rank; k++) {
    bs->shape[k] = (Py_ssize_t)i.dims[k];
    bs->strides[k] = (Py_ssize_t)i.strides[k] * es;
    n *= bs->shape[k];
  }
  view->buf = data;
  view->obj = self;
  Py_INCREF(self);
  view->len = n * es;
  view->readonly = 0;
  view->itemsize = es;
  view->format = (flags & PyBUF_FORMAT) ? const_cast<char *>(fmt) : nullptr;
  view->ndim = i.rank;
  view->shape = (flags & PyBUF_ND) ? bs->shape : nullptr;
  view->strides = (flags & PyBUF_STRIDES) == PyBUF_STRIDES ? bs->strides : nullptr;
  view->suboffsets = nullptr;
  view->internal = bs;
  return 0;
}

void tensor_releasebuffer(PyObject *, Py_buffer *view) {
  BufState *bs = (BufState *)view->internal;
  if (!bs) return;
  dml_status_free(dml_rt_tensor_free(bs->keep));
  delete bs;
}

PyType_Slot tensor_slots[] = {{Py_bf_getbuffer, (void *)tensor_getbuffer},
                              {Py_bf_releasebuffer, (void *)tensor_releasebuffer},
                              {0, nullptr}};

// One output read back: its view (lent by the session) and, when copying,
// a malloc'd copy.
struct OutBuf {
  dml_tensor_t t;
  void *copy = nullptr; /* freed here unless handed to an array */
  OutBuf() { memset(&t, 0, sizeof t); }
  OutBuf(OutBuf &&o) noexcept : t(o.t), copy(o.copy) { o.copy = nullptr; }
  OutBuf(const OutBuf &) = delete;
  OutBuf &operator=(const OutBuf &) = delete;
  ~OutBuf() { free(copy); }
};

// Binds `inputs` (name -> array-like or dmlc.Tensor), runs, and returns
// name -> ndarray of every output: copies (owned by the array) when `copy`,
// else read-only views of the session's memory, valid until its next run
// (the array keeps the session alive). With `out_device` ("cpu",
// "vulkan:0", ...) the outputs are new dmlc.Tensors on that device instead
// (dml_rt_session_get_output_tensor). A Tensor input is bound by
// dml_rt_session_set_input_tensor through a view of its own, which keeps
// its storage alive while the GIL is released.
nb::dict session_run(nb::handle self, Session &se, nb::dict inputs, bool copy,
                     const std::string &out_device) {
  std::vector<InArray> arrays;
  std::vector<std::string> names;
  std::vector<dml_tensor_t> ts;
  std::vector<std::pair<int32_t, dml_rt_tensor_t>> tins; /* (index, view) */
  struct Views {  // the Tensor inputs' views, freed on every path
    std::vector<std::pair<int32_t, dml_rt_tensor_t>> *v;
    ~Views() {
      for (auto &p : *v) dml_status_free(dml_rt_tensor_free(p.second));
    }
  } views{&tins};
  for (auto [k, v] : inputs) {
    std::string name = nb::cast<std::string>(nb::str(k));
    int32_t idx = dml_rt_session_find_input(se.s, name.c_str());
    Tensor *tv = nullptr;
    if (nb::try_cast<Tensor *>(v, tv) && tv) {
      if (idx < 0)
        check(dml_status_make(DML_STATUS_NOT_FOUND, "python.run", "no input named '%s'",
                              name.c_str()));
      int64_t perm[DML_MAX_RANK];
      for (int32_t d = 0; d < DML_MAX_RANK; d++) perm[d] = d;
      dml_rt_tensor_t view;
      check(dml_rt_tensor_transpose(tv->h, perm, &view));
      tins.push_back({idx, view});
      continue;
    }
    dml_dtype_t want = DML_DTYPE_INVALID;
    if (idx >= 0) {
      dml_rt_io_info_t info;
      check(dml_rt_session_input_info(se.s, (uint32_t)idx, &info));
      want = info.dtype;
    }
    InArray a;
    dml_tensor_t t = tensor_of(v, name, want, "python.run", a);
    names.push_back(name);
    ts.push_back(t);
    arrays.push_back(std::move(a));
  }
  dml_rt_device_t *od = out_device.empty() ? nullptr : device_of(out_device);
  std::vector<OutBuf> outs;
  std::vector<dml_rt_tensor_t> touts;
  dml_status_t st = DML_OK;
  {
    nb::gil_scoped_release r;
    std::lock_guard<std::mutex> lock(se.mu);
    dml_rt_session_clear_inputs(se.s);
    for (size_t i = 0; i < ts.size() && !st; i++)
      st = dml_rt_session_set_input_by_name(se.s, names[i].c_str(), &ts[i]);
    if (!tins.empty() && !st) {
      // Tensor inputs are bound with the GIL held (the one lock of eager
      // tensors: a view's dense copy runs an eager op on its device).
      nb::gil_scoped_acquire g;
      for (size_t i = 0; i < tins.size() && !st; i++)
        st = dml_rt_session_set_input_tensor(se.s, (uint32_t)tins[i].first,
                                             tins[i].second);
    }
    if (!st) st = dml_rt_session_run(se.s);
    uint32_t n = dml_rt_session_num_outputs(se.s);
    if (od && !st) {
      // Tensors are made with the GIL held (the one lock of eager tensors),
      // the session still locked (its outputs are this run's).
      nb::gil_scoped_acquire g;
      for (uint32_t i = 0; i < n && !st; i++) {
        touts.push_back(DML_RT_TENSOR_NONE);
        st = dml_rt_session_get_output_tensor(se.s, i, od, &touts.back());
      }
      if (st)
        for (auto &t : touts) dml_status_free(dml_rt_tensor_free(t));
    }
    outs.resize(st || od ? 0 : n);
    for (uint32_t i = 0; i < outs.size() && !st; i++) {
      st = dml_rt_session_get_output(se.s, i, &outs[i].t);
      if (st || !copy) continue;
      size_t bytes = dml_tensor_bytes(&outs[i].t);
      outs[i].copy = malloc(bytes ? bytes : 1);
      if (!outs[i].copy) {
        st = dml_status_make(DML_STATUS_RESOURCE_EXHAUSTED, "python.run",
                             "cannot allocate %zu bytes for output %u", bytes, i);
        break;
      }
      memcpy(outs[i].copy, outs[i].t.data, bytes);
    }
    if (st) outs.clear();
  }
  check(st);
  nb::dict result;
  for (uint32_t i = 0; i < touts.size(); i++) {
    dml_rt_io_info_t info;
    check(dml_rt_session_output_info(se.s, i, &info));
    result[info.name] = wrap(touts[i], out_device);
  }
  for (uint32_t i = 0; i < outs.size(); i++) {
    dml_rt_io_info_t info;
    check(dml_rt_session_output_info(se.s, i, &info));
    nb::object owner;
    void *data = outs[i].t.data;
    if (copy) {
      data = outs[i].copy;
      owner = nb::capsule(data, [](void *p) noexcept { free(p); });
      outs[i].copy = nullptr; /* the capsule frees it now */
    } else {
      owner = nb::borrow(self);
    }
    nb::object o = array_of(outs[i].t, data, owner, "python.run", info.name);
    if (!copy) o.attr("setflags")("write"_a = false);
    result[info.name] = o;
  }
  return result;
}

// A --dim-bound / --input-shape value parsed into `spec`, its message
// (printed into a memory stream) raised as the error's reason.
void parse_spec(dmlc_dim_spec_t *spec, bool shape, const std::string &v) {
  char *text = nullptr;
  size_t len = 0;
  FILE *f = open_memstream(&text, &len);
  spec->err = f;
  int ok = shape ? dmlc_dim_spec_parse_shape(spec, "compile", v.c_str())
                 : dmlc_dim_spec_parse_bound(spec, "compile", v.c_str());
  spec->err = nullptr;
  if (f) fclose(f);
  std::string msg = text ? text : "";
  free(text);
  if (ok) return;
  if (msg.rfind("error: compile: ", 0) == 0) msg.erase(0, 16);
  while (!msg.empty() && msg.back() == '\n') msg.pop_back();
  dmlc_dim_spec_free(spec);
  check(dml_status_make(DML_STATUS_INVALID_ARGUMENT, "compile", "%s", msg.c_str()));
}

// Compiles ONNX bytes into package bytes; returns (package, report).
nb::tuple compile_onnx(nb::bytes onnx, const std::string &base_dir,
                       const std::string &source_name, const std::string &targets,
                       int64_t batch_bound, const std::vector<std::string> &dim_bounds,
                       const std::vector<std::string> &input_shapes,
                       int64_t dynamic_dim_bound, int64_t dynamic_max_elements,
                       const std::string &cuda_arch, bool allow_tf32, bool cpu_fallback,
                       nb::dict train, const std::string &precision) {
  // The training configuration (passes/dml_train.h) when `train` is not
  // empty: dml_train_config_init's defaults, then the keys given (parsed
  // by the C library's own parsers, as `dmlc train` does).
  dml_train_config_t cfg;
  dml_train_config_init(&cfg);
  dml_train_output_t outs[DML_TRAIN_MAX_OUTPUTS];
  char outs_buf[1024];
  std::string loss_output;
  if (train.size() > 0) {
    for (auto [k, v] : train) {
      std::string key = nb::cast<std::string>(nb::str(k));
      if (key == "loss") {
        std::string l = nb::cast<std::string>(v);
        check(dml_loss_kind_parse(l.c_str(), &cfg.loss));
      } else if (key == "losses") {  // "OUT=LOSS[:WEIGHT],..."
        std::string l = nb::cast<std::string>(v);
        check(dml_train_outputs_parse(l.c_str(), outs_buf, sizeof outs_buf, outs,
                                      &cfg.n_outputs));
        cfg.outputs = outs;
      } else if (key == "optimizer") {
        std::string l = nb::cast<std::string>(v);
        check(dml_optimizer_kind_parse(l.c_str(), &cfg.optimizer));
      } else if (key == "loss_output") {
        loss_output = nb::cast<std::string>(v);
        cfg.output = loss_output.c_str();
      } else if (key == "soft_targets") {
        cfg.soft_targets = nb::cast<bool>(v);
      } else {
        static const char *const keys[] = {
            "momentum",     "beta1",     "beta2",      "epsilon",         "alpha",
            "weight_decay", "clip_norm", "clip_value", "label_smoothing", "huber_delta"};
        double *dst[] = {&cfg.momentum,   &cfg.beta1,      &cfg.beta2,
                         &cfg.epsilon,    &cfg.alpha,      &cfg.weight_decay,
                         &cfg.clip_norm,  &cfg.clip_value, &cfg.label_smoothing,
                         &cfg.huber_delta};
        size_t i = 0;
        while (i < sizeof keys / sizeof *keys && key != keys[i]) i++;
        if (i == sizeof keys / sizeof *keys)
          check(dml_status_make(DML_STATUS_INVALID_ARGUMENT, "compile",
                                "unknown training option '%s'", key.c_str()));
        *dst[i] = nb::cast<double>(v);
      }
    }
  }
  dmlc_dim_spec_t spec;
  memset(&spec, 0, sizeof spec);
  for (auto &v : dim_bounds) parse_spec(&spec, false, v);
  for (auto &v : input_shapes) parse_spec(&spec, true, v);
  dml_compile_options_t o;
  memset(&o, 0, sizeof o);
  o.targets = targets.empty() ? nullptr : targets.c_str();
  o.batch_bound = batch_bound;
  o.dynamic_dim_bound = dynamic_dim_bound;
  o.dynamic_max_elements = dynamic_max_elements;
  o.cuda_arch = cuda_arch.empty() ? nullptr : cuda_arch.c_str();
  o.allow_tf32 = allow_tf32;
  o.precision = precision.empty() ? nullptr : precision.c_str();
  o.no_cpu_fallback = !cpu_fallback;
  o.command_line = "python: dmlc.compile";
  if (train.size() > 0) o.train = &cfg;
  {
    char *text = nullptr;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    spec.err = f;
    int ok = dmlc_dim_spec_apply(&spec, "compile", &o);
    spec.err = nullptr;
    if (f) fclose(f);
    std::string msg = text ? text : "";
    free(text);
    if (!ok) {
      if (msg.rfind("error: compile: ", 0) == 0) msg.erase(0, 16);
      while (!msg.empty() && msg.back() == '\n') msg.pop_back();
      dmlc_dim_spec_free(&spec);
      check(dml_status_make(DML_STATUS_INVALID_ARGUMENT, "compile", "%s", msg.c_str()));
    }
  }
  void *pkg = nullptr;
  size_t size = 0;
  dml_compile_report_t rep;
  memset(&rep, 0, sizeof rep);
  dml_status_t st;
  const void *data = onnx.c_str();
  size_t n = onnx.size();
  {
    nb::gil_scoped_release r;
    st = dml_compile_onnx_memory(data, n, base_dir.empty() ? nullptr : base_dir.c_str(),
                                 source_name.empty() ? nullptr : source_name.c_str(), &o,
                                 &pkg, &size, &rep);
  }
  dmlc_dim_spec_free(&spec);
  check(st);
  nb::bytes out(pkg, size);
  free(pkg);
  nb::dict d;
  dict_set(d, {{"num_nodes", nb::cast(rep.num_nodes)},
               {"num_weights", nb::cast(rep.num_weights)},
               {"weight_bytes", nb::cast(rep.weight_bytes)},
               {"arena_bytes", nb::cast(rep.arena_bytes)},
               {"package_bytes", nb::cast(rep.package_bytes)},
               {"compile_ms", nb::cast(rep.compile_ms)}});
  return nb::make_tuple(out, d);
}

nb::dict device_dict(const dml_rt_device_info_t &di) {
  nb::dict d;
  dict_set(d, {{"id", nb::cast(di.id)},
               {"name", nb::cast(di.name)},
               {"kind", nb::cast(di.kind ? di.kind : "")},
               {"memory_bytes", nb::cast(di.memory_bytes)},
               {"api_version",
                nb::cast(nb::make_tuple(di.api_major, di.api_minor, di.api_patch))},
               {"is_default", nb::cast((bool)di.is_default)}});
  return d;
}

// The Vulkan ("vulkan") or CUDA ("cuda") devices; raises when none can be
// listed (the reason named).
nb::list gpu_devices(const std::string &kind) {
  dml_rt_device_info_t infos[16];
  uint32_t n = 0;
  dml_status_t st;
  {
    nb::gil_scoped_release r;
    st = kind == "cuda" ? dml_rt_cuda_devices(infos, 16, &n)
                        : dml_rt_vulkan_devices(infos, 16, &n);
  }
  check(st);
  nb::list l;
  for (uint32_t i = 0; i < n && i < 16; i++) l.append(device_dict(infos[i]));
  return l;
}

nb::dict run_check(Model &md, const std::string &device, uint64_t seed,
                   uint32_t iterations) {
  dml_rt_check_options_t opt;
  memset(&opt, 0, sizeof opt);
  opt.seed = seed;
  opt.iterations = iterations;
  dml_rt_check_report_t *rep = nullptr;
  dml_status_t st;
  {
    nb::gil_scoped_release r;
    st = dml_rt_check(md.m, device.c_str(), &opt, &rep);
  }
  check(st);
  nb::dict d;
  dict_set(d, {{"device", nb::cast(rep->device)},
               {"n_failed", nb::cast(rep->n_failed)},
               {"seed", nb::cast(rep->seed)},
               {"iterations", nb::cast(rep->iterations)}});
  nb::list ks;
  for (uint32_t i = 0; i < rep->n_kernels; i++) {
    const dml_rt_check_kernel_t &k = rep->kernels[i];
    nb::dict e;
    dict_set(e, {{"name", nb::cast(k.name)},
                 {"ops", nb::cast(k.ops)},
                 {"tol_class", nb::cast(k.tol_class ? k.tol_class : "")},
                 {"tolerance", nb::cast(k.tolerance)},
                 {"checked", nb::cast((bool)k.checked)},
                 {"passed", nb::cast((bool)k.passed)},
                 {"worst", nb::cast(k.worst)},
                 {"value", nb::cast(k.value)},
                 {"index", nb::cast(k.index)},
                 {"device_value", nb::cast(k.device_value)},
                 {"cpu_value", nb::cast(k.cpu_value)},
                 {"inputs", nb::cast(k.inputs ? k.inputs : "")},
                 {"iteration", nb::cast(k.iteration)},
                 {"note", nb::cast(k.note)}});
    ks.append(e);
  }
  d["kernels"] = ks;
  dml_rt_check_report_free(rep);
  return d;
}

// ---------------------------------------------------------------------------
// Training (dml_trainer.h)
// ---------------------------------------------------------------------------

// A trainer of a training package on one device. A trainer belongs to one
// thread at a time (dml_trainer.h): every call takes `mu` after releasing
// the GIL. A fit's callbacks run on the fitting thread with the GIL taken
// back; a call on the same trainer from inside one is FAILED_PRECONDITION
// (it would wait for the fit that waits for it).
struct Trainer {
  dml_trainer_t *t = nullptr;
  std::mutex mu;
  std::atomic<bool> fitting{false};
  std::atomic<std::thread::id> fit_thread{};
  Trainer(Model &md, const std::string &device) {
    dml_status_t st;
    {
      nb::gil_scoped_release r;
      st = dml_trainer_create(md.m, device.c_str(), &t);
    }
    check(st);
  }
  Trainer(const Trainer &) = delete;
  Trainer &operator=(const Trainer &) = delete;
  ~Trainer() { dml_trainer_release(t); }
  void not_in_callback(const char *op) {
    if (fitting.load() && fit_thread.load() == std::this_thread::get_id())
      check(dml_status_make(DML_STATUS_FAILED_PRECONDITION, op,
                            "called from inside a fit callback of the same trainer"));
  }
};

nb::dict trainer_info(Trainer &tr) {
  nb::dict d;
  nb::list ins, tgs;
  for (int32_t i = 0; i < dml_trainer_num_inputs(tr.t); i++) {
    dml_rt_io_info_t info;
    check(dml_trainer_input_info(tr.t, i, &info));
    ins.append(io_info_dict(info));
  }
  dml_rt_session_t *ev = dml_trainer_session(tr.t, "eval_step");
  for (int32_t j = 0; j < dml_trainer_num_targets(tr.t); j++) {
    dml_rt_io_info_t info;
    check(dml_trainer_target_info(tr.t, j, &info));
    nb::dict e = io_info_dict(info);
    const char *o = dml_trainer_target_output(tr.t, j);
    e["output"] = o ? nb::object(nb::str(o)) : nb::none();
    std::string correct = o ? std::string("correct.") + o : std::string("correct");
    bool has = false;
    for (uint32_t k = 0; ev && k < dml_rt_session_num_outputs(ev); k++) {
      dml_rt_io_info_t oi;
      if (!dml_rt_session_output_info(ev, k, &oi) && oi.name && correct == oi.name)
        has = true;
    }
    e["has_accuracy"] = has;
    tgs.append(e);
  }
  dict_set(d, {{"inputs", nb::cast(ins)},
               {"targets", nb::cast(tgs)},
               {"batch_bound", nb::cast(dml_trainer_batch_bound(tr.t))},
               {"epoch", nb::cast(dml_trainer_epoch(tr.t))},
               {"step", nb::cast(dml_trainer_step(tr.t))}});
  return d;
}

// The data set of `xs` (one array per model input, in its order) and `ys`
// (one per target, in train_step's order; may be empty for predict), the
// arrays lent by `keep`. Raises INVALID_ARGUMENT for a count mismatch.
void dataset_of(Trainer &tr, nb::list xs, nb::list ys, std::vector<InArray> &keep,
                dml_dataset_t *d, const char *op) {
  memset(d, 0, sizeof *d);
  int32_t ni = dml_trainer_num_inputs(tr.t), nt = dml_trainer_num_targets(tr.t);
  if ((int32_t)xs.size() != ni || (ys.size() && (int32_t)ys.size() != nt))
    check(dml_status_make(DML_STATUS_INVALID_ARGUMENT, op,
                          "%zu inputs and %zu targets given; the model takes %d and %d",
                          xs.size(), ys.size(), ni, nt));
  keep.resize(xs.size() + ys.size());
  for (int32_t i = 0; i < ni; i++) {
    dml_rt_io_info_t info;
    check(dml_trainer_input_info(tr.t, i, &info));
    d->inputs[i] = tensor_of(xs[i], info.name, info.dtype, op, keep[i]);
  }
  for (int32_t j = 0; j < (int32_t)ys.size(); j++) {
    dml_rt_io_info_t info;
    check(dml_trainer_target_info(tr.t, j, &info));
    d->targets[j] = tensor_of(ys[j], info.name, info.dtype, op, keep[ni + j]);
  }
  if (ni == 1 && (ys.size() == 0 || nt == 1)) {  // the x / y form
    d->x = d->inputs[0];
    if (ys.size()) d->y = d->targets[0];
  } else {
    d->n_inputs = ni;
    d->n_targets = (int32_t)ys.size();
  }
}

// What one fit needs to name an epoch's metrics: the trained outputs (with
// or without accuracy) and the table metrics' column names.
struct FitCtx {
  Trainer *tr = nullptr;
  nb::object epoch_cb, batch_cb;
  std::vector<std::string> outputs;
  std::vector<bool> has_acc;
  std::vector<std::string> metric_cols;
  std::unique_ptr<nb::python_error> pending;
  std::chrono::steady_clock::time_point last_signal_check{};
};

nb::float_ num(double v) {
  return nb::float_(v);
}

// An epoch's metrics as a dict, named as dml_history_write_csv's columns.
nb::dict epoch_dict(const dml_epoch_metrics_t &e, const FitCtx &c) {
  nb::dict d;
  dict_set(d, {{"epoch", nb::cast(e.epoch)},
               {"epochs", nb::cast(e.epochs)},
               {"step", nb::cast(e.step)},
               {"loss", nb::cast(num(e.loss))},
               {"accuracy", nb::cast(num(e.accuracy))},
               {"val_loss", nb::cast(num(e.val_loss))},
               {"val_accuracy", nb::cast(num(e.val_accuracy))},
               {"lr", nb::cast(num(e.lr))},
               {"seconds", nb::cast(num(e.seconds))},
               {"samples_per_second", nb::cast(num(e.samples_per_second))}});
  for (size_t j = 0; j < c.outputs.size() && j < DML_MAX_DATA_TENSORS; j++) {
    const std::string &o = c.outputs[j];
    d[(o + "_loss").c_str()] = num(e.output_loss[j]);
    if (c.has_acc[j]) d[(o + "_accuracy").c_str()] = num(e.output_accuracy[j]);
    d[("val_" + o + "_loss").c_str()] = num(e.val_output_loss[j]);
    if (c.has_acc[j])
      d[("val_" + o + "_accuracy").c_str()] = num(e.val_output_accuracy[j]);
  }
  for (size_t k = 0; k < c.metric_cols.size() && k < DML_MAX_METRICS; k++)
    d[c.metric_cols[k].c_str()] = num(e.metrics[k]);
  return d;
}

// The C callbacks: the GIL taken back, the Python callable called with the
// logs; a true result stops training. An exception stops it too and is
// raised by fit once the trainer has returned.
int fit_epoch_cb(dml_epoch_metrics_t *m, void *u) {
  FitCtx *c = (FitCtx *)u;
  nb::gil_scoped_acquire g;
  if (c->pending) return 1;
  try {
    return nb::cast<bool>(c->epoch_cb(epoch_dict(*m, *c))) ? 1 : 0;
  } catch (nb::python_error &e) {
    c->pending = std::make_unique<nb::python_error>(std::move(e));
  } catch (const std::exception &e) {
    c->pending = std::make_unique<nb::python_error>(
        (PyErr_SetString(PyExc_RuntimeError, e.what()), nb::python_error()));
  }
  return 1;
}

// Without a Python batch callback, it only lets the interpreter see signals
// (Ctrl-C: KeyboardInterrupt ends the fit), at most every 100 ms so that a
// step rarely waits for the GIL.
int fit_batch_cb(const dml_batch_metrics_t *m, void *u) {
  FitCtx *c = (FitCtx *)u;
  if (c->batch_cb.is_none()) {
    auto now = std::chrono::steady_clock::now();
    if (now - c->last_signal_check < std::chrono::milliseconds(100)) return 0;
    c->last_signal_check = now;
    nb::gil_scoped_acquire g;
    if (PyErr_CheckSignals() == 0) return 0;
    c->pending = std::make_unique<nb::python_error>();
    return 1;
  }
  nb::gil_scoped_acquire g;
  if (c->pending) return 1;
  try {
    nb::dict d;
    dict_set(d, {{"epoch", nb::cast(m->epoch)},
                 {"batch", nb::cast(m->batch)},
                 {"batches", nb::cast(m->batches)},
                 {"step", nb::cast(m->step)},
                 {"rows", nb::cast(m->rows)},
                 {"loss", nb::cast(num(m->loss))},
                 {"lr", nb::cast(num(m->lr))}});
    return nb::cast<bool>(c->batch_cb(d)) ? 1 : 0;
  } catch (nb::python_error &e) {
    c->pending = std::make_unique<nb::python_error>(std::move(e));
  } catch (const std::exception &e) {
    c->pending = std::make_unique<nb::python_error>(
        (PyErr_SetString(PyExc_RuntimeError, e.what()), nb::python_error()));
  }
  return 1;
}

template <typename T>
bool opt_get(nb::dict o, const char *key, T *out) {
  if (!o.contains(key)) return false;
  nb::object v = o[key];
  if (v.is_none()) return false;
  *out = nb::cast<T>(v);
  return true;
}

// fit: `opts` holds the dml_fit_options_t fields given (others keep
// dml_fit_options_init's defaults); `metrics` is a list of (output name or
// "", metric name). Returns {"epochs": [dict...], "stopped_early",
// "best_epoch", "restored", "validation"}.
nb::dict trainer_fit(Trainer &tr, nb::list xs, nb::list ys, nb::object vxs,
                     nb::object vys, nb::dict opts, nb::list metrics, nb::object epoch_cb,
                     nb::object batch_cb) {
  const char *op = "python.fit";
  tr.not_in_callback(op);
  dml_fit_options_t o;
  dml_fit_options_init(&o);
  o.verbose = 0;
  int64_t iv;
  double dv;
  bool bv;
  std::string sv, ckdir, monitor, label;
  if (opt_get(opts, "epochs", &iv)) o.epochs = (int32_t)iv;
  if (opt_get(opts, "batch_size", &iv)) o.batch_size = iv;
  if (opt_get(opts, "eval_batch_size", &iv)) o.eval_batch_size = iv;
  if (opt_get(opts, "seed", &iv)) o.seed = (uint64_t)iv;
  if (opt_get(opts, "shuffle", &bv)) o.shuffle = bv;
  if (opt_get(opts, "verbose", &iv)) o.verbose = (int)iv;
  if (opt_get(opts, "validation_split", &dv)) o.validation_split = dv;
  if (opt_get(opts, "patience", &iv)) o.patience = (int32_t)iv;
  if (opt_get(opts, "min_delta", &dv)) o.min_delta = dv;
  if (opt_get(opts, "restore_best", &bv)) o.restore_best = bv;
  if (opt_get(opts, "monitor", &monitor))
    check(dml_monitor_parse(monitor.c_str(), &o.monitor));
  if (opt_get(opts, "checkpoint_every", &iv)) o.checkpoint_every = (int32_t)iv;
  if (opt_get(opts, "checkpoint_dir", &ckdir)) o.checkpoint_dir = ckdir.c_str();
  if (opt_get(opts, "validation_label", &label)) o.validation_label = label.c_str();
  if (opt_get(opts, "lr_schedule", &sv)) {
    check(dml_lr_schedule_parse(sv.c_str(), &o.lr));
  } else if (opt_get(opts, "learning_rate", &dv)) {
    o.lr.kind = DML_LR_CONSTANT;
    o.lr.initial = dv;
  }
  static const char *const hk[] = {"momentum", "beta1",        "beta2",     "epsilon",
                                   "alpha",    "weight_decay", "clip_norm", "clip_value"};
  double *hd[] = {&o.hyper.momentum,  &o.hyper.beta1,     &o.hyper.beta2,
                  &o.hyper.epsilon,   &o.hyper.alpha,     &o.hyper.weight_decay,
                  &o.hyper.clip_norm, &o.hyper.clip_value};
  for (size_t i = 0; i < sizeof hk / sizeof *hk; i++) opt_get(opts, hk[i], hd[i]);

  FitCtx c;
  c.tr = &tr;
  c.epoch_cb = epoch_cb;
  c.batch_cb = batch_cb;
  std::vector<std::string> metric_outs(metrics.size());
  if (metrics.size() > DML_MAX_METRICS)
    check(dml_status_make(DML_STATUS_INVALID_ARGUMENT, op, "at most %d metrics",
                          DML_MAX_METRICS));
  for (size_t i = 0; i < metrics.size(); i++) {
    nb::tuple p = nb::cast<nb::tuple>(metrics[i]);
    metric_outs[i] = nb::cast<std::string>(p[0]);
    std::string name = nb::cast<std::string>(p[1]);
    dml_metric_t m[DML_MAX_METRICS];
    int32_t nm = 0;
    check(dml_metrics_parse(name.c_str(), m, &nm));
    if (nm != 1)
      check(dml_status_make(DML_STATUS_INVALID_ARGUMENT, op,
                            "metric '%s': one metric name per entry", name.c_str()));
    o.metrics[o.n_metrics] = m[0];
    o.metric_output[o.n_metrics] =
        metric_outs[i].empty() ? nullptr : metric_outs[i].c_str();
    o.n_metrics++;
  }

  std::vector<InArray> keep, vkeep;
  dml_dataset_t train, val;
  dataset_of(tr, xs, ys, keep, &train, op);
  if (!vxs.is_none()) {
    dataset_of(tr, nb::cast<nb::list>(vxs), nb::cast<nb::list>(vys), vkeep, &val, op);
    o.validation = &val;
  }
  bool has_val = o.validation || o.validation_split > 0;
  for (int32_t j = 0; j < dml_trainer_num_targets(tr.t); j++) {
    const char *name = dml_trainer_target_output(tr.t, j);
    if (!name) break;
    c.outputs.push_back(name);
  }
  nb::dict info = trainer_info(tr);
  nb::list tgs = info["targets"];
  for (size_t j = 0; j < c.outputs.size(); j++)
    c.has_acc.push_back(nb::cast<bool>(tgs[j]["has_accuracy"]));
  for (int32_t k = 0; k < o.n_metrics; k++) {
    char name[32];
    dml_metric_name(&o.metrics[k], name, sizeof name);
    c.metric_cols.push_back(std::string(has_val ? "val_" : "") + metric_outs[k] +
                            (metric_outs[k].empty() ? "" : "_") + name);
  }
  if (!epoch_cb.is_none()) o.callback = fit_epoch_cb;
  o.batch_callback = fit_batch_cb; /* the Python one, or signals */
  c.last_signal_check = std::chrono::steady_clock::now();
  o.user_data = &c;

  dml_history_t h;
  memset(&h, 0, sizeof h);
  dml_status_t st;
  {
    nb::gil_scoped_release r;
    std::lock_guard<std::mutex> lock(tr.mu);
    tr.fit_thread.store(std::this_thread::get_id());
    tr.fitting = true;
    st = dml_trainer_fit(tr.t, &train, &o, &h);
    tr.fitting = false;
  }
  if (c.pending) {
    if (st) dml_status_free(st);
    dml_history_free(&h);
    throw *c.pending;
  }
  if (st) dml_history_free(&h);
  check(st);
  nb::dict d;
  nb::list eps;
  for (int32_t i = 0; i < h.n_epochs; i++) eps.append(epoch_dict(h.epochs[i], c));
  dict_set(d, {{"epochs", nb::cast(eps)},
               {"stopped_early", nb::cast((bool)h.stopped_early)},
               {"best_epoch", nb::cast(h.best_epoch)},
               {"restored", nb::cast((bool)h.restored)},
               {"validation", nb::cast(std::string(h.validation))}});
  dml_history_free(&h);
  return d;
}

// evaluate: {"loss", "accuracy"} and, for a multi-output package, per
// trained output O "O_loss" and "O_accuracy" (those that have one).
nb::dict trainer_evaluate(Trainer &tr, nb::list xs, nb::list ys, int64_t batch_size) {
  const char *op = "python.evaluate";
  tr.not_in_callback(op);
  std::vector<InArray> keep;
  dml_dataset_t d;
  dataset_of(tr, xs, ys, keep, &d, op);
  if (ys.size() == 0)
    check(dml_status_make(DML_STATUS_INVALID_ARGUMENT, op, "evaluate needs the targets"));
  double loss = NAN, acc = NAN, losses[DML_MAX_DATA_TENSORS], accs[DML_MAX_DATA_TENSORS];
  dml_status_t st;
  {
    nb::gil_scoped_release r;
    std::lock_guard<std::mutex> lock(tr.mu);
    st = dml_trainer_evaluate_outputs(tr.t, &d, batch_size, &loss, &acc, losses, accs);
  }
  check(st);
  nb::dict out;
  out["loss"] = num(loss);
  out["accuracy"] = num(acc);
  for (int32_t j = 0; j < dml_trainer_num_targets(tr.t); j++) {
    const char *o = dml_trainer_target_output(tr.t, j);
    if (!o) break;
    out[(std::string(o) + "_loss").c_str()] = num(losses[j]);
    if (!std::isnan(accs[j])) out[(std::string(o) + "_accuracy").c_str()] = num(accs[j]);
  }
  return out;
}

// predict: forward's output `output` over every row of xs (in chunks of
// the batch bound, dml_trainer_predict_data), as a new array.
nb::object trainer_predict(Trainer &tr, nb::list xs, uint32_t output) {
  const char *op = "python.predict";
  tr.not_in_callback(op);
  std::vector<InArray> keep;
  dml_dataset_t d;
  dataset_of(tr, xs, nb::list(), keep, &d, op);
  dml_tensor_t y;
  memset(&y, 0, sizeof y);
  void *buf = nullptr;
  dml_status_t st;
  {
    nb::gil_scoped_release r;
    std::lock_guard<std::mutex> lock(tr.mu);
    st = dml_trainer_predict_data(tr.t, &d, output, &y, &buf);
  }
  check(st);
  nb::capsule owner(buf, [](void *p) noexcept { free(p); });
  return array_of(y, buf, owner, op, "prediction");
}

void trainer_save(Trainer &tr, Model &md, nb::bytes pkg, const std::string &path) {
  const char *op = "python.save";
  tr.not_in_callback(op);
  const void *p = pkg.c_str();
  size_t n = pkg.size();
  dml_status_t st;
  {
    nb::gil_scoped_release r;
    std::lock_guard<std::mutex> lock(tr.mu);
    st = dml_train_save_package(md.m, dml_trainer_session(tr.t, "train_step"), p, n,
                                path.c_str());
  }
  check(st);
}

void trainer_checkpoint(Trainer &tr, const std::string &path, bool save, uint64_t seed) {
  tr.not_in_callback("python.checkpoint");
  dml_status_t st;
  {
    nb::gil_scoped_release r;
    std::lock_guard<std::mutex> lock(tr.mu);
    st = save ? dml_trainer_save_checkpoint(tr.t, path.c_str(), seed)
              : dml_trainer_load_checkpoint(tr.t, path.c_str());
  }
  check(st);
}

// ---------------------------------------------------------------------------
// Quantization-aware training (compile(qat=True), Trainer.export_qat_onnx;
// compiler/dml_quantize.h, as `dmlc train --qat` does)
// ---------------------------------------------------------------------------

// The quantizer's report as a dict.
nb::dict qat_report(const dml_quant_report_t &rep) {
  size_t nq = 0;
  for (size_t i = 0; i < rep.n_layers; i++) nq += rep.layers[i].quantized != 0;
  nb::dict d;
  dict_set(d, {{"layers", nb::cast(rep.n_layers)},
               {"layers_quantized", nb::cast(nq)},
               {"activations", nb::cast(rep.n_activations)},
               {"calibration_rows", nb::cast(rep.calib_rows)},
               {"output", nb::cast(std::string(rep.output_name ? rep.output_name : ""))},
               {"output_sqnr_db", nb::cast(rep.output_sqnr_db)}});
  return d;
}

// The fake-quantized training form of the f32 ONNX model at `path`
// (dml_quantize_onnx with fake_quant, its activation ranges calibrated on
// the first DML_QAT_CALIB_ROWS rows of `calib`): (ONNX bytes, report).
nb::tuple qat_model(const std::string &path, nb::handle calib) {
  InArray keep;
  dml_tensor_t c =
      tensor_of(calib, "calibration", DML_DTYPE_INVALID, "python.compile", keep);
  dml_quant_options_t qo;
  dml_quant_options_init(&qo);
  qo.fake_quant = 1;
  qo.max_rows = DML_QAT_CALIB_ROWS;
  dml_quant_report_t rep;
  memset(&rep, 0, sizeof rep);
  void *bytes = nullptr;
  size_t n = 0;
  dml_status_t st;
  {
    nb::gil_scoped_release r;
    st = dml_quantize_onnx(path.c_str(), &c, &qo, &bytes, &n, &rep);
  }
  if (st) check(dml_status_annotate(st, "qat=True: inserting fake quantization"));
  nb::dict d = qat_report(rep);
  dml_quant_report_free(&rep);
  nb::bytes out(bytes, n);
  free(bytes);
  return nb::make_tuple(out, d);
}

// The int8 QDQ model of a QAT trainer (dml_quantize_qat_export: the
// trained weights and activation ranges of trainer `tr`'s forward session
// on the f32 model at `path`); temporary files named from `tmp_prefix`.
nb::tuple qat_export(Trainer &tr, Model &md, const std::string &path,
                     const std::string &tmp_prefix, nb::handle calib) {
  tr.not_in_callback("python.export_qat_onnx");
  InArray keep;
  dml_tensor_t c =
      tensor_of(calib, "calibration", DML_DTYPE_INVALID, "python.export_qat_onnx", keep);
  dml_quant_options_t qo;
  dml_quant_options_init(&qo);
  qo.max_rows = DML_QAT_CALIB_ROWS;
  dml_quant_report_t rep;
  memset(&rep, 0, sizeof rep);
  void *bytes = nullptr;
  size_t n = 0;
  uint32_t nw = 0, nr = 0;
  dml_status_t st;
  {
    nb::gil_scoped_release r;
    std::lock_guard<std::mutex> lock(tr.mu);
    st = dml_quantize_qat_export(path.c_str(), tmp_prefix.c_str(), md.m,
                                 dml_trainer_session(tr.t, "forward"), &c, &qo, &bytes,
                                 &n, &rep, &nw, &nr);
  }
  check(st);
  nb::dict d = qat_report(rep);
  d["trained_initializers"] = nb::cast(nw);
  d["trained_ranges"] = nb::cast(nr);
  dml_quant_report_free(&rep);
  nb::bytes out(bytes, n);
  free(bytes);
  return nb::make_tuple(out, d);
}

// The C side's defaults of training (dml_train_config_init,
// dml_fit_options_init), for the Python signatures' documentation and None.
nb::dict train_defaults() {
  dml_train_config_t c;
  dml_train_config_init(&c);
  dml_fit_options_t o;
  dml_fit_options_init(&o);
  nb::dict d;
  dict_set(d, {{"loss", nb::cast(dml_loss_kind_name(c.loss))},
               {"optimizer", nb::cast(dml_optimizer_kind_name(c.optimizer))},
               {"epochs", nb::cast(o.epochs)},
               {"batch_size", nb::cast(o.batch_size)},
               {"learning_rate", nb::cast(o.lr.initial)},
               {"validation_split", nb::cast(o.validation_split)},
               {"shuffle", nb::cast((bool)o.shuffle)},
               {"seed", nb::cast(o.seed)},
               {"restore_best", nb::cast((bool)o.restore_best)}});
  return d;
}

// ---------------------------------------------------------------------------
// Serving (dml_serve.h)
// ---------------------------------------------------------------------------

// A batching server over one model. run() may be called from any number of
// threads (the GIL released while a request waits); close() waits for the
// runs in progress (an exclusive lock against their shared ones), then
// drains and stops the workers.
struct Server {
  dml_serve_t *s = nullptr;
  Model *md = nullptr;
  std::shared_mutex mu;
  Server(Model &m, int64_t batch_size, double timeout_ms, const std::string &device,
         int instances, int64_t max_queued_rows)
      : md(&m) {
    dml_serve_config_t cfg;
    dml_serve_config_init(&cfg);
    if (batch_size >= 0) cfg.batch_size = batch_size;
    if (timeout_ms >= 0) cfg.batch_timeout_ms = timeout_ms;
    if (!device.empty()) cfg.device = device.c_str();
    if (instances > 0) cfg.instances = instances;
    if (max_queued_rows >= 0) cfg.max_queued_rows = max_queued_rows;
    dml_status_t st;
    {
      nb::gil_scoped_release r;
      st = dml_serve_create(m.m, &cfg, &s);
    }
    check(st);
  }
  Server(const Server &) = delete;
  Server &operator=(const Server &) = delete;
  void close() {
    nb::gil_scoped_release r;
    std::unique_lock<std::shared_mutex> lock(mu);
    dml_serve_release(s);
    s = nullptr;
  }
  ~Server() { dml_serve_release(s); }
};

// One request: `xs` one array per model input in its order; returns the
// outputs in the model's order (arrays sharing the reply's block).
nb::list server_run(Server &sv, nb::list xs) {
  const char *op = "python.serve";
  uint32_t ni = dml_rt_model_num_inputs(sv.md->m);
  if (xs.size() != ni)
    check(dml_status_make(DML_STATUS_INVALID_ARGUMENT, op,
                          "%zu inputs given; the model takes %u", xs.size(), ni));
  std::vector<InArray> keep(ni);
  std::vector<dml_tensor_t> ts(ni);
  for (uint32_t i = 0; i < ni; i++) {
    dml_rt_io_info_t info;
    check(dml_rt_model_input_info(sv.md->m, i, &info));
    ts[i] = tensor_of(xs[i], info.name, info.dtype, op, keep[i]);
  }
  dml_tensor_t *outs = nullptr;
  dml_status_t st;
  {
    nb::gil_scoped_release r;
    std::shared_lock<std::shared_mutex> lock(sv.mu);
    st = sv.s ? dml_serve_run(sv.s, ts.data(), ni, &outs)
              : dml_status_make(DML_STATUS_FAILED_PRECONDITION, op,
                                "the server is closed");
  }
  check(st);
  nb::capsule owner(outs,
                    [](void *p) noexcept { dml_serve_outputs_free((dml_tensor_t *)p); });
  nb::list l;
  uint32_t no = dml_rt_model_num_outputs(sv.md->m);
  for (uint32_t i = 0; i < no; i++) {
    dml_rt_io_info_t info;
    check(dml_rt_model_output_info(sv.md->m, i, &info));
    l.append(array_of(outs[i], outs[i].data, owner, op, info.name));
  }
  return l;
}

nb::dict server_stats(Server &sv) {
  dml_serve_stats_t s;
  memset(&s, 0, sizeof s);
  {
    nb::gil_scoped_release r;
    std::shared_lock<std::shared_mutex> lock(sv.mu);
    if (sv.s) dml_serve_get_stats(sv.s, &s);
  }
  nb::dict d;
  dict_set(d, {{"requests", nb::cast(s.requests)},
               {"requests_failed", nb::cast(s.requests_failed)},
               {"rows", nb::cast(s.rows)},
               {"runs", nb::cast(s.runs)},
               {"run_rows", nb::cast(s.run_rows)},
               {"mean_rows_per_run", nb::cast(s.mean_rows_per_run)},
               {"queued_requests", nb::cast(s.queued_requests)},
               {"latency_ms_p50", nb::cast(s.latency_ms_p50)},
               {"latency_ms_p99", nb::cast(s.latency_ms_p99)},
               {"queue_ms_p50", nb::cast(s.queue_ms_p50)}});
  return d;
}

}  // namespace

NB_MODULE(_core, m) {
  m.doc() = "dmlc's C runtime and compile driver (internal; use the dmlc package)";

  nb::register_exception_translator([](const std::exception_ptr &p, void *) {
    try {
      std::rethrow_exception(p);
    } catch (const StatusError &e) {
      set_python_error(e);
    }
  });

  nb::class_<Model>(m, "Model")
      .def("inputs", [](const Model &md) { return model_io(md, false); })
      .def("outputs", [](const Model &md) { return model_io(md, true); })
      .def("summary", &model_summary);
  m.def("load_file", &load_file, "path"_a, nb::rv_policy::take_ownership);
  m.def("load_bytes", &load_bytes, "data"_a, nb::rv_policy::take_ownership);

  nb::class_<Session>(m, "Session")
      .def(nb::init<Model &, const std::string &, const std::string &>(), "model"_a,
           "device"_a, "function"_a, nb::keep_alive<1, 2>())
      .def("inputs", [](const Session &s) { return session_io(s, false); })
      .def("outputs", [](const Session &s) { return session_io(s, true); })
      .def("device",
           [](const Session &s) { return std::string(dml_rt_session_device(s.s)); })
      .def(
          "run",
          [](nb::handle self, nb::dict inputs, bool copy, const std::string &out_device) {
            return session_run(self, nb::cast<Session &>(self), inputs, copy, out_device);
          },
          "inputs"_a, "copy"_a, "out_device"_a = "")
      .def("set_seed",
           [](Session &s, uint64_t seed, uint64_t step) {
             nb::gil_scoped_release r;
             std::lock_guard<std::mutex> lock(s.mu);
             dml_rt_session_set_seed(s.s, seed, step);
           })
      .def("transfer_stats", [](Session &s) {
        dml_rt_transfer_stats_t t;
        {
          nb::gil_scoped_release r;
          std::lock_guard<std::mutex> lock(s.mu);
          dml_rt_session_transfer_stats(s.s, &t);
        }
        nb::dict d;
        d["to_device_bytes"] = t.to_device_bytes;
        d["to_device_count"] = t.to_device_count;
        d["to_host_bytes"] = t.to_host_bytes;
        d["to_host_count"] = t.to_host_count;
        d["on_device_bytes"] = t.on_device_bytes;
        d["on_device_count"] = t.on_device_count;
        return d;
      });

  m.def("compile_onnx", &compile_onnx, "onnx"_a, "base_dir"_a, "source_name"_a,
        "targets"_a, "batch_bound"_a, "dim_bounds"_a, "input_shapes"_a,
        "dynamic_dim_bound"_a, "dynamic_max_elements"_a, "cuda_arch"_a, "allow_tf32"_a,
        "cpu_fallback"_a, "train"_a, "precision"_a = "");
  nb::class_<Trainer>(m, "Trainer")
      .def(nb::init<Model &, const std::string &>(), "model"_a, "device"_a,
           nb::keep_alive<1, 2>())
      .def("info", &trainer_info)
      .def("fit", &trainer_fit, "xs"_a, "ys"_a, "val_xs"_a.none(), "val_ys"_a.none(),
           "opts"_a, "metrics"_a, "epoch_cb"_a.none(), "batch_cb"_a.none())
      .def("evaluate", &trainer_evaluate, "xs"_a, "ys"_a, "batch_size"_a)
      .def("predict", &trainer_predict, "xs"_a, "output"_a)
      .def("save", &trainer_save, "model"_a, "pkg"_a, "path"_a)
      .def("checkpoint", &trainer_checkpoint, "path"_a, "save"_a, "seed"_a);
  m.def("train_defaults", &train_defaults);
  m.def("qat_model", &qat_model, "path"_a, "calibration"_a);
  m.def("qat_export", &qat_export, "trainer"_a, "model"_a, "path"_a, "tmp_prefix"_a,
        "calibration"_a);

  nb::class_<Server>(m, "Server")
      .def(nb::init<Model &, int64_t, double, const std::string &, int, int64_t>(),
           "model"_a, "batch_size"_a, "batch_timeout_ms"_a, "device"_a, "instances"_a,
           "max_queued_rows"_a, nb::keep_alive<1, 2>())
      .def("run", &server_run, "xs"_a)
      .def("stats", &server_stats)
      .def("close", &Server::close);

  nb::class_<Tensor>(
      m, "Tensor", nb::type_slots(tensor_slots),
      "A tensor on a device (dml_tensor.h); made by dmlc.tensor, dmlc.zeros, "
      "... (python/dmlc/_tensor.py, docs/python.md)")
      .def("_info", &tensor_info_dict)
      .def("numpy", &tensor_numpy, "A copy of the elements as a new NumPy array.")
      .def("to", &tensor_to, "device"_a, "A contiguous copy on `device`.")
      .def("_reshape", &tensor_reshape, "shape"_a)
      .def("_expand", &tensor_expand, "shape"_a)
      .def("_transpose", &tensor_transpose, "perm"_a)
      .def("_slice", &tensor_slice, "axes"_a, "starts"_a, "ends"_a, "steps"_a)
      .def(
          "contiguous",
          [](const Tensor &t) {
            dml_rt_tensor_t out;
            check(dml_rt_tensor_contiguous(t.h, &out));
            return wrap(out, t.dev);
          },
          "The tensor itself (a new reference) when contiguous, else a contiguous copy.")
      .def(
          "free", [](const Tensor &t) { check(dml_rt_tensor_free(t.h)); },
          "Frees the tensor now: its memory goes back to the device unless a view "
          "still uses it; any later use raises FailedPreconditionError.")
      .def_prop_ro("_device", [](const Tensor &t) { return t.dev; });
  m.def("tensor_from_array", &tensor_from_array, "data"_a, "device"_a, "dtype"_a);
  m.def("tensor_create", &tensor_create, "kind"_a, "shape"_a, "dtype"_a, "device"_a,
        "a"_a, "b"_a, "seed"_a);
  m.def("tensor_arange", &tensor_arange, "start"_a, "limit"_a, "step"_a, "dtype"_a,
        "device"_a);
  m.def("tensor_op", &tensor_op, "op"_a, "inputs"_a, "attrs"_a, "n_outputs"_a);
  m.def("device_memory", &device_memory, "device"_a);
  m.def("built_devices", []() { return std::string(dml_rt_built_devices()); });
  m.def("dtype_onnx_code", [](const std::string &name) {
    return dml_dtype_onnx_code(dtype_named(name, "python.cast"));
  });

  m.def("available_targets",
        []() { return std::string(dml_compile_available_targets()); });
  m.def("gpu_devices", &gpu_devices, "kind"_a);
  m.def("check", &run_check, "model"_a, "device"_a, "seed"_a, "iterations"_a);
}
