"""scikit-learn's LDA tests, as behaviours of ldr's :class:`~ldr.estimators.OrthogonalLDA`.

Follows the LinearDiscriminantAnalysis tests of ``sklearn/tests/test_discriminant_analysis.py``
in scikit-learn 1.9.1 (the QDA tests are not ported).  The behaviours they check are restated
in ldr's names and, where orthogonal LDA means something else, as the property that defines
ldr's answer.  Each test names the scikit-learn test(s) it ports in its docstring.

Orthogonal LDA maximizes the quotient of traces tr(MᵀS_bM)/tr(MᵀS_wM) over orthonormal M; it
does not solve the generalized eigenproblem of scikit-learn's LDA.  With two classes (r = 1)
the two coincide (both span S_w⁻¹(μ₁ − μ₀)), and so does the classifier; with more classes
the subspaces differ, and the tests check ldr's defining property (the global condition of a
trace ratio, and a ratio at least that of the orthonormalized eigenvectors).

Left out, on purpose:

* ``solver="svd"/"lsqr"/"eigen"`` (in ``test_lda_predict``, ``test_lda_coefs``,
  ``test_lda_transform``, ``test_lda_solver_agreement``, ``test_lda_explained_variance_ratio``,
  ``test_lda_orthogonality``): those name scikit-learn's ways of solving its eigenproblem.
  ldr's ``solver`` names a manifold optimizer of the trace ratio; the agreement of its solvers
  on the answer is checked instead.  ``NotImplementedError`` for ``transform`` with "lsqr" and
  for ``shrinkage`` with "svd" has no counterpart: every ldr fit transforms and accepts
  every shrinkage.
* ``covariance_estimator`` (``test_lda_predict``'s errors, ``test_lda_shrinkage``,
  ``test_lda_ledoitwolf``): ldr has no such parameter.  What it offers instead is
  ``shrinkage``: a number s is :class:`sklearn.covariance.ShrunkCovariance`'s (1 − s)S_w +
  s·tr(S_w)/d·I (checked against it), and ``"auto"`` is the Oracle Approximating Shrinkage
  coefficient of S_w with n − n_classes degrees of freedom (checked against
  :class:`sklearn.covariance.OAS`), not scikit-learn's Ledoit–Wolf on standardized features:
  OAS needs only S_w, so it is computed from the one-pass statistics that ``partial_fit``
  merges.  ``test_lda_ledoitwolf``'s identity therefore does not hold by design.
* ``store_covariance`` and ``covariance_`` (``test_lda_store_covariance``): ldr stores no
  ``covariance_``; the pooled within-class covariance it fits is ``objective_.Sw`` (None when
  r = n_features, where no solver runs), and its values on scikit-learn's data are checked.
* ``priors`` that do not sum to 1 (``test_lda_priors``): scikit-learn renormalizes them with a
  UserWarning; ldr refuses them with an error that says to divide by their sum (checked).
* ``test_covariance`` checks scikit-learn's private ``_cov`` helper; ldr's counterpart, the
  shrinkage formula, is checked through the fitted ``objective_.Sw``.
* ``tol``: scikit-learn's is the SVD solver's rank threshold, ldr's the optimizer's gradient
  tolerance; no scikit-learn test concerns it.
* scikit-learn's ``explained_variance_ratio_`` sums to 1 (normalized generalized eigenvalues);
  ldr's is the share of tr(S_b) each orthonormal component keeps (its docstring), which sums
  to 1 only when the subspace holds all of S_b: that meaning is checked instead.
* Invariance under any invertible rescaling of the features holds for scikit-learn's LDA; for
  orthogonal LDA only with r = 1 (checked on ``test_lda_scaling``'s data) and, in general,
  under rotations, a common scale and translations (checked), because orthonormality is a
  constraint in the original metric.
* ``test_raises_value_error_on_one_sample_per_class`` is a QDA test.
"""

import re
import warnings

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal
from scipy.special import expit, softmax
from scipy.stats import multivariate_normal
from sklearn.covariance import OAS, ShrunkCovariance
from sklearn.datasets import load_wine, make_blobs, make_classification
from sklearn.discriminant_analysis import LinearDiscriminantAnalysis as SkLDA
from sklearn.exceptions import ConvergenceWarning
from sklearn.preprocessing import StandardScaler

from ldr.core.errors import ParameterError
from ldr.estimators import OrthogonalLDA

