"""Benchmark: time to reach a relative optimality gap of 1e-6 on PCA, ldr vs pymanopt.

Run from the checkout root (or anywhere, by path)::

    .venv/bin/python -P benchmarks/bench_pca.py            # 20 datasets, ~5 minutes
    .venv/bin/python -P benchmarks/bench_pca.py --quick    # 3 datasets, smoke run

What is measured.  PCA (survey Eq. 2) on the Grassmann manifold, d = 100, n = 1000, r = 10,
on the datasets ``ldr.datasets.make_pca(1000, 100, seed=s)``, s = 0..19.  The eigenvector
answer is optimal for PCA, so f* = cost(heuristic()) and the relative gap of a point is
(f − f*)/|f*|.  Every solver starts, on each dataset, from the same seeded random
orthonormal M0 (QR of a Gaussian matrix drawn from ``default_rng(1000 + s)``) and is timed
until its first iterate with gap ≤ 1e-6 (``--tol``):

* ldr ``"trust-region"`` and ``"gradient"`` (hand-written oracles of
  ``ldr.objectives.PCA``): a ``callback`` stops the run at the gap; the time is
  ``Result.time`` (the driver's clock, from the first cost evaluation on) and the
  iterations ``Result.n_iter``.  gtol = 1e-10 and xtol = 0 so that only the gap stops them.
* pymanopt 2.2.1 ``TrustRegions`` and ``SteepestDescent`` with the autograd backend
  (``pymanopt_problem(obj, backend="autograd")``), min_gradient_norm = 1e-10,
  max_iterations 1000 (TR) / 5000 (SD), the same M0.  pymanopt has no callback, so each
  run goes to its own end and the time-to-gap is read back:

  - SteepestDescent logs every iteration with ``log_verbosity=1``: time-to-gap is the
    first ``log["iterations"]["time"]`` stamp (``time.time()``) whose logged cost is within
    the gap, minus ``time.time()`` taken right before ``run``;
  - TrustRegions in pymanopt 2.2.1 never writes to its iteration log (``_add_log_entry`` is
    not called; ``log["iterations"]`` stays empty), so the problem handed to it is a thin
    proxy that stamps ``time.time()`` when the Riemannian gradient of a new iterate has been
    computed (the initial point and every accepted step), together with that iterate's
    cost — the same moment at which ldr's driver calls the callback.

  The same two optimizers on ldr's hand-written oracles (``backend="oracles"``) are timed as
  well, for information: they separate the cost of autograd from that of the algorithm.

Each time is the median of ``--repeats`` runs (default 3) on a dataset; the tables give the
median over datasets, the median over datasets of the per-dataset ratio ours ÷ pymanopt
(< 1: ldr is faster) and its range.  BLAS is pinned to one thread for the whole run.
"""

from __future__ import annotations

import argparse
import gc
import math
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pymanopt

import ldr
from ldr.solvers.pymanopt_adapter import pymanopt_problem

try:
    import _common as common
except ImportError:  # run with `python -P`: the script's folder is not on sys.path
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import _common as common

N_SAMPLES, DIM, RANK = 1000, 100, 10
GTOL = 1e-10  # gradient-norm floor for every solver: the gap, not the gradient, stops runs
MAX_ITER = {"tr": 1000, "sd": 5000}


@dataclass
class Run:
    """One solver run on one dataset."""

    reached: bool
    iterations: int | None  # outer iterations done when the gap was first reached
    final_gap: float  # gap where the run ended (ldr: at the callback stop)
    reason: str


def rel_gap(f: float, f_star: float) -> float:
    return (f - f_star) / abs(f_star)


# --- ldr -----------------------------------------------------------------------------------
def run_ldr(obj, solver: str, M0, f_star: float, tol: float, max_iter: int):
    def reached_gap(state) -> bool:
        return rel_gap(state.cost, f_star) <= tol

    res = ldr.solve(obj, solver, start=M0, tol=GTOL, xtol=0.0, max_iter=max_iter,
                    callback=reached_gap)
    final = rel_gap(res.cost, f_star)
    reached = final <= tol
    return (res.time if reached else math.inf), Run(reached, res.n_iter if reached else None,
                                                     final, res.reason)


