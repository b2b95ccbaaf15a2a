/*
 * test_symexpr.c — dim_params of the form K*name, as PyTorch's dynamo
 * exporter writes them ("2*h" for the H of pixel_unshuffle(x, 2)): the
 * importer makes the dim K * symbol(name), bounded by --dim-bound name=B or
 * by the spelling's own bound (2*h=64: h <= 32). The fixtures of
 * gen_symexpr.py: pixel_unshuffle (x f32[batch,3,2*h,2*w], the node list
 * torch 2.11 exports, then a Conv) compiled once and run at two sizes on
 * the CPU against onnxruntime's saved outputs within 1e-5 absolute + 1e-5
 * relative; an odd H and an H over the bound are clear errors. A Reshape
 * of f32[N] into [-1,2] is refused with the --input-shape that makes it
 * expressible, and compiles and runs with it. A dim_param of another form
 * (h+1) stays one opaque symbol.
 */
#include "dml_onnx.h"
#include "symdims_util.h"

/* Compiles fixture `model`.onnx for the CPU (symdims_util.h). */
static dml_status_t compile_st(const char *model, const dml_onnx_dim_bound_t *b,
                               size_t nb, const dml_onnx_dim_range_t *r, size_t nr,
                               dml_rt_model_t **out) {
  return compile_status(model, b, nb, r, nr, "cpu", out);
}

/* Imports fixture `model`.onnx with the given bounds; the bound of symbol
 * `sym` in *bound (-1 when there is no such symbol). */
static dml_status_t import_bound(const char *model, const dml_onnx_dim_bound_t *b,
                                 size_t nb, const char *sym, int64_t *bound) {
  char path[1400], file[256];
  snprintf(file, sizeof file, "%s.onnx", model);
  dml_onnx_import_options_t o;
  memset(&o, 0, sizeof o);
  o.dim_bounds = b;
  o.n_dim_bounds = nb;
  dml_ir_module_t *m = NULL;
  dml_status_t st = dml_onnx_import_file(fixture(file, path, sizeof path), &o, &m);
  *bound = -1;
  if (!st) {
    int32_t i = dml_ir_module_find_symbol(m, sym);
    if (i >= 0) *bound = m->symbols[i].bound;
  }
  dml_ir_module_release(m);
  return st;
}

/* The input of pixel_unshuffle is 2 * h: h's bound from either spelling. */
static void test_import_bounds(void) {
  int64_t bd = 0;
  dml_onnx_dim_bound_t spelled[] = {{"batch", 4}, {"2*h", 65}, {"2 * w", 64}};
  CHECK_OK(import_bound("pixel_unshuffle", spelled, 3, "h", &bd));
  CHECK(bd == 32); /* 65 / 2 rounded down */
  CHECK_OK(import_bound("pixel_unshuffle", spelled, 3, "w", &bd));
  CHECK(bd == 32);
  CHECK_OK(import_bound("pixel_unshuffle", spelled, 3, "2*h", &bd));
  CHECK(bd == -1); /* no opaque symbol "2*h" */
  dml_onnx_dim_bound_t named[] = {{"h", 16}};
  CHECK_OK(import_bound("pixel_unshuffle", named, 1, "h", &bd));
  CHECK(bd == 16);
  CHECK_OK(import_bound("pixel_unshuffle", named, 1, "w", &bd));
  CHECK(bd == 32); /* the default 64 for the dim 2*w */
  dml_onnx_dim_bound_t twice[] = {{"h", 16}, {"2*h", 64}};
  CHECK_ERROR(import_bound("pixel_unshuffle", twice, 2, "h", &bd),
              DML_STATUS_INVALID_ARGUMENT, "its bound is given twice");
  dml_onnx_dim_bound_t small[] = {{"2*h", 1}};
  CHECK_ERROR(import_bound("pixel_unshuffle", small, 1, "h", &bd),
              DML_STATUS_INVALID_ARGUMENT, "the bound 2*h=1 is below 2");
  dml_onnx_dim_bound_t none[] = {{"3*h", 64}};
  CHECK_ERROR(import_bound("pixel_unshuffle", none, 1, "h", &bd),
              DML_STATUS_INVALID_ARGUMENT,
              "no graph input has a symbolic dim named '3*h'");
  /* another form stays one opaque symbol, bounded by its spelling */
  dml_onnx_dim_bound_t opaque[] = {{"h+1", 10}};
  CHECK_OK(import_bound("opaque_expr", opaque, 1, "h+1", &bd));
  CHECK(bd == 10);
}