# scikit-learn's toy data: six separable points in the plane, two or three classes
X = np.array([[-2, -1], [-1, -1], [-1, -2], [1, 1], [1, 2], [2, 1]], dtype="f")
Y = np.array([1, 1, 1, 2, 2, 2])
Y3 = np.array([1, 1, 2, 2, 3, 3])
X1 = np.array([[-2], [-1], [-1], [1], [1], [2]], dtype="f")  # one feature, still separable
# nine points, two classes (test_lda_store_covariance's data)
X9 = np.array([[0, 0], [-2, -2], [-2, -1], [-1, -1], [-1, -2], [1, 3], [1, 2], [2, 1], [2, 2]],
              dtype=float)
Y9 = np.array([1, 1, 1, 1, 1, 2, 2, 2, 2])

SHRINKAGES = [None, "auto", 0.0, 0.43]


def scatters(X, y):
    """S_w, S_b (both with the 1/n normalization) and the class means, from scratch."""
    X = np.asarray(X, dtype=float)
    classes, codes = np.unique(y, return_inverse=True)
    means = np.array([X[codes == k].mean(axis=0) for k in range(len(classes))])
    within = X - means[codes]
    between = means[codes] - X.mean(axis=0)
    return within.T @ within / len(X), between.T @ between / len(X), means


def ratio(M, Sw, Sb):
    """tr(MᵀS_bM)/tr(MᵀS_wM) for the columns of M."""
    return float(np.trace(M.T @ Sb @ M) / np.trace(M.T @ Sw @ M))


def orthonormal(A):
    return np.linalg.qr(A)[0]


def projector(A):
    """The orthogonal projector onto the column span of A."""
    Q = orthonormal(A)
    return Q @ Q.T


def wine():
    X, y = load_wine(return_X_y=True)
    return StandardScaler().fit_transform(X), y


# --- test_lda_predict -------------------------------------------------------------------------
@pytest.mark.parametrize("shrinkage", SHRINKAGES)
def test_predicts_the_toy_data_and_its_posterior_is_consistent(shrinkage):
    """test_lda_predict: the toy points are classified right, in 2-d and in 1-d; the
    posterior agrees with the prediction, is the logistic/softmax of the decision function,
    and its log is ``predict_log_proba``; three overlapping classes are not all separated."""
    clf = OrthogonalLDA(shrinkage=shrinkage)
    assert_array_equal(clf.fit(X, Y).predict(X), Y)
    assert_array_equal(clf.fit(X1, Y).predict(X1), Y)
    proba = clf.predict_proba(X1)
    assert proba.shape == (6, 2)
    assert_allclose(proba.sum(axis=1), 1.0, rtol=1e-6)
    assert_array_equal((proba[:, 1] > 0.5) + 1, Y)
    assert_allclose(proba[:, 1], expit(clf.decision_function(X1)), rtol=1e-5, atol=1e-7)
    assert_allclose(np.exp(clf.predict_log_proba(X1)), proba, rtol=1e-6, atol=1e-6)

    clf.fit(X, Y3)  # a refit must not reuse the former classes or priors
    assert_array_equal(clf.classes_, [1, 2, 3])
    assert_allclose(clf.priors_, [1 / 3] * 3, rtol=1e-6)
    proba = clf.predict_proba(X)
    assert proba.shape == (6, 3)
    assert_allclose(proba.sum(axis=1), 1.0, rtol=1e-6)
    assert_allclose(proba, softmax(clf.decision_function(X).astype(float), axis=1), atol=1e-6)
    assert_array_equal(clf.predict(X), clf.classes_[proba.argmax(axis=1)])
    assert np.any(clf.predict(X) != Y3)  # linear boundaries cannot separate these


# --- test_lda_predict_proba -------------------------------------------------------------------
@pytest.mark.parametrize("n_classes", [2, 3])
def test_posterior_matches_the_true_gaussian_posterior(n_classes):
    """test_lda_predict_proba: on large Gaussian samples with a shared covariance, the class
    means are recovered and ``predict_proba`` is Bayes' rule with the true parameters (2
    features: r = 1 for two classes, r = n_features for three, where the projected Gaussian
    model is the full one)."""
    rng = np.random.RandomState(42)
    centers = np.array([[0, 0], [-10, 40], [-30, 30]])[:n_classes]
    cov = np.array([[10, 10], [10, 100]])
    n = 90000 // n_classes
    Xg = np.vstack([rng.multivariate_normal(c, cov, size=n) for c in centers])
    yg = np.repeat(np.arange(n_classes), n)
    lda = OrthogonalLDA().fit(Xg, yg)
    assert_allclose(lda.means_, centers, atol=1e-1)
    sample = np.array([[-22.0, 22.0]])
    density = np.array([multivariate_normal(c, cov).pdf(sample[0]) for c in centers])
    truth = density / density.sum()  # equal priors
    assert_allclose(lda.predict_proba(sample), truth[None], atol=1e-2)
    assert_allclose(lda.predict_proba(Xg[::500]).sum(axis=1), 1.0, rtol=1e-12)


