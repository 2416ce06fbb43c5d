"""Benchmark: supervised HSIC at n = 10³–10⁶ — time per ISM iteration, peak memory, Φ against
its arithmetic limit, Dask tiles, random-feature / Nyström approximations.

Run from the checkout root, under the shared lock (timings must not overlap)::

    flock /tmp/ldr-bench.lock .venv/bin/python -P benchmarks/bench_hsic_scale.py --quick
    flock /tmp/ldr-bench.lock .venv/bin/python -P benchmarks/bench_hsic_scale.py   # ~20 min

What is measured.  Data: ``make_classification(n, 32 features, 12 informative, 0 redundant,
10 classes, one cluster per class, random_state=0)`` (redundant features would make X
rank-deficient and leave the optimal subspace undetermined), standardized, q = 9, Gaussian kernel
with σ the median pairwise distance (``SupervisedHSIC`` defaults, Γ = H YYᵀ H / n² as its
low-rank factor).  scikit-learn's covtype is not bundled (``fetch_covtype`` downloads), so
the second data set is :func:`covtype_like`, a documented generator with covtype's shape:
54 features (10 continuous, 4 one-hot "wilderness areas", 40 one-hot "soil types"), 7
classes with covtype's class proportions, class-dependent means and category probabilities.

Every configuration runs in a fresh child process (``--child``) with BLAS pinned to one
thread (threadpoolctl), so its peak resident memory (``resource.getrusage(RUSAGE_SELF)
.ru_maxrss``, including the data) is its own.  Sections:

1. **Φ vs its arithmetic limit** (n = 4000, 16000, 32000): the median time of one Φ of the
   default objective against the measured time of its GEMM plus its ``exp``: the
   (n×n)(n×(d+q)) product the issue names (computed as the same b×n row-block products, b
   the default block size) and ``np.exp`` over n² entries (in place, on the block's real
   arguments −β/2σ²); "today" is the one-block layout (``block_size=n``, the old default)
   where it fits in memory.
2. **Exact ISM** (``SupervisedHSIC()`` defaults, n from 10³ to 10⁵): seconds per ISM
   iteration (``result_.time / n_iter``), iterations, converged, peak RSS; and the same ISM
   with ``backend="dask"`` on a 2-worker, 1-thread-each ``dask.distributed.LocalCluster``
   (processes; the data scattered once), and on Dask's in-process threaded scheduler (2
   threads), against the in-process loop on 1 and on 2 BLAS threads.
3. **Approximations**: ``SupervisedHSIC(approximation="rff" | "nystroem", n_kernel_features=m)``:
   time per iteration, peak RSS and, at n = 32000 where exact ISM runs, the exact cost at the
   approximate answer against the exact optimum (relative gap) and the largest principal
   angle between the two subspaces, for m ∈ {128, 512, 2048}; then n = 10⁶.
4. **SVM accuracy**: 10-fold ``StratifiedKFold(shuffle=True, random_state=0)`` accuracy of
   ``SupervisedHSIC(q) → SVC()`` on wine (q = 4), breast_cancer (2), digits (9) with the new
   defaults and with ``block_size=n`` (one block: the old default's layout).
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

try:
    import _common as common
except ImportError:  # run with `python -P`: the script's folder is not on sys.path
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import _common as common

TMP = Path("/tmp/ldr-bench-hsic-scale")
Q = 9

# covtype's class proportions (Cover_Type 1..7 in the UCI data, 581 012 samples)
COVTYPE_CLASSES = np.array([211840, 283301, 35754, 2747, 9493, 17367, 20510], dtype=float)


def covtype_like(n: int, seed: int = 0):
    """``(X, y)`` shaped like UCI covtype: 10 continuous features with class-dependent means
    (spread 0.7 between classes, unit noise), one of 4 "wilderness areas" and one of 40 "soil
    types" per sample, drawn from class-dependent Dirichlet(0.5) probabilities, one-hot
    encoded (54 features); 7 classes in covtype's proportions."""
    rng = np.random.default_rng(seed)
    p = COVTYPE_CLASSES / COVTYPE_CLASSES.sum()
    y = rng.choice(7, size=n, p=p)
    means = 0.7 * rng.standard_normal((7, 10))
    X = np.empty((n, 54))
    X[:, :10] = means[y] + rng.standard_normal((n, 10))
    X[:, 10:] = 0.0
    for start, k in ((10, 4), (14, 40)):
        probs = rng.dirichlet(np.full(k, 0.5), size=7)
        u = rng.random(n)
        cat = (u[:, None] > np.cumsum(probs[y], axis=1)).sum(axis=1).clip(max=k - 1)
        X[np.arange(n), start + cat] = 1.0
    return X, y


