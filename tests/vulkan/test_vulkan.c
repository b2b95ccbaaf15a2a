/* test_vulkan.c — the Vulkan backend against the CPU reference: every kernel
 * form the scheduler emits (elementwise chains with broadcasting, also in
 * the unrolled form of large kernels, Gemm and
 * MatMul with epilogues, reductions, softmax, data movement, normalizations,
 * the typed forms: i64/i32/bool values compared element-exactly;
 * gpu_test_kernel_forms) at several batch sizes, the reference
 * models (fashion_mlp, lenet5, resnet_small) against their saved outputs,
 * the eval_step of fashion_mlp's training package, and the errors
 * (no kernels in the package, no such device, ops a target lacks, forms the
 * scheduler refuses).
 * Tolerance: |vulkan - cpu| <= 1e-4 * max(1, |cpu|) (f32 sums in another
 * order, and the GPU's exp/tanh/log). Skips (77) without a Vulkan device.
 * The kernel forms and the comparisons are tests/gpu_test_util.h's, shared
 * with tests/cuda. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codegen_test_util.h"
#include "dml_onnx.h"
#include "dml_train.h"
#include "gpu_rtdims_cases.h"
#include "gpu_test_ops2.h"
#include "gpu_test_util.h"
#include "vulkan_forms.h"

static void test_kernel_forms(void) {
  gpu_test_kernel_forms(vk_check_form, 1);
}

/* The forms of codegen/schedule_ops2.c (gpu_test_ops2.h). */
static void test_ops2_forms(void) {
  gpu_test_ops2_forms(vk_check_form);
}

/* GEMMs of random f16/bf16 operands (gpu_test_half_gemm_random: f32
 * accumulation against the CPU's double one) within one rounding step of
 * the dtype at batch 1, 3, 16 and 64, in 5 kernels. */
static void test_half_gemm(void) {
  char *text = gpu_test_half_gemm_random();
  CHECK(text != NULL);
  size_t n = 0;
  void *bytes = text ? cg_package(text, "cpu,vulkan", &n) : NULL;
  free(text);
  if (!bytes) return;
  dml_rt_model_t *m = NULL;
  dml_rt_session_t *cpu, *vk;
  CHECK_OK(dml_rt_model_load_memory(bytes, n, &m));
  free(bytes);
  gpu_test_open(m, "vulkan", &cpu, &vk);
  static const int64_t batches[] = {1, 3, 16, 64};
  for (int i = 0; cpu && vk && i < 4; i++) {
    double e = gpu_test_compare_with(m, cpu, vk, batches[i], 2, GPU_TEST_HALF_ULPS);
    printf("f16/bf16 gemm, random operands     batch %3lld: %.2f rounding steps\n",
           (long long)batches[i], e);
    CHECK(e <= GPU_TEST_HALF_ULPS);
  }
  if (vk) CHECK(dml_rt_session_num_kernels(vk) == 5);
  gpu_test_close(m, cpu, vk);
}

/* Compiles reference model `name` (../shared/models) for cpu,vulkan and
 * checks its saved input/output pairs 0..2 (batch 1, 2 and 64) on Vulkan
 * against the saved outputs and the CPU, and its number of kernels. */
static void check_reference_model(const char *name, uint32_t want_kernels) {
  char models[1024];
  size_t n = 0;
  void *bytes = cg_compile_model(name, "cpu,vulkan", NULL, &n);
  dml_rt_model_t *m = NULL;
  dml_rt_session_t *cpu, *vk;
  if (bytes) CHECK_OK(dml_rt_model_load_memory(bytes, n, &m));
  free(bytes);
  gpu_test_open(m, "vulkan", &cpu, &vk);
  gpu_test_check_saved(name,
                       dml_test_path("DMLC_SHARED_DIR", "models", models, sizeof models),
                       name, 3, cpu, vk, 1);
  if (vk) {
    printf("%s on %s: %u kernels\n", name, dml_rt_session_device(vk),
           dml_rt_session_num_kernels(vk));
    CHECK(dml_rt_session_num_kernels(vk) == want_kernels);
  }
  gpu_test_close(m, cpu, vk);
}

