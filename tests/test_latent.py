"""PPCA and factor analysis (survey Eq. 22–23): formulas, closed forms, scikit-learn."""

import numpy as np
import pytest
from scipy.stats import multivariate_normal
from sklearn.decomposition import PCA as SkPCA
from sklearn.decomposition import FactorAnalysis as SkFA
from sklearn.exceptions import ConvergenceWarning

import ldr
from ldr.core.objective import Objective
from ldr.manifolds import from_declaration, orthonormalize, sin_largest_angle
from ldr.objectives import PPCA, FactorAnalysis


def factor_data(n=200, d=10, r=3, seed=0):
    """Samples of an FA model with heteroscedastic noise (loadings large enough that the
    top-r covariance eigenvalues exceed 1, so scikit-learn's start has no zero column)."""
    rng = np.random.default_rng(seed)
    W = rng.standard_normal((d, r)) * 1.5
    psi = rng.uniform(0.05, 2.0, d)
    return rng.standard_normal((n, r)) @ W.T + rng.standard_normal((n, d)) * np.sqrt(psi) + 2.0


@pytest.fixture(scope="module")
def data():
    return factor_data()


def _objectives(X):
    return [PPCA(X, 3), PPCA(X, 3, noise_variance=0.7), FactorAnalysis(X, 3)]


def test_check_and_autograd_agree_with_closed_form_oracles(data):
    for obj in _objectives(data):
        report = ldr.check(obj, random_state=1)
        assert report, str(report)
        assert report["egrad"].error < 1e-7 and report["ehvp"].error < 1e-7
        geom = from_declaration(obj.manifold, obj.shape)
        M = geom.random_point(np.random.default_rng(2))
        V = geom.random_ambient(np.random.default_rng(3))
        for mine, auto in [(obj.egrad(M), Objective.egrad(obj, M)),
                           (obj.ehvp(M, V), Objective.ehvp(obj, M, V))]:
            if not isinstance(mine, tuple):
                mine, auto = (mine,), (auto,)
            for a, b in zip(mine, auto):
                np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12 * np.abs(b).max())


def test_cost_is_the_negative_mean_gaussian_log_likelihood(data):
    for obj in _objectives(data):
        geom = from_declaration(obj.manifold, obj.shape)
        M = geom.random_point(np.random.default_rng(4))
        ll = multivariate_normal(obj.mean_, obj.covariance(M)).logpdf(data).mean()
        assert obj.log_likelihood(M) == pytest.approx(ll, rel=1e-12)
        assert obj.cost(M) == pytest.approx(-ll, rel=1e-12)


def test_ppca_solved_from_random_starts_reaches_tipping_bishop(data):
    obj = PPCA(data, 3)
    best = obj.log_likelihood(obj.closed_form())
    top = np.linalg.eigh(obj.S)[1][:, ::-1][:, :3]
    sigma2 = np.linalg.eigvalsh(obj.S)[:-3].mean()
    for seed in range(2):
        res = ldr.solve(obj, "trust-region", start="random", random_state=seed, tol=1e-9)
        assert res.converged
        assert abs(obj.log_likelihood(res.M) - best) <= 1e-8 * abs(best)
        W, s2 = obj.unpack(res.M)
        assert sin_largest_angle(orthonormalize(W), top) < 1e-6
        assert s2 == pytest.approx(sigma2, rel=1e-8)


def test_ppca_with_fixed_noise_reaches_its_closed_form(data):
    ev = np.linalg.eigvalsh(np.cov(data.T, bias=True))[::-1]
    obj = PPCA(data, 3, noise_variance=(ev[1] + ev[2]) / 2)  # σ² > λ₃: third column 0
    W_cf = obj.closed_form()
    assert np.count_nonzero(np.linalg.norm(W_cf, axis=0)) == 2
    res = ldr.solve(obj, "trust-region", start="random", random_state=0, tol=1e-9)
    assert obj.log_likelihood(res.M) == pytest.approx(obj.log_likelihood(W_cf), rel=1e-10)
    np.testing.assert_allclose(res.M @ res.M.T, W_cf @ W_cf.T, atol=1e-6)


