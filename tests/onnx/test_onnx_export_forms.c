/*
 * test_onnx_export_forms.c — dml_onnx_export_module on IR forms that are not
 * an ONNX node as they are (frontends/onnx/onnx_export.c): the IR's `axes`
 * attribute of a reduction and of Squeeze (the form passes write) becomes a
 * Constant feeding input 1 (ReduceMean-18, Squeeze-13), and Pad (data, pads,
 * value) is written as Pad-18+ without its axes input. The file imports
 * back into those ops with the axes as a constant input, and runs on the CPU
 * to the values computed here (and ReduceMean-17, whose axes are an
 * attribute the importer normalizes, is still refused by name). The ONNX
 * Runtime side of the same forms: ctest graphgen_ort.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dml_ir_text.h"
#include "onnx_run_util.h"

static const char kText[] =
    "global @p : i64[6] = dense<[0, 1, 2, 0, 2, 1]>\n"
    "global @v : f32[] = dense<[0.5]>\n"
    "func @forward(%x: f32[2,3,4]) -> (f32[2,1,4], f32[2,6,7], f32[2,4], f32[2,3,5]) {\n"
    "  %a = ReduceMean(%x) {axes = [1], keepdims = 1} : f32[2,1,4]\n"
    "  %b = Pad(%x, @p) {mode = \"reflect\"} : f32[2,6,7]\n"
    "  %c = Squeeze(%a) {axes = [1]} : f32[2,4]\n"
    "  %d = Pad(%x, @q, @v) {mode = \"constant\"} : f32[2,3,5]\n"
    "  return %a, %b, %c, %d\n"
    "}\n";

/* the IR node of `op` in the only function of m, or NULL */
static const dml_ir_node_t *find_op(const dml_ir_module_t *m, dml_op_t op) {
  if (!m || m->n_functions != 1) return NULL;
  for (const dml_ir_node_t *n = m->functions[0]->first; n; n = n->next)
    if (n->op == op) return n;
  return NULL;
}

static void test_forms(void) {
  /* @q: constant Pad of the last dim by 1 before; the text's @q line */
  char text[2048];
  snprintf(text, sizeof text, "global @q : i64[6] = dense<[0, 0, 1, 0, 0, 0]>\n%s",
           kText);
  dml_ir_module_t *m = NULL;
  CHECK_OK(dml_ir_parse(text, strlen(text), "forms.dmlir", &m));
  if (!m) return;
  char path[64];
  snprintf(path, sizeof path, "/tmp/dmlc_test_export_forms_%ld.onnx", (long)getpid());
  dml_onnx_export_options_t eo;
  memset(&eo, 0, sizeof eo);
  eo.opset = 17; /* ReduceMean-17 takes its axes as an attribute: refused */
  dml_status_t st = dml_onnx_export_module(m, path, &eo);
  CHECK(st && dml_status_code(st) == DML_STATUS_UNIMPLEMENTED &&
        strstr(dml_status_details(st), "ReduceMean"));
  dml_status_free(st);
  eo.opset = 20;
  CHECK_OK(dml_onnx_export_module(m, path, &eo));
  dml_ir_module_release(m);
  size_t len = 0;
  uint8_t *bytes = read_all(path, &len);
  CHECK(bytes != NULL);
  dml_ir_module_t *back = NULL;
  CHECK_OK(dml_onnx_import_file(path, NULL, &back));
  unlink(path);
  /* the axes came back as constant inputs */
  const dml_ir_node_t *rm = find_op(back, DML_OP_REDUCE_MEAN);
  const dml_ir_node_t *sq = find_op(back, DML_OP_SQUEEZE);
  const dml_ir_node_t *pad = find_op(back, DML_OP_PAD);
  CHECK(rm && rm->n_inputs == 2 && rm->inputs[1] && rm->inputs[1]->data &&
        rm->inputs[1]->type.dtype == DML_DTYPE_I64 &&
        ((const int64_t *)rm->inputs[1]->data)[0] == 1 && !dml_ir_node_attr(rm, "axes"));
  CHECK(sq && sq->n_inputs == 2 && sq->inputs[1] && sq->inputs[1]->data &&
        ((const int64_t *)sq->inputs[1]->data)[0] == 1 && !dml_ir_node_attr(sq, "axes"));
  CHECK(pad && pad->n_inputs <= 3);
  dml_ir_module_release(back);
  if (!bytes) return;
  /* and compute what the IR did */
  void *pkg = NULL;
  size_t pkg_size = 0;
  CHECK_OK(
      dml_compile_onnx_memory(bytes, len, NULL, "forms", NULL, &pkg, &pkg_size, NULL));
  free(bytes);
  dml_rt_model_t *rt = NULL;
  dml_rt_session_t *s = NULL;
  if (pkg) CHECK_OK(dml_rt_model_load_memory(pkg, pkg_size, &rt));
  free(pkg);
  if (rt) CHECK_OK(dml_rt_session_create(rt, "cpu", &s));
  if (!s) {
    dml_rt_model_release(rt);
    return;
  }
  float x[24];
  for (int i = 0; i < 24; i++) x[i] = (float)(i * i % 7) - 2.5f;
  dml_tensor_t t = {DML_DTYPE_F32, 3, {2, 3, 4}, x};
  CHECK_OK(dml_rt_session_set_input(s, 0, &t));
  CHECK_OK(dml_rt_session_run(s));
  dml_tensor_t o[4];
  for (uint32_t k = 0; k < 4; k++) CHECK_OK(dml_rt_session_get_output(s, k, &o[k]));
  int64_t want_dims[4][3] = {{2, 1, 4}, {2, 6, 7}, {2, 4, 0}, {2, 3, 5}};
  int32_t want_rank[4] = {3, 3, 2, 3};
  for (int k = 0; k < 4; k++) {
    CHECK(o[k].rank == want_rank[k]);
    for (int d = 0; d < want_rank[k] && o[k].rank == want_rank[k]; d++)
      CHECK(o[k].dims[d] == want_dims[k][d]);
  }
  const float *a = (const float *)o[0].data, *b = (const float *)o[1].data;
  const float *c = (const float *)o[2].data, *e = (const float *)o[3].data;
  for (int n = 0; n < 2; n++)
    for (int k = 0; k < 4; k++) {
      double mean = ((double)x[n * 12 + k] + x[n * 12 + 4 + k] + x[n * 12 + 8 + k]) / 3;
      CHECK(fabs(a[n * 4 + k] - mean) <= 1e-6);
      CHECK(c[n * 4 + k] == a[n * 4 + k]);
    }
  /* reflect: dim 1 padded 1 before, 2 after; dim 2 padded 2 before, 1 after */
  for (int n = 0; n < 2; n++)
    for (int i = 0; i < 6; i++)
      for (int j = 0; j < 7; j++) {
        int si = i - 1, sj = j - 2;
        si = si < 0 ? -si : si > 2 ? 4 - si : si;
        sj = sj < 0 ? -sj : sj > 3 ? 6 - sj : sj;
        CHECK(b[(n * 6 + i) * 7 + j] == x[n * 12 + si * 4 + sj]);
      }
  for (int n = 0; n < 2; n++)
    for (int i = 0; i < 3; i++)
      for (int j = 0; j < 5; j++)
        CHECK(e[(n * 3 + i) * 5 + j] == (j ? x[n * 12 + i * 4 + j - 1] : 0.5f));
  dml_rt_session_release(s);
  dml_rt_model_release(rt);
}

int main(void) {
  RUN(test_forms);
  return dml_test_finish();
}
