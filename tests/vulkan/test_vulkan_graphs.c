/* test_vulkan_graphs.c — whole graphs on Vulkan against the CPU (issue 23).
 *
 * dense_block: a DenseNet-style block and transition
 * (tests/vulkan/graphs/gen_dense_block.py: 3 layers of BatchNorm -> Relu ->
 * 1x1 Conv -> BatchNorm -> Relu -> 3x3 Conv over the Concat of all earlier
 * feature maps, then BatchNorm -> Relu -> 1x1 Conv -> AveragePool; f32[N,
 * 16, 14, 14]). The CPU against onnxruntime's saved outputs (batch 1 and
 * 3), then Vulkan against the saved outputs and the CPU on them and on
 * random inputs at batch 1, 3, 16 and 64, in two packages: compiled for
 * cpu,vulkan (as `dmlc compile --target vulkan`: a fusion-aware memory
 * plan, no kernel result over a value its kernel reads), and compiled for
 * the CPU alone then given Vulkan kernels by dml_compile_add_kernels (the
 * CPU's plan ignores the GPU's fuse groups: the BatchNorm+Relu kernels of
 * cat2 and block are planned in place over those Concats' results). The
 * test asserts that in-place plan and that those kernels take the form of
 * the bug (4 elements per invocation, numel / 4 not a multiple of the
 * workgroup: a partial last workgroup at batch 1 and 3), so that it cannot
 * silently stop exercising it. Before the fix of
 * dml_ksched_emit_ew_group (codegen/schedule_elementwise.c) lavapipe
 * applied a BatchNorm+Relu planned in place over a Concat twice to some
 * elements (largest error 0.2 on the block of the issue; the in-place
 * package here: see docs/kernels.md).
 *
 * Tolerance: |x - ref| <= 1e-4 * max(1, |ref|) per element (GPU_TEST_TOL;
 * f32 sums in another order than onnxruntime's). Also the forms of
 * tests/gpu_graph_forms.h (each a graph that went wrong between kernels)
 * against the CPU at batch 1, 3 and 16. Skips (77) the Vulkan
 * part without a Vulkan device, after the CPU part. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codegen_test_util.h"
#include "dml_kernel.h"
#include "dml_npy.h"
#include "dml_pkg.h"
#include "gpu_graph_forms.h"
#include "gpu_test_util.h"
#include "vulkan_forms.h"

/* tests/vulkan/graphs/<rel> under the source tree. */
static const char *graph_path(const char *rel, char *buf, size_t cap) {
  char r[256];
  snprintf(r, sizeof r, "tests/vulkan/graphs/%s", rel);
  return dml_test_path("DMLC_SOURCE_DIR", r, buf, cap);
}

/* tests/vulkan/graphs/<name>.onnx compiled for `targets` into a package in
 * memory (*n bytes; the caller free()s); NULL (a failed CHECK) on error. */
static void *compile_graph(const char *name, const char *targets, size_t *n) {
  char path[1024], rel[256];
  snprintf(rel, sizeof rel, "%s.onnx", name);
  size_t len = 0;
  void *onnx = dml_test_read_file(graph_path(rel, path, sizeof path), &len);
  CHECK(onnx != NULL);
  if (!onnx) return NULL;
  dml_compile_options_t o;
  memset(&o, 0, sizeof o);
  o.targets = targets;
  void *bytes = NULL;
  CHECK_OK(dml_compile_onnx_memory(onnx, len, NULL, rel, &o, &bytes, n, NULL));
  free(onnx);
  return bytes;
}

/* Package `bytes` loaded (and freed); NULL (a failed CHECK) on error. */
static dml_rt_model_t *load_package(void *bytes, size_t n) {
  dml_rt_model_t *m = NULL;
  if (bytes) CHECK_OK(dml_rt_model_load_memory(bytes, n, &m));
  free(bytes);
  return m;
}

/* tests/vulkan/graphs/<name>.onnx compiled for `targets` in memory;
 * NULL (a failed CHECK) on error. */
