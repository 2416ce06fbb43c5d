"""Fitting where the objectives refuse: singular scatter and covariance matrices.

The objectives keep refusing (they are the mathematical object); the estimators fit in the
span of the data (``subspace_``) and, for OrthogonalLDA where classes collapse to points,
shrink by OAS (``shrinkage_``).  Checked here: agreement with scikit-learn's LDA where
theory says it must (two classes, r = 1, S_w non-singular on the span), invariance where the
redundant column changes nothing (a constant column is an isometric embedding; SFA and
traditional CCA do not depend on the coordinates), and the fitted attributes' meaning."""

import warnings

import numpy as np
import pytest
from sklearn.discriminant_analysis import LinearDiscriminantAnalysis as SkLDA
from sklearn.model_selection import KFold, cross_val_predict

import ldr
from ldr import estimators as est
from ldr.core.problem import Problem
from ldr.data.validation import oas_shrinkage, shrink

warnings.filterwarnings("ignore", message="Variables are collinear")


def _two_classes(n=120, d=6, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d)) * rng.uniform(0.5, 2.0, d)
    y = np.arange(n) % 2
    X[y == 1] += 0.8 * rng.standard_normal(d)
    return X, y


def _singular_versions(X):
    n = X.shape[0]
    return {"duplicated": np.column_stack([X, X[:, 2]]),
            "collinear": np.column_stack([X[:, :3], X[:, 0] - 2 * X[:, 1], X[:, 3:]]),
            "constant": np.column_stack([X, np.full(n, 7.0)]),
            "dummy trap": np.column_stack([X, np.eye(3)[np.arange(n) % 3]])}


@pytest.mark.parametrize("kind", ["duplicated", "collinear", "constant", "dummy trap"])
def test_lda_agrees_with_sklearn_in_the_span_of_collinear_data(kind):
    """Two classes, r = 1, S_w non-singular on the span: the trace-ratio optimum is the
    Fisher direction S_w⁺(μ₁ − μ₀) in the span, as scikit-learn's SVD solver finds it."""
    X, y = _two_classes()
    Xs = _singular_versions(X)[kind]
    with pytest.raises(ValueError, match="within-class scatter S_w is singular"):
        ldr.objectives.LDA(Xs, y, 1)                  # the objective still refuses
    fit, sk = est.OrthogonalLDA().fit(Xs, y), SkLDA().fit(Xs, y)
    k = np.linalg.matrix_rank(Xs - Xs.mean(axis=0))
    assert fit.subspace_.shape == (Xs.shape[1], k) and fit.shrinkage_ == 0.0
    np.testing.assert_allclose(fit.subspace_.T @ fit.subspace_, np.eye(k), atol=1e-12)
    np.testing.assert_allclose(fit.predict_proba(Xs), sk.predict_proba(Xs), atol=1e-10)
    np.testing.assert_array_equal(fit.predict(Xs), sk.predict(Xs))
    z, zs = fit.transform(Xs)[:, 0], sk.transform(Xs)[:, 0]
    assert abs(np.corrcoef(z, zs)[0, 1]) > 1 - 1e-12
    np.testing.assert_allclose(fit.M_.T @ fit.M_, [[1.0]], atol=1e-12)
    np.testing.assert_allclose(fit.decision_function(Xs), Xs @ fit.coef_[0] + fit.intercept_[0],
                               atol=1e-9)
    np.testing.assert_allclose(fit.mean_, Xs.mean(axis=0), atol=1e-12)
    # reg=0.0 (no shrinkage) takes the same span: nothing here needs shrinking
    np.testing.assert_allclose(est.OrthogonalLDA(shrinkage=0.0).fit(Xs, y).M_, fit.M_, atol=1e-12)


