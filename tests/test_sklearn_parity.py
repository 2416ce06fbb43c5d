"""scikit-learn parity of ldr's PCA and OrthogonalLDA.

The facts asserted by scikit-learn 1.9's own tests (sklearn/decomposition/tests/test_pca.py,
sklearn/tests/test_discriminant_analysis.py) that concern behaviour ldr claims, restated here
(the facts carry over, not the code), plus direct comparisons with scikit-learn's estimators.
Each test names the scikit-learn test it ports.  Not ported, on purpose: solver choices
(arpack, randomized, covariance_eigh), sparse input, array API, ``n_components=0``, sklearn's
whitened ``get_covariance`` (it scales the components by √explained_variance_; ldr's
covariance does not depend on ``whiten``), and sklearn's LDA explained-variance ratios and
orthogonality of its (non-orthogonal) scalings — orthogonal LDA defines them differently.
"""

import warnings

import numpy as np
import pytest
from _array_namespaces import parametrize_with_checks_here
from numpy.testing import assert_allclose, assert_array_equal
from sklearn.datasets import (
    load_breast_cancer,
    load_digits,
    load_iris,
    load_wine,
    make_classification,
)
from sklearn.decomposition import PCA as SkPCA
from sklearn.discriminant_analysis import LinearDiscriminantAnalysis as SkLDA
from sklearn.model_selection import StratifiedKFold, cross_val_score
from sklearn.neighbors import KNeighborsClassifier
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from ldr.estimators import PCA, OrthogonalLDA
from ldr.estimators.gaussian import minka_dimension, minka_log_likelihood
from ldr.manifolds import sin_largest_angle

IRIS = load_iris()


def _same_up_to_sign(A, B, atol):
    """Rows of A and B equal up to one sign per row."""
    signs = np.sign(np.sum(A * B, axis=1, keepdims=True))
    assert_allclose(A * signs, B, atol=atol)


# --- PCA against scikit-learn directly ---------------------------------------------------------
@pytest.mark.parametrize("shape", [(60, 8), (8, 20)])  # tall, and wide (n < d)
@pytest.mark.parametrize("n_components", [None, 1, 3, 0.8, "mle"])
def test_pca_matches_sklearn_attributes(shape, n_components):
    rng = np.random.RandomState(0)
    X = rng.randn(*shape) @ np.diag(np.linspace(3.0, 0.2, shape[1])) + 5.0
    if n_components == "mle" and shape[0] < shape[1]:
        with pytest.raises(ValueError, match="n_components: 'mle' is only supported if "
                                             "n_samples >= n_features"):
            PCA(n_components).fit(X)
        return
    ours, sk = PCA(n_components).fit(X), SkPCA(n_components).fit(X)
    assert ours.n_components_ == sk.n_components_ and ours.n_samples_ == sk.n_samples_
    r = ours.n_components_
    # the components whose variance is not (numerically) zero: n < d leaves one null direction
    k = int(np.sum(sk.explained_variance_ > 1e-10 * sk.explained_variance_[0]))
    _same_up_to_sign(ours.components_[:k], sk.components_[:k], atol=1e-9)
    assert sin_largest_angle(ours.M_, sk.components_.T) < 1e-8 or k < r
    for name in ("explained_variance_", "explained_variance_ratio_", "singular_values_"):
        assert_allclose(getattr(ours, name), getattr(sk, name), rtol=1e-9, atol=1e-12)
    assert ours.noise_variance_ == pytest.approx(sk.noise_variance_, rel=1e-9, abs=1e-13)
    assert_allclose(ours.mean_, sk.mean_, rtol=1e-12)
    assert_allclose(ours.get_covariance(), sk.get_covariance(), rtol=1e-9, atol=1e-12)
    if k == r or ours.noise_variance_ > 0:
        if ours.noise_variance_ > 0 or shape[0] > shape[1]:
            assert_allclose(ours.get_precision(), sk.get_precision(), rtol=1e-7, atol=1e-9)
            assert_allclose(ours.score_samples(X), sk.score_samples(X), rtol=1e-9)
    Z, Zsk = ours.transform(X), sk.transform(X)
    _same_up_to_sign(Z[:, :k].T, Zsk[:, :k].T, atol=1e-8)
    assert_allclose(ours.inverse_transform(Z), sk.inverse_transform(Zsk), atol=1e-8)


