"""Benchmark: the pairwise estimators that fit from Dask chunks, at 10⁶ and 10⁷ rows on a
``dask.distributed.LocalCluster`` under a per-worker memory limit.

Run from the checkout root, under the shared lock (timings must not overlap)::

    flock /tmp/ldr-bench.lock .venv/bin/python -P benchmarks/bench_pairwise_dask.py \\
        > benchmarks/results/bench_pairwise_dask.txt

What is measured. The rows are generated lazily, chunk by chunk, never held whole: X (n ×
20) standard normal from ``dask.array.random.default_rng(0)`` in chunks of ``--chunk`` rows,
and y = sin(2 xᵀb₁) + (xᵀb₂)² + 0.1 ε (b₁, b₂ orthonormal, seeded), so the central subspace
is span(b₁, b₂); for WassersteinDA the four classes are the signs of xᵀb₁ and xᵀb₂, and for
WDAClustering those four groups are pulled apart, each row moved by 3(sign(xᵀb₁) b₁ +
sign(xᵀb₂) b₂), so that k-means with four clusters can find them. ``MDS(2)``,
``KernelSDR(2)`` and ``WassersteinDA(2)`` at their defaults fit from the Dask array (past
their switches: MDS's stress over 8192 sampled rows and 1000 landmarks, KernelSDR's cost on
4000 sampled rows, WDA's mini-batches of 500 rows per class, two a class): one pass over the
chunks for the moments, then the sampled rows gathered; everything else runs in the client
on those rows. WDA's labels, computed from X here, are read into memory first: one more pass
over the chunks. ``WDAClustering(2, n_clusters=4)`` at its defaults reads the chunks once
for its moments, then four times a round (the rows projected for k-means, the clusters'
scatters, the WDA step's means and scatters, the step's batches' rows) and once more for the
final labels: 2 + 4 × rounds passes.  ``NCA(2)`` at its defaults fits WDA's four classes by
its stochastic route from the chunks: a pass for the labels, one for the moments (the mean,
the scale and the LDA start), the first pool of sampled columns gathered (a pass), then one
pass an epoch (each chunk read once, its batches taken, the next pool's rows collected):
3 + epochs passes.  Its batches run in the client, one chunk at a time: that work grows with
n and is not divided among workers.  ``--epochs`` caps NCA's epochs (the default's 20) for a
run that measures memory and an epoch's time, not the default's answer; ``--max-outer`` caps
the clustering HSICs' rounds (the default's 30) likewise.
``LargeMarginDML(2)`` fits the same classes by the same route, with one more pass before the
epochs: each row's target neighbours among its chunk's classmates, and their recall against
the exact search over all rows on 256 sampled rows (4 + epochs passes).
The HSIC estimators at their defaults (Nyström features on 512 landmark rows; the clustering
ones' Nyström U-step): ``SupervisedHSIC(2)`` on WDA's four classes, ``UnsupervisedHSIC(2,
n_clusters=4)`` and ``SemiSupervisedHSIC(2, n_clusters=4)`` (the four classes as expert
scores) on WDAClustering's pulled-apart groups, and ``KDAC(2, n_clusters=2)`` on them given
the sign of xᵀb₁ as the existing clustering (its alternative is the sign of xᵀb₂: the
labels' agreement with it is printed).  A pass for the moments, σ's sample and the landmark
rows gathered, then every Φ (two passes), Φ₀ and Nyström U-step (three passes) maps the
chunks on the workers; the labels, the embedding U (n × k) and Γ's factor stay in the client.
The time inside those mapped passes is measured (``map_seconds``): their 10⁸ estimate divides
it among the workers and scales the rest — the client's, including the moments pass and the
gathers — with n.
``LPP(2)`` and ``NPE(2)`` at their defaults fit WDAClustering's four pulled-apart groups: a
pass for the moments (the span check), one to gather the recall's 256 rows, and one in which
every chunk's task, on a worker, searches its rows' neighbours within the chunk and returns
its d×d sums and the recall's distances (3 passes). All of their work is in the chunks' tasks,
so their 10⁸ estimate is the whole time scaled by the rows and divided among the workers.

Each (method, n) runs in its own child process that starts a LocalCluster of ``--workers``
worker processes (one thread each, ``memory_limit`` ``--worker-memory``: a worker past it is
restarted by its nanny and the fit fails); printed: the fit's wall time, the pass alone
(``ldr.data.rows.moments`` on the same array, timed separately: generating and reading every
chunk), each worker's peak resident memory (``VmHWM``, read on the worker after the fit) and
the client's beyond its memory before the fit.  At 10⁶ rows the in-memory fit on the same
rows (materialized) is the reference: the sampled rows are the same (same seed), so the two
answers agree to rounding (sin θ).  The 10⁸ estimate: the fit reads the chunks twice (the
moments, then the sampled rows, which touch every chunk; WDA three times, its labels first),
so its time less those passes, plus as many passes scaled by the rows and divided among N
workers (the passes are the only part that grows with n; the chunks are independent
tasks).  WDAClustering's client also works on every row — k-means on the n projected rows,
its labels — so for it the time less the passes is scaled by the rows too (and not divided
among workers), and the client's memory grows with n likewise.
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

D = 20
#: the methods whose client-side work (besides the passes) grows with n (module docstring)
CLIENT_GROWS = {"wda-clustering", "nca", "lmnn"}
#: the methods whose work is all in the chunks' tasks, on the workers (module docstring)
WORKERS_ONLY = {"lpp", "npe"}
#: the fit's passes over the chunks (module docstring); WDAClustering's grow with its rounds
PASSES = {"mds": 2, "ksdr": 2, "wda": 3, "lpp": 3, "npe": 3}
#: the methods whose mapped passes are timed (module docstring)
MAPPED = {"supervised-hsic", "unsupervised-hsic", "semisupervised-hsic", "kdac"}
METHODS = ["mds", "ksdr", "wda", "wda-clustering", "nca", "lmnn", "lpp", "npe",
           "supervised-hsic", "unsupervised-hsic", "semisupervised-hsic", "kdac"]


def passes(row: dict) -> int:
    """The passes over the chunks of the fit ``row`` (module docstring)."""
    if row["method"] == "wda-clustering":
        return 2 + 4 * row["rounds"]
    if row["method"] == "nca":
        return 3 + row["rounds"]
    if row["method"] == "lmnn":
        return 4 + row["rounds"]
    if row["method"] in MAPPED:
        return row["map_passes"]
    return PASSES[row["method"]]


def lazy_data(n: int, chunk: int):
    """(X, y, B): the lazily generated rows, targets and true subspace (module docstring)."""
    import dask.array as da

    B = np.linalg.qr(np.random.default_rng(1).standard_normal((D, 2)))[0]
    rng = da.random.default_rng(0)
    X = rng.standard_normal((n, D), chunks=(chunk, D))
    noise = rng.standard_normal((n,), chunks=(chunk,))
    y = da.sin(2 * X @ B[:, 0]) + (X @ B[:, 1]) ** 2 + 0.1 * noise
    return X, y, B


def lazy_classes(X, B):
    """WDA's four classes: the signs of xᵀb₁ and xᵀb₂ (lazy)."""
    return (X @ B[:, 0] > 0).astype(int) + 2 * (X @ B[:, 1] > 0).astype(int)


