/*
 * dml_file.h — the one way dmlc opens files it reads and replaces files it
 * writes (POSIX). Every loader (models, packages, .npy, checkpoints,
 * external data, data sets) and every writer (packages, .npy outputs,
 * checkpoints, exported models, IR text) goes through these functions, so
 * a hostile path behaves the same everywhere:
 *
 *  - Reading opens with O_NONBLOCK, fstat()s the descriptor and refuses
 *    anything but a regular file, naming the path and what it is ("a FIFO
 *    (named pipe)", "a character device", ...): a FIFO given as a model
 *    never blocks the process. The descriptor is then made blocking again.
 *  - Writing is atomic: the bytes go to "<path>.tmp.<pid>" (created with
 *    O_EXCL | O_NOFOLLOW), are fsync()ed, renamed over `path`, and the
 *    folder is fsync()ed so the rename is durable. An existing `path` that
 *    is not a regular file (a symbolic link, a device node such as
 *    /dev/null, a FIFO, a directory) is refused, never replaced; a replaced
 *    regular file keeps its permission bits (a 0600 file stays 0600); a new
 *    file gets 0666 less the umask. Stale "<path>.tmp.<pid>" files of the
 *    same output whose process is gone (kill(pid, 0) fails with ESRCH) are
 *    removed first.
 *
 * Errors: NOT_FOUND when a path to read does not exist; IO for every other
 * file-system failure and for a path that is not a regular file; each
 * names the path. `op` is the status op of the caller ("npy", "pkg.load").
 */
#ifndef DML_FILE_H_
#define DML_FILE_H_

#include <stddef.h>
#include <stdint.h>

#include "dml_status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What a st_mode is, in words ("a regular file", "a FIFO (named pipe)",
 * "a character device", "a block device", "a socket", "a directory",
 * "a symbolic link"). */
const char *dml_file_kind(unsigned mode);

/* Opens `path` for reading when it is a regular file (see above). On
 * success `*out_fd` is a blocking, close-on-exec descriptor the caller
 * closes and `*out_size` the file's size in bytes. */
dml_status_t dml_file_open_read(const char *op, const char *path, int *out_fd,
                                uint64_t *out_size);

/* The whole regular file `path` in a malloc'd buffer (`*out_bytes`, freed
 * by the caller; one byte allocated for an empty file), `*out_size` bytes.
 * RESOURCE_EXHAUSTED when it does not fit in memory. */
dml_status_t dml_file_read_all(const char *op, const char *path, uint8_t **out_bytes,
                               size_t *out_size);

/* Writes the file's bytes to `fd`; returns 0, or -1 with errno set. */
typedef int (*dml_file_write_fn)(int fd, void *ctx);

/* Replaces (or creates) `path` atomically with what `write` puts into the
 * temp file (see above for the rules). */
dml_status_t dml_file_write_atomic_fn(const char *op, const char *path,
                                      dml_file_write_fn write, void *ctx);

/* dml_file_write_atomic_fn() for bytes held in memory: `n_parts` buffers
 * written one after the other. */
dml_status_t dml_file_write_atomic(const char *op, const char *path,
                                   const void *const *parts, const size_t *sizes,
                                   size_t n_parts);

/* Writes all n bytes to fd (retrying short writes and EINTR); 0 or -1. */
int dml_file_write_all(int fd, const void *data, size_t n);

/* 1 when `a` and `b` name the same file, else 0: when both exist, the same
 * device and inode (following symbolic links: "m.onnx", "./m.onnx" and a
 * hard link are one file); when neither exists, the same name in the same
 * folder (the folders' real paths compared: "out.csv" and "./out.csv"). */
int dml_file_same(const char *a, const char *b);

#ifdef __cplusplus
}
#endif
#endif /* DML_FILE_H_ */
