/*
 * rt_backend.h — the runtime's backend interface (ARCHITECTURE.md: a
 * struct of function pointers). A session runs on one backend: "cpu" (the
 * reference executor of rt_session.c) or "vulkan[:N]" (runtime/vulkan/,
 * libvulkan.so.1 opened with dlopen at run time).
 *
 * The session keeps the host arena in every case: set_input copies into it
 * and get_output reads from it. A GPU backend copies the function's inputs
 * from the host arena to the device before its kernels and the outputs
 * back after them, so everything above the backend is unchanged.
 *
 * Globals (a training package): the sessions sharing them share one device
 * copy (open's `share`), which the kernels of train_step update in place.
 * rt_session.c keeps a host copy too and moves the bytes only when needed:
 * after a run of a function that assigns globals the device copy is the
 * current one (read back by dml_rt_session_global); once
 * dml_rt_session_global has lent the host copy (which the caller may
 * write: checkpoint restore, best weights) it is uploaded before the next
 * run.
 */
#ifndef DML_RT_BACKEND_H_
#define DML_RT_BACKEND_H_

#include <stdint.h>

#include "dml_philox.h"
#include "dml_tensor.h"
#include "rt_internal.h"

/* What a backend's run sees. */
typedef struct dml_rt_exec {
  const dml_rt_model_t *m;
  const dml_pkg_function_t *fn;
  uint8_t *arena; /* host arena: inputs bound here, outputs read here */
  /* The run's symbol values. Device-produced ones (dml_rt_gpu_plan_dims)
   * hold their bounds until `produced` sets them. */
  int64_t *sym;
  uint32_t n_symbols;
  /* The run's random state (dml_philox.h): the session seed and this
   * run's step (the session's run count). */
  uint64_t rng_seed, rng_step;
  /* Device-produced dims (docs/kernels.md "Data-dependent output sizes"):
   * a backend runs the kernels in segments, each ending after a kernel
   * that counts extents on the device (dml_rt_dims_region_t.produces).
   * After such a segment has completed it reads the dims slot back and
   * calls produced(ctx, nodes, n_nodes, words): `nodes` are that kernel's
   * graph nodes, `words` the slot's DML_KPKG_MAX_SYMBOLS u32 words. The
   * session sets the symbols those nodes produce in sym[] (checking their
   * bounds and the bytes planned for the values they size) or returns the
   * error that ends the run; the next segment runs with the new values. */
  dml_status_t (*produced)(void *ctx, const uint32_t *nodes, uint32_t n_nodes,
                           const uint32_t *words);
  void *ctx;
  /* How long the backend waits for the device to finish a submission
   * (dml_rt_session_set_device_timeout): when timeout_set is 0 the
   * backend's default (dml_rt_device_timeout_default), else timeout_s
   * seconds, 0 meaning no limit. */
  uint8_t timeout_set;
  double timeout_s;
  /* The CPU fall-back (dml_rt_host_plan_t): runs graph nodes `nodes` of
   * the function with the CPU kernels on e->arena (their inputs there);
   * NULL where the caller runs no host nodes (a package with host entries
   * then fails with UNIMPLEMENTED). */
  dml_status_t (*host)(void *ctx, const uint32_t *nodes, uint32_t n_nodes);
  /* Device-resident inputs (dml_rt_session_set_input_tensor of a tensor on
   * the session's device): NULL, or per function input NULL (bound in
   * e->arena, uploaded through the staging as always) or a buffer of this
   * backend's eager device memory (dml_rt_devmem_t, the session's device:
   * the backend's uses_device said so) holding the input's bytes at byte
   * dev_in_off[i]; the backend copies them on the device into its arena
   * before the kernels, and neither reads nor uploads the host arena's
   * region of that input. */
  void *const *dev_in;
  const uint64_t *dev_in_off;
  /* 1: the run leaves the outputs in the device arena (read_outputs brings
   * them to e->arena when the host asks; copy_output copies one on the
   * device); 0: they are copied to e->arena by the run, as always. */
  int outputs_lazy;
} dml_rt_exec_t;

