/*
 * dmlc_nif.c — the NIF of the Elixir package `:dmlc` (module Dmlc.NIF;
 * bindings/elixir, docs/elixir.md): dmlc's C API (dml_driver.h, dml_rt.h,
 * dml_trainer.h, dml_serve.h, dml_tensor.h) for the BEAM.
 *
 * Terms:
 *   tensor  {dtype :: binary, shape :: tuple, data :: binary}: dmlc's dtype
 *           name ("f32", "i64", "bool", ...), dense row-major, native endian
 *           (Nx's layout; lib/dmlc/tensor.ex maps Nx type tuples to names).
 *   error   {:error, {code :: atom, op :: binary, reason :: binary,
 *           details :: binary}}: a dml_status_t (code as an atom of its
 *           lower-case name, :invalid_argument, ...). The binding's own
 *           checks make dml_status_t too (op "elixir.<call>"), so there is one
 *           kind of error; lib/dmlc/error.ex turns it into %Dmlc.Error{}.
 *
 * Resources (freed by the garbage collector's destructor, or at once by the
 * model_free / serve_stop NIFs; a freed one gives FAILED_PRECONDITION "use
 * after free", never a crash):
 *   model   a loaded package (its bytes kept for save), with the trainer of
 *           a training package (created on first use, on one device) and a
 *           session of `forward` for run/predict. One mutex per model
 *           serializes the calls on it (a session and a trainer belong to
 *           one thread at a time); calls made while a fit runs on the model
 *           fail with FAILED_PRECONDITION instead of waiting (a fit's
 *           callbacks may not use their own model).
 *   serve   a dml_serve_t over a model (which it keeps alive); replies go to
 *           a pid as {:dmlc_serve, tag, {:ok, outputs} | error}.
 *   tensor  a dml_rt_tensor_t on a device (Dmlc.Tensor with a ref): freed by
 *           the garbage collector or at once by tensor_free (then "use
 *           after free"); see "Eager tensors" below.
 *   ctl     the control of one fit: after each epoch the fit sends
 *           {:dmlc_epoch, tag, metrics} to the listener pid and waits for
 *           fit_ack (the listener's callbacks may ask to halt); the listener
 *           is monitored, so its death ends the wait (and the fit).
 *
 * Long calls (compile, load, fit, evaluate, predict, run, benchmark, serve
 * start/stop, free) run on dirty CPU schedulers.
 */
#include <erl_nif.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "dml_dim_spec.h"
#include "dml_driver.h"
#include "dml_npy.h"
#include "dml_rt.h"
#include "dml_serve.h"
#include "dml_tensor.h"
#include "dml_train.h"
#include "dml_trainer.h"

/* ===================================================================== */
/* Terms                                                                 */
/* ===================================================================== */

static ERL_NIF_TERM atom(ErlNifEnv *env, const char *name) {
  ERL_NIF_TERM a;
  if (enif_make_existing_atom(env, name, &a, ERL_NIF_LATIN1)) return a;
  return enif_make_atom(env, name);
}

static ERL_NIF_TERM ok2(ErlNifEnv *env, ERL_NIF_TERM t) {
  return enif_make_tuple2(env, atom(env, "ok"), t);
}

static ERL_NIF_TERM str(ErlNifEnv *env, const char *s) {
  ERL_NIF_TERM t;
  size_t n = s ? strlen(s) : 0;
  unsigned char *p = enif_make_new_binary(env, n, &t);
  if (n) memcpy(p, s, n);
  return t;
}

/* A double as a float term; NaN and infinities (which the BEAM has no float
 * for) as the atoms :nan, :infinity, :neg_infinity. */
static ERL_NIF_TERM dbl(ErlNifEnv *env, double v) {
  if (isnan(v)) return atom(env, "nan");
  if (isinf(v)) return atom(env, v > 0 ? "infinity" : "neg_infinity");
  return enif_make_double(env, v);
}

/* The error term of `st` (freed). */
static ERL_NIF_TERM status_term(ErlNifEnv *env, dml_status_t st) {
  char code[64];
  const char *name = dml_status_code_name(dml_status_code(st));
  size_t i = 0;
  for (; name[i] && i + 1 < sizeof code; i++)
    code[i] = (char)(name[i] >= 'A' && name[i] <= 'Z' ? name[i] - 'A' + 'a' : name[i]);
  code[i] = 0;
  ERL_NIF_TERM e =
      enif_make_tuple4(env, atom(env, code), str(env, dml_status_op(st)),
                       str(env, dml_status_reason(st)), str(env, dml_status_details(st)));
  dml_status_free(st);
  return enif_make_tuple2(env, atom(env, "error"), e);
}