def dataset(name: str, n: int):
    if name == "covtype-like":
        return covtype_like(n)
    from sklearn.datasets import make_classification

    return make_classification(n, 32, n_informative=12, n_redundant=0, n_classes=10,
                               n_clusters_per_class=1, random_state=0)


def peak_gb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20   # KiB on Linux


# -- children ---------------------------------------------------------------------------------
def child_phi(n: int, repeats: int) -> dict:
    from ldr.objectives import HSIC

    X, y = dataset("classification", n)
    Xs = (X - X.mean(0)) / X.std(0)
    out = {}
    for label, bs in (("default", None), ("one block", n)):
        if bs == n and 8.0 * n * n * 3 > 3 * 2**30:      # the old layout needs ~3 n² doubles
            continue
        obj = HSIC.supervised(Xs, y, Q, block_size=bs)
        W = obj.heuristic()

        def phi(obj=obj, W=W):
            obj.forget()
            return obj.phi(W)

        out[label] = common.median_time(common.timed(phi), repeats)[0]
        if label == "default":
            b, s2 = obj.block_size, obj.kernel.s2
    # the arithmetic limit: the same b×n row-block products and n² exps
    Z = Xs @ obj.heuristic()
    XZ = np.hstack([Xs, Z])
    rn = np.einsum("ij,ij->i", Z, Z)
    arg = -(rn[:b, None] + rn[None, :] - 2.0 * Z[:b] @ Z.T) / s2
    blk, o = np.empty((b, n)), np.empty((b, XZ.shape[1]))
    np.exp(arg, out=blk)

    def gemm():
        for _ in range(0, n, b):
            np.matmul(blk, XZ, out=o)

    def exps():
        for _ in range(0, n, b):
            np.exp(arg, out=blk)

    out["gemm"] = common.median_time(common.timed(gemm), repeats)[0]
    out["exp"] = common.median_time(common.timed(exps), repeats)[0]
    out["block"] = b
    return out


def _fit_record(est, t0) -> dict:
    res = est.result_
    return {"time_per_iter": res.time / max(res.n_iter, 1), "n_iter": res.n_iter,
            "converged": bool(res.converged), "cost": float(res.cost),
            "reason": res.reason[:60], "wall": time.perf_counter() - t0}


def child_ism(name: str, n: int, backend: str, approximation, m: int, save: str | None,
              blas_threads: int, max_iter: int) -> dict:
    from ldr.estimators import SupervisedHSIC

    X, y = dataset(name, n)
    kwargs = {"backend": "dask"} if backend in ("dask-cluster", "dask-threads") else {}
    if approximation:
        kwargs.update(approximation=approximation, n_kernel_features=m)
    est = SupervisedHSIC(n_components=Q, max_iter=max_iter, **kwargs)
    cluster = client = None
    if backend == "dask-cluster":
        from distributed import Client, LocalCluster

        cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                               dashboard_address=None)
        client = Client(cluster)
    try:
        with common.threadpool_limits(blas_threads):
            if backend == "dask-threads":
                import dask

                with dask.config.set(scheduler="threads", num_workers=2):
                    t0 = time.perf_counter()
                    est.fit(X, y)
            else:
                t0 = time.perf_counter()
                est.fit(X, y)
    finally:
        if client is not None:
            client.close()
            cluster.close()
    out = _fit_record(est, t0)
    if save:
        np.save(save, est.M_)
    return out


def child_accuracy(n: int, exact_w: str, approximations: list) -> dict:
    """Exact cost at each approximate answer vs the exact optimum, and principal angles."""
    from ldr.manifolds import sin_largest_angle
    from ldr.objectives.hsic import HSIC

    X, y = dataset("classification", n)
    Xs = (X - X.mean(0)) / X.std(0)
    exact = HSIC.supervised(Xs, y, Q)
    W_star = np.load(exact_w)
    f_star = exact.cost(W_star)
    out = {}
    for path in approximations:
        W = np.load(path)
        f = exact.cost(W)
        s = min(1.0, sin_largest_angle(W, W_star))
        out[path] = {"gap": (f - f_star) / abs(f_star), "angle_deg": float(np.degrees(
            np.arcsin(s))), "f": f, "f_star": f_star}
    return out


