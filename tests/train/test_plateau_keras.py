#!/usr/bin/env python3
"""dml_lr_plateau_update against Keras' ReduceLROnPlateau (issue 22 review).

keras_plateau() below transcribes keras/src/callbacks/reduce_lr_on_plateau.py
(Keras 3, ReduceLROnPlateau.on_epoch_end) statement for statement, with
mode "min" (losses) or "max" (accuracies):

    if self.in_cooldown():            # cooldown_counter > 0
        self.cooldown_counter -= 1
        self.wait = 0
    if self.monitor_op(current, self.best):
        self.best = current
        self.wait = 0
    elif not self.in_cooldown():      # asked again after the count-down
        self.wait += 1
        if self.wait >= self.patience:
            old_lr = lr
            if old_lr > min_lr:
                lr = max(old_lr * self.factor, min_lr)
                self.cooldown_counter = self.cooldown
                self.wait = 0

monitor_op is np.less(a, b - min_delta) (min) or np.greater(a, b + min_delta)
(max); best starts at +inf (min) or -inf (max). Standard library only.
Usage: test_plateau_keras.py PATH/TO/test_train_schedule
"""
import math
import subprocess
import sys


def keras_plateau(initial, factor, patience, min_lr, cooldown, min_delta, maximize, values):
    lr, best = initial, (-math.inf if maximize else math.inf)
    wait = cooldown_counter = 0
    out = []
    for current in values:
        reduced = 0
        if cooldown_counter > 0:
            cooldown_counter -= 1
            wait = 0
        better = (current > best + min_delta) if maximize else (current < best - min_delta)
        if better:  # NaN compares false, as np.less/np.greater
            best = current
            wait = 0
        elif not cooldown_counter > 0:
            wait += 1
            if wait >= patience:
                if lr > min_lr:
                    lr = max(lr * factor, min_lr)
                    cooldown_counter = cooldown
                    wait = 0
                    reduced = 1
        out.append((lr, reduced))
    return out


CASES = [
    # (initial, factor, patience, min_lr, cooldown, min_delta, maximize, values)
    (0.1, 0.5, 2, 0.02, 1, 0.01, 0,
     [1.0, 0.995, 0.99, 1.5, 1.5, 1.5, 0.5, 0.6, 0.6, 0.6, 0.6, 0.6, float("nan")]),
    (0.1, 0.5, 1, 0.0, 2, 1e-4, 0, [1.0] * 12),
    (0.1, 0.1, 3, 1e-4, 3, 1e-4, 0,
     [2.0, 1.9, 1.9, 1.9, 1.9, 1.9, 1.8, 1.9, 1.9, 1.9, 1.9, 1.9, 1.9, 1.7, 1.9, 1.9]),
    (0.1, 0.5, 0, 0.0, 0, 1e-4, 0, [1.0, 0.5, 0.6, 0.4, 0.4]),
    (0.1, 0.5, 0, 0.0, 1, 1e-4, 0, [1.0, 1.0, 1.0, 1.0, 1.0]),
    (1.0, 0.5, 2, 0.0, 1, 1e-4, 1,
     [0.5, 0.6, 0.6, 0.6, 0.55, 0.7, 0.7, float("nan"), 0.7, 0.7, 0.8]),
    (0.05, 0.2, 1, 0.001, 4, 0.0, 0,
     [3, 2, 2, 2, 2, 2, 2, 2, 2, 1, 1, 1, 1, 1, 1, 1, 1, 1]),
]


def main():
    prog = sys.argv[1]
    failures = 0
    for i, (init, f, p, mn, cd, md, mx, vals) in enumerate(CASES):
        spec = "plateau:%r,%r,%d,%r,%d,%r" % (init, f, p, mn, cd, md)
        want = keras_plateau(init, f, p, mn, cd, md, mx, vals)
        res = subprocess.run([prog, "--plateau", spec, str(mx)] + [repr(float(v)) for v in vals],
                             capture_output=True, text=True)
        if res.returncode != 0:
            print("case %d (%s): exit %d %s" % (i, spec, res.returncode, res.stderr))
            failures += 1
            continue
        got = [(float(a), int(b)) for a, b in (l.split() for l in res.stdout.split("\n") if l)]
        # the same double arithmetic (lr * factor, max): equal to 1e-15 relative
        ok = len(got) == len(want) and all(
            g[1] == w[1] and abs(g[0] - w[0]) <= 1e-15 * abs(w[0]) for g, w in zip(got, want))
        if not ok:
            failures += 1
            print("case %d (%s) values %s\n  keras: %s\n  dmlc:  %s" % (i, spec, vals, want, got))
    print("%d of %d plateau cases match Keras" % (len(CASES) - failures, len(CASES)))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
