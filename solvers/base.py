"""The solver protocol: ``init(problem, M0) -> State`` and ``step(problem, state) -> State``.

The driver (:func:`ldr.solve`) owns the loop, the clock, the trace and the stopping rules; a
solver only moves from one iterate to the next.  A step returns a new State carrying the
iterate's cost and Riemannian gradient (the driver's tests read them), whether the step was
accepted (a rejected trust-region step leaves ``M`` unchanged and must not count as
"converged by no change"), solver-specific ``info`` for the trace, and optionally its own
stopping reason.  The driver sets ``grad_scale`` (the problem's gradient scale,
:meth:`ldr.core.problem.Problem.gradient_scale`) and ``grad_tol`` (the gradient norm its rule
accepts) on every state it hands to ``step``: a solver that needs a scale-free inner tolerance
reads them there.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ldr.core.problem import Problem


@dataclass
class State:
    """One iterate of a solver, as the driver sees it."""

    M: Any
    cost: float
    egrad: Any
    grad: Any
    grad_norm: float
    iteration: int = 0
    accepted: bool = True
    info: dict = field(default_factory=dict)
    stop_reason: str | None = None
    stop_converged: bool = False
    memory: dict = field(default_factory=dict)
    #: the problem's gradient scale, set by the driver (None until known)
    grad_scale: float | None = None
    #: the gradient norm the driver's rule accepts, tol · grad_scale, set by the driver (None
    #: until known): a solver that runs a foreign optimizer to its own stop passes it on
    grad_tol: float | None = None
    #: False when ``cost``, ``grad`` and ``grad_norm`` are mini-batch estimates (a stochastic
    #: solver): the driver then certifies only on a full gradient (:mod:`ldr.core.stopping`)
    exact: bool = True
    #: what is left of the run's ``max_iter`` (iterations plus Hessian-vector products), set
    #: by the driver before each step: an inner solve stops there
    work_left: float = float("inf")


class Solver:
    """Base class: subclasses set ``name`` and implement ``step`` (and maybe ``init``)."""

    name = "solver"
    needs: tuple[str, ...] = ()
    #: the relative gradient tolerance of ``ldr.solve(tol=None)`` with this solver last in
    #: the chain, in float64: one it reaches in floating point (:mod:`ldr.core.stopping`)
    default_tol: float = 1e-8
    #: True for a spectral solver (ISM, SCF), whose step is an eigenproblem for one
    #: orthonormal d×r point: it runs only where the manifold's ``orthonormal_matrix`` is
    #: True (not on a product, a stack or a Euclidean factor)
    single_orthonormal_factor: bool = False

    def check_problem(self, problem: Problem) -> None:
        """Raise a clear error when the objective lacks an oracle this solver needs, or lives
        on a manifold it cannot handle (``single_orthonormal_factor``)."""
        missing = [m for m in self.needs if not problem.objective.available(m)]
        if missing:
            raise ValueError(
                f"solver {self.name!r} needs the objective to define {', '.join(missing)}; "
                f"{type(problem.objective).__name__} does not"
                + (" (backend='numpy' differentiates nothing: write it, or name an autodiff "
                   "backend)" if problem.objective.backend == "numpy" else "")
            )
        geom = problem.manifold
        if self.single_orthonormal_factor and not geom.orthonormal_matrix:
            raise ValueError(f"solver {self.name!r} needs a Stiefel or Grassmann objective; "
                             f"{type(problem.objective).__name__} lives on {geom}")

    def evaluate(self, problem: Problem, M, cost: float | None = None, **kw) -> State:
        """The State at ``M``: cost (pass it if known), Euclidean and Riemannian gradient."""
        cost = problem.cost(M) if cost is None else cost
        G = problem.egrad(M)
        grad = problem.rgrad(M, G)
        return State(M=M, cost=cost, egrad=G, grad=grad,
                     grad_norm=problem.manifold.norm(grad), **kw)

    def init(self, problem: Problem, M0) -> State:
        self.check_problem(problem)
        return self.evaluate(problem, M0)

    def step(self, problem: Problem, state: State) -> State:  # pragma: no cover - abstract
        raise NotImplementedError

    def __repr__(self) -> str:
        opts = ", ".join(f"{k}={v!r}" for k, v in vars(self).items() if not k.startswith("_"))
        return f"{type(self).__name__}({opts})"