typedef struct dml_rt_backend {
  const char *name; /* "vulkan" */
  /* Opens `device` ("vulkan", "vulkan:N") for function `fn` of `m`.
   * `share` is NULL or the state of another session of this backend on the
   * same model (rt_session.c passes one when the sessions share writable
   * globals, a training package's train_step, eval_step and forward): the
   * new session then uses that session's device and its device copy of the
   * globals (the "weights" section, which Assign kernels write in place)
   * and ignores `weights`; the device stays open until the last session
   * using it is closed. Without `share` the device copy is uploaded from
   * `weights` (the globals' current bytes, m->weights_size bytes). Errors:
   * FAILED_PRECONDITION when `device` names another device than `share`'s;
   * as the backend's other open errors. */
  /* `on_dev` is NULL or an eager device of this backend's device memory
   * (dml_rt_devmem_t open's state, `device` its name): the session then
   * runs on that device's VkDevice and queue (Vulkan; CUDA sessions and
   * eager devices of one ordinal share the primary context anyway), so its
   * tensors' buffers can be copied into and out of the session's arena on
   * the device (dml_rt_session_create_on_device); the device stays alive
   * until both are closed. */
  dml_status_t (*open)(const dml_rt_model_t *m, const dml_pkg_function_t *fn,
                       const char *device, const uint8_t *weights, void *share,
                       void *on_dev, void **out_state);
  /* Runs the function: inputs from e->arena, outputs back into it. */
  dml_status_t (*run)(void *state, const dml_rt_exec_t *e);
  /* Copies the device copy of the whole "weights" section (the model's
   * m->weights_size bytes: constants and the globals at their package
   * offsets) into `dst` (read_globals), or replaces it with `src`
   * (write_globals). Only between runs (sessions sharing globals never run
   * at the same time); the copy is complete when the call returns. rt_session.c
   * calls them to keep its host copy of the globals and the device's in step
   * (dml_rt_session_global). Errors: the backend's device errors (INTERNAL,
   * RESOURCE_EXHAUSTED for a staging buffer that cannot be allocated). */
  dml_status_t (*read_globals)(void *state, uint8_t *dst);
  dml_status_t (*write_globals)(void *state, const uint8_t *src);
  /* Per-kernel device times of the last run, in ms (n_kernels entries). */
  uint32_t (*num_kernels)(void *state);
  dml_status_t (*kernel_info)(void *state, uint32_t i, dml_rt_kernel_info_t *out);
  /* A description of the device ("lavapipe (cpu), Vulkan 1.3.238"). */
  const char *(*device_name)(void *state);
  void (*close)(void *state);
  /* Runs kernel `k` of the function alone, for dml_rt_check (rt_check.c):
   * the device arena first gets the f->arena_bytes bytes of e->arena (and
   * the random-state slot the words of e->rng_seed, e->rng_step), kernel k
   * is dispatched with the symbol values e->sym, and the whole arena is then
   * copied back into e->arena; waits for all of it. e->produced is not
   * called (device-counted dims are not read back). Errors: OUT_OF_RANGE
   * for k; the device's errors (INTERNAL, RESOURCE_EXHAUSTED). */
  dml_status_t (*run_kernel)(void *state, const dml_rt_exec_t *e, uint32_t k);
  /* Device-resident inputs and outputs (docs/tensor.md "Sessions"). 1 when
   * buffers of eager device `dev` (this backend's dml_rt_devmem_t state)
   * can be read and written by the session's commands: the same VkDevice
   * (a session made on that device), the same CUDA context; 0 otherwise
   * (dev NULL included). */
  int (*uses_device)(void *state, void *dev);
  /* After a run with e->outputs_lazy: copies every output from the device
   * arena to e->arena (e: the run's exec, its symbols the run's final
   * values), as a run without outputs_lazy does at its end; waits. */
  dml_status_t (*read_outputs)(void *state, const dml_rt_exec_t *e);
  /* After a run: copies output `i` (its bytes at the run's final symbol
   * values, dml_rt_gpu_io_bytes) from the device arena into buffer `dst`
   * of eager device memory on the session's device (uses_device) at byte
   * dst_off, on the device; waits. Errors: the device's (INTERNAL). */
  dml_status_t (*copy_output)(void *state, const dml_rt_exec_t *e, uint32_t i, void *dst,
                              uint64_t dst_off);
  /* The device memory the session allocated at open and whether it
   * created its device context (dml_rt_session_device_memory). */
  void (*memory)(void *state, dml_rt_device_memory_t *out);
  /* The session's device arena as a buffer of the kind dev_in and
   * copy_output take (Vulkan: its vk_buf_t; CUDA: its device pointer), a
   * value of the function at its arena offset: an If branch's or Loop
   * body's outputs bound as the next iteration's inputs there (rt_session.c
   * run_loop). A dev_in entry that is the session's own arena at the
   * input's own offset (the value already there from the previous run) is
   * neither copied nor uploaded. */
  void *(*arena_buffer)(void *state);
  /* After a run with e->outputs_lazy: copies output `i` alone from the
   * device arena to e->arena (at the run's size); waits. Errors: the
   * device's; OUT_OF_RANGE for i. */
  dml_status_t (*read_output)(void *state, const dml_rt_exec_t *e, uint32_t i);
} dml_rt_backend_t;

