/* test_vulkan_symdims.c — kernels over several symbolic dims per value
 * (tests/gpu_symdims_forms.h: attention's [batch, heads, seq, seq], Gather
 * and GatherND over a symbolic axis, three symbols in one value) on Vulkan
 * against the CPU session of the same package, at each form's tuples of
 * symbol values (1 and the bounds included), then at the first tuple again
 * (a cached recording). Inputs are random: f32 in [-2, 2), i64 in [-5, 5],
 * or, for index inputs, valid indices of the symbols' run-time extents
 * (negative ones too). Tolerance: 1e-4 * max(1, |cpu|) per element
 * (GPU_TEST_TOL). Each form also compiles for CUDA (clang-16 to PTX) and
 * Metal, before the Vulkan part, which skips (77) without a device. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu_symdims_forms.h"
#include "vulkan_forms.h"

/* The value of symbol `name` in tuple `t` of form `f` (-1: not a symbol of
 * the form). */
static int64_t sym_value(const gpu_sym_form_t *f, int t, const char *name) {
  for (int k = 0; k < GPU_SYM_MAX_SYMS && f->syms[k]; k++)
    if (name && strcmp(name, f->syms[k]) == 0) return f->tuples[t][k];
  return -1;
}

/* Component `c` of range spec `r` ("batch,seq"): its symbol's value. */
static int64_t range_of(const gpu_sym_form_t *f, int t, const char *r, int64_t c) {
  char buf[64];
  snprintf(buf, sizeof buf, "%s", r);
  char *save = NULL, *tok = strtok_r(buf, ",", &save);
  for (int64_t k = 0; tok && k < c; k++) tok = strtok_r(NULL, ",", &save);
  return tok ? sym_value(f, t, tok) : 1;
}

/* Binds random inputs of form `f` at tuple `t` to both sessions. */
static void bind_inputs(const gpu_sym_form_t *f, int t, dml_rt_model_t *m,
                        dml_rt_session_t *cpu, dml_rt_session_t *vk) {
  dml_rt_session_clear_inputs(cpu);
  dml_rt_session_clear_inputs(vk);
  int n_i64 = 0;
  for (uint32_t i = 0; i < dml_rt_model_num_inputs(m); i++) {
    dml_rt_io_info_t io;
    CHECK_OK(dml_rt_model_input_info(m, i, &io));
    dml_tensor_t x;
    memset(&x, 0, sizeof x);
    x.dtype = io.dtype;
    x.rank = io.rank;
    for (int32_t d = 0; d < io.rank; d++)
      x.dims[d] = io.dim_symbol[d]
                      ? io.dim_multiplier[d] * sym_value(f, t, io.dim_symbol[d])
                      : io.dims[d];
    int64_t n = dml_dims_numel(x.dims, x.rank);
    void *buf = malloc((size_t)(n ? n : 1) * 8);
    const char *range = NULL;
    if (io.dtype == DML_DTYPE_I64 && n_i64 < 4) range = f->ranges[n_i64++];
    int64_t last = io.rank ? x.dims[io.rank - 1] : 1;
    for (int64_t k = 0; buf && k < n; k++) {
      float r = gpu_test_frand();
      if (io.dtype == DML_DTYPE_I64) {
        int64_t v = (int64_t)floor(5.5 * ((double)r + 1.0)) - 5;
        if (range) { /* in [-len, len) */
          int64_t len = range_of(f, t, range, last ? k % last : 0);
          v = (int64_t)floor((double)len * (double)r);
          if (v >= len) v = len - 1;
        }
        ((int64_t *)buf)[k] = v;
      } else {
        ((float *)buf)[k] = 2.0f * r;
      }
    }
    x.data = buf;
    CHECK_OK(dml_rt_session_set_input(cpu, i, &x));
    CHECK_OK(dml_rt_session_set_input(vk, i, &x));
    free(buf);
  }
}

/* Form `f` at tuple `t`: the largest scaled error of Vulkan's outputs
 * against the CPU's (dims equal). */
static double run_tuple(const gpu_sym_form_t *f, int t, dml_rt_model_t *m,
                        dml_rt_session_t *cpu, dml_rt_session_t *vk) {
  bind_inputs(f, t, m, cpu, vk);
  CHECK_OK(dml_rt_session_run(cpu));
  CHECK_OK(dml_rt_session_run(vk));
  double worst = 0;
  for (uint32_t o = 0; o < dml_rt_model_num_outputs(m); o++) {
    dml_tensor_t a, b;
    memset(&a, 0, sizeof a);
    memset(&b, 0, sizeof b);
    CHECK_OK(dml_rt_session_get_output(vk, o, &a));
    CHECK_OK(dml_rt_session_get_output(cpu, o, &b));
    CHECK(a.rank == b.rank &&
          memcmp(a.dims, b.dims, sizeof a.dims[0] * (size_t)a.rank) == 0);
    double e = gpu_test_max_err(&a, &b);
    if (e > GPU_TEST_TOL)
      fprintf(stderr, "  %s: output %u at tuple %d: error %.3g\n", f->what, o, t, e);
    if (e > worst) worst = e;
  }
  return worst;
}

static void test_compiles_cuda_metal(void) {
  for (size_t i = 0; i < sizeof gpu_sym_forms / sizeof gpu_sym_forms[0]; i++) {
    size_t n = 0;
    void *b = cg_package(gpu_sym_forms[i].ir, "cuda,metal", &n);
    if (!b) fprintf(stderr, "  (%s)\n", gpu_sym_forms[i].what);
    CHECK(b != NULL);
    free(b);
  }
}

static void test_forms_vulkan(void) {
  for (size_t i = 0; i < sizeof gpu_sym_forms / sizeof gpu_sym_forms[0]; i++) {
    const gpu_sym_form_t *f = &gpu_sym_forms[i];
    dml_rt_session_t *cpu = NULL, *vk = NULL;
    dml_rt_model_t *m = vk_open_pair(f->ir, &cpu, &vk);
    if (!m || !cpu || !vk) {
      fprintf(stderr, "  (%s)\n", f->what);
      gpu_test_close(m, cpu, vk);
      continue;
    }
    double worst = 0;
    for (int t = 0; t <= f->n_tuples; t++) {
      double e = run_tuple(f, t < f->n_tuples ? t : 0, m, cpu, vk);
      if (e > worst) worst = e;
    }
    printf("%s: largest error %.3g over %d tuples\n", f->what, worst, f->n_tuples);
    CHECK(worst <= GPU_TEST_TOL);
    gpu_test_close(m, cpu, vk);
  }
}

int main(void) {
  RUN(test_compiles_cuda_metal);
  dml_rt_device_info_t d[16];
  uint32_t n = 0;
  if (gpu_test_skip(dml_rt_vulkan_devices(d, 16, &n), "no Vulkan device")) {
    int rc = dml_test_finish(); /* the CUDA and Metal part's failures */
    return rc ? rc : 77;
  }
  RUN(test_forms_vulkan);
  return dml_test_finish();
}
