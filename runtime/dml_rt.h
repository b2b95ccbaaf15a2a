/*
 * dml_rt.h — the dmlc runtime: load a .dmlpkg package, bind inputs, run,
 * read outputs. This is what an application embeds; it links no compiler.
 *
 *   dml_rt_model_t *model;    dml_rt_session_t *s;
 *   dml_rt_model_load_file("mnist.dmlpkg", &model);
 *   dml_rt_session_create(model, "cpu", &s);
 *   dml_rt_session_set_input(s, 0, &x);          // any batch up to the bound
 *   dml_rt_session_run(s);
 *   dml_rt_session_get_output(s, 0, &y);         // y.data lent until next run
 *   dml_rt_session_release(s); dml_rt_model_release(model);
 *
 * Ownership and threading:
 *   - *_load_* and *_create hand ownership to the caller, who *_release()s.
 *     Releasing NULL is a no-op. Release every session of a model before
 *     the model.
 *   - A model is immutable after load and may be shared by any number of
 *     threads and sessions. Its weights are used in place from the mmap'ed
 *     file (read-only); load_memory copies the bytes it is given. While a
 *     model loaded from a file lives, the file must not be truncated or
 *     rewritten in place (a mapping would fault); replacing it by rename, as
 *     dmlc's writers do, is safe.
 *   - A session belongs to one thread at a time. It owns its arena (the
 *     planned size) and scratch, allocated once at create; set_input copies
 *     into the arena, and run allocates nothing, except for string tensors
 *     (DML_DTYPE_STRING, CPU only: dml_str_t elements; set_input copies
 *     their bytes, and string results go to a heap the session owns and
 *     resets at each run; docs/package-format.md "String tensors").
 *   - Strings and arrays returned by accessors (names, meta text, info
 *     structs' pointers) are lent by the model and valid until it is
 *     released. Output views are lent by the session until its next run or
 *     release.
 *   - Inputs passed in are read during the call only; the caller keeps them.
 *
 * Errors are dml_status_t (see dml_status.h) with op "rt.load", "rt.session"
 * or "rt.run"; a kernel's error is annotated with the node's name and op.
 * A package is untrusted input: a corrupt or truncated file is DATA_LOSS
 * naming the section and offset, an op this build lacks is UNIMPLEMENTED
 * naming the op; nothing crashes on bad bytes.
 *
 * Functions: dml_rt_session_create() runs "forward" (or the package's only
 * function); dml_rt_session_create_function() runs any function by name
 * (train_step, eval_step). Globals: the package's values flagged PARAM
 * (trainable parameters) or STATE (running statistics, optimizer state)
 * are its globals, the same in every function. A session holds their
 * current values; sessions created with `share_globals_with` share them
 * (training updates what inference then reads). Sessions that share
 * globals must not run at the same time.
 */
#ifndef DML_RT_H_
#define DML_RT_H_

#include <stddef.h>
#include <stdint.h>

#include "dml_dtype.h"
#include "dml_status.h"
#include "dml_types.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct dml_rt_model dml_rt_model_t; /* immutable after load, shareable */
typedef struct dml_rt_session
    dml_rt_session_t; /* one per thread: arena, inputs, outputs */

/* A value's type as the package declares it. For dim d:
 *   static:   dims[d] = extent, dim_symbol[d] = NULL, dim_bound[d] = extent,
 *             dim_multiplier[d] = 1;
 *   symbolic: dims[d] = -1, dim_symbol[d] = "batch", dim_multiplier[d] = k
 *             (the dim is k*batch), dim_bound[d] = k * the symbol's bound. */
typedef struct dml_rt_io_info {
  const char *name;
  dml_dtype_t dtype;
  int32_t rank;
  int64_t dims[DML_MAX_RANK];
  const char *dim_symbol[DML_MAX_RANK];
  int64_t dim_bound[DML_MAX_RANK];
  int64_t dim_multiplier[DML_MAX_RANK];
} dml_rt_io_info_t;

/* Formats a type as IR text: "f32[batch,784]", "f32[16*batch]", "i64[]" for
 * a scalar. Always NUL-terminates (truncating); returns buf. */
const char *dml_rt_io_info_str(const dml_rt_io_info_t *info, char *buf, size_t cap);

/* ===================================================================== */
/* Model                                                                 */
/* ===================================================================== */

/* Loads `path`: mmap read-only (read() where mmap fails), verifies the
 * header, every section's CRC and the whole graph section (see
 * docs/package-format.md), and computes the CPU scratch size at the bounds.
 * Errors: NOT_FOUND / IO (path named), DATA_LOSS (corrupt or truncated:
 * section and offset named), UNIMPLEMENTED (newer format version, unknown
 * op named), RESOURCE_EXHAUSTED. */
