"""``partial_fit`` of the estimators whose fit reads one-pass moments: a fit from batches
equals the fit on their concatenation (to 1e-10), also from a Dask array's chunks."""

import numpy as np
import pytest
from sklearn.datasets import load_wine
from sklearn.preprocessing import StandardScaler
from test_sample_weight import CASES, X_FACTORS

from ldr.estimators import MAF, NCA, PCA, PPCA, SFA, FactorAnalysis, OrthogonalLDA, SupervisedHSIC
from ldr.manifolds import sin_largest_angle

X_WINE, Y_WINE = load_wine(return_X_y=True)
X_WINE = StandardScaler().fit_transform(X_WINE)
RNG = np.random.default_rng(0)
ORDER = RNG.permutation(X_WINE.shape[0])  # every batch holds every class
X_SHUF = X_WINE[ORDER]
Y_SHUF = Y_WINE[ORDER]
def _same_fit(a, b, X):
    if not isinstance(a.M_, tuple):  # (the latent models' point is a product)
        assert sin_largest_angle(a.M_, b.M_) < 1e-10
    else:
        np.testing.assert_allclose(a.get_covariance(), b.get_covariance(), atol=1e-10)
    np.testing.assert_allclose(a.transform(X), b.transform(X), atol=1e-10)
    np.testing.assert_allclose(a.mean_, b.mean_, atol=1e-12)
    assert a.moments_.n == b.moments_.n == X.shape[0]


@pytest.mark.parametrize("name", sorted(CASES))
def test_batches_give_the_fit_of_their_concatenation(name):
    make, supervised = CASES[name]
    X = X_FACTORS if name in ("PPCA", "FactorAnalysis") else X_SHUF
    whole = make().fit(X, Y_SHUF) if supervised else make().fit(X)
    parts = make()
    for rows in np.array_split(np.arange(X.shape[0]), 3):
        args = (X[rows], Y_SHUF[rows]) if supervised else (X[rows],)
        assert parts.partial_fit(*args) is parts
    _same_fit(parts, whole, X)
    if name == "PCA":
        np.testing.assert_allclose(parts.explained_variance_, whole.explained_variance_,
                                   rtol=1e-10)
        np.testing.assert_allclose(parts.components_, whole.components_, atol=1e-10)


@pytest.mark.parametrize("name", sorted(CASES))
def test_batches_from_a_dask_arrays_chunks(name):
    da = pytest.importorskip("dask.array")
    make, supervised = CASES[name]
    X = X_FACTORS if name in ("PPCA", "FactorAnalysis") else X_SHUF
    Xd = da.from_array(X, chunks=(60, X.shape[1]))
    whole = make().fit(X, Y_SHUF) if supervised else make().fit(X)
    parts = make()
    start = 0
    for block in Xd.blocks:
        stop = start + block.shape[0]
        parts.partial_fit(block, Y_SHUF[start:stop]) if supervised else parts.partial_fit(block)
        start = stop
    _same_fit(parts, whole, X)


def _series(n=600, d=5, seed=0):
    """A seeded series: smooth (random-walk) sources mixed with white noise."""
    rng = np.random.default_rng(seed)
    S = np.cumsum(rng.standard_normal((n, 2)), axis=0) / 10
    return np.hstack([S, rng.standard_normal((n, d - 2))]) @ rng.standard_normal((d, d))


@pytest.mark.parametrize("make", [lambda: MAF(2, lag=3), lambda: SFA(2)],
                         ids=["MAF", "SFA"])
def test_consecutive_stretches_of_a_series(make):
    """MAF and SFA: batches are consecutive stretches in time order; the lagged pairs that
    straddle two batches are counted when their moments merge."""
    X = _series()
    whole = make().fit(X)
    parts = make()
    for rows in np.array_split(np.arange(X.shape[0]), 4):
        parts.partial_fit(X[rows])
    assert sin_largest_angle(parts.M_, whole.M_) < 1e-10
    np.testing.assert_allclose(parts.transform(X), whole.transform(X), atol=1e-9)


def test_partial_fit_after_fit_continues_and_fit_starts_anew():
    a = PCA(2).fit(X_SHUF[:100])
    a.partial_fit(X_SHUF[100:])
    _same_fit(a, PCA(2).fit(X_SHUF), X_SHUF)
    a.fit(X_SHUF[:50])
    assert a.moments_.n == 50


def test_a_batch_of_another_width_is_refused():
    est = PCA(2).partial_fit(X_SHUF[:60])
    with pytest.raises(ValueError, match="13 features"):
        est.partial_fit(X_SHUF[60:120, :5])
    assert est.n_features_in_ == 13
    est.partial_fit(X_SHUF[60:])  # the fit goes on
    assert est.moments_.n == X_SHUF.shape[0]


def test_only_the_moment_estimators_have_partial_fit():
    import ldr.estimators as E

    for est in (PCA(), OrthogonalLDA(), MAF(), SFA(), PPCA(), FactorAnalysis(), E.CCA(),
                E.OrthogonalCCA()):
        assert hasattr(est, "partial_fit"), est
    assert not hasattr(NCA(), "partial_fit")
    assert not hasattr(SupervisedHSIC(), "partial_fit")


@pytest.mark.parametrize("name", ["CCA", "OrthogonalCCA"])
def test_two_views_batches(name):
    import ldr.estimators as E

    X, Y = X_SHUF[:, :7], X_SHUF[:, 7:]
    whole = getattr(E, name)(2).fit(X, Y)
    parts = getattr(E, name)(2)
    for rows in np.array_split(np.arange(X.shape[0]), 3):
        parts.partial_fit(X[rows], Y[rows])
    np.testing.assert_allclose(np.abs(parts.transform(X)), np.abs(whole.transform(X)),
                               atol=1e-10)
    np.testing.assert_allclose(parts.predict(X), whole.predict(X), atol=1e-10)
    with pytest.raises(ValueError, match="features"):
        parts.partial_fit(X[:30], X_SHUF[:30, 6:])  # the second view one column wider
