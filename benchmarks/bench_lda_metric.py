"""Where OrthogonalLDA's 3-NN accuracy goes against scikit-learn's LDA: the subspace or the
metric (issue 23).

On ``bench_real.py``'s classification tables, 5-fold stratified 3-NN accuracy of
StandardScaler → step → 3-NN for four steps:

* (a) ``OrthogonalLDA(whiten=False)``: the orthonormal projection X W;
* (b) ``OrthogonalLDA()`` (``whiten=True``): X W (Wᵀ S_w W)^(-1/2) Q, unit within-class
  covariance in the subspace (the class docstring's Eq. W);
* (c) scikit-learn's ``LinearDiscriminantAnalysis`` (its transform whitens S_w);
* (d) scikit-learn's LDA subspace made orthonormal (QR of its ``scalings_``).

(a) − (c) is the whole gap, (b) − (c) what is left once the metric is scikit-learn's, (d) − (c)
what the metric alone costs in scikit-learn's own subspace.  Also the trace ratio of both
subspaces (ldr's must be at least scikit-learn's: it maximizes it).  No timing: it needs no
benchmark lock.

    python -P benchmarks/bench_lda_metric.py
"""

from __future__ import annotations

import sys
import warnings
from pathlib import Path

import numpy as np
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.discriminant_analysis import LinearDiscriminantAnalysis
from sklearn.model_selection import StratifiedKFold, cross_val_score
from sklearn.neighbors import KNeighborsClassifier
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from ldr.estimators import OrthogonalLDA
from ldr.objectives import LDA

sys.path.insert(0, str(Path(__file__).resolve().parent))  # `python -P` leaves it out
import _common  # noqa: E402
import _tables  # noqa: E402


class OrthonormalSkLDA(BaseEstimator, TransformerMixin):
    """(d): scikit-learn's LDA subspace with an orthonormal basis."""

    def fit(self, X, y):
        sk = LinearDiscriminantAnalysis().fit(X, y)
        self.mean_ = sk.xbar_
        self.W_ = np.linalg.qr(sk.scalings_[:, : len(sk.classes_) - 1])[0]
        return self

    def transform(self, X):
        return (X - self.mean_) @ self.W_


def accuracy(step, t) -> float:
    pipe = make_pipeline(StandardScaler(), step, KNeighborsClassifier(3))
    cv = StratifiedKFold(5, shuffle=True, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return float(np.mean(cross_val_score(pipe, t.X, t.y, cv=cv)))


def ratios(t) -> tuple[float, float]:
    """Trace ratios of ldr's and scikit-learn's subspaces (nan where r = n_features)."""
    Xs = StandardScaler().fit_transform(t.X)
    ours = OrthogonalLDA().fit(Xs, t.y)
    r = ours.n_components_
    if r >= Xs.shape[1]:
        return np.nan, np.nan
    sk = LinearDiscriminantAnalysis().fit(Xs, t.y)
    obj = LDA(Xs, t.y, r, shrinkage=1e-9)
    return (float(obj.ratio(np.linalg.qr(ours.components_.T)[0])),
            float(obj.ratio(np.linalg.qr(sk.scalings_[:, :r])[0])))


def main() -> None:
    _common.print_header("OrthogonalLDA's 3-NN accuracy: subspace or metric", [
        "5-fold stratified 3-NN accuracy of StandardScaler → step → 3-NN; (a) X W, "
        "(b) whitened (default), (c) sklearn LDA, (d) sklearn's subspace orthonormal"])
    rows, diffs = [], {True: [], False: []}
    with _common.single_threaded():
        for t in _tables.classification_tables():
            if t.X.shape[1] < 2:
                continue
            acc = [accuracy(OrthogonalLDA(whiten=False), t), accuracy(OrthogonalLDA(), t),
                   accuracy(LinearDiscriminantAnalysis(), t), accuracy(OrthonormalSkLDA(), t)]
            ours, theirs = ratios(t)
            dev = t.name in _tables.DEVELOPMENT
            diffs[dev].append([100 * (a - acc[2]) for a in acc])
            rows.append([t.name + ("" if dev else " *"), *(f"{a:.3f}" for a in acc),
                         f"{ours:.4g}", f"{theirs:.4g}"])
            print(f"  {t.name:22s} done", flush=True)
    _common.print_table(["table (* held out)", "(a) X W", "(b) whitened", "(c) sklearn",
                         "(d) sklearn orth.", "ratio ldr", "ratio sklearn"], rows, left=1)
    print("\nmean difference to (c), points: (a), (b), (d)")
    for dev in (True, False):
        mean = np.mean(diffs[dev], axis=0)
        print(f"  {'development' if dev else 'held out':12s} {mean[0]:+.2f}  {mean[1]:+.2f}  "
              f"{mean[3]:+.2f}")


if __name__ == "__main__":
    main()