dml_status_t dml_rt_model_load_file(const char *path, dml_rt_model_t **out_model);

/* As load_file, from `size` bytes in memory, which are copied (the caller
 * may free them once this returns). */
dml_status_t dml_rt_model_load_memory(const void *bytes, size_t size,
                                      dml_rt_model_t **out_model);

void dml_rt_model_release(dml_rt_model_t *model);

/* Inputs and outputs of the model's function, in the package's order. */
uint32_t dml_rt_model_num_inputs(const dml_rt_model_t *m);
uint32_t dml_rt_model_num_outputs(const dml_rt_model_t *m);
/* Fills *out for input/output `i`. Errors: OUT_OF_RANGE for i >= count. */
dml_status_t dml_rt_model_input_info(const dml_rt_model_t *m, uint32_t i,
                                     dml_rt_io_info_t *out);
dml_status_t dml_rt_model_output_info(const dml_rt_model_t *m, uint32_t i,
                                      dml_rt_io_info_t *out);
/* Index of the input/output named `name`, or -1. */
int32_t dml_rt_model_find_input(const dml_rt_model_t *m, const char *name);
int32_t dml_rt_model_find_output(const dml_rt_model_t *m, const char *name);

/* Planned arena bytes of the model's function (sized at the bounds; what a
 * session allocates for values) and the CPU kernels' scratch bytes (max over
 * nodes at the bounds; allocated besides the arena). */
int64_t dml_rt_model_arena_bytes(const dml_rt_model_t *m);
int64_t dml_rt_model_scratch_bytes(const dml_rt_model_t *m);

/* ---- introspection, for `dmlc inspect` / `dmlc summary` ---- */

/* Package container facts. */
uint32_t dml_rt_model_format_version(const dml_rt_model_t *m);
uint64_t dml_rt_model_file_size(const dml_rt_model_t *m);
/* 1 when the file is mmap'ed (weights used in place), 0 when it was read
 * or copied into memory. */
int dml_rt_model_is_mapped(const dml_rt_model_t *m);

typedef struct dml_rt_section_info {
  const char *tag; /* "meta", "graph", "weights", ... */
  uint64_t offset; /* in the file */
  uint64_t size;   /* bytes */
  uint32_t alignment;
  uint32_t crc32; /* verified at load */
} dml_rt_section_info_t;

uint32_t dml_rt_model_num_sections(const dml_rt_model_t *m);
/* Errors: OUT_OF_RANGE. */
dml_status_t dml_rt_model_section_info(const dml_rt_model_t *m, uint32_t i,
                                       dml_rt_section_info_t *out);

/* The "meta" section: UTF-8 "key: value\n" lines (producer, source, targets,
 * batch bound, command), NUL-terminated; "" when the package has none. */
const char *dml_rt_model_meta(const dml_rt_model_t *m);
/* Copies the value of meta key `key` (text after "key: " up to the line's
 * end) into buf (NUL-terminated, truncated to cap-1 bytes). Returns 1 when
 * the key is present, 0 (and buf = "") when not. */
int dml_rt_model_meta_get(const dml_rt_model_t *m, const char *key, char *buf,
                          size_t cap);

/* Whether `rows` rows (> `bound`, the batch bound) may run in chunks of
 * `bound` rows whose outputs are concatenated: only when the compiler found
 * the forward function row-independent (meta key "rows-independent: 1",
 * passes/dml_row_indep.h). Returns DML_OK then; else FAILED_PRECONDITION
 * from `op` naming the node that mixes rows (meta "rows-mixed-by"), or
 * saying the package predates the analysis, with the --batch-bound to
 * recompile with as its detail. */
dml_status_t dml_rt_model_check_chunks(const dml_rt_model_t *m, const char *op,
                                       int64_t rows, int64_t bound);

/* Symbols (named dims with an inclusive upper bound, e.g. batch<=64). */
uint32_t dml_rt_model_num_symbols(const dml_rt_model_t *m);
/* Sets *out_name and *out_bound of symbol `i`. Errors: OUT_OF_RANGE. */
dml_status_t dml_rt_model_symbol(const dml_rt_model_t *m, uint32_t i,
                                 const char **out_name, int64_t *out_bound);

/* Functions in the package ("forward", later "train_step", ...). */
uint32_t dml_rt_model_num_functions(const dml_rt_model_t *m);
const char *dml_rt_model_function_name(const dml_rt_model_t *m,
                                       uint32_t i); /* NULL if out of range */

/* Where a value lives (as the package stores it). */
typedef enum dml_rt_storage {
  DML_RT_STORAGE_INPUT = 1, /* a model input, copied into the arena */
  DML_RT_STORAGE_ARENA = 2, /* an intermediate or output, in the arena */
  DML_RT_STORAGE_CONST = 3, /* a weight or constant, in the "weights" section */
} dml_rt_storage_t;

