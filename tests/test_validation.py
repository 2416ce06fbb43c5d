"""Every bad input raises a ValueError that names the argument, and nothing is modified."""

import numpy as np
import pytest

from ldr.objectives import LDA, PCA


@pytest.fixture
def data():
    rng = np.random.default_rng(0)
    return rng.standard_normal((60, 5)), np.repeat([0, 1, 2], 20)


@pytest.mark.parametrize("bad,match", [
    (np.nan, "NaN"), (np.inf, "infinity"), (-np.inf, "infinity"),
])
def test_non_finite_data(data, bad, match):
    X, y = data
    X = X.copy()
    X[3, 2] = bad
    with pytest.raises(ValueError, match=f"X.*{match}"):
        PCA(X, 2)
    with pytest.raises(ValueError, match=f"X.*{match}"):
        LDA(X, y, 2)


def test_wrong_dimensions(data):
    X, y = data
    with pytest.raises(ValueError, match="X: expected a 2-D array"):
        PCA(X[:, 0], 1)
    with pytest.raises(ValueError, match="X: expected a 2-D array"):
        PCA(X[None], 1)
    with pytest.raises(ValueError, match="X"):
        PCA(X[:1], 1)
    with pytest.raises(ValueError, match="y: expected a 1-D"):
        LDA(X, np.ones((60, 2)), 1)


@pytest.mark.parametrize("r", [5, 6, 0, -1])
def test_rank_out_of_range(data, r):
    X, _ = data
    with pytest.raises(ValueError, match="r: the subspace dimension"):
        PCA(X, r)


@pytest.mark.parametrize("r", [2.0, "2", None, True])
def test_rank_not_an_integer(data, r):
    with pytest.raises(ValueError, match="r: the subspace dimension must be an integer"):
        PCA(data[0], r)


def test_lda_rank_at_least_number_of_classes(data):
    X, y = data
    with pytest.raises(ValueError, match="r: .*n_classes"):
        LDA(X, y, 3)


def test_one_class_and_label_mismatch(data):
    X, y = data
    with pytest.raises(ValueError, match="y: at least two classes"):
        LDA(X, np.zeros(60), 1)
    with pytest.raises(ValueError, match="y: has 59 labels but X has 60"):
        LDA(X, y[:-1], 1)
    with pytest.raises(ValueError, match="y: class labels are required"):
        LDA(X, None, 1)
    y_nan = y.astype(float)
    y_nan[0] = np.nan
    with pytest.raises(ValueError, match="y: labels contain NaN"):
        LDA(X, y_nan, 1)


def test_non_numeric_input(data):
    X, y = data
    with pytest.raises(ValueError, match=r"X: column 0 is not numeric .*: X must be numeric"):
        PCA(np.array([["a", "b"], ["c", "d"], ["e", "f"]]), 1)
    with pytest.raises(ValueError, match="X: complex"):
        PCA(X.astype(complex), 1)
    with pytest.raises(ValueError, match="X"):
        PCA(None, 1)
    # string labels are fine
    obj = LDA(X, np.array(["a", "b", "c"])[y], 2)
    assert list(obj.classes_) == ["a", "b", "c"]


def test_singular_within_class_scatter_says_how_to_regularize(data):
    X, y = data
    X = np.column_stack([X, X[:, 0]])  # a duplicated feature
    with pytest.raises(ValueError, match="singular.*shrinkage > 0"):
        LDA(X, y, 2)
    LDA(X, y, 2, shrinkage=1e-3)
    with pytest.raises(ValueError, match="shrinkage: must be a number in"):
        LDA(X, y, 2, shrinkage=2.0)


def test_inputs_are_not_modified_and_centering_is_per_feature(data):
    X, y = data
    X = X + np.array([100.0, -3.0, 0.0, 7.0, 1e3])  # very different feature means
    X_copy, y_copy = X.copy(), y.copy()
    pca = PCA(X, 2)
    lda = LDA(X, y, 2)
    np.testing.assert_array_equal(X, X_copy)
    np.testing.assert_array_equal(y, y_copy)
    np.testing.assert_allclose(pca.mean_, X.mean(axis=0))
    np.testing.assert_allclose(pca.C, np.cov(X, rowvar=False), rtol=1e-12)
    Z = lda.transform(X, lda.heuristic())
    np.testing.assert_allclose(Z.mean(axis=0), 0, atol=1e-9)
    np.testing.assert_array_equal(X, X_copy)


def test_transform_checks_features(data):
    X, _ = data
    obj = PCA(X, 2)
    with pytest.raises(ValueError, match="X: has 4 features"):
        obj.transform(X[:, :4], obj.heuristic())


def _spectrum_matrix(w, seed=0):
    Q = np.linalg.qr(np.random.default_rng(seed).standard_normal((len(w), len(w))))[0]
    return (Q * w) @ Q.T


