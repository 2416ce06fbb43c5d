"""``sample_weight`` as frequency weights: integer weights equal repeated rows, for the
moments and for every estimator whose statistics are weighted moments."""

import numpy as np
import pytest
from sklearn.datasets import load_wine
from sklearn.preprocessing import StandardScaler

from ldr.data.rows import moments
from ldr.estimators import NCA, PCA, PPCA, FactorAnalysis, OrthogonalLDA
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
    for cls in (OrthogonalLDA, PPCA, FactorAnalysis):
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