static dml_rt_model_t *load_graph(const char *name, const char *targets) {
  size_t n = 0;
  void *bytes = compile_graph(name, targets, &n);
  return load_package(bytes, n);
}

/* The index of the last node of function f in node i's fuse group (i
 * itself when it has none). */
static uint32_t group_last(const dml_pkg_function_t *f, uint32_t i) {
  int64_t g =
      dml_attr_int(f->nodes[i].attrs, f->nodes[i].n_attrs, DML_FUSE_GROUP_ATTR, -1);
  uint32_t last = i;
  for (uint32_t j = i + 1; g >= 0 && j < f->n_nodes; j++)
    if (dml_attr_int(f->nodes[j].attrs, f->nodes[j].n_attrs, DML_FUSE_GROUP_ATTR, -1) ==
        g)
      last = j;
  return last;
}

/* The number of elementwise kernels of package `bytes`' first function
 * that start with a BatchNormalization of a Concat's result, write their
 * result over that Concat's result (the same arena offset) and take the
 * form of issue 23's bug: 4 elements per invocation, numel / 4 invocations
 * per batch row not a multiple of the workgroup (256), so that the last
 * workgroup is partial at batch 1. Each one found is printed. */
static int in_place_after_concat(const void *bytes, size_t n) {
  dml_pkg_t pkg;
  dml_pkg_graph_t *g = NULL;
  dml_kplan_t *p = NULL;
  int found = 0;
  CHECK_OK(dml_pkg_parse(bytes, n, &pkg));
  const dml_pkg_section_t *gs = dml_pkg_find_section(&pkg, "graph");
  const dml_pkg_section_t *ws = dml_pkg_find_section(&pkg, "weights");
  CHECK(gs && ws);
  if (gs && ws) CHECK_OK(dml_pkg_graph_decode(gs->data, gs->size, ws->size, &g));
  if (g) CHECK_OK(dml_kschedule(g, 0, ws->data, ws->size, &p));
  if (!g || !p) goto done;
  const dml_pkg_function_t *f = &g->functions[0];
  for (uint32_t k = 0; k < p->n_kernels; k++) {
    const dml_kernel_t *K = &p->kernels[k];
    if (K->kind != DML_KK_ELEMENTWISE || !K->n_nodes) continue;
    const dml_pkg_node_t *bn = &f->nodes[K->nodes[0]];
    if (bn->op != DML_OP_BATCH_NORMALIZATION) continue;
    uint32_t c = bn->inputs[0], producer = f->n_nodes;
    for (uint32_t i = 0; i < K->nodes[0]; i++)
      if (f->nodes[i].n_outputs && f->nodes[i].outputs[0] == c) producer = i;
    if (producer == f->n_nodes || f->nodes[producer].op != DML_OP_CONCAT) continue;
    uint32_t last = group_last(f, K->nodes[0]);
    const dml_pkg_value_t *x = &f->values[c], *y = &f->values[f->nodes[last].outputs[0]];
    int64_t numel = 1;
    for (int32_t d = 1; d < x->type.rank; d++) numel *= x->type.dims[d].value;
    int in_place = x->storage == DML_PKG_STORAGE_ARENA &&
                   y->storage == DML_PKG_STORAGE_ARENA && x->offset == y->offset &&
                   K->nodes[K->n_nodes - 1] == last;
    int unrolled = K->items[0].c * 4 == numel && K->items[0].c % 256 != 0;
    printf(
        "kernel %u: %s+%s of Concat '%s' (%lld * N elements): %s, %lld * N invocations\n",
        k, bn->op_name, f->nodes[last].op_name, x->name, (long long)numel,
        in_place ? "in place" : "not in place", (long long)K->items[0].c);
    found += in_place && unrolled;
  }
done:
  dml_kplan_release(p);
  dml_pkg_graph_release(g);
  return found;
}

/* The CPU session of dense_block on each saved pair against onnxruntime's
 * output. */