# --- test_lda_priors --------------------------------------------------------------------------
def test_priors_given_checked_and_only_moving_the_intercept():
    """test_lda_priors: negative priors are refused; a list, tuple or array is taken as
    given; priors that do not sum to 1 are refused (scikit-learn renormalizes with a warning),
    and divided by their sum they give scikit-learn's normalized priors.  The priors leave the
    subspace and ``coef_`` alone and shift each log-odds by log π'_k − log π_k."""
    with pytest.raises(ParameterError, match="must be non-negative") as info:
        OrthogonalLDA(priors=np.array([0.5, -0.5])).fit(X, Y)
    assert info.value.param == "priors"
    for priors in ([0.3, 0.7], (0.3, 0.7), np.array([0.3, 0.7])):
        assert_allclose(OrthogonalLDA(priors=priors).fit(X, Y).priors_, [0.3, 0.7])
    with pytest.raises(ParameterError, match="sum to 1.*divide them by their sum") as info:
        OrthogonalLDA(priors=[0.5, 0.6]).fit(X, Y)
    assert info.value.param == "priors"
    with pytest.raises(ParameterError, match="one per class"):
        OrthogonalLDA(priors=[0.2, 0.3, 0.5]).fit(X, Y)
    given = np.array([0.5, 0.6])
    assert_allclose(OrthogonalLDA(priors=given / given.sum()).fit(X, Y).priors_, [0.45, 0.55],
                    atol=5e-3)

    Xw, yw = wine()
    plain = OrthogonalLDA().fit(Xw, yw)
    assert_allclose(plain.priors_, np.bincount(yw) / len(yw))
    tilted = OrthogonalLDA(priors=[0.6, 0.3, 0.1]).fit(Xw, yw)
    assert_allclose(tilted.components_, plain.components_, atol=1e-10)
    # the rows of coef_ are centred at the prior-weighted mean (as scikit-learn's), so
    # only their differences — the log-odds against class 0 — are free of the priors
    assert_allclose(tilted.coef_ - tilted.coef_[:1], plain.coef_ - plain.coef_[:1],
                    atol=1e-10)
    shift = np.log(tilted.priors_) - np.log(plain.priors_)

    def odds(lda):
        D = lda.decision_function(Xw)
        return D - D[:, :1]

    assert_allclose(odds(tilted) - odds(plain),
                    np.broadcast_to(shift - shift[0], (len(Xw), 3)), atol=1e-9)
    sk_plain, sk_tilted = SkLDA().fit(Xw, yw), SkLDA(priors=[0.6, 0.3, 0.1]).fit(Xw, yw)
    assert_allclose(sk_tilted.coef_ - sk_tilted.coef_[:1], sk_plain.coef_ - sk_plain.coef_[:1],
                    atol=1e-8)  # the same fact holds for scikit-learn's rule


# --- test_lda_coefs ---------------------------------------------------------------------------
def test_two_class_coefs_are_the_gaussian_rule_and_sklearns():
    """test_lda_coefs: on two blobs (2 features, r = 1 < d, so the optimizer runs) ``coef_``
    and ``intercept_`` are the shared-covariance rule Σ⁻¹(μ₁ − μ₀), −½(μ₁ + μ₀)ᵀΣ⁻¹(μ₁ − μ₀) +
    log(π₁/π₀), which every scikit-learn solver also returns; the decision function is
    linear in them."""
    Xb, yb = make_blobs(n_samples=1000, n_features=2, centers=2, random_state=11)
    lda = OrthogonalLDA().fit(Xb, yb)
    assert lda.n_components_ == 1 and lda.result_.solver != "closed-form"
    Sw, _, means = scatters(Xb, yb)
    delta = means[1] - means[0]
    coef = np.linalg.solve(Sw, delta)
    pri = np.bincount(yb) / len(yb)
    intercept = -0.5 * (means[1] + means[0]) @ coef + np.log(pri[1] / pri[0])
    assert lda.coef_.shape == (1, 2) and lda.intercept_.shape == (1,)
    assert_allclose(lda.coef_[0], coef, rtol=1e-8)
    assert_allclose(lda.intercept_[0], intercept, rtol=1e-8)
    assert_allclose(lda.decision_function(Xb), Xb @ lda.coef_[0] + lda.intercept_[0],
                    rtol=1e-10, atol=1e-10)
    for solver in ("svd", "lsqr", "eigen"):
        sk = SkLDA(solver=solver).fit(Xb, yb)
        assert_allclose(lda.coef_, sk.coef_, rtol=1e-6)
        assert_allclose(lda.intercept_, sk.intercept_, rtol=1e-6, atol=1e-8)


