/* dml_file.c — opening files to read and replacing files atomically (see
 * dml_file.h for the rules every loader and writer of dmlc follows). */
#define _XOPEN_SOURCE 700 /* realpath */
#include "dml_file.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

const char *dml_file_kind(unsigned mode) {
  mode_t m = (mode_t)mode;
  if (S_ISREG(m)) return "a regular file";
  if (S_ISFIFO(m)) return "a FIFO (named pipe)";
  if (S_ISCHR(m)) return "a character device";
  if (S_ISBLK(m)) return "a block device";
  if (S_ISSOCK(m)) return "a socket";
  if (S_ISDIR(m)) return "a directory";
  if (S_ISLNK(m)) return "a symbolic link";
  return "not a regular file";
}

dml_status_t dml_file_open_read(const char *op, const char *path, int *out_fd,
                                uint64_t *out_size) {
  if (!path || !path[0])
    return dml_status_make(DML_STATUS_INVALID_ARGUMENT, op, "empty file path");
  /* A device is refused before open(), which has side effects for some
   * (a tape rewinds, a terminal becomes the controlling one). O_NONBLOCK:
   * opening a FIFO without a writer returns at once instead of waiting
   * forever; fstat() then checks what was opened (the path may have
   * changed since stat()). */
  struct stat pre;
  if (stat(path, &pre) == 0 && !S_ISREG(pre.st_mode))
    return dml_status_make(
        DML_STATUS_IO, op,
        "'%s' is %s, not a regular file: dmlc reads only regular files", path,
        dml_file_kind((unsigned)pre.st_mode));
  int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (fd < 0)
    return dml_status_make(errno == ENOENT ? DML_STATUS_NOT_FOUND : DML_STATUS_IO, op,
                           "cannot open '%s': %s", path, strerror(errno));
  struct stat sb;
  if (fstat(fd, &sb) != 0) {
    int e = errno;
    close(fd);
    return dml_status_make(DML_STATUS_IO, op, "cannot stat '%s': %s", path, strerror(e));
  }
  if (!S_ISREG(sb.st_mode)) {
    close(fd);
    return dml_status_make(
        DML_STATUS_IO, op,
        "'%s' is %s, not a regular file: dmlc reads only regular files", path,
        dml_file_kind((unsigned)sb.st_mode));
  }
  int fl = fcntl(fd, F_GETFL);
  if (fl < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) != 0) {
    int e = errno;
    close(fd);
    return dml_status_make(DML_STATUS_IO, op, "cannot read '%s': %s", path, strerror(e));
  }
  if (sb.st_size < 0) {
    close(fd);
    return dml_status_make(DML_STATUS_IO, op, "'%s' has a negative size", path);
  }
  *out_fd = fd;
  *out_size = (uint64_t)sb.st_size;
  return DML_OK;
}

dml_status_t dml_file_read_all(const char *op, const char *path, uint8_t **out_bytes,
                               size_t *out_size) {
  int fd;
  uint64_t size;
  DML_RETURN_IF_ERROR(dml_file_open_read(op, path, &fd, &size));
  if (size > (uint64_t)PTRDIFF_MAX) {
    close(fd);
    return dml_status_make(DML_STATUS_RESOURCE_EXHAUSTED, op,
                           "'%s' is too large (%llu bytes)", path,
                           (unsigned long long)size);
  }
  size_t n = (size_t)size;
  uint8_t *buf = (uint8_t *)malloc(n ? n : 1);
  if (!buf) {
    close(fd);
    return dml_status_make(DML_STATUS_RESOURCE_EXHAUSTED, op,
                           "out of memory reading '%s' (%zu bytes)", path, n);
  }
  size_t got = 0;
  while (got < n) {
    ssize_t r = read(fd, buf + got, n - got);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) break;
    got += (size_t)r;
  }
  int e = errno;
  close(fd);
  if (got != n) {
    free(buf);
    return dml_status_make(DML_STATUS_IO, op,
                           "short read from '%s' (%zu of %zu bytes)%s%s", path, got, n,
                           got < n && e ? ": " : "", e ? strerror(e) : "");
  }
  *out_bytes = buf;
  *out_size = n;
  return DML_OK;
}