#define DML_RT_VALUE_PARAM 0x1u /* trainable parameter (weights, biases) */
#define DML_RT_VALUE_STATE 0x2u /* non-trainable state (BN running stats, ...) */

/* A value of the model's function: its type (as dml_rt_io_info_t), where it
 * lives, and its size. `present` is 0 for an absent optional node input
 * (every other field is then zero). */
typedef struct dml_rt_value_info {
  int present;
  dml_rt_io_info_t type;
  dml_rt_storage_t storage;
  uint32_t flags;      /* DML_RT_VALUE_* */
  int64_t numel_bound; /* element count at the bounds (exact for CONST) */
  uint64_t offset;     /* arena offset, or offset in "weights" for CONST */
  uint64_t bytes;      /* bytes reserved (arena) or stored (CONST) */
} dml_rt_value_info_t;

/* Nodes of the model's function, in execution order. */
typedef struct dml_rt_node_info {
  const char *name;    /* the source node name; "" when it had none */
  const char *op_name; /* "Gemm", "Conv", ... (ops.def spelling) */
  uint32_t n_inputs;   /* including absent optional inputs */
  uint32_t n_outputs;
  uint32_t n_attrs;
} dml_rt_node_info_t;

uint32_t dml_rt_model_num_nodes(const dml_rt_model_t *m);
/* Errors: OUT_OF_RANGE for a bad node, input or output index. */
dml_status_t dml_rt_model_node_info(const dml_rt_model_t *m, uint32_t node,
                                    dml_rt_node_info_t *out);
dml_status_t dml_rt_model_node_input(const dml_rt_model_t *m, uint32_t node, uint32_t i,
                                     dml_rt_value_info_t *out);
dml_status_t dml_rt_model_node_output(const dml_rt_model_t *m, uint32_t node, uint32_t i,
                                      dml_rt_value_info_t *out);
/* 1 when output `i` of `node` is user-visible: a node of the model's function
 * reads it or the function returns it (Dropout's unused mask is not); 0
 * otherwise, and for a bad node or output index. `dmlc summary` lists these. */
int dml_rt_model_node_output_used(const dml_rt_model_t *m, uint32_t node, uint32_t i);
/* Attribute `i` of a node (lent by the model); NULL if out of range. */
const dml_attr_t *dml_rt_model_node_attr(const dml_rt_model_t *m, uint32_t node,
                                         uint32_t i);

/* Totals over the CONST values of the model's function: stored bytes, and
 * element counts of those flagged PARAM (trainable) and of the others
 * (non-trainable constants and state). */
uint64_t dml_rt_model_weights_bytes(const dml_rt_model_t *m);
int64_t dml_rt_model_param_count(const dml_rt_model_t *m);
int64_t dml_rt_model_const_count(const dml_rt_model_t *m);

/* ===================================================================== */
/* Session                                                               */
/* ===================================================================== */

/* Creates a session on `device`: "cpu" or NULL (the CPU), "vulkan" (the
 * default Vulkan device: discrete GPU, then integrated, virtual, CPU
 * implementations such as lavapipe) or "vulkan:N" (device N of
 * dml_rt_vulkan_devices). Allocates the arena and scratch once; on Vulkan
 * also the device's arena (the planned size), its copy of the weights,
 * staging for the inputs and outputs, and every kernel's pipeline
 * (through a pipeline cache). Errors: UNIMPLEMENTED for an unknown device
 * ("device 'x' is not available: no such device") or one this build lacks
 * ("device 'vulkan' is not available in this build") or for ops without a CPU
 * kernel (all listed); FAILED_PRECONDITION when the package has no
 * kernels for the device's target ("compile with --target vulkan");
 * INVALID_ARGUMENT for "kind:N" whose N is not a number;
 * NOT_FOUND when libvulkan.so.1 cannot be opened or no such Vulkan device
 * exists; RESOURCE_EXHAUSTED (host or device memory, sizes named; the
 * environment variable DMLC_VULKAN_MAX_MEMORY caps, in bytes, the device
 * memory a Vulkan session may use).
 * "cuda" / "cuda:N" (device N of dml_rt_cuda_devices; "cuda" is cuda:0)
 * run the package's "kernels.cuda" (runtime/cuda/, libcuda.so.1 opened at
 * run time): NOT_FOUND "no CUDA driver found (libcuda.so.1 ...)" or "no
 * CUDA device found"; FAILED_PRECONDITION "package has no kernels for
 * compute capability X.Y and no PTX" when no image fits the device. */