def test_lda_on_statsmodels_survey_table_with_every_dummy():
    """anes96 with every level of PID and educ one-hot encoded: the dummies of each variable
    sum to 1 (the dummy trap), so S_w has rank 18 of 20; ldr refused, scikit-learn fits."""
    pd = pytest.importorskip("pandas")
    sm = pytest.importorskip("statsmodels.api")
    df = sm.datasets.anes96.load_pandas().data
    X = pd.concat([df[["TVnews", "selfLR", "ClinLR", "DoleLR", "age", "logpopul"]]]
                  + [pd.get_dummies(df[c].astype(int), prefix=c, dtype=float)
                     for c in ("PID", "educ")], axis=1)
    y = df.vote.to_numpy(int)
    fit, sk = est.OrthogonalLDA().fit(X, y), SkLDA().fit(X, y)
    assert fit.subspace_.shape == (20, 18) and fit.shrinkage_ == 0.0
    np.testing.assert_allclose(fit.predict_proba(X), sk.predict_proba(X), atol=1e-10)
    assert list(fit.feature_names_in_) == list(X.columns)


def test_lda_cross_validation_with_a_dummy_constant_in_a_fold():
    """A rare category's dummy is all zeros in the folds that miss its rows: every fold's
    fit works in its own span and predicts as scikit-learn's does."""
    X, y = _two_classes(90)
    rare = np.zeros(90)
    rare[:4] = 1.0                        # rows 0..3 only: constant in 2 of the 3 folds
    Xs = np.column_stack([X, rare])
    folds = KFold(3)
    ours = cross_val_predict(est.OrthogonalLDA(), Xs, y, cv=folds, method="predict_proba")
    theirs = cross_val_predict(SkLDA(), Xs, y, cv=folds, method="predict_proba")
    np.testing.assert_allclose(ours, theirs, atol=1e-10)
    fit = est.OrthogonalLDA().fit(Xs[30:], y[30:])
    assert fit.subspace_.shape == (7, 6) and np.abs(fit.M_[-1]).max() < 1e-12


def test_lda_with_fewer_samples_than_features_shrinks_by_oas_on_the_span():
    """n < d: along n_classes − 1 directions of the span every class is one point, so the
    ratio is unbounded; S_w on the span is shrunk by the OAS coefficient with n − C degrees
    of freedom, which makes it non-singular and the fit well posed."""
    rng = np.random.default_rng(1)
    n, d, C = 30, 50, 3
    X = rng.standard_normal((n, d))
    y = np.arange(n) % C
    X[:, :2] += 2.0 * np.eye(C)[y][:, :2]
    with pytest.raises(ValueError, match=r"^X: the within-class scatter S_w is singular on the "
                       r"span .*shrinkage=None .*shrinkage='auto'"):
        est.OrthogonalLDA(shrinkage=0.0).fit(X, y)
    fit = est.OrthogonalLDA().fit(X, y)
    U = fit.subspace_
    assert U.shape == (d, n - 1)
    Z = X @ U
    Sw, _, _ = ldr.data.rows.moments(Z, y).class_scatter()
    assert np.linalg.matrix_rank(Sw) == n - C                   # singular on the span
    rho = oas_shrinkage(Sw, n - C)
    assert 0 < rho <= 1 and fit.shrinkage_ == pytest.approx(rho, rel=1e-12)
    np.testing.assert_allclose(fit.objective_.Sw, shrink(Sw, rho), atol=1e-12)
    assert np.isfinite(fit.ratio_) and fit.result_.converged
    np.testing.assert_allclose(U @ (U.T @ fit.M_), fit.M_, atol=1e-12)  # in the span
    assert fit.predict(X).shape == (n,) and np.all(np.isfinite(fit.predict_proba(X)))
    # "auto" is OAS in the full space, and a number is that shrinkage, as before
    auto = est.OrthogonalLDA(shrinkage="auto").fit(X, y)
    full, _, _ = ldr.data.rows.moments(X, y).class_scatter()
    assert auto.subspace_ is None
    assert auto.shrinkage_ == pytest.approx(oas_shrinkage(full, n - C), rel=1e-12)
    assert est.OrthogonalLDA(shrinkage=0.3).fit(X, y).shrinkage_ == 0.3
    with pytest.raises(ValueError,
                       match=r"^shrinkage: must be None, 'auto' or a number in \[0, 1\]"):
        est.OrthogonalLDA(shrinkage="oas").fit(X, y)


