/*
 * cpu_threads.c — a small persistent thread pool for the CPU kernels.
 *
 * One job at a time: dml_cpu_parallel_for() publishes (fn, ctx, n), wakes
 * the workers, takes tasks itself from a shared atomic counter, and waits
 * until every participating worker has finished. A second caller arriving
 * while a job runs (another thread calling dml_cpu_run) runs serially.
 *
 * Waiting spins briefly before sleeping on a condition variable, on both
 * sides (workers for the next job, the caller for the workers), as ONNX
 * Runtime's pool does: a kernel's jobs follow each other within
 * microseconds, and a futex wake-up costs tens of them.
 */
#include <pthread.h>
#include <stdatomic.h>

#include "cpu_internal.h"

#define DML_CPU_MAX_THREADS 64

static struct {
  pthread_mutex_t mu;
  pthread_cond_t cv_work, cv_done;
  int n_threads;      /* requested, the caller included */
  int n_workers;      /* started */
  int failed;         /* pthread_create failed: stay with what we have */
  atomic_ullong gen;  /* job generation */
  int participants;   /* workers taking part in the current job */
  atomic_int pending; /* participants not finished yet */
  dml_cpu_task_fn fn;
  void *ctx;
  int64_t n;
  atomic_llong next;
  atomic_flag busy;
  pthread_t th[DML_CPU_MAX_THREADS];
  uint64_t start_gen[DML_CPU_MAX_THREADS + 1]; /* gen when worker i was created */
} g_pool = {PTHREAD_MUTEX_INITIALIZER,
            PTHREAD_COND_INITIALIZER,
            PTHREAD_COND_INITIALIZER,
            1,
            0,
            0,
            0,
            0,
            0,
            NULL,
            NULL,
            0,
            0,
            ATOMIC_FLAG_INIT,
            {0},
            {0}};

void dml_cpu_set_num_threads(int n) {
  if (n < 1) n = 1;
  if (n > DML_CPU_MAX_THREADS) n = DML_CPU_MAX_THREADS;
  pthread_mutex_lock(&g_pool.mu);
  g_pool.n_threads = n;
  pthread_mutex_unlock(&g_pool.mu);
}

int dml_cpu_get_num_threads(void) {
  return dml_cpu_num_threads();
}

int dml_cpu_num_threads(void) {
  pthread_mutex_lock(&g_pool.mu);
  int n = g_pool.n_threads;
  pthread_mutex_unlock(&g_pool.mu);
  return n;
}

/* Spin iterations before a waiter sleeps (about 10-50 us). */
#define DML_CPU_SPIN 20000

static inline void cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

static void run_tasks(int tid) {
  for (;;) {
    long long i = atomic_fetch_add(&g_pool.next, 1);
    if (i >= g_pool.n) break;
    g_pool.fn(g_pool.ctx, (int64_t)i, tid);
  }
}

static void *worker(void *arg) {
  int id = (int)(intptr_t)arg; /* 1-based: the caller is tid 0 */
  uint64_t seen = 0;
  pthread_mutex_lock(&g_pool.mu);
  seen = g_pool.start_gen[id]; /* jobs published after creation are ours */
  for (;;) {
    if (atomic_load(&g_pool.gen) == seen) {
      pthread_mutex_unlock(&g_pool.mu);
      for (int k = 0; k < DML_CPU_SPIN && atomic_load(&g_pool.gen) == seen; k++)
        cpu_relax();
      pthread_mutex_lock(&g_pool.mu);
    }
    while (atomic_load(&g_pool.gen) == seen)
      pthread_cond_wait(&g_pool.cv_work, &g_pool.mu);
    seen = atomic_load(&g_pool.gen);
    if (id > g_pool.participants) continue;
    pthread_mutex_unlock(&g_pool.mu);
    run_tasks(id);
    pthread_mutex_lock(&g_pool.mu);
    if (atomic_fetch_sub(&g_pool.pending, 1) == 1) pthread_cond_signal(&g_pool.cv_done);
  }
  return NULL;
}

void dml_cpu_parallel_for(int64_t n, int max_threads, dml_cpu_task_fn fn, void *ctx) {
  if (n <= 0) return;
  int want = DML_CPU_MIN(max_threads, dml_cpu_num_threads());
  if (want > n) want = (int)n;
  if (want <= 1 || atomic_flag_test_and_set(&g_pool.busy)) {
    for (int64_t i = 0; i < n; i++) fn(ctx, i, 0);
    return;
  }
  pthread_mutex_lock(&g_pool.mu);
  while (!g_pool.failed && g_pool.n_workers < want - 1) {
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, 1u << 20);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    int id = g_pool.n_workers + 1;
    g_pool.start_gen[id] = atomic_load(&g_pool.gen);
    if (pthread_create(&g_pool.th[g_pool.n_workers], &attr, worker, (void *)(intptr_t)id))
      g_pool.failed = 1;
    else
      g_pool.n_workers++;
    pthread_attr_destroy(&attr);
  }
  int parts = DML_CPU_MIN(want - 1, g_pool.n_workers);
  g_pool.fn = fn;
  g_pool.ctx = ctx;
  g_pool.n = n;
  atomic_store(&g_pool.next, 0);
  g_pool.participants = parts;
  atomic_store(&g_pool.pending, parts);
  atomic_fetch_add(&g_pool.gen, 1);
  pthread_cond_broadcast(&g_pool.cv_work);
  pthread_mutex_unlock(&g_pool.mu);

  run_tasks(0);

  for (int k = 0; k < DML_CPU_SPIN && atomic_load(&g_pool.pending) > 0; k++) cpu_relax();
  pthread_mutex_lock(&g_pool.mu);
  while (atomic_load(&g_pool.pending) > 0) pthread_cond_wait(&g_pool.cv_done, &g_pool.mu);
  pthread_mutex_unlock(&g_pool.mu);
  atomic_flag_clear(&g_pool.busy);
}
