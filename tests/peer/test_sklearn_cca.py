"""scikit-learn's CCA tests, as behaviours of ldr's :class:`~ldr.estimators.CCA`.

Follows ``sklearn/cross_decomposition/tests/test_pls.py`` of scikit-learn 1.9.1: every test
there that fits ``CCA``, alone or among the PLS family (``test_univariate_equivalence``,
``test_copy``, ``test_scale_and_stability``, ``test_n_components_upper_bounds``,
``test_loadings_converges``, ``test_pls_coef_shape``, ``test_pls_prediction``,
``test_pls_feature_names_out``, ``test_pls_set_output``), has a counterpart here, written
for ldr on seeded data, plus the facts scikit-learn's CCA itself establishes (the canonical
correlations, the scores' correlations and orthogonality, the weights and loadings) checked
against scikit-learn's CCA, SciPy's generalized eigensolver and least squares.  Three PLS-only
tests of that file whose property applies to CCA are adapted too: the attribute shapes
(``test_attributes_shapes``), a ConvergenceWarning under a tiny budget
(``test_convergence_fail``) and a 1-D prediction for a 1-D y (``test_pls_regression_fit_1d_y``).

Left out, with the reason:

* ``test_copy``'s ``copy=False`` (centring and scaling in place): ldr has no ``copy``
  parameter and never writes to its inputs; that is what is checked.
* ``test_scale_and_stability``'s ``scale`` parameter: ldr's CCA has none.  CCA is invariant
  to an invertible change of coordinates of each view, so the test checks that invariance
  instead (the fit on the raw views equals the fit on the standardized ones), on data like
  that file's: a large offset and scale, a constant column, and four samples.
* ``test_loadings_converges``: the NIPALS power method's per-component ConvergenceWarning
  ("Maximum number of iterations reached") — ldr solves all components in one run, whose
  convergence is checked — and the bound ``|x_loadings_| < 1``, which holds in scikit-learn's
  standardized units; ldr's loadings are in the data's units, and the bound checked is the
  one they satisfy there, |P_jk| ≤ sd(x_j) (a correlation times sd(x_j)).
* ``test_n_components_upper_bounds``' message ("`n_components` upper bound is ...") and its
  bound min(n_samples, n_features, n_targets): ldr raises the same ValueError in its own
  words, with the bound min of the two views' ranks.
* ``test_pls_prediction``'s values of scikit-learn's ``coef_`` (``x_rotations_ @
  y_loadings_.T`` of NIPALS' scalings): ldr's ``coef_`` is the least-squares regression of
  Y on the X scores (ldr.estimators.two_view), checked against least squares; the identities
  the test asserts (``intercept_`` the mean of y, ``predict`` the centred linear map) hold.
* ``test_pls_regression_fit_1d_y``'s VotingRegressor: ldr's CCA is a transformer with
  ``predict``, not tagged a regressor, and VotingRegressor accepts regressors only.
* The sign rule (``svd_flip`` on the weights) and the NIPALS helpers
  (``test_singular_value_helpers``, ``test_svd_flip_1d``, ``test_one_component_equivalence``):
  private to scikit-learn's algorithm; ldr fixes no joint sign of a canonical pair, so the
  comparisons here are up to that sign.
* The PLS-only tests (``test_pls_canonical_basics``, ``test_sanity_check_*``,
  ``test_n_components_upper_PLSRegression``, ``test_pls_constant_y``,
  ``test_pls_regression_scaling_coef``): not CCA; the last one's fact — an exact linear
  relation recovered in the data's units — is checked for CCA in
  ``test_prediction_is_least_squares_through_the_scores``.
"""

import warnings

import numpy as np
import pandas as pd
import pytest
import scipy.linalg
from numpy.testing import assert_allclose, assert_array_equal
from sklearn.cross_decomposition import CCA as SkCCA
from sklearn.datasets import make_regression
from sklearn.exceptions import ConvergenceWarning, NotFittedError
from sklearn.linear_model import LinearRegression
from sklearn.metrics import r2_score

from ldr.estimators import CCA, OrthogonalCCA