#define MAKE_ERR(env, code, op, ...) \
  status_term(env, dml_status_make(DML_STATUS_##code, op, __VA_ARGS__))

/* Copies a binary or charlist-free string term into buf (NUL-terminated).
 * Returns 0 when `t` is not a binary or does not fit. */
static int get_str(ErlNifEnv *env, ERL_NIF_TERM t, char *buf, size_t cap) {
  ErlNifBinary b;
  if (!enif_inspect_binary(env, t, &b) || b.size + 1 > cap) return 0;
  if (memchr(b.data, 0, b.size)) return 0;
  memcpy(buf, b.data, b.size);
  buf[b.size] = 0;
  return 1;
}

static int get_num(ErlNifEnv *env, ERL_NIF_TERM t, double *out) {
  ErlNifSInt64 i;
  if (enif_get_double(env, t, out)) return 1;
  if (enif_get_int64(env, t, &i)) {
    *out = (double)i;
    return 1;
  }
  return 0;
}

/* Map lookup by atom key: 1 when present and not nil. */
static int map_get(ErlNifEnv *env, ERL_NIF_TERM map, const char *key, ERL_NIF_TERM *v) {
  return enif_get_map_value(env, map, atom(env, key), v) &&
         !enif_is_identical(*v, atom(env, "nil"));
}

/* Typed options of a map (atom keys; nil is absent): OK and *out left as
 * it is when `key` is absent, OK and *out set when present, else
 * INVALID_ARGUMENT (op `op`) "<key> must be <what>". opt_str sets *set (may
 * be NULL) to whether the key was given. */
static dml_status_t opt_str(ErlNifEnv *env, ERL_NIF_TERM m, const char *op,
                            const char *key, const char *what, char *buf, size_t cap,
                            int *set) {
  ERL_NIF_TERM v;
  int given = map_get(env, m, key, &v);
  if (set) *set = given;
  if (given && !get_str(env, v, buf, cap))
    return dml_status_make(DML_STATUS_INVALID_ARGUMENT, op, "%s must be %s", key, what);
  return DML_OK;
}

/* Numbers: keys[i] into *dst[i] for each of the n keys. */
static dml_status_t opt_nums(ErlNifEnv *env, ERL_NIF_TERM m, const char *op,
                             const char *const *keys, double *const *dst, size_t n) {
  ERL_NIF_TERM v;
  for (size_t i = 0; i < n; i++)
    if (map_get(env, m, keys[i], &v) && !get_num(env, v, dst[i]))
      return dml_status_make(DML_STATUS_INVALID_ARGUMENT, op, "%s must be a number",
                             keys[i]);
  return DML_OK;
}

/* Booleans: true is `true`, anything else false. */
static void opt_bool(ErlNifEnv *env, ERL_NIF_TERM m, const char *key, int *out) {
  ERL_NIF_TERM v;
  if (map_get(env, m, key, &v)) *out = enif_is_identical(v, atom(env, "true"));
}

/* A tensor term as a lent dml_tensor_t (data points into the binary, which
 * the caller's argument keeps alive). Returns NULL or the reason. */
static const char *get_tensor(ErlNifEnv *env, ERL_NIF_TERM t, dml_tensor_t *out) {
  const ERL_NIF_TERM *el;
  int arity;
  char dname[16];
  memset(out, 0, sizeof *out);
  if (!enif_get_tuple(env, t, &arity, &el) || arity != 3)
    return "a tensor is {dtype, shape, data}";
  if (!get_str(env, el[0], dname, sizeof dname)) return "dtype is not a dtype name";
  out->dtype = dml_dtype_from_name(dname, strlen(dname));
  if (out->dtype == DML_DTYPE_INVALID) return "unknown dtype";
  const ERL_NIF_TERM *dims;
  int rank;
  if (!enif_get_tuple(env, el[1], &rank, &dims)) return "shape is not a tuple";
  if (rank > DML_MAX_RANK) return "rank above dmlc's maximum";
  out->rank = rank;
  for (int i = 0; i < rank; i++) {
    ErlNifSInt64 d;
    if (!enif_get_int64(env, dims[i], &d) || d < 0) return "a dim is not an integer >= 0";
    out->dims[i] = d;
  }
  ErlNifBinary b;
  if (!enif_inspect_binary(env, el[2], &b)) return "data is not a binary";
  size_t want = dml_tensor_bytes(out);
  if (want == SIZE_MAX || b.size != want) return "data size is not shape x dtype size";
  out->data = b.size ? (void *)b.data : (void *)"";
  return NULL;
}

static ERL_NIF_TERM shape_term(ErlNifEnv *env, int32_t rank, const int64_t *dims) {
  ERL_NIF_TERM d[DML_MAX_RANK];
  for (int32_t i = 0; i < rank; i++) d[i] = enif_make_int64(env, dims[i]);
  return enif_make_tuple_from_array(env, d, (unsigned)rank);
}

/* A copy of `t` as a tensor term (in `env`). */
static ERL_NIF_TERM tensor_term(ErlNifEnv *env, const dml_tensor_t *t) {
  ERL_NIF_TERM data;
  size_t n = dml_tensor_bytes(t);
  unsigned char *p = enif_make_new_binary(env, n, &data);
  if (n) memcpy(p, t->data, n);
  return enif_make_tuple3(env, str(env, dml_dtype_name(t->dtype)),
                          shape_term(env, t->rank, t->dims), data);
}

static ERL_NIF_TERM io_info_term(ErlNifEnv *env, const dml_rt_io_info_t *info) {
  ERL_NIF_TERM shape[DML_MAX_RANK], bounds[DML_MAX_RANK];
  char buf[512];
  for (int32_t k = 0; k < info->rank; k++) {
    if (info->dim_symbol[k]) {
      if (info->dim_multiplier[k] != 1) {
        snprintf(buf, sizeof buf, "%lld*%s", (long long)info->dim_multiplier[k],
                 info->dim_symbol[k]);
        shape[k] = str(env, buf);
      } else {
        shape[k] = str(env, info->dim_symbol[k]);
      }
    } else {
      shape[k] = enif_make_int64(env, info->dims[k]);
    }
    bounds[k] = enif_make_int64(env, info->dim_bound[k]);
  }
  ERL_NIF_TERM keys[5] = {atom(env, "name"), atom(env, "dtype"), atom(env, "shape"),
                          atom(env, "bounds"), atom(env, "type")};
  ERL_NIF_TERM vals[5] = {str(env, info->name), str(env, dml_dtype_name(info->dtype)),
                          enif_make_tuple_from_array(env, shape, (unsigned)info->rank),
                          enif_make_tuple_from_array(env, bounds, (unsigned)info->rank),
                          str(env, dml_rt_io_info_str(info, buf, sizeof buf))};
  ERL_NIF_TERM m;
  enif_make_map_from_arrays(env, keys, vals, 5, &m);
  return m;
}

static ERL_NIF_TERM make_map(ErlNifEnv *env, const char **keys, ERL_NIF_TERM *vals,
                             size_t n) {
  ERL_NIF_TERM k[32], m;
  for (size_t i = 0; i < n && i < 32; i++) k[i] = atom(env, keys[i]);
  enif_make_map_from_arrays(env, k, vals, n < 32 ? n : 32, &m);
  return m;
}

/* ===================================================================== */
/* Resources                                                             */
/* ===================================================================== */

typedef struct model_res {
  ErlNifMutex *mu;
  int freed;
  int fitting; /* a fit runs (without the lock): other calls but info refuse */
  void *bytes; /* the package (malloc'd), for save */
  size_t size;
  dml_rt_model_t *model;
  int trainable; /* has train_step */
  dml_trainer_t *trainer;
  char trainer_device[64];
  dml_rt_session_t *sess; /* forward, for packages without a trainer */
  char sess_device[64];
  /* forward on the eager device of that name (run_device: device tensors
   * in and out, dml_rt_session_create_on_device), packages without a
   * trainer; made, used and released with g_tensor_mu held */
  dml_rt_session_t *dsess;
  char dsess_device[64];
  int users; /* serving objects running on `model` */
} model_res_t;

typedef struct serve_res {
  ErlNifMutex *mu;
  dml_serve_t *srv;
  model_res_t *m; /* kept (enif_keep_resource) while srv lives */
  /* A trained model's snapshot (its current parameters) that srv runs
   * instead of m->model; NULL when srv runs m->model. */
  dml_rt_model_t *own;
  int stopping; /* a serve_stop is shutting srv down */
  uint32_t n_outputs;
} serve_res_t;

/* The env of the NIF call shutting a server down on this thread (NULL
 * otherwise): completion callbacks run on the server's worker threads
 * (which send with no env) or on the thread calling dml_serve_shutdown,
 * which must send with its call's env, or not at all when it has none (a
 * server collected by the garbage collector: nobody waits for it). */
static _Thread_local ErlNifEnv *tl_stop_env;

typedef struct ctl_res {
  ErlNifMutex *mu;
  ErlNifCond *cv;
  int32_t acked; /* the last epoch the listener acknowledged */
  int halt;      /* the listener asked to stop */
  int cancelled; /* the listener died */
  ErlNifPid pid;
  ErlNifMonitor mon;
  int monitoring;
} ctl_res_t;

static ErlNifResourceType *MODEL_RT, *SERVE_RT, *CTL_RT;

static ErlNifMutex *g_tensor_mu; /* below: the one lock of eager tensors */

/* Releases the model's trainer and sessions (lock held or sole owner). */
static void model_drop_runners(model_res_t *r) {
  dml_trainer_release(r->trainer);
  r->trainer = NULL;
  dml_rt_session_release(r->sess);
  r->sess = NULL;
  if (r->dsess) {
    enif_mutex_lock(g_tensor_mu);
    dml_rt_session_release(r->dsess);
    r->dsess = NULL;
    enif_mutex_unlock(g_tensor_mu);
  }
}

static void model_dtor(ErlNifEnv *env, void *obj) {
  (void)env;
  model_res_t *r = obj;
  model_drop_runners(r);
  dml_rt_model_release(r->model);
  free(r->bytes);
  if (r->mu) enif_mutex_destroy(r->mu);
}

static void serve_stop_locked(serve_res_t *s, ErlNifEnv *env, int drain) {
  if (!s->srv) return;
  tl_stop_env = env;
  dml_serve_shutdown(s->srv, drain);
  dml_serve_release(s->srv);
  tl_stop_env = NULL;
  s->srv = NULL;
  dml_rt_model_release(s->own);
  s->own = NULL;
  model_res_t *m = s->m;
  s->m = NULL;
  enif_mutex_lock(m->mu);
  m->users--;
  if (m->freed && m->users == 0 && m->model) {
    dml_rt_model_release(m->model);
    m->model = NULL;
  }
  enif_mutex_unlock(m->mu);
  enif_release_resource(m);
}

static void serve_dtor(ErlNifEnv *env, void *obj) {
  (void)env;
  serve_res_t *s = obj;
  /* Nobody can wait for the replies of a collected server: fail what has
   * not started (no env: the callbacks then send nothing). */
  serve_stop_locked(s, NULL, 0);
  if (s->mu) enif_mutex_destroy(s->mu);
}

static void ctl_dtor(ErlNifEnv *env, void *obj) {
  (void)env;
  ctl_res_t *c = obj;
  if (c->cv) enif_cond_destroy(c->cv);
  if (c->mu) enif_mutex_destroy(c->mu);
}

static void ctl_down(ErlNifEnv *env, void *obj, ErlNifPid *pid, ErlNifMonitor *mon) {
  (void)env, (void)pid, (void)mon;
  ctl_res_t *c = obj;
  enif_mutex_lock(c->mu);
  c->cancelled = 1;
  c->monitoring = 0;
  enif_cond_broadcast(c->cv);
  enif_mutex_unlock(c->mu);
}

/* A tensor resource: one reference to a dml_rt_tensor_t handle, dropped by
 * the garbage collector's destructor; free/1 kills the handle at once
 * (dml_rt_tensor_free), after which every call on it gives the C API's
 * FAILED_PRECONDITION "use after free". The devices are opened on first
 * use by name and stay open (closing one would free its tensors). A device
 * and its tensors are used by one thread at a time (dml_tensor.h): every
 * tensor call holds g_tensor_mu. */
typedef struct tensor_res {
  dml_rt_tensor_t h;
  char device[64];
} tensor_res_t;

static ErlNifResourceType *TENSOR_RT;
static ErlNifMutex *g_tensor_mu;
static struct {
  char name[64];
  dml_rt_device_t *d;
} g_devices[16];

static void tensor_dtor(ErlNifEnv *env, void *obj) {
  (void)env;
  tensor_res_t *r = obj;
  enif_mutex_lock(g_tensor_mu);
  dml_status_free(dml_rt_tensor_release(r->h));
  enif_mutex_unlock(g_tensor_mu);
}

static int load(ErlNifEnv *env, void **priv, ERL_NIF_TERM info) {
  (void)priv, (void)info;
  ErlNifResourceFlags fl = ERL_NIF_RT_CREATE | ERL_NIF_RT_TAKEOVER;
  MODEL_RT = enif_open_resource_type(env, NULL, "dmlc_model", model_dtor, fl, NULL);
  SERVE_RT = enif_open_resource_type(env, NULL, "dmlc_serve", serve_dtor, fl, NULL);
  ErlNifResourceTypeInit init = {.dtor = ctl_dtor, .stop = NULL, .down = ctl_down};
  CTL_RT = enif_open_resource_type_x(env, "dmlc_fit_control", &init, fl, NULL);
  TENSOR_RT = enif_open_resource_type(env, NULL, "dmlc_tensor", tensor_dtor, fl, NULL);
  if (!g_tensor_mu) g_tensor_mu = enif_mutex_create("dmlc_tensors");
  return MODEL_RT && SERVE_RT && CTL_RT && TENSOR_RT && g_tensor_mu ? 0 : 1;
}

/* ---- model locking ---- */

/* Locks the model of `term` for a call named `op`: NULL (and *err set)
 * when it is not a model, freed, or being fitted (info excepted). */
static model_res_t *model_lock(ErlNifEnv *env, ERL_NIF_TERM term, const char *op,
                               ERL_NIF_TERM *err) {
  model_res_t *r;
  if (!enif_get_resource(env, term, MODEL_RT, (void **)&r)) {
    *err = MAKE_ERR(env, INVALID_ARGUMENT, op, "not a compiled model");
    return NULL;
  }
  enif_mutex_lock(r->mu);
  if (r->fitting && strcmp(op, "elixir.info") != 0) {
    enif_mutex_unlock(r->mu);
    *err = MAKE_ERR(env, FAILED_PRECONDITION, op,
                    "the model is being fitted (a fit's callbacks cannot use its model)");
    return NULL;
  }
  if (r->freed) {
    enif_mutex_unlock(r->mu);
    *err = status_term(
        env, dml_status_detail(
                 dml_status_make(DML_STATUS_FAILED_PRECONDITION, op, "use after free"),
                 "the model was released by Dmlc.free/1"));
    return NULL;
  }
  return r;
}

/* The device name of a term ("cpu" for nil / ""). */
static int get_device(ErlNifEnv *env, ERL_NIF_TERM t, char *buf, size_t cap) {
  if (enif_is_identical(t, atom(env, "nil"))) {
    snprintf(buf, cap, "cpu");
    return 1;
  }
  if (!get_str(env, t, buf, cap)) return 0;
  if (!buf[0]) snprintf(buf, cap, "cpu");
  return 1;
}

/* The trainer of a training package on `device` (created on first use).
 * Lock held. */
static dml_status_t model_trainer(model_res_t *r, const char *device, const char *op,
                                  dml_trainer_t **out) {
  if (!r->trainable)
    return dml_status_detail(
        dml_status_make(DML_STATUS_FAILED_PRECONDITION, op,
                        "the package has no train_step: it is not a training package"),
        "compile the ONNX model with Dmlc.compile(model, loss: ..., optimizer: ...)");
  if (r->trainer && strcmp(r->trainer_device, device) != 0)
    return dml_status_detail(
        dml_status_make(DML_STATUS_FAILED_PRECONDITION, op,
                        "the model is trained on device '%s', not '%s'",
                        r->trainer_device, device),
        "its parameters live there; save it and load it again to use another device");
  if (!r->trainer) {
    DML_RETURN_IF_ERROR(dml_trainer_create(r->model, device, &r->trainer));
    snprintf(r->trainer_device, sizeof r->trainer_device, "%s", device);
  }
  *out = r->trainer;
  return DML_OK;
}

/* The session running `forward` on `device`: the trainer's (same globals)
 * for a training package, else one of the model's own. Lock held. */
static dml_status_t model_session(model_res_t *r, const char *device, const char *op,
                                  dml_rt_session_t **out) {
  if (r->trainable) {
    dml_trainer_t *t = NULL;
    DML_RETURN_IF_ERROR(model_trainer(r, device, op, &t));
    *out = dml_trainer_session(t, "forward");
    return DML_OK;
  }
  if (r->sess && strcmp(r->sess_device, device) != 0) {
    dml_rt_session_release(r->sess);
    r->sess = NULL;
  }
  if (!r->sess) {
    DML_RETURN_IF_ERROR(dml_rt_session_create(r->model, device, &r->sess));
    snprintf(r->sess_device, sizeof r->sess_device, "%s", device);
  }
  *out = r->sess;
  return DML_OK;
}

static ERL_NIF_TERM new_model(ErlNifEnv *env, void *bytes, size_t size) {
  dml_rt_model_t *m = NULL;
  dml_status_t st = dml_rt_model_load_memory(bytes, size, &m);
  if (st) {
    free(bytes);
    return status_term(env, st);
  }
  model_res_t *r = enif_alloc_resource(MODEL_RT, sizeof *r);
  memset(r, 0, sizeof *r);
  r->mu = enif_mutex_create("dmlc_model");
  r->bytes = bytes;
  r->size = size;
  r->model = m;
  for (uint32_t i = 0; i < dml_rt_model_num_functions(m); i++)
    if (strcmp(dml_rt_model_function_name(m, i), "train_step") == 0) r->trainable = 1;
  ERL_NIF_TERM t = enif_make_resource(env, r);
  enif_release_resource(r);
  return ok2(env, t);
}

/* ===================================================================== */
/* Compile, load, save, free, info                                       */
/* ===================================================================== */

/* compile_onnx(onnx :: binary, base_dir, source, opts :: map) ->
 *   {:ok, model} | error. opts: targets (binary), batch_bound (int),
 *   dim_bounds and input_shapes (lists of `--dim-bound` / `--input-shape`
 *   values), dynamic_dim_bound, dynamic_max_elements (ints), cuda_arch
 *   (binary), allow_tf32 (boolean), and
 *   train: nil | map (loss, optimizer: binaries; output; momentum, beta1,
 *   beta2, epsilon, alpha, weight_decay, clip_norm, clip_value,
 *   label_smoothing, huber_delta: numbers; soft_targets: boolean). */
static ERL_NIF_TERM nif_compile_onnx(ErlNifEnv *env, int argc,
                                     const ERL_NIF_TERM argv[]) {
  (void)argc;
  const char *op = "elixir.compile";
  ErlNifBinary onnx;
  char base_dir[4096], source[4096], targets[128] = "cpu", buf[64], out_name[256];
  if (!enif_inspect_binary(env, argv[0], &onnx))
    return MAKE_ERR(env, INVALID_ARGUMENT, op, "the model is not a binary");
  if (!get_str(env, argv[1], base_dir, sizeof base_dir) ||
      !get_str(env, argv[2], source, sizeof source) || !enif_is_map(env, argv[3]))
    return MAKE_ERR(env, INVALID_ARGUMENT, op, "bad arguments");
  dml_compile_options_t o;
  memset(&o, 0, sizeof o);
  ERL_NIF_TERM v;
  dml_status_t ost =
      opt_str(env, argv[3], op, "targets", "a string such as \"cpu,vulkan\"", targets,
              sizeof targets, NULL);
  if (ost) return status_term(env, ost);
  o.targets = targets;
  if (map_get(env, argv[3], "batch_bound", &v)) {
    ErlNifSInt64 b;
    if (!enif_get_int64(env, v, &b) || b < 1)
      return MAKE_ERR(env, INVALID_ARGUMENT, op, "batch_bound must be an integer >= 1");
    o.batch_bound = b;
  }
  dml_train_config_t cfg;
  ERL_NIF_TERM tm;
  if (map_get(env, argv[3], "train", &tm)) {
    dml_train_config_init(&cfg);
    int given = 0, soft = cfg.soft_targets;
    dml_status_t st = opt_str(env, tm, op, "loss", "a name", buf, sizeof buf, &given);
    if (!st && given) st = dml_loss_kind_parse(buf, &cfg.loss);
    if (!st) st = opt_str(env, tm, op, "optimizer", "a name", buf, sizeof buf, &given);
    if (!st && given) st = dml_optimizer_kind_parse(buf, &cfg.optimizer);
    if (!st)
      st = opt_str(env, tm, op, "output", "an output's name", out_name, sizeof out_name,
                   &given);
    if (!st && given) cfg.output = out_name;
    static const char *const keys[] = {
        "momentum",     "beta1",     "beta2",      "epsilon",         "alpha",
        "weight_decay", "clip_norm", "clip_value", "label_smoothing", "huber_delta"};
    double *dst[] = {&cfg.momentum,   &cfg.beta1,      &cfg.beta2,
                     &cfg.epsilon,    &cfg.alpha,      &cfg.weight_decay,
                     &cfg.clip_norm,  &cfg.clip_value, &cfg.label_smoothing,
                     &cfg.huber_delta};
    if (!st) st = opt_nums(env, tm, op, keys, dst, sizeof keys / sizeof *keys);
    if (st) return status_term(env, st);
    opt_bool(env, tm, "soft_targets", &soft);
    cfg.soft_targets = soft;
    o.train = &cfg;
  }
  ErlNifSInt64 iv;
  if (map_get(env, argv[3], "dynamic_dim_bound", &v) && enif_get_int64(env, v, &iv))
    o.dynamic_dim_bound = iv;
  if (map_get(env, argv[3], "dynamic_max_elements", &v) && enif_get_int64(env, v, &iv))
    o.dynamic_max_elements = iv;
  char arch[128];
  int has_arch = 0, tf32 = 0;
  ost = opt_str(env, argv[3], op, "cuda_arch", "a string", arch, sizeof arch, &has_arch);
  if (ost) return status_term(env, ost);
  if (has_arch) o.cuda_arch = arch;
  opt_bool(env, argv[3], "allow_tf32", &tf32);
  o.allow_tf32 = tf32;
  /* --dim-bound / --input-shape values, parsed by dml_dim_spec.h (its
   * messages, printed into a memory stream, become the error's reason). */
  dmlc_dim_spec_t spec;
  memset(&spec, 0, sizeof spec);
  char *text = NULL;
  size_t len = 0;
  spec.err = open_memstream(&text, &len);
  int ok = spec.err != NULL;
  static const char *const spec_keys[] = {"dim_bounds", "input_shapes"};
  for (int k = 0; ok && k < 2; k++) {
    ERL_NIF_TERM head, tail;
    if (!map_get(env, argv[3], spec_keys[k], &tail)) continue;
    char item[1024];
    while (ok && enif_get_list_cell(env, tail, &head, &tail)) {
      if (!get_str(env, head, item, sizeof item)) {
        fprintf(spec.err, "error: compile: %s: an item is not a string\n", spec_keys[k]);
        ok = 0;
      } else {
        ok = k == 0 ? dmlc_dim_spec_parse_bound(&spec, "compile", item)
                    : dmlc_dim_spec_parse_shape(&spec, "compile", item);
      }
    }
  }
  if (ok) ok = dmlc_dim_spec_apply(&spec, "compile", &o);
  if (spec.err) fclose(spec.err);
  spec.err = NULL;
  if (!ok) {
    const char *msg = text ? text : "out of memory";
    if (strncmp(msg, "error: compile: ", 16) == 0) msg += 16;
    size_t n = strlen(msg);
    while (n > 0 && msg[n - 1] == '\n') n--;
    dml_status_t bad =
        dml_status_make(DML_STATUS_INVALID_ARGUMENT, op, "%.*s", (int)n, msg);
    free(text);
    dmlc_dim_spec_free(&spec);
    return status_term(env, bad);
  }
  free(text);
  void *pkg = NULL;
  size_t size = 0;
  dml_status_t st =
      dml_compile_onnx_memory(onnx.data, onnx.size, base_dir[0] ? base_dir : NULL,
                              source[0] ? source : NULL, &o, &pkg, &size, NULL);
  dmlc_dim_spec_free(&spec);
  if (st) return status_term(env, st);
  return new_model(env, pkg, size);
}

/* load_bytes(package :: binary) -> {:ok, model} | error */
static ERL_NIF_TERM nif_load_bytes(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]) {
  (void)argc;
  ErlNifBinary b;
  if (!enif_inspect_binary(env, argv[0], &b))
    return MAKE_ERR(env, INVALID_ARGUMENT, "elixir.load", "the package is not a binary");
  void *copy = malloc(b.size ? b.size : 1);
  if (!copy) return MAKE_ERR(env, RESOURCE_EXHAUSTED, "elixir.load", "out of memory");
  memcpy(copy, b.data, b.size);
  return new_model(env, copy, b.size);
}

/* model_free(model) -> :ok | error (already freed: the use-after-free
 * error). */
static ERL_NIF_TERM nif_model_free(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]) {
  (void)argc;
  ERL_NIF_TERM err;
  model_res_t *r = model_lock(env, argv[0], "elixir.free", &err);
  if (!r) return err;
  r->freed = 1;
  model_drop_runners(r);
  if (r->users == 0) {
    dml_rt_model_release(r->model);
    r->model = NULL;
  }
  free(r->bytes);
  r->bytes = NULL;
  enif_mutex_unlock(r->mu);
  return atom(env, "ok");
}

