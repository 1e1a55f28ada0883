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
                  gradient; bench/mlp13.bnn), batch 32;
  lenet           the LeNet-5-style CNN of examples/fashion_lenet.bnn
                  (Conv2d 1->6 5x5 pad 2, tanh, AvgPool2d 2, Conv2d 6->16
                  5x5, tanh, AvgPool2d 2, Linear 400-120-84-10 with tanh),
                  cross-entropy, batch 128 (`make lenet`'s).

As in bench.c: a fixed random batch reused at every step, torch.optim.Adam
with lr 1e-3 and its defaults, a warm-up of at least MIN_TIME seconds, then
the median of REPEATS repeats of at least MIN_TIME seconds each, each
repeat restarting from the same initial parameters and a fresh optimizer;
times are the process's CPU time unless --clock wall.

Then the variational optimizers of bench.c's train_step lines, on the
784-512-512-10 network at batch 32 and 128, one Monte-Carlo sample per
step, each printed as a train_step line with its ratio to Adam's step
measured alongside (N = 60000 training examples, prior precision 25, as
for Fashion-MNIST and bench/fashion_mf.bnn):

  adam   the Adam step above, again, as the reference;
  ivon   Shen et al. (2024), Algorithm 1, written here (the `ivon` package
         is not in Debian): theta = m + sigma*eps, the gradient at theta,
         h-hat = g*eps/sigma, lines 4-8, on flat vectors that the model's
         weights and gradients are views of (so no copying per step);
  vogn   Osawa et al. (2019), Algorithm 1 lines 8-9 and 19-21, with the
         mean squared per-example gradients of each Linear layer from
         forward and backward hooks: B*(G*G)^T (X*X) for the weight and
         B*sum(G*G) for the bias, G the gradient of the mean loss with
         respect to the layer's output and X its input (the same GEMM
         trick as the generated code; functorch's vmap would form all B
         per-example gradients, about 80x an Adam step);
  bbb    Bayes-by-Backprop as Blundell et al. (bnn_train's default,
         lrt=0): one weight sample W = mu + sigma*eps per step, sigma =
         softplus(rho), loss mean NLL + KL/N by autograd, torch.optim.Adam
         on mu and rho;
  bbb_lrt  the same with the local reparameterisation trick (lrt=1):
         mean X W^T + b, variance (X*X)(sigma_W^2)^T + sigma_b^2;
  badam  torch.optim.Adam with L2 weight decay delta/N (BADAM's training;
         its posterior is read off v once per epoch, not per step).

Then, for bench.c's infer1 group, the posterior-mean inference of the
784-512-512-10 network one example at a time (model.eval(),
torch.no_grad(), a [1, 784] tensor per call, cycling over 64 inputs), as
an infer1 line with ms_per_example.

Debian's PyTorch does its matrix products in OpenBLAS, whose thread pool
torch.set_num_threads() does not govern: unless OPENBLAS_NUM_THREADS=1 is
in the environment before Python starts, the two pools oversubscribe the
cores and the figures mean nothing, so the script refuses to run (use
--allow-threads to run anyway, e.g. to see the damage).

With --threads T (and OPENBLAS_NUM_THREADS=T, which it checks), PyTorch
runs on T threads and the adam_step lines say "threads":T; bench/run.sh
uses it with T = the cores, against bench.c's threads group (use
--clock wall then: CPU time sums over the threads).

Usage: OPENBLAS_NUM_THREADS=1 /usr/bin/python3 bench/torch_mlp.py
           [--repeats N] [--min-time SECONDS] [--clock cpu|wall]
           [--allow-threads] [--threads T] [--train-steps N]
           [--only GROUP[,GROUP...]]
