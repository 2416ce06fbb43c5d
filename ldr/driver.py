"""The driver: one loop, one clock, one set of stopping rules for every solver.

:func:`solve` calls ``solver.init`` once and ``solver.step`` until a stopping rule fires. The
rules are checked after every iteration in this fixed order, and the first that holds is the
run's ``reason``:

1. the ``callback`` returned True                          (not converged)
2. the iterate's cost is NaN or infinite                   (not converged)
3. Riemannian gradient norm ``‖grad f(M)‖ ≤ gtol · scale``  (converged)
4. the solver's own reason (radius collapse, line search failure, eigengap lost, ...)
5. step ``‖M_k − M_{k−1}‖ ≤ xtol``, measured on the manifold actually solved on: the largest
   principal-angle sine on a Grassmann factor, the spectral norm of the difference on a
   Stiefel factor (where rotating inside a fixed span is progress) and the relative Frobenius
   distance on a Euclidean one — the largest over the factors of a product (accepted steps
   only; 0 disables the rule, as for gtol and ftol).  For a fixed-point iteration M ← G(M)
   that reports its residual ``sin θ_max(M_k, G(M_k))`` as ``info["residual"]`` (SCF), that
   residual instead, so that an extrapolated step that happens to be short is not taken for a
   fixed point
6. relative cost change ``|f_k − f_{k−1}| ≤ ftol·max(|f_k|, 1e-300)`` (accepted steps only)
7. iterations ``≥ max_iter``                                (not converged)
8. time ``≥ max_time`` seconds                              (not converged)

**Only the gradient rule certifies.**  Rules 5 and 6 say the iterates stopped moving, not that
they reached a critical point: they report ``converged=True`` only when the gradient norm is
also within ``1e3 · gtol · scale`` (the default gtol = 1e-8 when gtol = 0 disables the
gradient rule); otherwise the run stops as *stalled* (not converged), with both numbers in the
reason.  Solvers that compute no gradient (SCF, whose fixed points are not
critical points of the cost) converge on their residual alone.

**Scale-invariant tolerance.**  ``scale`` is the problem's typical gradient norm
(:meth:`ldr.problem.Problem.gradient_scale`: the larger of the Riemannian gradient norms at the
start and at a fixed reference point), so multiplying the data by a constant changes neither
where a solver stops nor whether it says it converged — an absolute tolerance would stop a
run on 1e-4·X at once.  Pass ``gtol_scale=1.0`` for an absolute ``gtol``, as in Manopt and
pymanopt (whose gradient tolerances are absolute, as is scipy.optimize's ``gtol``; scipy's
``ftol`` is relative).

A rejected step (trust region) leaves ``M`` unchanged; rules 5–6 ignore it so that "no
change" is never mistaken for convergence.  A chain ``["ism", "trust-region"]`` runs each
solver in turn under the same rules, each starting where the previous stopped.

**Defaults.**  ``solver=None`` picks the objective's ``default_solver`` (each objective's
docstring says which, and why) or, failing that, ``["ism", "trust-region"]`` for an objective
with a Φ-oracle and ``"trust-region"`` otherwise.  ``M0=None`` starts from the first solver's
own start (ISM: the eigenvectors of Φ₀), else the objective's ``heuristic()``, else a random
point drawn from ``seed`` — which defaults to 0, so two identical calls return identical
results.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence

import numpy as np

from ldr.objective import Objective
from ldr.problem import OracleError, Problem
from ldr.result import Result, StageSummary, Trace

STALL_FACTOR = 1e3
"""A step or cost-change stop counts as converged only within this factor of gtol·scale."""


def default_solver(objective: Objective):
    """The solver :func:`ldr.solve` uses when none is given: ``objective.default_solver`` if set,
    else ``["ism", "trust-region"]`` with a Φ-oracle (ISM's spectral steps, then a
    second-order polish that certifies), else ``"trust-region"``."""
    chosen = getattr(objective, "default_solver", None)
    if chosen is not None:
        return chosen
    return ["ism", "trust-region"] if objective.provides("phi") else "trust-region"


def initial_point(problem: Problem, M0=None, seed=0, solver=None, orthonormalize=False):
    """Resolve ``M0``: an array (tuple on a product), ``"random"``, ``"heuristic"``, or None —
    the solver's own default start (ISM: the eigenvectors of Φ₀), else the objective's
    ``heuristic()``, else a random point from ``seed``.  An array must have orthonormal
    columns unless ``orthonormalize`` (then the nearest such matrix, same span, is used)."""
    geom = problem.manifold
    if M0 is None and solver is not None and hasattr(solver, "default_start"):
        start = solver.default_start(problem)
        if start is not None:
            return geom.validate_point(start, f"{solver.name} default start")
    if M0 is None and problem.provides("heuristic"):
        return geom.validate_point(problem.objective.heuristic(), "heuristic()")
    if M0 is None or (isinstance(M0, str) and M0 == "random"):
        return geom.random_point(np.random.default_rng(seed))
    if isinstance(M0, str):
        if M0 != "heuristic":
            raise ValueError(f"M0: expected an array, 'random' or 'heuristic', got {M0!r}")
        if not problem.provides("heuristic"):
            raise ValueError(
                f"M0='heuristic': {type(problem.objective).__name__} defines no heuristic()")
        return geom.validate_point(problem.objective.heuristic(), "heuristic()")
    return geom.validate_point(M0, "M0", orthonormalize=orthonormalize,
                               remedy="pass orthonormalize=True to use the orthonormal basis "
                                      "nearest to it (same column span), or "
                                      "ldr.manifolds.orthonormalize(M0)")


def _solver_list(solver) -> list:
    from ldr.solvers import get_solver

    specs = list(solver) if isinstance(solver, Sequence) and not isinstance(solver, str) \
        else [solver]
    if not specs:
        raise ValueError("solver: an empty chain was given")
    return [get_solver(s) for s in specs]


def _check_tolerances(gtol, xtol, ftol, max_iter, max_time, gtol_scale):
    for name, value in [("gtol", gtol), ("xtol", xtol), ("ftol", ftol), ("max_time", max_time)]:
        if not (isinstance(value, (int, float)) and value >= 0) or np.isnan(value):
            raise ValueError(f"{name}: must be a non-negative number, got {value!r}")
    if isinstance(max_iter, bool) or not isinstance(max_iter, (int, np.integer)) or max_iter < 0:
        raise ValueError(f"max_iter: must be a non-negative integer, got {max_iter!r}")
    if not (isinstance(gtol_scale, str) and gtol_scale == "auto") and not (
            isinstance(gtol_scale, (int, float)) and not isinstance(gtol_scale, bool)
            and np.isfinite(gtol_scale) and gtol_scale > 0):
        raise ValueError(f"gtol_scale: expected 'auto' or a positive number (1.0 makes gtol "
                         f"absolute), got {gtol_scale!r}")


def solve(
    objective: Objective,
    solver=None,
    M0=None,
    *,
    orthonormalize: bool = False,
    seed=0,
    gtol: float = 1e-8,
    gtol_scale="auto",
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
    solver : str, Solver, list of them, or None
        ``"gradient"``, ``"conjugate-gradient"``, ``"trust-region"``, ``"pymanopt"``,
        ``"ism"``, ``"scf"``; a list chains them, each stage starting where the last
        stopped.  None (default): the objective's default
        (:func:`~ldr.driver.default_solver`; each objective's docstring names it).
    M0 : array, tuple of arrays, "random", "heuristic" or None
        Start point (orthonormal); ``"random"`` draws one from ``seed``; None (default) is
        the first solver's own start where it has one (ISM: the minimizing eigenvectors of
        Φ₀), else the objective's ``heuristic()``, else a random point from ``seed``.
    orthonormalize : bool, default False
        For an array ``M0``: replace each Stiefel or Grassmann factor by the nearest matrix
        with orthonormal columns (the polar factor UVᵀ of M0 = USVᵀ, which spans the same
        subspace) instead of rejecting a non-orthonormal start; Euclidean factors are used
        as given.  Columns that are linearly dependent are still an error.  False (default):
        a non-orthonormal ``M0`` is a ValueError that names this option.
    seed : int, numpy.random.Generator or None
        The only source of randomness; default 0, so identical calls give identical results
        (None draws fresh entropy).
    gtol : float
        Gradient tolerance, relative: the run converges when ‖grad f(M)‖ ≤ gtol · scale
        (default 1e-8: the cost is then optimal to about gtol² relative where the Hessian is
        well conditioned).
    gtol_scale : "auto" or float
        ``scale`` above: "auto" (default) is the problem's typical gradient norm
        (:meth:`~ldr.problem.Problem.gradient_scale`), which makes the stopping point
        independent of the data's units; a number fixes it (1.0: an absolute ``gtol``).
    xtol, ftol, max_iter, max_time :
        Stopping rules (module docstring); ``max_iter`` is per stage, ``max_time`` in all.
    callback : callable(state) -> bool, optional
        Called with the solver's State at the start and after every iteration; returning
        True stops the run.
    certify : bool
        Attach a :class:`~ldr.result.Certificate` (second-order, and global where the
        objective has a global test) to the result.

    Returns
    -------
    Result
        ``converged`` is True only when the gradient rule fired, or a step/cost-change rule
        fired within ``1e3 · gtol · scale`` of it (module docstring); a run that stalled, hit
        a budget, met a non-finite cost or an oracle error says so in ``reason``.

    Raises
    ------
    ValueError
        Bad arguments, a start point off the manifold or with a non-finite cost, or an
        oracle (egrad, ehvp, phi, pencil) answering with the wrong shape or non-finite
        values at the start, or of the wrong shape at any time
        (:class:`~ldr.problem.OracleError`).  Past the start, non-finite oracle values end the
        run (not converged) with the message as its reason.
    """
    _check_tolerances(gtol, xtol, ftol, max_iter, max_time, gtol_scale)
    if not isinstance(orthonormalize, bool):
        raise ValueError(f"orthonormalize: expected True or False, got {orthonormalize!r}")
    if callback is not None and not callable(callback):
        raise ValueError(f"callback: expected a callable, got {callback!r}")
    problem = Problem(objective)
    solvers = _solver_list(default_solver(objective) if solver is None else solver)
    for s in solvers:
        s.check_problem(problem)
    start = time.perf_counter()  # the start point (e.g. ISM's Φ₀ eigenvectors) is timed too
    M = initial_point(problem, M0, seed, solvers[0], orthonormalize)
    geom = problem.manifold
    trace = Trace()
    stages: list[StageSummary] = []
    n_total = 0
    state = None
    reason, converged = "", False
    scale = None if gtol_scale == "auto" else float(gtol_scale)
    problem.gscale = scale

    for stage, s in enumerate(solvers):
        state = s.init(problem, M)
        if stage == 0 and not np.isfinite(state.cost):
            raise ValueError(f"cost(M0) is {state.cost}: the start point lies outside the "
                             "cost's domain (or the cost overflows there); pass another M0")
        if scale is None and np.isfinite(state.grad_norm):
            scale = problem.gradient_scale(grad_norm=state.grad_norm)
            problem.gscale = scale
        tol = gtol * scale if scale is not None else np.nan
        # gtol = 0 disables the gradient rule; the stall test then uses the default 1e-8
        stall_tol = (gtol or 1e-8) * scale if scale is not None else np.nan
        base_iter = state.iteration
        row = {"iteration": n_total, "time": time.perf_counter() - start, "cost": state.cost,
               "grad_norm": state.grad_norm, "change": np.nan, "stage": stage, **state.info}
        trace.append(row)
        prev, change = None, np.nan
        while True:
            reason, converged = _stop(state, prev, change, callback, tol, stall_tol, xtol,
                                      ftol, max_iter, max_time, start, base_iter)
            if reason:
                break
            prev = state
            try:
                state = s.step(problem, prev)
            except OracleError as exc:
                if exc.wrong_shape:
                    raise
                state, reason, converged = prev, f"stopped: {exc}", False
                break
            change = geom.change(prev.M, state.M) if state.accepted else 0.0
            n_total += state.iteration - prev.iteration
            trace.append({"iteration": n_total, "time": time.perf_counter() - start,
                          "cost": state.cost, "grad_norm": state.grad_norm, "change": change,
                          "stage": stage, **state.info})
        if not converged and hasattr(s, "finalize"):  # a converged run keeps its point
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
                    solver=chain, stages=stages, counts=dict(problem.counts),
                    grad_scale=np.nan if scale is None else scale)
    if certify:
        from ldr.certificate import certificate

        result.certificate = certificate(problem, state.M, gtol=gtol, gtol_scale=scale)
    return result


