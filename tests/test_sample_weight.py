"""``sample_weight`` as frequency weights: integer weights equal repeated rows, for the
moments and for every estimator whose statistics are weighted moments."""

import numpy as np
import pytest
from sklearn.datasets import load_wine
from sklearn.preprocessing import StandardScaler

from ldr.data.rows import moments
from ldr.estimators import MAF, NCA, PCA, PPCA, SFA, FactorAnalysis, OrthogonalLDA
from ldr.manifolds import sin_largest_angle

X_WINE, Y_WINE = load_wine(return_X_y=True)
X_WINE = StandardScaler().fit_transform(X_WINE)
W = np.random.default_rng(0).integers(0, 4, X_WINE.shape[0])  # zeros drop a row
W[[0, 60, 140]] = 1  # every class keeps a row
REPEATED = np.repeat(np.arange(X_WINE.shape[0]), W)
#: a factor model's rows (low rank plus diagonal noise of unequal variances): well posed for
#: PPCA and FactorAnalysis, where wine's three factors sit at a Heywood boundary
_RNG = np.random.default_rng(1)
X_FACTORS = (_RNG.standard_normal((178, 2)) @ _RNG.standard_normal((2, 8))
             + _RNG.standard_normal((178, 8)) * _RNG.uniform(0.5, 1.5, 8))
CASES = {"PCA": (lambda: PCA(3), False), "OrthogonalLDA": (lambda: OrthogonalLDA(2), True),
         "PPCA": (lambda: PPCA(2), False),
         "FactorAnalysis": (lambda: FactorAnalysis(2, tol=1e-10), False)}


def _fit(make, supervised, X, y, **kw):
    return make().fit(X, y, **kw) if supervised else make().fit(X, **kw)


def _data(name):
    """The rows each estimator is checked on (the latent models on a factor model's)."""
    return X_FACTORS if name in ("PPCA", "FactorAnalysis") else X_WINE


def test_weighted_moments_are_the_moments_of_the_repeated_rows():
    X = 1e3 + X_WINE  # a mean far from zero: the shifted sums keep their digits
    got = moments(X, Y_WINE, weights=W)
    ref = moments(X[REPEATED], Y_WINE[REPEATED])
    assert got.n == ref.n == W.sum()
    np.testing.assert_allclose(got.mean, ref.mean, rtol=1e-14)
    np.testing.assert_allclose(got.covariance(ddof=1), ref.covariance(ddof=1), rtol=1e-10,
                               atol=1e-12)
    for a, b in zip(got.class_scatter(), ref.class_scatter()):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(got.class_counts, ref.class_counts)