/* Fills *out for kernel `i` of the kernel table `kf` after a run, as the GPU
 * backends report it: name and graph nodes, the measured device time
 * kernel_ms[i] (ms) and the kernel's work (FLOP, bytes) at the run's symbol
 * values `sym`. `op` names the backend in errors. Errors: OUT_OF_RANGE,
 * FAILED_PRECONDITION when no run has completed (`ran` 0). */
struct dml_kpkg_function;
dml_status_t dml_rt_kernel_info_fill(const char *op, const struct dml_kpkg_function *kf,
                                     uint32_t i, int ran, const double *kernel_ms,
                                     const int64_t *sym, uint32_t n_symbols,
                                     dml_rt_kernel_info_t *out);

/* The checks a GPU backend makes when it opens function `f`: `table` (the
 * package's kernels for the backend's target, may be NULL) has kernels for
 * `f`; the symbols fit push constants; every node outside the kernels is a
 * view planned in place; every non-constant value is f32 (what the GPU
 * kernels handle). `target` ("Vulkan", "CUDA") and `flag` ("vulkan",
 * "cuda", the --target spelling) word the errors; `op` names the backend.
 * Errors: FAILED_PRECONDITION (no kernels), UNIMPLEMENTED (symbols, dtype),
 * DATA_LOSS (a node in no kernel that does not alias its input). */
struct dml_kpkg;
dml_status_t dml_rt_gpu_kernels_for(const char *op, const char *target, const char *flag,
                                    const dml_rt_model_t *m, const dml_pkg_function_t *f,
                                    const struct dml_kpkg *table,
                                    const struct dml_kpkg_function **out_kf);

/* Where a GPU backend stages one input or output of a function: the value,
 * its offset in the function's arena, its offset in the staging buffer and
 * its size at the symbols' bounds (bytes). */
typedef struct dml_rt_io_region {
  uint32_t value;
  uint64_t arena_offset, staging_offset, bytes_bound;
} dml_rt_io_region_t;

/* Lays out function `f`'s inputs, then its outputs, in a staging buffer,
 * each at a multiple of `align` bytes (a power of two); *out_inputs and
 * *out_outputs (f->n_inputs and f->n_outputs entries, malloc'd: the caller
 * frees them) and *out_bytes (the staging size) are set on success. `op`
 * names the backend and `target` ("Vulkan", "CUDA") words the errors.
 * Errors: UNIMPLEMENTED for an input or output that is a constant;
 * DATA_LOSS for a value whose size at the bounds is unknown or does not fit
 * its planned bytes inside the arena; RESOURCE_EXHAUSTED. */
dml_status_t dml_rt_gpu_plan_io(const char *op, const char *target,
                                const dml_rt_model_t *m, const dml_pkg_function_t *f,
                                uint64_t align, dml_rt_io_region_t **out_inputs,
                                dml_rt_io_region_t **out_outputs, uint64_t *out_bytes);

/* Where a GPU backend keeps a function's random state (dml_philox.h):
 * `used` is 1 when the function has random nodes (ops.def's
 * DML_OPF_RANDOM, or Dropout, whose training form draws a mask); then the
 * arena is allocated up to arena_offset + DML_PHILOX_SLOT_BYTES (the slot
 * past the planned arena, dml_philox_slot_offset) and the run's words go
 * to staging_offset of the staging buffer, copied to the slot with the
 * inputs, inside the recorded commands. */
typedef struct dml_rt_rng_region {
  int used;
  uint64_t arena_offset, staging_offset;
  uint64_t arena_bytes; /* the arena's allocation: slot included when used */
} dml_rt_rng_region_t;

