/*
 * dmlc_cmds.h — the `dmlc` subcommands. Each takes argc/argv starting at
 * the subcommand's name (argv[0] == "compile"), prints its own --help, and
 * returns the process exit code (0 success, 1 failure, 2 usage error).
 * Library logic lives in the libraries; these only parse flags and print.
 */
#ifndef DMLC_CMDS_H_
#define DMLC_CMDS_H_

#include <stdio.h>

#include "dml_rt.h"
#include "dml_status.h"

int dmlc_cmd_compile(int argc, char **argv);
int dmlc_cmd_run(int argc, char **argv);
int dmlc_cmd_opt(int argc, char **argv);
int dmlc_cmd_inspect(int argc, char **argv);
int dmlc_cmd_summary(int argc, char **argv);
int dmlc_cmd_serve(int argc, char **argv);
int dmlc_cmd_train(int argc, char **argv);
int dmlc_cmd_eval(int argc, char **argv);
int dmlc_cmd_devices(int argc, char **argv);
int dmlc_cmd_bench(int argc, char **argv);
int dmlc_cmd_check(int argc, char **argv);
int dmlc_cmd_quantize(int argc, char **argv);
int dmlc_cmd_strip(int argc, char **argv);

/* Prints `status` to stderr as "error: <op>: <reason>" plus indented
 * details, frees it, and returns 1. */
int dmlc_report(dml_status_t status);

/* A usage error of `dmlc <cmd>`: prints "error: dmlc <cmd>: <message>" and
 * one line pointing at `dmlc <cmd> --help` (not the whole help) to stderr
 * and returns 2, the usage-error exit code. `cmd` NULL: `dmlc` itself. */
int dmlc_usage_error(const char *cmd, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Prints the line "see 'dmlc <cmd> --help' for the usage and flags" to
 * stderr (after an error printed otherwise) and returns 1. */
int dmlc_usage_hint(const char *cmd);

/* The value of flag `flag` at argv[*i], given as "FLAG VALUE" (then *i
 * moves to VALUE) or "FLAG=VALUE"; "" when FLAG is the last argument (the
 * caller reports the missing value); NULL when argv[*i] is not `flag`. */
const char *dmlc_flag_value(int argc, char **argv, int *i, const char *flag);

/* ---- --json output (the commands' machine-readable form) ----
 * Hand-written rather than cJSON: inspect, bench and devices are in the
 * runtime-only dmlc, which links libc and libm alone. */

/* Writes `s` as a JSON string: quoted, `"` `\` and control characters
 * escaped, valid UTF-8 passed through, any other byte as U+FFFD (JSON text
 * is UTF-8: a name read from a package may be anything). NULL as null. */
void dmlc_json_str(FILE *f, const char *s);

/* Writes `v` as a JSON number in its shortest form that reads back to the
 * same double (%.15g, else %.17g); NaN and +-inf, which JSON lacks, as
 * null. */
void dmlc_json_num(FILE *f, double v);

/* The control-flow regions of session `s` (dml_rt_session_region: an If's
 * branches, a Loop's body; nested ones too), where they ran. `note`:
 * prints "note: node 'N' (If) then: <why>" on stderr for each region that
 * runs with the CPU kernels on a GPU session (dml_rt_session_fallback of
 * its session), nothing otherwise. `json`: writes them as a JSON array of
 * {"node", "op", "role", "function", "device", "runs", "runs_total",
 * "kernels": [{"name", "ms"}], "regions": [...]} ("kernels" lists the
 * device kernels of the region's last run, empty on the CPU). `text`:
 * one line per region ("region: node 'N' (If) then, function 'F', on
 * DEVICE: R run(s) in the last run, kernels: k0_elementwise, k1_host"; a
 * host entry of the region's own CPU fall-back ends in _host), indented
 * by depth; with ran_only those that ran in the last run alone. */
void dmlc_regions_note(const dml_rt_session_t *s);
void dmlc_regions_json(FILE *f, const dml_rt_session_t *s);
void dmlc_regions_text(FILE *f, const dml_rt_session_t *s, int ran_only, int depth);

/* For --json on commands whose library code prints progress to stdout
 * (train, eval): points stdout (fd 1 and the FILE, line-buffered) at
 * stderr for the rest of the process and returns a stream on the original
 * stdout for the one JSON object; NULL (errno set) when the descriptors
 * cannot be duplicated. Call it before anything is printed to stdout. */
FILE *dmlc_json_stdout(void);

/* --threads N of run, bench, serve, train, eval: N in 1..64 sets the CPU
 * kernels' threads (dml_cpu_set_num_threads) and returns 1; else prints a
 * usage error of `cmd` and returns 0. */
int dmlc_set_threads(const char *cmd, const char *v);

/* The progress line of long compiles (cmd_compile.c, full builds only):
 * started with the command's name, it shows on stderr, once more than a
 * second has passed, the stage dmlc_progress_stage last named (the
 * dml_compile_options_t progress callback) and the seconds; on a terminal
 * as one line rewritten in place and cleared by dmlc_progress_end, else
 * (only when `force`: --progress) as plain lines, at each new stage and
 * every 10 s. NULL (nothing shown; the calls below accept it) when stderr
 * is not a terminal and not `force`. */
typedef struct dmlc_progress dmlc_progress_t;
dmlc_progress_t *dmlc_progress_start(const char *what, int force);
void dmlc_progress_stage(void *ctx, const char *stage);
void dmlc_progress_end(dmlc_progress_t *p);

#endif /* DMLC_CMDS_H_ */