# --- test_lda_transform, test_lda_solver_agreement --------------------------------------------
def test_transform_shapes_and_orthonormal_components():
    """test_lda_transform: ``n_components=1`` gives one output column; by default r =
    min(n_classes − 1, n_features); the components are orthonormal and, unwhitened, the
    output is the centered projection on them."""
    assert OrthogonalLDA(n_components=1).fit(X, Y).transform(X).shape == (6, 1)
    Xw, yw = wine()
    lda = OrthogonalLDA(whiten=False).fit(Xw, yw)
    assert lda.transform(Xw).shape == (178, 2) and lda.components_.shape == (2, 13)
    assert_allclose(lda.components_ @ lda.components_.T, np.eye(2), atol=1e-12)
    assert_allclose(lda.transform(Xw), (Xw - lda.mean_) @ lda.components_.T, atol=1e-12)
    assert OrthogonalLDA(n_components=1).fit(Xw, yw).transform(Xw).shape == (178, 1)


def test_solvers_agree_and_r1_transform_is_sklearns():
    """test_lda_solver_agreement: ldr's optimizers reach the same subspace and the same
    decision function (the answer is the cost's maximum, not a solver's); with r = 1 the
    whitened transform is scikit-learn's up to sign, and so is the decision function."""
    lda = OrthogonalLDA(n_components=1).fit(X, Y)
    sk = SkLDA(n_components=1).fit(X, Y)
    ours, theirs = lda.transform(X).astype(float), sk.transform(X).astype(float)
    assert_allclose(np.abs(ours), np.abs(theirs), rtol=1e-5)
    assert_allclose(np.sign(ours * theirs), np.sign(ours[0, 0] * theirs[0, 0]))
    assert_allclose(lda.decision_function(X), sk.decision_function(X), rtol=1e-5, atol=1e-5)

    Xw, yw = wine()
    fits = [OrthogonalLDA(solver=s).fit(Xw, yw)
            for s in (None, "ism", "trust-region", "conjugate-gradient", "lbfgs")]
    for other in fits[1:]:
        assert_allclose(projector(other.components_.T), projector(fits[0].components_.T),
                        atol=1e-6)
        assert_allclose(other.decision_function(Xw), fits[0].decision_function(Xw),
                        atol=1e-5)
        assert other.ratio_ == pytest.approx(fits[0].ratio_, rel=1e-10)


# --- what makes ldr's subspace different from scikit-learn's --------------------------------
@pytest.mark.parametrize("data", ["wine", "gaussian noise"])
def test_trace_ratio_is_globally_optimal_and_beats_the_eigenvectors(data):
    """Where r = n_classes − 1 < n_features the subspaces differ.  ldr's is the global
    maximum of the trace ratio: with λ* its ratio, the sum of the r largest eigenvalues of
    S_b − λ*S_w is 0 (Wang et al. 2007); scikit-learn's eigenvectors, orthonormalized, have a
    lower ratio λ_e, at which that sum is still positive.  ``ratio_`` is the ratio of
    ``components_`` with the 1/n scatters."""
    if data == "wine":
        Xd, yd = wine()
    else:  # test_lda_explained_variance_ratio's data
        state = np.random.RandomState(0)
        Xd = state.normal(loc=0, scale=100, size=(40, 20))
        yd = state.randint(0, 3, size=(40,))
    lda = OrthogonalLDA().fit(Xd, yd)
    Sw, Sb, _ = scatters(Xd, yd)
    r = lda.n_components_
    assert r == 2
    M = lda.components_.T
    best = ratio(M, Sw, Sb)
    assert lda.ratio_ == pytest.approx(best, rel=1e-10)

    def top_sum(lam):
        return float(np.sum(np.linalg.eigvalsh(Sb - lam * Sw)[-r:]))

    scale = np.linalg.norm(Sb, 2) + best * np.linalg.norm(Sw, 2)
    assert abs(top_sum(best)) <= 1e-9 * scale
    eigen = orthonormal(SkLDA(solver="eigen").fit(Xd, yd).scalings_[:, :r])
    theirs = ratio(eigen, Sw, Sb)
    assert best >= theirs * (1 + 1e-3)  # strictly better, not a rounding difference
    assert top_sum(theirs) > 1e-6 * scale
    assert np.linalg.norm(projector(M) - projector(eigen), 2) > 1e-2  # different subspaces