def test_pca_whiten_matches_sklearn():
    X = load_digits().data[:300]
    ours, sk = PCA(10, whiten=True).fit(X), SkPCA(10, whiten=True).fit(X)
    _same_up_to_sign(ours.transform(X).T, sk.transform(X).T, atol=1e-8)
    assert_allclose(ours.inverse_transform(ours.transform(X)),
                    sk.inverse_transform(sk.transform(X)), atol=1e-8)


# --- ported from sklearn/decomposition/tests/test_pca.py -----------------------------------------
@pytest.mark.parametrize("n_components", range(1, 5))
def test_pca(n_components):  # test_pca (n_components = n_features = 4 included)
    X = IRIS.data
    pca = PCA(n_components=n_components)
    X_r = pca.fit(X).transform(X)
    assert X_r.shape[1] == n_components
    X_r2 = pca.fit_transform(X)
    assert_allclose(X_r, X_r2)
    assert_allclose(pca.transform(X), X_r2)
    cov, precision = pca.get_covariance(), pca.get_precision()
    assert_allclose(cov @ precision, np.eye(X.shape[1]), atol=1e-12)


def test_no_empty_slice_warning():
    X = np.random.RandomState(0).uniform(-1, 1, size=(10, 12))
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        PCA(n_components=10).fit(X)


def test_whitening():
    rng = np.random.RandomState(0)
    n_samples, n_features, n_components, rank = 100, 80, 30, 50
    X = rng.randn(n_samples, rank) @ (np.diag(np.linspace(10.0, 1.0, rank))
                                      @ rng.randn(rank, n_features))
    X[:, :50] *= 3
    assert X.std(axis=0).std() > 43.8
    pca = PCA(n_components=n_components, whiten=True)
    X_whitened = pca.fit_transform(X.copy())
    assert X_whitened.shape == (n_samples, n_components)
    assert_allclose(X_whitened, pca.transform(X), rtol=1e-10)  # sklearn: 5e-4
    assert_allclose(X_whitened.std(ddof=1, axis=0), np.ones(n_components))
    assert_allclose(X_whitened.mean(axis=0), np.zeros(n_components), atol=1e-12)
    X_unwhitened = PCA(n_components=n_components).fit(X).transform(X)
    assert X_unwhitened.shape == (n_samples, n_components)
    assert X_unwhitened.std(axis=0).std() == pytest.approx(74.1, rel=1e-1)


def test_pca_explained_variance_empirical():
    rng = np.random.RandomState(0)
    X = rng.randn(100, 80) @ np.diag(np.linspace(2.0, 0.5, 80))
    pca = PCA(n_components=2)
    X_pca = pca.fit_transform(X)
    assert_allclose(pca.explained_variance_, np.var(X_pca, ddof=1, axis=0))
    expected = np.sort(np.linalg.eigvalsh(np.cov(X, rowvar=False)))[::-1][:2]
    assert_allclose(pca.explained_variance_, expected, rtol=1e-10)  # sklearn: 5e-3


def test_pca_singular_values():
    rng = np.random.RandomState(0)
    X = rng.randn(100, 80)
    X_trans = PCA(n_components=2).fit(X).transform(X)
    pca = PCA(n_components=2).fit(X)
    assert_allclose(np.sum(pca.singular_values_**2), np.linalg.norm(X_trans, "fro") ** 2)
    assert_allclose(pca.singular_values_, np.sqrt(np.sum(X_trans**2, axis=0)))
    X = rng.randn(100, 110)
    pca = PCA(n_components=3)
    X_trans = pca.fit_transform(X)
    X_trans /= np.sqrt(np.sum(X_trans**2, axis=0))
    X_trans[:, 0] *= 3.142
    X_trans[:, 1] *= 2.718
    pca.fit(X_trans @ pca.components_)
    assert_allclose(pca.singular_values_, [3.142, 2.718, 1.0])


