#!/usr/bin/python3
"""torch_mlp.py: the PyTorch side of the benchmark suite (`make bench`).

Times one Adam training step (zero_grad, forward, loss, backward,
optimizer step) of the networks bench/bench.c times in the generated C
code, on one CPU thread, and prints the same JSON lines with
"impl":"pytorch", for bench/run.sh to compute the ratios:

  784-512-512-10  ReLU MLP, cross-entropy (the categorical likelihood of
                  examples/fashion_point.bnn), batch 32 and 128;
  13-50-50-1      ReLU MLP, Gaussian negative log-likelihood with sigma = 1,
                  i.e. 0.5 * squared error (+ a constant that changes no
                  gradient; bench/mlp13.bnn), batch 32.

As in bench.c: a fixed random batch reused at every step, torch.optim.Adam
with lr 1e-3 and its defaults, a warm-up of at least MIN_TIME seconds, then
the median of REPEATS repeats of at least MIN_TIME seconds each, each
repeat restarting from the same initial parameters and a fresh optimizer;
times are the process's CPU time unless --clock wall.

Debian's PyTorch does its matrix products in OpenBLAS, whose thread pool
torch.set_num_threads() does not govern: unless OPENBLAS_NUM_THREADS=1 is
in the environment before Python starts, the two pools oversubscribe the
cores and the figures mean nothing, so the script refuses to run (use
--allow-threads to run anyway, e.g. to see the damage).

Usage: OPENBLAS_NUM_THREADS=1 /usr/bin/python3 bench/torch_mlp.py
           [--repeats N] [--min-time SECONDS] [--clock cpu|wall]
           [--allow-threads]
"""

import argparse
import copy
import json
import os
import statistics
import sys
import time


def parse_args():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeats", type=int, default=7,
                    help="timed repeats per figure (default 7)")
    ap.add_argument("--min-time", type=float, default=0.2,
                    help="least seconds per repeat and warm-up (default 0.2)")
    ap.add_argument("--clock", choices=("cpu", "wall"), default="cpu",
                    help="time with the process's CPU time (default) or "
                         "the wall clock, as bench.c")
    ap.add_argument("--allow-threads", action="store_true",
                    help="run even if OPENBLAS_NUM_THREADS is not 1")
    a = ap.parse_args()
    if a.repeats < 1 or not a.min_time > 0:
        ap.error("--repeats must be >= 1 and --min-time > 0")
    return a


def check_threads(allow):
    v = os.environ.get("OPENBLAS_NUM_THREADS")
    if v == "1":
        return
    msg = ("torch_mlp.py: OPENBLAS_NUM_THREADS is %s, not 1: OpenBLAS's "
           "thread pool would run beside PyTorch's and the figures would "
           "not be single-threaded" % ("unset" if v is None else repr(v)))
    if not allow:
        sys.stderr.write("!!! %s; refusing to run (bench/run.sh sets it; "
                         "--allow-threads overrides)\n" % msg)
        sys.exit(2)
    sys.stderr.write("!!! WARNING: %s !!!\n" % msg)


def measure(step, reset, repeats, min_time, now):
    """Median seconds per call of step(), as bench_measure in bench.c."""
    reset()
    units = 0
    t0 = now()
    while True:
        step()
        units += 1
        t = now() - t0
        if t >= min_time:
            break
    units = max(1, int(1.1 * min_time / (t / units) + 0.999))
    per = []
    for _ in range(repeats):
        reset()
        t0 = now()
        for _ in range(units):
            step()
        k = units
        while True:
            t = now() - t0
            if t >= min_time:
                break
            step()
            k += 1
        per.append(t / k)
    return statistics.median(per), k


def bench_net(torch, widths, batch, classifier, a, seed):
    """Time the Adam step of a ReLU MLP with these layer widths and print
    its adam_step line: cross-entropy if classifier, else Gaussian NLL."""
    nn = torch.nn
    torch.manual_seed(seed)
    layers = []
    for i in range(len(widths) - 1):
        layers.append(nn.Linear(widths[i], widths[i + 1]))
        if i + 2 < len(widths):
            layers.append(nn.ReLU())
    model = nn.Sequential(*layers)
    x = torch.randn(batch, widths[0])
    if classifier:
        y = torch.randint(0, widths[-1], (batch,))
        lossf = nn.CrossEntropyLoss()
    else:
        y = torch.randn(batch, widths[-1])
        mse = nn.MSELoss()

        # Gaussian NLL with sigma = 1, averaged over the batch, without
        # its constant 0.5*log(2*pi) (no gradient).
        def lossf(mu, t):
            return 0.5 * mse(mu, t)
    init = copy.deepcopy(model.state_dict())
    state = {}

    def reset():
        model.load_state_dict(init)
        state["opt"] = torch.optim.Adam(model.parameters(), lr=1e-3)

    def step():
        opt = state["opt"]
        opt.zero_grad()
        loss = lossf(model(x), y)
        loss.backward()
        opt.step()

    now = time.process_time if a.clock == "cpu" else time.perf_counter
    sec, units = measure(step, reset, a.repeats, a.min_time, now)
    print(json.dumps({
        "bench": "adam_step", "impl": "pytorch",
        "net": "-".join(str(w) for w in widths), "batch": batch,
        "ms_per_step": round(1e3 * sec, 4),
        "steps_per_s": round(1 / sec, 1),
        "examples_per_s": round(batch / sec),
        "repeats": a.repeats, "steps_per_repeat": units,
    }, separators=(",", ":")), flush=True)


def main():
    a = parse_args()
    check_threads(a.allow_threads)
    import torch
    torch.set_num_threads(1)
    torch.set_num_interop_threads(1)
    print(json.dumps({
        "bench": "env", "impl": "pytorch", "torch": torch.__version__,
        "threads": torch.get_num_threads(),
        "openblas_num_threads": os.environ.get("OPENBLAS_NUM_THREADS"),
        "repeats": a.repeats, "min_time_s": a.min_time, "clock": a.clock,
    }, separators=(",", ":")), flush=True)
    bench_net(torch, [784, 512, 512, 10], 32, True, a, 1)
    bench_net(torch, [784, 512, 512, 10], 128, True, a, 1)
    bench_net(torch, [13, 50, 50, 1], 32, False, a, 1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
