"""Benchmark: WassersteinDA's entropic regularization relative to the data's units
(``reg="auto"``) against the absolute ``reg=1`` (its former default, POT's), POT's
``ot.dr.wda`` and OrthogonalLDA.

Run from the checkout root::

    flock /tmp/ldr-bench.lock .venv/bin/python -P benchmarks/bench_wda_reg.py

``reg="auto"`` is (r/d) · 2 tr(S_w): the mean squared distance between two samples of one
class, expected in a random r-dimensional projection (:func:`ldr.objectives.wda.within_reg`).
It has no constant to tune; it was fixed before any of these tables was run.

* **Development tables**: scikit-learn's iris, wine and breast_cancer (``_tables.DEVELOPMENT``),
  standardized per fold, as every ldr benchmark has used them.
* **Held-out tables**: the sealed list of ``held_out.py`` (its hash printed below; no default
  was chosen on them), raw — in their generators' units — and standardized.
* **Fit-only tables** of the held-out list: a 70 000 × 784 ``make_classification`` table (raw
  and after PCA to 20 components) and digits on the 0–255 pixel scale: does the default fit
  (converged, or the reason), and does ``reg=1``.

Reported: the mean 5-nearest-neighbour accuracy in each projection over 5 stratified folds,
r = min(3, n_features − 1, n_classes − 1).  POT runs at its example's settings
(``reg=1, k=10, maxiter=100``), on standardized data only (its ``reg`` is absolute too).
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

import numpy as np
from sklearn.datasets import load_breast_cancer, load_iris, load_wine
from sklearn.decomposition import PCA

from ldr.estimators import OrthogonalLDA, WassersteinDA

try:
    import _common as common
    import bench_wda_singular as singular
    import held_out
except ImportError:  # run with `python -P`: the script's folder is not on sys.path
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import _common as common
    import bench_wda_singular as singular
    import held_out


def knn_accuracy(make, X, y, standardize: bool) -> float:
    """``bench_wda_singular.knn_accuracy``; NaN if a fit refuses the data (ValueError)."""
    try:
        return singular.knn_accuracy(make, X, y, standardize)
    except ValueError:
        return float("nan")


def accuracy_rows(tables, with_raw: bool):
    rows = []
    for name, X, y in tables:
        r = min(3, X.shape[1] - 1, len(np.unique(y)) - 1)
        for standardize in ((False, True) if with_raw else (True,)):
            acc = {"auto": knn_accuracy(lambda r=r: WassersteinDA(r), X, y, standardize),
                   "reg1": knn_accuracy(lambda r=r: WassersteinDA(r, reg=1.0), X, y,
                                        standardize),
                   "pot": (knn_accuracy(lambda r=r: singular.PotWDA(r), X, y, standardize)
                           if standardize else float("nan")),
                   "olda": knn_accuracy(lambda r=r: OrthogonalLDA(r), X, y, standardize)}
            rows.append([name, "standardized" if standardize else "raw",
                         f"{X.shape[0]}×{X.shape[1]}, {len(np.unique(y))} classes", str(r),
                         *(("refused" if np.isnan(v) else f"{v:.3f}") if key != "pot" or
                           standardize else "—" for key, v in acc.items())])
            print(" | ".join(rows[-1]), file=sys.stderr, flush=True)
    return rows


def fit_row(name, X, y, reg):
    r = len(np.unique(y)) - 1
    began = time.perf_counter()
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            est = WassersteinDA(r, reg=reg).fit(X, y)
    except ValueError as exc:
        return [name, f"{X.shape[0]}×{X.shape[1]}", str(r), repr(reg), "refused", "—",
                str(exc)[:90]]
    note = "; ".join(sorted({str(w.message)[:60] for w in caught})) or "—"
    return [name, f"{X.shape[0]}×{X.shape[1]}", str(r), repr(reg),
            "converged" if est.result_.converged else "not converged",
            f"{time.perf_counter() - began:.1f} s", f"reg_ {est.reg_:.3g}; {note}"]


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.parse_args(argv)
    warnings.simplefilter("ignore", UserWarning)
    with common.single_threaded():
        common.print_header("WassersteinDA: reg relative to the data's units", [
            "command: python -P benchmarks/bench_wda_reg.py",
            f"held-out list sha256 {held_out.digest()}",
            "mean 5-NN accuracy in the projection over 5 stratified folds; r = min(3, d - 1, "
            "n_classes - 1); 'refused': the fit raised ValueError; BLAS 1 thread"])
        headers = ["table", "units", "shape", "r", "WDA auto", "WDA reg=1", "POT wda",
                   "OrthogonalLDA"]
        dev = [(name, *load(return_X_y=True)) for name, load in
               (("iris", load_iris), ("wine", load_wine), ("breast_cancer", load_breast_cancer))]
        print("\ndevelopment tables")
        common.print_table(headers, accuracy_rows(dev, with_raw=True))
        held = [(name, *held_out.load(name)) for name in held_out.names(fit_only=False)]
        print("\nheld-out tables")
        common.print_table(headers, accuracy_rows(held, with_raw=True))
        print("\nfit-only held-out tables (one fit on all rows; the time is the fit's, single "
              "BLAS thread)")
        rows = []
        for name in held_out.names(fit_only=True):
            X, y = held_out.load(name)
            variants = [(name, X)]
            if X.shape[1] > 100:
                variants.append((f"{name} after PCA to 20",
                                 PCA(20, random_state=0).fit_transform(X)))
            for label, Z in variants:
                for reg in ("auto", 1.0):
                    rows.append(fit_row(label, Z, y, reg))
                    print(" | ".join(rows[-1]), file=sys.stderr, flush=True)
        common.print_table(["table", "shape", "r", "reg", "outcome", "time", "note"], rows)


if __name__ == "__main__":
    main()
