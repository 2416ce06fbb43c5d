"""The driver: one loop, one clock, one set of stopping rules for every solver.

:func:`solve` calls ``solver.init`` once and ``solver.step`` until a stopping rule fires. The
rules are checked after every iteration in this fixed order, and the first that holds is the
run's ``reason``:

1. the ``callback`` returned True                          (not converged)
2. Riemannian gradient norm ``‖grad f(M)‖ ≤ gtol``         (converged)
3. the solver's own reason (radius collapse, line search failure, eigengap lost, ...)
4. subspace change ``sin θ_max(M_k, M_{k−1}) ≤ xtol``      (converged; accepted steps only;
   0 disables the rule, as for ftol) — or, for a fixed-point iteration M ← G(M) that reports
   its residual ``sin θ_max(M_k, G(M_k))`` as ``info["residual"]`` (SCF), that residual
   instead, so that an extrapolated step that happens to be short is not taken for a
   fixed point
5. relative cost change ``|f_k − f_{k−1}| ≤ ftol·max(|f_k|, 1e-300)``
                                                            (converged; accepted steps only)
6. iterations ``≥ max_iter``                                (not converged)
7. time ``≥ max_time`` seconds                              (not converged)

A rejected step (trust region) leaves ``M`` unchanged; rules 4–5 ignore it so that "no
change" is never mistaken for convergence.  A chain ``["ism", "trust-region"]`` runs each
solver in turn under the same rules, each starting where the previous stopped.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

import numpy as np

from ldr.objective import Objective
from ldr.problem import Problem
from ldr.result import Result, StageSummary, Trace


def initial_point(problem: Problem, M0=None, seed=None, solver=None):
    """Resolve ``M0``: an array (tuple on a product), ``"random"``, ``"heuristic"``, or None
    (the solver's own default start, e.g. ISM's eigenvectors of Φ₀, else random)."""
    geom = problem.manifold
    if M0 is None and solver is not None and hasattr(solver, "default_start"):
        start = solver.default_start(problem)
        if start is not None:
            return geom.validate_point(start, f"{solver.name} default start")
    if M0 is None or (isinstance(M0, str) and M0 == "random"):
        return geom.random_point(np.random.default_rng(seed))
    if isinstance(M0, str):
        if M0 != "heuristic":
            raise ValueError(f"M0: expected an array, 'random' or 'heuristic', got {M0!r}")
        if not problem.provides("heuristic"):
            raise ValueError(
                f"M0='heuristic': {type(problem.objective).__name__} defines no heuristic()")
        return geom.validate_point(problem.objective.heuristic(), "heuristic()")
    return geom.validate_point(M0, "M0")


def _solver_list(solver) -> list:
    from ldr.solvers import get_solver

    specs = list(solver) if isinstance(solver, Sequence) and not isinstance(solver, str) \
        else [solver]
    if not specs:
        raise ValueError("solver: an empty chain was given")
    return [get_solver(s) for s in specs]


def _check_tolerances(gtol, xtol, ftol, max_iter, max_time):
    for name, value in [("gtol", gtol), ("xtol", xtol), ("ftol", ftol), ("max_time", max_time)]:
        if not (isinstance(value, (int, float)) and value >= 0) or np.isnan(value):
            raise ValueError(f"{name}: must be a non-negative number, got {value!r}")
    if isinstance(max_iter, bool) or not isinstance(max_iter, (int, np.integer)) or max_iter < 0:
        raise ValueError(f"max_iter: must be a non-negative integer, got {max_iter!r}")


def solve(
    objective: Objective,
    solver="trust-region",
    M0=None,
    *,
    seed=None,
    gtol: float = 1e-6,
    xtol: float = 1e-10,
    ftol: float = 0.0,
    max_iter: int = 1000,
    max_time: float = float("inf"),
    callback: Callable | None = None,
    certify: bool = False,
) -> Result:
    """Minimize ``objective`` with ``solver`` (a name, an instance, or a chain of them).

    Parameters
    ----------
    objective : ldr.Objective
    solver : str, Solver or list of them
        ``"gradient"``, ``"trust-region"``, ``"pymanopt"`` (and ``"ism"``, ``"scf"`` where
        installed); a list chains them, each stage starting where the last stopped.
    M0 : array, tuple of arrays, "random", "heuristic" or None
        Start point (orthonormal); ``"random"`` draws one from ``seed``; None (default) is
        the first solver's own start where it has one (ISM: the minimizing eigenvectors of
        Φ₀) and a random point otherwise.
    seed : int, numpy.random.Generator or None
        The only source of randomness.
    gtol, xtol, ftol, max_iter, max_time :
        Stopping rules (module docstring); ``max_iter`` is per stage, ``max_time`` in all.
    callback : callable(state) -> bool, optional
        Called with the solver's State at the start and after every iteration; returning
        True stops the run.
    certify : bool
        Attach a second-order :class:`~ldr.result.Certificate` to the result.

    Returns
    -------
    Result
    """
    _check_tolerances(gtol, xtol, ftol, max_iter, max_time)
    if callback is not None and not callable(callback):
        raise ValueError(f"callback: expected a callable, got {callback!r}")
    problem = Problem(objective)
    solvers = _solver_list(solver)
    for s in solvers:
        s.check_problem(problem)
    start = time.perf_counter()  # the start point (e.g. ISM's Φ₀ eigenvectors) is timed too
    M = initial_point(problem, M0, seed, solvers[0])
    geom = problem.manifold
    trace = Trace()
    stages: list[StageSummary] = []
    n_total = 0
    state = None
    reason, converged = "", False

    for stage, s in enumerate(solvers):
        state = s.init(problem, M)
        base_iter = state.iteration
        row = {"iteration": n_total, "time": time.perf_counter() - start, "cost": state.cost,
               "grad_norm": state.grad_norm, "change": np.nan, "stage": stage, **state.info}
        trace.append(row)
        prev, change = None, np.nan
        while True:
            reason, converged = _stop(state, prev, change, callback, gtol, xtol, ftol,
                                      max_iter, max_time, start, base_iter)
            if reason:
                break
            prev = state
            state = s.step(problem, prev)
            change = geom.change(prev.M, state.M) if state.accepted else 0.0
            n_total += state.iteration - prev.iteration
            trace.append({"iteration": n_total, "time": time.perf_counter() - start,
                          "cost": state.cost, "grad_norm": state.grad_norm, "change": change,
                          "stage": stage, **state.info})
        if hasattr(s, "finalize"):
            final = s.finalize(problem, state)
            if final is not state:
                reason += f"; returned the best iterate seen (cost {final.cost:.10g})"
                state = final
        stages.append(StageSummary(s.name, state.iteration - base_iter, reason, converged))
        M = state.M

    elapsed = time.perf_counter() - start
    chain = " → ".join(s.name for s in solvers)
    if len(solvers) > 1:
        reason = f"{solvers[-1].name}: {reason}"
    result = Result(M=state.M, cost=state.cost, converged=converged, reason=reason,
                    n_iter=n_total, time=elapsed, grad_norm=state.grad_norm, trace=trace,
                    solver=chain, stages=stages, counts=dict(problem.counts))
    if certify:
        from ldr.certificate import certificate

        result.certificate = certificate(problem, state.M, gtol=gtol)
    return result


def _gnorm(state) -> str:
    """``(gradient norm …)`` for a reason, or a note that the solver does not compute it."""
    if np.isnan(state.grad_norm):
        return "(the solver computes no gradient)"
    return f"(gradient norm {state.grad_norm:.3e})"


def _stop(state, prev, change, callback, gtol, xtol, ftol, max_iter, max_time, start, base_iter):
    """The first stopping rule that holds, as ``(reason, converged)``; ``("", False)`` if none."""
    if callback is not None and callback(state):
        return "stopped by callback", False
    if state.grad_norm <= gtol:
        return f"gradient norm {state.grad_norm:.3e} ≤ gtol {gtol:.1e}", True
    if state.stop_reason:
        return state.stop_reason, state.stop_converged
    if prev is not None and state.accepted:
        residual = state.info.get("residual")
        if xtol > 0 and residual is not None:  # a fixed-point iteration's own measure
            if residual <= xtol:
                return (f"fixed-point residual {residual:.3e} ≤ xtol {xtol:.1e} "
                        f"{_gnorm(state)}"), True
        elif xtol > 0 and change <= xtol:
            return (f"subspace change {change:.3e} ≤ xtol {xtol:.1e} "
                    f"{_gnorm(state)}"), True
        rel = abs(state.cost - prev.cost) / max(abs(state.cost), 1e-300)
        if ftol > 0 and rel <= ftol:
            return (f"relative cost change {rel:.3e} ≤ ftol {ftol:.1e} "
                    f"{_gnorm(state)}"), True
    if state.iteration - base_iter >= max_iter:
        return f"max_iter {max_iter} reached {_gnorm(state)}", False
    if time.perf_counter() - start >= max_time:
        return f"max_time {max_time:g}s reached {_gnorm(state)}", False
    return "", False
