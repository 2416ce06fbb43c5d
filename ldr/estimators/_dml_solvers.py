"""The solvers of the metric-learning estimators' default routes (:mod:`ldr.estimators.dml`):
NCA's annealing L-BFGS (``_Annealed``), the bounded exact polish after the stochastic stage
(``_Polish``), the trust region as a bounded rescue stage (``_Rescue``) and scikit-learn's
optimizer as a stage of the driver (``_Route``, the first of NCA's two routes, with L-BFGS
on from its end where the driver does not count it converged, ``_Onward``).  Their
parameters, and why they were chosen, are documented beside the constants in
:mod:`ldr.estimators.dml` and in :class:`ldr.estimators.NCA`.
"""

from __future__ import annotations

import time
from dataclasses import replace

import numpy as np
from scipy.optimize import minimize

from ldr.errors import BudgetExceeded
from ldr.manifolds import Euclidean
from ldr.solvers import LBFGS, TrustRegion
from ldr.solvers.base import Solver

#: doublings of the map along its ray tried at most (2³⁰: far past any p_ij's saturation)
MAX_DOUBLINGS = 30


def along_ray(problem, M, cost: float, doublings: int = MAX_DOUBLINGS) -> tuple[float, float]:
    """``(s, f)``: the scale s = 2^k (0 ≤ k ≤ ``doublings``) that the doublings M ← 2M reach
    while the cost falls, and the cost f at s·M (cost evaluations only; s = 1 when the first
    doubling gains nothing).  NCA's softmax has no temperature but the map's scale, so this
    moves Σ_i p_i towards its limit along the ray of M."""
    best, scale = cost, 1.0
    for _ in range(doublings):
        f = problem.cost(2.0 * scale * M)
        if not f < best:
            break
        best, scale = f, 2.0 * scale
    return scale, best


class _Annealed(LBFGS):
    """NCA's default solver on the exact route: L-BFGS annealing the softmax's temperature.

    Steps are at most ``base`` · ‖M‖ long (the map's scale, the softmax's only temperature,
    grows by at most that fraction a step) while the neighbour structure changes: ``hits(M)``
    (:meth:`ldr.objectives.NCA.nearest_hits`) says which samples' nearest other sample in
    the embedding is of their class.  After ``quiet`` steps in a row that left it unchanged
    — *calm* steps, which change the hits of at most ``calm_share`` · n samples — the cap
    doubles with every further such step (up to ``max_cap``), and falls back to ``base`` at
    the first step that changes more.  Then, after ``2 · quiet`` steps in a row that changed
    no hit at all (the structure has survived ``quiet`` steps of the growing cap) — or at
    once where every sample is a hit: Σ_i p_i then tends to n, its global supremum, along the
    ray, and no other structure can do better — and once
    ``undecided(M)`` (Σ_i min(p_i, 1 − p_i), :meth:`ldr.objectives.NCA.undecided`) is at
    most ``saturate``,
    only the scale is left to grow (the supremum lies at ‖L‖ → ∞): the run moves along the
    ray, M ← 2^k M for the k that maximizes Σ_i p_i (cost evaluations only), and stops there
    ("saturated", a cost-change stop: converged only within 1e3 · gtol · scale of a critical
    point, :mod:`ldr.stopping`).  Both measures come from the evaluation's own pass over the
    pairs.
    """

    #: the cap stops doubling here: a step of 10⁴ · ‖M‖ is longer than any a line search of
    #: these runs takes (the longest seen on the benchmark tables was under 10 · ‖M‖), so
    #: the bound changes no iterate; without it the trace's ``max_step`` grew past 1e186
    #: over a long run of calm steps (randhie/health with the plateau rule off)
    max_cap = 1e4

    def __init__(self, hits, undecided, base: float = 0.03, quiet: int = 5,
                 saturate: float = 0.5, calm_share: float = 0.0):
        super().__init__(max_step=base)
        self.hits, self.undecided = hits, undecided
        self.quiet, self.saturate = int(quiet), float(saturate)
        self.calm_share = float(calm_share)

    def init(self, problem, M0):
        state = super().init(problem, M0)
        state.memory.update(cap=self.max_step, calm=0, hits=self.hits(state.M))
        return state

    def _alpha_max(self, problem, state, eta_norm):
        geom = problem.manifold
        cap = state.memory.get("cap", self.max_step)
        return cap * max(geom.norm(state.M), geom.typical_dist) / max(eta_norm, 1e-300)

    def step(self, problem, state):
        mem = state.memory
        new = super().step(problem, state)
        if not new.accepted:
            return new
        hits = self.hits(new.M)
        changed = int(np.count_nonzero(hits != mem["hits"]))
        calm = mem["calm"] + 1 if changed <= self.calm_share * hits.size else 0
        still = mem.get("still", 0) + 1 if changed == 0 else 0   # the stop: none changed
        cap = self.max_step if calm == 0 else min(
            mem["cap"] * (2.0 if calm >= self.quiet else 1.0), self.max_cap)
        new.memory.update(cap=cap, calm=calm, still=still, hits=hits)
        new.info["max_step"] = cap
        every = bool(hits.all())   # Σ_i p_i → n along the ray: the global supremum
        if (still >= 2 * self.quiet or every) and self.undecided(new.M) <= self.saturate:
            why = (f"every sample's nearest other sample is of its class ({hits.size} samples: "
                   "the supremum Σ_i p_i = n lies along the map's ray)" if every else
                   f"the leave-one-out 1-NN hits ({int(hits.sum())} samples) unchanged for "
                   f"{still} steps")
            new = self._saturate(problem, new, why)
        return new

    def _saturate(self, problem, state, why: str):
        """The saturation stop (class docstring): M ← 2^k M for the best k, and the reason."""
        scale, best = along_ray(problem, state.M, state.cost)
        new = state
        if scale > 1.0:
            new = self.evaluate(problem, scale * state.M, cost=best)
            new.iteration, new.memory, new.info = state.iteration, state.memory, state.info
        new.info["saturated"] = scale
        new.stop_reason = (f"saturated: {why} and Σ_i min(p_i, 1 − p_i) ≤ {self.saturate:g}; "
                           f"the map scaled by {scale:g} along its ray, Σ_i p_i = {-best:.6g}")
        new.stop_converged = True
        return new


