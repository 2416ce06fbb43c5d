"""WDA at scale (issue 25): time and peak RSS per n, exact (tiled) plans vs mini-batch OT.

Data, for each n: ``make_classification(n, n_features=784, n_informative=50, n_redundant=0,
n_classes=10, random_state=seed)`` (the MNIST-sized generator at n = 70 000), PCA to 20
dimensions (2·C, as the WDA paper's clustering experiments do; ``--pca 0``: the full
d = 784), centered and divided by one scalar so that the total variance is 20 (mean squared
distance between rows 40, at d = 20 and d = 784 alike), a quarter held out (stratified).
The scaling mattered while WDA's default ``reg`` was an absolute 1: the generator's mean
squared distance between rows is about 900 after PCA, so with ``reg = 1`` every within-class
plan is the identity (a degenerate problem, not WDA), and at d = 784 WDA refuses reg = 1.
The default ``reg="auto"`` follows the data's units, so the scaling no longer changes
WassersteinDA's fit; it is kept so that POT's ``reg=1`` and the earlier records compare.

Per row, each fit in a fresh subprocess (``--child``), so that its peak RSS (VmHWM: the
Python process with its libraries, the training and held-out arrays, and the fit) is its
own; BLAS on one thread
(``threadpool_limits(1)``):

* ``exact``: ``WassersteinDA(9, batch_size=None)`` while the largest class has at most
  ``--exact-max`` rows;
* ``mini``: ``WassersteinDA(9, batch_size=AUTO_BATCH)``: what the default does past 3000
  rows in the largest class, at any n (to compare with ``exact`` where that still runs);
* ``auto``: ``WassersteinDA(9)``, the default (``batch_size="auto"``: exact plans up to 3000
  rows in the largest class, mini-batch OT beyond);
* ``pot``: POT's ``ot.dr.wda(X, y, p=9, reg=1, k=10)`` (its default solver, 100 iterations at
  most, from its own random start) for n up to ``--pot-max-n``, under an address-space limit
  of ``--pot-memory`` GiB and the time limit.

Columns: fit time (s; ``cpu_s``: the fit's CPU time, which the other developers' jobs on a
shared machine do not inflate), peak RSS (MiB), SCF iterations (main run), the full-data
trace ratio at the answer (exact plans between whole classes: ``ratio_`` for an exact fit,
``full_data_["full_ratio"]`` after a mini-batch fit and, for POT's answer, ``WDA(X, y, 9)``'s
``ratio``), 10-NN accuracy on the held-out quarter in the 9 projected dimensions.

``wda_rows(ns)`` returns the rows as dicts, for ``bench_pairwise_scale.py`` to fold in.

    flock /tmp/ldr-bench.lock python benchmarks/bench_wda_scale.py --n 10000 20000 70000
    flock /tmp/ldr-bench.lock python benchmarks/bench_wda_scale.py --n 70000 --pca 0
    flock /tmp/ldr-bench.lock python benchmarks/bench_wda_scale.py --n 70000 --pca 0 \
        --modes auto --baseline /work/main/.venv/bin/python   # against main's ldr, same run
    python benchmarks/bench_wda_scale.py --n 70000 --pca 0 --reference 5000  # good answers
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time

import numpy as np

P_DIM = 9
#: the data are scaled to a total variance of this many units (the variance of 20 unit
#: dimensions): mean squared distance between rows 40, at d = 20 and at d = 784 alike
SCALE_DIMS = 20


def _data(n, d=784, pca=20, seed=0):
    from sklearn.datasets import make_classification
    from sklearn.decomposition import PCA
    from sklearn.model_selection import train_test_split

    X, y = make_classification(n_samples=n, n_features=d, n_informative=50, n_redundant=0,
                               n_classes=10, random_state=seed)
    if pca:
        X = PCA(pca, random_state=0).fit_transform(X)
    X -= X.mean(axis=0)
    X /= np.sqrt(np.sum(X * X) / (len(X) * SCALE_DIMS))  # mean squared row distance 2·20
    return train_test_split(X, y, test_size=0.25, random_state=0, stratify=y)


def _knn(Z, y, Zt, yt) -> float:
    from sklearn.neighbors import KNeighborsClassifier

    return float(KNeighborsClassifier(10).fit(Z, y).score(Zt, yt))


def child(path: str, mode: str) -> dict:
    """One fit on the arrays saved at ``path``; the row as a dict (RSS of this process)."""
    from threadpoolctl import threadpool_limits

    with np.load(path) as f:
        X, Xt, y, yt = f["X"], f["Xt"], f["y"], f["yt"]
    with threadpool_limits(1):
        t0, c0 = time.perf_counter(), time.process_time()
        if mode == "pot":
            import ot.dr

            P, proj = ot.dr.wda(X, y, p=P_DIM, reg=1.0, k=10, verbose=0)
            t, cpu = time.perf_counter() - t0, time.process_time() - c0
            from ldr.objectives import WDA

            P = np.linalg.qr(np.asarray(P, dtype=float))[0]
            full = WDA(X, y, P_DIM).ratio(P)
            m = X.mean(axis=0)
            knn = _knn((X - m) @ P, y, (Xt - m) @ P, yt)
            row = {"time_s": t, "cpu_s": cpu, "full_ratio": full, "knn10": knn, "n_iter": None,
                   "batch_size": None}
        else:
            from ldr.estimators import WassersteinDA
            from ldr.estimators.wda_minibatch import AUTO_BATCH

            kw = {"exact": {"batch_size": None}, "mini": {"batch_size": AUTO_BATCH}}
            est = WassersteinDA(P_DIM, **kw.get(mode, {}))
            est.fit(X, y)
            t, cpu = time.perf_counter() - t0, time.process_time() - c0
            full = est.ratio_ if est.full_data_ is None else est.full_data_["full_ratio"]
            row = {"time_s": t, "cpu_s": cpu, "full_ratio": full,
                   "knn10": _knn(est.transform(X), y, est.transform(Xt), yt),
                   "n_iter": est.n_iter_, "converged": bool(est.result_.converged),
                   "batch_size": est.batch_size_}
    row["rss_mib"] = _peak_rss_mib()
    return row


def _peak_rss_mib() -> float:
    """This process's peak resident set (VmHWM of /proc/self/status, Linux), in MiB.  Not
    ``getrusage(RUSAGE_SELF).ru_maxrss``: Linux carries that over fork and exec, so a child
    of a parent that generated 70 000 × 784 data would report the parent's peak."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _run_child(path, mode, timeout, memory_gib=0.0, python=None) -> dict:
    cmd = [python or sys.executable, __file__, "--child", path, mode]
    if memory_gib:
        limit = int(memory_gib * 2**30)
        cmd = ["prlimit", f"--as={limit}", *cmd]
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"status": f"over {timeout} s"}
    if out.returncode != 0:
        last = (out.stderr.strip().splitlines() or ["?"])[-1]
        return {"status": f"failed: {last[:120]}"}
    return {"status": "ok", **json.loads(out.stdout.strip().splitlines()[-1])}


