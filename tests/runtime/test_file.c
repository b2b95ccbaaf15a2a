/* Tests for runtime/base/dml_file.c: opening only regular files to read, and
 * the atomic writer's rules (refuse non-regular outputs, keep the mode,
 * remove dead writers' temp files, same-file comparison). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "dml_file.h"
#include "dml_test.h"

static char g_dir[256];

static const char *at(const char *name) {
  static char buf[4][512];
  static int k;
  k = (k + 1) % 4;
  snprintf(buf[k], sizeof buf[k], "%s/%s", g_dir, name);
  return buf[k];
}

static void put(const char *path, const char *text) {
  FILE *f = fopen(path, "w");
  CHECK(f != NULL);
  if (f) {
    fputs(text, f);
    fclose(f);
  }
}

static void test_read_refuses_special_files(void) {
  int fd = -1;
  uint64_t size = 0;
  CHECK(mkfifo(at("fifo"), 0600) == 0);
  /* before: open() of a FIFO without a writer blocked forever */
  CHECK_ERROR(dml_file_open_read("t", at("fifo"), &fd, &size), DML_STATUS_IO,
              "fifo' is a FIFO (named pipe), not a regular file");
  CHECK_ERROR(dml_file_open_read("t", g_dir, &fd, &size), DML_STATUS_IO,
              "is a directory, not a regular file");
  CHECK_ERROR(dml_file_open_read("t", "/dev/null", &fd, &size), DML_STATUS_IO,
              "'/dev/null' is a character device, not a regular file");
  CHECK_ERROR(dml_file_open_read("t", at("missing"), &fd, &size), DML_STATUS_NOT_FOUND,
              "missing': No such file or directory");
  uint8_t *b = NULL;
  size_t n = 0;
  CHECK_ERROR(dml_file_read_all("t", at("fifo"), &b, &n), DML_STATUS_IO, "FIFO");
  put(at("r.txt"), "hello");
  CHECK_OK(dml_file_read_all("t", at("r.txt"), &b, &n));
  CHECK(n == 5 && b && !memcmp(b, "hello", 5));
  free(b);
  /* a symbolic link to a regular file reads the file */
  CHECK(symlink(at("r.txt"), at("r.link")) == 0);
  CHECK_OK(dml_file_open_read("t", at("r.link"), &fd, &size));
  CHECK(size == 5 && (fcntl(fd, F_GETFL) & O_NONBLOCK) == 0);
  close(fd);
}

