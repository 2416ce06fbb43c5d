"""Riemannian projected gradient descent (survey Appendix A, Algorithm 1).

Each iteration (Algorithm 1, lines 3–8):

1. free gradient ``∇f(M)``;
2. search direction ``−π_M(∇f(M))``, the tangent projection of Eq. 34;
3. Armijo backtracking along the retraction: accept the first ``β`` with
   ``f(R_M(−β g)) ≤ f(M) − c β ‖g‖²``;
4. ``M ← R_M(−β g)`` with the polar retraction of Eq. 35 (QR as an option).

Near the optimum the cost stops resolving the Armijo decrease (its differences are
rounding noise); there the line search switches to Hager & Zhang's approximate Wolfe test
on the slope, so the gradient norm keeps decreasing to the driver's tolerance.

The first trial step of each line search is twice the last accepted one (or, with
``step="bb"``, the Barzilai–Borwein step ⟨s, s⟩/⟨s, y⟩ from the last two iterates,
safeguarded), so that on a well-scaled problem most iterations need one cost evaluation.
Works on Stiefel, Grassmann, Euclidean and products of them.
"""

from __future__ import annotations

import numpy as np

from ldr.core.errors import ParameterError
from ldr.core.problem import Problem
from ldr.solvers.base import Solver, State


class GradientDescent(Solver):
    """Projected gradient descent with Armijo backtracking.

    Parameters
    ----------
    retraction : {"polar", "qr"}
    step : {"bb", "armijo"}
        How the first trial step of each line search is chosen: the Barzilai–Borwein step
        (default; far fewer iterations on ill-conditioned problems) or twice the last
        accepted step (Algorithm 1 with plain Armijo backtracking).
    c : float
        Armijo sufficient-decrease constant.
    contraction : float
        Backtracking factor in (0, 1).
    max_backtracks : int
        Line-search failures stop the run (not converged).
    precision_factor : float
        When ``|f(trial) − f(M)| ≤ precision_factor · eps · |f(M)|`` the cost can no longer
        show a decrease, and the trial is accepted on the sufficient-decrease half of Hager &
        Zhang's approximate Wolfe test instead: ``⟨grad f(trial), T(−g)⟩ ≤ (1 − 2c)‖g‖²``
        (backtracking from a growing first trial keeps steps from being too short).
    """

    name = "gradient"
    #: Manopt's and pymanopt's gradient tolerance: the step acceptance reads cost
    #: differences, blind below rounding, near a relative gradient of 1e-8
    default_tol = 1e-6

    def __init__(self, retraction: str = "polar", step: str = "bb", c: float = 1e-4,
                 contraction: float = 0.5, max_backtracks: int = 40,
                 precision_factor: float = 100.0):
        if retraction not in ("polar", "qr"):
            raise ParameterError("retraction", f"expected 'polar' or 'qr', got {retraction!r}")
        if step not in ("armijo", "bb"):
            raise ParameterError("step", f"expected 'armijo' or 'bb', got {step!r}")
        if not 0 < c < 1 or not 0 < contraction < 1:
            raise ValueError("c and contraction must lie in (0, 1)")
        self.retraction = retraction
        self.step_rule = step
        self.c = c
        self.contraction = contraction
        self.max_backtracks = max_backtracks
        self.precision_factor = precision_factor

    def init(self, problem: Problem, M0) -> State:
        state = super().init(problem, M0)
        state.memory["beta"] = problem.manifold.typical_dist / max(8 * state.grad_norm, 1e-300)
        return state

    def _first_trial(self, problem: Problem, state: State) -> float:
        mem = state.memory
        beta = 2.0 * mem["beta"]
        if self.step_rule == "bb" and "s" in mem:
            geom = problem.manifold
            s = geom.transport(mem["M_prev"], state.M, mem["s"])
            y = geom.lincomb(1.0, state.grad, -1.0,
                             geom.transport(mem["M_prev"], state.M, mem["g_prev"]))
            sy = geom.inner(s, y)
            if sy > 0:
                beta = geom.inner(s, s) / sy
        return beta

    def _line_search(self, problem: Problem, state: State, direction, slope: float,
                     beta: float):
        """Backtracking along ``direction`` (slope ⟨grad f, direction⟩ < 0) from the trial step
        ``beta``: Armijo, f(R(βη)) ≤ f + c β slope, or — once cost differences are rounding
        noise — the sufficient-decrease half of Hager & Zhang's approximate Wolfe test on the
        transported slope, ⟨grad f(R(βη)), T(η)⟩ ≤ (2c − 1) slope.  Returns ``(accepted
        State or None, beta, backtracks, all trial costs non-finite, last trial cost)``."""
        geom = problem.manifold
        f0 = state.cost
        rounding = self.precision_factor * np.finfo(float).eps * max(abs(f0), 1e-300)
        non_finite = 0
        f_new = f0
        for k in range(self.max_backtracks + 1):
            M_new = geom.retract(state.M, geom.lincomb(beta, direction), self.retraction)
            f_new = problem.cost(M_new)
            if not np.isfinite(f_new):       # outside the cost's domain: a shorter step
                non_finite += 1
            elif f_new <= f0 + self.c * beta * slope:
                return self.evaluate(problem, M_new, cost=f_new), beta, k, False, f_new
            elif abs(f_new - f0) <= rounding:
                # Cost differences are rounding noise here: use Hager & Zhang's approximate
                # Wolfe test on the slope along the (transported) search direction instead.
                trial = self.evaluate(problem, M_new, cost=f_new)
                new_slope = geom.inner(trial.grad, geom.transport(state.M, M_new, direction))
                if new_slope <= (2.0 * self.c - 1.0) * slope:
                    return trial, beta, k, False, f_new
            beta *= self.contraction
        return None, beta, k, non_finite == k + 1, f_new

    def _failed(self, state: State, k: int, all_non_finite: bool, f_new: float) -> State:
        """The State of a failed line search: the same point, not accepted, with the reason."""
        new = State(M=state.M, cost=state.cost, egrad=state.egrad, grad=state.grad,
                    grad_norm=state.grad_norm, iteration=state.iteration + 1, accepted=False,
                    memory=state.memory, info={"step_size": 0.0, "backtracks": k})
        if all_non_finite:
            new.stop_reason = (f"line search failed: the cost was {f_new} at every one of "
                               f"{k + 1} trial points along the search direction")
        else:
            new.stop_reason = (f"line search failed: no decrease after {self.max_backtracks} "
                               "backtracks (the gradient may be wrong, or the gradient norm is "
                               "at its precision floor: raise gtol)")
        return new

    def step(self, problem: Problem, state: State) -> State:
        geom = problem.manifold
        g = state.grad
        g2 = state.grad_norm**2
        direction = geom.lincomb(-1.0, g)
        accepted, beta, k, all_non_finite, f_new = self._line_search(
            problem, state, direction, -g2, self._first_trial(problem, state))
        if accepted is None:
            return self._failed(state, k, all_non_finite, f_new)
        accepted.iteration = state.iteration + 1
        accepted.memory = {"beta": beta, "M_prev": state.M, "g_prev": g,
                           "s": geom.lincomb(beta, direction)}
        accepted.info = {"step_size": float(beta * np.sqrt(g2)), "backtracks": k}
        return accepted