def test_ppca_matches_scikit_learn_pca_score(data):
    n, d = data.shape
    obj = PPCA(data, 3)
    sk = SkPCA(3, svd_solver="full").fit(data)
    W_sk = sk.components_.T * np.sqrt(sk.explained_variance_ - sk.noise_variance_)
    M_sk = obj.point(W_sk, sk.noise_variance_)
    # PCA.score is the PPCA likelihood ...
    assert obj.log_likelihood(M_sk) == pytest.approx(sk.score(data), rel=1e-12)
    np.testing.assert_allclose(obj.covariance(M_sk), sk.get_covariance(), atol=1e-12)
    # ... at parameters from the covariance divided by n − 1 (a·C*, a = n/(n−1)), short of
    # the maximum by exactly d/2 (log a + 1/a − 1)
    a = n / (n - 1)
    gap = obj.log_likelihood(obj.closed_form()) - sk.score(data)
    assert gap == pytest.approx(0.5 * d * (np.log(a) + 1 / a - 1), rel=1e-6)
    assert gap > 0
    assert obj.log_likelihood(obj.closed_form()) == pytest.approx(sk.score(data), rel=1e-5)


def test_transforms_are_posterior_means(data):
    obj = PPCA(data, 3)
    W, s2 = obj.unpack(obj.closed_form())
    Xc = data - data.mean(axis=0)
    # the survey's form Wᵀ(WWᵀ + σ²I)⁻¹(x − μ)
    survey = np.linalg.solve(W @ W.T + s2 * np.eye(10), W).T @ Xc.T
    np.testing.assert_allclose(obj.transform(data, obj.closed_form()), survey.T, atol=1e-12)
    fa = FactorAnalysis(data, 3)
    sk = SkFA(3, svd_method="lapack").fit(data)
    M = fa.point(sk.components_.T, sk.noise_variance_)
    np.testing.assert_allclose(fa.transform(data, M), sk.transform(data), atol=1e-12)


def test_fa_log_likelihood_matches_scikit_learn_score(data):
    fa = FactorAnalysis(data, 3)
    sk = SkFA(3, svd_method="lapack").fit(data)
    M = fa.point(sk.components_.T, sk.noise_variance_)
    assert fa.log_likelihood(M) == pytest.approx(sk.score(data), rel=1e-12)
    np.testing.assert_allclose(fa.covariance(M), sk.get_covariance(), atol=1e-12)


def test_fa_start_is_where_scikit_learn_starts(data):
    fa = FactorAnalysis(data, 3)
    with pytest.warns(Warning, match="did not converge"):
        sk = SkFA(3, svd_method="lapack", max_iter=1).fit(data)
    # scikit-learn's first recorded log-likelihood is at (W₀, ψ = 1)
    assert fa.log_likelihood(fa.start_like_sklearn()) == pytest.approx(
        sk.loglike_[0] / data.shape[0], rel=1e-10)


def test_fa_from_scikit_learn_start_is_at_least_scikit_learn(data):
    fa = FactorAnalysis(data, 3)
    # scikit-learn run to convergence: tol on the total log-likelihood 1e-10 (5e-13 per
    # sample), exact SVD
    sk = SkFA(3, svd_method="lapack", tol=1e-10, max_iter=100_000).fit(data)
    res = ldr.solve(fa, "trust-region", start=fa.start_like_sklearn(), tol=1e-9)
    ours, theirs = fa.log_likelihood(res.M), sk.score(data)
    assert res.converged
    assert ours >= theirs - 1e-6 * abs(theirs)
    assert ours == pytest.approx(theirs, rel=1e-8)  # the same maximum
    # scikit-learn's default tol=1e-2 stops short of it
    default = SkFA(3, svd_method="lapack").fit(data).score(data)
    assert ours > default