def test_lda_chunked_singular_data_match_in_memory():
    da = pytest.importorskip("dask.array")
    X, y = _two_classes(200, 5, seed=3)
    X = np.column_stack([X, X[:, 0] + X[:, 1], np.ones(200)])
    a = est.OrthogonalLDA().fit(X, y)
    b = est.OrthogonalLDA().fit(da.from_array(X, chunks=(37, -1)), da.from_array(y, chunks=37))
    np.testing.assert_allclose(b.M_, a.M_, atol=1e-9)
    np.testing.assert_allclose(b.coef_, a.coef_, rtol=1e-7, atol=1e-9)


# --- the other estimators: fits, and invariance where the redundant column changes nothing ----
def _series(n=200, d=6, seed=0):
    return ldr.datasets.make_maf(n, d, seed=seed)


@pytest.mark.parametrize("make", [lambda: est.MAF(2), lambda: est.SFA(2),
                                  lambda: est.LPP(2, n_neighbors=8),
                                  lambda: est.NPE(2, n_neighbors=8)],
                         ids=["MAF", "SFA", "LPP", "NPE"])
def test_a_constant_column_changes_nothing(make):
    """[X, c] is an isometric copy of X (same centered rows, one zero coordinate): the fit
    in its span is the fit on X, padded with a zero row."""
    X = _series()
    Xc = np.column_stack([X[:, :3], np.full(len(X), -2.5), X[:, 3:]])
    a, b = make().fit(X), make().fit(Xc)
    assert a.subspace_ is None and b.subspace_.shape == (7, 6)
    assert b.cost_ == pytest.approx(a.cost_, rel=1e-8, abs=1e-12)
    # the point, with its zero row for the constant column removed, is optimal for X's
    # problem: the same cost there, and a gradient as small as the fit's own (LPP's optimum
    # is nearly flat on this data, so the points are compared by cost, not by subspace)
    assert np.abs(b.M_[3]).max() < 1e-10 and np.abs(b.components_[:, 3]).max() < 1e-10
    M = np.delete(b.M_, 3, axis=0)
    assert a.objective_.cost(M) == pytest.approx(a.cost_, rel=1e-8, abs=1e-12)
    problem = Problem(a.objective_)
    G = problem.rgrad(M, problem.egrad(M))
    assert np.linalg.norm(G) < 1e-6 * max(1.0, abs(a.cost_))
    np.testing.assert_allclose(b.mean_, Xc.mean(axis=0), atol=1e-12)


def test_sfa_does_not_depend_on_redundant_columns_and_maf_is_bounded_on_n_below_d():
    """SFA whitens, so it is invariant to invertible changes of coordinates: the collinear
    column leaves its slowness and features unchanged.  MAF with n < d fits in the span of
    the n − 1 centered rows (and its autocorrelation stays in [−1, 1])."""
    X = _series()
    Xs = np.column_stack([X, X[:, 0] - 3 * X[:, 4]])
    a, b = est.SFA(2).fit(X), est.SFA(2).fit(Xs)
    assert b.slowness_ == pytest.approx(a.slowness_, rel=1e-9)
    np.testing.assert_allclose(np.abs(b.transform(Xs)), np.abs(a.transform(X)), atol=1e-7)
    wide = _series(n=25, d=40, seed=2)
    with pytest.raises(ValueError, match="Σ is singular"):
        ldr.objectives.MAF(wide, 2)
    fit = est.MAF(3).fit(wide)
    assert fit.subspace_.shape == (40, 24) and -1.0 <= fit.autocorrelation_ <= 1.0
    np.testing.assert_allclose(fit.M_.T @ fit.M_, np.eye(3), atol=1e-12)
    with pytest.raises(ValueError, match=r"^n_components: .* < 24, the rank of X"):
        est.MAF(30).fit(wide)