static void test_fashion_mlp(void) {
  check_reference_model("fashion_mlp", 3);
}
static void test_lenet5(void) {
  check_reference_model("lenet5", 7);
}
/* 11 kernels: the memory planner reads the fuse pass's groups, which hold
 * BatchNormalization, so Conv + BatchNormalization [+ Add + Relu] is one
 * kernel three more times (14 while the planner kept its own grouping
 * rules, which left BatchNormalization out and made the scheduler split). */
static void test_resnet_small(void) {
  check_reference_model("resnet_small", 11);
}

/* The eval_step of fashion_mlp's training package (cross-entropy loss,
 * Adam): f32 images and i64 labels in; loss (f32, within 1e-5 of the
 * CPU), correct and total (i64, equal to the CPU's) out. Its ops: Gemm,
 * Relu, LogSoftmax, OneHot, Mul, ReduceSum/Mean, Neg, ArgMax, Equal, Cast
 * bool -> i64, ReduceSum of i64, Size. train_step (which assigns the
 * globals) is left out of the package here: the module is built as dmlc
 * train builds it, without that function. */
static void test_fashion_mlp_eval_step(void) {
  char path[1024], io[1024];
  dml_test_path("DMLC_SHARED_DIR", "models/fashion_mlp.onnx", path, sizeof path);
  dml_ir_module_t *mod = NULL;
  CHECK_OK(dml_onnx_import_file(path, NULL, &mod));
  if (!mod) return;
  dml_pass_options_t po;
  memset(&po, 0, sizeof po);
  po.verify_each = 1;
  dml_train_config_t cfg;
  dml_train_config_init(&cfg);
  cfg.optimizer = DML_OPTIMIZER_ADAM;
  CHECK_OK(
      dml_pass_run_pipeline(mod, "shape-infer,expand-gradient,const-fold,cse,dce", &po));
  CHECK_OK(dml_train_build(mod, &cfg));
  uint32_t k = 0;
  for (uint32_t i = 0; i < mod->n_functions; i++)
    if (strcmp(mod->functions[i]->name, "train_step"))
      mod->functions[k++] = mod->functions[i];
  CHECK(k + 1 == mod->n_functions);
  mod->n_functions = k;
  dml_ir_module_drop_unused_globals(mod);
  CHECK_OK(dml_pass_run_pipeline(mod, dml_pass_default_pipeline(), &po));
  void *bytes = NULL;
  size_t n = 0;
  CHECK_OK(dml_package_emit_memory(mod, NULL, &bytes, &n));
  dml_ir_module_release(mod);
  if (bytes) CHECK_OK(dml_compile_add_kernels("vulkan", NULL, &bytes, &n));
  dml_rt_model_t *m = NULL;
  if (bytes) CHECK_OK(dml_rt_model_load_memory(bytes, n, &m));
  free(bytes);
  if (!m) return;
  dml_rt_session_t *fwd = NULL, *cpu = NULL, *vk = NULL;
  CHECK_OK(dml_rt_session_create(m, "cpu", &fwd));
  CHECK_OK(dml_rt_session_create_function(m, "cpu", "eval_step", NULL, &cpu));
  CHECK_OK(dml_rt_session_create_function(m, "vulkan", "eval_step", NULL, &vk));
  for (int pair = 0; fwd && cpu && vk && pair < 3; pair++) {
    char rel[256];
    dml_tensor_t x, logits, lab;
    void *xb = NULL;
    snprintf(rel, sizeof rel, "models/fashion_mlp_io/input_%d.npy", pair);
    CHECK_OK(
        dml_npy_read_file(dml_test_path("DMLC_SHARED_DIR", rel, io, sizeof io), &x, &xb));
    if (!xb) continue;
    /* labels: the CPU's prediction on every third row, else row % 10, so
     * `correct` lies strictly between 0 and the batch for batch > 3 */
    dml_rt_session_clear_inputs(fwd);
    dml_rt_session_clear_inputs(cpu);
    dml_rt_session_clear_inputs(vk);
    CHECK_OK(dml_rt_session_set_input(fwd, 0, &x));
    CHECK_OK(dml_rt_session_run(fwd));
    memset(&logits, 0, sizeof logits);
    CHECK_OK(dml_rt_session_get_output(fwd, 0, &logits));
    int64_t rows = x.dims[0], labels[64];
    for (int64_t r = 0; r < rows && r < 64; r++) {
      const float *z = (const float *)logits.data + 10 * r;
      int64_t best = 0;
      for (int c = 1; c < 10; c++)
        if (z[c] > z[best]) best = c;
      labels[r] = r % 3 == 0 ? best : r % 10;
    }
    memset(&lab, 0, sizeof lab);
    lab.dtype = DML_DTYPE_I64;
    lab.rank = 1;
    lab.dims[0] = rows;
    lab.data = labels;
    dml_rt_session_t *ss[2] = {cpu, vk};
    dml_tensor_t out[2][3];
    for (int d = 0; d < 2; d++) {
      CHECK_OK(dml_rt_session_set_input(ss[d], 0, &x));
      CHECK_OK(dml_rt_session_set_input(ss[d], 1, &lab));
      CHECK_OK(dml_rt_session_run(ss[d]));
      for (uint32_t o = 0; o < 3; o++) {
        memset(&out[d][o], 0, sizeof out[d][o]);
        CHECK_OK(dml_rt_session_get_output(ss[d], o, &out[d][o]));
      }
    }
    double eloss = gpu_test_max_err(&out[1][0], &out[0][0]);
    int64_t cc = *(const int64_t *)out[0][1].data, ct = *(const int64_t *)out[0][2].data;
    int64_t vc = *(const int64_t *)out[1][1].data, vt = *(const int64_t *)out[1][2].data;
    printf(
        "fashion_mlp eval_step batch %lld: loss cpu %.6f vulkan %.6f (error %.2e), "
        "correct %lld/%lld vs %lld/%lld\n",
        (long long)rows, (double)*(const float *)out[0][0].data,
        (double)*(const float *)out[1][0].data, eloss, (long long)cc, (long long)ct,
        (long long)vc, (long long)vt);
    CHECK(eloss <= 1e-5);
    CHECK(out[1][1].dtype == DML_DTYPE_I64 && out[1][2].dtype == DML_DTYPE_I64);
    CHECK(cc == vc && ct == vt && ct == rows);
    if (rows > 3) CHECK(cc > 0 && cc < rows);
    free(xb);
  }
  dml_rt_session_release(fwd);
  dml_rt_session_release(cpu);
  dml_rt_session_release(vk);
  dml_rt_model_release(m);
}

