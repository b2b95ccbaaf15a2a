/* Tests for the runtime: a hand-built, hand-planned IR module is emitted
 * with dml_package_emit, loaded, introspected and run on the CPU at several
 * batch sizes; its errors are checked; corrupt packages never crash. */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dml_ir.h"
#include "dml_npy.h"
#include "dml_package_emit.h"
#include "dml_pkg.h"
#include "dml_rt.h"
#include "dml_test.h"

#define IN 4
#define OUT 3
#define BOUND 64

static float g_w[IN * OUT], g_b[OUT];

static dml_type_t sym_type(int32_t sym, int64_t cols) {
  dml_type_t t;
  memset(&t, 0, sizeof t);
  t.dtype = DML_DTYPE_F32;
  t.rank = 2;
  t.dims[0].value = 1;
  t.dims[0].sym = sym;
  t.dims[1].value = cols;
  t.dims[1].sym = -1;
  return t;
}

/* forward(x: f32[batch,4]) -> logits: Relu(Gemm(x, W, b)), planned by hand:
 * x at 0 (1024 bytes), y at 1024 (768), logits at 1792 (768). */
static dml_ir_module_t *build_module(void) {
  dml_ir_module_t *m = NULL;
  CHECK_OK(dml_ir_module_create(&m));
  if (!m) return NULL;
  for (int i = 0; i < IN * OUT; i++) g_w[i] = (float)(i % 5) * 0.25f - 0.6f;
  for (int i = 0; i < OUT; i++) g_b[i] = 0.1f * (float)(i + 1);
  int32_t batch = -1;
  CHECK_OK(dml_ir_module_add_symbol(m, "batch", BOUND, &batch));
  int64_t wd[2] = {IN, OUT}, bd[1] = {OUT};
  dml_type_t wt = dml_type_static(DML_DTYPE_F32, 2, wd),
             bt = dml_type_static(DML_DTYPE_F32, 1, bd);
  dml_ir_value_t *W = NULL, *B = NULL, *x = NULL;
  CHECK_OK(dml_ir_module_add_global(m, "fc.weight", &wt, g_w, sizeof g_w,
                                    DML_IR_GLOBAL_PARAM, &W));
  CHECK_OK(dml_ir_module_add_global(m, "fc.bias", &bt, g_b, sizeof g_b,
                                    DML_IR_GLOBAL_PARAM, &B));
  dml_ir_function_t *f = NULL;
  CHECK_OK(dml_ir_function_create(m, "forward", &f));
  dml_type_t xt = sym_type(batch, IN);
  CHECK_OK(dml_ir_function_add_arg(f, "x", &xt, &x));
  dml_ir_value_t *gin[3] = {x, W, B};
  dml_ir_node_t *gemm = NULL, *relu = NULL;
  CHECK_OK(dml_ir_node_create(f, DML_OP_GEMM, "fc", 3, gin, 1, NULL, &gemm));
  CHECK_OK(dml_ir_node_set_attr_float(gemm, "alpha", 1.0));
  CHECK_OK(dml_ir_node_set_attr_int(gemm, "transB", 0));
  if (!gemm) return m;
  dml_ir_value_t *y = gemm->outputs[0];
  CHECK_OK(dml_ir_node_create(f, DML_OP_RELU, "act", 1, &y, 1, NULL, &relu));
  if (!relu) return m;
  dml_ir_value_t *z = relu->outputs[0];
  z->name = dml_ir_strdup(m, "logits");
  CHECK_OK(dml_ir_function_set_results(f, 1, &z));
  y->type = sym_type(batch, OUT);
  z->type = sym_type(batch, OUT);
  x->mem_offset = 0, x->mem_bytes = BOUND * IN * 4;
  y->mem_offset = 1024, y->mem_bytes = BOUND * OUT * 4;
  z->mem_offset = 1792, z->mem_bytes = BOUND * OUT * 4;
  f->arena_bytes = 2560;
  return m;
}

static const dml_package_emit_options_t k_opts = {
    .source_name = "tiny.onnx",
    .targets = "cpu",
    .batch_bound = BOUND,
    .command_line = "dmlc compile tiny.onnx -o tiny.dmlpkg"};

static void *emit_tiny(size_t *out_size) {
  dml_ir_module_t *m = build_module();
  void *bytes = NULL;
  CHECK_OK(dml_package_emit_memory(m, &k_opts, &bytes, out_size));
  dml_ir_module_release(m);
  return bytes;
}