@pytest.mark.parametrize("name", sorted(CASES))
def test_integer_weights_equal_repeated_rows(name):
    make, supervised = CASES[name]
    X = _data(name)
    weighted = _fit(make, supervised, X, Y_WINE, sample_weight=W)
    repeated = _fit(make, supervised, X[REPEATED], Y_WINE[REPEATED])
    if isinstance(weighted.M_, tuple):  # the latent models: the fitted Gaussian model
        np.testing.assert_allclose(weighted.get_covariance(), repeated.get_covariance(),
                                   atol=1e-9)
    else:
        assert sin_largest_angle(weighted.M_, repeated.M_) < 1e-9
    np.testing.assert_allclose(weighted.transform(X), repeated.transform(X), atol=1e-8)
    if name == "PCA":
        for attr in ("explained_variance_", "singular_values_", "mean_"):
            np.testing.assert_allclose(getattr(weighted, attr), getattr(repeated, attr),
                                       rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("name", sorted(CASES))
def test_unit_weights_and_scaled_weights(name):
    """Weights of ones are no weights; weights c·w give the subspace of w (the covariance's
    scale changes, its eigenvectors do not)."""
    make, supervised = CASES[name]
    X = _data(name)
    plain = _fit(make, supervised, X, Y_WINE)
    ones = _fit(make, supervised, X, Y_WINE, sample_weight=np.ones(len(X)))
    np.testing.assert_allclose(ones.transform(X), plain.transform(X), atol=1e-10)
    w = W + 0.5
    a = _fit(make, supervised, X, Y_WINE, sample_weight=w)
    b = _fit(make, supervised, X, Y_WINE, sample_weight=7.0 * w)
    if isinstance(a.M_, tuple):  # the latent models: the same loadings' span
        assert sin_largest_angle(np.linalg.qr(a.components_.T)[0],
                                 np.linalg.qr(b.components_.T)[0]) < 1e-6
    else:
        assert sin_largest_angle(a.M_, b.M_) < 1e-8


@pytest.mark.parametrize("bad, match", [(-np.ones(178), "non-negative"),
                                        (np.zeros(178), "zero weight"),
                                        (np.ones(5), "shape"),
                                        (np.r_[np.nan, np.ones(177)], "finite")])
def test_bad_weights_are_refused(bad, match):
    with pytest.raises(ValueError, match=match):
        PCA(2).fit(X_WINE, sample_weight=bad)


def test_a_class_without_weight_is_refused():
    w = np.where(Y_WINE == 2, 0.0, 1.0)
    with pytest.raises(ValueError, match="zero total weight"):
        OrthogonalLDA(1).fit(X_WINE, Y_WINE, sample_weight=w)


def test_weights_need_rows_in_memory():
    da = pytest.importorskip("dask.array")
    with pytest.raises(ValueError, match="in memory"):
        PCA(2).fit(da.from_array(X_WINE, chunks=60), sample_weight=W)


def test_only_the_moment_estimators_take_weights():
    import inspect

    assert "sample_weight" in inspect.signature(PCA.fit).parameters
    for cls in (OrthogonalLDA, PPCA, FactorAnalysis, MAF, SFA):
        assert "sample_weight" in inspect.signature(cls.fit).parameters
    assert "sample_weight" not in inspect.signature(NCA.fit).parameters


@pytest.mark.parametrize("name", ["CCA", "OrthogonalCCA"])
def test_two_views_integer_weights_equal_repeated_rows(name):
    """The two-view estimators: the moments of the stacked rows [X | Y], weighted."""
    import ldr.estimators as E

    X, Y = X_WINE[:, :7], X_WINE[:, 7:]
    weighted = getattr(E, name)(2).fit(X, Y, sample_weight=W)
    repeated = getattr(E, name)(2).fit(X[REPEATED], Y[REPEATED])
    np.testing.assert_allclose(np.abs(weighted.transform(X)), np.abs(repeated.transform(X)),
                               atol=1e-8)
    np.testing.assert_allclose(weighted.predict(X), repeated.predict(X), atol=1e-8)


@pytest.mark.parametrize("y_kernel", ["onehot", "linear", "gaussian"])
def test_supervised_hsic_integer_weights_equal_repeated_rows(y_kernel):
    """SupervisedHSIC: the weighted standardization, the weighted median width and
    Γ_w = D H_w K_Y H_wᵀ D / N² give the fit of the repeated rows."""
    from ldr.estimators import SupervisedHSIC
    from ldr.kernels.family import median_distance

    X = X_WINE[:, :6] if y_kernel == "onehot" else X_WINE[:, 1:6]
    y = Y_WINE if y_kernel == "onehot" else X_WINE[:, 0] + 0.1 * Y_WINE
    weighted = SupervisedHSIC(2, y_kernel=y_kernel).fit(X, y, sample_weight=W)
    repeated = SupervisedHSIC(2, y_kernel=y_kernel).fit(X[REPEATED], y[REPEATED])
    assert weighted.kernel_.sigma == pytest.approx(repeated.kernel_.sigma, rel=1e-12)
    assert weighted.cost_ == pytest.approx(repeated.cost_, rel=1e-10)
    assert sin_largest_angle(weighted.M_, repeated.M_) < 1e-7
    np.testing.assert_allclose(weighted.transform(X), repeated.transform(X), atol=1e-6)
    # the weighted median is np.median of the repeated rows' pairwise distances
    assert median_distance(X, weights=W) == median_distance(X[REPEATED])


def test_held_pairs_are_the_pairs_of_the_repeated_series():
    """held_pairs at lag δ: the counts of the lag-δ pairs (i, j) of the series with sample i
    repeated w_i times (brute force), for integer weights with zeros; unit weights give
    (i, i + δ)."""
    from ldr.data.statistics import held_pairs

    rng = np.random.default_rng(3)
    for lag in (1, 2, 5):
        w = rng.integers(0, 4, 40)
        w[0] = 1
        series = np.repeat(np.arange(40), w)
        expected = np.zeros((40, 40))
        np.add.at(expected, (series[:-lag], series[lag:]), 1.0)
        i, j, c = held_pairs(w.astype(float), lag)
        got = np.zeros((40, 40))
        np.add.at(got, (i, j), c)
        np.testing.assert_array_equal(got, expected)
        assert len(i) < 2 * 40
        i, j, c = held_pairs(np.ones(40), lag)
        np.testing.assert_array_equal(j - i, lag)
        np.testing.assert_array_equal(c, 1.0)


SERIES = np.cumsum(np.random.default_rng(4).standard_normal((150, 5)), axis=0) @ \
    np.random.default_rng(5).standard_normal((5, 5)) + 1e2
SERIES_W = np.random.default_rng(6).integers(0, 4, 150)
SERIES_W[0] = 1


@pytest.mark.parametrize("name, kw", [("MAF", {"lag": 1}), ("MAF", {"lag": 3}), ("SFA", {})])
def test_series_integer_weights_equal_repeated_samples(name, kw):
    """MAF and SFA hold sample i for w_i steps: integer weights give the fit of the series
    with each sample repeated in place (the lagged and difference products included)."""
    import ldr.estimators as E

    repeated_rows = np.repeat(SERIES, SERIES_W, axis=0)
    weighted = getattr(E, name)(2, **kw).fit(SERIES, sample_weight=SERIES_W)
    repeated = getattr(E, name)(2, **kw).fit(repeated_rows)
    assert weighted.cost_ == pytest.approx(repeated.cost_, rel=1e-10)
    assert sin_largest_angle(weighted.M_, repeated.M_) < 1e-8
    np.testing.assert_allclose(weighted.transform(SERIES), repeated.transform(SERIES),
                               atol=1e-8 * np.abs(repeated.transform(SERIES)).max())
    got = moments(SERIES, lag=kw.get("lag", 1), diff=name == "SFA", weights=SERIES_W)
    ref = moments(repeated_rows, lag=kw.get("lag", 1), diff=name == "SFA")
    np.testing.assert_allclose(got.lagged_covariance(), ref.lagged_covariance(), rtol=1e-9,
                               atol=1e-9 * np.abs(ref.lagged_covariance()).max())
    if name == "SFA":
        np.testing.assert_allclose(got.diff_moment(), ref.diff_moment(), rtol=1e-9)


def test_a_weighted_series_does_not_extend():
    from ldr.estimators import MAF

    est = MAF(2).fit(SERIES, sample_weight=SERIES_W)
    with pytest.raises(ValueError, match="held"):
        est.partial_fit(SERIES[:20])


def _wda_data():
    import ldr

    X, y = ldr.datasets.make_wda(120, seed=0)
    w = np.random.default_rng(1).integers(0, 4, len(y))
    w[[np.flatnonzero(y == c)[0] for c in np.unique(y)]] = 1  # every class keeps a row
    return X, y, w


@pytest.mark.parametrize("memory_budget", [None, 0.0])
def test_wda_objective_weights_equal_repeated_rows(memory_budget):
    """Weighted transport marginals: the plans of the repeated rows, each row's copies
    summed, are the weighted plans, at every Sinkhorn iteration — so the cost, its gradient
    (the reverse pass with marginals) and the scatters of the pencil agree to rounding, with
    the kernel stored and by row blocks; the gradient is autograd's of the traced cost."""
    import autograd

    from ldr.objectives import WDA

    X, y, w = _wda_data()
    budget = {} if memory_budget is None else {"memory_budget": 1e-9}
    weighted = WDA(X, y, r=2, sample_weight=w, **budget)
    repeated = WDA(np.repeat(X, w, axis=0), np.repeat(y, w), r=2, **budget)
    assert weighted.reg == pytest.approx(repeated.reg, rel=1e-12)
    P = np.linalg.qr(np.random.default_rng(2).standard_normal((X.shape[1], 2)))[0]
    assert weighted.cost(P) == pytest.approx(repeated.cost(P), rel=1e-12)
    np.testing.assert_allclose(weighted.egrad(P), repeated.egrad(P), atol=1e-12)
    for a, b in zip(weighted.scatter(P), repeated.scatter(P)):
        np.testing.assert_allclose(a, b, atol=1e-11 * np.abs(b).max())
    np.testing.assert_allclose(autograd.grad(weighted.cost)(P), weighted.egrad(P), atol=1e-12)
    # POT's normalize: each pair's mean squared distance, weighted, is that of the repeated rows
    P0 = np.random.default_rng(3).standard_normal((X.shape[1], 2))
    a = WDA(X, y, r=2, sample_weight=w, normalize_at=P0, **budget).pair_reg
    b = WDA(np.repeat(X, w, axis=0), np.repeat(y, w), r=2, normalize_at=P0, **budget).pair_reg
    assert a == pytest.approx(b, rel=1e-12)


def test_wassersteinda_integer_weights_equal_repeated_rows():
    from ldr.estimators import WassersteinDA

    X, y, w = _wda_data()
    for Z in (X, np.c_[X, X[:, 0] + X[:, 1]]):  # and a singular S_w: the fit in the span
        weighted = WassersteinDA(2).fit(Z, y, sample_weight=w)
        repeated = WassersteinDA(2).fit(np.repeat(Z, w, axis=0), np.repeat(y, w))
        assert weighted.cost_ == pytest.approx(repeated.cost_, rel=1e-10)
        assert sin_largest_angle(weighted.M_, repeated.M_) < 1e-8
        np.testing.assert_allclose(weighted.transform(Z), repeated.transform(Z), atol=1e-8)


def test_wda_weights_need_exact_plans():
    from ldr.estimators import WassersteinDA

    X, y, w = _wda_data()
    with pytest.raises(ValueError, match="exact plans"):
        WassersteinDA(2, batch_size=10).fit(X, y, sample_weight=w)
    with pytest.raises(ValueError, match="zero total weight"):
        WassersteinDA(2).fit(X, y, sample_weight=np.where(y == y[0], 0.0, 1.0))
