"""Benchmark: MDS past ``AUTO_ROWS`` samples, the pairs of a row sample against every row's.

Run from the checkout root, under the shared lock (timings must not overlap)::

    flock /tmp/ldr-bench.lock .venv/bin/python benchmarks/bench_mds_rows.py \\
        > benchmarks/results/bench_mds_rows.txt

What is measured.  With ``AUTO_LANDMARKS`` = 1000 landmarks, ``ldr.estimators.MDS(2)`` fitted
over the pairs (row, landmark) of every row (``rows=None``, the estimate of the stress the
default used before it sampled rows) and of a uniform sample of ``AUTO_ROWS`` rows
(``rows="auto"``, the default; ``--seeds`` draws of rows and landmarks), on

* ``swissroll``: ``make_swiss_roll(n, noise=0.5, random_state=0)`` with 17 standard-normal
  noise columns (seed 1), d = 20, as in ``bench_mds_landmarks.py``;
* ``classification``: ``bench_pairwise_scale.py``'s table, d = 50, 10 classes, seed 0.
  The exact fit is out of reach at these n (its
time grows like n²: 97 s at 8192 rows); instead every answer, and the PCA start, is read by
the exact Kruskal stress-1 over all n² pairs (``ldr.objectives.MDS(X, 2).stress``).  Each fit
runs in its own child process with BLAS on one thread; peak memory: the child's ``VmHWM`` less
its resident memory once the data were made.
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


def make_data(name: str, n: int) -> np.ndarray:
    if name == "classification":
        from bench_pairwise_scale import make_data as classification

        return classification("classification", n)[0]
    from bench_mds_landmarks import make_data as swissroll

    return swissroll(name, n)


def child(name: str, n: int, rows: str, seed: int) -> dict:
    from threadpoolctl import threadpool_limits

    import ldr.estimators as est

    X = make_data(name, n)
    est.MDS(2).get_params()
    base = status_mb("VmRSS")
    with threadpool_limits(1):
        model = est.MDS(2, rows=None if rows == "all" else rows, random_state=seed)
        start = time.perf_counter()
        model.fit(X)
        seconds = time.perf_counter() - start
    return {"data": name, "n": n, "rows": rows, "seed": seed, "seconds": seconds,
            "n_iter": int(model.n_iter_),
            "converged": bool(model.result_.converged), "approximation": model.approximation_,
            "M": np.asarray(model.M_).tolist(), "peak_mb": status_mb("VmHWM"), "base_mb": base}


def run_child(name: str, n: int, rows: str, seed: int) -> dict:
    return common_run_child(__file__, name, n, rows, seed)


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--data", nargs="+", default=["swissroll", "classification"])
    p.add_argument("--n", type=int, nargs="+", default=[16_384],
                   help="rows (the exact stress of each answer sums all n² pairs: its "
                        "time grows like n²)")
    p.add_argument("--seeds", type=int, default=3, help="draws of the sampled rows")
    p.add_argument("--child", nargs=4, help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.child:
        name, n, rows, seed = args.child
        print(json.dumps(child(name, int(n), rows, int(seed))))
        return

    from _common import print_header, print_table
    from threadpoolctl import threadpool_limits

    from ldr.estimators import mds as mds_estimator
    from ldr.objectives import MDS

    command = "python benchmarks/bench_mds_rows.py " + " ".join(sys.argv[1:])
    print_header("MDS: the pairs of a row sample against every row's, past AUTO_ROWS", [
        f"command: {command.strip()} (under flock /tmp/ldr-bench.lock)",
        f"data {args.data} (module docstring), r = 2; n {args.n}",
        f"landmarks: AUTO_LANDMARKS = {mds_estimator.AUTO_LANDMARKS}; rows: every row, or "
        f"AUTO_ROWS = {mds_estimator.AUTO_ROWS} sampled ({args.seeds} draws, random_state "
        "0, 1, …); one fit per child process, BLAS on one thread",
        "exact stress-1: over all n² pairs at each answer (ldr.objectives.MDS(X, 2).stress); "
        "excess: relative to the every-row answer's"])
    table = []
    wall = time.perf_counter()
    for name, n in [(name, n) for name in args.data for n in args.n]:
        X = make_data(name, n)
        exact = MDS(X, 2)
        with threadpool_limits(1):
            pca = exact.stress(exact.heuristic())
        every = run_child(name, n, "all", 0)
        with threadpool_limits(1):
            every_stress = exact.stress(np.asarray(every["M"]))
        print(json.dumps({**{k: v for k, v in every.items() if k != "M"},
                          "exact_stress": every_stress}), flush=True)
        table.append([name, n, "PCA start", "", "", "", "", f"{pca:.5f}",
                      f"{pca / every_stress - 1:+.2%}"])
        table.append([name, n, "every row", f"{every['seconds']:.1f} s",
                      f"{every['peak_mb'] - every['base_mb']:.0f} MB", every["n_iter"],
                      "yes" if every["converged"] else "no", f"{every_stress:.5f}", ""])
        for seed in range(args.seeds):
            fit = run_child(name, n, "auto", seed)
            with threadpool_limits(1):
                stress = exact.stress(np.asarray(fit["M"]))
            print(json.dumps({**{k: v for k, v in fit.items() if k != "M"},
                              "exact_stress": stress}), flush=True)
            table.append([name, n, f"{mds_estimator.AUTO_ROWS} rows, draw {seed}",
                          f"{fit['seconds']:.1f} s", f"{fit['peak_mb'] - fit['base_mb']:.0f} MB",
                          fit["n_iter"], "yes" if fit["converged"] else "no", f"{stress:.5f}",
                          f"{stress / every_stress - 1:+.2%}"])
        del exact
    print()
    print_table(["data", "n", "fit", "time", "beyond data", "iterations", "converged",
                 "exact stress-1", "excess"], table, left=3)
    print(f"\nwall time of the whole run: {time.perf_counter() - wall:.0f} s")


if __name__ == "__main__":
    main()
