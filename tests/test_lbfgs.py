"""The limited-memory quasi-Newton solver (solvers/lbfgs.py): plain L-BFGS on a Euclidean
factor against scipy's L-BFGS-B, Riemannian L-BFGS against the trust region on Grassmann and
Stiefel problems, its safeguards, and the driver's honest stops."""

import numpy as np
import pytest
import scipy.optimize
from test_stiefel_convergence import brockett

import ldr
from ldr.core.errors import ParameterError
from ldr.manifolds import Euclidean, sin_largest_angle
from ldr.objectives import LDA, PCA
from ldr.solvers import LBFGS


def _rosenbrock(d=10, r=2):
    """The extended Rosenbrock function of the d·r entries of M (minimum 0 at all ones)."""

    def cost(M):
        x = M.reshape(-1)
        return float(np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2))

    def egrad(M):
        x = M.reshape(-1)
        g = np.zeros_like(x)
        t = x[1:] - x[:-1] ** 2
        g[1:] += 200.0 * t
        g[:-1] += -400.0 * t * x[:-1] - 2.0 * (1.0 - x[:-1])
        return g.reshape(M.shape)

    return ldr.objective(cost, shape=(d, r), manifold="euclidean", egrad=egrad), cost, egrad


def _scipy(cost, egrad, x0):
    """scipy's L-BFGS-B from x0 (no bounds, memory 10 as ldr's), with the gradient norm after
    every iteration."""
    shape, norms = x0.shape, [float(np.linalg.norm(egrad(x0)))]

    def record(intermediate_result):
        norms.append(float(np.linalg.norm(egrad(intermediate_result.x.reshape(shape)))))

    out = scipy.optimize.minimize(
        lambda x: cost(x.reshape(shape)), x0.ravel(), jac=lambda x: egrad(x.reshape(shape))
        .ravel(), method="L-BFGS-B", callback=record,
        options={"gtol": 1e-11, "ftol": 0.0, "maxiter": 5000})
    return out, np.array(norms)


def _iterations_to(norms, tol):
    """The first iteration whose gradient norm is ≤ tol."""
    return int(np.flatnonzero(np.asarray(norms) <= tol)[0])


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_plain_lbfgs_matches_scipy_on_rosenbrock(seed):
    obj, cost, egrad = _rosenbrock()
    x0 = 0.5 * np.random.default_rng(seed).standard_normal((10, 2))
    ours = ldr.solve(obj, "lbfgs", start=x0, tol=1e-9, tol_scale=1.0, xtol=0,
                     floor_patience=0, max_iter=5000)
    theirs, norms = _scipy(cost, egrad, x0)
    assert ours.converged, ours.reason
    np.testing.assert_allclose(ours.M, np.ones((10, 2)), atol=1e-8)
    np.testing.assert_allclose(theirs.x.reshape(10, 2), ours.M, atol=1e-7)
    # the same method: iterations to the same gradient norm within a third of scipy's
    ours_k, theirs_k = _iterations_to(ours.trace["grad_norm"], 1e-6), _iterations_to(norms, 1e-6)
    assert 0.67 * theirs_k <= ours_k <= 1.33 * theirs_k, (ours_k, theirs_k)
    assert ours.counts["cost"] <= 1.33 * theirs.nfev, (ours.counts, theirs.nfev)


def test_plain_lbfgs_on_an_ill_conditioned_quadratic():
    """½ tr(MᵀAM) − tr(BᵀM) with cond(A) = 1e3: the minimizer A⁻¹B, in about as many
    iterations as scipy's L-BFGS-B."""
    rng = np.random.default_rng(3)
    Q = np.linalg.qr(rng.standard_normal((40, 40)))[0]
    A = Q @ np.diag(np.logspace(0, 3, 40)) @ Q.T
    B = rng.standard_normal((40, 3))

    def cost(M):
        return 0.5 * np.sum(M * (A @ M)) - np.sum(B * M)

    def egrad(M):
        return A @ M - B

    obj = ldr.objective(cost, shape=(40, 3), manifold="euclidean", egrad=egrad,
                        ehvp=lambda M, V: A @ V)
    x0 = np.zeros((40, 3))
    # the rounding-floor rule off: the approximate Wolfe test takes the gradient below
    # scipy's floor (its ftol=0 stop, at ‖g‖ ≈ 3e-6 here), with non-monotone gradient norms
    ours = ldr.solve(obj, "lbfgs", start=x0, tol=1e-9, tol_scale=1.0, xtol=0,
                     floor_patience=0, max_iter=5000)
    theirs, norms = _scipy(cost, egrad, x0)
    assert ours.converged, ours.reason
    np.testing.assert_allclose(ours.M, np.linalg.solve(A, B), atol=1e-10)
    ours_k, theirs_k = _iterations_to(ours.trace["grad_norm"], 1e-5), _iterations_to(norms, 1e-5)
    assert 0.67 * theirs_k <= ours_k <= 1.33 * theirs_k, (ours_k, theirs_k)


@pytest.mark.parametrize("seed", [0, 1])
def test_riemannian_lbfgs_matches_the_trust_region_on_grassmann_pca(seed):
    X = ldr.datasets.make_pca(300, 15, seed=seed)
    obj = PCA(X, 4, manifold="grassmann")
    f_star = -np.sum(np.linalg.eigvalsh(obj.C)[-4:])
    # tol 1e-9: at 1e-10 the step rule can fire first (the iterate's changes reach xtol at
    # the rounding floor of a d = 15 problem, on some machines' BLAS)
    ours = ldr.solve(obj, "lbfgs", start="random", random_state=seed, tol=1e-9)
    tr = ldr.solve(obj, "trust-region", start="random", random_state=seed, tol=1e-9)
    assert ours.converged and tr.converged, (ours.reason, tr.reason)
    assert abs(ours.cost - f_star) <= 1e-12 * abs(f_star)
    assert abs(ours.cost - tr.cost) <= 1e-12 * abs(f_star)
    assert sin_largest_angle(ours.M, tr.M) <= 1e-7