dml_status_t dml_rt_session_create(const dml_rt_model_t *m, const char *device,
                                   dml_rt_session_t **out_session);

/* Creates a session running function `function` (NULL: as
 * dml_rt_session_create) of `m` on `device`. Its globals (see the top of
 * this file) are those of `share_globals_with` when not NULL (a session of
 * the same model: FAILED_PRECONDITION otherwise), else a fresh copy of the
 * package's values: writable copies when any function of the package
 * assigns globals (a training package), else the package's weights read
 * in place (no copy). The sessions sharing globals keep them alive until the
 * last is released. On a GPU device the sessions sharing a training
 * package's globals also share the device's copy of them (its kernels
 * update it in place), so they must all run on that device
 * (FAILED_PRECONDITION otherwise). Input/output accessors below refer to
 * this function.
 * Errors: NOT_FOUND listing the package's functions; as
 * dml_rt_session_create. */
dml_status_t dml_rt_session_create_function(const dml_rt_model_t *m, const char *device,
                                            const char *function,
                                            dml_rt_session_t *share_globals_with,
                                            dml_rt_session_t **out_session);

/* Number of inputs/outputs of the session's function, and their info
 * (lent by the model). Errors: OUT_OF_RANGE. */
uint32_t dml_rt_session_num_inputs(const dml_rt_session_t *s);
uint32_t dml_rt_session_num_outputs(const dml_rt_session_t *s);
dml_status_t dml_rt_session_input_info(const dml_rt_session_t *s, uint32_t i,
                                       dml_rt_io_info_t *out_info);
dml_status_t dml_rt_session_output_info(const dml_rt_session_t *s, uint32_t i,
                                        dml_rt_io_info_t *out_info);
/* Index of the session's input/output `name`, or -1. */
int32_t dml_rt_session_find_input(const dml_rt_session_t *s, const char *name);
int32_t dml_rt_session_find_output(const dml_rt_session_t *s, const char *name);

/* ---- globals ---- */

#define DML_RT_GLOBAL_PARAM 0x1u /* trainable parameter */
#define DML_RT_GLOBAL_STATE 0x2u /* non-trainable state (BN stats, optimizer) */

typedef struct dml_rt_global_info {
  const char *name; /* lent by the model; e.g. "fc1.weight", "fc1.weight.exp_avg" */
  dml_dtype_t dtype;
  int32_t rank;
  int64_t dims[DML_MAX_RANK]; /* static */
  uint32_t flags;             /* DML_RT_GLOBAL_* */
  uint64_t bytes;
} dml_rt_global_info_t;

/* The package's globals, in a fixed order (by name). */
uint32_t dml_rt_model_num_globals(const dml_rt_model_t *m);
dml_status_t dml_rt_model_global_info(const dml_rt_model_t *m, uint32_t i,
                                      dml_rt_global_info_t *out_info);
/* Index of global `name`, or -1. */
int32_t dml_rt_model_find_global(const dml_rt_model_t *m, const char *name);

/* Sets *out_view to the session's current value of global `i` (the value
 * seen by every session sharing its globals). The data is writable when
 * the session's globals are writable copies (dml_rt_session_globals_writable)
 * and stays valid while any of those sessions lives; write it only between
 * runs. On a GPU device (vulkan, cuda) the view is the host copy: the call
 * first reads the globals back from the device when a run has updated
 * them there, and what is written into the view reaches the device before
 * the next run of any session sharing the globals; call again after later
 * runs to see their values. Errors: OUT_OF_RANGE; the device's errors when
 * reading back fails. */
dml_status_t dml_rt_session_global(dml_rt_session_t *s, uint32_t i,
                                   dml_tensor_t *out_view);
/* 1 when the session's globals are writable copies. */
int dml_rt_session_globals_writable(const dml_rt_session_t *s);

/* Copies tensor `t` into input `index`'s arena slot. Checks dtype, rank,
 * static dims, and symbolic dims: a dim k*sym must be a multiple of k, the
 * symbol's value must lie in [1, bound] ("batch 65 exceeds the compiled
 * bound 64; recompile with --batch-bound"), and must agree with the other
 * bound inputs' value of the same symbol. On error the input is left
 * unbound. Errors: INVALID_ARGUMENT / OUT_OF_RANGE naming the input and
 * symbol. */
dml_status_t dml_rt_session_set_input(dml_rt_session_t *s, uint32_t index,
                                      const dml_tensor_t *t);
/* As set_input, by input name. Errors: NOT_FOUND listing the inputs. */
dml_status_t dml_rt_session_set_input_by_name(dml_rt_session_t *s, const char *name,
                                              const dml_tensor_t *t);
/* Unbinds every input (e.g. before rebinding several at a new batch size),
 * dropping the session's references to tensors bound on the device
 * (dml_rt_session_set_input_tensor, dml_tensor.h). */