def two_views(n=200, p=5, q=4, seed=0, offset=3.0):
    """Two views sharing three latent factors, with noise: distinct canonical correlations."""
    rng = np.random.default_rng(seed)
    Z = rng.standard_normal((n, 3))
    X = Z @ rng.standard_normal((3, p)) + 0.8 * rng.standard_normal((n, p)) + offset
    Y = Z @ rng.standard_normal((3, q)) + 0.8 * rng.standard_normal((n, q)) - offset
    return X, Y


def covariances(X, Y):
    p = X.shape[1]
    C = np.cov(np.hstack([X, Y]), rowvar=False)
    return C[:p, :p], C[p:, p:], C[:p, p:]


def standardized(A):
    """Centred columns divided by their standard deviation (ddof 1; a constant column by 1)."""
    sd = A.std(axis=0, ddof=1)
    sd[sd == 0] = 1.0
    return (A - A.mean(axis=0)) / sd, sd


def parallel_columns(A, B, atol):
    """Each column of A is ± the column of B, after both are scaled to unit norm."""
    A = A / np.linalg.norm(A, axis=0)
    B = B / np.linalg.norm(B, axis=0)
    signs = np.sign(np.sum(A * B, axis=0))
    assert_allclose(A * signs, B, atol=atol)


def fit_quietly(est, X, Y):
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        return est.fit(X, Y)


# --- the canonical correlations and the scores ------------------------------------------------
def test_canonical_correlations_solve_hotellings_eigenproblem():
    """ρ² are the generalized eigenvalues of Σ_xy Σ_y⁻¹ Σ_yx v = ρ² Σ_x v, and scikit-learn's
    CCA finds the same correlations between its score columns, with or without scaling."""
    X, Y = two_views()
    est = fit_quietly(CCA(3), X, Y)
    Sx, Sy, Sxy = covariances(X, Y)
    rho2 = scipy.linalg.eigh(Sxy @ np.linalg.solve(Sy, Sxy.T), Sx, eigvals_only=True)[::-1]
    assert_allclose(est.canonical_correlations_, np.sqrt(rho2[:3]), rtol=1e-10)
    sk = SkCCA(3, scale=False, max_iter=10_000, tol=1e-14).fit(X, Y)
    T, U = sk.transform(X, Y)
    theirs = [np.corrcoef(T[:, k], U[:, k])[0, 1] for k in range(3)]
    assert_allclose(est.canonical_correlations_, theirs, atol=1e-9)
    # scikit-learn's default standardizes the views (scale=True): the same correlations
    T, U = SkCCA(3, max_iter=10_000, tol=1e-14).fit(X, Y).transform(X, Y)
    scaled = [np.corrcoef(T[:, k], U[:, k])[0, 1] for k in range(3)]
    assert_allclose(est.canonical_correlations_, scaled, atol=1e-9)


def test_scores_are_whitened_and_pairwise_correlated():
    """cov(T) = cov(U) = I and cov(T, U) = diag(ρ): the scores of each view are orthogonal,
    as scikit-learn's (deflated) scores are, and each pair has its canonical correlation."""
    X, Y = two_views()
    est = fit_quietly(CCA(3), X, Y)
    T, U = est.transform(X, Y)
    n = len(X)
    assert_allclose(T.mean(axis=0), 0, atol=1e-12)
    assert_allclose(T.T @ T / (n - 1), np.eye(3), atol=1e-10)
    assert_allclose(U.T @ U / (n - 1), np.eye(3), atol=1e-10)
    assert_allclose(T.T @ U / (n - 1), np.diag(est.canonical_correlations_), atol=1e-10)
    assert np.all(np.diff(est.canonical_correlations_) < 0)
    # fit_transform gives the same pair, transform(X) the X scores alone
    Tf, Uf = CCA(3).fit_transform(X, Y)
    assert_allclose(Tf, T, atol=1e-12)
    assert_allclose(Uf, U, atol=1e-12)
    assert_allclose(est.transform(X), T, atol=0)


