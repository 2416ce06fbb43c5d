"""Undercomplete ICA (survey §3.2.1, Eq. 21): the formula against scipy's densities, the
oracles, the FOBI start, the Amari distance, and recovery of weak sources where PCA-first
FastICA loses them."""

import warnings

import numpy as np
import pytest
import scipy.linalg
import scipy.optimize
import scipy.stats
from sklearn.decomposition import FastICA
from sklearn.exceptions import ConvergenceWarning

import ldr
import ldr.estimators as est
from ldr.objectives import UndercompleteICA
from ldr.objectives.ica import amari_distance, source_correlations
from ldr.objectives.ica_priors import switching_statistic


def _mixture_logpdf(y):
    return np.log(0.5 * scipy.stats.norm.pdf(y, 1, 1) + 0.5 * scipy.stats.norm.pdf(y, -1, 1))


LOGPDF = {"supergaussian": scipy.stats.hypsecant.logpdf, "subgaussian": _mixture_logpdf}


@pytest.mark.parametrize("prior", ["supergaussian", "subgaussian"])
def test_square_case_is_the_ica_log_likelihood(prior):
    """r = d: cost = −mean log p(z) with z = M^{-T} s, s_k iid from the prior (scipy's
    hypsecant, or the ±1 Gaussian mixture): log p(z) = log|det M| + Σ_k log p(m_kᵀz)."""
    X = ldr.datasets.make_uica(400, 4, 2, seed=1)[0]
    obj = UndercompleteICA(X, 4, prior=prior)
    M = np.random.default_rng(0).standard_normal((4, 4))
    Y = obj.Z @ M
    loglik = np.log(abs(np.linalg.det(M))) + LOGPDF[prior](Y).sum(axis=1).mean()
    assert obj.cost(M) == pytest.approx(-loglik, rel=1e-12)


def test_undercomplete_cost_is_the_likelihood_with_gaussian_complement():
    """r < d: complete M with an orthonormal basis M⊥ of span(M)^⊥ carrying standard normal
    priors; on whitened data cost(M) = −mean log p(z) − (d − r)(1 + log 2π)/2, for any M
    (module docstring) — the survey's Eq. 21 with its sign made a cost."""
    X = ldr.datasets.make_uica(500, 6, 2, seed=2)[0]
    obj = UndercompleteICA(X, 2, prior=["supergaussian", "subgaussian"])
    np.testing.assert_allclose(obj.Z.T @ obj.Z / obj.Z.shape[0], np.eye(6), atol=1e-10)
    rng = np.random.default_rng(3)
    for _ in range(3):
        M = rng.standard_normal((6, 2)) * [0.5, 2.0]
        Mperp = scipy.linalg.null_space(M.T)
        T = np.hstack([M, Mperp])
        Y = obj.Z @ T
        loglik = (np.log(abs(np.linalg.det(T))) + LOGPDF["supergaussian"](Y[:, 0])
                  + LOGPDF["subgaussian"](Y[:, 1])
                  + scipy.stats.norm.logpdf(Y[:, 2:]).sum(axis=1)).mean()
        assert obj.cost(M) == pytest.approx(-loglik - 4 * 0.5 * (1 + np.log(2 * np.pi)),
                                            rel=1e-12)
        assert obj.log_likelihood(M) == pytest.approx(loglik, rel=1e-12)


@pytest.mark.parametrize("prior", ["supergaussian", "subgaussian", ["subgaussian",
                                                                     "supergaussian"]])
