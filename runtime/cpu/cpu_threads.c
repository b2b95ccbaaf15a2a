/*
 * cpu_threads.c — a small persistent thread pool for the CPU kernels.
 *
 * One job at a time: dml_cpu_parallel_for() publishes (fn, ctx, n), wakes
 * the workers, takes tasks itself from a shared atomic counter (tagged
 * with the job, see claim()), and waits until every task taken has
 * finished, not for workers that never woke. A second caller arriving
 * while a job runs (another thread calling dml_cpu_run) runs serially.
 *
 * Waiting spins briefly before sleeping on a condition variable, on both
 * sides (workers for the next job, the caller for the workers), as ONNX
 * Runtime's pool does: a kernel's jobs follow each other within
 * microseconds, and a futex wake-up costs tens of them.
 *
 * Straggler back-off: a worker the OS preempts while it holds a task makes
 * the caller wait for it (on a loaded machine, a time slice: milliseconds),
 * and a worker that shares the caller's core halves its speed. Each
 * parallel job is timed: unless it ended well before the caller alone
 * would have done all of it (the caller's CPU time per task, times the
 * task count, times 0.85), the next jobs run on the caller alone, 4 at
 * first, twice as many after each further loss (up to 1024), and a job
 * that gains resets it to 4. So a machine whose other cores are busy costs
 * about one lost job per back-off period, and an idle one keeps every
 * thread.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <time.h>

#include "cpu_internal.h"

#define DML_CPU_MAX_THREADS 64

static struct {
  pthread_mutex_t mu;
  pthread_cond_t cv_work, cv_done;
  int n_threads;     /* requested, the caller included */
  int n_workers;     /* started */
  int failed;        /* pthread_create failed: stay with what we have */
  atomic_ullong gen; /* job generation */
  /* The current job (valid while `next` carries its tag, see claim()). */
  _Atomic(dml_cpu_task_fn) fn;
  _Atomic(void *) ctx;
  atomic_llong n;
  atomic_int participants; /* workers 1..participants may take tasks */
  /* (gen & 0xffffffff) << 32 | next task index; index CLOSED once the job
   * is over. */
  atomic_ullong next;
  atomic_llong done; /* tasks finished */
  atomic_flag busy;
  /* straggler back-off (see above); only the holder of `busy` uses them */
  int backoff_left; /* jobs still to run on the caller alone */
  int backoff_len;  /* the next back-off's length */
  pthread_t th[DML_CPU_MAX_THREADS];
  uint64_t start_gen[DML_CPU_MAX_THREADS + 1]; /* gen when worker i was created */
} g_pool = {
    /* designated: the other fields are zero (clang rejects NULL, a
     * ((void *)0), as a constant initializer of an _Atomic pointer) */
    .mu = PTHREAD_MUTEX_INITIALIZER,
    .cv_work = PTHREAD_COND_INITIALIZER,
    .cv_done = PTHREAD_COND_INITIALIZER,
    .n_threads = 1,
    .busy = ATOMIC_FLAG_INIT,
};

#define CLOSED 0xffffffffull

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

/* Claims the next task of job `g` (its low 32 bits tag `next`): -1 when
 * that job has no task left or is over. The tag keeps a worker that wakes
 * late from taking a task of a later job with this job's reading of fn. */
static long long claim(uint64_t g, long long n) {
  uint64_t tag = (g & 0xffffffffull) << 32;
  unsigned long long v = atomic_load(&g_pool.next); /* atomic_ullong's type */
  for (;;) {
    if ((v & ~0xffffffffull) != tag) return -1;
    long long i = (long long)(v & 0xffffffffull);
    if ((uint64_t)i == CLOSED || i >= n) return -1;
    if (atomic_compare_exchange_weak(&g_pool.next, &v, v + 1)) return i;
  }
}

/* Runs tasks of job `g` until none is left; signals the caller after the
 * last one. Returns the number of tasks run. */
static long long run_tasks(uint64_t g, int tid) {
  dml_cpu_task_fn fn = atomic_load(&g_pool.fn);
  void *ctx = atomic_load(&g_pool.ctx);
  long long n = atomic_load(&g_pool.n), ran = 0;
  for (long long i; (i = claim(g, n)) >= 0; ran++) {
    fn(ctx, (int64_t)i, tid);
    if (atomic_fetch_add(&g_pool.done, 1) + 1 == n && tid != 0) {
      pthread_mutex_lock(&g_pool.mu);
      pthread_cond_signal(&g_pool.cv_done);
      pthread_mutex_unlock(&g_pool.mu);
    }
  }
  return ran;
}

