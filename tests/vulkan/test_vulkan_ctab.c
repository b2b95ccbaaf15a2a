/* test_vulkan_ctab.c — kernels with large constant tables on the default
 * Vulkan device (Mesa's lavapipe in CI) against the CPU (issue 15/23,
 * docs/kernels.md "Constant tables").
 *
 * Pad in modes reflect and edge and Resize (linear upsampling, nearest
 * downsampling) of f32[2, L] for L in {1000, 1200, 5000, 70001}: each
 * padded or resized dim's coordinate map is a constant table of about L
 * entries (Resize linear: 4 per output coordinate). Rendered as shader
 * constant arrays such a kernel hung on lavapipe from L = 1200 (queue wait
 * never returned); tables (above DML_KCTAB_INLINE_MAX entries: all) now live in
 * the weights buffer. Checked: the package's weights section holds the
 * tables (its size), Vulkan equals the CPU (Pad exactly: a copy; Resize
 * within 1e-6 relative: the kernel sums its two taps in f32, the CPU in
 * double), each run within a 120 s device timeout (a hang is a clear
 * error, not a stuck test), and the same graphs compile for CUDA (clang-16
 * to PTX) and Metal. Skips (77) without a Vulkan device. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "codegen_test_util.h"
#include "dml_codegen.h"
#include "dml_pkg.h"
#include "gpu_test_util.h"
#include "vulkan_forms.h"

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* The IR of case `c` at length L into text (cap bytes): 0 Pad reflect
 * (3 before, 5 after: an output of L + 8), 1 Pad edge (7, 2: L + 9),
 * 2 Resize linear x2 (2 L), 3 Resize nearest x0.75 (floor(0.75 L)).
 * *out_tab: the entries of its constant tables. */
static void case_text(int c, long long L, char *text, size_t cap, long long *out_tab) {
  switch (c) {
    case 0:
    case 1: {
      int lo = c ? 7 : 3, hi = c ? 2 : 5;
      snprintf(text, cap,
               "global @p : i64[4] = dense<[0, %d, 0, %d]>\n"
               "func @forward(%%x: f32[2,%lld]) -> (f32[2,%lld]) {\n"
               "  %%y = Pad(%%x, @p) {mode = \"%s\"} : f32[2,%lld]\n"
               "  return %%y\n}\n",
               lo, hi, L, L + lo + hi, c ? "edge" : "reflect", L + lo + hi);
      *out_tab = L + lo + hi;
      return;
    }
    case 2:
      snprintf(text, cap,
               "global @s : f32[2] = dense<[1.0, 2.0]>\n"
               "func @forward(%%x: f32[2,%lld]) -> (f32[2,%lld]) {\n"
               "  %%y = Resize(%%x, _, @s) {mode = \"linear\"} : f32[2,%lld]\n"
               "  return %%y\n}\n",
               L, 2 * L, 2 * L);
      *out_tab = 4 * 2 * L; /* 2 taps, index and weight */
      return;
    default: {
      long long o = (long long)floor(0.75 * (double)L);
      snprintf(text, cap,
               "global @s : f32[2] = dense<[1.0, 0.75]>\n"
               "func @forward(%%x: f32[2,%lld]) -> (f32[2,%lld]) {\n"
               "  %%y = Resize(%%x, _, @s) {mode = \"nearest\"} : f32[2,%lld]\n"
               "  return %%y\n}\n",
               L, o, o);
      *out_tab = o;
      return;
    }
  }
}

static const char *const k_names[] = {"Pad reflect", "Pad edge", "Resize linear x2",
                                      "Resize nearest x0.75"};

