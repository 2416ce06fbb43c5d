"""Issue 23's fixed cost per fit: the shortcuts give the same bits as the paths they skip.

Two shortcuts on the path of every small fit (``ldr.data.validation.check_data`` skipping
scikit-learn's ``check_array`` for a finite float64 ndarray, and
``ldr.data.statistics.class_sums`` adding class rows with ``np.add.at`` instead of a sparse
one-hot product) and two in the latent objectives' oracles (``_cho_inverse`` calling LAPACK's
dpotrf/dpotrs as ``scipy.linalg.cho_solve(cho_factor(A), I)`` does; the cost in NumPy rather
than through autograd's wrappers at plain arrays) must not change any answer: each estimator
is fitted with and without them on real tables and every fitted array compared to the last
bit.
"""

from __future__ import annotations

import autograd.numpy as anp
import numpy as np
import pytest
import scipy.linalg
import scipy.sparse
from sklearn.datasets import load_breast_cancer, load_iris, load_wine
from sklearn.preprocessing import StandardScaler
from sklearn.utils import check_array

import ldr.data.statistics as statistics
import ldr.data.validation as validation
import ldr.objectives.latent as latent
from ldr.data.validation import check_data
from ldr.estimators import PCA, PPCA, FactorAnalysis, OrthogonalLDA


def _spector():
    import statsmodels.datasets.spector as spector

    frame = spector.load_pandas().data
    return frame.drop(columns=["GRADE"]).to_numpy(float), frame["GRADE"].to_numpy()


def _ccard():
    import statsmodels.datasets.ccard as ccard

    frame = ccard.load_pandas().data
    return frame.drop(columns=["OWNRENT"]).to_numpy(float), frame["OWNRENT"].to_numpy()


TABLES = {
    "iris": lambda: load_iris(return_X_y=True),
    "wine": lambda: load_wine(return_X_y=True),
    "breast_cancer": lambda: load_breast_cancer(return_X_y=True),  # 569×30: the sparse sums
    "spector": _spector,
    "ccard": _ccard,
}
ESTIMATORS = {"PCA": PCA, "PPCA": PPCA, "OrthogonalLDA": OrthogonalLDA,
              "FactorAnalysis": FactorAnalysis}


def _old_cost_wl_raw(self, W, ell):  # the latent cost before the NumPy shortcut
    d, r = W.shape
    psi = anp.exp(ell)
    L = W / psi[:, None]
    Kinv = anp.eye(r) + anp.dot(W.T, L)
    _, logdet_k = anp.linalg.slogdet(Kinv)
    trace = anp.sum(self._diag_S / psi) - anp.trace(
        anp.linalg.solve(Kinv, anp.dot(L.T, anp.dot(self._S_unit, L))))
    return 0.5 * (d * latent._LOG_2PI + anp.sum(ell) + logdet_k + trace + np.sum(self._log_u2))


def _old_cho_inverse(A):
    return scipy.linalg.cho_solve(scipy.linalg.cho_factor(A), np.eye(A.shape[1]))


def _fitted(cls, X, y) -> dict:
    est = cls().fit(X, y)
    out = {k: v for k, v in vars(est).items()
           if k.endswith("_") and isinstance(v, (np.ndarray, float))}
    out["transform"] = est.transform(X)
    return out


@pytest.mark.parametrize("table", sorted(TABLES))
@pytest.mark.parametrize("name", sorted(ESTIMATORS))
def test_shortcuts_leave_every_fitted_array_identical(table, name, monkeypatch):
    X, y = TABLES[table]()
    X = StandardScaler().fit_transform(X)  # bench_real's tables are standardized
    new = _fitted(ESTIMATORS[name], X, y)
    with monkeypatch.context() as m:  # the paths before issue 23's shortcuts
        m.setattr(validation, "_plain_float64", lambda arr, min_samples: False)
        m.setattr(statistics, "ADD_AT_ENTRIES", -1)
        m.setattr(latent, "_cho_inverse", _old_cho_inverse)
        m.setattr(latent._LatentGaussian, "_cost_wl_raw", _old_cost_wl_raw)
        old = _fitted(ESTIMATORS[name], X, y)
    assert new.keys() == old.keys()
    assert len(new) >= 4
    for key in new:
        np.testing.assert_array_equal(new[key], old[key], err_msg=key, strict=True)


@pytest.mark.parametrize("n,d,k", [(150, 4, 3), (32, 3, 2), (2000, 8, 5), (600, 30, 7)])
def test_class_sums_equal_the_sparse_products_bits(n, d, k):
    rng = np.random.default_rng(n)
    Y = 1e6 + rng.standard_normal((n, d)) * 10.0 ** rng.integers(-3, 4, d)  # rounding shows
    codes = rng.integers(0, k, n)
    onehot = scipy.sparse.csr_matrix((np.ones(n), (codes, np.arange(n))), shape=(k, n))
    np.testing.assert_array_equal(statistics.class_sums(Y, codes, k)[1], onehot @ Y, strict=True)
    # and another summation order (the rows of each class last to first) would not pass
    backwards = np.stack([Y[codes == j][::-1].sum(axis=0) for j in range(k)])
    assert not np.array_equal(backwards, onehot @ Y)


@pytest.mark.parametrize("order", ["C", "F"])
@pytest.mark.parametrize("copy", [True, False])
def test_check_data_shortcut_returns_what_check_array_returns(order, copy):
    X = np.asarray(np.random.default_rng(0).standard_normal((7, 3)), order=order)
    for arr in (X, X[::2], X.T):  # contiguous, strided, the other layout
        fast = check_data(arr, copy=copy)
        slow = check_array(arr, dtype=np.float64, copy=copy)
        np.testing.assert_array_equal(fast, slow, strict=True)
        assert fast.flags.c_contiguous == slow.flags.c_contiguous
        assert fast.flags.f_contiguous == slow.flags.f_contiguous
        assert (fast is arr) == (slow is arr)
        assert np.shares_memory(fast, arr) == np.shares_memory(slow, arr)


def test_check_data_shortcut_keeps_the_errors():
    X = np.ones((5, 2))
    X[2, 1] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        check_data(X)
    with pytest.raises(ValueError, match="minimum of 2"):
        check_data(np.ones((1, 3)))
    with pytest.raises(ValueError, match="0 feature"):
        check_data(np.ones((4, 0)))
    with pytest.raises(ValueError, match="largest magnitude"):
        check_data(np.full((3, 2), 1e200))


def test_cho_inverse_is_cho_solve_bit_for_bit_and_refuses_as_it_does():
    rng = np.random.default_rng(3)
    for r in (1, 2, 5):
        B = rng.standard_normal((r, r))
        A = np.eye(r) + B.T @ B * 1e3
        np.testing.assert_array_equal(latent._cho_inverse(A), _old_cho_inverse(A), strict=True)
    with pytest.raises(np.linalg.LinAlgError):
        latent._cho_inverse(np.array([[1.0, 2.0], [2.0, 1.0]]))
    with pytest.raises(ValueError, match="infs or NaNs"):
        latent._cho_inverse(np.array([[1.0, np.nan], [np.nan, 1.0]]))
