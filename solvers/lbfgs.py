"""Riemannian limited-memory BFGS (Huang, Absil & Gallivan 2016; Manopt's ``rlbfgs``); on a
Euclidean factor it is plain L-BFGS (Nocedal 1980; Nocedal & Wright 2006, Alg. 7.4–7.5).

The solver keeps the last ``memory`` pairs (s_i, y_i) of steps and gradient changes, every
one transported to the tangent space of the current iterate M_k.  From M_k with Riemannian
gradient g_k:

1. **direction** by the two-loop recursion in T_{M_k} (Nocedal & Wright, Alg. 7.4):

       q ← g_k;  for i = newest … oldest:  a_i = ρ_i ⟨s_i, q⟩,  q ← q − a_i y_i
       r ← γ q;  for i = oldest … newest:  r ← r + (a_i − ρ_i ⟨y_i, r⟩) s_i
       η_k = −r,    ρ_i = 1/⟨s_i, y_i⟩,   γ = ⟨s, y⟩/⟨y, y⟩ of the newest pair      (L1)

   where a pair whose curvature ⟨s_i, y_i⟩ is not positive — ``⟨s_i, y_i⟩ ≤ cautious ·
   ‖s_i‖‖y_i‖``, measured again after every transport (projection does not preserve inner
   products) — is skipped, so the implicit inverse Hessian stays positive definite.  A
   direction that is not a clear descent direction (cos∠(η, −g) < ``angle``) is replaced by
   −g and the memory is cleared; with an empty memory η = −g, scaled to the step length
   that was accepted last (the first: Δ̄/8, as the other solvers).

2. **line search** along η_k for the weak Wolfe conditions (Nocedal & Wright, Eq. 3.6),
   starting at α = 1 once the memory holds a pair:

       f(R(αη)) ≤ f + c₁ α ⟨g, η⟩                     (sufficient decrease, Armijo)
       ⟨grad f(R(αη)), T(η)⟩ ≥ c₂ ⟨g, η⟩               (curvature)            (L2)

   by bracketing (Lewis & Overton 2013): a trial that fails Armijo shrinks the bracket —
   quadratic interpolation from the left end's cost and slope, safeguarded to
   [0.1, 0.5] of the bracket — and one that fails the curvature test moves its left end
   (doubling α while no right end is known).  Once cost differences are rounding noise the
   Armijo test is replaced by the sufficient-decrease half of Hager & Zhang's approximate
   Wolfe test, ⟨grad f(R(αη)), T(η)⟩ ≤ (2c₁ − 1)⟨g, η⟩, as in the gradient solver.  When
   the curvature test is never met within ``max_evals`` trials, the last trial that met
   Armijo is taken; when none did, the search is repeated once along −g with an empty
   memory (Manopt's restart), and only then does the run stop with the reason.

3. **update**: M_{k+1} = R_{M_k}(α η_k); s_k = T(α η_k), y_k = g_{k+1} − T(g_k), transported
   by projection onto T_{M_{k+1}} (the identity on a Euclidean factor, where the Wolfe
   curvature condition alone guarantees ⟨s, y⟩ > 0); every stored pair is transported too,
   and the oldest is dropped beyond ``memory``.

Needs the cost and its gradient (no Hessian); works on Stiefel, Grassmann, Euclidean factors,
products and batched products.  A step costs one gradient per trial that passes Armijo and one
cost per trial, plus O(memory) inner products and transports.

References: W. Huang, P.-A. Absil, K. A. Gallivan (2016), "A Riemannian BFGS method for
nonconvex optimization problems", ENUMATH 2015, 627–634; J. Nocedal (1980), "Updating
quasi-Newton matrices with limited storage", Math. Comp. 35, 773–782; J. Nocedal,
S. J. Wright (2006), *Numerical Optimization*, 2nd ed., §3.1, §7.2; A. S. Lewis, M. L. Overton
(2013), "Nonsmooth optimization via quasi-Newton methods", Math. Program. 141, 135–163;
W. W. Hager, H. Zhang (2005), SIAM J. Optim. 16, 170–192.
"""

from __future__ import annotations

import math
import numbers

import numpy as np

from ldr.core.errors import ParameterError
from ldr.core.problem import Problem
from ldr.data import arrays
from ldr.solvers.base import Solver, State

_EPS = np.finfo(float).eps


