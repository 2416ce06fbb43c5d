"""The driver: one loop, one clock, one set of stopping rules for every solver.

:func:`solve` calls ``solver.init`` once and ``solver.step`` until a stopping rule fires. The
rules are checked after every iteration in this fixed order, and the first that holds is the
run's ``reason``:

the stopping rules of :mod:`ldr.core.stopping` (gradient, the solver's own reason, step, cost
change, budgets; only the gradient rule certifies), with options checked once as a frozen
:class:`~ldr.core.stopping.StopOptions`.  The gradient tolerance is relative to the problem's
gradient scale (:meth:`ldr.core.problem.Problem.gradient_scale`), which the driver computes at the
start and hands to the solver on every state it passes (``State.grad_scale``): a solver that
needs a scale-free inner tolerance (the trust region's CG) reads it there.

A rejected step (trust region) leaves ``M`` unchanged; rules 5–6 ignore it so that "no
change" is never mistaken for convergence.  A chain ``["ism", "trust-region"]`` runs each
solver in turn under the same rules, each starting where the previous stopped; the budgets
``max_iter`` (iterations of all stages together) and ``max_time`` hold for the whole chain,
and a stage that reaches one ends the chain (the reason names the stages not run).  A stage
whose last iterate met the gradient rule (exactly, not on an estimate) certifies the chain:
the later stages — a polish, which would stop at its start — are not run (each costs a cost
and a gradient, full passes over the data at large n), and are listed in ``Result.stages``
with 0 iterations and that reason.  A chain's reason is that of the last stage that ran,
prefixed with its name (``"ism: gradient norm … ≤ tol·scale …"``).

**Stochastic solvers** (``"sgd"``, ``"adam"``, ``"svrg"``) on an objective that is a sum of
terms (``n_terms``, ``batch``: :class:`~ldr.core.objective.Objective`) report mini-batch estimates
(``State.exact`` False).  Such a stage never certifies on an estimate: whatever rule ends
it, the driver evaluates the full cost and gradient at its last iterate, and the run is
``converged`` only if that full gradient meets ``tol · scale``; the reason then reads
"stochastic run ended (…); full gradient ‖g‖ = … ≤ (or above) tol …".  A solver built with
``unchecked`` (a route's reason: one exact evaluation beyond its budget) is not checked: the
run is reported not converged, and the reason reads "stochastic run ended (…); the full
gradient was not evaluated: …".

**Continuation.**  An objective that provides ``coarse_problem()`` — an easier problem of the
same shape whose answer starts this one (WDA: reg × 10) — gets, when ``start`` is None, the
first solver's own start taken at the coarse problem's answer, which the driver solves first
with that solver (``xtol=1e-6``).  No objective calls the driver.

**Interrupt and resume.**  A ``KeyboardInterrupt`` (Ctrl-C) raised inside a step (an oracle)
or inside the ``callback`` ends the run at its last evaluated iterate — the step under way is
not taken — with ``reason`` starting ``"interrupted"`` and ``converged=False``: the best point
so far is never lost (only an interrupt before the start point was evaluated propagates).
``solve(obj, start=result)`` resumes from a previous :class:`~ldr.core.result.Result`: it starts at
``result.M`` and continues its trace, the iterations numbered on from ``result.n_iter`` (the
resumed start is one more row with that number, marked ``resumed``), its time and oracle
counts added to the new run's.

**Defaults.**  ``solver=None`` picks the objective's ``default_solver`` (each objective's
docstring says which, and why) or, failing that, ``["ism", "trust-region"]`` for an objective
with a Φ-oracle and ``"trust-region"`` otherwise.  ``start=None`` starts from the first solver's
own start (ISM: the eigenvectors of Φ₀), else the objective's ``heuristic()``, else a random
point drawn from ``random_state`` — which defaults to 0, so two identical calls return identical
results.
"""

from __future__ import annotations

import dataclasses
import math
import time
from collections.abc import Callable

