"""scikit-learn's PCA tests, as behaviours of ldr's :class:`~ldr.estimators.PCA`.

Follows ``sklearn/decomposition/tests/test_pca.py`` of scikit-learn 1.9.1.  Every test there
about something ldr's PCA offers has a counterpart here, written for ldr on seeded data; the
facts carry over, the code does not.  scikit-learn's ``svd_solver="full"`` (the exact SVD) is
the reference wherever the source compares solvers.  ``tests/test_sklearn_parity.py`` ports
several of the same tests one to one; this file is the map of the source, with stronger
checks where a formula can be pinned (the model's spectrum, SciPy's Gaussian density, SVD).

What each source test becomes here:

* ``test_pca`` → ``test_transform_covariance_and_precision_on_iris`` (n_components 1 to 4:
  fit_transform, the covariance model's spectrum, the data covariance at full rank);
* ``test_pca_solver_equivalence`` and its helper ``_check_fitted_pca_close`` →
  ``test_fit_agrees_with_sklearns_full_svd`` (tall and wide, full-rank and rank-deficient,
  whitened or not, float64 and float32, all components or 10, held-out rows), and, for the
  solver half of the equivalence, ``test_ldrs_other_solvers_reach_the_same_model``;
* ``test_no_empty_slice_warning`` → ``test_no_runtime_warning_when_n_samples_is_the_bound``
  (and RuntimeWarnings are errors in the agreement test);
* ``test_whitening`` → ``test_whitened_scores_have_unit_variance_and_invert``;
* ``test_pca_explained_variance_empirical`` →
  ``test_explained_variance_is_the_variance_of_the_scores``; ``test_variance_correctness``
  → ``test_explained_variance_over_its_ratio_is_the_total_variance``;
* ``test_pca_singular_values`` and ``test_pca_singular_values_consistency`` →
  ``test_singular_values_are_the_norms_of_the_scores``;
* ``test_pca_check_projection`` → ``test_a_new_point_projects_onto_the_leading_axis``;
  ``test_pca_check_projection_list`` → ``test_a_list_of_two_points``;
* ``test_pca_inverse`` → ``test_inverse_transform_restores_all_but_the_dropped_direction``;
* ``test_pca_validation`` and ``test_n_components_none`` →
  ``test_n_components_bounds`` and ``test_n_components_none_keeps_min_n_samples_n_features``;
* ``test_n_components_mle``, ``test_pca_dim``, ``test_infer_dim_2``, ``test_infer_dim_3``,
  ``test_mle_redundant_data``, ``test_mle_simple_case`` →
  ``test_mle_chooses_sklearns_dimension``; ``test_fit_mle_too_few_samples`` →
  ``test_mle_needs_as_many_samples_as_features``; ``test_infer_dim_1``,
  ``test_assess_dimension_bad_rank``, ``test_small_eigenvalues_mle``,
  ``test_assess_dimension_rank_one`` → ``test_minkas_evidence_is_sklearns`` (ldr's public
  ``minka_log_likelihood`` against scikit-learn's private ``_assess_dimension``);
* ``test_infer_dim_by_explained_variance`` and
  ``test_pca_n_components_mostly_explained_variance_ratio`` →
  ``test_a_variance_fraction_keeps_the_fewest_components_exceeding_it``;
* ``test_pca_score``, ``test_pca_score3``, ``test_pca_sanity_noise_variance``,
  ``test_pca_score_consistency_solvers`` → ``test_score_samples_is_the_gaussian_log_density``,
  ``test_score_is_near_the_entropy_and_picks_the_generating_rank``,
  ``test_noise_variance_is_the_mean_discarded_variance``;
* ``test_pca_zero_noise_variance_edge_cases`` →
  ``test_zero_noise_variance_when_every_component_is_kept``;
* ``test_pca_deterministic_output`` → ``test_repeated_fits_are_identical``;
* ``test_pca_dtype_preservation`` (float and int checks) →
  ``test_float32_in_float32_out`` and ``test_integers_are_upcast_to_float64``;
* ``test_feature_names_out`` → ``test_feature_names_out_and_pandas_output``;
* ``test_pca_sparse``, ``test_pca_sparse_fit_transform``, ``test_sparse_pca_solver_error``,
  ``test_sparse_pca_auto_arpack_singular_values_consistency`` →
  ``test_sparse_input_is_refused_and_the_dense_fit_is_sklearns_sparse_fit``: ldr's PCA
  refuses scipy.sparse matrices and arrays (fit and transform) with scikit-learn's
  TypeError "Sparse data was passed for X, but dense data is required. Use '.toarray()'";
  the densified data give scikit-learn's sparse fit (``svd_solver="covariance_eigh"``);
* the array API (``test_pca_array_api_compliance``): what runs in this session, without
  ``array_api_dispatch`` — array-api-strict and PyTorch inputs are accepted and give NumPy
  answers equal to the NumPy fit's (the dispatch half is left out, below) →
  ``test_other_array_namespaces_without_dispatch_give_numpys_fit``.

Beyond the source: degenerate data (``test_a_constant_feature_gets_no_weight``,
``test_constant_data_has_zero_variance_ratios``, ``test_one_sample_is_refused``) and ldr's
frequency weights, ``partial_fit`` and Dask input, each against scikit-learn on the
equivalent dense rows (``test_weights_batches_and_dask_give_sklearns_fit``).

Left out, with the reason:

* ``svd_solver`` ("full", "covariance_eigh", "arpack", "randomized", "auto") and every test
  about one of them (``test_pca_svd_solver_auto``, ``test_n_components_mle_error``,
  arpack's strict bound n_components < min(n_samples, n_features) in
  ``test_pca_validation`` and ``test_n_components_none``, the solver-specific sparse
  errors): ldr's PCA has no SVD to choose — it solves on the Grassmannian from the
  covariance (or reads its eigenvectors at n_components = n_features); its ``solver``
  options are checked to reach the same model instead;
* ``iterated_power``, ``n_oversamples``, ``power_iteration_normalizer``
  (``test_pca_randomized_svd_n_oversamples``) and the ``random_state`` of the randomized
  solver: randomized-SVD settings, with no counterpart in ldr;
* ``copy=False`` (``test_whitening``, ``test_variance_correctness``): ldr has no ``copy``
  parameter and never writes to its input, which is checked;
* ``n_components=0`` (accepted by scikit-learn's full solver; ``test_pca_score3`` scores
  k = 0): ldr needs a subspace, 1 <= n_components; the refusal is checked;
* the lower score with ``whiten=True`` (``test_pca_score``'s last assertion): scikit-learn's
  ``get_covariance`` scales the components by √explained_variance_ when whitened, ldr's
  model of the data does not depend on ``whiten`` (documented), so its score is checked to be
  unchanged instead;
* sparse input to the fit (scikit-learn's arpack/covariance_eigh sparse paths): ldr refuses
  it; the refusal and the densified equivalence are checked;
* the array API under ``array_api_dispatch=True`` (``test_pca_array_api_compliance``,
  ``test_pca_mle_array_api_compliance``, ``check_array_api_get_precision``,
  ``test_array_api_error_and_warnings_on_unsupported_params``): scikit-learn's dispatch
  needs ``SCIPY_ARRAY_API=1`` before SciPy is imported, which a pytest session of the whole
  suite cannot set; ``tests/test_array_api.py`` runs ``tests/array_api_cases.py`` in a fresh
  interpreter for that.  The unsupported-parameter errors concern arpack and LU power
  iterations, which ldr has not;
* ``test_pca_zero_noise_variance_edge_cases``' score on 3 samples of 100 features: the
  model's covariance is singular there; scikit-learn returns a number from an
  ill-conditioned inverse (with a LinAlgWarning), ldr raises a ValueError saying so, which is
  checked;
* the ``global_random_seed`` and ``global_dtype`` fixtures: fixed seeds and an explicit
  float32/float64 parametrization instead.
"""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from numpy.testing import assert_allclose, assert_array_equal
from scipy.stats import multivariate_normal
from sklearn.datasets import (
    load_digits,
    load_iris,
    load_wine,
    make_classification,
    make_low_rank_matrix,
)
from sklearn.decomposition import PCA as SkPCA
from sklearn.decomposition._pca import _assess_dimension