/* Run-time dims (tests/gpu_rtdims_cases.h): shape inputs fed at run time,
 * several data sets per package against the CPU; then a shape value the
 * CPU's rule refuses is the same error on Vulkan, before the device runs,
 * as is a shape value's producer the host runs (a Gather index out of
 * range). */
static void test_rtdims(void) {
  for (int i = 0; i < GPU_RT_N_CASES; i++) {
    size_t n = 0;
    void *bytes = cg_package(gpu_rt_cases[i].ir, "cpu,vulkan", &n);
    if (!bytes) {
      fprintf(stderr, "  (%s)\n", gpu_rt_cases[i].what);
      continue;
    }
    dml_rt_model_t *m = NULL;
    dml_rt_session_t *cpu, *vk;
    CHECK_OK(dml_rt_model_load_memory(bytes, n, &m));
    free(bytes);
    gpu_test_open(m, "vulkan", &cpu, &vk);
    gpu_rt_check(&gpu_rt_cases[i], m, cpu, vk);
    if (i == 0 && vk) {
      /* a shape of another element count: Reshape's rule refuses it */
      gpu_rt_case_t bad = gpu_rt_cases[0];
      bad.sets[0].ints[1][0] = 5;
      gpu_rt_bind(m, &bad, 0, cpu, vk);
      CHECK_ERROR(dml_rt_session_run(cpu), DML_STATUS_INVALID_ARGUMENT, "Reshape");
      CHECK_ERROR(dml_rt_session_run(vk), DML_STATUS_INVALID_ARGUMENT,
                  "computing the dims of node #0");
    }
    if (strcmp(gpu_rt_cases[i].what, "shape values the host computes first") == 0 && vk) {
      /* a Gather index outside the table: the host's CPU kernel refuses it,
       * as the CPU session does, before the device runs */
      gpu_rt_case_t bad = gpu_rt_cases[i];
      bad.sets[0].ints[3][1] = 7;
      gpu_rt_bind(m, &bad, 0, cpu, vk);
      CHECK_ERROR(dml_rt_session_run(cpu), DML_STATUS_OUT_OF_RANGE, "Gather");
      CHECK_ERROR(dml_rt_session_run(vk), DML_STATUS_OUT_OF_RANGE,
                  "computing shape value(s) of node #6");
      /* then good values again */
      gpu_rt_check(&gpu_rt_cases[i], m, cpu, vk);
    }
    gpu_test_close(m, cpu, vk);
  }
}