def child_svm() -> dict:
    from sklearn.datasets import load_breast_cancer, load_digits, load_wine
    from sklearn.model_selection import StratifiedKFold, cross_val_score
    from sklearn.pipeline import make_pipeline
    from sklearn.svm import SVC

    from ldr.estimators import SupervisedHSIC

    out = {}
    cv = StratifiedKFold(10, shuffle=True, random_state=0)
    for name, load, q in (("wine", load_wine, 4), ("breast_cancer", load_breast_cancer, 2),
                          ("digits", load_digits, 9)):
        X, y = load(return_X_y=True)
        X = X[:, X.std(axis=0) > 0]
        row = {}
        for label, bs in (("default", None), ("one block", X.shape[0])):
            pipe = make_pipeline(SupervisedHSIC(n_components=q, block_size=bs), SVC())
            scores = cross_val_score(pipe, X, y, cv=cv)
            row[label] = (float(scores.mean()), float(scores.std()))
        out[name] = row
    return out


# -- parent -----------------------------------------------------------------------------------
def run_child(*args, timeout=3600) -> dict:
    cmd = [sys.executable, "-P", str(Path(__file__).resolve()), "--child", *map(str, args)]
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    if proc.returncode != 0:
        return {"error": proc.stderr.strip().splitlines()[-1] if proc.stderr else "failed",
                "wall": time.perf_counter() - t0}
    return json.loads(proc.stdout.strip().splitlines()[-1])