def test_sfa_on_statsmodels_macrodata_with_every_quarter_dummy():
    """A real series with a singular covariance: macrodata with all four quarter dummies
    (they sum to 1).  SFA fits; it equals the fit with three dummies (SFA is invariant to
    the coordinates of the span, and the two tables span the same space)."""
    sm = pytest.importorskip("statsmodels.api")
    df = sm.datasets.macrodata.load_pandas().data
    base = df[["realgdp", "realcons", "realinv", "unemp", "infl"]].to_numpy(float)
    quarters = np.eye(4)[df.quarter.to_numpy(int) - 1]
    full = np.column_stack([base, quarters])
    three = np.column_stack([base, quarters[:, :3]])
    a, b = est.SFA(2).fit(three), est.SFA(2).fit(full)
    assert a.subspace_ is None and b.subspace_.shape == (9, 8)
    assert b.slowness_ == pytest.approx(a.slowness_, rel=1e-8)
    assert -1.0 <= est.MAF(2).fit(full).autocorrelation_ <= 1.0


def test_two_view_and_wda_fit_singular_views():
    Xa, Xb = ldr.datasets.make_cca(200, 5, seed=4)
    Xa2 = np.column_stack([Xa, np.ones(200)])                      # isometric
    a, b = est.OrthogonalCCA(2).fit(Xa, Xb), est.OrthogonalCCA(2).fit(Xa2, Xb)
    assert b.x_subspace_.shape == (6, 5) and b.y_subspace_ is None
    assert b.correlation_ == pytest.approx(a.correlation_, rel=1e-9)
    np.testing.assert_allclose(b.canonical_correlations_, a.canonical_correlations_, rtol=1e-8)
    X, y = ldr.datasets.make_wda(150, seed=1)
    Xc = np.column_stack([X, np.full(150, 3.0)])
    a, b = est.WassersteinDA(2).fit(X, y), est.WassersteinDA(2).fit(Xc, y)
    assert b.subspace_.shape == (X.shape[1] + 1, X.shape[1])
    assert b.ratio_ == pytest.approx(a.ratio_, rel=1e-6)
    np.testing.assert_allclose(np.abs(b.transform(Xc)), np.abs(a.transform(X)), atol=1e-6)


def test_lpp_fits_where_an_outliers_heat_weights_underflow():
    """A row far from all others has heat weights e^{-‖x−x'‖²/τ} = 0: it drops out of S_D with
    the one direction only it spans, so S_D is singular although the covariance is not.  The
    estimator fits in the span of S_D, and the answer is the fit without that row (which
    contributes nothing to S_L or S_D)."""
    rng = np.random.default_rng(3)
    X = np.zeros((61, 4))
    X[:60, :3] = rng.standard_normal((60, 3)) * [3.0, 1.0, 0.5]
    X[60] = [0.0, 0.0, 0.0, 1e3]
    assert np.linalg.matrix_rank(np.cov(X.T)) == 4
    with pytest.raises(ValueError, match="S_D is singular"):
        ldr.objectives.LPP(X, 2, n_neighbors=6, tau=2.0)
    fitted = est.LPP(2, n_neighbors=6, tau=2.0).fit(X)
    assert fitted.subspace_.shape == (4, 3) and fitted.result_.converged
    assert fitted.far_rows_.tolist() == [60]
    assert np.allclose(fitted.M_[3], 0.0, atol=1e-12)    # no weight along the outlier's axis
    inliers = est.LPP(2, n_neighbors=6, tau=2.0).fit(X[:60, :3])
    assert fitted.ratio_ == pytest.approx(inliers.ratio_, rel=1e-8)
    # the default τ is the median squared edge length of all the rows, the outlier's included
    tau = ldr.objectives.graph.lpp_scatters(X, 6)[3]
    assert est.LPP(2, n_neighbors=6).fit(X).ratio_ == pytest.approx(
        est.LPP(2, n_neighbors=6, tau=tau).fit(X[:60, :3]).ratio_, rel=1e-8)
    assert est.LPP(2, n_neighbors=6).fit(X[:60]).far_rows_.size == 0