--only takes bench.c's group names: step (the adam_step lines of the
MLPs), train (the train_step lines), lenet (the CNN's adam_step line)
and infer1 (batch-1 inference) run here; the others (peak, gemm, vi, fwht, whvi, threads) have no PyTorch side and are
accepted and ignored.
"""

import argparse
import copy
import json
import math
import os
import statistics
import sys
import time


# bench.c's groups, in its order; gru and transformer are timed by
# bench/torch_seq.py and accepted here so that one --only serves every
# script bench/run.sh runs.
GROUPS = ("peak", "gemm", "step", "train", "vi", "fwht", "whvi", "lenet", "threads",
          "infer1", "gru", "transformer")


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
    ap.add_argument("--train-steps", type=int, default=0,
                    help="accepted for bench.c's sake and ignored: the "
                         "steps here reuse one batch")
    ap.add_argument("--threads", type=int, default=1,
                    help="PyTorch's intra-op threads (default 1); more "
                         "requires OPENBLAS_NUM_THREADS to be the same "
                         "number, and the lines carry \"threads\"")
    ap.add_argument("--only", default=",".join(GROUPS),
                    help="the groups to run, as bench.c's (step, train and "
                         "lenet have a PyTorch side)")
    a = ap.parse_args()
    if a.repeats < 1 or not a.min_time > 0:
        ap.error("--repeats must be >= 1 and --min-time > 0")
    if a.threads < 1:
        ap.error("--threads must be >= 1")
    a.only = a.only.split(",")
    for g in a.only:
        if g not in GROUPS:
            ap.error("--only: unknown group %r" % g)
    return a


def check_threads(allow, threads):
    v = os.environ.get("OPENBLAS_NUM_THREADS")
    if v == str(threads):
        return
    msg = ("torch_mlp.py: OPENBLAS_NUM_THREADS is %s, not %d: OpenBLAS's "
           "thread pool would run beside PyTorch's and the figures would "
           "not be on %d thread(s)" % ("unset" if v is None else repr(v),
                                       threads, threads))
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


def mlp(torch, widths):
    """An nn.Sequential of Linear layers with ReLU between them."""
    nn = torch.nn
    layers = []
    for i in range(len(widths) - 1):
        layers.append(nn.Linear(widths[i], widths[i + 1]))
        if i + 2 < len(widths):
            layers.append(nn.ReLU())
    return nn.Sequential(*layers)


def lenet(torch):
    """examples/fashion_lenet.bnn's network on [1, 28, 28] images."""
    nn = torch.nn
    return nn.Sequential(
        nn.Conv2d(1, 6, 5, padding=2), nn.Tanh(), nn.AvgPool2d(2),
        nn.Conv2d(6, 16, 5), nn.Tanh(), nn.AvgPool2d(2), nn.Flatten(),
        nn.Linear(400, 120), nn.Tanh(), nn.Linear(120, 84), nn.Tanh(),
        nn.Linear(84, 10))


def bench_net(torch, widths, batch, classifier, a, seed, net=None):
    """Time the Adam step of a ReLU MLP with these layer widths and print
    its adam_step line: cross-entropy if classifier, else Gaussian NLL.
    With net="lenet", the CNN instead (widths: its input and output)."""
    nn = torch.nn
    torch.manual_seed(seed)
    if net == "lenet":
        model = lenet(torch)
        x = torch.randn(batch, 1, 28, 28)
    else:
        model = mlp(torch, widths)
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
        "net": net or "-".join(str(w) for w in widths), "batch": batch,
        "ms_per_step": round(1e3 * sec, 4),
        "steps_per_s": round(1 / sec, 1),
        "examples_per_s": round(batch / sec), "threads": a.threads,
        "repeats": a.repeats, "steps_per_repeat": units,
    }, separators=(",", ":")), flush=True)


def bench_infer1(torch, a, seed):
    """Time the posterior-mean inference of the 784-512-512-10 MLP one
    example at a time and print its infer1 line."""
    torch.manual_seed(seed)
    model = mlp(torch, [784, 512, 512, 10]).eval()
    xs = [torch.randn(1, 784) for _ in range(64)]
    state = {"next": 0}

    def step():
        i = state["next"]
        with torch.no_grad():
            torch.softmax(model(xs[i]), 1)  # probabilities, as the C sides
        state["next"] = (i + 1) % len(xs)

    now = time.process_time if a.clock == "cpu" else time.perf_counter
    sec, units = measure(step, lambda: None, a.repeats, a.min_time, now)
    print(json.dumps({
        "bench": "infer1", "impl": "pytorch", "net": "784-512-512-10",
        "ms_per_example": round(1e3 * sec, 5),
        "examples_per_s": round(1 / sec), "threads": a.threads,
        "repeats": a.repeats, "examples_per_repeat": units,
    }, separators=(",", ":")), flush=True)


# ---- the variational optimizers ---------------------------------------------

N_DATA = 60000      # training examples (Fashion-MNIST's)
PRIOR = 25.0        # prior precision (bench/fashion_mf.bnn)


def flat_views(torch, model):
    """Make the model's parameters and their gradients views of two flat
    vectors, which the returned (theta, grad) are; optimizers then work on
    whole vectors, and setting theta sets every weight."""
    params = list(model.parameters())
    n = sum(p.numel() for p in params)
    theta = torch.zeros(n)
    grad = torch.zeros(n)
    off = 0
    for p in params:
        k = p.numel()
        theta[off:off + k].copy_(p.data.reshape(-1))
        p.data = theta[off:off + k].view_as(p)
        p.grad = grad[off:off + k].view_as(p)
        off += k
    return theta, grad


