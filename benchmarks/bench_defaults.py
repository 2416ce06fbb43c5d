"""Benchmark: which solver should ``ldr.solve(objective)`` use when none is given?

Run from the checkout root::

    .venv/bin/python -P benchmarks/bench_defaults.py          # n = 500, d = 20, r = 3
    .venv/bin/python -P benchmarks/bench_defaults.py --quick  # n = 150, d = 8

For every objective in ``ldr.objectives`` (one instance on seeded synthetic data, classes
for the supervised ones) and every applicable candidate — ``"trust-region"``, ``"gradient"``,
``["ism", "trust-region"]`` and ``"ism"`` (with a Φ-oracle), ``["scf", "trust-region"]``
(with a pencil whose fixed points differ from the cost's critical points: WDA) — the script
solves from the default start (``M0=None``: the solver's own start, else the heuristic, else a
seeded random point) and from 3 seeded random starts, at the default tolerances, and reports
per candidate: median time over the 4 runs (each timed once; BLAS pinned to one thread),
runs converged, and the worst final cost relative to the best cost any candidate reached
(0 = every run at the best answer).  The row marked ``*`` is the objective's current default
(:func:`ldr.driver.loop.default_solver`).  The default should converge on every run, reach the best
cost, and be the fastest such candidate.
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np
from threadpoolctl import threadpool_limits

import ldr
from ldr import objectives as o
from ldr.driver.loop import default_solver


def instances(n: int, d: int, r: int) -> dict:
    rng = np.random.default_rng(0)
    X = rng.standard_normal((n, d)) @ rng.standard_normal((d, d))
    y = np.arange(n) % (r + 1)
    X[:, :r] += 2.0 * rng.standard_normal((r + 1, r))[y]
    Xa, Xb = ldr.datasets.make_cca(n, d, seed=0)
    A = rng.standard_normal((d, d))
    Xw, yw = ldr.datasets.make_wda(min(n, 300), seed=0)
    return {
        "PCA": o.PCA(X, r), "LDA": o.LDA(X, y, r),
        "QuotientOfTraces": o.QuotientOfTraces(A + A.T, np.eye(d) + 0.1 * A @ A.T, r),
        "OrthogonalCCA": o.OrthogonalCCA(Xa, Xb, r), "TraditionalCCA": o.TraditionalCCA(Xa, Xb, r),
        "MAF": o.MAF(ldr.datasets.make_maf(n, d, seed=0), r), "SFA": o.SFA(X, r),
        "MDS": o.MDS(X[:150], r), "LPP": o.LPP(X, r, n_neighbors=10),
        "NPE": o.NPE(X, r, n_neighbors=10), "KernelSDR": o.KernelSDR(X[:150], y[:150], r),
        "PPCA": o.PPCA(X, r), "FactorAnalysis": o.FactorAnalysis(X, r),
        "HSIC": o.HSIC.supervised(X[:300], y[:300], r), "WDA": o.WDA(Xw, yw, 2, reg=1.0),
    }


def candidates(obj) -> list:
    out = ["trust-region", "gradient"]
    if obj.provides("phi"):
        out += [["ism", "trust-region"], "ism"]
    if obj.provides("pencil") and obj.provides("pencil0"):
        out += [["scf", "trust-region"]]
    return out


def label(solver) -> str:
    return solver if isinstance(solver, str) else " → ".join(solver)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    n, d, r = (150, 8, 2) if args.quick else (500, 20, 3)
    warnings.simplefilter("ignore")
    with threadpool_limits(1):
        for name, obj in instances(n, d, r).items():
            rows = []
            for solver in candidates(obj):
                runs = []
                for M0 in [None, *[("random", s) for s in range(3)]]:
                    kw = {} if M0 is None else {"M0": "random", "seed": M0[1]}
                    t = time.perf_counter()
                    res = ldr.solve(obj, solver, **kw)
                    runs.append((time.perf_counter() - t, res.converged, res.cost))
                rows.append((label(solver), runs))
            best = min(c for _, runs in rows for _, _, c in runs)
            default = label(default_solver(obj))
            print(f"{name} (shape {obj.shape}):")
            for lab, runs in rows:
                worst = max((c - best) / max(abs(best), 1e-300) for _, _, c in runs)
                mark = "*" if lab == default else " "
                print(f"  {mark} {lab:24s} median {np.median([t for t, _, _ in runs]):8.4f}s  "
                      f"converged {sum(c for _, c, _ in runs)}/{len(runs)}  worst gap "
                      f"{worst:.1e}")


if __name__ == "__main__":
    main()