def test_two_classes_span_the_same_direction_as_sklearn():
    """r = n_classes − 1 = 1: the trace-ratio maximum is S_w⁻¹(μ₁ − μ₀), the direction of
    scikit-learn's scalings; the ratios are equal."""
    Xc, yc = make_classification(n_samples=300, n_features=6, n_informative=4,
                                 n_redundant=0, random_state=3)
    lda = OrthogonalLDA().fit(Xc, yc)
    Sw, Sb, means = scatters(Xc, yc)
    fisher = np.linalg.solve(Sw, means[1] - means[0])
    fisher /= np.linalg.norm(fisher)
    sk = SkLDA(solver="eigen").fit(Xc, yc).scalings_[:, 0]
    sk = sk / np.linalg.norm(sk)
    m = lda.components_[0]
    assert abs(m @ fisher) == pytest.approx(1.0, abs=1e-10)
    assert abs(m @ sk) == pytest.approx(1.0, abs=1e-10)
    assert lda.ratio_ == pytest.approx(ratio(sk[:, None], Sw, Sb), rel=1e-9)


# --- test_lda_explained_variance_ratio --------------------------------------------------------
def test_explained_variance_ratio_is_the_share_of_between_class_scatter():
    """test_lda_explained_variance_ratio, in ldr's meaning: one value per component
    (shape (2,)), each m_jᵀS_bm_j / tr(S_b), decreasing; the sum is the share of tr(S_b) the
    subspace keeps: below 1 here (scikit-learn's normalized eigenvalues sum to 1), exactly 1
    when the subspace is the whole space."""
    state = np.random.RandomState(0)
    Xr = state.normal(loc=0, scale=100, size=(40, 20))
    yr = state.randint(0, 3, size=(40,))
    lda = OrthogonalLDA().fit(Xr, yr)
    _, Sb, _ = scatters(Xr, yr)
    share = np.einsum("ij,jk,ik->i", lda.components_, Sb, lda.components_) / np.trace(Sb)
    assert lda.explained_variance_ratio_.shape == (2,)
    assert_allclose(lda.explained_variance_ratio_, share, rtol=1e-9)
    assert lda.explained_variance_ratio_[0] >= lda.explained_variance_ratio_[1] > 0
    assert lda.explained_variance_ratio_.sum() < 0.9  # the subspace tilts away from S_b
    whole = OrthogonalLDA().fit(Xr[:, :2], yr)  # r = n_features = 2
    assert whole.explained_variance_ratio_.sum() == pytest.approx(1.0, rel=1e-12)


# --- test_lda_orthogonality -------------------------------------------------------------------
def test_kite_means_land_on_the_components_and_within_class_is_white():
    """test_lda_orthogonality: four classes with kite-shaped means and the same symmetric
    spread.  The within-class covariance of the whitened output is the identity; the longer
    diagonal of the kite (classes 0 and 3) lies along the first component, the shorter
    (classes 1 and 2) along the second.  By default r = min(4 − 1, 3) = 3 (the whole space;
    scikit-learn's SVD solver keeps the rank of S_b, 2); with ``n_components=2`` the
    optimizer runs, and since S_w is isotropic its subspace holds all of S_b (the explained
    ratios sum to 1)."""
    means = np.array([[0, 0, -1], [0, 2, 0], [0, -2, 0], [0, 0, 5]], dtype=float)
    spread = np.array([[0.1, 0, 0], [-0.1, 0, 0], [0, 0.1, 0], [0, -0.1, 0], [0, 0, 0.1],
                       [0, 0, -0.1]])
    Xk = (means[:, None, :] + spread[None, :, :]).reshape(-1, 3)
    yk = np.repeat(np.arange(4), len(spread))
    for q in (None, 2):
        for whiten in (True, False):
            lda = OrthogonalLDA(n_components=q, whiten=whiten).fit(Xk, yk)
            r = lda.n_components_
            assert r == (q or 3)
            Z = lda.transform(means)
            d1, d2 = Z[3] - Z[0], Z[2] - Z[1]
            assert abs(d1[0]) / np.linalg.norm(d1) == pytest.approx(1.0, abs=1e-9)
            assert abs(d2[1]) / np.linalg.norm(d2) == pytest.approx(1.0, abs=1e-9)
            if whiten:
                assert_allclose(np.cov(lda.transform(spread).T, bias=True), np.eye(r),
                                atol=1e-9)
        assert lda.explained_variance_ratio_.sum() == pytest.approx(1.0, rel=1e-10)
        assert_allclose(lda.explained_variance_ratio_[:2], [5.5 / 7.5, 2 / 7.5], rtol=1e-9)


