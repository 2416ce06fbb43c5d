"""The clustering HSIC estimators' rounds (``ldr/estimators/hsic_alternation.py``): the inexact
rounds (one ISM step each until the alternation settles) reach the exact rounds' fixed point;
(R1) from the U-step's kept kernel is HSIC's Φ; the U-step's Gaussian gram and its Lanczos
route are the dense ones."""

import numpy as np
import pytest
import scipy.linalg
from sklearn.exceptions import ConvergenceWarning
from sklearn.preprocessing import StandardScaler

from ldr.estimators import KDAC, SemiSupervisedHSIC, UnsupervisedHSIC
from ldr.estimators.hsic_alternation import PHI_BLOCKED_MIN, phi_from_gram
from ldr.estimators.spectral import (
    LANCZOS_MIN,
    SYMMETRIC_BLOCK,
    WARM_LANCZOS_MIN,
    gram,
    spectral_embedding,
)
from ldr.kernels import Gaussian, make_kernel
from ldr.kernels.tiles import Tiles
from ldr.manifolds import sin_largest_angle
from ldr.objectives.hsic import HSIC, RECENT


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
    # the last W-step ran the exact chain (ism, then the trust region where ism does not certify)
    assert fast.result_.converged and fast.result_.solver == "ism → trust-region"
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


@pytest.mark.parametrize("n", [150, 4 * SYMMETRIC_BLOCK + 61])
def test_phi_from_the_kept_gram_by_blocks_is_hsics_phi(n):
    """(R1) by the blocks on and above the diagonal (above PHI_BLOCKED_MIN rows) and as one
    n×n array (below): both the HSIC objective's Φ and cost."""
    rng = np.random.default_rng(3)
    d, q = 5, 2
    X, F = rng.standard_normal((n, d)), rng.standard_normal((n, 3))
    s = rng.uniform(-1.0, 1.0, 3) / n**2
    W = np.linalg.qr(rng.standard_normal((d, q)))[0]
    obj = HSIC(X, (F, s), q, kernel=Gaussian(1.3))
    assert (n > PHI_BLOCKED_MIN) == (n > 512)
    Phi, cost = phi_from_gram(gram(Gaussian(1.3), X @ W), X, (F, s), 1.3)
    want = obj.phi(W)
    np.testing.assert_allclose(Phi, want, rtol=0, atol=1e-12 * np.abs(want).max())
    assert cost == pytest.approx(obj.cost(W), rel=1e-12)


def _counting_passes(obj, monkeypatch):
    calls = []
    sums = type(obj.tiles).sums

    def counted(self, W, need_phi, *args, **kwargs):
        calls.append(need_phi)
        return sums(self, W, need_phi, *args, **kwargs)

    monkeypatch.setattr(type(obj.tiles), "sums", counted)
    return calls


def test_remembered_values_spare_the_pass_and_the_last_points_are_kept(monkeypatch):
    """HSIC.remember(W, cost, Φ) is what a pass would give, without one; the last RECENT
    points keep their cost, gradient and Φ (not the Hessian's n×n arrays)."""
    rng = np.random.default_rng(4)
    n, d, q = 120, 5, 2
    X, F = rng.standard_normal((n, d)), rng.standard_normal((n, 3))
    obj = HSIC(X, (F, np.full(3, 1.0 / n**2)), q, kernel=Gaussian(1.5))
    W, R = (np.linalg.qr(rng.standard_normal((d, q)))[0] for _ in range(2))
    Phi, cost = phi_from_gram(gram(Gaussian(1.5), X @ W), X, obj._factor, 1.5)
    calls = _counting_passes(obj, monkeypatch)
    obj.remember(W, cost, Phi)
    assert obj.cost(W) == cost and calls == []
    np.testing.assert_array_equal(obj.egrad(W), 2.0 * Phi @ W)
    obj.egrad(R)                                   # a reference point between two uses of W
    assert calls == [False]
    np.testing.assert_array_equal(obj.phi(W), Phi)  # W's values kept: no second pass
    obj.ehvp(W, R)
    assert calls == [False] and all("hess" not in v for _, v in obj._recent)
    fresh = HSIC(X, (F, np.full(3, 1.0 / n**2)), q, kernel=Gaussian(1.5))
    np.testing.assert_allclose(fresh.phi(W), Phi, rtol=0, atol=1e-12 * np.abs(Phi).max())
    assert calls == [False, True]                  # the fresh objective's pass
    for point in (rng.standard_normal((d, q)) for _ in range(RECENT)):
        obj.cost(point)
    obj.cost(W)                                    # evicted by RECENT newer points
    assert len(calls) == 2 + RECENT + 1
    obj.phi(W), obj.phi(W)                         # Φ was not kept with the cost: one pass
    assert len(calls) == 2 + RECENT + 2
    obj.forget()                                   # what a benchmark timing a pass calls
    obj.phi(W)
    assert len(calls) == 2 + RECENT + 3


@pytest.mark.parametrize("n", [150, 420])
def test_warm_lanczos_is_the_dense_eigendecomposition(n):
    """A U-step warm-started from a nearby embedding (Lanczos above WARM_LANCZOS_MIN rows,
    ARPACK's tol WARM_TOL) gives the dense solver's subspace."""
    rng = np.random.default_rng(5)
    Z = np.concatenate([rng.normal(c, 1.0, (n // 3, 2)) for c in (-3.0, 0.0, 3.0)])
    Z2 = Z + 1e-3 * rng.standard_normal(Z.shape)
    m = Z.shape[0]
    assert WARM_LANCZOS_MIN < m and 3 < m // 4
    near, _ = spectral_embedding(gram(Gaussian(1.5), Z2), 3)
    K = gram(Gaussian(1.5), Z)
    U, dm = spectral_embedding(K, 3, near=near)
    L = dm[:, None] * K * dm[None, :]
    V = scipy.linalg.eigh(L, subset_by_index=[m - 3, m - 1])[1]
    assert sin_largest_angle(U, V) < 1e-9
    assert sin_largest_angle(near, V) > 1e-6       # the start was not the answer


def test_the_exact_round_starts_where_its_w_step_stops(wine, monkeypatch):
    """``settle``: the exact round's ISM steps run on the kept kernel's route until W meets
    the W-step's stopping rule, so the W-step itself takes no iteration and one pass over
    the row blocks (its gradient scale's reference point) — at the ISM iterates the W-step
    would have reached (the fit without the kept kernel)."""
    X, _ = wine
    calls = []
    sums = Tiles.sums

    def counted(self, W, need_phi, *args, **kwargs):
        calls.append(need_phi)
        return sums(self, W, need_phi, *args, **kwargs)

    monkeypatch.setattr(Tiles, "sums", counted)
    est = UnsupervisedHSIC(n_clusters=3).fit(X)
    exact_rounds = sum(h["w_exact"] for h in est.history_)
    assert est.result_.n_iter == 0 and est.result_.converged
    assert len(calls) == exact_rounds
    monkeypatch.setattr(Tiles, "sums", sums)
    blocks = UnsupervisedHSIC(n_clusters=3, memory_budget=16.0 * X.shape[0] ** 2 - 1).fit(X)
    assert blocks.result_.n_iter >= 1
    assert sin_largest_angle(est.M_, blocks.M_) < 1e-8
    np.testing.assert_array_equal(est.labels_, blocks.labels_)
