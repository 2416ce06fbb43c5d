"""scikit-learn's FactorAnalysis tests, and the covariance parts of its PCA tests, as
behaviours of ldr's FactorAnalysis and PPCA.

Sources (scikit-learn 1.9.1): ``sklearn/decomposition/tests/test_factor_analysis.py``
(``test_factor_analysis``) and, for ``get_covariance``, ``get_precision``, ``score_samples``
and ``score``, ``sklearn/decomposition/tests/test_pca.py`` (``test_pca``,
``test_pca_score``, ``test_pca_score3``, ``test_pca_sanity_noise_variance``,
``test_pca_score_consistency_solvers``, ``test_pca_zero_noise_variance_edge_cases``,
``check_array_api_get_precision``).  The facts they check carry over; the code is ldr's own.

What each source check becomes here:

* transform's shape, ``score == mean(score_samples)``, the last recorded log-likelihood
  equal to ``score_samples(X).sum()`` → ``test_shapes_and_the_likelihood_identities``;
* the log-likelihood increases along the fit (EM's ``loglike_``) →
  ``test_the_log_likelihood_never_decreases_along_the_fit`` (the solver's trace of costs);
* the model covariance is close to the sample covariance →
  ``test_the_model_covariance_is_close_to_the_sample_covariance`` and, on more rows of the
  same kind of generator, ``test_the_model_recovers_the_generating_covariance``;
* ``svd_method`` "randomized" and "lapack" agree on the loadings (up to sign), noise
  variances and likelihood → ``test_other_solvers_reach_the_same_model``;
* ``max_iter=1`` warns → ``test_a_budget_of_one_iteration_warns``;
* ``get_covariance() @ get_precision() == I`` (FactorAnalysis at several ranks, PCA) →
  ``test_get_precision_is_the_inverse_of_get_covariance``, plus the formulas themselves
  against scikit-learn's estimators given ldr's fitted parameters
  (``test_the_covariance_api_is_scikit_learns_on_the_same_parameters``);
* rotations change ``transform`` but not ``get_covariance`` →
  ``test_rotations_change_the_factors_not_the_model``; varimax against R's
  ``psych::principal`` → ``test_varimax_reproduces_rs_rotation``; and, beyond the source,
  that each rotation maximizes its own criterion (``test_each_rotation_maximizes_its_criterion``);
* a data set with fewer features than components is refused →
  ``test_bad_parameters_and_input_raise_clear_errors``;
* PCA's score is near the entropy of the generating Gaussian and lower on wider data →
  ``test_score_is_near_the_entropy_and_lower_off_the_model``; the held-out score picks the
  generating rank → ``test_the_held_out_score_picks_the_generating_rank``; the noise
  variance below every kept variance → ``test_noise_variances_are_the_fixed_points``;
  scores agree across solvers → ``test_other_solvers_reach_the_same_model``; the
  covariance API in the input's dtype → ``test_float32_fits_give_float32_covariances``.

Beyond the sources: a constant feature in the covariance API
(``test_a_constant_feature_is_in_the_covariance_api``) and the precision of a Heywood case
(``test_get_precision_stays_accurate_in_a_heywood_case``).

Left out, with the reason:

* ``n_components=0`` and ``n_components=n_features`` (scikit-learn's corner cases of
  ``get_precision``, and PCA's zero noise variance at full rank): ldr's models need
  1 <= n_components < n_features (the FactorAnalysis docstring: at r = d the likelihood's
  maximum is not identified); the refusal is tested instead;
* ``svd_method`` and ``iterated_power``: ldr's fit does not alternate SVDs (EM); it
  minimizes the negative log-likelihood with a Riemannian solver from PPCA's closed form, so
  there is no SVD to choose — the solvers stand in for it;
* ``noise_variance_init``: ldr has no such parameter; its start is PPCA's closed form or
  ``start``;
* ``loglike_`` (EM's total log-likelihood per iteration): ldr records the fit in
  ``result_`` (its ``trace`` holds the cost, the negative mean log-likelihood, per
  iteration) and ``log_likelihood_`` (the mean at the answer);
* ``whiten`` (``test_pca_score``'s last part): PPCA has no whitening option (its
  ``transform_algorithm="posterior_mean"`` transforms differently, and the model, so the
  score, does not depend on the transform);
* the call of scikit-learn's private ``_ortho_rotation``: ldr's own ``orthomax``
  (``ldr.estimators.latent``) is tested instead, on the same loadings against R's numbers;
* the array-API namespaces of ``get_precision``/``get_covariance``
  (``check_array_api_get_precision``): scikit-learn's dispatch needs ``SCIPY_ARRAY_API=1``
  before scipy is imported, which the fresh-interpreter cases of ``tests/array_api_*`` have;
  the dtype half of that check is here.
"""