def wda_rows(ns, pca=20, exact_max=3000, modes=("exact", "mini", "auto", "pot"), seed=0,
             timeout=600, pot_max_n=20_000, pot_memory=6.0, echo=False,
             baseline=None) -> list[dict]:
    """One row per (n, mode): "exact" (batch_size=None, only while the largest class has at
    most ``exact_max`` rows), "mini" (batch_size=AUTO_BATCH), "auto" (the default) and "pot"
    (n ≤ ``pot_max_n``); "auto" is left out where it is the exact fit and "mini" where the
    default is this mini-batch fit (the same fit twice)."""
    import tempfile
    from pathlib import Path

    from ldr.estimators.wda_minibatch import EXACT_MAX_CLASS

    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for n in ns:
            X, Xt, y, yt = _data(n, pca=pca, seed=seed)
            path = str(Path(tmp) / f"wda_{n}.npz")
            np.savez(path, X=X, Xt=Xt, y=y, yt=yt)
            largest = int(np.bincount(y).max())
            del X, Xt
            for mode in modes:
                if (mode == "exact" and largest > exact_max) or (mode == "pot"
                                                                 and n > pot_max_n):
                    continue
                if mode == "auto" and largest <= EXACT_MAX_CLASS and "exact" in modes \
                        and largest <= exact_max:
                    continue  # the default is the exact fit here: that row
                if mode == "mini" and largest > EXACT_MAX_CLASS and "auto" in modes:
                    continue  # the default is this mini-batch fit here: its row
                row = {"method": "wda" if mode != "pot" else "pot", "n": n,
                       "d": pca or 784, "seed": seed, "mode": mode, "largest_class": largest,
                       **_run_child(path, mode, timeout, pot_memory if mode == "pot" else 0)}
                rows.append(row)
                if baseline and mode != "pot":  # the same fit by another install of ldr
                    rows.append({**row, "mode": f"{mode}@baseline",
                                 **_run_child(path, mode, timeout, 0, baseline)})
                if echo:
                    for r in rows[-2 if baseline and mode != "pot" else -1:]:
                        print({k: (round(v, 4) if isinstance(v, float) else v)
                               for k, v in r.items()}, flush=True)
    return rows


