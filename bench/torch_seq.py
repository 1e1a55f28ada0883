#!/usr/bin/python3
"""torch_seq.py: PyTorch's side of bench.c's sequence groups (issue 23).

Times one Adam training step (zero_grad, forward, loss, backward,
optimizer step) on one CPU thread of the model of each group, on a fixed
random batch reused at every step, torch.optim.Adam with lr 1e-3:
  gru          bench/gru_128.bnn: nn.GRU(32, 128, batch_first=True) over
               50 steps, its last state into nn.Linear(128, 10), batch 32
               (net "gru-50x32-128"; issue 23's target: PyTorch's step
               over ours >= 1.5);
  transformer  bench/transformer_128.bnn: one post-norm
               nn.TransformerEncoderLayer(128, 4 heads, feed-forward 512,
               ReLU, no dropout, batch_first=True) over 64 steps, its
               [64, 128] output flattened into nn.Linear(8192, 10), batch
               32 (net "transformer-64x128"; target >= 1.5).
Both with a cross-entropy loss.  As bench.c: a warm-up of at least
MIN_TIME seconds, then the median of REPEATS repeats of at least MIN_TIME
seconds each, in the process's CPU time.  Prints an adam_step line with
"impl":"pytorch" and the net of bench.c's adam_step line for the same
model, which bench/run.sh sets beside it.

Usage: OPENBLAS_NUM_THREADS=1 python3 bench/torch_seq.py [--repeats N]
[--min-time SECONDS] [--only GROUPS]
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


class LastState(torch.nn.Module):
    """The gru group: a GRU's last state into a dense layer."""

    def __init__(self, features, units, classes):
        super().__init__()
        self.gru = torch.nn.GRU(features, units, batch_first=True)
        self.out = torch.nn.Linear(units, classes)

    def forward(self, x):
        h, _ = self.gru(x)
        return self.out(h[:, -1, :])


class EncoderBlock(torch.nn.Module):
    """The transformer group: one encoder layer, flattened into a dense
    layer (bench/transformer_128.bnn computes the same)."""

    def __init__(self, steps, dim, heads, ff, classes):
        super().__init__()
        self.block = torch.nn.TransformerEncoderLayer(dim, heads, dim_feedforward=ff,
                                                      dropout=0.0, batch_first=True)
        self.out = torch.nn.Linear(steps * dim, classes)

    def forward(self, x):
        return self.out(self.block(x).flatten(1))


# group: (net, batch, steps, features, model factory)
GROUPS = {
    "gru": ("gru-50x32-128", 32, 50, 32, lambda: LastState(32, 128, 10)),
    "transformer": ("transformer-64x128", 32, 64, 128,
                    lambda: EncoderBlock(64, 128, 4, 512, 10)),
}


def time_group(name, a):
    """The median s/step of Adam on the group's model: its JSON line."""
    net, batch, steps, features, make = GROUPS[name]
    torch.manual_seed(1)
    model = make()
    x = torch.randn(batch, steps, features)
    y = torch.randint(0, 10, (batch,))
    params = list(model.parameters())
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
        loss_fn(model(x), y).backward()
        opt.step()

    repeat(step, a.min_time)
    times = []
    for _ in range(a.repeats):
        opt = fresh()
        times.append(repeat(step, a.min_time))
    s = statistics.median(times)
    return json.dumps({"bench": "adam_step", "impl": "pytorch", "net": net, "batch": batch,
                       "ms_per_step": round(1e3 * s, 4), "steps_per_s": round(1 / s, 1),
                       "repeats": a.repeats}, separators=(",", ":"))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--min-time", type=float, default=0.2)
    ap.add_argument("--only", default=",".join(GROUPS),
                    help="bench's groups; this script times those of GROUPS")
    # bench/run.sh passes bench's other options (--clock, --train-steps,
    # --net) to every script: they do not concern this one.
    a, _ = ap.parse_known_args()
    if os.environ.get("OPENBLAS_NUM_THREADS") != "1":
        sys.exit("torch_seq.py: set OPENBLAS_NUM_THREADS=1 (see torch_mlp.py)")
    torch.set_num_threads(1)
    for name in GROUPS:
        if name in a.only.split(","):
            print(time_group(name, a), flush=True)


if __name__ == "__main__":
    main()