def make_ivon(torch, model, x, y):
    """IVON, Shen et al. (2024), Alg. 1, with its defaults (App. A) and
    the learning rate rescaled by h0 + delta; returns step()."""
    F = torch.nn.functional
    theta, grad = flat_views(torch, model)
    lam, h0, b1, b2 = float(N_DATA), 0.1, 0.9, 0.99999
    delta = PRIOR / lam                      # weight decay: prior / lambda
    lr = 0.1 * (h0 + delta)
    m = theta.clone()
    h = torch.full_like(m, h0)
    g = torch.zeros_like(m)
    sigma = torch.rsqrt(lam * (h + delta))
    t = [0]

    def step():
        eps = torch.randn_like(m)
        torch.addcmul(m, sigma, eps, out=theta)          # line 2
        grad.zero_()
        F.cross_entropy(model(x), y).backward()
        with torch.no_grad():
            hhat = grad * eps / sigma                    # line 3
            g.mul_(b1).add_(grad, alpha=1 - b1)          # line 4
            d = h - hhat                                 # line 5
            h.mul_(b2).add_(hhat, alpha=1 - b2).addcmul_(
                d * d, 1 / (h + delta), value=0.5 * (1 - b2) ** 2)
            t[0] += 1
            gbar = g / (1 - b1 ** t[0])                  # line 6
            m.sub_((gbar + delta * m) / (h + delta), alpha=lr)  # line 7
            torch.rsqrt(lam * (h + delta), out=sigma)    # line 8
    return step


def make_vogn(torch, model, x, y):
    """VOGN, Osawa et al. (2019), Alg. 1 (tau = 1, rho = 1, one sample):
    the squared per-example gradients by the GEMM trick, from hooks."""
    F = torch.nn.functional
    linears = [mod for mod in model if isinstance(mod, torch.nn.Linear)]
    theta, grad = flat_views(torch, model)
    sq = torch.zeros_like(theta)
    b1, b2, lr, tau = 0.9, 0.999, 1e-3, 1.0
    dt = tau * PRIOR / N_DATA                            # line 2
    mu = theta.clone()
    mom = torch.zeros_like(mu)
    saved = {}
    views = []
    off = 0
    for mod in linears:
        kw, kb = mod.weight.numel(), mod.bias.numel()
        views.append((sq[off:off + kw].view_as(mod.weight),
                      sq[off + kw:off + kw + kb]))
        off += kw + kb

    def fwd_hook(mod, inp, out):
        saved[mod] = [inp[0]]
        if out.requires_grad:
            out.register_hook(lambda gout: saved[mod].append(gout))

    for mod in linears:
        mod.register_forward_hook(fwd_hook)

    @torch.no_grad()
    def sqgrad():
        b = x.shape[0]
        for mod, (sw, sb) in zip(linears, views):
            xin, gout = saved[mod]
            g2 = gout * gout
            torch.matmul(g2.t(), xin * xin, out=sw)
            sw.mul_(b)
            torch.sum(g2, 0, out=sb)
            sb.mul_(b)

    # Alg. 1 line 1: s from the first minibatch's squared gradients at mu
    grad.zero_()
    F.cross_entropy(model(x), y).backward()
    sqgrad()
    s = sq.clone()
    sigma = torch.rsqrt(N_DATA * (s + dt))               # line 9

    def step():
        eps = torch.randn_like(mu)
        torch.addcmul(mu, sigma, eps, out=theta)         # lines 8-9
        grad.zero_()
        F.cross_entropy(model(x), y).backward()
        with torch.no_grad():
            sqgrad()                                     # line 14
            mom.mul_(b1).add_(grad).add_(mu, alpha=dt)   # line 19
            s.mul_(1 - tau * b2).add_(sq, alpha=b2)      # line 20
            mu.sub_(mom / (s + dt), alpha=lr)            # line 21
            torch.rsqrt(N_DATA * (s + dt), out=sigma)    # line 9
    return step