def test_weights_loadings_and_rotations_match_scikit_learns():
    """scikit-learn's definitions: the weights are orthonormal, the loadings regress each
    view on its scores, and the rotations are W (PᵀW)⁻¹; scikit-learn's weights (scale=False)
    are ldr's up to sign, its rotations, loadings and scores ldr's up to a factor per column."""
    X, Y = two_views()
    est = fit_quietly(CCA(3), X, Y)
    sk = SkCCA(3, scale=False, max_iter=10_000, tol=1e-14).fit(X, Y)
    T, U = est.transform(X, Y)
    Tc = X - X.mean(axis=0)
    Uc = Y - Y.mean(axis=0)
    for W, P, R, S, V in ((est.x_weights_, est.x_loadings_, est.x_rotations_, T, Tc),
                          (est.y_weights_, est.y_loadings_, est.y_rotations_, U, Uc)):
        assert_allclose(W.T @ W, np.eye(3), atol=1e-12)
        assert_allclose(R, W @ np.linalg.inv(P.T @ W), atol=1e-10)
        assert_allclose(P, np.linalg.lstsq(S, V, rcond=None)[0].T, atol=1e-10)
    for mine, theirs in ((est.x_weights_, sk.x_weights_), (est.y_weights_, sk.y_weights_),
                         (est.x_rotations_, sk.x_rotations_),
                         (est.y_rotations_, sk.y_rotations_),
                         (est.x_loadings_, sk.x_loadings_), (est.y_loadings_, sk.y_loadings_)):
        parallel_columns(mine, theirs, atol=1e-6)
    T_sk, U_sk = sk.transform(X, Y)
    parallel_columns(T, T_sk, atol=1e-6)
    parallel_columns(U, U_sk, atol=1e-6)


def test_attribute_shapes():
    X, Y = two_views(p=6, q=4)
    est = fit_quietly(CCA(2), X, Y)
    assert est.x_weights_.shape == est.x_rotations_.shape == est.x_loadings_.shape == (6, 2)
    assert est.y_weights_.shape == est.y_rotations_.shape == est.y_loadings_.shape == (4, 2)
    assert est.coef_.shape == (4, 6) and est.intercept_.shape == (4,)
    assert est.canonical_correlations_.shape == (2,)


# --- one-dimensional y ---------------------------------------------------------------------------
def test_univariate_equivalence():
    """A 1-D y and the same y as one column give the same coef_ (shape (1, n_features)); the
    prediction follows y's shape; with one target the canonical direction of X is that of
    ordinary least squares."""
    X, Y = two_views()
    y = Y[:, 0]
    one = fit_quietly(CCA(1), X, y)
    two = fit_quietly(CCA(1), X, y[:, None])
    assert one.coef_.shape == two.coef_.shape == (1, X.shape[1])
    assert_allclose(one.coef_, two.coef_, rtol=1e-12)
    assert one.intercept_.shape == (1,)
    assert one.predict(X).shape == y.shape and two.predict(X).shape == (len(y), 1)
    assert_allclose(one.predict(X), two.predict(X)[:, 0], rtol=1e-12)
    ols = LinearRegression().fit(X, y)
    assert_allclose(one.predict(X), ols.predict(X), rtol=1e-10)
    assert one.score(X, y) == pytest.approx(ols.score(X, y), rel=1e-10)
    T, U = one.transform(X, y)
    assert T.shape == U.shape == (len(y), 1)
    assert_allclose(np.corrcoef(T[:, 0], U[:, 0])[0, 1], one.canonical_correlations_[0],
                    rtol=1e-10)


# --- the inputs -----------------------------------------------------------------------------------
def test_inputs_are_never_modified():
    X, Y = two_views()
    X0 = X.copy()
    Y0 = Y.copy()
    est = CCA(2).fit(X, Y)
    T, U = est.transform(X, Y)
    est.predict(X)
    est.score(X, Y)
    est.inverse_transform(T, U)
    assert_array_equal(X, X0)
    assert_array_equal(Y, Y0)
    # and a second transform of the same arrays gives the same scores
    T2, U2 = est.transform(X, Y)
    assert_array_equal(T2, T)
    assert_array_equal(U2, U)