/* Lays out function f's random-state slot: when used, its staging region
 * goes at *io_staging_bytes (the staging size dml_rt_gpu_plan_io gave),
 * rounded up to `align` (a power of two), which grows by the slot. */
void dml_rt_gpu_plan_rng(const dml_pkg_function_t *f, uint64_t align,
                         uint64_t *io_staging_bytes, dml_rt_rng_region_t *out);

/* 1 when node `node` of function `f` produces a data-dependent symbol of
 * `f` that its kernel counts on the device: an op without a host shape
 * rule (dml_cpu_output_dims_reads(op, 0) < 0: NonZero, Compress, Unique,
 * NonMaxSuppression). The GPU sessions compute every other produced
 * symbol on the host before the run. */
int dml_rt_node_dims_on_device(const dml_rt_model_t *m, const dml_pkg_function_t *f,
                               uint32_t node);

/* Where a GPU backend reads device-produced dims back: `used` is 1 when a
 * kernel of `kf` holds a node of dml_rt_node_dims_on_device; then
 * produces[k] (kf->n_kernels entries, malloc'd: dml_rt_gpu_dims_free) is 1
 * for each such kernel (the plan is run in segments ending after them),
 * the arena is allocated up to arena_bytes (past the dims slot at
 * arena_offset, dml_kpkg_dims_slot_offset, and the random-state slot) and
 * the slot is copied to staging_offset of the staging buffer after each
 * such segment. */
typedef struct dml_rt_dims_region {
  int used;
  uint64_t arena_offset, staging_offset;
  uint64_t arena_bytes; /* the arena's allocation: both slots included */
  uint8_t *produces;
} dml_rt_dims_region_t;

/* Lays out function f's dims slot after dml_rt_gpu_plan_rng (`rng`): when
 * used, its staging region goes at *io_staging_bytes rounded up to `align`
 * (a power of two), which grows by DML_KPKG_DIMS_SLOT_BYTES. Errors:
 * RESOURCE_EXHAUSTED (op `op`). */
dml_status_t dml_rt_gpu_plan_dims(const char *op, const dml_rt_model_t *m,
                                  const dml_pkg_function_t *f,
                                  const struct dml_kpkg_function *kf, uint64_t align,
                                  const dml_rt_rng_region_t *rng,
                                  uint64_t *io_staging_bytes, dml_rt_dims_region_t *out);

/* Frees what dml_rt_gpu_plan_dims allocated. */
void dml_rt_gpu_dims_free(dml_rt_dims_region_t *d);

/* The end (one past the last kernel) of the segment of `n_kernels` kernels
 * that starts at kernel `begin`: after the first kernel from `begin` on
 * that produces dims, else n_kernels. */
uint32_t dml_rt_gpu_segment_end(const dml_rt_dims_region_t *d, uint32_t n_kernels,
                                uint32_t begin);

/* 1 when segment [b, end) ends with a kernel that produces dims (then a
 * next segment follows, with no kernels when end is the last kernel's: the
 * output copies, sized by the new values). */
int dml_rt_gpu_segment_produces(const dml_rt_dims_region_t *d, uint32_t b, uint32_t end);

/* The number of segments of `n_kernels` kernels: 1 + the kernels that
 * produce dims. */
uint32_t dml_rt_gpu_segments(const dml_rt_dims_region_t *d, uint32_t n_kernels);

/* The CPU fall-back's per-segment placement (docs/kernels.md "CPU
 * fall-back"): a function's kernel entries of kind DML_KPKG_KIND_HOST are
 * graph nodes the host runs with the CPU kernels (dml_rt_exec_t.host)
 * between the device's kernels. A backend runs the kernels in segments
 * that also end before each host entry; at the end of the segment before
 * host entry k it copies the values of regions[down_at[2k] ..
 * down_at[2k+1]) (those the host nodes read that the device computed) to
 * their staging offsets, then into the host arena; after the host nodes
 * ran it copies regions[up_at[2k] .. up_at[2k+1]) (those they wrote that
 * a later kernel reads or the function returns) from the host arena to the
 * staging and, at the start of the next segment, into the device arena.
 * Sizes are each value's at the run's symbols (its bytes_bound at the
 * bounds). The inputs go to the device at the start of the segment
 * beginning at first_gpu (the first kernel that is no host entry). */