def test_riemannian_lbfgs_matches_the_trust_region_on_stiefel_lda():
    X, y = ldr.datasets.make_lda(30, r=3, n_per_class=200, seed=7)
    obj = LDA(X, y, 3)
    ours = ldr.solve(obj, "lbfgs", start="random", random_state=0)
    tr = ldr.solve(obj, "trust-region", start="random", random_state=0)
    assert ours.converged and tr.converged, (ours.reason, tr.reason)
    assert ours.cost == pytest.approx(tr.cost, rel=1e-12)
    assert sin_largest_angle(ours.M, tr.M) <= 1e-6


def test_riemannian_lbfgs_on_a_cost_that_is_not_rotation_invariant():
    """Brockett's tr(MᵀAMN): the basis itself is the answer (up to column signs), so the
    solver must rotate inside the span too; the trust region agrees to tight tolerance."""
    obj, M_star, f_star = brockett()
    ours = ldr.solve(obj, "lbfgs", start="random", random_state=4, tol=1e-10)
    tr = ldr.solve(obj, "trust-region", start="random", random_state=4, tol=1e-10)
    assert ours.converged, ours.reason
    assert abs(ours.cost - f_star) <= 1e-12 * abs(f_star)
    assert abs(ours.cost - tr.cost) <= 1e-12 * abs(f_star)
    signs = np.sign(np.sum(ours.M * M_star, axis=0))
    np.testing.assert_allclose(ours.M, M_star * signs, atol=1e-7)
    assert np.linalg.norm(ours.M.T @ ours.M - np.eye(3)) <= 1e-12


def test_two_loop_recursion_meets_the_secant_equation_and_skips_bad_pairs():
    geom = Euclidean(4, 2)
    rng = np.random.default_rng(0)
    s, y = rng.standard_normal((4, 2)), rng.standard_normal((4, 2))
    if np.vdot(s, y) < 0:
        y = -y
    solver = LBFGS()
    # H y = s for the newest pair (BFGS's secant equation): the direction at g = y is −s
    direction, used = solver._direction(geom, y, [solver._pair(geom, s, y)])
    assert used == 1
    np.testing.assert_allclose(direction, -s, atol=1e-12)
    # a pair of non-positive curvature is skipped: the direction is −g
    g = rng.standard_normal((4, 2))
    direction, used = solver._direction(geom, g, [solver._pair(geom, s, -y)])
    assert used == 0
    np.testing.assert_array_equal(direction, -g)


def test_wrong_gradient_is_a_reported_line_search_failure(pca_data):
    class WrongGradient(PCA):
        def egrad(self, M):
            return 2.0 * (self.C @ M)  # sign error: an ascent direction

    res = ldr.solve(WrongGradient(pca_data, 3), "lbfgs", start="random", random_state=0)
    assert not res.converged
    assert res.reason.startswith("line search failed")


def test_honest_stops(pca_data):
    obj = PCA(pca_data, 3)
    res = ldr.solve(obj, "lbfgs", start="random", random_state=0, max_iter=3)
    assert not res.converged and res.reason.startswith("max_iter 3 reached")
    res = ldr.solve(obj, "lbfgs", start="random", random_state=0)
    assert res.converged and res.reason.startswith("gradient norm")
    assert res.grad_norm <= 1e-6 * res.grad_scale  # L-BFGS's default tol (line search)
    # a loose ftol fires early: stalled, not converged, far from a critical point
    res = ldr.solve(obj, "lbfgs", start="random", random_state=0, tol=0, xtol=0, ftol=1e-3)
    assert not res.converged and res.reason.startswith("stalled"), res.reason


def test_step_cap_and_options():
    """No accepted step is longer than max_step · max(‖M‖, Δ̄); options are checked."""
    obj, _, _ = _rosenbrock()
    x0 = 0.5 * np.random.default_rng(0).standard_normal((10, 2))
    geom = Euclidean(10, 2)
    rows = []
    res = ldr.solve(obj, LBFGS(max_step=0.05), start=x0, tol=1e-7, tol_scale=1.0,
                    max_iter=5000, callback=lambda st: rows.append(st))
    assert res.converged, res.reason
    for before, after in zip(rows, rows[1:]):
        cap = 0.05 * max(np.linalg.norm(before.M), geom.typical_dist)
        assert np.linalg.norm(after.M - before.M) <= cap * (1 + 1e-12)
    for bad in ({"memory": -1}, {"memory": 2.5}, {"c1": 0.0}, {"c2": 1.0}, {"max_evals": 0},
                {"max_step": 0.0}, {"max_step": True}, {"retraction": "exp"},
                {"cautious": 2.0}):
        with pytest.raises(ParameterError) as info:
            LBFGS(**bad)
        assert info.value.param == next(iter(bad))
    with pytest.raises(ParameterError) as info:
        LBFGS(c1=0.5, c2=0.4)
    assert info.value.param == "c2"


def test_memory_zero_is_steepest_descent_with_wolfe_steps(pca_data):
    res = ldr.solve(PCA(pca_data, 3), LBFGS(memory=0), start="random", random_state=0,
                    max_iter=5000)
    assert res.converged, res.reason
    assert np.all(res.trace["pairs"][1:] == 0)