class _Polish(LBFGS):
    """L-BFGS ended after ``steps`` iterations (not converged, unless the gradient rule fired
    first): the exact polish of the stochastic route, bounded by its cost."""

    spent = "polish budget of {} iterations (n² pairs each) spent"

    def __init__(self, steps: int, max_step: float | None = 0.25):
        super().__init__(max_step=max_step)
        self.steps = int(steps)

    def init(self, problem, M0):
        state = super().init(problem, M0)
        self._first = state.iteration
        return state

    def step(self, problem, state):
        new = super().step(problem, state)
        if new.iteration - self._first >= self.steps and not new.stop_reason:
            new.stop_reason = self.spent.format(self.steps)
        return new


class _Onward(_Polish):
    """L-BFGS on from scikit-learn's route where the driver does not count its end converged
    (a rescue stage), for at most ``steps`` iterations.  scipy stops on one iteration's
    relative reduction; the driver's plateau rule needs ``fwindow`` of them and a gradient
    within 1e3 · tol · scale of zero (:mod:`ldr.stopping`), and a few more steps usually
    give both (the NCA docstring, "Two routes")."""

    rescue = True
    spent = "onward budget of {} L-BFGS iterations after scikit-learn's route spent"


class _Settle(_Onward):
    """L-BFGS on past a stall (``past_stalls``), for at most ``steps`` iterations: the
    annealing route's last rescue.  Where the plateau rule (rule 6 of
    :mod:`ldr.stopping`) fires with the gradient above 1e3 · tol · scale, the stage does not
    stop but goes on until the rule fires within it (the driver's own "converged"), the
    gradient rule holds, or ``steps`` are spent.  It runs after ``_Ray``, whose
    gradient-certified end it would otherwise pre-empt with a plateau stop.

    Why: at the annealing's end on fair/rate_marriage (full rank, ‖M‖ = 482) Σ_i p_i is a
    staircase — one sample's neighbour flipping is a step of 1, and between steps the
    gradient (0.49 there, against 1e3 · tol · scale = 5.6e-2) lives in 11 directions of
    curvature up to 1.4e4 from near-ties, the other 53 nearly flat.  A cost-change window
    gains ~1e-4 of a sample (ftol · |f| is 0.025), so the plateau rule stalls the annealing,
    and 4 trust-region iterations do not settle it; L-BFGS past the stall brings that
    gradient under 1e3 · tol · scale in 8 iterations (docs/real_data.rst, "The staircase")."""

    past_stalls = True
    spent = "settle budget of {} L-BFGS iterations past the plateau rule's stall spent"
    #: the cost at the end of NCA's other route where that converged (``NCA._solve``): from a
    #: start above it the stage does not run — it certifies, it does not climb, and the fit
    #: keeps that converged, better end either way
    rival: float | None = None

    def step(self, problem, state):
        if self.rival is not None and state.cost > self.rival:
            return replace(state, accepted=False, stop_reason=(
                f"not run: scikit-learn's route ended converged at a lower cost, "
                f"{self.rival:.10g}, than this point's {state.cost:.10g}"))
        return super().step(problem, state)