@pytest.mark.parametrize("d", [3, 20, 60])
@pytest.mark.parametrize("log_cond", [1, 6, 10, 11, 12, 13, 14, 15, 16, 20])
def test_cholesky_check_agrees_with_the_eigenvalue_rule(d, log_cond):
    """check_nonsingular (Cholesky + condition estimate) raises exactly when the smallest
    eigenvalue is ≤ 100·d·ε times the largest — the rule eigh_nonsingular applies — and
    returns the Cholesky factor otherwise; the thresholds straddle the rule's."""
    from ldr.data.validation import check_nonsingular, eigh_nonsingular

    w = np.logspace(-log_cond, 0, d)
    w[0] = w[0] if log_cond < 20 else 0.0
    S = _spectrum_matrix(w, seed=d + log_cond)
    ev = np.linalg.eigvalsh(0.5 * (S + S.T))
    singular = ev[0] <= 100 * d * np.finfo(float).eps * ev[-1]
    if singular:
        with pytest.raises(ValueError, match=r"^A: the thing is singular \(numerical rank \d+ < "
                                             rf"d = {d}; n_samples = 7\): why\. .*shrinkage > 0"):
            check_nonsingular(S, "A", "thing", "why", 7)
        with pytest.raises(ValueError, match="thing is singular"):
            eigh_nonsingular(S, "A", "thing", "why", 7)
    else:
        L = check_nonsingular(S, "A", "thing", "why", 7)
        np.testing.assert_allclose(L @ L.T, 0.5 * (S + S.T), atol=1e-12 * ev[-1])
        assert np.allclose(L, np.tril(L))
        w2, Q = eigh_nonsingular(S, "A", "thing", "why", 7)
        np.testing.assert_allclose((Q * w2) @ Q.T, S, atol=1e-12 * ev[-1])


def test_cholesky_check_reports_the_rank_and_rejects_indefinite():
    from ldr.data.validation import check_nonsingular

    S = _spectrum_matrix(np.r_[np.zeros(3), np.ones(5)])
    with pytest.raises(ValueError, match=r"numerical rank 5 < d = 8\)"):
        check_nonsingular(S, "X", "scatter", "because")
    with pytest.raises(ValueError, match=r"numerical rank 4 < d = 5"):
        check_nonsingular(_spectrum_matrix(np.r_[-1.0, 1, 2, 3, 4]), "X", "scatter", "because")
    with pytest.raises(ValueError, match=r"numerical rank 0 < d = 2"):
        check_nonsingular(-np.eye(2), "X", "scatter", "because")


def test_span_basis_and_oas_shrinkage():
    """span_basis: None for a non-singular matrix (the Cholesky path), else an orthonormal
    basis of the range, by check_nonsingular's rank rule; oas_shrinkage: scikit-learn's OAS
    coefficient, from the covariance alone."""
    from sklearn.covariance import OAS

    from ldr.data.validation import oas_shrinkage, span_basis

    rng = np.random.default_rng(0)
    X = rng.standard_normal((40, 5))
    C = np.cov(X.T, bias=True)
    assert span_basis(C) is None
    Xs = np.column_stack([X, X[:, 0] - X[:, 3], np.full(40, 2.0)])
    S = np.cov(Xs.T, bias=True)
    U = span_basis(S)
    assert U.shape == (7, 5)
    np.testing.assert_allclose(U.T @ U, np.eye(5), atol=1e-12)
    np.testing.assert_allclose(U @ U.T @ S, S, atol=1e-12)         # the range of S
    for n, p in [(300, 8), (50, 20), (20, 30)]:
        Z = rng.standard_normal((n, p)) @ rng.standard_normal((p, p))
        assert oas_shrinkage(np.cov(Z.T, bias=True), n) == pytest.approx(
            OAS().fit(Z).shrinkage_, rel=1e-10)


def test_identical_rows_are_an_error_naming_X_in_every_span_reduction():
    # soak counterexample: eleven identical rows (a constant first feature) made OrthogonalLDA's
    # span reduction factor a 0×0 scatter (IndexError); the empty span is now named
    import ldr.estimators as est

    X = np.tile([[1000.0, -132.10486329130188, 640.422650443282]], (11, 1))
    y = [0, 0, 0, 0, 0, 0, 0, 1, 0, 1, 1]
    for fit in (lambda: est.OrthogonalLDA(1, shrinkage=None, tol=0.0).fit(X, y),
                lambda: est.WassersteinDA(1).fit(X, y),
                lambda: est.MAF(1).fit(X),
                lambda: est.OrthogonalCCA(1).fit(X, X[:, :2])):
        with pytest.raises(ValueError) as err:
            fit()
        assert err.value.param == "X", err.value