def test_pca_check_projection():
    rng = np.random.RandomState(0)
    X = rng.randn(100, 3) * 0.1
    X[:10] += np.array([3, 4, 5])
    Xt = 0.1 * rng.randn(1, 3) + np.array([3, 4, 5])
    Yt = PCA(n_components=2).fit(X).transform(Xt)
    Yt /= np.sqrt((Yt**2).sum())
    assert_allclose(np.abs(Yt[0][0]), 1.0, rtol=5e-3)


def test_pca_check_projection_list():
    X_trans = PCA(n_components=1).fit_transform([[1.0, 0.0], [0.0, 1.0]])
    assert X_trans.shape == (2, 1)
    assert_allclose(X_trans.mean(), 0.0, atol=1e-12)
    assert_allclose(X_trans.std(), 0.71, rtol=5e-3)


@pytest.mark.parametrize("whiten", [False, True])
def test_pca_inverse(whiten):
    rng = np.random.RandomState(0)
    X = rng.randn(50, 3)
    X[:, 1] *= 0.00001
    X += [5, 4, 3]
    pca = PCA(n_components=2, whiten=whiten).fit(X)
    assert_allclose(X, pca.inverse_transform(pca.transform(X)), rtol=5e-6)
    full = PCA(whiten=whiten).fit(X)  # all components: the round trip is exact
    assert_allclose(X, full.inverse_transform(full.transform(X)), rtol=1e-12)


@pytest.mark.parametrize("data", [np.array([[0, 1, 0], [1, 0, 0]]),
                                  np.array([[0, 1, 0], [1, 0, 0]]).T])
def test_pca_validation(data):
    with pytest.raises(ValueError, match=r"min\(n_samples, n_features\) = 2 .*, got 3"):
        PCA(3).fit(data)
    with pytest.raises(ValueError, match=r"n_components: must be None or an integer"):
        PCA(0).fit(data)  # sklearn's full solver accepts 0; ldr needs a subspace


@pytest.mark.parametrize("data", [IRIS.data, IRIS.data.T])
def test_n_components_none(data):
    assert PCA().fit(data).n_components_ == min(data.shape)


def test_n_components_mle():
    X = np.random.RandomState(0).randn(600, 10)
    pca = PCA(n_components="mle").fit(X)
    assert pca.n_components_ == 1 and pca.n_components == "mle"


def test_pca_dim():
    rng = np.random.RandomState(0)
    X = rng.randn(100, 5) * 0.1
    X[:10] += np.array([3, 4, 5, 1, 2])
    pca = PCA(n_components="mle").fit(X)
    assert pca.n_components == "mle" and pca.n_components_ == 1


def test_infer_dim_1():
    n, p = 1000, 5
    rng = np.random.RandomState(0)
    X = (rng.randn(n, p) * 0.1 + rng.randn(n, 1) * np.array([3, 4, 5, 1, 2])
         + np.array([1, 0, 7, 4, 6]))
    spect = PCA(n_components=p).fit(X).explained_variance_
    ll = np.array([minka_log_likelihood(spect, k, n) for k in range(1, p)])
    assert ll[1] > ll.max() - 0.01 * n


def test_infer_dim_2_and_3():
    n, p = 1000, 5
    rng = np.random.RandomState(0)
    X = rng.randn(n, p) * 0.1
    X[:10] += np.array([3, 4, 5, 1, 2])
    X[10:20] += np.array([6, 0, 7, 2, -1])
    assert minka_dimension(PCA(n_components=p).fit(X).explained_variance_, n) > 1
    n = 100
    rng = np.random.RandomState(0)
    X = rng.randn(n, p) * 0.1
    X[:10] += np.array([3, 4, 5, 1, 2])
    X[10:20] += np.array([6, 0, 7, 2, -1])
    X[30:40] += 2 * np.array([-1, 1, -1, 1, -1])
    assert minka_dimension(PCA(n_components=p).fit(X).explained_variance_, n) > 2


@pytest.mark.parametrize("X, n_components, n_components_validated", [
    (IRIS.data, 0.95, 2), (IRIS.data, 0.01, 1),
    (np.random.RandomState(0).rand(5, 20), 0.5, 2)])