class _Rescue(TrustRegion):
    """The trust region as a rescue stage (``rescue``: run only after a stage that did not
    converge), ended after ``work`` iterations plus Hessian-vector products, not converged
    unless a stopping rule fired first."""

    rescue = True

    def __init__(self, work: int):
        super().__init__()
        self.work = int(work)

    def _used(self, problem, state) -> int:
        return state.iteration - self._first + problem.counts["hvp"] - self._hvps

    def init(self, problem, M0):
        state = super().init(problem, M0)
        self._first, self._hvps = state.iteration, problem.counts["hvp"]
        return state

    def step(self, problem, state):
        left = self.work - self._used(problem, state)
        if left <= 0:  # the driver's rules have had their say on the last iterate: stop here
            return replace(state, accepted=False, stop_reason=(
                f"rescue budget of {self.work} iterations and Hessian-vector products spent "
                f"(gradient norm {state.grad_norm:.3e})"))
        state.work_left = min(state.work_left, left)
        return super().step(problem, state)


class _Route(Solver):
    """scikit-learn's route as one stage: scipy's L-BFGS-B (its Moré–Thuente line search,
    first step of unit length) from the stage's start, in scikit-learn's coordinates
    L = Mᵀ/c, with its tolerance ``tol`` and no iteration cap but the run's ``max_iter``.

    The whole run is one step of the driver (its iterations counted; ``path_`` holds the
    clock and the cost after each of them, for the estimator's trace); it stops by scipy's
    relative-reduction rule, so the driver counts the end converged only near a critical
    point (:mod:`ldr.stopping`).  Out of time (``max_time``) it returns the best point it had
    evaluated.  The NCA estimator runs it beside its annealing and keeps the better end
    (:class:`ldr.estimators.NCA`).
    """

    name = "l-bfgs-b"

    def __init__(self, unit: float, tol: float = 1e-5):
        self.unit, self.tol = float(unit), float(tol)

    def check_problem(self, problem) -> None:
        super().check_problem(problem)
        geom = problem.manifold
        if not isinstance(geom, Euclidean) or len(geom.shape) != 2:
            raise ValueError(f"solver {self.name!r} needs one Euclidean factor; the objective "
                             f"lives on {geom!r}")

    def step(self, problem, state):
        c, shape = self.unit, np.shape(state.M)
        best = {"f": np.inf, "x": None}

        def cost_and_gradient(x):   # in L = Mᵀ/c: ∂f/∂L = c (∂f/∂M)ᵀ
            if x is x0 or np.array_equal(x, x0):   # the start: the driver has evaluated it
                return state.cost, c * np.asarray(state.egrad).T.ravel()
            M = c * x.reshape(shape[::-1]).T
            f = problem.cost(M)
            if f < best["f"]:
                best.update(f=f, x=x.copy())
            return f, c * np.asarray(problem.egrad(M)).T.ravel()

        x0 = (np.asarray(state.M) / c).T.ravel()
        steps = max(1, int(min(state.work_left, 1e6)))
        self.path_ = path = []   # (perf_counter, cost) after each of scipy's iterations

        def record(intermediate_result):
            path.append((time.perf_counter(), float(intermediate_result.fun)))

        try:
            res = minimize(cost_and_gradient, x0, jac=True, method="L-BFGS-B", tol=self.tol,
                           options={"maxiter": steps}, callback=record)
            nit, end = int(res.nit), f"{res.message.lower()} after {res.nit} iterations"
            f, x, budget = float(res.fun), res.x, False
        except BudgetExceeded:   # max_time: the best point the route evaluated
            nit, end, budget = len(path), "max_time reached inside it", True
            f, x = best["f"], best["x"]
        what = (f"scikit-learn's route (scipy's L-BFGS-B, tol {self.tol:g}): {end}, cost "
                f"{f:.10g}")
        if budget:
            what = f"max_time reached: {what}"
        if not f < state.cost:   # no better than its start: the start stays
            return replace(state, iteration=state.iteration + nit, accepted=False,
                           stop_reason=f"{what}, not below its start's {state.cost:.10g}")
        try:
            new = self.evaluate(problem, c * x.reshape(shape[::-1]).T, cost=f)
        except BudgetExceeded:   # no time for its gradient
            return replace(state, accepted=False, stop_reason=f"max_time reached: {what}, "
                           "its gradient not evaluated (the start kept)")
        new.iteration = state.iteration + nit
        new.info = {"route": True, "nit": nit}
        new.stop_reason = what
        new.stop_converged = not budget   # the driver's gradient test decides (ldr.stopping)
        return new


