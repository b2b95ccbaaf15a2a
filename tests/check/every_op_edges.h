/* every_op_edges.h — the edge values of the every-op differential test
 * (tests/check/every_op.c), shared with the eager tensor tests' per-device
 * every-op check (tests/tensor/test_tensor_vulkan.c test_table_ops). */
#ifndef DML_EVERY_OP_EDGES_H_
#define DML_EVERY_OP_EDGES_H_

#include <math.h>

/* The edge values every op is fed (every_op.c's edge inputs; the eager
 * tensor tests' per-device every-op check, tests/tensor): NaN, the
 * infinities, signed zeros, subnormals (the smallest one included), tiny
 * and huge values near f32's range, and ordinary ones. */
static const float eo_edges[] = {NAN,     INFINITY, -INFINITY, 0.0f,    -0.0f, 1e-40f,
                                 -1e-40f, 1.4e-45f, 1e-30f,    -1e-30f, 1e30f, -1e30f,
                                 1e15f,   -1e15f,   1.0f,      -1.0f,   0.5f,  -0.5f,
                                 3e38f,   -3e38f,   2.0f,      -2.0f,   88.0f, -100.0f};
#define EO_N_EDGES (sizeof eo_edges / sizeof eo_edges[0])

#endif /* DML_EVERY_OP_EDGES_H_ */