int dml_file_write_all(int fd, const void *data, size_t n) {
  const uint8_t *p = (const uint8_t *)data;
  while (n) {
    ssize_t r = write(fd, p, n);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) {
      if (r == 0) errno = EIO;
      return -1;
    }
    p += r;
    n -= (size_t)r;
  }
  return 0;
}

/* "<realpath of path's folder>/<path's last name>" in a malloc'd string, or
 * NULL (folder missing, out of memory). */
static char *canonical_entry(const char *path) {
  const char *slash = strrchr(path, '/');
  const char *base = slash ? slash + 1 : path;
  if (!*base || !strcmp(base, ".") || !strcmp(base, "..")) return realpath(path, NULL);
  char *dir;
  if (!slash) {
    dir = realpath(".", NULL);
  } else {
    size_t n = (size_t)(slash - path);
    char *d = (char *)malloc(n + 2);
    if (!d) return NULL;
    memcpy(d, path, n);
    d[n ? n : 1] = 0;
    if (!n) d[0] = '/';
    dir = realpath(d, NULL);
    free(d);
  }
  if (!dir) return NULL;
  size_t dl = strlen(dir), bl = strlen(base);
  char *r = (char *)malloc(dl + bl + 2);
  if (r)
    snprintf(r, dl + bl + 2, "%s%s%s", dir, dl && dir[dl - 1] == '/' ? "" : "/", base);
  free(dir);
  return r;
}

int dml_file_same(const char *a, const char *b) {
  if (!a || !b) return 0;
  struct stat sa, sb;
  int ha = stat(a, &sa) == 0, hb = stat(b, &sb) == 0;
  if (ha && hb) return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
  if (ha != hb) return 0;
  /* Neither exists yet: the same entry of the same folder? */
  char *ca = canonical_entry(a), *cb = canonical_entry(b);
  int same = ca && cb && !strcmp(ca, cb);
  free(ca);
  free(cb);
  return same;
}

/* Removes "<base>.tmp.<pid>" files in `dir` whose process no longer
 * exists (left by a writer that was killed). Best effort: errors ignored. */
static void remove_stale_temps(const char *dir, const char *base) {
  DIR *d = opendir(dir);
  if (!d) return;
  size_t bl = strlen(base);
  pid_t self = getpid();
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    const char *n = e->d_name;
    if (strncmp(n, base, bl) != 0 || strncmp(n + bl, ".tmp.", 5) != 0) continue;
    const char *digits = n + bl + 5;
    if (!*digits || strlen(digits) > 9) continue;
    long pid = 0;
    const char *q = digits;
    for (; *q >= '0' && *q <= '9'; q++) pid = pid * 10 + (*q - '0');
    if (*q || pid <= 0 || (pid_t)pid == self) continue;
    if (kill((pid_t)pid, 0) == 0 || errno != ESRCH) continue; /* alive, or not ours */
    size_t dl = strlen(dir), nl = strlen(n);
    char *full = (char *)malloc(dl + nl + 2);
    if (!full) break;
    snprintf(full, dl + nl + 2, "%s/%s", dir, n);
    struct stat sb;
    if (lstat(full, &sb) == 0 && S_ISREG(sb.st_mode)) unlink(full);
    free(full);
  }
  closedir(d);
}