import itertools
import warnings

import numpy as np
import pytest
from scipy.stats import multivariate_normal
from sklearn.decomposition import PCA as SkPCA
from sklearn.decomposition import FactorAnalysis as SkFA
from sklearn.exceptions import ConvergenceWarning, NotFittedError

from ldr.core.errors import ParameterError
from ldr.estimators import PPCA, FactorAnalysis
from ldr.estimators.latent import orthomax

ROTATIONS = (None, "varimax", "quartimax")


def generated(seed, n_samples=20, n_features=5, n_components=3):
    """scikit-learn's generator: x = h W + noise, h standard normal, the noise of each feature
    a gamma-distributed scale times a standard normal.  Returns X, the generating loadings W
    (n_components × n_features) and the generating covariance WᵀW + diag(scale²)."""
    rng = np.random.RandomState(seed)
    W = rng.randn(n_components, n_features)
    h = rng.randn(n_samples, n_components)
    scale = rng.gamma(1, size=n_features)
    X = h @ W + scale * rng.randn(n_samples, n_features)
    return X, W, W.T @ W + np.diag(scale**2)


def factor_data(n=400, seed=0):
    """Two factors over six features, the noise of each feature its own (an FA model)."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, 2)) @ rng.standard_normal((2, 6)) * 2
    return X + rng.standard_normal((n, 6)) * [0.5, 1.0, 1.5, 0.5, 1.0, 2.0] + [1, 2, 3, 4, 5, 6]


def fitted(make, X):
    """A fit; a ConvergenceWarning is a failure here (the fits below converge)."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        return make().fit(X)


def varimax_criterion(B, gamma=1.0):
    """Σ_j [Σ_i b_ij⁴ − (γ/p)(Σ_i b_ij²)²], written out here for the test."""
    p = B.shape[0]
    return sum(np.sum(B[:, j] ** 4) - gamma / p * np.sum(B[:, j] ** 2) ** 2
               for j in range(B.shape[1]))


@pytest.fixture(scope="module")
def X():
    return factor_data()


@pytest.mark.parametrize("make", [lambda: FactorAnalysis(2), lambda: PPCA(2)],
                         ids=["FactorAnalysis", "PPCA"])
def test_shapes_and_the_likelihood_identities(X, make):
    est = fitted(make, X)
    Z = est.transform(X)
    assert Z.shape == (X.shape[0], 2)
    np.testing.assert_allclose(make().fit_transform(X), Z, rtol=1e-12, atol=1e-12)
    ll = est.score_samples(X)
    assert ll.shape == (X.shape[0],)
    assert est.score(X) == pytest.approx(np.mean(ll), rel=1e-14)
    # the fit's own log-likelihood (the mean of the training rows') is the score's sum / n
    assert est.log_likelihood_ * X.shape[0] == pytest.approx(ll.sum(), rel=1e-10)
    assert est.log_likelihood_ == pytest.approx(-est.cost_, rel=1e-12)


def test_the_log_likelihood_never_decreases_along_the_fit(X):
    est = fitted(lambda: FactorAnalysis(2), X)
    cost = est.result_.trace["cost"]  # the negative mean log-likelihood, per iteration
    assert len(cost) >= 3
    assert np.all(np.diff(cost) <= 1e-12 * np.abs(cost[:-1]))
    assert cost[-1] < cost[0] - 1e-3  # FA improves on PPCA's closed form, where it starts
    assert -cost[-1] == pytest.approx(est.log_likelihood_, rel=1e-12)