from ldr.estimators import PCA
from ldr.estimators.gaussian import minka_log_likelihood

IRIS = load_iris().data
#: two points in three features, and three in two: min(n_samples, n_features) = 2 either way
TINY = np.array([[0.0, 1.0, 0.0], [1.0, 0.0, 0.0]])


def _rng(seed):
    return np.random.default_rng(seed)


def _eigvals(X):
    """The sample covariance's eigenvalues (divided by n − 1), largest first."""
    return np.linalg.eigvalsh(np.cov(X, rowvar=False))[::-1]


# --- test_pca --------------------------------------------------------------------------------
@pytest.mark.parametrize("n_components", [1, 2, 3, 4])
def test_transform_covariance_and_precision_on_iris(n_components):
    ours, sk = PCA(n_components).fit(IRIS), SkPCA(n_components).fit(IRIS)
    Z = ours.transform(IRIS)
    assert Z.shape == (150, n_components)
    assert_allclose(PCA(n_components).fit_transform(IRIS), Z, rtol=1e-12, atol=1e-12)
    assert_allclose(Z, sk.transform(IRIS), rtol=1e-10, atol=1e-10)  # sign rule included
    cov, precision = ours.get_covariance(), ours.get_precision()
    assert_allclose(cov @ precision, np.eye(4), atol=1e-12)
    assert_allclose(cov, sk.get_covariance(), rtol=1e-10, atol=1e-13)
    assert_allclose(precision, sk.get_precision(), rtol=1e-8)
    # the model: the kept variances along the components, the noise variance on the others
    lam = _eigvals(IRIS)
    expected = lam.copy()
    expected[n_components:] = lam[n_components:].mean() if n_components < 4 else 0.0
    assert_allclose(np.linalg.eigvalsh(cov)[::-1], expected, rtol=1e-10)
    assert_allclose(cov @ ours.components_.T, ours.components_.T * lam[:n_components],
                    rtol=1e-10, atol=1e-12)
    if n_components == 4:  # nothing discarded: the model is the data's covariance
        assert_allclose(cov, np.cov(IRIS, rowvar=False), rtol=1e-12, atol=1e-14)
        assert_allclose(precision, np.linalg.inv(np.cov(IRIS, rowvar=False)), rtol=1e-9)