static void naive(const float *x, int64_t batch, float *out) {
  for (int64_t r = 0; r < batch; r++)
    for (int c = 0; c < OUT; c++) {
      double acc = g_b[c];
      for (int k = 0; k < IN; k++) acc += (double)x[r * IN + k] * g_w[k * OUT + c];
      out[r * OUT + c] = acc > 0 ? (float)acc : 0.0f;
    }
}

static void run_batch(dml_rt_session_t *s, int64_t batch) {
  float x[BOUND * IN], want[BOUND * OUT];
  for (int64_t i = 0; i < batch * IN; i++) x[i] = (float)((i * 7) % 11) * 0.3f - 1.2f;
  naive(x, batch, want);
  dml_tensor_t t = {DML_DTYPE_F32, 2, {batch, IN}, x};
  CHECK_OK(dml_rt_session_set_input(s, 0, &t));
  CHECK_OK(dml_rt_session_run(s));
  dml_tensor_t y;
  memset(&y, 0, sizeof y);
  CHECK_OK(dml_rt_session_get_output(s, 0, &y));
  CHECK(y.dtype == DML_DTYPE_F32 && y.rank == 2 && y.dims[0] == batch &&
        y.dims[1] == OUT);
  if (y.data)
    for (int64_t i = 0; i < batch * OUT; i++)
      CHECK_NEAR(((float *)y.data)[i], want[i], 1e-5);
}

static void test_emit_load_run(void) {
  size_t size = 0;
  void *bytes = emit_tiny(&size);
  if (!bytes) return;
  dml_rt_model_t *model = NULL;
  CHECK_OK(dml_rt_model_load_memory(bytes, size, &model));
  free(bytes);
  if (!model) return;
  dml_rt_session_t *s = NULL;
  CHECK_OK(dml_rt_session_create(model, "cpu", &s));
  if (s) {
    run_batch(s, 1);
    run_batch(s, 3);
    run_batch(s, BOUND);
    CHECK(dml_rt_session_symbol_value(s, 0) == BOUND);
    dml_rt_session_release(s);
  }
  CHECK_OK(dml_rt_session_create(model, NULL, &s));
  if (s) {
    run_batch(s, 2);
    dml_rt_session_release(s);
  }
  dml_rt_model_release(model);
}

/* dml_rt_session_set_profiling / dml_rt_session_node_time: each node's
 * span in the last run, in execution order, only while profiling is on. */
static void test_profiling(void) {
  size_t size = 0;
  void *bytes = emit_tiny(&size);
  dml_rt_model_t *m = NULL;
  CHECK_OK(dml_rt_model_load_memory(bytes, size, &m));
  free(bytes);
  dml_rt_session_t *s = NULL;
  if (m) CHECK_OK(dml_rt_session_create(m, "cpu", &s));
  if (!s) {
    dml_rt_model_release(m);
    return;
  }
  uint64_t a = 0, b = 0;
  run_batch(s, 2);
  CHECK_ERROR(dml_rt_session_node_time(s, 0, &a, &b), DML_STATUS_FAILED_PRECONDITION,
              "no run with profiling on");
  CHECK_OK(dml_rt_session_set_profiling(s, 1));
  CHECK_ERROR(dml_rt_session_node_time(s, 0, &a, &b), DML_STATUS_FAILED_PRECONDITION,
              "no run with profiling on");
  run_batch(s, 5);
  uint32_t nn = dml_rt_model_num_nodes(m), timed = 0;
  uint64_t prev_start = 0, prev_end = 0;
  for (uint32_t k = 0; k < nn; k++) {
    CHECK_OK(dml_rt_session_node_time(s, k, &a, &b));
    if (!a) continue; /* a view planned in place: no kernel */
    if (a == prev_start && b == prev_end) continue; /* fused into the kernel before */
    CHECK(a <= b && a >= prev_end);
    prev_start = a, prev_end = b;
    timed++;
  }
  CHECK(timed > 0);
  CHECK_ERROR(dml_rt_session_node_time(s, nn, &a, &b), DML_STATUS_OUT_OF_RANGE, "node");
  CHECK_OK(dml_rt_session_set_profiling(s, 0));
  run_batch(s, 1);
  CHECK_ERROR(dml_rt_session_node_time(s, 0, &a, &b), DML_STATUS_FAILED_PRECONDITION,
              "profiling");
  dml_rt_session_release(s);
  dml_rt_model_release(m);
}