@pytest.mark.parametrize("seed", range(3))
def test_the_model_covariance_is_close_to_the_sample_covariance(seed):
    X, _, _ = generated(seed)
    with warnings.catch_warnings():  # 20 rows, 3 factors of 5 features: Heywood cases
        warnings.simplefilter("ignore", ConvergenceWarning)
        est = FactorAnalysis(3).fit(X)
    sample = np.cov(X, rowvar=False, bias=True)
    model = est.get_covariance()
    assert np.sum(np.abs(sample - model)) / 15 < 0.2
    # ... and as close as scikit-learn's own fit, whose likelihood it does not fall below
    sk = SkFA(3, svd_method="lapack").fit(X)
    assert est.score(X) >= sk.score(X) - 1e-6


def test_the_model_recovers_the_generating_covariance():
    X, W, true = generated(0, n_samples=20_000, n_features=8, n_components=2)
    est = fitted(lambda: FactorAnalysis(2), X)
    model = est.get_covariance()
    assert np.linalg.norm(model - true) / np.linalg.norm(true) < 0.03
    # the loadings span the generator's (they are identified up to a rotation)
    Qa = np.linalg.qr(est.components_.T)[0]
    Qb = np.linalg.qr(W.T)[0]
    assert np.linalg.norm(Qa @ Qa.T - Qb @ Qb.T, 2) < 0.05


def test_other_solvers_reach_the_same_model(X):
    ref = fitted(lambda: FactorAnalysis(2, tol=1e-10), X)
    others = {"lbfgs": lambda: FactorAnalysis(2, solver="lbfgs", max_iter=5000),
              "random start": lambda: FactorAnalysis(2, start="random")}
    for make in others.values():
        other = fitted(make, X)
        # the loadings are canonical (orthogonal columns by decreasing norm, signs fixed)
        np.testing.assert_allclose(np.abs(other.components_), np.abs(ref.components_),
                                   rtol=1e-4, atol=1e-5)
        np.testing.assert_allclose(other.noise_variance_, ref.noise_variance_, rtol=1e-4)
        assert other.score(X) == pytest.approx(ref.score(X), rel=1e-8)
    a = fitted(lambda: PPCA(2), X)
    b = fitted(lambda: PPCA(2, solver="lbfgs", start="random", max_iter=5000), X)
    assert b.score(X) == pytest.approx(a.score(X), rel=5e-6)
    np.testing.assert_allclose(b.get_covariance(), a.get_covariance(), rtol=1e-4, atol=1e-6)


def test_a_budget_of_one_iteration_warns(X):
    with pytest.warns(ConvergenceWarning, match="did not converge"):
        est = FactorAnalysis(2, max_iter=1).fit(X)
    assert est.n_iter_ == 1 and not est.result_.converged


@pytest.mark.parametrize("make", [
    *(lambda r=r: FactorAnalysis(r) for r in (1, 2, 5)),
    *(lambda r=r: PPCA(r) for r in (1, 2, 5)),
], ids=[f"{name}({r})" for name in ("FactorAnalysis", "PPCA") for r in (1, 2, 5)])
def test_get_precision_is_the_inverse_of_get_covariance(X, make):
    with warnings.catch_warnings():  # FA at r = 5 of 6 features: a Heywood case is fine here
        warnings.simplefilter("ignore", ConvergenceWarning)
        est = make().fit(X)
    C = est.get_covariance()
    P = est.get_precision()
    assert C.shape == P.shape == (6, 6)
    np.testing.assert_allclose(C @ P, np.eye(6), atol=1e-12)
    np.testing.assert_allclose(P, np.linalg.inv(C), rtol=1e-10, atol=1e-12)
    np.testing.assert_array_equal(P, P.T)