def lazy_groups(X, B):
    """WDAClustering's rows: the four sign groups pulled apart along b₁ and b₂ (lazy)."""
    import dask.array as da

    return X + 3.0 * (da.sign(X @ B[:, 0])[:, None] * B[:, 0]
                      + da.sign(X @ B[:, 1])[:, None] * B[:, 1])


def build(method: str, X, y, B):
    """The estimator at its defaults and its fit's arguments."""
    import ldr.estimators as est

    if method == "mds":
        return est.MDS(2), (X,)
    if method == "ksdr":
        return est.KernelSDR(2), (X, y)
    if method == "wda-clustering":
        return est.WDAClustering(2, n_clusters=4), (lazy_groups(X, B),)
    if method == "nca":
        return est.NCA(2), (X, lazy_classes(X, B))
    if method == "lmnn":
        return est.LargeMarginDML(2), (X, lazy_classes(X, B))
    if method == "lpp":
        return est.LPP(2), (lazy_groups(X, B),)
    if method == "npe":
        return est.NPE(2), (lazy_groups(X, B),)
    if method == "supervised-hsic":
        return est.SupervisedHSIC(2), (X, lazy_classes(X, B))
    if method == "unsupervised-hsic":
        return est.UnsupervisedHSIC(2, n_clusters=4), (lazy_groups(X, B),)
    if method == "semisupervised-hsic":
        return est.SemiSupervisedHSIC(2, n_clusters=4), (lazy_groups(X, B),
                                                         lazy_classes(X, B))
    if method == "kdac":
        return est.KDAC(2, n_clusters=2), (lazy_groups(X, B), (X @ B[:, 0] > 0).astype(int))
    return est.WassersteinDA(2), (X, lazy_classes(X, B))


class MappedPasses:
    """Counts and times the passes :class:`ldr.objectives.chunked_rows.ChunkedRows` maps over
    the chunks (the HSIC estimators' kernel passes, on the workers)."""

    def __init__(self):
        import ldr.objectives.chunked_rows as chunked_rows

        self.count = 0
        self.seconds = 0.0
        inner = chunked_rows.map_chunks

        def timed(*args, **kwargs):
            start = time.perf_counter()
            try:
                return inner(*args, **kwargs)
            finally:
                self.seconds += time.perf_counter() - start
                self.count += 1

        chunked_rows.map_chunks = timed


