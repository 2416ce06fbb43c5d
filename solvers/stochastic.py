"""What the stochastic solvers (``"sgd"``, ``"adam"``, ``"svrg"``) share: the sum-of-terms
protocol checked at the door, seeded mini-batches, the step size at the start and one epoch
per iteration.

**One iteration is one epoch**: a pass over a fresh permutation of the ``n_terms`` terms
(:class:`~ldr.core.objective.Objective`, Eq. S1) in mini-batches I of ``batch_size`` terms, each
giving the unbiased estimates ``(n/|I|) Σ_{i∈I} f_i`` and ``(n/|I|) Σ_{i∈I} ∇f_i`` of the
cost and its gradient.  The driver's ``max_iter`` therefore counts epochs.  SGD and Adam
report, after an epoch, the sum of the epoch's batch costs and gradients (each term once, at
the iterates of that epoch) as an *estimate* (``State.exact`` False): the driver stops on it
but certifies only on the full gradient it evaluates at the end (:mod:`ldr.core.stopping`).

**Step size at the start** (``lr=None``): the solver's factor over L̂, the largest
absolute eigenvalue of the Riemannian Hessian at the start, by five steps of power iteration
v ← H v/‖H v‖ from the gradient's direction, each product H v ≈ π(grad f(R(hv)) − grad f)/h a
finite difference of full gradients (h = 10⁻⁶ · the typical distance): the gradient's
Lipschitz constant near the start, in the problem's own units, so that neither scaling the
data nor the number of terms changes the iterates (five full gradients, once).

**A sampled start** (``start_terms=m``): where one full evaluation is the bottleneck (NCA at
n = 10⁵: n² pairs, about four minutes), the start's cost and gradient, the power iteration's
gradients and the driver's gradient scale (:meth:`StochasticSolver.estimated_scale`) are
estimated on one fixed sample S of m terms, ``(n/m) Σ_{i∈S} (f_i, ∇f_i)``, and the start is an
estimate (``State.exact`` False); the only full evaluation of the run is then the driver's
check at its end.  An objective with a ``hold_terms(S)`` method is told S until the first
epoch starts (rows read a chunk at a time then gather S's rows once instead of reading the
chunks again at each estimate).  ``max_epochs`` ends a run after that many epochs (not
converged: the check decides).

**Refreshing the batches' candidates.**  An objective with a ``refresh_batches(M)`` method
(NCA's and LMNN's candidate sets, :mod:`ldr.objectives.candidates`) is told an epoch's start
point whenever the step has shrunk, since the last time it was told, by the factor it
shrinks over the first epoch, 1 + ``decay``: with the step η₀/(1 + decay·t) the iterates'
path length over epochs [t₀, t₁] is proportional to ln((1 + decay·t₁)/(1 + decay·t₀)), so
each refresh follows the same path length as the first epoch (at decay = 1 the epochs 0, 1,
3, 7, 15, …; every epoch at a constant step).  The candidates only shape the estimate's
variance (stale ones leave it unbiased), and refreshing them costs a k-nearest-neighbour
search of all n rows.
"""

from __future__ import annotations

import math
import numbers

import numpy as np

from ldr.core.deprecation import renamed_keywords
from ldr.core.errors import ParameterError
from ldr.core.problem import Problem
from ldr.solvers.base import Solver, State


def _positive(name: str, value, integer: bool = False):
    kind = numbers.Integral if integer else numbers.Real
    if isinstance(value, bool) or not isinstance(value, kind) or not value > 0 \
            or (not integer and not math.isfinite(value)):
        raise ParameterError(name, f"must be a positive {'integer' if integer else 'number'}, "
                                   f"got {value!r}")
    return value


#: the former names of the constructors' parameters, accepted for one release with a warning
RENAMED = {"batch_gtol": "batch_tol"}

#: power-iteration steps (full gradients) of the start's step size
POWER_STEPS = 5