def test_get_precision_stays_accurate_in_a_heywood_case(X):
    """One factor for these data drives ψ₀ to about 1e-7 · C₀₀ (a feature almost wholly
    explained by the factor): the lemma's Ψ⁻¹ − … would cancel 7 digits there, and the
    precision is C's inverse from its Cholesky factor instead, as exact as C's condition
    number (about 19) allows.  The fit itself may end at the gradient's rounding floor,
    which at ψ₀ ≈ 1e-7 · C₀₀ lies near the tolerance and moves with the machine's rounding
    (it says so with a ConvergenceWarning): the precision's accuracy is what is tested."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        est = FactorAnalysis(1).fit(X)
    C = est.get_covariance()
    assert est.noise_variance_[0] < 1e-6 * C[0, 0]
    P = est.get_precision()
    np.testing.assert_allclose(C @ P, np.eye(6), atol=1e-13)
    np.testing.assert_allclose(multivariate_normal(est.mean_, C).logpdf(X),
                               est.score_samples(X), rtol=1e-9)


def test_the_covariance_api_is_scikit_learns_on_the_same_parameters(X):
    n = X.shape[0]
    fa = fitted(lambda: FactorAnalysis(2, rotation="varimax"), X)
    C = fa.get_covariance()
    np.testing.assert_allclose(C, fa.components_.T @ fa.components_
                               + np.diag(fa.noise_variance_), rtol=1e-14)
    sk = SkFA(2).fit(X)  # then given ldr's parameters
    sk.components_ = fa.components_
    sk.noise_variance_ = fa.noise_variance_
    sk.mean_ = fa.mean_
    np.testing.assert_allclose(sk.get_covariance(), C, rtol=1e-12)
    np.testing.assert_allclose(sk.get_precision(), fa.get_precision(), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(sk.score_samples(X), fa.score_samples(X), rtol=1e-11)
    np.testing.assert_allclose(sk.transform(X), fa.transform(X), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(multivariate_normal(fa.mean_, C).logpdf(X), fa.score_samples(X),
                               rtol=1e-11)

    ppca = fitted(lambda: PPCA(2), X)
    W = ppca.components_.T
    s2 = ppca.noise_variance_
    C = ppca.get_covariance()
    np.testing.assert_allclose(C, W @ W.T + s2 * np.eye(6), rtol=1e-14)
    sk = SkPCA(2).fit(X)
    # scikit-learn's parameters come from the covariance over n − 1, ldr's (the maximum
    # likelihood) over n: its model covariance is n/(n − 1) times ldr's, exactly
    np.testing.assert_allclose(sk.get_covariance(), C * n / (n - 1), rtol=1e-10)
    np.testing.assert_allclose(sk.get_precision(), ppca.get_precision() * (n - 1) / n,
                               rtol=1e-9, atol=1e-12)
    norms = np.linalg.norm(W, axis=0)
    sk.components_ = (W / norms).T  # and given ldr's parameters, the same function
    sk.explained_variance_ = norms**2 + s2
    sk.noise_variance_ = s2
    sk.mean_ = ppca.mean_
    np.testing.assert_allclose(sk.get_covariance(), C, rtol=1e-12)
    np.testing.assert_allclose(sk.get_precision(), ppca.get_precision(), rtol=1e-10,
                               atol=1e-12)
    np.testing.assert_allclose(sk.score_samples(X), ppca.score_samples(X), rtol=1e-11)
    np.testing.assert_allclose(multivariate_normal(ppca.mean_, C).logpdf(X),
                               ppca.score_samples(X), rtol=1e-11)


def test_a_constant_feature_is_in_the_covariance_api(X):
    Xc = X.copy()
    Xc[:, 3] = 7.0
    fa = fitted(lambda: FactorAnalysis(2), Xc)
    C = fa.get_covariance()
    assert C[3, 3] == 1e-12 and np.all(np.delete(C[3], 3) == 0)
    np.testing.assert_allclose(C @ fa.get_precision(), np.eye(6), atol=1e-9)
    Y = Xc[:5].copy()
    Y[:, 3] += 1e-7  # off the constant by 1e-7: a term −½(1e-14/1e-12) = −0.005 lower
    drop = fa.score_samples(Xc[:5]) - fa.score_samples(Y)
    np.testing.assert_allclose(drop, 0.5 * 1e-14 / 1e-12, rtol=1e-6)


def test_rotations_change_the_factors_not_the_model():
    X, _, _ = generated(1, n_samples=200, n_features=6, n_components=2)
    fits = {method: fitted(lambda m=method: FactorAnalysis(2, rotation=m), X)
            for method in ROTATIONS}
    Z = {method: est.fit_transform(X) for method, est in fits.items()}
    base = fits[None]
    W0 = base.components_.T
    for method, est in fits.items():
        np.testing.assert_allclose(est.get_covariance(), base.get_covariance(), rtol=1e-12,
                                   atol=1e-12)
        np.testing.assert_allclose(est.get_precision(), base.get_precision(), rtol=1e-10,
                                   atol=1e-12)
        np.testing.assert_allclose(est.noise_variance_, base.noise_variance_, rtol=1e-14)
        assert est.score(X) == pytest.approx(base.score(X), rel=1e-13)
        # the rotated loadings are W₀R, R orthogonal, and transform the rotated posterior mean
        R = np.linalg.lstsq(W0, est.components_.T, rcond=None)[0]
        np.testing.assert_allclose(W0 @ R, est.components_.T, atol=1e-12)
        np.testing.assert_allclose(R.T @ R, np.eye(2), atol=1e-12)
        np.testing.assert_allclose(Z[method], Z[None] @ R, atol=1e-10)
    for a, b in itertools.combinations(ROTATIONS, 2):
        assert not np.allclose(Z[a], Z[b]), (a, b)
        assert not np.allclose(fits[a].components_, fits[b].components_), (a, b)


def test_each_rotation_maximizes_its_criterion():
    X, _, _ = generated(1, n_samples=300, n_features=8, n_components=2)
    base = fitted(lambda: FactorAnalysis(2), X)
    W0 = base.components_.T
    angles = np.linspace(0.0, np.pi / 2, 721)
    for method, gamma in (("varimax", 1.0), ("quartimax", 0.0)):
        W = fitted(lambda m=method: FactorAnalysis(2, rotation=m), X).components_.T
        best = max(varimax_criterion(W0 @ np.array([[np.cos(t), -np.sin(t)],
                                                    [np.sin(t), np.cos(t)]]), gamma)
                   for t in angles)
        value = varimax_criterion(W, gamma)
        assert value >= best - 1e-9 * abs(best)
        assert value > varimax_criterion(W0, gamma) + 1e-6  # the rotation did something
        # each column's largest loading positive, columns by decreasing sum of squares
        assert np.all(W[np.argmax(np.abs(W), axis=0), [0, 1]] > 0)
        assert np.sum(W[:, 0] ** 2) >= np.sum(W[:, 1] ** 2)


def test_varimax_reproduces_rs_rotation():
    """R's ``psych::principal(rotate="varimax")`` rotation of the first two columns of these
    loadings (the numbers of scikit-learn's test)."""
    factors = np.array([[0.89421016, -0.35854928, -0.27770122, 0.03773647],
                        [-0.45081822, -0.89132754, 0.0932195, -0.01787973],
                        [0.99500666, -0.02031465, 0.05426497, -0.11539407],
                        [0.96822861, -0.06299656, 0.24411001, 0.07540887]])
    r_solution = np.array([[0.962, 0.052], [-0.141, 0.989], [0.949, -0.300],
                           [0.937, -0.251]])
    rotated, R = orthomax(factors[:, :2], 1.0)
    np.testing.assert_allclose(np.abs(rotated), np.abs(r_solution), atol=1e-3)
    np.testing.assert_allclose(rotated, factors[:, :2] @ R, atol=1e-14)
    np.testing.assert_allclose(R.T @ R, np.eye(2), atol=1e-14)
    assert varimax_criterion(rotated) > varimax_criterion(factors[:, :2]) + 0.1


def test_bad_parameters_and_input_raise_clear_errors(X):
    for rotation in ("oblimin", "Varimax", 1, ["varimax"]):
        with pytest.raises(ParameterError, match="rotation: must be None, 'varimax' or "
                                                 "'quartimax'") as exc:
            FactorAnalysis(2, rotation=rotation).fit(X)
        assert exc.value.param == "rotation"
    for make in (FactorAnalysis, PPCA):
        # more components than the features allow (scikit-learn: 3 components of 2 features)
        for r in (3, 0, 2):
            with pytest.raises(ParameterError, match="n_components") as exc:
                make(r).fit(X[:, :2])
            assert exc.value.param == "n_components"
        bad = X.copy()
        bad[0, 0] = np.nan
        with pytest.raises(ValueError, match="NaN"):
            make(2).fit(bad)
        for method in ("get_covariance", "get_precision"):
            with pytest.raises(NotFittedError):
                getattr(make(2), method)()
        with pytest.raises(ValueError, match="5 features"):
            make(2).fit(X).score_samples(X[:, :5])
    with pytest.raises(ParameterError, match="gamma"):
        orthomax(np.ones((4, 2)), -1.0)
    with pytest.raises(ParameterError, match="loadings"):
        orthomax(np.ones(4))


def test_score_is_near_the_entropy_and_lower_off_the_model():
    rng = np.random.RandomState(0)
    n, p = 1000, 3
    X = rng.randn(n, p) * 0.1 + np.array([3, 4, 5])
    wide = rng.randn(n, p) * 0.2 + np.array([3, 4, 5])
    entropy = -0.5 * np.log(2 * np.pi * np.e * 0.1**2) * p  # of N(μ, 0.01 I), per row
    for make in (lambda: PPCA(2), lambda: FactorAnalysis(2)):
        est = fitted(make, X)
        assert est.score(X) / entropy == pytest.approx(1.0, rel=5e-2)
        assert est.score(X) > est.score(wide) + 1.0


def test_the_held_out_score_picks_the_generating_rank():
    rng = np.random.RandomState(0)
    n, p = 200, 3
    train = rng.randn(n, p) + rng.randn(n, 1) * np.array([3, 4, 5]) + np.array([1, 0, 7])
    test = rng.randn(n, p) + rng.randn(n, 1) * np.array([3, 4, 5]) + np.array([1, 0, 7])
    scores = [fitted(lambda r=r: PPCA(r), train).score(test) for r in (1, 2)]
    assert scores[0] > scores[1]


def test_noise_variances_are_the_fixed_points(X):
    S = np.cov(X, rowvar=False, bias=True)
    # PPCA: σ² the mean of the discarded eigenvalues of S, below every kept one
    ppca = fitted(lambda: PPCA(2), X)
    lam = np.linalg.eigvalsh(S)[::-1]
    assert ppca.noise_variance_ == pytest.approx(lam[2:].mean(), rel=1e-10)
    np.testing.assert_allclose(np.sum(ppca.components_**2, axis=1) + ppca.noise_variance_,
                               lam[:2], rtol=1e-10)
    assert np.all(lam[:2] > ppca.noise_variance_)
    # FA: scikit-learn's ψ update, ψ = diag(S) − Σ_k w_jk², holds at the maximum: the model
    # reproduces each feature's variance
    fa = fitted(lambda: FactorAnalysis(2, tol=1e-10), X)
    np.testing.assert_allclose(fa.noise_variance_, np.diag(S) - np.sum(fa.components_**2, 0),
                               rtol=1e-6)
    np.testing.assert_allclose(np.diag(fa.get_covariance()), np.diag(S), rtol=1e-7)
    assert np.all(fa.noise_variance_ > 0)


def test_float32_fits_give_float32_covariances(X):
    for make in (lambda: FactorAnalysis(2), lambda: PPCA(2)):
        ref = fitted(make, X)
        est = fitted(make, X.astype(np.float32))
        for method in ("get_covariance", "get_precision"):
            value = getattr(est, method)()
            assert value.dtype == np.float32 and value.shape == (6, 6)
            np.testing.assert_allclose(value, getattr(ref, method)(), rtol=2e-4, atol=1e-5)