/* One model shared by several threads, each with its own session. */
typedef struct worker {
  const dml_rt_model_t *model;
  int64_t batch;
  int failures;
} worker_t;

static void *worker_main(void *arg) {
  worker_t *w = (worker_t *)arg;
  dml_rt_session_t *s = NULL;
  dml_status_t st = dml_rt_session_create(w->model, "cpu", &s);
  if (st) {
    dml_status_free(st);
    w->failures = 1;
    return NULL;
  }
  float x[BOUND * IN], want[BOUND * OUT];
  for (int rep = 0; rep < 50; rep++) {
    int64_t b = (w->batch + rep) % BOUND + 1;
    for (int64_t i = 0; i < b * IN; i++) x[i] = (float)((i * 5 + b) % 13) * 0.2f - 1.1f;
    naive(x, b, want);
    dml_tensor_t t = {DML_DTYPE_F32, 2, {b, IN}, x}, y;
    st = dml_rt_session_set_input(s, 0, &t);
    if (!st) st = dml_rt_session_run(s);
    if (!st) st = dml_rt_session_get_output(s, 0, &y);
    if (st) {
      dml_status_free(st);
      w->failures++;
      continue;
    }
    for (int64_t i = 0; i < b * OUT; i++)
      if (!(fabsf(((float *)y.data)[i] - want[i]) <= 1e-5f)) w->failures++;
  }
  dml_rt_session_release(s);
  return NULL;
}

static void test_threads(void) {
  size_t size = 0;
  void *bytes = emit_tiny(&size);
  dml_rt_model_t *m = NULL;
  CHECK_OK(dml_rt_model_load_memory(bytes, size, &m));
  free(bytes);
  if (!m) return;
  pthread_t th[4];
  worker_t w[4];
  for (int i = 0; i < 4; i++) {
    w[i] = (worker_t){m, 7 * i, 0};
    CHECK(pthread_create(&th[i], NULL, worker_main, &w[i]) == 0);
  }
  for (int i = 0; i < 4; i++) {
    pthread_join(th[i], NULL);
    CHECK(w[i].failures == 0);
  }
  dml_rt_model_release(m);
}