# --- test_lda_scaling -------------------------------------------------------------------------
def _scaling_data():
    rng = np.random.RandomState(1234)
    n = 100
    x1 = rng.uniform(-1, 1, (n, 3)) + [-10, 0, 0]
    x2 = rng.uniform(-1, 1, (n, 3)) + [10, 0, 0]
    scale = np.array([1.0, 100.0, 10000.0])
    return np.vstack((x1, x2)) * scale, np.array([-1] * n + [1] * n), scale


def test_features_scaled_over_eight_decades_are_separated():
    """test_lda_scaling: two classes, features scaled by 1, 10², 10⁴: perfectly separated;
    with r = 1 the answer is S_w⁻¹(μ₁ − μ₀), so the rescaling changes no prediction and the
    fitted direction is that of the rescaled features."""
    x, y, scale = _scaling_data()
    lda = OrthogonalLDA().fit(x, y)
    plain = OrthogonalLDA().fit(x / scale, y)
    assert lda.score(x, y) == 1.0
    assert_array_equal(lda.predict(x), plain.predict(x / scale))
    Sw, _, means = scatters(x, y)
    fisher = np.linalg.solve(Sw, means[1] - means[0])
    assert abs(lda.components_[0] @ fisher) / np.linalg.norm(fisher) == pytest.approx(
        1.0, abs=1e-12)
    assert_allclose(lda.predict_proba(x), plain.predict_proba(x / scale), atol=1e-8)


def test_features_scaled_over_eight_decades_fit_without_a_false_alarm():
    """The fit of the previous test reaches S_w⁻¹(μ₁ − μ₀) to rounding (checked there): it
    does not warn that it did not converge.  (The gradient at the random reference point is
    10⁶ times smaller than the cost's variation on these features; the gradient scale's
    slope term keeps tol · scale above rounding.)"""
    x, y, _ = _scaling_data()
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        OrthogonalLDA().fit(x, y)


def test_invariant_under_rotation_common_scale_and_translation():
    """Orthogonal LDA's own invariances (three classes, r < d): rotating, scaling all
    features by one factor and translating the data rotates the subspace with it and
    changes neither the predictions, the posterior nor the ratio."""
    Xw, yw = wine()
    Q = orthonormal(np.random.default_rng(0).standard_normal((13, 13)))
    moved = 7.0 * Xw @ Q.T + np.arange(13.0)
    a, b = OrthogonalLDA().fit(Xw, yw), OrthogonalLDA().fit(moved, yw)
    assert_array_equal(a.predict(Xw), b.predict(moved))
    assert_allclose(a.predict_proba(Xw), b.predict_proba(moved), atol=1e-7)
    assert b.ratio_ == pytest.approx(a.ratio_, rel=1e-9)
    assert_allclose(projector(b.components_.T), projector(Q @ a.components_.T), atol=1e-7)


# --- test_lda_store_covariance, test_lda_shrinkage, test_lda_ledoitwolf ----------------------
def test_pooled_within_class_covariance_is_sklearns_covariance():
    """test_lda_store_covariance's numbers: the pooled within-class covariance of the nine
    points is [[0.422222, 0.088889], [0.088889, 0.533333]]; ldr fits with it
    (``objective_.Sw``; no ``covariance_`` attribute), unshrunk, in the full space."""
    lda = OrthogonalLDA().fit(X9, Y9)
    assert lda.shrinkage_ == 0.0 and lda.subspace_ is None
    assert not hasattr(lda, "covariance_")
    expected = np.array([[0.422222, 0.088889], [0.088889, 0.533333]])
    assert_allclose(lda.objective_.Sw, expected, atol=1e-6)
    assert_allclose(SkLDA(store_covariance=True).fit(X9, Y9).covariance_, expected, atol=1e-6)


@pytest.mark.parametrize("seed", range(3))
def test_float_shrinkage_is_shrunk_covariance(seed):
    """test_lda_shrinkage: ``shrinkage=0.5`` fits with scikit-learn's ShrunkCovariance(0.5)
    covariance, (1 − s)S_w + s·tr(S_w)/d·I, and the same class means."""
    rng = np.random.RandomState(seed)
    Xs = rng.rand(100, 10)
    ys = rng.randint(3, size=100)
    lda = OrthogonalLDA(shrinkage=0.5).fit(Xs, ys)
    sk = SkLDA(solver="lsqr", store_covariance=True,
               covariance_estimator=ShrunkCovariance(shrinkage=0.5)).fit(Xs, ys)
    assert lda.shrinkage_ == 0.5
    assert_allclose(lda.means_, sk.means_, rtol=1e-12)
    assert_allclose(lda.objective_.Sw, sk.covariance_, rtol=1e-10, atol=1e-14)
    Sw = scatters(Xs, ys)[0]
    assert_allclose(lda.objective_.Sw, 0.5 * Sw + 0.5 * np.trace(Sw) / 10 * np.eye(10),
                    rtol=1e-10)