# --- test_pca_solver_equivalence, _check_fitted_pca_close -------------------------------------
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("n_components", [None, 10])
@pytest.mark.parametrize("whiten", [False, True])
@pytest.mark.parametrize("rank_deficient", [False, True])
@pytest.mark.parametrize("shape", [(100, 30), (30, 100)], ids=["tall", "wide"])
def test_fit_agrees_with_sklearns_full_svd(shape, rank_deficient, whiten, n_components, dtype):
    n, d = shape
    if rank_deficient:
        rng = _rng(0)
        rank = min(n, d) // 2
        X = rng.standard_normal((n + 10, rank)) @ rng.standard_normal((rank, d))
    else:  # a tail of strength 0.5: full rank, decaying spectrum
        X = make_low_rank_matrix(n + 10, d, tail_strength=0.5, random_state=0)
        rank = min(n, d)
    X = X.astype(dtype)
    X_train, X_test = X[:n], X[n:]
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        ours = PCA(n_components, whiten=whiten).fit(X_train)
        Z_train = ours.transform(X_train)
    sk = SkPCA(n_components, whiten=whiten, svd_solver="full").fit(X_train)
    # tolerances relative to each quantity's scale: float64 rounding, or float32's amplified
    # by the gaps of the spectrum (measured at most 1.4e-6 on the variances, 1.5e-5 on the
    # components, 9e-6 of the scale on the scores)
    rtol, atol, threshold = (1e-9, 1e-11, 1e-12) if dtype == np.float64 else (1e-4, 1e-4, 1e-5)
    scale = float(sk.explained_variance_[0])
    z_scale = float(np.abs(sk.transform(X_train)).max())
    x_scale = float(np.abs(X).max())

    assert ours.n_components_ == sk.n_components_ and ours.n_samples_ == sk.n_samples_
    assert ours.n_features_in_ == sk.n_features_in_ == d
    for name in ("components_", "explained_variance_", "explained_variance_ratio_",
                 "singular_values_", "mean_"):
        assert getattr(ours, name).dtype == dtype, name
    assert np.all(ours.explained_variance_ >= 0)
    assert_allclose(ours.explained_variance_, sk.explained_variance_, rtol=rtol,
                    atol=atol * scale)
    assert_allclose(ours.explained_variance_ratio_, sk.explained_variance_ratio_, rtol=rtol,
                    atol=atol)
    assert_allclose(ours.singular_values_, sk.singular_values_, rtol=rtol,
                    atol=atol * np.sqrt(scale * n))
    assert_allclose(ours.mean_, sk.mean_, rtol=rtol, atol=atol * x_scale)
    assert ours.noise_variance_ == pytest.approx(sk.noise_variance_, rel=rtol, abs=atol * scale)

    # the components of a nonzero variance (beyond the rank they are any basis of a null space)
    stable = sk.explained_variance_ > threshold * scale
    assert stable.sum() > 1
    assert_allclose(ours.components_[stable], sk.components_[stable], rtol=rtol, atol=atol)
    assert_allclose(Z_train[:, stable], sk.transform(X_train)[:, stable], rtol=rtol,
                    atol=atol * z_scale)
    Z_test = ours.transform(X_test)
    assert Z_test.dtype == dtype
    assert_allclose(Z_test[:, stable], sk.transform(X_test)[:, stable], rtol=rtol,
                    atol=atol * z_scale)

    back = ours.inverse_transform(Z_test)
    assert back.dtype == dtype and np.isfinite(back).all()
    sk_back = sk.inverse_transform(sk.transform(X_test))
    r = ours.n_components_
    if r == d:  # an invertible map: the rows come back
        assert_allclose(back, X_test, rtol=rtol, atol=atol * x_scale)
    elif r < rank:  # the same low-rank approximation
        assert_allclose(back, sk_back, rtol=rtol, atol=atol * x_scale)
    else:  # wide, more components than the rank: the same fixed point of transform
        assert_allclose(ours.transform(back)[:, stable], sk.transform(sk_back)[:, stable],
                        rtol=rtol, atol=atol * z_scale)


@pytest.mark.parametrize("solver", ["trust-region", "ism", "lbfgs", "gradient",
                                    "conjugate-gradient"])
def test_ldrs_other_solvers_reach_the_same_model(solver):
    X, _ = make_classification(200, 12, n_informative=6, random_state=0)
    sk = SkPCA(3).fit(X)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # converged: no ConvergenceWarning
        ours = PCA(3, solver=solver, start="random").fit(X)
    assert ours.n_iter_ > 0  # a random start: the solver did the work
    # at the default gradient tolerance the first-order solvers' subspace is within a few
    # 1e-6 (measured 3.4e-6 for gradient descent); the variances, quadratic in that error,
    # agree to 1e-10
    assert_allclose(ours.components_, sk.components_, atol=1e-5)
    assert_allclose(ours.explained_variance_, sk.explained_variance_, rtol=1e-10)
    assert ours.noise_variance_ == pytest.approx(sk.noise_variance_, rel=1e-10)
    assert ours.score(X) == pytest.approx(sk.score(X), rel=1e-11)


# --- test_no_empty_slice_warning ---------------------------------------------------------------
def test_no_runtime_warning_when_n_samples_is_the_bound():
    X = _rng(1).uniform(-1, 1, size=(10, 12))
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        ours = PCA(10).fit(X)
    assert ours.noise_variance_ == 0.0  # min(n_samples, n_features) = 10: none discarded
    assert_allclose(ours.explained_variance_[:9], _eigvals(X)[:9], rtol=1e-10)
    assert ours.explained_variance_[9] < 1e-12  # 10 centred rows span 9 dimensions


