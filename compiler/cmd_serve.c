/* cmd_serve.c — `dmlc serve PKG`: an HTTP/1.1 server speaking the KServe v2
 * / Open Inference Protocol REST API over the serving object of
 * runtime/serve/dml_serve.h (docs/serving.md).
 *
 * HTTP (and optional TLS, through GnuTLS) is libmicrohttpd's: epoll with a
 * small pool of threads, so an idle connection costs a socket and no
 * thread; an inference suspends its connection while the serving object
 * batches it with the other connections' requests, and the completion
 * callback resumes it. JSON requests are parsed by cJSON.
 * Replies are written here (numbers with enough digits to round-trip:
 * FP32 %.9g, FP64 %.17g). */
#include <arpa/inet.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <cjson/cJSON.h>
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "dml_file.h"
#include "dml_rt.h"
#include "dml_serve.h"
#include "dml_serve_json.h"
#include "dmlc_cmds.h"

#define DEFAULT_MAX_BODY (16u << 20)
#define DEFAULT_MAX_CONN 16384
/* Bodies up to this size are not counted against --max-inflight-body-bytes
 * (a flood of big bodies cannot starve small requests): at most this much
 * per connection on top of the cap. */
#define SMALL_BODY (64u << 10)

/* The 401 reply's message (--auth-token-file). */
static const char k_unauthorized[] =
    "unauthorized: send the header \"Authorization: Bearer <token>\" with the token of "
    "--auth-token-file";

static void usage(FILE *f) {
  fprintf(
      f,
      "usage: dmlc serve [PKG [--name NAME]] [--model NAME=PKG ...] [--host 127.0.0.1]\n"
      "                  [--port 8000] [--device D]\n"
      "                  [--batch-size N] [--batch-timeout-ms T] [--instances K]\n"
      "                  [--max-body-bytes B] [--max-connections C] [--header-timeout "
      "S]\n"
      "                  [--body-timeout S] [--max-inflight-body-bytes B]\n"
      "                  [--http-threads N] [--tls-cert PEM --tls-key PEM]\n"
      "                  [--auth-token-file FILE] [--metrics-public] [--threads N]\n"
      "                  [--verbose|--quiet]\n"
      "\n"
      "Serves the package PKG (and each --model) over HTTP/1.1 with the KServe v2 /\n"
      "Open Inference Protocol REST API, batching concurrent requests per model\n"
      "(docs/serving.md):\n"
      "  GET  /v2/health/live, /v2/health/ready   200 while serving\n"
      "  GET  /v2                                 server metadata\n"
      "  GET  /v2/models, GET|POST /v2/repository/index\n"
      "                                           the served models\n"
      "  GET  /v2/models/NAME                     model metadata (inputs, outputs;\n"
      "                                           -1 for the batch dim)\n"
      "  GET  /v2/models/NAME/ready               200 when ready\n"
      "  GET  /v2/models/NAME/stats               serving statistics (JSON)\n"
      "  GET  /metrics                            counters, gauges and histograms\n"
      "                                           in Prometheus' text format 0.0.4\n"
      "  POST /v2/models/NAME/infer               JSON tensors in, JSON tensors out;\n"
      "                                           or the binary tensor data extension\n"
      "                                           (Inference-Header-Content-Length)\n"
      "(also under /v2/models/NAME/versions/1/...). Bad requests get a 4xx reply\n"
      "{\"error\": \"...\"}. Prints \"listening on http://HOST:PORT\" once ready; on\n"
      "SIGINT or SIGTERM finishes the requests in flight, prints the statistics\n"
      "and exits with 0.\n"
      "\n"
      "flags:\n"
      "  --name NAME            the PKG argument's name in URLs (default: PKG's file\n"
      "                         name without .dmlpkg); names are 1..128 of\n"
      "                         A-Z a-z 0-9 . _ -\n"
      "  --model NAME=PKG       serve PKG as NAME too (repeat for more models; each\n"
      "                         has its own batcher and --instances sessions)\n"
      "  --host ADDR            IPv4 address to listen on (default 127.0.0.1)\n"
      "  --port N               TCP port (default 8000; 0 picks a free one)\n"
      "  --device NAME          device to run on: cpu (default), or vulkan / vulkan:N\n"
      "                         for a package with Vulkan kernels (`dmlc devices`);\n"
      "                         replies are bit-identical across batch sizes on cpu\n"
      "  --batch-size N         most rows per run (default: the package's batch\n"
      "                         bound; 1 disables batching)\n"
      "  --batch-timeout-ms T   how long the oldest queued request waits for\n"
      "                         others to fill a batch (default 1; 0: no wait)\n"
      "  --instances K          model instances (sessions) running at once\n"
      "                         (default 1)\n"
      "  --threads N            CPU threads of each run's kernels (1..64, default 1)\n"
      "  --max-body-bytes B     largest request body accepted (default 16777216);\n"
      "                         larger ones get 413, before the body is read when\n"
      "                         Content-Length tells\n"
      "  --max-inflight-body-bytes B\n"
      "                         request body bytes held at once over all\n"
      "                         connections (default 2 x --max-body-bytes, never\n"
      "                         below it); a request beyond it gets 503;\n"
      "                         bodies up to 64 KiB are not counted\n"
      "  --max-connections C    connections served at once (default 16384, lowered\n"
      "                         to what the open-file limit allows); a\n"
      "                         request on a connection opened while C others\n"
      "                         were open gets 503 (and beyond C + C/4 + 8\n"
      "                         connections are closed at once); connections\n"
      "                         opened earlier keep being served\n"
      "  --header-timeout S     close a connection whose request headers are not\n"
      "                         complete S seconds after it opened or after its\n"
      "                         last reply (default 10; 0: none)\n"
      "  --body-timeout S       close a connection whose request body is not\n"
      "                         complete S seconds after its headers (default 120;\n"
      "                         0: none); MHD also closes one idle for 30 s\n"
      "  --http-threads N       threads reading and writing connections (default\n"
      "                         4); idle connections take no thread\n"
      "  --tls-cert PEM, --tls-key PEM\n"
      "                         serve HTTPS with this certificate (chain) and its\n"
      "                         private key (PEM files; libmicrohttpd's GnuTLS)\n"
      "  --auth-token-file FILE every request but /v2/health/* needs the header\n"
      "                         \"Authorization: Bearer TOKEN\", TOKEN being the\n"
      "                         file's one line (>= 16 printable characters);\n"
      "                         others get 401 (before their body is read,\n"
      "                         but for bodies of at most 64 KiB, read and\n"
      "                         discarded first)\n"
      "  --metrics-public       /metrics needs no token either\n"
      "  --verbose              log one line per request (default: failed ones)\n"
      "  --quiet                log no request\n"
      "  -h, --help             this text\n"
      "\n"
      "Example:\n"
      "  dmlc serve fashion_mlp.dmlpkg --port 8000 --batch-size 32 &\n"
      "  curl -s localhost:8000/v2/models/fashion_mlp/infer -d \\\n"
      "    '{\"inputs\":[{\"name\":\"input\",\"shape\":[1,784],\"datatype\":\"FP32\","
      "\"data\":[...]}]}'\n");
}

static int parse_i64(const char *s, int64_t lo, int64_t hi, int64_t *out) {
  char *end;
  errno = 0;
  long long v = strtoll(s, &end, 10);
  if (!*s || *end || errno || v < lo || v > hi) return -1;
  *out = v;
  return 0;
}

/* ---- protocol datatypes ------------------------------------------------ */

static const struct {
  const char *name;
  dml_dtype_t dt;
} k_types[] = {
    {"BOOL", DML_DTYPE_BOOL},  {"UINT8", DML_DTYPE_U8},   {"UINT16", DML_DTYPE_U16},
    {"UINT32", DML_DTYPE_U32}, {"UINT64", DML_DTYPE_U64}, {"INT8", DML_DTYPE_I8},
    {"INT16", DML_DTYPE_I16},  {"INT32", DML_DTYPE_I32},  {"INT64", DML_DTYPE_I64},
    {"FP16", DML_DTYPE_F16},   {"FP32", DML_DTYPE_F32},   {"FP64", DML_DTYPE_F64},
    {"BF16", DML_DTYPE_BF16},
};

static const char *type_name(dml_dtype_t dt) {
  for (size_t i = 0; i < sizeof k_types / sizeof k_types[0]; i++)
    if (k_types[i].dt == dt) return k_types[i].name;
  return "INVALID";
}

static dml_dtype_t type_from_name(const char *s) {
  for (size_t i = 0; i < sizeof k_types / sizeof k_types[0]; i++)
    if (!strcmp(k_types[i].name, s)) return k_types[i].dt;
  return DML_DTYPE_INVALID;
}

/* ---- a growing string -------------------------------------------------- */

typedef struct {
  char *p;
  size_t len, cap;
  int oom;
} sb_t;

static void sb_reserve(sb_t *b, size_t extra) {
  if (b->oom || b->len + extra + 1 <= b->cap) return;
  size_t cap = b->cap ? b->cap : 256;
  while (cap < b->len + extra + 1) cap *= 2;
  char *p = (char *)realloc(b->p, cap);
  if (!p) {
    b->oom = 1;
    return;
  }
  b->p = p;
  b->cap = cap;
}

__attribute__((format(printf, 2, 3))) static void sb_printf(sb_t *b, const char *fmt,
                                                            ...) {
  va_list ap;
  va_start(ap, fmt);
  char tmp[256];
  int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
  va_end(ap);
  if (n < 0) return;
  if ((size_t)n < sizeof tmp) {
    sb_reserve(b, (size_t)n);
    if (b->oom) return;
    memcpy(b->p + b->len, tmp, (size_t)n + 1);
    b->len += (size_t)n;
    return;
  }
  sb_reserve(b, (size_t)n);
  if (b->oom) return;
  va_start(ap, fmt);
  vsnprintf(b->p + b->len, (size_t)n + 1, fmt, ap);
  va_end(ap);
  b->len += (size_t)n;
}

/* A JSON string literal (quotes included). */
static void sb_json_str(sb_t *b, const char *s) {
  sb_printf(b, "\"");
  for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
    if (*p == '"' || *p == '\\')
      sb_printf(b, "\\%c", *p);
    else if (*p < 0x20)
      sb_printf(b, "\\u%04x", *p);
    else
      sb_printf(b, "%c", *p);
  }
  sb_printf(b, "\"");
}

/* ---- the server -------------------------------------------------------- */

/* Why a request was refused, for /metrics' dmlc_http_rejected_total. */
enum {
  REJ_BODY_TOO_LARGE,
  REJ_CONN_LIMIT,
  REJ_BODY_BYTES_LIMIT,
  REJ_TIMEOUT,
  REJ_BAD_JSON,
  REJ_UNAUTHORIZED,
  REJ_N
};
static const char *const k_rej_names[REJ_N] = {
    "body_too_large", "connection_limit", "inflight_body_bytes",
    "timeout",        "bad_json",         "unauthorized"};
/* Upper bounds (seconds) of the latency histograms' buckets: Prometheus'
 * default buckets (client libraries' DefBuckets). */
#define N_LAT_BUCKETS 11
static const double k_lat_le[N_LAT_BUCKETS] = {0.005, 0.01, 0.025, 0.05, 0.1, 0.25,
                                               0.5,   1,    2.5,   5,    10};

/* A latency histogram (seconds) as Prometheus counts it. */
typedef struct {
  atomic_ullong bucket[N_LAT_BUCKETS + 1], us_sum, count;
} lat_hist_t;

/* One served model (--model NAME=PKG, or the package argument): its own
 * serving object (batcher and sessions) and its counters for /metrics. */
#define MODEL_NAME_MAX 128
typedef struct {
  char name[MODEL_NAME_MAX + 1]; /* in URLs: [A-Za-z0-9._-], see model_name_ok */
  const char *pkg;
  dml_rt_model_t *model;
  dml_serve_t *srv;
  atomic_ullong by_code[600]; /* replies to /v2/models/NAME/... by status code */
  lat_hist_t infer_lat;       /* inference requests: headers to reply */
} model_ent_t;

#define MAX_MODELS 64

/* An open TCP connection (MHD_OPTION_NOTIFY_CONNECTION): what it is doing
 * since when, for the header and body deadlines. */
enum { CONN_HEADERS, CONN_BODY, CONN_HANDLING, CONN_CUT };
typedef struct conn_rec {
  int fd;
  int stage; /* CONN_* */
  int over;  /* opened while --max-connections were open: its requests get 503 */
  struct timespec since;
  struct conn_rec *prev, *next;
} conn_rec_t;