def worker_peak_mb() -> float:
    return status_mb("VmHWM")


def child(method: str, n: int, chunk: int, workers: int, worker_memory: str,
          reference: bool, epochs: int | None = None, max_outer: int | None = None) -> dict:
    import warnings

    from distributed import Client, LocalCluster

    import ldr.estimators as est

    if epochs is not None:
        est.NCA._max_epochs = epochs
        est.LargeMarginDML._max_epochs = epochs

    from ldr.data.rows import moments
    from ldr.manifolds import sin_largest_angle

    warnings.simplefilter("ignore")
    X, y, B = lazy_data(n, chunk)
    model, args = build(method, X, y, B)
    if max_outer is not None and "max_outer" in model.get_params():
        model.set_params(max_outer=max_outer)
    with LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                      memory_limit=worker_memory, dashboard_address=None) as cluster, \
            Client(cluster) as client:
        start = time.perf_counter()
        moments(X)
        pass_seconds = time.perf_counter() - start
        client.restart()          # the workers' peaks below are the fit's alone
        base = status_mb("VmRSS")
        mapped = MappedPasses()
        start = time.perf_counter()
        model.fit(*args)
        seconds = time.perf_counter() - start
        peaks = sorted(client.run(worker_peak_mb).values())
    row = {"method": method, "n": n, "chunk": chunk, "workers": workers,
           "worker_memory": worker_memory, "seconds": seconds, "pass_seconds": pass_seconds,
           "worker_peak_mb": peaks, "client_beyond_mb": status_mb("VmHWM") - base,
           "converged": bool(model.result_.converged),
           "approximation": getattr(model, "approximation_", None),
           "batch_size": getattr(model, "batch_size_", None),
           "rounds": getattr(model, "n_outer_", None), "reason": model.result_.reason}
    if method in MAPPED:
        row["max_outer_cap"] = max_outer
        row["map_seconds"] = mapped.seconds
        row["map_passes"] = mapped.count
        row["converged"] = bool(getattr(model, "converged_", model.result_.converged))
    if method == "kdac":            # agreement with the alternative split, sign(xᵀb₂)
        alternative = np.asarray((X @ B[:, 1] > 0).compute())
        same = float(np.mean(model.labels_ == alternative))
        row["alternative_agreement"] = max(same, 1.0 - same)
    if method in ("nca", "lmnn"):   # an iteration of the stochastic route is an epoch
        row["rounds"] = int(model.n_iter_)
        row["epochs_cap"] = epochs
    if method in ("ksdr", "wda", "wda-clustering", "lpp", "npe") or method in MAPPED:
        row["sin_truth"] = float(sin_largest_angle(model.M_, B))
    if reference:
        ref, ref_args = build(method, X, y, B)
        ref.fit(*(a.compute() for a in ref_args))
        if method in MAPPED:
            row["cost_in_memory"] = [float(model.cost_), float(ref.cost_)]
        if method in ("nca", "lmnn"):   # no exact objective at 10⁶ rows (n² pairs): a sample's
            row["sample_objective"] = [sample_objective(method, fit, *args)
                                       for fit in (model, ref)]
        else:
            row["sin_in_memory"] = float(sin_largest_angle(model.M_, ref.M_))
    return row


#: rows of the sample NCA's answers are compared on (the exact objective's n² pairs)
SAMPLE_ROWS = 5000


