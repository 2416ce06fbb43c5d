"""The stopping rules of :func:`ldr.solve`: named, frozen options and one fixed order.

The driver checks the rules after every iteration, in this order; the first that holds is the
run's ``reason``:

1. the ``callback`` returned True                          (not converged)
2. the iterate's cost is NaN or infinite                   (not converged)
3. Riemannian gradient norm ``‖grad f(M)‖ ≤ tol · scale``   (converged)
4. the solver's own reason (radius collapse, line search failure, eigengap lost, ...)
5. step ``‖M_k − M_{k−1}‖ ≤ xtol``, measured on the manifold actually solved on: the largest
   principal-angle sine on a Grassmann factor, the spectral norm of the difference on a
   Stiefel factor (where rotating inside a fixed span is progress) and the relative Frobenius
   distance on a Euclidean one — the largest over the factors of a product (accepted steps
   only; 0 disables the rule, as for tol and ftol).  For a fixed-point iteration M ← G(M)
   that reports its residual ``sin θ_max(M_k, G(M_k))`` as ``info["residual"]`` (SCF), that
   residual instead, so that an extrapolated step that happens to be short is not taken for a
   fixed point
6. relative cost change ``|f_k − f_{k−w}| ≤ ftol·max(|f_k|, 1e-300)`` over the last
   w = ``fwindow`` accepted steps (default 1: the last step; a window does not stop on one
   short step amid progress)
7. the rounding floor: for ``floor_patience`` iterations (default 10) the cost has stayed
   within rounding of its best value (``|f − f_best| ≤ 100·eps·|f_best|``) while the gradient
   norm has not fallen below 0.9 × its best value: the solver can no longer reduce the
   gradient in floating point (a tolerance below what rounding allows), and more iterations
   would only wander at noise level (a trust region at 1e-8 relative gradient took 1000 of
   them on a real table).  The run is *stalled at rounding level* and returns the iterate
   with the smallest gradient norm seen, converged only if that gradient norm meets
   ``tol · scale``, like rules 5 and 6
8. iterations ``≥ max_iter``, counted over the whole run (every stage of a chain)
                                                            (not converged; ends a chain)
9. time ``≥ max_time`` seconds                              (not converged; ends a chain)

**Budgets hold for the run.**  ``max_iter`` and ``max_time`` bound a run, not a stage: a chain
whose stage reaches either ends there (its later stages are not run, and the reason says so).

**Stochastic solvers** (``State.exact`` False: the cost and gradient are mini-batch
estimates) never certify on an estimate: rule 3 on an estimate, and rules 5–7, end the run
*not* converged, and the driver then evaluates the full gradient at the final iterate — only
that full gradient meeting ``tol · scale`` makes the run converged.

**Only the gradient rule certifies.**  Rules 5, 6 and 7 say the iterates stopped moving, not that
they reached a critical point: they report ``converged=True`` only when the gradient norm also
meets ``tol · scale`` (the solver's default tol when tol = 0 disables the gradient rule);
otherwise the run stops as *stalled* (not converged), with both numbers in the reason.
Solvers that compute no gradient (SCF, whose fixed points are not critical points of the
cost) converge on their residual alone.

**The default tolerance is one the solver reaches.**  ``tol=None`` is the default of the
chain's last solver (``Solver.default_tol``, :class:`ldr.solvers.Solver`): 1e-8 (about √ε
of float64) for the trust region, which reads the gradient itself, and 1e-6 — Manopt's and
pymanopt's gradient tolerance — for the line-search solvers, whose step acceptance reads
cost differences and so stalls at rounding level near a relative gradient of 1e-8, scaled
by √(ε/ε₆₄) for a lower precision (:func:`default_tol`).

**Scale-invariant tolerance.**  ``scale`` is the problem's typical gradient norm
(:meth:`ldr.core.problem.Problem.gradient_scale`), so multiplying the data by a constant changes
neither where a solver stops nor whether it says it converged.  ``tol_scale=1.0`` makes
``tol`` absolute, as in Manopt and pymanopt.
"""

from __future__ import annotations

import math
import numbers
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from ldr.core.errors import ParameterError

#: float64's machine epsilon, the precision :data:`StopOptions.tol`'s 1e-8 is set for
_EPS64 = 2.0**-52


def default_tol(template=None, solver=None) -> float:
    """The gradient tolerance :func:`ldr.solve` uses when none is given: the solver's
    ``default_tol`` (1e-8 without one; module docstring) for NumPy or float64 arrays, times
    √(ε/ε₆₄) for arrays ``template`` of a lower precision — 2.3e-4 for float32 at 1e-8
    (ε = 1.2e-7), whose rounded gradients stall far above 1e-8 (a float32 fit at 1e-8 runs to
    ``max_iter``)."""
    base = getattr(solver, "default_tol", 1e-8)
    if template is None:
        return base
    from ldr.data import arrays

    return base * math.sqrt(max(arrays.eps(template), _EPS64) / _EPS64)

