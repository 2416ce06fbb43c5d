"""Riemannian nonlinear conjugate gradient (Absil, Mahony & Sepulchre 2008, §8.3; as in
Manopt's ``conjugategradient`` and pymanopt's ``ConjugateGradient``).

From the iterate M_k with Riemannian gradient g_k and search direction η_k (η_0 = −g_0):

1. line search along η_k — the gradient solver's (Armijo backtracking, with Hager & Zhang's
   approximate Wolfe test once cost differences are rounding noise); its first trial has the
   last accepted step length, doubled when that step was accepted at its first trial (an
   adaptive rule like pymanopt's), so most searches take one cost evaluation;
2. M_{k+1} = R_{M_k}(α_k η_k), g_{k+1} its gradient;
3. transport g_k and η_k to M_{k+1} by projection, y = g_{k+1} − T(g_k), and
   β_{k+1} = max(0, ⟨g_{k+1}, y⟩ / ⟨T(η_k), y⟩)     (Hestenes–Stiefel, clipped at 0: "HS+");
4. η_{k+1} = −g_{k+1} + β_{k+1} T(η_k), restarted as −g_{k+1} when it is not a clear descent
   direction (cos∠(η, −g) < ``angle``), every ``restart`` × dim iterations, and, optionally,
   when successive gradients are far from orthogonal (Powell's restart,
   ``|⟨g_{k+1}, T(g_k)⟩| ≥ ν‖g_{k+1}‖²``; off by default, as in Manopt and pymanopt: on
   pymanopt's packing example ν = 0.5 made the run 15× longer).

With an Armijo-only line search it is not uniformly better than the Barzilai–Borwein
gradient solver; on a small eigengap use the trust region.

Needs only the cost and its gradient; works on Stiefel, Grassmann, Euclidean factors,
products and batched products.  On costs with curvature spread over many directions (pymanopt's
packing-on-the-sphere example) it takes far fewer iterations than steepest descent.
"""

from __future__ import annotations

import math

from ldr.core.errors import ParameterError
from ldr.core.problem import Problem
from ldr.solvers.base import State
from ldr.solvers.gradient import GradientDescent


class ConjugateGradient(GradientDescent):
    """Riemannian conjugate gradient, Hestenes–Stiefel+ with restarts.

    Parameters
    ----------
    retraction : {"polar", "qr"}
    c, contraction, max_backtracks, precision_factor :
        The line search's, as in :class:`~ldr.solvers.gradient.GradientDescent`.
    orthogonality : float
        Powell's restart threshold ν on ``|⟨g_{k+1}, T(g_k)⟩| / ‖g_{k+1}‖²`` (default ``inf``: off).
    angle : float
        Restart with −g when the direction makes an angle with −g whose cosine is below this
        (a direction nearly orthogonal to the gradient makes no progress).
    restart : int
        Restart with −g every ``restart`` × (manifold dimension) iterations (0: never).
    """

    name = "conjugate-gradient"

    def __init__(self, retraction: str = "polar", c: float = 1e-4, contraction: float = 0.5,
                 max_backtracks: int = 40, precision_factor: float = 100.0,
                 orthogonality: float = float("inf"), angle: float = 1e-3,
                 restart: int = 1):
        super().__init__(retraction=retraction, step="armijo", c=c, contraction=contraction,
                         max_backtracks=max_backtracks, precision_factor=precision_factor)
        if not orthogonality > 0:
            raise ParameterError("orthogonality", f"must be > 0, got {orthogonality!r}")
        if not 0 <= angle < 1:
            raise ParameterError("angle", f"must lie in [0, 1), got {angle!r}")
        self.orthogonality = orthogonality
        self.angle = angle
        if isinstance(restart, bool) or not isinstance(restart, int) or restart < 0:
            raise ParameterError("restart", f"must be a non-negative integer, got {restart!r}")
        self.restart = restart

    def init(self, problem: Problem, M0) -> State:
        state = super().init(problem, M0)
        geom = problem.manifold
        state.memory = {"direction": geom.lincomb(-1.0, state.grad),
                        "length": geom.typical_dist / 8}  # first trial: Δ̄/8, as the TR's
        return state

    def step(self, problem: Problem, state: State) -> State:
        geom = problem.manifold
        mem = state.memory
        eta = mem["direction"]
        slope = geom.inner(state.grad, eta)
        eta_norm = math.sqrt(max(geom.inner(eta, eta), 1e-300))
        if not slope < -self.angle * state.grad_norm * eta_norm:   # (nearly) no descent
            eta = geom.lincomb(-1.0, state.grad)
            slope = -state.grad_norm**2
            eta_norm = state.grad_norm
        alpha0 = mem["length"] / eta_norm
        accepted, alpha, k, all_non_finite, f_new = self._line_search(
            problem, state, eta, slope, alpha0)
        if accepted is None:
            return self._failed(state, k, all_non_finite, f_new)
        # Hestenes–Stiefel+ with (optional) Powell restarts, vectors transported by projection
        g_new = accepted.grad
        g_old = geom.transport(state.M, accepted.M, state.grad)
        eta_old = geom.transport(state.M, accepted.M, eta)
        y = geom.lincomb(1.0, g_new, -1.0, g_old)
        denominator = geom.inner(eta_old, y)
        beta = max(0.0, geom.inner(g_new, y) / denominator) if denominator > 0 else 0.0
        if abs(geom.inner(g_new, g_old)) >= self.orthogonality * accepted.grad_norm**2:
            beta = 0.0
        if self.restart and (state.iteration + 1) % (self.restart * geom.dim) == 0:
            beta = 0.0
        accepted.iteration = state.iteration + 1
        accepted.memory = {"direction": geom.lincomb(-1.0, g_new, beta, eta_old),
                           "length": alpha * eta_norm * (2.0 if k == 0 else 1.0)}
        accepted.info = {"step_size": float(alpha * eta_norm), "backtracks": k,
                         "beta": float(beta)}
        return accepted
