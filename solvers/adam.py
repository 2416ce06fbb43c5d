"""Riemannian Adam, as geoopt's ``RiemannianAdam`` (Bécigneul & Ganea 2019, "Riemannian
adaptive optimization methods").

For a cost that is a sum of terms (:class:`~ldr.core.objective.Objective`, Eq. S1), with ξ_k the
mini-batch Riemannian gradient at M_k (:mod:`ldr.solvers.sgd`) and k counting mini-batches,

    m ← β₁ m + (1 − β₁) ξ_k,    v ← β₂ v + (1 − β₂) ξ_k ∘ ξ_k       (entrywise, as geoopt's
                                                                       ``component_inner``)
    d = π_M( (m/(1 − β₁ᵏ)) / (√(v/(1 − β₂ᵏ)) + ε) ),   M' = R_M(−η_t d),   m ← π_{M'}(m)

the first moment transported to the new tangent space by projection, as geoopt's
``retr_transp`` does on the Stiefel manifold.  One difference: the direction d is projected
to the tangent space before the retraction (geoopt retracts the entrywise-scaled vector as it
is, whose normal part the polar retraction would partly undo); on a Euclidean factor the two
agree.  The step η_t = η₀/(1 + decay·t) (t in epochs); η₀ = ``lr``, or by default the Armijo
step of the full gradient at the start times its RMS entry, so that the first Adam step
(entries ≈ η₀) is as long as that full-gradient step.  One driver iteration is one epoch; the
run certifies only on the full gradient the driver evaluates at its end.
"""

from __future__ import annotations

import math

from ldr.core.errors import ParameterError
from ldr.core.problem import Problem
from ldr.data import arrays
from ldr.solvers.base import State
from ldr.solvers.stochastic import StochasticSolver


class Adam(StochasticSolver):
    """Riemannian Adam (module docstring).

    Parameters
    ----------
    betas : (float, float)
        β₁, β₂ in [0, 1) (default (0.9, 0.999), geoopt's).
    eps : float
        ε of the denominator (default 1e-8, relative to the RMS entry of the start's gradient
        so that it does not depend on the data's units).
    batch_size, lr, decay, batch_tol, random_state, retraction, start_terms, max_epochs,
    unchecked :
        As ``StochasticSolver`` (``ldr.solvers.stochastic``).
    """

    name = "adam"

    def __init__(self, batch_size: int = 32, lr: float | None = None, decay: float = 1.0,
                 betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 batch_tol: float | None = None, random_state=0, retraction: str = "polar",
                 start_terms: int | None = None, max_epochs: float | None = None,
                 unchecked: str | None = None, **renamed):
        super().__init__(batch_size, lr, decay, batch_tol, random_state, retraction,
                         start_terms, max_epochs, unchecked, **renamed)
        if len(betas) != 2 or not all(0 <= b < 1 for b in betas):
            raise ParameterError("betas", f"expected two numbers in [0, 1), got {betas!r}")
        if not eps > 0:
            raise ParameterError("eps", f"must be positive, got {eps!r}")
        self.betas = (float(betas[0]), float(betas[1]))
        self.eps = float(eps)

    def init(self, problem: Problem, M0) -> State:
        state = super().init(problem, M0)
        geom = problem.manifold
        rms = state.grad_norm / math.sqrt(max(geom.dim, 1))
        if self.lr is None:
            state.memory["lr"] *= rms
        state.memory.update(m=geom.zero(state.M), v=geom.zero(state.M),
                            eps=self.eps * max(rms, 1e-300))
        return state

    def update(self, problem: Problem, M, egrad_estimate, memory: dict):
        geom = problem.manifold
        b1, b2 = self.betas
        xi = problem.rgrad(M, egrad_estimate)
        k = memory["steps"] + 1
        m = geom.lincomb(b1, memory["m"], 1.0 - b1, xi)
        v = geom.apply(lambda a, g: b2 * a + (1.0 - b2) * g * g, memory["v"], xi)
        c1 = 1.0 - b1**k
        c2 = 1.0 - b2**k
        eps = memory["eps"]
        d = geom.apply(lambda a, s: (a / c1) / (arrays.namespace(s).sqrt(s / c2) + eps), m, v)
        d = geom.project(M, d)
        M_new = geom.retract(M, geom.lincomb(-self.step_size(memory), d), self.retraction)
        memory["m"] = geom.transport(M, M_new, m)
        memory["v"] = v
        return M_new
