"""``warm_start`` where scikit-learn's convention applies (the estimators whose fit is one
solve): a refit starts from the previous answer — on the same data it is already there, so
it takes no iteration and keeps the answer; data of another width are refused, naming the
parameter."""

import warnings

import numpy as np
import pytest
from sklearn.datasets import load_wine
from sklearn.preprocessing import StandardScaler

import ldr.estimators as E

#: how each is fitted: "X", "labels" or "targets" (a second view or continuous targets)
WARM = {"PCA": "X", "OrthogonalLDA": "labels", "MAF": "X", "SFA": "X", "LPP": "X",
        "NPE": "X", "MDS": "X", "KernelSDR": "labels", "PPCA": "X", "FactorAnalysis": "X",
        "CCA": "targets", "OrthogonalCCA": "targets", "ReducedRankRegression": "targets",
        "NCA": "labels", "LargeMarginDML": "labels"}


def _data(width=6, y_width=3):
    X, y = load_wine(return_X_y=True)
    X = StandardScaler().fit_transform(X)[::2]
    return X[:, :width], X[:, 13 - y_width:], y[::2]


def _fit(est, kind, X, Y, y):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return est.fit(X, *{"X": (), "labels": (y,), "targets": (Y,)}[kind])


@pytest.mark.parametrize("name", sorted(WARM))
def test_a_warm_refit_starts_at_the_answer(name):
    kind = WARM[name]
    X, Y, y = _data()
    est = _fit(getattr(E, name)(n_components=2, warm_start=True), kind, X, Y, y)
    first = np.asarray(est.transform(X)).copy()
    before = est.result_.n_iter
    _fit(est, kind, X, Y, y)
    if est.result_.converged:
        assert est.result_.n_iter - before == 0 or est.n_iter_ == 0, name
    np.testing.assert_allclose(np.asarray(est.transform(X)), first, atol=1e-6)
    X7, Y7, y7 = _data(width=7, y_width=4)  # (RRR's point lives in the targets' space)
    with pytest.raises(ValueError, match="warm_start|features"):
        _fit(est, kind, X7, Y7, y7)


def test_every_one_solve_estimator_takes_warm_start():
    import inspect

    for name in WARM:
        assert "warm_start" in inspect.signature(getattr(E, name)).parameters, name