static void check_case(int c, long long L) {
  char text[1024];
  long long tab = 0;
  case_text(c, L, text, sizeof text, &tab);
  size_t n = 0;
  void *bytes = cg_package(text, "cpu,vulkan", &n);
  if (!bytes) {
    fprintf(stderr, "  (%s, L = %lld)\n", k_names[c], L);
    return;
  }
  /* the tables are in the weights (the graph's own constants are 32 or
   * 8 bytes) */
  dml_pkg_t pkg;
  CHECK_OK(dml_pkg_parse(bytes, n, &pkg));
  const dml_pkg_section_t *ws = dml_pkg_find_section(&pkg, "weights");
  CHECK(ws && ws->size >= (uint64_t)tab * 4u);
  dml_rt_model_t *m = NULL;
  CHECK_OK(dml_rt_model_load_memory(bytes, n, &m));
  free(bytes);
  dml_rt_session_t *cpu = NULL, *vk = NULL;
  gpu_test_open(m, "vulkan", &cpu, &vk);
  if (!cpu || !vk) {
    gpu_test_close(m, cpu, vk);
    return;
  }
  dml_rt_session_set_device_timeout(vk, 120.0);
  float *x = (float *)malloc(sizeof(float) * 2 * (size_t)L);
  CHECK(x != NULL);
  if (!x) {
    gpu_test_close(m, cpu, vk);
    return;
  }
  /* distinct values: a wrong index shows */
  for (long long i = 0; i < 2 * L; i++) x[i] = (float)i * 0.5f - 3.25f;
  dml_tensor_t t;
  memset(&t, 0, sizeof t);
  t.dtype = DML_DTYPE_F32;
  t.rank = 2;
  t.dims[0] = 2;
  t.dims[1] = L;
  t.data = x;
  CHECK_OK(dml_rt_session_set_input(cpu, 0, &t));
  CHECK_OK(dml_rt_session_set_input(vk, 0, &t));
  CHECK_OK(dml_rt_session_run(cpu));
  double t0 = now_s();
  dml_status_t s = dml_rt_session_run(vk);
  double t1 = now_s();
  CHECK_OK(s);
  dml_tensor_t a, b;
  memset(&a, 0, sizeof a);
  memset(&b, 0, sizeof b);
  if (!s) {
    CHECK_OK(dml_rt_session_get_output(cpu, 0, &a));
    CHECK_OK(dml_rt_session_get_output(vk, 0, &b));
  }
  int64_t ne = a.data ? dml_dims_numel(a.dims, a.rank) : 0;
  CHECK(b.data && ne > 0 && dml_dims_numel(b.dims, b.rank) == ne);
  double worst = 0;
  int64_t bad = 0;
  for (int64_t i = 0; b.data && i < ne; i++) {
    double u = ((const float *)a.data)[i], v = ((const float *)b.data)[i];
    double e = fabs(u - v) / fmax(1.0, fabs(u));
    worst = e > worst ? e : worst;
    int ok = c == 2 ? e <= 1e-6 : u == v;
    if (!ok && bad++ < 4)
      fprintf(stderr, "  %s L = %lld element %lld: vulkan %.9g, cpu %.9g\n", k_names[c],
              L, (long long)i, v, u);
  }
  CHECK(bad == 0);
  printf(
      "%-22s L = %6lld: table %7lld entries, vulkan run %.3f s, %lld elements, max "
      "error %.2e\n",
      k_names[c], L, tab, t1 - t0, (long long)ne, worst);
  free(x);
  gpu_test_close(m, cpu, vk);
}

static void test_large_tables(void) {
  static const long long lens[] = {1000, 1200, 5000, 70001};
  for (int c = 0; c < 4; c++)
    for (int i = 0; i < 4; i++) check_case(c, lens[i]);
}

/* The same kernels render for CUDA (PTX through clang-16) and Metal, and
 * the three targets' plans share one copy of each table: the weights
 * section is the graph's constants (under 64 bytes), padded to 64, then
 * the tables (16-byte aligned each). */
static void test_compiles_cuda_metal(void) {
  for (int c = 0; c < 4; c++) {
    char text[1024];
    long long tab = 0;
    case_text(c, 5000, text, sizeof text, &tab);
    size_t n = 0;
    void *b = cg_package(text, "vulkan,metal,cuda", &n);
    if (!b) fprintf(stderr, "  (%s: vulkan,metal,cuda)\n", k_names[c]);
    dml_pkg_t pkg;
    const dml_pkg_section_t *ws = NULL;
    if (b) CHECK_OK(dml_pkg_parse(b, n, &pkg));
    if (b) ws = dml_pkg_find_section(&pkg, "weights");
    CHECK(!b || (ws && ws->size >= 64u + (uint64_t)tab * 4u &&
                 ws->size <= 64u + (uint64_t)tab * 4u + 32u));
    free(b);
  }
}

