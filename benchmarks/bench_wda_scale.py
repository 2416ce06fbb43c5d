"""WDA at scale (issue 25): time and peak memory per n, exact (tiled) vs mini-batch plans.

For each n: ``make_classification(n, n_features=784, n_informative=50, n_classes=10)``
(the MNIST-sized generator at n = 70 000), PCA to 20 dimensions, then
``WassersteinDA(9)`` with exact plans (``batch_size=None``, where the largest class fits
``--exact-max``) and at its default (``batch_size="auto"``: mini-batch OT beyond 3000 rows
per class).  Per row: fit time, peak traced memory (tracemalloc), the full-data trace ratio
at the answer where exact plans run, and 10-NN accuracy on a held-out quarter.  POT's
``ot.dr.wda`` is run where installed, in a subprocess with a time limit.

``wda_rows(ns)`` returns the rows as dicts, for ``bench_pairwise_scale.py`` to fold in.

    flock /tmp/ldr-bench.lock python benchmarks/bench_wda_scale.py --n 10000 70000
"""

from __future__ import annotations

import argparse
import time
import tracemalloc

import numpy as np
from sklearn.datasets import make_classification
from sklearn.decomposition import PCA
from sklearn.model_selection import train_test_split
from sklearn.neighbors import KNeighborsClassifier
from threadpoolctl import threadpool_limits


def _data(n, d=784, pca=20, seed=0):
    X, y = make_classification(n_samples=n, n_features=d, n_informative=50, n_redundant=0,
                               n_classes=10, random_state=seed)
    if pca:
        X = PCA(pca, random_state=0).fit_transform(X)
    return train_test_split(X, y, test_size=0.25, random_state=0, stratify=y)


def _fit(X, y, Xt, yt, **kw):
    from ldr.estimators import WassersteinDA

    tracemalloc.start()
    t0 = time.perf_counter()
    est = WassersteinDA(9, **kw).fit(X, y)
    t = time.perf_counter() - t0
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    knn = KNeighborsClassifier(10).fit(est.transform(X), y).score(est.transform(Xt), yt)
    full = est.full_data_["full_ratio"] if est.full_data_ else est.ratio_
    return {"time_s": t, "peak_mib": peak / 2**20, "ratio": est.ratio_, "full_ratio": full,
            "knn10": knn, "converged": bool(est.result_.converged),
            "batch_size": est.batch_size_}


def wda_rows(ns, pca=20, exact_max=3000, modes=("exact", "auto")) -> list[dict]:
    """One row per (n, mode): mode "exact" (batch_size=None, only while the largest class has
    at most ``exact_max`` rows) and "auto" (the default)."""
    rows = []
    with threadpool_limits(1):
        for n in ns:
            X, Xt, y, yt = _data(n, pca=pca)
            for mode in modes:
                if mode == "exact" and np.bincount(y).max() > exact_max:
                    continue
                kw = {"batch_size": None} if mode == "exact" else {}
                rows.append({"method": "wda", "n": n, "d": X.shape[1], "mode": mode,
                             **_fit(X, y, Xt, yt, **kw)})
    return rows


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, nargs="+", default=[10_000, 70_000])
    ap.add_argument("--pca", type=int, default=20, help="0: full d = 784")
    ap.add_argument("--modes", nargs="+", default=["exact", "auto"])
    a = ap.parse_args()
    for row in wda_rows(a.n, a.pca, modes=a.modes):
        print({k: (round(v, 4) if isinstance(v, float) else v) for k, v in row.items()},
              flush=True)


if __name__ == "__main__":
    main()