def scale_cases():
    """Data like scikit-learn's stability cases: a large scale with an offset, a constant
    column, and four samples (seeds of their own)."""
    rng = np.random.default_rng(0)
    Y = rng.standard_normal((1000, 5))
    X = (Y @ rng.standard_normal((5, 10)) + 2 * rng.standard_normal((1000, 10)) + 1) * 1000
    yield pytest.param(X, Y, True, id="large scale")
    rng = np.random.default_rng(1)
    Z = rng.standard_normal((20, 2))
    X = Z @ rng.standard_normal((2, 3)) + 0.5 * rng.standard_normal((20, 3))
    X[:, -1] = 1.0  # a constant column
    Y = Z @ rng.standard_normal((2, 3)) + 0.5 * rng.standard_normal((20, 3))
    yield pytest.param(X, Y, True, id="constant column")
    for seed in (2, 3):
        rng = np.random.default_rng(seed)
        yield pytest.param(rng.standard_normal((4, 3)), rng.standard_normal((4, 2)), False,
                           id=f"four samples {seed}")


@pytest.mark.parametrize("X, Y, distinct", list(scale_cases()))
def test_the_fit_does_not_depend_on_the_scale_of_the_features(X, Y, distinct):
    """scikit-learn's scale=True equals scale=False on standardized data; ldr's CCA needs no
    scale: the canonical correlations, the scores (up to a rotation within tied correlations,
    the sign of a pair otherwise) and the predictions are those of the standardized views,
    and coef_ is in the data's units."""
    Xs, sx = standardized(X)
    Ys, sy = standardized(Y)
    raw = fit_quietly(CCA(), X, Y)
    std = fit_quietly(CCA(), Xs, Ys)
    assert raw.n_components_ == std.n_components_
    assert_allclose(raw.canonical_correlations_, std.canonical_correlations_, atol=1e-9)
    T, U = raw.transform(X, Y)
    Ts, Us = std.transform(Xs, Ys)
    n = len(X)
    Q = T.T @ Ts / (n - 1)  # Ts = T Q, the same Q for both views
    r = raw.n_components_
    assert_allclose(Q.T @ Q, np.eye(r), atol=1e-8)
    assert_allclose(T @ Q, Ts, atol=1e-7)
    assert_allclose(U @ Q, Us, atol=1e-7)
    if distinct:
        assert_allclose(np.abs(Q), np.eye(r), atol=1e-8)
    # predictions in Y's units, and coef_ rescaled by the standard deviations
    assert_allclose(raw.predict(X), std.predict(Xs) * sy + Y.mean(axis=0),
                    atol=1e-8 * np.abs(Y).max())
    assert_allclose(raw.coef_, std.coef_ * sy[:, None] / sx[None, :],
                    atol=1e-8 * np.abs(raw.coef_).max())


# --- n_components ---------------------------------------------------------------------------
def test_n_components_upper_bound():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((10, 5))
    Y = rng.standard_normal((10, 3))
    with pytest.raises(ValueError, match=r"n_components: .*min\(n_features, n_targets\) = 3"):
        CCA(n_components=10).fit(X, Y)
    with pytest.raises(ValueError, match="n_components"):
        CCA(n_components=0).fit(X, Y)
    assert fit_quietly(CCA(3), X, Y).x_rotations_.shape == (5, 3)
    # fewer samples than features: the bound is the views' rank, n − 1 = 5, where the two
    # views span the same centred sample space, so every canonical correlation is 1
    X = rng.standard_normal((6, 10))
    Y = rng.standard_normal((6, 8))
    with pytest.raises(ValueError, match=r"min\(n_features, n_targets\) = 5"):
        CCA(n_components=6).fit(X, Y)
    est = fit_quietly(CCA(5), X, Y)
    assert_allclose(est.canonical_correlations_, 1.0, atol=1e-8)


# --- convergence ---------------------------------------------------------------------------
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_ten_components_converge_with_bounded_loadings(seed):
    """Y exactly linear in ten of X's twenty features: ten pairs, every correlation 1, found
    without a ConvergenceWarning; each loading is a covariance with a unit-variance score, so
    |P_jk| ≤ sd(x_j); and predict recovers Y."""
    X, Y = make_regression(n_samples=200, n_features=20, n_targets=20, random_state=seed)
    est = fit_quietly(CCA(n_components=10, max_iter=500), X, Y)
    assert est.result_.converged
    assert len(est.n_iter_) == 10 and all(0 <= k <= 500 for k in est.n_iter_)
    assert_allclose(est.canonical_correlations_, 1.0, atol=1e-8)
    sd = X.std(axis=0, ddof=1)
    assert np.all(np.abs(est.x_loadings_) <= sd[:, None] * (1 + 1e-10))
    assert_allclose(est.predict(X), Y, atol=1e-8 * np.abs(Y).max())


