"""Run any pymanopt optimizer on an ``ldr.Objective`` — for cross-checks.

:func:`pymanopt_problem` turns an objective into a ``pymanopt.Problem`` on the same manifold,
either with the objective's own oracles (``backend="oracles"``: cost, egrad, ehvp as
written, hand-written or from the objective's backend) or by letting pymanopt differentiate
the cost itself (``backend="autograd"``: with its autograd backend, or its JAX or PyTorch
backend for a cost written for them), which is what a pymanopt user would do.

:class:`Pymanopt` is a solver for the driver.  pymanopt's optimizers own their loop, so the
adapter runs the whole optimization as **one driver step** and reports pymanopt's own
stopping criterion as the stage's reason; pymanopt's log (``OptimizerResult.log``) is kept in
the step's ``info["log"]`` — per-iteration entries only for optimizers that log them with
``log_verbosity=1`` (pymanopt 2.2.1's SteepestDescent does; its TrustRegions logs none).
Configure the optimizer's stopping rules on the optimizer.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ldr.core.errors import ParameterError
from ldr.core.objective import Objective
from ldr.core.problem import Problem
from ldr.manifolds import Product
from ldr.solvers.base import Solver, State

if TYPE_CHECKING:  # pymanopt imports every autodiff backend it finds: only when used
    import pymanopt


def pymanopt_problem(problem: Problem | Objective, backend: str = "oracles") -> pymanopt.Problem:
    """A ``pymanopt.Problem`` for an objective (or an ``ldr`` Problem, whose counters count).

    Parameters
    ----------
    backend : {"oracles", "autograd"}
        ``"oracles"`` uses the objective's cost/egrad/ehvp; ``"autograd"`` gives pymanopt only
        the cost and lets its own backend derive the rest: its autograd backend, or its JAX
        or PyTorch backend for an objective with ``backend="jax"`` or ``"torch"``.
    """
    import pymanopt

    if isinstance(problem, Objective):
        problem = Problem(problem)
    if backend not in ("oracles", "autograd"):
        raise ParameterError("backend", f"expected 'oracles' or 'autograd', got {backend!r}")
    manifold = problem.manifold.pymanopt
    product = isinstance(problem.manifold, Product)
    k = len(problem.manifold.factors)

    def point(args):
        return tuple(args) if product else args[0]

    def out(G):
        return list(G) if product else G

    if backend == "autograd":
        objective = problem.objective
        # pymanopt's own backend for the objective's: autograd, jax or pytorch
        decorate = {"jax": pymanopt.function.jax, "torch": pymanopt.function.pytorch}.get(
            objective.backend, pymanopt.function.autograd)
        raw = objective.derivatives().raw_cost if objective.backend in ("jax", "torch") \
            else objective.cost

        @decorate(manifold)
        def ag_cost(*args):
            problem.counts["cost"] += 1
            return raw(point(args))

        return pymanopt.Problem(manifold, ag_cost)

    @pymanopt.function.numpy(manifold)
    def cost(*args):
        return problem.cost(point(args))

    @pymanopt.function.numpy(manifold)
    def egrad(*args):
        return out(problem.egrad(point(args)))

    @pymanopt.function.numpy(manifold)
    def ehess(*args):
        return out(problem.ehvp(point(args[:k]), point(args[k:])))

    return pymanopt.Problem(manifold, cost, euclidean_gradient=egrad, euclidean_hessian=ehess)


class Pymanopt(Solver):
    """Adapter: one driver step = one full run of a pymanopt optimizer.

    Parameters
    ----------
    optimizer : pymanopt optimizer, optional
        Default ``pymanopt.optimizers.TrustRegions(verbosity=0)``, its ``min_gradient_norm``
        set at each run to half the driver's accepted gradient norm (``State.grad_tol``), so
        that its stop, judged on its own evaluation of the norm, meets ldr's gradient rule
        (pymanopt's default is an absolute 1e-6).
    backend : {"oracles", "autograd"}
        See :func:`~ldr.solvers.pymanopt_adapter.pymanopt_problem`.
    """

    name = "pymanopt"

    def __init__(self, optimizer=None, backend: str = "oracles"):
        self.default = optimizer is None
        if optimizer is None:
            import pymanopt.optimizers

            optimizer = pymanopt.optimizers.TrustRegions(verbosity=0)
        if not hasattr(optimizer, "run"):
            raise ParameterError("optimizer", f"expected a pymanopt optimizer, got {optimizer!r}")
        if backend not in ("oracles", "autograd"):
            raise ParameterError("backend", f"expected 'oracles' or 'autograd', got {backend!r}")
        self.optimizer = optimizer
        self.backend = backend

    def step(self, problem: Problem, state: State) -> State:
        pproblem = pymanopt_problem(problem, self.backend)
        product = isinstance(problem.manifold, Product)
        M0 = list(state.M) if product else state.M
        optimizer = self.optimizer
        if self.default and state.grad_tol is not None and np.isfinite(state.grad_tol) \
                and state.grad_tol > 0:
            import pymanopt.optimizers

            optimizer = pymanopt.optimizers.TrustRegions(
                verbosity=0, min_gradient_norm=0.5 * state.grad_tol)
        res = optimizer.run(pproblem, initial_point=M0)
        M = tuple(np.asarray(m, float) for m in res.point) if product \
            else np.asarray(res.point, float)
        iters = int(res.iterations or 0)
        new = self.evaluate(problem, M, iteration=state.iteration + max(iters, 1),
                            info={"log": res.log, "pymanopt_time": res.time})
        criterion = str(res.stopping_criterion).strip()
        new.stop_reason = f"pymanopt {type(optimizer).__name__}: {criterion}"
        new.stop_converged = "grad norm" in criterion.lower()
        return new