def child_main(argv):
    kind = argv[0]
    with common.single_threaded():
        if kind == "phi":
            out = child_phi(int(argv[1]), int(argv[2]))
        elif kind == "ism":
            name, n, backend, approx, m, save, threads, max_iter = argv[1:9]
            out = child_ism(name, int(n), backend, None if approx == "-" else approx, int(m),
                            None if save == "-" else save, int(threads), int(max_iter))
        elif kind == "accuracy":
            out = child_accuracy(int(argv[1]), argv[2], argv[3:])
        else:
            out = child_svm()
    out["peak_gb"] = peak_gb()
    print(json.dumps(out))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes only (smoke run)")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--sections", default="phi,exact,dask,approx,svm")
    parser.add_argument("--max-exact", type=int, default=100_000)
    parser.add_argument("--max-approx", type=int, default=1_000_000)
    parser.add_argument("--max-iter", type=int, default=100)
    args = parser.parse_args()
    sections = set(args.sections.split(","))
    TMP.mkdir(exist_ok=True)
    common.print_header("HSIC at scale: bounded memory, fused Φ, Dask tiles, approximations", [
        "supervised HSIC, Gaussian kernel, q = 9; each configuration in its own process, "
        "BLAS on 1 thread unless said;",
        "peak = ru_maxrss of that process (data included); s/iter = ISM's Result.time / "
        "iterations", f"cpu count: {os.cpu_count()}"])
    quick = args.quick
    if "phi" in sections:
        print("1. One Φ against its arithmetic limit (GEMM (n×n)(n×(d+q)) + exp over n²)")
        rows = []
        for n in ((2000, 4000) if quick else (4000, 16000, 32000)):
            r = run_child("phi", n, args.repeats)
            if "error" in r:
                rows.append([n, r["error"]] + [""] * 6)
                continue
            limit = r["gemm"] + r["exp"]
            today = r.get("one block")
            rows.append([n, r["block"], common.fmt_time(r["default"]), common.fmt_time(r["gemm"]),
                         common.fmt_time(r["exp"]), f"{r['default'] / limit:.2f}",
                         common.fmt_time(today) if today else "(n² too big)",
                         f"{today / r['default']:.2f}" if today else "", f"{r['peak_gb']:.2f}"])
        common.print_table(["n", "block", "Φ", "GEMM", "exp", "Φ ÷ (GEMM+exp)",
                            "Φ one block", "one block ÷ Φ", "peak GB"], rows)
        print()
    exact_w = {}
    if "exact" in sections:
        print("2. Exact ISM, SupervisedHSIC() defaults (in-process block loop)")
        rows = []
        sizes = (1000, 4000) if quick else (1000, 4000, 16000, 32000, 100_000)
        for name in ("classification", "covtype-like"):
            for n in sizes:
                if n > args.max_exact or (name == "covtype-like" and n > 16000):
                    continue
                save = str(TMP / f"exact-{name}-{n}.npy")
                r = run_child("ism", name, n, "numpy", "-", 0, save, 1, args.max_iter,
                              timeout=7200)
                exact_w[(name, n)] = save
                rows.append(_ism_row(name, n, "exact", r))
        common.print_table(["data", "n", "method", "s/iter", "iters", "converged", "wall",
                            "peak GB", "stop"], rows)
        print()
    if "dask" in sections:
        print("3. Threads and Dask tiles, exact ISM (same fit)")
        n = 4000 if quick else 16000
        rows = []
        for label, backend, threads in (("loop, BLAS 1 thread", "numpy", 1),
                                        ("loop, BLAS 2 threads", "numpy", 2),
                                        ("dask threads (2), BLAS 1", "dask-threads", 1),
                                        ("dask LocalCluster 2×1", "dask-cluster", 1)):
            r = run_child("ism", "classification", n, backend, "-", 0, "-", threads,
                          args.max_iter)
            rows.append(_ism_row("classification", n, label, r))
        common.print_table(["data", "n", "method", "s/iter", "iters", "converged", "wall",
                            "peak GB", "stop"], rows)
        print("(peak GB of the cluster run is the parent process only; its 2 workers hold "
              "the scattered data too)")
        print()
    if "approx" in sections:
        print("4. Approximations: time, memory, and exact cost at the approximate answer")
        n_acc = 4000 if quick else 32000
        ms = (128, 512) if quick else (128, 512, 2048)
        rows, saved = [], []
        for approx in ("rff", "nystroem"):
            for m in ms:
                save = str(TMP / f"{approx}-{m}-{n_acc}.npy")
                r = run_child("ism", "classification", n_acc, "numpy", approx, m, save, 1,
                              args.max_iter)
                rows.append(_ism_row("classification", n_acc, f"{approx} m={m}", r))
                if "error" not in r:
                    saved.append(save)
        key = ("classification", n_acc)
        if key not in exact_w and Path(TMP / f"exact-classification-{n_acc}.npy").exists():
            exact_w[key] = str(TMP / f"exact-classification-{n_acc}.npy")
        acc = run_child("accuracy", n_acc, exact_w[key], *saved) if key in exact_w else {}
        for row, path in zip(rows, saved):
            a = acc.get(path)
            row += [f"{a['gap']:.2e}", f"{a['angle_deg']:.2f}"] if a else ["", ""]
        for n, approx, m in ((1_000_000, "rff", 512), (1_000_000, "nystroem", 512)):
            if quick or n > args.max_approx:
                continue
            r = run_child("ism", "classification", n, "numpy", approx, m, "-", 1,
                          args.max_iter, timeout=3600)
            rows.append(_ism_row("classification", n, f"{approx} m={m}", r) + ["", ""])
        if not quick:
            r = run_child("ism", "covtype-like", 100_000, "numpy", "rff", 512, "-", 1,
                          args.max_iter)
            rows.append(_ism_row("covtype-like", 100_000, "rff m=512", r) + ["", ""])
        common.print_table(["data", "n", "method", "s/iter", "iters", "converged", "wall",
                            "peak GB", "stop", "exact gap", "angle °"], rows)
        print(f"(exact gap = (f(W_approx) − f(W_exact))/|f(W_exact)| with f the exact cost "
              f"at n = {n_acc}; angle = largest principal angle)")
        print()
    if "svm" in sections:
        print("5. 10-fold SVM accuracy, SupervisedHSIC → SVC: new defaults vs one block")
        r = run_child("svm")
        rows = [[name, f"{v['default'][0]:.4f} ± {v['default'][1]:.3f}",
                 f"{v['one block'][0]:.4f} ± {v['one block'][1]:.3f}",
                 "yes" if v["default"] == v["one block"] else "NO"]
                for name, v in r.items() if isinstance(v, dict)]
        common.print_table(["dataset", "defaults", "block_size=n", "same"], rows)


def _ism_row(name, n, label, r):
    if "error" in r:
        return [name, n, label, "error: " + r["error"][:50], "", "", "", "", ""]
    return [name, n, label, common.fmt_time(r["time_per_iter"]), r["n_iter"],
            r["converged"], common.fmt_time(r["wall"]), f"{r['peak_gb']:.2f}", r["reason"]]


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        child_main(sys.argv[2:])
    else:
        main()
