// dmlc_ext.cpp — the extension module `dmlc._core`: nanobind bindings of the
// runtime (dml_rt.h: load, sessions, run, inspect, devices, check) and of the
// compile driver (dml_driver.h + dml_dim_spec.h). The Python API users call
// is python/dmlc/__init__.py, which wraps these; docs/python.md describes it.
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

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

#include "dml_dim_spec.h"
#include "dml_driver.h"
#include "dml_rt.h"

namespace nb = nanobind;
using namespace nb::literals;

namespace {

struct StatusError {
  int code;
  std::string code_name, op, reason, details, message;
};

// Throws the status (freeing it) when it is not OK.
void check(dml_status_t st) {
  if (!st) return;
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
  throw e;
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
  d["shape"] = nb::tuple(shape);
  d["bounds"] = nb::tuple(bounds);
  d["multipliers"] = nb::tuple(mult);
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
  d["symbols"] = syms;
  d["functions"] = fns;
  d["meta"] = dml_rt_model_meta(md.m);
  d["format_version"] = dml_rt_model_format_version(md.m);
  d["file_size"] = dml_rt_model_file_size(md.m);
  d["arena_bytes"] = dml_rt_model_arena_bytes(md.m);
  d["scratch_bytes"] = dml_rt_model_scratch_bytes(md.m);
  d["weights_bytes"] = dml_rt_model_weights_bytes(md.m);
  d["param_count"] = dml_rt_model_param_count(md.m);
  d["num_nodes"] = dml_rt_model_num_nodes(md.m);
  nb::list secs;
  for (uint32_t i = 0; i < dml_rt_model_num_sections(md.m); i++) {
    dml_rt_section_info_t s;
    check(dml_rt_model_section_info(md.m, i, &s));
    secs.append(nb::make_tuple(s.tag, s.size));
  }
  d["sections"] = secs;
  return d;
}

struct Session {
  dml_rt_session_t *s = nullptr;
  std::mutex mu;
  Session(Model &md, const std::string &device, const std::string &function) {
    dml_status_t st;
    {
      nb::gil_scoped_release r;
      st = dml_rt_session_create_function(md.m, device.c_str(),
                                          function.empty() ? nullptr : function.c_str(),
                                          nullptr, &s);
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

// Binds `inputs` (name -> array-like), runs, and returns name -> ndarray of
// every output: copies (owned by the array) when `copy`, else read-only
// views of the session's memory, valid until its next run (the array keeps
// the session alive).
nb::dict session_run(nb::handle self, Session &se, nb::dict inputs, bool copy) {
  std::vector<InArray> arrays;
  std::vector<std::string> names;
  std::vector<dml_tensor_t> ts;
  for (auto [k, v] : inputs) {
    std::string name = nb::cast<std::string>(nb::str(k));
    InArray a;
    if (!nb::try_cast(v, a, true)) {
      std::string what = nb::cast<std::string>(nb::str(v.type().attr("__name__")));
      if (nb::hasattr(v, "dtype"))
        what += " of dtype " + nb::cast<std::string>(nb::steal<nb::str>(
                                   PyObject_Str(nb::object(v.attr("dtype")).ptr())));
      check(dml_status_detail(
          dml_status_make(DML_STATUS_INVALID_ARGUMENT, "python.run",
                          "input '%s': a %s is not a numeric array", name.c_str(),
                          what.c_str()),
          "arrays of bool, int8..int64, uint8..uint64, float16/32/64 are taken "
          "(bfloat16 as uint16 or ml_dtypes.bfloat16)"));
    }
    int32_t idx = dml_rt_session_find_input(se.s, name.c_str());
    dml_dtype_t want = DML_DTYPE_INVALID;
    if (idx >= 0) {
      dml_rt_io_info_t info;
      check(dml_rt_session_input_info(se.s, (uint32_t)idx, &info));
      want = info.dtype;
    }
    dml_tensor_t t;
    memset(&t, 0, sizeof t);
    t.dtype = dml_of(a.dtype(), want);
    char buf[32];
    if (t.dtype == DML_DTYPE_INVALID)
      check(dml_status_make(DML_STATUS_INVALID_ARGUMENT, "python.run",
                            "input '%s': NumPy dtype %s has no dmlc dtype", name.c_str(),
                            dl_name(a.dtype(), buf, sizeof buf)));
    if (a.ndim() > DML_MAX_RANK)
      check(dml_status_make(DML_STATUS_INVALID_ARGUMENT, "python.run",
                            "input '%s': rank %zu exceeds dmlc's maximum %d",
                            name.c_str(), a.ndim(), DML_MAX_RANK));
    t.rank = (int32_t)a.ndim();
    for (int32_t k2 = 0; k2 < t.rank; k2++) t.dims[k2] = (int64_t)a.shape(k2);
    t.data = const_cast<void *>(a.data());
    names.push_back(name);
    ts.push_back(t);
    arrays.push_back(std::move(a));
  }
  std::vector<OutBuf> outs;
  dml_status_t st = DML_OK;
  {
    nb::gil_scoped_release r;
    std::lock_guard<std::mutex> lock(se.mu);
    dml_rt_session_clear_inputs(se.s);
    for (size_t i = 0; i < ts.size() && !st; i++)
      st = dml_rt_session_set_input_by_name(se.s, names[i].c_str(), &ts[i]);
    if (!st) st = dml_rt_session_run(se.s);
    uint32_t n = dml_rt_session_num_outputs(se.s);
    outs.resize(st ? 0 : n);
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
  for (uint32_t i = 0; i < outs.size(); i++) {
    dml_rt_io_info_t info;
    check(dml_rt_session_output_info(se.s, i, &info));
    nb::dlpack::dtype dl;
    if (!dl_of(outs[i].t.dtype, &dl)) {
      check(dml_status_make(DML_STATUS_UNIMPLEMENTED, "python.run",
                            "output '%s': dtype %s has no NumPy dtype", info.name,
                            dml_dtype_name(outs[i].t.dtype)));
    }
    size_t shape[DML_MAX_RANK];
    for (int32_t k = 0; k < outs[i].t.rank; k++) shape[k] = (size_t)outs[i].t.dims[k];
    nb::object owner;
    void *data = outs[i].t.data;
    if (copy) {
      data = outs[i].copy;
      owner = nb::capsule(data, [](void *p) noexcept { free(p); });
      outs[i].copy = nullptr; /* the capsule frees it now */
    } else {
      owner = nb::borrow(self);
    }
    nb::ndarray<nb::numpy> arr(data, (size_t)outs[i].t.rank, shape, owner, nullptr, dl);
    nb::object o = nb::cast(arr);
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
                       const std::string &cuda_arch, bool allow_tf32) {
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
  o.command_line = "python: dmlc.compile";
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
  d["num_nodes"] = rep.num_nodes;
  d["num_weights"] = rep.num_weights;
  d["weight_bytes"] = rep.weight_bytes;
  d["arena_bytes"] = rep.arena_bytes;
  d["package_bytes"] = rep.package_bytes;
  d["compile_ms"] = rep.compile_ms;
  return nb::make_tuple(out, d);
}

nb::dict device_dict(const dml_rt_device_info_t &di) {
  nb::dict d;
  d["id"] = di.id;
  d["name"] = di.name;
  d["kind"] = di.kind ? di.kind : "";
  d["memory_bytes"] = di.memory_bytes;
  d["api_version"] = nb::make_tuple(di.api_major, di.api_minor, di.api_patch);
  d["is_default"] = (bool)di.is_default;
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
  d["device"] = rep->device;
  d["n_failed"] = rep->n_failed;
  d["seed"] = rep->seed;
  d["iterations"] = rep->iterations;
  nb::list ks;
  for (uint32_t i = 0; i < rep->n_kernels; i++) {
    const dml_rt_check_kernel_t &k = rep->kernels[i];
    nb::dict e;
    e["name"] = k.name;
    e["ops"] = k.ops;
    e["tol_class"] = k.tol_class ? k.tol_class : "";
    e["tolerance"] = k.tolerance;
    e["checked"] = (bool)k.checked;
    e["passed"] = (bool)k.passed;
    e["worst"] = k.worst;
    e["value"] = k.value;
    e["index"] = k.index;
    e["device_value"] = k.device_value;
    e["cpu_value"] = k.cpu_value;
    e["inputs"] = k.inputs ? k.inputs : "";
    e["iteration"] = k.iteration;
    e["note"] = k.note;
    ks.append(e);
  }
  d["kernels"] = ks;
  dml_rt_check_report_free(rep);
  return d;
}

}  // namespace

NB_MODULE(_core, m) {
  m.doc() = "dmlc's C runtime and compile driver (internal; use the dmlc package)";

  nb::register_exception_translator([](const std::exception_ptr &p, void *) {
    try {
      std::rethrow_exception(p);
    } catch (const StatusError &e) {
      nb::object make = nb::module_::import_("dmlc._errors").attr("_make");
      nb::object exc = make(e.code_name, e.op, e.reason, e.details, e.message);
      PyErr_SetObject((PyObject *)Py_TYPE(exc.ptr()), exc.ptr());
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
          [](nb::handle self, nb::dict inputs, bool copy) {
            return session_run(self, nb::cast<Session &>(self), inputs, copy);
          },
          "inputs"_a, "copy"_a)
      .def("set_seed", [](Session &s, uint64_t seed, uint64_t step) {
        nb::gil_scoped_release r;
        std::lock_guard<std::mutex> lock(s.mu);
        dml_rt_session_set_seed(s.s, seed, step);
      });

  m.def("compile_onnx", &compile_onnx, "onnx"_a, "base_dir"_a, "source_name"_a,
        "targets"_a, "batch_bound"_a, "dim_bounds"_a, "input_shapes"_a,
        "dynamic_dim_bound"_a, "dynamic_max_elements"_a, "cuda_arch"_a, "allow_tf32"_a);
  m.def("available_targets",
        []() { return std::string(dml_compile_available_targets()); });
  m.def("gpu_devices", &gpu_devices, "kind"_a);
  m.def("check", &run_check, "model"_a, "device"_a, "seed"_a, "iterations"_a);
}
