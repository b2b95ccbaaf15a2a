/*
 * dmlc_cmds.h — the `dmlc` subcommands. Each takes argc/argv starting at
 * the subcommand's name (argv[0] == "compile"), prints its own --help, and
 * returns the process exit code (0 success, 1 failure, 2 usage error).
 * Library logic lives in the libraries; these only parse flags and print.
 */
#ifndef DMLC_CMDS_H_
#define DMLC_CMDS_H_

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

#endif /* DMLC_CMDS_H_ */