def test_n_iter_lists_the_one_solve_per_component():
    X, Y = two_views()
    est = fit_quietly(CCA(3), X, Y)
    assert est.n_iter_ == [est.result_.n_iter] * 3
    # from a random start the joint solve iterates, and reaches the closed form
    again = fit_quietly(CCA(3, start="random", random_state=0), X, Y)
    assert again.n_iter_ == [again.result_.n_iter] * 3 and again.n_iter_[0] >= 1
    assert_allclose(again.canonical_correlations_, est.canonical_correlations_, atol=1e-9)
    # a budget too small: a ConvergenceWarning, and no more iterations than the budget
    with pytest.warns(ConvergenceWarning, match="did not converge"):
        short = CCA(3, start="random", random_state=0, max_iter=1).fit(X, Y)
    assert not short.result_.converged
    assert short.n_iter_ == [short.result_.n_iter] * 3 and short.n_iter_[0] <= 1


# --- coef_, intercept_, predict --------------------------------------------------------------
def test_coef_shape():
    X, Y = two_views(p=5, q=3)
    est = fit_quietly(CCA(), X, Y)
    assert est.coef_.shape == (Y.shape[1], X.shape[1])
    assert est.predict(X).shape == Y.shape


def test_prediction_is_least_squares_through_the_scores():
    """intercept_ is the mean of y and predict the centred linear map, as scikit-learn's;
    the map is the least-squares regression of Y on the r X scores, T diag(ρ) Qᵀ for
    canonical pairs; with every pair, ordinary least squares; an exact linear relation is
    recovered in the data's units."""
    X, Y = two_views(p=5, q=4)
    est = fit_quietly(CCA(2), X, Y)
    assert_allclose(est.intercept_, Y.mean(axis=0), rtol=1e-12)
    X_new = X[:20] + 1.0
    assert_allclose(est.predict(X_new), (X_new - X.mean(axis=0)) @ est.coef_.T + est.intercept_,
                    atol=1e-10)
    T = est.transform(X)
    design = np.column_stack([np.ones(len(X)), T])
    fitted = design @ np.linalg.lstsq(design, Y, rcond=None)[0]
    assert_allclose(est.predict(X), fitted, atol=1e-10)
    assert_allclose(est.predict(X) - Y.mean(axis=0),
                    T @ np.diag(est.canonical_correlations_) @ est.y_loadings_.T, atol=1e-8)
    assert est.score(X, Y) == pytest.approx(r2_score(Y, fitted), rel=1e-12)
    # every pair (min(5, 4) = 4): ordinary least squares
    full = fit_quietly(CCA(), X, Y)
    ols = LinearRegression().fit(X, Y)
    assert_allclose(full.coef_, ols.coef_, atol=1e-9)
    assert_allclose(full.predict(X), ols.predict(X), atol=1e-9)
    # y = X Cᵀ exactly, X at scale 10: coef_ is C
    rng = np.random.default_rng(0)
    C = rng.uniform(size=(3, 5))
    X = rng.normal(scale=10, size=(30, 5))
    exact = fit_quietly(CCA(3), X, X @ C.T)
    assert_allclose(exact.coef_, C, atol=1e-9)
    assert_allclose(exact.predict(X), X @ C.T, atol=1e-8)


def test_inverse_transform_reconstructs_by_least_squares():
    """X̂ = T Pᵀ + x̄: exact when n_components is X's rank, otherwise the residual is
    orthogonal to the scores; with the Y scores, the pair."""
    X, Y = two_views(p=4, q=5)
    est = fit_quietly(CCA(), X, Y)  # 4 pairs: X's whole span
    T, U = est.transform(X, Y)
    X_back, Y_back = est.inverse_transform(T, U)
    assert_allclose(X_back, X, atol=1e-10)
    assert_allclose(Y_back, U @ est.y_loadings_.T + Y.mean(axis=0), atol=1e-12)
    assert_allclose((Y - Y_back).T @ U, 0, atol=1e-8)
    assert_allclose(est.inverse_transform(T), X_back, atol=0)
    short = fit_quietly(CCA(2), X, Y)
    T2 = short.transform(X)
    assert_allclose((X - short.inverse_transform(T2)).T @ T2, 0, atol=1e-8)


