#!/usr/bin/python3
"""torch_gru.py: PyTorch's side of bench.c's gru group (issue 23).

Times one Adam training step (zero_grad, forward, loss, backward,
optimizer step) of bench/gru_128.bnn in PyTorch on one CPU thread:
nn.GRU(32, 128, batch_first=True) over 50 steps, its last state into
nn.Linear(128, 10), cross-entropy, batch 32, on a fixed random batch
reused at every step, torch.optim.Adam with lr 1e-3.  As bench.c: a
warm-up of at least MIN_TIME seconds, then the median of REPEATS repeats
of at least MIN_TIME seconds each, in the process's CPU time.  Prints an
adam_step line with "impl":"pytorch" and "net":"gru-50x32-128", the net
of bench.c's adam_step line for the same model: the ratio of the two
ms_per_step is issue 23's target (PyTorch's over ours >= 1.5).

Usage: OPENBLAS_NUM_THREADS=1 python3 bench/torch_gru.py [--repeats N] [--only GROUPS]
[--min-time SECONDS]
"""
import argparse
import json
import os
import statistics
import sys
import time

import torch


def repeat(step, min_time):
    """Steps until MIN_TIME seconds of CPU time have passed: s/step."""
    n, t0 = 0, time.process_time()
    while True:
        step()
        n += 1
        t = time.process_time() - t0
        if t >= min_time:
            return t / n


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--min-time", type=float, default=0.2)
    ap.add_argument("--only", default="gru",
                    help="bench's groups; nothing runs unless gru is one")
    # bench/run.sh passes bench's other options (--clock, --train-steps,
    # --net) to every script: they do not concern this one.
    a, _ = ap.parse_known_args()
    if "gru" not in a.only.split(","):
        return
    if os.environ.get("OPENBLAS_NUM_THREADS") != "1":
        sys.exit("torch_gru.py: set OPENBLAS_NUM_THREADS=1 (see torch_mlp.py)")
    torch.set_num_threads(1)
    torch.manual_seed(1)
    batch, steps, features, units, classes = 32, 50, 32, 128, 10
    gru = torch.nn.GRU(features, units, batch_first=True)
    out = torch.nn.Linear(units, classes)
    x = torch.randn(batch, steps, features)
    y = torch.randint(0, classes, (batch,))
    params = list(gru.parameters()) + list(out.parameters())
    init = [p.detach().clone() for p in params]
    loss_fn = torch.nn.CrossEntropyLoss()

    def fresh():
        with torch.no_grad():
            for p, q in zip(params, init):
                p.copy_(q)
        return torch.optim.Adam(params, lr=1e-3)

    opt = fresh()

    def step():
        opt.zero_grad()
        h, _ = gru(x)
        loss = loss_fn(out(h[:, -1, :]), y)
        loss.backward()
        opt.step()

    repeat(step, a.min_time)
    times = []
    for _ in range(a.repeats):
        opt = fresh()
        times.append(repeat(step, a.min_time))
    s = statistics.median(times)
    print(json.dumps({"bench": "adam_step", "impl": "pytorch", "net": "gru-50x32-128",
                      "batch": batch, "ms_per_step": round(1e3 * s, 4),
                      "steps_per_s": round(1 / s, 1), "repeats": a.repeats},
                     separators=(",", ":")))


if __name__ == "__main__":
    main()
