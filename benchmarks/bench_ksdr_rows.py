"""Benchmark: KernelSDR past ``AUTO_ROWS`` samples, the cost on a row sample against every row's.

Run from the checkout root, under the shared lock (timings must not overlap)::

    flock /tmp/ldr-bench.lock .venv/bin/python -P benchmarks/bench_ksdr_rows.py \\
        > benchmarks/results/bench_ksdr_rows.txt

What is measured.  ``KernelSDR(2)`` at its defaults on n rows, fitted on every row
(``rows=None``: one evaluation O(n³) time, about ten n×n arrays) and on a seeded uniform
sample of ``AUTO_ROWS`` rows (``rows="auto"``, the default past ``AUTO_ROWS``; ``--seeds``
draws), on

* ``classification``: ``bench_pairwise_scale.py``'s table (d = 50, 10 classes, seed 0),
  standardized, y its class labels;
* ``regression``: X standard normal (seed 0), d = 20, y = sin(2 xᵀb₁) + (xᵀb₂)² + 0.1 ε
  for two orthonormal directions b₁, b₂ drawn from the same seed, so the central subspace is
  span(b₁, b₂).

Every answer is read by the cost over every row (``ldr.objectives.KernelSDR(X, y, 2)``, whose
widths the every-row fit used too): "excess" is its relative excess over the every-row
answer's; sin θ the sine of the largest principal angle to that answer (and, for
``regression``, to the true span).  Each fit runs in its own child process with BLAS on one
thread; peak memory: the child's ``VmHWM`` less its resident memory once the data were made.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from _common import run_child as common_run_child  # noqa: E402
from _common import status_mb  # noqa: E402


def make_data(name: str, n: int):
    """(X, y, the true central subspace or None)."""
    if name == "classification":
        from bench_pairwise_scale import make_data as classification

        X, y = classification("classification", n)
        return (X - X.mean(axis=0)) / X.std(axis=0), y, None
    rng = np.random.default_rng(0)
    X = rng.standard_normal((n, 20))
    B = np.linalg.qr(rng.standard_normal((20, 2)))[0]
    y = np.sin(2 * X @ B[:, 0]) + (X @ B[:, 1]) ** 2 + 0.1 * rng.standard_normal(n)
    return X, y, B


def child(name: str, n: int, rows: str, seed: int) -> dict:
    import warnings

    from threadpoolctl import threadpool_limits

    import ldr.estimators as est

    X, y, _ = make_data(name, n)
    base = status_mb("VmRSS")
    model = est.KernelSDR(2, rows=None if rows == "all" else rows, random_state=seed)
    warnings.simplefilter("ignore")
    with threadpool_limits(1):
        start = time.perf_counter()
        model.fit(X, y)
        seconds = time.perf_counter() - start
    return {"data": name, "n": n, "rows": rows, "seed": seed, "seconds": seconds,
            "n_iter": int(model.n_iter_), "converged": bool(model.result_.converged),
            "approximation": model.approximation_, "M": np.asarray(model.M_).tolist(),
            "peak_mb": status_mb("VmHWM"), "base_mb": base}


def run_child(name: str, n: int, rows: str, seed: int) -> dict:
    return common_run_child(__file__, name, n, rows, seed)


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--data", nargs="+", default=["classification", "regression"])
    p.add_argument("--n", type=int, nargs="+", default=[8000],
                   help="rows (the every-row fit's evaluations are O(n³))")
    p.add_argument("--seeds", type=int, default=3, help="draws of the sampled rows")
    p.add_argument("--child", nargs=4, help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.child:
        name, n, rows, seed = args.child
        print(json.dumps(child(name, int(n), rows, int(seed))))
        return

    from _common import print_header, print_table
    from threadpoolctl import threadpool_limits

    from ldr.estimators import ksdr as ksdr_estimator
    from ldr.manifolds import sin_largest_angle
    from ldr.objectives import KernelSDR

    command = "python -P benchmarks/bench_ksdr_rows.py " + " ".join(sys.argv[1:])
    print_header("KernelSDR: the cost on a row sample against every row's, past AUTO_ROWS", [
        f"command: {command.strip()} (under flock /tmp/ldr-bench.lock)",
        f"data {args.data} (module docstring), r = 2; n {args.n}",
        f"rows: every row, or AUTO_ROWS = {ksdr_estimator.AUTO_ROWS} sampled ({args.seeds} "
        "draws, random_state 0, 1, …); one fit per child process, BLAS on one thread",
        "each answer read by the cost over every row; excess: relative to the every-row "
        "answer's"])
    table = []
    wall = time.perf_counter()
    for name, n in [(name, n) for name in args.data for n in args.n]:
        X, y, truth = make_data(name, n)
        exact = KernelSDR(X, y, 2)
        fits = [run_child(name, n, "all", 0)]
        fits += [run_child(name, n, "auto", seed) for seed in range(args.seeds)]
        M0 = np.asarray(fits[0]["M"])
        with threadpool_limits(1):
            c0 = exact.cost(M0)
        for fit in fits:
            M = np.asarray(fit["M"])
            with threadpool_limits(1):
                c = exact.cost(M)
            row = {k: v for k, v in fit.items() if k != "M"}
            print(json.dumps({**row, "full_cost": c}), flush=True)
            table.append([name, n, "every row" if fit["rows"] == "all"
                          else f"{ksdr_estimator.AUTO_ROWS} rows, draw {fit['seed']}",
                          f"{fit['seconds']:.1f} s", f"{fit['peak_mb'] - fit['base_mb']:.0f} MB",
                          fit["n_iter"], "yes" if fit["converged"] else "no", f"{c:.6g}",
                          "" if fit is fits[0] else f"{(c - c0) / abs(c0):+.3%}",
                          "" if fit is fits[0] else f"{sin_largest_angle(M0, M):.4f}",
                          "" if truth is None else f"{sin_largest_angle(truth, M):.4f}"])
        del exact
    print()
    print_table(["data", "n", "fit", "time", "beyond data", "iterations", "converged",
                 "cost (every row)", "excess", "sin θ to every-row", "sin θ to truth"],
                table, left=3)
    print(f"\nwall time of the whole run: {time.perf_counter() - wall:.0f} s")


if __name__ == "__main__":
    main()