/* dml_kplan_place_ctabs on a scheduled plan: Pad reflect of f32[2, 20000]
 * has a table of 20,008 entries, more than a kernel renders as constant
 * arrays (UNIMPLEMENTED from GLSL and CUDA C); placed, the table is at
 * the placement's base (64: the weights are 32 bytes), rendering holds no
 * constant array and reads the i32 view of the weights at element 16 on,
 * and the bytes are the CPU's reflect indices. A second plan of the same
 * graph adds nothing (equal tables stored once). */
static void test_place_unit(void) {
  char text[1024];
  long long tab = 0;
  case_text(0, 20000, text, sizeof text, &tab);
  size_t n = 0;
  void *bytes = cg_package(text, NULL, &n);
  if (!bytes) return;
  dml_pkg_t pkg;
  dml_pkg_graph_t *g = NULL;
  CHECK_OK(dml_pkg_parse(bytes, n, &pkg));
  const dml_pkg_section_t *gs = dml_pkg_find_section(&pkg, "graph");
  const dml_pkg_section_t *ws = dml_pkg_find_section(&pkg, "weights");
  CHECK(gs && ws && ws->size == 32);
  if (gs && ws) CHECK_OK(dml_pkg_graph_decode(gs->data, gs->size, ws->size, &g));
  dml_kplan_t *p = NULL, *p2 = NULL;
  if (g) CHECK_OK(dml_kschedule(g, 0, ws->data, ws->size, &p));
  if (g) CHECK_OK(dml_kschedule(g, 0, ws->data, ws->size, &p2));
  CHECK(p && p->n_kernels == 1 && p->kernels[0].n_ctabs == 1);
  if (p && p2 && p->n_kernels == 1 && p->kernels[0].n_ctabs == 1) {
    char *src = NULL;
    CHECK_ERROR(dml_codegen_glsl(&p->kernels[0], 0, &src), DML_STATUS_UNIMPLEMENTED,
                "constant tables of 20008 entries");
    CHECK_ERROR(dml_codegen_cuda(&p->kernels[0], 0, &src), DML_STATUS_UNIMPLEMENTED,
                "constant tables of 20008 entries");
    dml_kctab_place_t pl;
    dml_kctab_place_init(&pl, ws->size);
    CHECK(pl.base == 64);
    CHECK_OK(dml_kplan_place_ctabs(p, &pl));
    CHECK(pl.size == 20008u * 4u && p->kernels[0].ctabs[0].n == 0);
    /* reflect of [0, L) padded by 3 before: 3, 2, 1, 0, 1, ..., L-1, L-2, ... */
    int32_t v[4] = {-1, -1, -1, -1};
    if (pl.size >= 16) memcpy(v, pl.bytes, sizeof v);
    CHECK(v[0] == 3 && v[1] == 2 && v[2] == 1 && v[3] == 0);
    CHECK_OK(dml_codegen_glsl(&p->kernels[0], 0, &src));
    CHECK(src && !strstr(src, "ctab") && strstr(src, "16u"));
    free(src);
    src = NULL;
    CHECK_OK(dml_codegen_cuda(&p->kernels[0], 0, &src));
    CHECK(src && !strstr(src, "ctab"));
    free(src);
    CHECK_OK(dml_kplan_place_ctabs(p2, &pl));
    CHECK(pl.size == 20008u * 4u);
    uint64_t wn = 0;
    uint8_t *w = dml_kctab_place_weights(&pl, ws->data, ws->size, &wn);
    CHECK(w && wn == 64u + 20008u * 4u && memcmp(w, ws->data, 32) == 0 &&
          memcmp(w + 64, pl.bytes, (size_t)pl.size) == 0);
    free(w);
    dml_kctab_place_release(&pl);
  }
  dml_kplan_release(p);
  dml_kplan_release(p2);
  dml_pkg_graph_release(g);
  free(bytes);
}

int main(void) {
  RUN(test_place_unit);
  RUN(test_compiles_cuda_metal);
  dml_rt_device_info_t d[16];
  uint32_t n = 0;
  if (gpu_test_skip(dml_rt_vulkan_devices(d, 16, &n), "no Vulkan device")) {
    int rc = dml_test_finish(); /* the CUDA and Metal part's failures */
    return rc ? rc : 77;
  }
  RUN(test_large_tables);
  return dml_test_finish();
}