def make_bbb(torch, widths, x, y, seed, lrt):
    """Bayes-by-Backprop, sigma0 1e-3 as bnn_train's default, Adam (lr
    1e-3) on mu and rho: with lrt, the local reparameterisation trick;
    without, one weight sample per step."""
    nn, F = torch.nn, torch.nn.functional
    torch.manual_seed(seed)
    ref = mlp(torch, widths)
    rho0 = float(torch.log(torch.expm1(torch.tensor(1e-3))))

    class LRTLinear(nn.Module):
        def __init__(self, lin):
            super().__init__()
            self.mw = nn.Parameter(lin.weight.detach().clone())
            self.mb = nn.Parameter(lin.bias.detach().clone())
            self.rw = nn.Parameter(torch.full_like(self.mw, rho0))
            self.rb = nn.Parameter(torch.full_like(self.mb, rho0))

        def forward(self, a):
            self.sw, self.sb = F.softplus(self.rw), F.softplus(self.rb)
            if not lrt:
                w = self.mw + self.sw * torch.randn_like(self.mw)
                b = self.mb + self.sb * torch.randn_like(self.mb)
                return F.linear(a, w, b)
            mean = F.linear(a, self.mw, self.mb)
            var = F.linear(a * a, self.sw * self.sw, self.sb * self.sb)
            return mean + var.sqrt() * torch.randn_like(mean)

        def kl(self):
            """KL(q || prior) of the sigmas of the last forward pass:
            1/2 sum(delta (s^2 + mu^2) - 1 - log delta - 2 log s)."""
            k = 0
            for mu, s in ((self.mw, self.sw), (self.mb, self.sb)):
                k = k + 0.5 * (PRIOR * (s * s + mu * mu)
                               - 2 * torch.log(s)).sum()
                k = k - 0.5 * (1 + math.log(PRIOR)) * mu.numel()
            return k

    layers = [LRTLinear(mod) if isinstance(mod, nn.Linear) else mod
              for mod in ref]
    model = nn.Sequential(*layers)
    lrt = [mod for mod in layers if isinstance(mod, LRTLinear)]
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)

    def step():
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss = loss + sum(mod.kl() for mod in lrt) / N_DATA
        loss.backward()
        opt.step()
    return step


def bench_vi(torch, batch, a, seed):
    """Time each variational optimizer's step on 784-512-512-10 at this
    batch and print its train_step line, with its ratio to Adam's."""
    widths = [784, 512, 512, 10]
    F = torch.nn.functional
    torch.manual_seed(seed)
    x = torch.randn(batch, widths[0])
    y = torch.randint(0, widths[-1], (batch,))
    state = {}

    def point(weight_decay):
        def make():
            torch.manual_seed(seed)
            model = mlp(torch, widths)
            opt = torch.optim.Adam(model.parameters(), lr=1e-3,
                                   weight_decay=weight_decay)

            def step():
                opt.zero_grad()
                F.cross_entropy(model(x), y).backward()
                opt.step()
            return step
        return make

    def seeded(maker):
        def make():
            torch.manual_seed(seed)
            return maker(torch, mlp(torch, widths), x, y)
        return make

    makers = [
        ("adam", point(0.0)),
        ("ivon", seeded(make_ivon)),
        ("vogn", seeded(make_vogn)),
        ("bbb", lambda: make_bbb(torch, widths, x, y, seed, False)),
        ("bbb_lrt", lambda: make_bbb(torch, widths, x, y, seed, True)),
        ("badam", point(PRIOR / N_DATA)),
    ]
    now = time.process_time if a.clock == "cpu" else time.perf_counter
    adam = None
    for name, make in makers:
        def reset():
            state["step"] = make()

        sec, units = measure(lambda: state["step"](), reset, a.repeats,
                             a.min_time, now)
        if adam is None:
            adam = sec
        print(json.dumps({
            "bench": "train_step", "impl": "pytorch",
            "net": "-".join(str(w) for w in widths), "batch": batch,
            "optimizer": name, "mc": 1,
            "ms_per_step": round(1e3 * sec, 4),
            "over_adam": round(sec / adam, 3),
            "repeats": a.repeats, "steps_per_repeat": units,
        }, separators=(",", ":")), flush=True)


def main():
    a = parse_args()
    check_threads(a.allow_threads, a.threads)
    import torch
    torch.set_num_threads(a.threads)
    torch.set_num_interop_threads(1)
    print(json.dumps({
        "bench": "env", "impl": "pytorch", "torch": torch.__version__,
        "threads": torch.get_num_threads(),
        "openblas_num_threads": os.environ.get("OPENBLAS_NUM_THREADS"),
        "repeats": a.repeats, "min_time_s": a.min_time, "clock": a.clock,
    }, separators=(",", ":")), flush=True)
    if "step" in a.only:
        bench_net(torch, [784, 512, 512, 10], 32, True, a, 1)
        bench_net(torch, [784, 512, 512, 10], 128, True, a, 1)
        bench_net(torch, [13, 50, 50, 1], 32, False, a, 1)
    if "train" in a.only:
        bench_vi(torch, 32, a, 1)
        bench_vi(torch, 128, a, 1)
    if "lenet" in a.only:
        bench_net(torch, [784, 10], 128, True, a, 1, net="lenet")
    if "infer1" in a.only:
        bench_infer1(torch, a, 1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
