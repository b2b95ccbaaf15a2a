/*
 * cpu_index.h — kernels of the indexing, sampling and Einsum family
 * (cpu_index.c, cpu_einsum.c, cpu_sample.c); cpu_dispatch.c puts them in
 * the op table. Conventions as in cpu_internal.h.
 */
#ifndef DML_CPU_INDEX_H_
#define DML_CPU_INDEX_H_

#include "cpu_internal.h"

/* cpu_index.c: data movement by element size (every dtype), indices i32/i64 */
DML_CPU_DECL(GatherElements)
DML_CPU_DECL(ScatterElements)
DML_CPU_DECL(GatherND)
DML_CPU_DECL(ScatterND)
DML_CPU_DECL(OneHot)
DML_CPU_DECL(DepthToSpace)
DML_CPU_DECL(SpaceToDepth)
DML_CPU_DECL_S(TopK)
DML_CPU_DECL(ReverseSequence)
DML_CPU_DECL(MaxUnpool)
/* cpu_einsum.c */
DML_CPU_DECL_S(Einsum)
DML_CPU_DECL_S(Det)
/* cpu_sample.c */
DML_CPU_DECL(GridSample)
DML_CPU_DECL(RoiAlign)

#endif /* DML_CPU_INDEX_H_ */