# --- pymanopt ------------------------------------------------------------------------------
class StampedProblem:
    """A pymanopt.Problem proxy that stamps each iterate TrustRegions finishes evaluating.

    TrustRegions evaluates ``cost`` once per outer iteration (at the proposal) and the
    gradient only at the start point and at accepted proposals, right after their cost.  A
    stamp ``(time.time(), cost, outer iterations so far)`` is taken when such a gradient
    returns.  Everything else is forwarded to the wrapped problem unchanged.
    """

    def __init__(self, problem: pymanopt.Problem):
        self._problem = problem
        self._cost, self._grad = problem.cost, problem.riemannian_gradient
        self.n_cost, self.last_cost = 0, math.nan
        self.stamps: list[tuple[float, float, int]] = []

    def __getattr__(self, name):
        return getattr(self._problem, name)

    def cost(self, point):
        value = self._cost(point)
        self.n_cost += 1
        self.last_cost = value
        return value

    def riemannian_gradient(self, point):
        grad = self._grad(point)
        self.stamps.append((time.time(), float(self.last_cost), self.n_cost - 1))
        return grad


def run_pymanopt_tr(problem, M0, f_star: float, tol: float):
    optimizer = pymanopt.optimizers.TrustRegions(
        max_iterations=MAX_ITER["tr"], min_gradient_norm=GTOL, verbosity=0, log_verbosity=1)
    stamped = StampedProblem(problem)
    start = time.time()
    res = optimizer.run(stamped, initial_point=M0)
    return _first_within(stamped.stamps, start, res, f_star, tol)


def run_pymanopt_sd(problem, M0, f_star: float, tol: float):
    optimizer = pymanopt.optimizers.SteepestDescent(
        max_iterations=MAX_ITER["sd"], min_gradient_norm=GTOL, verbosity=0, log_verbosity=1)
    start = time.time()
    res = optimizer.run(problem, initial_point=M0)
    log = res.log["iterations"]
    # the log entry of iteration k is written at x_{k-1}: k - 1 iterations done
    stamps = [(t, c, k - 1) for t, c, k in zip(log["time"], log["cost"], log["iteration"])]
    return _first_within(stamps, start, res, f_star, tol)


def _first_within(stamps, start: float, res, f_star: float, tol: float):
    final = rel_gap(float(res.cost), f_star)
    reason = str(res.stopping_criterion).strip()
    for t, cost, iterations in stamps:
        if rel_gap(cost, f_star) <= tol:
            return t - start, Run(True, iterations, final, reason)
    return math.inf, Run(False, None, final, reason)


# --- the benchmark -------------------------------------------------------------------------
SOLVERS = [
    # key, label, family ("tr"/"sd"), kind
    ("ldr-tr", "ldr trust-region", "tr", "ldr"),
    ("pm-tr", "pymanopt TrustRegions (autograd)", "tr", "autograd"),
    ("pm-tr-or", "pymanopt TrustRegions (ldr oracles)*", "tr", "oracles"),
    ("ldr-gd", "ldr gradient", "sd", "ldr"),
    ("pm-sd", "pymanopt SteepestDescent (autograd)", "sd", "autograd"),
    ("pm-sd-or", "pymanopt SteepestDescent (ldr oracles)*", "sd", "oracles"),
]
PAIRS = [
    ("ldr trust-region ÷ pymanopt TrustRegions (autograd)", "ldr-tr", "pm-tr"),
    ("ldr gradient ÷ pymanopt SteepestDescent (autograd)", "ldr-gd", "pm-sd"),
    ("ldr trust-region ÷ pymanopt TrustRegions (ldr oracles)*", "ldr-tr", "pm-tr-or"),
    ("ldr gradient ÷ pymanopt SteepestDescent (ldr oracles)*", "ldr-gd", "pm-sd-or"),
]


def make_runner(key: str, family: str, kind: str, obj, problems, M0, f_star, tol):
    if kind == "ldr":
        solver = "trust-region" if family == "tr" else "gradient"
        return lambda: run_ldr(obj, solver, M0, f_star, tol, MAX_ITER[family])
    run = run_pymanopt_tr if family == "tr" else run_pymanopt_sd
    return lambda: run(problems[kind], M0, f_star, tol)


def dataset(seed: int):
    X = ldr.datasets.make_pca(N_SAMPLES, DIM, seed=seed)
    obj = ldr.objectives.PCA(X, RANK)
    f_star = float(obj.cost(obj.heuristic()))
    M0 = np.linalg.qr(np.random.default_rng(1000 + seed).standard_normal((DIM, RANK)))[0]
    problems = {kind: pymanopt_problem(obj, backend=kind) for kind in ("autograd", "oracles")}
    return obj, f_star, M0, problems