def test_infer_dim_by_explained_variance(X, n_components, n_components_validated):
    pca = PCA(n_components=n_components).fit(X)
    assert pca.n_components == pytest.approx(n_components)
    assert pca.n_components_ == n_components_validated


def test_pca_score():
    n, p = 1000, 3
    rng = np.random.RandomState(0)
    X = rng.randn(n, p) * 0.1 + np.array([3, 4, 5])
    pca = PCA(n_components=2).fit(X)
    ll1 = pca.score(X)
    h = -0.5 * np.log(2 * np.pi * np.exp(1) * 0.1**2) * p
    assert_allclose(ll1 / h, 1, rtol=5e-2)
    assert ll1 > pca.score(rng.randn(n, p) * 0.2 + np.array([3, 4, 5]))
    # (sklearn's third assertion, a lower score with whiten=True, comes from its whitened
    # get_covariance; ldr's likelihood does not depend on whiten)
    assert PCA(n_components=2, whiten=True).fit(X).score(X) == pytest.approx(ll1, rel=1e-12)


def test_pca_score3():
    n, p = 200, 3
    rng = np.random.RandomState(0)
    Xl = rng.randn(n, p) + rng.randn(n, 1) * np.array([3, 4, 5]) + np.array([1, 0, 7])
    Xt = rng.randn(n, p) + rng.randn(n, 1) * np.array([3, 4, 5]) + np.array([1, 0, 7])
    ll = [PCA(n_components=k).fit(Xl).score(Xt) for k in (1, 2)]  # sklearn also tries k = 0
    assert np.argmax(ll) == 0


def test_pca_sanity_noise_variance_and_score_against_sklearn():
    X = load_digits().data
    pca = PCA(n_components=30).fit(X)
    assert np.all(pca.explained_variance_ - pca.noise_variance_ >= 0)
    assert_allclose(pca.score(X), SkPCA(n_components=30).fit(X).score(X), rtol=5e-6)


def test_pca_zero_noise_variance_edge_cases():
    rng = np.random.RandomState(0)
    X = rng.randn(100, 3) * 0.1 + np.array([3, 4, 5])
    pca = PCA(n_components=3).fit(X)
    assert pca.noise_variance_ == 0
    assert np.isfinite(pca.score(X))
    assert PCA(n_components=3).fit(X.T).noise_variance_ == 0


@pytest.mark.parametrize("seed", [0, 1])
def test_pca_dtype_preservation(seed):
    X = np.random.RandomState(seed).rand(1000, 4)
    pca_64 = PCA(n_components=3).fit(X)
    pca_32 = PCA(n_components=3).fit(X.astype(np.float32))
    assert pca_64.components_.dtype == np.float64 and pca_32.components_.dtype == np.float32
    for name in ("explained_variance_", "explained_variance_ratio_", "singular_values_",
                 "mean_"):
        assert getattr(pca_32, name).dtype == np.float32
    assert pca_64.transform(X).dtype == np.float64
    assert pca_32.transform(X.astype(np.float32)).dtype == np.float32
    assert pca_32.inverse_transform(pca_32.transform(X.astype(np.float32))).dtype == np.float32
    assert_allclose(pca_64.components_, pca_32.components_, rtol=1e-3, atol=1e-3)
    X_i64 = np.random.RandomState(0).randint(0, 1000, (1000, 4))
    pca_i64 = PCA(n_components=3).fit(X_i64)
    pca_i32 = PCA(n_components=3).fit(X_i64.astype(np.int32))
    assert pca_i64.components_.dtype == pca_i32.components_.dtype == np.float64
    assert pca_i64.transform(X_i64).dtype == np.float64
    assert_allclose(pca_i64.components_, pca_i32.components_, rtol=1e-4)


def test_pca_n_components_mostly_explained_variance_ratio():
    X, y = load_iris(return_X_y=True)
    n_components = PCA().fit(X, y).explained_variance_ratio_.cumsum()[-2]
    assert PCA(n_components=n_components).fit(X, y).n_components_ == X.shape[1]