class StochasticSolver(Solver):
    """Base of the mini-batch solvers (module docstring).

    Parameters
    ----------
    batch_size : int
        Terms per mini-batch (the last batch of an epoch may be smaller).
    lr : float or None
        Step size; None: the Armijo step of the full gradient at the start (module
        docstring), scaled by the solver's own factor.
    decay : float
        The step after t epochs is ``lr / (1 + decay · t)`` (t counted in fractions of an
        epoch; 0: a constant step).
    batch_tol : float or None
        The solver stops (not converged: the driver then checks the full gradient) when the
        epoch's gradient estimate falls below ``batch_tol · scale``; None: the driver's
        ``tol`` is applied to the estimate.
    random_state : int or numpy.random.Generator
        Seeds the batches (default 0: identical runs give identical results).
    retraction : {"polar", "qr"}
    start_terms : int or None
        Estimate the start, its step size and the gradient scale on this many terms (module
        docstring, "A sampled start"); None (default): exactly.
    max_epochs : float or None
        Stop (not converged) after this many epochs; None: the driver's ``max_iter`` only.
    unchecked : str or None
        Why the driver should not evaluate the full cost and gradient at the run's end (one
        exact evaluation beyond a route's budget:
        :func:`ldr.solvers.routes.stochastic_then_polish`); the run is then reported not
        converged, with this reason.  None (default): the driver checks the full gradient,
        whatever it costs.
    """

    name = "stochastic"
    #: Manopt's and pymanopt's gradient tolerance: the step acceptance reads cost
    #: differences, blind below rounding, near a relative gradient of 1e-8
    default_tol = 1e-6
    #: the auto step (``lr=None``) is this times the Armijo step at the start
    lr_factor = 1.0

    def __init__(self, batch_size: int = 32, lr: float | None = None, decay: float = 1.0,
                 batch_tol: float | None = None, random_state=0, retraction: str = "polar",
                 start_terms: int | None = None, max_epochs: float | None = None,
                 unchecked: str | None = None, **renamed):
        batch_tol = renamed_keywords(type(self).__name__, renamed, RENAMED,
                                     {"batch_tol": batch_tol})["batch_tol"]
        self.start_terms = None if start_terms is None else int(
            _positive("start_terms", start_terms, integer=True))
        self.max_epochs = None if max_epochs is None else float(
            _positive("max_epochs", max_epochs))
        self.batch_size = int(_positive("batch_size", batch_size, integer=True))
        self.lr = None if lr is None else float(_positive("lr", lr))
        if isinstance(decay, bool) or not isinstance(decay, numbers.Real) or not decay >= 0:
            raise ParameterError("decay", f"must be a non-negative number, got {decay!r}")
        self.decay = float(decay)
        self.batch_tol = None if batch_tol is None else float(_positive("batch_tol",
                                                                          batch_tol))
        if retraction not in ("polar", "qr"):
            raise ParameterError("retraction", f"expected 'polar' or 'qr', got {retraction!r}")
        self.random_state = random_state
        self.retraction = retraction
        if unchecked is not None and not (isinstance(unchecked, str) and unchecked):
            raise ParameterError("unchecked", f"must be None or a reason (a non-empty "
                                              f"string), got {unchecked!r}")
        self.unchecked = unchecked

    def check_problem(self, problem: Problem) -> None:
        obj = problem.objective
        n = getattr(obj, "n_terms", None)
        missing = [what for what, ok in (("n_terms (the number of terms of the sum)",
                                          isinstance(n, numbers.Integral) and n > 0),
                                         ("batch(M, indices) -> (cost, egrad)",
                                          obj.provides("batch"))) if not ok]
        if missing:
            raise ParameterError("solver", (
                f"{self.name!r} is a stochastic solver: it needs a cost that is a sum of terms, "
                f"declaring {' and '.join(missing)} (ldr.Objective, 'Sums of terms'); "
                f"{type(obj).__name__} does not — use a deterministic solver ('lbfgs', "
                "'trust-region')"))
        super().check_problem(problem)

    # -- the start ------------------------------------------------------------------------
    def _sample(self, problem: Problem) -> np.ndarray:
        """The fixed terms of a sampled start (drawn from ``random_state``, apart from the
        batches' stream)."""
        n = int(problem.objective.n_terms)
        rng = np.random.default_rng([2**31 - 1, np.random.default_rng(
            self.random_state).integers(2**31)])
        return np.sort(rng.choice(n, size=min(self.start_terms, n), replace=False))

    def _estimate(self, problem: Problem, M, **kw) -> State:
        """The State at M from the fixed sample (``start_terms``), scaled by n/m."""
        geom = problem.manifold
        S = self._terms
        n = int(problem.objective.n_terms)
        cost = 0.0
        G = None
        for i in range(0, S.shape[0], self.batch_size):
            c, Gb = problem.batch(M, S[i:i + self.batch_size])
            cost += c
            G = Gb if G is None else geom.lincomb(1.0, G, 1.0, Gb)
        w = n / S.shape[0]
        G = geom.lincomb(w, G)
        grad = problem.rgrad(M, G)
        return State(M=M, cost=w * cost, egrad=G, grad=grad, grad_norm=geom.norm(grad),
                     exact=False, **kw)

    @staticmethod
    def _hold(problem: Problem, terms) -> None:
        """Tell the objective (its ``hold_terms``, where it has one) which fixed terms the
        start's estimates evaluate again and again (None: no longer)."""
        hook = getattr(problem.objective, "hold_terms", None)
        if callable(hook):
            hook(terms)

    def _gradient(self, problem: Problem, M):
        if self.start_terms is None:
            return problem.rgrad(M, problem.egrad(M))
        return self._estimate(problem, M).grad

    def estimated_scale(self, problem: Problem, state: State) -> float:
        """The driver's gradient scale for a sampled start: ``Problem.gradient_scale`` with
        the reference point's gradient estimated on the same sample."""
        return problem.gradient_scale(grad_norm=state.grad_norm,
                                      rgrad=lambda R: self._estimate(problem, R).grad)

    def _start_step(self, problem: Problem, state: State) -> float:
        """1/L̂, L̂ the Riemannian Hessian's largest |eigenvalue| at the start by
        :data:`POWER_STEPS` steps of power iteration on finite differences of the full
        gradient (module docstring)."""
        geom = problem.manifold
        M = state.M
        if not state.grad_norm > 0:
            return 1.0
        h = 1e-6 * geom.typical_dist
        v = geom.lincomb(1.0 / state.grad_norm, state.grad)
        curvature = 0.0
        for _ in range(POWER_STEPS):
            Mh = geom.retract(M, geom.lincomb(h, v), self.retraction)
            gh = self._gradient(problem, Mh)
            w = geom.project(M, geom.lincomb(1.0 / h, gh, -1.0 / h, state.grad))
            curvature = geom.norm(w)
            if not (curvature > 0 and math.isfinite(curvature)):
                return geom.typical_dist / state.grad_norm
            v = geom.lincomb(1.0 / curvature, w)
        return 1.0 / curvature

    def init(self, problem: Problem, M0) -> State:
        if self.start_terms is None:
            state = super().init(problem, M0)
        else:
            self.check_problem(problem)
            self._terms = self._sample(problem)
            self._hold(problem, self._terms)
            state = self._estimate(problem, M0)
        rng = np.random.default_rng(self.random_state)
        lr = self.lr if self.lr is not None else (
            self.lr_factor * self._start_step(problem, state))
        state.memory = {"rng": rng, "lr": lr, "epochs": 0.0, "steps": 0}
        return state

    # -- an epoch -------------------------------------------------------------------------
    def batches(self, problem: Problem, rng: np.random.Generator):
        """An epoch's mini-batches: the objective's ``batch_order(rng, batch_size)`` where it
        has one and it returns them (rows read a chunk at a time: a chunk's batches
        together), else a uniform permutation of the terms cut into batches."""
        n = int(problem.objective.n_terms)
        self._hold(problem, None)   # the start's estimates are done
        hook = getattr(problem.objective, "batch_order", None)
        own = hook(rng, self.batch_size) if callable(hook) else None
        if own is not None:
            return own, n
        order = rng.permutation(n)
        return [order[i:i + self.batch_size] for i in range(0, n, self.batch_size)], n

    def epoch_limit(self, state: State) -> None:
        """Set the state's stop reason once ``max_epochs`` epochs are done."""
        if self.max_epochs is not None and state.memory["epochs"] >= self.max_epochs - 1e-9:
            state.stop_reason = f"max_epochs {self.max_epochs:g} reached"

    def refresh(self, problem: Problem, M, memory: dict) -> None:
        """Tell the objective an epoch starts at M (its ``refresh_batches``, where it has one)
        when the step has shrunk by 1 + ``decay`` since it was last told (module docstring,
        "Refreshing the batches' candidates")."""
        hook = getattr(problem.objective, "refresh_batches", None)
        if not callable(hook):
            return
        told = memory.get("refreshed_at")
        shrink = 1.0 + self.decay * memory["epochs"]
        if told is not None and shrink < (1.0 + self.decay * told) * (1.0 + self.decay) - 1e-9:
            return
        hook(M)
        memory["refreshed_at"] = memory["epochs"]

    def step_size(self, memory: dict) -> float:
        return memory["lr"] / (1.0 + self.decay * memory["epochs"])

    def update(self, problem: Problem, M, egrad_estimate, memory: dict):
        """One mini-batch move from ``M`` along the estimate ``(n/|I|) Σ_{i∈I} ∇f_i``."""
        raise NotImplementedError  # pragma: no cover - abstract

    def step(self, problem: Problem, state: State) -> State:
        geom = problem.manifold
        memory = dict(state.memory)
        batches, n = self.batches(problem, memory["rng"])
        M = state.M
        cost = 0.0
        G = None
        self.refresh(problem, M, memory)
        for idx in batches:
            c, Gb = problem.batch(M, idx)
            cost += c
            G = Gb if G is None else geom.lincomb(1.0, G, 1.0, Gb)
            M = self.update(problem, M, geom.lincomb(n / len(idx), Gb), memory)
            memory["epochs"] += len(idx) / n
            memory["steps"] += 1
        grad = problem.rgrad(M, G)
        new = State(M=M, cost=cost, egrad=G, grad=grad, grad_norm=geom.norm(grad),
                    iteration=state.iteration + 1, memory=memory, exact=False,
                    info={"step_size": self.step_size(memory), "batches": len(batches)})
        self.epoch_limit(new)
        if self.batch_tol is not None and state.grad_scale is not None \
                and new.grad_norm <= self.batch_tol * state.grad_scale:
            new.stop_reason = (f"estimated gradient norm {new.grad_norm:.3e} ≤ batch_tol·scale "
                               f"{self.batch_tol * state.grad_scale:.1e}")
        return new