/* Writes `n` bytes to `path` atomically (temporary file, fsync, rename). */
static dml_status_t write_atomic(const char *path, const void *data, size_t n) {
  char tmp[4200];
  snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid());
  FILE *f = fopen(tmp, "wb");
  if (!f)
    return dml_status_make(DML_STATUS_IO, "elixir.save", "cannot create '%s': %s", tmp,
                           strerror(errno));
  int ok = fwrite(data, 1, n, f) == n;
  ok = fflush(f) == 0 && ok;
  ok = fsync(fileno(f)) == 0 && ok;
  ok = fclose(f) == 0 && ok;
  if (!ok || rename(tmp, path) != 0) {
    int e = errno;
    remove(tmp);
    return dml_status_make(DML_STATUS_IO, "elixir.save", "cannot write '%s': %s", path,
                           strerror(e));
  }
  return DML_OK;
}

/* save(model, path) -> :ok | error: the package with its current
 * parameters (a trained model's, through dml_train_save_package). */
static ERL_NIF_TERM nif_save(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]) {
  (void)argc;
  char path[4096];
  if (!get_str(env, argv[1], path, sizeof path))
    return MAKE_ERR(env, INVALID_ARGUMENT, "elixir.save", "path must be a string");
  ERL_NIF_TERM err;
  model_res_t *r = model_lock(env, argv[0], "elixir.save", &err);
  if (!r) return err;
  dml_status_t st;
  if (r->trainer)
    st = dml_train_save_package(r->model, dml_trainer_session(r->trainer, "train_step"),
                                r->bytes, r->size, path);
  else
    st = write_atomic(path, r->bytes, r->size);
  enif_mutex_unlock(r->mu);
  return st ? status_term(env, st) : atom(env, "ok");
}

/* info(model) -> {:ok, map}: inputs, outputs, functions, symbols, meta,
 * counts and the nodes ([{name, op}]) for summary. */
static ERL_NIF_TERM nif_info(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]) {
  (void)argc;
  ERL_NIF_TERM err;
  model_res_t *r = model_lock(env, argv[0], "elixir.info", &err);
  if (!r) return err;
  const dml_rt_model_t *m = r->model;
  uint32_t ni = dml_rt_model_num_inputs(m), no = dml_rt_model_num_outputs(m);
  ERL_NIF_TERM ins = enif_make_list(env, 0), outs = enif_make_list(env, 0);
  for (uint32_t i = ni; i-- > 0;) {
    dml_rt_io_info_t info;
    if (!dml_rt_model_input_info(m, i, &info))
      ins = enif_make_list_cell(env, io_info_term(env, &info), ins);
  }
  for (uint32_t i = no; i-- > 0;) {
    dml_rt_io_info_t info;
    if (!dml_rt_model_output_info(m, i, &info))
      outs = enif_make_list_cell(env, io_info_term(env, &info), outs);
  }
  ERL_NIF_TERM fns = enif_make_list(env, 0), syms = enif_make_list(env, 0),
               nodes = enif_make_list(env, 0);
  for (uint32_t i = dml_rt_model_num_functions(m); i-- > 0;)
    fns = enif_make_list_cell(env, str(env, dml_rt_model_function_name(m, i)), fns);
  for (uint32_t i = dml_rt_model_num_symbols(m); i-- > 0;) {
    const char *name;
    int64_t bound;
    if (!dml_rt_model_symbol(m, i, &name, &bound))
      syms = enif_make_list_cell(
          env, enif_make_tuple2(env, str(env, name), enif_make_int64(env, bound)), syms);
  }
  for (uint32_t i = dml_rt_model_num_nodes(m); i-- > 0;) {
    dml_rt_node_info_t ninfo;
    if (!dml_rt_model_node_info(m, i, &ninfo))
      nodes = enif_make_list_cell(
          env, enif_make_tuple2(env, str(env, ninfo.name), str(env, ninfo.op_name)),
          nodes);
  }
  const char *keys[] = {"inputs",        "outputs",     "functions",     "symbols",
                        "nodes",         "meta",        "param_count",   "const_count",
                        "weights_bytes", "arena_bytes", "scratch_bytes", "package_bytes",
                        "trainable"};
  ERL_NIF_TERM vals[] = {ins,
                         outs,
                         fns,
                         syms,
                         nodes,
                         str(env, dml_rt_model_meta(m)),
                         enif_make_int64(env, dml_rt_model_param_count(m)),
                         enif_make_int64(env, dml_rt_model_const_count(m)),
                         enif_make_uint64(env, dml_rt_model_weights_bytes(m)),
                         enif_make_int64(env, dml_rt_model_arena_bytes(m)),
                         enif_make_int64(env, dml_rt_model_scratch_bytes(m)),
                         enif_make_uint64(env, (uint64_t)r->size),
                         atom(env, r->trainable ? "true" : "false")};
  ERL_NIF_TERM out = make_map(env, keys, vals, sizeof vals / sizeof *vals);
  enif_mutex_unlock(r->mu);
  return ok2(env, out);
}

/* ===================================================================== */
/* Run, predict, benchmark                                               */
/* ===================================================================== */

/* Binds host tensor term `term` ({dtype, shape, data}) as input `name` of
 * `s`. A u8 tensor given for a bool input is taken as bool when every byte
 * is 0 or 1 (Nx holds booleans as u8). */
static dml_status_t bind_host_input(ErlNifEnv *env, dml_rt_session_t *s, const char *name,
                                    ERL_NIF_TERM term, const char *op) {
  dml_tensor_t t;
  const char *why = get_tensor(env, term, &t);
  if (why)
    return dml_status_make(DML_STATUS_INVALID_ARGUMENT, op, "input '%s': %s", name, why);
  int32_t idx = dml_rt_session_find_input(s, name);
  if (idx >= 0 && t.dtype == DML_DTYPE_U8) {
    dml_rt_io_info_t info;
    if (!dml_rt_session_input_info(s, (uint32_t)idx, &info) &&
        info.dtype == DML_DTYPE_BOOL) {
      size_t n = dml_tensor_bytes(&t), k = 0;
      const unsigned char *p = t.data;
      while (k < n && p[k] <= 1) k++;
      if (k == n) t.dtype = DML_DTYPE_BOOL;
    }
  }
  return dml_rt_session_set_input_by_name(s, name, &t);
}

/* Binds the inputs `list` ([{name, tensor}], host tensors) to `s`
 * (bind_host_input). */
static dml_status_t bind_inputs(ErlNifEnv *env, dml_rt_session_t *s, ERL_NIF_TERM list,
                                const char *op) {
  ERL_NIF_TERM head, tail = list;
  dml_rt_session_clear_inputs(s);
  while (enif_get_list_cell(env, tail, &head, &tail)) {
    const ERL_NIF_TERM *kv;
    int arity;
    char name[256];
    if (!enif_get_tuple(env, head, &arity, &kv) || arity != 2 ||
        !get_str(env, kv[0], name, sizeof name))
      return dml_status_make(DML_STATUS_INVALID_ARGUMENT, op,
                             "inputs must be a map of input name => tensor");
    DML_RETURN_IF_ERROR(bind_host_input(env, s, name, kv[1], op));
  }
  return DML_OK;
}

/* The outputs of the last run as [{name, tensor}]. */
static dml_status_t outputs_term(ErlNifEnv *env, dml_rt_session_t *s, ERL_NIF_TERM *out) {
  ERL_NIF_TERM l = enif_make_list(env, 0);
  for (uint32_t i = dml_rt_session_num_outputs(s); i-- > 0;) {
    dml_rt_io_info_t info;
    dml_tensor_t t;
    DML_RETURN_IF_ERROR(dml_rt_session_output_info(s, i, &info));
    DML_RETURN_IF_ERROR(dml_rt_session_get_output(s, i, &t));
    l = enif_make_list_cell(
        env, enif_make_tuple2(env, str(env, info.name), tensor_term(env, &t)), l);
  }
  *out = l;
  return DML_OK;
}

/* run(model, device, [{name, tensor}]) -> {:ok, [{name, tensor}]} | error:
 * one run of forward (batch within the bound). */