void dml_rt_session_clear_inputs(dml_rt_session_t *s);

/* Runs the function on the bound inputs. Errors: FAILED_PRECONDITION naming
 * every unbound input; a kernel's error annotated with the node's name and
 * op. Allocates nothing. Random ops draw from the Philox stream of
 * (seed, step, node) (runtime/base/dml_philox.h); each call to run is one
 * step and advances the step by one, whether or not it succeeds. */
dml_status_t dml_rt_session_run(dml_rt_session_t *s);

/* Sets the session's random state: `seed` is used by random ops without a
 * `seed` attribute, `step` is the step of the next run. A new session has
 * seed 0 and step 0, so the same package gives the same random numbers in
 * every new session; (seed, step) replays any step. */
void dml_rt_session_set_seed(dml_rt_session_t *s, uint64_t seed, uint64_t step);

/* Sets how long a run of a GPU session waits for the device to finish
 * each submission before it fails (Vulkan: the fence wait): `seconds` > 0
 * that many seconds, 0 no limit (a hung device then hangs the run), < 0 the
 * default. The default is the environment variable DMLC_VULKAN_TIMEOUT_S when
 * set (seconds, a decimal number >= 0; 0 no limit), else 120 s on a GPU
 * and 3600 s on a CPU-type Vulkan device (lavapipe: a loaded machine's
 * software rasterizer runs large models for minutes). A wait that runs
 * out is DML_STATUS_INTERNAL naming the device and the limit (the next
 * run first waits, as long, for the submission still running); a
 * DMLC_VULKAN_TIMEOUT_S that is not such a number is INVALID_ARGUMENT when
 * a Vulkan session is created or run. The CPU device ignores it, and so does CUDA for now
 * (its stream synchronization waits without a limit). */
void dml_rt_session_set_device_timeout(dml_rt_session_t *s, double seconds);

/* Sets *out_view to output `index` of the last run, with its actual dims;
 * data is lent until the next run or release. A GPU session made on an
 * eager device (dml_rt_session_create_on_device) leaves its outputs on the
 * device in its first run and in each run after one whose outputs nothing
 * read on the host (docs/tensor.md "Sessions"); the first such call after
 * that run copies them all to the host. Errors: OUT_OF_RANGE,
 * FAILED_PRECONDITION before the first successful run; the device's when
 * it reads the outputs back. */
dml_status_t dml_rt_session_get_output(dml_rt_session_t *s, uint32_t index,
                                       dml_tensor_t *out_view);

/* Bytes and copies of a session's inputs and outputs moved between the
 * host and its device, and on the device (a GPU session; a CPU session
 * moves nothing and counts nothing). */
typedef struct dml_rt_transfer_stats {
  uint64_t to_device_bytes, to_device_count; /* host -> device */
  uint64_t to_host_bytes, to_host_count;     /* device -> host */
  uint64_t on_device_bytes, on_device_count; /* device -> device */
} dml_rt_transfer_stats_t;

/* The device memory a GPU session allocated when it was created. */
typedef struct dml_rt_device_memory {
  uint64_t arena_bytes; /* its device arena (the function's planned bytes) */
  /* its device copy of the package's weights (the "weights" section); 0
   * when it uses another session's: the sessions of a training package
   * sharing globals, and the session of an If branch or Loop body, which
   * runs on its caller's device (dml_rt_session_region) */
  uint64_t weights_bytes;
  uint64_t staging_bytes; /* host-visible (Vulkan) or pinned (CUDA) staging */
  /* 1 when the session created its device context (Vulkan: a VkDevice);
   * 0 when it runs on another session's (shared globals, a region's
   * caller) or an eager device's; CUDA: 0 (every session uses the
   * device's primary context, with a stream of its own) */
  int opened_device;
} dml_rt_device_memory_t;

/* Fills *out for session s: zeros for a session running with the CPU
 * kernels (device cpu, or the CPU fall-back). Errors: INVALID_ARGUMENT for
 * s or out NULL. */
dml_status_t dml_rt_session_device_memory(const dml_rt_session_t *s,
                                          dml_rt_device_memory_t *out);

/* The totals since the session was created: each run counts every input
 * bound on the host (to_device, at the run's dims) or as a tensor on the
 * session's device (on_device: dml_rt_session_set_input_tensor), and its
 * outputs when they come to the host (to_host: at the end of the run, or
 * at the first dml_rt_session_get_output after a run that left them on the
 * device); dml_rt_session_get_output_tensor onto the session's device
 * counts on_device. The CPU fall-back's crossings of host entries are not
 * counted. Zeros for s NULL. */
