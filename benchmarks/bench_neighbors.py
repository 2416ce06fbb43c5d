"""Benchmark: exact against approximate k-nearest-neighbour search, where ``neighbors="auto"``
switches (LPP, NPE), and the approximate graph's recall.

Run from the checkout root, under the shared lock (timings must not overlap)::

    flock /tmp/ldr-bench.lock .venv/bin/python benchmarks/bench_neighbors.py \\
        > benchmarks/results/bench_neighbors.txt

What is measured.  ``ldr.objectives.neighbors.nearest_neighbors(X, k=5, neighbors)`` with
``neighbors="exact"`` (scikit-learn's NearestNeighbors) and ``"approximate"`` (NN-descent,
pynndescent, with its recall measured on 256 rows, which the time includes), on the data of
``bench_pairwise_scale.py``: scikit-learn's ``make_classification`` with n rows, d = 50 (10
informative), 10 classes, seed 0.  Each search runs in its own child process with BLAS and
numba on one thread, so the approximate time includes numba's compilation (paid once per
process, as a user's first fit pays it); one run per search (a run takes up to minutes).
Exact search runs up to ``--exact-max-n`` rows; where both ran, the recall is also counted
over every row.  Peak memory: the child's ``VmHWM`` less its resident memory once the data
were made.

The answer's error at the switch: ``--fits n`` fits LPP and NPE (``n_components=2``, their
defaults otherwise) with ``neighbors="exact"`` and ``"approximate"`` on the same n rows, in
this process on one thread, and reads both answers by the exact graph's objective: its ratio
at each (the approximate answer's relative excess: positive is worse) and the sine of the
largest principal angle between the two subspaces.

The choice of library: with ``--hnswlib-max-n``, hnswlib's HNSW index (M = 16 and
ef_construction = 200, its defaults; query ef = 50) is timed the same way where it is
installed (it is not a dependency: PyPI has its source only, which needs a compiler).
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


def hnsw_search(X: np.ndarray, k: int) -> np.ndarray:
    """hnswlib's k nearest neighbours of every row, itself excluded, on one thread."""
    import hnswlib

    from ldr.objectives.neighbors import drop_self

    index = hnswlib.Index(space="l2", dim=X.shape[1])
    index.init_index(max_elements=X.shape[0], M=16, ef_construction=200, random_seed=0)
    index.set_num_threads(1)
    index.add_items(X)
    index.set_ef(50)
    labels, _ = index.knn_query(X, k=k + 1, num_threads=1)
    return drop_self(labels.astype(np.int64), k)


def child(n: int, k: int, method: str, out: str) -> dict:
    from bench_pairwise_scale import make_data
    from threadpoolctl import threadpool_limits

    from ldr.objectives import neighbors

    X, _ = make_data("classification", n)
    base = status_mb("VmRSS")
    with threadpool_limits(1):
        start = time.perf_counter()
        if method == "hnswlib":
            indices = hnsw_search(X, k)
            recall = neighbors.neighbor_recall(X, indices, neighbors.RECALL_SAMPLE, 0)
            sample = neighbors.RECALL_SAMPLE
        else:
            indices, search = neighbors.nearest_neighbors(X, k, method, random_state=0)
            recall = search.recall
            sample = search.sample
        seconds = time.perf_counter() - start
    np.save(out, indices)
    return {"n": n, "k": k, "method": method, "seconds": seconds, "recall": recall,
            "sample": sample, "peak_mb": status_mb("VmHWM"), "base_mb": base}


def run_child(n: int, k: int, method: str, out: Path) -> dict:
    return common_run_child(__file__, n, k, method, out)


def full_recall(n: int, exact: np.ndarray, approximate: np.ndarray) -> float:
    """The share of each row's exact neighbours that the approximate graph holds, over all
    rows (ties at the k-th distance counted as found, as the library's recall does)."""
    from bench_pairwise_scale import make_data

    X, _ = make_data("classification", n)
    k = exact.shape[1]
    found = 0
    for start in range(0, n, 50_000):
        rows = slice(start, min(start + 50_000, n))
        kth = np.linalg.norm(X[exact[rows]] - X[rows][:, None, :], axis=2).max(axis=1)
        dist = np.linalg.norm(X[approximate[rows]] - X[rows][:, None, :], axis=2)
        found += int(np.sum(dist <= kth[:, None]))
    return found / (n * k)