static int g_backoff_on = 1;
int dml_cpu_pool_backoff_set(int on) {
  int was = g_backoff_on;
  g_backoff_on = on;
  g_pool.backoff_left = g_pool.backoff_len = 0; /* a fresh start */
  return was;
}

static double now_s(clockid_t clk) {
  struct timespec ts;
  clock_gettime(clk, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void *worker(void *arg) {
  int id = (int)(intptr_t)arg; /* 1-based: the caller is tid 0 */
  pthread_mutex_lock(&g_pool.mu);
  uint64_t seen = g_pool.start_gen[id]; /* jobs published after creation are ours */
  pthread_mutex_unlock(&g_pool.mu);
  for (;;) {
    for (int k = 0; k < DML_CPU_SPIN && atomic_load(&g_pool.gen) == seen; k++)
      cpu_relax();
    if (atomic_load(&g_pool.gen) == seen) {
      pthread_mutex_lock(&g_pool.mu);
      while (atomic_load(&g_pool.gen) == seen)
        pthread_cond_wait(&g_pool.cv_work, &g_pool.mu);
      pthread_mutex_unlock(&g_pool.mu);
    }
    seen = atomic_load(&g_pool.gen);
    if (id <= atomic_load(&g_pool.participants)) run_tasks(seen, id);
  }
  return NULL;
}

/* The caller waits for the tasks taken, not for the workers: a worker the
 * OS has not scheduled yet holds no task, so a loaded machine costs the
 * caller doing more tasks itself, never a wait for a sleeping thread. */
void dml_cpu_parallel_for(int64_t n, int max_threads, dml_cpu_task_fn fn, void *ctx) {
  if (n <= 0) return;
  int want = DML_CPU_MIN(max_threads, dml_cpu_num_threads());
  if (want > n) want = (int)n;
  if (want <= 1 || n >= (int64_t)CLOSED || atomic_flag_test_and_set(&g_pool.busy)) {
    for (int64_t i = 0; i < n; i++) fn(ctx, i, 0);
    return;
  }
  if (g_pool.backoff_left > 0 && g_backoff_on) { /* a recent job lost */
    g_pool.backoff_left--;
    atomic_flag_clear(&g_pool.busy);
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
  uint64_t g = atomic_load(&g_pool.gen) + 1;
  /* The previous job's tag is CLOSED (below), so a late worker of it reads
   * these fields but claims nothing. */
  atomic_store(&g_pool.fn, fn);
  atomic_store(&g_pool.ctx, ctx);
  atomic_store(&g_pool.n, (long long)n);
  atomic_store(&g_pool.participants, DML_CPU_MIN(want - 1, g_pool.n_workers));
  atomic_store(&g_pool.done, 0);
  atomic_store(&g_pool.next, (g & 0xffffffffull) << 32);
  atomic_store(&g_pool.gen, g);
  pthread_cond_broadcast(&g_pool.cv_work);
  pthread_mutex_unlock(&g_pool.mu);

  double t0 = now_s(CLOCK_MONOTONIC), c0 = now_s(CLOCK_THREAD_CPUTIME_ID);
  long long mine = run_tasks(g, 0);
  double c1 = now_s(CLOCK_THREAD_CPUTIME_ID), t2 = 0;

  if (atomic_load(&g_pool.done) < n) {
    for (int k = 0; k < DML_CPU_SPIN && atomic_load(&g_pool.done) < n; k++) cpu_relax();
    if (atomic_load(&g_pool.done) < n) {
      pthread_mutex_lock(&g_pool.mu);
      while (atomic_load(&g_pool.done) < n)
        pthread_cond_wait(&g_pool.cv_done, &g_pool.mu);
      pthread_mutex_unlock(&g_pool.mu);
    }
  }
  t2 = now_s(CLOCK_MONOTONIC);
  /* Alone, the caller would have taken about (c1 - c0) / mine per task. */
  if (mine > 0 && g_backoff_on) { /* mine == n: the workers came too late to help */
    double alone = (c1 - c0) * (double)n / (double)mine;
    if (t2 - t0 > 0.85 * alone) {
      g_pool.backoff_left = g_pool.backoff_len > 0 ? g_pool.backoff_len : 4;
      g_pool.backoff_len = DML_CPU_MIN(2 * g_pool.backoff_left, 1024);
    } else {
      g_pool.backoff_len = 4;
    }
  }
  atomic_store(&g_pool.next, ((g & 0xffffffffull) << 32) | CLOSED);
  atomic_flag_clear(&g_pool.busy);
}
