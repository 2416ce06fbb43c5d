"""Riemannian trust region with truncated conjugate gradient.

Absil, Baker & Gallivan (2007), "Trust-region methods on Riemannian manifolds", Algorithm
RTR with the Steihaug–Toint truncated CG inner solver (their Algorithm 2), as in Manopt's
``trustregions``/``tCG``.  At the iterate ``M`` with Riemannian gradient ``g`` and Hessian
``H``, the model

    m(η) = f(M) + ⟨g, η⟩ + ½ ⟨η, H[η]⟩,   ‖η‖ ≤ Δ,

is minimized approximately by CG, stopping on negative curvature, on the boundary, or when
``‖r_j‖ ≤ ‖r_0‖ min((‖r_0‖/s)^θ, κ)`` (superlinear convergence for θ = 1), with s the
problem's gradient scale (:meth:`ldr.core.problem.Problem.gradient_scale`; Manopt uses s = 1,
which makes the inner tolerance, and so the iterates, depend on the data's units).  The candidate
``R_M(η)`` is accepted when ``ρ = (f(M) − f(R_M(η))) / (m(0) − m(η)) > ρ'``; Δ shrinks by 4
when ρ < ¼ and doubles (up to Δ̄) when ρ > ¾ and CG stopped on the boundary.  A tiny
multiple of |f| regularizes ρ near convergence, as Manopt does (relative to the larger of
|f(M)| and |f(M₀)|, again so that the iterates do not depend on the units).
"""

from __future__ import annotations

import math

import numpy as np

from ldr.core.errors import ParameterError
from ldr.core.problem import Problem
from ldr.solvers.base import Solver, State

_EPS = np.finfo(float).eps