void dml_rt_session_transfer_stats(const dml_rt_session_t *s,
                                   dml_rt_transfer_stats_t *out);

/* The value of symbol `i` fixed by the bound inputs, or -1 when no bound
 * input fixes it yet. A data-dependent symbol (set by a node's kernel at
 * run time): its value in the last completed run, else -1. */
int64_t dml_rt_session_symbol_value(const dml_rt_session_t *s, uint32_t i);

void dml_rt_session_release(dml_rt_session_t *s);

/* ---- devices and kernels (GPU backends) ---- */

/* The device a session runs on: "cpu", or e.g. "vulkan:0 (llvmpipe (LLVM
 * 15.0.6, 256 bits), CPU, Vulkan 1.3.238)". Lent by the session. */
const char *dml_rt_session_device(const dml_rt_session_t *s);

/* The CPU fall-back (docs/kernels.md "CPU fall-back"): when the session
 * was created for a GPU device ("vulkan", "cuda", ...) but the package's
 * kernels for that device leave its function out (dmlc compile placed it
 * on the host: an op, dtype or form the target cannot emit), the session
 * runs the function with the CPU kernels and this returns why, in words
 * ("function 'forward' runs on the host (CPU kernels): ... Multinomial: 1
 * node"); lent by the session. NULL when the session runs where asked. */
const char *dml_rt_session_fallback(const dml_rt_session_t *s);

/* The package's "placement" section (docs/package-format.md): the
 * functions `dmlc compile` placed on the host per GPU target, one line
 * "<target>\t<function>\t<why>\n" each. Sets *out_text to its bytes (lent
 * by the model, not NUL-terminated, untrusted: any bytes) and returns their
 * count; 0 and NULL when the package has none. */
size_t dml_rt_model_placement(const dml_rt_model_t *m, const char **out_text);

/* A GPU kernel of the session's function and its last run. */
typedef struct dml_rt_kernel_info {
  const char *name;      /* "k0_gemm" (lent by the model) */
  uint32_t n_nodes;      /* graph nodes it holds */
  const uint32_t *nodes; /* their indices (lent by the model) */
  double ms;    /* device time of the last run (timestamp queries); -1 if unknown */
  double flops; /* estimated floating-point operations at the last run's sizes */
  double bytes; /* estimated bytes read and written at the last run's sizes */
} dml_rt_kernel_info_t;

/* A control-flow region of the session's function (issue 14 item 2): an
 * If node's then or else function, a Loop node's body, each run by a
 * session of its own that the host drives (it reads cond, the trip count
 * and the loop condition and chooses what to run). On a GPU device that
 * session runs on the same device when the package has kernels for the
 * region's function (dml_rt_session_device and dml_rt_session_num_kernels
 * of `session` say so; dml_rt_session_kernel_info lists its kernels'
 * last run), else with the CPU kernels (dml_rt_session_fallback of
 * `session` says why). On the device it uses its caller's device and
 * device copy of the weights (dml_rt_session_device_memory), and takes the
 * captures the caller's kernels computed, and gives an If's results, on
 * the device (dml_rt_session_transfer_stats of `session` counts them as
 * on_device); docs/kernels.md "Control flow: the regions on the device".
 * Regions nest: `session` has regions of its own. */
typedef struct dml_rt_region_info {
  const char *node;                /* the If/Loop node's name (lent by the model) */
  const char *op;                  /* "If", "Loop" */
  const char *role;                /* "then", "else", "body" */
  const char *function;            /* the region's function, e.g. "choose.then" (lent) */
  const dml_rt_session_t *session; /* its session (lent by the parent) */
  uint64_t runs;                   /* times it ran in the parent's current or last run */
  uint64_t runs_total;             /* completed runs since the parent was created */
} dml_rt_region_info_t;

/* Number of regions of the session (0 for a function without If/Loop, or
 * s NULL). */
uint32_t dml_rt_session_num_regions(const dml_rt_session_t *s);
/* Region `i` (0 <= i < dml_rt_session_num_regions, in node order, then
 * before else). Errors: OUT_OF_RANGE; INVALID_ARGUMENT for s or out NULL. */
dml_status_t dml_rt_session_region(const dml_rt_session_t *s, uint32_t i,
                                   dml_rt_region_info_t *out);

/* Number of GPU kernels the session runs (0 on the CPU). */
uint32_t dml_rt_session_num_kernels(const dml_rt_session_t *s);
/* Errors: OUT_OF_RANGE; FAILED_PRECONDITION before the first run. */
dml_status_t dml_rt_session_kernel_info(const dml_rt_session_t *s, uint32_t i,
                                        dml_rt_kernel_info_t *out);