static void test_introspection(void) {
  size_t size = 0;
  void *bytes = emit_tiny(&size);
  dml_rt_model_t *m = NULL;
  CHECK_OK(dml_rt_model_load_memory(bytes, size, &m));
  free(bytes);
  if (!m) return;
  CHECK(dml_rt_model_num_inputs(m) == 1 && dml_rt_model_num_outputs(m) == 1);
  dml_rt_io_info_t io;
  CHECK_OK(dml_rt_model_input_info(m, 0, &io));
  CHECK(strcmp(io.name, "x") == 0 && io.dtype == DML_DTYPE_F32 && io.rank == 2);
  CHECK(io.dims[0] == -1 && strcmp(io.dim_symbol[0], "batch") == 0 &&
        io.dim_bound[0] == BOUND && io.dim_multiplier[0] == 1);
  CHECK(io.dims[1] == IN && io.dim_symbol[1] == NULL && io.dim_bound[1] == IN);
  char tb[64];
  CHECK(strcmp(dml_rt_io_info_str(&io, tb, sizeof tb), "f32[batch,4]") == 0);
  io.dim_multiplier[0] = 16;
  CHECK(strcmp(dml_rt_io_info_str(&io, tb, sizeof tb), "f32[16*batch,4]") == 0);
  CHECK(strcmp(dml_rt_io_info_str(&io, tb, 8), "f32[16*") == 0);
  CHECK_OK(dml_rt_model_output_info(m, 0, &io));
  CHECK(strcmp(io.name, "logits") == 0 && io.dims[1] == OUT);
  CHECK_ERROR(dml_rt_model_output_info(m, 1, &io), DML_STATUS_OUT_OF_RANGE,
              "output index 1");
  CHECK(dml_rt_model_find_input(m, "x") == 0 && dml_rt_model_find_input(m, "y") == -1);
  CHECK(dml_rt_model_find_output(m, "logits") == 0);
  CHECK(dml_rt_model_arena_bytes(m) == 2560);
  CHECK(dml_rt_model_scratch_bytes(m) >= 0);
  CHECK(dml_rt_model_format_version(m) == DML_PKG_FORMAT_VERSION &&
        dml_rt_model_file_size(m) == size);
  CHECK(dml_rt_model_num_sections(m) == 3);
  dml_rt_section_info_t sec;
  CHECK_OK(dml_rt_model_section_info(m, 2, &sec));
  CHECK(strcmp(sec.tag, "weights") == 0 && sec.offset % 4096 == 0 && sec.size == 64 + 12);
  char buf[128];
  CHECK(dml_rt_model_meta_get(m, "source", buf, sizeof buf) &&
        strcmp(buf, "tiny.onnx") == 0);
  CHECK(dml_rt_model_meta_get(m, "producer", buf, sizeof buf) &&
        strcmp(buf, "dmlc 0.1.0") == 0);
  CHECK(dml_rt_model_meta_get(m, "batch-bound", buf, sizeof buf) &&
        strcmp(buf, "64") == 0);
  CHECK(dml_rt_model_meta_get(m, "symbols", buf, sizeof buf) &&
        strcmp(buf, "batch<=64") == 0);
  CHECK(!dml_rt_model_meta_get(m, "nope", buf, sizeof buf) && buf[0] == 0);
  CHECK(strstr(dml_rt_model_meta(m), "created-by: dmlc compile tiny.onnx") != NULL);
  const char *sn;
  int64_t bound;
  CHECK_OK(dml_rt_model_symbol(m, 0, &sn, &bound));
  CHECK(strcmp(sn, "batch") == 0 && bound == BOUND);
  CHECK(dml_rt_model_num_functions(m) == 1 &&
        strcmp(dml_rt_model_function_name(m, 0), "forward") == 0);
  CHECK(dml_rt_model_num_nodes(m) == 2);
  dml_rt_node_info_t ni;
  CHECK_OK(dml_rt_model_node_info(m, 0, &ni));
  CHECK(strcmp(ni.name, "fc") == 0 && strcmp(ni.op_name, "Gemm") == 0 &&
        ni.n_inputs == 3 && ni.n_outputs == 1 && ni.n_attrs == 2);
  dml_rt_value_info_t vi;
  CHECK_OK(dml_rt_model_node_input(m, 0, 1, &vi));
  CHECK(vi.present && vi.storage == DML_RT_STORAGE_CONST &&
        (vi.flags & DML_RT_VALUE_PARAM) && vi.numel_bound == IN * OUT &&
        strcmp(vi.type.name, "fc.weight") == 0);
  CHECK_OK(dml_rt_model_node_output(m, 1, 0, &vi));
  CHECK(vi.storage == DML_RT_STORAGE_ARENA && vi.numel_bound == BOUND * OUT &&
        vi.offset == 1792 && strcmp(vi.type.dim_symbol[0], "batch") == 0);
  const dml_attr_t *a = dml_rt_model_node_attr(m, 0, 1);
  CHECK(a && strcmp(a->name, "transB") == 0 && a->kind == DML_ATTR_INT);
  CHECK(dml_rt_model_node_attr(m, 0, 2) == NULL);
  CHECK(dml_rt_model_param_count(m) == IN * OUT + OUT &&
        dml_rt_model_const_count(m) == 0);
  CHECK(dml_rt_model_weights_bytes(m) == (IN * OUT + OUT) * 4);
  dml_rt_model_release(m);
}