static ERL_NIF_TERM nif_run(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]) {
  (void)argc;
  const char *op = "elixir.run";
  char device[64];
  if (!get_device(env, argv[1], device, sizeof device))
    return MAKE_ERR(env, INVALID_ARGUMENT, op, "device must be a string");
  ERL_NIF_TERM err, out = 0;
  model_res_t *r = model_lock(env, argv[0], op, &err);
  if (!r) return err;
  dml_rt_session_t *s = NULL;
  dml_status_t st = model_session(r, device, op, &s);
  if (!st) st = bind_inputs(env, s, argv[2], op);
  if (!st) st = dml_rt_session_run(s);
  if (!st) st = outputs_term(env, s, &out);
  enif_mutex_unlock(r->mu);
  return st ? status_term(env, st) : ok2(env, out);
}

/* Forward on all rows of x (the model's only input), in chunks of the
 * batch bound, output `oi`: into *out / *buf (malloc'd). */
static dml_status_t predict_session(dml_rt_session_t *s, const dml_tensor_t *x,
                                    uint32_t oi, dml_tensor_t *out, void **buf) {
  const char *op = "elixir.predict";
  if (dml_rt_session_num_inputs(s) != 1)
    return dml_status_make(
        DML_STATUS_INVALID_ARGUMENT, op,
        "predict takes models of one input; this one has %u (use run/3 "
        "with a map of inputs)",
        dml_rt_session_num_inputs(s));
  dml_rt_io_info_t in;
  DML_RETURN_IF_ERROR(dml_rt_session_input_info(s, 0, &in));
  if (x->rank < 1 || in.rank < 1)
    return dml_status_make(DML_STATUS_INVALID_ARGUMENT, op,
                           "x needs a leading batch dim");
  int64_t n = x->dims[0], bound = in.dim_symbol[0] ? in.dim_bound[0] : in.dims[0];
  if (bound < 1) bound = 1;
  size_t row_in = n ? dml_tensor_bytes(x) / (size_t)n : 0;
  size_t row_out = 0;
  unsigned char *o = NULL;
  *buf = NULL;
  for (int64_t at = 0; at < n; at += bound) {
    int64_t rows = n - at < bound ? n - at : bound;
    dml_tensor_t part = *x;
    part.dims[0] = rows;
    part.data = (unsigned char *)x->data + (size_t)at * row_in;
    dml_status_t st = dml_rt_session_set_input(s, 0, &part);
    if (!st) st = dml_rt_session_run(s);
    dml_tensor_t y;
    if (!st) st = dml_rt_session_get_output(s, oi, &y);
    if (st) {
      free(o);
      return dml_status_annotate(st, "rows %lld..%lld of x", (long long)at,
                                 (long long)(at + rows));
    }
    if (y.rank < 1 || y.dims[0] != rows) {
      free(o);
      return dml_status_make(
          DML_STATUS_UNIMPLEMENTED, op,
          "output %u has no leading batch dim: run the rows with run/3", oi);
    }
    if (at == 0) {
      *out = y;
      out->dims[0] = n;
      row_out = rows ? dml_tensor_bytes(&y) / (size_t)rows : 0;
      if (row_out && (size_t)n > (SIZE_MAX - 1) / row_out)
        return dml_status_make(DML_STATUS_RESOURCE_EXHAUSTED, op,
                               "the output of %lld rows overflows the address space",
                               (long long)n);
      o = malloc(row_out * (size_t)n + 1);
      if (!o) return dml_status_make(DML_STATUS_RESOURCE_EXHAUSTED, op, "out of memory");
    }
    memcpy(o + (size_t)at * row_out, y.data, (size_t)rows * row_out);
  }
  out->data = o;
  *buf = o;
  return DML_OK;
}

/* The output `oi` of `s` for 0 rows: its declared dims with the batch
 * dim 0 (every other dim must be static). */
static dml_status_t predict_empty(dml_rt_session_t *s, uint32_t oi, dml_tensor_t *out) {
  dml_rt_io_info_t info;
  DML_RETURN_IF_ERROR(dml_rt_session_output_info(s, oi, &info));
  memset(out, 0, sizeof *out);
  out->dtype = info.dtype;
  out->rank = info.rank;
  for (int32_t k = 0; k < info.rank; k++) {
    if (k > 0 && info.dim_symbol[k])
      return dml_status_make(
          DML_STATUS_UNIMPLEMENTED, "elixir.predict",
          "output '%s' has symbolic dim %d ('%s'): its size for 0 rows "
          "is unknown",
          info.name, (int)k, info.dim_symbol[k]);
    out->dims[k] = k == 0 ? 0 : info.dims[k];
  }
  if (info.rank < 1 || !info.dim_symbol[0])
    return dml_status_make(DML_STATUS_UNIMPLEMENTED, "elixir.predict",
                           "output '%s' has no leading batch dim", info.name);
  out->data = (void *)"";
  return DML_OK;
}

/* predict(model, device, x :: tensor, output :: int) -> {:ok, tensor}: x
 * with 0 rows gives the output's shape with 0 rows. */
static ERL_NIF_TERM nif_predict(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]) {
  (void)argc;
  const char *op = "elixir.predict";
  char device[64];
  dml_tensor_t x;
  unsigned oi;
  if (!get_device(env, argv[1], device, sizeof device) ||
      !enif_get_uint(env, argv[3], &oi))
    return MAKE_ERR(env, INVALID_ARGUMENT, op, "bad device or output index");
  const char *why = get_tensor(env, argv[2], &x);
  if (why) return MAKE_ERR(env, INVALID_ARGUMENT, op, "x: %s", why);
  ERL_NIF_TERM err, out = 0;
  model_res_t *r = model_lock(env, argv[0], op, &err);
  if (!r) return err;
  dml_tensor_t y;
  void *buf = NULL;
  dml_status_t st;
  if (x.rank >= 1 && x.dims[0] == 0) {
    dml_rt_session_t *s = NULL;
    st = model_session(r, device, op, &s);
    if (!st && oi >= dml_rt_session_num_outputs(s))
      st = dml_status_make(DML_STATUS_OUT_OF_RANGE, op, "output %u of %u", oi,
                           dml_rt_session_num_outputs(s));
    if (!st) st = predict_empty(s, oi, &y);
  } else if (r->trainable) {
    dml_trainer_t *t = NULL;
    st = model_trainer(r, device, op, &t);
    if (!st) st = dml_trainer_predict(t, &x, oi, &y, &buf);
  } else {
    dml_rt_session_t *s = NULL;
    st = model_session(r, device, op, &s);
    if (!st) st = predict_session(s, &x, oi, &y, &buf);
  }
  enif_mutex_unlock(r->mu);
  if (st) return status_term(env, st);
  out = tensor_term(env, &y);
  free(buf);
  return ok2(env, out);
}

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int cmp_dbl(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

/* benchmark(model, device, inputs, iterations, warmup) -> {:ok, map} of
 * milliseconds per run (bind + run; wall clock). */
static ERL_NIF_TERM nif_benchmark(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]) {
  (void)argc;
  const char *op = "elixir.benchmark";
  char device[64];
  unsigned iters, warm;
  if (!get_device(env, argv[1], device, sizeof device) ||
      !enif_get_uint(env, argv[3], &iters) || !enif_get_uint(env, argv[4], &warm) ||
      iters < 1 || iters > 1000000)
    return MAKE_ERR(env, INVALID_ARGUMENT, op,
                    "bad device, iterations (1..1e6) or warmup");
  double *ts = malloc(sizeof(double) * iters);
  if (!ts) return MAKE_ERR(env, RESOURCE_EXHAUSTED, op, "out of memory");
  ERL_NIF_TERM err;
  model_res_t *r = model_lock(env, argv[0], op, &err);
  if (!r) {
    free(ts);
    return err;
  }
  dml_rt_session_t *s = NULL;
  dml_status_t st = model_session(r, device, op, &s);
  for (unsigned i = 0; !st && i < warm + iters; i++) {
    double t0 = now_ms();
    st = bind_inputs(env, s, argv[2], op);
    if (!st) st = dml_rt_session_run(s);
    if (i >= warm) ts[i - warm] = now_ms() - t0;
  }
  const char *dev = s && !st ? dml_rt_session_device(s) : "";
  ERL_NIF_TERM devt = str(env, dev);
  enif_mutex_unlock(r->mu);
  if (st) {
    free(ts);
    return status_term(env, st);
  }
  qsort(ts, iters, sizeof *ts, cmp_dbl);
  double sum = 0;
  for (unsigned i = 0; i < iters; i++) sum += ts[i];
  const char *keys[] = {"min", "median", "mean", "max", "iterations", "device"};
  ERL_NIF_TERM vals[] = {
      dbl(env, ts[0]),         dbl(env, ts[iters / 2]),    dbl(env, sum / iters),
      dbl(env, ts[iters - 1]), enif_make_uint(env, iters), devt};
  free(ts);
  return ok2(env, make_map(env, keys, vals, 6));
}

/* check(model, device, seed, iterations) -> {:ok, report} | error: each
 * GPU kernel against the CPU reference kernels, then end to end
 * (dml_rt_check, whose comment states the error measure and tolerances).
 * A wrong kernel is a report with n_failed > 0, not an error. */
static ERL_NIF_TERM nif_check(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]) {
  (void)argc;
  const char *op = "elixir.check";
  char device[64];
  ErlNifUInt64 seed;
  unsigned iters;
  if (!get_device(env, argv[1], device, sizeof device) ||
      !enif_get_uint64(env, argv[2], &seed) || !enif_get_uint(env, argv[3], &iters))
    return MAKE_ERR(env, INVALID_ARGUMENT, op, "bad device, seed or iterations");
  ERL_NIF_TERM err;
  model_res_t *r = model_lock(env, argv[0], op, &err);
  if (!r) return err;
  dml_rt_check_options_t opt;
  memset(&opt, 0, sizeof opt);
  opt.seed = seed;
  opt.iterations = iters;
  dml_rt_check_report_t *rep = NULL;
  dml_status_t st = dml_rt_check(r->model, device, &opt, &rep);
  enif_mutex_unlock(r->mu);
  if (st) return status_term(env, st);
  ERL_NIF_TERM ks = enif_make_list(env, 0);
  for (uint32_t i = rep->n_kernels; i-- > 0;) {
    const dml_rt_check_kernel_t *k = &rep->kernels[i];
    const char *keys[] = {"name",      "ops",    "tol_class", "tolerance", "checked",
                          "passed",    "worst",  "value",     "index",     "device_value",
                          "cpu_value", "inputs", "iteration", "note"};
    ERL_NIF_TERM vals[] = {str(env, k->name),
                           str(env, k->ops),
                           str(env, k->tol_class ? k->tol_class : ""),
                           dbl(env, k->tolerance),
                           atom(env, k->checked ? "true" : "false"),
                           atom(env, k->passed ? "true" : "false"),
                           dbl(env, k->worst),
                           str(env, k->value),
                           enif_make_int64(env, k->index),
                           dbl(env, k->device_value),
                           dbl(env, k->cpu_value),
                           str(env, k->inputs ? k->inputs : ""),
                           enif_make_uint(env, k->iteration),
                           str(env, k->note)};
    ks = enif_make_list_cell(env, make_map(env, keys, vals, 14), ks);
  }
  const char *keys[] = {"device", "n_failed", "seed", "iterations", "kernels"};
  ERL_NIF_TERM vals[] = {str(env, rep->device), enif_make_uint(env, rep->n_failed),
                         enif_make_uint64(env, rep->seed),
                         enif_make_uint(env, rep->iterations), ks};
  dml_rt_check_report_free(rep);
  return ok2(env, make_map(env, keys, vals, 5));
}

/* ===================================================================== */
/* Training                                                              */
/* ===================================================================== */

typedef struct fit_ud {
  ErlNifEnv *env; /* the fit call's (process-bound, this thread) */
  ctl_res_t *ctl;
  ErlNifPid listener;
  ERL_NIF_TERM tag; /* in env */
  int batches;      /* send {:dmlc_batch, ...} too */
} fit_ud_t;

static ERL_NIF_TERM epoch_term(ErlNifEnv *env, const dml_epoch_metrics_t *m) {
  const char *keys[] = {
      "epoch",    "epochs",       "step", "loss",    "accuracy",
      "val_loss", "val_accuracy", "lr",   "seconds", "samples_per_second"};
  ERL_NIF_TERM vals[] = {enif_make_int(env, m->epoch),   enif_make_int(env, m->epochs),
                         enif_make_uint64(env, m->step), dbl(env, m->loss),
                         dbl(env, m->accuracy),          dbl(env, m->val_loss),
                         dbl(env, m->val_accuracy),      dbl(env, m->lr),
                         dbl(env, m->seconds),           dbl(env, m->samples_per_second)};
  return make_map(env, keys, vals, 10);
}