typedef struct {
  model_ent_t *models;
  int n_models;
  int metrics_public; /* --metrics-public: /metrics needs no token */
  size_t max_body;
  int64_t max_conn;                        /* requests beyond it get 503 */
  double header_timeout_s, body_timeout_s; /* 0: none */
  atomic_int n_conn;                       /* open connections */
  pthread_mutex_t conns_lock;
  conn_rec_t *conns;
  int verbosity; /* 0 quiet, 1 failed requests, 2 every request */
  atomic_int ready;
  /* --auth-token-file: requests other than the health checks need
   * "Authorization: Bearer <token>" (401 otherwise); NULL: none */
  char *token;
  atomic_ullong n_2xx, n_4xx, n_5xx;
  /* in-flight body bytes: reserved from Content-Length (or counted as a
   * chunked body arrives) until the request completes; beyond
   * max_inflight_body a request gets 503 (docs/serving.md: memory) */
  size_t max_inflight_body;
  atomic_ullong inflight_body;
  atomic_int big_done; /* a request with a body over SMALL_BODY completed */
  /* /metrics (Prometheus text format) */
  atomic_ullong by_code[600];    /* replies by HTTP status code */
  atomic_ullong rejected[REJ_N]; /* rejected requests by reason */
  atomic_int in_flight;          /* requests begun and not completed */
  lat_hist_t lat;                /* every reply */
  /* The parse pool: inference bodies are parsed and checked off MHD's
   * threads (a 16 MB body takes long), in arrival order. */
  pthread_mutex_t q_lock;
  pthread_cond_t q_cond;
  struct infer_job *q_head, *q_tail;
  int q_stop;
  int n_parsers;
  pthread_t parsers[64];
} server_t;

#define MAX_IO 256

/* An inference request handed to the serving object: the connection is
 * suspended (MHD_suspend_connection) from dml_serve_submit until the
 * completion callback (infer_done, on a worker thread) has stored the
 * result and resumed it; MHD then calls on_request again, which writes the
 * reply (infer_reply). No thread waits meanwhile. */
typedef struct infer_job {
  model_ent_t *m; /* the model it runs on */
  struct MHD_Connection *conn;
  struct conn_state *cs;
  const char *url, *method; /* MHD's, valid until the request completes */
  char *id;                 /* the request's "id", or NULL */
  int want_out[MAX_IO];     /* 0 not wanted, 1 as JSON, 2 as binary data */
  atomic_int done;
  dml_status_t st;    /* set before done */
  dml_tensor_t *outs; /* set before done (on success) */
  int on_pool;        /* parsed on a parse thread (connection suspended) */
  unsigned err_code;  /* a reply refused on a parse thread: code and message */
  char *err_msg;
  struct infer_job *next; /* in the parse queue */
} infer_job_t;

typedef struct conn_state {
  char *body;
  size_t len, cap;
  size_t received; /* body bytes read, those discarded included */
  int busy;        /* chunked body beyond --max-inflight-body-bytes: 503 */
  int unauth;      /* no valid token, a body of at most SMALL_BODY bytes:
                    * read and discarded, then 401 (a client still sending
                    * its body would lose an early 401 to the close) */
  size_t reserved; /* bytes counted in sv->inflight_body */
  struct timespec t0;
  model_ent_t *m;   /* the model of a /v2/models/NAME/... request, or NULL */
  int infer;        /* an inference request (its latency is the model's too) */
  int binary;       /* Inference-Header-Content-Length: the body's first */
  size_t json_len;  /* json_len bytes are JSON, the rest binary tensor data */
  infer_job_t *job; /* an inference in flight or done; NULL otherwise */
} conn_t;

static double ms_since(const struct timespec *t0) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)(t.tv_sec - t0->tv_sec) * 1e3 + (double)(t.tv_nsec - t0->tv_nsec) / 1e6;
}

/* Moves connection c's record to `stage` (now). */
static void conn_stage(server_t *sv, struct MHD_Connection *c, int stage) {
  const union MHD_ConnectionInfo *ci =
      MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
  conn_rec_t *r = ci ? (conn_rec_t *)ci->socket_context : NULL;
  if (!r) return;
  pthread_mutex_lock(&sv->conns_lock);
  if (r->stage != CONN_CUT) {
    r->stage = stage;
    clock_gettime(CLOCK_MONOTONIC, &r->since);
  }
  pthread_mutex_unlock(&sv->conns_lock);
}

static void on_connection(void *cls, struct MHD_Connection *c, void **socket_context,
                          enum MHD_ConnectionNotificationCode toe) {
  server_t *sv = (server_t *)cls;
  if (toe == MHD_CONNECTION_NOTIFY_STARTED) {
    conn_rec_t *r = (conn_rec_t *)calloc(1, sizeof *r);
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
    int open = atomic_fetch_add(&sv->n_conn, 1) + 1;
    if (!r) return;
    r->over = open > sv->max_conn;
    r->fd = ci ? ci->connect_fd : -1;
    r->stage = CONN_HEADERS;
    clock_gettime(CLOCK_MONOTONIC, &r->since);
    pthread_mutex_lock(&sv->conns_lock);
    r->next = sv->conns;
    if (sv->conns) sv->conns->prev = r;
    sv->conns = r;
    pthread_mutex_unlock(&sv->conns_lock);
    *socket_context = r;
  } else if (toe == MHD_CONNECTION_NOTIFY_CLOSED) {
    atomic_fetch_sub(&sv->n_conn, 1);
    conn_rec_t *r = (conn_rec_t *)*socket_context;
    if (!r) return;
    pthread_mutex_lock(&sv->conns_lock);
    if (r->prev)
      r->prev->next = r->next;
    else
      sv->conns = r->next;
    if (r->next) r->next->prev = r->prev;
    pthread_mutex_unlock(&sv->conns_lock);
    free(r);
    *socket_context = NULL;
  }
}

/* Cuts connections whose headers (--header-timeout) or body
 * (--body-timeout) take too long in total (a client sending a byte now
 * and then defeats MHD's idle timeout): shutdown() makes the connection's
 * thread read end-of-file and close it. Called by the main thread. */
static void cut_slow_connections(server_t *sv) {
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  pthread_mutex_lock(&sv->conns_lock);
  for (conn_rec_t *r = sv->conns; r; r = r->next) {
    double limit = r->stage == CONN_HEADERS ? sv->header_timeout_s
                   : r->stage == CONN_BODY  ? sv->body_timeout_s
                                            : 0;
    double age = (double)(now.tv_sec - r->since.tv_sec) +
                 (double)(now.tv_nsec - r->since.tv_nsec) * 1e-9;
    if (limit <= 0 || age <= limit || r->fd < 0) continue;
    if (sv->verbosity >= 1)
      fprintf(stderr, "dmlc serve: closing a connection: its request %s took over %g s\n",
              r->stage == CONN_HEADERS ? "headers" : "body", limit);
    r->stage = CONN_CUT;
    atomic_fetch_add(&sv->rejected[REJ_TIMEOUT], 1);
    shutdown(r->fd, SHUT_RDWR);
  }
  pthread_mutex_unlock(&sv->conns_lock);
}

static void lat_add(lat_hist_t *h, double sec) {
  int bkt = 0;
  while (bkt < N_LAT_BUCKETS && sec > k_lat_le[bkt]) bkt++;
  atomic_fetch_add(&h->bucket[bkt], 1);
  atomic_fetch_add(&h->us_sum, (unsigned long long)(sec * 1e6));
  atomic_fetch_add(&h->count, 1);
}

/* Queues `body` (malloc'd, taken) with `code`; counts it and logs one
 * line (every request with --verbose, failed ones by default; `note` is
 * the error message). json_len: a binary tensor data reply (its first
 * json_len bytes are JSON), 0 otherwise. */
static enum MHD_Result reply_bin(server_t *sv, struct MHD_Connection *c, conn_t *cs,
                                 unsigned code, const char *method, const char *url,
                                 char *body, size_t len, const char *note,
                                 size_t json_len) {
  struct MHD_Response *r =
      MHD_create_response_from_buffer(len, body, MHD_RESPMEM_MUST_FREE);
  if (!r) {
    free(body);
    return MHD_NO;
  }
  MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE,
                          json_len                  ? "application/octet-stream"
                          : strcmp(url, "/metrics") ? "application/json"
                                                    : "text/plain; version=0.0.4");
  if (json_len) {
    char n[32];
    snprintf(n, sizeof n, "%zu", json_len);
    MHD_add_response_header(r, "Inference-Header-Content-Length", n);
  }
  if (code == 413 || code == 503) MHD_add_response_header(r, "Connection", "close");
  if (code == 401) {
    MHD_add_response_header(r, MHD_HTTP_HEADER_WWW_AUTHENTICATE, "Bearer realm=\"dmlc\"");
    atomic_fetch_add(&sv->rejected[REJ_UNAUTHORIZED], 1);
  }
  if (code == MHD_HTTP_METHOD_NOT_ALLOWED)
    MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW,
                            strstr(url, "/infer")              ? "POST"
                            : strstr(url, "/repository/index") ? "GET, HEAD, POST"
                                                               : "GET, HEAD");
  enum MHD_Result ret = MHD_queue_response(c, code, r);
  MHD_destroy_response(r);
  atomic_fetch_add(&sv->by_code[code < 600 ? code : 0], 1);
  if (code == 413) atomic_fetch_add(&sv->rejected[REJ_BODY_TOO_LARGE], 1);
  if (code == 400 && note && !strncmp(note, "malformed JSON", 14))
    atomic_fetch_add(&sv->rejected[REJ_BAD_JSON], 1);
  if (code == 503 && note && !strncmp(note, "server busy: ", 13))
    atomic_fetch_add(
        &sv->rejected[note[13] == 'i' ? REJ_BODY_BYTES_LIMIT : REJ_CONN_LIMIT], 1);
  if (cs) {
    double sec = ms_since(&cs->t0) / 1e3;
    lat_add(&sv->lat, sec);
    if (cs->m) {
      atomic_fetch_add(&cs->m->by_code[code < 600 ? code : 0], 1);
      if (cs->infer) lat_add(&cs->m->infer_lat, sec);
    }
  }
  if (code < 300)
    atomic_fetch_add(&sv->n_2xx, 1);
  else if (code < 500)
    atomic_fetch_add(&sv->n_4xx, 1);
  else
    atomic_fetch_add(&sv->n_5xx, 1);
  if (sv->verbosity >= 2 || (sv->verbosity == 1 && code >= 400))
    fprintf(stderr, "dmlc serve: %s %s %u in %zu B out %zu B %.3f ms%s%s\n", method, url,
            code, cs ? cs->len : 0, len, cs ? ms_since(&cs->t0) : 0.0, note ? ": " : "",
            note ? note : "");
  return ret;
}

static enum MHD_Result reply(server_t *sv, struct MHD_Connection *c, conn_t *cs,
                             unsigned code, const char *method, const char *url,
                             char *body, size_t len, const char *note) {
  return reply_bin(sv, c, cs, code, method, url, body, len, note, 0);
}

static enum MHD_Result reply_sb(server_t *sv, struct MHD_Connection *c, conn_t *cs,
                                unsigned code, const char *method, const char *url,
                                sb_t *b, const char *note) {
  if (b->oom || !b->p) {
    free(b->p);
    const char *msg = "{\"error\": \"out of memory\"}";
    return reply(sv, c, cs, 500, method, url, strdup(msg), strlen(msg), "out of memory");
  }
  return reply(sv, c, cs, code, method, url, b->p, b->len, note);
}