static void test_session_errors(void) {
  size_t size = 0;
  void *bytes = emit_tiny(&size);
  dml_rt_model_t *m = NULL;
  CHECK_OK(dml_rt_model_load_memory(bytes, size, &m));
  free(bytes);
  if (!m) return;
  dml_rt_session_t *s = NULL;
  CHECK_ERROR(dml_rt_session_create(m, "tpu", &s), DML_STATUS_UNIMPLEMENTED,
              "device 'tpu' is not available: no such device");
  /* A package compiled for the cpu only has no Vulkan kernels: said before
   * any driver is opened (a build without the Vulkan backend says so). */
  uint32_t nd = 0;
  dml_status_t vs = dml_rt_vulkan_devices(NULL, 0, &nd);
  if (vs && dml_status_code(vs) == DML_STATUS_UNIMPLEMENTED)
    CHECK_ERROR(dml_rt_session_create(m, "vulkan", &s), DML_STATUS_UNIMPLEMENTED,
                "device 'vulkan' is not available in this build");
  else
    CHECK_ERROR(dml_rt_session_create(m, "vulkan", &s), DML_STATUS_FAILED_PRECONDITION,
                "compile it with dmlc compile --target vulkan");
  dml_status_free(vs);
  CHECK_OK(dml_rt_session_create(m, "cpu", &s));
  if (!s) {
    dml_rt_model_release(m);
    return;
  }
  CHECK_ERROR(dml_rt_session_run(s), DML_STATUS_FAILED_PRECONDITION,
              "input 'x' is not set");
  dml_tensor_t out;
  CHECK_ERROR(dml_rt_session_get_output(s, 0, &out), DML_STATUS_FAILED_PRECONDITION,
              "has not completed");
  static float x[(BOUND + 1) * IN];
  dml_tensor_t t = {DML_DTYPE_F32, 2, {BOUND + 1, IN}, x};
  CHECK_ERROR(
      dml_rt_session_set_input(s, 0, &t), DML_STATUS_OUT_OF_RANGE,
      "input 'x': batch 65 exceeds the compiled bound 64; recompile with --batch-bound");
  t.dims[0] = 0;
  CHECK_ERROR(dml_rt_session_set_input(s, 0, &t), DML_STATUS_INVALID_ARGUMENT, "below 1");
  t.dims[0] = 2;
  t.dims[1] = 5;
  CHECK_ERROR(dml_rt_session_set_input(s, 0, &t), DML_STATUS_INVALID_ARGUMENT,
              "input 'x': shape [2,5], expected f32[batch,4]");
  t.dims[1] = IN;
  t.dtype = DML_DTYPE_F64;
  CHECK_ERROR(dml_rt_session_set_input(s, 0, &t), DML_STATUS_INVALID_ARGUMENT,
              "dtype f64, expected f32[batch,4]");
  t.dtype = DML_DTYPE_F32;
  t.rank = 3;
  CHECK_ERROR(dml_rt_session_set_input(s, 0, &t), DML_STATUS_INVALID_ARGUMENT, "rank 3");
  t.rank = 2;
  CHECK_ERROR(dml_rt_session_set_input(s, 1, &t), DML_STATUS_OUT_OF_RANGE,
              "input index 1");
  CHECK_ERROR(dml_rt_session_set_input_by_name(s, "img", &t), DML_STATUS_NOT_FOUND,
              "no input named 'img' (inputs: 'x')");
  CHECK_OK(dml_rt_session_set_input_by_name(s, "x", &t));
  CHECK(dml_rt_session_symbol_value(s, 0) == 2);
  dml_rt_session_clear_inputs(s);
  CHECK(dml_rt_session_symbol_value(s, 0) == -1);
  CHECK_ERROR(dml_rt_session_run(s), DML_STATUS_FAILED_PRECONDITION,
              "input 'x' is not set");
  dml_rt_session_release(s);
  dml_rt_model_release(m);
}

static void test_emit_errors(void) {
  dml_ir_module_t *m = build_module();
  if (!m) return;
  void *bytes = NULL;
  size_t size;
  dml_ir_function_t *f = m->functions[0];
  f->last->outputs[0]->mem_offset = -1;
  CHECK_ERROR(dml_package_emit_memory(m, NULL, &bytes, &size),
              DML_STATUS_FAILED_PRECONDITION,
              "value 'logits' (f32[batch,3]) has no memory plan; run the mem-plan pass");
  f->last->outputs[0]->mem_offset = 1024; /* overlaps its input y */
  CHECK_ERROR(dml_package_emit_memory(m, NULL, &bytes, &size), DML_STATUS_DATA_LOSS,
              "output 'logits' overlaps input");
  f->last->outputs[0]->mem_offset = 1792;
  f->last->outputs[0]->type.rank = DML_RANK_UNKNOWN;
  CHECK_ERROR(dml_package_emit_memory(m, NULL, &bytes, &size),
              DML_STATUS_FAILED_PRECONDITION, "unknown type");
  f->last->outputs[0]->type.rank = 2;
  f->arena_bytes = -1;
  CHECK_ERROR(dml_package_emit_memory(m, NULL, &bytes, &size),
              DML_STATUS_FAILED_PRECONDITION, "function 'forward' has no memory plan");
  f->arena_bytes = 2560;
  CHECK_ERROR(dml_package_emit(m, NULL, "/nonexistent-dir/m.dmlpkg"),
              DML_STATUS_NOT_FOUND, "/nonexistent-dir/m.dmlpkg");
  /* Unnamed inputs and outputs get names. */
  f->last->outputs[0]->name = NULL;
  f->args[0]->name = NULL;
  CHECK_OK(dml_package_emit_memory(m, NULL, &bytes, &size));
  dml_rt_model_t *model = NULL;
  if (bytes) CHECK_OK(dml_rt_model_load_memory(bytes, size, &model));
  if (model) {
    CHECK(dml_rt_model_find_output(model, "output0") == 0);
    CHECK(dml_rt_model_find_input(model, "input0") == 0);
    char buf[64];
    CHECK(dml_rt_model_meta_get(model, "targets", buf, sizeof buf) &&
          !strcmp(buf, "cpu"));
    CHECK(!dml_rt_model_meta_get(model, "source", buf, sizeof buf));
  }
  dml_rt_model_release(model);
  free(bytes);
  dml_ir_module_release(m);
}

