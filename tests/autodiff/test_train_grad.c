/* test_train_grad.c — the training pass (passes/train.c) end to end against
 * PyTorch.
 *
 * tests/autodiff/data/ holds what scripts/gen_train_fixtures.py computed
 * with torch.nn.functional and torch.optim in float64 from the same f32
 * starting values: small models as IR text (Gemm+Relu+Gemm, with a
 * LogSoftmax or Sigmoid head, with a LayerNormalization, and
 * Conv+BatchNormalization+Relu+MaxPool+Flatten+Gemm), inputs, targets, and
 * per run (runs.txt: loss kind, optimizer, lr and the dml_train_config_t
 * fields) the reference vector run_<name>.npy: for each of 3 steps what
 * train_step returns (loss, correct, total) and every model global
 * (parameters, BN running statistics) after the step, then eval_step's
 * loss, correct and total.
 *
 * For each run the model goes through dml_train_build, the default
 * pipeline, a package in memory and the runtime; train_step runs 3 times
 * on the same batch and eval_step once after, sharing the globals.
 * Tolerance (f32 model against a float64 reference): loss and every global
 * |got - want| <= 1e-5 * max(1, |want|) at each step; correct and total
 * exactly. A mismatch names the run, the step, the global and the element.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dml_ir.h"
#include "dml_ir_text.h"
#include "dml_npy.h"
#include "dml_package_emit.h"
#include "dml_passes.h"
#include "dml_rt.h"
#include "dml_test.h"
#include "dml_train.h"

#define STEPS 3
#define TOL 1e-5
#define MAX_GLOBALS 16

typedef struct run_spec {
  char name[64], model[64], x[64], target[64], loss[64], optimizer[64];
  double lr;
  dml_train_config_t cfg;
} run_spec_t;

static double g_max_err; /* largest |got - want| / max(1, |want|) over all runs */

static const char *data_path(const char *file, char *buf, size_t cap) {
  char rel[256];
  snprintf(rel, sizeof rel, "tests/autodiff/data/%s", file);
  return dml_test_path("DMLC_SOURCE_DIR", rel, buf, cap);
}

/* Reads data/<stem>.npy (`prefix` + stem) into *t; the caller frees *buf. */
static int read_npy(const char *prefix, const char *stem, dml_tensor_t *t, void **buf) {
  char file[160], path[512];
  snprintf(file, sizeof file, "%s%s.npy", prefix, stem);
  dml_status_t st = dml_npy_read_file(data_path(file, path, sizeof path), t, buf);
  if (st) {
    CHECK_OK(st);
    return 0;
  }
  return 1;
}

/* One line of runs.txt: space-separated key=value. */
static int parse_run(char *line, run_spec_t *r) {
  memset(r, 0, sizeof *r);
  dml_train_config_init(&r->cfg);
  int have = 0;
  for (char *tok = strtok(line, " \n"); tok; tok = strtok(NULL, " \n")) {
    char *eq = strchr(tok, '=');
    if (!eq) return 0;
    *eq = 0;
    const char *k = tok, *v = eq + 1;
    dml_train_config_t *c = &r->cfg;
    char *strs[6] = {r->name, r->model, r->x, r->target, r->loss, r->optimizer};
    static const char *const keys[6] = {"name",   "model", "x",
                                        "target", "loss",  "optimizer"};
    int is_str = 0;
    for (int i = 0; i < 6 && !is_str; i++) {
      if (strcmp(k, keys[i]) != 0) continue;
      snprintf(strs[i], sizeof r->name, "%s", v);
      have++;
      is_str = 1;
    }
    if (is_str) continue;
    double *nums[11] = {&r->lr,           &c->momentum,       &c->beta1,
                        &c->beta2,        &c->epsilon,        &c->alpha,
                        &c->weight_decay, &c->clip_norm,      &c->clip_value,
                        &c->huber_delta,  &c->label_smoothing};
    static const char *const num_keys[11] = {
        "lr",         "momentum",    "beta1",          "beta2",
        "epsilon",    "alpha",       "weight_decay",   "clip_norm",
        "clip_value", "huber_delta", "label_smoothing"};
    int known = 0;
    for (int i = 0; i < 11 && !known; i++)
      if (!strcmp(k, num_keys[i])) {
        *nums[i] = strtod(v, NULL);
        known = 1;
      }
    if (!known) return 0;
  }
  if (have != 6) return 0;
  CHECK_OK(dml_loss_kind_parse(r->loss, &r->cfg.loss));
  CHECK_OK(dml_optimizer_kind_parse(r->optimizer, &r->cfg.optimizer));
  return 1;
}