static int fit_epoch_cb(dml_epoch_metrics_t *m, void *user) {
  fit_ud_t *u = user;
  ErlNifEnv *me = enif_alloc_env();
  ERL_NIF_TERM msg = enif_make_tuple3(me, atom(me, "dmlc_epoch"),
                                      enif_make_copy(me, u->tag), epoch_term(me, m));
  enif_send(u->env, &u->listener, me, msg);
  enif_free_env(me);
  ctl_res_t *c = u->ctl;
  enif_mutex_lock(c->mu);
  while (c->acked < m->epoch && !c->cancelled && !c->halt) enif_cond_wait(c->cv, c->mu);
  int stop = c->halt || c->cancelled;
  enif_mutex_unlock(c->mu);
  return stop;
}

static int fit_batch_cb(const dml_batch_metrics_t *m, void *user) {
  fit_ud_t *u = user;
  if (u->batches) {
    ErlNifEnv *me = enif_alloc_env();
    const char *keys[] = {"epoch", "batch", "batches", "step", "rows", "loss", "lr"};
    ERL_NIF_TERM vals[] = {enif_make_int(me, m->epoch),
                           enif_make_int64(me, m->batch),
                           enif_make_int64(me, m->batches),
                           enif_make_uint64(me, m->step),
                           enif_make_int64(me, m->rows),
                           dbl(me, m->loss),
                           dbl(me, m->lr)};
    ERL_NIF_TERM msg =
        enif_make_tuple3(me, atom(me, "dmlc_batch"), enif_make_copy(me, u->tag),
                         make_map(me, keys, vals, 7));
    enif_send(u->env, &u->listener, me, msg);
    enif_free_env(me);
  }
  enif_mutex_lock(u->ctl->mu);
  int stop = u->ctl->halt || u->ctl->cancelled;
  enif_mutex_unlock(u->ctl->mu);
  return stop;
}

/* fit_control() -> ctl: monitors the caller (the listener). */
static ERL_NIF_TERM nif_fit_control(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]) {
  (void)argc, (void)argv;
  ctl_res_t *c = enif_alloc_resource(CTL_RT, sizeof *c);
  memset(c, 0, sizeof *c);
  c->mu = enif_mutex_create("dmlc_fit_mu");
  c->cv = enif_cond_create("dmlc_fit_cv");
  enif_self(env, &c->pid);
  c->monitoring = enif_monitor_process(env, c, &c->pid, &c->mon) == 0;
  ERL_NIF_TERM t = enif_make_resource(env, c);
  enif_release_resource(c);
  return t;
}

/* fit_ack(ctl, epoch, halt :: boolean) -> :ok */
static ERL_NIF_TERM nif_fit_ack(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]) {
  (void)argc;
  ctl_res_t *c;
  int epoch;
  if (!enif_get_resource(env, argv[0], CTL_RT, (void **)&c) ||
      !enif_get_int(env, argv[1], &epoch))
    return enif_make_badarg(env);
  enif_mutex_lock(c->mu);
  if (epoch > c->acked) c->acked = epoch;
  if (enif_is_identical(argv[2], atom(env, "true"))) c->halt = 1;
  enif_cond_broadcast(c->cv);
  enif_mutex_unlock(c->mu);
  return atom(env, "ok");
}

static ERL_NIF_TERM history_term(ErlNifEnv *env, const dml_history_t *h) {
  ERL_NIF_TERM l = enif_make_list(env, 0);
  for (int32_t i = h->n_epochs; i-- > 0;)
    l = enif_make_list_cell(env, epoch_term(env, &h->epochs[i]), l);
  const char *keys[] = {"epochs", "stopped_early", "best_epoch", "restored",
                        "validation"};
  ERL_NIF_TERM vals[] = {l, atom(env, h->stopped_early ? "true" : "false"),
                         enif_make_int(env, h->best_epoch),
                         atom(env, h->restored ? "true" : "false"),
                         str(env, h->validation)};
  return make_map(env, keys, vals, 5);
}

/* fit(model, device, x, y, opts :: map, ctl, listener :: pid, tag) ->
 * {:ok, history} | error. opts: epochs, batch_size, shuffle, seed,
 * lr_schedule (binary, dml_lr_schedule_parse's spelling), validation
 * ({x, y} tensors) or validation_split, eval_batch_size, patience,
 * min_delta, monitor (binary), restore_best, checkpoint_every,
 * checkpoint_dir, batches (send batch messages), momentum, beta1, beta2,
 * epsilon, alpha, weight_decay, clip_norm, clip_value (hyper-parameters set
 * before the first step). */
static ERL_NIF_TERM nif_fit(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]) {
  (void)argc;
  const char *op = "elixir.fit";
  char device[64], sched[256], monitor[32], ckdir[4096];
  dml_dataset_t train, val;
  const char *why;
  if (!get_device(env, argv[1], device, sizeof device))
    return MAKE_ERR(env, INVALID_ARGUMENT, op, "device must be a string");
  if ((why = get_tensor(env, argv[2], &train.x)))
    return MAKE_ERR(env, INVALID_ARGUMENT, op, "x: %s", why);
  if ((why = get_tensor(env, argv[3], &train.y)))
    return MAKE_ERR(env, INVALID_ARGUMENT, op, "y: %s", why);
  ERL_NIF_TERM opts = argv[4], v;
  ctl_res_t *ctl;
  fit_ud_t ud;
  memset(&ud, 0, sizeof ud);
  if (!enif_is_map(env, opts) ||
      !enif_get_resource(env, argv[5], CTL_RT, (void **)&ctl) ||
      !enif_get_local_pid(env, argv[6], &ud.listener))
    return MAKE_ERR(env, INVALID_ARGUMENT, op, "bad arguments");
  ud.env = env;
  ud.ctl = ctl;
  ud.tag = argv[7];
  dml_fit_options_t o;
  dml_fit_options_init(&o);
  o.verbose = 0;
  ErlNifSInt64 iv;
#define OPT_INT(key, field, lo)                                                        \
  if (map_get(env, opts, key, &v)) {                                                   \
    if (!enif_get_int64(env, v, &iv) || iv < (lo))                                     \
      return MAKE_ERR(env, INVALID_ARGUMENT, op, key " must be an integer >= %d", lo); \
    o.field = iv;                                                                      \
  }
  OPT_INT("epochs", epochs, 1)
  OPT_INT("batch_size", batch_size, 1)
  OPT_INT("seed", seed, 0)
  OPT_INT("eval_batch_size", eval_batch_size, 0)
  OPT_INT("patience", patience, 0)
  OPT_INT("checkpoint_every", checkpoint_every, 0)
#undef OPT_INT
  int shuffle = o.shuffle, restore = o.restore_best, batches = 0, given = 0;
  opt_bool(env, opts, "shuffle", &shuffle);
  opt_bool(env, opts, "restore_best", &restore);
  opt_bool(env, opts, "batches", &batches);
  o.shuffle = shuffle;
  o.restore_best = restore;
  ud.batches = batches;
  static const char *const nk[] = {"min_delta", "validation_split"};
  double *nd[] = {&o.min_delta, &o.validation_split};
  dml_status_t st = opt_nums(env, opts, op, nk, nd, 2);
  if (!st)
    st = opt_str(env, opts, op, "lr_schedule", "a string", sched, sizeof sched, &given);
  if (!st && given) st = dml_lr_schedule_parse(sched, &o.lr);
  if (!st)
    st = opt_str(env, opts, op, "monitor", "a name", monitor, sizeof monitor, &given);
  if (!st && given) st = dml_monitor_parse(monitor, &o.monitor);
  if (!st)
    st = opt_str(env, opts, op, "checkpoint_dir", "a path", ckdir, sizeof ckdir, &given);
  if (!st && given) o.checkpoint_dir = ckdir;
  if (st) return status_term(env, st);
  if (map_get(env, opts, "validation", &v)) {
    const ERL_NIF_TERM *xy;
    int arity;
    if (!enif_get_tuple(env, v, &arity, &xy) || arity != 2)
      return MAKE_ERR(env, INVALID_ARGUMENT, op, "validation_data must be {x, y}");
    if ((why = get_tensor(env, xy[0], &val.x)) || (why = get_tensor(env, xy[1], &val.y)))
      return MAKE_ERR(env, INVALID_ARGUMENT, op, "validation_data: %s", why);
    o.validation = &val;
  }
  static const char *const hk[] = {"momentum", "beta1",        "beta2",     "epsilon",
                                   "alpha",    "weight_decay", "clip_norm", "clip_value"};
  double *hd[] = {&o.hyper.momentum,  &o.hyper.beta1,     &o.hyper.beta2,
                  &o.hyper.epsilon,   &o.hyper.alpha,     &o.hyper.weight_decay,
                  &o.hyper.clip_norm, &o.hyper.clip_value};
  st = opt_nums(env, opts, op, hk, hd, sizeof hk / sizeof *hk);
  if (st) return status_term(env, st);
  o.callback = fit_epoch_cb;
  o.batch_callback = fit_batch_cb;
  o.user_data = &ud;

  ERL_NIF_TERM err;
  model_res_t *r = model_lock(env, argv[0], op, &err);
  if (!r) return err;
  dml_trainer_t *t = NULL;
  st = model_trainer(r, device, op, &t);
  dml_history_t h;
  memset(&h, 0, sizeof h);
  if (!st) {
    /* The fit runs without the lock, so that calls on the model meanwhile
     * fail at once (model_lock) instead of holding a dirty scheduler until
     * it ends; the trainer is this thread's until `fitting` drops. */
    r->fitting = 1;
    enif_mutex_unlock(r->mu);
    st = dml_trainer_fit(t, &train, &o, &h);
    enif_mutex_lock(r->mu);
    r->fitting = 0;
  }
  enif_mutex_unlock(r->mu);
  if (st) {
    dml_history_free(&h);
    return status_term(env, st);
  }
  ERL_NIF_TERM out = history_term(env, &h);
  dml_history_free(&h);
  return ok2(env, out);
}

/* evaluate(model, device, x, y, batch_size) -> {:ok, {loss, accuracy}}. */
static ERL_NIF_TERM nif_evaluate(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]) {
  (void)argc;
  const char *op = "elixir.evaluate";
  char device[64];
  dml_dataset_t d;
  const char *why;
  ErlNifSInt64 bs;
  if (!get_device(env, argv[1], device, sizeof device) ||
      !enif_get_int64(env, argv[4], &bs))
    return MAKE_ERR(env, INVALID_ARGUMENT, op, "bad device or batch size");
  if ((why = get_tensor(env, argv[2], &d.x)) || (why = get_tensor(env, argv[3], &d.y)))
    return MAKE_ERR(env, INVALID_ARGUMENT, op, "data: %s", why);
  ERL_NIF_TERM err;
  model_res_t *r = model_lock(env, argv[0], op, &err);
  if (!r) return err;
  dml_trainer_t *t = NULL;
  double loss = NAN, acc = NAN;
  dml_status_t st = model_trainer(r, device, op, &t);
  if (!st) st = dml_trainer_evaluate(t, &d, bs, &loss, &acc);
  enif_mutex_unlock(r->mu);
  if (st) return status_term(env, st);
  return ok2(env, enif_make_tuple2(env, dbl(env, loss), dbl(env, acc)));
}

/* checkpoint(model, device, path, save :: boolean, seed) -> :ok | error:
 * writes every global (parameters, optimizer state) and the epoch/step
 * counters as safetensors, or restores them (dml_trainer_save_checkpoint /
 * dml_trainer_load_checkpoint; a later fit continues from there). */
static ERL_NIF_TERM nif_checkpoint(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]) {
  (void)argc;
  const char *op = "elixir.checkpoint";
  char device[64], path[4096];
  ErlNifUInt64 seed;
  if (!get_device(env, argv[1], device, sizeof device) ||
      !get_str(env, argv[2], path, sizeof path) || !enif_get_uint64(env, argv[4], &seed))
    return MAKE_ERR(env, INVALID_ARGUMENT, op, "bad device, path or seed");
  int save = enif_is_identical(argv[3], atom(env, "true"));
  ERL_NIF_TERM err;
  model_res_t *r = model_lock(env, argv[0], op, &err);
  if (!r) return err;
  dml_trainer_t *t = NULL;
  dml_status_t st = model_trainer(r, device, op, &t);
  if (!st)
    st = save ? dml_trainer_save_checkpoint(t, path, seed)
              : dml_trainer_load_checkpoint(t, path);
  enif_mutex_unlock(r->mu);
  return st ? status_term(env, st) : atom(env, "ok");
}

/* ===================================================================== */
/* Serving                                                               */
/* ===================================================================== */

/* A queued request. It holds no reference to the serving resource: a
 * callback must never be the one to drop the last (the destructor would then
 * shut the server down from its own worker). */
typedef struct serve_req {
  ErlNifPid pid;
  ErlNifEnv *env; /* holds tag, then the reply */
  ERL_NIF_TERM tag;
} serve_req_t;