def benchmark(seeds, repeats: int, tol: float) -> None:
    # warm-up (untimed): first calls into autograd, pymanopt and ldr
    obj, f_star, M0, problems = dataset(seeds[0])
    for key, _, family, kind in SOLVERS:
        make_runner(key, family, kind, obj, problems, M0, f_star, tol)()

    times: dict[str, list[float]] = {key: [] for key, *_ in SOLVERS}
    runs: dict[str, list[Run]] = {key: [] for key, *_ in SOLVERS}
    for seed in seeds:
        obj, f_star, M0, problems = dataset(seed)
        for key, _, family, kind in SOLVERS:
            gc.collect()
            runner = make_runner(key, family, kind, obj, problems, M0, f_star, tol)
            seconds, values = common.median_time(runner, repeats)
            times[key].append(seconds)
            runs[key].append(values[0])
        print(f"  dataset seed {seed:2d}: " + ", ".join(
            f"{key} {common.fmt_time(times[key][-1])}" for key, *_ in SOLVERS), flush=True)
    print()
    report(seeds, times, runs, tol)


def report(seeds, times, runs, tol: float) -> None:
    n = len(seeds)
    rows = []
    for key, label, _, _ in SOLVERS:
        iters = [r.iterations for r in runs[key] if r.reached]
        n_ok = len(iters)
        rows.append([label, common.fmt_time(common.median(times[key])),
                     f"{common.median(iters):g}" if iters else "—", f"{n_ok}/{n}"])
    print(f"Time to relative gap ≤ {tol:g} (median over {n} datasets of the median of "
          "repeats):")
    common.print_table(["solver", "median time", "median iterations", "reached gap"], rows)
    print()

    rows = []
    for label, ours, theirs in PAIRS:
        ratios = [a / b for a, b in zip(times[ours], times[theirs])
                  if math.isfinite(a) and math.isfinite(b)]
        rows.append([label, common.fmt_ratio(common.median(ratios)),
                     common.fmt_range(ratios), f"{len(ratios)}/{n}"])
    print("Per-dataset time ratio ours ÷ pymanopt (< 1: ldr faster), over the datasets where "
          "both reached the gap:")
    common.print_table(["pair", "median ours ÷ pymanopt", "range (min–max)", "datasets"], rows)
    print("* for information: pymanopt's optimizer on ldr's hand-written egrad/ehvp "
          "instead of autograd.")
    print()

    failures = [(seed, label, run) for key, label, _, _ in SOLVERS
                for seed, run in zip(seeds, runs[key]) if not run.reached]
    if failures:
        print("Runs that did NOT reach the gap:")
        for seed, label, run in failures:
            print(f"  seed {seed}: {label}: final gap {run.final_gap:.3e} ({run.reason})")
    else:
        print(f"Every run reached the gap {tol:g}.")
    worst = {label: max(r.final_gap for r in runs[key]) for key, label, _, _ in SOLVERS
             if key.startswith("pm")}
    print("pymanopt's final gap at its own stop (worst dataset): " + "; ".join(
        f"{label}: {gap:.1e}" for label, gap in worst.items()))


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="3 datasets, 1 repeat (smoke run)")
    parser.add_argument("--datasets", type=int, default=20, help="number of datasets (20)")
    parser.add_argument("--repeats", type=int, default=None,
                        help="timed runs per solver and dataset (3; 1 with --quick)")
    parser.add_argument("--tol", type=float, default=1e-6, help="relative gap target (1e-6)")
    args = parser.parse_args(argv)
    n_sets = 3 if args.quick else args.datasets
    repeats = args.repeats or (1 if args.quick else 3)
    seeds = list(range(n_sets))

    with common.single_threaded():
        common.print_header(
            f"PCA time-to-gap benchmark: ldr vs pymanopt (d={DIM}, n={N_SAMPLES}, r={RANK}, "
            "Grassmann)",
            [f"datasets: ldr.datasets.make_pca({N_SAMPLES}, {DIM}, seed=s), s = 0..{n_sets - 1}"
             f"; objective ldr.objectives.PCA(X, {RANK}); f* = cost(heuristic())",
             "start: the same seeded random orthonormal M0 for every solver "
             "(QR of default_rng(1000 + s).standard_normal((100, 10)))",
             f"target: first iterate with (f - f*)/|f*| <= {args.tol:g}; gradient floor "
             f"{GTOL:g} for all; max iterations TR {MAX_ITER['tr']}, GD/SD {MAX_ITER['sd']}",
             "ldr time: Result.time at the callback stop; pymanopt time: time.time() stamp "
             "of the first iterate within the gap (SD: its iteration log; TR: a stamping "
             "problem proxy, pymanopt 2.2.1 TrustRegions logs no iterations) minus "
             "time.time() before run()",
             f"each time: median of {repeats} run(s); BLAS pinned to 1 thread (threadpoolctl)"])
        benchmark(seeds, repeats, args.tol)


if __name__ == "__main__":
    main()