/* Runs `s` on x (i64 [2,8]) and returns the run's status. */
static dml_status_t run_nonzero(dml_rt_session_t *s, const int64_t *x) {
  dml_tensor_t t;
  memset(&t, 0, sizeof t);
  t.dtype = DML_DTYPE_I64;
  t.rank = 2;
  t.dims[0] = 2;
  t.dims[1] = 8;
  t.data = (void *)x;
  DML_RETURN_IF_ERROR(dml_rt_session_set_input(s, 0, &t));
  return dml_rt_session_run(s);
}

/* A count that sizes a value above the bytes planned for it (compiled with
 * --dynamic-max-elements 8: the Add's i64 [2, nnz] result after NonZero
 * planned at 8 elements, nnz up to 16) is the CPU's OUT_OF_RANGE on Vulkan
 * too, found when the session takes the count read back from the device,
 * before the Add's segment runs; counts that fit run as on the CPU, before
 * and after. */
static void test_counted_dims_capacity(void) {
  static const char *text =
      "func @forward(%x: i64[2,8]) -> (i64[?]) {\n"
      "  %nz = NonZero(%x) : i64[?]\n"
      "  %a = Add(%nz, %nz) : i64[?]\n"
      "  return %a\n}\n";
  dml_ir_module_t *ir = NULL;
  void *bytes = NULL;
  size_t n = 0;
  CHECK_OK(dml_ir_parse(text, strlen(text), "nz.dmlir", &ir));
  if (!ir) return;
  ir->dynamic_max_elements = 8;
  dml_pass_options_t o;
  memset(&o, 0, sizeof o);
  CHECK_OK(dml_pass_run_pipeline(ir, dml_pass_default_pipeline(), &o));
  CHECK_OK(dml_package_emit_memory(ir, NULL, &bytes, &n));
  dml_ir_module_release(ir);
  if (bytes) CHECK_OK(dml_compile_add_kernels("cpu,vulkan", NULL, &bytes, &n));
  dml_rt_model_t *m = NULL;
  if (bytes) CHECK_OK(dml_rt_model_load_memory(bytes, n, &m));
  free(bytes);
  dml_rt_session_t *cpu = NULL, *vk = NULL;
  gpu_test_open(m, "vulkan", &cpu, &vk);
  if (cpu && vk) {
    static const int64_t few[16] = {0, 1, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 3, 0};
    static const int64_t many[16] = {1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 0, 0, 0};
    for (int r = 0; r < 3; r++) {
      const int64_t *x = r == 1 ? many : few;
      if (r == 1) {
        CHECK_ERROR(
            run_nonzero(cpu, x), DML_STATUS_OUT_OF_RANGE,
            "(Add): output 'a' of shape [2,6] needs 96 bytes, above the 64 planned");
        CHECK_ERROR(
            run_nonzero(vk, x), DML_STATUS_OUT_OF_RANGE,
            "(Add): output 'a' of shape [2,6] needs 96 bytes, above the 64 planned");
        continue;
      }
      CHECK_OK(run_nonzero(cpu, x));
      CHECK_OK(run_nonzero(vk, x));
      dml_tensor_t a, b;
      memset(&a, 0, sizeof a);
      memset(&b, 0, sizeof b);
      CHECK_OK(dml_rt_session_get_output(vk, 0, &a));
      CHECK_OK(dml_rt_session_get_output(cpu, 0, &b));
      CHECK(a.rank == 2 && a.dims[0] == 2 && a.dims[1] == 3);
      CHECK(gpu_test_max_err(&a, &b) == 0);
    }
  }
  gpu_test_close(m, cpu, vk);
}