static void test_pixel_unshuffle(void) {
  dml_onnx_dim_bound_t b[] = {{"batch", 4}, {"2*h", 64}, {"2*w", 64}};
  dml_rt_model_t *m = NULL;
  dml_rt_session_t *s = NULL;
  CHECK_OK(compile_st("pixel_unshuffle", b, 3, NULL, 0, &m));
  if (m) CHECK_OK(dml_rt_session_create(m, "cpu", &s));
  if (s) {
    check_case_tol(s, "pixel_unshuffle", "b", 1, 1e-5, 1e-5); /* [3,3,64,38] */
    check_case_tol(s, "pixel_unshuffle", "a", 1, 1e-5, 1e-5); /* [1,3,16,24] */
    float *z = NULL;
    int64_t odd[4] = {1, 3, 63, 64};
    CHECK_ERROR(set_zeros(s, 4, odd, &z), DML_STATUS_INVALID_ARGUMENT,
                "input 'x': dim 2 is 63, not a multiple of 2 (the dim is 2*h;");
    free(z);
    int64_t big[4] = {1, 3, 66, 64};
    CHECK_ERROR(set_zeros(s, 4, big, &z), DML_STATUS_OUT_OF_RANGE,
                "input 'x': h 33 exceeds the compiled bound 32 (dim 2 is 66 = 2*h, at "
                "most 64)");
    free(z);
  }
  dml_rt_session_release(s);
  dml_rt_model_release(m);
}

/* --input-shape on a dim declared 2*h: the step is the dim's, a multiple
 * of 2 (2 when not given). */
static void test_pixel_unshuffle_ranges(void) {
  dml_rt_model_t *m = NULL;
  dml_rt_session_t *s = NULL;
  dml_onnx_dim_range_t r[] = {{"x", 0, 1, 4, 0}, {"x", 2, 2, 64, 2}, {"x", 3, 2, 64, 0}};
  CHECK_OK(compile_st("pixel_unshuffle", NULL, 0, r, 3, &m));
  if (m) CHECK_OK(dml_rt_session_create(m, "cpu", &s));
  if (s) {
    check_case_tol(s, "pixel_unshuffle", "a", 1, 1e-5, 1e-5);
    check_case_tol(s, "pixel_unshuffle", "b", 1, 1e-5, 1e-5);
  }
  dml_rt_session_release(s);
  dml_rt_model_release(m);
  dml_onnx_dim_range_t four[] = {{"x", 2, 4, 64, 4}};
  CHECK_OK(compile_st("pixel_unshuffle", NULL, 0, four, 1, &m));
  s = NULL;
  if (m) CHECK_OK(dml_rt_session_create(m, "cpu", &s));
  if (s) {
    check_case_tol(s, "pixel_unshuffle", "a", 1, 1e-5, 1e-5); /* H 16 */
    float *z = NULL;
    int64_t six[4] = {1, 3, 6, 8}; /* even, not a multiple of 4 */
    CHECK_ERROR(set_zeros(s, 4, six, &z), DML_STATUS_INVALID_ARGUMENT,
                "dim 2 is 6, not a multiple of 4");
    free(z);
  }
  dml_rt_session_release(s);
  dml_rt_model_release(m);
  dml_onnx_dim_range_t three[] = {{"x", 2, 2, 63, 3}};
  CHECK_ERROR(compile_st("pixel_unshuffle", NULL, 0, three, 1, &m),
              DML_STATUS_INVALID_ARGUMENT, "must be a multiple of 2 too");
}

/* Reshape f32[N] -> [-1,2]: refused naming the form that works; with it,
 * exact. */
static void test_reshape_pairs(void) {
  dml_rt_model_t *m = NULL;
  CHECK_ERROR(compile_st("reshape_pairs", NULL, 0, NULL, 0, &m), DML_STATUS_UNIMPLEMENTED,
              "which a dim (value*symbol) cannot express; making the dims it divides "
              "multiples of what the division needs makes it one: dmlc compile "
              "--input-shape x=[2:64:2]");
  dml_onnx_dim_bound_t b[] = {{"N", 31}};
  CHECK_ERROR(compile_st("reshape_pairs", b, 1, NULL, 0, &m), DML_STATUS_UNIMPLEMENTED,
              "--input-shape x=[2:30:2]");
  dml_onnx_dim_range_t r[] = {{"x", 0, 2, 64, 2}};
  dml_rt_session_t *s = NULL;
  CHECK_OK(compile_st("reshape_pairs", NULL, 0, r, 1, &m));
  if (m) CHECK_OK(dml_rt_session_create(m, "cpu", &s));
  if (s) {
    check_case_tol(s, "reshape_pairs", "a", 1, 1e-30, 0); /* a copy: exact */
    check_case_tol(s, "reshape_pairs", "b", 1, 1e-30, 0);
    float *z = NULL;
    int64_t odd[1] = {7};
    CHECK_ERROR(set_zeros(s, 1, odd, &z), DML_STATUS_INVALID_ARGUMENT,
                "dim 0 is 7, not a multiple of 2");
    free(z);
  }
  dml_rt_session_release(s);
  dml_rt_model_release(m);
}

int main(void) {
  RUN(test_import_bounds);
  RUN(test_pixel_unshuffle);
  RUN(test_pixel_unshuffle_ranges);
  RUN(test_reshape_pairs);
  return dml_test_finish();
}