typedef struct dml_rt_host_plan {
  int used;                    /* the function has host entries */
  uint8_t *is_host;            /* per kernel entry */
  uint32_t *down_at, *up_at;   /* per entry k: [2k], [2k+1] index regions */
  dml_rt_io_region_t *regions; /* staging_offset set; value, arena_offset */
  uint32_t first_gpu;
} dml_rt_host_plan_t;

/* Plans the transfers of function f's host entries in kf, each region at
 * *io_staging_bytes rounded up to `align` (a power of two), which grows.
 * used 0 and nothing allocated when kf has no host entry. Errors:
 * DATA_LOSS (a value's size), RESOURCE_EXHAUSTED. */
dml_status_t dml_rt_gpu_plan_host(const char *op, const dml_rt_model_t *m,
                                  const dml_pkg_function_t *f,
                                  const struct dml_kpkg_function *kf, uint64_t align,
                                  uint64_t *io_staging_bytes, dml_rt_host_plan_t *out);

/* 1 when node `node` of f is an If or Loop whose branch or body
 * functions all have kernels in the table holding kf (the package's
 * kernels for f's target): their sessions run on the device
 * (docs/kernels.md "Control flow: the regions on the device"). */
int dml_rt_gpu_region_on_device(const dml_rt_model_t *m, const dml_pkg_function_t *f,
                                const struct dml_kpkg_function *kf, uint32_t node);

/* The device-resident hand-over of such a node in a host entry of kf
 * (else all zeros): in_dev[j] (n_inputs bytes) is 1 for a capture (an
 * If's inputs after cond, a Loop's after M, cond and the initial carried
 * values) that a device kernel computed (no string, no constant, no
 * function input): its region reads it from the caller's device arena and
 * dml_rt_gpu_plan_host does not stage it to the host for this node;
 * out_dev[j] (n_outputs bytes) is 1 for an If result no host node reads
 * (nor a view of it): the branch copies it on the device into the
 * caller's arena and the plan does not upload it. At most 128 inputs and
 * outputs (else zeros). Errors: OUT_OF_RANGE, RESOURCE_EXHAUSTED. */
dml_status_t dml_rt_gpu_region_handover(const dml_rt_model_t *m,
                                        const dml_pkg_function_t *f,
                                        const struct dml_kpkg_function *kf, uint32_t node,
                                        uint8_t *in_dev, uint8_t *out_dev);

/* Frees what dml_rt_gpu_plan_host allocated. */
void dml_rt_gpu_host_free(dml_rt_host_plan_t *h);

/* dml_rt_gpu_segment_end, also ending a segment before a host entry of
 * `h` (then end == a host entry's index; end == begin when `begin` is
 * one). */
uint32_t dml_rt_gpu_segment_end_host(const dml_rt_dims_region_t *d,
                                     const dml_rt_host_plan_t *h, uint32_t n_kernels,
                                     uint32_t begin);

/* An upper bound of the segments a run passes through (the command
 * buffers to cache): dml_rt_gpu_segments plus two per host entry. */
uint32_t dml_rt_gpu_segments_host(const dml_rt_dims_region_t *d,
                                  const dml_rt_host_plan_t *h, uint32_t n_kernels);

/* The bytes of value `value` of e->fn at the run's symbols e->sym that a
 * copy between the host and the device moves, or -1 when its dims do not
 * evaluate (a symbol out of range) or overflow. 0 for a string value
 * (DML_DTYPE_STRING): strings never leave the host arena (the CPU
 * fall-back's host nodes read and write them there), so the staging and
 * device copies of inputs, outputs and host-entry regions skip them. */
int64_t dml_rt_gpu_io_bytes(const dml_rt_exec_t *e, uint32_t value);

/* Copies the n regions at x between a host-visible staging buffer `st`
 * and the host arena e->arena, each at the run's size
 * (dml_rt_gpu_io_bytes; none when <= 0): into the staging (`to_staging`
 * 1) or out of it. */
void dml_rt_gpu_staging_copy(const dml_rt_io_region_t *x, uint32_t n, uint8_t *st,
                             const dml_rt_exec_t *e, int to_staging);

/* The check of a backend's run_kernel: OUT_OF_RANGE for `k` past kf's
 * kernels, UNIMPLEMENTED for a host entry (nothing runs on the device);
 * `op` names the backend. */
