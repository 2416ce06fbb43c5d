"""Riemannian projected gradient descent (survey Appendix A, Algorithm 1).

Each iteration (Algorithm 1, lines 3–8):

1. free gradient ``∇f(M)``;
2. search direction ``−π_M(∇f(M))``, the tangent projection of Eq. 34;
3. Armijo backtracking along the retraction: accept the first ``β`` with
   ``f(R_M(−β g)) ≤ f(M) − c β ‖g‖²``;
4. ``M ← R_M(−β g)`` with the polar retraction of Eq. 35 (QR as an option).

The first trial step of each line search is twice the last accepted one (or, with
``step="bb"``, the Barzilai–Borwein step ⟨s, s⟩/⟨s, y⟩ from the last two iterates,
safeguarded), so that on a well-scaled problem most iterations need one cost evaluation.
Works on Stiefel, Grassmann, Euclidean and products of them.
"""

from __future__ import annotations

import numpy as np

from ldr.problem import Problem
from ldr.solvers.base import Solver, State


class GradientDescent(Solver):
    """Projected gradient descent with Armijo backtracking.

    Parameters
    ----------
    retraction : {"polar", "qr"}
    step : {"armijo", "bb"}
        How the first trial step of each line search is chosen.
    c : float
        Armijo sufficient-decrease constant.
    contraction : float
        Backtracking factor in (0, 1).
    max_backtracks : int
        Line-search failures stop the run (not converged).
    """

    name = "gradient"

    def __init__(self, retraction: str = "polar", step: str = "armijo", c: float = 1e-4,
                 contraction: float = 0.5, max_backtracks: int = 40):
        if retraction not in ("polar", "qr"):
            raise ValueError(f"retraction: expected 'polar' or 'qr', got {retraction!r}")
        if step not in ("armijo", "bb"):
            raise ValueError(f"step: expected 'armijo' or 'bb', got {step!r}")
        if not 0 < c < 1 or not 0 < contraction < 1:
            raise ValueError("c and contraction must lie in (0, 1)")
        self.retraction, self.step_rule = retraction, step
        self.c, self.contraction, self.max_backtracks = c, contraction, max_backtracks

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

    def step(self, problem: Problem, state: State) -> State:
        geom = problem.manifold
        g, f0, g2 = state.grad, state.cost, state.grad_norm**2
        direction = geom.lincomb(-1.0, g)
        beta = self._first_trial(problem, state)
        for k in range(self.max_backtracks + 1):
            M_new = geom.retract(state.M, geom.lincomb(beta, direction), self.retraction)
            f_new = problem.cost(M_new)
            if f_new <= f0 - self.c * beta * g2:
                break
            beta *= self.contraction
        else:
            new = State(M=state.M, cost=f0, egrad=state.egrad, grad=g, grad_norm=state.grad_norm,
                        iteration=state.iteration + 1, accepted=False, memory=state.memory,
                        info={"step_size": 0.0, "backtracks": k})
            new.stop_reason = (f"line search failed: no decrease after {self.max_backtracks} "
                               "backtracks (gradient may be wrong, or precision is exhausted)")
            return new
        stalled = f_new >= f0
        G_new = problem.egrad(M_new)
        grad_new = geom.rgrad(M_new, G_new)
        memory = {"beta": beta, "M_prev": state.M, "g_prev": g,
                  "s": geom.lincomb(beta, direction)}
        new = State(M=M_new, cost=f_new, egrad=G_new, grad=grad_new,
                    grad_norm=geom.norm(grad_new), iteration=state.iteration + 1,
                    memory=memory,
                    info={"step_size": float(beta * np.sqrt(g2)), "backtracks": k})
        if stalled:
            new.stop_reason = ("no cost decrease representable in floating point (the cost is "
                               f"at its precision floor with gradient norm {new.grad_norm:.3e}; "
                               "raise gtol to accept this point)")
        return new
