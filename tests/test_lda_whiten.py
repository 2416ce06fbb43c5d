"""OrthogonalLDA's ``whiten`` (Eq. W of its docstring): the transform's within-class
covariance is the identity, the subspace and classifier do not change, and 3-NN in the
whitened output is scikit-learn's LDA metric."""

import numpy as np
import pytest
from sklearn.datasets import load_breast_cancer
from sklearn.discriminant_analysis import LinearDiscriminantAnalysis as SkLDA
from sklearn.model_selection import StratifiedKFold, cross_val_score
from sklearn.neighbors import KNeighborsClassifier
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from ldr.core.errors import ParameterError
from ldr.data.validation import shrink
from ldr.estimators import OrthogonalLDA


def _scatters(Z, y):
    """Within- and between-class covariances (1/n) of the rows Z."""
    classes, codes = np.unique(y, return_inverse=True)
    means = np.array([Z[codes == k].mean(axis=0) for k in range(len(classes))])
    R, B = Z - means[codes], means[codes] - Z.mean(axis=0)
    return R.T @ R / len(Z), B.T @ B / len(Z)


def test_whitened_transform_has_identity_within_class_covariance(wine):
    X, y = wine
    lda = OrthogonalLDA().fit(X, y)
    Sw, Sb = _scatters(lda.transform(X), y)
    np.testing.assert_allclose(Sw, np.eye(2), atol=1e-10)
    assert abs(Sb[0, 1]) < 1e-10 and Sb[0, 0] > Sb[1, 1] > 0  # diagonal, decreasing
    # components_ stay orthonormal; the whitened output is the projection times whitening_
    np.testing.assert_allclose(lda.components_ @ lda.components_.T, np.eye(2), atol=1e-12)
    plain = OrthogonalLDA(whiten=False).fit(X, y)
    np.testing.assert_allclose(plain.components_, lda.components_, atol=1e-12)
    np.testing.assert_allclose(plain.transform(X), (X - plain.mean_) @ plain.components_.T,
                               atol=1e-12)
    np.testing.assert_allclose(lda.transform(X), plain.transform(X) @ lda.whitening_,
                               atol=1e-12)
    # the classifier and the cost do not depend on whiten
    np.testing.assert_array_equal(lda.predict(X), plain.predict(X))
    np.testing.assert_allclose(lda.coef_, plain.coef_, atol=1e-12)
    assert lda.trace_ratio(X, y) == pytest.approx(plain.trace_ratio(X, y), rel=1e-12)
    assert lda.trace_ratio(X, y) == pytest.approx(lda.ratio_, rel=1e-10)


def test_whitening_uses_the_shrunk_within_class_scatter(wine):
    X, y = wine
    lda = OrthogonalLDA(shrinkage=0.3).fit(X, y)
    Sw_full = _scatters(X, y)[0]
    W, T = lda.components_.T, lda.whitening_
    np.testing.assert_allclose(T.T @ W.T @ shrink(Sw_full, 0.3) @ W @ T, np.eye(2), atol=1e-10)


def test_two_classes_whitened_transform_is_sklearns():
    """r = 1: the trace-ratio optimum is S_w⁻¹(μ₁ − μ₀), and the whitened output is
    scikit-learn's LDA transform up to sign."""
    X, y = load_breast_cancer(return_X_y=True)
    X = StandardScaler().fit_transform(X)
    ours, sk = OrthogonalLDA().fit(X, y).transform(X), SkLDA().fit(X, y).transform(X)
    sign = np.sign(ours[0, 0] * sk[0, 0])
    np.testing.assert_allclose(sign * ours, sk, rtol=1e-7, atol=1e-8)


def test_whitening_recovers_the_knn_metric_that_the_rotation_loses():
    """r = n_features (3 features, 4 classes): the orthonormal projection is a rotation of X,
    where two wide noise directions swamp 3-NN; whitened, the output is scikit-learn's LDA
    transform up to a rotation, so 3-NN gives the same accuracy."""
    rng = np.random.default_rng(0)
    y = np.repeat(np.arange(4), 40)
    X = np.column_stack([y + 0.3 * rng.standard_normal(y.size),
                         3.0 * rng.standard_normal((y.size, 2))])
    cv = StratifiedKFold(5, shuffle=True, random_state=0)

    def accuracy(step):
        pipe = make_pipeline(StandardScaler(), step, KNeighborsClassifier(3))
        return cross_val_score(pipe, X, y, cv=cv).mean()

    white, plain, sk = (accuracy(OrthogonalLDA()), accuracy(OrthogonalLDA(whiten=False)),
                        accuracy(SkLDA()))
    assert white >= plain + 0.05  # measured: 0.906 against 0.800
    assert white == pytest.approx(sk, abs=1e-12)


def test_whiten_must_be_a_bool(wine):
    X, y = wine
    with pytest.raises(ParameterError) as info:
        OrthogonalLDA(whiten="yes").fit(X, y)
    assert info.value.param == "whiten"