def test_fa_improves_on_ppca_which_it_contains(data):
    fa, ppca = FactorAnalysis(data, 3), PPCA(data, 3)
    heur = fa.log_likelihood(fa.heuristic())
    assert heur == pytest.approx(ppca.log_likelihood(ppca.closed_form()), rel=1e-12)
    res = ldr.solve(fa, "trust-region", start="heuristic", tol=1e-9)
    assert fa.log_likelihood(res.M) > heur + 0.05


def test_start_like_sklearn_warns_on_zero_columns():
    X = np.random.default_rng(0).standard_normal((100, 4)) * 0.5  # all eigenvalues < 1
    fa = FactorAnalysis(X, 2)
    with pytest.warns(RuntimeWarning, match="zero loading columns"):
        W, psi = fa.unpack(fa.start_like_sklearn())
    assert np.all(W == 0) and np.allclose(psi, 1.0, rtol=1e-14)


def test_bad_input_raises_clear_errors(data):
    bad = data.copy()
    bad[3, 2] = np.nan
    for cls in (PPCA, FactorAnalysis):
        with pytest.raises(ValueError, match="X: .*NaN"):
            cls(bad, 2)
        with pytest.raises(ValueError, match="r < d"):
            cls(data, 10)
        with pytest.raises(ValueError, match="at least r \\+ 2 = 5 samples"):
            cls(data[:4], 3)
    const = data.copy()
    const[:, 4] = 7.0
    with pytest.raises(ValueError, match=r"feature\(s\) \[4\] are constant"):
        FactorAnalysis(const, 2)
    low_rank = np.c_[data[:, :2], data[:, :2] * 2.0]
    with pytest.raises(ValueError, match="σ² → 0.*noise_variance"):
        PPCA(low_rank, 2)
    PPCA(low_rank, 2, noise_variance=1.0)  # a fixed σ² keeps the likelihood bounded
    for value in (0.0, -1.0, np.inf, "1"):
        with pytest.raises(ValueError, match="noise_variance: must be a positive"):
            PPCA(data, 2, noise_variance=value)
    fa = FactorAnalysis(data, 3)
    with pytest.raises(ValueError, match="components_.T"):
        fa.point(np.ones((3, 10)), np.ones(10))
    with pytest.raises(ValueError, match="noise_variance: expected 10 positive"):
        fa.point(np.ones((10, 3)), -np.ones(10))
    with pytest.raises(ValueError, match="has 9 features"):
        fa.transform(data[:, :9], fa.heuristic())


def test_caller_data_is_not_modified(data):
    X = data.copy()
    PPCA(X, 2).transform(X, PPCA(X, 2).closed_form())
    FactorAnalysis(X, 2)
    np.testing.assert_array_equal(X, data)


# soak counterexample (benchmarks/soak.py): data at 1e-91 made Ψ⁻² overflow (1e364) and the
# start's gradient infinite — an OracleError naming no argument; the model is now evaluated in
# units of the data's scale, so every scale gives the same point
SOAK_X = [[1.257302210933933e-91, -1.321048632913019e-91],
          [6.404226504432821e-91, 1.0490011715303971e-91],
          [-5.35669373161111e-91, 3.615950549094847e-91]]


@pytest.mark.parametrize("scale", [1e-90, 1.0, 1e90])
def test_latent_models_at_extreme_scales_give_the_unit_scale_answer(scale):
    X = np.asarray(SOAK_X) * 1e91 * scale
    unit = np.asarray(SOAK_X) * 1e91
    a, b = ldr.estimators.PPCA(1).fit(X), ldr.estimators.PPCA(1).fit(unit)
    assert a.result_.converged and np.all(np.isfinite(a.transform(X)))
    # the projection U_rᵀ(x − μ) is in the data's units; the posterior mean in the latent's
    np.testing.assert_allclose(a.transform(X) / scale, b.transform(unit), rtol=1e-6)
    post = {"transform_algorithm": "posterior_mean"}
    a, b = ldr.estimators.PPCA(1, **post).fit(X), ldr.estimators.PPCA(1, **post).fit(unit)
    np.testing.assert_allclose(a.transform(X), b.transform(unit), rtol=1e-6, atol=1e-9)
    assert a.cost_ == pytest.approx(b.cost_ + 2 * np.log(scale), rel=1e-9, abs=1e-9)


