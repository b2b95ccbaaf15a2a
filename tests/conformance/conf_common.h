/*
 * conf_common.h — what the ONNX conformance runners share: dml_conformance
 * (conformance.c: compiles and runs ONNX's backend tests, or emits them as
 * packages with --emit) and dml_conformance_run (conformance_run.c: runs
 * emitted packages on a device with the runtime alone). Both compare
 * outputs with the same rules and tolerances (conf_compare_output), run
 * each test in a forked child under a time limit (conf_run_all), and check
 * results against a per-device expected-failure list (conf_load_expected,
 * conf_apply_expected). Uses the runtime only (dml_rt.h): it builds with
 * -DDMLC_RUNTIME_ONLY=ON.
 *
 * Out-of-memory in the x* helpers exits with status 2 (test tool, not
 * library code).
 */
#ifndef CONF_COMMON_H_
#define CONF_COMMON_H_

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "dml_rt.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A float output passes when |got - want| <= CONF_ABS_TOL + CONF_REL_TOL *
 * |want| for every element (NaN equals NaN); integers and bools exactly. */
#define CONF_REL_TOL 1e-3
#define CONF_ABS_TOL 1e-5
/* Longest message kept per result (bytes). */
#define CONF_MAX_MSG 600
/* The failure kind of a test that passes only with --specialize. */
#define CONF_KIND_SPECIALIZED "passes only specialized"

/* ==== small helpers (exit(2) when out of memory) ========================= */

void *conf_xcalloc(size_t n, size_t size);
char *conf_xstrdup(const char *s);
char *conf_xprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* A growing string (zero-initialize; free s). */
typedef struct conf_sbuf {
  char *s;
  size_t len, cap;
} conf_sbuf_t;

