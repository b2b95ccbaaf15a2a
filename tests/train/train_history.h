/* Reading a `dmlc train --history FILE.csv` back in the training tests
 * (test_train_symdims, test_train_cnn_device): one definition. */
#ifndef DML_TRAIN_HISTORY_H
#define DML_TRAIN_HISTORY_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dml_file.h"
#include "dml_test.h"

/* Columns loss and accuracy (2 and 3) of history DIR/NAME.csv, per epoch
 * (the header row skipped), at most cap rows; returns the rows read. */
static inline int dml_test_read_history(const char *dir, const char *name, double *loss,
                                        double *acc, int cap) {
  char p[600];
  snprintf(p, sizeof p, "%s/%s.csv", dir, name);
  uint8_t *b = NULL;
  size_t n = 0;
  CHECK_OK(dml_file_read_all("test", p, &b, &n));
  if (!b) return 0;
  char *text = (char *)realloc(b, n + 1);
  if (!text) {
    free(b);
    return 0;
  }
  text[n] = 0;
  int rows = 0;
  char *line = strchr(text, '\n'); /* after the header */
  while (line && line[1] && rows < cap) {
    int ep = 0;
    if (sscanf(line + 1, "%d,%lf,%lf", &ep, &loss[rows], &acc[rows]) == 3) rows++;
    line = strchr(line + 1, '\n');
  }
  free(text);
  return rows;
}

#endif