# --- test_whitening --------------------------------------------------------------------------
def test_whitened_scores_have_unit_variance_and_invert():
    rng = _rng(2)
    n, d, r, rank = 120, 60, 20, 40
    X = rng.standard_normal((n, rank)) @ (np.diag(np.linspace(8.0, 1.0, rank))
                                          @ rng.standard_normal((rank, d)))
    X[:, :30] *= 3  # feature variances far apart
    original = X.copy()
    white = PCA(r, whiten=True)
    Zw = white.fit_transform(X)
    assert_array_equal(X, original)  # the input is not written to (scikit-learn's copy=True)
    plain = PCA(r).fit(X)
    Z = plain.transform(X)
    assert Zw.shape == (n, r)
    assert_allclose(Zw, white.transform(X), rtol=1e-12, atol=1e-12)
    assert_allclose(np.cov(Zw, rowvar=False), np.eye(r), atol=1e-10)  # unit, uncorrelated
    assert_allclose(Zw.mean(axis=0), 0.0, atol=1e-12)
    assert_allclose(Zw * np.sqrt(plain.explained_variance_), Z, rtol=1e-10, atol=1e-10)
    # the components stay orthonormal (whitening scales the scores, not components_)
    assert_allclose(white.components_, plain.components_, atol=1e-12)
    assert_allclose(white.components_ @ white.components_.T, np.eye(r), atol=1e-12)
    # without whitening the scores' variances are the explained variances, far apart
    assert_allclose(Z.var(axis=0, ddof=1), plain.explained_variance_, rtol=1e-10)
    assert Z.std(axis=0, ddof=1).std() > 10
    # the inverse multiplies back: the same projection onto the span as without whitening
    assert_allclose(white.inverse_transform(Zw), plain.inverse_transform(Z), atol=1e-9)
    assert_allclose(Zw, SkPCA(r, whiten=True).fit(X).transform(X), atol=1e-9)


# --- test_pca_explained_variance_empirical, test_variance_correctness ---------------------------
@pytest.mark.parametrize("X", [
    _rng(3).standard_normal((100, 80)),
    make_classification(100, 80, n_informative=78, random_state=0)[0],
    _rng(3).standard_normal((10, 100)),
], ids=["random-tall", "correlated-tall", "random-wide"])
def test_explained_variance_is_the_variance_of_the_scores(X):
    pca = PCA(2)
    Z = pca.fit_transform(X)
    assert_allclose(pca.explained_variance_, Z.var(axis=0, ddof=1), rtol=1e-10)
    lam = _eigvals(X)
    assert_allclose(pca.explained_variance_, lam[:2], rtol=1e-10)  # scikit-learn: 5e-3
    assert_allclose(pca.explained_variance_ratio_, lam[:2] / lam.sum(), rtol=1e-10)


def test_explained_variance_over_its_ratio_is_the_total_variance():
    X = _rng(4).standard_normal((400, 120))
    pca = PCA().fit(X)
    assert_allclose(pca.explained_variance_ / pca.explained_variance_ratio_,
                    X.var(axis=0, ddof=1).sum(), rtol=1e-12)
    assert pca.explained_variance_ratio_.sum() == pytest.approx(1.0, rel=1e-12)


# --- test_pca_singular_values, test_pca_singular_values_consistency ----------------------------
def test_singular_values_are_the_norms_of_the_scores():
    rng = _rng(5)
    X = rng.standard_normal((100, 80))
    pca = PCA(2)
    Z = pca.fit_transform(X)
    assert_allclose(pca.singular_values_, np.linalg.norm(Z, axis=0), rtol=1e-12)
    assert_allclose(np.sum(pca.singular_values_**2), np.linalg.norm(Z) ** 2, rtol=1e-12)
    svd = np.linalg.svd(X - X.mean(axis=0), compute_uv=False)
    assert_allclose(pca.singular_values_, svd[:2], rtol=1e-10)
    assert_allclose(pca.singular_values_, SkPCA(2).fit(X).singular_values_, rtol=1e-10)
    # prescribed singular values come back (wide data: 100 × 110)
    X = rng.standard_normal((100, 110))
    pca = PCA(3)
    Z = pca.fit_transform(X)
    Z = Z / np.linalg.norm(Z, axis=0) * [3.142, 2.718, 1.0]
    pca.fit(Z @ pca.components_)
    assert_allclose(pca.singular_values_, [3.142, 2.718, 1.0], rtol=1e-10)


# --- test_pca_check_projection, test_pca_check_projection_list ---------------------------------
def test_a_new_point_projects_onto_the_leading_axis():
    rng = _rng(6)
    X = rng.standard_normal((100, 3)) * 0.1
    X[:10] += [3, 4, 5]
    Xt = 0.1 * rng.standard_normal((1, 3)) + [3, 4, 5]
    pca = PCA(2).fit(X)
    Yt = pca.transform(Xt)
    assert_allclose(Yt, (Xt - X.mean(axis=0)) @ pca.components_.T, rtol=1e-12)
    assert abs(Yt[0, 0]) / np.linalg.norm(Yt) == pytest.approx(1.0, rel=5e-3)
    # the leading axis is the offset's direction
    assert abs(pca.components_[0] @ np.array([3, 4, 5])) / np.sqrt(50) > 0.999


def test_a_list_of_two_points():
    Z = PCA(1).fit_transform([[1.0, 0.0], [0.0, 1.0]])
    assert Z.shape == (2, 1)
    # the axis is (1, −1)/√2 and the points sit at ±1/√2 on it: std 0.7071
    assert_allclose(np.sort(Z.ravel()), [-np.sqrt(0.5), np.sqrt(0.5)], rtol=1e-12)


# --- test_pca_inverse -------------------------------------------------------------------------
@pytest.mark.parametrize("whiten", [False, True])
def test_inverse_transform_restores_all_but_the_dropped_direction(whiten):
    rng = _rng(7)
    X = rng.standard_normal((50, 3))
    X[:, 1] *= 1e-5  # a small middle direction
    X += [5, 4, 3]
    pca = PCA(2, whiten=whiten).fit(X)
    back = pca.inverse_transform(pca.transform(X))
    assert_allclose(back, X, atol=1e-4)  # the source's rtol=5e-6 holds for its seed only
    # the residual is the data's part along the dropped axis: row by row the score on it,
    # in all the third singular value, and no part along the kept components
    full = PCA().fit(X)
    residual = X - back
    dropped = (X - X.mean(axis=0)) @ full.components_[2]
    assert_allclose(np.linalg.norm(residual, axis=1), np.abs(dropped), rtol=1e-7)
    assert_allclose(np.linalg.norm(residual), full.singular_values_[2], rtol=1e-8)
    assert_allclose(residual @ pca.components_.T, 0.0, atol=1e-12)
    full = PCA(whiten=whiten).fit(X)
    assert_allclose(full.inverse_transform(full.transform(X)), X, rtol=1e-12)


