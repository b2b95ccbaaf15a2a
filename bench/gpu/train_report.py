"""train_report.py — the table of bench/gpu/train_h200.sh: dmlc (per device)
and PyTorch training fashion_mlp on Fashion-MNIST, side by side.

    python3 bench/gpu/train_report.py RESULTS_DIR > table.md

RESULTS_DIR holds one JSON-lines file per run, named DEVICE-bBATCH.jsonl for
bench/train/dml_train_bench (DEVICE: cpu, cuda, vulkan, ...) and
torch-DEVICE-bBATCH.jsonl for bench/train_torch.py --per-epoch. A run that
failed has no "result" line (or no file) and shows as "failed".

samples/s: the mean over the run's epochs of each epoch's training rows /
training time, and the last epoch's. The first epoch includes each side's
warm-up (dmlc's first runs on the device per batch size, PyTorch's CUDA
and cuBLAS start: on the H200 PyTorch's first batch-256 epoch ran at 82k
samples/s), so the ratios and the targets' verdicts use the last epoch
(the steady state); the ratio of the means is shown too. Targets (issues 5
and 6): dmlc cuda >= 3x PyTorch at batch 32 and >= 1.5x at batch 256; dmlc
vulkan >= 1x PyTorch at batch 32; a dmlc GPU run's test accuracy within 1
point of dmlc's on the CPU at the same batch and epochs (the "accuracy
band"; PyTorch's difference is shown without a verdict: other random
numbers). The PyTorch peer is the torch cuda run (else any torch run of
that batch). Also writes the same as JSON to RESULTS_DIR/summary.json.
"""
import glob
import json
import os
import re
import sys

TARGETS = {('cuda', 32): 3.0, ('cuda', 256): 1.5, ('vulkan', 32): 1.0}
BAND = 0.01


def read(path):
    epochs, result = [], None
    try:
        with open(path) as f:
            for line in f:
                line = line.strip()
                if not line.startswith('{'):
                    continue
                j = json.loads(line)
                if j.get('event') == 'epoch':
                    epochs.append(j)
                elif j.get('event') == 'result' or 'test_accuracy' in j:
                    result = j
    except (OSError, ValueError):
        return None
    if result is None or not epochs:
        return None
    sps = [e['samples_per_s'] for e in epochs if e.get('samples_per_s')]
    return {'mean': sum(sps) / len(sps) if sps else None, 'last': sps[-1] if sps else None,
            'epochs': len(epochs), 'acc': result.get('test_accuracy'),
            'loss': epochs[-1].get('loss')}


def fmt(v, spec):
    return format(v, spec) if isinstance(v, (int, float)) else 'n/a'


def pair(last, mean):
    if last is None:
        return ''
    return '%.2fx (%s)' % (last, 'n/a' if mean is None else '%.2fx' % mean)


def main():
    d = sys.argv[1]
    runs = {}
    for p in sorted(glob.glob(os.path.join(d, '*.jsonl'))):
        m = re.match(r'(torch-)?([a-z0-9:]+)-b(\d+)\.jsonl$', os.path.basename(p))
        if m:
            who = ('torch ' if m.group(1) else 'dmlc ') + m.group(2)
            runs[(who, int(m.group(3)))] = read(p)
    batches = sorted({b for _, b in runs})
    out, summary = [], []
    out.append('| batch | run | epochs | samples/s (mean) | samples/s (last epoch) | '
               'vs PyTorch (cuda), last (mean) | vs dmlc cuda, last (mean) | target | '
               'test accuracy | vs dmlc cpu |')
    out.append('| ---: | --- | ---: | ---: | ---: | ---: | ---: | --- | ---: | ---: |')
    order = ['dmlc cuda', 'dmlc vulkan', 'torch cuda', 'dmlc cpu']
    for b in batches:
        whos = sorted((w for w, bb in runs if bb == b),
                      key=lambda w: (order.index(w) if w in order else len(order), w))
        torch_r = runs.get(('torch cuda', b)) or next(
            (runs[k] for k in sorted(runs) if k[1] == b and k[0].startswith('torch')), None)
        cuda_r = runs.get(('dmlc cuda', b))
        cpu_r = runs.get(('dmlc cpu', b))
        for w in whos:
            r = runs[(w, b)]
            row = {'batch': b, 'run': w, 'result': r}
            if r is None:
                out.append('| %d | %s | | failed | | | | | | |' % (b, w))
                summary.append(row)
                continue
            def ratio(peer, key):
                return r[key] / peer[key] if peer and r[key] and peer[key] else None
            t_ok = torch_r is not None and not w.startswith('torch')
            c_ok = cuda_r is not None and w.startswith('dmlc') and w != 'dmlc cuda'
            vs_t = ratio(torch_r, 'last') if t_ok else None
            vs_tm = ratio(torch_r, 'mean') if t_ok else None
            vs_c = ratio(cuda_r, 'last') if c_ok else None
            vs_cm = ratio(cuda_r, 'mean') if c_ok else None
            dev = w.split(' ')[1].split(':')[0]
            tgt = TARGETS.get((dev, b)) if w.startswith('dmlc') else None
            tcell = ''
            if tgt is not None:
                tcell = '>= %.1fx: %s' % (tgt, 'n/a' if vs_t is None else
                                         ('met' if vs_t >= tgt else 'NOT met'))
            dacc = r['acc'] - cpu_r['acc'] if cpu_r and w != 'dmlc cpu' and \
                isinstance(r['acc'], float) and isinstance(cpu_r['acc'], float) else None
            acell = ''
            if dacc is not None and w.startswith('dmlc'):
                acell = '%+.2f pt (%s)' % (100 * dacc, 'in band' if abs(dacc) <= BAND
                                          else 'OUT of band')
            elif dacc is not None:
                acell = '%+.2f pt' % (100 * dacc)
            out.append('| %d | %s | %d | %s | %s | %s | %s | %s | %s | %s |' % (
                b, w, r['epochs'], fmt(r['mean'], ',.0f'), fmt(r['last'], ',.0f'),
                pair(vs_t, vs_tm), pair(vs_c, vs_cm), tcell,
                fmt(r['acc'], '.4f'), acell))
            row.update({'vs_torch_cuda': vs_t, 'vs_torch_cuda_mean': vs_tm,
                        'vs_dmlc_cuda': vs_c, 'vs_dmlc_cuda_mean': vs_cm, 'target': tgt,
                        'accuracy_minus_cpu': dacc})
            summary.append(row)
    print('\n'.join(out))
    with open(os.path.join(d, 'summary.json'), 'w') as f:
        json.dump(summary, f, indent=1)


if __name__ == '__main__':
    main()