/* An op the Vulkan target does not emit is a compile error naming it. */
static void test_missing_ops(void) {
  const char *text =
      "func @forward(%x: f32[3,3]) -> (i32[3,2]) {\n"
      "  %t = Multinomial(%x) {sample_size = 2} : i32[3,2]\n  return %t\n}\n";
  size_t n = 0;
  void *bytes = cg_package(text, NULL, &n);
  if (!bytes) return;
  CHECK_ERROR(dml_compile_add_kernels("vulkan", NULL, &bytes, &n),
              DML_STATUS_UNIMPLEMENTED, "Multinomial: 1 node");
  free(bytes);
}

/* Resize with scales fed at run time computes its coordinates in f64
 * registers: Vulkan and CUDA run it, Metal (no 64-bit floats) refuses the
 * kernel at compile time instead of emitting MSL with doubles; constant
 * scales keep the f32 constant-table form, which Metal takes. */
static void test_resize_rt_metal(void) {
  const char *text =
      "func @forward(%x: f32[1,1,2,2], %s: f32[4]) -> (f32[?]) {\n"
      "  %y = Resize(%x, _, %s) {mode = \"linear\"} : f32[?]\n  return %y\n}\n";
  size_t n = 0;
  void *bytes = cg_package(text, NULL, &n);
  if (!bytes) return;
  void *copy = malloc(n);
  CHECK(copy != NULL);
  if (!copy) {
    free(bytes);
    return;
  }
  memcpy(copy, bytes, n);
  size_t n2 = n;
  CHECK_OK(dml_compile_add_kernels("vulkan", NULL, &copy, &n2));
  CHECK_ERROR(dml_compile_add_kernels("metal", NULL, &bytes, &n),
              DML_STATUS_UNIMPLEMENTED, "computes in f64");
  free(copy);
  free(bytes);
  /* constant scales keep the constant-table form (no f64): Metal takes it */
  const char *fixed =
      "global @s : f32[4] = dense<[1.0, 1.0, 2.0, 1.5]>\n"
      "func @forward(%x: f32[1,1,2,2]) -> (f32[1,1,4,3]) {\n"
      "  %y = Resize(%x, _, @s) {mode = \"linear\"} : f32[1,1,4,3]\n  return %y\n}\n";
  bytes = cg_package(fixed, NULL, &n);
  if (!bytes) return;
  CHECK_OK(dml_compile_add_kernels("metal", NULL, &bytes, &n));
  free(bytes);
}

/* Forms of the newer ops the scheduler does not emit are UNIMPLEMENTED
 * errors naming the node and the reason. */