# --- test_pca_validation, test_n_components_none ------------------------------------------------
@pytest.mark.parametrize("data", [TINY, TINY.T], ids=["2x3", "3x2"])
def test_n_components_bounds(data):
    bound = r"1 <= n_components <= min\(n_samples, n_features\) = 2"
    ours, sk = PCA(2).fit(data), SkPCA(2).fit(data)  # the bound itself is accepted
    assert ours.n_components_ == 2
    assert_allclose(ours.explained_variance_, sk.explained_variance_, atol=1e-14)
    assert_allclose(ours.singular_values_, sk.singular_values_, atol=1e-14)
    for bad in (3, 0, -1, True):  # scikit-learn's full solver accepts 0, not 3
        with pytest.raises(ValueError, match=rf"n_components: .*{bound}.*got {bad}"):
            PCA(bad).fit(data)
    with pytest.raises(ValueError, match="n_components"):
        SkPCA(3).fit(data)
    for bad in (0.0, 1.0, 1.5, 2.0):  # a float is a fraction of variance, as in scikit-learn
        with pytest.raises(ValueError, match=r"a float must lie in \(0, 1\)"):
            PCA(bad).fit(data)
    with pytest.raises(ValueError, match="the only string accepted is 'mle'"):
        PCA("full").fit(data)


@pytest.mark.parametrize("data", [IRIS, IRIS.T], ids=["iris", "iris.T"])
def test_n_components_none_keeps_min_n_samples_n_features(data):
    ours, sk = PCA().fit(data), SkPCA().fit(data)
    assert ours.n_components_ == sk.n_components_ == min(data.shape)
    k = min(data.shape) - (data.shape[0] <= data.shape[1])  # centred wide data lose one
    assert_allclose(ours.explained_variance_[:k], sk.explained_variance_[:k], rtol=1e-10)
    assert ours.noise_variance_ == 0.0


# --- "mle": test_n_components_mle, test_pca_dim, test_infer_dim_*, test_mle_* -----------------
def _mle_data(name):
    rng = np.random.RandomState(0)  # the source's generators, so its expected ranks hold
    if name == "white-noise":
        return rng.randn(600, 10), 1
    if name in ("one-offset-cluster", "two-offset-clusters", "three-offset-clusters"):
        n = 100 if name != "two-offset-clusters" else 1000
        X = rng.randn(n, 5) * 0.1
        X[:10] += [3, 4, 5, 1, 2]
        if name != "one-offset-cluster":
            X[10:20] += [6, 0, 7, 2, -1]
        if name == "three-offset-clusters":
            X[30:40] += 2 * np.array([-1, 1, -1, 1, -1])
        return X, {"one-offset-cluster": 1, "two-offset-clusters": (1, None),
                   "three-offset-clusters": (2, None)}[name]
    if name == "redundant":
        X, _ = make_classification(n_features=20, n_informative=1, n_repeated=18,
                                   n_redundant=1, n_clusters_per_class=1, random_state=42)
        return X, 1
    if name == "one-feature-the-mean":
        X = rng.randn(1000, 10)
        X[:, -1] = np.mean(X[:, :-1], axis=-1)
        return X, 9
    return load_digits().data, None  # constant pixels: zero eigenvalues in the spectrum


@pytest.mark.parametrize("name", ["white-noise", "one-offset-cluster", "two-offset-clusters",
                                  "three-offset-clusters", "redundant", "one-feature-the-mean",
                                  "digits"])
def test_mle_chooses_sklearns_dimension(name):
    X, expected = _mle_data(name)
    ours, sk = PCA("mle").fit(X), SkPCA("mle").fit(X)
    assert ours.n_components == "mle"
    assert ours.n_components_ == sk.n_components_
    if isinstance(expected, int):
        assert ours.n_components_ == expected
    elif expected is not None:
        assert ours.n_components_ > expected[0]  # the source's lower bound
    # it is the argmax of Minka's evidence over ranks 1 … d − 1 of the full spectrum
    spectrum = PCA().fit(X).explained_variance_
    evidence = [minka_log_likelihood(spectrum, k, X.shape[0]) for k in range(1, X.shape[1])]
    assert ours.n_components_ == 1 + int(np.argmax(evidence))
    assert_allclose(ours.explained_variance_, sk.explained_variance_, rtol=1e-9,
                    atol=1e-12 * sk.explained_variance_[0])


def test_mle_needs_as_many_samples_as_features():
    X, _ = make_classification(n_samples=20, n_features=21, random_state=42)
    with pytest.raises(ValueError, match="'mle' is only supported if n_samples >= n_features"):
        PCA("mle").fit(X)
    # at n_samples == n_features it runs (the bound is inclusive, as scikit-learn's)
    assert PCA("mle").fit(X[:, :20]).n_components_ == SkPCA("mle").fit(X[:, :20]).n_components_


