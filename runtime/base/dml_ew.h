/*
 * dml_ew.h — the elementwise formula table (ew_ops.def): which ops it
 * defines and their attributes. Each layer expands ew_ops.def's formulas
 * with its own primitives (CPU: runtime/cpu/cpu_ew_table.c; GPU kernel
 * IR: codegen/kernel_math.c; VJP: passes/autodiff.c).
 */
#ifndef DML_EW_H_
#define DML_EW_H_

#include <stddef.h>

#include "dml_ops.h"
#include "dml_status.h"
#include "dml_types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Attributes of a table op at most (A0, A1, A2). */
#define DML_EW_MAX_ATTRS 3

/* 1 when ew_ops.def defines `op` (one float input, one output of its
 * shape and dtype). */
int dml_ew_has(dml_op_t op);

/* 1 when ew_ops.def's DML_EWN defines `op` (a unary op without
 * attributes computed in its input's dtype: Abs, Neg, Relu, Sign,
 * Reciprocal, Exp, Log, Sqrt, Sigmoid, Tanh, Sin, Cos, Floor, Ceil,
 * Round). */
int dml_ewn_has(dml_op_t op);

/* 1 when DML_EWN's `op` has an integer form (its INTS column). */
int dml_ewn_ints(dml_op_t op);

/* 1 when ew_ops.def's DML_EW2 defines `op` (a binary op: Add, Sub, Mul,
 * Div, Pow, Mod, Max, Min, PRelu). */
int dml_ew2_has(dml_op_t op);

/* The value of a DML_EWN op at x (y unused) or of a DML_EW2 op at x, y,
 * in double with the C library's functions (the CPU's f64 forms), with
 * attribute values `a` (dml_ew_attrs; NULL: all 0); NaN for another op.
 * For compile-time folding (ir/infer.c). */
double dml_ew_f64(dml_op_t op, const double *a, double x, double y);

/* The values of `op`'s attributes A0.. in `out` (defaults for absent
 * ones; a string attribute as 0 or 1, its first or second value), for the
 * ops of DML_EW and DML_EW2.
 * Errors (op: the op's name): INVALID_ARGUMENT for a float that must not
 * be 0 and is, or a string of another value (naming the attribute and
 * value); INVALID_ARGUMENT when `op` is not a table op. */
dml_status_t dml_ew_attrs(dml_op_t op, const dml_attr_t *attrs, size_t n_attrs,
                          double out[DML_EW_MAX_ATTRS]);

#ifdef __cplusplus
}
#endif

#endif /* DML_EW_H_ */
