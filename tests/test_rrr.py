"""Reduced-rank (ridge) regression (survey §3.2.4, Eq. 24–25): the Grassmann program against
the classical closed form, against an unprofiled factorization, and the estimator against
scikit-learn's Ridge / LinearRegression where the rank constraint is void."""

import warnings

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import LinearRegression, Ridge

import ldr
import ldr.estimators as est
from ldr.objectives import ReducedRankRegression
from ldr.objectives.rrr import penalized_cost, reduced_rank_closed_form


def _problem(seed):
    """A random problem: n, p, q, r vary; inputs of mixed scales; a low-rank signal."""
    rng = np.random.default_rng(seed)
    n, p, q = int(rng.integers(20, 120)), int(rng.integers(2, 12)), int(rng.integers(2, 8))
    r = int(rng.integers(1, min(p, q)))   # a constraint that binds: r < min(p, q)
    X = rng.standard_normal((n, p)) * rng.uniform(0.1, 10.0, p) + rng.uniform(-5, 5, p)
    k = int(rng.integers(1, min(p, q) + 1))
    Y = X @ rng.standard_normal((p, k)) @ rng.standard_normal((k, q)) \
        + rng.standard_normal((n, q)) + 3.0
    return X, Y, r


@pytest.mark.parametrize("seed", range(20))
def test_alpha_zero_equals_the_closed_form(seed):
    """λ = 0: the answer's cost equals the classical reduced-rank regression (OLS fit
    projected onto the top-r right singular vectors of its fitted values) to 1e-8 relative;
    λ > 0: it beats that closed form's penalized cost, and "fit, then project"."""
    X, Y, r = _problem(seed)
    closed = reduced_rank_closed_form(X, Y, r)
    f_closed = penalized_cost(X, Y, closed)
    model = est.ReducedRankRegression(r).fit(X, Y)
    assert model.result_.converged
    assert abs(model.cost_ - f_closed) <= 1e-8 * f_closed
    assert abs(penalized_cost(X, Y, model.coef_.T) - f_closed) <= 1e-8 * f_closed
    assert np.linalg.matrix_rank(model.coef_, tol=1e-9 * np.abs(model.coef_).max()) <= r
    alpha = 0.5 * np.linalg.norm(X - X.mean(0), 2) ** 2      # a penalty that matters
    ridge = est.ReducedRankRegression(r, alpha=alpha).fit(X, Y)
    assert ridge.cost_ < penalized_cost(X, Y, closed, alpha)
    obj = ReducedRankRegression(X, Y, r, alpha=alpha)  # the program built on the rows
    assert ridge.cost_ <= obj.penalized_cost(obj.heuristic()) + 1e-12 * ridge.cost_
    assert obj.penalized_cost(ridge.M_) == pytest.approx(ridge.cost_, rel=1e-10)
    assert obj.global_gap(ridge.M_) <= 1e-12


@pytest.mark.parametrize("seed", [0, 2, 3])
def test_profiled_grassmann_program_equals_the_unprofiled_factorization(seed):
    """Minimizing F(G Hᵀ) over both factors in R^{p×r} × R^{q×r} (autograd, trust region,
    three random starts) finds no lower penalized cost than the Grassmann program, and reaches
    it: profiling G out loses nothing."""
    X, Y, r = _problem(seed)
    alpha = 3.0
    obj = ReducedRankRegression(X, Y, r, alpha=alpha)
    best = ldr.solve(obj, "trust-region", start="random", random_state=seed, tol=1e-10)
    Xc, Yc = X - X.mean(0), Y - Y.mean(0)
    p, q = X.shape[1], Y.shape[1]

    def F(P):
        B = P[0] @ P[1].T
        return ((Yc - Xc @ B) ** 2).sum() + alpha * (B * B).sum()

    full = ldr.objective(F, shape=((p, r), (q, r)), manifold=("euclidean", "euclidean"))
    costs = [ldr.solve(full, "trust-region", start="random", random_state=s, tol=1e-9,
                       max_iter=2000).cost for s in range(3)]
    assert min(costs) >= best.cost * (1 - 1e-8)
    assert min(costs) == pytest.approx(best.cost, rel=1e-6)
    assert best.cost == pytest.approx(obj.cost(obj.optimum()), rel=1e-12)


def test_the_objective_is_an_eigenproblem_and_passes_ldr_check():
    X, Y, r = _problem(3)
    obj = ReducedRankRegression(X, Y, r, alpha=2.0)
    assert ldr.check(obj, random_state=0)
    res = ldr.solve(obj, "ism")
    assert res.n_iter <= 1 and res.converged
    assert ldr.manifolds.sin_largest_angle(res.M, obj.optimum()) <= 1e-10
    # the cost is the penalized cost at B(V) = B_ridge V Vᵀ, for any V, not only the optimum
    V = ldr.manifolds.orthonormalize(np.random.default_rng(0).standard_normal(obj.shape))
    assert obj.cost(V) == pytest.approx(obj.penalized_cost(V), rel=1e-10)