def test_minka_small_and_bad_ranks():  # test_assess_dimension_bad_rank, _small_eigenvalues_mle
    spectrum = np.array([1, 1e-30, 1e-30, 1e-30])
    for rank in (0, 4):
        with pytest.raises(ValueError, match=r"in \[1, n_features - 1\]"):
            minka_log_likelihood(spectrum, rank, 10)
    assert minka_log_likelihood(spectrum, 1, 10) > -np.inf
    for rank in (2, 3):
        assert minka_log_likelihood(spectrum, rank, 10) == -np.inf
    assert minka_dimension(spectrum, 10) == 1
    s = np.linalg.svd(np.ones((9, 6)), compute_uv=False)  # test_assess_dimension_rank_one
    assert np.isfinite(minka_log_likelihood(s, 1, 9))
    for rank in range(2, 6):
        assert minka_log_likelihood(s, rank, 9) == -np.inf


def test_mle_redundant_data_too_few_samples_and_simple_case():
    X, _ = make_classification(n_features=20, n_informative=1, n_repeated=18, n_redundant=1,
                               n_clusters_per_class=1, random_state=42)
    assert PCA(n_components="mle").fit(X).n_components_ == 1
    X, _ = make_classification(n_samples=20, n_features=21, random_state=42)
    with pytest.raises(ValueError, match="n_components: 'mle' is only supported if "
                                         "n_samples >= n_features"):
        PCA(n_components="mle").fit(X)
    X = np.random.RandomState(0).randn(1000, 10)
    X[:, -1] = np.mean(X[:, :-1], axis=-1)
    assert PCA("mle").fit(X).n_components_ == 9


def test_pca_feature_names_out_and_variance_correctness():
    assert_array_equal(PCA(n_components=2).fit(IRIS.data).get_feature_names_out(),
                       ["pca0", "pca1"])
    X = np.random.RandomState(0).randn(500, 100)  # sklearn: 1000 × 200
    pca = PCA().fit(X)
    assert_allclose(pca.explained_variance_ / pca.explained_variance_ratio_,
                    np.var(X, ddof=1, axis=0).sum())


# --- OrthogonalLDA's classifier against scikit-learn's LDA ------------------------------------
# Data from sklearn's test_discriminant_analysis.py: six separable points in the plane
X6 = np.array([[-2, -1], [-1, -1], [-1, -2], [1, 1], [1, 2], [2, 1]], dtype="f")
Y6 = np.array([1, 1, 1, 2, 2, 2])
Y3 = np.array([1, 1, 2, 2, 3, 3])
X1 = np.array([[-2], [-1], [-1], [1], [1], [2]], dtype="f")


def _agree(ours, sk, X, atol):
    assert_allclose(ours.predict_proba(X), sk.predict_proba(X), atol=atol)
    assert_allclose(ours.predict_log_proba(X), sk.predict_log_proba(X), atol=1e3 * atol)
    assert_allclose(ours.decision_function(X), sk.decision_function(X), atol=1e3 * atol)
    assert_array_equal(ours.predict(X), sk.predict(X))


def test_lda_predict():  # test_lda_predict
    clf = OrthogonalLDA()
    assert_array_equal(clf.fit(X6, Y6).predict(X6), Y6)
    assert_array_equal(clf.fit(X1, Y6).predict(X1), Y6)  # one feature
    proba = clf.predict_proba(X1)
    assert_array_equal((proba[:, 1] > 0.5) + 1, Y6)
    assert_allclose(np.exp(clf.predict_log_proba(X1)), proba, rtol=1e-6, atol=1e-6)
    assert np.any(clf.fit(X6, Y3).predict(X6) != Y3)  # LDA cannot separate these


def test_two_classes_r1_agree_with_sklearn():
    # two classes, r = 1: the trace-ratio optimum is S_w⁻¹(μ₁ − μ₀), the Gaussian direction
    X, y = load_breast_cancer(return_X_y=True)
    X = StandardScaler().fit_transform(X)
    ours, sk = OrthogonalLDA().fit(X, y), SkLDA().fit(X, y)
    assert ours.n_components_ == 1
    _agree(ours, sk, X, atol=1e-10)  # measured 1.1e-13
    assert ours.score(X, y) == sk.score(X, y)
    assert_allclose(ours.coef_, sk.coef_, rtol=1e-9)
    assert_allclose(ours.intercept_, sk.intercept_, rtol=1e-9)
    for priors in ([0.3, 0.7], [0.9, 0.1]):
        _agree(OrthogonalLDA(priors=priors).fit(X, y), SkLDA(priors=priors).fit(X, y), X, 1e-10)