class TrustRegion(Solver):
    """Riemannian trust region (RTR) with truncated CG.

    Parameters
    ----------
    radius0, max_radius : float, optional
        Initial and largest trust-region radius (default Δ̄ = typical distance of the
        manifold, √r on Stiefel/Grassmann, Δ₀ = Δ̄/8).
    min_radius_ratio : float
        The run stops (not converged) when Δ < min_radius_ratio · Δ̄.
    max_inner : int, optional
        CG iteration cap (default: manifold dimension).
    kappa, theta : float
        CG residual test ``‖r‖ ≤ ‖r₀‖ min(‖r₀‖^θ, κ)``.
    rho_prime : float
        Acceptance threshold on ρ.
    retraction : {"polar", "qr"}
    flat_tol : float
        A CG direction whose curvature is below ``flat_tol`` times the largest curvature seen
        in that CG solve counts as flat (zero to rounding): CG stops there with what it has
        instead of stepping to the boundary along a direction that changes nothing.
    """

    name = "trust-region"
    needs = ("ehvp",)

    def __init__(self, radius0: float | None = None, max_radius: float | None = None,
                 min_radius_ratio: float = 1e-12, max_inner: int | None = None,
                 min_inner: int = 1, kappa: float = 0.1, theta: float = 1.0,
                 rho_prime: float = 0.1, rho_regularization: float = 1e3,
                 retraction: str = "polar", flat_tol: float = 1e-10):
        if retraction not in ("polar", "qr"):
            raise ParameterError("retraction", f"expected 'polar' or 'qr', got {retraction!r}")
        if not 0 <= rho_prime < 0.25:
            raise ValueError(f"rho_prime must lie in [0, 1/4), got {rho_prime}")
        self.radius0 = radius0
        self.max_radius = max_radius
        self.min_radius_ratio = min_radius_ratio
        self.max_inner = max_inner
        self.min_inner = min_inner
        self.kappa = kappa
        self.theta = theta
        self.rho_prime = rho_prime
        self.rho_regularization = rho_regularization
        self.retraction = retraction
        self.flat_tol = flat_tol

    def init(self, problem: Problem, M0) -> State:
        state = super().init(problem, M0)
        max_radius = self.max_radius or problem.manifold.typical_dist
        state.memory = {"radius": self.radius0 or max_radius / 8, "max_radius": max_radius,
                        "fscale": max(abs(state.cost), 1e-300) if np.isfinite(state.cost)
                        else 1.0}
        state.info = {"radius": state.memory["radius"]}
        return state

    # -- inner solver ----------------------------------------------------------------------
    def _tcg(self, problem: Problem, state: State, radius: float):
        """Steihaug–Toint truncated CG on the trust-region model (ABG 2007, Alg. 2).

        The gradient and the Hessian's products enter multiplied by one power of two that
        brings the gradient scale to about 1 (exact: the step η is the same, every inner
        product is scaled by its square), so that a cost at 1e-180 (data at 1e-90) does not
        square its gradient to 0."""
        geom = problem.manifold
        M = state.M
        G = state.egrad
        eta = geom.zero(M)
        Heta = geom.zero(M)
        gscale = state.grad_scale or 1.0
        unit = 2.0 ** -round(math.log2(gscale)) if math.isfinite(gscale) and gscale > 0 else 1.0
        r = geom.lincomb(unit, state.grad) if unit != 1.0 else state.grad
        r_r = geom.inner(r, r)
        norm_r0 = math.sqrt(r_r)
        precon = (problem.objective.preconditioner_at(M)
                  if problem.provides("preconditioner_at") else None)
        z = r if precon is None else precon(r)
        z_r = r_r if precon is None else geom.inner(z, r)
        delta = geom.lincomb(-1.0, z)
        e_Pe = 0.0
        e_Pd = 0.0
        d_Pd = z_r
        max_inner = self.max_inner or geom.dim
        if math.isfinite(state.work_left):  # the run's max_iter counts these products too
            max_inner = max(min(max_inner, int(state.work_left) - 1), 1)
        gscale *= unit  # the gradient scale in the scaled units, about 1
        stop = "max inner iterations"
        j = 0
        curvature = 0.0  # largest |Rayleigh quotient| seen: the Hessian's scale
        hess = problem.hess_operator(M, G)  # the Riemannian Hessian at M, V ↦ Hess f(M)[V]
        if problem.provides("horizontal"):
            # a cost invariant along an orbit the manifold does not quotient out: off a
            # critical point the Hessian can curve down along the orbit, where CG would walk
            # to the boundary for nothing (orthogonal CCA, macrodata: 33 → 18 iterations);
            # the quotient's Hessian is the horizontal part, on horizontal vectors
            full = hess
            horizontal = problem.objective.horizontal

            def hess(V):
                return horizontal(M, full(horizontal(M, V)))
        for j in range(1, max_inner + 1):
            Hdelta = hess(delta)
            if unit != 1.0:
                Hdelta = geom.lincomb(unit, Hdelta)
            d_Hd = geom.inner(delta, Hdelta)
            rayleigh = d_Hd / d_Pd
            if j > 1 and abs(rayleigh) <= self.flat_tol * curvature:
                # a flat direction (the cost does not change along it to rounding, e.g. a
                # rotation M → MR of an invariant cost declared on Stiefel): the model gains
                # nothing there, so stop with the Newton part instead of walking to the
                # boundary along it
                stop = "zero curvature"
                break
            curvature = max(curvature, abs(rayleigh))
            alpha = z_r / d_Hd if d_Hd != 0 else np.inf
            e_Pe_new = e_Pe + 2.0 * alpha * e_Pd + alpha**2 * d_Pd
            if d_Hd <= 0 or e_Pe_new >= radius**2:
                tau = (-e_Pd + math.sqrt(max(e_Pd**2 + d_Pd * (radius**2 - e_Pe), 0.0))) / d_Pd
                eta = geom.lincomb(1.0, eta, tau, delta)
                Heta = geom.lincomb(1.0, Heta, tau, Hdelta)
                stop = "negative curvature" if d_Hd <= 0 else "trust-region boundary"
                break
            e_Pe = e_Pe_new
            eta = geom.lincomb(1.0, eta, alpha, delta)
            Heta = geom.lincomb(1.0, Heta, alpha, Hdelta)
            # Hδ is tangent in exact arithmetic, but computed as proj(ehvp) − VS it carries a
            # normal part of relative size up to 1e-8 (cancellation), which CG amplifies
            # geometrically: near convergence the residual left the tangent space within 20
            # inner iterations and CG reported negative curvature on a positive-definite
            # Hessian (rejected steps on a small LDA).  Re-tangentialize r, as Manopt's tCG
            r = geom.project(M, geom.lincomb(1.0, r, alpha, Hdelta))
            r_r = geom.inner(r, r)
            norm_r = math.sqrt(r_r)
            if j >= self.min_inner and norm_r <= norm_r0 * min((norm_r0 / gscale)**self.theta,
                                                               self.kappa):
                stop = "residual small"
                break
            z = r if precon is None else precon(r)
            z_r_old, z_r = z_r, (r_r if precon is None else geom.inner(z, r))
            beta = z_r / z_r_old
            delta = geom.lincomb(-1.0, z, beta, delta)
            e_Pd = beta * (e_Pd + alpha * d_Pd)
            d_Pd = z_r + beta**2 * d_Pd
        if unit != 1.0:
            Heta = geom.lincomb(1.0 / unit, Heta)
        return eta, Heta, j, stop

    # -- outer step --------------------------------------------------------------------------
    def step(self, problem: Problem, state: State) -> State:
        geom = problem.manifold
        radius = state.memory["radius"]
        max_radius = state.memory["max_radius"]
        eta, Heta, n_inner, cg_stop = self._tcg(problem, state, radius)
        M_new = geom.retract(state.M, eta, self.retraction)
        f_new = problem.cost(M_new)
        model_decrease = -(geom.inner(state.grad, eta) + 0.5 * geom.inner(eta, Heta))
        fscale = state.memory["fscale"]
        reg = max(fscale, abs(state.cost)) * _EPS * self.rho_regularization
        rho = (state.cost - f_new + reg) / (model_decrease + reg)
        if not math.isfinite(rho) or model_decrease < 0 or rho < 0.25:
            radius = radius / 4.0
        elif rho > 0.75 and cg_stop in ("negative curvature", "trust-region boundary"):
            radius = min(2.0 * radius, max_radius)
        accept = model_decrease > 0 and math.isfinite(f_new) and rho > self.rho_prime
        info = {"radius": radius, "rho": float(rho), "inner": n_inner, "cg_stop": cg_stop,
                "step_size": geom.norm(eta)}
        memory = {"radius": radius, "max_radius": max_radius, "fscale": fscale}
        if accept:
            new = self.evaluate(problem, M_new, cost=f_new, iteration=state.iteration + 1,
                                info=info, memory=memory)
        else:
            new = State(M=state.M, cost=state.cost, egrad=state.egrad, grad=state.grad,
                        grad_norm=state.grad_norm, iteration=state.iteration + 1,
                        accepted=False, info=info, memory=memory)
        if not math.isfinite(f_new):
            info["cost_at_candidate"] = f_new
        if radius < self.min_radius_ratio * max_radius:
            why = (f"the cost was {f_new} at the last candidate" if not np.isfinite(f_new)
                   else "no model decrease can be realized at this precision")
            new.stop_reason = f"trust-region radius collapsed to {radius:.2e} ({why})"
        return new