def _interpolate(lo: float, f_lo: float, g_lo: float, hi: float, f_hi: float,
                 g_hi: float) -> float:
    """The next trial in the bracket (lo, hi): the minimizer of the cubic through both ends'
    values and slopes (Nocedal & Wright, Eq. 3.59), or of the quadratic through f_lo, g_lo and
    f_hi when g_hi is unknown, kept in [lo + 0.1 w, hi − 0.1 w] (w = hi − lo); the midpoint
    when neither exists (a non-finite f_hi)."""
    w = hi - lo
    step = math.nan
    if math.isfinite(f_hi):
        if math.isfinite(g_hi):
            d1 = g_lo + g_hi - 3.0 * (f_lo - f_hi) / (lo - hi)
            rad = d1 * d1 - g_lo * g_hi
            if rad >= 0.0:
                d2 = math.sqrt(rad)
                denom = g_hi - g_lo + 2.0 * d2
                if denom != 0.0:
                    step = hi - w * (g_hi + d2 - d1) / denom
        if not math.isfinite(step):
            curv = 2.0 * (f_hi - f_lo - g_lo * w)
            if curv > 0.0:
                step = lo - g_lo * w * w / curv
    if not math.isfinite(step):
        return lo + 0.5 * w
    return min(max(step, lo + 0.1 * w), hi - 0.1 * w)


def _check_fraction(name: str, value, low: float = 0.0, high: float = 1.0) -> float:
    if (isinstance(value, bool) or not isinstance(value, numbers.Real)
            or not low < value < high):
        raise ParameterError(name, f"must lie in ({low:g}, {high:g}), got {value!r}")
    return float(value)