@pytest.mark.parametrize("n_classes", [2, 3])
def test_lda_predict_proba(n_classes):  # test_lda_predict_proba (2 features: r = d for C = 3)
    rng = np.random.RandomState(42)
    centers = np.array([[0, 0], [-10, 40], [-30, 30]])[:n_classes]
    cov = np.array([[10, 10], [10, 100]])
    X = np.vstack([rng.multivariate_normal(c, cov, size=90000 // n_classes) for c in centers])
    y = np.repeat(np.arange(n_classes), 90000 // n_classes)
    lda = OrthogonalLDA().fit(X, y)
    assert_allclose(lda.means_, centers, atol=1e-1)
    # The Elements of Statistical Learning, §4.4.5: the posterior from the true parameters
    precision = np.linalg.inv(cov)
    sample = np.array([[-22, 22]])
    logits = [(sample @ precision @ (centers[k] - centers[-1])
               - 0.5 * (centers[k] + centers[-1]) @ precision @ (centers[k] - centers[-1]))
              .item() for k in range(n_classes - 1)]
    expo = np.exp(logits)
    prob = np.append(expo, 1.0) / (1 + expo.sum())
    assert_allclose(lda.predict_proba(sample), prob[None], atol=1e-2)
    _agree(lda, SkLDA().fit(X, y), X[::97], atol=1e-10)


def test_whole_space_and_one_feature_agree_with_sklearn():
    X, y = load_iris(return_X_y=True)
    for Xs in (X[:, :2], X[:, 2:3]):  # r = n_features: 2 (three classes), 1 (one feature)
        ours, sk = OrthogonalLDA().fit(Xs, y), SkLDA().fit(Xs, y)
        assert ours.n_components_ == Xs.shape[1] and ours.result_.solver == "closed-form"
        _agree(ours, sk, Xs, atol=1e-12)  # measured 3e-15
        _agree(OrthogonalLDA(priors=[0.2, 0.3, 0.5]).fit(Xs, y),
               SkLDA(priors=[0.2, 0.3, 0.5]).fit(Xs, y), Xs, atol=1e-12)
        assert_allclose(ours.explained_variance_ratio_.sum(), 1.0)


@pytest.mark.parametrize("name, agree_min, gap_max", [
    # measured: iris 98.0% agreement, accuracy 0.973 vs 0.980; wine 98.9%, 0.989 vs 1.000
    ("iris", 0.97, 0.02), ("wine", 0.98, 0.02)])
def test_three_classes_mostly_agree_with_sklearn(name, agree_min, gap_max):
    # r = n_classes − 1 < n_features: the trace-ratio subspace is not the eigen-LDA one, so
    # agreement is not a mathematical property; these are measured lower bounds
    X, y = (load_iris if name == "iris" else load_wine)(return_X_y=True)
    X = StandardScaler().fit_transform(X)
    ours, sk = OrthogonalLDA().fit(X, y), SkLDA().fit(X, y)
    assert ours.n_components_ == 2
    assert np.mean(ours.predict(X) == sk.predict(X)) >= agree_min
    assert ours.score(X, y) >= sk.score(X, y) - gap_max
    # and the projected rule is not the full one (exact agreement would be a coincidence)
    assert np.abs(ours.predict_proba(X) - sk.predict_proba(X)).max() > 1e-3


def test_lda_as_classifier_in_pipeline_and_cross_validation():
    X, y = load_wine(return_X_y=True)
    cv = StratifiedKFold(5, shuffle=True, random_state=0)
    pipe = make_pipeline(StandardScaler(), OrthogonalLDA())
    assert cross_val_score(pipe, X, y, cv=cv).mean() >= 0.97  # measured 0.989
    Xs = StandardScaler().fit_transform(X)
    assert cross_val_score(OrthogonalLDA(), Xs, y, cv=cv).mean() >= 0.97
    pipe.fit(X, y)
    assert pipe.score(X, y) == pytest.approx(np.mean(pipe.predict(X) == y))
    assert pipe.predict_proba(X).shape == (178, 3)
    # still a transformer, in the middle of a pipeline
    knn = make_pipeline(StandardScaler(), OrthogonalLDA(), KNeighborsClassifier())
    assert knn.fit(X, y).score(X, y) > 0.95


def test_lda_priors_and_dimension_errors():  # test_lda_priors, test_lda_dimension_warning
    with pytest.raises(ValueError, match="priors: must be non-negative"):
        OrthogonalLDA(priors=[0.5, -0.5]).fit(X6, Y6)
    OrthogonalLDA(priors=[0.5, 0.5]).fit(X6, Y6)
    with pytest.raises(ValueError, match="priors: must sum to 1"):
        OrthogonalLDA(priors=[0.5, 0.6]).fit(X6, Y6)  # sklearn renormalizes with a warning
    rng = np.random.RandomState(0)
    for n_classes, n_features in [(3, 3), (3, 5), (5, 3), (5, 5)]:
        X = rng.randn(10, n_features)
        y = np.tile(range(n_classes), 10 // n_classes + 1)[:10]
        top = min(n_features, n_classes - 1)
        for q in [top - 1, None, top]:
            if q != 0:
                assert OrthogonalLDA(q, shrinkage=0.1).fit(X, y).n_components_ == (q or top)
        for q in [top + 1, max(n_features, n_classes - 1) + 1]:
            with pytest.raises(ValueError, match=r"n_components: .*min\(n_classes - 1, "
                                                 r"n_features\)"):
                OrthogonalLDA(q, shrinkage=0.1).fit(X, y)
    with pytest.raises(ValueError, match="within-class scatter"):  # n_samples == n_classes
        OrthogonalLDA().fit([[0.5, 0.6], [0.6, 0.5]], ["a", "b"])


def test_lda_dtype_match_and_consistency():  # test_lda_dtype_match, _numeric_consistency
    for dtype, expected in [(np.float32, np.float32), (np.float64, np.float64),
                            (np.int32, np.float64), (np.int64, np.float64)]:
        clf = OrthogonalLDA().fit(X6.astype(dtype), Y6.astype(dtype))
        assert clf.coef_.dtype == expected and clf.components_.dtype == expected
        assert clf.transform(X6.astype(dtype)).dtype == expected
    c32 = OrthogonalLDA().fit(X6.astype(np.float32), Y6)
    c64 = OrthogonalLDA().fit(X6.astype(np.float64), Y6)
    assert_allclose(c32.coef_, c64.coef_, rtol=1e-6)
    assert c32.predict_proba(X6.astype(np.float32)).dtype == np.float32


def test_lda_feature_names_and_pandas_output():  # test_get_feature_names_out
    pd = pytest.importorskip("pandas")
    est = OrthogonalLDA().fit(X6, Y6)
    assert_array_equal(est.get_feature_names_out(),
                       [f"orthogonallda{i}" for i in range(len(est.explained_variance_ratio_))])
    frame = pd.DataFrame(IRIS.data, columns=IRIS.feature_names)
    out = make_pipeline(StandardScaler(), PCA(2)).set_output(transform="pandas").fit_transform(
        frame)
    assert isinstance(out, pd.DataFrame) and list(out.columns) == ["pca0", "pca1"]
    lda = make_pipeline(StandardScaler(), OrthogonalLDA()).set_output(transform="pandas")
    out = lda.fit(frame, IRIS.target).transform(frame)
    assert list(out.columns) == ["orthogonallda0", "orthogonallda1"]
    assert_array_equal(lda[-1].feature_names_in_, IRIS.feature_names)
    assert_array_equal(lda.predict(frame), lda[-1].predict(lda[:-1].transform(frame)))


def test_lda_explained_variance_ratio_is_the_share_of_between_class_scatter():
    X, y = load_wine(return_X_y=True)
    X = StandardScaler().fit_transform(X)
    lda = OrthogonalLDA().fit(X, y)
    Sb = lda.objective_.Sb
    share = np.einsum("ij,jk,ik->i", lda.components_, Sb, lda.components_) / np.trace(Sb)
    assert_allclose(lda.explained_variance_ratio_, share, rtol=1e-10)
    assert np.all(np.diff(lda.explained_variance_ratio_) <= 0)
    assert 0 < lda.explained_variance_ratio_.sum() < 1  # the subspace tilts away from S_b


#: PCA(n_components=None) on the check's rank-deficient data (fewer distinct rows than
#: features once the zero weights drop some): the components beyond the rank are an arbitrary
#: basis of the covariance's null space, so transforms of rows off the span differ between
#: two fits; tests/test_sample_weight.py checks the equivalence where the subspace is defined
NULL_SPACE_BASIS = ("the components beyond the data's rank are an arbitrary basis of the "
                    "covariance's null space; tests/test_sample_weight.py checks integer "
                    "weights against repeated rows where the subspace is determined")


# scikit-learn's estimator checks for the non-default forms (the defaults are checked in
# test_estimators.py)
@parametrize_with_checks_here([PCA(whiten=True), PCA(n_components=0.9),
                               OrthogonalLDA(shrinkage=0.1)],
                              expected_failed_checks=lambda e: {
                                  "check_transformer_n_iter": "the start already satisfies the "
                                  "gradient rule: the fit honestly reports n_iter_ = 0",
                                  **({"check_sample_weight_equivalence_on_dense_data":
                                      NULL_SPACE_BASIS} if isinstance(e, PCA)
                                     and e.n_components is None else {})})
def test_sklearn_compatible_variants(estimator, check):
    check(estimator)


def test_projected_posterior_is_exact_iff_span_holds_the_discriminant_directions():
    # the math behind the agreement claims, for three classes with r = 2 < d = 13: a basis of
    # span{S_w⁻¹(μ_k − μ̄)} gives scikit-learn's posterior; a basis tilted off it does not
    from scipy.special import softmax

    from ldr.data.rows import moments
    from ldr.estimators.gaussian import gaussian_linear_rule

    X, y = load_wine(return_X_y=True)
    X = StandardScaler().fit_transform(X)
    stats = moments(X, y)
    Sw, _, means = stats.class_scatter()
    priors = stats.class_counts / stats.n
    center = priors @ means
    D = np.linalg.solve(Sw, (means - center).T)  # d × 3, rank 2
    M = np.linalg.svd(D, full_matrices=False)[0][:, :2]
    sk = SkLDA().fit(X, y)
    for basis, exact in [(M, True), (np.linalg.qr(M + 0.05 * np.eye(13)[:, :2])[0], False)]:
        coef, intercept = gaussian_linear_rule(basis, center, means, Sw, priors)
        gap = np.abs(softmax(X @ coef.T + intercept, axis=1) - sk.predict_proba(X)).max()
        assert (gap < 1e-10) if exact else (gap > 1e-4), gap


def test_pca_on_rank_deficient_data_noise_and_a_clear_error():
    """Rank 4 in 6 features: the noise variance is 0 as scikit-learn's (not a rounding
    residue above a kept variance), and the singular covariance's precision and score are a
    ValueError that says why (scikit-learn raises a LinAlgError)."""
    rng = np.random.default_rng(0)
    X = rng.standard_normal((100, 6))
    X[:, 4], X[:, 5] = 1.0, 2.0
    for k in (3, 4, 5):
        ours, theirs = PCA(k).fit(X), SkPCA(k).fit(X)
        assert ours.noise_variance_ == pytest.approx(theirs.noise_variance_, abs=1e-12)
    with pytest.raises(ValueError, match="covariance is singular"):
        PCA(5).fit(X).get_precision()
    with pytest.raises(ValueError, match="covariance is singular"):
        PCA(4).fit(X).score(X)
    assert PCA(3).fit(X).score(X) == pytest.approx(SkPCA(3).fit(X).score(X), rel=1e-10)


def test_pca_whiten_must_be_a_bool():
    with pytest.raises(ValueError, match="whiten: expected True or False"):
        PCA(2, whiten="no").fit(np.random.default_rng(0).standard_normal((20, 4)))
