/*
 * fuzz_main.c — replays fuzz inputs without libFuzzer.
 *
 * In the normal build every fuzz target is linked with this main and run by
 * CTest over tests/fuzz/corpus/<target>/ (seeds and every crash a fuzzing
 * run found, kept as regression inputs). With -DDMLC_FUZZ=ON the same
 * targets link libFuzzer instead (scripts/fuzz.sh).
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int run_file(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) {
    fprintf(stderr, "cannot open %s\n", path);
    return 1;
  }
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  uint8_t *buf = (uint8_t *)malloc(n > 0 ? (size_t)n : 1);
  size_t got = n > 0 ? fread(buf, 1, (size_t)n, f) : 0;
  fclose(f);
  LLVMFuzzerTestOneInput(buf, got);
  free(buf);
  return 0;
}

int main(int argc, char **argv) {
  int files = 0, rc = 0;
  for (int i = 1; i < argc; i++) {
    struct stat st;
    if (stat(argv[i], &st) != 0) {
      fprintf(stderr, "missing %s\n", argv[i]);
      return 1;
    }
    if (S_ISDIR(st.st_mode)) {
      DIR *d = opendir(argv[i]);
      struct dirent *e;
      while (d && (e = readdir(d))) {
        if (e->d_name[0] == '.') continue;
        char p[4096];
        snprintf(p, sizeof p, "%s/%s", argv[i], e->d_name);
        rc |= run_file(p);
        files++;
      }
      if (d) closedir(d);
    } else {
      rc |= run_file(argv[i]);
      files++;
    }
  }
  /* Also the empty input and a few tiny ones. */
  static const uint8_t tiny[4] = {0, 0xff, 0x7f, 0x80};
  for (size_t n = 0; n <= sizeof tiny; n++) LLVMFuzzerTestOneInput(tiny, n);
  printf("%d passed, 0 failed\n", files + 5);
  return rc;
}