import numpy as np

from ldr.core.deprecation import renamed_keywords
from ldr.core.errors import BudgetExceeded, ParameterError
from ldr.core.objective import Objective
from ldr.core.problem import OracleError, Problem, template_of
from ldr.core.result import Result, StageSummary, Trace, summed_counts
from ldr.core.stopping import StageRules, StopOptions, default_tol, first_rule
from ldr.data import arrays
from ldr.driver.certificate import certificate
from ldr.solvers import chain

#: the fixed-point tolerance of the coarse problem that starts a continuation (at least
#: 1e3·ε of the iterates' dtype: float32 iterates stagnate above 1e-6)
COARSE_XTOL = 1e-6


def default_solver(objective: Objective | type[Objective]):
    """The solver :func:`ldr.solve` uses when none is given: ``objective.default_solver`` if set,
    else ``["ism", "trust-region"]`` with a Φ-oracle (ISM's spectral steps, then a
    second-order polish that certifies), else ``"trust-region"`` — ``"lbfgs"`` in place of
    the trust region for a ``backend="numpy"`` objective without a hand-written ``ehvp``.
    ``objective`` may be an instance or a class (the docs' method table)."""
    chosen = getattr(objective, "default_solver", None)
    if chosen is not None:
        return chosen
    has_phi = (objective.provides("phi") if isinstance(objective, Objective)
               else objective.phi is not Objective.phi)
    second = ("trust-region" if not isinstance(objective, Objective)
              or objective.available("ehvp") else "lbfgs")
    return ["ism", second] if has_phi else second


INTERRUPTED = "interrupted"
#: the names of an earlier release (old → new), accepted with a FutureWarning
RENAMED = {"M0": "start", "seed": "random_state", "gtol": "tol", "gtol_scale": "tol_scale",
           "stage_max_iter": "max_iter"}


def _interrupted(state, where: str) -> str:
    return (f"{INTERRUPTED} (KeyboardInterrupt {where}); returned the last evaluated iterate "
            f"(cost {state.cost:.10g}, gradient norm {state.grad_norm:.3e}): pass this Result "
            "as start to resume")


def _full_check(problem: Problem, solver, state, reason: str, rules: StageRules,
                deadline: float):
    """The end of a stochastic stage (``state.exact`` False): the full cost and gradient at its
    last iterate, evaluated whatever the time budget (the answer is always checked), and the
    stage's ``(state, reason, converged)`` — converged only when that full gradient meets
    ``tol · scale``."""
    problem.deadline = math.inf
    try:
        full = solver.evaluate(problem, state.M)
    finally:
        problem.deadline = deadline
    full.iteration = state.iteration
    full.memory = state.memory
    full.info = dict(state.info)
    tol = rules.grad_tol
    ok = bool(full.grad_norm <= tol)
    return full, (f"stochastic run ended ({reason}); full gradient ‖g‖ = {full.grad_norm:.3e} "
                  f"{'≤' if ok else 'above'} tol·scale = {tol:.1e}"), ok