# --- names and output containers -----------------------------------------------------------------
def test_feature_names_out():
    X, Y = two_views()
    est = fit_quietly(CCA(), X, Y)
    names = est.get_feature_names_out()
    assert_array_equal(names, [f"cca{i}" for i in range(est.x_weights_.shape[1])])
    assert est.transform(X).shape[1] == len(names) == 4


def test_set_output_pandas_wraps_the_x_scores_only():
    X, Y = two_views()
    frame = pd.DataFrame(X, columns=[f"x{i}" for i in range(X.shape[1])])
    est = CCA(2).set_output(transform="pandas").fit(frame, Y)
    T, U = est.transform(frame, Y)
    assert isinstance(T, pd.DataFrame) and isinstance(U, np.ndarray)
    assert_array_equal(T.columns, est.get_feature_names_out())
    plain = CCA(2).fit(X, Y)
    assert_allclose(T.to_numpy(), plain.transform(X), atol=1e-12)
    assert_allclose(U, plain.transform(X, Y)[1], atol=1e-12)


# --- bad input ------------------------------------------------------------------------------------
def test_bad_input_raises_value_errors_and_leaves_the_fit_alone():
    X, Y = two_views()
    with pytest.raises(NotFittedError):
        CCA(2).predict(X)
    with pytest.raises(ValueError, match="requires y"):
        CCA(2).fit(X)
    with pytest.raises(ValueError, match="inconsistent numbers of samples"):
        CCA(2).fit(X, Y[:-1])
    for value in (np.nan, np.inf):
        bad = Y.copy()
        bad[3, 1] = value
        with pytest.raises(ValueError, match="NaN|infinity"):
            CCA(2).fit(X, bad)
    est = CCA(2).fit(X, Y)
    coef = est.coef_.copy()
    with pytest.raises(ValueError, match="X has 4 features, but CCA is expecting 5"):
        est.predict(X[:, :4])
    with pytest.raises(ValueError, match="Y has 3 features, but CCA is expecting 4"):
        est.transform(X, Y[:, :3])
    with pytest.raises(ValueError, match="n_components_ = 2"):
        est.inverse_transform(np.zeros((3, 3)))
    with pytest.raises(ValueError, match=r"expected Y scores of shape \(3, 2\)"):
        est.inverse_transform(np.zeros((3, 2)), np.zeros((3, 1)))
    assert_array_equal(est.coef_, coef)


# --- orthogonal CCA: the same API where it is defined --------------------------------------------
def test_orthogonal_cca_speaks_the_same_regression_api():
    """OrthogonalCCA's weights are its orthonormal rotations; the loadings, coef_ and predict
    keep the least-squares meanings; n_iter_ is ldr's single count."""
    X, Y = two_views()
    est = fit_quietly(OrthogonalCCA(2), X, Y)
    W = est.x_weights_
    assert_array_equal(W, est.x_rotations_)
    assert_allclose(W.T @ W, np.eye(2), atol=1e-12)
    assert_allclose(est.x_rotations_, W @ np.linalg.inv(est.x_loadings_.T @ W), atol=1e-10)
    T, U = est.transform(X, Y)
    Xc = X - X.mean(axis=0)
    assert_allclose(est.x_loadings_, np.linalg.lstsq(T, Xc, rcond=None)[0].T, atol=1e-10)
    design = np.column_stack([np.ones(len(X)), T])
    fitted = design @ np.linalg.lstsq(design, Y, rcond=None)[0]
    assert_allclose(est.predict(X), fitted, atol=1e-10)
    assert est.coef_.shape == (Y.shape[1], X.shape[1])
    assert isinstance(est.n_iter_, (int, np.integer)) and est.n_iter_ >= 0