class _Ray(Solver):
    """NCA's last rescue stage: the limit along the map's ray, taken where it is a better and
    flatter point.  M ← 2^k M for the k that the doublings reach while Σ_i p_i rises
    (:func:`along_ray`); the jump is kept only where the gradient norm there is below the
    one at M, and the driver's gradient rule then decides whether it is converged.

    Why: on tables of integer-valued survey answers (fair) the runs end on a plateau where
    nearly every p_ij is 0 or 1 except between samples tied *for every map* — duplicate rows
    of different classes, and samples whose nearest neighbours are copies of one such row —
    whose fractional p_i (Σ_i min(p_i, 1 − p_i) ≈ 560 on fair/religious) keeps
    ``_Annealed``'s saturation test from firing, although those ties contribute no gradient.
    What is left of the gradient comes from the few near-ties one doubling decides: on
    fair/religious (r = 2) the route's end has gradient norm 0.95 and Σ_i p_i = 2324.7011,
    twice the map 1.2e-7 and 2324.7066 (docs/real_data.rst, "The fair stalls").  Elsewhere a
    doubling that does not flatten the gradient leaves M as it was (the stage then says so,
    not converged)."""

    name = "ray"
    rescue = True

    def step(self, problem, state):
        scale, best = along_ray(problem, state.M, state.cost)
        if scale > 1.0:
            new = self.evaluate(problem, scale * state.M, cost=best)
            if new.grad_norm < state.grad_norm:
                new.iteration, new.memory = state.iteration + 1, state.memory
                new.info = {"ray_scale": scale}
                new.stop_reason = (f"the map scaled by {scale:g} along its ray (Σ_i p_i "
                                   f"{-state.cost:.10g} → {-best:.10g}), gradient norm "
                                   f"{state.grad_norm:.3e} → {new.grad_norm:.3e}")
                return new
            why = (f"scaling the map by {scale:g} along its ray raises Σ_i p_i to {-best:.10g}, "
                   f"but the gradient norm there, {new.grad_norm:.3e}, is not below "
                   f"{state.grad_norm:.3e}: the point kept")
        else:
            why = "doubling the map along its ray does not raise Σ_i p_i: the point kept"
        return replace(state, iteration=state.iteration + 1, accepted=False, stop_reason=why)