dml_status_t dml_file_write_atomic_fn(const char *op, const char *path,
                                      dml_file_write_fn write_fn, void *ctx) {
  if (!path || !path[0])
    return dml_status_make(DML_STATUS_INVALID_ARGUMENT, op, "empty output path");
  size_t plen = strlen(path);
  if (path[plen - 1] == '/')
    return dml_status_make(DML_STATUS_INVALID_ARGUMENT, op,
                           "output path '%s' names a folder, not a file", path);
  /* What is at `path` now decides whether it may be replaced, and the mode. */
  struct stat old;
  int have_old = lstat(path, &old) == 0;
  if (!have_old && errno != ENOENT)
    return dml_status_make(DML_STATUS_IO, op, "cannot write '%s': %s", path,
                           strerror(errno));
  if (have_old && !S_ISREG(old.st_mode))
    return dml_status_detail(
        dml_status_make(DML_STATUS_IO, op,
                        "'%s' is %s: dmlc replaces only regular files, refusing to "
                        "write it",
                        path, dml_file_kind((unsigned)old.st_mode)),
        "write to a new path, or remove '%s' first", path);
  char *tmp = (char *)malloc(plen + 32);
  char *dir = (char *)malloc(plen + 2);
  if (!tmp || !dir) {
    free(tmp);
    free(dir);
    return dml_status_make(DML_STATUS_RESOURCE_EXHAUSTED, op, "out of memory");
  }
  snprintf(tmp, plen + 32, "%s.tmp.%ld", path, (long)getpid());
  memcpy(dir, path, plen + 1);
  char *slash = strrchr(dir, '/');
  const char *base = path;
  if (!slash) {
    strcpy(dir, ".");
  } else {
    base = path + (slash - dir) + 1;
    if (slash == dir)
      dir[1] = '\0';
    else
      *slash = '\0';
  }
  remove_stale_temps(dir, base);
  dml_status_t st = DML_OK;
  int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
  if (fd < 0 && errno == EEXIST) {
    /* Our own pid's leftover (a pid reused after a crash): a regular file
     * only, never whatever a symbolic link points to. */
    struct stat ts;
    if (lstat(tmp, &ts) == 0 && S_ISREG(ts.st_mode) && unlink(tmp) == 0)
      fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
    else
      errno = EEXIST;
  }
  if (fd < 0) {
    st = dml_status_make(errno == ENOENT ? DML_STATUS_NOT_FOUND : DML_STATUS_IO, op,
                         "cannot create '%s': %s", tmp, strerror(errno));
    goto out;
  }
  if (have_old && fchmod(fd, old.st_mode & 07777) != 0)
    st = dml_status_make(DML_STATUS_IO, op, "cannot give '%s' the mode %04o of '%s': %s",
                         tmp, (unsigned)(old.st_mode & 07777), path, strerror(errno));
  if (!st && write_fn(fd, ctx) != 0)
    st = dml_status_make(DML_STATUS_IO, op, "writing '%s' failed: %s", tmp,
                         strerror(errno));
  if (!st && fsync(fd) != 0)
    st = dml_status_make(DML_STATUS_IO, op, "fsync of '%s' failed: %s", tmp,
                         strerror(errno));
  if (close(fd) != 0 && !st)
    st = dml_status_make(DML_STATUS_IO, op, "closing '%s' failed: %s", tmp,
                         strerror(errno));
  if (!st && rename(tmp, path) != 0)
    st = dml_status_make(DML_STATUS_IO, op, "renaming '%s' to '%s' failed: %s", tmp, path,
                         strerror(errno));
  if (st) {
    unlink(tmp);
    goto out;
  }
  /* The rename is durable once the folder's entry is on disk. */
  int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    if (fsync(dfd) != 0 && errno != EINVAL && errno != EROFS)
      st = dml_status_make(DML_STATUS_IO, op, "fsync of folder '%s' failed: %s", dir,
                           strerror(errno));
    close(dfd);
  }
out:
  free(tmp);
  free(dir);
  return st;
}

typedef struct {
  const void *const *parts;
  const size_t *sizes;
  size_t n;
} parts_t;

static int write_parts(int fd, void *ctx) {
  const parts_t *p = (const parts_t *)ctx;
  for (size_t i = 0; i < p->n; i++)
    if (p->sizes[i] && dml_file_write_all(fd, p->parts[i], p->sizes[i]) != 0) return -1;
  return 0;
}

dml_status_t dml_file_write_atomic(const char *op, const char *path,
                                   const void *const *parts, const size_t *sizes,
                                   size_t n_parts) {
  parts_t p = {parts, sizes, n_parts};
  return dml_file_write_atomic_fn(op, path, write_parts, &p);
}
