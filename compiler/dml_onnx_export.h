/*
 * dml_onnx_export.h — write an ONNX model with trained weights.
 *
 * `dmlc train --export-onnx`: the original ONNX model (the inference graph
 * `dmlc train` compiled) is read with protobuf-c, each initializer whose
 * name is a global of the trained package flagged PARAM or STATE gets that
 * global's current value (as raw_data, little-endian; its typed data and
 * any external-data reference are dropped), Dropout nodes lose their
 * training_mode input (so the graph is the inference graph: Dropout is the
 * identity, as in the package's forward), and the model is written
 * atomically (temporary file, fsync, rename). The rest of the graph and the
 * other initializers are kept as they are.
 *
 * Errors (op "onnx.export"): NOT_FOUND / IO naming the paths; DATA_LOSS for
 * an ONNX file protobuf-c cannot parse; FAILED_PRECONDITION when an
 * initializer and its global differ in dtype or shape (named);
 * RESOURCE_EXHAUSTED.
 */
#ifndef DML_ONNX_EXPORT_H_
#define DML_ONNX_EXPORT_H_

#include <stdint.h>

#include "dml_rt.h"
#include "dml_status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Writes `onnx_in` to `onnx_out` with the values of session `s`'s globals
 * (model `m`) in place of the matching initializers. *out_replaced (may be
 * NULL) is the number of initializers replaced, *out_dropouts (may be NULL)
 * the number of Dropout nodes set to inference. */
dml_status_t dml_onnx_export_trained(const char *onnx_in, const char *onnx_out,
                                     const dml_rt_model_t *m, dml_rt_session_t *s,
                                     uint32_t *out_replaced, uint32_t *out_dropouts);

#ifdef __cplusplus
}
#endif
#endif /* DML_ONNX_EXPORT_H_ */
