"""The HSIC objective and the ISM solver."""

import numpy as np
import pytest

import ldr
from ldr import kernels as K
from ldr.objectives import HSIC, LDA, QuotientOfTraces
from ldr.solvers import ISM


def _wine_supervised(n=None):
    X, y = ldr.datasets.load("wine")
    if n:
        X, y = X[:: len(y) // n], y[:: len(y) // n]
    Y = np.eye(3)[y]
    return X, (Y - Y.mean(axis=0), np.full(3, 1.0 / len(y) ** 2))


def test_blocks_and_low_rank_gamma_give_the_same_oracles():
    X, (F, s) = _wine_supervised()
    dense = HSIC(X, (F * s) @ F.T, 3)
    blocked = HSIC(X, (F, s), 3, block_size=17)
    W = dense.heuristic()
    V = np.random.default_rng(0).standard_normal(W.shape)
    assert blocked.cost(W) == pytest.approx(dense.cost(W), rel=1e-12)
    np.testing.assert_allclose(blocked.egrad(W), dense.egrad(W), rtol=1e-10, atol=1e-14)
    np.testing.assert_allclose(blocked.phi(W), dense.phi(W), rtol=1e-10, atol=1e-14)
    np.testing.assert_allclose(blocked.ehvp(W, V), dense.ehvp(W, V), rtol=1e-9, atol=1e-13)
    np.testing.assert_allclose(blocked.phi0(), dense.phi0(), rtol=1e-10, atol=1e-14)


def test_ism_reaches_the_trust_region_optimum_on_wine():
    X, G = _wine_supervised()
    obj = HSIC(X, G, 4)
    ism = ldr.solve(obj, "ism", tol=1e-10)
    tr = ldr.solve(obj, "trust-region", start=obj.heuristic(), tol=1e-10)
    assert ism.converged and tr.converged
    assert abs(ism.cost - tr.cost) <= 1e-6 * abs(tr.cost)
    # one Φ per ISM iteration against many Hessian-vector products for the trust region
    assert ism.counts.get("hvp", 0) == 0 and ism.counts["phi"] <= ism.n_iter + 1
    assert tr.counts["hvp"] > 3 * ism.counts["phi"]
    assert np.all(ism.trace["eigengap"][1:] > 0)
    cert = ldr.certificate(obj, ism.M, tol=1e-8)
    assert cert.is_local_min


def test_ism_starts_from_phi0_and_its_step_is_the_eigen_iteration():
    X, G = _wine_supervised(60)
    obj = HSIC(X, G, 2)
    res = ldr.solve(obj, "ism", max_iter=1)
    _, V = np.linalg.eigh(obj.phi0())
    M0 = V[:, :2]
    assert res.trace["cost"][0] == pytest.approx(obj.cost(M0), rel=1e-12)
    _, V1 = np.linalg.eigh(obj.phi(M0))
    assert ldr.manifolds.sin_largest_angle(res.M, V1[:, :2]) < 1e-10


def test_ism_on_lda_is_the_trace_ratio_iteration_and_reaches_the_optimum():
    for seed in range(5):
        X, y = ldr.datasets.make_lda(10, r=2, n_per_class=200, seed=seed)
        obj = LDA(X, y, 2)
        ism = ldr.solve(obj, "ism", start="heuristic", tol=1e-10)
        tr = ldr.solve(obj, "trust-region", start="heuristic", tol=1e-10)
        assert ism.converged, ism.reason
        assert abs(ism.cost - tr.cost) <= 1e-8 * abs(tr.cost)
        # the trace-ratio iteration increases the ratio monotonically
        assert np.all(np.diff(ism.trace["cost"]) <= 1e-12 * abs(tr.cost))


def test_ism_cycling_is_detected_and_the_best_point_returned():
    # Φ(M) = −wwᵀ + 2e₃e₃ᵀ with w the other of two directions u, v: ISM jumps u → v → u → ...
    u = np.array([1.0, 0.0, 0.0])
    v = np.array([0.5, np.sqrt(3) / 2, 0.0])

    class Flip(QuotientOfTraces):
        def phi(self, M):
            w = v if abs(M[:, 0] @ u) > abs(M[:, 0] @ v) else u
            return -np.outer(w, w) + 2.0 * np.diag([0.0, 0.0, 1.0])

        def cost(self, M):
            return float(-abs(M[0, 0]))

        def egrad(self, M):
            return 2.0 * self.phi(M) @ M

    obj = Flip(np.eye(3), np.eye(3), 1, manifold="stiefel")
    res = ldr.solve(obj, "ism", start=v[:, None], tol=0)
    assert not res.converged
    assert "cycles with period 2" in res.reason
    assert "returned the best iterate seen" in res.reason
    assert res.cost == pytest.approx(-1.0)  # u, the better of the two points
    assert ldr.manifolds.sin_largest_angle(res.M, u[:, None]) < 1e-12


def test_ism_then_trust_region_is_the_documented_polish():
    X, G = _wine_supervised()
    obj = HSIC(X, G, 4)
    res = ldr.solve(obj, ["ism", "trust-region"], tol=1e-10)
    assert [s.solver for s in res.stages] == ["ism", "trust-region"]
    assert res.converged


def test_ism_needs_a_phi_oracle():
    class NoPhi(ldr.Objective):
        shape, manifold = (3, 1), "stiefel"

        def cost(self, M):
            return float(M[0, 0])

    with pytest.raises(ValueError, match="phi"):
        ldr.solve(NoPhi(), "ism")
    with pytest.raises(ValueError, match="damping"):
        ISM(damping=1.0)


def test_bad_hsic_inputs():
    X, (F, s) = _wine_supervised()
    G = (F * s) @ F.T
    with pytest.raises(ValueError, match="Gamma: must be symmetric"):
        HSIC(X, G + np.triu(np.ones_like(G)), 2)
    with pytest.raises(ValueError, match="Gamma: must be n×n"):
        HSIC(X, G[:-1, :-1], 2)
    with pytest.raises(ValueError, match="Gamma"):
        HSIC(X, (F[:-1], s), 2)
    with pytest.raises(ValueError, match="r: the subspace dimension"):
        HSIC(X, G, 13)
    with pytest.raises(ValueError, match="sigma"):
        HSIC(X, G, 2, kernel=K.Gaussian(-1.0))
    with pytest.raises(ValueError, match="block_size"):
        HSIC(X, G, 2, block_size=0)
    G_nan = G.copy()
    G_nan[0, 0] = np.nan
    with pytest.raises(ValueError, match="Gamma.*NaN"):
        HSIC(X, G_nan, 2)