__attribute__((format(printf, 6, 7))) static enum MHD_Result reply_error(
    server_t *sv, struct MHD_Connection *c, conn_t *cs, unsigned code,
    const char *url_method[2], const char *fmt, ...) {
  char msg[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  if (cs && cs->job && cs->job->on_pool && !atomic_load(&cs->job->done)) {
    /* on a parse thread: kept for the reply once the connection resumes */
    if (!cs->job->err_code) {
      cs->job->err_code = code;
      cs->job->err_msg = strdup(msg);
    }
    return MHD_YES;
  }
  sb_t b = {0};
  sb_printf(&b, "{\"error\": ");
  sb_json_str(&b, msg);
  sb_printf(&b, "}");
  return reply_sb(sv, c, cs, code, url_method[1], url_method[0], &b, msg);
}

/* {"name": ..., "datatype": ..., "shape": [...]} for io (batch dim -1). */
static void io_json(sb_t *b, const dml_rt_io_info_t *io) {
  sb_printf(b, "{\"name\": ");
  sb_json_str(b, io->name);
  sb_printf(b, ", \"datatype\": \"%s\", \"shape\": [", type_name(io->dtype));
  for (int32_t d = 0; d < io->rank; d++)
    sb_printf(b, "%s%" PRId64, d ? ", " : "",
              io->dim_symbol[d] ? (int64_t)-1 : io->dims[d]);
  sb_printf(b, "]}");
}

static void model_metadata(const model_ent_t *me, sb_t *b) {
  sb_printf(b, "{\"name\": ");
  sb_json_str(b, me->name);
  sb_printf(b, ", \"versions\": [\"1\"], \"platform\": \"dmlc\", \"inputs\": [");
  for (uint32_t i = 0; i < dml_rt_model_num_inputs(me->model); i++) {
    dml_rt_io_info_t io;
    dml_status_t st = dml_rt_model_input_info(me->model, i, &io);
    if (st) {
      dml_status_free(st);
      continue;
    }
    if (i) sb_printf(b, ", ");
    io_json(b, &io);
  }
  sb_printf(b, "], \"outputs\": [");
  for (uint32_t i = 0; i < dml_rt_model_num_outputs(me->model); i++) {
    dml_rt_io_info_t io;
    dml_status_t st = dml_rt_model_output_info(me->model, i, &io);
    if (st) {
      dml_status_free(st);
      continue;
    }
    if (i) sb_printf(b, ", ");
    io_json(b, &io);
  }
  sb_printf(b, "]}");
}

/* The model's statistics; "http" counts the server's replies (all models
 * and paths), "model_http" this model's paths' replies by class. */
static void stats_json(server_t *sv, model_ent_t *me, sb_t *b) {
  dml_serve_stats_t st;
  dml_serve_get_stats(me->srv, &st);
  unsigned long long mc[3] = {0, 0, 0};
  for (unsigned c = 100; c < 600; c++)
    if (c >= 200) mc[c < 300 ? 0 : c < 500 ? 1 : 2] += atomic_load(&me->by_code[c]);
  sb_printf(b, "{\"name\": ");
  sb_json_str(b, me->name);
  sb_printf(
      b,
      ", \"batch_size\": %" PRId64 ", \"requests\": %" PRIu64
      ", \"requests_failed\": %" PRIu64 ", \"rows\": %" PRIu64 ", \"runs\": %" PRIu64
      ", \"mean_rows_per_run\": %.3f, \"queued_requests\": %" PRIu64
      ", \"latency_ms\": {\"mean\": %.3f, \"p50\": %.3f, \"p90\": %.3f, \"p99\": %.3f, "
      "\"max\": %.3f}, \"queue_ms\": {\"mean\": %.3f, \"p50\": %.3f, \"p90\": %.3f, "
      "\"p99\": %.3f}, \"http\": {\"2xx\": %llu, \"4xx\": %llu, \"5xx\": %llu}, "
      "\"model_http\": {\"2xx\": %llu, \"4xx\": %llu, \"5xx\": %llu}}",
      dml_serve_batch_size(me->srv), st.requests, st.requests_failed, st.rows, st.runs,
      st.mean_rows_per_run, st.queued_requests, st.latency_ms_mean, st.latency_ms_p50,
      st.latency_ms_p90, st.latency_ms_p99, st.latency_ms_max, st.queue_ms_mean,
      st.queue_ms_p50, st.queue_ms_p90, st.queue_ms_p99,
      (unsigned long long)atomic_load(&sv->n_2xx),
      (unsigned long long)atomic_load(&sv->n_4xx),
      (unsigned long long)atomic_load(&sv->n_5xx), mc[0], mc[1], mc[2]);
}

/* The process's resident memory in bytes (/proc/self/statm), 0 when
 * unknown. */
static unsigned long long resident_bytes(void) {
  unsigned long long pages = 0, rss = 0;
  FILE *f = fopen("/proc/self/statm", "r");
  if (!f) return 0;
  int ok = fscanf(f, "%llu %llu", &pages, &rss) == 2;
  fclose(f);
  long pg = sysconf(_SC_PAGESIZE);
  return ok && pg > 0 ? rss * (unsigned long long)pg : 0;
}

/* The samples of histogram h (name{label,le="..."}): cumulative buckets,
 * _sum (seconds) and _count. `label` is `model="x",` or "". */
static void lat_hist_text(sb_t *b, const char *name, const char *label,
                          const lat_hist_t *h) {
  unsigned long long cum = 0;
  for (int i = 0; i <= N_LAT_BUCKETS; i++) {
    cum += atomic_load(&h->bucket[i]);
    if (i < N_LAT_BUCKETS)
      sb_printf(b, "%s_bucket{%sle=\"%g\"} %llu\n", name, label, k_lat_le[i], cum);
    else
      sb_printf(b, "%s_bucket{%sle=\"+Inf\"} %llu\n", name, label, cum);
  }
  size_t n = strlen(label);
  sb_printf(b, "%s_sum%s%.*s%s %.6f\n%s_count%s%.*s%s %llu\n", name, n ? "{" : "",
            (int)(n ? n - 1 : 0), label, n ? "}" : "",
            (double)atomic_load(&h->us_sum) / 1e6, name, n ? "{" : "",
            (int)(n ? n - 1 : 0), label, n ? "}" : "",
            (unsigned long long)atomic_load(&h->count));
}

/* /metrics: Prometheus' text exposition format (version 0.0.4). Server
 * wide: replies by status code, rejected requests by reason, in-flight
 * requests and body bytes, open connections, the latency of every reply
 * (a histogram, seconds, from the request's headers to its reply being
 * queued), the resident memory. Per model (label model): replies to its
 * paths by status code, inference requests by result and their rows and
 * latency, queued requests and rows, rows per batched run (a histogram)
 * and the batch size. */
static void metrics_text(server_t *sv, sb_t *b) {
  sb_printf(b,
            "# HELP dmlc_http_requests_total HTTP replies by status code.\n"
            "# TYPE dmlc_http_requests_total counter\n");
  for (unsigned c = 100; c < 600; c++) {
    unsigned long long n = atomic_load(&sv->by_code[c]);
    if (n) sb_printf(b, "dmlc_http_requests_total{code=\"%u\"} %llu\n", c, n);
  }
  sb_printf(b,
            "# HELP dmlc_http_rejected_total Requests refused, by reason (413 body "
            "too large, 503 connection limit or in-flight body bytes, header/body "
            "timeout: connection closed, 400 malformed JSON, 401 unauthorized).\n"
            "# TYPE dmlc_http_rejected_total counter\n");
  for (int r = 0; r < REJ_N; r++)
    sb_printf(b, "dmlc_http_rejected_total{reason=\"%s\"} %llu\n", k_rej_names[r],
              (unsigned long long)atomic_load(&sv->rejected[r]));
  sb_printf(b,
            "# HELP dmlc_http_requests_in_flight Requests begun and not yet completed.\n"
            "# TYPE dmlc_http_requests_in_flight gauge\n"
            "dmlc_http_requests_in_flight %d\n"
            "# HELP dmlc_http_inflight_body_bytes Request body bytes held or reserved.\n"
            "# TYPE dmlc_http_inflight_body_bytes gauge\n"
            "dmlc_http_inflight_body_bytes %llu\n"
            "# HELP dmlc_http_connections Open TCP connections.\n"
            "# TYPE dmlc_http_connections gauge\n"
            "dmlc_http_connections %d\n"
            "# HELP process_resident_memory_bytes Resident memory size in bytes.\n"
            "# TYPE process_resident_memory_bytes gauge\n"
            "process_resident_memory_bytes %llu\n",
            atomic_load(&sv->in_flight),
            (unsigned long long)atomic_load(&sv->inflight_body), atomic_load(&sv->n_conn),
            resident_bytes());
  sb_printf(b,
            "# HELP dmlc_http_request_duration_seconds Time from a request's "
            "headers to its reply.\n"
            "# TYPE dmlc_http_request_duration_seconds histogram\n");
  lat_hist_text(b, "dmlc_http_request_duration_seconds", "", &sv->lat);

  /* per model: one family at a time (the format wants a family's samples
   * together) */
  enum { F_CODES, F_INFER, F_ROWS, F_QREQ, F_QROWS, F_BATCH, F_BMAX, F_LAT, F_N };
  static const char *const k_fam[F_N][3] = {
      {"dmlc_model_requests_total", "counter",
       "HTTP replies to a model's paths (/v2/models/NAME/...) by status code."},
      {"dmlc_inference_requests_total", "counter",
       "Inference requests completed by the model's serving object, by result."},
      {"dmlc_inference_rows_total", "counter", "Rows of the completed requests."},
      {"dmlc_queue_requests", "gauge",
       "Requests waiting for a run (none of their "
       "rows started)."},
      {"dmlc_queue_rows", "gauge", "Rows waiting for a run."},
      {"dmlc_batch_rows", "histogram", "Rows per session run (batch size)."},
      {"dmlc_batch_size_max", "gauge", "Most rows per run (--batch-size)."},
      {"dmlc_inference_duration_seconds", "histogram",
       "Time from an inference request's headers to its reply."},
  };
  dml_serve_stats_t *sts = (dml_serve_stats_t *)calloc((size_t)sv->n_models, sizeof *sts);
  if (!sts) {
    b->oom = 1;
    return;
  }
  for (int i = 0; i < sv->n_models; i++) dml_serve_get_stats(sv->models[i].srv, &sts[i]);
  for (int f = 0; f < F_N; f++) {
    sb_printf(b, "# HELP %s %s\n# TYPE %s %s\n", k_fam[f][0], k_fam[f][2], k_fam[f][0],
              k_fam[f][1]);
    for (int i = 0; i < sv->n_models; i++) {
      model_ent_t *me = &sv->models[i];
      const dml_serve_stats_t *st = &sts[i];
      sb_t lab = {0}; /* model="NAME", (escaped) */
      sb_printf(&lab, "model=");
      sb_json_str(&lab, me->name); /* JSON's escapes of \ " are Prometheus' */
      sb_printf(&lab, ",");
      if (lab.oom) {
        b->oom = 1;
        free(lab.p);
        break;
      }
      const char *l = lab.p;
      int ln = (int)lab.len - 1; /* without the comma */
      switch (f) {
        case F_CODES:
          for (unsigned c = 100; c < 600; c++) {
            unsigned long long n = atomic_load(&me->by_code[c]);
            if (n) sb_printf(b, "%s{%scode=\"%u\"} %llu\n", k_fam[f][0], l, c, n);
          }
          break;
        case F_INFER:
          sb_printf(
              b, "%s{%sresult=\"ok\"} %" PRIu64 "\n%s{%sresult=\"failed\"} %" PRIu64 "\n",
              k_fam[f][0], l, st->requests - st->requests_failed, k_fam[f][0], l,
              st->requests_failed);
          break;
        case F_ROWS:
          sb_printf(b, "%s{%.*s} %" PRIu64 "\n", k_fam[f][0], ln, l, st->rows);
          break;
        case F_QREQ:
          sb_printf(b, "%s{%.*s} %" PRIu64 "\n", k_fam[f][0], ln, l, st->queued_requests);
          break;
        case F_QROWS:
          sb_printf(b, "%s{%.*s} %" PRIu64 "\n", k_fam[f][0], ln, l, st->queued_rows);
          break;
        case F_BATCH: {
          /* buckets 1, 2, 4, ... up to the first >= the batch size */
          int64_t bs = dml_serve_batch_size(me->srv);
          uint64_t cum = 0;
          for (int k = 0; k < DML_SERVE_ROWS_BUCKETS; k++) {
            cum += st->runs_by_rows[k];
            if (k > 0 && ((int64_t)1 << (k - 1)) >= bs) continue; /* all 0 beyond */
            sb_printf(b, "%s_bucket{%sle=\"%lld\"} %" PRIu64 "\n", k_fam[f][0], l,
                      1LL << k, cum);
          }
          sb_printf(b,
                    "%s_bucket{%sle=\"+Inf\"} %" PRIu64 "\n%s_sum{%.*s} %" PRIu64
                    "\n%s_count{%.*s} %" PRIu64 "\n",
                    k_fam[f][0], l, st->runs, k_fam[f][0], ln, l, st->run_rows,
                    k_fam[f][0], ln, l, st->runs);
          break;
        }
        case F_BMAX:
          sb_printf(b, "%s{%.*s} %" PRId64 "\n", k_fam[f][0], ln, l,
                    dml_serve_batch_size(me->srv));
          break;
        case F_LAT: lat_hist_text(b, k_fam[f][0], l, &me->infer_lat); break;
        default: break;
      }
      free(lab.p);
    }
  }
  free(sts);
}

/* ---- infer ------------------------------------------------------------- */

/* What cJSON would accept but a strict reader must not: a NUL byte in the
 * body, and the escape \\u0000 in a string (cJSON cuts the string there,
 * so the name read would differ from the name sent). NULL when clean. */
/* Offset of the first byte of b[0, n) that is not well-formed UTF-8 (RFC
 * 3629 section 4: no overlong forms, no surrogates, nothing above
 * U+10FFFF), or n. */
static size_t utf8_bad_at(const unsigned char *b, size_t n) {
  size_t i = 0;
  while (i < n) {
    unsigned c = b[i];
    if (c < 0x80) {
      i++;
      continue;
    }
    size_t len = c >= 0xC2 && c <= 0xDF   ? 2
                 : c >= 0xE0 && c <= 0xEF ? 3
                 : c >= 0xF0 && c <= 0xF4 ? 4
                                          : 0;
    if (!len || n - i < len) return i;
    unsigned lo = 0x80, hi = 0xBF; /* the second byte's range */
    if (c == 0xE0) lo = 0xA0;
    if (c == 0xED) hi = 0x9F; /* U+D800..DFFF are surrogates */
    if (c == 0xF0) lo = 0x90;
    if (c == 0xF4) hi = 0x8F; /* above U+10FFFF */
    if (b[i + 1] < lo || b[i + 1] > hi) return i;
    for (size_t k = 2; k < len; k++)
      if (b[i + k] < 0x80 || b[i + k] > 0xBF) return i;
    i += len;
  }
  return n;
}

static const char *strict_json_check(const char *b, size_t n) {
  if (n && memchr(b, 0, n)) return "malformed JSON: a NUL byte in the request body";
  /* RFC 8259 section 7: control characters (below U+0020) only escaped in
   * strings (cJSON takes them raw) */
  for (size_t i = 0, in_str = 0; i < n; i++) {
    unsigned char ch = (unsigned char)b[i];
    if (in_str) {
      if (ch == '\\')
        i++;
      else if (ch == '"')
        in_str = 0;
      else if (ch < 0x20)
        return "malformed JSON: a control character in a string (escape it: \\u00XX)";
    } else if (ch == '"') {
      in_str = 1;
    }
  }
  /* RFC 8259 section 8.1: JSON text is UTF-8; a string echoed (the "id")
   * must not make the reply invalid */
  if (utf8_bad_at((const unsigned char *)b, n) < n)
    return "malformed JSON: the body is not valid UTF-8";
  for (size_t i = 0; i + 1 < n; i++) {
    if (b[i] != '\\') continue;
    if (b[i + 1] == 'u' && i + 5 < n && b[i + 2] == '0' && b[i + 3] == '0' &&
        b[i + 4] == '0' && b[i + 5] == '0')
      return "malformed JSON: \\u0000 (NUL) in a string is not accepted";
    i++; /* the escaped character */
  }
  return NULL;
}

/* The first key of object `o` that appears twice in it (cJSON would read
 * the first and ignore the other), or NULL. */
static const char *duplicate_key(const cJSON *o) {
  if (!cJSON_IsObject(o)) return NULL;
  for (const cJSON *a = o->child; a; a = a->next)
    for (const cJSON *b = a->next; b; b = b->next)
      if (a->string && b->string && !strcmp(a->string, b->string)) return a->string;
  return NULL;
}

/* Flattens `data` (numbers, or nested arrays of them) into dst; counts
 * values in *n even past `cap`. The nesting is checked as
 * dml_serve_json_read_data does: flat, or nested as the shape `t`. Returns
 * a message for a bad element or structure. */
static const char *flatten(const cJSON *data, dml_dtype_t dt, void *dst, int64_t cap,
                           int64_t *n, int depth, const dml_tensor_t *t) {
  static const char k_shape[] =
      "nested \"data\" does not match the shape (give it flat, or nested as the "
      "shape: every value at the depth of the rank, each array as long as its dim)";
  if (depth > (t->rank > 0 ? t->rank : 1))
    return "data nests deeper than the tensor's rank";
  if (cJSON_IsArray(data)) {
    int64_t len = 0, arrays = 0;
    for (const cJSON *e = data->child; e; e = e->next) len++, arrays += cJSON_IsArray(e);
    if (arrays && arrays != len) return k_shape; /* values beside arrays */
    if ((depth > 0 || arrays) && (depth >= t->rank || len != t->dims[depth]))
      return k_shape;
    for (const cJSON *e = data->child; e; e = e->next) {
      const char *err = flatten(e, dt, dst, cap, n, depth + 1, t);
      if (err) return err;
    }
    return NULL;
  }
  if (depth > 1 && depth != t->rank) return k_shape;
  if (depth == 0 && t->rank != 0) return k_shape;
  double v;
  int is_bool = cJSON_IsBool(data);
  if (is_bool) {
    v = cJSON_IsTrue(data) ? 1 : 0;
  } else if (cJSON_IsNumber(data)) {
    v = data->valuedouble;
  } else {
    return "a value that is not a number (strings, null and objects are not tensors)";
  }
  const char *bad = dml_serve_json_check_value(dt, v, is_bool);
  if (bad) return bad;
  if (*n < cap) {
    if (dml_dtype_is_float(dt))
      dml_store_f64(dt, dst, (size_t)*n, v);
    else
      dml_store_i64(dt, dst, (size_t)*n, (int64_t)v);
  }
  (*n)++;
  return NULL;
}

static void value_json(sb_t *b, const dml_tensor_t *t, size_t i) {
  switch (t->dtype) {
    case DML_DTYPE_F32:
    case DML_DTYPE_F16:
    case DML_DTYPE_BF16:
    case DML_DTYPE_F64: {
      double v = dml_load_f64(t->dtype, t->data, i);
      if (!isfinite(v))
        sb_printf(b, "null");
      else if (t->dtype == DML_DTYPE_F64)
        sb_printf(b, "%.17g", v);
      else
        sb_printf(b, "%.9g", v);
      break;
    }
    case DML_DTYPE_BOOL:
      sb_printf(b, "%s", ((const uint8_t *)t->data)[i] ? "true" : "false");
      break;
    case DML_DTYPE_U64: sb_printf(b, "%" PRIu64, ((const uint64_t *)t->data)[i]); break;
    default: sb_printf(b, "%" PRId64, dml_load_i64(t->dtype, t->data, i)); break;
  }
}

static unsigned http_code_of(dml_status_t st) {
  switch (dml_status_code(st)) {
    case DML_STATUS_INVALID_ARGUMENT:
    case DML_STATUS_OUT_OF_RANGE:
    case DML_STATUS_NOT_FOUND: return 400;
    case DML_STATUS_FAILED_PRECONDITION:
    case DML_STATUS_RESOURCE_EXHAUSTED: return 503;
    default: return 500;
  }
}

static void job_free(infer_job_t *job) {
  if (!job) return;
  dml_serve_outputs_free(job->outs);
  dml_status_free(job->st);
  free(job->id);
  free(job->err_msg);
  free(job);
}

/* dml_serve_done_fn of an inference: stores the result and resumes the
 * connection (after which `user` may be freed by MHD's thread). */
static void infer_done(void *user, dml_status_t status, dml_tensor_t *outputs,
                       uint32_t n_outputs) {
  (void)n_outputs;
  infer_job_t *job = (infer_job_t *)user;
  struct MHD_Connection *c = job->conn;
  job->st = status;
  job->outs = outputs;
  atomic_store(&job->done, 1);
  MHD_resume_connection(c);
}

static enum MHD_Result infer_reply(server_t *sv, struct MHD_Connection *c, conn_t *cs,
                                   const char *um[2]);
static enum MHD_Result infer(server_t *sv, struct MHD_Connection *c, conn_t *cs,
                             const char *um[2], int *handed);

/* A parse thread: takes suspended inference requests in arrival order,
 * parses and checks each (infer), which submits it to the serving object;
 * one refused while parsing keeps its error (reply_error) and is resumed
 * here. */
static void *parse_thread(void *arg) {
  server_t *sv = (server_t *)arg;
  for (;;) {
    pthread_mutex_lock(&sv->q_lock);
    while (!sv->q_head && !sv->q_stop) pthread_cond_wait(&sv->q_cond, &sv->q_lock);
    infer_job_t *job = sv->q_head;
    if (job) {
      sv->q_head = job->next;
      if (!sv->q_head) sv->q_tail = NULL;
    }
    pthread_mutex_unlock(&sv->q_lock);
    if (!job) return NULL; /* stopped and drained */
    const char *um[2] = {job->url, job->method};
    struct MHD_Connection *c = job->conn;
    int handed = 0;
    infer(sv, c, job->cs, um, &handed);
    if (!handed) { /* refused: job->err_code says how */
      atomic_store(&job->done, 1);
      MHD_resume_connection(c);
    }
  }
}

/* Queues an inference request for the parse threads; 0 when the pool has
 * stopped (shutting down). The connection is suspended by the caller. */
static int parse_enqueue(server_t *sv, infer_job_t *job) {
  pthread_mutex_lock(&sv->q_lock);
  int ok = !sv->q_stop;
  if (ok) {
    if (sv->q_tail)
      sv->q_tail->next = job;
    else
      sv->q_head = job;
    sv->q_tail = job;
    pthread_cond_signal(&sv->q_cond);
  }
  pthread_mutex_unlock(&sv->q_lock);
  return ok;
}

/* Parses and checks the inference request in cs->body, then submits it to
 * the serving object. *handed is set to 1 once the job is out of this
 * call's hands: submitted (its completion resumes the connection) or
 * refused by the submit (resumed here); after that the caller must not
 * touch the job or the connection state, which MHD's thread may already
 * have replied to and freed. Otherwise a reply was refused (queued at once
 * on an MHD thread; kept in the job on a parse thread). A request parsed on
 * an MHD thread suspends its connection just before the submit. */
static enum MHD_Result infer(server_t *sv, struct MHD_Connection *c, conn_t *cs,
                             const char *um[2], int *handed) {
  *handed = 0;
  model_ent_t *me = cs->job->m;
  const dml_rt_model_t *m = me->model;
  uint32_t n_in = dml_rt_model_num_inputs(m), n_out = dml_rt_model_num_outputs(m);
  if (n_in > MAX_IO || n_out > MAX_IO)
    return reply_error(sv, c, cs, 500, um, "model has too many inputs or outputs");
  /* With the binary tensor data extension the JSON is the body's first
   * json_len bytes; the rest is the inputs' raw data. */
  size_t json_len = cs->binary ? cs->json_len : cs->len;
  const unsigned char *bin = (const unsigned char *)(cs->body ? cs->body : "") + json_len;
  size_t bin_len = cs->len - json_len, bin_off = 0;
  const char *bad_json = strict_json_check(cs->body, json_len);
  if (bad_json) return reply_error(sv, c, cs, 400, um, "%s", bad_json);
  /* The tree is of the skeleton (the inputs' "data" values replaced by 0,
   * read straight into the tensors below) when the body has the request's
   * form; else of the whole body, which reports what is wrong. */
  const char *body = cs->body ? cs->body : "";
  dml_serve_json_span_t spans[MAX_IO];
  size_t n_spans = 0, skel_len = 0;
  char *skel = NULL;
  if (dml_serve_json_split(body, json_len, spans, MAX_IO, &n_spans, &skel, &skel_len))
    n_spans = 0;
  const char *text = skel ? skel : body;
  size_t text_len = skel ? skel_len : json_len;
  const char *end = NULL;
  cJSON *root = cJSON_ParseWithLengthOpts(text, text_len, &end, 0);
  /* Strict: nothing but whitespace after the one JSON value. */
  size_t at = end && end >= text ? (size_t)(end - text) : root ? text_len : 0;
  while (root && at < text_len && strchr(" \t\r\n", text[at])) at++;
  if (!root || at < text_len) {
    /* the offset in the body: add the spans cut before it */
    size_t body_at = at;
    for (size_t s = 0, cut = 0; s < n_spans; s++) {
      if (spans[s].start - cut >= at) break;
      body_at += spans[s].end - spans[s].start - 1;
      cut += spans[s].end - spans[s].start - 1;
    }
    cJSON_Delete(root);
    free(skel);
    return reply_error(
        sv, c, cs, 400, um,
        root ? "malformed JSON: data after the JSON value (at byte %zu of %zu)"
             : "malformed JSON (at byte %zu of %zu)",
        body_at, json_len);
  }
  enum MHD_Result ret;
  dml_tensor_t in[MAX_IO];
  void *bufs[MAX_IO] = {0};
  int given[MAX_IO] = {0};
  int want_out[MAX_IO] = {0};
  const cJSON *inputs = cJSON_GetObjectItemCaseSensitive(root, "inputs");
  const cJSON *id = cJSON_GetObjectItemCaseSensitive(root, "id");
  const cJSON *outputs = cJSON_GetObjectItemCaseSensitive(root, "outputs");
  const cJSON *params = cJSON_GetObjectItemCaseSensitive(root, "parameters");
  if (!cJSON_IsObject(root)) {
    ret = reply_error(sv, c, cs, 400, um, "the request must be a JSON object");
    goto done;
  }
  const char *dup = duplicate_key(root);
  for (const cJSON *e = cJSON_IsArray(inputs) ? inputs->child : NULL; e && !dup;
       e = e->next)
    dup = duplicate_key(e);
  for (const cJSON *e = cJSON_IsArray(outputs) ? outputs->child : NULL; e && !dup;
       e = e->next)
    dup = duplicate_key(e);
  for (const cJSON *e = cJSON_IsArray(inputs) ? inputs->child : NULL; e && !dup;
       e = e->next)
    dup = duplicate_key(cJSON_GetObjectItemCaseSensitive(e, "parameters"));
  for (const cJSON *e = cJSON_IsArray(outputs) ? outputs->child : NULL; e && !dup;
       e = e->next)
    dup = duplicate_key(cJSON_GetObjectItemCaseSensitive(e, "parameters"));
  if (!dup) dup = duplicate_key(params);
  if (dup) {
    ret = reply_error(sv, c, cs, 400, um,
                      "malformed JSON: key \"%.100s\" given twice in one object", dup);
    goto done;
  }
  if (id && !cJSON_IsString(id)) {
    ret = reply_error(sv, c, cs, 400, um, "\"id\" must be a string");
    goto done;
  }
  if (!cJSON_IsArray(inputs)) {
    ret = reply_error(sv, c, cs, 400, um, "the request needs an \"inputs\" array");
    goto done;
  }
  size_t elem = 0;
  for (const cJSON *e = inputs->child; e; e = e->next, elem++) {
    const cJSON *name = cJSON_GetObjectItemCaseSensitive(e, "name");
    const cJSON *shape = cJSON_GetObjectItemCaseSensitive(e, "shape");
    const cJSON *dtype = cJSON_GetObjectItemCaseSensitive(e, "datatype");
    const cJSON *data = cJSON_GetObjectItemCaseSensitive(e, "data");
    const cJSON *ip = cJSON_GetObjectItemCaseSensitive(e, "parameters");
    const cJSON *bsize = cJSON_GetObjectItemCaseSensitive(ip, "binary_data_size");
    if (!cJSON_IsObject(e) || !cJSON_IsString(name) || !cJSON_IsArray(shape) ||
        !cJSON_IsString(dtype) || (!data && !bsize)) {
      ret = reply_error(sv, c, cs, 400, um,
                        "each input needs \"name\" (string), \"shape\" (array), "
                        "\"datatype\" (string) and \"data\" (or, with the binary tensor "
                        "data extension, \"parameters\": {\"binary_data_size\": N})");
      goto done;
    }
    if (ip && !cJSON_IsObject(ip)) {
      ret =
          reply_error(sv, c, cs, 400, um, "input '%s': \"parameters\" must be an object",
                      name->valuestring);
      goto done;
    }
    if (data && bsize) {
      ret = reply_error(sv, c, cs, 400, um,
                        "input '%s' has both \"data\" and \"binary_data_size\"",
                        name->valuestring);
      goto done;
    }
    if (bsize && !cs->binary) {
      ret = reply_error(sv, c, cs, 400, um,
                        "input '%s' has \"binary_data_size\" but the request has no "
                        "Inference-Header-Content-Length header",
                        name->valuestring);
      goto done;
    }
    if (bsize && !cJSON_IsNumber(bsize)) {
      ret = reply_error(sv, c, cs, 400, um,
                        "input '%s': \"binary_data_size\" must be a number",
                        name->valuestring);
      goto done;
    }
    int32_t k = dml_rt_model_find_input(m, name->valuestring);
    if (k < 0) {
      ret = reply_error(sv, c, cs, 400, um, "unknown input '%s' of model '%s'",
                        name->valuestring, me->name);
      goto done;
    }
    if (given[k]) {
      ret = reply_error(sv, c, cs, 400, um, "input '%s' given twice", name->valuestring);
      goto done;
    }
    dml_rt_io_info_t io;
    dml_status_t st = dml_rt_model_input_info(m, (uint32_t)k, &io);
    if (st) {
      dml_status_free(st);
      ret = reply_error(sv, c, cs, 500, um, "cannot read input '%s'", name->valuestring);
      goto done;
    }
    char want[160];
    dml_rt_io_info_str(&io, want, sizeof want);
    dml_dtype_t dt = type_from_name(dtype->valuestring);
    if (dt != io.dtype) {
      ret = reply_error(sv, c, cs, 400, um,
                        "input '%s': datatype %s does not match the model's %s (%s)",
                        name->valuestring, dtype->valuestring, type_name(io.dtype), want);
      goto done;
    }
    dml_tensor_t t = {dt, 0, {0}, NULL};
    int rank = cJSON_GetArraySize(shape);
    int bad = rank != io.rank;
    int64_t numel = 1;
    int d = 0;
    for (const cJSON *s = shape->child; s && !bad; s = s->next, d++) {
      double v = cJSON_IsNumber(s) ? s->valuedouble : -1;
      if (v < 0 || v != floor(v) || v > 1e15) {
        bad = 1;
        break;
      }
      t.dims[d] = (int64_t)v;
      /* static dims must match; symbolic ones are checked by the runtime */
      if (!io.dim_symbol[d] && t.dims[d] != io.dims[d]) bad = 1;
      if (numel > 0 && t.dims[d] > INT64_MAX / numel) bad = 1;
      numel *= t.dims[d];
    }
    t.rank = rank;
    if (bad) {
      char got[256] = "";
      size_t o = 0;
      for (const cJSON *s = shape->child; s && o < sizeof got - 24; s = s->next)
        o += (size_t)snprintf(got + o, sizeof got - o, "%s%g", o ? "," : "",
                              cJSON_IsNumber(s) ? s->valuedouble : NAN);
      ret = reply_error(sv, c, cs, 400, um,
                        "input '%s': shape [%s] does not fit the model's %s",
                        name->valuestring, got, want);
      goto done;
    }
    if (bsize) { /* raw bytes: read in place (the submit copies them) */
      char msg[256];
      size_t start = 0;
      const char *berr = dml_serve_binary_take(bin, bin_len, &bin_off, bsize->valuedouble,
                                               numel, dt, &start, msg, sizeof msg);
      if (berr) {
        ret = reply_error(sv, c, cs, 400, um, "input '%s': %s", name->valuestring, berr);
        goto done;
      }
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
      /* the body is ours: little-endian values swapped in place */
      size_t esz = dml_dtype_size(dt);
      for (int64_t v = 0; esz > 1 && v < numel; v++) {
        unsigned char *q = (unsigned char *)cs->body + json_len + start + (size_t)v * esz;
        for (size_t a = 0, z = esz - 1; a < z; a++, z--) {
          unsigned char tmp = q[a];
          q[a] = q[z];
          q[z] = tmp;
        }
      }
#endif
      t.data = (void *)(bin + start);
      in[k] = t;
      given[k] = 1;
      continue;
    }
    size_t es = dml_dtype_size(dt);
    /* a value takes at least 2 body bytes ("0,"): this bounds the
     * tensor buffer allocated below by es / 2 bytes per body byte */
    if (numel > (int64_t)(sv->max_body / 2 + 1)) {
      ret = reply_error(sv, c, cs, 400, um,
                        "input '%s': shape holds %" PRId64
                        " values, more than a request body can carry",
                        name->valuestring, numel);
      goto done;
    }
    bufs[k] = malloc(numel ? (size_t)numel * es : 1);
    if (!bufs[k]) {
      ret = reply_error(sv, c, cs, 503, um, "out of memory");
      goto done;
    }
    int64_t n = 0;
    const dml_serve_json_span_t *sp = NULL;
    for (size_t s = 0; s < n_spans && !sp; s++)
      if (spans[s].elem == elem) sp = &spans[s];
    size_t err_at = SIZE_MAX;
    const char *err =
        sp ? dml_serve_json_read_data(body + sp->start, sp->end - sp->start, dt, bufs[k],
                                      numel, &n, t.dims, t.rank, &err_at)
           : flatten(data, dt, bufs[k], numel, &n, 0, &t);
    if (err && err_at != SIZE_MAX) {
      ret = reply_error(sv, c, cs, 400, um, "malformed JSON (at byte %zu of %zu)",
                        sp->start + err_at, cs->len);
      goto done;
    }
    if (err) {
      ret = reply_error(sv, c, cs, 400, um, "input '%s': %s", name->valuestring, err);
      goto done;
    }
    if (n != numel) {
      ret = reply_error(sv, c, cs, 400, um,
                        "input '%s': shape needs %" PRId64 " values, data has %" PRId64,
                        name->valuestring, numel, n);
      goto done;
    }
    t.data = bufs[k];
    in[k] = t;
    given[k] = 1;
  }
  if (bin_off != bin_len) {
    ret = reply_error(sv, c, cs, 400, um,
                      "%zu bytes of binary data after the inputs' (binary_data_size "
                      "adds up to %zu of the %zu bytes after the JSON header)",
                      bin_len - bin_off, bin_off, bin_len);
    goto done;
  }
  /* binary outputs: "parameters": {"binary_data_output": true} for all, an
   * output's {"binary_data": true/false} for it */
  const cJSON *bdo = cJSON_GetObjectItemCaseSensitive(params, "binary_data_output");
  if ((params && !cJSON_IsObject(params)) || (bdo && !cJSON_IsBool(bdo))) {
    ret = reply_error(sv, c, cs, 400, um,
                      "\"parameters\" must be an object, its \"binary_data_output\" a "
                      "boolean");
    goto done;
  }
  int out_mode = cJSON_IsTrue(bdo) ? 2 : 1;
  for (uint32_t k = 0; k < n_in; k++)
    if (!given[k]) {
      dml_rt_io_info_t io;
      dml_status_t st = dml_rt_model_input_info(m, k, &io);
      dml_status_free(st);
      ret = reply_error(sv, c, cs, 400, um, "input '%s' is missing", st ? "?" : io.name);
      goto done;
    }
  if (outputs && !cJSON_IsArray(outputs)) {
    ret = reply_error(sv, c, cs, 400, um, "\"outputs\" must be an array");
    goto done;
  }
  if (outputs && outputs->child) {
    for (const cJSON *e = outputs->child; e; e = e->next) {
      const cJSON *name = cJSON_GetObjectItemCaseSensitive(e, "name");
      int32_t k =
          cJSON_IsString(name) ? dml_rt_model_find_output(m, name->valuestring) : -1;
      if (k < 0) {
        ret =
            reply_error(sv, c, cs, 400, um, "unknown output '%s' of model '%s'",
                        cJSON_IsString(name) ? name->valuestring : "(no name)", me->name);
        goto done;
      }
      const cJSON *op = cJSON_GetObjectItemCaseSensitive(e, "parameters");
      const cJSON *bd = cJSON_GetObjectItemCaseSensitive(op, "binary_data");
      if ((op && !cJSON_IsObject(op)) || (bd && !cJSON_IsBool(bd))) {
        ret = reply_error(sv, c, cs, 400, um,
                          "output '%s': \"parameters\" must be an object, its "
                          "\"binary_data\" a boolean",
                          name->valuestring);
        goto done;
      }
      want_out[k] = bd ? (cJSON_IsTrue(bd) ? 2 : 1) : out_mode;
    }
  } else {
    for (uint32_t k = 0; k < n_out; k++) want_out[k] = out_mode;
  }

  infer_job_t *job = cs->job;
  if (id && !(job->id = strdup(id->valuestring))) {
    ret = reply_error(sv, c, cs, 503, um, "out of memory");
    goto done;
  }
  memcpy(job->want_out, want_out, sizeof want_out);
  /* The inputs are copied by the submit; the completion may come at once,
   * on another thread, and resumes the connection. */
  if (!job->on_pool) MHD_suspend_connection(c);
  *handed = 1;
  dml_status_t st = dml_serve_submit(me->srv, in, n_in, infer_done, job);
  if (st) { /* never queued: `done` will not be called */
    job->st = st;
    atomic_store(&job->done, 1);
    MHD_resume_connection(c);
  }
  ret = MHD_YES;
done:
  for (uint32_t k = 0; k < n_in && k < MAX_IO; k++) free(bufs[k]);
  cJSON_Delete(root);
  free(skel);
  return ret;
}

/* The reply of an inference whose job is done (the connection resumed). */
static enum MHD_Result infer_reply(server_t *sv, struct MHD_Connection *c, conn_t *cs,
                                   const char *um[2]) {
  infer_job_t *job = cs->job;
  const dml_rt_model_t *m = job->m->model;
  uint32_t n_out = dml_rt_model_num_outputs(m);
  dml_status_t st = job->st;
  if (st) {
    /* "op: reason (details; ...)" on one line */
    char det[512];
    size_t o = 0;
    for (const char *p = dml_status_details(st); *p && o + 3 < sizeof det; p++) {
      if (*p == '\n') {
        if (p[1]) det[o++] = ';', det[o++] = ' ';
      } else if (*p != ' ' || (o && det[o - 1] != ' ')) {
        det[o++] = *p;
      }
    }
    det[o] = 0;
    unsigned code = http_code_of(st);
    return reply_error(sv, c, cs, code, um, "%s: %s%s%s%s", dml_status_op(st),
                       dml_status_reason(st), o ? " (" : "", det, o ? ")" : "");
  }
  const dml_tensor_t *outs = job->outs;
  sb_t b = {0};
  sb_printf(&b, "{\"model_name\": ");
  sb_json_str(&b, job->m->name);
  sb_printf(&b, ", \"model_version\": \"1\"");
  if (job->id) {
    sb_printf(&b, ", \"id\": ");
    sb_json_str(&b, job->id);
  }
  sb_printf(&b, ", \"outputs\": [");
  int first = 1;
  for (uint32_t k = 0; k < n_out && k < MAX_IO; k++) {
    if (!job->want_out[k]) continue;
    dml_rt_io_info_t io;
    dml_status_t st2 = dml_rt_model_output_info(m, k, &io);
    if (st2) {
      dml_status_free(st2);
      continue;
    }
    const dml_tensor_t *t = &outs[k];
    sb_printf(&b, "%s{\"name\": ", first ? "" : ", ");
    first = 0;
    sb_json_str(&b, io.name);
    sb_printf(&b, ", \"datatype\": \"%s\", \"shape\": [", type_name(t->dtype));
    for (int32_t d = 0; d < t->rank; d++)
      sb_printf(&b, "%s%" PRId64, d ? ", " : "", t->dims[d]);
    int64_t n = dml_dims_numel(t->dims, t->rank);
    if (job->want_out[k] == 2) { /* its bytes follow the JSON */
      sb_printf(&b, "], \"parameters\": {\"binary_data_size\": %zu}}",
                (size_t)n * dml_dtype_size(t->dtype));
      continue;
    }
    sb_printf(&b, "], \"data\": [");
    for (int64_t i = 0; i < n && !b.oom; i++) {
      if (i) sb_printf(&b, ",");
      value_json(&b, t, (size_t)i);
    }
    sb_printf(&b, "]}");
  }
  sb_printf(&b, "]}");
  /* the binary tensor data extension: raw little-endian bytes of the
   * binary outputs, in the order of the JSON's outputs */
  size_t json_len = b.len, bin_len = 0;
  for (uint32_t k = 0; k < n_out && k < MAX_IO; k++)
    if (job->want_out[k] == 2)
      bin_len += (size_t)dml_dims_numel(outs[k].dims, outs[k].rank) *
                 dml_dtype_size(outs[k].dtype);
  int any = 0;
  for (uint32_t k = 0; k < n_out && k < MAX_IO; k++) any |= job->want_out[k] == 2;
  if (!any) return reply_sb(sv, c, cs, 200, um[1], um[0], &b, NULL);
  sb_reserve(&b, bin_len);
  if (b.oom || !b.p) return reply_sb(sv, c, cs, 200, um[1], um[0], &b, NULL);
  for (uint32_t k = 0; k < n_out && k < MAX_IO; k++) {
    if (job->want_out[k] != 2) continue;
    size_t es = dml_dtype_size(outs[k].dtype),
           nb = (size_t)dml_dims_numel(outs[k].dims, outs[k].rank) * es;
    memcpy(b.p + b.len, outs[k].data, nb);
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    for (size_t v = 0; es > 1 && v < nb; v += es)
      for (size_t a = 0, z = es - 1; a < z; a++, z--) {
        char tmp = b.p[b.len + v + a];
        b.p[b.len + v + a] = b.p[b.len + v + z];
        b.p[b.len + v + z] = tmp;
      }
#endif
    b.len += nb;
  }
  return reply_bin(sv, c, cs, 200, um[1], um[0], b.p, b.len, NULL, json_len);
}

/* ---- routing ----------------------------------------------------------- */

static enum MHD_Result count_header(void *cls, enum MHD_ValueKind kind, const char *key,
                                    const char *value);

/* The served models: the v2 repository index ([{"name", "version",
 * "state"}], index) or {"models": [the same]}. */
static void repository_index(const server_t *sv, sb_t *b, int index) {
  sb_printf(b, "%s", index ? "[" : "{\"models\": [");
  for (int i = 0; i < sv->n_models; i++) {
    sb_printf(b, "%s{\"name\": ", i ? ", " : "");
    sb_json_str(b, sv->models[i].name);
    sb_printf(b, ", \"version\": \"1\", \"state\": \"%s\"}",
              atomic_load(&sv->ready) ? "READY" : "UNAVAILABLE");
  }
  sb_printf(b, "%s", index ? "]" : "]}");
}

static enum MHD_Result handle(server_t *sv, struct MHD_Connection *c, conn_t *cs,
                              const char *url, const char *method) {
  const char *um[2] = {url, method};
  int get = !strcmp(method, "GET") || !strcmp(method, "HEAD"),
      post = !strcmp(method, "POST");
  sb_t b = {0};
  if (cs->unauth) return reply_error(sv, c, cs, 401, um, "%s", k_unauthorized);
  if (cs->busy)
    return reply_error(sv, c, cs, 503, um,
                       "server busy: in-flight request bodies over %zu bytes "
                       "(--max-inflight-body-bytes); retry later",
                       sv->max_inflight_body);
  if (!strcmp(url, "/metrics")) {
    if (!get) return reply_error(sv, c, cs, 405, um, "%s takes GET", url);
    metrics_text(sv, &b);
    return reply_sb(sv, c, cs, 200, method, url, &b, NULL);
  }
  if (!strcmp(url, "/v2/health/live") || !strcmp(url, "/v2/health/ready")) {
    if (!get) return reply_error(sv, c, cs, 405, um, "%s takes GET", url);
    int ready = atomic_load(&sv->ready);
    if (strstr(url, "live")) {
      sb_printf(&b, "{\"live\": true}");
      return reply_sb(sv, c, cs, 200, method, url, &b, NULL);
    }
    sb_printf(&b, "{\"ready\": %s}", ready ? "true" : "false");
    return reply_sb(sv, c, cs, ready ? 200 : 503, method, url, &b, NULL);
  }
  if (!strcmp(url, "/v2") || !strcmp(url, "/v2/")) {
    if (!get) return reply_error(sv, c, cs, 405, um, "%s takes GET", url);
    sb_printf(&b,
              "{\"name\": \"dmlc\", \"version\": \"0.1.0\", \"extensions\": "
              "[\"binary_tensor_data\"]}");
    return reply_sb(sv, c, cs, 200, method, url, &b, NULL);
  }
  if (!strcmp(url, "/v2/repository/index") || !strcmp(url, "/v2/models") ||
      !strcmp(url, "/v2/models/")) {
    int index = url[4] == 'r';
    if (!get && !(index && post))
      return reply_error(sv, c, cs, 405, um, "%s takes %s", url,
                         index ? "GET or POST" : "GET");
    repository_index(sv, &b, index);
    return reply_sb(sv, c, cs, 200, method, url, &b, NULL);
  }
  const char *pre = "/v2/models/";
  if (strncmp(url, pre, strlen(pre)) != 0)
    return reply_error(sv, c, cs, 404, um, "unknown path '%s'", url);
  const char *name = url + strlen(pre), *rest = strchr(name, '/');
  size_t nlen = rest ? (size_t)(rest - name) : strlen(name);
  model_ent_t *me = NULL;
  for (int i = 0; i < sv->n_models && !me; i++)
    if (nlen == strlen(sv->models[i].name) && !strncmp(name, sv->models[i].name, nlen))
      me = &sv->models[i];
  if (!me) {
    sb_t names = {0};
    for (int i = 0; i < sv->n_models && names.len < 600; i++)
      sb_printf(&names, "%s'%s'", i ? ", " : "", sv->models[i].name);
    enum MHD_Result r = reply_error(
        sv, c, cs, 404, um, "unknown model '%.*s'; this server serves %s",
        (int)(nlen < 200 ? nlen : 200), name, names.p ? names.p : "(out of memory)");
    free(names.p);
    return r;
  }
  cs->m = me;
  if (!rest) rest = "";
  if (!strncmp(rest, "/versions/", 10)) {
    const char *v = rest + 10, *after = strchr(v, '/');
    size_t vlen = after ? (size_t)(after - v) : strlen(v);
    if (vlen != 1 || v[0] != '1')
      return reply_error(sv, c, cs, 404, um,
                         "unknown version '%.*s' of model '%s' (only 1)",
                         (int)(vlen < 50 ? vlen : 50), v, me->name);
    rest = after ? after : "";
  }
  if (!strcmp(rest, "") || !strcmp(rest, "/")) {
    if (!get) return reply_error(sv, c, cs, 405, um, "model metadata takes GET");
    model_metadata(me, &b);
    return reply_sb(sv, c, cs, 200, method, url, &b, NULL);
  }
  if (!strcmp(rest, "/ready")) {
    if (!get) return reply_error(sv, c, cs, 405, um, "model readiness takes GET");
    int ready = atomic_load(&sv->ready);
    sb_printf(&b, "{\"name\": ");
    sb_json_str(&b, me->name);
    sb_printf(&b, ", \"ready\": %s}", ready ? "true" : "false");
    return reply_sb(sv, c, cs, ready ? 200 : 503, method, url, &b, NULL);
  }
  if (!strcmp(rest, "/stats")) {
    if (!get) return reply_error(sv, c, cs, 405, um, "statistics take GET");
    stats_json(sv, me, &b);
    return reply_sb(sv, c, cs, 200, method, url, &b, NULL);
  }
  if (!strcmp(rest, "/infer")) {
    if (!post) return reply_error(sv, c, cs, 405, um, "infer takes POST");
    cs->infer = 1;
    const char *ihcl = MHD_lookup_connection_value(c, MHD_HEADER_KIND,
                                                   "Inference-Header-Content-Length");
    const char *ct = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Content-Type");
    if (ct && strncmp(ct, "application/json", 16) != 0 &&
        strncmp(ct, "application/x-www-form-urlencoded", 33) != 0 &&
        !(ihcl && !strncmp(ct, "application/octet-stream", 24)))
      return reply_error(
          sv, c, cs, 415, um,
          "Content-Type '%.100s' is not supported: send application/json%s", ct,
          ihcl ? " or application/octet-stream" : "");
    const char *ce = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Content-Encoding");
    if (ce && strcmp(ce, "identity") != 0)
      return reply_error(sv, c, cs, 415, um, "Content-Encoding '%.100s' is not supported",
                         ce);
    if (ihcl) {
      struct {
        const char *name;
        int n;
      } count = {"Inference-Header-Content-Length", 0};
      MHD_get_connection_values(c, MHD_HEADER_KIND, count_header, &count);
      const char *err = count.n != 1
                            ? "Inference-Header-Content-Length given more than once"
                            : dml_serve_binary_header_len(ihcl, cs->len, &cs->json_len);
      if (err)
        return reply_error(sv, c, cs, 400, um, "%s (value '%.40s', body of %zu bytes)",
                           err, ihcl, cs->len);
      cs->binary = 1;
    }
    infer_job_t *job = (infer_job_t *)calloc(1, sizeof *job);
    if (!job) return reply_error(sv, c, cs, 503, um, "out of memory");
    job->m = me;
    job->conn = c;
    job->cs = cs;
    job->url = url;
    job->method = method;
    cs->job = job;
    if (cs->len <= SMALL_BODY) { /* parsed here: quicker than a hand-over */
      int handed = 0;
      enum MHD_Result r = infer(sv, c, cs, um, &handed);
      if (!handed) { /* refused, its reply queued */
        job_free(job);
        cs->job = NULL;
      }
      return r;
    }
    job->on_pool = 1;
    MHD_suspend_connection(c);
    if (!parse_enqueue(sv, job)) {
      job->err_code = 503;
      job->err_msg = strdup("server shutting down");
      atomic_store(&job->done, 1);
      MHD_resume_connection(c);
    }
    return MHD_YES;
  }
  return reply_error(sv, c, cs, 404, um, "unknown path '%s'", url);
}

/* 1 when the request may go on: no token is set, the URL is a health
 * check, or its Authorization header is "Bearer <token>" (compared in time
 * independent of where the first difference is). */
/* Counts the request's headers named `cls` (MHD_get_connection_values). */
static enum MHD_Result count_header(void *cls, enum MHD_ValueKind kind, const char *key,
                                    const char *value) {
  (void)kind, (void)value;
  struct {
    const char *name;
    int n;
  } *h = cls;
  if (key && !strcasecmp(key, h->name)) h->n++;
  return MHD_YES;
}

/* 1 for the health checks themselves, which need no token (probes). */
static int is_health(const char *url) {
  return !strcmp(url, "/v2/health/live") || !strcmp(url, "/v2/health/ready");
}

static int authorized(const server_t *sv, struct MHD_Connection *c, const char *url) {
  if (!sv->token || is_health(url)) return 1;
  if (sv->metrics_public && !strcmp(url, "/metrics")) return 1;
  struct {
    const char *name;
    int n;
  } count = {"Authorization", 0};
  MHD_get_connection_values(c, MHD_HEADER_KIND, count_header, &count);
  if (count.n != 1) return 0; /* none, or several: which one counts is unclear */
  const char *h = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Authorization");
  /* RFC 7235 2.1: the scheme is case-insensitive, then 1*SP */
  if (!h || strncasecmp(h, "Bearer ", 7) != 0) return 0;
  h += 7;
  while (*h == ' ') h++;
  size_t n = strlen(h), m = strlen(sv->token);
  while (n && (h[n - 1] == ' ' || h[n - 1] == '\t')) n--; /* RFC 7230 3.2.4 OWS */
  unsigned diff = n != m;
  for (size_t i = 0; i < m; i++)
    diff |= (unsigned char)(sv->token[i] ^ (i < n ? h[i] : 0));
  return diff == 0;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
                                  const char *method, const char *version,
                                  const char *upload, size_t *upload_size,
                                  void **con_cls) {
  server_t *sv = (server_t *)cls;
  conn_t *cs = (conn_t *)*con_cls;
  if (!cs) {
    cs = (conn_t *)calloc(1, sizeof *cs);
    if (!cs) return MHD_NO;
    clock_gettime(CLOCK_MONOTONIC, &cs->t0);
    *con_cls = cs;
    atomic_fetch_add(&sv->in_flight, 1);
    conn_stage(sv, c, CONN_BODY);
    const char *um[2] = {url, method};
    /* Connections opened while C others were open are refused; those
     * opened before keep being served (a flood cannot take a kept-alive
     * client's place). A connection without a record (out of memory)
     * falls back to the count now. */
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    const conn_rec_t *rec = ci ? (const conn_rec_t *)ci->socket_context : NULL;
    int open = atomic_load(&sv->n_conn);
    /* health checks are answered even then: a probe failing under a flood
     * would restart a server that is serving its clients */
    if ((rec ? rec->over : open > sv->max_conn) && !is_health(url))
      return reply_error(sv, c, cs, 503, um,
                         "server busy: %d connections open, the limit is %lld "
                         "(--max-connections); retry later",
                         open, (long long)sv->max_conn);
    const char *cl = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Content-Length");
    /* Without a valid token: 401 before a byte of the body is read, but
     * for a body of at most SMALL_BODY bytes (Content-Length), which is
     * read and discarded first (handle() then replies 401): libmicrohttpd
     * closes a connection whose body was not read, and a client still
     * writing it got a reset (an SSL EOF over TLS) instead of the 401. */
    if (!authorized(sv, c, url)) {
      char *end;
      errno = 0;
      unsigned long long n = cl ? strtoull(cl, &end, 10) : 0;
      if (!cl || errno || *end || n > SMALL_BODY)
        return reply_error(sv, c, cs, 401, um, "%s", k_unauthorized);
      cs->unauth = 1;
      return MHD_YES;
    }
    if (cl) {
      char *end;
      errno = 0;
      unsigned long long n = strtoull(cl, &end, 10);
      /* Refused before a byte of the body is read (MHD then closes). */
      if (errno || *end || n > sv->max_body)
        return reply_error(sv, c, cs, 413, um,
                           "request body of %s bytes (Content-Length) is over the "
                           "limit of %zu bytes",
                           cl, sv->max_body);
      /* Reserved before a byte is read: beyond the in-flight cap, 503. */
      unsigned long long was = 0;
      if (n > SMALL_BODY) {
        was = atomic_fetch_add(&sv->inflight_body, n);
        cs->reserved = (size_t)n;
      }
      if (cs->reserved && was + n > sv->max_inflight_body)
        return reply_error(sv, c, cs, 503, um,
                           "server busy: in-flight request bodies over %zu bytes "
                           "(--max-inflight-body-bytes); retry later",
                           sv->max_inflight_body);
    }
    return MHD_YES;
  }
  if (cs->job) { /* resumed: the inference is done */
    const char *um[2] = {url, method};
    if (!atomic_load(&cs->job->done)) return MHD_YES;
    if (cs->job->err_code)
      return reply_error(sv, c, cs, cs->job->err_code, um, "%s",
                         cs->job->err_msg ? cs->job->err_msg : "out of memory");
    return infer_reply(sv, c, cs, um);
  }
  if (*upload_size) {
    size_t n = *upload_size;
    *upload_size = 0;
    cs->received += n;
    if (cs->received > sv->max_body) {
      /* Only a chunked body gets here (a Content-Length over the limit is
       * refused before the body): no reply can go out before the body
       * ends, so the connection is closed now rather than reading on. */
      atomic_fetch_add(&sv->rejected[REJ_BODY_TOO_LARGE], 1);
      if (sv->verbosity >= 1)
        fprintf(stderr,
                "dmlc serve: %s %s: closing the connection: its chunked request body "
                "passed --max-body-bytes (%zu bytes)\n",
                method, url, sv->max_body);
      return MHD_NO;
    }
    if (cs->busy || cs->unauth) return MHD_YES;                   /* discarded */
    if (cs->len + n > SMALL_BODY && cs->len + n > cs->reserved) { /* chunked */
      size_t more = cs->len + n - cs->reserved;
      unsigned long long was = atomic_fetch_add(&sv->inflight_body, more);
      cs->reserved += more;
      if (was + more > sv->max_inflight_body) {
        cs->busy = 1;
        return MHD_YES;
      }
    }
    if (cs->len + n + 1 > cs->cap) {
      size_t cap = cs->cap ? cs->cap : 4096;
      while (cap < cs->len + n + 1) cap *= 2;
      char *p = (char *)realloc(cs->body, cap);
      if (!p) return MHD_NO;
      cs->body = p;
      cs->cap = cap;
    }
    memcpy(cs->body + cs->len, upload, n);
    cs->len += n;
    cs->body[cs->len] = 0;
    return MHD_YES;
  }
  conn_stage(sv, c, CONN_HANDLING);
  return handle(sv, c, cs, url, method);
}

static void on_completed(void *cls, struct MHD_Connection *c, void **con_cls,
                         enum MHD_RequestTerminationCode toe) {
  conn_t *cs = (conn_t *)*con_cls;
  /* keep-alive: the next request's headers are due from now */
  server_t *sv = (server_t *)cls;
  conn_stage(sv, c, CONN_HEADERS);
  if (!cs) return;
  atomic_fetch_sub(&sv->in_flight, 1);
  atomic_fetch_sub(&sv->inflight_body, cs->reserved);
  if (cs->received > SMALL_BODY) atomic_store(&sv->big_done, 1);
  job_free(cs->job);
  free(cs->body);
  free(cs);
  *con_cls = NULL;
}

static void mhd_log(void *cls, const char *fmt, va_list ap) {
  server_t *sv = (server_t *)cls;
  if (sv->verbosity < 1) return;
  char msg[512];
  vsnprintf(msg, sizeof msg, fmt, ap);
  size_t n = strlen(msg);
  while (n && msg[n - 1] == '\n') msg[--n] = 0;
  fprintf(stderr, "dmlc serve: http: %s\n", msg);
}

/* ---- main -------------------------------------------------------------- */

/* Stops the parse threads once the queued requests are parsed (each
 * submitted or refused, and resumed); later ones get 503 at once. */
static void stop_parsers(server_t *sv) {
  pthread_mutex_lock(&sv->q_lock);
  sv->q_stop = 1;
  pthread_cond_broadcast(&sv->q_cond);
  pthread_mutex_unlock(&sv->q_lock);
  for (int k = 0; k < sv->n_parsers; k++) pthread_join(sv->parsers[k], NULL);
  sv->n_parsers = 0;
}

/* Seconds in [0, 86400] into *out; 0 when `v` is not one. */
static int parse_seconds(const char *v, double *out) {
  char *end;
  double t = strtod(v, &end);
  if (!*v || *end || !(t >= 0 && t <= 86400)) return 0;
  *out = t;
  return 1;
}

/* A model name as URLs and /metrics labels take it: 1..128 of
 * [A-Za-z0-9._-]. */
static int model_name_ok(const char *name) {
  size_t n = strlen(name);
  if (!n || n > 128) return 0;
  for (size_t i = 0; i < n; i++)
    if (!(isalnum((unsigned char)name[i]) || strchr("._-", name[i]))) return 0;
  return 1;
}

/* Adds model `name` (NUL-terminated, or its first `len` bytes) served
 * from `pkg` to ms[*n]: checks the name (model_name_ok) and that no other
 * model has it. 0, or a usage error's exit code. */
static int add_model(model_ent_t *ms, int *n, const char *name, size_t len,
                     const char *pkg) {
  char nm[MODEL_NAME_MAX + 1];
  snprintf(nm, sizeof nm, "%.*s", (int)(len < MODEL_NAME_MAX ? len : MODEL_NAME_MAX),
           name);
  if (len > MODEL_NAME_MAX || !model_name_ok(nm))
    return dmlc_usage_error("serve",
                            "bad model name '%.*s' (1..%d of A-Z a-z 0-9 . _ -; give "
                            "--name or --model NAME=PKG)",
                            (int)(len < 200 ? len : 200), name, MODEL_NAME_MAX);
  for (int i = 0; i < *n; i++)
    if (!strcmp(ms[i].name, nm))
      return dmlc_usage_error("serve", "model name '%s' given twice", nm);
  if (*n == MAX_MODELS)
    return dmlc_usage_error("serve", "at most %d models are served at once", MAX_MODELS);
  memcpy(ms[*n].name, nm, sizeof nm);
  ms[*n].pkg = pkg;
  (*n)++;
  return 0;
}

/* Loads each model and creates its serving object (its own batcher and
 * sessions, with cfg). On failure releases what was made and returns the
 * status (naming the model when there are several). */
static dml_status_t models_open(model_ent_t *ms, int n, const dml_serve_config_t *cfg) {
  for (int i = 0; i < n; i++) {
    dml_status_t st = dml_rt_model_load_file(ms[i].pkg, &ms[i].model);
    if (!st) st = dml_serve_create(ms[i].model, cfg, &ms[i].srv);
    if (st) {
      if (n > 1) st = dml_status_detail(st, "model '%s' (%s)", ms[i].name, ms[i].pkg);
      for (int k = 0; k <= i; k++) {
        dml_serve_release(ms[k].srv);
        dml_rt_model_release(ms[k].model);
        ms[k].srv = NULL, ms[k].model = NULL;
      }
      return st;
    }
  }
  return NULL;
}

static void models_close(model_ent_t *ms, int n) {
  for (int i = 0; i < n; i++) {
    dml_serve_release(ms[i].srv);
    dml_rt_model_release(ms[i].model);
  }
}

int dmlc_cmd_serve(int argc, char **argv) {
  const char *pkg = NULL, *name = NULL, *host = "127.0.0.1", *device = NULL;
  const char *tls_cert = NULL, *tls_key = NULL, *token_file = NULL;
  int64_t port = 8000, batch = 0, instances = 1, max_body = DEFAULT_MAX_BODY,
          max_conn = DEFAULT_MAX_CONN, max_inflight = 0, http_threads = 4;
  int max_conn_given = 0, metrics_public = 0, n_models = 0;
  /* the package argument (--name) first, then each --model in order */
  static model_ent_t models[MAX_MODELS];
  const char *model_specs[MAX_MODELS];
  int n_specs = 0;
  double timeout_ms = 1.0, header_timeout = 10, body_timeout = 120;
  int verbosity = 1;
  /* SIGINT/SIGTERM are taken by sigwait below; every thread inherits the
   * blocked mask, so it is set here, before any thread starts (model
   * loading, the serving workers and the sessions' kernel threads, the
   * parsers, MHD's). (Set after models_open, a SIGTERM the kernel
   * delivered to a worker thread ended the process with the signal's
   * default action instead of a drain and exit 0.) */
  sigset_t sigs;
  sigemptyset(&sigs);
  sigaddset(&sigs, SIGINT);
  sigaddset(&sigs, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &sigs, NULL);
  signal(SIGPIPE, SIG_IGN);
  for (int i = 1; i < argc; i++) {
    const char *v;
    if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
      usage(stdout);
      return 0;
    } else if ((v = dmlc_flag_value(argc, argv, &i, "--name"))) {
      name = v;
    } else if ((v = dmlc_flag_value(argc, argv, &i, "--model"))) {
      if (n_specs == MAX_MODELS)
        return dmlc_usage_error("serve", "at most %d models are served at once",
                                MAX_MODELS);
      model_specs[n_specs++] = v;
    } else if (!strcmp(argv[i], "--metrics-public")) {
      metrics_public = 1;
    } else if ((v = dmlc_flag_value(argc, argv, &i, "--host"))) {
      host = v;
    } else if ((v = dmlc_flag_value(argc, argv, &i, "--device"))) {
      device = v;
    } else if ((v = dmlc_flag_value(argc, argv, &i, "--port"))) {
      if (parse_i64(v, 0, 65535, &port)) {
        return dmlc_usage_error("serve", "--port takes 0..65535, not '%s'", v);
      }
    } else if ((v = dmlc_flag_value(argc, argv, &i, "--batch-size"))) {
      if (parse_i64(v, 1, INT32_MAX, &batch)) {
        return dmlc_usage_error("serve", "--batch-size takes a positive number, not '%s'",
                                v);
      }
    } else if ((v = dmlc_flag_value(argc, argv, &i, "--threads"))) {
      if (!dmlc_set_threads("serve", v)) return 2;
    } else if ((v = dmlc_flag_value(argc, argv, &i, "--instances"))) {
      if (parse_i64(v, 1, 256, &instances)) {
        return dmlc_usage_error("serve", "--instances takes 1..256, not '%s'", v);
      }
    } else if ((v = dmlc_flag_value(argc, argv, &i, "--max-body-bytes"))) {
      if (parse_i64(v, 1024, (int64_t)1 << 40, &max_body)) {
        return dmlc_usage_error("serve", "--max-body-bytes takes 1024..2^40, not '%s'",
                                v);
      }
    } else if ((v = dmlc_flag_value(argc, argv, &i, "--max-inflight-body-bytes"))) {
      if (parse_i64(v, 1024, (int64_t)1 << 42, &max_inflight)) {
        return dmlc_usage_error(
            "serve", "--max-inflight-body-bytes takes 1024..2^42, not '%s'", v);
      }
    } else if ((v = dmlc_flag_value(argc, argv, &i, "--max-connections"))) {
      if (parse_i64(v, 1, 65536, &max_conn)) {
        return dmlc_usage_error("serve", "--max-connections takes 1..65536, not '%s'", v);
      }
      max_conn_given = 1;
    } else if ((v = dmlc_flag_value(argc, argv, &i, "--http-threads"))) {
      if (parse_i64(v, 1, 64, &http_threads)) {
        return dmlc_usage_error("serve", "--http-threads takes 1..64, not '%s'", v);
      }
    } else if ((v = dmlc_flag_value(argc, argv, &i, "--tls-cert"))) {
      tls_cert = v;
    } else if ((v = dmlc_flag_value(argc, argv, &i, "--tls-key"))) {
      tls_key = v;
    } else if ((v = dmlc_flag_value(argc, argv, &i, "--auth-token-file"))) {
      token_file = v;
    } else if ((v = dmlc_flag_value(argc, argv, &i, "--header-timeout"))) {
      if (!parse_seconds(v, &header_timeout))
        return dmlc_usage_error("serve",
                                "--header-timeout takes 0..86400 seconds, not '%s'", v);
    } else if ((v = dmlc_flag_value(argc, argv, &i, "--body-timeout"))) {
      if (!parse_seconds(v, &body_timeout))
        return dmlc_usage_error("serve",
                                "--body-timeout takes 0..86400 seconds, not '%s'", v);
    } else if ((v = dmlc_flag_value(argc, argv, &i, "--batch-timeout-ms"))) {
      char *end;
      timeout_ms = strtod(v, &end);
      if (!*v || *end || !(timeout_ms >= 0 && timeout_ms <= 3.6e6)) {
        return dmlc_usage_error("serve", "--batch-timeout-ms takes 0..3600000, not '%s'",
                                v);
      }
    } else if (!strcmp(argv[i], "--verbose")) {
      verbosity = 2;
    } else if (!strcmp(argv[i], "--quiet")) {
      verbosity = 0;
    } else if (argv[i][0] == '-') {
      return dmlc_usage_error("serve", "unknown flag '%s'", argv[i]);
    } else if (!pkg) {
      pkg = argv[i];
    } else {
      return dmlc_usage_error("serve", "more than one package given ('%s')", argv[i]);
    }
  }
  if (!pkg && !n_specs)
    return dmlc_usage_error("serve", "no package given (PKG or --model NAME=PKG)");
  if (name && !pkg) return dmlc_usage_error("serve", "--name names the PKG argument");
  if (!tls_cert != !tls_key)
    return dmlc_usage_error("serve", "--tls-cert and --tls-key go together");
  if (tls_cert && MHD_is_feature_supported(MHD_FEATURE_TLS) != MHD_YES)
    return dmlc_usage_error("serve",
                            "this libmicrohttpd was built without TLS: --tls-cert cannot "
                            "be served");
  struct sockaddr_in addr;
  memset(&addr, 0, sizeof addr);
  addr.sin_family = AF_INET;
  addr.sin_port = htons((uint16_t)port);
  if (inet_pton(AF_INET, host, &addr.sin_addr) != 1) {
    return dmlc_usage_error("serve", "--host takes an IPv4 address, not '%s'", host);
  }
  memset(models, 0, sizeof models);
  if (pkg) { /* default name: the file name without .dmlpkg */
    const char *base = strrchr(pkg, '/');
    base = base ? base + 1 : pkg;
    size_t n = strlen(base);
    if (n > 7 && !strcmp(base + n - 7, ".dmlpkg")) n -= 7;
    int rc = name ? add_model(models, &n_models, name, strlen(name), pkg)
                  : add_model(models, &n_models, base, n, pkg);
    if (rc) return rc;
  }
  for (int k = 0; k < n_specs; k++) {
    const char *eq = strchr(model_specs[k], '=');
    if (!eq || !eq[1])
      return dmlc_usage_error("serve", "--model takes NAME=PKG, not '%s'",
                              model_specs[k]);
    int rc = add_model(models, &n_models, model_specs[k], (size_t)(eq - model_specs[k]),
                       eq + 1);
    if (rc) return rc;
  }

  /* The token and the TLS files: regular files only (dml_file), read
   * before anything is served. */
  uint8_t *cert_pem = NULL, *key_pem = NULL, *token = NULL;
  size_t n_cert = 0, n_key = 0, n_token = 0;
  dml_status_t st = NULL;
  if (token_file) st = dml_file_read_all("serve", token_file, &token, &n_token);
  if (!st && tls_cert) st = dml_file_read_all("serve", tls_cert, &cert_pem, &n_cert);
  if (!st && tls_key) st = dml_file_read_all("serve", tls_key, &key_pem, &n_key);
  if (st) {
    free(token), free(cert_pem), free(key_pem);
    return dmlc_report(st);
  }
  if (token) {
    /* one line; surrounding white space is not part of the token */
    size_t a = 0, e = n_token;
    while (a < e && strchr(" \t\r\n", token[a])) a++;
    while (e > a && strchr(" \t\r\n", token[e - 1])) e--;
    int bad = e - a < 16;
    for (size_t i = a; i < e; i++) bad |= token[i] < 0x21 || token[i] > 0x7e;
    if (bad) {
      free(token), free(cert_pem), free(key_pem);
      return dmlc_usage_error("serve",
                              "--auth-token-file '%s' must hold one token of at least 16 "
                              "printable characters without spaces",
                              token_file);
    }
    memmove(token, token + a, e - a);
    token[e - a] = 0;
  }
  /* MHD_OPTION_HTTPS_MEM_* take NUL-terminated PEM text */
  uint8_t *pems[2] = {cert_pem, key_pem};
  size_t n_pems[2] = {n_cert, n_key};
  for (int k = 0; k < 2; k++) {
    if (!pems[k]) continue;
    uint8_t *p = (uint8_t *)realloc(pems[k], n_pems[k] + 1);
    if (!p) {
      free(token), free(pems[0]), free(pems[1]);
      return dmlc_report(
          dml_status_make(DML_STATUS_RESOURCE_EXHAUSTED, "serve", "out of memory"));
    }
    p[n_pems[k]] = 0;
    pems[k] = p;
  }
  cert_pem = pems[0], key_pem = pems[1];
  if (strcmp(host, "127.0.0.1") != 0 && (!tls_cert || !token))
    fprintf(stderr,
            "dmlc serve: warning: listening on %s without %s: anyone who can reach "
            "this address can %s (docs/serving.md, \"Exposing the server\")\n",
            host,
            !tls_cert && !token ? "TLS or a token"
            : !tls_cert         ? "TLS"
                                : "a token",
            !token ? "run the model" : "read the requests and replies");
  /* Each connection takes a file descriptor: the soft limit is raised to
   * what --max-connections (and MHD's margin above it) needs, up to the
   * hard limit; beyond it the connection limit is lowered, saying so. */
  struct rlimit rl;
  int64_t fds_needed = max_conn + max_conn / 4 + 8 + 64;
  if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && (rlim_t)fds_needed > rl.rlim_cur) {
    rlim_t want = (rlim_t)fds_needed < rl.rlim_max ? (rlim_t)fds_needed : rl.rlim_max;
    rl.rlim_cur = want;
    setrlimit(RLIMIT_NOFILE, &rl);
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && (rlim_t)fds_needed > rl.rlim_cur) {
      int64_t fit = ((int64_t)rl.rlim_cur - 64 - 8) * 4 / 5;
      if (fit < 1) fit = 1;
      if (max_conn_given)
        fprintf(
            stderr,
            "dmlc serve: warning: the open-file limit (%llu) allows %lld connections, "
            "not %lld: --max-connections lowered\n",
            (unsigned long long)rl.rlim_cur, (long long)fit, (long long)max_conn);
      max_conn = fit;
    }
  }

  dml_serve_config_t cfg;
  dml_serve_config_init(&cfg);
  cfg.batch_size = batch;
  cfg.batch_timeout_ms = timeout_ms;
  cfg.device = device;
  cfg.instances = (int)instances;
  server_t sv;
  memset(&sv, 0, sizeof sv);
  sv.models = models;
  sv.n_models = n_models;
  sv.metrics_public = metrics_public;
  sv.max_body = (size_t)max_body;
  sv.max_conn = max_conn;
  /* default: two bodies of the largest size; never below one */
  if (!max_inflight) max_inflight = 2 * max_body;
  sv.max_inflight_body = (size_t)(max_inflight > max_body ? max_inflight : max_body);
  sv.header_timeout_s = header_timeout;
  sv.body_timeout_s = body_timeout;
  pthread_mutex_init(&sv.conns_lock, NULL);
  sv.verbosity = verbosity;
  sv.token = (char *)token;
  st = models_open(models, n_models, &cfg);
  if (st) {
    free(token), free(cert_pem), free(key_pem);
    return dmlc_report(st);
  }
  pthread_mutex_init(&sv.q_lock, NULL);
  pthread_cond_init(&sv.q_cond, NULL);

