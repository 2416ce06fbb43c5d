"""Benchmark: fitting where the within-class scatter S_w is singular (the default of
OrthogonalLDA), against scikit-learn's LinearDiscriminantAnalysis.

Run from the checkout root::

    flock /tmp/ldr-bench.lock .venv/bin/python -P benchmarks/bench_singular.py
    flock /tmp/ldr-bench.lock .venv/bin/python -P benchmarks/bench_singular.py --quick

Tables (every model in a pipeline after StandardScaler, as the OrthogonalLDA docstring
advises; scikit-learn's bundled data and statsmodels' datasets, nothing downloaded):

* S_w singular only through directions without any variance (the span of the data is
  smaller than the feature space): ``digits`` (constant pixels), ``anes96`` and ``fair``
  with every level of their categorical columns one-hot encoded (the dummies of a variable
  sum to 1: the dummy trap of survey tables), ``randhie`` with the omitted health dummy
  added back.  5-fold stratified cross-validation.
* S_w singular within the span (fewer samples than features: along some directions every
  class is a single point, and the trace ratio is unbounded): training sets of n < d rows
  drawn 20 times (stratified) from ``digits``, ``breast_cancer``, ``wine``, the rest held
  out.  The default was **chosen** on the tables marked "choose" and **checked** on those
  marked "check" (other tables and sizes, never used to choose).

Methods:

* ``sk svd`` — scikit-learn's default solver (pseudo-inverse of S_w in the span of the
  within-class residuals);  ``sk lsqr auto`` — scikit-learn with Ledoit–Wolf shrinkage;
* ``ldr default`` — ``OrthogonalLDA()``: in the span of the data (the total scatter's
  non-null eigenvectors); where S_w is still singular there, OAS shrinkage on that span
  (``n − n_classes`` degrees of freedom);
* ``ldr null space`` — the "honest" limit: where S_w is singular on the span, the
  directions with zero within-class and largest between-class scatter (ratio +∞; Chen et
  al.'s null-space LDA), classified by the nearest projected class mean;
* ``ldr OAS(n)`` — the default with n instead of n − n_classes degrees of freedom;
* ``ldr LW`` — the span, then Ledoit–Wolf's coefficient (needs the rows' fourth moments,
  which one-pass statistics do not have) instead of OAS;
* ``ldr reg='auto'`` — OAS shrinkage everywhere in the full feature space.

Reported: mean accuracy over the folds/draws and the median fit time relative to
scikit-learn's default (BLAS one thread).  A last table checks WassersteinDA, which cannot
be shrunk, on the n < d draws, by 1-nearest-neighbour accuracy in the projection: its
default (the span of the data, then the top n − n_classes principal directions,
Fisherfaces' recipe), the span of S_w (the directions where classes collapse dropped, as
scikit-learn's SVD solver drops them) and PCA to n − n_classes components first.
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path
from unittest import mock

import numpy as np
import pandas as pd
import scipy.linalg
import statsmodels.api as sm
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.covariance import ledoit_wolf_shrinkage
from sklearn.datasets import load_breast_cancer, load_digits, load_wine
from sklearn.decomposition import PCA
from sklearn.discriminant_analysis import LinearDiscriminantAnalysis as SkLDA
from sklearn.model_selection import StratifiedKFold, StratifiedShuffleSplit
from sklearn.neighbors import KNeighborsClassifier
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from ldr.data.rows import moments
from ldr.data.validation import oas_shrinkage, span_basis
from ldr.estimators import OrthogonalLDA, WassersteinDA
from ldr.objectives.transport import class_scatters

try:
    import _common as common
except ImportError:  # run with `python -P`: the script's folder is not on sys.path
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import _common as common


def _onehot(df, numeric, categorical):
    return pd.concat([df[numeric]] + [pd.get_dummies(df[c].astype(int), prefix=c)
                                      for c in categorical], axis=1).to_numpy(float)


def tables():
    """(name, role, X, y, split): split "cv" or a training size n < d."""
    X, y = load_digits(return_X_y=True)
    yield "digits (constant pixels)", "span", X, y, "cv"
    df = sm.datasets.anes96.load_pandas().data
    X = _onehot(df, ["popul", "TVnews", "selfLR", "ClinLR", "DoleLR", "age", "logpopul"],
                ["PID", "educ"])
    yield "anes96, all dummies", "span", X, df.vote.to_numpy(int), "cv"
    df = sm.datasets.fair.load_pandas().data
    X = _onehot(df, ["rate_marriage", "age", "yrs_married", "children", "religious", "educ"],
                ["occupation", "occupation_husb"])
    yield "fair, all dummies", "span", X, (df.affairs > 0).to_numpy(int), "cv"
    df = sm.datasets.randhie.load_pandas().data
    X = np.column_stack([df.drop(columns=["mdvis"]).to_numpy(float),
                         1 - df[["hlthg", "hlthf", "hlthp"]].sum(axis=1)])
    yield "randhie + omitted dummy", "span", X, (df.mdvis > 0).to_numpy(int), "cv"
    X, y = load_digits(return_X_y=True)
    yield "digits", "choose", X, y, 50
    X, y = load_breast_cancer(return_X_y=True)
    yield "breast_cancer", "choose", X, y, 20
    X, y = load_wine(return_X_y=True)
    yield "wine", "choose", X, y, 9
    X, y = load_digits(return_X_y=True)
    yield "digits", "check", X, y, 30
    X, y = load_breast_cancer(return_X_y=True)
    yield "breast_cancer", "check", X, y, 12
    df = sm.datasets.star98.load_pandas().data
    yield ("star98", "check", df.iloc[:, 2:].to_numpy(float),
           (df.NABOVE > df.NBELOW).to_numpy(int), 16)
    df = sm.datasets.anes96.load_pandas().data
    X = _onehot(df, ["popul", "TVnews", "selfLR", "ClinLR", "DoleLR", "age", "logpopul"],
                ["PID", "educ"])
    yield "anes96, all dummies", "check", X, df.vote.to_numpy(int), 18


def splits(X, y, how, seeds):
    if how == "cv":
        return list(StratifiedKFold(5, shuffle=True, random_state=0).split(X, y))
    return list(StratifiedShuffleSplit(seeds, train_size=how, random_state=0).split(X, y))


class _Variant(ClassifierMixin, BaseEstimator):
    """The alternatives to the default: the span of S_t, then null space / LW / OAS(n)."""

    def __init__(self, kind="null"):
        self.kind = kind

    def fit(self, X, y):
        st = moments(X, y)
        Sw, Sb, means = st.class_scatter()
        c, d = len(st.labels), X.shape[1]
        U = span_basis(Sw + Sb) if span_basis(Sw) is not None else None
        U = np.eye(d) if U is None else U
        Swk, Sbk = U.T @ Sw @ U, U.T @ Sb @ U
        r = min(c - 1, U.shape[1])
        singular = span_basis(Swk) is not None
        self.classes, self.nearest, self.fitted_ = st.labels, False, True
        if self.kind == "null" and singular:
            w, V = scipy.linalg.eigh(Swk)
            N = V[:, w <= 100 * len(w) * np.finfo(float).eps * w[-1]]
            _, E = scipy.linalg.eigh(N.T @ Sbk @ N)
            self.M = U @ N @ E[:, ::-1][:, :r]
            self.mean, self.nearest = st.mean, True
            self.P = (means - st.mean) @ self.M
            return self
        reg = 0.0
        if singular and self.kind == "lw":
            R = (X - means[np.searchsorted(st.labels, y)]) @ U
            reg = float(ledoit_wolf_shrinkage(R, assume_centered=True))
        elif singular and self.kind == "oas-n":
            reg = oas_shrinkage(Swk, st.n)
        elif singular:
            reg = oas_shrinkage(Swk, st.n - c)
        self.est = OrthogonalLDA(shrinkage=reg).fit(X @ U, y)
        self.U = U
        return self

    def predict(self, X):
        if self.nearest:
            Z = (X - self.mean) @ self.M
            D = np.sum((Z[:, None, :] - self.P[None]) ** 2, axis=-1)
            return self.classes[np.argmin(D, axis=1)]
        return self.est.predict(X @ self.U)


METHODS = {
    "sk svd": lambda: SkLDA(),
    "sk lsqr auto": lambda: SkLDA(solver="lsqr", shrinkage="auto"),
    "ldr default": lambda: OrthogonalLDA(),
    "ldr null space": lambda: _Variant("null"),
    "ldr OAS(n)": lambda: _Variant("oas-n"),
    "ldr LW": lambda: _Variant("lw"),
    "ldr reg='auto'": lambda: OrthogonalLDA(shrinkage="auto"),
}


def _accuracy(make, X, y, folds):
    acc, times = [], []
    for tr, te in folds:
        model = make_pipeline(StandardScaler(), make())
        t0 = time.perf_counter()
        model.fit(X[tr], y[tr])
        times.append(time.perf_counter() - t0)
        acc.append(float(np.mean(model.predict(X[te]) == y[te])))
    return float(np.mean(acc)), float(np.median(times))


def _span_of_sw(X, codes, n_classes, r=None):
    """The alternative rule: drop the directions where classes collapse (the span of S_w
    within the span of the data), in place of ``discriminant_span``."""
    Sw, Sb = class_scatters(X, codes, n_classes)
    U = span_basis(Sw + Sb)
    U = np.eye(X.shape[1]) if U is None else U
    V = span_basis(U.T @ Sw @ U)
    return U if V is None else U @ V


def _wda_span_of_sw(p, X, y):
    with mock.patch("ldr.estimators.wda.discriminant_span", _span_of_sw):
        return WassersteinDA(p).fit(X, y)


def _wda_table(seeds):
    rows = []
    for name, role, X, y, how in tables():
        if how == "cv":
            continue
        acc = {"ldr default": [], "span of S_w": [], "PCA(n - c) first": []}
        for tr, te in splits(X, y, how, seeds):
            sc = StandardScaler().fit(X[tr])
            Xtr, Xte = sc.transform(X[tr]), sc.transform(X[te])
            c = len(np.unique(y[tr]))
            p = max(1, min(c - 1, 2))
            fits = {"ldr default": WassersteinDA(p).fit(Xtr, y[tr]),
                    "span of S_w": _wda_span_of_sw(p, Xtr, y[tr])}
            pca = PCA(len(tr) - c).fit(Xtr)
            wda = WassersteinDA(p).fit(pca.transform(Xtr), y[tr])
            for key, model in fits.items():
                knn = KNeighborsClassifier(1).fit(model.transform(Xtr), y[tr])
                acc[key].append(knn.score(model.transform(Xte), y[te]))
            knn = KNeighborsClassifier(1).fit(wda.transform(pca.transform(Xtr)), y[tr])
            acc["PCA(n - c) first"].append(knn.score(wda.transform(pca.transform(Xte)), y[te]))
        rows.append([f"{name} n={how} ({role})"] + [f"{np.mean(v):.3f}" for v in acc.values()])
    return ["table", "WDA default", "WDA in the span of S_w", "PCA(n - c) then WDA"], rows


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--seeds", type=int, default=20, help="draws of each n < d training set")
    p.add_argument("--quick", action="store_true", help="5 draws")
    args = p.parse_args(argv)
    if args.quick:
        args.seeds = 5
    warnings.simplefilter("ignore")  # scikit-learn's "variables are collinear"
    with common.single_threaded():
        common.print_header("Singular within-class scatter: OrthogonalLDA vs scikit-learn", [
            "mean accuracy over 5 CV folds (span tables) or over "
            f"{args.seeds} stratified draws of an n < d training set (rest held out); "
            "time: median fit, relative to scikit-learn's default LDA; BLAS 1 thread"])
        rows, ratios = [], {m: [] for m in METHODS}
        for name, role, X, y, how in tables():
            folds = splits(X, y, how, args.seeds)
            out = {m: _accuracy(make, X, y, folds) for m, make in METHODS.items()}
            for m in METHODS:
                ratios[m].append(out[m][1] / out["sk svd"][1])
            size = "5-fold CV" if how == "cv" else f"n={how} < d={X.shape[1]}"
            rows.append([name, role, size] + [f"{out[m][0]:.3f}" for m in METHODS])
        common.print_table(["table", "role", "split"] + list(METHODS), rows)
        print()
        common.print_table(["method", "fit time ÷ sk svd (median over tables)"],
                           [[m, common.fmt_ratio(common.median(v))] for m, v in ratios.items()])
        print()
        print("WassersteinDA on the n < d draws: 1-NN accuracy in its projection")
        common.print_table(*_wda_table(args.seeds))


if __name__ == "__main__":
    main()
