/* every_op_check.h — how one case of the every-op differential test is run on
 * a device and counted, and the count line: shared by dml_every_op
 * (tests/check/every_op.c, which compiles and runs each case) and the
 * runtime-only dml_everyop_check (tests/cuda/everyop_check.c, which runs the
 * cases `dml_every_op --pack` compiled on another machine), so that both
 * count alike and print the same line. Runtime API only (dml_rt.h).
 *
 * The pack's manifest, DIR/cases.tsv (written by every_op.c, read by
 * everyop_check.c), is described by EO_MANIFEST_COLUMNS: one case a line,
 * tab-separated; '#' lines are the header ("# key value..."). */
#ifndef DML_EVERY_OP_CHECK_H_
#define DML_EVERY_OP_CHECK_H_

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "dml_rt.h"
#include "every_op_edges.h"

/* The manifest's columns: case id, status ("packed": the package
 * eo_<id>.dmlpkg compiled for cpu,<target>; "refused": the target refused
 * the form (UNIMPLEMENTED); "not_allowed": the compiler refuses the op on
 * this dtype; "fail": another compile error here; "known": a known failure
 * that failed to compile here), op, dtype, shape label ("random", "empty",
 * "row 70001", "2^24+3"), rows R, columns L (the first input [R, L]), the
 * op's tolerance class (ops.def), the known-failure reason ("-" when none;
 * the case must fail), the package file ("-" when none), the compile
 * error's reason ("-" when none). */
#define EO_MANIFEST_COLUMNS \
  "id\tstatus\top\tdtype\tshape\tR\tL\ttol_class\tknown\tpackage\treason"

/* The counts of a run (every_op.c's run and everyop_check.c's replay). */
typedef struct {
  int n_ops, n_covered;  /* ops of ops.def looked at; with a generator */
  int n_compiled;        /* cases compiled for cpu,<device> */
  int n_pass, n_known;   /* passed; known failures still failing */
  int n_fail;            /* disagreements and errors (and known ones passing) */
  int n_refused;         /* forms the target refused (UNIMPLEMENTED) */
  int n_nokernel;        /* compiled to no device kernel (folded, a view): not a pass */
  int n_notallowed;      /* op x dtype x shape tries the compiler refuses */
  int n_f64, n_f64_fail; /* the CPU's f32 against f64: ops run, failed */
} eo_counts_t;

/* Checks model `m` on `device` with dml_rt_check (seed `seed`, one
 * iteration of random and edge inputs; the op's tolerance class). Returns 1
 * when every kernel passed; 2 when the model has no device kernel (the
 * node was folded or became a view: nothing of the device's was checked);
 * else 0 with `what` saying which kernel and element (or the error). */
static int eo_check_model(const dml_rt_model_t *m, const char *device, uint64_t seed,
                          char *what, size_t wn) {
  dml_rt_check_report_t *rep = NULL;
  dml_rt_check_options_t opt;
  memset(&opt, 0, sizeof opt);
  opt.seed = seed;
  opt.iterations = 1;
  dml_status_t s = dml_rt_check(m, device, &opt, &rep);
  int passed = !s && rep && rep->n_failed == 0;
  what[0] = 0;
  if (passed) {
    uint32_t nk = 0;
    for (uint32_t k = 0; k < rep->n_kernels; k++)
      nk += strcmp(rep->kernels[k].name, "end-to-end") != 0;
    if (nk == 0) {
      passed = 2;
      snprintf(what, wn, "no device kernel");
    }
  }
  if (s)
    snprintf(what, wn, "%s", dml_status_reason(s));
  else if (rep)
    for (uint32_t k = 0; k < rep->n_kernels; k++)
      if (rep->kernels[k].checked && !rep->kernels[k].passed) {
        const dml_rt_check_kernel_t *o = &rep->kernels[k];
        snprintf(
            what, wn, "%s (%s, tol %g): error %.3g at %s[%lld]: %s %.9g, cpu %.9g (%s)",
            o->name, o->tol_class, o->tolerance, o->worst, o->value, (long long)o->index,
            device, o->device_value, o->cpu_value, o->inputs ? o->inputs : "");
        break;
      }
  dml_status_free(s);
  dml_rt_check_report_free(rep);
  return passed;
}

/* Counts a checked case (`passed` as eo_check_model returns it; `known`:
 * its known-failure reason, NULL when none) and prints it as dml_every_op
 * does (a FAIL line always; "ok"/"known"/"no kernel" lines when verbose).
 * Returns 1 when the case is a failure: it disagreed, or it is a known
 * failure that passed. */
static int eo_count_checked(eo_counts_t *c, int passed, const char *known, const char *op,
                            const char *dtype, const char *shape, const char *device,
                            const char *what, int verbose) {
  if (passed == 2 && !known) {
    c->n_nokernel++;
    if (verbose) printf("  no kernel %s %s %s\n", op, dtype, shape);
    return 0;
  }
  if (known) {
    c->n_known++;
    if (passed) {
      c->n_fail++;
      printf(
          "FAIL %s %s %s on %s: listed as a known failure (%s) but passes: remove it "
          "from k_known and docs/kernels.md\n",
          op, dtype, shape, device, known);
      return 1;
    }
    if (verbose) printf("  known %s %s %s: %s\n", op, dtype, shape, what);
    return 0;
  }
  if (!passed) {
    c->n_fail++;
    printf("FAIL %s %s %s on %s: %s\n", op, dtype, shape, device, what);
    return 1;
  }
  c->n_pass++;
  if (verbose) printf("  ok %s %s %s\n", op, dtype, shape);
  return 0;
}

/* The count line (the same words from both programs; `note` e.g.
 * " (compiled only)" or ""). */
static void eo_print_counts(const eo_counts_t *c, const char *backend, const char *note) {
  printf(
      "every_op on %s%s: %d ops, %d covered (%d without a generator); %d cases "
      "compiled, %d passed, %d known failures, %d failed, %d refused by the target, "
      "%d with no device kernel, %d op x dtype forms not allowed; cpu f32 vs f64: %d "
      "ops, %d failed\n",
      backend, note, c->n_ops, c->n_covered, c->n_ops - c->n_covered, c->n_compiled,
      c->n_pass, c->n_known, c->n_fail, c->n_refused, c->n_nokernel, c->n_notallowed,
      c->n_f64, c->n_f64_fail);
}

#endif /* DML_EVERY_OP_CHECK_H_ */