dml_status_t dml_rt_gpu_check_kernel(const char *op, const struct dml_kpkg_function *kf,
                                     uint32_t k);

/* A GPU session's plan of function f: its staging regions (inputs, then
 * outputs: dml_rt_gpu_plan_io; f->n_inputs and f->n_outputs entries), the
 * random-state slot, the device-produced dims slot and the CPU fall-back's
 * host entries. */
typedef struct dml_rt_gpu_plan {
  dml_rt_io_region_t *inputs, *outputs;
  uint32_t n_inputs, n_outputs;
  dml_rt_rng_region_t rng;   /* dml_rt_gpu_plan_rng */
  dml_rt_dims_region_t dims; /* dml_rt_gpu_plan_dims */
  dml_rt_host_plan_t host;   /* dml_rt_gpu_plan_host */
} dml_rt_gpu_plan_t;

/* Plans function f (kernels kf) for a GPU backend: dml_rt_gpu_plan_io,
 * _rng, _dims and _host in that order, the staging regions at multiples
 * of `align` (a power of two); *out_staging_bytes: the staging buffer's
 * size. `op` names the backend, `target` ("Vulkan", "CUDA") words the
 * errors. Errors: those four's. After an error, as after success, *out is
 * freed by dml_rt_gpu_plan_free. */
dml_status_t dml_rt_gpu_plan(const char *op, const char *target, const dml_rt_model_t *m,
                             const dml_pkg_function_t *f,
                             const struct dml_kpkg_function *kf, uint64_t align,
                             dml_rt_gpu_plan_t *out, uint64_t *out_staging_bytes);

/* Frees what dml_rt_gpu_plan allocated (a zeroed plan: nothing). */
void dml_rt_gpu_plan_free(dml_rt_gpu_plan_t *p);

/* What dml_rt_gpu_run_segments needs of a GPU session: its kernels, its
 * plan, the host-visible staging buffer the plan indexes, kernel_ms (a
 * time per kernel entry, ms) and the device's part of a segment. */
typedef struct dml_rt_gpu_run {
  const struct dml_kpkg_function *kf;
  const dml_rt_gpu_plan_t *plan;
  uint8_t *staging;
  double *kernel_ms;
  /* Runs segment `seg` (kernels [b, end), end == b for the output copies
   * alone) for the symbol values of e on the device and waits for it,
   * setting kernel_ms[b .. end): the inputs go from the staging to the
   * device arena when b is the host plan's first_gpu (0 without host
   * entries), with the random state's words; host uploads of the entry
   * before b go in first; after the kernels the dims slot (a segment that
   * produces dims), the downloads of the host entry at `end`, or the
   * outputs (end == the last kernel's, no dims; not with e->outputs_lazy)
   * go to the staging. The inputs of e->dev_in are not uploaded from the
   * staging: the backend copies them on the device before. */
  dml_status_t (*run_segment)(void *state, const dml_rt_exec_t *e, uint32_t seg,
                              uint32_t b, uint32_t end);
  void *state;
} dml_rt_gpu_run_t;

/* Runs the plan of `g` segment by segment (one segment unless kernels
 * count dims on the device or host entries hold nodes the host runs): the
 * inputs and random-state words of e to the staging, then each segment
 * through g->run_segment; after a segment ending with a kernel that counts
 * dims the dims slot's staging copy goes to e->produced
 * (dml_rt_gpu_take_dims), which sets the symbols of the segments after
 * it; a host entry's nodes run through e->host between the segments before
 * and after it (timed into kernel_ms), with the values crossing copied
 * between the staging and e->arena (dml_rt_host_plan_t); last the outputs
 * from the staging to e->arena. Inputs of e->dev_in are not copied to the
 * staging, and with e->outputs_lazy the outputs are not copied out of it
 * (run_segment leaves them on the device then). Errors: UNIMPLEMENTED (op `op`) for a
 * host entry without e->host; run_segment's, e->host's and e->produced's. */
dml_status_t dml_rt_gpu_run_segments(const char *op, const dml_rt_gpu_run_t *g,
                                     const dml_rt_exec_t *e);

/* Reads the slot's words from its staging copy `src` (little-endian) and
 * calls e->produced for the nodes of kernel `k` of `kf`. */
dml_status_t dml_rt_gpu_take_dims(const dml_rt_exec_t *e,
                                  const struct dml_kpkg_function *kf, uint32_t k,
                                  const uint8_t *src);

