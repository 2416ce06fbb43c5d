"""The clustering HSIC estimators' rounds (``ldr/estimators/_hsic_rounds.py``): the inexact
rounds (one ISM step each until the alternation settles) reach the exact rounds' fixed point;
(R1) from the U-step's kept kernel is HSIC's Φ; the U-step's Gaussian gram and its Lanczos
route are the dense ones."""

import numpy as np
import pytest
import scipy.linalg
from sklearn.exceptions import ConvergenceWarning
from sklearn.preprocessing import StandardScaler

from ldr.estimators import KDAC, SemiSupervisedHSIC, UnsupervisedHSIC
from ldr.estimators._hsic_rounds import phi_from_gram
from ldr.estimators._spectral import LANCZOS_MIN, SYMMETRIC_BLOCK, gram, spectral_embedding
from ldr.kernels import Gaussian, make_kernel
from ldr.manifolds import sin_largest_angle
from ldr.objectives.hsic import HSIC


@pytest.fixture(scope="module")
def wine():
    from sklearn.datasets import load_wine

    X, y = load_wine(return_X_y=True)
    return StandardScaler().fit_transform(X), y


def test_phi_from_the_kept_gram_is_hsics_phi():
    """(R1): Φ and the cost from K_XW and Γ = F diag(s) Fᵀ are the HSIC objective's."""
    rng = np.random.default_rng(0)
    n, d, q = 150, 6, 3
    X, F = rng.standard_normal((n, d)), rng.standard_normal((n, 4))
    s = rng.uniform(-1.0, 1.0, 4) / n**2
    W = np.linalg.qr(rng.standard_normal((d, q)))[0]
    obj = HSIC(X, (F, s), q, kernel=Gaussian(1.7))
    Phi, cost = phi_from_gram(gram(Gaussian(1.7), X @ W), X, (F, s), 1.7)
    want = obj.phi(W)
    np.testing.assert_allclose(Phi, want, rtol=0, atol=1e-12 * np.abs(want).max())
    assert cost == pytest.approx(obj.cost(W), rel=1e-12)


@pytest.mark.parametrize("kernel", [Gaussian(0.8), 0.5 * Gaussian(2.0), "polynomial"])
def test_gram_is_the_kernels_gram_and_exactly_symmetric(kernel):
    Z = np.random.default_rng(1).standard_normal((2 * SYMMETRIC_BLOCK + 37, 3))
    k = make_kernel(kernel).fit(Z)
    K = gram(k, Z)
    np.testing.assert_allclose(K, k.gram(Z, np.eye(3)), rtol=1e-13, atol=1e-13)
    if not isinstance(kernel, str):
        np.testing.assert_array_equal(K, K.T)


@pytest.mark.parametrize("center", [False, True])
def test_lanczos_embedding_is_the_dense_eigendecomposition(center):
    """Above LANCZOS_MIN rows the U-step's top-k eigenvectors come from ARPACK: the same
    subspace as the dense eigendecomposition of D^{-1/2} K D^{-1/2} (H·H when centered)."""
    rng = np.random.default_rng(2)
    Z = np.concatenate([rng.normal(c, 1.0, (140, 2)) for c in (-4.0, 0.0, 4.0)])
    assert Z.shape[0] > LANCZOS_MIN
    K = gram(Gaussian(1.5), Z)
    U, dm = spectral_embedding(K, 3, center)
    L = dm[:, None] * K * dm[None, :]
    if center:
        L = L - L.mean(axis=0)
        L = L - L.mean(axis=1, keepdims=True)
    n = Z.shape[0]
    V = scipy.linalg.eigh(L, subset_by_index=[n - 3, n - 1])[1]
    np.testing.assert_allclose(dm, 1.0 / np.sqrt(K.sum(axis=1)), rtol=1e-14)
    assert sin_largest_angle(U, V) < 1e-10


def _fit(cls, X, y, **kw):
    args = (X,) if cls is UnsupervisedHSIC else (X, y)
    extra = {"lam": 0.5} if cls is KDAC else {}
    return cls(n_clusters=3, **extra, **kw).fit(*args)


@pytest.mark.parametrize("cls", [UnsupervisedHSIC, SemiSupervisedHSIC, KDAC])
def test_inexact_rounds_reach_the_exact_rounds_fixed_point(cls, wine):
    """The default (one ISM step a round until the alternation settles, then exact W-steps)
    against every round's W-step solved (the same solver, named): the same labels, the same
    subspace to the alternation's tolerance, and a final W-step that is certified."""
    X, y = wine
    fast = _fit(cls, X, y)
    exact = _fit(cls, X, y, solver=["ism", "trust-region"])
    assert fast.converged_ and exact.converged_
    np.testing.assert_array_equal(fast.labels_, exact.labels_)
    assert sin_largest_angle(fast.M_, exact.M_) < 1e-5
    assert fast.result_.cost == pytest.approx(exact.result_.cost, rel=1e-7)
    assert fast.result_.converged and "trust-region" in fast.result_.reason
    flags = [h["w_exact"] for h in fast.history_]
    assert not all(flags) and flags[-1] and all(h["w_exact"] for h in exact.history_)
    assert fast.history_[-1]["u_change"] <= fast.outer_tol
    assert all("w_change" in h for h in fast.history_[1:] if not h["w_exact"])


def test_the_last_round_is_exact_when_max_outer_ends_the_alternation(wine):
    X, _ = wine
    with pytest.warns(ConvergenceWarning, match="max_outer=3"):
        est = UnsupervisedHSIC(n_clusters=3, max_outer=3).fit(X)
    assert [h["w_exact"] for h in est.history_] == [False, False, True]
    assert est.result_.converged and est.M_.shape == (13, 12)
    np.testing.assert_allclose(est.M_.T @ est.M_, np.eye(12), atol=1e-12)


def test_rounds_without_the_kept_kernel_are_the_same(wine):
    """A ``memory_budget`` below 2n² floats keeps no kernel: the inexact rounds' Φ comes from
    the HSIC objective's row blocks instead of (R1), with the same iterates to rounding."""
    X, _ = wine
    kept = UnsupervisedHSIC(n_clusters=3).fit(X)
    blocks = UnsupervisedHSIC(n_clusters=3, memory_budget=16.0 * X.shape[0] ** 2 - 1).fit(X)
    assert len(kept.history_) == len(blocks.history_)
    for a, b in zip(kept.history_[1:], blocks.history_[1:], strict=True):
        assert a["cost"] == pytest.approx(b["cost"], rel=1e-10)
    np.testing.assert_array_equal(kept.labels_, blocks.labels_)
    assert sin_largest_angle(kept.M_, blocks.M_) < 1e-8