static void test_dense_block_cpu(void) {
  dml_rt_model_t *m = load_graph("dense_block", "cpu");
  dml_rt_session_t *cpu = NULL;
  if (m) CHECK_OK(dml_rt_session_create(m, "cpu", &cpu));
  for (int i = 0; cpu && i < 2; i++) {
    char rel[64], path[1024];
    dml_tensor_t x, want, got;
    void *xb = NULL, *wb = NULL;
    snprintf(rel, sizeof rel, "dense_block_io/input_%d.npy", i);
    CHECK_OK(dml_npy_read_file(graph_path(rel, path, sizeof path), &x, &xb));
    snprintf(rel, sizeof rel, "dense_block_io/output_%d.npy", i);
    CHECK_OK(dml_npy_read_file(graph_path(rel, path, sizeof path), &want, &wb));
    if (xb && wb) {
      CHECK_OK(dml_rt_session_set_input(cpu, 0, &x));
      CHECK_OK(dml_rt_session_run(cpu));
      memset(&got, 0, sizeof got);
      CHECK_OK(dml_rt_session_get_output(cpu, 0, &got));
      double e = gpu_test_max_err(&got, &want);
      printf("dense_block input_%d (batch %lld) on cpu: vs onnxruntime %.2e\n", i,
             (long long)x.dims[0], e);
      CHECK(e <= GPU_TEST_TOL);
    }
    free(xb);
    free(wb);
  }
  dml_rt_session_release(cpu);
  dml_rt_model_release(m);
}

/* dense_block's package m on Vulkan: the saved pairs (against onnxruntime
 * and the CPU), then random inputs against the CPU at batch 1, 3, 16 and
 * 64. */
static void check_dense_block_vulkan(const char *what, dml_rt_model_t *m) {
  static const int64_t batches[] = {1, 3, 16, 64};
  char dir[1024];
  dml_rt_session_t *cpu, *vk;
  gpu_test_open(m, "vulkan", &cpu, &vk);
  gpu_test_check_saved(what, graph_path("", dir, sizeof dir), "dense_block", 2, cpu, vk,
                       1);
  gpu_test_seed(23);
  for (int i = 0; cpu && vk && i < 4; i++) {
    double e = gpu_test_compare_at(m, cpu, vk, batches[i]);
    printf("%s, random input batch %3lld: max scaled error %.2e\n", what,
           (long long)batches[i], e);
    CHECK(e <= GPU_TEST_TOL);
  }
  gpu_test_close(m, cpu, vk);
}

/* dense_block compiled for cpu,vulkan (the fusion-aware plan). */
static void test_dense_block_vulkan(void) {
  check_dense_block_vulkan("dense_block", load_graph("dense_block", "cpu,vulkan"));
}

/* dense_block compiled for the CPU, then dml_compile_add_kernels("vulkan"):
 * at least one BatchNorm+Relu kernel in place over a Concat in the bug's
 * unrolled form (asserted), run as above. */
static void test_dense_block_in_place_vulkan(void) {
  size_t n = 0;
  void *bytes = compile_graph("dense_block", "cpu", &n);
  if (bytes) CHECK_OK(dml_compile_add_kernels("vulkan", NULL, &bytes, &n));
  int found = bytes ? in_place_after_concat(bytes, n) : 0;
  printf(
      "dense_block planned for the CPU: %d unrolled BatchNorm+Relu kernels in place "
      "over a Concat\n",
      found);
  CHECK(found >= 1);
  check_dense_block_vulkan("dense_block in place", load_package(bytes, n));
}

/* The forms of tests/gpu_graph_forms.h at batch 1, 3 and 16. */
static void test_graph_forms(void) {
  gpu_graph_forms(vk_check_form);
}

int main(void) {
  RUN(test_dense_block_cpu);
  dml_rt_device_info_t d[16];
  uint32_t n = 0;
  if (gpu_test_skip(dml_rt_vulkan_devices(d, 16, &n), "no Vulkan device")) {
    int rc = dml_test_finish(); /* the CPU part's failures still fail */
    return rc ? rc : 77;
  }
  RUN(test_graph_forms);
  RUN(test_dense_block_vulkan);
  RUN(test_dense_block_in_place_vulkan);
  return dml_test_finish();
}
