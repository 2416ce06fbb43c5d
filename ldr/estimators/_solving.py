"""How an estimator runs the driver: its solver settings (``solver``, ``start``, ``tol``,
``max_iter``, ``solver_params``, ``random_state``) turned into one checked call of
:func:`ldr.solve`, and a :class:`~sklearn.exceptions.ConvergenceWarning` whenever a fit did not
converge.  Re-exported by :mod:`ldr.estimators._base`.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
import numbers
import warnings

import numpy as np
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils import check_random_state

from ldr.driver import solve
from ldr.errors import ParameterError
from ldr.objective import Objective
from ldr.result import Result, Trace
from ldr.solvers import chain
from ldr.stopping import StopOptions

#: options of :func:`ldr.solve` that ``solver_params`` may hold (the others have their own
#: estimator parameter: ``tol`` is gtol, ``max_iter``, ``start`` is M0, ``random_state`` the
#: seed)
SOLVER_PARAMS = ("xtol", "ftol", "fwindow", "max_time", "tol_scale", "floor_patience",
                 "certify", "callback", "orthonormalize")
_OWN_PARAMETER = {"gtol": "tol", "tol": "tol", "max_iter": "max_iter", "M0": "start",
                  "seed": "random_state"}
#: keys that solver_params took before the estimators had tol and max_iter (kept, with a
#: FutureWarning, for one release)
_DEPRECATED_PARAMS = {"gtol": "tol", "max_iter": "max_iter"}
_NEW = {"gtol": "tol"}


# --- solver settings ---------------------------------------------------------------------------
def seed_of(random_state):
    """An int or None for :func:`ldr.solve` from a scikit-learn ``random_state``."""
    if random_state is None or (isinstance(random_state, numbers.Integral)
                                and not isinstance(random_state, bool) and random_state >= 0):
        return random_state
    if not isinstance(random_state, np.random.RandomState | np.random.Generator):
        raise ParameterError("random_state", f"expected None, a non-negative integer, a "
                             f"numpy RandomState or Generator, got {random_state!r}")
    if isinstance(random_state, np.random.Generator):
        return int(random_state.integers(np.iinfo(np.int32).max))
    return int(check_random_state(random_state).randint(np.iinfo(np.int32).max))


@functools.lru_cache(maxsize=256)
def _init_defaults(cls) -> dict:
    """The defaults of ``cls.__init__``'s parameters, read once per class (``inspect.signature``
    is a fifth of a millisecond, a measurable share of a fit on a small table)."""
    try:
        return {name: p.default for name, p in inspect.signature(cls.__init__).parameters.items()}
    except (TypeError, ValueError):
        return {}


def _default_of(estimator, name):
    return _init_defaults(type(estimator)).get(name, inspect.Parameter.empty)


def gradient_tolerance(estimator) -> float | None:
    """The estimator's ``tol`` as :func:`ldr.solve`'s gtol: a value the user set as given;
    a default of 1e-8 (ldr.solve's own, float64's) as None, so that the driver scales it to
    the precision the fit runs in (:func:`ldr.stopping.default_gtol`: 1e-8 for float64,
    2.3e-4 for a float32 tensor under ``array_api_dispatch``).  Another default (NCA's 1e-6)
    is the estimator's choice and passes as it is."""
    value, default = estimator.tol, _default_of(estimator, "tol")
    if isinstance(value, float) and value == default == 1e-8:
        return None
    return value


def iteration_budget(estimator) -> dict:
    """The estimator's ``max_iter`` for :func:`ldr.solve`: a value the user set (one other
    than the estimator's default) is the budget of the whole fit (``max_iter``: every stage
    of a chain and the trust region's Hessian-vector products, :mod:`ldr.stopping`); the
    default is the per-stage safety net (``stage_max_iter``), so that a default fit whose
    first stage used it up is still polished."""
    value = estimator.max_iter
    default = _default_of(estimator, "max_iter")
    return {"max_iter": value}


def solver_options(estimator) -> dict:
    """The keyword arguments of :func:`ldr.solve` that the estimator's settings give: ``tol``
    as gtol, ``max_iter``, ``random_state`` as the seed and ``solver_params`` (over the
    estimator's ``_solver_defaults``), every value checked — a typo or a bad value is a
    :class:`~ldr.errors.ParameterError` naming it, before any work."""
    params = estimator.solver_params
    if params is None:
        params = {}
    if not isinstance(params, dict):
        raise ParameterError("solver_params", f"expected a dict, got {params!r}")
    own = {"tol": gradient_tolerance(estimator), **iteration_budget(estimator)}
    for key in params:
        if key in _DEPRECATED_PARAMS:
            warnings.warn(f"{type(estimator).__name__}: solver_params[{key!r}] is deprecated "
                          f"since ldr 0.2; pass {_DEPRECATED_PARAMS[key]}= instead",
                          FutureWarning, stacklevel=4)
            own[_NEW.get(key, key)] = params[key]
            continue
        if key in _OWN_PARAMETER:
            raise ParameterError("solver_params", f"{key!r} is set by the estimator's own "
                                 f"parameter {_OWN_PARAMETER[key]}=; pass it there")
        if key not in SOLVER_PARAMS:
            raise ParameterError("solver_params", f"unknown option {key!r}; the options are "
                                 f"{', '.join(SOLVER_PARAMS)} (the gradient tolerance is the "
                                 "estimator's tol=, the budget its max_iter=)")
    options = {**getattr(estimator, "_solver_defaults", {}), **params, **own}
    try:
        StopOptions(**{k: options[k] for k in ("tol", "tol_scale", "xtol", "ftol", "fwindow",
                                                "max_iter", "max_time",
                                                "floor_patience")
                       if k in options and (options[k] is not None or k == "max_iter")})
    except ParameterError as exc:
        raise exc.renamed(exc.param) from None
    if estimator.solver is not None:  # None: the objective's default solver
        chain(estimator.solver)  # an unknown solver name fails here
    return {**options, "random_state": seed_of(estimator.random_state)}


def solve_and_warn(estimator, obj: Objective, M0):
    """:func:`ldr.solve` with the estimator's settings (:func:`solver_options`); a
    :class:`~sklearn.exceptions.ConvergenceWarning` when it did not converge."""
    res = solve(obj, estimator.solver, M0, **solver_options(estimator))
    warn_if_unconverged(estimator, res, "raise max_iter (or max_time through solver_params), "
                        "or loosen tol")
    # autograd's cached gradient closure is rebuilt on demand and cannot be pickled
    obj.__dict__.pop("_ag_grad", None)
    return res


def warm_result(estimator, obj: Objective) -> Result | None:
    """``warm_start``: the previous fit's :class:`~ldr.Result` to resume from, its point put
    on ``obj``'s manifold by the estimator's ``_warm_point``, or None (not asked for, or not
    fitted yet); a ParameterError naming ``warm_start`` when the shapes differ."""
    warm = getattr(estimator, "warm_start", False)
    if not isinstance(warm, (bool, np.bool_)):
        raise ParameterError("warm_start", f"expected True or False, got {warm!r}")
    if not warm or getattr(estimator, "result_", None) is None:
        return None
    M = estimator._warm_point(obj)
    shapes = [tuple(np.shape(m)) for m in (M if isinstance(M, tuple) else (M,))]
    want = obj.shape if isinstance(obj.shape[0], (tuple, list)) else (obj.shape,)
    if shapes != [tuple(s) for s in want]:
        raise ParameterError("warm_start", f"the previous fit's point has shape "
                             f"{shapes if len(shapes) > 1 else shapes[0]}, this fit needs "
                             f"{obj.shape} (other n_features or n_components): pass "
                             "warm_start=False to start afresh")
    return dataclasses.replace(estimator.result_, M=M)


def reraise_interrupt(res: Result) -> None:
    """Raise ``KeyboardInterrupt`` again when ``res`` was interrupted: an estimator that
    solves in a loop (alternations, restarts) stops at Ctrl-C instead of going on."""
    if res.interrupted:
        raise KeyboardInterrupt(res.reason)


def warn_if_unconverged(estimator, res, remedy: str, what: str = "the solver",
                        stacklevel: int = 4) -> None:
    """A :class:`~sklearn.exceptions.ConvergenceWarning` quoting the driver's reason when
    ``res`` (an :class:`ldr.Result`) did not converge: no estimator fits silently."""
    if not res.converged:
        warnings.warn(f"{type(estimator).__name__}: {what} {res.solver!r} did not converge "
                      f"({res.reason}); {remedy}", ConvergenceWarning, stacklevel=stacklevel)


def converged_alternation(estimator, change: float, what: str, stacklevel: int = 3) -> bool:
    """Whether an alternation (``max_outer`` rounds, ``outer_tol`` on the change of ``what``)
    converged; a :class:`~sklearn.exceptions.ConvergenceWarning` when it did not."""
    converged = change <= estimator.outer_tol
    if not converged:
        warnings.warn(f"{type(estimator).__name__}: the alternation did not converge in "
                      f"max_outer={estimator.max_outer} rounds (last change of {what} "
                      f"{change:.2e} > outer_tol {estimator.outer_tol:g}); raise max_outer or "
                      "loosen outer_tol", ConvergenceWarning, stacklevel=stacklevel)
    return converged


def start_point(start, obj: Objective | None):
    """``start``: "heuristic" (the objective's, else a seeded random point), "random",
    None (the solver's own default start) or an array."""
    if isinstance(start, str):
        if start == "heuristic":
            return "heuristic" if obj is not None and obj.provides("heuristic") else "random"
        if start == "random":
            return "random"
        raise ParameterError("start", f"expected 'heuristic', 'random', None or an array, "
                             f"got {start!r}")
    return start


def closed_form_result(estimator, M, cost: float, how: str) -> Result:
    """The record of a fit with nothing to optimize (n_components = n_features: the whole
    space is one point of the Grassmannian); the solver settings it does not use are still
    checked, so a typo never passes silently."""
    solver_options(estimator)
    if isinstance(estimator.start, str) and estimator.start not in ("heuristic", "random"):
        start_point(estimator.start, None)
    return Result(M=M, cost=float(cost), converged=True, n_iter=0, time=0.0, grad_norm=0.0,
                  trace=Trace(), solver="closed-form",
                  reason=f"n_components = n_features: the whole space, nothing to optimize "
                         f"({how})")