def test_hand_written_gradient_and_hessian_pass_ldr_check(prior):
    X = ldr.datasets.make_uica(300, 5, 2, seed=0)[0]
    obj = UndercompleteICA(X, 2, prior=prior)
    assert obj.provides("egrad") and obj.provides("ehvp")
    report = ldr.check(obj, random_state=4)
    assert report, str(report)
    # the hand-written oracles equal autograd's derivative of the same cost
    auto = ldr.objective(obj.cost, shape=obj.shape, manifold="euclidean")
    rng = np.random.default_rng(5)
    M, V = rng.standard_normal(obj.shape), rng.standard_normal(obj.shape)
    np.testing.assert_allclose(obj.egrad(M), auto.egrad(M), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(obj.ehvp(M, V), auto.ehvp(M, V), rtol=1e-9, atol=1e-11)


def test_many_products_at_one_point_use_the_hessian_blocks_and_agree():
    """An inner solve's products at one point switch to the per-column blocks A_j after k/4
    of them (ehvp_at): every product equals autograd's Hessian-vector product, before and
    after the switch, with mixed priors."""
    X = ldr.datasets.make_uica(400, 8, 3, sources="mixed", seed=2)[0]
    obj = UndercompleteICA(X, 3, prior=["supergaussian", "subgaussian", "supergaussian"])
    auto = ldr.objective(obj.cost, shape=obj.shape, manifold="euclidean")
    rng = np.random.default_rng(6)
    M = obj.heuristic() + 0.2 * rng.standard_normal(obj.shape)
    hvp = obj.ehvp_at(M)
    for _ in range(obj.shape[0] // 4 + 4):  # past the switch (k // 4 + 1 products)
        V = rng.standard_normal(obj.shape)
        np.testing.assert_allclose(hvp(V), auto.ehvp(M, V), rtol=1e-9, atol=1e-11)


def test_best_scales_solve_the_one_column_problem():
    """best_scales: the root of φ′(t) = −1 + mean(u ρ′(u)), u = e^t y, per column (module
    docstring of ica.py), equal to a scalar minimization of the 1-D cost, for both priors;
    a column that keeps φ′ of one sign ends at the interval's end."""
    from ldr.objectives.ica_priors import best_scales, log_prior

    rng = np.random.default_rng(3)
    Y = np.column_stack([rng.laplace(size=2000), rng.uniform(-2, 2, 2000),
                         0.3 * rng.standard_normal(2000), 1e-4 * rng.standard_normal(2000)])
    sub = np.array([False, True, True, False])
    c = best_scales(Y, sub)
    for j in range(3):
        prior = "subgaussian" if sub[j] else "supergaussian"
        res = scipy.optimize.minimize_scalar(
            lambda t, j=j, prior=prior: -t - np.mean(log_prior(np.exp(t) * Y[:, j], prior)),
            bounds=(-5, 5), method="bounded", options={"xatol": 1e-12})
        assert np.log(c[j]) == pytest.approx(res.x, abs=1e-6)
        u = c[j] * Y[:, j]
        rho1 = u - np.tanh(u) if sub[j] else np.tanh(u)
        assert np.mean(u * rho1) - 1.0 == pytest.approx(0.0, abs=1e-12)
    assert c[3] == pytest.approx(np.exp(5.0))  # too small a column: the bound


def test_fobi_matrix_has_the_source_kurtoses():
    """Under the model the FOBI matrix is Σ_j κ_j a_j a_jᵀ: two Laplace sources (κ = 3) and
    Gaussian components (κ = 0) give two eigenvalues near 3, the rest near 0."""
    X = ldr.datasets.make_uica(200_000, 5, 2, seed=0)[0]
    w = np.linalg.eigvalsh(UndercompleteICA(X, 2).fobi_matrix())
    np.testing.assert_allclose(w[-2:], 3.0, atol=0.3)
    np.testing.assert_allclose(w[:-2], 0.0, atol=0.15)


def test_amari_distance():
    rng = np.random.default_rng(0)
    A = rng.standard_normal((5, 5))
    W = np.linalg.inv(A)[:2]
    assert amari_distance(W, A) == pytest.approx(0.0, abs=1e-12)
    # permuted and scaled rows are as good
    assert amari_distance(np.array([[0.0, -3.0], [2.0, 0.0]]) @ W, A) == pytest.approx(
        0.0, abs=1e-12)
    # leakage of a Gaussian component is seen (W A restricted to the sources would miss it)
    leaky = W + 0.3 * np.linalg.inv(A)[4]      # P = [[1, 0, 0, 0, .3], [0, 1, 0, 0, .3]]
    assert amari_distance(leaky, A) == pytest.approx(0.5 * 2 * 0.3 / (2 * 4))
    assert amari_distance(leaky, A[:, :2]) == pytest.approx(0.0, abs=1e-12)
    # both rows on one source: the column term sees the missing source
    twice = np.vstack([W[0], 2 * W[0]])
    assert amari_distance(twice, A) >= 0.25
    # the square case is the usual normalized Amari index
    P = rng.standard_normal((3, 3))
    B = np.abs(P)
    usual = ((B.sum(1) / B.max(1) - 1).sum() + (B.sum(0) / B.max(0) - 1).sum()) / (2 * 3 * 2)
    assert amari_distance(P, np.eye(3)) == pytest.approx(usual, rel=1e-12)


@pytest.mark.parametrize("seed", [0, 1])
def test_uica_recovers_weak_sources_that_pca_first_fastica_loses(seed):
    """Four Laplace sources (std 0.5 … 2) and six Gaussian components of std 1.5 in ten
    dimensions (ldr.datasets.make_uica): UICA separates all four; FastICA(n_components=4)
    reduces by PCA first, keeps noise and loses the weak sources (benchmarks/bench_uica.py
    reports 20 seeds at n = 5000)."""
    X, S, A = ldr.datasets.make_uica(3000, 10, 4, seed=seed)
    ica = est.UndercompleteICA(n_components=4).fit(X)
    assert ica.result_.converged
    assert amari_distance(ica.components_, A) <= 0.05
    assert source_correlations(ica.transform(X), S).min() >= 0.95
    fast = FastICA(n_components=4, whiten="unit-variance", random_state=seed).fit(X)
    assert amari_distance(fast.components_, A) > 0.05
    assert source_correlations(fast.transform(X), S).min() < 0.95


def test_subgaussian_prior_recovers_uniform_sources():
    X, S, A = ldr.datasets.make_uica(3000, 8, 3, sources="uniform", seed=0)
    ica = est.UndercompleteICA(n_components=3, prior="subgaussian").fit(X)
    assert amari_distance(ica.components_, A) <= 0.05
    assert source_correlations(ica.transform(X), S).min() >= 0.95


def test_solvers_agree_and_certify_from_the_fobi_start():
    X = ldr.datasets.make_uica(1500, 6, 2, seed=3)[0]
    obj = UndercompleteICA(X, 2)
    tr = ldr.solve(obj, "trust-region", start="heuristic", tol=1e-10, certify=True)
    cg = ldr.solve(obj, "conjugate-gradient", start="heuristic", max_iter=5000)  # its tol
    assert tr.converged and cg.converged and tr.certificate.is_local_min
    assert abs(tr.cost - cg.cost) <= 1e-10 * abs(tr.cost)
    assert tr.cost < obj.cost(obj.heuristic())


def test_estimator_attributes_follow_fastica():
    X, S, A = ldr.datasets.make_uica(1000, 6, 2, seed=4)
    ica = est.UndercompleteICA(2).fit(X)
    np.testing.assert_allclose(ica.transform(X), (X - ica.mean_) @ ica.components_.T,
                               atol=1e-12)
    np.testing.assert_allclose(ica.components_, (ica.whitening_.T @ ica.M_).T, atol=1e-12)
    np.testing.assert_allclose(ica.components_ @ ica.mixing_, np.eye(2), atol=1e-10)
    Zw = (X - ica.mean_) @ ica.whitening_.T
    np.testing.assert_allclose(Zw.T @ Zw / len(X), np.eye(6), atol=1e-10)
    back = ica.inverse_transform(ica.transform(X))
    # the reconstruction is the projection of X onto the span of the mixing columns
    np.testing.assert_allclose(ica.transform(back), ica.transform(X), atol=1e-9)
    assert ica.log_likelihood_ == pytest.approx(ica.objective_.log_likelihood(ica.M_))
    assert list(ica.get_feature_names_out()) == ["undercompleteica0", "undercompleteica1"]
    assert est.UndercompleteICA().fit(X).n_components_ == 6   # None: square ICA


def test_estimator_errors_and_warnings():
    X = ldr.datasets.make_uica(200, 4, 2, seed=0)[0]
    with pytest.raises(ValueError, match="n_components"):
        est.UndercompleteICA(5).fit(X)
    with pytest.raises(ValueError, match="prior"):
        est.UndercompleteICA(2, prior="gaussian").fit(X)
    with pytest.raises(ValueError, match="prior"):
        est.UndercompleteICA(2, prior=["subgaussian"]).fit(X)
    collinear = np.hstack([X, X[:, :1] + X[:, 1:2]])      # rank 4 in 5 features
    with pytest.raises(ValueError, match="rank of the covariance"):
        est.UndercompleteICA(5).fit(collinear)
    assert est.UndercompleteICA(2).fit(collinear).whitening_.shape == (4, 5)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(ConvergenceWarning, match="did not converge"):
            est.UndercompleteICA(2, max_iter=1).fit(X)


@pytest.mark.parametrize("scale", [1e-7, 1e5])
def test_a_features_units_do_not_change_the_sources(scale):
    """Whitening reads the rank from the correlation: one feature in units 1e-7 (or 1e5)
    times the others' keeps its direction, and the same sources are recovered (a threshold on
    the covariance's eigenvalues dropped it and lost a source at 1e-5)."""
    X, S, A = ldr.datasets.make_uica(3000, 6, 2, seed=0)
    D = np.ones(6)
    D[0] = scale
    plain, scaled = est.UndercompleteICA(2).fit(X), est.UndercompleteICA(2).fit(X * D)
    assert scaled.objective_.shape == (6, 2)
    assert amari_distance(scaled.components_ * D, A) == pytest.approx(
        amari_distance(plain.components_, A), abs=1e-6)
    assert amari_distance(plain.components_, A) < 0.05
    np.testing.assert_allclose(np.abs(scaled.transform(X * D)), np.abs(plain.transform(X)),
                               atol=1e-6)


def test_a_constant_feature_is_dropped_from_the_whitening():
    X = ldr.datasets.make_uica(500, 5, 2, seed=1)[0]
    X[:, 2] = 3.0
    ica = est.UndercompleteICA(2).fit(X)
    assert ica.objective_.shape == (4, 2) and np.all(ica.whitening_[:, 2] == 0)
    Z = (X - ica.mean_) @ ica.whitening_.T
    np.testing.assert_allclose(Z.T @ Z / len(X), np.eye(4), atol=1e-10)


def _matched_priors(ica, X, S):
    """The prior of the estimate matched to each true source (Hungarian, on |corr|)."""
    C = np.abs(np.corrcoef(S.T, ica.transform(X).T)[:S.shape[1], S.shape[1]:])
    rows, cols = scipy.optimize.linear_sum_assignment(-C)
    return [ica.priors_[c] for c in cols[np.argsort(rows)]]


@pytest.mark.parametrize("seed", [100, 101, 102])
def test_auto_priors_recover_mixed_laplace_and_uniform_sources(seed):
    """Laplace sources 0 and 2, uniform 1 and 3 in one model (make_uica(sources="mixed")):
    one prior for all loses the uniform ones; the default "auto" gives each source the prior
    of its kind and recovers all four (benchmarks/bench_uica.py: 20 of 20 seeds at n = 5000;
    these seeds are not among them)."""
    X, S, A = ldr.datasets.make_uica(3000, 10, 4, sources="mixed", seed=seed)
    ica = est.UndercompleteICA(4).fit(X)
    assert ica.result_.converged
    assert source_correlations(ica.transform(X), S).min() >= 0.95
    assert amari_distance(ica.components_, A) <= 0.05
    assert _matched_priors(ica, X, S) == ["supergaussian", "subgaussian"] * 2
    one = est.UndercompleteICA(4, prior="supergaussian").fit(X)
    corr = source_correlations(one.transform(X), S)
    assert corr[[1, 3]].min() < 0.95 and one.priors_ == ("supergaussian",) * 4


def _bimodal_with_outliers(n, rng):
    """±1 with a little noise (sub-Gaussian in its bulk) and 1% outliers at ±6, which make its
    excess kurtosis positive (about 3 to 5)."""
    b = rng.choice([-1.0, 1.0], n) + 0.15 * rng.standard_normal(n)
    out = rng.random(n) < 0.01
    b[out] = rng.choice([-6.0, 6.0], out.sum())
    return (b - b.mean()) / b.std()


@pytest.mark.parametrize("seed", [0, 1])
def test_auto_priors_are_re_evaluated_where_kurtosis_misleads(seed):
    """Extended infomax's statistic E[sech² y]E[y²] − E[y tanh y] is positive for Laplace and
    negative for uniform samples; for a bimodal source with rare outliers the kurtosis (FOBI)
    says super-Gaussian while the statistic says sub-Gaussian.  "auto" re-evaluates the
    statistic at the start and switches that source's prior (keeping its direction): it
    recovers both sources, where either prior for all, or the FOBI sign alone, does not."""
    rng = np.random.default_rng(seed)
    n, d = 4000, 6
    lap = rng.laplace(scale=1 / np.sqrt(2), size=(20000, 1))
    uni = rng.uniform(-np.sqrt(3), np.sqrt(3), size=(20000, 1))
    assert switching_statistic(lap)[0] > 0.05 and switching_statistic(uni)[0] < -0.05
    source = _bimodal_with_outliers(n, rng)
    laplace = rng.laplace(size=n)
    S = np.column_stack([laplace / laplace.std(), source])
    assert scipy.stats.kurtosis(S[:, 1]) > 2 and switching_statistic(S[:, 1:])[0] < -0.05
    X = np.hstack([S, rng.standard_normal((n, d - 2))]) @ rng.standard_normal((d, d)).T
    fit = est.UndercompleteICA(2).fit(X)
    assert fit.n_prior_rounds_ == 1
    assert source_correlations(fit.transform(X), S).min() >= 0.99
    assert _matched_priors(fit, X, S) == ["supergaussian", "subgaussian"]
    fobi = UndercompleteICA(X, 2, prior="auto")          # the first choice, from FOBI alone
    assert fobi.priors == ("supergaussian", "supergaussian")
    for prior in ("supergaussian", "subgaussian", fobi.priors):
        one = est.UndercompleteICA(2, prior=prior).fit(X)
        assert source_correlations(one.transform(X), S).min() < 0.95


def test_float32_data_of_low_rank_keeps_its_rank():
    """Eight sources mixed into ten float32 columns: the rank is read at float32's precision
    (8), not float64's — float32's rounding in the two null directions is not a source, and
    whitening it up gave unmixing entries of about 1e7 and a float32 transform with no
    correct digit.  The float32 fit finds the float64 fit's sources."""
    rng = np.random.default_rng(0)
    X = rng.laplace(size=(300, 8)) @ rng.standard_normal((8, 10))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        fit64 = est.UndercompleteICA().fit(X)
        fit32 = est.UndercompleteICA().fit(X.astype(np.float32))
    assert fit64.n_components_ == fit32.n_components_ == 8
    assert fit32.components_.dtype == np.float32
    assert np.abs(fit32.components_).max() < 10 * np.abs(fit64.components_).max()
    C = np.corrcoef(fit64.transform(X).T, fit32.transform(X.astype(np.float32)).T)[:8, 8:]
    assert np.all(np.abs(C).max(axis=1) > 0.999)


def _square_sources(n, seed):
    rng = np.random.default_rng(seed)
    S = np.column_stack([rng.laplace(size=n), rng.laplace(size=n), rng.uniform(-1, 1, n),
                         rng.standard_t(5, size=n)])
    return S @ rng.standard_normal((4, 4))


@pytest.mark.parametrize("case", ["square", "undercomplete"])
def test_preconditioner_approximates_the_hessian_at_the_optimum(case):
    """preconditioner_at (Picard's approximation, extended to r < k): at the fitted point of
    independent sources it inverts the Hessian to within 15% (a wrong pair term, transpose
    or Schur complement is off by O(1)); elsewhere it is symmetric positive definite."""
    X = (_square_sources(20_000, 1) if case == "square"
         else ldr.datasets.make_uica(20_000, 8, 3, sources="mixed", seed=0)[0])
    ica = est.UndercompleteICA(n_components=None if case == "square" else 3).fit(X)
    obj, M = ica.objective_, ica.M_
    hvp, solve = obj.ehvp_at(M), obj.preconditioner_at(M)
    rng = np.random.default_rng(0)
    for _ in range(4):
        V = rng.standard_normal(M.shape)
        assert np.linalg.norm(solve(hvp(V)) - V) <= 0.15 * np.linalg.norm(V)
    P = obj.preconditioner_at(obj.heuristic() + 0.3 * rng.standard_normal(M.shape))
    U, V = rng.standard_normal((2, *M.shape))
    assert np.sum(U * P(V)) == pytest.approx(np.sum(P(U) * V), rel=1e-10)
    assert np.sum(V * P(V)) > 0 and np.sum(U * P(U)) > 0


def test_preconditioned_trust_region_reaches_the_unpreconditioned_optimum():
    """The trust region with the preconditioner (the default) and without it converge to the
    same point from the FOBI start (solver against solver)."""
    X = ldr.datasets.make_uica(3000, 10, 4, sources="mixed", seed=7)[0]
    obj = UndercompleteICA(X, 4, prior="auto")
    plain = obj.with_priors(obj.priors)
    plain.preconditioner_at = None  # provides("preconditioner_at") is False
    with_p = ldr.solve(obj, "trust-region", start="heuristic", tol=1e-11)
    without = ldr.solve(plain, "trust-region", start="heuristic", tol=1e-11)
    assert with_p.converged and without.converged
    assert with_p.counts["hvp"] < without.counts["hvp"]
    np.testing.assert_allclose(with_p.M, without.M, atol=1e-8)


def test_oracles_share_one_point_and_not_across_points_or_priors():
    """The gradient and Hessian products after a cost at M (tanh from the cost's e^{−2|y|})
    equal those of a fresh objective; a cost at another point or other priors is not
    reused."""
    X = ldr.datasets.make_uica(500, 6, 3, sources="mixed", seed=1)[0]
    pri = ["supergaussian", "subgaussian", "supergaussian"]
    obj, fresh = UndercompleteICA(X, 3, prior=pri), UndercompleteICA(X, 3, prior=pri)
    rng = np.random.default_rng(2)
    M, M2, V = (obj.heuristic() + 0.3 * rng.standard_normal(obj.shape) for _ in range(3))
    auto = ldr.objective(fresh.cost, shape=fresh.shape, manifold="euclidean")
    obj.cost(M)
    np.testing.assert_allclose(obj.egrad(M), auto.egrad(M), rtol=1e-11, atol=1e-13)
    np.testing.assert_allclose(obj.ehvp(M, V), auto.ehvp(M, V), rtol=1e-9, atol=1e-11)
    obj.cost(M2)
    np.testing.assert_allclose(obj.egrad(M), fresh.egrad(M), rtol=1e-11, atol=1e-13)
    other = obj.with_priors(["subgaussian"] * 3)
    auto_other = ldr.objective(UndercompleteICA(X, 3, prior="subgaussian").cost,
                               shape=obj.shape, manifold="euclidean")
    np.testing.assert_allclose(other.ehvp(M, V), auto_other.ehvp(M, V), rtol=1e-9, atol=1e-11)


def test_rescaled_touches_only_the_columns_asked():
    X = ldr.datasets.make_uica(800, 6, 3, sources="mixed", seed=3)[0]
    obj = UndercompleteICA(X, 3, prior=["supergaussian", "subgaussian", "supergaussian"])
    M = obj.heuristic() * np.array([2.0, 0.5, 3.0])
    out = obj.rescaled(M, [False, True, False])
    np.testing.assert_array_equal(out[:, [0, 2]], M[:, [0, 2]])
    np.testing.assert_allclose(out[:, 1], obj.rescaled(M)[:, 1], rtol=1e-12)