#ifdef __GLIBC__
  /* Blocks of 256 KiB and more (request bodies, their tensors, replies)
   * are mmap'ed and unmapped when freed (a fixed threshold: glibc's
   * dynamic one rises after the first big free and keeps later ones in the
   * heap). */
  mallopt(M_MMAP_THRESHOLD, 256 * 1024);
#endif

  for (int k = 0; k < (int)http_threads; k++)
    if (pthread_create(&sv.parsers[sv.n_parsers], NULL, parse_thread, &sv) == 0)
      sv.n_parsers++;
  if (!sv.n_parsers) {
    fprintf(stderr, "error: dmlc serve: cannot start threads\n");
    models_close(models, n_models);
    free(token), free(cert_pem), free(key_pem);
    return 1;
  }
  /* epoll with a pool of --http-threads threads: an idle connection holds
   * a socket and MHD's per-connection memory, no thread; an inference
   * suspends its connection until the serving object's callback resumes
   * it (infer, infer_done). */
  struct MHD_OptionItem opts[] = {
      {MHD_OPTION_EXTERNAL_LOGGER, (intptr_t)mhd_log, &sv},
      {MHD_OPTION_SOCK_ADDR, 0, &addr},
      /* room to answer 503 beyond --max-connections; MHD closes the rest */
      {MHD_OPTION_CONNECTION_LIMIT, (intptr_t)(max_conn + max_conn / 4 + 8), NULL},
      {MHD_OPTION_CONNECTION_TIMEOUT, 30, NULL},
      {MHD_OPTION_THREAD_POOL_SIZE, (intptr_t)http_threads, NULL},
      {MHD_OPTION_NOTIFY_COMPLETED, (intptr_t)on_completed, &sv},
      {MHD_OPTION_NOTIFY_CONNECTION, (intptr_t)on_connection, &sv},
      {tls_cert ? MHD_OPTION_HTTPS_MEM_CERT : MHD_OPTION_END, 0, cert_pem},
      {tls_cert ? MHD_OPTION_HTTPS_MEM_KEY : MHD_OPTION_END, 0, key_pem},
      {MHD_OPTION_END, 0, NULL},
  };
  errno = 0;
  struct MHD_Daemon *d =
      MHD_start_daemon(MHD_USE_EPOLL_INTERNAL_THREAD | MHD_ALLOW_SUSPEND_RESUME |
                           MHD_USE_ERROR_LOG | (tls_cert ? MHD_USE_TLS : 0),
                       (uint16_t)port, NULL, NULL, on_request, &sv, MHD_OPTION_ARRAY,
                       opts, MHD_OPTION_END);
  if (!d) {
    stop_parsers(&sv);
    int err = errno;
    if (tls_cert)
      fprintf(stderr,
              "error: dmlc serve: cannot start on %s:%lld: %s%sthe --tls-cert/--tls-key "
              "PEM files may not be a certificate and its private key (libmicrohttpd's "
              "message above)\n",
              host, (long long)port, err ? strerror(err) : "", err ? "; or " : "");
    else
      fprintf(stderr, "error: dmlc serve: cannot listen on %s:%lld (%s)\n", host,
              (long long)port, err ? strerror(err) : "libmicrohttpd refused to start");
    models_close(models, n_models);
    free(token), free(cert_pem), free(key_pem);
    return 1;
  }
  const union MHD_DaemonInfo *info = MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT);
  unsigned bound_port = info ? info->port : (unsigned)port;
  atomic_store(&sv.ready, 1);
  sb_t what = {0}; /* the models: "model 'a', batched, batch size 64" */
  for (int i = 0; i < n_models; i++) {
    sb_printf(&what, "%s'%s', %s, batch size %lld", i ? "; " : "", models[i].name,
              dml_serve_is_batched(models[i].srv) ? "batched" : "not batched",
              (long long)dml_serve_batch_size(models[i].srv));
    /* dml_serve_create serves a model whose rows are not independent one
     * request per run (a reply must not depend on other clients' rows) */
    char why[400];
    if (!dml_serve_is_batched(models[i].srv) &&
        dml_rt_model_meta_get(models[i].model, "rows-mixed-by", why, sizeof why))
      sb_printf(&what, ": %s", why);
  }
  printf(
      "listening on http%s://%s:%u (%s%s, batch timeout %g ms, %lld instance%s%s, up "
      "to %lld connections)\n",
      tls_cert ? "s" : "", host, bound_port, n_models > 1 ? "models " : "model ",
      what.p ? what.p : "", timeout_ms, (long long)instances, instances == 1 ? "" : "s",
      n_models > 1 ? " each" : "", (long long)max_conn);
  free(what.p);
  fflush(stdout);

  int sig = 0;
  for (;;) { /* signals, and every 0.25 s the slow connections */
    struct timespec tick = {0, 250000000};
    sig = sigtimedwait(&sigs, NULL, &tick);
    if (sig == SIGINT || sig == SIGTERM) break;
    cut_slow_connections(&sv);
#ifdef __GLIBC__
    /* Big requests' memory (bodies, tensors, replies) goes back to the
     * system once they are done: glibc keeps freed heap pages otherwise,
     * and rounds of large requests grew the resident size past the
     * documented bound (docs/serving.md, "Memory"). */
    if (atomic_exchange(&sv.big_done, 0)) malloc_trim(0);
#endif
  }
  atomic_store(&sv.ready, 0);
  fprintf(stderr, "dmlc serve: %s: finishing the requests in flight\n",
          sig == SIGINT ? "SIGINT" : "SIGTERM");
  /* Every queued inference runs and resumes its connection (later ones fail
   * at once: the serving object is shut); then MHD stops, with no
   * connection left suspended. */
  stop_parsers(&sv);
  for (int i = 0; i < n_models; i++) dml_serve_shutdown(models[i].srv, 1);
  MHD_stop_daemon(d); /* joins MHD's threads */
  for (int i = 0; i < n_models; i++) {
    dml_serve_stats_t stats;
    dml_serve_get_stats(models[i].srv, &stats);
    char line[1024];
    fprintf(stderr, "dmlc serve: %s%s%s%s\n", n_models > 1 ? "model '" : "",
            n_models > 1 ? models[i].name : "", n_models > 1 ? "': " : "",
            dml_serve_stats_str(&stats, line, sizeof line));
  }
  fprintf(stderr, "dmlc serve: http 2xx %llu, 4xx %llu, 5xx %llu\n",
          (unsigned long long)atomic_load(&sv.n_2xx),
          (unsigned long long)atomic_load(&sv.n_4xx),
          (unsigned long long)atomic_load(&sv.n_5xx));
  models_close(models, n_models);
  pthread_mutex_destroy(&sv.conns_lock);
  pthread_mutex_destroy(&sv.q_lock);
  pthread_cond_destroy(&sv.q_cond);
  free(token), free(cert_pem), free(key_pem);
  return 0;
}
