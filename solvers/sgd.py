"""Mini-batch Riemannian stochastic gradient descent (Bonnabel 2013, "Stochastic gradient
descent on Riemannian manifolds").

For a cost that is a sum of terms (:class:`~ldr.core.objective.Objective`, Eq. S1), each mini-batch
I moves

    M ← R_M(−η_t ξ),   ξ = grad_I f(M) = π_M((n/|I|) Σ_{i∈I} ∇f_i(M)),   η_t = η₀/(1 + decay·t)

with R the polar (or QR) retraction, π_M the tangent projection and t the epochs done; the
decreasing step (Σ η_t = ∞, Σ η_t² < ∞ as t grows) makes the iterates settle.  One driver
iteration is one epoch (``ldr.solvers.stochastic``); the run certifies only on the full
gradient the driver evaluates at its end.
"""

from __future__ import annotations

from ldr.core.problem import Problem
from ldr.solvers.stochastic import StochasticSolver


class SGD(StochasticSolver):
    """Riemannian mini-batch SGD (module docstring; parameters as
    ``StochasticSolver`` (``ldr.solvers.stochastic``): ``batch_size=32``, ``lr=None`` — the
    Armijo step of the full gradient at the start —, ``decay=1``, ``batch_tol``,
    ``random_state=0``, ``retraction``)."""

    name = "sgd"

    def update(self, problem: Problem, M, egrad_estimate, memory: dict):
        geom = problem.manifold
        xi = problem.rgrad(M, egrad_estimate)
        return geom.retract(M, geom.lincomb(-self.step_size(memory), xi), self.retraction)
