/*
 * dml_philox.h — Philox4x32-10, the counter-based generator behind every
 * random op (ARCHITECTURE.md, decision 6).
 *
 * Philox4x32-10 is from J. K. Salmon, M. A. Moraes, R. O. Dror, D. E. Shaw,
 * "Parallel Random Numbers: As Easy as 1, 2, 3", SC'11, section 4.2: a
 * keyed bijection of a 128-bit counter (four 32-bit words) under a 64-bit
 * key (two words), ten rounds of two 32x32->64 multiplies (M0 0xD2511F53,
 * M1 0xCD9E8D57) with the key bumped by the Weyl constants (0x9E3779B9,
 * 0xBB67AE85) between rounds. The output for a given (counter, key) is the
 * same on every machine and backend; Random123's kat_vectors are checked
 * in tests/random/test_philox.c.
 *
 * The stream of a random op (the scheme every backend implements):
 *
 *   key     = { seed_lo32, seed_hi32 ^ step_hi32 }
 *   counter = { block_lo32, block_hi32, stream, step_lo32 }
 *
 * `seed` is the node's ONNX `seed` attribute when present (the float's
 * value, truncated to int64 and reinterpreted as uint64), else the session
 * seed (dml_rt_session_set_seed; 0 by default). `step` is the run counter:
 * the session's count of completed dml_rt_session_run() calls (0 for the
 * first), so every step draws fresh numbers and any step can be replayed.
 * `stream` is the node's index in its function's execution plan. `block`
 * is the element index divided by the elements one block yields:
 *
 *   32-bit uniforms (f32, f16, bf16 outputs; Dropout and Bernoulli on
 *   those): element i takes word i % 4 of block i / 4; u = (w >> 8) * 2^-24,
 *   in [0, 1) with 24 random bits.
 *   64-bit uniforms (f64): element i takes words 2(i%2), 2(i%2)+1 of block
 *   i / 2 (low word first); u = (w64 >> 11) * 2^-53, 53 random bits.
 *   Normals (Box-Muller, one pair per two uniforms of the same block, the
 *   first uniform mapped to (0, 1] so log() is finite):
 *     z0 = sqrt(-2 ln u1) cos(2 pi u2),  z1 = sqrt(-2 ln u1) sin(2 pi u2);
 *   f32: block i / 4 gives u1,u2 = words 0,1 -> elements 4b, 4b+1 and
 *   words 2,3 -> elements 4b+2, 4b+3; f64: block i / 2 gives one pair of
 *   53-bit uniforms -> elements 2b, 2b+1.
 *
 * So each element's value depends on (seed, step, node, element index)
 * only: not on thread count, tiling or which backend runs it.
 */
#ifndef DML_PHILOX_H_
#define DML_PHILOX_H_

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Philox4x32 with `rounds` rounds (10 for Philox4x32-10): out = the
 * bijection of ctr[0..3] under key[0..1]. */
void dml_philox4x32(uint32_t rounds, const uint32_t ctr[4], const uint32_t key[2],
                    uint32_t out[4]);

/* The stream of one random op's call (the scheme above). */
typedef struct dml_philox_stream {
  uint32_t key[2];
  uint32_t ctr_hi[2]; /* counter words 2, 3: stream, step_lo32 */
} dml_philox_stream_t;

/* Sets up the stream of (seed, step, stream index). */
void dml_philox_stream_init(dml_philox_stream_t *s, uint64_t seed, uint64_t step,
                            uint32_t stream);

/* The four words of block `block` of the stream (Philox4x32-10). */
void dml_philox_block(const dml_philox_stream_t *s, uint64_t block, uint32_t out[4]);

/* Uniform in [0, 1) with 24 random bits: the 32-bit layout's element i. */
float dml_philox_uniform_f32(const dml_philox_stream_t *s, uint64_t i);
/* Uniform in [0, 1) with 53 random bits: the 64-bit layout's element i. */
double dml_philox_uniform_f64(const dml_philox_stream_t *s, uint64_t i);
/* Standard normal (Box-Muller), the 32-bit layout's element i (computed
 * in double from 24-bit uniforms). */
double dml_philox_normal_f32(const dml_philox_stream_t *s, uint64_t i);
/* Standard normal (Box-Muller), the 64-bit layout's element i. */
double dml_philox_normal_f64(const dml_philox_stream_t *s, uint64_t i);

/* The GPU backends' random state (docs/kernels.md "Random values"): a
 * slot of DML_PHILOX_SLOT_BYTES past a function's planned arena, at byte
 * dml_philox_slot_offset(arena_bytes), holding four little-endian u32
 * words { seed_lo32, seed_hi32, step_lo32, step_hi32 } of the run's
 * session seed and step. The backends copy it from their staging area
 * inside the recorded command buffer / captured graph before the kernels,
 * so every replay reads the current run's words; the kernels compute
 * key and counter from them as above (a node's `seed` attribute replaces
 * the first two words). */
#define DML_PHILOX_SLOT_BYTES 16u

/* Byte offset of the random-state slot of a function whose planned arena
 * has `arena_bytes` bytes: arena_bytes rounded up to 16. */
static inline uint64_t dml_philox_slot_offset(uint64_t arena_bytes) {
  return (arena_bytes + 15u) & ~(uint64_t)15u;
}

/* The slot's four words for session seed `seed` and step `step`. */
static inline void dml_philox_slot_words(uint64_t seed, uint64_t step, uint32_t out[4]) {
  out[0] = (uint32_t)seed;
  out[1] = (uint32_t)(seed >> 32);
  out[2] = (uint32_t)step;
  out[3] = (uint32_t)(step >> 32);
}

#ifdef __cplusplus
}
#endif
#endif /* DML_PHILOX_H_ */