/* Writes the run's four slot words (dml_philox_slot_words of e->rng_seed,
 * e->rng_step, little-endian) to dst (DML_PHILOX_SLOT_BYTES bytes). */
void dml_rt_gpu_rng_words(const dml_rt_exec_t *e, uint8_t *dst);

/* Session `s`'s backend and its state (*out_backend NULL for the CPU
 * executor), its function and the bytes of the globals it reads (the
 * "weights" section, or the session's writable copy). For rt_check.c. */
void dml_rt_session_backend(const dml_rt_session_t *s,
                            const dml_rt_backend_t **out_backend, void **out_state,
                            const dml_pkg_function_t **out_fn,
                            const uint8_t **out_weights);

/* Device memory of eager tensors (runtime/dml_tensor.c): a device opened
 * without a package, buffers on it and synchronous copies. Every call
 * returns once the device has finished it. Offsets and sizes in bytes.
 * Errors: open's as a session's (NOT_FOUND for no such device or loader);
 * RESOURCE_EXHAUSTED (device memory, DMLC_VULKAN_MAX_MEMORY); OUT_OF_RANGE
 * for a copy past a buffer's end; INTERNAL for other driver errors. */
/* A copy into the temporary input buffer of run_kernel: `bytes` bytes of
 * buffer `src` at src_off to byte dst_off. */
typedef struct dml_rt_devmem_copy {
  void *src;
  uint64_t src_off, dst_off, bytes;
} dml_rt_devmem_copy_t;

typedef struct dml_rt_devmem {
  const char *name; /* "vulkan" */
  dml_status_t (*open)(const char *device, void **out_dev);
  void (*close)(void *dev);              /* after every buffer is freed */
  const char *(*device_name)(void *dev); /* "vulkan:0 (llvmpipe ..., CPU, ...)" */
  dml_status_t (*alloc)(void *dev, uint64_t bytes, void **out_buf);
  void (*free)(void *dev, void *buf); /* the memory is returned at once */
  dml_status_t (*write)(void *dev, void *buf, uint64_t off, const void *src,
                        uint64_t bytes);
  dml_status_t (*read)(void *dev, void *buf, uint64_t off, void *dst, uint64_t bytes);
  dml_status_t (*copy)(void *dev, void *src, uint64_t src_off, void *dst,
                       uint64_t dst_off, uint64_t bytes);
  /* Runs kernel `k` of the backend's eager kernel library
   * (dml_eager_lib.h; NULL where the backend has none yet) with the
   * push-constant words pc[0 .. n_pc-1] over `groups` workgroups:
   * buffer `out` at binding 0 and, at binding 1, buffer `in`, or (n_copies
   * > 0) a temporary buffer of pack_bytes into which copies[] first copy
   * byte ranges of other buffers, in the same submission. Returns once the
   * device has finished. Errors: OUT_OF_RANGE for k or a copy past a
   * buffer; the device's (RESOURCE_EXHAUSTED, INTERNAL). */
  dml_status_t (*run_kernel)(void *dev, uint32_t k, void *out, void *in,
                             const dml_rt_devmem_copy_t *copies, uint32_t n_copies,
                             uint64_t pack_bytes, const uint32_t *pc, uint32_t n_pc,
                             uint32_t groups);
  /* Runs kernel `k` of the eager library with buffer bufs[i] at binding i
   * (i < n_bufs <= DML_EAGER_BINDINGS; bufs[0] the output; an absent or
   * NULL one binds bufs[0], which the kernel does not read), each tensor's
   * own buffer: no copies (MatMul, Conv). Otherwise as run_kernel; NULL
   * where the backend lacks it. */
  dml_status_t (*run_kernel_bufs)(void *dev, uint32_t k, void *const *bufs,
                                  uint32_t n_bufs, const uint32_t *pc, uint32_t n_pc,
                                  uint32_t groups);
} dml_rt_devmem_t;

/* Creates a session as dml_rt_session_create_function does, on eager
 * device `on_dev` (state of devmem `mem`, named `device`: "vulkan:0") when
 * not NULL: a GPU session then runs on that device (rt_backend open's
 * on_dev) and leaves its outputs on the device (dml_rt_exec_t.outputs_lazy)
 * in its first run and each run after one whose outputs the host did not
 * read (dml_rt_session_get_output). For
 * dml_rt_session_create_on_device (dml_tensor.c). Errors:
 * dml_rt_session_create_function's. */