static void test_form_errors(void) {
  static const struct {
    const char *text, *want;
  } cases[] = {
      {"global @s : f32[2] = dense<[1.0, 0.5]>\n"
       "func @forward(%x: f32[2,4]) -> (f32[2,2]) {\n"
       "  %y = Resize(%x, _, @s) {mode = \"linear\", antialias = 1} : f32[2,2]\n"
       "  return %y\n}\n",
       "(Resize): antialias=1"},
      /* shape values from nodes the host does not run (dml_pkg_host_value):
       * an input of more than 4096 bytes, a value with a symbolic dim */
      {"global @s0 : i64[1] = dense<[0]>\n"
       "global @s1 : i64[1] = dense<[4]>\n"
       "func @forward(%x: f32[2,3], %p: i64[600]) -> (f32[?]) {\n"
       "  %q = Slice(%p, @s0, @s1) : i64[4]\n"
       "  %a = Abs(%q) : i64[4]\n"
       "  %y = Pad(%x, %a) {mode = \"reflect\"} : f32[?]\n  return %y\n}\n",
       "(Pad): its output dims depend on values computed on the device"},
      {"sym batch <= 4\n"
       "global @en : i64[1] = dense<[3]>\n"
       "func @forward(%x: f32[5], %b: f32[batch,1]) -> (f32[?]) {\n"
       "  %r = Relu(%b) : f32[batch,1]\n"
       "  %m = ArgMax(%r) {axis = 0, keepdims = 0} : i64[1]\n"
       "  %y = Slice(%x, %m, @en) : f32[?]\n  return %y\n}\n",
       "(Slice): its output dims depend on values computed on the device"},
      {"global @b : f32[3] = dense<[1.0, 2.0, 3.0]>\n"
       "func @forward(%x: f32[2,3]) -> (f32[2,3]) {\n"
       "  %y = Mod(%x, @b) {fmod = 0} : f32[2,3]\n  return %y\n}\n",
       "(Mod): Mod of floats needs fmod = 1"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
    vk_check_refused(cases[i].text, cases[i].want);
}

static void test_errors(void) {
  size_t n = 0;
  const char *text =
      "func @forward(%x: f32[4]) -> (f32[4]) {\n  %r = Relu(%x) : f32[4]\n  return "
      "%r\n}\n";
  void *cpu_only = cg_package(text, NULL, &n);
  dml_rt_model_t *m = NULL;
  dml_rt_session_t *s = NULL;
  if (cpu_only) CHECK_OK(dml_rt_model_load_memory(cpu_only, n, &m));
  if (m)
    CHECK_ERROR(dml_rt_session_create(m, "vulkan", &s), DML_STATUS_FAILED_PRECONDITION,
                "the package has no Vulkan kernels for function 'forward'");
  dml_rt_model_release(m);
  free(cpu_only);
  m = NULL;
  void *bytes = cg_package(text, "vulkan", &n);
  if (bytes) CHECK_OK(dml_rt_model_load_memory(bytes, n, &m));
  free(bytes);
  if (!m) return;
  CHECK_ERROR(dml_rt_session_create(m, "vulkan:99", &s), DML_STATUS_NOT_FOUND,
              "no Vulkan device 'vulkan:99'");
  CHECK_ERROR(dml_rt_session_create(m, "vulkan:x", &s), DML_STATUS_INVALID_ARGUMENT,
              "the index after ':' must be a number");
  /* A device without enough memory for the arena (the heap capped with
   * DMLC_VULKAN_MAX_MEMORY) is a clear error naming the sizes. */
  setenv("DMLC_VULKAN_MAX_MEMORY", "8", 1);
  CHECK_ERROR(dml_rt_session_create(m, "vulkan", &s), DML_STATUS_RESOURCE_EXHAUSTED,
              "bytes but DMLC_VULKAN_MAX_MEMORY allows 8 ");
  unsetenv("DMLC_VULKAN_MAX_MEMORY");
  /* Typed kernels on a device without the features they need (hidden with
   * DMLC_VULKAN_HIDE_FEATURES) are errors naming the feature; f32 kernels
   * need neither. */
  const char *typed =
      "func @forward(%x: f32[4], %y: f32[4]) -> (bool[4], i64[4]) {\n"
      "  %g = Greater(%x, %y) : bool[4]\n"
      "  %c = Cast(%x) {to = 7} : i64[4]\n"
      "  return %g, %c\n}\n";
  size_t tn = 0;
  void *tb = cg_package(typed, "vulkan", &tn);
  dml_rt_model_t *tm = NULL;
  if (tb) CHECK_OK(dml_rt_model_load_memory(tb, tn, &tm));
  free(tb);
  if (tm) {
    dml_rt_session_t *ts = NULL;
    setenv("DMLC_VULKAN_HIDE_FEATURES", "shaderInt64", 1);
    CHECK_ERROR(dml_rt_session_create(tm, "vulkan", &ts), DML_STATUS_UNIMPLEMENTED,
                "lacks the Vulkan feature shaderInt64");
    setenv("DMLC_VULKAN_HIDE_FEATURES", "storageBuffer8BitAccess", 1);
    CHECK_ERROR(dml_rt_session_create(tm, "vulkan", &ts), DML_STATUS_UNIMPLEMENTED,
                "feature storageBuffer8BitAccess (VK_KHR_8bit_storage)");
    CHECK_OK(dml_rt_session_create(m, "vulkan", &s)); /* f32 only: unaffected */
    dml_rt_session_release(s);
    s = NULL;
    unsetenv("DMLC_VULKAN_HIDE_FEATURES");
    CHECK_OK(dml_rt_session_create(tm, "vulkan", &ts));
    dml_rt_session_release(ts);
    dml_rt_model_release(tm);
  }
  /* f64 kernels need shaderFloat64, f16 (16-bit words) ones
   * storageBuffer16BitAccess but not shaderInt16 (the words are only
   * loaded, stored and converted); each is enabled only where a module
   * needs it. */
  const char *wide =
      "func @forward(%x: f32[4], %h: f16[4]) -> (f64[4], f16[4]) {\n"
      "  %d = Cast(%x) {to = 11} : f64[4]\n"
      "  %a = Add(%h, %h) : f16[4]\n"
      "  return %d, %a\n}\n";
  const char *half =
      "func @forward(%h: f16[4]) -> (f16[4]) {\n"
      "  %a = Add(%h, %h) : f16[4]\n"
      "  return %a\n}\n";
  void *wb = cg_package(wide, "vulkan", &tn);
  dml_rt_model_t *wm = NULL;
  if (wb) CHECK_OK(dml_rt_model_load_memory(wb, tn, &wm));
  free(wb);
  void *hb = cg_package(half, "vulkan", &tn);
  dml_rt_model_t *hm = NULL;
  if (hb) CHECK_OK(dml_rt_model_load_memory(hb, tn, &hm));
  free(hb);
  if (wm && hm) {
    dml_rt_session_t *ws = NULL;
    setenv("DMLC_VULKAN_HIDE_FEATURES", "shaderFloat64", 1);
    CHECK_ERROR(dml_rt_session_create(wm, "vulkan", &ws), DML_STATUS_UNIMPLEMENTED,
                "the kernels use 64-bit floats (f64 values) but");
    CHECK_ERROR(dml_rt_session_create(wm, "vulkan", &ws), DML_STATUS_UNIMPLEMENTED,
                "lacks the Vulkan feature shaderFloat64");
    CHECK_OK(dml_rt_session_create(hm, "vulkan", &ws)); /* no f64: unaffected */
    dml_rt_session_release(ws);
    ws = NULL;
    setenv("DMLC_VULKAN_HIDE_FEATURES", "storageBuffer16BitAccess", 1);
    CHECK_ERROR(dml_rt_session_create(hm, "vulkan", &ws), DML_STATUS_UNIMPLEMENTED,
                "feature storageBuffer16BitAccess (VK_KHR_16bit_storage)");
    setenv("DMLC_VULKAN_HIDE_FEATURES", "shaderInt16,shaderInt64", 1);
    CHECK_OK(dml_rt_session_create(hm, "vulkan", &ws));
    dml_rt_session_release(ws);
    ws = NULL;
    unsetenv("DMLC_VULKAN_HIDE_FEATURES");
    CHECK_OK(dml_rt_session_create(wm, "vulkan", &ws));
    dml_rt_session_release(ws);
  }
  dml_rt_model_release(wm);
  dml_rt_model_release(hm);
  CHECK_OK(dml_rt_session_create(m, "vulkan:0", &s));
  if (s) {
    dml_rt_kernel_info_t ki;
    CHECK_ERROR(dml_rt_session_kernel_info(s, 0, &ki), DML_STATUS_FAILED_PRECONDITION,
                "no run has completed yet");
    CHECK_ERROR(dml_rt_session_run(s), DML_STATUS_FAILED_PRECONDITION,
                "input 'x' is not set");
    CHECK_ERROR(dml_rt_session_kernel_info(s, 7, &ki), DML_STATUS_OUT_OF_RANGE,
                "kernel 7");
  }
  dml_rt_session_release(s);
  dml_rt_model_release(m);
}

int main(void) {
  dml_rt_device_info_t d[16];
  uint32_t n = 0;
  if (gpu_test_skip(dml_rt_vulkan_devices(d, 16, &n), "no Vulkan device")) return 77;
  int defaults = 0;
  for (uint32_t i = 0; i < n && i < 16; i++) {
    printf("%s: %s (%s), Vulkan %u.%u%s\n", d[i].id, d[i].name, d[i].kind, d[i].api_major,
           d[i].api_minor, d[i].is_default ? " [default]" : "");
    defaults += d[i].is_default;
  }
  CHECK(defaults == 1);
  RUN(test_errors);
  RUN(test_kernel_forms);
  RUN(test_ops2_forms);
  RUN(test_half_gemm);
  RUN(test_fashion_mlp);
  RUN(test_fashion_mlp_eval_step);
  RUN(test_lenet5);
  RUN(test_resnet_small);
  RUN(test_missing_ops);
  RUN(test_resize_rt_metal);
  RUN(test_form_errors);
  RUN(test_rtdims);
  RUN(test_counted_dims_capacity);
  return dml_test_finish();
}