/* A function may return one value several times (autodiff gives both
 * operands of Add(x, x) one gradient): every repeat is an output of its
 * own, with a distinct name and the same contents, whether the value is a
 * node result (logits), an argument (x) or a constant (fc.bias). */
static void test_repeated_outputs(void) {
  dml_ir_module_t *m = build_module();
  if (!m) return;
  dml_ir_function_t *f = m->functions[0];
  dml_ir_value_t *z = f->results[0], *x = f->args[0], *b = f->first->inputs[2];
  dml_ir_value_t *res[6] = {z, x, z, b, x, b};
  CHECK_OK(dml_ir_function_set_results(f, 6, res));
  void *bytes = NULL;
  size_t size = 0;
  CHECK_OK(dml_package_emit_memory(m, &k_opts, &bytes, &size));
  dml_ir_module_release(m);
  dml_rt_model_t *model = NULL;
  if (bytes) CHECK_OK(dml_rt_model_load_memory(bytes, size, &model));
  free(bytes);
  if (!model) return;
  static const char *const names[6] = {"logits",  "x",   "logits.2",
                                       "fc.bias", "x.4", "fc.bias.5"};
  for (int i = 0; i < 6; i++) CHECK(dml_rt_model_find_output(model, names[i]) == i);
  dml_rt_session_t *s = NULL;
  CHECK_OK(dml_rt_session_create(model, "cpu", &s));
  for (int64_t batch = 1; s && batch <= BOUND; batch += BOUND - 1) {
    float xv[BOUND * IN], want[BOUND * OUT];
    for (int64_t i = 0; i < batch * IN; i++) xv[i] = (float)((i * 3) % 7) * 0.4f - 1.0f;
    naive(xv, batch, want);
    dml_tensor_t t = {DML_DTYPE_F32, 2, {batch, IN}, xv};
    CHECK_OK(dml_rt_session_set_input(s, 0, &t));
    CHECK_OK(dml_rt_session_run(s));
    dml_tensor_t o[6];
    memset(o, 0, sizeof o);
    for (uint32_t i = 0; i < 6; i++) CHECK_OK(dml_rt_session_get_output(s, i, &o[i]));
    int64_t n[3] = {batch * OUT, batch * IN, OUT};
    const float *ref[3] = {want, xv, g_b};
    for (int i = 0; i < 6; i++) {
      int k = res[i] == z ? 0 : res[i] == x ? 1 : 2;
      CHECK(o[i].dtype == DML_DTYPE_F32 && dml_dims_numel(o[i].dims, o[i].rank) == n[k]);
      if (!o[i].data || dml_dims_numel(o[i].dims, o[i].rank) != n[k]) continue;
      for (int64_t e = 0; e < n[k]; e++)
        CHECK_NEAR(((const float *)o[i].data)[e], ref[k][e], 1e-5);
    }
    CHECK(o[0].rank == 2 && o[2].rank == 2 && o[2].dims[0] == batch);
  }
  dml_rt_session_release(s);
  dml_rt_model_release(model);
}