static void serve_done(void *user, dml_status_t st, dml_tensor_t *outputs, uint32_t n) {
  serve_req_t *q = user;
  ErlNifEnv *me = q->env;
  ERL_NIF_TERM res;
  if (st) {
    res = status_term(me, st);
  } else {
    ERL_NIF_TERM l = enif_make_list(me, 0);
    for (uint32_t i = n; i-- > 0;)
      l = enif_make_list_cell(me, tensor_term(me, &outputs[i]), l);
    dml_serve_outputs_free(outputs);
    res = ok2(me, l);
  }
  /* See tl_stop_env. */
  ErlNifEnv *caller = NULL;
  int can = 1;
  if (enif_thread_type() != ERL_NIF_THR_UNDEFINED) {
    caller = tl_stop_env;
    can = caller != NULL;
  }
  if (can)
    enif_send(caller, &q->pid, me,
              enif_make_tuple3(me, atom(me, "dmlc_serve"), q->tag, res));
  enif_free_env(me);
  free(q);
}

/* A model holding the trained parameters of `m` (whose package's weights
 * are the initial ones): the package written with them by
 * dml_train_save_package into a temporary file, loaded (mapped) and
 * unlinked. Lock held. */
static dml_status_t snapshot_trained(model_res_t *m, dml_rt_model_t **out) {
  const char *dir = getenv("TMPDIR");
  char path[4096];
  snprintf(path, sizeof path, "%s/dmlc-serve-XXXXXX", dir && dir[0] ? dir : "/tmp");
  int fd = mkstemp(path);
  if (fd < 0)
    return dml_status_make(DML_STATUS_IO, "elixir.serving",
                           "cannot create a temporary file in '%s': %s",
                           dir && dir[0] ? dir : "/tmp", strerror(errno));
  close(fd);
  dml_status_t st = dml_train_save_package(
      m->model, dml_trainer_session(m->trainer, "train_step"), m->bytes, m->size, path);
  if (!st) st = dml_rt_model_load_file(path, out);
  unlink(path);
  return st;
}

/* serve_start(model, device, batch_size, batch_timeout_ms, instances) ->
 * {:ok, serve} | error: a trained model is served with its parameters as
 * they are now (a snapshot: later fits do not change what it serves). */
static ERL_NIF_TERM nif_serve_start(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]) {
  (void)argc;
  const char *op = "elixir.serving";
  char device[64];
  ErlNifSInt64 bs;
  double timeout;
  int inst;
  if (!get_device(env, argv[1], device, sizeof device) ||
      !enif_get_int64(env, argv[2], &bs) || !get_num(env, argv[3], &timeout) ||
      !enif_get_int(env, argv[4], &inst))
    return MAKE_ERR(env, INVALID_ARGUMENT, op,
                    "bad device, batch_size, batch_timeout or instances");
  ERL_NIF_TERM err;
  model_res_t *m = model_lock(env, argv[0], op, &err);
  if (!m) return err;
  dml_serve_config_t cfg;
  dml_serve_config_init(&cfg);
  cfg.batch_size = bs;
  cfg.batch_timeout_ms = timeout;
  cfg.device = device;
  cfg.instances = inst;
  dml_serve_t *srv = NULL;
  dml_rt_model_t *own = NULL;
  dml_status_t st = m->trainer ? snapshot_trained(m, &own) : DML_OK;
  if (!st) st = dml_serve_create(own ? own : m->model, &cfg, &srv);
  if (!st) m->users++;
  enif_mutex_unlock(m->mu);
  if (st) {
    dml_rt_model_release(own);
    return status_term(env, st);
  }
  serve_res_t *s = enif_alloc_resource(SERVE_RT, sizeof *s);
  memset(s, 0, sizeof *s);
  s->mu = enif_mutex_create("dmlc_serve");
  s->srv = srv;
  s->m = m;
  s->own = own;
  s->n_outputs = dml_serve_num_outputs(srv);
  enif_keep_resource(m);
  ERL_NIF_TERM t = enif_make_resource(env, s);
  enif_release_resource(s);
  return ok2(env, t);
}

/* serve_submit(serve, [tensor] (the model's input order), pid, tag) -> :ok |
 * error; the reply goes to pid as {:dmlc_serve, tag, {:ok, [tensor]} |
 * error}. */
static ERL_NIF_TERM nif_serve_submit(ErlNifEnv *env, int argc,
                                     const ERL_NIF_TERM argv[]) {
  (void)argc;
  const char *op = "elixir.serving";
  serve_res_t *s;
  if (!enif_get_resource(env, argv[0], SERVE_RT, (void **)&s))
    return MAKE_ERR(env, INVALID_ARGUMENT, op, "not a serving object");
  dml_tensor_t in[16];
  unsigned n = 0;
  ERL_NIF_TERM head, tail = argv[1];
  while (enif_get_list_cell(env, tail, &head, &tail)) {
    if (n == 16) return MAKE_ERR(env, INVALID_ARGUMENT, op, "more than 16 inputs");
    const char *why = get_tensor(env, head, &in[n]);
    if (why) return MAKE_ERR(env, INVALID_ARGUMENT, op, "input %u: %s", n, why);
    n++;
  }
  serve_req_t *q = malloc(sizeof *q);
  if (!q) return MAKE_ERR(env, RESOURCE_EXHAUSTED, op, "out of memory");
  if (!enif_get_local_pid(env, argv[2], &q->pid)) {
    free(q);
    return enif_make_badarg(env);
  }
  q->env = enif_alloc_env();
  q->tag = enif_make_copy(q->env, argv[3]);
  enif_mutex_lock(s->mu);
  dml_status_t st =
      s->srv ? DML_OK
             : dml_status_detail(
                   dml_status_make(DML_STATUS_FAILED_PRECONDITION, op, "use after free"),
                   "the serving was stopped");
  if (!st) st = dml_serve_submit(s->srv, in, n, serve_done, q);
  enif_mutex_unlock(s->mu);
  if (st) {
    enif_free_env(q->env);
    free(q);
    return status_term(env, st);
  }
  return atom(env, "ok");
}

/* serve_stats(serve) -> {:ok, map} | error */
static ERL_NIF_TERM nif_serve_stats(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]) {
  (void)argc;
  serve_res_t *s;
  if (!enif_get_resource(env, argv[0], SERVE_RT, (void **)&s))
    return enif_make_badarg(env);
  dml_serve_stats_t stt;
  enif_mutex_lock(s->mu);
  int live = s->srv != NULL;
  if (live) dml_serve_get_stats(s->srv, &stt);
  int64_t bs = live ? dml_serve_batch_size(s->srv) : 0;
  enif_mutex_unlock(s->mu);
  if (!live)
    return MAKE_ERR(env, FAILED_PRECONDITION, "elixir.serving", "use after free");
  const char *keys[] = {"requests",       "requests_failed",   "rows",
                        "runs",           "mean_rows_per_run", "latency_ms_p50",
                        "latency_ms_p99", "queue_ms_p50",      "batch_size"};
  ERL_NIF_TERM vals[] = {enif_make_uint64(env, stt.requests),
                         enif_make_uint64(env, stt.requests_failed),
                         enif_make_uint64(env, stt.rows),
                         enif_make_uint64(env, stt.runs),
                         dbl(env, stt.mean_rows_per_run),
                         dbl(env, stt.latency_ms_p50),
                         dbl(env, stt.latency_ms_p99),
                         dbl(env, stt.queue_ms_p50),
                         enif_make_int64(env, bs)};
  return ok2(env, make_map(env, keys, vals, 9));
}

/* serve_stop(serve) -> :ok: drains the queue, stops the workers. */
static ERL_NIF_TERM nif_serve_stop(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]) {
  (void)argc;
  serve_res_t *s;
  if (!enif_get_resource(env, argv[0], SERVE_RT, (void **)&s))
    return enif_make_badarg(env);
  enif_mutex_lock(s->mu);
  int live = s->srv != NULL && !s->stopping;
  dml_serve_t *srv = s->srv;
  if (live) s->stopping = 1;
  enif_mutex_unlock(s->mu);
  if (!live)
    return MAKE_ERR(env, FAILED_PRECONDITION, "elixir.serving", "use after free");
  /* Shut down without the lock (callbacks and submits need it briefly);
   * then detach under it. */
  tl_stop_env = env;
  dml_serve_shutdown(srv, 1);
  tl_stop_env = NULL;
  enif_mutex_lock(s->mu);
  serve_stop_locked(s, env, 1);
  enif_mutex_unlock(s->mu);
  return atom(env, "ok");
}

/* ===================================================================== */
/* Devices, eager ops                                                    */
/* ===================================================================== */

/* gpu_devices("vulkan" | "cuda") -> {:ok, [map]} | error */
static ERL_NIF_TERM nif_gpu_devices(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]) {
  (void)argc;
  char kind[16];
  if (!get_str(env, argv[0], kind, sizeof kind)) return enif_make_badarg(env);
  dml_rt_device_info_t di[16];
  uint32_t n = 0;
  dml_status_t st;
  if (strcmp(kind, "vulkan") == 0)
    st = dml_rt_vulkan_devices(di, 16, &n);
  else if (strcmp(kind, "cuda") == 0)
    st = dml_rt_cuda_devices(di, 16, &n);
  else
    return MAKE_ERR(env, INVALID_ARGUMENT, "elixir.devices", "unknown device kind '%s'",
                    kind);
  if (st) return status_term(env, st);
  ERL_NIF_TERM l = enif_make_list(env, 0);
  for (uint32_t i = n < 16 ? n : 16; i-- > 0;) {
    const char *keys[] = {"id", "name", "kind", "memory_bytes", "default"};
    ERL_NIF_TERM vals[] = {str(env, di[i].id), str(env, di[i].name), str(env, di[i].kind),
                           enif_make_uint64(env, di[i].memory_bytes),
                           atom(env, di[i].is_default ? "true" : "false")};
    l = enif_make_list_cell(env, make_map(env, keys, vals, 5), l);
  }
  return ok2(env, l);
}

static ERL_NIF_TERM nif_available_targets(ErlNifEnv *env, int argc,
                                          const ERL_NIF_TERM argv[]) {
  (void)argc, (void)argv;
  return str(env, dml_compile_available_targets());
}

/* ===================================================================== */
/* Eager tensors (dml_tensor.h)                                          */
/* ===================================================================== */

/* The device named `name` (opened on first use). g_tensor_mu held. */
static dml_status_t device_get(const char *name, dml_rt_device_t **out) {
  size_t i = 0;
  for (; i < 16 && g_devices[i].d; i++)
    if (!strcmp(g_devices[i].name, name)) {
      *out = g_devices[i].d;
      return DML_OK;
    }
  if (i == 16)
    return dml_status_make(DML_STATUS_RESOURCE_EXHAUSTED, "elixir.tensor",
                           "more than 16 device names used");
  DML_RETURN_IF_ERROR(dml_rt_device_open(name, &g_devices[i].d));
  snprintf(g_devices[i].name, sizeof g_devices[i].name, "%s", name);
  *out = g_devices[i].d;
  return DML_OK;
}

/* A new tensor term owning `h` (on `device`). */
static ERL_NIF_TERM tensor_res_term(ErlNifEnv *env, dml_rt_tensor_t h,
                                    const char *device) {
  tensor_res_t *r = enif_alloc_resource(TENSOR_RT, sizeof *r);
  r->h = h;
  snprintf(r->device, sizeof r->device, "%s", device);
  ERL_NIF_TERM t = enif_make_resource(env, r);
  enif_release_resource(r); /* the term holds it: no destructor runs here */
  return t;
}

/* {dtype, shape, device} of a tensor handle. g_tensor_mu held. */
static dml_status_t tensor_meta(ErlNifEnv *env, const tensor_res_t *r,
                                ERL_NIF_TERM *out) {
  dml_rt_tensor_info_t ti;
  DML_RETURN_IF_ERROR(dml_rt_tensor_info(r->h, &ti));
  *out = enif_make_tuple3(env, str(env, dml_dtype_name(ti.dtype)),
                          shape_term(env, ti.rank, ti.dims), str(env, r->device));
  return DML_OK;
}

/* {:ok, {ref, {dtype, shape, device}}} of a new tensor, or its error. g_tensor_mu held.
 */
static ERL_NIF_TERM tensor_made(ErlNifEnv *env, dml_status_t st, dml_rt_tensor_t h,
                                const char *device) {
  if (st) return status_term(env, st);
  ERL_NIF_TERM ref = tensor_res_term(env, h, device), meta = 0;
  tensor_res_t *r;
  enif_get_resource(env, ref, TENSOR_RT, (void **)&r);
  st = tensor_meta(env, r, &meta);
  return st ? status_term(env, st) : ok2(env, enif_make_tuple2(env, ref, meta));
}

/* The shape tuple `t` into dims / *rank; the reason or NULL. */
static const char *get_shape(ErlNifEnv *env, ERL_NIF_TERM t, int64_t *dims,
                             int32_t *rank) {
  const ERL_NIF_TERM *el;
  int n;
  if (!enif_get_tuple(env, t, &n, &el)) return "shape is not a tuple";
  if (n > DML_MAX_RANK) return "rank above dmlc's maximum";
  for (int i = 0; i < n; i++) {
    ErlNifSInt64 d;
    if (!enif_get_int64(env, el[i], &d)) return "a dim is not an integer";
    dims[i] = d;
  }
  *rank = n;
  return NULL;
}