def reference_rows(n, pca=20, seed=0, sub=5000) -> list[dict]:
    """What a good answer is on the same data (quality only): exact WDA fitted on a stratified
    ``sub``-row subsample of the training rows, LDA (scikit-learn, eigen solver) on that
    subsample and on all rows; each row: the full-data trace ratio (exact plans, all training
    rows) at that answer and 10-NN accuracy on the held-out quarter."""
    from sklearn.discriminant_analysis import LinearDiscriminantAnalysis
    from sklearn.model_selection import train_test_split
    from threadpoolctl import threadpool_limits

    from ldr.estimators import WassersteinDA
    from ldr.objectives import WDA

    X, Xt, y, yt = _data(n, pca=pca, seed=seed)
    full = WDA(X, y, P_DIM)
    full.memory_budget = 2.5 * 8 * float(np.bincount(y).max()) ** 2  # one exp pass a pair
    Xs, _, ys, _ = train_test_split(X, y, train_size=sub, random_state=0, stratify=y)
    m, rows = X.mean(axis=0), []
    with threadpool_limits(1):
        def lda(A, b):
            return LinearDiscriminantAnalysis(solver="eigen", n_components=P_DIM).fit(
                A, b).scalings_[:, :P_DIM]

        fits = {f"exact WDA on {sub} rows": WassersteinDA(P_DIM, batch_size=None).fit(Xs, ys).M_,
                f"LDA on {sub} rows": lda(Xs, ys), "LDA on all rows": lda(X, y)}
        for name, M in fits.items():
            M = np.linalg.qr(M)[0]
            rows.append({"n": n, "d": pca or X.shape[1], "seed": seed, "fit": name,
                         "full_ratio": full.ratio(M),
                         "knn10": _knn((X - m) @ M, y, (Xt - m) @ M, yt)})
    return rows


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, nargs="+", default=[10_000, 20_000, 70_000])
    ap.add_argument("--pca", type=int, default=20, help="0: full d = 784")
    ap.add_argument("--modes", nargs="+", default=["exact", "mini", "auto", "pot"])
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--timeout", type=float, default=600, help="seconds per fit")
    ap.add_argument("--pot-max-n", type=int, default=20_000)
    ap.add_argument("--pot-memory", type=float, default=6.0, help="GiB of address space")
    ap.add_argument("--baseline", help="a Python whose ldr (another checkout's venv) fits "
                    "each row again, on the same data in the same run (mode '...@baseline')")
    ap.add_argument("--reference", type=int, default=0, metavar="SUB",
                    help="instead: exact WDA on a SUB-row subsample and LDA (quality only)")
    ap.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.child:
        print(json.dumps(child(*a.child)))
        return
    if a.reference:
        for n in a.n:
            for row in reference_rows(n, a.pca, a.seed, a.reference):
                print({k: (round(v, 4) if isinstance(v, float) else v)
                       for k, v in row.items()}, flush=True)
        return
    print(f"WDA at scale: make_classification(784 features, 50 informative, 10 classes), "
          f"PCA to {a.pca or 'none (d = 784)'}, total variance {SCALE_DIMS}, seed {a.seed}; "
          f"p = {P_DIM}, WassersteinDA's default reg ('auto'; POT: reg 1); "
          f"one BLAS thread; {time.strftime('%Y-%m-%d %H:%M')}", flush=True)
    wda_rows(a.n, a.pca, modes=a.modes, seed=a.seed, timeout=a.timeout,
             pot_max_n=a.pot_max_n, pot_memory=a.pot_memory, echo=True, baseline=a.baseline)


if __name__ == "__main__":
    main()
