"""Riemannian stochastic variance-reduced gradient (Zhang, Reddi & Sra 2016, "Riemannian SVRG:
fast stochastic optimization on Riemannian manifolds"; Sato, Kasai & Mishra 2019).

For a cost that is a sum of terms (:class:`~ldr.core.objective.Objective`, Eq. S1), each epoch
takes a snapshot M̃ (the epoch's start) with its full gradient grad f(M̃), then for each
mini-batch I moves

    ξ = grad_I f(M) − T_{M̃→M}( grad_I f(M̃) − grad f(M̃) ),   M ← R_M(−η ξ)

with grad_I the mini-batch estimate (n/|I|) π(Σ_{i∈I} ∇f_i), T the transport by projection
onto the tangent space at M, and a constant step η (``decay=0`` by default: the variance of
ξ vanishes at the optimum, so no decreasing step is needed).  An epoch costs two mini-batch
passes and ends with the full cost and gradient at its last iterate — the next snapshot — so
every state SVRG reports is exact and the driver's gradient rule certifies it as for any
deterministic solver.
"""

from __future__ import annotations

from ldr.core.problem import Problem
from ldr.solvers.base import State
from ldr.solvers.stochastic import StochasticSolver


class SVRG(StochasticSolver):
    """Riemannian SVRG (module docstring; parameters as
    ``StochasticSolver`` (``ldr.solvers.stochastic``), with ``decay=0`` and the default step
    half the Armijo step of the full gradient at the start)."""

    name = "svrg"
    lr_factor = 0.5

    def __init__(self, batch_size: int = 32, lr: float | None = None, decay: float = 0.0,
                 batch_tol: float | None = None, random_state=0, retraction: str = "polar",
                 max_epochs: float | None = None, **renamed):
        super().__init__(batch_size, lr, decay, batch_tol, random_state, retraction,
                         max_epochs=max_epochs, **renamed)

    def step(self, problem: Problem, state: State) -> State:
        geom = problem.manifold
        memory = dict(state.memory)
        batches, n = self.batches(problem, memory["rng"])
        snap = state.M  # exact: the start, or the last epoch's end
        snap_grad = state.grad
        M = snap
        self.refresh(problem, M, memory)
        for idx in batches:
            w = n / len(idx)
            _, Gb = problem.batch(M, idx)
            _, Gs = problem.batch(snap, idx)
            correction = geom.lincomb(w, problem.rgrad(snap, Gs), -1.0, snap_grad)
            xi = geom.lincomb(w, problem.rgrad(M, Gb), -1.0,
                              geom.transport(snap, M, correction))
            M = geom.retract(M, geom.lincomb(-self.step_size(memory), xi), self.retraction)
            memory["epochs"] += len(idx) / n
            memory["steps"] += 1
        new = self.evaluate(problem, M, iteration=state.iteration + 1, memory=memory,
                            info={"step_size": self.step_size(memory),
                                  "batches": len(batches)})
        self.epoch_limit(new)
        return new