def fit_errors(n: int) -> list[list]:
    """LPP's and NPE's answers from the exact and the approximate graph at n rows, both read
    by the exact graph's objective (module docstring): the table's rows."""
    import numba
    from bench_pairwise_scale import make_data
    from threadpoolctl import threadpool_limits

    import ldr.estimators as est
    from ldr.manifolds import sin_largest_angle

    numba.set_num_threads(1)  # one core, as the children's NUMBA_NUM_THREADS=1
    X, _ = make_data("classification", n)
    rows = []
    for name in ("LPP", "NPE"):
        fits = {}
        with threadpool_limits(1):
            for neighbors in ("exact", "approximate"):
                model = getattr(est, name)(2, neighbors=neighbors)
                start = time.perf_counter()
                model.fit(X)
                fits[neighbors] = (model, time.perf_counter() - start)
        (exact, t_exact), (approx, t_approx) = fits["exact"], fits["approximate"]
        ratio = exact.objective_.ratio
        excess = ratio(approx.M_) / ratio(exact.M_) - 1
        sine = float(sin_largest_angle(approx.M_, exact.M_))
        print(json.dumps({"method": name, "n": n, "exact_seconds": t_exact,
                          "approximate_seconds": t_approx, "exact_ratio": ratio(exact.M_),
                          "approximate_ratio_exact_graph": ratio(approx.M_),
                          "excess": excess, "sin": sine, "recall": approx.graph_recall_,
                          "converged": [bool(exact.result_.converged),
                                        bool(approx.result_.converged)]}), flush=True)
        rows.append([name, n, f"{t_exact:.1f} s", f"{t_approx:.1f} s",
                     f"{approx.graph_recall_:.4f}", f"{ratio(exact.M_):.6f}",
                     f"{ratio(approx.M_):.6f}", f"{excess:+.3%}", f"{sine:.4f}"])
    return rows


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--n", type=int, nargs="+",
                   default=[20_000, 50_000, 100_000, 200_000, 1_000_000])
    p.add_argument("--k", type=int, default=5, help="neighbours (LPP's and NPE's default)")
    p.add_argument("--exact-max-n", type=int, default=200_000,
                   help="exact search only up to this many rows")
    p.add_argument("--hnswlib-max-n", type=int, default=0,
                   help="time hnswlib too, up to this many rows (0: not at all)")
    p.add_argument("--fits", type=int, default=0,
                   help="instead: LPP's and NPE's answers from both graphs at this many rows")
    p.add_argument("--child", nargs=4, help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.child:
        n, k, method, out = args.child
        print(json.dumps(child(int(n), int(k), method, out)))
        return

    import tempfile

    from _common import print_header, print_table

    from ldr.objectives import neighbors

    command = "python benchmarks/bench_neighbors.py " + " ".join(sys.argv[1:])
    print_header("k-nearest-neighbour search: exact against approximate (NN-descent)", [
        f"command: {command.strip()} (under flock /tmp/ldr-bench.lock)",
        f"data: make_classification, d = 50 (10 informative), 10 classes, seed 0; k = {args.k}; "
        "one search per child process, BLAS and numba on one thread, one run each "
        "(the approximate time includes numba's compilation and the recall's 256 exact rows)",
        f"neighbors='auto': exact up to EXACT_MAX_SAMPLES = {neighbors.EXACT_MAX_SAMPLES} "
        f"rows; NN-descent's graph degree max(GRAPH_DEGREE = {neighbors.GRAPH_DEGREE}, k + 1)"])
    if args.fits:
        wall = time.perf_counter()
        print_table(["method", "n", "exact graph", "approximate graph", "recall",
                     "ratio at the exact answer", "ratio at the approximate answer",
                     "excess", "sin"], fit_errors(args.fits), left=1)
        print(f"\nwall time of the whole run: {time.perf_counter() - wall:.0f} s")
        return
    rows = []
    wall = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        for n in args.n:
            exact = None
            if n <= args.exact_max_n:
                exact = run_child(n, args.k, "exact", Path(tmp) / "exact.npy")
                print(json.dumps(exact), flush=True)
            approx = run_child(n, args.k, "approximate", Path(tmp) / "approximate.npy")
            counted = None
            if exact is not None:
                counted = full_recall(n, np.load(Path(tmp) / "exact.npy"),
                                      np.load(Path(tmp) / "approximate.npy"))
            print(json.dumps({**approx, "recall_all_rows": counted}), flush=True)
            hnsw = None
            if n <= args.hnswlib_max_n:
                hnsw = run_child(n, args.k, "hnswlib", Path(tmp) / "hnswlib.npy")
                print(json.dumps(hnsw), flush=True)
            rows.append([n,
                         f"{exact['seconds']:.1f} s" if exact else "not run",
                         f"{exact['peak_mb'] - exact['base_mb']:.0f} MB" if exact else "",
                         f"{approx['seconds']:.1f} s",
                         f"{approx['peak_mb'] - approx['base_mb']:.0f} MB",
                         f"{exact['seconds'] / approx['seconds']:.2f}×" if exact else "",
                         f"{approx['recall']:.4f}",
                         f"{counted:.4f}" if counted is not None else "",
                         f"{hnsw['seconds']:.1f} s" if hnsw else "",
                         f"{hnsw['recall']:.4f}" if hnsw else "",
                         neighbors.resolve_neighbors("auto", n)])
    print()
    print_table(["n", "exact", "exact beyond data", "approximate", "approx. beyond data",
                 "exact ÷ approx.", "recall (256 rows)", "recall (all rows)", "hnswlib",
                 "hnswlib recall (256 rows)", "auto"], rows)
    print(f"\nwall time of the whole run: {time.perf_counter() - wall:.0f} s")


if __name__ == "__main__":
    main()