def sample_objective(method: str, fit, X, y) -> float:
    """The exact objective per row on ``SAMPLE_ROWS`` seeded rows at the fitted map (the same
    rows for every fit): NCA's Σ_i p_i / m; LargeMarginDML's cost / m, its targets searched
    among those rows (in the fit's units: L's, not the objective's standardized ones)."""
    from ldr.data.rows import take_rows
    from ldr.objectives import NCA, LargeMarginDML

    rows = np.sort(np.random.default_rng(7).choice(X.shape[0], SAMPLE_ROWS, replace=False))
    Xs = take_rows(X, rows)
    ys = np.asarray(y[rows].compute())
    if method == "lmnn":
        obj = LargeMarginDML(Xs, ys, fit.components_.shape[0])
        return float(obj.cost(obj.point(fit.components_))) / SAMPLE_ROWS
    obj = NCA(Xs, ys, fit.components_.shape[0])
    return float(-obj.cost(obj.point(fit.components_))) / SAMPLE_ROWS


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--n", type=int, nargs="+", default=[1_000_000, 10_000_000])
    p.add_argument("--methods", nargs="+", default=METHODS, choices=METHODS)
    p.add_argument("--chunk", type=int, default=250_000, help="rows per chunk")
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--worker-memory", default="1GiB", help="each worker's memory limit")
    p.add_argument("--epochs", type=int, default=None,
                   help="cap NCA's and LMNN's epochs (module docstring; default: their own)")
    p.add_argument("--max-outer", type=int, default=None,
                   help="cap the clustering HSICs' rounds (module docstring; default: theirs)")
    p.add_argument("--child", nargs=8, help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.child:
        method, n, chunk, workers, memory, reference, epochs, max_outer = args.child
        print(json.dumps(child(method, int(n), int(chunk), int(workers), memory,
                               reference == "1", None if epochs == "0" else int(epochs),
                               None if max_outer == "0" else int(max_outer))))
        return

    from _common import print_header, print_table

    command = "python -P benchmarks/bench_pairwise_dask.py " + " ".join(sys.argv[1:])
    print_header("The pairwise estimators from Dask chunks on a LocalCluster", [
        f"command: {command.strip()} (under flock /tmp/ldr-bench.lock)",
        f"X: n × {D} generated lazily in chunks of {args.chunk} rows (module docstring); "
        f"n {args.n}; {args.workers} worker processes, one thread each, memory_limit "
        f"{args.worker_memory} each; BLAS on one thread"])
    table = []
    rows = []
    wall = time.perf_counter()
    for method in args.methods:
        for n in args.n:
            row = common_run_child(__file__, method, n, args.chunk, args.workers,
                                   args.worker_memory, int(n <= 1_000_000), args.epochs or 0,
                                   args.max_outer or 0)
            rows.append(row)
            print(json.dumps(row), flush=True)
            table.append([method, n, f"{row['seconds']:.1f} s", f"{row['pass_seconds']:.1f} s",
                          " / ".join(f"{p:.0f}" for p in row["worker_peak_mb"]) + " MB",
                          f"{row['client_beyond_mb']:.0f} MB",
                          "yes" if row["converged"] else "no",
                          f"{row['sin_in_memory']:.1e}" if "sin_in_memory" in row else
                          ("{} {:.4f} vs {:.4f}".format(
                              "Σp/m" if method == "nca" else "cost/m",
                              *row["sample_objective"]) if "sample_objective" in row else ""),
                          f"{row['sin_truth']:.4f}" if "sin_truth" in row else ""])
            table[-1].append(f"{row['map_seconds']:.1f} s in {row['map_passes']}"
                             if "map_seconds" in row else "")
            table[-1].append("{:.6e} vs {:.6e}".format(*row["cost_in_memory"])
                             if "cost_in_memory" in row else "")
    print()
    print_table(["method", "n", "fit", "the pass alone", "worker peaks", "client beyond",
                 "converged", "to in-memory (sin θ; NCA, LMNN: on a sample)", "sin θ to truth",
                 "mapped passes", "cost: chunks vs in memory"],
                table, left=2)
    print("\n10⁸ rows, estimated from the largest n measured: the fit's time less its k passes "
          "(× 10⁸ / n for " + ", ".join(sorted(CLIENT_GROWS)) + ", whose client works on every "
          "row), plus k passes × (10⁸ / n) × (workers / N), or for "
          + ", ".join(sorted(WORKERS_ONLY))
          + " the whole time × (10⁸ / n) × (workers / N), or for " + ", ".join(sorted(MAPPED))
          + " the time in their k mapped passes × (10⁸ / n) × (workers / N) plus the rest × "
          "(10⁸ / n); k = " + ", ".join(
              f"{m} {passes(max((r for r in rows if r['method'] == m), key=lambda r: r['n']))}"
              for m in args.methods))
    est_rows = []
    for method in args.methods:
        big = max((r for r in rows if r["method"] == method), key=lambda r: r["n"])
        k = passes(big)
        fixed = big["seconds"] - k * big["pass_seconds"]
        if method in CLIENT_GROWS:
            fixed *= 1e8 / big["n"]
        per_row = k * big["pass_seconds"] * big["workers"] / big["n"]  # a row's
        if method in WORKERS_ONLY:
            fixed = 0.0
            per_row = big["seconds"] * big["workers"] / big["n"]
        if method in MAPPED:       # the mapped passes divided, the rest scaled with n
            fixed = (big["seconds"] - big["map_seconds"]) * 1e8 / big["n"]
            per_row = big["map_seconds"] * big["workers"] / big["n"]
        for N in (2, 8, 32):
            est_rows.append([method, big["n"], N, f"{fixed + per_row * 1e8 / N:.0f} s"])
    print_table(["method", "from n", "workers N", "10⁸ rows"], est_rows, left=3)
    print(f"\nwall time of the whole run: {time.perf_counter() - wall:.0f} s")


if __name__ == "__main__":
    main()