def test_minkas_evidence_is_sklearns():
    # test_infer_dim_1's data: one strong direction in five features, n = 1000
    n, p = 1000, 5
    rng = np.random.RandomState(0)
    X = (rng.randn(n, p) * 0.1 + rng.randn(n, 1) * np.array([3, 4, 5, 1, 2])
         + np.array([1, 0, 7, 4, 6]))
    spectrum = PCA(p).fit(X).explained_variance_
    ll = np.array([minka_log_likelihood(spectrum, k, n) for k in range(1, p)])
    assert ll[1] > ll.max() - 0.01 * n  # the source's assertion
    decaying = np.sort(_rng(8).random(8))[::-1] * [10, 5, 3, 1, 1, 1, 1, 1]
    for spec, n_samples in ((spectrum, n), (decaying, 50), (decaying, 8)):
        for k in range(1, len(spec)):
            assert minka_log_likelihood(spec, k, n_samples) == pytest.approx(
                _assess_dimension(spec, k, n_samples), rel=1e-12)
    # ranks outside [1, d − 1] are refused; ranks beyond tiny eigenvalues have no evidence
    tiny = np.array([1, 1e-30, 1e-30, 1e-30])
    for rank in (0, 4):
        with pytest.raises(ValueError, match=r"\[1, n_features - 1\]"):
            minka_log_likelihood(tiny, rank, 10)
    assert np.isfinite(minka_log_likelihood(tiny, 1, 10))
    assert [minka_log_likelihood(tiny, k, 10) for k in (2, 3)] == [-np.inf, -np.inf]
    ones = np.linalg.svd(np.ones((9, 6)), compute_uv=False)  # a rank-one matrix
    assert np.isfinite(minka_log_likelihood(ones, 1, 9))
    assert all(minka_log_likelihood(ones, k, 9) == -np.inf for k in range(2, 6))


# --- test_infer_dim_by_explained_variance, ..._mostly_explained_variance_ratio -----------------
@pytest.mark.parametrize("X", [IRIS, load_wine().data, np.random.RandomState(0).rand(5, 20),
                               _rng(9).standard_normal((60, 8)) * np.arange(1, 9)],
                         ids=["iris", "wine", "wide-5x20", "tall-60x8"])
def test_a_variance_fraction_keeps_the_fewest_components_exceeding_it(X):
    cum = np.cumsum(PCA().fit(X).explained_variance_ratio_)
    for q in np.linspace(0.01, 0.99, 15):
        if np.min(np.abs(cum - q)) < 1e-9:
            continue  # a tie is decided by rounding
        ours = PCA(q).fit(X)
        k = ours.n_components_
        assert ours.n_components == q
        assert k == SkPCA(q).fit(X).n_components_
        assert cum[k - 1] > q and (k == 1 or cum[k - 2] <= q)  # the fewest exceeding q
        assert_allclose(ours.explained_variance_ratio_.sum(), cum[k - 1], rtol=1e-10)
    # the source's fixed cases, and a fraction equal to a cumulative ratio: the next one
    assert PCA(0.95).fit(IRIS).n_components_ == 2
    assert PCA(0.01).fit(IRIS).n_components_ == 1
    assert PCA(0.5).fit(np.random.RandomState(0).rand(5, 20)).n_components_ == 2
    iris_cum = np.cumsum(PCA().fit(IRIS).explained_variance_ratio_)
    assert PCA(iris_cum[-2]).fit(IRIS).n_components_ == 4
    assert PCA(iris_cum[0]).fit(IRIS).n_components_ == 2


# --- test_pca_score, test_pca_score3, test_pca_sanity_noise_variance ---------------------------
def _factor_data(seed, n=300, d=8):
    rng = _rng(seed)
    W = rng.standard_normal((d, 3)) * [4.0, 2.0, 1.0]
    return rng.standard_normal((n, 3)) @ W.T + 0.5 * rng.standard_normal((n, d)) + 2.0


@pytest.mark.parametrize("n_components", [1, 3, 7, 8])
def test_score_samples_is_the_gaussian_log_density(n_components):
    X, X_new = _factor_data(10), _factor_data(11)
    pca = PCA(n_components).fit(X)
    density = multivariate_normal(pca.mean_, pca.get_covariance())
    assert_allclose(pca.score_samples(X_new), density.logpdf(X_new), rtol=1e-10)
    assert pca.score(X_new) == pytest.approx(density.logpdf(X_new).mean(), rel=1e-10)
    assert pca.score(X_new) == pytest.approx(SkPCA(n_components).fit(X).score(X_new),
                                             rel=1e-10)
    if n_components == 8:  # full rank: the Gaussian of the sample mean and covariance
        full = multivariate_normal(X.mean(axis=0), np.cov(X, rowvar=False))
        assert_allclose(pca.score_samples(X_new), full.logpdf(X_new), rtol=1e-10)


def test_score_is_near_the_entropy_and_picks_the_generating_rank():
    n, p = 1000, 3
    rng = _rng(12)
    X = rng.standard_normal((n, p)) * 0.1 + [3, 4, 5]
    pca = PCA(2).fit(X)
    entropy = -0.5 * np.log(2 * np.pi * np.e * 0.1**2) * p  # minus N(0, 0.01 I)'s entropy
    assert pca.score(X) / entropy == pytest.approx(1.0, rel=5e-2)
    assert pca.score(X) > pca.score(rng.standard_normal((n, p)) * 0.2 + [3, 4, 5])
    # ldr's model, so its likelihood, does not depend on whiten (scikit-learn's does)
    assert PCA(2, whiten=True).fit(X).score(X) == pytest.approx(pca.score(X), rel=1e-12)
    # one strong direction: the held-out score prefers rank 1 to 2 (k = 0 is not a subspace)
    n = 200
    Xl = (rng.standard_normal((n, p)) + rng.standard_normal((n, 1)) * [3, 4, 5] + [1, 0, 7])
    Xt = (rng.standard_normal((n, p)) + rng.standard_normal((n, 1)) * [3, 4, 5] + [1, 0, 7])
    ll = [PCA(k).fit(Xl).score(Xt) for k in (1, 2)]
    assert np.argmax(ll) == 0
    assert_allclose(ll, [SkPCA(k).fit(Xl).score(Xt) for k in (1, 2)], rtol=1e-10)