dml_status_t dml_rt_session_create_in(const dml_rt_model_t *m, const char *device,
                                      const char *function,
                                      dml_rt_session_t *share_globals_with,
                                      const struct dml_rt_devmem *mem, void *on_dev,
                                      dml_rt_session_t **out_session);

/* 1 when input `index` of session s can be bound from a buffer of eager
 * device `dev` (state of devmem `mem`) without the host: s runs on a GPU
 * backend that uses that device (uses_device), the index is below 64, and
 * no node the host runs (a dims rule, a host value, the CPU fall-back's
 * host entries) reads the input's data. */
int dml_rt_session_input_on_device_ok(const dml_rt_session_t *s, uint32_t index,
                                      const struct dml_rt_devmem *mem, void *dev);

/* Binds input `index` of s to eager tensor `view` (a dense tensor on the
 * session's device; a handle the session then owns and frees: a view of
 * the caller's tensor, or a dense copy on the device), whose dtype and
 * dims `t` describes (t->data unused): dml_rt_session_set_input's checks,
 * then each run copies its bytes on the device (dml_rt_exec_t.dev_in).
 * Only when dml_rt_session_input_on_device_ok. On error `view` is freed. */
dml_status_t dml_rt_session_set_input_device(dml_rt_session_t *s, uint32_t index,
                                             const dml_tensor_t *t, dml_rt_tensor_t view);

/* 1 when output copies of session s can go to eager device `dev` (state of
 * devmem `mem`) on the device: s runs on a GPU backend that uses it. */
int dml_rt_session_output_on_device_ok(const dml_rt_session_t *s,
                                       const struct dml_rt_devmem *mem, void *dev);

/* Output `index` of the last run of s: its dtype and dims (*out_t, data
 * NULL), for dml_rt_session_copy_output_device. Errors:
 * dml_rt_session_get_output's. */
dml_status_t dml_rt_session_output_shape(dml_rt_session_t *s, uint32_t index,
                                         dml_tensor_t *out_t);

/* Copies output `index` of the last run of s into buffer `dst` (eager
 * device memory on the session's device) at byte dst_off, on the device
 * (rt_backend copy_output), counting it in the session's transfer
 * statistics. Errors: dml_rt_session_get_output's; UNIMPLEMENTED for a
 * string output (strings stay on the host); the device's. */
dml_status_t dml_rt_session_copy_output_device(dml_rt_session_t *s, uint32_t index,
                                               void *dst, uint64_t dst_off);

/* Where eager tensor `t`'s elements are (dml_tensor.c): its device memory's
 * buffer and the byte offset of element 0 (the caller knows it is dense).
 * Errors: FAILED_PRECONDITION (op `op`) "use after free" for a freed handle
 * (its device closed included), or for a tensor not on a GPU device. */
dml_status_t dml_rt_tensor_buffer(dml_rt_tensor_t t, const char *op, void **out_buf,
                                  uint64_t *out_off);

/* Vulkan's device memory for eager tensors; NULL in builds without Vulkan
 * (rt_backends.c). */
const dml_rt_devmem_t *dml_rt_vulkan_devmem(void);

/* CUDA's device memory for eager tensors (runtime/cuda/rt_cuda.c,
 * libcuda.so.1 opened at run time); NULL in builds without CUDA. */
const dml_rt_devmem_t *dml_rt_cuda_devmem(void);

/* The Vulkan backend; NULL in builds without Vulkan. */
const dml_rt_backend_t *dml_rt_vulkan_backend(void);

/* The CUDA backend (runtime/cuda/rt_cuda.c; libcuda.so.1 opened at run
 * time); NULL in builds without CUDA. */
const dml_rt_backend_t *dml_rt_cuda_backend(void);

/* OK for "cpu" / NULL and a device of a backend this build holds
 * (rt_backends.c); else UNIMPLEMENTED (op `op`) naming the device, why it
 * is missing (-DDMLC_WITH_VULKAN=OFF, no Vulkan headers, -DDMLC_WITH_CUDA=OFF)
 * or "no such device", and the devices of this build. */
dml_status_t dml_rt_device_check_built(const char *op, const char *device);

#endif /* DML_RT_BACKEND_H_ */