static void test_write_rules(void) {
  const void *parts[2] = {"ab", "cde"};
  size_t sizes[2] = {2, 3};
  /* a new file: the bytes, 0666 less the umask */
  mode_t um = umask(022);
  CHECK_OK(dml_file_write_atomic("t", at("w.bin"), parts, sizes, 2));
  uint8_t *b = NULL;
  size_t n = 0;
  CHECK_OK(dml_file_read_all("t", at("w.bin"), &b, &n));
  CHECK(n == 5 && !memcmp(b, "abcde", 5));
  free(b);
  struct stat sb;
  CHECK(stat(at("w.bin"), &sb) == 0 && (sb.st_mode & 0777) == 0644);
  /* a replaced file keeps its mode */
  CHECK(chmod(at("w.bin"), 0600) == 0);
  CHECK_OK(dml_file_write_atomic("t", at("w.bin"), parts, sizes, 1));
  CHECK(stat(at("w.bin"), &sb) == 0 && (sb.st_mode & 0777) == 0600 && sb.st_size == 2);
  umask(um);
  /* non-regular outputs are refused and left as they are */
  CHECK_ERROR(dml_file_write_atomic("t", at("fifo"), parts, sizes, 2), DML_STATUS_IO,
              "fifo' is a FIFO (named pipe): dmlc replaces only regular files");
  CHECK(lstat(at("fifo"), &sb) == 0 && S_ISFIFO(sb.st_mode));
  CHECK(symlink(at("w.bin"), at("w.link")) == 0);
  CHECK_ERROR(dml_file_write_atomic("t", at("w.link"), parts, sizes, 2), DML_STATUS_IO,
              "w.link' is a symbolic link: dmlc replaces only regular files");
  CHECK(lstat(at("w.link"), &sb) == 0 && S_ISLNK(sb.st_mode));
  CHECK_ERROR(dml_file_write_atomic("t", "/dev/null", parts, sizes, 2), DML_STATUS_IO,
              "'/dev/null' is a character device");
  CHECK_ERROR(dml_file_write_atomic("t", g_dir, parts, sizes, 2), DML_STATUS_IO,
              "is a directory");
  CHECK_ERROR(dml_file_write_atomic("t", at("nodir/x"), parts, sizes, 2),
              DML_STATUS_NOT_FOUND, "nodir/x.tmp.");
  /* temp files of the same output: a dead process's removed (a child that
   * has exited and been reaped), a live one's (pid 1) and other outputs'
   * kept */
  pid_t dead = fork();
  if (dead == 0) _exit(0);
  CHECK(dead > 0 && waitpid(dead, NULL, 0) == dead);
  char stale[64], other[64];
  snprintf(stale, sizeof stale, "w.bin.tmp.%ld", (long)dead);
  snprintf(other, sizeof other, "v.bin.tmp.%ld", (long)dead);
  put(at(stale), "x");
  put(at("w.bin.tmp.1"), "x");
  put(at(other), "x");
  CHECK_OK(dml_file_write_atomic("t", at("w.bin"), parts, sizes, 2));
  CHECK(access(at(stale), F_OK) != 0);
  CHECK(access(at("w.bin.tmp.1"), F_OK) == 0);
  CHECK(access(at(other), F_OK) == 0);
}

static int fail_write(int fd, void *ctx) {
  (void)fd;
  (void)ctx;
  errno = ENOSPC;
  return -1;
}

static void test_failed_write_keeps_old(void) {
  CHECK_ERROR(dml_file_write_atomic_fn("t", at("w.bin"), fail_write, NULL), DML_STATUS_IO,
              "No space left on device");
  uint8_t *b = NULL;
  size_t n = 0;
  CHECK_OK(dml_file_read_all("t", at("w.bin"), &b, &n));
  CHECK(n == 5 && !memcmp(b, "abcde", 5));
  free(b);
  char tmp[600];
  snprintf(tmp, sizeof tmp, "%s.tmp.%ld", at("w.bin"), (long)getpid());
  CHECK(access(tmp, F_OK) != 0);
}

static void test_same(void) {
  char cwd[PATH_MAX];
  CHECK(getcwd(cwd, sizeof cwd) != NULL);
  CHECK(chdir(g_dir) == 0);
  CHECK(dml_file_same("w.bin", "./w.bin"));
  CHECK(dml_file_same("w.bin", at("w.bin")));
  CHECK(link("w.bin", "hard.bin") == 0);
  CHECK(dml_file_same("hard.bin", "w.bin"));
  CHECK(!dml_file_same("w.bin", "r.txt"));
  /* neither exists: the same name in the same folder */
  CHECK(dml_file_same("new.csv", "./new.csv"));
  CHECK(!dml_file_same("new.csv", "new2.csv"));
  CHECK(!dml_file_same("new.csv", "w.bin"));
  CHECK(chdir(cwd) == 0);
}

int main(void) {
  snprintf(g_dir, sizeof g_dir, "%s/dml_test_file.XXXXXX",
           getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
  if (!mkdtemp(g_dir)) {
    perror("mkdtemp");
    return 1;
  }
  RUN(test_read_refuses_special_files);
  RUN(test_write_rules);
  RUN(test_failed_write_keeps_old);
  RUN(test_same);
  char cmd[300];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", g_dir);
  if (system(cmd) != 0) fprintf(stderr, "note: could not remove %s\n", g_dir);
  return dml_test_finish();
}