def test_void_rank_constraint_is_ridge_and_least_squares():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((50, 4))
    Y = X @ rng.standard_normal((4, 3)) + rng.standard_normal((50, 3))
    for alpha, ref in [(0.0, LinearRegression()), (2.5, Ridge(alpha=2.5))]:
        ours = est.ReducedRankRegression(alpha=alpha).fit(X, Y)   # None: min(p, q) = 3
        ref.fit(X, Y)
        assert ours.n_components_ == 3 and ours.result_.solver == "closed-form"
        np.testing.assert_allclose(ours.coef_, ref.coef_, rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(ours.intercept_, ref.intercept_, rtol=1e-10, atol=1e-12)
    y = Y[:, 0]
    one = est.ReducedRankRegression().fit(X, y)
    assert one.coef_.shape == (4,) and isinstance(one.intercept_, float)
    np.testing.assert_allclose(one.predict(X), LinearRegression().fit(X, y).predict(X),
                               atol=1e-10)


def test_transform_and_predict_follow_the_survey_map():
    X, Y, r = _problem(5)
    model = est.ReducedRankRegression(r, alpha=1.0).fit(X, Y)
    T = model.transform(X)
    assert T.shape == (X.shape[0], r)
    np.testing.assert_allclose(T, (X - model.mean_) @ model.components_.T, atol=1e-10)
    np.testing.assert_allclose(model.predict(X), T @ model.y_loadings_.T + model.y_mean_,
                               atol=1e-9)
    np.testing.assert_allclose(model.y_loadings_.T @ model.y_loadings_, np.eye(r), atol=1e-10)
    # the survey's S Vᵀ: components_ = diag(S_B) U_Bᵀ, rows orthogonal, norms decreasing
    norms = np.linalg.norm(model.components_, axis=1)
    assert np.all(np.diff(norms) <= 1e-12)
    assert 0 < model.score(X, Y) <= 1
    assert list(model.get_feature_names_out()) == [f"reducedrankregression{i}"
                                                   for i in range(r)]


def test_errors_and_warnings():
    X, Y, _ = _problem(6)
    with pytest.raises(ValueError, match="n_components"):
        est.ReducedRankRegression(min(X.shape[1], Y.shape[1]) + 1).fit(X, Y)
    with pytest.raises(ValueError, match="alpha"):
        est.ReducedRankRegression(1, alpha=-1.0).fit(X, Y)
    with pytest.raises(ValueError, match="y"):
        est.ReducedRankRegression(1).fit(X, None)
    with pytest.raises(ValueError, match="at least 2 outputs"):
        ReducedRankRegression(X, Y[:, 0], 1)
    with pytest.raises(ValueError, match="rows but X has"):
        ReducedRankRegression(X, Y[:-1], 1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(ConvergenceWarning, match="did not converge"):
            est.ReducedRankRegression(1, alpha=1.0, solver="gradient", start="random",
                                      max_iter=1).fit(X, Y)


@pytest.mark.parametrize("seed", range(5))
def test_ridge_answer_equals_mukherjee_zhu(seed):
    """α > 0: the published reduced-rank ridge estimator (Mukherjee & Zhu 2011) — ridge on the
    augmented data X* = [X; √α I], Y* = [Y; 0] (least squares), projected onto the top-r right
    singular vectors of its fitted values X*B — is the Grassmann program's answer."""
    X, Y, r = _problem(seed)
    alpha = 0.3 * np.linalg.norm(X - X.mean(0), 2) ** 2
    Xc, Yc = X - X.mean(0), Y - Y.mean(0)
    p, q = X.shape[1], Y.shape[1]
    Xa, Ya = np.vstack([Xc, np.sqrt(alpha) * np.eye(p)]), np.vstack([Yc, np.zeros((p, q))])
    B_ridge = np.linalg.lstsq(Xa, Ya, rcond=None)[0]
    Vt = np.linalg.svd(Xa @ B_ridge)[2]
    B_mz = B_ridge @ Vt[:r].T @ Vt[:r]
    ours = est.ReducedRankRegression(r, alpha=alpha).fit(X, Y)
    np.testing.assert_allclose(ours.coef_.T, B_mz, rtol=1e-8, atol=1e-10 * np.abs(B_mz).max())
    assert ours.cost_ == pytest.approx(penalized_cost(X, Y, B_mz, alpha), rel=1e-10)


def test_float32_fit_whose_coefficients_exceed_float32_stays_finite():
    # soak counterexample: float32 X at 1e-31 against targets at 1e8 gives coefficients of
    # ~1e39; cast to float32 with the other fitted arrays they became inf and transform(X)
    # returned ±inf.  Such an array now stays float64; the output is float32 and finite
    X = np.array([[1.2573021748711541e-31], [-1.3210486457690714e-31]], dtype=np.float32)
    Y = np.array([[1e8], [-1e8]])
    a = ldr.estimators.ReducedRankRegression(1).fit(X, Y)
    b = ldr.estimators.ReducedRankRegression(1).fit(X.astype(np.float64), Y)
    Z = a.transform(X)
    assert Z.dtype == np.float32 and np.all(np.isfinite(Z))
    np.testing.assert_allclose(Z, b.transform(X.astype(np.float64)), rtol=1e-6)
    assert a.components_.dtype == np.float64  # 1e39 does not fit float32


def test_float32_inputs_collinear_to_their_rounding_are_collinear():
    # make_classification's two redundant features are exact combinations of two others;
    # rounded to float32 they are not, by 1e-7 relative: with float64's rank threshold the
    # least-squares fit took those rounding directions (coefficients of 4e6, float32
    # predictions off by 0.7); at float32's threshold the fit equals the float64 one's
    from sklearn.datasets import make_classification

    X, y = make_classification(n_samples=30, n_features=10, random_state=42)
    fit64 = est.ReducedRankRegression().fit(X, y)
    fit32 = est.ReducedRankRegression().fit(X.astype(np.float32), y)
    assert fit32.coef_.dtype == np.float32
    assert np.max(np.abs(fit32.coef_)) < 10
    np.testing.assert_allclose(fit32.predict(X.astype(np.float32)), fit64.predict(X),
                               atol=1e-4)