/* tensor_new(kind, dtype, shape, device, value) -> {:ok, {ref, meta}} | error:
 * kind "zeros" | "ones" | "full" | "empty" on the device. */
static ERL_NIF_TERM nif_tensor_new(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]) {
  (void)argc;
  const char *op = "elixir.tensor";
  char kind[16], dname[16], device[64];
  int64_t dims[DML_MAX_RANK];
  int32_t rank = 0;
  double value = 0;
  const char *why = NULL;
  if (!get_str(env, argv[0], kind, sizeof kind) ||
      !get_str(env, argv[1], dname, sizeof dname) ||
      !get_device(env, argv[3], device, sizeof device) || !get_num(env, argv[4], &value))
    why = "bad kind, dtype, device or value";
  if (!why) why = get_shape(env, argv[2], dims, &rank);
  if (why) return MAKE_ERR(env, INVALID_ARGUMENT, op, "%s", why);
  dml_dtype_t dt = dml_dtype_from_name(dname, strlen(dname));
  if (dt == DML_DTYPE_INVALID)
    return MAKE_ERR(env, INVALID_ARGUMENT, op, "unknown dtype");
  enif_mutex_lock(g_tensor_mu);
  dml_rt_device_t *d = NULL;
  dml_rt_tensor_t h = DML_RT_TENSOR_NONE;
  dml_status_t st = device_get(device, &d);
  if (!st) {
    if (!strcmp(kind, "zeros"))
      st = dml_rt_tensor_zeros(d, dt, rank, dims, &h);
    else if (!strcmp(kind, "ones"))
      st = dml_rt_tensor_ones(d, dt, rank, dims, &h);
    else if (!strcmp(kind, "full"))
      st = dml_rt_tensor_full(d, dt, rank, dims, value, &h);
    else
      st = dml_rt_tensor_empty(d, dt, rank, dims, &h);
  }
  ERL_NIF_TERM out = tensor_made(env, st, h, device);
  enif_mutex_unlock(g_tensor_mu);
  return out;
}

/* tensor_from_binary({dtype, shape, data}, device) -> {:ok, {ref, meta}} | error. */
static ERL_NIF_TERM nif_tensor_from_binary(ErlNifEnv *env, int argc,
                                           const ERL_NIF_TERM argv[]) {
  (void)argc;
  const char *op = "elixir.tensor";
  char device[64];
  dml_tensor_t host;
  const char *why = get_tensor(env, argv[0], &host);
  if (!why && !get_device(env, argv[1], device, sizeof device)) why = "bad device";
  if (why) return MAKE_ERR(env, INVALID_ARGUMENT, op, "%s", why);
  enif_mutex_lock(g_tensor_mu);
  dml_rt_device_t *d = NULL;
  dml_rt_tensor_t h = DML_RT_TENSOR_NONE;
  dml_status_t st = device_get(device, &d);
  if (!st) st = dml_rt_tensor_from_host(d, &host, &h);
  ERL_NIF_TERM out = tensor_made(env, st, h, device);
  enif_mutex_unlock(g_tensor_mu);
  return out;
}

/* The tensor resource of a term, or NULL with *err set. */
static tensor_res_t *get_rt_tensor(ErlNifEnv *env, ERL_NIF_TERM t, const char *op,
                                   ERL_NIF_TERM *err) {
  tensor_res_t *r = NULL;
  if (!enif_get_resource(env, t, TENSOR_RT, (void **)&r))
    *err = MAKE_ERR(env, INVALID_ARGUMENT, op, "not a device tensor");
  return r;
}

/* A tensor's elements as a host tensor term {dtype, shape, data} (a copy
 * from its device, in C order). g_tensor_mu held. */
static dml_status_t rt_tensor_term(ErlNifEnv *env, dml_rt_tensor_t h, const char *op,
                                   ERL_NIF_TERM *out) {
  dml_rt_tensor_info_t ti;
  DML_RETURN_IF_ERROR(dml_rt_tensor_info(h, &ti));
  dml_tensor_t host;
  memset(&host, 0, sizeof host);
  host.dtype = ti.dtype;
  host.rank = ti.rank;
  memcpy(host.dims, ti.dims, sizeof host.dims);
  size_t nb = dml_tensor_bytes(&host);
  if (nb == SIZE_MAX)
    return dml_status_make(DML_STATUS_RESOURCE_EXHAUSTED, op, "tensor too large");
  ERL_NIF_TERM data;
  host.data = enif_make_new_binary(env, nb, &data);
  DML_RETURN_IF_ERROR(dml_rt_tensor_to_host(h, &host));
  *out = enif_make_tuple3(env, str(env, dml_dtype_name(host.dtype)),
                          shape_term(env, host.rank, host.dims), data);
  return DML_OK;
}

/* tensor_to_binary(ref) -> {:ok, {dtype, shape, data}} | error. */
static ERL_NIF_TERM nif_tensor_to_binary(ErlNifEnv *env, int argc,
                                         const ERL_NIF_TERM argv[]) {
  (void)argc;
  ERL_NIF_TERM err = 0, out = 0;
  tensor_res_t *r = get_rt_tensor(env, argv[0], "elixir.to_binary", &err);
  if (!r) return err;
  enif_mutex_lock(g_tensor_mu);
  dml_status_t st = rt_tensor_term(env, r->h, "elixir.to_binary", &out);
  enif_mutex_unlock(g_tensor_mu);
  return st ? status_term(env, st) : ok2(env, out);
}

/* tensor_to_device(ref, device) -> {:ok, {ref, meta}} | error (a contiguous copy). */
static ERL_NIF_TERM nif_tensor_to_device(ErlNifEnv *env, int argc,
                                         const ERL_NIF_TERM argv[]) {
  (void)argc;
  ERL_NIF_TERM err = 0;
  char device[64];
  tensor_res_t *r = get_rt_tensor(env, argv[0], "elixir.to_device", &err);
  if (!r) return err;
  if (!get_device(env, argv[1], device, sizeof device))
    return MAKE_ERR(env, INVALID_ARGUMENT, "elixir.to_device", "bad device");
  enif_mutex_lock(g_tensor_mu);
  dml_rt_device_t *d = NULL;
  dml_rt_tensor_t h = DML_RT_TENSOR_NONE;
  dml_status_t st = device_get(device, &d);
  if (!st) st = dml_rt_tensor_to_device(r->h, d, &h);
  ERL_NIF_TERM out = tensor_made(env, st, h, device);
  enif_mutex_unlock(g_tensor_mu);
  return out;
}

/* tensor_free(ref) -> :ok | error ("use after free" the second time). */
static ERL_NIF_TERM nif_tensor_free(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]) {
  (void)argc;
  ERL_NIF_TERM err = 0;
  tensor_res_t *r = get_rt_tensor(env, argv[0], "elixir.free", &err);
  if (!r) return err;
  enif_mutex_lock(g_tensor_mu);
  dml_status_t st = dml_rt_tensor_free(r->h);
  enif_mutex_unlock(g_tensor_mu);
  return st ? status_term(env, st) : atom(env, "ok");
}

/* The model's session of forward on the eager device `device` (opened by
 * name, device_get), made by dml_rt_session_create_on_device so that its
 * tensors are bound and outputs made there without the host; where that
 * device cannot hold the package (UNIMPLEMENTED: a Vulkan feature it was
 * not opened with) a session of its own device (by name), through which
 * device tensors go through the host. Lock and g_tensor_mu held. */
static dml_status_t model_device_session(model_res_t *r, const char *device,
                                         const char *op, dml_rt_session_t **s,
                                         dml_rt_device_t **d) {
  if (r->trainable)
    return dml_status_detail(
        dml_status_make(DML_STATUS_UNIMPLEMENTED, op,
                        "runs on device tensors take packages without train_step in "
                        "this version"),
        "run/3 with host tensors runs a training package's forward on its trainer's "
        "device");
  DML_RETURN_IF_ERROR(device_get(device, d));
  if (r->dsess && strcmp(r->dsess_device, device) != 0) {
    dml_rt_session_release(r->dsess);
    r->dsess = NULL;
  }
  if (!r->dsess) {
    dml_status_t st =
        dml_rt_session_create_on_device(r->model, *d, NULL, NULL, &r->dsess);
    if (st && dml_status_code(st) == DML_STATUS_UNIMPLEMENTED) {
      dml_status_free(st);
      st = dml_rt_session_create(r->model, device, &r->dsess);
    }
    DML_RETURN_IF_ERROR(st);
    snprintf(r->dsess_device, sizeof r->dsess_device, "%s", device);
  }
  *s = r->dsess;
  return DML_OK;
}

/* run_device(model, device, [{name, tensor}], outputs_on_device) ->
 * {:ok, [{name, tensor}]} | error: one run of forward on the model's
 * session on eager device `device` (model_device_session). An input is a
 * device tensor (its resource: bound by dml_rt_session_set_input_tensor,
 * copied on the device when it is on the session's device) or a host
 * tensor {dtype, shape, data}. With outputs_on_device each output is a new
 * tensor on `device` ({ref, {dtype, shape, device}},
 * dml_rt_session_get_output_tensor: a copy on the device), else a host
 * tensor. */
static ERL_NIF_TERM nif_run_device(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]) {
  (void)argc;
  const char *op = "elixir.run";
  char device[64];
  if (!get_device(env, argv[1], device, sizeof device))
    return MAKE_ERR(env, INVALID_ARGUMENT, op, "device must be a string");
  int on_dev = enif_is_identical(argv[3], atom(env, "true"));
  ERL_NIF_TERM err, out = enif_make_list(env, 0);
  model_res_t *r = model_lock(env, argv[0], op, &err);
  if (!r) return err;
  enif_mutex_lock(g_tensor_mu);
  dml_rt_session_t *s = NULL;
  dml_rt_device_t *d = NULL;
  dml_status_t st = model_device_session(r, device, op, &s, &d);
  if (!st) dml_rt_session_clear_inputs(s);
  ERL_NIF_TERM head, tail = argv[2];
  while (!st && enif_get_list_cell(env, tail, &head, &tail)) {
    const ERL_NIF_TERM *kv;
    int arity;
    char name[256];
    tensor_res_t *tr = NULL;
    if (!enif_get_tuple(env, head, &arity, &kv) || arity != 2 ||
        !get_str(env, kv[0], name, sizeof name)) {
      st = dml_status_make(DML_STATUS_INVALID_ARGUMENT, op,
                           "inputs must be a map of input name => tensor");
    } else if (enif_get_resource(env, kv[1], TENSOR_RT, (void **)&tr)) {
      int32_t idx = dml_rt_session_find_input(s, name);
      st = idx < 0
               ? dml_status_make(DML_STATUS_NOT_FOUND, op, "no input named '%s'", name)
               : dml_rt_session_set_input_tensor(s, (uint32_t)idx, tr->h);
    } else {
      st = bind_host_input(env, s, name, kv[1], op);
    }
  }
  if (!st) st = dml_rt_session_run(s);
  if (!st && on_dev) {
    for (uint32_t i = dml_rt_session_num_outputs(s); i-- > 0 && !st;) {
      dml_rt_io_info_t info;
      dml_rt_tensor_t h = DML_RT_TENSOR_NONE;
      st = dml_rt_session_output_info(s, i, &info);
      if (!st) st = dml_rt_session_get_output_tensor(s, i, d, &h);
      if (st) break;
      ERL_NIF_TERM ref = tensor_res_term(env, h, device), meta = 0;
      tensor_res_t *o;
      enif_get_resource(env, ref, TENSOR_RT, (void **)&o);
      st = tensor_meta(env, o, &meta);
      if (!st)
        out = enif_make_list_cell(
            env,
            enif_make_tuple2(env, str(env, info.name), enif_make_tuple2(env, ref, meta)),
            out);
    }
  } else if (!st) {
    st = outputs_term(env, s, &out);
  }
  enif_mutex_unlock(g_tensor_mu);
  enif_mutex_unlock(r->mu);
  return st ? status_term(env, st) : ok2(env, out);
}

/* transfer_stats(model, device) -> {:ok, %{to_device_bytes: ..., ...}} |
 * error: the bytes and copies of inputs and outputs the model's session on
 * eager device `device` (run_device's) moved since it was made
 * (dml_rt_session_transfer_stats); all 0 before its first run. */
