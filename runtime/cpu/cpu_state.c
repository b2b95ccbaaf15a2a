/*
 * cpu_state.c — Assign(@global, value): writes `value` into the global's
 * storage in place (ops.def, "state"). The executor passes the global's
 * current, writable storage as input 0 (rt_session.c: a package with an
 * Assign gets writable copies of its globals); this is the only kernel that
 * writes through an input.
 */
#include <string.h>

#include "cpu_internal.h"

dml_status_t dml_cpuk_Assign(const dml_cpu_call_t *c) {
  const dml_tensor_t *g = &c->inputs[0], *v = &c->inputs[1];
  if (g->dtype != v->dtype)
    return dml_cpu_err_shapes(c, "value dtype %s differs from the global's %s",
                              dml_dtype_name(v->dtype), dml_dtype_name(g->dtype));
  if (g->rank != v->rank)
    return dml_cpu_err_shapes(c, "value shape differs from the global's");
  for (int32_t d = 0; d < g->rank; d++)
    if (g->dims[d] != v->dims[d])
      return dml_cpu_err_shapes(c, "value shape differs from the global's");
  size_t nb = dml_tensor_bytes(v);
  if (nb && g->data != v->data) memmove(g->data, v->data, nb);
  return DML_OK;
}