@pytest.mark.parametrize("shape", [(1797, 64), (20, 50)], ids=["digits", "wide-20x50"])
def test_noise_variance_is_the_mean_discarded_variance(shape):
    if shape[0] == 1797:
        X, r = load_digits().data, 30
    else:
        X, r = _rng(13).standard_normal(shape) * np.linspace(3, 1, shape[1]), 5
    pca, sk = PCA(r).fit(X), SkPCA(r).fit(X)
    lam = _eigvals(X)
    kept = min(X.shape)  # the mean runs over min(n_samples, n_features) − r eigenvalues
    lam[kept:] = 0.0
    assert pca.noise_variance_ == pytest.approx(lam[r:kept].mean(), rel=1e-10)
    assert pca.noise_variance_ == pytest.approx(sk.noise_variance_, rel=1e-10)
    assert np.all(pca.explained_variance_ - pca.noise_variance_ >= 0)
    assert pca.score(X) == pytest.approx(sk.score(X), rel=1e-10)  # scikit-learn: 5e-6


def test_zero_noise_variance_when_every_component_is_kept():
    n, p = 100, 3
    X = _rng(14).standard_normal((n, p)) * 0.1 + [3, 4, 5]
    pca = PCA(p).fit(X)
    assert pca.noise_variance_ == 0.0
    full = multivariate_normal(X.mean(axis=0), np.cov(X, rowvar=False))
    assert pca.score(X) == pytest.approx(full.logpdf(X).mean(), rel=1e-12)
    wide = PCA(p).fit(X.T)  # 3 samples of 100 features: every component kept
    assert wide.noise_variance_ == 0.0
    assert_allclose(wide.explained_variance_[:2], _eigvals(X.T)[:2], rtol=1e-10)
    with pytest.raises(ValueError, match="covariance is singular"):
        wide.score(X.T)  # a rank-2 covariance in 100 dimensions has no density


# --- test_pca_deterministic_output --------------------------------------------------------------
def test_repeated_fits_are_identical():
    X = _rng(15).random((10, 10))
    shared = np.random.RandomState(0)  # one generator across the fits, as in the source
    rows = np.array([PCA(2, random_state=shared).fit_transform(X)[0] for _ in range(20)])
    assert_array_equal(rows, np.tile(rows[0], (20, 1)))
    assert_allclose(rows[0], SkPCA(2).fit_transform(X)[0], rtol=1e-10)


# --- test_pca_dtype_preservation ------------------------------------------------------------------
@pytest.mark.parametrize("seed", [0, 1])
def test_float32_in_float32_out(seed):
    X = np.random.RandomState(seed).rand(1000, 4)
    X32 = X.astype(np.float32)
    p64, p32 = PCA(3).fit(X), PCA(3).fit(X32)
    assert p64.components_.dtype == np.float64
    for name in ("components_", "explained_variance_", "explained_variance_ratio_",
                 "singular_values_", "mean_"):
        assert getattr(p32, name).dtype == np.float32, name
    Z32 = p32.transform(X32)
    outputs = {"transform": Z32, "inverse_transform": p32.inverse_transform(Z32),
               "get_covariance": p32.get_covariance(), "get_precision": p32.get_precision()}
    for name, value in outputs.items():
        assert value.dtype == np.float32, name
    assert p64.transform(X).dtype == np.float64
    # the float32 data's rounding moves the answer by about float32's precision
    assert_allclose(p32.components_, p64.components_, rtol=1e-4, atol=1e-4)  # source: 1e-3
    assert_allclose(p32.explained_variance_, p64.explained_variance_, rtol=1e-5)
    assert_allclose(Z32, p64.transform(X), atol=1e-5)
    assert_allclose(outputs["get_precision"], p64.get_precision(), rtol=1e-4)


def test_integers_are_upcast_to_float64():
    X64 = np.random.RandomState(0).randint(0, 1000, (1000, 4)).astype(np.int64)
    X32 = X64.astype(np.int32)
    p64, p32 = PCA(3).fit(X64), PCA(3).fit(X32)
    for pca, X in ((p64, X64), (p32, X32)):
        assert pca.components_.dtype == np.float64
        assert pca.transform(X).dtype == np.float64
    assert_allclose(p64.components_, p32.components_, rtol=1e-12)  # the same float64 data
    assert_allclose(p64.components_, PCA(3).fit(X64.astype(float)).components_, rtol=1e-12)
    assert_allclose(p64.components_, SkPCA(3).fit(X64).components_, rtol=1e-8, atol=1e-12)


# --- test_feature_names_out ---------------------------------------------------------------------
def test_feature_names_out_and_pandas_output():
    pd = pytest.importorskip("pandas")
    pca = PCA(2).fit(IRIS)
    assert_array_equal(pca.get_feature_names_out(), ["pca0", "pca1"])
    frame = pd.DataFrame(IRIS, columns=load_iris().feature_names)
    out = PCA(2).set_output(transform="pandas").fit(frame).transform(frame)
    assert list(out.columns) == ["pca0", "pca1"]
    assert_allclose(out.to_numpy(), pca.transform(IRIS), rtol=1e-12)