class LBFGS(Solver):
    """Riemannian L-BFGS with a weak Wolfe line search (module docstring).

    Parameters
    ----------
    memory : int, default 10
        Pairs (s, y) kept (scipy's L-BFGS-B default; Manopt's ``rlbfgs`` keeps 30).  0 gives
        steepest descent with the Wolfe line search.
    c1, c2 : float, default 1e-4, 0.9
        The Armijo and curvature constants of (L2), 0 < c1 < c2 < 1.
    max_evals : int, default 25
        Trials per line search.
    cautious : float, default 1e-10
        A stored pair with ⟨s, y⟩ ≤ cautious · ‖s‖‖y‖ is skipped by the recursion (L1).
    angle : float, default 1e-8
        The direction is replaced by −g (and the memory cleared) when cos∠(η, −g) < angle.
    retraction : {"polar", "qr"}
    precision_factor : float, default 100
        Cost differences below ``precision_factor · eps · |f|`` count as rounding noise, where
        the line search uses the approximate Wolfe test (module docstring).
    """

    name = "lbfgs"
    #: Manopt's and pymanopt's gradient tolerance: the step acceptance reads cost
    #: differences, blind below rounding, near a relative gradient of 1e-8
    default_tol = 1e-6
    #: the two-loop recursion on one NumPy array with its operations written out
    #: (``_direction_array``, the same arithmetic); False: through the manifold's
    #: ``inner`` and ``lincomb``
    written_out = True

    def __init__(self, memory: int = 10, c1: float = 1e-4, c2: float = 0.9,
                 max_evals: int = 25, cautious: float = 1e-10, angle: float = 1e-8,
                 retraction: str = "polar", precision_factor: float = 100.0,
                 max_step: float | None = 0.25, strong: bool = False):
        if isinstance(memory, bool) or not isinstance(memory, numbers.Integral) or memory < 0:
            raise ParameterError("memory", f"must be a non-negative integer, got {memory!r}")
        self.c1 = _check_fraction("c1", c1)
        self.c2 = _check_fraction("c2", c2)
        if not self.c1 < self.c2:
            raise ParameterError("c2", f"must exceed c1 = {c1!r} (the Wolfe conditions need "
                                       f"0 < c1 < c2 < 1), got {c2!r}")
        if (isinstance(max_evals, bool) or not isinstance(max_evals, numbers.Integral)
                or max_evals < 1):
            raise ParameterError("max_evals", f"must be a positive integer, got {max_evals!r}")
        self.cautious = _check_fraction("cautious", cautious, 0.0, 1.0) if cautious else 0.0
        self.angle = _check_fraction("angle", angle, 0.0, 1.0) if angle else 0.0
        if retraction not in ("polar", "qr"):
            raise ParameterError("retraction", f"expected 'polar' or 'qr', got {retraction!r}")
        if (isinstance(precision_factor, bool) or not isinstance(precision_factor, numbers.Real)
                or not precision_factor >= 0):
            raise ParameterError("precision_factor", f"must be a non-negative number, got "
                                                     f"{precision_factor!r}")
        if max_step is not None and (isinstance(max_step, bool)
                                     or not isinstance(max_step, numbers.Real)
                                     or not 0 < max_step < math.inf):
            raise ParameterError("max_step", f"must be a positive number or None (no cap), got "
                                             f"{max_step!r}")
        self.memory = int(memory)
        self.max_evals = int(max_evals)
        self.max_step = None if max_step is None else float(max_step)
        if not isinstance(strong, bool):
            raise ParameterError("strong", f"expected True or False, got {strong!r}")
        self.strong = strong
        self.retraction = retraction
        self.precision_factor = float(precision_factor)

    def init(self, problem: Problem, M0) -> State:
        state = super().init(problem, M0)
        state.memory = {"pairs": [], "length": problem.manifold.typical_dist / 8}
        return state

    # -- direction ---------------------------------------------------------------------------
    def _pair(self, geom, s, y) -> tuple:
        """(s, y, ρ, ⟨y, y⟩) with ρ = 1/⟨s, y⟩, or ρ = 0 for a pair the recursion skips
        (curvature ⟨s, y⟩ ≤ cautious · ‖s‖‖y‖, or products that underflow: a gradient change
        of about 1e-160, where a separable NCA's gradient vanishes along its ray)."""
        sy = geom.inner(s, y)
        ss = geom.inner(s, s)
        yy = geom.inner(y, y)
        ok = (sy > 0 and yy > 0 and math.isfinite(1.0 / sy) and math.isfinite(sy / yy)
              and sy > self.cautious * math.sqrt(ss * yy))
        return s, y, (1.0 / sy if ok else 0.0), yy

    def _direction(self, geom, g, pairs: list) -> tuple:
        """−H g by the two-loop recursion (L1); returns (η, number of pairs used)."""
        used = [pair for pair in pairs if pair[2] > 0]
        if not used:
            return geom.lincomb(-1.0, g), 0
        # one NumPy array (not a product's tuple): the operations written out, for the fixed
        # cost of an iteration
        # benchmark: benchmarks/bench_dml.py
        if self.written_out and arrays.numpy_fast_path(g):
            return self._direction_array(g, used), len(used)
        q = g
        alphas = []
        for s, y, rho, _ in reversed(used):
            a = rho * geom.inner(s, q)
            alphas.append(a)
            q = geom.lincomb(1.0, q, -a, y)
        _, _, rho, yy = used[-1]
        r = geom.lincomb(1.0 / (rho * yy), q)  # γ = ⟨s, y⟩/⟨y, y⟩ of the newest pair
        for (s, y, rho, _), a in zip(used, reversed(alphas)):
            r = geom.lincomb(1.0, r, a - rho * geom.inner(y, r), s)
        return geom.lincomb(-1.0, r), len(used)

    @staticmethod
    def _direction_array(g: np.ndarray, used: list) -> np.ndarray:
        """The same recursion on one NumPy array, with the manifold's ``inner`` and ``lincomb``'s
        own operations written out (the same arithmetic, so the same η to the last bit):
        about 40 of them a step, whose dispatch is most of their time on small problems."""
        vdot = np.vdot
        q = g
        alphas = []
        for s, y, rho, _ in reversed(used):
            a = rho * float(vdot(s, q))
            alphas.append(a)
            q = q + -a * y
        _, _, rho, yy = used[-1]
        r = 1.0 / (rho * yy) * q
        for (s, y, rho, _), a in zip(used, reversed(alphas)):
            r = r + (a - rho * float(vdot(y, r))) * s
        return -1.0 * r

    # -- line search -------------------------------------------------------------------------
    def _line_search(self, problem: Problem, state: State, eta, slope: float, alpha: float,
                     alpha_max: float = math.inf):
        """Wolfe search (L2) from ``alpha``.  Returns ``(trial State or None, alpha, trials,
        Wolfe met, last trial cost)``: the State meets (L2), or Armijo only (Wolfe False) when
        no trial met both within ``max_evals`` or at the longest step allowed."""
        geom = problem.manifold
        M = state.M
        f0 = state.cost
        rounding = self.precision_factor * _EPS * max(abs(f0), 1e-300)
        lo = 0.0  # the bracket's left end: Armijo, descending
        f_lo = f0
        g_lo = slope
        hi = math.inf
        f_hi = math.nan
        g_hi = math.nan
        alpha = min(alpha, alpha_max)
        best = None
        best_alpha = 0.0
        f = f0
        for k in range(1, self.max_evals + 1):
            M_new = geom.retract(M, geom.lincomb(alpha, eta), self.retraction)
            f = problem.cost(M_new)
            armijo = math.isfinite(f) and f <= f0 + self.c1 * alpha * slope
            noise = math.isfinite(f) and not armijo and abs(f - f0) <= rounding
            g = math.nan
            if armijo or noise:
                trial = self.evaluate(problem, M_new, cost=f)
                g = geom.inner(trial.grad, geom.transport(M, M_new, eta))
                if noise and g > (2.0 * self.c1 - 1.0) * slope:
                    pass             # the approximate Wolfe test's decrease half fails too
                elif g >= self.c2 * slope and (not self.strong or g <= -self.c2 * slope):
                    return trial, alpha, k, True, f
                elif g < self.c2 * slope:   # still descending steeply: the step is too short
                    if alpha >= alpha_max:  # the longest step allowed: Armijo suffices
                        return trial, alpha, k, False, f
                    if armijo:              # (a rounding-level trial is never a fallback)
                        best = trial
                        best_alpha = alpha
                    lo = alpha
                    f_lo = f
                    g_lo = g
                    alpha = (min(2.0 * alpha, alpha_max) if math.isinf(hi)
                             else _interpolate(lo, f_lo, g_lo, hi, f_hi, g_hi))
                    continue
                elif armijo:                # (strong) past the 1-D minimum: a right end
                    best = trial
                    best_alpha = alpha
            hi = alpha
            f_hi = f
            g_hi = g
            alpha = _interpolate(lo, f_lo, g_lo, hi, f_hi, g_hi)
        return best, best_alpha, self.max_evals, False, f

    def _alpha_max(self, problem: Problem, state: State, eta_norm: float) -> float:
        """The largest α with ‖αη‖ ≤ max_step · max(‖M‖, Δ̄) (inf without a cap)."""
        if self.max_step is None:
            return math.inf
        geom = problem.manifold
        cap = self.max_step * max(geom.norm(state.M), geom.typical_dist)
        return cap / max(eta_norm, 1e-300)

    # -- step --------------------------------------------------------------------------------
    def step(self, problem: Problem, state: State) -> State:
        geom = problem.manifold
        mem = state.memory
        pairs = mem["pairs"]
        restarted = False
        eta, used = self._direction(geom, state.grad, pairs)
        slope = geom.inner(state.grad, eta)
        eta_norm = geom.norm(eta)
        if not slope < -self.angle * state.grad_norm * eta_norm:   # not a descent direction
            pairs = []
            restarted = True
            used = 0
            eta = geom.lincomb(-1.0, state.grad)
            slope = -state.grad_norm**2
            eta_norm = state.grad_norm
        alpha0 = 1.0 if used else mem["length"] / max(eta_norm, 1e-300)
        amax = self._alpha_max(problem, state, eta_norm)
        trial, alpha, n_evals, wolfe, f_last = self._line_search(problem, state, eta, slope,
                                                                  alpha0, amax)
        if trial is None and used:   # retry once along −g with an empty memory
            pairs = []
            restarted = True
            used = 0
            eta = geom.lincomb(-1.0, state.grad)
            slope = -state.grad_norm**2
            eta_norm = state.grad_norm
            trial, alpha, more, wolfe, f_last = self._line_search(
                problem, state, eta, slope, mem["length"] / max(eta_norm, 1e-300),
                self._alpha_max(problem, state, eta_norm))
            n_evals += more
        if trial is None:
            return self._failed(state, n_evals, f_last)
        # the new pair, and the old ones, transported to T_{M_{k+1}}
        M_new = trial.M
        s = geom.transport(state.M, M_new, geom.lincomb(alpha, eta))
        y = geom.lincomb(1.0, trial.grad, -1.0, geom.transport(state.M, M_new, state.grad))
        older = pairs[-(self.memory - 1):] if self.memory > 1 else []
        if geom.transport_is_identity:   # every pair keeps its numbers
            kept = list(older)
        else:
            kept = []
            for a, b, rho, yy in older:
                a2 = geom.transport(state.M, M_new, a)
                b2 = geom.transport(state.M, M_new, b)
                kept.append((a, b, rho, yy) if a2 is a and b2 is b else self._pair(geom, a2, b2))
        if self.memory:
            kept.append(self._pair(geom, s, y))
        step_size = alpha * eta_norm
        trial.iteration = state.iteration + 1
        trial.memory = {"pairs": kept, "length": step_size}
        trial.info = {"step_size": float(step_size), "alpha": float(alpha),
                      "evals": n_evals, "pairs": used, "wolfe": wolfe, "restart": restarted}
        return trial

    def _failed(self, state: State, n_evals: int, f_last: float) -> State:
        new = State(M=state.M, cost=state.cost, egrad=state.egrad, grad=state.grad,
                    grad_norm=state.grad_norm, iteration=state.iteration + 1, accepted=False,
                    memory=state.memory, info={"step_size": 0.0, "evals": n_evals})
        if not math.isfinite(f_last):
            new.stop_reason = (f"line search failed: the cost was {f_last} at the last of "
                               f"{n_evals} trial points (outside its domain, or an overflow)")
        else:
            new.stop_reason = (f"line search failed: no sufficient decrease in {n_evals} trials, "
                               "also along −grad (the gradient may be wrong, or the gradient "
                               "norm is at its precision floor: raise gtol)")
        return new