#: the rounding floor (rule 7): the cost is at rounding level when within this many eps of
#: its best value, and the gradient norm has improved when it falls below this share of its
#: best value
FLOOR_COST_EPS = 100.0
FLOOR_GRAD_SHARE = 0.9
_EPS = 2.0**-52


def _non_negative(name: str, value) -> None:
    if (isinstance(value, bool) or not isinstance(value, numbers.Real) or math.isnan(value)
            or value < 0):
        raise ParameterError(name, f"must be a non-negative number, got {value!r}")


@dataclass(frozen=True, kw_only=True)
class StopOptions:
    """The options of the stopping rules (module docstring), checked when built.

    Attributes
    ----------
    tol : float
        Relative gradient tolerance (rule 3): converged when ‖grad f‖ ≤ tol · scale.
    tol_scale : "auto" or float
        ``scale``: "auto" is the problem's gradient scale; a positive number fixes it.
    xtol, ftol : float
        Step and relative cost-change tolerances (rules 5, 6); 0 disables a rule.
    fwindow : int
        The number of accepted steps the cost change of rule 6 is measured over (≥ 1).
    max_iter : int
        The iterations of the whole run (rule 8), every stage of a chain counted.
    floor_patience : int
        Iterations at the rounding floor (rule 7) before a run stops; 0 disables the rule.
    max_time : float
        Seconds for the whole run.
    """

    tol: float = 1e-8
    tol_scale: float | str = "auto"
    xtol: float = 1e-10
    ftol: float = 0.0
    fwindow: int = 1
    max_iter: int = 1000
    max_time: float = math.inf
    floor_patience: int = 10

    def __post_init__(self):
        for name in ("tol", "xtol", "ftol", "max_time"):
            _non_negative(name, getattr(self, name))
        it = self.max_iter
        if isinstance(it, bool) or not isinstance(it, numbers.Integral) or it < 0:
            raise ParameterError("max_iter", f"must be a non-negative integer, got {it!r}")
        w = self.fwindow
        if isinstance(w, bool) or not isinstance(w, numbers.Integral) or w < 1:
            raise ParameterError("fwindow", f"must be a positive integer, got {w!r}")
        k = self.floor_patience
        if isinstance(k, bool) or not isinstance(k, numbers.Integral) or k < 0:
            raise ParameterError("floor_patience", f"must be a non-negative integer (0 "
                                                   f"disables the rounding-floor rule), got {k!r}")
        s = self.tol_scale
        if not (isinstance(s, str) and s == "auto") and not (
                isinstance(s, numbers.Real) and not isinstance(s, bool) and math.isfinite(s)
                and s > 0):
            raise ParameterError("tol_scale", f"expected 'auto' or a positive number (1.0 "
                                               f"makes tol absolute), got {s!r}")


@dataclass
class RoundingFloor:
    """Rule 7's memory over one stage: the best cost and gradient norm seen and for how many
    iterations neither has improved beyond rounding."""

    best_cost: float = math.inf
    best_grad: float = math.inf
    flat: int = 0
    #: the state with the smallest gradient norm seen: returned when the rule fires (the
    #: iterates at the floor all have the best cost to rounding, this one the best gradient)
    best_state: object = None

    def update(self, state) -> int:
        """Count ``state`` in; the number of consecutive flat iterations."""
        f = state.cost
        g = state.grad_norm
        if not (math.isfinite(f) and math.isfinite(g)):
            self.flat = 0
            return 0
        at_rounding = abs(f - self.best_cost) <= FLOOR_COST_EPS * _EPS * max(abs(f), 1e-300)
        improved = g < FLOOR_GRAD_SHARE * self.best_grad
        self.flat = self.flat + 1 if at_rounding and not improved else 0
        self.best_cost = min(self.best_cost, f)
        if g <= self.best_grad:
            self.best_grad = g
            self.best_state = state
        return self.flat


@dataclass(frozen=True)
class StageRules:
    """What one stage of a run compares against: the options, the tolerances in the problem's
    units (``grad_tol`` = tol·scale, ``stall_tol`` the same with the default tol when tol
    is 0; NaN while the scale is unknown), the stage's first iteration number and the clock's
    start."""

    options: StopOptions
    grad_tol: float
    stall_tol: float
    first_iter: int
    started: float
    callback: Callable | None = None
    floor: RoundingFloor = field(default_factory=RoundingFloor)
    #: the costs of the stage's accepted iterates, the start's first (rule 6's window)
    costs: list = field(default_factory=list)
    #: the iterations of the run's earlier stages (rule 8 counts the whole run)
    iterations_before: int = 0

    def iterations(self, state) -> int:
        """The run's iterations at ``state`` (rule 8): every stage so far."""
        return self.iterations_before + (state.iteration - self.first_iter)

    @classmethod
    def for_stage(cls, options: StopOptions, scale: float | None, first_iter: int,
                  started: float, callback: Callable | None = None,
                  iterations_before: int = 0, judge_tol: float = 1e-8) -> StageRules:
        """The rules of a stage; ``judge_tol`` is the tol that judges a step, cost-change or
        rounding-floor stop when ``options.tol`` is 0 (the gradient rule off): the solver's
        default."""
        if scale is None:
            return cls(options, math.nan, math.nan, first_iter, started, callback,
                       iterations_before=iterations_before)
        return cls(options, options.tol * scale, (options.tol or judge_tol) * scale,
                   first_iter, started, callback, iterations_before=iterations_before)