def _gnorm(state) -> str:
    """``(gradient norm …)`` for a reason, or a note that the solver does not compute it."""
    if math.isnan(state.grad_norm):
        return "(the solver computes no gradient)"
    return f"(gradient norm {state.grad_norm:.3e})"


def _small_move(what: str, state, tol: float) -> tuple[str, bool]:
    """A step or cost-change rule fired: converged only near a critical point (``tol``:
    gtol·scale, with the default gtol when gtol is 0)."""
    g = state.grad_norm
    if math.isnan(g):
        return f"{what} (the solver computes no gradient)", True
    if g <= STALL_FACTOR * tol:
        return f"{what} (gradient norm {g:.3e})", True
    return (f"stalled: {what}, but the gradient norm {g:.3e} is above 1e3·gtol·scale = "
            f"{STALL_FACTOR * tol:.1e}: not a critical point (try another solver, a chain "
            "ending in 'trust-region', or xtol=0)"), False


def _stop(state, prev, change, callback, tol, stall_tol, xtol, ftol, max_iter, max_time, start,
          base_iter):
    """The first stopping rule that holds, as ``(reason, converged)``; ``("", False)`` if none."""
    if callback is not None and callback(state):
        return "stopped by callback", False
    if not math.isfinite(state.cost):
        return (f"the cost is {state.cost} at the current iterate (outside its domain, or an "
                "overflow)"), False
    if state.grad_norm <= tol:
        return f"gradient norm {state.grad_norm:.3e} ≤ gtol·scale {tol:.1e}", True
    if state.stop_reason:
        if state.stop_converged:
            return _small_move(state.stop_reason, state, stall_tol)
        return state.stop_reason, False
    if prev is not None and state.accepted:
        residual = state.info.get("residual")
        if xtol > 0 and residual is not None:  # a fixed-point iteration's own measure
            if residual <= xtol:
                return _small_move(f"fixed-point residual {residual:.3e} ≤ xtol {xtol:.1e}",
                                   state, stall_tol)
        elif xtol > 0 and change <= xtol:
            return _small_move(f"step {change:.3e} ≤ xtol {xtol:.1e}", state, stall_tol)
        rel = abs(state.cost - prev.cost) / max(abs(state.cost), 1e-300)
        if ftol > 0 and rel <= ftol:
            return _small_move(f"relative cost change {rel:.3e} ≤ ftol {ftol:.1e}", state,
                               stall_tol)
    if state.iteration - base_iter >= max_iter:
        return f"max_iter {max_iter} reached {_gnorm(state)}", False
    if time.perf_counter() - start >= max_time:
        return f"max_time {max_time:g}s reached {_gnorm(state)}", False
    return "", False