# soak counterexample: features at 1 and 1e-30 side by side made I + WᵀΨ⁻¹W singular in FA
# (LinAlgError); FA is now evaluated in each feature's units, its start standardized
@pytest.mark.parametrize("scales", [[1e-90] * 6, [1e90] * 6, [1, 1e-30, 1e-30, 1, 1e8, 1]])
def test_factor_analysis_is_equivariant_to_each_features_units(scales):
    rng = np.random.default_rng(0)
    F = rng.standard_normal((300, 2)) @ rng.standard_normal((2, 6)) * 2
    F += rng.standard_normal((300, 6)) * [0.5, 1.0, 1.5, 0.5, 1.0, 2.0]
    a = ldr.estimators.FactorAnalysis(2).fit(F * scales)
    b = ldr.estimators.FactorAnalysis(2).fit(F)
    assert a.result_.converged and b.result_.converged
    # outputs of order 1, each fit converged to a relative gradient of 1e-8: they agree to
    # what that implies (the two fits' paths differ with rounding)
    np.testing.assert_allclose(a.transform(F * scales), b.transform(F), rtol=1e-6, atol=1e-6)
    assert a.cost_ == pytest.approx(b.cost_ + np.sum(np.log(scales)), rel=1e-9, abs=1e-8)


def test_factor_analysis_with_a_feature_at_1e30_is_honest():
    # soak counterexample: n = 5, d = 4, r = 2 with one feature at 1e30 — a Heywood case whose
    # trial points made I + WᵀΨ⁻¹W lose positive definiteness to rounding (LinAlgError); the
    # fit now runs and says whether it converged, its gradient certifying it if so
    X = np.array([[0.1257302210933933, -0.1321048632913019, 0.6404226504432821, 1.049e+29],
                  [-0.535669373161111, 0.36159505490948474, 1.3040000451301372, 9.4708e+29],
                  [-0.7037352358069926, -1.2654214710460525, -0.6232744625373522, 4.1326e+28],
                  [-2.3250307746388343, -0.21879166393254573, -1.2459109472530652, -7.3227e+29],
                  [-0.5442589828573099, -0.31630015636915454, 0.4116305363741328, 1.0425e+30]])
    with pytest.warns(ConvergenceWarning):
        model = ldr.estimators.FactorAnalysis(2).fit(X)
    res = model.result_
    assert not res.converged and np.all(np.isfinite(model.transform(X)))
    assert res.grad_norm > 1e3 * 1e-8 * res.grad_scale  # the reason is true


def test_ppca_default_components_fit_data_of_lower_rank():
    """digits has 3 constant pixels: rank 61 < 64 features.  n_components=None is then
    61 − 1 = 60 (σ² > 0), where n_features − 1 = 63 was refused, and the fit is
    scikit-learn's PCA(60) model."""
    from sklearn.datasets import load_digits

    import ldr.estimators as est

    X = load_digits().data[:400]
    rank = np.linalg.matrix_rank(X - X.mean(axis=0))
    fitted = est.PPCA().fit(X)
    assert fitted.n_components_ == rank - 1 < X.shape[1] - 1
    sk = SkPCA(rank - 1).fit(X)
    n = X.shape[0]  # maximum likelihood: the covariance over n, scikit-learn's over n − 1
    assert fitted.noise_variance_ == pytest.approx(sk.noise_variance_ * (n - 1) / n, rel=1e-6)
    assert fitted.score(X) == pytest.approx(sk.score(X), rel=1e-3)
    with pytest.raises(ValueError, match="subspace of dimension"):
        est.PPCA(X.shape[1] - 1).fit(X)


