"""The pairwise methods at 10⁴–10⁶ rows (issue 25): time and peak memory per fit.

Each fit runs in its own subprocess (``--child``), so its peak resident memory (``ru_maxrss``)
is that fit's alone, under a wall-clock limit (``--timeout``: a fit past it is reported "over
budget", not waited for) and an address-space limit (``--memory-limit``: a fit that would
allocate more fails with MemoryError, reported "over memory").  BLAS and numba (the
approximate k-NN search) on one thread.  Data:

* ``classification``: scikit-learn's ``make_classification`` at n rows, d = 50 features
  (10 informative), 10 classes, seed 0 (``--seeds`` for others);
* ``mnist``: an MNIST-sized generator, 70 000 × 784, 10 classes (``make_classification`` with
  50 informative features, the rest noise; ``--mnist-n`` for fewer rows).

Every method runs at its defaults (``n_components=2``; the clustering HSICs with 10 clusters
and their default 30 rounds at most; records before this change ran 5 rounds): ``lpp``,
``npe`` and ``mds`` switch to their scalable forms by
themselves (an approximate k-NN graph past 10⁵ rows; landmarks past 4096 rows and sampled
rows past 8192), and so do the HSIC estimators (Nyström features past 4000 rows);
``lpp-exact``, ``npe-exact`` (exact k-NN graph), ``mds-exact`` (all n²
pairs) and ``mds-landmarks`` (1000 landmarks against every row) force the other forms, for
the comparison.

Each row reports the fit's wall time, its peak RSS (and the data's own size: X is n·d·8 bytes;
"beyond data" is the peak less the child's resident memory once the data were made), its
convergence verdict (``result_.converged``), what it approximated (``approximation_``, and an
approximate graph's measured recall), the method's own figure of merit at the answer (LPP/NPE
ratio, MDS stress-1, NCA objective, …) and the 5-NN accuracy of the embedding (2000 training
and 2000 test rows drawn from the fitted rows). Where scikit-learn's NCA runs (``sk-nca``),
ldr's NCA objective at its answer is compared with scikit-learn's at scikit-learn's answer
(both evaluated by ldr's objective, which equals scikit-learn's, ``tests/test_dml.py``), and
the gap table gives scikit-learn's fit time ÷ ldr's default's on the same draw (likewise for
the other compared rows: the stochastic routes, ``nca-lbfgs``). ``wda-clustering`` is
WDAClustering's default (exact plans up to 3000 rows per cluster, mini-batch OT beyond: at 10⁵
the exact plans take hours); ``wda-clustering-batch`` forces the mini-batch route (500 rows per
class and batch) where the default is exact, for the comparison.

Stochastic solvers: when ``ldr.solvers`` registers "sgd", "adam" or "svrg" (issue 25 item 2,
another branch), ``--stochastic`` adds a row per such solver for the methods that take a
``solver``, with the relative objective gap to the exact solver's answer.  WDA's rows come
from ``benchmarks/bench_wda_scale.py``'s ``wda_rows(ns)`` when that file exists (a note
otherwise).

    python benchmarks/bench_pairwise_scale.py --n 10000 100000 --timeout 600
    python benchmarks/bench_pairwise_scale.py --data mnist --methods lpp npe mds
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

#: the fits :func:`build` makes
METHODS = ("lpp", "lpp-exact", "npe", "npe-exact", "mds", "mds-exact", "mds-landmarks", "nca",
           "nca-stochastic", "nca-noplateau", "nca-lbfgs", "sk-nca", "lmnn", "lmnn-stochastic",
           "unsupervised-hsic", "semisupervised-hsic", "kdac", "hsic-gaussian-y",
           "wda-clustering", "wda-clustering-batch", "wda", "ksdr")
#: at n above this, "nca-noplateau" runs a fixed number of iterations (one evaluation is n²
#: pairs: 10¹⁰ at n = 10⁵); "nca" and "lmnn" are the estimators' defaults at every n (past
#: their ``stochastic_above``, 20 000, the stochastic route), "nca-stochastic" and
#: "lmnn-stochastic" that route forced (``stochastic_above=1``) for the gap to the exact one
LONG_N = 20_000
LONG_ITERS = 3
STOCHASTIC = ("sgd", "adam", "svrg")


def make_data(kind: str, n: int, seed: int = 0):
    from sklearn.datasets import make_classification

    if kind == "mnist":
        X, y = make_classification(n_samples=n, n_features=784, n_informative=50,
                                   n_redundant=0, n_classes=10, n_clusters_per_class=1,
                                   class_sep=2.0, random_state=seed)
    else:
        X, y = make_classification(n_samples=n, n_features=50, n_informative=10,
                                   n_redundant=0, n_classes=10, n_clusters_per_class=1,
                                   class_sep=2.0, random_state=seed)
    return X, y


def build(method: str, n: int, d: int, solver=None):
    """(estimator, fit arguments kind: "X", "Xy", "Xt" (continuous target), merit name)."""
    import ldr.estimators as est

    r = 2
    long = n > LONG_N
    kw = {} if solver is None else {"solver": solver}
    if method in ("lpp", "lpp-exact"):
        forced = {"neighbors": "exact"} if method == "lpp-exact" else {}
        return est.LPP(r, **forced, **kw), "X", "ratio_"
    if method in ("npe", "npe-exact"):
        forced = {"neighbors": "exact"} if method == "npe-exact" else {}
        return est.NPE(r, **forced, **kw), "X", "ratio_"
    if method == "mds":  # the default: exact, then landmarks, then sampled rows too
        return est.MDS(r, **kw), "X", "stress_"
    if method == "mds-exact":  # the exact stress by blocks of rows at any n
        return est.MDS(r, landmarks=None, **kw), "X", "stress_"
    if method == "mds-landmarks":  # 1000 landmarks against every row
        return est.MDS(r, landmarks=1000, rows=None, **kw), "X", "stress_"
    if method in ("nca", "nca-stochastic"):
        forced = {"stochastic_above": 1} if method == "nca-stochastic" else {}
        return est.NCA(r, **forced, **kw), "Xy", "objective_value_"
    if method == "nca-lbfgs":   # a second exact solver: plain L-BFGS from the same start
        return est.NCA(r, solver="lbfgs", **kw), "Xy", "objective_value_"
    if method == "nca-noplateau":   # the plateau rule off: the gradient rule or 200 iterations
        return est.NCA(r, max_iter=LONG_ITERS if long else 200, solver_params={"ftol": 0},
                       **kw), "Xy", "objective_value_"
    if method in ("lmnn", "lmnn-stochastic"):
        forced = {"stochastic_above": 1} if method == "lmnn-stochastic" else {}
        return est.LargeMarginDML(r, **forced, **kw), "Xy", "cost_"
    if method == "sk-nca":
        from sklearn.neighbors import NeighborhoodComponentsAnalysis

        return NeighborhoodComponentsAnalysis(r, random_state=0), "Xy", None
    # the HSICs' approximation="auto": the exact kernel up to 4000 rows, Nyström beyond
    if method == "unsupervised-hsic":
        return est.UnsupervisedHSIC(r, n_clusters=10, **kw), "X", None
    if method == "semisupervised-hsic":
        return est.SemiSupervisedHSIC(r, n_clusters=10, **kw), "Xy", None
    if method == "kdac":
        return est.KDAC(r, n_clusters=10, **kw), "Xy", None
    if method == "hsic-gaussian-y":
        return est.SupervisedHSIC(r, y_kernel="gaussian", **kw), "Xt", None
    if method == "wda":  # batch_size="auto": mini-batch OT past 3000 rows a class
        return est.WassersteinDA(r), "Xy", "ratio_"
    if method == "ksdr":  # class labels: y_type="auto" reads integers as classes
        return est.KernelSDR(r), "Xy", None
    if method == "wda-clustering":  # batch_size="auto": mini-batch OT past 3000 rows a cluster
        return est.WDAClustering(r, n_clusters=10), "X", None
    if method == "wda-clustering-batch":  # the mini-batch route forced, against the exact one
        from ldr.estimators.wda_minibatch import AUTO_BATCH

        return est.WDAClustering(r, n_clusters=10, batch_size=AUTO_BATCH), "X", None
    raise SystemExit(f"unknown method {method!r}; choose from {METHODS}")


def knn_accuracy(Z, y, seed=0) -> float:
    from sklearn.neighbors import KNeighborsClassifier

    rng = np.random.default_rng(seed)
    idx = rng.permutation(len(y))[:4000]
    tr, te = idx[: len(idx) // 2], idx[len(idx) // 2:]
    return float(KNeighborsClassifier(5).fit(Z[tr], y[tr]).score(Z[te], y[te]))


def child(method: str, kind: str, n: int, solver: str | None, seed: int = 0) -> dict:
    """One fit in this process: the JSON row."""
    from threadpoolctl import threadpool_limits

    X, y = make_data(kind, n, seed)
    if kind == "classification":
        X = (X - X.mean(axis=0)) / X.std(axis=0)
    data_rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    model, args, merit = build(method, n, X.shape[1], solver)
    t = X[:, 0] + 0.1 * np.random.default_rng(1).standard_normal(n)   # a continuous target
    fit_args = {"X": (X,), "Xy": (X, y), "Xt": (X, t)}[args]
    with threadpool_limits(1):
        start = time.perf_counter()
        model.fit(*fit_args)
        seconds = time.perf_counter() - start
    Z = model.transform(X)
    row = {"method": method, "data": kind, "n": n, "seed": seed, "d": X.shape[1],
           "solver": solver,
           "seconds": seconds, "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
           / 1024, "data_mb": X.nbytes / 2**20, "after_data_mb": data_rss,
           "knn": knn_accuracy(Z, y)}
    if merit is not None:
        row["merit"] = float(getattr(model, merit))
        row["merit_name"] = merit.rstrip("_")
    result = getattr(model, "result_", None)
    if result is not None:   # what the fit's full-data check said
        row["converged"] = bool(result.converged)
        row["reason"] = str(result.reason)[:160]
    if hasattr(model, "converged_"):   # an alternation's own verdict, over its last W-step's
        row["converged"] = bool(model.converged_)
        history = getattr(model, "history_", None)
        if history:
            last = history[-1]
            change = next((last[k] for k in ("u_change", "w_change", "p_change") if k in last),
                          float("nan"))
            row["reason"] = (f"{model.n_outer_} rounds, last change {change:.2e} "
                             f"(outer_tol {model.outer_tol:g}); last W-step: "
                             f"{result.reason if result is not None else ''}")[:160]
    if hasattr(model, "stochastic_"):   # which route
        row["stochastic"] = bool(model.stochastic_)
    if getattr(model, "approximation_", None):
        row["approximation"] = model.approximation_
    if getattr(model, "graph_recall_", None) is not None:
        row["recall"] = float(model.graph_recall_)
    if method.startswith(("nca", "sk-nca")) and n <= LONG_N:
        from ldr.objectives import NCA

        obj = NCA(X, y, 2)
        row["nca_objective"] = obj.objective_value(obj.point(model.components_))
    if method in ("mds", "mds-landmarks") and n <= LONG_N and getattr(model, "landmarks_", None) \
            is not None:  # the exact stress-1 at the landmark answer
        from ldr.objectives import MDS

        row["exact_stress"] = MDS(X, 2).stress(model.M_)
    n_iter = getattr(model, "n_iter_", None)
    row["n_iter"] = int(n_iter) if np.ndim(n_iter) == 0 and n_iter is not None else None
    return row


def run_one(method, kind, n, solver, timeout, memory_limit, seed: int = 0) -> dict:
    cmd = [sys.executable, str(Path(__file__).resolve()), "--child", method, kind, str(n),
           solver or "-", str(seed)]

    def limit():
        if memory_limit:
            resource.setrlimit(resource.RLIMIT_AS, (memory_limit, memory_limit))

    base = {"method": method, "data": kind, "n": n, "seed": seed, "solver": solver}
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=limit, env={**os.environ, "OMP_NUM_THREADS": "1",
                                                   "OPENBLAS_NUM_THREADS": "1",
                                                   "NUMBA_NUM_THREADS": "1"})
    start, hwm = time.perf_counter(), 0.0
    while proc.poll() is None:     # the child's peak RSS so far, also for a fit cut off
        hwm = max(hwm, _vm_hwm_mb(proc.pid))
        if time.perf_counter() - start > timeout:
            proc.kill()
            proc.communicate()
            return {**base, "status": f"over budget (> {timeout:.0f} s; peak RSS by then "
                                      f"{hwm:.0f} MB)"}
        time.sleep(0.5)
    stdout, stderr = proc.communicate()
    if proc.returncode != 0:
        last = (stderr.strip().splitlines() or ["?"])[-1]
        status = "over memory" if "MemoryError" in stderr or "Unable to allocate" in \
            stderr else f"failed: {last[:80]}"
        return {**base, "status": status}
    return {**json.loads(stdout.strip().splitlines()[-1]), "status": "ok"}


def _vm_hwm_mb(pid: int) -> float:
    """The peak resident set (VmHWM) of a running process, in MiB (0 where unreadable)."""
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


#: the rows compared with an estimator's default fit on the same draw: (default, compared key)
COMPARED = {"nca-stochastic": ("nca", "nca_objective"), "nca-lbfgs": ("nca", "nca_objective"),
            "sk-nca": ("nca", "nca_objective"), "lmnn-stochastic": ("lmnn", "merit")}


def signed_gap(row: dict, rows: list[dict]) -> None:
    """Set ``row["gap"]``, (row − default) / |default| on the same n and seed, for the
    COMPARED rows (NCA's Σ p_i is maximized, LMNN's cost minimized)."""
    if row["method"] not in COMPARED or row["status"] != "ok":
        return
    if row["method"].endswith("-stochastic"):
        row["solver"] = "stochastic route"
    default, key = COMPARED[row["method"]]
    exact = next((r for r in rows if r["method"] == default and r["n"] == row["n"]
                  and r.get("seed", 0) == row.get("seed", 0)), None)
    if exact is not None:
        compare(row, exact, key)


def compare(row: dict, ref: dict, key: str) -> None:
    """Set ``row["gap"]`` = (row[key] − ref[key]) / |ref[key]| and ``row["time_ratio"]`` =
    row's fit time ÷ ref's (for sk-nca: scikit-learn's ÷ ldr's) where both fits finished."""
    if row["status"] == "ok" and ref["status"] == "ok" and key in row and key in ref:
        row["gap"] = (row[key] - ref[key]) / max(abs(ref[key]), 1e-300)
        row["time_ratio"] = row["seconds"] / max(ref["seconds"], 1e-300)


def available_stochastic() -> list[str]:
    try:
        from ldr.solvers import REGISTRY
    except ImportError:
        return []
    return [s for s in STOCHASTIC if s in REGISTRY]


def fmt(row) -> list:
    if row["status"] != "ok":
        return [row["method"], row["data"], row["n"], row.get("seed", 0),
                row.get("solver") or "default", row["status"], "", "", "", "", ""]
    merit = ""
    if "nca_objective" in row:
        merit = f"f_NCA {row['nca_objective']:.6g}"
    elif "merit" in row:
        merit = f"{row['merit_name']} {row['merit']:.4g}"
    if "exact_stress" in row:
        merit += f" (exact {row['exact_stress']:.4g})"
    iters = f" ({row['n_iter']} it)" if row.get("n_iter") is not None else ""
    return [row["method"], row["data"], row["n"], row.get("seed", 0),
            row.get("solver") or "default", f"{row['seconds']:.1f} s{iters}",
            f"{row['peak_mb']:.0f} MB", f"{row['peak_mb'] - row['after_data_mb']:.0f} MB",
            f"{row['data_mb']:.0f} MB", merit, f"{row['knn']:.3f}"]


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--n", type=int, nargs="+", default=[10_000, 100_000])
    p.add_argument("--data", choices=("classification", "mnist"), default="classification")
    p.add_argument("--mnist-n", type=int, default=70_000)
    p.add_argument("--methods", nargs="+", default=list(METHODS))
    p.add_argument("--timeout", type=float, default=600.0, help="seconds per fit")
    p.add_argument("--memory-limit", type=float, default=6.0, help="GiB of address space "
                   "per fit (0: none)")
    p.add_argument("--stochastic", action="store_true")
    p.add_argument("--wda", action="store_true", help="add bench_wda_scale.wda_rows(ns)")
    p.add_argument("--seeds", type=int, nargs="+", default=[0], help="make_data's seeds")
    p.add_argument("--child", nargs=5, help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.child:
        method, kind, n, solver, seed = args.child
        print(json.dumps(child(method, kind, int(n), None if solver == "-" else solver,
                               int(seed))))
        return
    from _common import print_header, print_table

    ns = [args.mnist_n] if args.data == "mnist" else args.n
    limit = int(args.memory_limit * 2**30) if args.memory_limit else 0
    print_header("Pairwise methods at scale (one fit per subprocess, BLAS on one thread)", [
        f"data: {args.data}, n = {ns}; per fit: {args.timeout:.0f} s, "
        f"{args.memory_limit:g} GiB address space; above n = {LONG_N} nca-noplateau runs "
        f"{LONG_ITERS} iterations; nca and lmnn are the defaults (stochastic past 20 000); "
        f"seeds {args.seeds}"])
    rows = []
    stochastic = available_stochastic() if args.stochastic else []
    if args.stochastic and not stochastic:
        print("note: no stochastic solver registered (sgd/adam/svrg): exact rows only")
    for n, seed, method in ((n, s, m) for n in ns for s in args.seeds for m in args.methods):
        row = run_one(method, args.data, n, None, args.timeout, limit, seed)
        rows.append(row)
        print(json.dumps(row), flush=True)
        for solver in stochastic if not method.startswith(("sk-nca", "wda-clustering")) \
                and not method.endswith("-stochastic") else ():
            srow = run_one(method, args.data, n, solver, args.timeout, limit, seed)
            compare(srow, row, "merit")
            rows.append(srow)
            print(json.dumps(srow), flush=True)
    for row in rows:
        signed_gap(row, rows)
    print()
    print_table(["method", "data", "n", "seed", "solver", "time", "peak RSS", "beyond data",
                 "X", "merit", "5-NN"],
                [fmt(r) for r in rows])
    gaps = [r for r in rows if "gap" in r]
    if gaps:
        print_table(["method", "n", "seed", "solver",
                     "relative gap to the default (signed: + is a higher objective or cost)",
                     "time ÷ the default's"],
                    [[r["method"], r["n"], r.get("seed", 0), r["solver"] or "default",
                      f"{r['gap']:+.2e}", f"{r['time_ratio']:.2f}"] for r in gaps])
    checked = [r for r in rows if "converged" in r]
    if checked:
        print()
        print_table(["method", "n", "seed", "stochastic route", "converged", "reason"],
                    [[r["method"], r["n"], r.get("seed", 0), r.get("stochastic", ""),
                      r["converged"], r["reason"][:100]]
                     for r in checked])
    approximated = [r for r in rows if "approximation" in r]
    if approximated:
        print()
        print_table(["method", "n", "seed", "approximation (the fitted estimator's own words)"],
                    [[r["method"], r["n"], r.get("seed", 0), r["approximation"]]
                     for r in approximated])
    if args.wda:
        try:
            from bench_wda_scale import wda_rows
        except ImportError:
            print("note: benchmarks/bench_wda_scale.py (wda_rows) is not here: no WDA rows")
        else:
            wda_rows(ns, echo=True)  # one printed row per (n, mode)
    print(f"\nfinished {time.strftime('%H:%M:%S')}; rows: {len(rows)}; "
          f"over budget: {sum('over' in r['status'] for r in rows)}")


if __name__ == "__main__":
    main()