/* Appends printf-formatted text to b. */
void conf_sb_add(conf_sbuf_t *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* qsort comparator of char* */
int conf_cmp_str(const void *a, const void *b);
/* Sorted names of the entries of `dir` starting with `prefix` (NULL: all
 * but dot files); an unreadable dir gives none. Free with conf_free_list. */
char **conf_list_dir(const char *dir, const char *prefix, size_t *out_n);
void conf_free_list(char **v, size_t n);
/* 1 when p is a regular file */
int conf_file_exists(const char *p);
/* Reads a whole file (NUL-terminated, caller frees); -1 when it cannot. */
int conf_read_file(const char *path, uint8_t **out, size_t *out_len);
/* One line of text in place: newlines and tabs become spaces, cut at `max`
 * bytes (ending "..."). */
void conf_one_line(char *s, size_t max);
/* 1 when the comma-separated list csv has `name` */
int conf_list_has(const char *csv, const char *name);
/* --filter: 1 when `filter` is NULL or `name` contains one of its
 * comma-separated substrings. */
int conf_filter_match(const char *filter, const char *name);

/* ==== results ============================================================ */

enum { CONF_ST_PASS, CONF_ST_FAIL, CONF_ST_SKIP, CONF_ST_XFAIL, CONF_ST_XPASS };
/* "pass", "fail", "skip", "xfail", "xpass", indexed by CONF_ST_* */
extern const char *const conf_status_names[5];

/* One test's result. */
typedef struct conf_result {
  const char *suite;
  char *name;
  int status;      /* CONF_ST_* (xfail/xpass once the list is applied) */
  char *kind;      /* failure or skip reason kind; NULL on pass */
  char *message;   /* details (one line) */
  char *bad_ops;   /* "unsupported op": the op names, comma-separated */
  char *output;    /* "wrong values": the output's name */
  double max_err;  /* "wrong values": max abs error */
  long long index; /* "wrong values": flat index of the first failing element */
  char *special;   /* specialized input names, comma-separated; NULL when none */
  /* inputs compiled with their fed shape, comma-separated; NULL when none */
  char *redeclared;
  int statistical; /* checked by shape/dtype/value set (random outputs) */
  char **ops;      /* op types of the model's top-level nodes (unique, sorted) */
  size_t n_ops;
  int opset;            /* the model's default-domain opset (0: none or no model) */
  const char *expected; /* the list's reason, when listed */
  double seconds;
  /* dml_conformance --emit: the test was written (its files' bytes) */
  int emitted;
  long long emitted_bytes;
} conf_result_t;

/* Frees what r owns (not suite, not expected). */
void conf_result_free(conf_result_t *r);

/* What a child sends back: "key\tvalue\n" lines, values one-lined. Keys:
 * pass, kind, message, bad_ops, output, max_err, index, special,
 * redeclared, statistical, emitted (bytes written by --emit), skipped (the
 * kind is a skip, not a failure); other keys are ignored. */
void conf_emit_kv(conf_sbuf_t *b, const char *k, const char *v);

/* A status as one line: "op: reason; detail; detail" (no "error: "), at
 * most CONF_MAX_MSG bytes; caller frees. */
char *conf_status_text(dml_status_t s);

/* ==== comparison ========================================================= */

/* 1 for tests whose outputs are random (Bernoulli, training-mode Dropout
 * with a ratio > 0): checked by shape, dtype, value set and a statistic. */
int conf_is_random_test(const char *name);

/* The outcome of comparing outputs: kind NULL when they agree. */
typedef struct conf_verdict {
  const char *kind; /* NULL: ok; "wrong shape/dtype", "wrong values", ... */
  char *message;    /* malloc'd */
  char *output;     /* malloc'd output name */
  double max_err;
  long long index;
} conf_verdict_t;

/* Compares output `oi` named `oname` of test `test`: dtype and shape
 * exactly, values with the tolerance above, random tests statistically
 * (docs/conformance.md). `x`/`ratio` are the random ops' input 0 and
 * Dropout's ratio and `out0` output 0 (NULL when not a random test's
 * tensor output). Fills *v on a mismatch (v->kind set). */
void conf_compare_output(const char *test, const char *oname, uint32_t oi,
                         const dml_tensor_t *got, const dml_tensor_t *want,
                         const dml_tensor_t *x, double ratio, const dml_tensor_t *out0,
                         conf_verdict_t *v);

/* ==== scheduling ========================================================= */

/* A test's work, run in a forked child: writes conf_emit_kv lines to out. */
typedef void (*conf_child_fn)(const char *dir, const conf_result_t *r, conf_sbuf_t *out);

/* Per-test time limit in seconds (default 20). */
extern int conf_timeout_s;

/* Monotonic time, seconds. */
double conf_now_s(void);

/* Runs child(dirs[i], pending[i]) for every i, `jobs` children at a time, each
 * under alarm(conf_timeout_s), and fills pending[i] from its lines: a child
 * killed by a signal is "runtime error: crashed: SIGSEGV (...)" or "timed
 * out after N s (SIGALRM)"; one that says nothing a runtime error too.
 * `verbose`: one line per test on stderr. */
void conf_run_all(conf_result_t **pending, char **dirs, size_t n, int jobs, int verbose,
                  conf_child_fn child);

/* ==== expected-failure lists ============================================= */

/* A list: one line per test, "<suite>/<test> <reason>"; '#' comments. */
typedef struct conf_expected {
  char **keys; /* "suite/test" */
  char **reasons;
  int *used;
  size_t n;
} conf_expected_t;

/* Loads `path`: 0, -1 when it cannot be read, -2 when an entry has no
 * reason (printed on stderr). */
int conf_load_expected(const char *path, conf_expected_t *e);
void conf_expected_free(conf_expected_t *e);
/* Index of suite/name in e, or -1. */
long conf_find_expected(const conf_expected_t *e, const char *suite, const char *name);
/* The reason written to a list for a failure or skip (caller frees). */
char *conf_generated_reason(const conf_result_t *r);
/* Applies the list: a listed pass becomes xpass, a listed failure xfail.
 * Unless `update`, prints every unexpected result (a failure or skip not
 * listed, a listed pass) and, when `all` (no --suites/--filter), the
 * entries naming no test. Returns the number of unexpected results. */
int conf_apply_expected(conf_result_t *rs, size_t n, conf_expected_t *e, int update,
                        int all);
/* Rewrites `path` from results rs: every failing or skipped test, with
 * its old reason from `old` where listed and still of the same kind (the
 * reason starts with the result's kind), else the result's own. The file's leading
 * comment stays; a new file gets `header` (may be NULL). 0 or -1. */
int conf_write_expected(const char *path, const conf_result_t *rs, size_t n,
                        const conf_expected_t *old, const char *header);

/* ==== reports ============================================================ */

/* Writes s as a JSON string (quoted, escaped). */
void conf_json_str(FILE *f, const char *s);
/* Writes a comma-separated list as a JSON array of strings. */
void conf_json_list(FILE *f, const char *csv);
/* Every result as JSON (the tolerance, then one object per test). 0 or -1. */
int conf_write_json(const char *path, conf_result_t *rs, size_t n);

int conf_is_fail(int st); /* fail or xfail */
int conf_is_pass(int st); /* pass or xpass */

/* The suites of ONNX's backend tests, in the runners' order. */
extern const char *const conf_suite_names[5];
#define CONF_N_SUITES 5

/* Counts of results. */
typedef struct conf_counts {
  int pass, special, fail, skip, total;
} conf_counts_t;

/* Counts the results of `suite` (NULL: all). */
void conf_count(const conf_result_t *rs, size_t n, const char *suite, conf_counts_t *c);

/* ==== the runners' shared command line and report ======================== */

/* The options both runners take. */
typedef struct conf_opts {
  const char *prog;   /* "dml_conformance" or "dml_conformance_run" (messages) */
  const char *device; /* --device: "cpu" (default), "vulkan[:N]", "cuda[:N]" */
  const char *expected_path, *json_path, *suites, *filter, *expect_device;
  int update, jobs, verbose; /* --update-expected, -j (default 2), -v */
} conf_opts_t;

/* Takes argv[*i] when it is a flag both runners share (--device,
 * --expected, --json, --suites, --filter, --expect-device, -j, --timeout,
 * --update-expected, -v), advancing *i past its value. 1 when taken. */
int conf_take_flag(conf_opts_t *o, int argc, char **argv, int *i);

/* After the flags: clamps -j and --timeout to at least 1, checks that
 * --update-expected has --expected and a run over every test (no --suites
 * or --filter), and loads the list into *exp (zeroed first). Returns 0, or
 * the runner's exit status: 2 for a usage or read error, 1 for a list
 * entry without a reason. */
int conf_opts_check(conf_opts_t *o, conf_expected_t *exp);

/* Prints "<suite>: P passed, F failed, S skipped" for each suite run. */
void conf_print_suite_counts(const conf_result_t *rs, size_t n);

/* The end of a run: prints the unexpected count (unless updating) and the
 * totals, writes --json, rewrites --expected when updating (a new file
 * gets `header`), and returns the exit status: `rc` when non-zero, else 2
 * when a file cannot be written, 1 when results are unexpected, else 0. */
int conf_finish_run(const conf_opts_t *o, const conf_result_t *rs, size_t n,
                    const conf_expected_t *exp, int unexpected, const char *header,
                    int rc);

/* Frees the n results, their directories and `exp`, then rs and dirs. */
void conf_free_run(conf_result_t *rs, char **dirs, size_t n, conf_expected_t *exp);

#ifdef __cplusplus
}
#endif
#endif /* CONF_COMMON_H_ */