def test_factor_analysis_fits_constant_features_as_scikit_learn_does():
    """digits has constant pixels (3 in all its rows, 8 in the first 500), where
    scikit-learn's FactorAnalysis fits (ψ floored at 1e-12, loadings 0).  The estimator fits
    the other features and gives the
    constant ones zero loadings and ψ = 1e-12: its likelihood is scikit-learn's model's or
    better, with the constant pixels' terms included, and the loadings span the same
    subspace."""
    from sklearn.datasets import load_digits
    from sklearn.decomposition import FactorAnalysis as SkFA

    import ldr.estimators as est

    X = load_digits().data[:500]
    const = np.flatnonzero(np.ptp(X, axis=0) == 0)
    assert const.size == 8
    fitted = est.FactorAnalysis(4).fit(X)
    sk = SkFA(4, tol=1e-8, max_iter=3000, svd_method="lapack").fit(X)
    np.testing.assert_array_equal(fitted.constant_features_, const)
    assert fitted.components_.shape == sk.components_.shape == (4, 64)
    assert np.all(fitted.components_[:, const] == 0)
    np.testing.assert_allclose(fitted.noise_variance_[const], 1e-12)
    np.testing.assert_allclose(sk.noise_variance_[const], 1e-12)
    kept = np.setdiff1d(np.arange(64), const)
    np.testing.assert_allclose(fitted.noise_variance_[kept], sk.noise_variance_[kept],
                               rtol=1e-3, atol=1e-6)
    assert fitted.score(X) >= sk.score(X) - 1e-6
    assert fitted.score(X) == pytest.approx(fitted.log_likelihood_, rel=1e-10)
    assert fitted.score(X) == pytest.approx(sk.score(X), rel=1e-4)
    # the same factor subspace (loadings are identified up to a rotation)
    Qa, Qb = np.linalg.qr(fitted.components_.T)[0], np.linalg.qr(sk.components_.T)[0]
    assert np.linalg.norm(Qa @ Qa.T - Qb @ Qb.T, 2) < 1e-3
    np.testing.assert_allclose(fitted.transform(X), fitted.objective_.transform(
        X[:, kept], fitted.M_))
    # a row off a constant pixel is as unlikely as in scikit-learn's model
    Y = X[:3].copy()
    Y[:, const[0]] += 1.0
    np.testing.assert_allclose(fitted.score_samples(Y), sk.score_samples(Y), rtol=1e-6)
    with pytest.raises(ValueError, match="n_components.*8 features are constant"):
        est.FactorAnalysis(56).fit(X)


def test_factor_analysis_default_rank_is_at_least_as_likely_as_scikit_learns_n_features():
    """``n_components=None`` is n_features − 1 (the objective needs r < d); scikit-learn's
    default is n_features, where its EM stops at its start (2 iterations on wine).  No FA
    model beats the full-covariance Gaussian, −½(d log 2π + log det S + d); ldr's default
    reaches it to 4 digits and is more likely than scikit-learn's n_features fit."""
    from sklearn.datasets import load_wine
    from sklearn.preprocessing import StandardScaler

    from ldr.estimators import FactorAnalysis as FA

    X = StandardScaler().fit_transform(load_wine(return_X_y=True)[0])
    d = X.shape[1]
    ours, sk = FA().fit(X), SkFA().fit(X)
    assert ours.n_components_ == d - 1 and sk.components_.shape[0] == d
    full = -0.5 * (d * np.log(2 * np.pi) + np.linalg.slogdet(np.cov(X.T, bias=True))[1] + d)
    assert ours.log_likelihood_ <= full + 1e-9
    assert ours.log_likelihood_ == pytest.approx(full, abs=1e-2)  # measured: −14.6135 vs −14.6135
    assert ours.score(X) == pytest.approx(ours.log_likelihood_, rel=1e-10)
    assert ours.log_likelihood_ > sk.score(X) + 0.5  # measured: −14.61 vs −15.51
    assert sk.score(X) <= full + 1e-9
