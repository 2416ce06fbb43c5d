"""Defaults that follow the data's units: for every estimator, ``fit(c·X)`` gives the subspace
and the convergence verdict of ``fit(X)`` for c = 1e-3 and 1e3 (kernel widths, entropic
regularizations, tolerances and shrinkages are relative to the data, never absolute)."""

import warnings

import numpy as np
import pytest
from sklearn.datasets import load_wine
from sklearn.preprocessing import StandardScaler

import ldr.estimators as E
from ldr.manifolds import sin_largest_angle

#: how each estimator is fitted here: "X", "labels" (class labels) or "targets" (a second
#: view / continuous targets), and settings that keep the test fast (budgets, not defaults)
FITS = {
    "CCA": ("targets", {}),
    "KDAC": ("labels", {"max_outer": 3}),
    "LPP": ("X", {}),
    "MAF": ("X", {}),
    "MDS": ("X", {}),
    "NCA": ("labels", {}),
    "NPE": ("X", {}),
    "PCA": ("X", {}),
    "PPCA": ("X", {}),
    "SFA": ("X", {}),
    "FactorAnalysis": ("X", {}),
    "KernelSDR": ("labels", {}),
    "LargeMarginDML": ("labels", {}),
    "LinearDR": ("labels", {}),
    "OrthogonalCCA": ("targets", {}),
    "OrthogonalLDA": ("labels", {}),
    "ReducedRankRegression": ("targets", {}),
    "SemiSupervisedHSIC": ("labels", {"max_outer": 3}),
    "SupervisedHSIC": ("labels", {}),
    "UndercompleteICA": ("X", {}),
    "UnsupervisedHSIC": ("X", {"max_outer": 3}),
    "WDAClustering": ("X", {}),
    "WassersteinDA": ("labels", {}),
}


def test_every_estimator_is_covered():
    assert sorted(FITS) == sorted(E.__all__)


def _data():
    X, y = load_wine(return_X_y=True)
    X = StandardScaler().fit_transform(X)[::2, :6]  # 89 rows, 6 features: fast
    y = y[::2]
    return X[:, :4], X[:, 4:], y


def build_case(name: str, **params) -> tuple:
    """``(estimator, X, targets)``: ``name`` built as :data:`FITS` says (with ``params``),
    the rows it fits (C-contiguous) and the extra arguments of its ``fit``."""
    X, Y, y = _data()
    kind, settings = FITS[name]
    args = ("lda",) if name == "LinearDR" else ()
    r = 1 if kind == "targets" else 2  # below the targets' two columns
    est = getattr(E, name)(*args, n_components=r, **settings, **params)
    target = {"X": (), "labels": (y,), "targets": (np.ascontiguousarray(Y),)}[kind]
    return est, np.ascontiguousarray(X), target


def _fit(name: str, c: float):
    est, X, target = build_case(name)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        est.fit(c * X, *(c * t if t.dtype.kind == "f" else t for t in target))
    warned = sorted({type(w.message).__name__ for w in caught
                     if not issubclass(w.category, DeprecationWarning)})
    return est, warned


def _span(est):
    M = est.M_
    M = M[0] if isinstance(M, tuple) else M
    return np.linalg.qr(np.asarray(M, dtype=float))[0]


def _verdict(est):
    res = getattr(est, "result_", None)
    return None if res is None else bool(res.converged)


@pytest.mark.parametrize("name", sorted(FITS))
def test_fit_of_rescaled_data_gives_the_same_subspace_and_verdict(name):
    base, warned = _fit(name, 1.0)
    for c in (1e-3, 1e3):
        other, warned_c = _fit(name, c)
        assert sin_largest_angle(_span(base), _span(other)) < 1e-5, (name, c)
        assert _verdict(other) == _verdict(base), (name, c, other.result_.reason)
        assert warned_c == warned, (name, c)