def _gnorm(state) -> str:
    """``(gradient norm …)`` for a reason, or a note that the solver does not compute it."""
    if math.isnan(state.grad_norm):
        return "(the solver computes no gradient)"
    return f"(gradient norm {state.grad_norm:.3e})"


def _small_move(what: str, state, stall_tol: float) -> tuple[str, bool]:
    """A step or cost-change rule fired: converged only near a critical point."""
    g = state.grad_norm
    if not getattr(state, "exact", True):  # an estimate: the full-gradient check decides
        return f"{what} (estimated gradient norm {g:.3e})", False
    if math.isnan(g):
        return f"{what} (the solver computes no gradient)", True
    if g <= stall_tol:
        return f"{what} (gradient norm {g:.3e} ≤ tol·scale {stall_tol:.1e})", True
    return (f"stalled: {what}, but the gradient norm {g:.3e} is above tol·scale = "
            f"{stall_tol:.1e}: not a critical point (try another solver, a chain ending in "
            "'trust-region', or xtol=0)"), False


def _at_rounding_floor(state, flat: int, rules: StageRules) -> tuple[str, bool]:
    """Rule 7 fired: the driver returns the iterate with the smallest gradient norm seen
    (``rules.floor.best_state``), converged only if its gradient norm meets tol·scale."""
    g = rules.floor.best_grad
    tol = rules.stall_tol
    what = (f"stalled at rounding level: for {flat} iterations the cost stayed within "
            f"{FLOOR_COST_EPS:g}·eps of its best and the gradient norm did not fall below "
            f"{FLOOR_GRAD_SHARE:g} × its best, {g:.3e} (the iterate returned)")
    if g <= tol:
        return f"{what}; gradient norm {g:.3e} ≤ tol·scale {tol:.1e}", True
    return (f"{what}, and it is above tol·scale = {tol:.1e}: not a critical point (try "
            "another solver or a chain ending in 'trust-region')"), False


def first_rule(state, prev, change: float, rules: StageRules) -> tuple[str, bool]:
    """The first stopping rule that holds at ``state`` (``prev`` the previous state, None at a
    stage's start; ``change`` the step measured on the manifold), as ``(reason, converged)``;
    ``("", False)`` if none holds."""
    opts = rules.options
    if prev is None or state.accepted:
        rules.costs.append(state.cost)
    if rules.callback is not None and rules.callback(state):
        return "stopped by callback", False
    if not math.isfinite(state.cost):
        return (f"the cost is {state.cost} at the current iterate (outside its domain, or an "
                "overflow)"), False
    exact = getattr(state, "exact", True)
    if state.grad_norm <= rules.grad_tol:
        if not exact:  # an estimate: the driver's full-gradient check decides
            return (f"estimated gradient norm {state.grad_norm:.3e} ≤ tol·scale "
                    f"{rules.grad_tol:.1e}"), False
        return f"gradient norm {state.grad_norm:.3e} ≤ tol·scale {rules.grad_tol:.1e}", True
    if state.stop_reason:
        if state.stop_converged:
            return _small_move(state.stop_reason, state, rules.stall_tol)
        return state.stop_reason, False
    if prev is not None and state.accepted:
        moves = []   # rules 5 and 6: what fired, converged only near a critical point
        residual = state.info.get("residual")
        if opts.xtol > 0 and residual is not None:  # a fixed-point iteration's own measure
            if residual <= opts.xtol:
                moves.append(f"fixed-point residual {residual:.3e} ≤ xtol {opts.xtol:.1e}")
        elif opts.xtol > 0 and change <= opts.xtol:
            moves.append(f"step {change:.3e} ≤ xtol {opts.xtol:.1e}")
        w = opts.fwindow
        costs = rules.costs
        if opts.ftol > 0 and len(costs) > w:
            rel = abs(state.cost - costs[-1 - w]) / max(abs(state.cost), 1e-300)
            if rel <= opts.ftol:
                over = "" if w == 1 else f" over the last {w} steps"
                moves.append(f"relative cost change {rel:.3e}{over} ≤ ftol {opts.ftol:.1e}")
        if moves:
            return _small_move(moves[0], state, rules.stall_tol)
    flat = rules.floor.update(state) if exact else 0  # noisy estimates have no floor
    if opts.floor_patience and flat >= opts.floor_patience:
        return _at_rounding_floor(state, flat, rules)
    if rules.iterations(state) >= opts.max_iter:
        return f"max_iter {opts.max_iter} reached {_gnorm(state)}", False
    if time.perf_counter() - rules.started >= opts.max_time:
        return f"max_time {opts.max_time:.3g}s reached {_gnorm(state)}", False
    return "", False
