/*
 * dml_train_data.h — data sets for `dmlc train` / `dmlc eval`: readers for
 * IDX (the MNIST family, gzipped or not), .npy pairs and CSV, and the
 * conversion of what they read to a package's input and target types.
 *
 * Sources (`spec`, the --data argument):
 *   DIR          a folder of IDX files: "train-*images*" / "train-*labels*"
 *                for split "train", "t10k-*images*" / "t10k-*labels*" for
 *                split "test" (the MNIST / Fashion-MNIST file names).
 *   X.npy,Y.npy  two .npy files: rows of x, rows of y.
 *   IMG,LBL      two IDX files (.gz or not): the one of rank >= 2 is x.
 *   FILE.csv     numeric CSV, one row per line; the label column (the last
 *                by default) is y, the other columns x. A first line with a
 *                non-numeric field is a header and skipped.
 *   NAME=F.npy,...  named .npy arrays (dml_data_load_named), for models of
 *                several inputs or outputs: each NAME is a model input or a
 *                trained output (its labels); every array has the same rows.
 *
 * IDX (http://yann.lecun.com/exdb/mnist/, "THE IDX FILE FORMAT"): two zero
 * bytes, a type code (0x08 u8, 0x09 i8, 0x0B i16, 0x0C i32, 0x0D f32,
 * 0x0E f64), the rank, then each dim as a big-endian u32 and the data,
 * big-endian. Files are read through zlib's gzread, which reads gzip and
 * plain files alike (a folder holding both forms of a file: the plain one).
 * Compiled with DML_DATA_NO_ZLIB (the runtime-only programs, e.g.
 * bench/train/dml_train_bench) it reads plain files only: a gzip file is an
 * UNIMPLEMENTED error that says to decompress it. x becomes f32 (u8 data
 * multiplied by `image_scale`, 1/255 by default, so bytes map to [0, 1]);
 * integer labels become i64.
 *
 * Errors (op "data"): NOT_FOUND naming the path (and, for a folder, the
 * files expected); DATA_LOSS for malformed files with the path and the byte
 * offset or line; INVALID_ARGUMENT for row counts or shapes that disagree;
 * RESOURCE_EXHAUSTED.
 */
#ifndef DML_TRAIN_DATA_H_
#define DML_TRAIN_DATA_H_

#include <stddef.h>
#include <stdint.h>

#include "dml_rt.h"
#include "dml_status.h"
#include "dml_types.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct dml_data_options {
  double image_scale;   /* IDX u8 data of x is multiplied by this; default 1/255 */
  int csv_label_column; /* 0-based; -1: the last column (default) */
} dml_data_options_t;

void dml_data_options_init(dml_data_options_t *o);

/* A data set read into memory: x [N, ...] and y [N, ...], each owning its
 * data (64-byte aligned, malloc'd). */
typedef struct dml_data {
  dml_tensor_t x, y;
} dml_data_t;

void dml_data_free(dml_data_t *d);

/* Reads `spec` (see above); `split` is "train" or "test" and only matters
 * for folders. */
dml_status_t dml_data_load(const char *spec, const char *split,
                           const dml_data_options_t *o, dml_data_t *out);

/* Reads one IDX file (gzip or plain) as stored: dtype of its type code,
 * its dims. *out owns its data. */
dml_status_t dml_data_read_idx(const char *path, dml_tensor_t *out);

/* Parses CSV text (`n` bytes; `name` for errors) into x f32 [rows, cols-1]
 * and y: i64 [rows] when every label is an integer, else f32 [rows]. */
dml_status_t dml_data_parse_csv(const char *text, size_t n, const char *name,
                                int label_column, dml_data_t *out);

/* Converts `d` in place to the package's input `x_info` and target
 * `y_info` types: dtypes converted (a float label used as a class index
 * must be integral), rows reshaped when their element counts agree, and
 * integer labels turned into one-hot rows when the target is float
 * [N, C]. Errors: INVALID_ARGUMENT naming both types. */
dml_status_t dml_data_adapt(dml_data_t *d, const dml_rt_io_info_t *x_info,
                            const dml_rt_io_info_t *y_info);

/* Most arrays of a named data set. */
#define DML_DATA_MAX_NAMED 16

/* A named data set ("in1=a.npy,in2=b.npy,out1=l.npy"): the arrays in the
 * spec's order, each owning its data. */
typedef struct dml_data_named {
  int32_t n;
  char name[DML_DATA_MAX_NAMED][64];
  char path[DML_DATA_MAX_NAMED][512];
  dml_tensor_t t[DML_DATA_MAX_NAMED];
} dml_data_named_t;

/* 1 when `spec` is the named form: every comma-separated part is
 * NAME=PATH (NAME without '/'). */
int dml_data_spec_is_named(const char *spec);

/* Reads NAME=FILE.npy,... into *out (zeroed first). Errors: INVALID_ARGUMENT
 * (a part not NAME=FILE.npy, a name given twice or longer than 63 bytes,
 * more than DML_DATA_MAX_NAMED, an array of rank 0), the .npy reader's
 * (path named). */
dml_status_t dml_data_load_named(const char *spec, dml_data_named_t *out);
void dml_data_named_free(dml_data_named_t *d);

struct dml_trainer;
struct dml_dataset;

/* Binds a named data set to trainer `t`'s model inputs and targets
 * (dml_trainer.h): each model input takes the array of its name, each
 * target the array named as its output (dml_trainer_target_output; for a
 * single-loss package, `single_label`, the output the loss reads, or
 * "target"), each
 * converted in place as dml_data_adapt does, into out's lists (views of
 * d's arrays: d must outlive *out). Errors: INVALID_ARGUMENT naming a
 * model input or output without an array, an array whose name is neither
 * (listing both), arrays of different row counts (both named, with their
 * files), a type mismatch. */
dml_status_t dml_data_bind_named(dml_data_named_t *d, const struct dml_trainer *t,
                                 const char *single_label, struct dml_dataset *out);

#ifdef __cplusplus
}
#endif
#endif /* DML_TRAIN_DATA_H_ */
