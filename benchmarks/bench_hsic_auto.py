"""Benchmark: the HSIC estimators' ``approximation="auto"`` at its switch, exact against Nyström.

Run from the checkout root, under the shared lock (timings must not overlap)::

    flock /tmp/ldr-bench.lock .venv/bin/python -P benchmarks/bench_hsic_auto.py \\
        > benchmarks/results/bench_hsic_auto.txt

What is measured.  ``approximation="auto"`` fits the exact kernel up to ``EXACT_MAX_SAMPLES``
rows and Nyström features (``n_kernel_features`` = 512 seeded landmarks) beyond.  At n rows
around that switch each estimator is fitted both ways (``approximation=None`` and
``"nystroem"``, everything else at its defaults, r = 2) on

* ``classification``: ``bench_pairwise_scale.py``'s table (``make_classification``, d = 50,
  10 classes, seed 0), standardized by the estimator;
* ``swissroll``: ``bench_mds_landmarks.py``'s swiss roll with 17 noise columns (d = 20), its
  class the roll's position cut into 10 equal-width bins.

SupervisedHSIC fits the class labels; UnsupervisedHSIC and KDAC (against the labels as the
given clustering) seek 10 clusters, 5 rounds at most.  Reported: each fit's wall time (one
child process, BLAS on one thread) and peak memory beyond the data; for SupervisedHSIC the
exact objective −tr(Γ K_XW) at both answers (the Nyström answer's excess over the exact
one's, relative) and the sine of the largest principal angle between the two subspaces; for
the clustering estimators the sine and the adjusted Rand index between the two fits' labels.
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

METHODS = ("supervised", "unsupervised", "kdac")


def make_data(name: str, n: int):
    if name == "classification":
        from bench_pairwise_scale import make_data as classification

        return classification("classification", n)
    from bench_mds_landmarks import make_data as swissroll
    from sklearn.datasets import make_swiss_roll

    X = swissroll(name, n)
    t = make_swiss_roll(n, noise=0.5, random_state=0)[1]
    y = np.digitize(t, np.linspace(t.min(), t.max(), 11)[1:-1])
    return X, y


def build(method: str, approximation):
    import ldr.estimators as est

    if method == "supervised":
        return est.SupervisedHSIC(2, approximation=approximation)
    if method == "unsupervised":
        return est.UnsupervisedHSIC(2, n_clusters=10, max_outer=5, approximation=approximation)
    return est.KDAC(2, n_clusters=10, max_outer=5, approximation=approximation)


def child(method: str, name: str, n: int, approximation: str) -> dict:
    import warnings

    from threadpoolctl import threadpool_limits

    X, y = make_data(name, n)
    base = status_mb("VmRSS")
    model = build(method, None if approximation == "exact" else approximation)
    warnings.simplefilter("ignore")
    with threadpool_limits(1):
        start = time.perf_counter()
        if method == "unsupervised":
            model.fit(X)
        else:
            model.fit(X, y)
        seconds = time.perf_counter() - start
    row = {"method": method, "data": name, "n": n, "approximation": approximation,
           "seconds": seconds, "n_iter": int(model.n_iter_),
           "converged": bool(getattr(model, "converged_", model.result_.converged)),
           "M": np.asarray(model.M_).tolist(), "peak_mb": status_mb("VmHWM"), "base_mb": base}
    if hasattr(model, "labels_"):
        row["labels"] = np.asarray(model.labels_).tolist()
    return row


def run_child(method: str, name: str, n: int, approximation: str) -> dict:
    return common_run_child(__file__, method, name, n, approximation)


def sin_theta(A, B) -> float:
    Qa = np.linalg.qr(A)[0]
    Qb = np.linalg.qr(B)[0]
    cos = np.linalg.svd(Qa.T @ Qb, compute_uv=False)
    return float(np.sqrt(max(0.0, 1.0 - cos.min() ** 2)))


def exact_cost(name: str, n: int, M) -> float:
    """SupervisedHSIC's exact objective at M (standardized coordinates)."""
    from ldr.kernels import Gaussian, median_distance
    from ldr.objectives import HSIC
    from ldr.objectives.hsic import label_gamma

    X, y = make_data(name, n)
    Xs = (X - X.mean(axis=0)) / np.where(X.std(axis=0) > 0, X.std(axis=0), 1.0)
    _, Gamma = label_gamma(y, n)
    obj = HSIC(Xs, Gamma, M.shape[1], kernel=Gaussian(median_distance(Xs)))
    return float(obj.cost(M))


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--data", nargs="+", default=["classification", "swissroll"])
    p.add_argument("--methods", nargs="+", default=list(METHODS), choices=METHODS)
    p.add_argument("--n", type=int, nargs="+", default=[2000, 4000, 8000])
    p.add_argument("--child", nargs=4, help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.child:
        method, name, n, approximation = args.child
        print(json.dumps(child(method, name, int(n), approximation)))
        return

    from _common import print_header, print_table
    from sklearn.metrics import adjusted_rand_score
    from threadpoolctl import threadpool_limits

    from ldr.kernels.features import EXACT_MAX_SAMPLES

    command = "python -P benchmarks/bench_hsic_auto.py " + " ".join(sys.argv[1:])
    print_header("HSIC: approximation='auto' at its switch, the exact kernel against Nyström", [
        f"command: {command.strip()} (under flock /tmp/ldr-bench.lock)",
        f"EXACT_MAX_SAMPLES = {EXACT_MAX_SAMPLES}; Nyström on 512 landmarks; r = 2; "
        f"methods {args.methods}; data {args.data}; n {args.n}",
        "one fit per child process, BLAS on one thread; beyond data: the child's VmHWM less "
        "its VmRSS once the data were made"])
    table = []
    wall = time.perf_counter()
    for method in args.methods:
        for name in args.data:
            for n in args.n:
                fits = {a: run_child(method, name, n, a) for a in ("exact", "nystroem")}
                for fit in fits.values():
                    print(json.dumps({k: v for k, v in fit.items()
                                      if k not in ("M", "labels")}), flush=True)
                Me = np.asarray(fits["exact"]["M"])
                Mn = np.asarray(fits["nystroem"]["M"])
                gap = ""
                ari = ""
                if method == "supervised":
                    with threadpool_limits(1):
                        ce = exact_cost(name, n, Me)
                        cn = exact_cost(name, n, Mn)
                    gap = f"{(cn - ce) / abs(ce):+.3%}"
                else:
                    score = adjusted_rand_score(fits["exact"]["labels"], fits["nystroem"]["labels"])
                    ari = f"{score:.3f}"
                for a, fit in fits.items():
                    table.append([method, name, n, a, f"{fit['seconds']:.1f} s",
                                  f"{fit['peak_mb'] - fit['base_mb']:.0f} MB", fit["n_iter"],
                                  "yes" if fit["converged"] else "no",
                                  gap if a == "nystroem" else "",
                                  f"{sin_theta(Me, Mn):.4f}" if a == "nystroem" else "",
                                  ari if a == "nystroem" else ""])
    print()
    print_table(["method", "data", "n", "kernel", "time", "beyond data", "iterations",
                 "converged", "exact cost excess", "sin θ", "ARI"], table, left=4)
    print(f"\nwall time of the whole run: {time.perf_counter() - wall:.0f} s")


if __name__ == "__main__":
    main()