static ERL_NIF_TERM nif_transfer_stats(ErlNifEnv *env, int argc,
                                       const ERL_NIF_TERM argv[]) {
  (void)argc;
  const char *op = "elixir.transfer_stats";
  char device[64];
  if (!get_device(env, argv[1], device, sizeof device))
    return MAKE_ERR(env, INVALID_ARGUMENT, op, "device must be a string");
  ERL_NIF_TERM err;
  model_res_t *r = model_lock(env, argv[0], op, &err);
  if (!r) return err;
  dml_rt_transfer_stats_t ts;
  memset(&ts, 0, sizeof ts);
  enif_mutex_lock(g_tensor_mu);
  if (r->dsess && !strcmp(r->dsess_device, device))
    dml_rt_session_transfer_stats(r->dsess, &ts);
  enif_mutex_unlock(g_tensor_mu);
  enif_mutex_unlock(r->mu);
  static const char *const keys[6] = {"to_device_bytes", "to_device_count",
                                      "to_host_bytes",   "to_host_count",
                                      "on_device_bytes", "on_device_count"};
  const uint64_t vals[6] = {ts.to_device_bytes, ts.to_device_count, ts.to_host_bytes,
                            ts.to_host_count,   ts.on_device_bytes, ts.on_device_count};
  ERL_NIF_TERM k[6], v[6], map;
  for (int i = 0; i < 6; i++)
    k[i] = atom(env, keys[i]), v[i] = enif_make_uint64(env, (ErlNifUInt64)vals[i]);
  enif_make_map_from_arrays(env, k, v, 6, &map);
  return ok2(env, map);
}

/* device_memory(device) -> {:ok, {bytes, storages}} | error (dml_rt_device_bytes). */
static ERL_NIF_TERM nif_device_memory(ErlNifEnv *env, int argc,
                                      const ERL_NIF_TERM argv[]) {
  (void)argc;
  char device[64];
  if (!get_device(env, argv[0], device, sizeof device))
    return MAKE_ERR(env, INVALID_ARGUMENT, "elixir.device_memory", "bad device");
  enif_mutex_lock(g_tensor_mu);
  dml_rt_device_t *d = NULL;
  dml_status_t st = device_get(device, &d);
  ERL_NIF_TERM out = 0;
  if (!st)
    out = enif_make_tuple2(env, enif_make_uint64(env, dml_rt_device_bytes(d)),
                           enif_make_uint64(env, dml_rt_device_num_storages(d)));
  enif_mutex_unlock(g_tensor_mu);
  return st ? status_term(env, st) : ok2(env, out);
}

/* An op's attributes ([{name, int | float | binary | [number]}]) decoded
 * into `a` (names and arrays held by `store` for the call). */
typedef struct attr_store {
  dml_attr_t attrs[16];
  char names[16][64];
  int64_t ints[16][DML_MAX_RANK * 2];
  double floats[16][DML_MAX_RANK * 2];
  char strs[16][64];
  unsigned n;
} attr_store_t;

static dml_status_t get_attrs(ErlNifEnv *env, ERL_NIF_TERM list, const char *op,
                              attr_store_t *as) {
  ERL_NIF_TERM head, tail = list;
  as->n = 0;
  while (enif_get_list_cell(env, tail, &head, &tail)) {
    const ERL_NIF_TERM *kv;
    int arity;
    unsigned j = as->n, len;
    if (j == 16 || !enif_get_tuple(env, head, &arity, &kv) || arity != 2 ||
        !get_str(env, kv[0], as->names[j], sizeof as->names[0]))
      return dml_status_make(DML_STATUS_INVALID_ARGUMENT, op,
                             "attributes are [{name, value}] (at most 16)");
    dml_attr_t *a = &as->attrs[j];
    memset(a, 0, sizeof *a);
    a->name = as->names[j];
    ErlNifSInt64 iv;
    double dv;
    if (enif_get_int64(env, kv[1], &iv)) {
      a->kind = DML_ATTR_INT;
      a->i = iv;
    } else if (enif_get_double(env, kv[1], &dv)) {
      a->kind = DML_ATTR_FLOAT;
      a->f = dv;
    } else if (get_str(env, kv[1], as->strs[j], sizeof as->strs[0])) {
      a->kind = DML_ATTR_STRING;
      a->s = as->strs[j];
    } else if (enif_get_list_length(env, kv[1], &len) && len <= DML_MAX_RANK * 2) {
      ERL_NIF_TERM h, t = kv[1];
      unsigned k = 0;
      int all_int = 1;
      while (enif_get_list_cell(env, t, &h, &t)) {
        if (enif_get_int64(env, h, &iv)) {
          as->ints[j][k] = iv;
          as->floats[j][k] = (double)iv;
        } else if (enif_get_double(env, h, &dv)) {
          all_int = 0;
          as->floats[j][k] = dv;
        } else {
          return dml_status_make(DML_STATUS_INVALID_ARGUMENT, op,
                                 "attribute %s: a list of numbers", a->name);
        }
        k++;
      }
      a->kind = all_int ? DML_ATTR_INTS : DML_ATTR_FLOATS;
      a->n = k;
      a->ints = as->ints[j];
      a->floats = as->floats[j];
    } else {
      return dml_status_make(DML_STATUS_INVALID_ARGUMENT, op,
                             "attribute %s: an integer, a float, a string or a list of "
                             "numbers",
                             a->name);
    }
    as->n++;
  }
  return DML_OK;
}

/* eager_op(op, [ref | {dtype, shape, data} | nil], attrs, n_outputs) ->
 * {:ok, [{ref, meta}]} | {:ok, [{dtype, shape, data}]} | error: one op with
 * the runtime's kernels (dml_rt_tensor_op) on the device of the first
 * device tensor (ref), the host tensors copied there; with no ref among
 * the inputs, on the CPU, and the outputs come back as host tensors
 * (binaries) instead of refs. */
static ERL_NIF_TERM nif_eager_op(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]) {
  (void)argc;
  const char *op = "elixir.tensor";
  char opname[64], device[64] = "cpu";
  unsigned n_out, n_in = 0;
  if (!get_str(env, argv[0], opname, sizeof opname) ||
      !enif_get_uint(env, argv[3], &n_out) || n_out < 1 || n_out > 16)
    return MAKE_ERR(env, INVALID_ARGUMENT, op, "bad op name or output count");
  dml_tensor_t host[16];
  tensor_res_t *ref[16];
  int has_ref = 0;
  ERL_NIF_TERM head, tail = argv[1];
  while (enif_get_list_cell(env, tail, &head, &tail)) {
    if (n_in == 16) return MAKE_ERR(env, INVALID_ARGUMENT, op, "more than 16 inputs");
    ref[n_in] = NULL;
    host[n_in].rank = -1; /* absent */
    if (enif_get_resource(env, head, TENSOR_RT, (void **)&ref[n_in])) {
      if (!has_ref++) snprintf(device, sizeof device, "%s", ref[n_in]->device);
    } else if (!enif_is_identical(head, atom(env, "nil"))) {
      const char *why = get_tensor(env, head, &host[n_in]);
      if (why)
        return MAKE_ERR(env, INVALID_ARGUMENT, op, "%s input %u: %s", opname, n_in, why);
    }
    n_in++;
  }
  attr_store_t as;
  dml_status_t st = get_attrs(env, argv[2], op, &as);
  if (st) return status_term(env, st);
  dml_rt_tensor_t in[16], out[16], tmp[16];
  memset(in, 0, sizeof in);
  memset(out, 0, sizeof out);
  memset(tmp, 0, sizeof tmp);
  enif_mutex_lock(g_tensor_mu);
  dml_rt_device_t *d = NULL;
  st = device_get(device, &d);
  for (unsigned i = 0; !st && i < n_in; i++) {
    if (ref[i])
      in[i] = ref[i]->h;
    else if (host[i].rank >= 0)
      st = dml_rt_tensor_from_host(d, &host[i], &tmp[i]), in[i] = tmp[i];
  }
  if (!st) st = dml_rt_tensor_op(opname, in, n_in, as.attrs, as.n, out, n_out);
  for (unsigned i = 0; i < n_in; i++) dml_status_free(dml_rt_tensor_free(tmp[i]));
  ERL_NIF_TERM l = enif_make_list(env, 0);
  for (unsigned i = n_out; !st && i-- > 0;) {
    ERL_NIF_TERM t = 0;
    if (has_ref) {
      ERL_NIF_TERM rt = tensor_res_term(env, out[i], device), meta = 0;
      out[i] = DML_RT_TENSOR_NONE; /* owned by its term now */
      tensor_res_t *r = NULL;
      enif_get_resource(env, rt, TENSOR_RT, (void **)&r);
      st = tensor_meta(env, r, &meta);
      t = enif_make_tuple2(env, rt, meta);
    } else {
      st = rt_tensor_term(env, out[i], op, &t);
    }
    if (!st) l = enif_make_list_cell(env, t, l);
  }
  for (unsigned i = 0; i < n_out; i++)
    if (out[i].id) dml_status_free(dml_rt_tensor_free(out[i]));
  enif_mutex_unlock(g_tensor_mu);
  return st ? status_term(env, st) : ok2(env, l);
}

/* npy_read(path) -> {:ok, tensor} | error (dml_npy_read_file). */
static ERL_NIF_TERM nif_npy_read(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]) {
  (void)argc;
  char path[4096];
  if (!get_str(env, argv[0], path, sizeof path))
    return MAKE_ERR(env, INVALID_ARGUMENT, "elixir.npy", "path must be a string");
  dml_tensor_t t;
  void *buf = NULL;
  dml_status_t st = dml_npy_read_file(path, &t, &buf);
  if (st) return status_term(env, st);
  ERL_NIF_TERM out = tensor_term(env, &t);
  free(buf);
  return ok2(env, out);
}

/* npy_write(path, tensor) -> :ok | error (dml_npy_write_file: atomic). */
static ERL_NIF_TERM nif_npy_write(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]) {
  (void)argc;
  char path[4096];
  dml_tensor_t t;
  const char *why;
  if (!get_str(env, argv[0], path, sizeof path))
    return MAKE_ERR(env, INVALID_ARGUMENT, "elixir.npy", "path must be a string");
  if ((why = get_tensor(env, argv[1], &t)))
    return MAKE_ERR(env, INVALID_ARGUMENT, "elixir.npy", "%s", why);
  dml_status_t st = dml_npy_write_file(path, &t);
  return st ? status_term(env, st) : atom(env, "ok");
}

/* dtype_onnx_code(name) -> int: ONNX's TensorProto.DataType code of a dmlc
 * dtype (dml_dtype_onnx_code), as Cast's `to` takes it; 0 if unknown. */
static ERL_NIF_TERM nif_dtype_onnx_code(ErlNifEnv *env, int argc,
                                        const ERL_NIF_TERM argv[]) {
  (void)argc;
  char name[16];
  if (!get_str(env, argv[0], name, sizeof name)) return enif_make_badarg(env);
  return enif_make_int(env, dml_dtype_onnx_code(dml_dtype_from_name(name, strlen(name))));
}

#define DIRTY ERL_NIF_DIRTY_JOB_CPU_BOUND
static ErlNifFunc funcs[] = {
    {"available_targets", 0, nif_available_targets, 0},
    {"gpu_devices", 1, nif_gpu_devices, DIRTY},
    {"compile_onnx", 4, nif_compile_onnx, DIRTY},
    {"load_bytes", 1, nif_load_bytes, DIRTY},
    {"model_free", 1, nif_model_free, DIRTY},
    {"save", 2, nif_save, DIRTY},
    {"info", 1, nif_info, DIRTY},
    {"run", 3, nif_run, DIRTY},
    {"run_device", 4, nif_run_device, DIRTY},
    {"transfer_stats", 2, nif_transfer_stats, 0},
    {"predict", 4, nif_predict, DIRTY},
    {"benchmark", 5, nif_benchmark, DIRTY},
    {"check", 4, nif_check, DIRTY},
    {"fit_control", 0, nif_fit_control, 0},
    {"fit_ack", 3, nif_fit_ack, 0},
    {"fit", 8, nif_fit, DIRTY},
    {"evaluate", 5, nif_evaluate, DIRTY},
    {"checkpoint", 5, nif_checkpoint, DIRTY},
    {"serve_start", 5, nif_serve_start, DIRTY},
    {"serve_submit", 4, nif_serve_submit, 0},
    {"serve_stats", 1, nif_serve_stats, 0},
    {"serve_stop", 1, nif_serve_stop, DIRTY},
    {"eager_op", 4, nif_eager_op, DIRTY},
    {"tensor_new", 5, nif_tensor_new, DIRTY},
    {"tensor_from_binary", 2, nif_tensor_from_binary, DIRTY},
    {"tensor_to_binary", 1, nif_tensor_to_binary, DIRTY},
    {"tensor_to_device", 2, nif_tensor_to_device, DIRTY},
    {"tensor_free", 1, nif_tensor_free, DIRTY},
    {"device_memory", 1, nif_device_memory, 0},
    {"npy_read", 1, nif_npy_read, DIRTY},
    {"npy_write", 2, nif_npy_write, DIRTY},
    {"dtype_onnx_code", 1, nif_dtype_onnx_code, 0},
};

ERL_NIF_INIT(Elixir.Dmlc.NIF, funcs, load, NULL, NULL, NULL)