def test_auto_shrinkage_is_oas_of_the_within_class_scatter():
    """test_lda_ledoitwolf's counterpart: ``shrinkage="auto"`` is the Oracle Approximating
    Shrinkage coefficient of S_w with n − n_classes degrees of freedom — scikit-learn's OAS
    on rows whose covariance is S_w — and the fit is the fit with that number."""
    rng = np.random.RandomState(0)
    Xs = rng.rand(100, 10)
    ys = rng.randint(3, size=100)
    lda = OrthogonalLDA(shrinkage="auto").fit(Xs, ys)
    Sw = scatters(Xs, ys)[0]
    dof = len(Xs) - 3
    # dof centred rows whose covariance (1/dof) is exactly S_w
    w, V = np.linalg.eigh(Sw)
    rows = np.sqrt(dof) * orthonormal(rng.standard_normal((dof, 10))) @ (V * np.sqrt(w)) @ V.T
    assert_allclose(rows.T @ rows / dof, Sw, atol=1e-12)
    expected = OAS(assume_centered=True).fit(rows).shrinkage_
    assert 0 < expected < 1
    assert lda.shrinkage_ == pytest.approx(expected, rel=1e-10)
    fixed = OrthogonalLDA(shrinkage=lda.shrinkage_).fit(Xs, ys)
    assert_allclose(fixed.coef_, lda.coef_, rtol=1e-10, atol=1e-12)
    s = lda.shrinkage_
    assert_allclose(lda.objective_.Sw, (1 - s) * Sw + s * np.trace(Sw) / 10 * np.eye(10),
                    rtol=1e-10)


def test_no_shrinkage_by_default_unless_classes_collapse():
    """``shrinkage=None``: no shrinkage where S_w is non-singular; with a constant feature
    the fit works in the span of the data (``subspace_``) and still classifies; bad values
    are refused by name."""
    assert OrthogonalLDA().fit(X9, Y9).shrinkage_ == 0.0
    flat = np.column_stack([X9, np.full(len(X9), 3.0)])
    lda = OrthogonalLDA().fit(flat, Y9)
    assert lda.subspace_ is not None and lda.subspace_.shape == (3, 2)
    assert_allclose(lda.subspace_.T @ np.eye(3)[:, 2], 0.0, atol=1e-12)
    assert_array_equal(lda.predict(flat), OrthogonalLDA().fit(X9, Y9).predict(X9))
    for bad in (1.5, -0.1, "oas", True):
        with pytest.raises(ParameterError, match="None, 'auto' or a number in") as info:
            OrthogonalLDA(shrinkage=bad).fit(X, Y)
        assert info.value.param == "shrinkage"