static int near(double got, double want) {
  double e = fabs(got - want) / (fabs(want) > 1.0 ? fabs(want) : 1.0);
  if (e > g_max_err) g_max_err = e;
  return e <= TOL;
}

static double out_scalar(dml_rt_session_t *s, const char *name, int *ok) {
  int32_t i = dml_rt_session_find_output(s, name);
  dml_tensor_t t;
  if (i < 0 || dml_rt_session_get_output(s, (uint32_t)i, &t) != DML_OK) {
    *ok = 0;
    return 0.0;
  }
  *ok = 1;
  if (t.dtype == DML_DTYPE_F32) return ((const float *)t.data)[0];
  if (t.dtype == DML_DTYPE_I64) return (double)((const int64_t *)t.data)[0];
  return ((const double *)t.data)[0];
}

/* Compares a step's loss, correct and total (want[0..2]; correct and total
 * are -1 for the regression losses, which have no such outputs). Returns
 * the number of mismatches. */
static int check_outputs(const run_spec_t *r, const char *what, dml_rt_session_t *s,
                         const double *want) {
  static const char *const names[3] = {"loss", "correct", "total"};
  int bad = 0;
  for (int i = 0; i < 3; i++) {
    int have = 0;
    double got = out_scalar(s, names[i], &have);
    if (want[i] < 0) {
      CHECK(!have);
      continue;
    }
    CHECK(have);
    if (have && !(i == 0 ? near(got, want[i]) : got == want[i])) {
      bad++;
      fprintf(stderr, "run %s %s: %s %.9g, PyTorch %.9g\n", r->name, what, names[i], got,
              want[i]);
    }
  }
  return bad;
}