def initial_point(problem: Problem, start=None, random_state=0, solver=None,
                  orthonormalize=False, *,
                  max_time: float = float("inf")):
    """Resolve ``start``: an array (tuple on a product), ``"random"``, ``"heuristic"``, or None —
    the solver's own default start (ISM: the eigenvectors of Φ₀; SCF: those of ``pencil0``,
    or of the pencil at the answer of the objective's ``coarse_problem()`` when it has one),
    else the objective's ``heuristic()``, else a random point from ``random_state``.  An array
    must have orthonormal columns unless ``orthonormalize`` (then the nearest such matrix,
    same span, is used).  ``max_time`` bounds the coarse problem's solve."""
    geom = problem.manifold
    if start is None and solver is not None and hasattr(solver, "default_start"):
        at = None
        coarse = problem.objective.coarse_problem() if problem.provides("coarse_problem") \
            else None
        if coarse is not None:
            xtol = COARSE_XTOL if problem.template is None else max(
                COARSE_XTOL, 1e3 * arrays.eps(problem.template))
            coarse_result = solve(coarse, solver, xtol=xtol, max_time=max_time)
            if coarse_result.interrupted:  # Ctrl-C before this run had a point
                raise KeyboardInterrupt(coarse_result.reason)
            at = coarse_result.M
        own = solver.default_start(problem) if at is None else solver.default_start(problem, at)
        if own is not None:
            return geom.validate_point(own, f"{solver.name} default start")
    if start is None and problem.provides("heuristic"):
        return geom.validate_point(problem.objective.heuristic(), "heuristic()")
    if start is None or (isinstance(start, str) and start == "random"):
        return geom.random_point(np.random.default_rng(random_state))
    if isinstance(start, str):
        if start != "heuristic":
            raise ParameterError("start", f"expected an array, 'random' or 'heuristic', got "
                                          f"{start!r}")
        if not problem.provides("heuristic"):
            raise ParameterError("start", f"'heuristic': {type(problem.objective).__name__} "
                                          "defines no heuristic()")
        return geom.validate_point(problem.objective.heuristic(), "heuristic()")
    return geom.validate_point(start, "start", orthonormalize=orthonormalize,
                               remedy="pass orthonormalize=True to use the orthonormal basis "
                                      "nearest to it (same column span), or "
                                      "ldr.manifolds.orthonormalize(start)")