# --- sparse input (test_pca_sparse and its neighbours) --------------------------------------------
@pytest.mark.parametrize("container", [sp.csr_matrix, sp.csc_matrix, sp.csr_array, sp.csc_array])
def test_sparse_input_is_refused_and_the_dense_fit_is_sklearns_sparse_fit(container):
    rng = _rng(16)
    X = container(sp.random(300, 40, density=0.1, random_state=16)
                  .multiply(rng.random(40) * 10).tocsr())
    X_new = container(sp.random(50, 40, density=0.1, random_state=17))
    refusal = r"Sparse data was passed for X, but dense data is required.*toarray"
    with pytest.raises(TypeError, match=refusal):
        PCA(5).fit(X)
    ours = PCA(5).fit(X.toarray())
    with pytest.raises(TypeError, match=refusal):
        ours.transform(X_new)
    sk = SkPCA(5, svd_solver="covariance_eigh").fit(X)  # scikit-learn's sparse fit
    assert_allclose(ours.components_, sk.components_, rtol=1e-9, atol=1e-12)
    assert_allclose(ours.explained_variance_, sk.explained_variance_, rtol=1e-9)
    assert_allclose(ours.singular_values_, sk.singular_values_, rtol=1e-9)
    assert ours.noise_variance_ == pytest.approx(sk.noise_variance_, rel=1e-9)
    assert_allclose(ours.transform(X_new.toarray()), sk.transform(X_new), atol=1e-10)


# --- the array API without dispatch (the half of check_array_api_input that runs here) ----------
@pytest.mark.parametrize("name", ["array_api_strict", "torch"])
def test_other_array_namespaces_without_dispatch_give_numpys_fit(name):
    xp = pytest.importorskip(name)
    X = _factor_data(18)
    Xa = xp.asarray(X) if name == "array_api_strict" else xp.as_tensor(X)
    ref, ours = PCA(3).fit(X), PCA(3).fit(Xa)
    for attr in ("components_", "explained_variance_", "singular_values_", "mean_"):
        value = getattr(ours, attr)
        assert isinstance(value, np.ndarray), attr
        assert_allclose(value, getattr(ref, attr), rtol=1e-12, atol=1e-14)
    Z = ours.transform(Xa)
    assert isinstance(Z, np.ndarray)
    assert_allclose(Z, ref.transform(X), rtol=1e-12, atol=1e-12)
    assert_allclose(ours.get_precision(), ref.get_precision(), rtol=1e-12)
    assert_allclose(ours.score_samples(Xa), ref.score_samples(X), rtol=1e-12)


# --- degenerate data (beyond the source) -------------------------------------------------------
def test_a_constant_feature_gets_no_weight():
    X = _rng(19).standard_normal((40, 4)) * [3.0, 1.0, 2.0, 0.5]
    X[:, 1] = 7.0
    ours, sk = PCA(3).fit(X), SkPCA(3).fit(X)
    assert_allclose(ours.components_[:, 1], 0.0, atol=1e-12)
    assert_allclose(ours.mean_[1], 7.0, rtol=1e-15)
    assert_allclose(ours.explained_variance_, sk.explained_variance_, rtol=1e-10)
    assert ours.explained_variance_ratio_.sum() == pytest.approx(1.0, rel=1e-12)
    assert ours.noise_variance_ == pytest.approx(0.0, abs=1e-14)  # the one discarded: zero
    white = PCA(3, whiten=True).fit(X)
    Zw = white.transform(X)
    assert_allclose(Zw.std(axis=0, ddof=1), 1.0, rtol=1e-10)
    assert_allclose(white.inverse_transform(Zw), X, rtol=1e-12, atol=1e-12)


def test_constant_data_has_zero_variance_ratios():
    X = np.full((10, 3), 2.5)
    for whiten in (False, True):
        pca = PCA(2, whiten=whiten).fit(X)
        assert_array_equal(pca.explained_variance_, 0.0)
        assert_array_equal(pca.explained_variance_ratio_, 0.0)  # scikit-learn: nan (0/0)
        assert_array_equal(pca.singular_values_, 0.0)
        assert pca.noise_variance_ == 0.0
        assert_array_equal(pca.transform(X), 0.0)
        assert_allclose(pca.inverse_transform(pca.transform(X)), X, rtol=1e-15)


def test_one_sample_is_refused():
    with pytest.raises(ValueError, match=r"1 sample.*minimum of 2"):
        PCA(1).fit(np.ones((1, 3)))  # scikit-learn fits it, to nan variances
    assert PCA(1).fit(np.array([[0.0, 1.0], [2.0, 1.0]])).explained_variance_[0] == 2.0


# --- weights, batches and Dask (beyond the source) ----------------------------------------------
def test_weights_batches_and_dask_give_sklearns_fit():
    X = _factor_data(20, n=120)
    weights = _rng(21).integers(0, 4, 120)
    sk = SkPCA(3).fit(np.repeat(X, weights, axis=0))
    ours = PCA(3).fit(X, sample_weight=weights)  # a weight w counts as w copies of the row
    assert ours.n_samples_ == sk.n_samples_ == weights.sum()
    _close_fits(ours, sk)
    sk = SkPCA(3).fit(X)
    batched = PCA(3)
    for batch in np.array_split(X, 4):
        batched.partial_fit(batch)
    _close_fits(batched, sk)
    da = pytest.importorskip("dask.array")
    _close_fits(PCA(3).fit(da.from_array(X, chunks=(25, 8))), sk)


def _close_fits(ours, sk):
    assert_allclose(ours.components_, sk.components_, rtol=1e-9, atol=1e-12)
    assert_allclose(ours.explained_variance_, sk.explained_variance_, rtol=1e-10)
    assert_allclose(ours.singular_values_, sk.singular_values_, rtol=1e-10)
    assert_allclose(ours.mean_, sk.mean_, rtol=1e-12)
    assert ours.noise_variance_ == pytest.approx(sk.noise_variance_, rel=1e-10)