static void check_run(const run_spec_t *r) {
  char path[512], file[128];
  snprintf(file, sizeof file, "%s.dmlir", r->model);
  dml_ir_module_t *m = NULL;
  CHECK_OK(dml_ir_parse_file(data_path(file, path, sizeof path), &m));
  if (!m) return;
  /* The model's own globals, in file order, as the reference lays them out. */
  uint32_t ng = m->n_globals;
  CHECK(ng <= MAX_GLOBALS);
  if (ng > MAX_GLOBALS) ng = MAX_GLOBALS;
  char gname[MAX_GLOBALS][64];
  int64_t gnumel[MAX_GLOBALS];
  int64_t per_step = 3; /* loss, correct, total, then the globals */
  for (uint32_t i = 0; i < ng; i++) {
    snprintf(gname[i], sizeof gname[i], "%s", m->globals[i]->name);
    gnumel[i] = dml_ir_type_numel_bound(m, &m->globals[i]->type);
    per_step += gnumel[i];
  }
  dml_tensor_t x, t, want;
  void *xb = NULL, *tb = NULL, *wb = NULL;
  int ok = read_npy("in_", r->x, &x, &xb) & read_npy("in_", r->target, &t, &tb) &
           read_npy("run_", r->name, &want, &wb);
  CHECK(!ok || (want.dtype == DML_DTYPE_F64 && want.rank == 1 &&
                want.dims[0] == STEPS * per_step + 3));
  ok = ok && want.dims[0] == STEPS * per_step + 3;
  dml_train_config_t cfg = r->cfg;
  cfg.soft_targets = cfg.loss == DML_LOSS_CROSS_ENTROPY && t.dtype == DML_DTYPE_F32;
  dml_pass_options_t o;
  memset(&o, 0, sizeof o);
  o.verify_each = 1;
  if (ok) CHECK_OK(dml_pass_run_pipeline(m, "shape-infer", &o));
  dml_status_t st = ok ? dml_train_build(m, &cfg) : DML_OK;
  if (st) {
    fprintf(stderr, "run %s:\n", r->name);
    CHECK_OK(st);
    ok = 0;
  }
  void *bytes = NULL;
  size_t size = 0;
  dml_rt_model_t *model = NULL;
  dml_rt_session_t *ts = NULL, *es = NULL;
  if (ok) CHECK_OK(dml_pass_run_pipeline(m, dml_pass_default_pipeline(), &o));
  if (ok) CHECK_OK(dml_package_emit_memory(m, NULL, &bytes, &size));
  dml_ir_module_release(m);
  if (bytes) CHECK_OK(dml_rt_model_load_memory(bytes, size, &model));
  free(bytes);
  if (model) {
    CHECK_OK(dml_rt_session_create_function(model, "cpu", "train_step", NULL, &ts));
    if (ts) CHECK_OK(dml_rt_session_create_function(model, "cpu", "eval_step", ts, &es));
  }
  ok = ok && ts && es;
  float lr = (float)r->lr;
  dml_tensor_t tlr;
  memset(&tlr, 0, sizeof tlr);
  tlr.dtype = DML_DTYPE_F32;
  tlr.data = &lr;
  const double *w = ok ? (const double *)want.data : NULL;
  int bad = 0;
  for (int step = 0; step < STEPS && ok; step++) {
    const double *ws = w + step * per_step;
    CHECK_OK(dml_rt_session_set_input(ts, 0, &x));
    CHECK_OK(dml_rt_session_set_input_by_name(ts, "target", &t));
    CHECK_OK(dml_rt_session_set_input_by_name(ts, "lr", &tlr));
    st = dml_rt_session_run(ts);
    if (st) {
      CHECK_OK(st);
      ok = 0;
      break;
    }
    char what[64];
    snprintf(what, sizeof what, "train_step %d", step + 1);
    bad += check_outputs(r, what, ts, ws);
    int64_t off = 3;
    for (uint32_t gi = 0; gi < ng; gi++) {
      int32_t idx = dml_rt_model_find_global(model, gname[gi]);
      dml_tensor_t gv;
      CHECK(idx >= 0);
      if (idx < 0 || dml_rt_session_global(ts, (uint32_t)idx, &gv) != DML_OK) {
        ok = 0;
        break;
      }
      CHECK(gv.dtype == DML_DTYPE_F32 && dml_dims_numel(gv.dims, gv.rank) == gnumel[gi]);
      for (int64_t e = 0; e < gnumel[gi] && gv.dtype == DML_DTYPE_F32; e++) {
        double got = ((const float *)gv.data)[e], exp = ws[off + e];
        if (!near(got, exp) && bad++ < 10)
          fprintf(stderr, "run %s step %d: %s[%lld] = %.9g, PyTorch %.9g\n", r->name,
                  step + 1, gname[gi], (long long)e, got, exp);
      }
      off += gnumel[gi];
    }
  }
  if (ok) {
    /* The step counter, when the optimizer keeps one. */
    int32_t si = dml_rt_model_find_global(model, "optimizer.step");
    dml_tensor_t sv;
    if (si >= 0 && dml_rt_session_global(ts, (uint32_t)si, &sv) == DML_OK)
      CHECK(sv.dtype == DML_DTYPE_F32 && ((const float *)sv.data)[0] == (float)STEPS);
    /* eval_step after the 3 steps: inference mode (BN running statistics). */
    CHECK_OK(dml_rt_session_set_input(es, 0, &x));
    CHECK_OK(dml_rt_session_set_input_by_name(es, "target", &t));
    CHECK_OK(dml_rt_session_run(es));
    bad += check_outputs(r, "eval_step", es, w + STEPS * per_step);
  }
  CHECK(ok);
  CHECK(bad == 0);
  if (bad || !ok) fprintf(stderr, "FAILED run: %s\n", r->name);
  dml_rt_session_release(es);
  dml_rt_session_release(ts);
  dml_rt_model_release(model);
  free(xb);
  free(tb);
  free(wb);
}

static void test_runs_match_pytorch(void) {
  char path[512];
  FILE *f = fopen(data_path("runs.txt", path, sizeof path), "r");
  CHECK(f != NULL);
  if (!f) return;
  const char *only = getenv("DMLC_TRAIN_RUN"); /* one run when debugging */
  char line[1024];
  int runs = 0;
  while (fgets(line, sizeof line, f)) {
    if (line[0] == '#' || line[0] == '\n') continue;
    run_spec_t r;
    int parsed = parse_run(line, &r);
    CHECK(parsed);
    if (!parsed || (only && strcmp(only, r.name) != 0)) continue;
    check_run(&r);
    runs++;
  }
  fclose(f);
  printf(
      "%d runs compared with PyTorch; largest relative difference %.3g (tolerance %g)\n",
      runs, g_max_err, TOL);
  CHECK(only || runs >= 30);
}

int main(void) {
  setvbuf(stdout, NULL, _IONBF, 0);
  RUN(test_runs_match_pytorch);
  return dml_test_finish();
}