# --- test_lda_dimension_warning ---------------------------------------------------------------
@pytest.mark.parametrize("n_features", [3, 5])
@pytest.mark.parametrize("n_classes", [5, 3])
def test_n_components_bound(n_classes, n_features):
    """test_lda_dimension_warning: n_components up to min(n_classes − 1, n_features) fits
    (None takes the bound); above it is a ValueError naming n_components and the bound."""
    rng = np.random.RandomState(0)
    Xd = rng.randn(10, n_features)
    yd = np.tile(range(n_classes), 10 // n_classes + 1)[:10]
    top = min(n_features, n_classes - 1)
    for q in (top - 1, None, top):
        lda = OrthogonalLDA(n_components=q).fit(Xd, yd)
        assert lda.n_components_ == (q or top)
        assert lda.transform(Xd).shape == (10, q or top)
    for q in (top + 1, max(n_features, n_classes - 1) + 1):
        with pytest.raises(ParameterError, match=re.escape(
                f"min(n_classes - 1, n_features) = {top}")) as info:
            OrthogonalLDA(n_components=q).fit(Xd, yd)
        assert info.value.param == "n_components"


def test_n_components_bound_on_rank_deficient_data():
    """Data spanning 2 of 5 dimensions with 5 classes: the bound is min(n_classes − 1, rank
    of X) = 2, and the error says so."""
    rng = np.random.RandomState(0)
    Xr = rng.randn(30, 2) @ rng.randn(2, 5)
    yr = np.tile(range(5), 6)
    assert OrthogonalLDA().fit(Xr, yr).n_components_ == 2
    with pytest.raises(ParameterError, match=r"rank of X\) \(X spans 2 of its 5 dimensions\)"):
        OrthogonalLDA(n_components=3).fit(Xr, yr)


# --- test_lda_dtype_match, test_lda_numeric_consistency_float32_float64 ----------------------
@pytest.mark.parametrize("dtype, expected", [(np.float32, np.float32), (np.float64, np.float64),
                                             (np.int32, np.float64), (np.int64, np.float64)])
def test_dtype_is_preserved(dtype, expected):
    """test_lda_dtype_match: float32 in, float32 out (integers give float64) — the fitted
    arrays and every output."""
    Xd = X.astype(dtype)
    for shrinkage in SHRINKAGES:
        lda = OrthogonalLDA(shrinkage=shrinkage).fit(Xd, Y.astype(dtype))
        for array in (lda.coef_, lda.intercept_, lda.components_, lda.transform(Xd),
                      lda.decision_function(Xd), lda.predict_proba(Xd),
                      lda.predict_log_proba(Xd)):
            assert array.dtype == expected


@pytest.mark.parametrize("shrinkage", SHRINKAGES)
def test_float32_and_float64_fits_agree(shrinkage):
    """test_lda_numeric_consistency_float32_float64: the float32 fit's ``coef_`` is the
    float64 fit's to float32 precision."""
    c32 = OrthogonalLDA(shrinkage=shrinkage).fit(X.astype(np.float32), Y.astype(np.float32))
    c64 = OrthogonalLDA(shrinkage=shrinkage).fit(X.astype(np.float64), Y.astype(np.float64))
    assert_allclose(c32.coef_, c64.coef_, rtol=1e-6)
    assert_allclose(c32.intercept_, c64.intercept_, rtol=1e-6, atol=1e-6)


# --- classes and labels -----------------------------------------------------------------------
def test_string_labels_and_one_class():
    """Labels are any classes (strings come back as strings); one class is refused with an
    error naming y; continuous targets are refused as for every scikit-learn classifier."""
    labels = np.array(["low"] * 3 + ["high"] * 3)
    lda = OrthogonalLDA().fit(X, labels)
    assert_array_equal(lda.classes_, ["high", "low"])
    assert_array_equal(lda.predict(X), labels)
    assert_array_equal(lda.classes_[lda.predict_proba(X).argmax(axis=1)], labels)
    with pytest.raises(ParameterError, match="at least two classes") as info:
        OrthogonalLDA().fit(X, np.ones(6))
    assert info.value.param == "y"
    with pytest.raises(ValueError, match="Unknown label type"):
        OrthogonalLDA().fit(X, np.linspace(0, 1, 6))


@pytest.mark.parametrize("shrinkage", [None, 0.0, 0.5, "auto"])
def test_as_many_samples_as_classes_is_refused(shrinkage):
    """test_raises_value_error_on_same_number_of_classes_and_samples: one sample per class
    leaves no within-class scatter, so there is no fit: a ValueError, never a model."""
    with pytest.raises(ValueError):
        OrthogonalLDA(shrinkage=shrinkage).fit([[0.5, 0.6], [0.6, 0.5]], ["a", "b"])


def test_as_many_samples_as_classes_error_names_the_cause():
    """scikit-learn's message says the number of samples must be more than the number of
    classes; ldr's should name that cause too."""
    with pytest.raises(ValueError) as info:
        OrthogonalLDA().fit([[0.5, 0.6], [0.6, 0.5]], ["a", "b"])
    assert re.search(r"n_classes|number of classes", str(info.value)), str(info.value)


# --- test_get_feature_names_out ----------------------------------------------------------------
def test_feature_names_out_and_in():
    """test_get_feature_names_out: the class name, lower-cased, numbered per component;
    ``n_features_in_`` and, from a DataFrame, ``feature_names_in_``; a different width or
    different column names are refused."""
    lda = OrthogonalLDA().fit(X, Y)
    assert_array_equal(lda.get_feature_names_out(),
                       [f"orthogonallda{i}" for i in range(lda.n_components_)])
    assert lda.n_features_in_ == 2 and not hasattr(lda, "feature_names_in_")
    with pytest.raises(ValueError, match="X has 3 features"):
        lda.predict(np.ones((2, 3)))
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame(X, columns=["a", "b"])
    lda = OrthogonalLDA().fit(frame, Y)
    assert_array_equal(lda.feature_names_in_, ["a", "b"])
    with pytest.raises(ValueError, match="feature names should match"):
        lda.predict(frame.rename(columns={"a": "z"}))
    Xw, yw = wine()
    assert_array_equal(OrthogonalLDA().fit(Xw, yw).get_feature_names_out(),
                       ["orthogonallda0", "orthogonallda1"])