def solve(
    objective: Objective,
    solver=None,
    start=None,
    *,
    orthonormalize: bool = False,
    random_state=0,
    tol: float | None = None,
    tol_scale="auto",
    xtol: float = 1e-10,
    ftol: float = 0.0,
    fwindow: int = 1,
    max_iter: int = 1000,
    max_time: float = float("inf"),
    floor_patience: int = 10,
    callback: Callable | None = None,
    certify: bool = False,
    **renamed,
) -> Result:
    """Minimize ``objective`` with ``solver`` (a name, an instance, or a chain of them).

    Parameters
    ----------
    objective : ldr.Objective
    solver : str, Solver, list of them, or None
        ``"gradient"``, ``"conjugate-gradient"``, ``"lbfgs"``, ``"trust-region"``,
        ``"pymanopt"``, ``"ism"``, ``"scf"``, and the stochastic ``"sgd"``, ``"adam"``,
        ``"svrg"``; a list chains them, each stage starting where the last
        stopped.  None (default): the objective's default
        (:func:`~ldr.driver.loop.default_solver`; each objective's docstring names it).
    start : array, tuple of arrays, Result, "random", "heuristic" or None
        Start point (orthonormal); ``"random"`` draws one from ``random_state``; None
        (default) is the first solver's own start where it has one (ISM: the minimizing
        eigenvectors of Φ₀), else the objective's ``heuristic()``, else a random point from
        ``random_state``.  A :class:`~ldr.core.result.Result` resumes that run (module docstring):
        its point, its trace continued.
    orthonormalize : bool, default False
        For an array ``start``: replace each Stiefel or Grassmann factor by the nearest matrix
        with orthonormal columns (the polar factor UVᵀ of start = USVᵀ, which spans the same
        subspace) instead of rejecting a non-orthonormal start; Euclidean factors are used
        as given.  Columns that are linearly dependent are still an error.  False (default):
        a non-orthonormal ``start`` is a ValueError that names this option.
    random_state : int, numpy.random.Generator or None
        The only source of randomness; default 0, so identical calls give identical results
        (None draws fresh entropy).
    tol : float or None
        Gradient tolerance, relative: the run converges when ‖grad f(M)‖ ≤ tol · scale.
        None (default): the last solver's ``default_tol`` for float64 data — 1e-8 for the
        trust region (about √ε₆₄: the cost is then optimal to about tol² relative where the
        Hessian is well conditioned), 1e-6 for the line-search solvers, which stall at
        rounding level near 1e-8 — scaled by √(ε/ε₆₄) for data of a lower precision
        (:func:`~ldr.core.stopping.default_tol`: 2.3e-4 for float32 at 1e-8).
    tol_scale : "auto" or float
        ``scale`` above: "auto" (default) is the problem's typical gradient norm
        (:meth:`~ldr.core.problem.Problem.gradient_scale`), which makes the stopping point
        independent of the data's units; a number fixes it (1.0: an absolute ``tol``).
    max_iter : int, default 1000
        The most iterations of the whole run, every stage of a chain counted; a stage that
        reaches it ends the chain.
    max_time : float, default inf
        Seconds for the whole run, the start point and the certificate included.  It holds
        inside a step too: no oracle call starts that would overrun it
        (``ldr.core.problem.Problem.deadline``), and the run ends at its last iterate.  The start
        point is always evaluated (a run with ``max_time=0`` returns it).
    xtol, ftol, floor_patience :
        Stopping rules (:mod:`ldr.core.stopping`): the step, the relative cost change, and the
        iterations at the rounding floor that stop a run that can no longer reduce its
        gradient (0 disables a rule).
    fwindow : int
        The ``ftol`` rule compares the cost with the one ``fwindow`` accepted steps back
        (default 1: the last step).
    callback : callable(state) -> bool, optional
        Called with the solver's State at the start and after every iteration; returning
        True stops the run; raising ``KeyboardInterrupt`` ends it as interrupted (module
        docstring).
    certify : bool
        Attach a :class:`~ldr.core.result.Certificate` (second-order, and global where the
        objective has a global test) to the result; a run stopped at the rounding floor
        always gets one.

    Returns
    -------
    Result
        ``converged`` is True only when the final iterate meets the gradient rule
        (‖grad f‖ ≤ tol · scale; module docstring), whichever rule stopped it; a run that
        stalled, hit a budget, met a non-finite cost or an oracle error, or was interrupted,
        says so in ``reason``.

    Raises
    ------
    TypeError
        An unknown keyword argument.  The names of an earlier release (``M0``, ``seed``,
        ``gtol``, ``gtol_scale``) still work for one release and warn (FutureWarning).
    ValueError
        Bad arguments, a start point off the manifold or with a non-finite cost, or an
        oracle (egrad, ehvp, phi, pencil) answering with the wrong shape or non-finite
        values at the start, or of the wrong shape at any time
        (:class:`~ldr.core.problem.OracleError`).  Past the start, non-finite oracle values end the
        run (not converged) with the message as its reason.
    """
    if renamed:
        named = renamed_keywords("ldr.solve", renamed, RENAMED,
                                 {"start": start, "random_state": random_state, "tol": tol,
                                  "tol_scale": tol_scale, "max_iter": max_iter})
        start = named["start"]
        random_state = named["random_state"]
        tol = named["tol"]
        tol_scale = named["tol_scale"]
        max_iter = named["max_iter"]
    options = StopOptions(tol=1e-8 if tol is None else tol, tol_scale=tol_scale, xtol=xtol,
                          ftol=ftol, fwindow=fwindow, max_iter=max_iter, max_time=max_time,
                          floor_patience=floor_patience)
    if not isinstance(orthonormalize, bool):
        raise ParameterError("orthonormalize", f"expected True or False, got {orthonormalize!r}")
    if callback is not None and not callable(callback):
        raise ParameterError("callback", f"expected a callable, got {callback!r}")
    problem = Problem(objective)
    previous = start if isinstance(start, Result) else None
    if previous is not None:
        start = previous.M
    solvers = chain(default_solver(objective) if solver is None else solver)
    for s in solvers:
        s.check_problem(problem)
    began = time.perf_counter()  # the start point (e.g. ISM's Φ₀ eigenvectors) is timed too
    problem.deadline = began + max_time  # no oracle call starts that would overrun it
    M = initial_point(problem, start, random_state, solvers[0], orthonormalize,
                      max_time=max_time)
    if problem.template is None:  # the objective's arrays are NumPy: the start's namespace
        problem.template = template_of(objective, M)
    M = arrays.to_host(M) if problem.template is None else arrays.like(M, problem.template)
    # the last solver's default tol in this precision: the run's tol when none is given, and
    # the judge of a step, cost-change or floor stop when tol = 0 turns the gradient rule off
    solver_tol = default_tol(problem.template, solvers[-1])
    if tol is None:
        options = dataclasses.replace(options, tol=solver_tol)
    tol = options.tol
    geom = problem.manifold
    trace = Trace([dict(row) for row in previous.trace] if previous is not None else None)
    stages: list[StageSummary] = []
    n_total = 0 if previous is None else int(previous.n_iter)
    t_before = 0.0 if previous is None else float(previous.time)
    interrupted = False
    state = None
    reason = ""
    converged = False
    scale = None if tol_scale == "auto" else float(tol_scale)
    at_floor = False

    budget = ""
    iterations_done = 0  # max_iter counts the whole run (ldr.core.stopping, rule 8)
    certified = False
    for stage, s in enumerate(solvers):
        if stage > 0 and certified:  # the gradient rule fired on an exact state: a polish
            stages.append(StageSummary(s.name, 0, reason, True))  # would stop at its start
            continue
        ran = s.name  # the chain's reason is that of the last stage that ran
        # the first iterate is always evaluated (its cost, gradient and the gradient scale),
        # whatever the budget: a run returns at least its start point
        problem.deadline = math.inf if stage == 0 else began + max_time
        try:
            state = s.init(problem, M)
        except KeyboardInterrupt:
            if state is None:  # no point evaluated yet: nothing to return
                raise
            reason = _interrupted(state, f"as {s.name} started")
            converged = False
            interrupted = True
            stages.append(StageSummary(s.name, 0, reason, False))
            break
        except BudgetExceeded as exc:
            reason = f"max_time {max_time:.3g}s reached before {s.name} started: {exc}"
            converged = False
            budget = "max_time"
            stages.append(StageSummary(s.name, 0, reason, False))
            break
        if stage == 0 and not np.isfinite(state.cost):
            raise ValueError(f"cost(start) is {state.cost}: the start point lies outside the "
                             "cost's domain (or the cost overflows there); pass another start")
        if scale is None and np.isfinite(state.grad_norm):
            try:  # a sampled stochastic start estimates the reference gradient too
                scale = (s.estimated_scale(problem, state) if not state.exact
                         and hasattr(s, "estimated_scale") else
                         problem.gradient_scale(grad_norm=state.grad_norm,
                                                start=(state.M, state.cost)))
            except BudgetExceeded:  # a later stage out of time: the start's gradient
                scale = max(state.grad_norm, 1e-300)
            except KeyboardInterrupt:  # the start is evaluated: return it
                scale = max(state.grad_norm, 1e-300)
                interrupted = True
        problem.deadline = began + max_time
        state.grad_scale = scale
        rules = StageRules.for_stage(options, scale, state.iteration, began, callback,
                                     iterations_before=iterations_done,
                                     judge_tol=solver_tol)
        state.grad_tol = None if scale is None else rules.grad_tol
        row = {"iteration": n_total, "time": t_before + time.perf_counter() - began,
               "cost": state.cost, "grad_norm": state.grad_norm, "change": np.nan,
               "stage": stage, **state.info}
        if previous is not None and stage == 0:
            row["resumed"] = True
        trace.append(row)
        prev = None
        change = np.nan
        while True:
            if interrupted:  # while the start's gradient scale was computed
                reason = _interrupted(state, f"as {s.name} started")
                converged = False
                break
            try:
                reason, converged = first_rule(state, prev, change, rules)
            except KeyboardInterrupt:  # inside the callback: state is evaluated
                reason = _interrupted(state, "in the callback")
                converged = False
                interrupted = True
            if reason:
                break
            prev = state
            try:
                state = s.step(problem, prev)
            except KeyboardInterrupt:  # the step under way is not taken
                state = prev
                converged = False
                interrupted = True
                reason = _interrupted(prev, f"inside a {s.name} step")
                break
            except OracleError as exc:
                if exc.wrong_shape:
                    raise
                state = prev
                reason = f"stopped: {exc}"
                converged = False
                break
            except BudgetExceeded as exc:  # a step that would overrun max_time: not taken
                state = prev
                converged = False
                reason = (f"max_time {max_time:.3g}s reached inside a step: {exc} (gradient norm "
                          f"{prev.grad_norm:.3e})")
                break
            state.grad_scale = scale
            state.grad_tol = prev.grad_tol
            change = geom.change(prev.M, state.M) if state.accepted else 0.0
            n_total += state.iteration - prev.iteration
            trace.append({"iteration": n_total, "time": t_before + time.perf_counter() - began,
                          "cost": state.cost, "grad_norm": state.grad_norm, "change": change,
                          "stage": stage, **state.info})
        if not converged and hasattr(s, "finalize"):  # a converged run keeps its point
            try:
                final = s.finalize(problem, state)
            except (BudgetExceeded, KeyboardInterrupt):
                final = state
            if final is not state:
                reason += f"; returned the best iterate seen (cost {final.cost:.10g})"
                state = final
        iterations = state.iteration - rules.first_iter
        iterations_done += iterations
        at_floor = (bool(floor_patience) and rules.floor.flat >= floor_patience
                    and not interrupted)
        if at_floor and rules.floor.best_state is not None:  # the best gradient at the floor
            state = rules.floor.best_state
        budget = next((b for b in ("max_time", "max_iter") if not converged
                       and reason.startswith(b)), "")
        unchecked = getattr(s, "unchecked", None)
        if not state.exact and not interrupted and unchecked:  # the route ruled the check out
            reason = f"stochastic run ended ({reason}); the full gradient was not evaluated: " \
                     f"{unchecked}"
            converged = False
        elif not state.exact and not interrupted:  # a stochastic stage: only the full gradient
            try:                                   # certifies
                state, reason, converged = _full_check(problem, s, state, reason, rules,
                                                       began + max_time)
            except KeyboardInterrupt:
                reason = _interrupted(state, "in the full-gradient check")
                converged = False
                interrupted = True
            else:
                trace.append({"iteration": n_total,
                              "time": t_before + time.perf_counter() - began,
                              "cost": state.cost, "grad_norm": state.grad_norm, "change": 0.0,
                              "stage": stage, "full_check": True})
        certified = (converged and state.exact and not interrupted
                     and state.grad_norm <= rules.grad_tol)
        later = [t.name for t in solvers[stage + 1:]]
        ends = budget in ("max_time", "max_iter")
        if ends and later and not interrupted:
            reason += f"; the chain ended there ({', '.join(later)} not run)"
        stages.append(StageSummary(s.name, iterations, reason, converged))
        M = state.M
        if interrupted or ends:
            break

    elapsed = time.perf_counter() - began
    names = " → ".join(s.name for s in solvers)
    if len(solvers) > 1 and not interrupted:
        reason = f"{ran}: {reason}"
    counts = summed_counts(problem.counts, previous.counts if previous is not None else {})
    result = Result(M=state.M, cost=state.cost, converged=converged, reason=reason,
                    n_iter=n_total, time=t_before + elapsed, grad_norm=state.grad_norm,
                    trace=trace, solver=names, stages=stages, counts=counts,
                    grad_scale=np.nan if scale is None else scale, budget=budget, tol=tol)
    if (certify or at_floor) and not interrupted:
        result.certificate = certificate(problem, state.M, tol=tol, tol_scale=scale,
                                         max_time=max(began + max_time - time.perf_counter(),
                                                      0.0))
    return result