/* Per-node timing of a CPU session's runs (`dmlc bench --trace`). On (1),
 * each later run records when each node's kernel started and ended
 * (CLOCK_MONOTONIC); off (0, the default) records nothing. Turning it on
 * again clears what was recorded. Errors: UNIMPLEMENTED for a session on a
 * GPU device (its kernels' device times are dml_rt_session_kernel_info's);
 * RESOURCE_EXHAUSTED. */
dml_status_t dml_rt_session_set_profiling(dml_rt_session_t *s, int on);
/* Node `node`'s span in the last run, in ns of CLOCK_MONOTONIC: a node
 * folded into a fused CPU kernel gets that kernel's span (equal spans of
 * consecutive nodes are one kernel); a view planned in place, which runs
 * no kernel, gets 0 and 0. Errors: OUT_OF_RANGE; FAILED_PRECONDITION
 * when profiling is off or the last run did not complete with it on. */
dml_status_t dml_rt_session_node_time(const dml_rt_session_t *s, uint32_t node,
                                      uint64_t *start_ns, uint64_t *end_ns);

/* A Vulkan device as `dmlc devices` lists it. */
typedef struct dml_rt_device_info {
  char id[32];      /* "vulkan:0": the name dml_rt_session_create takes */
  char name[256];   /* the driver's device name */
  const char *kind; /* "discrete GPU", "integrated GPU", "virtual GPU", "CPU", "other" */
  uint64_t memory_bytes; /* the largest device-local memory heap, bytes */
  uint32_t api_major, api_minor, api_patch; /* Vulkan API version */
  int is_default;                           /* 1 for the device "vulkan" picks */
} dml_rt_device_info_t;

/* The device names sessions and eager tensors of this build take, e.g.
 * "cpu, vulkan[:N], cuda[:N]": the backends compiled in (CMake options
 * DMLC_WITH_VULKAN, DMLC_WITH_CUDA; docs/embedding.md "Backends"), whether
 * or not a device of theirs is present (dml_rt_vulkan_devices and
 * dml_rt_cuda_devices list those). A static string. */
const char *dml_rt_built_devices(void);

/* Lists the Vulkan devices (libvulkan.so.1 opened at run time; the
 * environment variable DMLC_VULKAN_LOADER names another loader file). Fills
 * up to `cap` entries of `out` and sets *out_n to the device count.
 * Errors: NOT_FOUND when the loader cannot be opened or reports no
 * device (the reason named); UNIMPLEMENTED in builds without Vulkan. */
dml_status_t dml_rt_vulkan_devices(dml_rt_device_info_t *out, uint32_t cap,
                                   uint32_t *out_n);

/* Lists the CUDA devices (libcuda.so.1 opened at run time; the environment
 * variable DMLC_CUDA_DRIVER names another driver file) as `dmlc devices`
 * shows them: id "cuda:N", the device's name, kind "CUDA GPU", its total
 * memory, api_major.api_minor = its compute capability and api_patch = the
 * driver's CUDA version (1000 * major + 10 * minor); cuda:0 is the
 * default. Errors: NOT_FOUND "no CUDA driver found (...)" when the driver
 * cannot be opened, or "no CUDA device found"; UNIMPLEMENTED in builds
 * without CUDA (-DDMLC_WITH_CUDA=OFF). */
dml_status_t dml_rt_cuda_devices(dml_rt_device_info_t *out, uint32_t cap,
                                 uint32_t *out_n);

/* ===================================================================== */
/* Self-check of a device (dmlc check)                                   */
/* ===================================================================== */