static void test_file_round_trip(void) {
  dml_ir_module_t *m = build_module();
  char path[128];
  snprintf(path, sizeof path, "/tmp/dml_test_rt_%ld.dmlpkg", (long)getpid());
  CHECK_OK(dml_package_emit(m, &k_opts, path));
  dml_ir_module_release(m);
  dml_rt_model_t *model = NULL;
  CHECK_OK(dml_rt_model_load_file(path, &model));
  if (model) {
    CHECK(dml_rt_model_is_mapped(model) == 1);
    dml_rt_session_t *s = NULL;
    CHECK_OK(dml_rt_session_create(model, "cpu", &s));
    if (s) run_batch(s, 5);
    dml_rt_session_release(s);
    dml_rt_model_release(model);
  }
  unlink(path);
  CHECK_ERROR(dml_rt_model_load_file(path, &model), DML_STATUS_NOT_FOUND, path);
}

static uint8_t *find_bytes(uint8_t *hay, size_t n, const char *needle, size_t k) {
  for (size_t i = 0; i + k <= n; i++)
    if (memcmp(hay + i, needle, k) == 0) return hay + i;
  return NULL;
}

/* Every corruption of the header and table, byte flips in the graph, and
 * truncation at many offsets: a clean error, never a crash. */
static void test_corrupt_packages(void) {
  size_t size = 0;
  uint8_t *bytes = (uint8_t *)emit_tiny(&size);
  if (!bytes) return;
  uint8_t *c = (uint8_t *)malloc(size);
  size_t region = DML_PKG_HEADER_REGION_BYTES(3);
  int accepted = 0;
  for (size_t i = 0; i < region; i++) {
    for (int v = 0; v < 256; v += 51) {
      memcpy(c, bytes, size);
      if (c[i] == (uint8_t)v) continue;
      c[i] = (uint8_t)v;
      dml_rt_model_t *m = NULL;
      dml_status_t st = dml_rt_model_load_memory(c, size, &m);
      if (!st) {
        accepted++;
        dml_rt_model_release(m);
      }
      dml_status_free(st);
    }
  }
  CHECK(accepted == 0);
  for (size_t n = 0; n < size; n += (n < region + 16 ? 1 : 13)) {
    dml_rt_model_t *m = NULL;
    dml_status_t st = dml_rt_model_load_memory(bytes, n, &m);
    CHECK(st != DML_OK);
    dml_status_free(st);
  }
  CHECK_ERROR(dml_rt_model_load_memory(bytes, size - 1, &(dml_rt_model_t *){NULL}),
              DML_STATUS_DATA_LOSS, "truncated or appended to");
  /* Flip a byte of the graph section and fix up its CRC and the header CRC,
   * so the graph decoder itself sees the damage. */
  dml_pkg_t pkg;
  CHECK_OK(dml_pkg_parse(bytes, size, &pkg));
  const dml_pkg_section_t *g = dml_pkg_find_section(&pkg, "graph");
  if (g) {
    for (uint64_t i = 0; i < g->size; i++) {
      memcpy(c, bytes, size);
      c[g->offset + i] ^= 0xA5;
      uint32_t crc = dml_crc32(c + g->offset, (size_t)g->size);
      size_t e =
          DML_PKG_HEADER_BYTES + DML_PKG_ENTRY_BYTES * 1 + 36; /* graph is entry 1 */
      for (int k = 0; k < 4; k++) c[e + k] = (uint8_t)(crc >> (8 * k));
      crc = dml_crc32(c, region - 4);
      for (int k = 0; k < 4; k++) c[region - 4 + k] = (uint8_t)(crc >> (8 * k));
      dml_rt_model_t *m = NULL;
      dml_status_t st = dml_rt_model_load_memory(c, size, &m);
      if (!st) {
        /* Accepted (e.g. a changed float attribute): it must still run. */
        dml_rt_session_t *s = NULL;
        dml_status_t st2 = DML_OK;
        if (dml_rt_model_arena_bytes(m) > (1 << 20) ||
            dml_rt_model_scratch_bytes(m) > (1 << 20))
          goto release; /* valid, but too large to try here */
        st2 = dml_rt_session_create(m, NULL, &s);
        if (!st2) {
          float x[2 * IN] = {0};
          dml_tensor_t t = {DML_DTYPE_F32, 2, {2, IN}, x};
          st2 = dml_rt_session_set_input(s, 0, &t);
          if (!st2) st2 = dml_rt_session_run(s);
        }
        dml_status_free(st2);
        dml_rt_session_release(s);
      release:
        dml_rt_model_release(m);
      }
      dml_status_free(st);
    }
    /* An unknown op name is UNIMPLEMENTED, naming the op. */
    memcpy(c, bytes, size);
    uint8_t *relu = find_bytes(c + g->offset, (size_t)g->size, "Relu", 4);
    CHECK(relu != NULL);
    if (relu) {
      memcpy(relu, "Rolu", 4);
      uint32_t crc = dml_crc32(c + g->offset, (size_t)g->size);
      size_t e = DML_PKG_HEADER_BYTES + DML_PKG_ENTRY_BYTES * 1 + 36;
      for (int k = 0; k < 4; k++) c[e + k] = (uint8_t)(crc >> (8 * k));
      crc = dml_crc32(c, region - 4);
      for (int k = 0; k < 4; k++) c[region - 4 + k] = (uint8_t)(crc >> (8 * k));
      CHECK_ERROR(dml_rt_model_load_memory(c, size, &(dml_rt_model_t *){NULL}),
                  DML_STATUS_UNIMPLEMENTED, "unknown op 'Rolu'");
    }
  }
  free(c);
  free(bytes);
}