/* dml_rt_check() runs each GPU kernel of the model's function on `device`
 * alone, on inputs it makes, and compares what the kernel wrote with the
 * CPU reference kernels of the same nodes on the same bytes; then the whole
 * function once, end to end, against the CPU reference. It is what an app
 * calls at first launch on an unknown GPU to learn whether the package's
 * kernels give right answers there (docs/kernels.md "Checking a device").
 *
 * Inputs of a kernel: every value its nodes read that none of them
 * computes and that is not a constant (constants are the package's). Per
 * iteration each kernel runs twice: on "random" inputs (normal values of a
 * random scale, 1e-3 to 1e3) and on "edge" inputs (a quarter of the
 * elements replaced by NaN, +-inf, -0, denormals, +-1e-30, +-1e15 and, in
 * kernels that do not accumulate, +-3e38). Integer and bool inputs, and
 * inputs an op reads for shapes, indices or coordinates (dml_rt_check's
 * valid domain), get the values the function computes on its random
 * inputs, so indices stay in range; a kernel casting floats to integers
 * gets float inputs in [0, 100) and no negative, huge or non-finite edge
 * (ONNX leaves such casts undefined). Unwritten output bytes start as NaN.
 *
 * Error of an element: |device - cpu| / max(1, |cpu|, m), m the size of
 * the terms meeting in it: how far the CPU's result moves when every input
 * and constant moves by 2^-22 (relative, random signs; two steps of f16 or
 * bf16 when an input has that dtype), divided by the move,
 * at least the median of that over the value, and for kernels that
 * accumulate also the CPU's result on |inputs| and |constants|; 0 when
 * both are NaN, or equal infinities, or they differ by less than the
 * smallest normal float (a device may flush denormals to zero, as Vulkan
 * and CUDA allow: the edge inputs are also run on the CPU with denormals
 * flushed and in flush-to-zero mode, and the better match counts);
 * infinite when only one is NaN or infinite. Tolerances by kernel (its loosest node; f16
 * outputs at least 2e-3, bf16 at least 1.6e-2; CUDA's TF32 GEMMs 5e-3):
 * "exact" 0 (data movement, compares, Relu/Abs/Neg, Max/Min, max pooling,
 * ArgMax, casts ...), "arithmetic" 1e-5 (Add, Mul, Div, Sqrt ...), "transcendental" 1e-4
 * (Exp, Log, Tanh, Sigmoid, Erf, Pow ...), "accumulating" 1e-4 (Gemm, MatMul, Conv,
 * reductions, Softmax, BatchNorm and the other norms, average pooling, and any op not
 * listed); the whole function end to end 1e-3 (5e-3 with TF32 kernels). */
typedef struct dml_rt_check_options {
  uint64_t seed;       /* random inputs' seed (any value; the same gives the same) */
  uint32_t iterations; /* rounds of random + edge inputs per kernel; 0: 3 */
  /* The function's inputs for the end-to-end runs (whose values also feed
   * the kernels' integer, index and shape inputs), by input index: NULL, or
   * n_inputs entries each NULL (random: normal floats; integers 0 for a
   * one-element input, else in [0, 2); bools 0/1) or a tensor of the
   * input's dtype and a shape it takes (lent for the call; its sizes fix
   * the symbols in every iteration). */
  const dml_tensor_t *const *inputs;
  uint32_t n_inputs;
} dml_rt_check_options_t;

/* One kernel's result (or, for the last entry, the end-to-end run's). */
typedef struct dml_rt_check_kernel {
  char name[64];         /* "k3_gemm"; "end-to-end" for the whole function */
  char ops[160];         /* its nodes' ops, "Gemm,Relu" */
  const char *tol_class; /* "exact", "arithmetic", "transcendental",
                            "accumulating", "end-to-end" */
  double tolerance;      /* the scaled error allowed */
  int checked;           /* 0: not run alone (reason in `note`) */
  int passed;            /* checked and worst <= tolerance */
  double worst;          /* largest scaled error seen (INFINITY for NaN/inf) */
  /* The element of the largest error: value name (the output it belongs
   * to), flat index and coordinates, the device's and the CPU's values,
   * and the inputs ("random" or "edge") and iteration that gave it. */
  char value[96];
  int64_t index;
  int32_t rank;
  int64_t coords[DML_MAX_RANK];
  double device_value, cpu_value;
  const char *inputs;
  uint32_t iteration;
  char note[160]; /* why not checked, or "" */
} dml_rt_check_kernel_t;

typedef struct dml_rt_check_report {
  char device[256];   /* the device as the session names it */
  uint32_t n_kernels; /* entries of `kernels`: each GPU kernel, then end-to-end */
  dml_rt_check_kernel_t *kernels;
  uint32_t n_failed; /* checked entries whose worst error exceeds the tolerance */
  uint64_t seed;
  uint32_t iterations;
} dml_rt_check_report_t;

/* Checks `m`'s kernels on `device` ("vulkan", "vulkan:N", "cuda", "cuda:N";
 * see dml_rt_session_create) against the CPU reference kernels, as
 * described above; `opt` NULL: seed 0, 3 iterations. Kernels holding a node
 * whose output size the device counts (NonZero, Compress, Unique,
 * NonMaxSuppression) are checked end to end only (`checked` 0, `note`
 * saying so). *out (malloc'd, dml_rt_check_report_free) is set when the
 * check ran, whatever it found: a wrong kernel is n_failed > 0, not an
 * error. Errors: INVALID_ARGUMENT for "cpu" (the reference itself);
 * dml_rt_session_create's errors; a run's errors (the device's, or the
 * CPU's, annotated with the kernel and the node); RESOURCE_EXHAUSTED. */
dml_status_t dml_rt_check(const dml_rt_model_t *m, const char *device,
                          const dml_rt_check_options_t *opt, dml_rt_check_report_t **out);

void dml_rt_check_report_free(dml_rt_check_report_t *r);

#ifdef __cplusplus
}
#endif
#endif /* DML_RT_H_ */