/* Helpers for test_cmd_run.sh (the `dmlc run`/`inspect` test):
 *   test_rt --write DIR     writes DIR/tiny.dmlpkg, DIR/x.npy (batch 3) and
 *                           DIR/expected.npy (the naive result)
 *   test_rt --compare A B   exit 0 when the f32 arrays match within 1e-5 */
static int helper(int argc, char **argv) {
  if (argc == 3 && !strcmp(argv[1], "--write")) {
    char path[512];
    dml_ir_module_t *m = build_module();
    snprintf(path, sizeof path, "%s/tiny.dmlpkg", argv[2]);
    CHECK_OK(dml_package_emit(m, &k_opts, path));
    dml_ir_module_release(m);
    float x[3 * IN], want[3 * OUT];
    for (int i = 0; i < 3 * IN; i++) x[i] = (float)((i * 7) % 11) * 0.3f - 1.2f;
    naive(x, 3, want);
    dml_tensor_t tx = {DML_DTYPE_F32, 2, {3, IN}, x},
                 tw = {DML_DTYPE_F32, 2, {3, OUT}, want};
    snprintf(path, sizeof path, "%s/x.npy", argv[2]);
    CHECK_OK(dml_npy_write_file(path, &tx));
    snprintf(path, sizeof path, "%s/expected.npy", argv[2]);
    CHECK_OK(dml_npy_write_file(path, &tw));
    return dml_test_checks_failed_ ? 1 : 0;
  }
  if (argc == 4 && !strcmp(argv[1], "--compare")) {
    dml_tensor_t a, b;
    void *ba = NULL, *bb = NULL;
    CHECK_OK(dml_npy_read_file(argv[2], &a, &ba));
    CHECK_OK(dml_npy_read_file(argv[3], &b, &bb));
    if (ba && bb) {
      CHECK(a.dtype == DML_DTYPE_F32 && a.dtype == b.dtype && a.rank == b.rank);
      CHECK(dml_tensor_bytes(&a) == dml_tensor_bytes(&b));
      for (int32_t i = 0; i < a.rank && i < b.rank; i++) CHECK(a.dims[i] == b.dims[i]);
      int64_t n = dml_dims_numel(a.dims, a.rank);
      for (int64_t i = 0; i < n && !dml_test_checks_failed_; i++)
        CHECK_NEAR(((float *)a.data)[i], ((float *)b.data)[i], 1e-5);
    }
    free(ba);
    free(bb);
    return dml_test_checks_failed_ ? 1 : 0;
  }
  fprintf(stderr, "usage: test_rt [--write DIR | --compare A.npy B.npy]\n");
  return 2;
}

int main(int argc, char **argv) {
  if (argc > 1) return helper(argc, argv);
  RUN(test_emit_load_run);
  RUN(test_threads);
  RUN(test_profiling);
  RUN(test_introspection);
  RUN(test_session_errors);
  RUN(test_emit_errors);
  RUN(test_repeated_outputs);
  RUN(test_file_round_trip);
  RUN(test_corrupt_packages);
  return dml_test_finish();
}
